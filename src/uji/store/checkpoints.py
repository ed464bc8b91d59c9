"""Checkpoints of the working tree, one before each turn, so `/rewind` can put files back.

They live in a shadow git repository of uji's own, outside the project:
`<data>/checkpoints/<key>/` is its GIT_DIR, the project its GIT_WORK_TREE, with a
persistent index of its own (GIT_INDEX_FILE). git runs with an environment built from
scratch: no system or global config, HOME pointed into the shadow directory, hooks off,
no GIT_* variable of the user's. The user's repository, index, stash and hooks are never
read by git nor written: uji only reads the text of `.git/info/exclude`.

Two modes, chosen by where uji runs:

- **In a git work tree** (a `.git` in the working directory or above it), the project
  is that work tree and each checkpoint is a snapshot of all of it, as `git add -A`
  would stage it: the project's `.gitignore` files, its `.git/info/exclude` and the
  user's global ignore file are respected, files over `MAX_FILE_BYTES` are skipped. The
  snapshot is incremental: `git ls-files -m -o -d` against the persistent index lists
  what changed since the last one, and only that is hashed. So whatever a turn changed
  — the file tools' writes and what `run_command` did — can be put back.
- **Anywhere else**, the project is the working directory, but uji does not walk it
  (it may be a home directory): a snapshot covers the files uji's file tools wrote or
  are about to write. Before the first write of a file in a turn, its pre-image is
  added to that turn's checkpoint ("captured"), or noted as absent.

In both modes a file tool's first write in a turn captures the pre-image of a file the
snapshot does not cover (an ignored or a big file, or any file outside git).

Each turn has two refs: `refs/uji/<session>/<seq>` (the commit of the state before the
turn, whose message holds JSON: seq, time, `prev` — the tree uji last left before the
turn — and `captured`) and `refs/uji/<session>/<seq>-end` (the state the turn left;
its message lists the files it changed, with line counts). `refs/uji/last` (a tree) is
what uji last left in the project (a turn's end, or a restore). Refs are loose files written
here directly; gc never packs them.

Restoring to before turn j: each path that differs between the checkpoint and now is
written back from the checkpoint, or deleted when the turn (or a later one) created
it. A path a later turn captured is put back as it was when that turn first wrote it.
A path whose content now differs from what uji last left — changed outside uji since —
makes the restore refuse, unless forced; so does one changed between two turns (the
`prev` of each later turn against its checkpoint).

Pruning: refs older than `MAX_AGE_DAYS` go, then the oldest sessions' refs while the
repository is over `MAX_BYTES`, then `git gc` (at most once a day, in the background).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import subprocess
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from uji.paths import nearest
from uji.record import Struct, field

MAX_FILE_BYTES = 5 * 1024 * 1024  # larger files are not checkpointed
MAX_AGE_DAYS = 7  # checkpoints older than this are pruned
MAX_BYTES = 500 * 1024 * 1024  # per project; the oldest sessions' checkpoints go first
MAX_NEW_PATHS = 200_000  # a first snapshot bigger than this is refused (a home directory)
GIT_TIMEOUT = 120.0  # seconds; a first snapshot of a big tree may take a while
GC_EVERY = 24 * 3600
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git knows it without storing it

_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tfilemode = true
\tbare = false
\thooksPath = /dev/null
\tfsmonitor = false
\tautocrlf = false
\tsafecrlf = false
\tsymlinks = true
\tquotePath = false
\tcompression = 1
\tlooseCompression = 1
\tuntrackedCache = false
[gc]
\tauto = 0
\tpackRefs = false
\tpruneExpire = 1.hour.ago
\treflogExpire = now
\treflogExpireUnreachable = now
[maintenance]
\tauto = false
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
"""


class CheckpointError(Exception):
    """A checkpoint could not be taken or restored (the text says why)."""


def find_work_tree(cwd: str) -> str | None:
    """The top of the git work tree `cwd` is in (a `.git` entry in it or above), or None."""
    return nearest(os.path.abspath(cwd), lambda d: os.path.lexists(os.path.join(d, ".git")))


def _user_git_dir(root: str) -> str | None:
    """The user's git directory of the work tree at `root` (`.git`, or for a linked
    worktree the repository's common one), read only for its info/exclude."""
    from uji.worktree import git_dirs

    dirs = git_dirs(root)
    return dirs[1] if dirs is not None else None


