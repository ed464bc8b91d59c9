"""Real `uji` processes without paying Python's start-up in each: a fork server.

Most tests run `python -m uji ...` as a subprocess, and most of each run's time is the
interpreter starting and importing uji (about 0.1 s, more on a loaded machine). The
zygote is a Python process, one per pytest run, that imported uji once and then forks a
child per run: pytest's controlling process starts it, and each test worker connects to
it (one zygote loads uji once, where one per worker loaded it in each). The child is a
real, separate process: its own pid, stdin/stdout/stderr (pipes the test made, passed over
a Unix socket), environment, working directory and exit status; it runs uji's `__main__`
as `python -m uji` would and exits the normal way.

Each run is a child of the zygote, which has no thread: it waits for its children's exits
(a pidfd each, beside its sockets) and reports each one's status (as `subprocess` would
give it) on a socket of the run's own. (Each run once forked twice, zygote → waiter →
uji: a fork and an exit of the zygote's ~85 MB cost ~10 ms of the kernel's time, per
run.) A run whose environment would change how Python itself starts (any `PYTHON*`
variable but the ones the zygote started with), or that is measured by coverage, goes
through `subprocess` instead, as does everything when the zygote can't start.

Most runs are forked by a lean zygote (`_serve_lean`), forked from the first before it
loaded the ACP and MCP SDKs (`SDK_SIDE`, ~40 MB of its ~60): a fork and an exit cost in
proportion to what the zygote has in memory. The first hands it each run that will not use
them (`_needs_sdks`: no `uji acp`, no "mcp" in the config or a project's .mcp.json); the
others it forks itself.

The zygote also starts the MCP test server (tests/mcp_server.py), which costs more than a
second of CPU at each start for the SDK's types: started as `python tests/mcp_server.py
ARGS` (by uji, or by a test), it asks the zygote of the pytest it runs under (found
through its parent processes) to fork the server with its stdio, arguments, working
directory and environment, then exits as the server exits, passing on the signals it gets
(see `launch`). Where there is no such zygote (a tmux session's uji, `./test --cov`) it
serves by itself.
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parent.parent
# What every run shares with the zygote: the variables Python reads when it starts (the
# test process's own, and the one `Home.env` adds).
START_ENV = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")} | {"PYTHONUNBUFFERED": "1"}


# The server ------------------------------------------------------------------------------


# What runs import after they start (lazily, inside functions) and the zygote loads first, so
# no run pays for it: the HTTP stack, SQLite, Lua, the shell parser, the MCP SDK's client.
# A name that is missing is skipped: the runs import it themselves, as without a zygote.
LAZY = (
    "anyio._backends._asyncio",
    "anyio.streams.tls",
    "argparse",
    "concurrent.futures.thread",
    "ctypes",
    "difflib",
    "encodings.ascii",
    "gettext",
    "h11",
    "lupa.luajit21",
    "shlex",
    "sqlite3",
    "tree_sitter",
    "tree_sitter_bash",
    "truststore",
)
# What the MCP test server imports before it serves (loaded for the servers the zygote starts).
SERVER_SIDE = ("mcp.server.mcpserver", "uvicorn")
# Where a zygote listens for test workers and MCP test servers: a socket named by the pid of
# the pytest process that started it.
LAUNCHES = Path(tempfile.gettempdir()) / "uji-test-mcp"
# A test worker's way to the zygote its pytest started (the path of its socket).
SHARED_ENV = "UJI_TEST_ZYGOTE"


def listening_at(pid: int) -> Path:
    return LAUNCHES / f"{pid}.sock"


def tui_listening_at(pid: int) -> Path:
    """Where the screen's zygote (see `_serve_screen`) of the pytest process `pid` listens."""
    return LAUNCHES / f"{pid}.tui.sock"


