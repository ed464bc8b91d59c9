"""Questions asked above the composer: pickers (`uji.ui.select`) and text prompts
(`uji.ui.prompt`). They stack; only the top one gets keys (its mode decides which
bindings apply). Each resolves a future with its answer, or None when cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Input, Static

from uji.tui import render
from uji.tui.focus import KeyRouter

if TYPE_CHECKING:
    from uji.tui.panel_views import PanelName, PanelProps, RowsView
    from uji.ui.port import Preview, Query

SELECT_ROWS = 13
FLOAT = (0.9, 0.8)  # a floating overlay's share of the screen's width and height (the theme's limits.float)


class Field(KeyRouter, Input):
    """A question's one-line text field."""


class Modal(Vertical):
    mode = "overlay"

    DEFAULT_CSS = """
    Modal {
        height: auto; border: round $accent 60%; padding: 0 1; margin: 0 1;
        border-title-color: $text; border-title-style: bold;
    }
    Modal Input { border: none; height: 1; padding: 0; background: $surface; }
    Modal .hint { color: $text-muted; }
    """

    def __init__(self, title: str) -> None:
        super().__init__()
        self.border_title = render.plain_title(title)
        self.answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def finish(self, value: Any) -> None:
        if not self.answer.done():
            self.answer.set_result(value)

    def field(self) -> Input | None:
        return None

    def focus_field(self) -> None:
        target = self.field()
        (target or self).focus()

    # Actions the keymap sends to the top modal.
    def modal_up(self) -> None: ...

    def modal_down(self) -> None: ...

    def modal_accept(self) -> None: ...

    def modal_cancel(self) -> None:
        self.finish(None)


