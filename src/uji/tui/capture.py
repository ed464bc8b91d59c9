"""uji.input.capture: while a handler holds the keys, each key goes to it as
`{key, char, ctrl, alt, shift}` (key names as in the key syntax: "a", "CR", "Esc", "Up",
"F1"), not to the keymap. A handler that raises lets the keys go (said in a notice)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.ui.key_table import key_table

if TYPE_CHECKING:
    from uji.app import App


def deliver(app: App, key: str, character: str | None) -> None:
    handler = app.ui.capture
    if handler is None:
        return

    def failed(error: str) -> None:
        if app.ui.capture is handler:
            app.ui.capture = None  # it raised: the keys go back to the keymap
        app.host.notice(f"uji.input.capture: the handler failed and was released: {error}")

    lua = app.host.lua
    lua.spawn(handler, lua.convert.to_lua(key_table(key, character), json_null=False), on_error=failed)
