"""What the screen's pieces (`draft.py`, `popups.py`, `scrolling.py`, `leaving.py`,
`ticker.py`) ask of the screen (`app.UjiApp`): its widgets and a few of its services. A
leaf, so they name the screen without importing the screen that imports them."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from uji.tui.command_view import CommandView

if TYPE_CHECKING:
    from textual.containers import Vertical
    from textual.widgets import Input, TextArea

    from uji.tui.attachments import Attachments, Pastes
    from uji.tui.composer import Composer, Suggestions
    from uji.tui.footer import Activity, NewBelow, StatusBar
    from uji.tui.ito.replaced import Views
    from uji.tui.mentions import MentionPopup
    from uji.tui.modals import Modal
    from uji.tui.transcript import Transcript
    from uji.wires.base import Image


class ScreenView(CommandView, Protocol):
    @property
    def transcript(self) -> Transcript: ...
    @property
    def composer(self) -> Composer: ...
    @property
    def attachments(self) -> Attachments: ...
    @property
    def pastes(self) -> Pastes: ...
    @property
    def suggestions(self) -> Suggestions: ...
    @property
    def mentions(self) -> MentionPopup: ...
    @property
    def modals(self) -> Vertical: ...
    @property
    def activity(self) -> Activity: ...
    @property
    def new_below(self) -> NewBelow: ...
    @property
    def status(self) -> StatusBar: ...
    @property
    def top_bar(self) -> Vertical: ...
    @property
    def keyboard_bar(self) -> Vertical: ...
    @property
    def bottom_bar(self) -> Vertical: ...

    # The replaced views (uji.ui.<View>) that draw the activity row and the jump label.
    views: Views

    # When the key being handled was read (None outside a key's handling).
    key_time: float | None

    def show_notice(self, text: str) -> None: ...

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def top_modal(self) -> Modal | None: ...

    def active_field(self) -> TextArea | Input | None: ...

    async def ask(self, modal: Modal) -> Any: ...

    def submit_line(self, text: str, images: list[Image] | None = None, shown: str | None = None) -> None: ...
