"""Starting a process inside the sandbox, safely from a process that has threads.

Landlock binds a *thread* and what it starts afterwards. So the sandbox has threads of
its own (`_Launcher`, one per policy in force): each builds the ruleset, restricts itself,
then starts the commands given to it with `subprocess.Popen` (which forks with vfork and
runs no Python in the child: nothing can deadlock, unlike `preexec_fn`). The event loop's
own thread is never restricted, and no pool thread is (it would stay restricted for
whatever it runs next).

The child's exit is watched through a pidfd on the event loop (a thread where the kernel
has none).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Sequence
from typing import IO

from uji.sandbox.policy import SandboxPolicy


class SandboxUnavailable(OSError):
    """The kernel cannot sandbox this command; the text says why."""


class Child:
    """A started process: `pid`, `returncode`, `wait()`, and `stdin` when asked for."""

    def __init__(self, popen: subprocess.Popen[bytes], stdin: asyncio.StreamWriter | None) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin = stdin
        self._exit: asyncio.Future[int] | None = None

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    async def wait(self) -> int:
        if self._popen.returncode is not None:
            return self._popen.returncode
        if self._exit is None:
            self._exit = self._watch()
        return await asyncio.shield(self._exit)

    def _watch(self) -> asyncio.Future[int]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()

        def ended() -> None:
            code = self._popen.poll()
            if code is None:
                return  # woken early; the pidfd stays readable until it is reaped
            loop.remove_reader(pidfd)
            os.close(pidfd)
            if not future.done():
                future.set_result(code)

        try:
            pidfd = os.pidfd_open(self.pid)
        except (OSError, AttributeError):
            return asyncio.ensure_future(asyncio.to_thread(self._popen.wait))
        loop.add_reader(pidfd, ended)
        ended()  # it may have ended before the reader was there
        return future


async def start(
    argv: Sequence[str],
    *,
    cwd: str,
    env: dict[str, str],
    stdout: int | None,
    stderr: int | None,
    stdin: int = subprocess.DEVNULL,
    policy: SandboxPolicy | None,
) -> Child:
    """Start `argv` in its own session (so its group can be killed whole), inside
    `policy`'s sandbox (None: outside any). `stdin` is DEVNULL or PIPE. Raises OSError
    when it cannot start, SandboxUnavailable when the sandbox cannot be made."""
    stdin_r: int | None = None
    stdin_w: int | None = None
    if stdin == subprocess.PIPE:
        stdin_r, stdin_w = os.pipe()
    try:

        def launch() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=env,
                stdin=stdin_r if stdin_r is not None else subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                start_new_session=True,
            )

        if policy is None or policy.mode == "off":
            popen = launch()
        else:
            popen = await _start_restricted(launch, policy)
    except BaseException:
        if stdin_w is not None:
            os.close(stdin_w)
        raise
    finally:
        if stdin_r is not None:
            os.close(stdin_r)
    writer = None
    if stdin_w is not None:
        writer = await _writer(stdin_w)
    return Child(popen, writer)


async def _writer(fd: int) -> asyncio.StreamWriter:
    loop = asyncio.get_running_loop()
    pipe: IO[bytes] = os.fdopen(fd, "wb", buffering=0)
    protocol = asyncio.streams.FlowControlMixin()
    transport, _ = await loop.connect_write_pipe(lambda: protocol, pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)


class _Launcher:
    """A thread bound to one policy's sandbox, starting that policy's commands.

    Every command it starts shares its Landlock domain, so a command may signal the
    processes earlier ones left running (`kill` of a server it started), never uji or
    anything else outside. A new launcher is made when the policy changes, or when a
    folder listed to build the rules has changed since (its new entries would not be
    covered); the old one's thread then ends."""

    def __init__(self, policy: SandboxPolicy, abi: int) -> None:
        self.policy = policy
        self._abi = abi
        self._jobs: queue.SimpleQueue[tuple[Callable[[], None], Callable[[BaseException], None]] | None] = (
            queue.SimpleQueue()
        )
        self._listed: list[str] = []
        self.stamp: tuple[tuple[str, int], ...] = ()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        threading.Thread(target=self._serve, name="uji-sandbox", daemon=True).start()

    def fresh(self) -> bool:
        return self._error is None and self.stamp == _stamp(self._listed)

    def _serve(self) -> None:
        from uji.sandbox import landlock
        from uji.sandbox.policy import rules

        try:
            ruleset = rules(self.policy, self._listed)
            self.stamp = _stamp(self._listed)
            landlock.restrict_thread(ruleset, abi=self._abi, block_network=not self.policy.network)
        except landlock.LandlockError as e:
            self._error = SandboxUnavailable(f"the kernel refused the sandbox: {e.strerror}")
        except BaseException as e:
            self._error = e
        finally:
            self._ready.set()
        while (job := self._jobs.get()) is not None:
            run, fail = job
            if self._error is not None:
                fail(self._error)
                continue
            run()

    def submit(self, run: Callable[[], None], fail: Callable[[BaseException], None]) -> None:
        self._jobs.put((run, fail))

    def close(self) -> None:
        self._jobs.put(None)


