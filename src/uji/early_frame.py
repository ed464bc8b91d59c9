"""The screen's first frame, painted before Textual has loaded.

Importing Textual and making the screen take most of the time before the first frame
(about a quarter of a second). The first frame of a new session is the same for one
terminal size and one terminal: the composer, and "loading config…" on the status line
(the config loads behind it). So the screen keeps the bytes Textual wrote for it (a file
per size and terminal, in <data>/first-frame/), and the next `uji` writes them at once,
before importing anything of the screen. At the same moment the terminal takes the input
mode Textual would set (no echo, no line editing, Enter as CR): keys typed from then on
wait in the terminal's input, unechoed, until Textual reads them, in order, into the
composer; Textual's own first frame then paints the same cells again. A start whose frame
differs from the one kept (another Textual, another theme) keeps the new one.
"""

from __future__ import annotations

import os
import sys
from typing import Any

ENTER = b"\x1b[?1049h\x1b[?25l"  # the alternate screen, the cursor hidden (as Textual starts)
LEAVE = b"\x1b[?1049l\x1b[?25h"
FOLDER = "first-frame"
# What changes how a terminal draws the same frame: its variables, and uji's version.
VARIABLES = ("TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TERM_PROGRAM", "TEXTUAL_COLOR_SYSTEM")


def frame_file(data_dir: str, columns: int, rows: int) -> str:
    """Where the first frame of a terminal this size (and with these variables) is kept."""
    import zlib

    from uji import __version__

    said = "\0".join([__version__, *(os.environ.get(v, "") for v in VARIABLES)])
    return os.path.join(data_dir, FOLDER, f"{columns}x{rows}-{zlib.crc32(said.encode()):08x}")


class Painted:
    """The first frame written before Textual: the terminal's input mode to put back when
    the screen is gone, and the alternate screen to leave if Textual never took over."""

    def __init__(self, fd: int, before: list[Any]) -> None:
        self._fd = fd
        self._before = before
        self._done = False

    def restore(self, screen_started: bool) -> None:
        """The terminal as it was (once): `screen_started` says Textual ran, and left the
        alternate screen itself."""
        import termios

        if self._done:
            return
        self._done = True
        if not screen_started:
            os.write(sys.stderr.fileno(), LEAVE)
        try:
            termios.tcsetattr(self._fd, termios.TCSANOW, self._before)
        except termios.error:
            pass


def paint(data_dir: str) -> Painted | None:
    """Write the kept first frame for this terminal, if there is one (both ends a terminal),
    in Textual's input mode; None when nothing was painted."""
    try:
        if not (sys.stdin.isatty() and sys.stdout.isatty() and sys.stderr.isatty()):
            return None
        columns, rows = os.get_terminal_size(sys.stderr.fileno())
        with open(frame_file(data_dir, columns, rows), "rb") as f:
            frame = f.read()
    except (OSError, ValueError):
        return None
    import termios

    fd = sys.stdin.fileno()
    try:
        before = termios.tcgetattr(fd)
        mode = termios.tcgetattr(fd)
        # As Textual's Linux driver sets it (so that nothing typed now is read otherwise).
        mode[0] &= ~(termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR)
        signals = 0 if os.environ.get("TEXTUAL_ALLOW_SIGNALS") else termios.ISIG
        mode[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | signals)
        mode[6][termios.VMIN] = 1
        termios.tcsetattr(fd, termios.TCSANOW, mode)
    except termios.error:
        return None
    os.write(sys.stderr.fileno(), ENTER + frame)  # where Textual writes
    return Painted(fd, before)


def keep(data_dir: str, columns: int, rows: int, frame: bytes) -> None:
    """Keep `frame` (what Textual wrote for the first frame) for the next start."""
    path = frame_file(data_dir, columns, rows)
    try:
        with open(path, "rb") as f:
            if f.read() == frame:
                return
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "wb") as f:
            f.write(frame)
        os.replace(path + ".tmp", path)
    except OSError:
        pass  # the next start paints when Textual is ready, as this one did
