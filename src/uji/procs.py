"""Child processes: reading their pipes on the event loop, and killing a whole group."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

READ_CHUNK = 64 * 1024


class PipeReader:
    """The read end of a pipe, read from the event loop (no thread). Subclasses get
    each chunk in `feed`, `at_eof` when the writers are gone, and `finish` once, at
    `close`."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._closed = False
        self.eof = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        os.set_blocking(fd, False)
        self._loop.add_reader(fd, self._on_readable)

    def feed(self, data: bytes) -> None:
        raise NotImplementedError

    def at_eof(self) -> None:
        """Every writer closed its end."""

    def finish(self) -> None:
        """Reading stopped: no more data will come."""

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._loop.remove_reader(self._fd)
            self.at_eof()
            self.eof.set()
            return
        self.feed(data)

    async def drain(self, grace: float) -> None:
        """Wait briefly for the end of output: children that keep the pipe open (a
        server started in the background) are not waited for."""
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
        # cancellation that arrives as the awaited thing finishes (an Esc lost).
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await self.eof.wait()

    def close(self) -> None:
        """Stop reading; safe to call twice (a second os.close could hit a reused fd)."""
        if self._closed:
            return
        self._closed = True
        self._loop.remove_reader(self._fd)
        os.close(self._fd)
        self.finish()


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid` (children started with start_new_session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
