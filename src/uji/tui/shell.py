"""`!cmd` lines: run in `$SHELL -c` in the session directory, shown in the transcript
and saved as a `shell` message, never sent to the model (reference §1)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable

MAX_OUTPUT = 1_000_000  # characters kept (the tail): the transcript shows a preview anyway
INTERRUPTED_CODE = 130


class ShellRun:
    def __init__(self, command: str, cwd: str, on_output: Callable[[str], None]) -> None:
        """`on_output` gets each new piece of output as it comes."""
        self.command = command
        self.cwd = cwd
        self._on_output = on_output
        self._proc: asyncio.subprocess.Process | None = None
        self.interrupted = False

    async def run(self) -> tuple[str, int]:
        shell = os.environ.get("SHELL") or "/bin/sh"
        try:
            proc = await asyncio.create_subprocess_exec(
                shell,
                "-c",
                self.command,
                cwd=self.cwd,
                stdin=asyncio.subprocess.DEVNULL,  # nothing can type into it
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,  # its own group, so Esc stops what it started too
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )
        except OSError as e:
            return f"could not start {shell}: {e.strerror or e}", 127
        self._proc = proc
        out: list[str] = []
        size = 0
        assert proc.stdout is not None
        try:
            while True:
                chunk = await proc.stdout.read(65536)
                if not chunk:
                    break
                text = chunk.decode("utf-8", "replace")
                out.append(text)
                size += len(text)
                if size > MAX_OUTPUT * 2:  # keep memory bounded on endless output
                    joined = "".join(out)[-MAX_OUTPUT:]
                    out, size = [joined], len(joined)
                self._on_output(text)
            code = await proc.wait()
        except asyncio.CancelledError:
            self.kill()
            with contextlib.suppress(Exception):
                await proc.wait()
            raise
        output = "".join(out)[-MAX_OUTPUT:]
        if self.interrupted:
            return (output.rstrip("\n") + "\n… interrupted").lstrip("\n"), INTERRUPTED_CODE
        return output, code if code >= 0 else 128 - code

    def kill(self) -> None:
        self.interrupted = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
