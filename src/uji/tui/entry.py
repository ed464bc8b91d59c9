"""One entry of the transcript (a user's message, an answer, a tool call, ...): its kind,
its data and the widget that shows it. A leaf of the screen's modules, so the streamed
answer's widget (`live.py`) and the transcript share it without importing each other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

from rich.console import RenderableType
from textual.widget import Widget

from uji.record import Struct, field
from uji.tui import render

EntryKind = Literal["user", "answer", "thinking", "tool", "shell", "notice", "error", "info"]

THINKING_LIVE_LINES = 12  # reasoning lines shown while it streams


class Parts(Protocol):
    """The replaced views that draw parts of entries (`uji.tui.ito.parts.EntryParts`)."""

    def answer(self, text: str, live: bool) -> RenderableType: ...

    def markdown_replaced(self) -> bool: ...

    def diff_drawer(self, state: Mapping[str, object]) -> render.DrawDiff | None: ...


class Entry(Struct):
    kind: EntryKind
    data: dict[str, Any] = field(default_factory=dict)
    widget: Widget | None = None
    live: bool = False

    def renderable(self, parts: Parts | None = None) -> RenderableType:
        """As uji draws it, with the parts a config's views replaced drawn by them."""
        d = self.data
        if self.kind == "user":
            return render.user(d.get("text", ""))
        if self.kind == "answer":
            if parts is not None:
                return parts.answer(d.get("text", ""), self.live)
            return render.markdown(d.get("text", ""))
        if self.kind == "thinking":
            text = d.get("text", "")
            if self.live:
                text = "\n".join(text.rstrip("\n").splitlines()[-THINKING_LIVE_LINES:])
            return render.thinking(text)
        if self.kind == "tool":
            return render.tool_call(d, parts.diff_drawer(d) if parts is not None else None)
        if self.kind == "shell":
            return render.shell(d)
        if self.kind == "error":
            return render.error(d.get("text", ""))
        if self.kind == "info":
            return render.info(d.get("label", ""), d.get("text", ""))
        return render.notice(d.get("text", ""))
