"""Textual key events as the keymap's keys (`uji.ui.keys` holds the key syntax, the
modes, the actions and the keymap itself). No Textual import here either."""

from __future__ import annotations

import unicodedata

from uji.ui.keys import DISPLAY, Key, make_key


def from_textual(key: str, character: str | None) -> list[Key]:
    """The keys a Textual key event may stand for, most specific first.

    Terminals send some keys as the same bytes (Alt+B and Ctrl+Left are both
    "ctrl+left" to Textual; Alt+Backspace is "ctrl+w"), so a binding on either works."""
    parts = key.split("+")
    base, mods = parts[-1], set(parts[:-1]) & {"ctrl", "alt", "shift"}
    if not mods and character and len(character) == 1 and character.isprintable():
        base = character
    elif len(base) > 1 and base not in DISPLAY:
        try:  # "question_mark" and friends
            base = unicodedata.lookup(base.replace("_", " ").upper())
        except KeyError:
            pass
    if key == "backspace" and character == "\x08":
        return [Key(frozenset({"ctrl"}), "h"), Key(frozenset(), "backspace")]  # Ctrl+H itself
    return [make_key(mods, base), *_ALIASES.get(key, ())]


_ALIASES: dict[str, tuple[Key, ...]] = {
    "ctrl+left": (Key(frozenset({"alt"}), "b"),),
    "ctrl+right": (Key(frozenset({"alt"}), "f"),),
    "ctrl+w": (Key(frozenset({"alt"}), "backspace"),),
}