class SelectPanel(Modal):
    """A list to pick from, filtered by typing."""

    mode = "select"
    row_view: PanelName = "SelectList"  # uji.ui.<row_view> draws a row once a config replaces it

    def __init__(
        self,
        title: str,
        labels: list[str],
        current: int | None = None,
        on_move: Callable[[int], None] | None = None,
        rows: RowsView | None = None,
    ) -> None:
        """`rows`: the view that draws the rows instead (/sessions'), and each row's fields."""
        super().__init__(title)
        self.rows = rows
        self._custom = False  # a replaced view draws the rows
        self.on_move = on_move  # told the highlighted label's index as it changes (/theme's preview)
        self._told = current
        self.labels = labels
        self.current = current
        self._filter = Field(placeholder="type to filter", compact=True, select_on_focus=False)
        self._list = Static("")
        self.shown: list[int] = list(range(len(labels)))
        self.index = current if current is not None and 0 <= current < len(labels) else 0

    def compose(self) -> Any:
        yield self._filter
        yield self._list
        yield Static("↑/↓ move · Enter choose · Esc cancel", classes="hint")

    def on_mount(self) -> None:
        from uji.tui.panel_views import replaced

        self._custom = replaced(self, self._row_view())
        self._draw()

    def _row_view(self) -> PanelName:
        return self.rows.name if self.rows is not None else self.row_view

    def field(self) -> Input:
        return self._filter

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        word = event.value.lower()
        chosen = self.shown[self.index] if self.shown else None
        self.shown = [i for i, label in enumerate(self.labels) if word in label.lower()]
        self.index = self.shown.index(chosen) if chosen in self.shown else 0
        self._draw()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.modal_accept()

    def modal_up(self) -> None:
        if self.shown:
            self.index = (self.index - 1) % len(self.shown)
            self._draw()

    def modal_down(self) -> None:
        if self.shown:
            self.index = (self.index + 1) % len(self.shown)
            self._draw()

    def modal_accept(self) -> None:
        if self.shown:
            self.finish(self.shown[self.index])

    def _draw(self) -> None:
        if self.on_move is not None and self.shown:
            moved_to = self.shown[self.index]
            if moved_to != self._told:
                self._told = moved_to
                if self.is_mounted:
                    self.on_move(moved_to)
        if not self.shown:
            self._list.update(Text("  nothing matches", style=render.MUTED))
            return
        first = max(0, min(self.index - SELECT_ROWS // 2, len(self.shown) - SELECT_ROWS))
        shown = range(first, min(first + SELECT_ROWS, len(self.shown)))
        out = self._custom_rows(shown) if self._custom else None
        if out is None:
            out = self._rows(shown)
        hidden = len(self.shown) - SELECT_ROWS
        if hidden > 0:
            out.append(f"\n  {len(self.shown)} items", style=render.MUTED)
        self._list.update(out)

    def _rows(self, shown: range) -> Text:
        out = Text()
        for pos in shown:
            i = self.shown[pos]
            chosen = pos == self.index
            out.append("› " if chosen else "  ", style=render.ACCENT)
            out.append(self.labels[i], style=f"bold {render.ACCENT}" if chosen else render.TEXT)
            if i == self.current:
                out.append(" (current)", style=render.MUTED)
            out.append("\n")
        out.rstrip()
        return out

    def _custom_rows(self, shown: range) -> Text | None:
        """The rows as the replaced view draws them; None when it failed (uji draws them)."""
        from uji.tui.panel_views import rows

        props: list[PanelProps] = []
        for pos in shown:
            i = self.shown[pos]
            own: PanelProps = self.rows.props[i] if self.rows is not None and i < len(self.rows.props) else {}
            row: PanelProps = {
                "label": self.labels[i],
                "index": i + 1,
                "selected": pos == self.index,
                "current": i == self.current,
                "width": max(10, self.app.size.width - 6),
            }
            props.append({**row, **own})
        drawn = rows(self, self._row_view(), props)
        self._custom = drawn is not None
        return drawn


class PickPanel(SelectPanel):
    """uji.ui.pick: the select list, with the highlighted item's preview under it and, with
    `query`, a live list: each pause in typing asks for the list of what is typed (the
    answer of the latest question wins)."""

    row_view: PanelName = "Picker"
    PAUSE = 0.15  # seconds without typing before the query runs
    PREVIEW_ROWS = 12

    def __init__(
        self, title: str, labels: list[str], current: int | None, preview: Preview | None, query: Query | None
    ) -> None:
        super().__init__(title, labels, current)
        self.preview, self.ask_items = preview, query
        self.list_id = 0  # the number of the list shown (0: the first)
        self._preview = Static("", classes="hint")
        self._asked = 0  # queries asked, so an older answer is dropped
        self._timer: Any = None
        self._previewed: tuple[int, int] | None = None

    def compose(self) -> Any:
        yield from super().compose()
        yield self._preview

    def on_input_changed(self, event: Input.Changed) -> None:
        if self.ask_items is None:
            super().on_input_changed(event)
            return
        event.stop()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(self.PAUSE, lambda: self._ask(event.value))

    def _ask(self, text: str) -> None:
        self._asked += 1
        self.run_worker(self._run_query(text, self._asked), exclusive=False)

    async def _run_query(self, text: str, asked: int) -> None:
        assert self.ask_items is not None
        try:
            labels, list_id = await self.ask_items(text)
        except Exception as e:
            self._preview.update(Text(f"error: {e}", style=render.MUTED))
            return
        if asked != self._asked:
            return
        self.labels, self.list_id, self.current = labels, list_id, None
        self.shown = list(range(len(labels)))
        self.index = 0
        self._draw()

    def modal_accept(self) -> None:
        if self.shown:
            self.finish((self.list_id, self.shown[self.index]))

    def _draw(self) -> None:
        super()._draw()
        if self.preview is not None and self.shown:
            wanted = (self.list_id, self.shown[self.index])
            if wanted != self._previewed:
                self._previewed = wanted
                self.run_worker(self._show_preview(wanted), exclusive=False)
        elif not self.shown:
            self._previewed = None
            self._preview.update("")

    async def _show_preview(self, wanted: tuple[int, int]) -> None:
        assert self.preview is not None
        try:
            lines = await self.preview(*wanted)
        except Exception as e:
            lines = [f"error: {e}"]
        if wanted == self._previewed:
            self._preview.update(Text("\n".join(lines[: self.PREVIEW_ROWS])))


class PromptPanel(Modal):
    """One line of text; `hidden` masks it (API keys)."""

    mode = "prompt"

    DEFAULT_CSS = """
    PromptPanel.-replaced { border: none; padding: 0; }
    PromptPanel .head { display: none; }
    PromptPanel.-replaced .head { display: block; }
    """

    def __init__(self, title: str, value: str = "", hidden: bool = False) -> None:
        super().__init__(title)
        self.question, self.masked = title, hidden
        self._input = Field(value=value, password=hidden, compact=True, select_on_focus=False)
        self._head = Static("", classes="head")  # uji.ui.PromptField's view, once replaced

    def compose(self) -> Any:
        yield self._head
        yield self._input
        yield Static("Enter accept · Esc cancel", classes="hint")

    def on_mount(self) -> None:
        from uji.tui.panel_views import drawn, replaced

        if replaced(self, "PromptField"):
            props: PanelProps = {
                "title": self.question,
                "hidden": self.masked,
                "width": self.app.size.width - 2,
            }
            lines = drawn(self, "PromptField", props)
            if lines is not None:
                self._head.update(Text("\n").join(lines))
                self.add_class("-replaced")

    def field(self) -> Input:
        return self._input

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.modal_accept()

    def modal_accept(self) -> None:
        self.finish(self._input.value)


class OutputPanel(Modal):
    """A tool's or a `!` command's whole output, read-only and scrollable (Ctrl+O)."""

    mode = "overlay"

    DEFAULT_CSS = """
    OutputPanel TextArea { height: auto; max-height: 24; border: none; padding: 0; }
    """

    def __init__(self, title: str, text: str) -> None:
        super().__init__(title)
        from textual.widgets import TextArea

        self.view = TextArea(text, read_only=True, soft_wrap=True, show_line_numbers=False)

    def compose(self) -> Any:
        yield self.view
        yield Static("↑/↓ PageUp/PageDown scroll · Esc or Enter close", classes="hint")

    def focus_field(self) -> None:
        self.view.focus()

    def modal_accept(self) -> None:
        self.finish(None)
