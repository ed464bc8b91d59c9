"""uji.input.capture: while a handler holds the keys, each key goes to it as
`{key, char, ctrl, alt, shift}` (key names as in the key syntax: "a", "CR", "Esc", "Up",
"F1"), not to the keymap. A handler that raises lets the keys go (said in a notice)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uji.app import App

NAMES = {
    "enter": "CR", "escape": "Esc", "backspace": "BS", "delete": "Del", "tab": "Tab",
    "up": "Up", "down": "Down", "left": "Left", "right": "Right", "home": "Home", "end": "End",
    "pageup": "PageUp", "pagedown": "PageDown", "insert": "Insert", "space": "Space",
}  # fmt: skip


def key_table(key: str, character: str | None) -> dict[str, object]:
    parts = key.split("+")
    base, mods = parts[-1], set(parts[:-1])
    if key == "shift+tab" or key == "backtab":
        base, mods = "tab", {"shift"}
    if not mods and character and len(character) == 1 and character.isprintable():
        name = " " if base == "space" else character
        name = "Space" if name == " " else name
    elif base in NAMES:
        name = NAMES[base]
    elif len(base) > 1 and base[0] == "f" and base[1:].isdigit():
        name = base.upper()
    else:
        name = base
    printable = character if character and character.isprintable() and not ({"ctrl", "alt"} & mods) else None
    return {
        "key": name,
        "char": printable,
        "ctrl": "ctrl" in mods,
        "alt": "alt" in mods,
        "shift": "shift" in mods,
    }


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
