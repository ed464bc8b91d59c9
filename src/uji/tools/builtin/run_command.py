"""run_command: `bash -c` (the shell whose grammar the policy parses; `sh` where there is
no bash) in the working directory, output merged and tail-limited.

The command gets its own session (so its process group can be killed as a whole), stdin
from /dev/null and GIT_TERMINAL_PROMPT=0, so nothing can wait for input that cannot come.
A timeout or an interrupt kills the whole group with SIGKILL. A normal exit kills nothing:
background processes the command started on purpose live on."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from uji.procs import READ_CHUNK, PipeReader, kill_group
from uji.tools.base import ToolContext, ToolResult
from uji.tools.builtin.read_file import error, int_arg, required_str
from uji.tools.builtin.tool import BuiltinTool

if TYPE_CHECKING:
    from uji.sandbox import SandboxPolicy
    from uji.sandbox.spawn import Child
    from uji.tools.builtin.tool import BuiltinSpec
    from uji.tools.secrets import Redactor

DEFAULT_TIMEOUT = 120
MAX_LINES = 2000
MAX_BYTES = 50 * 1024
# After the shell exits, background children may hold the pipe open forever: read what is
# already on its way for this long, then stop.
EXIT_GRACE = 0.1
PROGRESS_INTERVAL = 0.1  # at most ~10 progress updates a second
# The overflow file keeps at most this much: the tail of the output. Over the cap, its older
# half is dropped (at a line boundary), so it holds between half the cap and the cap.
SPILL_CAP = 50 * 1024 * 1024

SPEC: BuiltinSpec = {
    "name": "run_command",
    "description": (
        "Run a bash command line in the working directory; returns stdout and stderr "
        "merged, then the exit code. stdin is closed, so nothing can prompt for input. Only "
        "the last 2000 lines or 50 KB are shown. Killed after `timeout` seconds (default 120)."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "command": {"type": "string"},
            "timeout": {"type": "integer", "minimum": 1, "description": "Seconds (default 120)"},
        },
        "required": ["command"],
        "additionalProperties": False,
    },
    "policy": "ask",
    "verb": "Ran",
    "question": None,
    "path_subject": False,
    "subject_key": "command",
}


# -- output ------------------------------------------------------------------------------


def _size(n: int) -> str:
    if n < 1024:
        return f"{n}B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f}KB"
    return f"{n / (1024 * 1024):.1f}MB"


SPILL_PREFIX = "uji-output-"


@functools.cache
def _spill_dir() -> str:
    """One temp dir per process for full outputs, removed when uji exits (and when the App
    closes, see `remove_spills`). Dirs left by a uji that was killed go on the next one."""
    from uji import private_dirs

    return private_dirs.make(SPILL_PREFIX)


def remove_spills() -> None:
    """Delete this process's overflow files (the session is over)."""
    if _spill_dir.cache_info().currsize:
        shutil.rmtree(_spill_dir(), ignore_errors=True)
        _spill_dir.cache_clear()


