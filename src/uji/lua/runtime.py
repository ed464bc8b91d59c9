"""The one Lua state and the driver that runs Lua as coroutines on the event loop.

Every entry into Lua that may wait (a config file, a tool's run, a hook, a timer)
runs as a Lua coroutine. A `uji.*` call that waits yields a `Pending` to the driver,
which awaits it and resumes the coroutine with the result. Lua never runs on another
thread: lupa holds a lock per runtime, and two threads would deadlock.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from uji.lua.convert import Converter

RUNTIME_DIR = os.path.join(os.path.dirname(__file__), "runtime")
SYS = "sys.lua"  # loaded after the rest: the runtime helpers become uji.sys.* modules
MISSING = "missing.lua"  # loaded last: uji.* names this uji lacks
# The files of uji's own uji/api/ that wait until Lua first reads a name they define, and
# those names (a test holds each file to its names). A start loads the others only: a
# headless turn reads a few namespaces of ~30, and loading them all was ~3.5 ms of CPU.
# Loaded at every start: core.lua (print becomes a notice) and apis.lua (lib.providers,
# used by others).
LAZY_API: dict[str, tuple[str, ...]] = {
    "action.lua": ("action",),
    "auth.lua": ("auth",),
    "command.lua": ("command",),
    "config.lua": ("config", "data"),
    "context.lua": ("context",),
    "db.lua": ("db",),
    "diagnostics.lua": ("diagnostics",),
    "events.lua": ("emit", "off", "on"),
    "fs.lua": ("fs",),
    "http.lua": ("http",),
    "input.lua": ("input",),
    "job.lua": ("job",),
    "keymap.lua": ("keymap",),
    "lifecycle.lua": ("quit", "reload"),
    "mcp.lua": ("mcp",),
    "mode.lua": ("mode",),
    "net.lua": ("net",),
    "pack.lua": ("pack",),
    "proc.lua": ("proc",),
    "project.lua": ("project",),
    "provider.lua": ("model", "provider", "wire"),
    "sandbox.lua": ("sandbox",),
    "session.lua": ("session",),
    "status.lua": ("status",),
    "system.lua": ("clipboard", "image", "keychain", "modules", "os"),
    "task.lua": ("promise", "sleep", "task"),
    "text.lua": (
        "base64",
        "class",
        "diff",
        "fuzzy",
        "glob",
        "lossy",
        "markdown",
        "message",
        "random",
        "regex",
        "sha256",
        "toml",
        "width",
    ),
    "tool.lua": ("tool",),
    "tty.lua": ("tty",),
    "ui.lua": ("ui",),  # with it, the theme state (uji.lua.host.THEME_MODULE)
}
LIBRARY = "dylib" if sys.platform == "darwin" else "so"  # a native module's file extension


# The host functions an `install` (uji.lua.api) gives the `uji` table, by name.
Api = dict[str, Callable[..., Any]]
# Finds a host function by name (None: there is none), the first time Lua asks for it:
# uji.lua.host.HostApi installs the namespace that holds it then.
HostLookup = Callable[[str], Callable[..., Any] | None]

# The files of uji/api/ loaded when Lua first reads a name they define (`files`: path ->
# names). `lib.namespace(name)` loads the file that defines `name`, if it waits, and gives
# `uji[name]`; the functions in `lib.after_load` get the names of each file loaded then
# (sys.lua and missing.lua add theirs). Iterating `uji` with pairs loads them all first,
# so a walk of the table sees what it always saw.
_LAZY_API = """
local uji, host, lib, files = ...
local waiting = {} -- name -> the loader of the file that defines it
lib.after_load = {}
local function loader(path, names)
  return function()
    for _, name in ipairs(names) do waiting[name] = nil end
    local chunk, message = loadfile(path)
    if chunk == nil then error(message, 0) end
    chunk(uji, host, lib)
    for _, hook in ipairs(lib.after_load) do hook(names) end
  end
end
for path, names in pairs(files) do
  local load = loader(path, names)
  for _, name in ipairs(names) do waiting[name] = load end
end
function lib.namespace(name)
  local load = waiting[name]
  if load ~= nil then load() end
  return rawget(uji, name)
end
setmetatable(uji, { __index = function(_, name) return lib.namespace(name) end })
local raw_pairs = pairs
function pairs(t) -- luacheck: ignore (the global pairs, wrapped)
  if t == uji then
    local name = next(waiting)
    while name ~= nil do
      lib.namespace(name)
      name = next(waiting)
    end
  end
  return raw_pairs(t)
