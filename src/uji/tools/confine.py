"""Confinement for the file tools.

Confined, a path can only reach the working directory and the roots. The check and the
open are the same act: a path is walked one component at a time through directory file
descriptors opened with O_NOFOLLOW, every symlink is read and re-resolved by hand, and the
final open refuses to follow a link. So swapping a directory for a symlink between a check
and a write cannot redirect the write: the walk never trusts a path string twice.

Unconfined, the same walker runs with `/` as the only base, so writes stay atomic and
symlinks are simply followed wherever they point.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from typing import BinaryIO

from uji.record import Record

# O_PATH (Linux) opens a directory for *at() calls without needing read permission on it.
_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)
_DIR_FLAGS = _O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# A base's own path is trusted (it is the user's cwd or a configured root), so it may follow links.
_BASE_FLAGS = _O_PATH | os.O_DIRECTORY | os.O_CLOEXEC
MAX_LINKS = 40


class OutsideRoots(Exception):
    """A path confinement refuses. `str()` is the message the model sees."""


class GuardRefused(OutsideRoots):
    """The file a path reached, once walked, is one the policy denies (`Sandbox.guard`)."""


def expand_user(path: str) -> str:
    """Expand `~` and `~/x` (not `~user`), as the reference does."""
    if path == "~" or path.startswith("~/"):
        return os.path.expanduser(path)
    return path


def _parts(path: str) -> list[str]:
    """Split a path into its components, dropping empty ones and `.` (kept: `..`)."""
    return [p for p in path.split("/") if p and p != "."]


def _loop_error(path: str) -> OSError:
    return OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)


class _Base(Record):
    """A directory the walk may stand in: the cwd, a root, or `/` when unconfined."""

    real: tuple[str, ...]  # components of its realpath: where the walk opens it
    lexical: tuple[str, ...]  # components as configured, so `/tmp/x/f` matches a /tmp symlink

    @property
    def path(self) -> str:
        return "/" + "/".join(self.real)

    def strip(self, parts: list[str]) -> list[str] | None:
        """The components of `parts` below this base, or None when it is not under it."""
        for prefix in (self.real, self.lexical):
            if tuple(parts[: len(prefix)]) == prefix:
                return parts[len(prefix) :]
        return None


class _Cursor:
    """The walk's position: a stack of directory fds, the first one a base."""

    def __init__(self, bases: list[_Base], shown: str, refuse: OutsideRoots) -> None:
        self._bases = bases
        self._shown = shown
        self._refuse = refuse
        self._fds: list[int] = []
        self._base: _Base = bases[0]
        self._links = 0

    @property
    def fd(self) -> int:
        return self._fds[-1]

    def close(self) -> None:
        while self._fds:
            os.close(self._fds.pop())

    def anchor(self, parts: list[str]) -> list[str]:
        """Stand in the deepest base holding absolute `parts`; return what is left to walk."""
        best: tuple[_Base, list[str]] | None = None
        for base in self._bases:
            rest = base.strip(parts)
            if rest is not None and (best is None or len(rest) < len(best[1])):
                best = (base, rest)
        if best is None:
            raise self._refuse
        self.close()
        self._base = best[0]
        self._fds.append(os.open(best[0].path, _BASE_FLAGS))
        return best[1]

    def walk(self, parts: list[str], make_parents: bool) -> str:
        """Walk absolute `parts`; return the final name (never a symlink) in `self.fd`."""
        todo = self.anchor(parts)
        while True:
            if not todo:
                return "."
            name = todo.pop(0)
            if name == "..":
                todo = self.up() + todo
            elif todo:
                todo = self.down(name, make_parents) + todo
            else:
                target = self.readlink(name)
                if target is None:
                    return name
                todo = self.follow(target)

    def up(self) -> list[str]:
        """Take one `..`. Leaving a base is allowed only into another base."""
        if len(self._fds) > 1:
            os.close(self._fds.pop())
            return []
        if not self._base.real:
            return []  # "/.." stays "/"
        self._count_hop()
        return self.anchor(list(self._base.real[:-1]))

    def down(self, name: str, make_parents: bool) -> list[str]:
        """Enter directory `name`; a symlink returns its target's components to walk instead."""
        for _attempt in range(3):
            try:
                self._fds.append(os.open(name, _DIR_FLAGS, dir_fd=self.fd))
                return []
            except FileNotFoundError:
                if not make_parents:
                    raise
                # Created through the parent's fd, so a symlinked parent cannot redirect it.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=self.fd)
            except OSError as e:
                if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                target = self.readlink(name)
                if target is None:
                    raise
                return self.follow(target)
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)

    def readlink(self, name: str) -> str | None:
        """The target of symlink `name` in the current directory, None if it is not one."""
        try:
            return os.readlink(name, dir_fd=self.fd)
        except OSError as e:
            if e.errno in (errno.EINVAL, errno.ENOENT):
                return None
            raise

    def follow(self, target: str) -> list[str]:
        """Components to walk for a symlink's target (an absolute one re-anchors)."""
        self._count_hop()
        parts = _parts(target)
        return self.anchor(parts) if target.startswith("/") else parts

    def _count_hop(self) -> None:
        self._links += 1
        if self._links > MAX_LINKS:
            raise _loop_error(self._shown)


