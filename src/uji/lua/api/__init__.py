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
    # The screen's namespaces talk to the UI port the frontend gave the App.
    from uji.lua.api import input, keymap, ui

    host.update(keymap.install(app.ui, lambda: app.lua))
    host.update(ui.install(app.ui, lambda: app.lua))
    host.update(input.install(app.ui))
    return host
