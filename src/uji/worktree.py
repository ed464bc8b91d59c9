"""A session in its own git worktree and branch (`uji --worktree [NAME]`, `uji run
--worktree`, `/worktree`), so that agents working in parallel never edit the same files.

Where: `<repository>/.uji/worktrees/NAME`, on a new branch `uji/NAME` from the commit
checked out now. Inside the repository rather than in uji's data folder: on the same
disk as the project (a repository on a mounted volume keeps its worktrees there), found
next to the code it belongs to, and gone with the repository. The folder holds a
`.gitignore` of `*`, so the main checkout never shows the worktrees as untracked files
and nobody's own `.gitignore` is edited. uji marks the worktrees it made (a file in the
worktree's git folder naming the branch and the commit it started from): only those are
offered for removal, and what they hold is counted from that commit.
"""

from __future__ import annotations

import json
import os
import re

from uji.record import Record

FOLDER = os.path.join(".uji", "worktrees")
BRANCH_PREFIX = "uji/"
MARK = "uji-worktree"  # in the worktree's git folder: {"branch", "base"}
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class WorktreeError(Exception):
    """A worktree could not be made, found or removed (the text says why)."""


class Worktree(Record):
    """A worktree uji made for sessions."""

    name: str
    path: str  # its top folder
    branch: str
    repo: str  # the main checkout
    base: str  # the commit it started from

    def describe(self) -> str:
        return f"{self.path} (branch {self.branch})"


class Changes(Record):
    """What a worktree holds that its starting commit does not."""

    files: int  # changed, added or untracked, not committed
    commits: int  # on its branch since it started

    @property
    def any(self) -> bool:
        return bool(self.files or self.commits)

    def describe(self) -> str:
        if not self.any:
            return "nothing changed"
        parts = []
        if self.files:
            parts.append(f"{self.files} uncommitted file{'s' if self.files != 1 else ''}")
        if self.commits:
            parts.append(f"{self.commits} commit{'s' if self.commits != 1 else ''}")
        return ", ".join(parts)


def valid_name(name: str) -> bool:
    """A worktree name: a folder name and a branch name both (letters, digits, `.`, `_`, `-`)."""
    return bool(NAME.fullmatch(name)) and ".." not in name and not name.endswith((".lock", "."))


