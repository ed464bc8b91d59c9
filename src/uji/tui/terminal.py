"""Terminal input details Textual leaves out."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def enable_alt_enter() -> None:
    """Report Alt+Enter as "alt+enter".

    Without the kitty keyboard protocol a terminal sends Alt+Enter as ESC CR, and
    Textual drops the Alt and reports a plain Enter — which would send the message the
    user meant to break a line in. Patched at the one place the parser turns an
    ESC-prefixed character into a key; if Textual changes there, Alt+Enter is simply
    Enter again (Ctrl+J and Shift+Enter still insert a newline)."""
    try:
        from textual import events
        from textual._xterm_parser import XTermParser
    except ImportError:  # pragma: no cover - a Textual without this module
        return
    original = XTermParser._sequence_to_key_events
    if getattr(original, "_uji_alt_enter", False):
        return

    def patched(self: Any, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if alt and sequence == "\r":
            yield events.Key("alt+enter", None)
            return
        yield from original(self, sequence, alt)

    patched._uji_alt_enter = True  # type: ignore[attr-defined]
    XTermParser._sequence_to_key_events = patched  # type: ignore[method-assign]
