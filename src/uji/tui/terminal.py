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
        _drawn: list[str] | None = None  # what was written since the screen started, until taken
        _input = False  # whether input came (keys, mouse, a paste): the first frame may show it

        def start_application_mode(self) -> None:
            self._drawn = []  # before the input thread starts (it reads what was typed already)
            super().start_application_mode()

        def write(self, data: str) -> None:
            drawn = self._drawn
            if drawn is not None:
                drawn.append(data)
            super().write(data)

        def first_frame(self, cells: int) -> str:
            """The first frame drawn since the screen started (taken once; "" when none,
            or when input came before it, which it may show): the first write that draws
            the whole screen, at least `cells` characters (a later frame draws only what
            changed; the modes the driver set are shorter). For uji.early_frame."""
            drawn, self._drawn = self._drawn, None
            if self._input:
                return ""
            return next((d for d in drawn or () if len(d) >= cells), "")

        def process_message(self, message: Any) -> None:
            if isinstance(message, (events.Key, events.MouseEvent, events.Paste)):
                self._input = True
            if isinstance(message, events.Key) and message.key in ("escape", "ctrl+c"):
                on_interrupt(message.key)
            super().process_message(message)

    InterruptingDriver.__name__ = base.__name__
    return InterruptingDriver