def _git(cwd: str, *args: str) -> str:
    import subprocess

    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
        )
    except FileNotFoundError:
        raise WorktreeError("git is not installed: a worktree needs it") from None
    except subprocess.TimeoutExpired:
        raise WorktreeError(f"git {args[0]} took over 60 s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        raise WorktreeError(f"git {args[0]}: {said[-1] if said else f'exit code {done.returncode}'}")
    return done.stdout.strip()


def git_dirs(top: str) -> tuple[str, str] | None:
    """(its git folder, the repository's common one) of the work tree at `top`: `.git`
    twice for a main checkout, else where the `.git` file points and its `commondir`.
    Read from the files, without running git."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot):
        return dot, dot
    try:
        with open(dot, encoding="utf-8", errors="replace") as f:
            first = f.readline().strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = os.path.normpath(os.path.join(top, first[len("gitdir:") :].strip()))
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as f:
            return gitdir, os.path.normpath(os.path.join(gitdir, f.read().strip()))
    except OSError:
        return gitdir, gitdir


def sandbox_writable(cwd: str) -> list[str]:
    """What a command in a linked worktree must write to commit there: the worktree's own
    git folder, and the repository's objects, refs and logs. Not the repository's config
    or hooks (a command could make git run anything later), nor the main checkout's files.
    Nothing for a main checkout, whose `.git` is inside the working directory already."""
    from uji.paths import nearest

    top = nearest(os.path.realpath(cwd), lambda d: os.path.lexists(os.path.join(d, ".git")))
    dirs = git_dirs(top) if top is not None else None
    if dirs is None or dirs[0] == dirs[1]:
        return []
    gitdir, common = dirs
    return [gitdir, *(os.path.join(common, sub) for sub in ("objects", "refs", "logs"))]


def find(cwd: str) -> Worktree | None:
    """The worktree uji made that `cwd` is in, if any (read from the files)."""
    from uji.paths import nearest

    top = nearest(os.path.realpath(cwd), lambda d: os.path.lexists(os.path.join(d, ".git")))
    dirs = git_dirs(top) if top is not None else None
    if top is None or dirs is None or dirs[0] == dirs[1]:
        return None
    try:
        with open(os.path.join(dirs[0], MARK), encoding="utf-8") as f:
            mark = json.load(f)
        branch, base = str(mark["branch"]), str(mark["base"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Worktree(os.path.basename(top), top, branch, os.path.dirname(dirs[1]), base)


def _checkout(cwd: str) -> tuple[str, str]:
    """(the main checkout of the repository `cwd` is in, `cwd` relative to its work tree)."""
    try:
        top = _git(cwd, "rev-parse", "--show-toplevel")
    except WorktreeError:
        raise WorktreeError(f"{cwd} is not in a git repository: a worktree needs one") from None
    common = _git(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if os.path.basename(common) != ".git":
        raise WorktreeError("a bare repository has no checkout to make a worktree beside")
    rel = os.path.relpath(os.path.realpath(cwd), os.path.realpath(top))
    return os.path.realpath(os.path.dirname(common)), rel


def generated_name(repo: str) -> str:
    """A name for `--worktree` without one: the time, made unique in the folder."""
    import time

    base = time.strftime("wt-%Y%m%d-%H%M%S")
    name, n = base, 1
    while os.path.lexists(os.path.join(repo, FOLDER, name)):
        n += 1
        name = f"{base}-{n}"
    return name


def enter(cwd: str, name: str | None, create: bool = True) -> tuple[Worktree, str]:
    """The worktree NAME of the repository `cwd` is in, made if it is not there yet (from
    the commit checked out now, on a new branch `uji/NAME`), and the folder to run in: the
    one matching `cwd` inside it (a session started in `src/` goes on in its `src/`)."""
    repo, rel = _checkout(cwd)
    if name is None:
        name = generated_name(repo)
    if not valid_name(name):
        raise WorktreeError(
            f"{name!r} is not a worktree name: use letters, digits, `.`, `_` and `-` (up to 64)"
        )
    folder = os.path.join(repo, FOLDER)
    path = os.path.join(folder, name)
    if os.path.lexists(path):
        found = find(path)
        if found is None:
            raise WorktreeError(f"{path} exists but is not a worktree uji made; choose another name")
    elif not create:
        raise WorktreeError(f"no worktree {name} in {folder}")
    else:
        os.makedirs(folder, exist_ok=True)
        ignore = os.path.join(folder, ".gitignore")
        if not os.path.exists(ignore):
            with open(ignore, "w", encoding="utf-8") as f:
                f.write("# uji's worktrees (uji --worktree): not part of the project\n*\n")
        branch = BRANCH_PREFIX + name
        base = _git(repo, "rev-parse", "--verify", "HEAD^{commit}")
        if _git(repo, "branch", "--list", branch):  # left from an earlier one: check it out
            base = _git(repo, "merge-base", base, branch)
            _git(repo, "worktree", "add", path, branch)
        else:
            _git(repo, "worktree", "add", "-b", branch, path, base)
        gitdir = _git(path, "rev-parse", "--path-format=absolute", "--git-dir")
        with open(os.path.join(gitdir, MARK), "w", encoding="utf-8") as f:
            json.dump({"branch": branch, "base": base}, f)
        found = find(path)
        if found is None:
            raise WorktreeError(f"made {path}, but cannot read it back")
    run_in = os.path.normpath(os.path.join(found.path, rel))
    return found, run_in if os.path.isdir(run_in) else found.path


def changes(worktree: Worktree) -> Changes:
    status = _git(worktree.path, "status", "--porcelain", "--untracked-files=all")
    commits = _git(worktree.path, "rev-list", "--count", f"{worktree.base}..HEAD")
    return Changes(len([line for line in status.splitlines() if line.strip()]), int(commits or 0))


def remove(worktree: Worktree) -> str:
    """Remove the worktree and its branch, uncommitted work and all; say what was done."""
    _git(worktree.repo, "worktree", "remove", "--force", worktree.path)
    if os.path.lexists(worktree.path):
        raise WorktreeError(f"git left {worktree.path} in place")
    try:
        _git(worktree.repo, "branch", "-D", worktree.branch)
    except WorktreeError as e:
        return f"removed the worktree {worktree.path}; its branch {worktree.branch} stays ({e})"
    return f"removed the worktree {worktree.path} and its branch {worktree.branch}"


def kept(worktree: Worktree) -> str:
    """What to tell on leaving a worktree in place."""
    return (
        f"the worktree {worktree.describe()} is kept: uji resume there returns to it; remove it "
        f"with git worktree remove {worktree.path} && git branch -D {worktree.branch}"
    )