# The variable a terminal's `python tests/forked_uji.py` finds the screen's zygote by (a tmux
# session's processes are not under pytest's: the tmux server left it).
SCREEN_ENV = "UJI_TEST_SCREEN_ZYGOTE"


# Not loaded: the screen (no run through the zygote opens one), and tools for developers.
UNUSED = ("uji.tui", "uji.devtools", "uji.__main__")


# What only some runs use: the ACP and MCP SDKs (pydantic models, ~40 MB of the zygote's
# ~60) and the MCP test server's side. The lean zygote (`_serve_lean`) has not loaded them.
SDK_SIDE = ("uji.acp", "uji.mcp.client", "uji.mcp.oauth", "uji.mcp_cli", "anyio", *SERVER_SIDE)


def warm(lean: bool = False) -> None:
    """Import every module of uji but the unused ones, and `LAZY`; `lean`: not `SDK_SIDE`
    (`warm_sdks` imports it later)."""
    from uji.lua.runtime import load_lupa

    load_lupa()  # as uji loads it: with its C API visible to native modules
    _import([name for name in _warmed() if not (lean and name.startswith(SDK_SIDE))])
    _first_uses()


def warm_libraries() -> None:
    """The libraries only (`LAZY`, `SERVER_SIDE`, Textual): for tests/precompile.py. lupa as
    `warm` loads it, before `LAZY` names it."""
    from uji.lua.runtime import load_lupa

    load_lupa()
    _import([*LAZY, *SERVER_SIDE, "textual.app", "textual.widgets"])


def warm_sdks() -> None:
    """What `warm(lean=True)` left out: `SDK_SIDE`."""
    _import([name for name in _warmed() if name.startswith(SDK_SIDE)])


def _warmed() -> list[str]:
    return [name for name in _modules("uji") if not name.startswith(UNUSED)] + [*LAZY, *SERVER_SIDE]


def _first_uses() -> None:
    """What the libraries do once per process on first use, done here for every run: SQLite's
    set-up on the first connection (each run opens its session store), OpenSSL's look-up of a
    digest (checkpoints hash with SHA-1 and SHA-256). Nothing of a run's own: no file, no
    state a run could see. A run touches ~50 fewer pages (3,560 -> 3,512 faults)."""
    import hashlib
    import sqlite3

    sqlite3.connect(":memory:").close()
    hashlib.sha1(b"").digest()
    hashlib.sha256(b"").digest()


# What a screen in a terminal imports once it runs, beside `uji.tui`'s modules (Textual's
# terminal driver and its parts, what Markdown and code blocks draw with).
SCREEN_LAZY = (
    "pygments.styles",
    "rich.markdown",
    "rich.rule",
    "rich.syntax",
    "textual.drivers.linux_driver",
    "textual.layouts.factory",
    "textual.layouts.horizontal",
    "textual.layouts.stream",
    "textual.pilot",
    "textual.scrollbar",
    "tty",
)


def warm_screen() -> None:
    """Import the screen: every module of `uji.tui` (Textual with them), and `SCREEN_LAZY`."""
    _import([*_modules("uji.tui"), *SCREEN_LAZY])


def _modules(package: str) -> list[str]:
    """The names of every module of `package` (one of uji's), from its files."""
    import importlib

    top = Path(importlib.import_module(package).__file__ or "").parent
    return [
        ".".join((package, *path.relative_to(top).with_suffix("").parts)).removesuffix(".__init__")
        for path in sorted(top.rglob("*.py"))
    ]


def _import(names: list[str]) -> None:
    """Import each of `names`; one that is missing is skipped (its runs import what they can)."""
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _freeze() -> None:
    # What the zygote holds is shared with every child: the children's collector leaves it be
    # instead of scanning (and so copying) it on each collection.
    import gc

    gc.collect()
    gc.freeze()