class Sandbox:
    """Where the file tools may reach, and the only way they open files."""

    def __init__(
        self, cwd: str, roots: list[str], enabled: bool = True, read_roots: list[str] | None = None
    ) -> None:
        self.cwd = os.path.abspath(cwd)
        self.roots = list(roots)
        self.enabled = enabled
        # Directories that may be read but never written (uji.tool.read_roots: skill folders).
        self.read_roots = list(read_roots or [])
        # Called with the real path of the file each open reached; a text refuses it. The
        # policy is checked again here, at the open, so a symlink swapped in after the
        # decision cannot lead a call to a file its rules deny.
        self.guard: Callable[[str], str | None] | None = None

    # -- paths -----------------------------------------------------------------------

    @property
    def expanded_roots(self) -> list[str]:
        """The roots as absolute lexical paths (`~/` expanded, relative ones under the cwd)."""
        return [os.path.normpath(os.path.join(self.cwd, expand_user(r))) for r in self.roots]

    def reachable_roots(self, write: bool) -> list[str]:
        """The roots a read (the read-only roots too) or a write may reach."""
        extra = (
            []
            if write
            else [os.path.normpath(os.path.join(self.cwd, expand_user(r))) for r in self.read_roots]
        )
        return [*self.expanded_roots, *extra]

    def abspath(self, path: str) -> str:
        """Lexical absolute normalised path (`~` expanded, `..` folded) for policy and display."""
        return os.path.normpath(os.path.join(self.cwd, expand_user(path)))

    def refusal(self, path: str, write: bool = False) -> str:
        """The message for a path outside the working directory and the roots."""
        roots = self.reachable_roots(write)
        if not roots:
            return (
                f"{path} is outside the working directory ({self.cwd}); tools can only reach files under it"
            )
        return (
            f"{path} is outside the working directory ({self.cwd}) and the roots "
            f"({', '.join(roots)}); tools can only reach files under them"
        )

    def check(self, path: str, write: bool = False) -> str | None:
        """The refusal text if confinement forbids `path` (to a tool that writes, if
        `write`), else None.

        OS errors (missing files, permissions) are not refusals: the tool reports them."""
        if not self.enabled:
            return None
        try:
            with self._locate(path, write=write):
                return None
        except OutsideRoots as e:
            return str(e)
        except OSError:
            return None

    def _bases(self, write: bool) -> list[_Base]:
        if not self.enabled:
            return [_Base((), ())]
        dirs = [self.cwd, *self.reachable_roots(write)]
        return [_Base(tuple(_parts(os.path.realpath(d))), tuple(_parts(d))) for d in dirs]

    @contextlib.contextmanager
    def _locate(
        self, path: str, make_parents: bool = False, write: bool = False
    ) -> Iterator[tuple[int, str]]:
        """Walk to `path` and yield (parent dir fd, final name), the name not a symlink;
        a read (not `write`) may also reach the read-only roots.

        The final name is "." when the path names a directory through `..` or a base."""
        full = os.path.join(self.cwd, expand_user(path))
        bases = self._bases(write)
        refuse = OutsideRoots(self.refusal(path, write))
        # A lexical pre-check refuses `missing/../../x` before a write creates `missing`.
        if self.enabled:
            folded = _parts(os.path.normpath(full))
            if all(b.strip(folded) is None for b in bases):
                raise refuse
        cursor = _Cursor(bases, path, refuse)
        try:
            name = cursor.walk(_parts(full), make_parents)
            if self.guard is not None:
                reason = self.guard(_reached(cursor.fd, name, full))
                if reason:
                    raise GuardRefused(reason)
            yield cursor.fd, name
        finally:
            cursor.close()

    # -- file access -----------------------------------------------------------------

    def open_read(self, path: str) -> BinaryIO:
        """Open for reading; a directory raises IsADirectoryError (callers may fstat for
        other kinds of file)."""
        with self._locate(path) as (dir_fd, name):
            # O_NONBLOCK so a FIFO cannot hang the open; reads are made blocking again below.
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            fd = os.open(name, flags, dir_fd=dir_fd)
        try:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def read_bytes(self, path: str, limit: int | None = None) -> bytes:
        with self.open_read(path) as f:
            return f.read() if limit is None else f.read(limit)

    def write_atomic(self, path: str, data: bytes, make_parents: bool = True) -> bool:
        """Replace the file's content all at once; True if the file was created.

        A final symlink that stays inside is written through: the link is kept and its
        target replaced."""
        with self._locate(path, make_parents=make_parents, write=True) as (dir_fd, name):
            mode = _existing_mode(dir_fd, name)
            _replace(dir_fd, name, data, mode)
            return mode is None


def _reached(dir_fd: int, name: str, full: str) -> str:
    """The real path of `name` in the directory `dir_fd` (the walk ended there)."""
    try:
        folder = os.readlink(f"/proc/self/fd/{dir_fd}")
    except OSError:  # no /proc: resolve by name, the best there is
        return os.path.realpath(full)
    return folder if name == "." else os.path.join(folder, name)


def _existing_mode(dir_fd: int, name: str) -> int | None:
    """The permission bits of the file being replaced, None when it does not exist."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    return stat.S_IMODE(st.st_mode)


def _replace(dir_fd: int, name: str, data: bytes, mode: int | None) -> None:
    """Write a temp file next to `name`, fsync it and rename it over `name`.

    rename() is atomic, so readers and crashes see the old file or the new one; the temp
    file is removed on any failure, an interrupt included."""
    tmp = f".{name[:40]}.{os.urandom(6).hex()}.uji-tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o666, dir_fd=dir_fd)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    _fsync_dir(dir_fd)


def _fsync_dir(dir_fd: int) -> None:
    """Make the rename durable; best effort (an O_PATH fd cannot be fsynced itself)."""
    with contextlib.suppress(OSError):
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dir_fd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
