"""What `uji.keymap`, `uji.ui` and `uji.input` talk to, with or without a screen.

Each App gets one `UiState`. The terminal UI attaches itself as the `surface`; without
one (`uji run`) the keymap is still recorded, the draft is a plain string and the
questions answer nil. No Textual imports: `uji run` loads this module.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from uji.tui.keys import Keymap

if TYPE_CHECKING:
    from uji.app import App


class Surface(Protocol):
    """The screen's side: implemented by the Textual app."""

    async def select(self, title: str, labels: list[str], current: int | None) -> int | None: ...

    async def prompt(self, title: str, value: str, hidden: bool) -> str | None: ...

    async def confirm(self, title: str, body: str, preview: str | None) -> bool: ...

    def set_thinking(self, shown: bool) -> None: ...

    def input_get(self) -> str: ...

    def input_set(self, text: str) -> None: ...

    def screen_size(self) -> tuple[int, int]: ...


@dataclass
class UiState:
    keymap: Keymap = field(default_factory=Keymap)
    surface: Surface | None = None
    show_thinking: bool = False
    draft: str = ""  # the composer's text when there is no screen


# Keyed weakly by App, so App needs no field for the UI and a closed App lets go.
_states: weakref.WeakKeyDictionary[App, UiState] = weakref.WeakKeyDictionary()


def ui_state(app: App) -> UiState:
    state = _states.get(app)
    if state is None:
        state = _states[app] = UiState()
    return state


def toggle_thinking(app: App) -> bool:
    state = ui_state(app)
    state.show_thinking = not state.show_thinking
    if state.surface is not None:
        state.surface.set_thinking(state.show_thinking)
    app.notice("thinking shown" if state.show_thinking else "thinking hidden")
    return state.show_thinking


def input_get(app: App) -> str:
    state = ui_state(app)
    return state.surface.input_get() if state.surface is not None else state.draft


def input_set(app: App, text: str) -> None:
    state = ui_state(app)
    if state.surface is not None:
        state.surface.input_set(text)
    else:
        state.draft = text