def serve(control: socket.socket) -> None:
    """Fork runs for the process that started this one (on `control`, which ends the zygote
    when it closes) and for its test workers (each connected on the listener, see
    `Zygote.connect`), and MCP test servers for every process under it."""
    tests = os.getppid()
    listener = _listen(listening_at(tests))  # before loading: one that asks meanwhile waits in its backlog
    warm(lean=True)
    _freeze()
    lean, lean_pid = _fork_lean_zygote([control, listener])
    warm_sdks()
    _freeze()
    alive = _fork_screen_zygote(tests, [control, listener, lean])
    try:
        control.sendall(b"ready\n")
    except OSError:
        return _unlisten(listener)  # the tests went away before they needed a run
    controls = {control}  # where runs are asked for: the starting process's, each worker's
    # The runs in progress, by a descriptor of each child that becomes readable when it
    # exits (pidfd): its pid and the socket its exit status goes to (None for an MCP
    # server's waiter, only reaped).
    children: dict[int, tuple[int, socket.socket | None]] = {}
    with selectors.DefaultSelector() as sel:
        sel.register(control, selectors.EVENT_READ)
        if listener is not None:
            sel.register(listener, selectors.EVENT_READ)
        for key in _requests(sel, children):
            launch = reply = None
            if key.fileobj in controls:
                asker = key.fileobj
                assert isinstance(asker, socket.socket)
                header, fds = _receive(asker)
                if header is None:
                    if asker is control:
                        if alive is not None:
                            os.close(alive)  # the screen's zygote ends with this one
                        if lean is not None:  # and the lean one, its runs' time counted
                            lean.close()
                            os.waitpid(lean_pid, 0)
                        return _unlisten(listener)  # the tests are over
                    sel.unregister(asker)  # a worker is done
                    controls.discard(asker)
                    asker.close()
                    continue
                reply = socket.socket(fileno=fds.pop())
                if lean is not None and _handed_over(lean, header, fds, reply):
                    continue
            else:
                assert listener is not None
                header, fds, launch = _accept(listener)
                if header is None:
                    continue
                if header.get("worker"):  # a test worker's channel for its runs
                    assert launch is not None
                    try:
                        launch.sendall(b"ready\n")
                    except OSError:
                        launch.close()
                        continue
                    controls.add(launch)
                    sel.register(launch, selectors.EVENT_READ)
                    continue
            pid = os.fork()
            if pid == 0:
                # Only this run's descriptors: a run's reply socket held by another
                # process would keep its test waiting for that process to end too.
                for sock in (listener, *controls, *(r for _, r in children.values())):
                    if sock is not None:
                        sock.close()
                for pidfd in children:
                    os.close(pidfd)
                if alive is not None:
                    os.close(alive)
                if lean is not None:
                    lean.close()
                if launch is not None:
                    _launch_waiter(header, fds, launch)  # never returns
                assert reply is not None
                reply.close()
                _child(header, *fds)  # never returns
            if launch is not None:
                launch.close()
            _started(pid, fds, reply, children, sel)


def _requests(
    sel: selectors.BaseSelector, children: dict[int, tuple[int, socket.socket | None]]
) -> Iterator[selectors.SelectorKey]:
    """The sockets that became readable, as they do; a child's exit (its pidfd) is dealt
    with here."""
    while True:
        for key, _ in sel.select():
            if isinstance(key.fileobj, int):
                _ended(key.fileobj, children, sel)
            else:
                yield key


def _started(
    pid: int,
    fds: list[int],
    reply: socket.socket | None,
    children: dict[int, tuple[int, socket.socket | None]],
    sel: selectors.BaseSelector,
) -> None:
    """A child was forked: its descriptors are its own now; its test learns its pid (when it
    has a reply socket), and its exit will be watched."""
    for fd in fds:
        os.close(fd)
    if reply is not None:
        try:
            reply.sendall(f"pid {pid}\n".encode())
        except OSError:
            pass
    pidfd = os.pidfd_open(pid)
    children[pidfd] = (pid, reply)
    sel.register(pidfd, selectors.EVENT_READ)