def _stamp(folders: list[str]) -> tuple[tuple[str, int], ...]:
    out = []
    for folder in folders:
        try:
            out.append((folder, os.stat(folder).st_mtime_ns))
        except OSError:
            out.append((folder, -1))
    return tuple(out)


class _Base:
    """The thread every launcher is started from. On ABI 6+ it is bound to signalling
    only processes inside its own domain (no file rule), and the launchers' domains nest
    in it: a command may signal what any earlier command left running, whichever launcher
    started it, and nothing outside (uji itself, the user's other processes)."""

    def __init__(self, abi: int) -> None:
        self._abi = abi
        self._requests: queue.SimpleQueue[tuple[SandboxPolicy, queue.SimpleQueue[_Launcher]]] = (
            queue.SimpleQueue()
        )
        threading.Thread(target=self._serve, name="uji-sandbox-base", daemon=True).start()

    def _serve(self) -> None:
        from uji.sandbox import landlock

        if self._abi >= 6:
            with contextlib.suppress(landlock.LandlockError):  # then no signal scope at all
                landlock.restrict_signals()
        while True:
            policy, reply = self._requests.get()
            reply.put(_Launcher(policy, self._abi))  # its thread starts from this one

    def launcher(self, policy: SandboxPolicy) -> _Launcher:
        reply: queue.SimpleQueue[_Launcher] = queue.SimpleQueue()
        self._requests.put((policy, reply))
        return reply.get()


_base: _Base | None = None
_launchers: dict[SandboxPolicy, _Launcher] = {}


def _launcher(policy: SandboxPolicy, abi: int) -> _Launcher:
    global _base
    current = _launchers.get(policy)
    if current is not None and current._ready.is_set() and not current.fresh():
        current.close()
        current = None
    if current is None:
        if _base is None:
            _base = _Base(abi)
        current = _launchers[policy] = _base.launcher(policy)
    return current


async def _start_restricted(
    launch: Callable[[], subprocess.Popen[bytes]], policy: SandboxPolicy
) -> subprocess.Popen[bytes]:
    from uji.sandbox import landlock

    why = landlock.missing(policy.network)
    if why is not None:
        raise SandboxUnavailable(why)
    abi = landlock.abi_version()
    loop = asyncio.get_running_loop()
    done: asyncio.Future[subprocess.Popen[bytes]] = loop.create_future()

    def settle(popen: subprocess.Popen[bytes] | None, error: BaseException | None) -> None:
        if done.cancelled():  # the caller went away: nothing may outlive it
            if popen is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(popen.pid, 9)
                popen.wait()
            return
        if error is not None:
            done.set_exception(error)
        else:
            assert popen is not None
            done.set_result(popen)

    def run() -> None:  # on the launcher's thread, inside the sandbox
        try:
            popen = launch()
        except BaseException as e:
            loop.call_soon_threadsafe(settle, None, e)
        else:
            loop.call_soon_threadsafe(settle, popen, None)

    def fail(error: BaseException) -> None:
        loop.call_soon_threadsafe(settle, None, error)

    _launcher(policy, abi).submit(run, fail)
    return await done
