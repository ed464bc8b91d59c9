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


def interrupting_driver(base: type[Any], on_interrupt: Any) -> type[Any]:
    """The platform's driver, telling `on_interrupt` of Esc and Ctrl+C from its input
    thread. While Lua loops (a config or a hook that never returns) the event loop is
    blocked and sees no keys; this thread still does, and stops the Lua code, after
    which the key is handled as usual (Esc: nothing more to stop; Ctrl+C: quit)."""
    from textual import events

    class InterruptingDriver(base):  # type: ignore[misc]
        def process_message(self, message: Any) -> None:
            if isinstance(message, events.Key) and message.key in ("escape", "ctrl+c"):
                on_interrupt(message.key)
            super().process_message(message)

    InterruptingDriver.__name__ = base.__name__
    return InterruptingDriver
