"""Instruction files: the user's own (`AGENTS.md` in the config directory), then the
project's, `AGENTS.md` or else `CLAUDE.md`, from the repository root down to the working
directory. Read at the start of each turn, so an edit counts at once; a file whose
stat has not changed is not read again. They are text for the model, never run.

A project's file must be a regular file inside the project: one that resolves outside
it (a symlink to `~/.ssh/...` in a cloned repository) is left out, with a notice."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

from uji.paths import nearest
from uji.record import Record, Struct

DEFAULT_NAMES = ("AGENTS.md", "CLAUDE.md")
LIMIT = 64 * 1024  # bytes of one file that go into the prompt

Notice = Callable[[str], None]


class InstructionFile(Record):
    path: str  # absolute
    label: str  # the path the prompt names: from the repository root, or ~/... for the user's
    text: str  # what goes into the prompt (cut to LIMIT)
    size: int  # bytes on disk


class _Read(Struct):
    key: tuple[int, int, int, int]  # (device, inode, size, mtime ns): unchanged means not read again
    file: InstructionFile | None  # None: left out (unreadable, not UTF-8, empty)
    notice: str | None  # said once, when the file is first read or changed


def project_root(cwd: str) -> str | None:
    """The nearest directory from cwd up holding `.git` (a directory, or a worktree's file)."""
    return nearest(cwd, lambda d: os.path.exists(os.path.join(d, ".git")))


def directories(cwd: str) -> tuple[str, list[str]]:
    """(the project's root, each directory from it down to cwd, root first). With no
    repository the root is cwd itself."""
    root = project_root(cwd) or cwd
    chain = [cwd]
    here = cwd
    while here != root:
        here = os.path.dirname(here)
        chain.append(here)
    chain.reverse()
    return root, chain


def _home_label(path: str) -> str:
    home = os.path.expanduser("~")
    if home not in ("", "/") and path.startswith(home.rstrip("/") + "/"):
        return "~/" + path[len(home.rstrip("/")) + 1 :]
    return path


def _decode(data: bytes, cut: bool) -> str | None:
    """UTF-8 text, or None; a cut may have split the last character: drop its bytes."""
    for trim in range(4 if cut else 1):
        try:
            return data[: len(data) - trim].decode("utf-8-sig")
        except UnicodeDecodeError:
            continue
    return None


class Instructions:
    """Which files, and what each one says now."""

    def __init__(self, personal_dir: str | None = None) -> None:
        self.personal_dir = personal_dir  # the uji config directory
        self.names: tuple[str, ...] | None = DEFAULT_NAMES  # None: off
        self._read: dict[str, _Read] = {}

    def load(self, cwd: str, notice: Notice | None = None) -> list[InstructionFile]:
        """The files in prompt order: the user's, then the project's from its root down.
        Problems (a file cut, unreadable, outside the project) go to `notice` once per
        change of the file; with no `notice` they wait for the next call that has one."""
        if not self.names:
            return []
        found: list[InstructionFile] = []
        seen: dict[str, _Read] = {}
        candidates: list[tuple[str, str, str | None]] = []  # (path, label, the root it must stay in)
        if self.personal_dir:
            path = self._first(self.personal_dir)
            if path is not None:
                candidates.append((path, _home_label(path), None))
        root, chain = directories(cwd)
        for directory in chain:
            path = self._first(directory)
            if path is not None:
                candidates.append((path, os.path.relpath(path, root), root))
        done: set[tuple[int, int]] = set()
        for path, label, inside in candidates:
            read = self._get(path, label, inside)
            if read.key[:2] != (0, 0):  # the config directory inside the project, or two links to one file
                if read.key[:2] in done:
                    continue
                done.add(read.key[:2])
            seen[path] = read
            if read.notice is not None and notice is not None:
                notice(read.notice)
                read.notice = None
            if read.file is not None:
                found.append(read.file)
        self._read = seen  # files gone from the chain are forgotten
        return found

    def _first(self, directory: str) -> str | None:
        """The first of the names present in `directory`: anything but a missing entry or
        a directory, so a broken AGENTS.md is reported rather than passed over. One
        lstat per name in the usual case (no such file)."""
        for name in self.names or ():
            path = os.path.join(directory, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) or (stat.S_ISLNK(st.st_mode) and os.path.isdir(path)):
                continue
            return path
        return None

    def _get(self, path: str, label: str, inside: str | None) -> _Read:
        """What the file says, read again only when its stat changed."""
        cached = self._read.get(path)
        try:
            st = os.stat(path)
        except OSError as e:  # a dangling link, a directory we may not enter
            if cached is not None and cached.key == (0, 0, 0, 0):
                return cached
            return _Read((0, 0, 0, 0), None, f"instructions: cannot read {label}: {e.strerror or e}")
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if cached is not None and cached.key == key:
            return cached
        return _Read(key, *self._read_file(path, label, inside, st))

    def _read_file(
        self, path: str, label: str, inside: str | None, st: os.stat_result
    ) -> tuple[InstructionFile | None, str | None]:
        if inside is not None:
            real, root = os.path.realpath(path), os.path.realpath(inside)
            if not real.startswith(root.rstrip("/") + "/"):
                return None, f"instructions: {label} points outside the project ({real}): left out"
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
            return None, f"instructions: {label} is not a regular file: left out"
        try:
            with open(path, "rb") as f:
                data = f.read(LIMIT + 1)
        except OSError as e:
            return None, f"instructions: cannot read {label}: {e.strerror or e}"
        cut = len(data) > LIMIT
        text = _decode(data[:LIMIT], cut)
        if text is None:
            return None, f"instructions: {label} is not UTF-8 text: left out"
        if not text.strip():
            return None, None
        size = max(st.st_size, len(data))
        notice = None
        if cut:
            kb = -(-size // 1024)
            text = f"{text.rstrip()}\n[cut: {label} is {kb} KB; only its first {LIMIT // 1024} KB are shown]"
            notice = f"instructions: {label} is {kb} KB; only its first {LIMIT // 1024} KB go to the model"
        return InstructionFile(path, label, text.strip("\n"), size), notice


HEADER = (
    "Instruction files follow: the user's, then the project's from its root down to the working "
    "directory. Follow them; where two disagree, the later one wins."
)


def block(file: InstructionFile) -> str:
    return f'<instructions file="{file.label}">\n{file.text}\n</instructions>'


def section(files: list[InstructionFile]) -> str:
    """The marked part of the system prompt; empty with no files."""
    if not files:
        return ""
    return "\n\n".join([HEADER, *(block(f) for f in files)])