end
"""

# The host table's lookup of a name it does not hold yet: asked once, then kept.
_LAZY_HOST = """
local host, lookup = ...
return setmetatable(host, {
  __index = function(t, name)
    local fn = lookup(name)
    if fn ~= nil then rawset(t, name, fn) end
    return fn
  end,
})
"""


# The folder of the runtime helpers' modules (`uji.sys.<name>`), as `require` spells it.
SYS_MODULES = os.path.join("uji", "sys")


def _could_hold(search: str, folder: str) -> str:
    """`search` (a `package.path`) without the templates that can find no module in
    `folder`: those whose folder is not there, and a fixed file that is not. At each start
    sys.lua searches it for every helper; each template of the whole path cost a failed
    open per helper (~150 file system calls a start, most of them in folders that are not
    there)."""
    kept = []
    for template in search.split(";"):
        where, mark, _ = template.partition("?")
        if os.path.isdir(where + folder) if mark else os.path.isfile(template):
            kept.append(template)
    return ";".join(kept)


class LuaError(Exception):
    """A Lua error, with the `file:line:` position Lua gave it."""


class LuaInterrupt(asyncio.CancelledError):
    """Lua was stopped by an interrupt (Esc, SIGINT). A cancellation, so that nothing
    that turns errors into notices or results (hooks, context providers, tools) can
    swallow it: it stops the turn, or the config, like any other interrupt."""

    def __init__(self) -> None:
        super().__init__("interrupted")


class ApiError(Exception):
    """Raised by a host function for bad arguments; Lua re-raises it at the caller's line."""


class Pending:
    """Work a waiting `uji.*` call hands to the driver."""

    __slots__ = ("awaitable", "task")

    def __init__(self, awaitable: Awaitable[Any]) -> None:
        self.awaitable = awaitable
        self.task: asyncio.Future[Any] | None = None


def load_lupa() -> Any:
    """lupa's LuaJIT, its C API visible to the native modules a config loads (`native/`):
    a Lua C module finds `lua_*` in the process, so lupa is loaded with RTLD_GLOBAL."""
    import lupa

    with lupa.allow_lua_module_loading():
        try:
            import lupa.luajit21 as lupa_mod  # the original's runtime: configs behave the same
        except ImportError:  # pragma: no cover - platforms without LuaJIT
            import lupa.lua54 as lupa_mod
    return lupa_mod


def runtime_dir() -> str:
    """The Lua tree uji runs: `UJI_RUNTIME` (a folder holding `uji/`) replaces all of the
    built-in one."""
    chosen = os.environ.get("UJI_RUNTIME")
    return os.path.abspath(os.path.expanduser(chosen)) if chosen else RUNTIME_DIR


def runtime_problem(folder: str) -> str | None:
    """Why `folder` cannot be the Lua tree uji runs (what UJI_RUNTIME names), or None."""
    for part in ("prelude.lua", "api"):
        if not os.path.exists(os.path.join(folder, "uji", part)):
            return (
                f"UJI_RUNTIME={folder}: no uji/{part} there (it names a folder holding uji's Lua tree, uji/)"
            )
    return None


def _deny_attributes(obj: Any, name: Any, is_setting: bool) -> Any:
    # Config code must not reach Python internals through objects we hand it.
    raise AttributeError("Python objects are opaque to Lua")


# fflush(NULL) through LuaJIT's FFI, under a name of our own (a config declaring fflush
# itself keeps working); false where there is no FFI.
_FLUSH_C_STDIO = """
local ok, ffi = pcall(require, "ffi")
if not ok then return false end
ok = pcall(ffi.cdef, 'int uji_fflush_all_(void *stream) __asm__("fflush");')
return ok and pcall(function() ffi.C.uji_fflush_all_(nil) end)
"""
_latest: Runtime | None = None  # the last runtime made (C's stdio is the process's)


def flush_c_stdio() -> None:
    """Flush C's stdio buffers, which Lua's io library writes through (io.write, files it
    never closed), before a fast exit skips it: through the Lua runtime's FFI, else ctypes."""
    if _latest is not None:
        try:
            if _latest.lua.execute(_FLUSH_C_STDIO):
                return
        except Exception:  # a broken Lua state: ctypes still can
            pass
    import ctypes

    ctypes.CDLL(None).fflush(None)


