"""uji.proc.spawn: a program started with pipes, read line by line from Lua.

Each process leads its own process group without a terminal (a password prompt fails at
once instead of waiting), so `kill` reaches everything it started; uji kills what is
still running when Lua collects its handle (nothing references it any more) or when the
Lua side closes. `stdio = "inherit"` gives it uji's own
terminal instead, and `kill` then reaches the process alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import TYPE_CHECKING, Any

from uji.lua.api.fs import later
from uji.lua.runtime import Api, ApiError, Pending
from uji.procs import kill_group

if TYPE_CHECKING:
    from uji.lua.host import LuaHost

Line = tuple[bytes, str]


class Proc:
    """A started process: its lines in arrival order with their stream, until both end."""

    def __init__(self, proc: asyncio.subprocess.Process, group: bool) -> None:
        self.proc = proc
        self.group = group
        self.lines: asyncio.Queue[Line | None] = asyncio.Queue()
        self.open = 0
        self.readers: list[asyncio.Task[None]] = []
        for stream, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            if stream is not None:
                self.open += 1
                self.readers.append(asyncio.get_running_loop().create_task(self._read(stream, name)))
        if not self.open:
            self.lines.put_nowait(None)

    async def _read(self, stream: asyncio.StreamReader, name: str) -> None:
        try:
            while True:
                try:
                    line = await stream.readuntil(b"\n")
                except asyncio.IncompleteReadError as e:
                    line = e.partial
                except asyncio.LimitOverrunError as e:
                    line = await stream.readexactly(e.consumed)
                if not line:
                    break
                self.lines.put_nowait((line.rstrip(b"\n").removesuffix(b"\r"), name))
        finally:
            self.open -= 1
            if self.open == 0:
                self.lines.put_nowait(None)

    async def next_line(self) -> Line | None:
        item = await self.lines.get()
        if item is None:
            self.lines.put_nowait(None)  # every later read ends too
        return item

    def kill(self) -> None:
        if self.proc.returncode is not None:
            return
        if self.group:
            kill_group(self.proc.pid)
        else:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()


def install(host: LuaHost) -> Api:
    living: set[Proc] = set()

    def kill_all() -> None:
        for p in list(living):
            p.kill()

    host.on_close.append(kill_all)

    def lua(value: Any) -> Any:
        return host.lua.convert.to_lua(value, json_null=False)

    def proc_spawn(argv: Any, cwd: str | None, env: Any, inherit: bool) -> Pending:
        args = [str(a) for a in host.lua.convert.to_python(argv)]
        extra = {str(k): str(v) for k, v in (host.lua.convert.to_python(env) or {}).items()}

        async def start() -> Proc:
            pipe = None if inherit else asyncio.subprocess.PIPE
            try:
                proc = await asyncio.create_subprocess_exec(
                    *args,
                    cwd=cwd,
                    env={**os.environ, **extra} if extra else None,
                    stdin=pipe,
                    stdout=pipe,
                    stderr=pipe,
                    start_new_session=not inherit,
                )
            except OSError as e:
                raise ApiError(f"{args[0]}: {e.strerror or e}") from None
            p = Proc(proc, group=not inherit)
            living.add(p)
            return p

        return later(start)

    def proc_pid(p: Proc) -> int:
        return p.proc.pid

    def proc_line(p: Proc) -> Pending:
        async def line() -> Any:
            item = await p.next_line()
            return None if item is None else lua(list(item))

        return later(line)

    def proc_write(p: Proc, hex_data: str) -> Pending:
        async def write() -> bool:
            if p.proc.stdin is None or p.proc.stdin.is_closing():
                raise ApiError("the process's input is closed")
            p.proc.stdin.write(bytes.fromhex(hex_data))
            try:
                await p.proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError):
                raise ApiError("the process has closed its input") from None
            return True

        return later(write)

    def proc_close(p: Proc) -> None:
        if p.proc.stdin is not None:
            p.proc.stdin.close()

    def proc_kill(p: Proc) -> None:
        p.kill()

    def proc_release(p: Proc) -> None:
        # Lua collected the handle (its finaliser): nothing can read or wait for it now.
        p.kill()
        living.discard(p)

    def proc_wait(p: Proc) -> Pending:
        async def wait() -> Any:
            code = await p.proc.wait()
            living.discard(p)
            signum = -code if code < 0 else None
            return lua(
                {
                    "code": code if code >= 0 else 128 - code,
                    "signal": signal.Signals(signum).name if signum else None,
                    "success": code == 0,
                }
            )

        return later(wait)

    return {
        "proc_spawn": proc_spawn,
        "proc_pid": proc_pid,
        "proc_line": proc_line,
        "proc_write": proc_write,
        "proc_close": proc_close,
        "proc_kill": proc_kill,
        "proc_release": proc_release,
        "proc_wait": proc_wait,
    }
