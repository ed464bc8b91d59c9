"""The replaced views that draw parts of transcript entries (`uji.tui.entry.Parts`): an
answer's markdown and the streamed answer (blocks.py), a tool's diff."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from uji.tui import render
from uji.tui.ito.replaced import MARKDOWN_VIEWS, Drawn, Props, Views

if TYPE_CHECKING:
    from rich.console import RenderableType


class EntryParts:
    def __init__(self, views: Views) -> None:
        self.views = views

    def answer(self, text: str, live: bool) -> RenderableType:
        """An answer drawn with the replaced Partial and markdown block views."""
        from uji.tui.ito.blocks import answer

        return answer(text, self.views, live)

    def markdown_replaced(self) -> bool:
        """Whether the streamed answer is drawn by views (Partial, or a block's)."""
        return bool(self.views.replaced(*MARKDOWN_VIEWS))

    def diff_drawer(self, state: Mapping[str, object]) -> render.DrawDiff | None:
        """How a tool entry's diff is drawn when Diff is replaced (None: as uji draws it)."""
        if state.get("status") != "done" or not self.views.replaced("Diff"):
            return None
        props: Props = {"type": "diff", "name": str(state.get("name") or "")}
        path = render.argument(state.get("arguments"), "path")
        if path is not None:
            props["path"] = path
        views = self.views

        def draw(text: str, rows: list[RenderableType]) -> RenderableType:
            from rich.console import Group

            return Drawn(views, "Diff", {**props, "text": text}, lambda: Group(*rows))

        return draw