class Runtime:
    def __init__(self, host: HostLookup, package_path: list[str], native_path: list[str], tree: str) -> None:
        """`host`: finds the host functions behind the `uji` table by name, each when Lua
        first calls it; `package_path`: the folders `require` searches for Lua modules, first to last;
        `native_path`: those it searches for C modules (`name.so`); `tree`: the folder of
        uji's own Lua (`uji/prelude.lua`, `uji/api/`)."""
        global _latest
        lupa = load_lupa()
        self.lua = lupa.LuaRuntime(
            unpack_returned_tuples=True,
            register_eval=False,
            register_builtins=False,
            attribute_filter=_deny_attributes,
        )
        _latest = self
        g = self.lua.globals()
        g.python = None
        # Interpreter only: JIT-compiled loops skip debug hooks, and the hook is how an
        # interrupt reaches a Lua loop that never returns.
        self.lua.execute("if jit then jit.off() end")
        # Interrupts from outside the loop (a signal handler, the terminal's input
        # thread): `_active` is the number of the outermost Lua run in progress (None
        # between runs), `_break` the run an interrupt was asked for. A request for a
        # run that has ended never matches a later one, so it cannot linger.
        self._runs = 0
        self._active: int | None = None
        self._break: int | None = None
        self._fired: int | None = None  # the run the interrupt hook has raised in
        self._since = 0.0  # when the active run started
        self._soon: tuple[int, float] | None = None  # (run, when): a break once it has run that long
        self._depth = 0
        # lupa ties a Lua value that reaches Python to the coroutine running at the time,
        # and freeing it after Lua collected that coroutine crashes the process. Passing
        # the arguments of every host function through a function of the main state ties
        # them to the runtime instead, so Python may keep them (handlers, tools, ...).
        self._rehome = self.lua.eval("function(...) return ... end")
        self._lua_type = lupa.lua_type
        own = {
            "check_interrupt": self._check_interrupt,
            "errtext": _errtext,
            "settle": self._anchored(self._settle),
            "cancel": self._cancel,
        }

        def lookup(name: object) -> Callable[..., Any] | None:
            fn = host(name) if isinstance(name, str) else None
            return None if fn is None else self._anchored(fn)

        self._host_table = self.lua.execute(_LAZY_HOST, self.lua.table_from(own), lookup)
        search = ";".join(
            [
                *(os.path.join(p, "?.lua") for p in package_path),
                *(os.path.join(p, "?", "init.lua") for p in package_path),
            ]
        )
        g.package.path = search + ";" + g.package.path
        g.package.cpath = ";".join([*(os.path.join(p, "?." + LIBRARY) for p in native_path), g.package.cpath])
        self.tree = tree
        prelude_path = os.path.join(tree, "uji", "prelude.lua")
        internals = self.load_file(prelude_path)(self._host_table)
        self.uji = internals.uji
        # One Lua file per namespace fills in the `uji` table: uji's own wait for their
        # first use; a tree of UJI_RUNTIME's is loaded whole (its files may differ).
        api_dir = os.path.join(tree, "uji", "api")
        names = sorted(n for n in os.listdir(api_dir) if n.endswith(".lua") and n not in (SYS, MISSING))
        lazy = {n: LAZY_API[n] for n in names if n in LAZY_API} if tree == RUNTIME_DIR else {}
        files = {os.path.join(api_dir, n): self.lua.table_from(list(found)) for n, found in lazy.items()}
        self.lua.execute(_LAZY_API, self.uji, self._host_table, internals.lib, self.lua.table_from(files))
        for name in [*(n for n in names if n not in lazy), SYS, MISSING]:  # the stand-ins cover them all
            if name == SYS:  # where it looks for replacements of the runtime helpers (uji.sys.*)
                self._host_table["sys_path"] = _could_hold(g.package.path, SYS_MODULES)
                self._host_table["sys_cpath"] = _could_hold(g.package.cpath, SYS_MODULES)
            self.load_file(os.path.join(api_dir, name))(self.uji, self._host_table, internals.lib)
        self._spawn = internals.spawn
        self._step = internals.step
        self._forget = internals.forget
        self.clean = internals.clean
        self.convert = Converter(
            self.lua, lupa.lua_type, internals.null, internals.mark_array, internals.kind
        )
        self.type = internals.type
        self.make_ctx = internals.make_ctx
        self.make_reply = internals.make_reply
        g.uji = self.uji
        self.tasks: set[asyncio.Task[Any]] = set()

    def _anchored(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        lua_type, rehome = self._lua_type, self._rehome

        def host_function(*args: Any) -> Any:
            if any(lua_type(a) is not None for a in args):
                moved = rehome(*args)
                args = moved if isinstance(moved, tuple) else (moved,)
            return fn(*args)

        return host_function

    # Loading ----------------------------------------------------------------

    def load_file(self, path: str) -> Any:
        """Compile a file so its errors carry `path:line`. Raises LuaError."""
        with open(path, "rb") as f:
            source = f.read()
        return self.load_source(source, path)

    def load_source(self, source: bytes | str, path: str) -> Any:
        loader = self.lua.globals().load
        result = loader(source, "@" + path)
        if isinstance(result, tuple):  # (nil, message): a syntax error
            raise LuaError(_full_path(str(result[1]), path))
        return result

    # Running ------------------------------------------------------------------

    async def call(self, fn: Any, *args: Any) -> tuple[Any, ...]:
        """Run `fn(*args)` as a coroutine until it returns; its results come back raw
        (Lua tables stay tables). Raises LuaError with the position of the failure."""
        co = self._spawn(fn, *args)
        send: tuple[Any, ...] = ()
        try:
            while True:
                status, values = self._run_step(co, *send)
                if status == "done":
                    return values
                if status == "error":
                    raise LuaError(values[0])
                send = await self._resume_value(values[0] if values else None)
        finally:
            self._forget(co)  # a cancelled task leaves its coroutine behind otherwise

    def call_sync(self, fn: Any, *args: Any) -> tuple[Any, ...]:
        """Run Lua that must not wait (a subject function, a cancel function)."""
        co = self._spawn(fn, *args)
        try:
            status, values = self._run_step(co)
        finally:
            self._forget(co)
        if status == "error":
            raise LuaError(values[0])
        if status != "done":
            raise LuaError("this function tried to wait, which is not allowed here")
        return values

    def _run_step(self, co: int, *send: Any) -> tuple[str, tuple[Any, ...]]:
        """Resume a coroutine once: (status, values).

        An interrupt asked for while it ran: if the hook raised it inside the Lua
        code, LuaInterrupt, however that code ended (a pcall may have caught it). If
        the code ended before the hook saw it, its results stand (a tool's cancel
        function, say) and the task is cancelled, so the interrupt lands at its next
        wait."""
        outer = self._depth == 0
        if outer:
            self._runs += 1
            self._since = time.monotonic()
            self._active = self._runs
        self._depth += 1
        asked = fired = False
        try:
            out = self._step(co, *send)
        finally:
            self._depth -= 1
            if outer:
                run, self._active = self._active, None
                asked = run is not None and self._break == run
                fired = asked and self._fired == run
        if not isinstance(out, tuple):  # a lone status: lupa does not wrap one value
            out = (out,)
        if fired or out[0] == "interrupted":
            raise LuaInterrupt()
        if asked:
            task = asyncio.current_task()
            if task is None:
                raise LuaInterrupt()
            task.cancel()
        return out[0], out[1:]

    def request_break(self, after: float = 0.0) -> bool:
        """Stop the Lua code running now, from a signal handler or another thread.
        With `after`, Lua that ends within `after` seconds of starting is left alone.
        False when no Lua runs: the caller cancels the waiting task instead."""
        run = self._active
        if run is None:
            return False
        if after > 0 and time.monotonic() - self._since < after:
            self._soon = (run, self._since + after)  # only if it is still running then
        else:
            self._break = run
        return True

    @property
    def running(self) -> bool:
        """Whether Lua code is running now (not waiting)."""
        return self._active is not None

    def spawn(self, fn: Any, *args: Any, on_error: Callable[[str], None] | None = None) -> asyncio.Task[Any]:
        """Run Lua in the background (timers, callbacks, notifications)."""

        async def runner() -> None:
            try:
                await self.call(fn, *args)
            except LuaError as e:
                if on_error:
                    on_error(str(e))

        task = asyncio.get_running_loop().create_task(runner())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _resume_value(self, yielded: Any) -> tuple[Any, ...]:
        if isinstance(yielded, Pending):
            try:
                result = await yielded.awaitable
            except Exception as e:  # the waiting call failed: Lua gets (nil, message)
                return (False, _errtext(e))
            return (True, result)
        # A bare coroutine.yield() inside a task: let the loop run, then resume.
        await asyncio.sleep(0)
        return ()

    def _settle(self, pending: Pending, callback: Any) -> None:
        """The callback form: run the work in the background, then call back in Lua."""

        async def runner() -> None:
            try:
                result = await pending.awaitable
            except Exception as e:
                await self.call(callback, None, _errtext(e))
                return
            await self.call(callback, result)

        task = asyncio.get_running_loop().create_task(runner())
        pending.task = task
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _cancel(self, pending: Pending) -> None:
        if pending.task is not None:
            pending.task.cancel()

    def _check_interrupt(self) -> bool:
        # Called by the count hook; true until the interrupted run has ended.
        run = self._active
        if run is None:
            return False
        soon = self._soon
        if soon is not None and soon[0] == run and time.monotonic() >= soon[1]:
            self._break = run
        if self._break == run:
            self._fired = run
            return True
        return False

    def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()


def _full_path(message: str, path: str) -> str:
    """Lua shortens long chunk names to "...tail"; put the whole path back."""
    if message.startswith("..."):
        head, sep, rest = message.partition(":")
        if sep and path.endswith(head[3:]):
            return f"{path}:{rest}"
    return message


def _errtext(e: Any) -> str:
    if isinstance(e, BaseException):
        if isinstance(e, (ApiError, LuaError)):
            return str(e)
        return f"{type(e).__name__}: {e}"
    return str(e)
