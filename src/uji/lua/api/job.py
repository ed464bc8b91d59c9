"""uji.job.start: background processes for plugins.

A job runs in its own session (so `stop()` and a timeout kill its whole process group),
with stdin a pipe the plugin writes with `send`/`close`. Its output is split into lines
and handed to `on_stdout`/`on_stderr`; `on_exit(code[, "timeout"|"stopped"])` comes last.

The callbacks of one job run one after another as Lua tasks, in the order the lines
arrived: a callback may wait (read a file, make a request) without a later line or the
exit overtaking it. A callback that raises becomes a notice; the next one still runs.
Jobs still running when uji closes (or the Lua runtime is closed) are killed.

With `uji = true`, `cmd` is the argument list of a uji command (`{"run", "--json", ...}`):
the job runs this same uji (the same Python, config dir, data dir and database), and it
keeps the provider key variables that other commands lose (it is uji, it needs them).
Such a child is told to the reaper (uji.reaper), so it does not outlive a uji killed -9.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from uji.lua.api.fs import Anchor
from uji.lua.runtime import Api, LuaError
from uji.procs import PipeReader, kill_group
from uji.sandbox import FLOOR_ENV
from uji.sandbox import current as current_sandbox
from uji.tools.confine import expand_user

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.sandbox import SandboxPolicy
    from uji.sandbox.spawn import Child
    from uji.tools.gate import Gate

SHELL = "/bin/sh" if os.path.exists("/bin/sh") else "sh"
# A line longer than this is handed over in pieces, so a stream without newlines cannot
# grow a buffer without bound.
MAX_LINE = 1024 * 1024
# After the process exits, children it left behind may hold the pipes open forever: read
# what is already on its way for this long, then report the exit.
EXIT_GRACE = 0.2
SPAWN_FAILED = -1
# How long uji's close waits for a job it interrupted (job.interrupt()) to end by itself.
INTERRUPT_GRACE = 3.0


def install(host: LuaHost, gate: Gate) -> Api:
    live: set[Job] = set()
    keep = Anchor()

    def stop_all() -> None:
        for job in list(live):
            job.kill_quietly()

    host.on_close.append(stop_all)

    async def let_interrupted_end() -> None:
        """Jobs interrupted just before uji closes get a moment to end in their own way
        (a child uji stopping its commands) before close kills what is left."""
        waits = [job.ended.wait() for job in live if job.interrupted]
        if waits:
            await asyncio.wait([asyncio.ensure_future(w) for w in waits], timeout=INTERRUPT_GRACE)

    host.on_settle.append(let_interrupted_end)

    def job_start(
        cmd: Any,
        cwd: str | None,
        timeout: float | None,
        on_stdout: Any,
        on_stderr: Any,
        on_exit: Any,
        uji: bool = False,
    ) -> Job:
        argv = [SHELL, "-c", cmd] if isinstance(cmd, str) else list(host.lua.convert.to_python(cmd))
        env = gate.env
        # A process started while a tool call runs is the model's: it runs in that call's
        # sandbox. A child uji (a subagent) runs outside it, applying its own, never
        # laxer than this one's (UJI_SANDBOX_PARENT).
        sandbox = None if uji else current_sandbox.get()
        if uji:
            argv = [*uji_command(host), *argv]
            floor = gate.sandbox_floor_env()

            def env() -> dict[str, str]:
                return {**uji_env(), FLOOR_ENV: floor}

        where = os.path.join(gate.cwd, expand_user(cwd)) if cwd else gate.cwd
        calls = Callbacks(host, keep(on_stdout), keep(on_stderr), keep(on_exit))
        job = Job(host, env, argv, where, timeout, calls, reap=uji, sandbox=sandbox)
        live.add(job)
        job.start(lambda: live.discard(job))
        return job

    def job_send(job: Job, text: str) -> bool:
        return job.send(text.encode() + b"\n")

    def job_close(job: Job) -> bool:
        return job.close_stdin()

    def job_stop(job: Job) -> bool:
        return job.stop()

    def job_interrupt(job: Job) -> bool:
        return job.interrupt()

    return {
        "job_bind": keep.bind,
        "job_start": job_start,
        "job_send": job_send,
        "job_close": job_close,
        "job_stop": job_stop,
        "job_interrupt": job_interrupt,
    }


def uji_command(host: LuaHost) -> list[str]:
    """The command line that runs this uji on the same config, data and database."""
    paths = host.paths
    return [
        sys.executable,
        "-m",
        "uji",
        "--config-dir",
        paths.config,
        "--data-dir",
        paths.data,
        "--db",
        paths.db,
    ]


def uji_env() -> dict[str, str]:
    """uji's own environment, provider keys included, for a child uji."""
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


