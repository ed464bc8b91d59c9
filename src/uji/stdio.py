"""stdin and stdout of the command line: the prompt read from stdin, and output whose
reader may go away (`uji run --json | head -1`). Imports stay light: `uji list` uses it."""

from __future__ import annotations

import sys
from typing import Any

STDIN_LIMIT = 8 * 1024 * 1024  # bytes of stdin a prompt may take
STDIN_WAIT = 3.0  # seconds a pipe may stay silent before a prompt given as words runs without it


class UsageError(Exception):
    pass


def _read_all(fd: int) -> str:
    """All of `fd` up to STDIN_LIMIT bytes, decoded (bytes that are not UTF-8 replaced)."""
    import os

    chunks: list[bytes] = []
    size = 0
    while size <= STDIN_LIMIT:  # bounded: each pass adds at least one byte or ends
        chunk = os.read(fd, min(65536, STDIN_LIMIT + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > STDIN_LIMIT:
        raise UsageError(
            f"stdin is over {STDIN_LIMIT // (1024 * 1024)} MiB; save it to a file and name the file in the prompt"
        )
    return b"".join(chunks).decode("utf-8", errors="replace")


def _stdin_ready(fd: int, wait: float) -> bool:
    """Whether stdin has data or its end within `wait` s: a file or /dev/null at once, a pipe
    when its writer writes or closes. A pipe nobody writes to (a harness that leaves stdin
    open) is not waited for forever."""
    import os
    import select
    import stat

    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return True
        readable, _, _ = select.select([fd], [], [], wait)
    except (OSError, ValueError):
        return False
    return bool(readable)


def prompt_from(words: list[str], stdin: Any = None, notice: Any = None) -> str:
    """The prompt of `uji run`: its words; `-` or no words: stdin; words with stdin a pipe
    or file: the words, a blank line, then stdin (as Claude Code's `-p` does)."""
    stream = sys.stdin if stdin is None else stdin
    try:
        fd = stream.fileno()
        tty = stream.isatty()
    except (AttributeError, OSError, ValueError):
        fd, tty = -1, True  # no stdin at all
    if words == ["-"] or (not words and not tty):
        if fd < 0:
            raise UsageError("`-` reads the prompt from stdin, and there is none")
        text = _read_all(fd).strip()
        if not text:
            raise UsageError("the prompt from stdin is empty; give a PROMPT or pipe one in")
        return text
    if not words:
        raise UsageError('a PROMPT is needed: uji run "..." (or pipe one in; see uji run --help)')
    prompt = " ".join(words)
    if tty or fd < 0:
        return prompt
    if not _stdin_ready(fd, STDIN_WAIT):
        if notice is not None:
            notice(
                f"nothing came on stdin within {STDIN_WAIT:g} s; running the prompt without it "
                "(`< /dev/null` skips stdin, `-` waits for it)"
            )
        return prompt
    extra = _read_all(fd).strip("\n")
    return f"{prompt}\n\n{extra}" if extra.strip() else prompt


def say(stream: Any, line: str) -> None:
    """A line on stderr; a closed stderr is not an error worth a traceback."""
    try:
        print(line, file=stream, flush=True)
    except BrokenPipeError:
        silence(stream)


def silence(stream: Any) -> None:
    """Point a stream whose reader went away at /dev/null, so that the flush at exit does
    not print "Exception ignored ... BrokenPipeError"."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def write_all(stream: Any, text: str) -> None:
    """Write and flush all of `text`. Unbuffered (PYTHONUNBUFFERED, `python -u`), a text
    stream drops what a short write to a pipe left over, and with it the BrokenPipeError
    of a reader that went away: write the bytes in a loop instead."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    view = memoryview(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))
    while view:  # bounded: each pass writes at least one byte, or stops
        n = buffer.write(view)
        if not n:
            break
        view = view[n:]
    buffer.flush()