class Output:
    """Keeps the last 2000 lines or 50 KB of a stream; spills all of it to a file on overflow.

    Until something is dropped, every byte is still in memory (`_raw`), so the spill file
    starts complete; after that, chunks go straight to the file."""

    spill_cap: int | None = None  # what the note says the spill file keeps (None: SPILL_CAP)

    def __init__(self) -> None:
        self._lines: deque[tuple[bytes, int]] = deque()  # (kept bytes, full length)
        self._kept = 0  # bytes in _lines, one newline each included
        self._partial = bytearray()  # the unfinished line (only its tail if it is huge)
        self._partial_len = 0
        self._total = 0
        self._raw: bytearray | None = bytearray()
        self._lost = False  # a line was dropped or cut: the spill file is needed
        self._spill: IO[bytes] | None = None
        self.spill_path: str | None = None
        self._spill_error: str | None = None
        self._spill_size = 0
        self._spill_dropped = 0  # bytes cut from the start of the spill file to keep the cap
        self._spill_header = 0  # the length of the line that says so

    @property
    def truncated(self) -> bool:
        return self._raw is None

    def feed(self, chunk: bytes) -> None:
        if self._raw is not None:
            self._raw += chunk
        else:
            self._write_spill(chunk)
        start = 0
        while (nl := chunk.find(b"\n", start)) != -1:
            self._extend(chunk[start:nl])
            self._end_line()
            start = nl + 1
        self._extend(chunk[start:])
        if self._lost and self._raw is not None:
            self._start_spill()

    def last_line(self) -> str:
        """The newest line, for the progress display."""
        raw = bytes(self._partial) if self._partial else (self._lines[-1][0] if self._lines else b"")
        return raw[-400:].rstrip(b"\r").decode("utf-8", "replace").strip()

    def finish(self) -> None:
        """The stream ended: an unfinished last line counts as a line."""
        if self._partial_len:
            self._end_line()
            if self._lost and self._raw is not None:
                self._start_spill()
        if self._spill is not None:
            with contextlib.suppress(OSError):
                self._spill.close()

    def render(self) -> str:
        kept = list(self._lines)
        body = "\n".join(_line_text(raw, full) for raw, full in kept)
        if not self.truncated:
            return body
        return f"{body}\n\n{self._note(kept)}" if body else self._note(kept)

    def _note(self, kept: list[tuple[bytes, int]]) -> str:
        where = (
            f"Full output (its last {_size(self.spill_cap or SPILL_CAP)}, kept until uji exits): {self.spill_path}"
            if self.spill_path
            else f"Full output lost: {self._spill_error}"
        )
        if len(kept) == 1 and kept[0][1] > len(kept[0][0]):
            raw, full = kept[0]
            return f"[Showing last {_size(len(raw))} of line {self._total} (line is {_size(full)}). {where}]"
        first = self._total - len(kept) + 1
        return f"[Showing lines {first}-{self._total} of {self._total} ({_size(MAX_BYTES)} limit). {where}]"

    def _extend(self, piece: bytes) -> None:
        self._partial += piece
        self._partial_len += len(piece)
        if len(self._partial) > MAX_BYTES:  # keep only the tail of a huge line
            del self._partial[: len(self._partial) - MAX_BYTES]
            self._lost = True

    def _end_line(self) -> None:
        line = bytes(self._partial)
        self._lines.append((line, self._partial_len))
        self._kept += len(line) + 1
        self._total += 1
        self._partial.clear()
        self._partial_len = 0
        while len(self._lines) > 1 and (len(self._lines) > MAX_LINES or self._kept - 1 > MAX_BYTES):
            self._kept -= len(self._lines.popleft()[0]) + 1
            self._lost = True

    def _start_spill(self) -> None:
        raw, self._raw = self._raw or b"", None
        try:
            spill = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in finish()
                dir=_spill_dir(), prefix="command-", suffix=".txt", delete=False
            )
            self._spill, self.spill_path = spill, spill.name
        except OSError as e:
            self._spill_error = e.strerror or str(e)
            return
        self._write_spill(bytes(raw))

    def _write_spill(self, data: bytes) -> None:
        if self._spill is None:
            return
        try:
            if self._spill_size + len(data) > SPILL_CAP:
                self._rotate(data)
            else:
                self._spill.write(data)
                self._spill_size += len(data)
        except OSError as e:  # a full disk must not cost the command's result
            self._spill_error = e.strerror or str(e)
            self.spill_path = None
            self._spill = None

    def _rotate(self, data: bytes) -> None:
        """Replace the spill file by its newest half-cap of output (`data` last), starting
        at a line, under a first line that says how much came before."""
        assert self._spill is not None and self.spill_path is not None
        keep = SPILL_CAP // 2
        self._spill.flush()
        total = self._spill_size + len(data)
        start = total - keep  # offset, in file + data, of the first byte kept
        old, path = self._spill, self.spill_path
        new = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in finish()
            dir=os.path.dirname(path), prefix="command-", suffix=".tmp", delete=False
        )
        try:
            with open(path, "rb") as src:
                src.seek(min(start, self._spill_size))
                tail = src.read(64 * 1024) if start < self._spill_size else b""
                # Begin after the first newline, unless that would drop the whole block.
                cut = tail.find(b"\n")
                skip = cut + 1 if 0 <= cut < len(tail) - 1 else 0
                dropped = self._spill_dropped + start + skip - self._spill_header
                header = f"[uji: the first {dropped} bytes of output were dropped to keep this file small]\n"
                new.write(header.encode())
                new.write(tail[skip:])
                shutil.copyfileobj(src, new)
            new.write(data[max(0, start - self._spill_size) :])
            os.replace(new.name, path)
        except BaseException:
            new.close()
            with contextlib.suppress(OSError):
                os.unlink(new.name)
            raise
        old.close()
        self._spill = new
        self._spill_size = new.tell()
        self._spill_dropped = dropped
        self._spill_header = len(header.encode())


def _line_text(raw: bytes, full: int) -> str:
    if full > len(raw):  # the tail of a cut line: start on a character boundary
        start = 0
        while start < len(raw) and raw[start] & 0xC0 == 0x80:
            start += 1
        raw = raw[start:]
    return raw.rstrip(b"\r").decode("utf-8", "replace")


# -- the process -------------------------------------------------------------------------


