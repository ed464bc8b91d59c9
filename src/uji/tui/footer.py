"""What sits around the composer: the queued messages, the activity line
("⠋ Working (12s)") and the bottom bar (model, effort, context used, directory)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from uji.record import Struct
from uji.tui import render

if TYPE_CHECKING:
    from uji.tui.ito.replaced import Props, ViewName, Views

WORKING = "Working ({}s)"  # the theme's text.working
FRAME = 0.08  # seconds a spinner frame shows (the theme's limits.spinner)


class Status(Struct):
    model: str = ""
    effort: str | None = None
    used: int | None = None
    window: int | None = None
    directory: str = ""
    session_title: str = ""
    mode: str = ""  # the gate's mode (Shift+Tab), as shown: "ask", "accept edits", "plan"
    session_tokens: int = 0  # sent and received in the session, over all its runs
    session_cost: float | None = None  # dollars, when the model's prices are known
    estimated: bool = False  # some of the session's tokens were counted by uji, not the server
    sandbox: str = ""  # the OS sandbox of commands: its mode, or "no sandbox"


def tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def short_path(path: str, limit: int = 40) -> str:
    home = os.path.expanduser("~")
    if path == home or path.startswith(home + os.sep):
        path = "~" + path[len(home) :]
    return path if len(path) <= limit else "…" + path[-(limit - 1) :]


class StatusBar(Static):
    DEFAULT_CSS = "StatusBar { height: 1; padding: 0 1; color: $text-muted; }"

    def __init__(self, **kw: object) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self._last: Text | None = None

    def show(self, status: Status) -> None:
        out = Text(no_wrap=True, overflow="ellipsis")
        out.append(
            status.model or "no model — /models or /login",
            style=render.ACCENT if status.model else render.NOTICE,
        )
        if status.effort:
            out.append(f" · effort {status.effort}", style=render.MUTED)
        if status.mode:
            out.append(" · mode ", style=render.MUTED)
            out.append(status.mode, style=render.TEXT if status.mode == "ask" else f"bold {render.NOTICE}")
        if status.sandbox:
            weak = status.sandbox == "no sandbox"
            out.append(f" · {status.sandbox}", style=f"bold {render.NOTICE}" if weak else render.MUTED)
        if status.used is not None:
            if status.window:
                pct = 100 * status.used // status.window
                out.append(
                    f" · context {tokens(status.used)}/{tokens(status.window)} ({pct}%)", style=render.MUTED
                )
            else:
                # A model whose window nobody gave (a custom one): say so, not a bare number.
                out.append(f" · context {tokens(status.used)} tokens, window unknown", style=render.MUTED)
        if status.session_tokens:
            said = f"~{tokens(status.session_tokens)} tokens (estimated)" if status.estimated else None
            out.append(f" · session {said or tokens(status.session_tokens) + ' tokens'}", style=render.MUTED)
            if status.session_cost is not None:
                from uji.agent.limits import dollars  # with the first price, not before the first frame

                out.append(f" · {dollars(status.session_cost)}", style=render.MUTED)
        if status.directory:
            out.append(f" · {short_path(status.directory)}", style=render.MUTED)
        if out != self._last:  # the bar is refreshed often; repaint only on change
            self._last = out
            self.update(out, layout=False)  # one row, always: no layout of the whole screen


class Activity(Static):
    """Shown while a turn or a `!` command runs."""

    DEFAULT_CSS = "Activity { height: 1; padding: 0 1; display: none; }"

    def __init__(self, **kw: object) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self._frame = 0

    def note(self, text: str, views: Views | None = None) -> None:
        """A short hint in place of the spinner ("Press Ctrl+C again to quit"); with
        `views`, a flash ("copied 2 lines") that a replaced Flash view draws."""
        if views is None or not self._drawn(views, "Flash", {"type": "flash", "text": text}):
            self._show(Text(text, style=render.NOTICE))

    def tick(self, label: str | None, seconds: float, hint: str = "", views: Views | None = None) -> None:
        if label is None:
            self.display = False
            return
        self._frame = int(time.monotonic() / FRAME) % len(render.SPINNER)
        spinner, said = render.SPINNER[self._frame], label.format(int(seconds))
        props: Props = {
            "type": "activity",
            "text": said,
            "seconds": int(seconds),
            "spinner": spinner,
            "hint": hint,
        }
        if views is not None and self._drawn(views, "Activity", props):
            return
        out = Text(spinner + " ", style=render.CODE)
        out.append(said, style=render.TEXT)
        if hint:
            out.append(f"  {hint}", style=render.MUTED)
        self._show(out)

    def _drawn(self, views: Views, name: ViewName, props: Props) -> bool:
        """Whether the replaced view `name` drew the row (its first row: the row is one high)."""
        if not views.replaced(name):
            return False
        rows = views.rows(name, {**props, "width": max(1, self.size.width - 2)})
        if not rows:
            return False
        self._show(rows[0])
        return True

    def _show(self, text: Text) -> None:
        # The spinner turns every 80 ms while a turn runs: a repaint of this one row, not
        # a layout of the whole screen (which walks every entry of the transcript). A
        # layout only when the row appears.
        appearing = not self.display
        self.display = True
        self.update(text, layout=appearing)


class QueueView(Static):
    """Messages typed during a turn, waiting to be sent."""

    DEFAULT_CSS = """
    QueueView {
        height: auto; max-height: 6; padding: 0 1; display: none; text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self._rows = 0
        # The render_message hook's rows for a queued message, or None (set by the app).
        self.custom: Callable[[str], list[Text] | None] | None = None

    def show(self, texts: list[str]) -> None:
        if not texts:
            self.display = False
            self._rows = 0
            return
        out = Text()  # a row per message (no wrapping: its CSS): its height is known
        rows = 0
        for text in texts[-5:]:
            drawn = self.custom(text) if self.custom is not None else None
            if drawn is not None:
                for line in drawn:
                    out.append_text(line)
                    out.append("\n")
                rows += len(drawn)
                continue
            first = (text.strip()[:1000].splitlines() or [text[:300]])[0][:300]  # a 5 MB paste: its start
            out.append("queued ", style=render.MUTED)
            out.append(f"{render.PROMPT} {first}\n", style=render.TEXT)
            rows += 1
        if len(texts) > 5:
            out.append(f"+{len(texts) - 5} more queued", style=render.MUTED)
            rows += 1
        out.rstrip()
        rows = min(rows, 6)
        # Each message queued or sent changes the text; a layout of the whole screen (every
        # entry of the transcript) only when the number of rows changes.
        self.update(out, layout=rows != self._rows or not self.display)
        self._rows = rows
        self.display = True


class NewBelow(Static):
    """Under the transcript while the user has scrolled up and something new came:
    the place they read stays, and this says there is more below."""

    DEFAULT_CSS = "NewBelow { height: 1; padding: 0 1; display: none; text-align: center; }"

    def __init__(self, **kw: object) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self._shown = -1

    def show(self, unseen: int, views: Views | None = None) -> None:
        if unseen == self._shown:
            return
        self._shown = unseen
        self.display = unseen > 0
        if unseen:
            what = "1 new entry" if unseen == 1 else f"{unseen} new entries"
            text = f"↓ {what} below · PageDown to read on"
            if views is not None and views.replaced("Jump"):
                rows = views.rows(
                    "Jump", {"type": "jump", "count": unseen, "text": text, "width": self._width()}
                )
                if rows:
                    self.update(rows[0])
                    return
            self.update(Text(text, style=f"bold {render.NOTICE}"))

    def _width(self) -> int:
        return max(1, (self.size.width or self.app.size.width) - 2)