def _global_excludes() -> str | None:
    """The user's global ignore file at git's default place, if there is one."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    path = os.path.join(xdg, "git", "ignore")
    return path if os.path.isfile(path) else None


class ChangedFile(Struct):
    path: str
    added: int | None  # lines; None for a binary file
    deleted: int | None

    def stat(self) -> str:
        if self.added is None or self.deleted is None:
            return f"{self.path} (binary)"
        return f"{self.path} +{self.added} -{self.deleted}"


class TurnPoint(Struct):
    """A turn's checkpoint: the state before the turn with user message `seq`."""

    seq: int
    time: float
    files: list[ChangedFile] | None  # what the turn changed; None if it never ended


class Plan(Struct):
    """What restoring a checkpoint would do."""

    seq: int
    write: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (mode, blob)
    delete: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # changed outside uji since

    @property
    def paths(self) -> list[str]:
        return sorted([*self.write, *self.delete])


class _Turn(Struct):
    """The turn being run: its checkpoint commit and the paths it captured."""

    session: str
    seq: int
    commit: str = ""
    tree: str = ""
    prev: str | None = None
    captured: dict[str, bool] = field(default_factory=dict)
    wrote: bool = False  # a tool ran that may have changed files


class Checkpoints:
    """The shadow repository of one project (the work tree `cwd` is in, or `cwd`)."""

    def __init__(self, data_dir: str, cwd: str, max_file_bytes: int = MAX_FILE_BYTES) -> None:
        cwd = os.path.realpath(cwd)
        top = find_work_tree(cwd)
        self.git_mode = top is not None
        self.root = top if top is not None else cwd
        key = hashlib.sha256(os.fsencode(self.root)).hexdigest()[:20]
        self.dir = os.path.join(data_dir, "checkpoints", key)
        self.max_file_bytes = max_file_bytes
        self._lock = threading.Lock()  # one git operation at a time in this process
        self._ready = False
        self._env: dict[str, str] | None = None
        self._git_args: list[str] = []
        self.current: _Turn | None = None

    # -- git ---------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        if self._env is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env.update(
                GIT_DIR=self.dir,
                GIT_WORK_TREE=self.root,
                GIT_INDEX_FILE=os.path.join(self.dir, "uji-index"),
                GIT_CONFIG_NOSYSTEM="1",
                GIT_CONFIG_GLOBAL=os.devnull,
                GIT_TERMINAL_PROMPT="0",
                GIT_OPTIONAL_LOCKS="0",
                GIT_LITERAL_PATHSPECS="1",
                GIT_AUTHOR_NAME="uji",
                GIT_AUTHOR_EMAIL="uji@localhost",
                GIT_COMMITTER_NAME="uji",
                GIT_COMMITTER_EMAIL="uji@localhost",
                HOME=self.dir,
                XDG_CONFIG_HOME=os.path.join(self.dir, "xdg"),
                LC_ALL="C",
            )
            self._env = env
            excludes = _global_excludes()
            self._git_args = ["-c", f"core.excludesFile={excludes}"] if excludes else []
        return self._env

    def _git(self, *args: str, stdin: bytes | None = None, check: bool = True) -> bytes:
        env = self._environment()
        try:
            done = subprocess.run(
                ["git", *self._git_args, *args],
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                env=env,
                cwd=self.root,
                timeout=GIT_TIMEOUT,
            )
        except FileNotFoundError:
            raise CheckpointError("checkpoints need git, which is not installed") from None
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"git {args[0]} took over {GIT_TIMEOUT:.0f}s") from None
        if check and done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {err[-1] if err else done.returncode}")
        return done.stdout

    def _git_parallel(self, *commands: list[str]) -> list[bytes]:
        """Read-only git commands run side by side (two cores halve a snapshot's stat walk)."""
        env = self._environment()
        procs: list[subprocess.Popen[bytes]] = []
        try:
            for args in commands:
                procs.append(
                    subprocess.Popen(
                        ["git", *self._git_args, *args],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        env=env,
                        cwd=self.root,
                    )
                )
            outs: list[bytes] = []
            for args, proc in zip(commands, procs, strict=True):
                out, err = proc.communicate(timeout=GIT_TIMEOUT)
                if proc.returncode != 0:
                    lines = err.decode("utf-8", "replace").strip().splitlines()
                    raise CheckpointError(f"git {args[0]} failed: {lines[-1] if lines else proc.returncode}")
                outs.append(out)
            return outs
        except FileNotFoundError:
            raise CheckpointError("checkpoints need git, which is not installed") from None
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"git took over {GIT_TIMEOUT:.0f}s") from None
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """This process's lock, and a file lock for other uji processes in the project."""
        with self._lock:
            self._ensure_repo()
            fd = os.open(os.path.join(self.dir, "uji.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    def _ensure_repo(self) -> None:
        if self._ready:
            return
        if not os.path.isfile(os.path.join(self.dir, "HEAD")):
            os.makedirs(self.dir, mode=0o700, exist_ok=True)
            self._git("init", "-q", "--template=")
            with open(os.path.join(self.dir, "uji-root"), "w", encoding="utf-8") as f:
                f.write(self.root + "\n")
        config = os.path.join(self.dir, "config")
        try:
            with open(config, encoding="utf-8") as f:
                current = f.read()
        except OSError:
            current = None
        if current != _CONFIG:  # kept as uji writes it, rewritten only when it differs
            with open(config, "w", encoding="utf-8") as f:
                f.write(_CONFIG)
        self._ready = True

    def _sync_excludes(self) -> None:
        """The project's info/exclude, copied into the shadow repository's."""
        lines = ""
        user = _user_git_dir(self.root) if self.git_mode else None
        if user is not None:
            exclude = os.path.join(user, "info", "exclude")
            with contextlib.suppress(OSError), open(exclude, encoding="utf-8", errors="replace") as f:
                lines = f.read()
        path = os.path.join(self.dir, "info", "exclude")
        try:
            with open(path, encoding="utf-8") as f:
                if f.read() == lines:
                    return
        except OSError:
            pass
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(lines)

    # -- refs ----------------------------------------------------------------------

    def _ref_path(self, name: str) -> str:
        return os.path.join(self.dir, *name.split("/"))

    def _write_ref(self, name: str, sha: str) -> None:
        path = self._ref_path(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="ascii") as f:
            f.write(sha + "\n")
        os.replace(tmp, path)

    def _read_ref(self, name: str) -> str | None:
        try:
            with open(self._ref_path(name), encoding="ascii") as f:
                value = f.read().strip()
        except (OSError, ValueError):
            return None
        return value if len(value) == 40 else None

    def _session_refs(self, session: str) -> dict[int, tuple[str | None, str | None]]:
        """seq -> (start commit, end commit) of the session's checkpoints."""
        folder = self._ref_path(f"refs/uji/{session}")
        found: dict[int, tuple[str | None, str | None]] = {}
        try:
            names = os.listdir(folder)
        except OSError:
            return found
        for name in names:
            number, _, end = name.partition("-")
            if not number.isdigit() or end not in ("", "end"):
                continue
            sha = self._read_ref(f"refs/uji/{session}/{name}")
            start, finish = found.get(int(number), (None, None))
            found[int(number)] = (start, sha) if end else (sha, finish)
        return found

    # -- snapshots -------------------------------------------------------------------

    def _snapshot(self, extra: Iterable[str] = ()) -> str:
        """Bring the shadow index up to the work tree and return its tree (under the lock).
        `extra`: paths to take along even if ignored (the file tools' captures)."""
        if not self.git_mode and not extra and self._index_empty():
            return EMPTY_TREE  # outside git, before any file tool wrote here: nothing to look at
        self._sync_excludes()
        # Changed and deleted files (diff-files stats the index's files in threads), and in
        # a git work tree the new ones, as `git add -A` would find them.
        commands = [["diff-files", "--name-only", "-z", "--no-renames"]]
        if self.git_mode:
            commands.append(["ls-files", "-z", "-o", "--exclude-standard"])
        outs = self._git_parallel(*commands)
        names = [p for out in outs for p in out.split(b"\0") if p and not p.endswith(b"/")]
        for path in extra:
            names.append(os.fsencode(path))
        changed = list(dict.fromkeys(names))
        if len(changed) > MAX_NEW_PATHS:
            raise CheckpointError(
                f"{self.root} has over {MAX_NEW_PATHS} files to checkpoint; checkpoints are off here"
            )
        add: list[bytes] = []
        drop: list[bytes] = []
        root = os.fsencode(self.root)
        for name in changed:
            link = self._link_on_the_way(root, name)
            if link is not None:
                # A folder became a link: its files are gone from the work tree (git will
                # not add a path beyond a link), and the link is new.
                drop.append(name)
                add.append(link)
                continue
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                add.append(name)  # gone: `add -A` removes it from the index
                continue
            if stat.S_ISREG(st.st_mode):
                (drop if st.st_size > self.max_file_bytes else add).append(name)
            elif stat.S_ISLNK(st.st_mode):
                add.append(name)
        if add:
            self._git(
                "add", "-A", "-f", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
                stdin=b"\0".join(add), check=False,
            )  # fmt: skip
        if drop:
            self._git(
                "rm", "--cached", "-f", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul",
                stdin=b"\0".join(drop), check=False,
            )  # fmt: skip
        return self._git("write-tree").decode().strip()

    @staticmethod
    def _link_on_the_way(root: bytes, name: bytes) -> bytes | None:
        """The first folder of `name` (relative) that is a symlink, or None."""
        parts = name.split(b"/")[:-1]
        for i in range(len(parts)):
            if os.path.islink(os.path.join(root, *parts[: i + 1])):
                return b"/".join(parts[: i + 1])
        return None

    def _commit(self, tree: str, meta: dict[str, Any]) -> str:
        """A commit of `tree` whose message is `meta` as JSON, written as a loose object
        here (what `git commit-tree` does, without a process: a turn pays two of them)."""
        stamp = f"uji <uji@localhost> {int(time.time())} +0000"
        message = json.dumps(meta, separators=(",", ":"))
        body = f"tree {tree}\nauthor {stamp}\ncommitter {stamp}\n\n{message}\n".encode()
        raw = b"commit %d\0" % len(body) + body
        sha = hashlib.sha1(raw).hexdigest()
        path = os.path.join(self.dir, "objects", sha[:2], sha[2:])
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(zlib.compress(raw, 1))
            os.replace(tmp, path)
        return sha

    def _index_empty(self) -> bool:
        """Whether the shadow index holds no file (its header's entry count is 0)."""
        try:
            with open(os.path.join(self.dir, "uji-index"), "rb") as f:
                head = f.read(12)
        except FileNotFoundError:
            return True
        return len(head) == 12 and head[:4] == b"DIRC" and int.from_bytes(head[8:12], "big") == 0

    def _meta(self, commit: str) -> tuple[str, dict[str, Any]]:
        """A checkpoint commit's tree and JSON message."""
        raw = self._git("cat-file", "commit", commit)
        head, _, body = raw.partition(b"\n\n")
        tree = head.split(b"\n", 1)[0].split(b" ", 1)[1].decode()
        try:
            meta = json.loads(body.decode("utf-8", "replace"))
        except ValueError:
            meta = {}
        return tree, meta if isinstance(meta, dict) else {}

    # -- a turn ------------------------------------------------------------------------

    def begin(self, session: str, seq: int) -> None:
        """The checkpoint before turn `seq` (blocking: run it in a thread)."""
        turn = _Turn(session, seq)
        self.current = turn
        with self._locked():
            turn.prev = self._read_ref("refs/uji/last")  # a tree
            turn.tree = self._snapshot()
            self._save_start(turn)

    def _save_start(self, turn: _Turn) -> None:
        meta = {"seq": turn.seq, "time": time.time(), "prev": turn.prev, "captured": turn.captured}
        turn.commit = self._commit(turn.tree, meta)
        self._write_ref(f"refs/uji/{turn.session}/{turn.seq}", turn.commit)

    def relative(self, path: str) -> str | None:
        """`path` (absolute) relative to the project, or None if outside it or in .git."""
        rel = os.path.relpath(os.path.normpath(path), self.root)
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            return None
        if rel.split(os.sep)[0] == ".git":
            return None
        return rel

    def capture(self, path: str) -> None:
        """Before a file tool writes `path` (absolute): keep its pre-image in the turn's
        checkpoint if the snapshot does not have it (blocking)."""
        turn = self.current
        # A write through a symlink changes the file it points to: that is the pre-image
        # to keep (the link itself is left as it is).
        rel = self.relative(os.path.realpath(path))
        if turn is None or rel is None or rel in turn.captured:
            return
        turn.wrote = True
        with self._locked():
            if self._in_tree(turn.tree, rel):
                return
            try:
                st = os.lstat(os.path.join(self.root, rel))
            except OSError:
                turn.captured[rel] = False  # the turn creates it
                self._save_start(turn)
                return
            if not (stat.S_ISREG(st.st_mode) and st.st_size <= self.max_file_bytes):
                return  # not something uji keeps: left alone by a restore
            self._git("update-index", "--add", "--", rel)
            turn.captured[rel] = True
            turn.tree = self._git("write-tree").decode().strip()
            self._save_start(turn)

    def _in_tree(self, tree: str, rel: str) -> bool:
        out = self._git("ls-tree", "-z", "--name-only", tree, "--", rel)
        return bool(out.strip(b"\0"))

    def end(self) -> None:
        """The state the turn left (blocking); lists what it changed."""
        turn, self.current = self.current, None
        if turn is None or not turn.commit:
            return
        with self._locked():
            # No tool ran that could change a file: the turn left what it found (a file
            # changed meanwhile was changed outside uji).
            tree = self._snapshot(list(turn.captured)) if turn.wrote else turn.tree
            files = self._numstat(turn.tree, tree)
            commit = self._commit(tree, {"seq": turn.seq, "time": time.time(), "files": files})
            self._write_ref(f"refs/uji/{turn.session}/{turn.seq}-end", commit)
            self._write_ref("refs/uji/last", tree)

    def discard(self) -> None:
        """Forget the turn's checkpoint (taken too late to be the state before it)."""
        turn, self.current = self.current, None
        if turn is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._ref_path(f"refs/uji/{turn.session}/{turn.seq}"))

    def touched(self) -> None:
        """A tool ran that may have changed files (run_command)."""
        if self.current is not None:
            self.current.wrote = True

    def _numstat(self, a: str, b: str) -> list[list[Any]]:
        if a == b:
            return []
        out = self._git("diff-tree", "-r", "-z", "--numstat", "--no-renames", a, b)
        rows: list[list[Any]] = []
        parts = out.split(b"\0")
        for part in parts:
            if not part:
                continue
            fields = part.split(b"\t", 2)
            if len(fields) != 3:
                continue
            added, deleted, name = fields
            rows.append(
                [
                    os.fsdecode(name),
                    int(added) if added.isdigit() else None,
                    int(deleted) if deleted.isdigit() else None,
                ]
            )
        return rows

    # -- reading ------------------------------------------------------------------------

    def turns(self, session: str) -> dict[int, TurnPoint]:
        """The session's checkpoints by seq."""
        refs = self._session_refs(session)
        if not refs:
            return {}
        out: dict[int, TurnPoint] = {}
        with self._locked():
            for seq, (start, finish) in refs.items():
                if start is None:
                    continue
                _, meta = self._meta(start)
                files: list[ChangedFile] | None = None
                if finish is not None:
                    _, end_meta = self._meta(finish)
                    files = [
                        ChangedFile(str(r[0]), r[1], r[2])
                        for r in end_meta.get("files") or []
                        if isinstance(r, list) and len(r) == 3
                    ]
                out[seq] = TurnPoint(seq, float(meta.get("time") or 0), files)
        return out

    # -- restoring ------------------------------------------------------------------------

    def plan(self, session: str, seq: int) -> Plan:
        """What restoring the files to before turn `seq` would write and delete."""
        refs = self._session_refs(session)
        if seq not in refs or refs[seq][0] is None:
            raise CheckpointError(f"no checkpoint of the files before that turn (message {seq})")
        later = sorted(s for s, (start, _) in refs.items() if s >= seq and start is not None)
        plan = Plan(seq)
        with self._locked():
            now = self._snapshot()
            metas = {s: self._meta(refs[s][0] or "") for s in later}
            target = metas[seq][0]
            # A path no checkpoint had before a later turn captured it: as it was then.
            overlay: dict[str, tuple[bool, int]] = {}
            for s in reversed(later):
                for path, present in (metas[s][1].get("captured") or {}).items():
                    overlay[path] = (bool(present), s)
            changes = self._diff(target, now)
            self._plan_changed(plan, changes, overlay, metas)
            for path, (present, s) in overlay.items():
                if present and path not in changes and s != seq and not self._in_tree(target, path):
                    found = self._entry(metas[s][0], path)
                    if found is not None and found != self._entry(now, path):
                        plan.write[path] = found
            plan.conflicts = self._outside_changes(now, later, metas, set(plan.paths))
        return plan

    def _plan_changed(
        self,
        plan: Plan,
        changes: dict[str, tuple[str, str, str, str]],
        overlay: dict[str, tuple[bool, int]],
        metas: dict[int, tuple[str, dict[str, Any]]],
    ) -> None:
        """Each path changed since the checkpoint: written back as it was, or as a later
        turn captured it (a path the checkpoint did not have yet), or deleted."""
        for path, (src_mode, src_sha, _dst_mode, _dst_sha) in changes.items():
            if src_mode != "000000":
                plan.write[path] = (src_mode, src_sha)
            elif path in overlay and overlay[path][1] != plan.seq and overlay[path][0]:
                found = self._entry(metas[overlay[path][1]][0], path)
                if found is not None:
                    plan.write[path] = found
            else:
                plan.delete.append(path)

    def _entry(self, tree: str, path: str) -> tuple[str, str] | None:
        out = self._git("ls-tree", "-z", tree, "--", path)
        for line in out.split(b"\0"):
            head, _, name = line.partition(b"\t")
            if os.fsdecode(name) == path:
                mode, kind, sha = head.decode().split(" ")
                return (mode, sha) if kind == "blob" else None
        return None

    def _diff(self, a: str, b: str) -> dict[str, tuple[str, str, str, str]]:
        """path -> (mode in a, blob in a, mode in b, blob in b) for each path that differs."""
        if a == b:
            return {}
        out = self._git("diff-tree", "-r", "-z", "--no-renames", a, b)
        parts = out.split(b"\0")
        found: dict[str, tuple[str, str, str, str]] = {}
        i = 0
        while i + 1 < len(parts):
            head = parts[i].decode()
            if not head.startswith(":"):
                i += 1
                continue
            src_mode, dst_mode, src_sha, dst_sha, _status = head[1:].split(" ")
            found[os.fsdecode(parts[i + 1])] = (src_mode, src_sha, dst_mode, dst_sha)
            i += 2
        return found

    def _outside_changes(
        self, now: str, later: list[int], metas: dict[int, tuple[str, dict[str, Any]]], touched: set[str]
    ) -> list[str]:
        """The paths of `touched` changed outside uji: now against what uji last left, and
        between turns (what the turn before left against the next turn's checkpoint)."""
        found: set[str] = set()
        last = self._read_ref("refs/uji/last")
        if last is not None:
            found |= set(self._diff(last, now))
        for s in later[1:]:
            tree, meta = metas[s]
            prev = meta.get("prev")
            if isinstance(prev, str) and len(prev) == 40:
                captured = set(meta.get("captured") or {})
                found |= {p for p in self._diff(prev, tree) if p not in captured}
        return sorted(found & touched)

    def restore(self, plan: Plan, session: str) -> None:
        """Write and delete what `plan` says, then record the result as what uji left."""
        with self._locked():
            root = self.root
            full_paths = {
                path: self._safe(path) for path in [*plan.delete, *plan.write]
            }  # all, before any change
            # Deletes first: a file the turn replaced by a folder is written back only
            # after the folder's files are gone, and a folder replaced by a file is made
            # again only after the file is.
            for path in plan.delete:
                full = full_paths[path]
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(full)
                parent = os.path.dirname(full)
                while parent != root and parent.startswith(root + os.sep):
                    try:
                        os.rmdir(parent)  # only when the turn left it empty
                    except OSError:
                        break
                    parent = os.path.dirname(parent)
            blobs = self._blobs([sha for _, sha in plan.write.values()])
            for path, (mode, sha) in plan.write.items():
                full = full_paths[path]
                self._no_link_out(path, os.path.dirname(full))
                os.makedirs(os.path.dirname(full), exist_ok=True)
                if os.path.isdir(full) and not os.path.islink(full):
                    shutil.rmtree(full)
                data = blobs[sha]
                tmp = os.path.join(os.path.dirname(full), f".{os.path.basename(full)[:40]}.uji-restore")
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                if mode == "120000":
                    os.symlink(os.fsdecode(data), tmp)
                else:
                    with open(tmp, "wb") as f:
                        f.write(data)
                    os.chmod(tmp, 0o755 if mode == "100755" else 0o644)
                os.replace(tmp, full)
            self._write_ref("refs/uji/last", self._snapshot(list(plan.write)))

    def _no_link_out(self, path: str, folder: str) -> None:
        """Refuse to write `path` when its nearest existing folder is a link out of the
        project (the turn replaced a folder by one): the write would land outside."""
        while not os.path.lexists(folder):
            folder = os.path.dirname(folder)
        real = os.path.realpath(folder)
        if real != self.root and self.relative(real) is None:
            raise CheckpointError(f"refusing to restore {path!r}: a link on its way leaves the project")

    def drop_turns(self, session: str, since: int) -> None:
        """Forget the session's checkpoints of turns `since` and later (the conversation
        was rewound past them)."""
        for seq, _ in self._session_refs(session).items():
            if seq >= since:
                for name in (f"{seq}", f"{seq}-end"):
                    with contextlib.suppress(OSError):
                        os.unlink(self._ref_path(f"refs/uji/{session}/{name}"))

    def _safe(self, path: str) -> str:
        full = os.path.normpath(os.path.join(self.root, path))
        if self.relative(full) is None or os.path.isabs(path):
            raise CheckpointError(f"refusing to restore {path!r}: outside the project")
        return full

    def _blobs(self, shas: list[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        out = self._git("cat-file", "--batch", stdin="".join(f"{s}\n" for s in wanted).encode())
        found: dict[str, bytes] = {}
        pos = 0
        for sha in wanted:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].split(b" ")
            if len(header) != 3:
                raise CheckpointError(f"missing object {sha} in the checkpoints")
            size = int(header[2])
            found[sha] = out[nl + 1 : nl + 1 + size]
            pos = nl + 1 + size + 1
        return found

    # -- pruning ------------------------------------------------------------------------

    def prune(self, now: float | None = None, max_bytes: int = MAX_BYTES) -> int:
        """Drop checkpoints older than MAX_AGE_DAYS, then the oldest sessions' while the
        repository is over `max_bytes`; gc when something went (at most once a day).
        Returns how many refs went."""
        now = time.time() if now is None else now
        base = self._ref_path("refs/uji")
        if not os.path.isdir(base):
            return 0
        sessions: list[tuple[float, str]] = []
        dropped = 0
        for session in os.listdir(base):
            folder = os.path.join(base, session)
            if not os.path.isdir(folder):
                continue
            newest = 0.0
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    mtime = os.stat(path).st_mtime
                    if now - mtime > MAX_AGE_DAYS * 86400:
                        os.unlink(path)
                        dropped += 1
                    else:
                        newest = max(newest, mtime)
            if newest:
                sessions.append((newest, session))
            else:
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
        sessions.sort()
        # Over the size cap: the oldest sessions go, a few at a time, never one used in
        # the last hour (bounded: each round drops at least one session).
        rounds = 0
        while sessions and rounds < 10 and now - sessions[0][0] > 3600 and self._size() > max_bytes:
            rounds += 1
            for _ in range(max(1, len(sessions) // 4)):
                if not sessions or now - sessions[0][0] <= 3600:
                    break
                _, session = sessions.pop(0)
                folder = os.path.join(base, session)
                dropped += len(os.listdir(folder))
                shutil.rmtree(folder, ignore_errors=True)
            self._gc(now, force=True)
        if dropped:
            self._gc(now)
        return dropped

    def _size(self) -> int:
        total = 0
        for folder, _, files in os.walk(os.path.join(self.dir, "objects")):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_size
        return total

    def _gc(self, now: float, force: bool = False) -> None:
        stamp = os.path.join(self.dir, "uji-gc")
        with contextlib.suppress(OSError):
            if not force and now - os.stat(stamp).st_mtime < GC_EVERY:
                return
        # Under the file lock no snapshot is half made, so nothing unreferenced is in use
        # (the shadow index counts as a reference: gc reads GIT_INDEX_FILE).
        with self._locked():
            self._git("gc", "-q", "--prune=now", check=False)
        with open(stamp, "w", encoding="ascii") as f:
            f.write(f"{now}\n")


def prune_in_background(checkpoints: Checkpoints, on_error: Callable[[str], None]) -> None:
    """Prune in a thread of its own: it never delays a turn. Not a daemon: a short `uji
    run` waits for it at exit rather than kill a `git gc` halfway."""

    def run() -> None:
        try:
            checkpoints.prune()
        except Exception as e:
            on_error(f"pruning checkpoints failed: {e}")

    threading.Thread(target=run, name="uji-checkpoint-prune").start()


__all__ = [
    "MAX_FILE_BYTES",
    "ChangedFile",
    "CheckpointError",
    "Checkpoints",
    "Plan",
    "TurnPoint",
    "find_work_tree",
    "prune_in_background",
]
