"""Packs: plugin repositories cloned with git into `<data>/site/<name>`, each pinned to a
commit in `<config>/uji-lock.json` (`{name: {url, rev, reference?}}`, like lazy.nvim's
lock file).

Start-up fetches only what is missing, with a time limit, and checks out the locked
commit when there is one; `/sync` (update) fetches every pack, moves it to the newest
commit of its branch (or its pinned tag/commit) and rewrites the lock. A pack that fails
never stops the config: the caller turns the error into a notice.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Literal

from uji.paths import Paths
from uji.record import Struct

GIT_TIMEOUT = 120.0  # seconds for one git command; a stuck server cannot hold start-up longer
LOCK_NAME = "uji-lock.json"
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_SHORT = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


class PackError(Exception):
    pass


RefKind = Literal["tag", "branch", "commit"]  # what a pack's `ref` names
REF_KINDS: tuple[RefKind, ...] = ("tag", "branch", "commit")


class PackSpec(Struct):
    name: str
    url: str | None  # None for a {dir = ...} pack, which is never cloned
    ref: str | None = None  # a tag, branch or commit
    ref_kind: RefKind | None = None
    dir: str | None = None


def spec_from(raw: object, index: int) -> PackSpec:
    """A spec as `uji.pack.add` takes it: "owner/repo", a git URL, {url_or_short, tag=...},
    {url = ...}, {dir = ...}, each table with an optional `name`."""
    where = f"uji.pack.add: entry {index}"
    url: str | None = None
    directory: str | None = None
    ref: str | None = None
    kind: RefKind | None = None
    name: object = None
    if isinstance(raw, str):
        url = raw
    elif isinstance(raw, dict):
        first = raw.get(1)
        url = raw.get("url", first)
        directory = raw.get("dir")
        name = raw.get("name")
        for k in REF_KINDS:
            if raw.get(k) is not None:
                if ref is not None:
                    raise PackError(f"{where}: give one of tag, branch or commit")
                ref, kind = raw[k], k
        if ref is not None and not isinstance(ref, str):
            raise PackError(f"{where}: `{kind}` must be a string")
    else:
        raise PackError(f'{where} must be "owner/repo", a git URL or a table')
    if directory is not None:
        if not isinstance(directory, str) or not directory:
            raise PackError(f"{where}: `dir` must be a path")
        directory = os.path.abspath(os.path.expanduser(directory))
        url = None
    elif not isinstance(url, str) or not url:
        raise PackError(f'{where}: no repository (give "owner/repo", a git URL, url = ... or dir = ...)')
    else:
        url = expand_url(url)
    if name is None:
        base = (directory or url or "").rstrip("/").rsplit("/", 1)[-1]
        name = base[:-4] if base.endswith(".git") else base
    if not isinstance(name, str) or not _NAME.match(name) or name in (".", ".."):
        raise PackError(f"{where}: the name {name!r} is not a plain directory name")
    return PackSpec(name, url, ref, kind, directory)


def expand_url(url: str) -> str:
    """ "owner/repo" is a GitHub repository; anything else is a git URL as given."""
    if _SHORT.match(url) and not url.startswith("."):
        return f"https://github.com/{url}"
    return url


class Packs:
    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.specs: dict[str, PackSpec] = {}
        self.roots: dict[str, str] = {}  # name → the pack's directory, once installed

    @property
    def site(self) -> str:
        return os.path.join(self.paths.data, "site")

    @property
    def lock_path(self) -> str:
        return os.path.join(self.paths.config, LOCK_NAME)

    def read_lock(self) -> dict[str, dict[str, str]]:
        try:
            with open(self.lock_path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _write_lock(self, lock: dict[str, dict[str, str]]) -> None:
        os.makedirs(self.paths.config, exist_ok=True)
        tmp = self.lock_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(lock, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.lock_path)

    def all_roots(self) -> list[str]:
        """The roots: the config dir first, then each installed pack in the order added."""
        return [self.paths.config, *self.roots.values()]

    async def add(self, spec: PackSpec) -> str:
        """Install `spec` if it is missing (at its locked commit when there is one) and
        return its root. Raises PackError."""
        self.specs[spec.name] = spec
        if spec.dir is not None:
            if not os.path.isdir(spec.dir):
                raise PackError(f"no directory {spec.dir}")
            self.roots[spec.name] = spec.dir
            return spec.dir
        assert spec.url is not None
        root = os.path.join(self.site, spec.name)
        lock = self.read_lock()
        locked = lock.get(spec.name, {})
        if not os.path.isdir(os.path.join(root, ".git")):
            rev = locked.get("rev") if locked.get("url") == spec.url else None
            await self._clone(spec, root, rev)
        rev = await _git(root, "rev-parse", "HEAD")
        if locked.get("rev") != rev or locked.get("url") != spec.url:
            self._record(spec, rev)
        self.roots[spec.name] = root
        return root

    async def update(self) -> list[str]:
        """/sync: every added pack fetched and moved to its ref's newest commit; the lock
        rewritten. Returns one line per pack (what happened, or why it failed)."""
        lines = []
        for spec in list(self.specs.values()):
            if spec.url is None:
                lines.append(f"{spec.name}: a local directory, not synced")
                continue
            root = os.path.join(self.site, spec.name)
            try:
                if not os.path.isdir(os.path.join(root, ".git")):
                    await self._clone(spec, root, None)
                    before = ""
                else:
                    before = await _git(root, "rev-parse", "HEAD")
                    await _git(root, "fetch", "--quiet", "--tags", "origin")
                    target = await self._target(spec, root)
                    await _git(root, "reset", "--quiet", "--hard", target)
                rev = await _git(root, "rev-parse", "HEAD")
            except PackError as e:
                lines.append(f"{spec.name}: {e}")
                continue
            self._record(spec, rev)
            self.roots[spec.name] = root
            if before == rev:
                lines.append(f"{spec.name}: up to date at {rev[:12]}")
            else:
                lines.append(f"{spec.name}: {before[:12] or 'installed'} -> {rev[:12]}")
        return lines

    async def _target(self, spec: PackSpec, root: str) -> str:
        if spec.ref_kind == "commit" and spec.ref:
            return spec.ref
        if spec.ref_kind == "tag" and spec.ref:
            return f"refs/tags/{spec.ref}"
        if spec.ref:
            return f"origin/{spec.ref}"
        # origin/HEAD as the remote has it now
        await _git(root, "remote", "set-head", "origin", "--auto")
        return "origin/HEAD"

    async def _clone(self, spec: PackSpec, root: str, rev: str | None) -> None:
        assert spec.url is not None
        os.makedirs(self.site, exist_ok=True)
        tmp = root + ".part"
        await _remove(tmp)
        pinned = rev or (spec.ref if spec.ref_kind == "commit" else None)
        args = ["clone", "--quiet"]
        if pinned is None:
            args += ["--depth", "1"]
            if spec.ref:
                args += ["--branch", spec.ref]
        args += ["--", spec.url, tmp]
        try:
            await _git(None, *args)
            if pinned is not None:
                await _git(tmp, "checkout", "--quiet", "--detach", pinned)
        except PackError:
            await _remove(tmp)
            raise
        os.replace(tmp, root)

    def _record(self, spec: PackSpec, rev: str) -> None:
        assert spec.url is not None
        lock = self.read_lock()
        entry = {"url": spec.url, "rev": rev}
        if spec.ref:
            entry["reference"] = spec.ref
        lock[spec.name] = entry
        self._write_lock(lock)


async def _remove(path: str) -> None:
    import shutil

    if os.path.lexists(path):
        await asyncio.to_thread(shutil.rmtree, path, True)


async def _git(cwd: str | None, *args: str) -> str:
    """Runs git without a terminal prompt (a private repository fails instead of asking),
    within GIT_TIMEOUT; its output, or PackError with what git said."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="", SSH_ASKPASS="", LC_ALL="C")
    env["GIT_SSH_COMMAND"] = env.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as e:
        raise PackError(f"cannot run git: {e.strerror}") from None
    try:
        async with asyncio.timeout(GIT_TIMEOUT):
            out, err = await proc.communicate()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise PackError(f"git {args[0]} took longer than {GIT_TIMEOUT:.0f} s") from None
    except asyncio.CancelledError:
        proc.kill()
        await proc.wait()
        raise
    if proc.returncode != 0:
        lines = err.decode("utf-8", "replace").strip().splitlines()
        said = next((line for line in lines if line.startswith(("fatal:", "error:"))), None)
        said = said or (lines[-1] if lines else f"exit {proc.returncode}")
        raise PackError(f"git {args[0]} failed: {said}")
    return out.decode("utf-8", "replace").strip()
