"""Waiting with a deadline (no tests here): for a condition, or for a line from a child's
pipe. Tests wait for what they need instead of sleeping for a while and hoping, and a hang
fails the test with what was seen instead of blocking until the run's own timeout."""

from __future__ import annotations

import asyncio
import os
import select
import subprocess
import time
from collections.abc import Callable
from typing import IO, Any, TypeVar

T = TypeVar("T")

POLL = 0.01  # between two looks at a condition: short, so a wait ends soon after it holds
# How long a wait may take before the test fails: long, since a wait ends as soon as its
# condition holds, and on a loaded machine (two cores, a compile, other test runs) starting a
# process or a server takes many times what it takes on an idle one. It only bounds a hang.
DEADLINE = 60.0


def until(cond: Callable[[], T], timeout: float = DEADLINE, what: str = "") -> T:
    """`cond()` once it is truthy; AssertionError after `timeout` seconds."""
    end = time.monotonic() + timeout
    while not (value := _look(cond, end, timeout, what)):
        time.sleep(POLL)
    return value


async def until_async(cond: Callable[[], T], timeout: float = DEADLINE, what: str = "") -> T:
    """`until` for a test running in the event loop: other tasks run while it waits."""
    end = time.monotonic() + timeout
    while not (value := _look(cond, end, timeout, what)):
        await asyncio.sleep(POLL)
    return value


def _look(cond: Callable[[], T], end: float, timeout: float, what: str) -> T:
    value = cond()
    if not value and time.monotonic() > end:
        raise AssertionError(f"timed out after {timeout} s waiting for {what or cond}")
    return value


def alive(pid: int) -> bool:
    """Running, and not a zombie waiting for a parent that may never reap it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def read_line(stream: IO[Any], timeout: float = DEADLINE) -> str:
    """The next line from a child's pipe, with its newline ("" at the end of the stream).

    Read a byte at a time straight from the descriptor: nothing past the line is taken
    from the pipe (a test may close it next, to be a reader that leaves), and nothing is
    held in the file object's buffer, so `communicate()` afterwards sees the rest. A child
    that writes no line for `timeout` seconds fails the test."""
    fd = stream.fileno()
    end = time.monotonic() + timeout
    got = bytearray()
    while not got.endswith(b"\n"):
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"no line within {timeout} s; the line so far: {bytes(got)!r}")
        byte = os.read(fd, 1)
        if not byte:
            break
        got += byte
    return got.decode()


def lines_until(stream: IO[Any], last: Callable[[str], bool], timeout: float = DEADLINE) -> list[str]:
    """Lines up to and including the first for which `last(line)` holds; AssertionError if
    the stream ends first or the whole wait takes longer than `timeout` seconds."""
    end = time.monotonic() + timeout
    lines: list[str] = []
    while True:
        line = read_line(stream, max(end - time.monotonic(), 0.001))
        if not line:
            raise AssertionError("the stream ended first; it said:\n" + "".join(lines))
        lines.append(line)
        if last(line):
            return lines


def drain(proc: subprocess.Popen[Any], timeout: float = 60.0) -> tuple[str, str]:
    """Read a child's stdout and stderr (those still open) to their end, then wait for it
    to exit; returns what was read, decoded. Unlike `communicate()` it leaves stdin alone
    (a test may hold it open on purpose) and it reads only from the descriptors, so it
    goes on where `read_line` stopped. A child still running after `timeout` seconds is
    killed and fails the test with what it wrote."""
    end = time.monotonic() + timeout
    pipes = [p for p in (proc.stdout, proc.stderr) if p is not None and not p.closed]
    got: dict[int, bytearray] = {p.fileno(): bytearray() for p in pipes}
    open_fds = list(got)
    while open_fds:
        left = end - time.monotonic()
        ready = select.select(open_fds, [], [], max(left, 0))[0] if left > 0 else []
        if not ready:
            proc.kill()
            proc.wait()
            said = {fd: bytes(data[-2000:]) for fd, data in got.items()}
            raise AssertionError(f"the child was still writing after {timeout} s; it said: {said}")
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                got[fd] += chunk
            else:
                open_fds.remove(fd)
    try:
        proc.wait(timeout=max(end - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"the child closed its output but did not exit within {timeout} s") from None

    def text(stream: IO[Any] | None) -> str:
        if stream is None or stream.closed:
            return ""
        return got[stream.fileno()].decode(errors="replace")

    return text(proc.stdout), text(proc.stderr)