def _ended(
    pidfd: int, children: dict[int, tuple[int, socket.socket | None]], sel: selectors.BaseSelector
) -> None:
    """A child exited: reap it, and tell its test how it ended (as `subprocess` gives it)."""
    sel.unregister(pidfd)
    os.close(pidfd)
    pid, reply = children.pop(pidfd)
    _, status, usage = os.wait4(pid, 0)
    if reply is not None:
        _log_usage(usage)
        try:
            reply.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
        except OSError:
            pass
        reply.close()


# A measuring aid, for work on what a run costs (nothing reads it): with UJI_TEST_RUSAGE
# naming a file in the environment of the pytest that starts the zygote, each run appends
# one line to it, `user_seconds system_seconds minor_page_faults`, of the run's own process
# and the children it waited for (os.wait4). Compare medians of alternated runs.
RUSAGE_ENV = "UJI_TEST_RUSAGE"


def _log_usage(usage: resource.struct_rusage) -> None:
    where = os.environ.get(RUSAGE_ENV)
    if where:
        with open(where, "a") as log:
            log.write(f"{usage.ru_utime:.4f} {usage.ru_stime:.4f} {usage.ru_minflt}\n")


def _fork_lean_zygote(held: list[socket.socket | None]) -> tuple[socket.socket | None, int]:
    """Fork the lean zygote (`_serve_lean`) from this one, before it loads `SDK_SIDE`: the
    socket that hands it runs (closing it ends it; None when it could not start), its pid."""
    ours, theirs = socket.socketpair()
    try:
        pid = os.fork()
    except OSError:
        ours.close()
        theirs.close()
        return None, 0
    if pid == 0:
        ours.close()
        for sock in held:
            if sock is not None:
                sock.close()
        me = os.getpid()
        try:
            _serve_lean(theirs)
        finally:
            if os.getpid() == me:  # (a run it forked ends as its code says: SystemExit, ...)
                os._exit(0)
    theirs.close()
    return ours, pid


def _handed_over(lean: socket.socket, header: dict[str, Any], fds: list[int], reply: socket.socket) -> bool:
    """Hand a run that needs no SDK to the lean zygote, which forks it and reports to its
    test; False when it needs one, or when the lean zygote is gone (this one forks it)."""
    if _needs_sdks(header):
        return False
    try:
        socket.send_fds(lean, [json.dumps(header).encode()], [*fds, reply.fileno()])
    except OSError:
        return False
    for fd in fds:
        os.close(fd)
    reply.close()
    return True


def _needs_sdks(header: dict[str, Any]) -> bool:
    """Whether a run may load `SDK_SIDE`: `uji acp`, `uji mcp`, or a config or project that
    may set up an MCP server (its text says "mcp"). A guess either way only costs time: a
    lean run that needs an SDK imports it, as `python -m uji` would."""
    argv, env = header["argv"], header["env"]
    if any(word in ("acp", "mcp") or word.startswith("--config") for word in argv):
        return True
    config = env.get("UJI_CONFIG_DIR") or os.path.join(
        env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME", "/"), ".config"), "uji"
    )
    for folder, _, files in os.walk(config):
        for name in files:
            try:
                if b"mcp" in Path(folder, name).read_bytes().lower():
                    return True
            except OSError:
                return True
    cwd = Path(header["cwd"])
    return any((d / ".mcp.json").exists() for d in (cwd, *cwd.parents))


def _serve_lean(runs: socket.socket) -> None:
    """The lean zygote: it forks the runs the first one hands it (`_handed_over`), each a
    child of its own: every fork and exit of a zygote ~40 MB smaller costs ~1.5 ms less."""
    children: dict[int, tuple[int, socket.socket | None]] = {}
    with selectors.DefaultSelector() as sel:
        sel.register(runs, selectors.EVENT_READ)
        for _ in _requests(sel, children):
            header, fds = _receive(runs)
            if header is None:
                return  # the first zygote ended: the tests are over
            reply = socket.socket(fileno=fds.pop())
            pid = os.fork()
            if pid == 0:
                runs.close()
                for pidfd, (_, other) in children.items():
                    os.close(pidfd)
                    if other is not None:
                        other.close()
                reply.close()
                _child(header, *fds)  # never returns
            _started(pid, fds, reply, children, sel)


