"""What the sandbox allows: the user's settings (`uji.sandbox.configure`), resolved for
one command into Landlock rules.

Reads: the whole file system but a deny list of secret places. Writes: the working
directory, the roots, a private temporary folder and the usual devices; in a linked git
worktree also the git data its commits need (uji.worktree.sandbox_writable). Landlock only
grants, so a deny inside a granted tree is made by granting the tree's other entries
one by one, down the path to the denied place ("splitting"); the entries are listed
when the command starts, so they are current then.
"""

from __future__ import annotations

import os
from typing import Literal

from uji.record import Record, Struct, field
from uji.sandbox import landlock as ll

Mode = Literal["workspace-write", "read-only", "off"]
MODES: tuple[Mode, ...] = ("workspace-write", "read-only", "off")
STRICTNESS: dict[Mode, int] = {"off": 0, "workspace-write": 1, "read-only": 2}

# Secret places every command is kept out of (reads and writes), besides uji's own data
# folder and key file. `~` is the user's home.
DEFAULT_DENY_READ = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.kube",
    "~/.netrc",
    "~/.git-credentials",
    "~/.docker/config.json",
    "~/.pypirc",
)

# Devices any command may read and write (a rule on each file, not on /dev: reading a
# raw disk would bypass every deny above).
DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
)
DEVICE_DIRS = ("/dev/pts", "/dev/shm")  # terminals; POSIX shared memory and semaphores
WRITE = ll.FS_ABI1 | ll.REFER | ll.TRUNCATE


class SandboxSettings(Struct):
    """What the user configured; the gate keeps one."""

    mode: Mode = "workspace-write"
    network: bool = True
    writable: list[str] = field(default_factory=list)  # more folders commands may write
    deny_read: list[str] = field(default_factory=list)  # more places commands may not read


class SandboxPolicy(Record):
    """The sandbox of one command, every path absolute and real."""

    mode: Mode
    network: bool
    writable: tuple[str, ...]  # the cwd, the roots, the settings' folders, the private tmp
    deny: tuple[str, ...]  # read and write
    tmpdir: str

    def temp_vars(self) -> dict[str, str]:
        """The variables that point a command's temporary files at the private folder."""
        return {"TMPDIR": self.tmpdir, "TMP": self.tmpdir, "TEMP": self.tmpdir}

    def describe(self) -> str:
        """One line for the model and the user: what this sandbox lets a command do."""
        if self.mode == "read-only":
            where = "nothing but $TMPDIR"
        else:
            where = "only inside the working directory, the roots and $TMPDIR"
        net = "" if self.network else "; no network"
        return f"uji's sandbox ({self.mode}): commands may write {where}, and cannot read ~/.ssh, ~/.aws, … or uji's data{net}"


def home_short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if path == home or path.startswith(home + os.sep) else path


def expand(path: str, cwd: str) -> str:
    return os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))


def tighten(settings: SandboxSettings, floor: SandboxSettings | None) -> SandboxSettings:
    """`settings`, never laxer than `floor` (a parent uji's): the stricter mode, no
    network unless both have it, every deny of both, and only the parent's extra
    writable folders."""
    if floor is None:
        return settings
    mode = floor.mode if STRICTNESS[floor.mode] > STRICTNESS[settings.mode] else settings.mode
    allowed = set(floor.writable)
    return SandboxSettings(
        mode=mode,
        network=settings.network and floor.network,
        writable=[p for p in settings.writable if os.path.realpath(os.path.expanduser(p)) in allowed],
        deny_read=list(dict.fromkeys([*settings.deny_read, *floor.deny_read])),
    )


def resolve(
    settings: SandboxSettings, cwd: str, roots: list[str], protected: list[str], tmpdir: str
) -> SandboxPolicy:
    """The policy for a command started now in `cwd`. `protected` are uji's own secret
    places (its data folder, its database)."""
    from uji.worktree import sandbox_writable

    writable = [tmpdir]
    if settings.mode == "workspace-write":
        # In a linked worktree (uji --worktree), what a commit there writes in the
        # repository's git folder; never the main checkout's files.
        writable += [cwd, *sandbox_writable(cwd), *roots, *settings.writable]
    deny = [*DEFAULT_DENY_READ, *settings.deny_read, *protected]
    return SandboxPolicy(
        mode=settings.mode,
        network=settings.network,
        writable=tuple(dict.fromkeys(expand(p, cwd) for p in writable)),
        deny=tuple(dict.fromkeys(expand(p, cwd) for p in deny)),
        tmpdir=tmpdir,
    )


def rules(policy: SandboxPolicy, listed: list[str] | None = None) -> list[tuple[str, int]]:
    """The Landlock rules of `policy`: (path, rights) pairs. The folders listed to split
    them are added to `listed` (their entries were read now: a new entry is not covered)."""
    granted: list[tuple[str, int]] = [("/", ll.READ)]
    granted += [(path, ll.READ | WRITE) for path in policy.writable]
    # A place that does not exist needs no split (nothing is there to read); /dev is
    # granted device by device (below), never whole.
    deny = [d for d in policy.deny if os.path.lexists(d)]
    seen: list[str] = [] if listed is None else listed
    out: list[tuple[str, int]] = []
    for path, rights in granted:
        out += _split(path, rights, [*deny, "/dev"] if path == "/" else deny, seen)
    # A folder that was split keeps the listing of its names (`ls ~`, `ls /`): names in a
    # denied folder can be listed, never read.
    out += [(d, ll.READ_DIR) for d in dict.fromkeys(seen)]
    out += [(dev, ll.READ_FILE | ll.WRITE_FILE | ll.TRUNCATE) for dev in DEVICES]
    out += [(d, ll.READ | WRITE) for d in DEVICE_DIRS]
    out += [(p, ll.READ_DIR) for p in ("/dev", "/dev/fd")]
    return out


def inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


def _split(path: str, rights: int, deny: list[str], listed: list[str]) -> list[tuple[str, int]]:
    """`rights` beneath `path`, except beneath each place in `deny`."""
    if any(inside(path, d) for d in deny):
        return []  # the whole tree is denied
    below = [d for d in deny if inside(d, path) and d != path]
    if not below:
        return [(path, rights)]
    try:
        names = os.listdir(path)
    except OSError:
        return []  # cannot list it: grant nothing in it rather than too much
    listed.append(path)
    # Each entry is granted whole, unless a denied place is it (nothing granted) or lies
    # beneath it (split again). A folder such as /tmp may hold thousands of entries: each
    # is looked up by its name, not compared with every denied place.
    prefix = path.rstrip(os.sep) + os.sep
    denied = {d[len(prefix) :] for d in below if os.sep not in d[len(prefix) :]}
    holding = {d[len(prefix) :].split(os.sep, 1)[0] for d in below} - denied
    out: list[tuple[str, int]] = []
    for name in names:
        if name in denied:
            continue
        child = prefix + name
        if name in holding:
            out += _split(child, rights, below, listed)
        else:
            out.append((child, rights))
    return out
