"""The UI port with no screen (`uji run`, and an `App` built without a frontend).

The keymap is recorded and listed all the same, the composer is a plain draft string,
and the questions have nobody to answer them: they answer nil at once (the bridge says
so in a notice) rather than hang a headless run.
"""

from __future__ import annotations

from collections.abc import Awaitable

from uji.notices import Notice
from uji.ui.port import Ui


class HeadlessUi(Ui):
    def __init__(self, notice: Notice) -> None:
        super().__init__(notice)
        self.draft = ""

    def select(self, title: str, labels: list[str], current: int | None) -> Awaitable[int | None] | None:
        return None

    def prompt(self, title: str, value: str, hidden: bool) -> Awaitable[str | None] | None:
        return None

    def confirm(self, title: str, body: str, preview: str | None) -> Awaitable[bool] | None:
        return None

    def input_get(self) -> str:
        return self.draft

    def input_set(self, text: str) -> None:
        self.draft = text

    def size(self) -> tuple[int, int] | None:
        return None

    def set_thinking(self, shown: bool) -> None:
        pass