class Callbacks:
    """One job's callbacks, run in order by a single consumer task."""

    def __init__(self, host: LuaHost, on_stdout: Any, on_stderr: Any, on_exit: Any) -> None:
        self._host = host
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        self.on_exit = on_exit
        self._queue: asyncio.Queue[tuple[Any, tuple[Any, ...]] | None] = asyncio.Queue()
        self._task = _track(host, self._consume())

    def push(self, fn: Any, *args: Any) -> None:
        if fn is not None:
            self._queue.put_nowait((fn, args))

    def finish(self) -> None:
        """No more callbacks: the consumer ends once the queue is empty."""
        self._queue.put_nowait(None)

    def drop(self) -> None:
        """Run nothing more (uji is closing)."""
        self._task.cancel()

    async def _consume(self) -> None:
        rt = self._host.lua
        while (item := await self._queue.get()) is not None:
            fn, args = item
            try:
                await rt.call(fn, *args)
            except LuaError as e:
                self._host.notice(str(e))


class Job:
    def __init__(
        self,
        host: LuaHost,
        env: Callable[[], dict[str, str]],
        argv: list[str],
        cwd: str,
        timeout: float | None,
        calls: Callbacks,
        reap: bool = False,
        sandbox: SandboxPolicy | None = None,
    ) -> None:
        self._host = host
        self._sandbox = sandbox
        self._reap = reap  # a child uji: the reaper kills it even if this uji is killed -9
        self._env = env  # the environment for the command (provider keys removed)
        self._argv = argv
        self._cwd = cwd
        self._timeout = timeout
        self._calls = calls
        self._proc: Child | None = None
        self._reason: Literal["timeout", "stopped"] | None = None  # once decided
        self._input: list[bytes] = []  # sent before the process was up
        self._stdin_closed = False
        self._ended = False
        self.ended = asyncio.Event()  # set once the process has ended and on_exit is queued
        self.interrupted = False  # interrupt() was called

    # The plugin's handle ---------------------------------------------------------

    def start(self, on_end: Callable[[], None]) -> None:
        task = _track(self._host, self._run())
        task.add_done_callback(lambda _t: on_end())

    def send(self, data: bytes) -> bool:
        """Queue `data` for stdin; False once stdin is closed or the job has ended."""
        if self._stdin_closed or self._ended:
            return False
        if self._proc is None:
            self._input.append(data)
            return True
        stdin = self._proc.stdin
        if stdin is None or stdin.is_closing():
            return False
        stdin.write(data)
        return True

    def close_stdin(self) -> bool:
        if self._stdin_closed:
            return False
        self._stdin_closed = True
        if self._proc is not None and self._proc.stdin is not None:
            self._proc.stdin.close()
        return True

    def stop(self) -> bool:
        """Kill the process group; on_exit then says "stopped". False if already ended."""
        if self._ended or self._reason is not None:
            return False
        self._reason = "stopped"
        if self._proc is not None:
            kill_group(self._proc.pid)
        return True  # not spawned yet: _run kills it as soon as it is

    def interrupt(self) -> bool:
        """SIGINT to the process group, as Ctrl+C in a terminal: the program may end in its
        own way (a child uji stops its turn and its commands). False if not running."""
        if self._ended or self._proc is None:
            return False
        self.interrupted = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGINT)
        return True

    def kill_quietly(self) -> None:
        """At close: kill now, call nothing back."""
        self._calls.drop()
        self._reason = self._reason or "stopped"
        if self._proc is not None and not self._ended:
            kill_group(self._proc.pid)

    # The process -----------------------------------------------------------------

    async def _run(self) -> None:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            self._proc = await self._spawn(out_w, err_w)
        except OSError as e:
            for fd in (out_r, err_r):
                os.close(fd)
            self._fail_spawn(e)
            return
        finally:
            os.close(out_w)  # the child has its own copies; ours would keep EOF away
            os.close(err_w)
        if self._reap:
            from uji.tools.builtin.process import reaper

            reaper().watch(self._proc.pid)
        pipes = [
            _Lines(out_r, lambda line: self._calls.push(self._calls.on_stdout, line)),
            _Lines(err_r, lambda line: self._calls.push(self._calls.on_stderr, line)),
        ]
        try:
            code = await self._wait(self._proc, pipes)
        except asyncio.CancelledError:  # the runtime is closing: nothing may outlive it
            kill_group(self._proc.pid)
            raise
        finally:
            self._ended = True
            if self._reap:
                from uji.tools.builtin.process import reaper

                reaper().forget(self._proc.pid)
            for pipe in pipes:
                pipe.close()
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        self._calls.push(self._calls.on_exit, code, *([self._reason] if self._reason else []))
        self._calls.finish()
        self.ended.set()

    async def _spawn(self, out_w: int, err_w: int) -> Child:
        from uji.sandbox.spawn import start

        env = self._env()  # without the provider keys, like run_command
        if self._sandbox is not None:
            env.update(self._sandbox.temp_vars())
        proc = await start(
            self._argv,
            stdin=subprocess.PIPE,
            stdout=out_w,
            stderr=err_w,
            cwd=self._cwd,
            env=env,
            policy=self._sandbox,
        )
        if self._reason == "stopped":  # stop() came before the process was up
            kill_group(proc.pid)
        stdin = proc.stdin
        if stdin is not None:
            for data in self._input:
                stdin.write(data)
            self._input.clear()
            if self._stdin_closed:
                stdin.close()
        return proc

    def _fail_spawn(self, e: OSError) -> None:
        self._ended = True
        what = e.filename if e.filename is not None else self._argv[0]
        self._calls.push(self._calls.on_stderr, f"spawn: {what}: {e.strerror or e}")
        self._calls.push(self._calls.on_exit, SPAWN_FAILED)
        self._calls.finish()

    async def _wait(self, proc: Child, pipes: list[_Lines]) -> int:
        try:
            async with asyncio.timeout(self._timeout):  # not wait_for: it can swallow a cancel
                code = await proc.wait()
        except TimeoutError:
            self._reason = self._reason or "timeout"
            kill_group(proc.pid)
            code = await proc.wait()
        await _drain(pipes)
        return _exit_code(code)


