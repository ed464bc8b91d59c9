"""The transcript: one widget per entry, in a scrolling column that follows the end.

Long sessions stay smooth because the widget count is bounded: finished entries are
plain widgets rendered once (Rich renderables, see `render.py`); only the answer being
streamed is a Textual `Markdown` (`live.py`) fed through `MarkdownStream` (append only, never a
whole re-render); older streamed answers become plain widgets; and beyond
`MAX_MOUNTED` entries the oldest leave the screen (their data stays) and come back in
steps when the user scrolls to the top.

A resumed session is read the same way: only its last `OPEN_MESSAGES` messages are
read from the store when it opens; older ones are read a page at a time (`History`)
when the user scrolls to the top, so opening a session costs the same at any length.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from uji.record import Struct
from uji.tui.entry import Entry, EntryKind, Parts
from uji.tui.focus import KeyRouter

if TYPE_CHECKING:
    from uji.store.rows import AssistantRow, Row, ToolRow
    from uji.tui.live import LiveAnswer
    from uji.wires.base import ToolCallItem

# Every layout (a streamed answer growing by a line) walks every mounted widget, so the
# count is kept about what a short session has: the cost of a delta and of a key is the
# same at 50 messages as at 50,000. 40 entries are at least 80 rows, over a screen.
MAX_MOUNTED = 50  # entries on screen before the oldest are let go
KEEP_MOUNTED = 40  # how many stay after letting go
LOAD_STEP = 30  # entries brought back per scroll to the top
LIVE_MARKDOWN = 6  # streamed answers kept as Markdown widgets
MARKDOWN_WIDGETS = 60  # widgets in the finished answers kept as Markdown, in all
SETTLE_AFTER = 0.25  # s between looks at whether an answer over MARKDOWN_WIDGETS has scrolled past
SMALL_MARKDOWN = 2  # widgets in a streamed answer kept as it is however old (a paragraph: 1)
OPEN_MESSAGES = 200  # messages read from the store when a session opens
PAGE_MESSAGES = 100  # read from the store per scroll to the top, once the read ones are shown
ALIGN_STEPS = 20  # how far back (in steps of 8) a page reaches for its tool results' call

# (name, arguments JSON) → (verb, subject): how a call is described before its
# `call` event arrives (and for calls loaded from history).
Describe = Callable[[str, str], tuple[str, str]]


class History(Struct):
    """Where a session's messages come from (the store), for reading them a page at a
    time: `page(before, limit)` the last `limit` messages with seq < `before` (None: the
    newest), in seq order; `count(before)` how many there are before a seq."""

    page: Callable[[int | None, int], list[Row]]
    count: Callable[[int], int]

    def read(self, before: int | None, limit: int) -> list[Row]:
        """A page that starts at a message other than a tool result, so no result is
        shown apart from its call (reaching back a bounded number of steps)."""
        rows = self.page(before, limit)
        for _ in range(ALIGN_STEPS):
            if not rows or rows[0]["type"] != "tool":
                break
            more = self.page(rows[0]["seq"], 8)
            if not more:
                break
            rows = more + rows
        return rows


class EntryView(Widget):
    """A finished entry (or a small live one, such as a running tool call)."""

    DEFAULT_CSS = "EntryView { height: auto; }"

    def __init__(self, entry: Entry, parts: Parts | None = None) -> None:
        super().__init__(classes=f"entry {entry.kind}")
        self.entry = entry
        self.parts = parts

    def render(self) -> RenderableType:
        return self.entry.renderable(self.parts)

    def changed(self) -> None:
        self.refresh(layout=True)


class LiveView(EntryView):
    """The answer being streamed while Partial or a markdown block view is replaced: drawn
    whole again at most once a frame (a refresh asks for it), its blocks' rows kept."""

    def feed(self, text: str) -> None:
        self.entry.data["text"] += text
        self.changed()


