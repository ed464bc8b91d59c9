"""What a slash command (`screen_commands.py`, `login.py`) asks of the screen (`app.UjiApp`): a
leaf, so the commands name the screen's surface without importing the screen that
imports them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from uji.tui.conversation import Conversation
    from uji.tui.panel_views import RowsView


class CommandView(Protocol):
    @property
    def conversation(self) -> Conversation: ...

    def show_notice(self, text: str) -> None: ...

    def state_changed(self) -> None: ...

    async def select(
        self,
        title: str,
        labels: list[str],
        current: int | None = None,
        on_move: Callable[[int], None] | None = None,
        rows: RowsView | None = None,
    ) -> int | None: ...

    async def prompt(self, title: str, value: str = "", hidden: bool = False) -> str | None: ...

    async def confirm(
        self,
        title: str,
        body: str,
        preview: str | None = None,
        labels: tuple[str, str] | None = None,
        asked_for: bool = False,
    ) -> bool: ...

    async def quit(self) -> None: ...
