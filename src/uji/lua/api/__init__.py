"""The host functions behind the `uji` table, one module per namespace."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.app import App


def install_all(app: App) -> dict[str, Any]:
    from uji.lua.api import auth, command, context, core, events, fs, http, job, provider, session, tool

    host: dict[str, Any] = {}
    for module in (core, tool, events, provider, command, auth, fs, job, http, context, session):
        host.update(module.install(app))
    # The screen's namespaces; their state lives in uji.tui.host (no Textual).
    from uji.lua.api import input, keymap, ui

    for module in (keymap, ui, input):
        host.update(module.install(app))
    return host