class Transcript(KeyRouter, VerticalScroll):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    Transcript .entry { margin: 1 0 0 0; }
    Transcript.-hide-thinking .thinking { display: none; }
    Transcript #earlier { color: $text-muted; text-align: center; }
    """

    def __init__(self, describe: Describe, **kw: Any) -> None:
        super().__init__(**kw)
        self.describe = describe
        self.entries: list[Entry] = []
        self._first = 0  # index of the first entry with a widget
        self._calls: dict[str, Entry] = {}
        self._answer: Entry | None = None
        self._thinking: Entry | None = None
        self._markdowns: list[LiveAnswer] = []
        self._over_bound = False  # a finished answer over MARKDOWN_WIDGETS waits to be passed
        self._settling = False
        self._earlier = Static("", id="earlier")
        self._loading = False
        self._deferred = False  # while loading history: entries get widgets at the end
        self.unseen = 0  # entries added while the user reads further up ("new below")
        self._history: History | None = None
        self._oldest = 1  # seq of the oldest message read from the store
        self._stored_before = 0  # messages in the store before that one
        # The render_message hook: an ito view standing for an entry, or None (set by the app).
        self.custom: Callable[[Entry], Widget | None] | None = None
        self.offering: Callable[[], bool] = lambda: False  # whether a render_message handler is set
        self.drawn_as: Callable[[Entry], object] = lambda entry: None  # what a custom tool view shows
        self.parts: Parts | None = None  # the replaced views that draw parts of entries

    def wire(
        self,
        custom: Callable[[Entry], Widget | None],
        offering: Callable[[], bool],
        drawn_as: Callable[[Entry], object],
        parts: Parts,
    ) -> None:
        """Entries go through Lua (render_message, the replaced views): `tui/rendering.py`."""
        self.custom, self.offering, self.drawn_as, self.parts = custom, offering, drawn_as, parts

    def compose(self) -> ComposeResult:
        self._earlier.display = False
        yield self._earlier  # with the screen's first layout, not a mount after it

    def on_mount(self) -> None:
        self.anchor()

    # Showing and hiding ---------------------------------------------------------

    def set_thinking(self, shown: bool) -> None:
        self.set_class(not shown, "-hide-thinking")

    def clear(self) -> None:
        for entry in self.entries:
            if entry.widget is not None:
                entry.widget.remove()
        self.entries.clear()
        self._first = 0
        self._calls.clear()
        self._answer = self._thinking = None
        self._markdowns.clear()
        self._history = None
        self._oldest, self._stored_before = 1, 0
        self._update_earlier()
        self.anchor()

    # Adding ------------------------------------------------------------------

    def add(self, kind: EntryKind, live: bool = False, **data: Any) -> Entry:
        entry = Entry(kind, data, live=live)
        self.entries.append(entry)
        if not self._deferred:
            entry.widget = self._build(entry)
            self.mount(entry.widget)
            self._trim()
            if not self._following():  # the place the user reads stays; the screen says so
                self.unseen += 1
        return entry

    def _build(self, entry: Entry) -> Widget:
        if self.custom is not None and not entry.live:
            if entry.kind == "tool" and self.offering():
                entry.data["offered_as"] = self.drawn_as(entry)
            widget = self.custom(entry)
            if widget is not None:
                return widget
        if entry.kind == "answer" and entry.live:
            if self.parts is not None and self.parts.markdown_replaced():
                return LiveView(entry, self.parts)
            from uji.tui.live import LiveAnswer

            return LiveAnswer(entry)
        return EntryView(entry, self.parts)

    def update(self, entry: Entry) -> None:
        widget = entry.widget
        if self.custom is not None and widget is not None and entry.kind == "tool" and self.offering():
            # render_message: a call is offered as `pending`, then as `tool` with its result.
            shown = self.drawn_as(entry)
            if entry.data.get("offered_as", shown) != shown:
                fresh = self._build(entry)
                self.mount(fresh, after=widget)
                widget.remove()
                entry.widget = fresh
                return
        if isinstance(widget, EntryView):
            widget.changed()

    def notice(self, text: str) -> Entry:
        return self.add("notice", text=text)

    # Agent events --------------------------------------------------------------

    def delta(self, kind: str, text: str) -> None:
        if kind == "reasoning":
            if self._thinking is None:
                self._thinking = self.add("thinking", live=True, text="")
            self._thinking.data["text"] += text
            self.update(self._thinking)
            return
        if self._answer is None:
            self._answer = self.add("answer", live=True, text="")
        widget = self._answer.widget
        from uji.tui.live import LiveAnswer  # loaded by the add() above

        if isinstance(widget, (LiveAnswer, LiveView)):
            widget.feed(text)

    def stream_cleared(self) -> None:
        """A retry: the partial answer and reasoning are dropped."""
        for entry in (self._answer, self._thinking):
            if entry is not None:
                self._drop(entry)
        self._answer = self._thinking = None

    def _drop(self, entry: Entry) -> None:
        if entry.widget is not None:
            entry.widget.remove()
            if entry.widget in self._markdowns:
                self._markdowns.remove(entry.widget)
        with contextlib.suppress(ValueError):
            self.entries.remove(entry)

    def assistant(self, message: AssistantRow) -> None:
        """A saved assistant message: finish what streamed, add its tool calls."""
        reasoning = message.get("reasoning") or ""
        if self._thinking is not None:
            self._thinking.live = False
            if reasoning:
                self._thinking.data["text"] = reasoning
            self.update(self._thinking)
        elif reasoning:
            self.add("thinking", text=reasoning)
        text = message.get("text") or ""
        if self._answer is not None:
            self._answer.data["text"] = text
            self._answer.live = False
            widget = self._answer.widget
            from uji.tui.live import LiveAnswer

            custom = self.custom(self._answer) if self.custom is not None else None
            if custom is not None and widget is not None:  # render_message: the view stands for it
                self.mount(custom, after=widget)
                widget.remove()
                self._answer.widget = custom
            elif isinstance(widget, LiveAnswer):
                widget.close()
                self._markdowns.append(widget)
                self._settle_markdowns()
            elif isinstance(widget, EntryView):  # a LiveView: now drawn finished
                widget.changed()
        elif text.strip():
            self.add("answer", text=text)
        self._answer = self._thinking = None
        for call in message.get("tool_calls") or []:
            self._add_call(call)

    def _add_call(self, call: ToolCallItem) -> Entry:
        verb, subject = self.describe(call.get("name", ""), call.get("arguments", ""))
        entry = self.add(
            "tool",
            id=call.get("id"),
            name=call.get("name"),
            verb=verb,
            subject=subject,
            status="pending",
            arguments=call.get("arguments", ""),
        )
        if call.get("id"):
            self._calls[call["id"]] = entry
        return entry

    def call(self, call_id: str, verb: str | None, subject: str) -> None:
        entry = self._calls.get(call_id)
        if entry is None:
            return
        entry.data["verb"] = verb or entry.data.get("verb")
        entry.data["subject"] = subject
        self.update(entry)

    def tool_started(self, call_id: str) -> None:
        entry = self._calls.get(call_id)
        if entry is not None:
            entry.data["status"] = "running"
            self.update(entry)

    def progress(self, call_id: str, line: str) -> None:
        entry = self._calls.get(call_id)
        if entry is not None:
            entry.data["progress"] = line
            self.update(entry)

    def tool_result(self, message: ToolRow) -> None:
        entry = self._calls.pop(message.get("tool_call_id", ""), None)
        if entry is None:
            entry = self.add("tool", name=message.get("name"), verb=message.get("name"), subject="")
        if isinstance(message.get("subject"), str):  # the subject the call had (history)
            entry.data["subject"] = message["subject"]
        self._fill_result(entry, message)
        self.update(entry)

    @staticmethod
    def _fill_result(entry: Entry, message: ToolRow) -> None:
        content = message.get("content") or ""
        status = "done"
        if content.startswith("denied:"):
            status = "denied"
        elif content.startswith("error:"):
            status = "failed"
        entry.data.update(
            status=status, content=content, summary=message.get("summary"), diff=message.get("diff")
        )

    def message(self, message: Row) -> None:
        """A saved message from the agent (or from history)."""
        if message["type"] == "user":
            from uji.tui.attachments import shown

            # A long paste stays its marker (`shown`); the model got the whole text.
            said = message.get("shown") or message.get("text", "")
            self.add("user", text=shown(said, len(message.get("images") or [])))
        elif message["type"] == "assistant":
            self.assistant(message)
        elif message["type"] == "tool":
            self.tool_result(message)
        elif message["type"] == "error":
            self.add("error", text=message.get("text", ""))
        elif message["type"] == "shell":
            self.add(
                "shell",
                command=message.get("command", ""),
                output=message.get("output", ""),
                code=message.get("code", 0),
            )
        elif message["type"] == "compaction":
            self.add(
                "info",
                label="compacted",
                text="earlier messages were summarised",
                view="Compaction",
                summary=message.get("summary") or "",
            )
        elif message["type"] == "context":
            self.add("info", label="context", text=message.get("text", ""))
        elif message["type"] == "file":
            from uji.agent.mentions import line

            label, text = line(message)
            self.add("info", label=label, text=text)
        elif message["type"] == "system":
            self.add("info", label="system", text=message.get("text", ""))

    # History -------------------------------------------------------------------

    def load(self, messages: list[Row], history: History | None = None) -> None:
        """Show a session's saved messages; only the newest get widgets now. With
        `history`, `messages` are the newest of the session, and older ones are read
        from it when the user scrolls to the top."""
        self._read(messages)
        self._history = history
        self._note_oldest(messages)
        self._first = max(0, len(self.entries) - KEEP_MOUNTED)
        widgets = []
        for entry in self.entries[self._first :]:
            entry.widget = self._build(entry)
            widgets.append(entry.widget)
        if widgets:
            self.mount_all(widgets)
        self._update_earlier()
        self.anchor()

    def _read(self, messages: list[Row]) -> None:
        """Entries for saved messages, without widgets."""
        self._deferred = True
        try:
            for m in messages:
                self.message(m)
        finally:
            self._deferred = False
        # Calls without answers in the history were cut off: nothing is running now.
        for entry in self._calls.values():
            entry.data["status"] = "failed"
        self._calls.clear()
        for entry in self.entries:
            entry.live = False
        self._answer = self._thinking = None

    def _note_oldest(self, messages: list[Row]) -> None:
        if self._history is None or not messages:
            self._oldest, self._stored_before = 1, 0
            return
        self._oldest = int(messages[0]["seq"])
        self._stored_before = self._history.count(self._oldest) if self._oldest > 1 else 0

    def _read_older(self) -> int:
        """Read a page of older messages from the store into entries before the others
        (without widgets); returns how many entries it added."""
        if self._history is None or self._stored_before <= 0:
            return 0
        rows = self._history.read(self._oldest, PAGE_MESSAGES)
        if not rows:
            self._stored_before = 0
            return 0
        kept = (self.entries, self._calls, self._answer, self._thinking)
        self.entries, self._calls = [], {}
        try:
            self._read(rows)
            older = self.entries
        finally:
            self.entries, self._calls, self._answer, self._thinking = kept
        self.entries[:0] = older
        self._first += len(older)
        self._note_oldest(rows)
        return len(older)

    # Bounding the widget count ---------------------------------------------------

    def _following(self) -> bool:
        # Textual keeps the anchor until the user scrolls away (`_anchor_released`).
        return self.is_anchored and not getattr(self, "_anchor_released", False)

    def _trim(self) -> None:
        mounted = len(self.entries) - self._first
        if mounted <= MAX_MOUNTED or not self._following():
            return
        stop = len(self.entries) - KEEP_MOUNTED
        for entry in self.entries[self._first : stop]:
            if entry.live or entry in self._calls.values():
                break  # never let go of something still changing
            if entry.widget is not None:
                entry.widget.remove()
                if entry.widget in self._markdowns:
                    self._markdowns.remove(entry.widget)
                entry.widget = None
            self._first += 1
        self._update_earlier()

    def _settle_markdowns(self) -> None:
        """Keep few Markdown widgets: older streamed answers become plain ones (a widget
        rather than one per block). Every layout (each streamed line) walks every mounted
        widget, and a long answer is hundreds of them: the finished answers kept as
        Markdown hold at most `MARKDOWN_WIDGETS` between them (newest first), so what a
        delta costs does not grow with the answers above it. One over that bound waits
        until it has scrolled out of sight while the screen follows the end (Rich draws
        it a little tighter: no jump where the user reads); `_settle_soon` looks again.
        An answer of a block or two stays: replacing it (a mount, a removal, Rich's
        Markdown) cost more than the widget it saves, a third of each model round when
        100 short queued prompts were answered."""
        self._settling = False
        self._over_bound = False
        kept: list[LiveAnswer] = []
        widgets = 0
        for old in reversed(self._markdowns):
            entry = old.entry
            if entry.widget is not old:
                continue  # let go of, or dropped
            if not old.finished.is_set():
                kept.append(old)  # still writing: looked at again once it has finished
                continue
            if not old.is_mounted:
                continue
            if old.widgets is None:
                old.widgets = len(old.walk_children())  # finished: it has all its blocks
            size = old.widgets
            if size <= SMALL_MARKDOWN:
                if len(kept) < LIVE_MARKDOWN:
                    kept.append(old)
                continue
            if len(kept) < LIVE_MARKDOWN and widgets + size > MARKDOWN_WIDGETS and not self._passed(old):
                self._over_bound = True  # in sight: made plain once scrolled past
            elif len(kept) >= LIVE_MARKDOWN or widgets + size > MARKDOWN_WIDGETS:
                entry.widget = EntryView(entry, self.parts)
                self.mount(entry.widget, after=old)
                old.remove()
                continue
            kept.append(old)
            widgets += size
        self._markdowns = kept[::-1]
        self._settle_soon()

    def _settle_soon(self) -> None:
        """With an answer over the bound in sight: look again in a moment, as long as it
        stays (the screen following the end scrolls without `watch_scroll_y`)."""
        if self._over_bound and not self._settling:
            self._settling = True
            self.set_timer(SETTLE_AFTER, self._settle_markdowns)

    def _passed(self, widget: Widget) -> bool:
        """Whether `widget` is above what the screen shows, and the screen follows the end
        (so what it shows stays where it is when the widget changes height)."""
        region = widget.virtual_region
        return self._following() and region.height > 0 and region.bottom <= self.scroll_y

    def on_live_answer_finished(self, message: LiveAnswer.Finished) -> None:
        message.stop()
        self._settle_markdowns()

    def _update_earlier(self) -> None:
        hidden, stored = self._first, self._stored_before
        self._earlier.display = hidden > 0 or stored > 0
        if hidden and stored:
            self._earlier.update(
                f"↑ {hidden} earlier entries and {stored} older messages — scroll up to show them"
            )
        elif stored:
            self._earlier.update(f"↑ {stored} older messages — scroll up to show them")
        elif hidden:
            self._earlier.update(f"↑ {hidden} earlier entries — scroll up to show them")

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._settle_soon()
        if self.unseen and self._following():
            self.unseen = 0
        if new <= 0 and (self._first > 0 or self._stored_before > 0) and not self._loading:
            self._loading = True
            self.call_after_refresh(self._load_earlier)

    def _load_earlier(self) -> None:
        if self._first == 0:
            self._read_older()
        start = max(0, self._first - LOAD_STEP)
        entries = self.entries[start : self._first]
        widgets: list[Widget] = []
        for entry in entries:
            entry.widget = self._build(entry)
            widgets.append(entry.widget)
        self._first = start
        if widgets:
            self.mount_all(widgets, after=self._earlier)
        self._update_earlier()

        def keep_place() -> None:
            # Stay on what the user was reading, now below the entries just added.
            self.scroll_to(y=sum(w.outer_size.height + 1 for w in widgets), animate=False)
            self._loading = False

        self.call_after_refresh(keep_place)

    # Scrolling --------------------------------------------------------------------

    def follow(self) -> None:
        self.unseen = 0
        self.anchor()
