"""A key as Lua sees it (uji.input.capture, uji.tty's input): `{key, char, ctrl, alt,
shift}` from Textual's key name and character, key names as in the key syntax ("a", "CR",
"Esc", "Up", "F1")."""

from __future__ import annotations

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


def textual_key(event: dict[str, object]) -> str:
    """A key table back as Textual names the key ("ctrl+a", "enter", "up", "a")."""
    name = str(event.get("key") or "")
    back = {v: k for k, v in NAMES.items()}
    base = back.get(name) or (name.lower() if len(name) > 1 else name)
    mods = [m for m in ("ctrl", "alt", "shift") if event.get(m)]
    if base == "tab" and mods == ["shift"]:
        return "shift+tab"
    return "+".join([*mods, base])
