"""uji.fs: read, lines, write, list, glob — with the file tools' confinement.

Every path goes through the gate's sandbox, so a plugin reaches exactly what the file tools
reach, by the same race-free walk, and relative paths start at the cwd. Failures (a
refusal, a missing file, a directory where a file was wanted) reach Lua as `nil, err`;
bad arguments raise at the caller's line (checked in fs.lua).

Contents go to Lua as bytes, so a Lua string holds the file exactly, whatever its
encoding. The other way, text crosses cleaned to valid UTF-8 like every Lua string.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import stat
from collections.abc import Awaitable, Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from uji.lua.runtime import Api, ApiError, Pending
from uji.tools.confine import OutsideRoots, Sandbox, expand_user

EntryKind = Literal["file", "dir", "link", "other"]  # what uji.fs.list says an entry is

if TYPE_CHECKING:
    from typing import TypedDict

    from uji.lua.host import LuaHost
    from uji.tools.gate import Gate

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class Page(TypedDict):
        """`uji.fs.read_lines`: the lines, which of them were cut (from 1), the line count."""

        lines: list[bytes]
        cut: dict[int, bool]
        total: int

    class DirEntry(TypedDict):
        name: bytes  # as on disk
        type: EntryKind


SNIFF_BYTES = 8192  # the read_file tool's test for a binary file: a NUL in the first 8 KB
_MAGIC = re.compile(r"[*?\[]")


class FsError(ApiError):
    """A failure Lua receives as `nil, err`; `str()` is the whole message."""


class Later:
    """An awaitable that calls `fn(*args)` only when awaited.

    A waiting call whose Lua side then fails (no task and no callback) drops its Pending
    unawaited; a coroutine made up front would warn "never awaited" at that point."""

    __slots__ = ("_args", "_fn")

    def __init__(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        self._fn = fn
        self._args = args

    def __await__(self) -> Generator[Any, None, Any]:
        return self._fn(*self._args).__await__()


def later(fn: Callable[..., Awaitable[Any]], *args: Any) -> Pending:
    return Pending(Later(fn, *args))


class Anchor:
    """Re-wraps Lua values on the main Lua state, so Python may keep them.

    lupa ties a Lua value that reaches Python to the coroutine that was running, and
    freeing that wrapper after Lua has collected the coroutine crashes the process. A
    value passed back through a function made on the main state comes out tied to the
    main state, which lives as long as the runtime. Anything a module keeps past the
    host call (a job's callbacks, a stream's on_line) goes through one of these; its
    Lua file binds the identity function while the runtime loads, outside any task."""

    def __init__(self) -> None:
        self._identity: Any = None

    def bind(self, identity: Any) -> None:
        self._identity = identity

    def __call__(self, value: Any) -> Any:
        return value if value is None else self._identity(value)


def install(host: LuaHost, gate: Gate) -> Api:
    def in_thread(work: Callable[..., Any], *args: Any) -> Pending:
        sandbox = gate.sandbox()  # taken now: the cwd, roots and confinement of the call

        async def run() -> Any:
            data = await asyncio.to_thread(work, sandbox, *args)
            return host.lua.convert.to_lua(data)  # Lua is touched on the loop thread only

        return later(run)

    def fs_read(path: str) -> Pending:
        return in_thread(read_file, path)

    def fs_lines(path: str, offset: float, limit: float | None, max_line: float | None) -> Pending:
        # Lua numbers may arrive as floats; fs.lua checked they are whole.
        return in_thread(read_lines, path, int(offset), _whole(limit), _whole(max_line))

    def fs_write(path: str, content: str) -> Pending:
        return in_thread(write_file, path, content.encode())

    def fs_list(path: str) -> Any:
        return _sync(host, gate, list_dir, path)

    def fs_glob(pattern: str) -> Any:
        return _sync(host, gate, glob, pattern)

    return {
        "fs_read": fs_read,
        "fs_lines": fs_lines,
        "fs_write": fs_write,
        "fs_list": fs_list,
        "fs_glob": fs_glob,
    }


def _whole(n: float | None) -> int | None:
    return None if n is None else int(n)


def _sync(host: LuaHost, gate: Gate, work: Callable[[Sandbox, str], Any], arg: str) -> Any:
    """A call without a callback form: the value, or (nil, err) as two Lua results."""
    try:
        return host.lua.convert.to_lua(work(gate.sandbox(), arg))
    except FsError as e:
        return None, str(e)


def _os_text(action: str, path: str, e: OSError) -> str:
    """`read foo: No such file or directory`, as the file tools say it."""
    return f"{action} {path}: {e.strerror or e}"


# -- read and lines ----------------------------------------------------------------------


def _open_file(sandbox: Sandbox, path: str) -> BinaryIO:
    """Open a regular file inside the sandbox, or raise FsError saying why not."""
    try:
        f = sandbox.open_read(path)
    except OutsideRoots as e:
        raise FsError(str(e))
    except IsADirectoryError:
        raise FsError(f"{path} is a directory, not a file")
    except OSError as e:
        raise FsError(_os_text("read", path, e))
    if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        return f
    f.close()  # a FIFO or a device could block or never end
    raise FsError(f"{path} is not a regular file")


def read_file(sandbox: Sandbox, path: str) -> bytes:
    with _open_file(sandbox, path) as f:
        try:
            return f.read()
        except OSError as e:
            raise FsError(_os_text("read", path, e))


def read_lines(sandbox: Sandbox, path: str, offset: int, limit: int | None, max_line: int | None) -> Page:
    """`{lines, cut, total}`: up to `limit` lines from line `offset`, each cut at
    `max_line` bytes (`cut[i]` marks `lines[i]`), and the file's line count.

    The lines after the page are only counted, so a huge file costs no memory."""
    with _open_file(sandbox, path) as f:
        try:
            if b"\0" in f.read(SNIFF_BYTES):
                raise FsError(f"{path} looks like a binary file")
            f.seek(0)
            return _page(f, offset, limit, max_line)
        except OSError as e:
            raise FsError(_os_text("read", path, e))


def _page(f: BinaryIO, offset: int, limit: int | None, max_line: int | None) -> Page:
    lines: list[bytes] = []
    cut: dict[int, bool] = {}
    total = 0
    for total, raw in enumerate(f, start=1):
        if total < offset or (limit is not None and len(lines) >= limit):
            continue
        line = _strip_ending(raw)
        if max_line is not None and len(line) > max_line:
            line = _cut(line, max_line)
            cut[len(lines) + 1] = True  # Lua indexes lines from 1
        lines.append(line)
    return {"lines": lines, "cut": cut, "total": total}


def _strip_ending(raw: bytes) -> bytes:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
    return raw


def _cut(line: bytes, size: int) -> bytes:
    """The first `size` bytes, backed off a split UTF-8 character (at most 3 bytes, so a
    file in another encoding is still cut near `size`)."""
    end = size
    while end > 0 and size - end < 3 and line[end] & 0xC0 == 0x80:
        end -= 1
    if line[end] & 0xC0 == 0x80:  # still inside a "character": not UTF-8 after all
        end = size
    return line[:end]


# -- write -------------------------------------------------------------------------------


def write_file(sandbox: Sandbox, path: str, data: bytes) -> dict[str, bool]:
    """Atomic replace (temp file + rename), creating missing parent directories."""
    try:
        return {"created": sandbox.write_atomic(path, data)}
    except OutsideRoots as e:
        raise FsError(str(e))
    except IsADirectoryError:
        raise FsError(f"{path} is a directory, not a file")
    except OSError as e:
        raise FsError(_os_text("write", path, e))


# -- list --------------------------------------------------------------------------------


def list_dir(sandbox: Sandbox, path: str) -> list[DirEntry]:
    """`{name, type}` for each entry, sorted by name; names are bytes, as on disk."""
    try:
        fd = _open_dir(sandbox, path)
    except OutsideRoots as e:
        raise FsError(str(e))
    except NotADirectoryError:
        raise FsError(f"{path} is not a directory")
    except OSError as e:
        raise FsError(_os_text("list", path, e))
    try:
        with os.scandir(fd) as entries:
            found: list[DirEntry] = [{"name": os.fsencode(e.name), "type": _kind(e)} for e in entries]
    except OSError as e:
        raise FsError(_os_text("list", path, e))
    finally:
        os.close(fd)
    return sorted(found, key=lambda e: e["name"])


def _open_dir(sandbox: Sandbox, path: str) -> int:
    # The sandbox's own walk, so the directory opened is the one that was checked (a
    # symlink swapped in between cannot redirect the listing). Sandbox has no public
    # open for directories; `_locate` is the walk its open_read uses.
    with sandbox._locate(path) as (dir_fd, name):
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        return os.open(name, flags, dir_fd=dir_fd)


def _kind(entry: os.DirEntry[str]) -> EntryKind:
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "dir"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


# -- glob --------------------------------------------------------------------------------


def glob(sandbox: Sandbox, pattern: str) -> list[bytes]:
    """Sorted matches of `* ? [..] **`, relative to the cwd when inside it.

    A name starting with `.` matches only a pattern part that starts with `.` too, and
    `**` does not descend into hidden or symlinked directories (a link loop cannot make
    it run forever). A match reached through a symlinked directory is kept only if
    confinement allows it, so a link cannot leak the names of files outside (a match that
    is itself a link is a name inside, and kept)."""
    full = os.path.normpath(os.path.join(sandbox.cwd, expand_user(pattern)))
    parts = [p for p in full.split("/") if p]
    static = 0
    while static < len(parts) and not _MAGIC.search(parts[static]):
        static += 1
    base = "/" + "/".join(parts[:static])
    # The static part is checked as a path of its own, so `../*` is refused as `..` is.
    if sandbox.check(base) is not None:
        raise FsError(sandbox.refusal(pattern))
    matches: set[str] = set()
    for path, via_link in _walk(base, parts[static:], False):
        if not via_link or sandbox.check(path) is None:
            matches.add(path)
    if static < len(parts):
        matches.discard(base)  # `x/**` matches below x, not x itself
    return sorted(os.fsencode(_shown(sandbox.cwd, m)) for m in matches)


def _walk(directory: str, parts: list[str], via_link: bool) -> Iterator[tuple[str, bool]]:
    """(path, reached through a symlink) for each match of `parts` under `directory`."""
    if not parts:
        if os.path.lexists(directory):
            yield directory, via_link
        return
    head, rest = parts[0], parts[1:]
    if head == "**":
        yield from _walk_any_depth(directory, parts, via_link)
        return
    if not _MAGIC.search(head):
        path = os.path.join(directory, head)
        if not rest or os.path.isdir(path):
            yield from _walk(path, rest, via_link or (bool(rest) and os.path.islink(path)))
        return
    match = re.compile(fnmatch.translate(head)).match
    for entry in _scan(directory):
        if entry.name.startswith(".") and not head.startswith("."):
            continue
        if match(entry.name) and (not rest or entry.is_dir()):
            through = via_link or (bool(rest) and entry.is_symlink())
            yield from _walk(os.path.join(directory, entry.name), rest, through)


def _walk_any_depth(directory: str, parts: list[str], via_link: bool) -> Iterator[tuple[str, bool]]:
    """`**` at the head of `parts`: what the rest matches here, and below every directory."""
    rest = parts[1:]
    yield from _walk(directory, rest, via_link)  # `**` may match no directory at all
    for entry in _scan(directory):
        if entry.name.startswith("."):
            continue
        child = os.path.join(directory, entry.name)
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(child, parts, via_link)
        elif not rest:  # a last `**` matches every name below, files too
            yield child, via_link


def _scan(directory: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except OSError:  # unreadable or vanished: it simply has no matches
        return []


def _shown(cwd: str, path: str) -> str:
    if path == cwd:
        return "."
    if path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path
