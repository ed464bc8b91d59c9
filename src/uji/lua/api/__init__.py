"""The host functions behind the `uji` table, one module per namespace."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.app import App


def install_all(app: App) -> dict[str, Any]:
    from uji.lua.api import command, core, events, provider, tool

    host: dict[str, Any] = {}
    for module in (core, tool, events, provider, command):
        host.update(module.install(app))
    return host
