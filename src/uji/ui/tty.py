"""uji.tty.open (reference §2 runtime, terminal): the terminal itself for Lua, a screen of
cells drawn with `flush` and the input as events. It takes the terminal in raw mode on
the alternate screen, with the mouse, bracketed paste and focus reports on; `close` gives
it back as it was. The input is read with Textual's own terminal parser (the escape
sequences of keys, mouse, paste and focus), so keys are named as `uji.input.capture`
names them.

Cells are 0-based: x from the left, y from the top."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.ui.key_table import key_table

if TYPE_CHECKING:
    from rich.style import Style
    from rich.text import Text

    from uji.ui.ito import ItoSource, Painted

ENTER = "\x1b[?1049h\x1b[?1000h\x1b[?1002h\x1b[?1006h\x1b[?2004h\x1b[?1004h\x1b[?25l"
LEAVE = "\x1b[?1004l\x1b[?2004l\x1b[?1006l\x1b[?1002l\x1b[?1000l\x1b[?25h\x1b[0 q\x1b[?1049l"
CURSORS = {"block": 2, "underline": 4, "bar": 6}
Event = dict[str, Any]


class Terminal:
    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.width, self.height = os.get_terminal_size(fd)
        self.rows: list[Text] = []
        self._drawn: list[str] = []
        self._raw: list[str] = []
        self._cursor = ""
        self._saved: Any = None
        self._events: asyncio.Queue[Event] = asyncio.Queue()
        self._parser: Any = None
        self.taps: list[tuple[int, int, int, int, int]] = []  # x, y, width, height, handler
        self.closed = False
        self.on_close: Callable[[], None] | None = None  # gives the terminal back to the screen
        self.painted: Painted | None = None  # the ito tree painted last, and its root
        self.source: ItoSource | None = None
        # A mouse selection (an ito.Window's drag): from one cell to another, both in it,
        # drawn over the rows in its style when they are flushed.
        self.selection: tuple[int, int, int, int] | None = None
        self.highlight: Style | None = None
        self.clear()

    # Taking the terminal and giving it back -----------------------------------------

    @classmethod
    def open(cls) -> Terminal:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        try:
            term = cls(fd)
            term.resume()
        except BaseException:
            os.close(fd)
            raise
        return term

    def resume(self) -> None:
        import termios
        import tty

        from textual._xterm_parser import XTermParser

        self._saved = termios.tcgetattr(self.fd)
        tty.setraw(self.fd)
        self._parser = XTermParser()
        self._send(ENTER)
        self._drawn = []  # the whole screen is drawn again
        asyncio.get_running_loop().add_reader(self.fd, self._read)

    def suspend(self) -> None:
        import termios

        if self._saved is None:
            return
        asyncio.get_running_loop().remove_reader(self.fd)
        self._send(LEAVE)
        termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
        self._saved = None

    def close(self) -> None:
        if self.closed:
            return
        self.suspend()
        self.closed = True
        os.close(self.fd)
        self._events.put_nowait({"type": "closed"})
        if self.on_close is not None:
            self.on_close()

    # The screen ---------------------------------------------------------------------

    def clear(self) -> None:
        from rich.text import Text

        self.rows = [Text(" " * self.width, end="") for _ in range(self.height)]
        self.taps = []

    def text(self, x: int, y: int, text: str, style: Style | None = None) -> None:
        from rich.text import Text

        self.spans(x, y, Text(text, style=style or "", end=""))

    def spans(self, x: int, y: int, spans: Text) -> None:
        """Draws over the row from x, cut at the screen's edge."""
        from rich.cells import cell_len

        if not 0 <= y < self.height or x >= self.width:
            return
        row = self.rows[y]
        spans = spans.copy()
        spans.truncate(self.width - max(0, x))
        left = row[: max(0, x)]
        right_from = max(0, x) + cell_len(spans.plain)
        out = left + spans + row[right_from:]
        out.truncate(self.width, pad=True)
        self.rows[y] = out

    def line(self, y: int, spans: Text) -> None:
        spans = spans.copy()
        spans.truncate(self.width, pad=True)
        if 0 <= y < self.height:
            self.rows[y] = spans

    def fill(self, x: int, y: int, width: int, height: int, char: str, style: Style | None) -> None:
        for row in range(max(0, y), min(self.height, y + height)):
            self.text(x, row, (char or " ")[:1] * max(0, width), style)

    def paint(self, painted: Painted, source: ItoSource) -> None:
        """A painted ito tree over the whole screen: its taps and controls answer clicks
        and keys until the next paint (the focus stays where it was)."""
        self.clear()
        for y, line in enumerate(painted.lines[: self.height]):
            self.line(y, line)
        self.taps = painted.taps
        if self.painted is not None and self.painted.controls and painted.controls:
            painted.focus = min(self.painted.focus, len(painted.controls) - 1)
        self.painted, self.source = painted, source

    def clicked(self, x: int, y: int) -> int | None:
        """The handler of the innermost tap at the cell, if any."""
        for tx, ty, tw, th, handler in reversed(self.taps):
            if tx <= x < tx + tw and ty <= y < ty + th:
                return handler
        return None

    def select(self, cells: tuple[int, int, int, int] | None, style: Style | None) -> None:
        """Selects from (x0, y0) to (x1, y1) as a terminal does, row after row (None: nothing)."""
        self.selection, self.highlight = cells, style

    def _selected(self) -> list[tuple[int, int, int]]:
        """The selection's rows with the cells from and to (exclusive), top first."""
        if self.selection is None:
            return []
        x0, y0, x1, y1 = self.selection
        (ya, xa), (yb, xb) = sorted(((y0, x0), (y1, x1)))
        return [
            (y, xa if y == ya else 0, xb + 1 if y == yb else self.width)
            for y in range(max(0, ya), min(self.height, yb + 1))
        ]

    def selected_text(self) -> str:
        """What the selection covers, each row's trailing blanks cut."""
        out = []
        for y, start, end in self._selected():
            row = self.rows[y]
            out.append(row.plain[cell_index(row.plain, start) : cell_index(row.plain, end)].rstrip())
        return "\n".join(out)

    def copy(self, text: str) -> None:
        """To the clipboard through the terminal (OSC 52), with the next flush."""
        import base64

        self.write(f"\x1b]52;c;{base64.b64encode(text.encode()).decode()}\x07")

    def cursor(self, shape: str, x: int | None, y: int | None) -> None:
        if shape == "hidden":
            self._cursor = "\x1b[?25l"
        else:
            at = f"\x1b[{(y or 0) + 1};{(x or 0) + 1}H" if x is not None else ""
            self._cursor = f"\x1b[{CURSORS.get(shape, 2)} q{at}\x1b[?25h"

    def write(self, raw: str) -> None:
        self._raw.append(raw)

    def flush(self) -> None:
        """Writes the rows that changed since the last flush, then what `write` held."""
        from rich.console import Console

        console = Console(
            width=self.width, color_system="truecolor", force_terminal=True, legacy_windows=False
        )
        out: list[str] = ["\x1b[?25l"]
        drawn: list[str] = []
        rows = list(self.rows)
        for y, start, end in self._selected():
            rows[y] = rows[y].copy()
            plain = rows[y].plain
            rows[y].stylize(self.highlight or "reverse", cell_index(plain, start), cell_index(plain, end))
        for y, row in enumerate(rows):
            with console.capture() as cap:
                console.print(row, end="", overflow="crop", no_wrap=True)
            drawn.append(cap.get())
            if y >= len(self._drawn) or self._drawn[y] != drawn[y]:
                out.append(f"\x1b[{y + 1};1H\x1b[0m{drawn[y]}\x1b[0m")
        self._drawn = drawn
        out.extend(self._raw)
        self._raw = []
        out.append(self._cursor)
        self._send("".join(out))

    def _send(self, text: str) -> None:
        data = text.encode()
        while data:
            written = os.write(self.fd, data)
            data = data[written:]

    # The input ----------------------------------------------------------------------

    def _read(self) -> None:
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            data = b""
        if not data:
            return
        self._emit(self._parser.feed(data.decode("utf-8", "replace")))
        self._check_size()

    def _check_size(self) -> None:
        width, height = os.get_terminal_size(self.fd)
        if (width, height) != (self.width, self.height):
            self.width, self.height = width, height
            self.clear()
            self._drawn = []
            self._events.put_nowait({"type": "resize", "width": width, "height": height})

    async def next_event(self, timeout: float | None) -> Event | None:
        """The next event, or None when `timeout` seconds pass first (or it is closed). A
        lone Esc is told once no sequence follows it (the parser's tick)."""
        loop = asyncio.get_running_loop()
        end = None if timeout is None else loop.time() + timeout
        while True:
            if not self._events.empty():
                return self._events.get_nowait()
            if self.closed:
                return None
            wait = 0.1 if end is None else min(0.1, end - loop.time())
            if wait <= 0:
                self._check_size()
                return None
            try:
                return await asyncio.wait_for(self._events.get(), wait)
            except TimeoutError:
                self._emit(self._parser.tick() if self._parser is not None else [])

    def _emit(self, messages: Any) -> None:
        for message in messages:
            event = event_of(message)
            if event is not None:
                self._events.put_nowait(event)