async def _drain(pipes: list[_Lines]) -> None:
    """Wait briefly for the end of output; children holding the pipes are not waited for."""
    waits = [asyncio.ensure_future(p.eof.wait()) for p in pipes]
    try:
        await asyncio.wait(waits, timeout=EXIT_GRACE)
    finally:
        for w in waits:
            w.cancel()


class _Lines(PipeReader):
    """A pipe split into lines (bytes, without the ending)."""

    def __init__(self, fd: int, emit: Callable[[bytes], None]) -> None:
        self._emit = emit
        self._buffer = bytearray()
        super().__init__(fd)

    def feed(self, data: bytes) -> None:
        self._buffer += data
        buffer = self._buffer
        start = 0
        while (nl := buffer.find(b"\n", start)) != -1:
            self._emit(_strip_cr(bytes(buffer[start:nl])))
            start = nl + 1
        del buffer[:start]
        while len(buffer) > MAX_LINE:
            self._emit(bytes(buffer[:MAX_LINE]))
            del buffer[:MAX_LINE]

    def at_eof(self) -> None:
        self.finish()

    def finish(self) -> None:
        if self._buffer:  # a last line without a newline
            self._emit(_strip_cr(bytes(self._buffer)))
            self._buffer.clear()


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line


def _exit_code(code: int) -> int:
    """A death by signal N is reported as 128 + N, the way a shell reports it."""
    return 128 - code if code < 0 else code


def _track(host: LuaHost, coro: Any) -> asyncio.Task[Any]:
    """A task of the Lua runtime: closing the runtime cancels it."""
    tasks = host.lua.tasks
    task = asyncio.get_running_loop().create_task(coro)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task
