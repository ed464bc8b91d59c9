"""Tools for working on uji itself (not used at run time)."""