class _Pipe(PipeReader):
    """The read end of the command's stdout+stderr pipe: output kept, last line shown."""

    def __init__(
        self, fd: int, output: Output, progress: Callable[[str], None], redact: Redactor | None = None
    ) -> None:
        self._output = output
        self._progress = progress
        self._last_progress = 0.0
        # Keys are cut out as the output streams: nothing kept, shown or spilled holds one.
        self._redact = redact.stream() if redact else None
        super().__init__(fd)

    def feed(self, data: bytes) -> None:
        if self._redact is not None:
            data = self._redact.feed(data)
        self._output.feed(data)
        now = time.monotonic()
        if now - self._last_progress >= PROGRESS_INTERVAL:
            self._last_progress = now
            # A broken progress display must not cost the command its output.
            with contextlib.suppress(Exception):
                self._progress(self._output.last_line())

    def finish(self) -> None:
        if self._redact is not None:
            self._output.feed(self._redact.flush())
        self._output.finish()


def _exit_text(code: int, body: str) -> str:
    if code == 0:
        return body or "(no output, exit code 0)"
    status = f"(killed by signal {-code})" if code < 0 else f"(exit code {code})"
    return f"{body}\n\n{status}" if body else status


async def _spawn(
    command: str, cwd: str, out: int, env: dict[str, str] | None, sandbox: SandboxPolicy | None = None
) -> Child:
    """Start the line in its own session, inside `sandbox` when there is one (its
    private temporary folder as TMPDIR)."""
    from uji.sandbox.spawn import start
    from uji.tools.shell import shell_path

    env = {**(os.environ if env is None else env), "GIT_TERMINAL_PROMPT": "0"}
    if sandbox is not None:
        env.update(sandbox.temp_vars())
    return await start(
        [shell_path(), "-c", command],
        cwd=cwd,
        env=env,
        stdout=out,
        stderr=out,  # the same pipe: lines arrive merged, in order
        policy=sandbox,
    )


def _unread(fd: int, redact: Redactor | None) -> str | None:
    """What is in the pipe now (its writer still open: no waiting for more)."""
    output = Output()
    cut = redact.stream() if redact else None
    os.set_blocking(fd, False)
    with contextlib.suppress(OSError):  # BlockingIOError: nothing more for now
        while chunk := os.read(fd, READ_CHUNK):
            output.feed(cut.feed(chunk) if cut else chunk)
    if cut is not None:
        output.feed(cut.flush())
    output.finish()
    return output.render() or None


async def execute(command: str, timeout: int, ctx: ToolContext) -> ToolResult:
    read_fd, write_fd = os.pipe()
    try:
        proc = await _spawn(command, ctx.cwd, write_fd, ctx.env, ctx.os_sandbox)
    except OSError as e:
        os.close(read_fd)
        return error(f"could not start the command: {e.strerror or e}")
    except asyncio.CancelledError:
        # An interrupt while asyncio was still starting it (a loaded machine): the command
        # may have printed already, and asyncio killed it on the way out.
        ctx.partial = _unread(read_fd, ctx.redact)
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)  # the child holds its own copy; ours would keep EOF from coming
    output = Output()
    pipe = _Pipe(read_fd, output, ctx.progress, ctx.redact)
    try:
        try:
            async with asyncio.timeout(timeout):  # not wait_for: it can swallow an interrupt
                code = await proc.wait()
        except TimeoutError:
            kill_group(proc.pid)
            await proc.wait()
            await pipe.drain(EXIT_GRACE)
            pipe.close()
            body = output.render()
            head = f"error: command timed out after {timeout}s"
            return ToolResult(text=f"{head}\n{body}" if body else head, summary=f"Timed out after {timeout}s")
        except asyncio.CancelledError:
            # An interrupt: nothing the command started may outlive it; what it printed
            # until then goes with the interrupt (the loop answers the call with it).
            kill_group(proc.pid)
            with contextlib.suppress(asyncio.CancelledError):
                await proc.wait()
                await pipe.drain(EXIT_GRACE)
            pipe.close()
            ctx.partial = output.render() or None
            raise
        await pipe.drain(EXIT_GRACE)
        pipe.close()
        text = _exit_text(code, output.render())
        blocked = None
        if code != 0 and ctx.os_sandbox is not None:  # (its patterns cost a start-up to compile)
            from uji.sandbox.denial import note

            blocked = note(ctx.os_sandbox, code, text, ctx.cwd)
        if blocked and ctx.outside_sandbox is not None and await ctx.outside_sandbox(blocked):
            ctx.os_sandbox, ctx.outside_sandbox = None, None
            again = await execute(command, timeout, ctx)
            again.text = f"[the sandbox stopped this command; the user let it run again outside the sandbox]\n{again.text}"
            return again
        return ToolResult(text=f"{text}\n[{blocked}]" if blocked else text, summary=f"Exit code {code}")
    finally:
        pipe.close()


async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    command = required_str(args, "command")
    if isinstance(command, ToolResult):
        return command
    return await execute(command, int_arg(args, "timeout", DEFAULT_TIMEOUT), ctx)


class RunCommand(BuiltinTool):
    SPEC = SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await run(args, ctx)
