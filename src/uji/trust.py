"""Per-project trust: what a repository brings that uji would act on — its `.mcp.json`
(processes to start), its skills (text for the prompt) — is used only once the user has
approved it for this project.

A decision is remembered in `<data>/trusted-projects.json`, keyed by the project's root
(the repository's top, else the working directory), by a kind ("mcp.json", "skills") and
by a hash of the files' paths and content: a changed file asks again; a denied one is
not asked about again until it changes. The terminal UI asks (behind the first frame);
`uji run` has nobody to ask, so it never uses what is not approved, and says how to
approve it (`uji run --trust-project`, which approves what this run finds, or start `uji`
in the project and answer the question).

The Lua side is `uji.project` (lua/api/project.py); `.mcp.json` is read by
`uji.mcp.project`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from uji.paths import nearest

if TYPE_CHECKING:
    from uji.notices import Notice
    from uji.ui.port import Ui

TRUST_FILE = "trusted-projects.json"
MAX_HASHED = 4 * 1024 * 1024  # bytes of each file that count in the hash
MAX_FILES = 2000  # files of the folders given that count in the hash
HOW_TO_APPROVE = "start `uji` here to be asked, or approve it with `uji run --trust-project ...`"


def project_root(cwd: str) -> str:
    """The nearest directory from `cwd` up that holds `.git` (the repository's top), else
    `cwd` itself."""
    here = os.path.abspath(cwd)
    return nearest(here, lambda d: os.path.exists(os.path.join(d, ".git"))) or here


def _expand(paths: list[str]) -> list[str]:
    """The files given, and the files in the folders given (links to folders not
    followed), at most MAX_FILES in all."""
    out: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            out.append(path)
            continue
        for folder, dirs, names in os.walk(path):
            dirs.sort()
            out.extend(os.path.join(folder, n) for n in sorted(names))
            if len(out) >= MAX_FILES:
                return out[:MAX_FILES]
    return out[:MAX_FILES]


def digest(root: str, files: list[str]) -> str:
    """sha256 over each file's path (relative to `root`) and content, in sorted order (a
    folder stands for the files in it); a missing file counts as missing, so creating it
    changes the hash too."""
    h = hashlib.sha256()
    given = sorted({os.path.normpath(os.path.join(root, f)) for f in files})
    for path in _expand(given):
        h.update(os.path.relpath(path, root).encode("utf-8", "surrogateescape") + b"\0")
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_HASHED)
            h.update(b"F" + len(data).to_bytes(8, "big") + data)
        except OSError:
            h.update(b"M")
    return h.hexdigest()


class ProjectTrust:
    """The decisions for one project, and the question that makes one."""

    def __init__(self, data_dir: str, cwd: str, ui: Ui, notice: Notice) -> None:
        self.file = os.path.join(data_dir, TRUST_FILE)
        self.root = project_root(cwd)
        self.ui = ui
        self.notice = notice
        self.approve_all = False  # `uji run --trust-project`: approve what this run finds
        self._asking: dict[tuple[str, str], asyncio.Task[bool]] = {}  # one question at a time

    # The file ---------------------------------------------------------------------

    def _load(self) -> dict[str, Any]:
        try:
            with open(self.file, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as e:
            self.notice(f"{self.file} could not be read ({e}); every project counts as not approved")
            return {}
        return data if isinstance(data, dict) else {}

    def remembered(self, kind: str, hash_: str) -> bool | None:
        """The decision for `kind` with this content, None when there is none."""
        projects = self._load().get("projects")
        entry = projects.get(self.root, {}).get(kind) if isinstance(projects, dict) else None
        if (
            isinstance(entry, dict)
            and entry.get("sha256") == hash_
            and isinstance(entry.get("allowed"), bool)
        ):
            return bool(entry["allowed"])
        return None

    def remember(self, kind: str, hash_: str, allowed: bool) -> None:
        data = self._load()
        projects = data.get("projects")
        if not isinstance(projects, dict):
            projects = data["projects"] = {}
        project = projects.get(self.root)
        if not isinstance(project, dict):
            project = projects[self.root] = {}
        project[kind] = {"sha256": hash_, "allowed": allowed, "at": int(time.time())}
        data["version"] = 1
        tmp = f"{self.file}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.file), exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.file)
        except OSError as e:
            self.notice(f"the decision could not be saved to {self.file}: {e}")

    # Deciding ---------------------------------------------------------------------

    def hash(self, files: list[str]) -> str:
        return digest(self.root, files)

    def decide(self, kind: str, hash_: str, title: str, body: str) -> bool | Awaitable[bool]:
        """The remembered decision, else the user's answer to the question (an
        awaitable), else — nobody to ask — False with a notice saying how to approve."""
        known = self.remembered(kind, hash_)
        if self.approve_all and not known:
            self.remember(kind, hash_, True)
            self.notice(f"{title}: approved for {self.root} (--trust-project)")
            return True
        if known is not None:
            return known
        key = (kind, hash_)
        asking = self._asking.get(key)
        if asking is not None:
            return asking
        answer = self.ui.confirm(title, body, None)
        if answer is None:
            self.notice(f"{title}: not used, as it is not approved for this project; {HOW_TO_APPROVE}")
            return False

        async def ask(answer: Awaitable[bool]) -> bool:
            try:
                allowed = bool(await answer)
            finally:
                self._asking.pop(key, None)
            self.remember(kind, hash_, allowed)
            if not allowed:
                self.notice(f"{title}: denied; not asked again until it changes")
            return allowed

        task = asyncio.get_running_loop().create_task(ask(answer), name=f"trust:{kind}")
        self._asking[key] = task
        return task

    def close(self) -> None:
        for task in list(self._asking.values()):
            task.cancel()
        self._asking.clear()