def _fork_screen_zygote(tests: int, held: list[socket.socket | None]) -> int | None:
    """Fork the screen's zygote (`_serve_screen`) from this one, uji loaded; it lives as long
    as the pipe whose writing end this returns stays open (this zygote's life)."""
    alive, keep = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(alive)
        os.close(keep)
        return None
    if pid == 0:
        os.close(keep)
        for sock in held:
            if sock is not None:
                sock.close()
        try:
            _serve_screen(tests, alive)
        finally:
            os._exit(0)
    os.close(alive)
    return keep


def _serve_screen(tests: int, alive: int) -> None:
    """The screen's zygote: it forks the `uji` of a test's terminal (tmux), asked as an MCP
    server is (`launch`, by `python tests/forked_uji.py ARGS` typed in the terminal). It
    loads the screen (Textual) on the first ask: a run of tests with no terminal pays
    nothing for it; each terminal's uji would pay it (~0.5 s of CPU) in its own fresh Python.
    A zygote apart, since what it loads would make every fork of the other one dearer."""
    listener = _listen(tui_listening_at(tests))
    if listener is None:
        return
    warmed = False
    waiters: dict[int, int] = {}  # a pidfd of each launch's waiter: its pid
    with selectors.DefaultSelector() as sel:
        sel.register(alive, selectors.EVENT_READ)
        sel.register(listener, selectors.EVENT_READ)
        while True:
            for key, _ in sel.select():
                if key.fileobj == alive:
                    return _unlisten(listener)  # the first zygote ended: the tests are over
                if key.fileobj in waiters:
                    assert isinstance(key.fileobj, int)
                    sel.unregister(key.fileobj)
                    os.close(key.fileobj)
                    os.waitpid(waiters.pop(key.fileobj), 0)
                    continue
                header, fds, launch = _accept(listener)
                if header is None or launch is None or header.get("worker"):
                    if launch is not None:
                        launch.close()
                    continue
                if not warmed:
                    warm_screen()
                    _freeze()
                    warmed = True
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    for fd in (alive, *waiters):
                        os.close(fd)
                    _launch_waiter(header, fds, launch)  # never returns
                for fd in fds:
                    os.close(fd)
                launch.close()
                pidfd = os.pidfd_open(pid)
                waiters[pidfd] = pid
                sel.register(pidfd, selectors.EVENT_READ)


def _listen(path: Path) -> socket.socket | None:
    """The socket that test workers and MCP test servers started under the tests' process ask
    a zygote on."""
    try:
        LAUNCHES.mkdir(exist_ok=True)
        path.unlink(missing_ok=True)  # a socket left by an earlier pytest with this pid
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(64)
    except OSError:
        return None  # the servers serve by themselves
    return listener


def _unlisten(listener: socket.socket | None) -> None:
    if listener is not None:
        Path(listener.getsockname()).unlink(missing_ok=True)
        listener.close()


def _accept(listener: socket.socket) -> tuple[dict[str, Any] | None, list[int], socket.socket | None]:
    """A server's request: what to run, its stdin, stdout and stderr, and the socket to answer on."""
    try:
        conn, _ = listener.accept()
        conn.settimeout(10)
        header, fds = _receive(conn)
    except OSError:
        return None, [], None
    if header is None or len(fds) != (0 if header.get("worker") else 3):
        for fd in fds:
            os.close(fd)
        conn.close()
        return None, [], None
    conn.settimeout(None)
    return header, fds, conn


