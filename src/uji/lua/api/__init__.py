"""The host functions behind the `uji` table, one module per namespace; each module's
`install` takes the services it uses (uji.app wires them)."""
