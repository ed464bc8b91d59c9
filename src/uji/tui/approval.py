"""The approval question: a tool call that policy says to ask about (and
`uji.ui.confirm`). y allows; n, Esc or Ctrl+G deny; Enter takes the highlighted choice.
Its answer is True or False; the caller turns it into the agent's Answer."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

from uji.tui import render
from uji.tui.focus import KeyRouter
from uji.tui.modals import Modal

APPROVAL_DIFF_LINES = 30
BODY_LINES = 12
CHOICES = ("Yes, proceed", "No, and tell uji what to do differently")


class ApprovalPanel(KeyRouter, Modal):
    mode = "confirm"
    can_focus = True

    DEFAULT_CSS = """
    ApprovalPanel { border: round $warning 70%; }
    ApprovalPanel:focus { border: round $warning; }
    """

    def __init__(self, title: str, body: str, preview: str | None = None) -> None:
        super().__init__(title)
        self.body = body
        self.preview = preview
        self.choice = 0
        self._view = Static("")

    def compose(self) -> Any:
        yield self._view

    def on_mount(self) -> None:
        self._draw()

    def _draw(self) -> None:
        parts: list[RenderableType] = []
        if self.body:
            lines, hidden = render.preview_lines(self.body, BODY_LINES)
            parts.append(Text("\n".join(lines), style=render.TEXT))
            if hidden:
                parts.append(render.more(hidden))
        if self.preview:
            parts.append(Text(""))
            parts.extend(render.diff(self.preview, APPROVAL_DIFF_LINES))
        parts.append(Text(""))
        for i, label in enumerate(CHOICES):
            chosen = i == self.choice
            line = Text("› " if chosen else "  ", style=render.ACCENT)
            line.append(f"{i + 1}. {label}", style=f"bold {render.ACCENT}" if chosen else render.TEXT)
            parts.append(line)
        parts.append(Text("y allow · n or Esc deny · ↑/↓ and Enter", style=render.MUTED))
        self._view.update(Group(*parts))

    def modal_up(self) -> None:
        self.choice = (self.choice - 1) % len(CHOICES)
        self._draw()

    def modal_down(self) -> None:
        self.choice = (self.choice + 1) % len(CHOICES)
        self._draw()

    def confirm_toggle(self) -> None:
        self.modal_down()

    def modal_accept(self) -> None:
        self.finish(self.choice == 0)

    def modal_cancel(self) -> None:
        self.finish(False)

    def confirm_allow(self) -> None:
        self.finish(True)

    def confirm_deny(self) -> None:
        self.finish(False)