def _receive(control: socket.socket) -> tuple[dict[str, Any] | None, list[int]]:
    try:
        data, fds, _flags, _addr = socket.recv_fds(control, 1 << 20, 4)
    except ConnectionResetError:  # gone without reading "ready": it ran nothing here
        return None, []
    if not data:
        return None, []
    return json.loads(data), list(fds)


def _child(header: dict[str, Any], stdin: int, stdout: int, stderr: int) -> NoReturn:
    _become(header, stdin, stdout, stderr)
    import runpy

    import uji

    # As `python -m uji ARGV` started in cwd: argv[0] the module's file, cwd first on the path.
    sys.argv = [os.path.join(os.path.dirname(uji.__file__), "__main__.py"), *header["argv"]]
    sys.path[0] = header["cwd"]
    runpy.run_module("uji", run_name="__main__", alter_sys=True)
    raise SystemExit(0)


def _become(header: dict[str, Any], stdin: int, stdout: int, stderr: int) -> None:
    """This forked process takes the run's stdio, working directory and environment."""
    for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(header["cwd"])
    os.environ.clear()
    os.environ.update(header["env"])


# MCP test servers ------------------------------------------------------------------------


def _launch_waiter(header: dict[str, Any], fds: list[int], reply: socket.socket) -> NoReturn:
    """Fork the server, then answer the process that asked: the server's pid, the signals
    it passes on, and how the server ended. When that process dies (SIGKILL), so does the
    server, as it would have with it."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    pid = os.fork()
    if pid == 0:
        reply.close()
        _server_child(header, *fds)
    for fd in fds:
        os.close(fd)
    try:
        reply.sendall(f"pid {pid}\n".encode())
    except OSError:
        os.kill(pid, signal.SIGKILL)
    pending = b""
    with selectors.DefaultSelector() as sel:
        ended = os.pidfd_open(pid)
        sel.register(ended, selectors.EVENT_READ)
        sel.register(reply, selectors.EVENT_READ)
        while True:
            for key, _ in sel.select():
                if key.fileobj == ended:
                    _, status = os.waitpid(pid, 0)
                    try:
                        reply.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                    except OSError:
                        pass
                    os._exit(0)
                try:
                    piece = reply.recv(256)
                except OSError:
                    piece = b""
                if not piece:  # the process that asked is gone
                    sel.unregister(reply)
                    os.kill(pid, signal.SIGKILL)
                    continue
                pending += piece
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    os.kill(pid, int(line.removeprefix(b"signal ")))


def _server_child(header: dict[str, Any], stdin: int, stdout: int, stderr: int) -> NoReturn:
    _become(header, stdin, stdout, stderr)
    import runpy

    # As `python SCRIPT ARGV`, but its main() called rather than its `__main__` block, which
    # would ask the zygote again.
    sys.argv = [header["script"], *header["argv"]]
    sys.path[0] = os.path.dirname(header["script"])
    runpy.run_path(header["script"], {"STARTED_AS": header["pid"]}, "__zygote__")["main"]()
    raise SystemExit(0)


def launch(script: str) -> None:
    """In a process started as `python SCRIPT ARGS`: have the zygote of the pytest this
    process runs under run SCRIPT's main() in a child with this process's stdio, arguments,
    working directory and environment; then exit as it exits, passing on the signals this
    process gets. Returns (having done nothing) when no zygote answers. With SCREEN_ENV set
    (in a test's terminal), the screen's zygote it names runs it."""
    screen = os.environ.pop(SCREEN_ENV, None)
    conn = _ancestors_zygote() if screen is None else _connect_to(Path(screen))
    if conn is None:
        return
    header = {
        "script": os.path.abspath(script),
        "argv": sys.argv[1:],
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "pid": os.getpid(),
    }
    try:
        socket.send_fds(conn, [json.dumps(header).encode()], [0, 1, 2])
    except OSError:
        conn.close()
        return
    # The server alone holds the stdio now: when it ends, its client reads the end at once.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)

    def forward(signum: int, _frame: Any) -> None:
        try:
            conn.sendall(f"signal {signum}\n".encode())
        except OSError:
            pass

    # SIGWINCH: the terminal's resize goes to its foreground processes, this one; the run,
    # forked elsewhere, is not among them.
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGWINCH):
        signal.signal(signum, forward)
    answer = b""
    while True:
        try:
            piece = conn.recv(256)
        except OSError:
            piece = b""
        if not piece:
            break
        answer += piece
    words = dict(line.split(" ", 1) for line in answer.decode().splitlines())
    if "pid" not in words:
        return  # the zygote refused: serve here
    if "exit" not in words:
        print("the zygote lost the server it started", file=sys.stderr)
        os._exit(1)
    _exit_as(int(words["exit"]))


def _exit_as(code: int) -> NoReturn:
    """Exit with `code`, as `subprocess` gives it: below 0, killed by that signal."""
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


def _ancestors_zygote() -> socket.socket | None:
    """A connection to the zygote of the nearest parent process that started one (pytest)."""
    pid = os.getppid()
    for _ in range(16):  # a zygote, uji, Node, a worker, pytest, ...
        if pid <= 1:
            return None
        conn = _connect_to(listening_at(pid))
        if conn is not None:
            return conn  # (a socket left behind refuses: look further up)
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # "pid (name) state ppid ..."
    return None


def _connect_to(path: Path) -> socket.socket | None:
    if not path.exists():
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    return conn


# The client ------------------------------------------------------------------------------


class Zygote:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._control: socket.socket | None = None
        self._pending: socket.socket | None = None  # a started zygote's socket, before "ready"
        self._proc: subprocess.Popen[bytes] | None = None
        self._failed = False

    def spawn(self) -> None:
        """Start the zygote without waiting for it: it loads uji while the tests are collected
        and the first ones run. Nothing when it runs already, or when no run would use it."""
        if self._proc is not None or self._failed or not self.enabled():
            return
        ours, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "COVERAGE_"))}
        env.update(START_ENV)
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests import zygote; "
                f"import socket; zygote.serve(socket.socket(fileno={theirs.fileno()}))",
            ],
            pass_fds=[theirs.fileno()],
            env=env,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self._pending = ours

    def share(self) -> None:
        """In pytest's controlling process, which runs no test: start the zygote its test
        workers share (they find it in SHARED_ENV); one zygote loads uji once, not one per
        worker (each ~2 s of CPU)."""
        self.spawn()
        if self._proc is not None:
            os.environ[SHARED_ENV] = str(listening_at(os.getpid()))

    def _connect(self, path: str) -> socket.socket | None:
        """A test worker's channel to the zygote its pytest started, once it is ready."""
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(60)
        try:
            # It listens before it loads uji: a connection waits in its backlog meanwhile.
            conn.connect(path)
            conn.sendall(json.dumps({"worker": os.getpid()}).encode())
            ready = conn.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready\n":
            conn.close()
            return None
        conn.settimeout(None)
        return conn

    def _start(self) -> socket.socket | None:
        """The control socket of a zygote ready to fork; None when it could not start."""
        if self._control is not None or self._failed:
            return self._control
        shared = os.environ.get(SHARED_ENV)
        if shared and self._proc is None and self._pending is None:
            self._control = self._connect(shared)
            self._failed = self._control is None
            return self._control
        self.spawn()
        ours = self._pending
        if ours is None:
            self._failed = True
            return None
        self._pending = None
        ours.settimeout(60)
        try:
            ready = ours.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready\n":
            self._failed = True
            ours.close()
            return None
        ours.settimeout(None)
        self._control = ours
        return ours

    def screen(self) -> Path | None:
        """The socket of the screen's zygote (`_serve_screen`) of this pytest, once its zygote
        is ready; None when there is none (a terminal's uji then starts by itself)."""
        with self._lock:
            if self._start() is None:
                return None
        shared = os.environ.get(SHARED_ENV)
        tests = int(Path(shared).stem) if shared and self._proc is None else os.getpid()
        return tui_listening_at(tests)

    @staticmethod
    def enabled() -> bool:
        # Not under `./test --cov`, which measures each uji process from its start.
        return os.environ.get("UJI_TEST_FORK") != "0" and not any(
            k.startswith("COVERAGE_") for k in os.environ
        )

    def usable(self, env: dict[str, str]) -> bool:
        if not self.enabled():
            return False
        python = {k: v for k, v in env.items() if k.startswith("PYTHON")}
        return python == START_ENV

    def run(
        self, argv: list[str], cwd: str, env: dict[str, str], stdin: str | None, timeout: float
    ) -> subprocess.CompletedProcess[str] | None:
        """Run `python -m uji ARGV` in a child of the zygote; None when it can't."""
        with self._lock:
            control = self._start()
            if control is None:
                return None
            in_r, in_w = os.pipe() if stdin is not None else (os.open(os.devnull, os.O_RDONLY), -1)
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            reply, reply_theirs = socket.socketpair()
            header = json.dumps({"argv": argv, "cwd": cwd, "env": env}).encode()
            socket.send_fds(control, [header], [in_r, out_w, err_w, reply_theirs.fileno()])
            for fd in (in_r, out_w, err_w):
                os.close(fd)
            reply_theirs.close()
        return _collect(reply, in_w, out_r, err_r, stdin, timeout, argv)

    def close(self) -> None:
        for sock in (self._control, self._pending):
            if sock is not None:
                sock.close()
        if self._proc is not None:
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()


def _collect(
    reply: socket.socket,
    in_w: int,
    out_r: int,
    err_r: int,
    stdin: str | None,
    timeout: float,
    argv: list[str],
) -> subprocess.CompletedProcess[str]:
    if stdin is not None:
        data = stdin.encode()

        def feed() -> None:
            try:
                _write_all(in_w, data)
            except OSError:
                pass
            finally:
                os.close(in_w)

        threading.Thread(target=feed, daemon=True).start()
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    status = b""
    pid = None
    code: int | None = None
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(out_r, selectors.EVENT_READ)
        sel.register(err_r, selectors.EVENT_READ)
        sel.register(reply, selectors.EVENT_READ)
        open_fds = 3
        while open_fds:
            left = deadline - time.monotonic()
            if left <= 0:
                if pid is not None:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                for fd in (out_r, err_r):
                    os.close(fd)
                reply.close()
                raise subprocess.TimeoutExpired(argv, timeout)
            for key, _ in sel.select(min(left, 1.0)):
                if key.fileobj is reply:
                    piece = reply.recv(4096)
                    if not piece:
                        sel.unregister(reply)
                        open_fds -= 1
                        continue
                    status += piece
                    for line in status.decode().splitlines():
                        word, _, value = line.partition(" ")
                        if word == "pid":
                            pid = int(value)
                        elif word == "exit":
                            code = int(value)
                else:
                    fd = key.fileobj
                    assert isinstance(fd, int)
                    piece = os.read(fd, 65536)
                    if piece:
                        chunks[fd].append(piece)
                    else:
                        sel.unregister(fd)
                        open_fds -= 1
    for fd in (out_r, err_r):
        os.close(fd)
    reply.close()
    if code is None:
        raise RuntimeError(f"the zygote lost a run of {argv}")
    return subprocess.CompletedProcess(argv, code, _text(chunks[out_r]), _text(chunks[err_r]))


def _text(chunks: list[bytes]) -> str:
    """As `subprocess.run(text=True)` decodes: UTF-8 here, universal newlines."""
    return b"".join(chunks).decode().replace("\r\n", "\n").replace("\r", "\n")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
