"""A run_command line that may outlive its tool call: `start`, offered to Lua as
`uji.tool.get("run_command").start`, which is how the jobs plugin runs commands in the
background and moves a foreground command there at its timeout.

It runs exactly as run_command runs a line (the same shell, directory, environment,
closed stdin, merged output, keys cut out as the output streams), and keeps all of its
output in a log file with a cap, so a later reader can ask for the lines after a point.
Every process group started here is told to the reaper (uji.reaper), so none outlives
uji, even a uji killed with -9; `close_all` kills them when the session ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from typing import IO, TYPE_CHECKING

from uji.procs import kill_group
from uji.tools.base import ToolContext, ToolResult
from uji.tools.builtin.run_command import EXIT_GRACE, MAX_BYTES, MAX_LINES, Output, _exit_text, _Pipe, _size

if TYPE_CHECKING:
    from uji.reaper import Reaper
    from uji.sandbox.spawn import Child

# A job's log keeps at most this much: over it, the older half is dropped at a line.
LOG_CAP = 8 * 1024 * 1024


@functools.cache
def reaper() -> Reaper:
    """The one reaper of this uji process, started with the first group it is told of."""
    from uji.reaper import Reaper

    return Reaper()


_live: set[Process] = set()


def close_all() -> None:
    """The session is over: kill every process group started here."""
    for process in list(_live):
        process.stop()
        process.forget()
    if reaper.cache_info().currsize:
        reaper().close()
        reaper.cache_clear()


class Log:
    """All the output of one process, in a file of at most LOG_CAP bytes, by line number.

    Line numbers count from 1 over everything the process wrote; when the file nears
    its cap, its older half goes and `dropped` says how many lines that was."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: IO[bytes] | None = open(path, "wb")  # noqa: SIM115 - closed in finish()
        self._size = 0
        self.lines = 0  # complete lines written
        self.dropped = 0  # lines no longer in the file
        self.error: str | None = None
        self._ends_line = True  # the last byte written was a newline (or none was)

    def feed(self, data: bytes) -> None:
        if self._file is None or not data:
            return
        try:
            if self._size + len(data) > LOG_CAP:
                self._rotate()
            self._file.write(data)
            self._file.flush()
            self._size += len(data)
            self.lines += data.count(b"\n")
            self._ends_line = data.endswith(b"\n")
        except OSError as e:  # a full disk must not cost the command its result
            self.error = e.strerror or str(e)
            self._close()

    def finish(self) -> None:
        """The stream ended: an unfinished last line counts as a line."""
        if not self._ends_line:
            self.feed(b"\n")
        self._close()

    def _close(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    def _rotate(self) -> None:
        assert self._file is not None
        self._file.flush()
        with open(self.path, "rb") as f:
            f.seek(max(0, self._size - LOG_CAP // 2))
            kept = f.read()
        cut = kept.find(b"\n") + 1  # start at a line
        kept = kept[cut:]
        self.dropped += self.lines - self.dropped - kept.count(b"\n")
        self._file.seek(0)
        self._file.truncate()
        self._file.write(kept)
        self._size = len(kept)

    def read(self, since: int) -> tuple[list[bytes], int]:
        """The complete lines after line `since` that the file still holds, then the
        unfinished last line if any (empty when none), and the number of the first line
        given (later than since + 1 when lines were dropped)."""
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            return [], since + 1
        lines = data.split(b"\n")  # the last item is the unfinished line
        start = max(since, self.dropped)
        return lines[start - self.dropped :], start + 1


class LoggedOutput(Output):
    """run_command's kept tail, with every byte also in a Log (which is then the file
    the truncation note points to)."""

    def __init__(self, log: Log) -> None:
        super().__init__()
        self.log = log
        self.spill_cap = LOG_CAP

    def feed(self, chunk: bytes) -> None:
        self.log.feed(chunk)
        super().feed(chunk)

    def finish(self) -> None:
        super().finish()
        self.log.finish()

    def _start_spill(self) -> None:
        self._raw = None  # the log already holds all of it
        if self.log.error is None:
            self.spill_path = self.log.path
        else:
            self._spill_error = self.log.error


class Process:
    """A command started with `start`."""

    def __init__(self, command: str, ctx: ToolContext) -> None:
        self.command = command
        self._ctx = ctx
        self.pid = 0
        self.code: int | None = None
        self.stopped = False
        self.started = time.monotonic()
        self.ended_at: float | None = None
        self._ended = asyncio.Event()
        self._released = asyncio.Event()  # release(): the current wait ends, the process runs on
        self._progress_to: list[ToolContext] = []  # the calls waiting now see the last line
        self._read_to = 0  # the last line the previous read gave
        self._pipe: _Pipe | None = None
        self._watch: asyncio.Task[None] | None = None
        from uji.tools.builtin.run_command import _spill_dir

        log_path = os.path.join(_spill_dir(), f"job-{os.getpid()}-{id(self):x}.log")
        self.output = LoggedOutput(Log(log_path))

    async def start(self) -> ToolResult | None:
        """Spawn; an error result when the command could not start."""
        from uji.tools.builtin.run_command import _spawn

        read_fd, write_fd = os.pipe()
        try:
            proc = await _spawn(self.command, self._ctx.cwd, write_fd, self._ctx.env, self._ctx.os_sandbox)
        except OSError as e:
            os.close(read_fd)
            self.output.finish()
            return ToolResult(f"error: could not start the command: {e.strerror or e}")
        finally:
            os.close(write_fd)
        self.pid = proc.pid
        reaper().watch(proc.pid)
        _live.add(self)
        self._pipe = _Pipe(read_fd, self.output, self._progress, self._ctx.redact)
        self._watch = asyncio.get_running_loop().create_task(self._until_exit(proc))
        return None

    def _progress(self, line: str) -> None:
        for ctx in self._progress_to:
            ctx.progress(line)

    async def _until_exit(self, proc: Child) -> None:
        try:
            await proc.wait()
            if self._pipe is not None:
                await self._pipe.drain(EXIT_GRACE)
        finally:
            if self._pipe is not None:
                self._pipe.close()
            self.code = proc.returncode
            self.ended_at = time.monotonic()
            self._ended.set()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, 0)
            return  # something it started still runs in its group: killed at the end
        self.forget()

    def forget(self) -> None:
        """Nothing of it runs any more: the reaper need not kill its group."""
        if self in _live:
            _live.discard(self)
            reaper().forget(self.pid)

    @property
    def running(self) -> bool:
        return not self._ended.is_set()

    @property
    def seconds(self) -> float:
        return (self.ended_at or time.monotonic()) - self.started

    async def wait(self, seconds: float | None, ctx: ToolContext | None = None) -> ToolResult | None:
        """Its result once it ends, as run_command gives it; None when it still runs
        after `seconds`. While waiting, `ctx` shows its last line. An interrupt of the
        wait kills it, as it kills a foreground command."""
        if ctx is not None:
            self._progress_to.append(ctx)
        ended = asyncio.ensure_future(self._ended.wait())
        released = asyncio.ensure_future(self._released.wait())
        try:
            async with asyncio.timeout(seconds):
                await asyncio.wait({ended, released}, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            return None
        except asyncio.CancelledError:
            self.stop()
            raise
        finally:
            ended.cancel()
            released.cancel()
            if ctx is not None:
                self._progress_to.remove(ctx)
        if not self._ended.is_set():  # released: it runs on
            self._released.clear()
            return None
        return self.result()

    def release(self) -> bool:
        """End the wait under way (or the next one, if it has not begun) as if its time
        were up, leaving the process running (Ctrl+Z moves the foreground command to the
        background this way); False when it had ended."""
        if not self.running:
            return False
        self._released.set()
        return True

    def result(self) -> ToolResult:
        code = self.code if self.code is not None else -9
        return ToolResult(text=_exit_text(code, self.output.render()), summary=f"Exit code {code}")

    def stop(self) -> bool:
        """Kill its process group; False when it had already ended."""
        if not self.running:
            return False
        self.stopped = True
        kill_group(self.pid)
        return True

    def read(self, since: int | None) -> dict[str, object]:
        """The output after line `since` (default: after the previous read), at most the
        last MAX_LINES lines or MAX_BYTES of it: {text, first, last, total, skipped,
        dropped, path}."""
        log = self.output.log
        start = self._read_to if since is None else max(0, since)
        lines, first = log.read(start)
        partial = lines.pop() if lines else b""
        total = first - 1 + len(lines)
        skipped = 0
        size = 0
        keep: list[bytes] = []
        for line in reversed(lines):
            if len(keep) >= MAX_LINES or size + len(line) + 1 > MAX_BYTES:
                break
            keep.append(line)
            size += len(line) + 1
        keep.reverse()
        skipped = len(lines) - len(keep)
        self._read_to = max(self._read_to, total)
        text = "\n".join(x.decode("utf-8", "replace") for x in keep)
        if partial:
            text = (text + "\n" if text else "") + partial.decode("utf-8", "replace")
        return {
            "text": text,
            "first": first + skipped,
            "last": total,
            "skipped": skipped,
            "dropped": max(0, first - 1 - start),
            "path": log.path,
            "cap": _size(LOG_CAP),
        }


async def start(args: dict[str, object], ctx: ToolContext) -> Process | ToolResult:
    """Start a run_command call's line and return at once: the Process, or the error
    result the call would give (no command, a spawn failure)."""
    from uji.tools.builtin.read_file import required_str

    command = required_str(args, "command")
    if isinstance(command, ToolResult):
        return command
    process = Process(command, ctx)
    failed = await process.start()
    return failed or process