def cell_index(plain: str, cell: int) -> int:
    """The index in `plain` of the character at the cell (a wide character takes two)."""
    from rich.cells import get_character_cell_size

    used = 0
    for i, char in enumerate(plain):
        if used >= cell:
            return i
        used += get_character_cell_size(char)
    return len(plain)


def event_of(message: Any) -> Event | None:
    """A parsed terminal message as uji.tty's event table."""
    from textual import events

    if isinstance(message, events.Key):
        return {"type": "key", **key_table(message.key, message.character)}
    if isinstance(message, events.Paste):
        return {"type": "paste", "text": message.text}
    if isinstance(message, events.AppFocus):
        return {"type": "focus", "focused": True}
    if isinstance(message, events.AppBlur):
        return {"type": "focus", "focused": False}
    if isinstance(message, events.MouseEvent):
        kinds = {events.MouseDown: "press", events.MouseUp: "release", events.MouseMove: "drag",
                 events.MouseScrollUp: "wheel", events.MouseScrollDown: "wheel"}  # fmt: skip
        action = kinds.get(type(message))
        if action is None or (action == "drag" and not message.button):
            return None
        out: Event = {"type": "mouse", "action": action, "x": int(message.x), "y": int(message.y),
                      "button": int(message.button)}  # fmt: skip
        if action == "wheel":
            out["delta"] = -1 if isinstance(message, events.MouseScrollUp) else 1
        return out
    return None
