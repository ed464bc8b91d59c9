"""The `@` popup above the composer: fuzzy completion over the project's files.

Typing `@` (at the start or after a space) opens it; what follows filters it; Up/Down
move, Tab or Enter put `@path ` in the composer (`@"a b.txt" ` for a path with a space),
Esc closes it until the text changes. The files are listed in a worker thread, never on
the screen's loop: `git ls-files -co --exclude-standard` in a repository (tracked, and
untracked ones not ignored), else a walk of the working directory that skips hidden
directories, `node_modules` and `__pycache__`; at most MAX_FILES either way. The list is
kept for the session and listed again in the background when the popup opens and the
list is older than REFRESH seconds.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Callable

from rich.text import Text
from textual.widgets import Static, TextArea

from uji.record import Struct
from uji.tui import render
from uji.tui.composer import popup_rows

MAX_FILES = 20_000
REFRESH = 10.0  # seconds a listing is used before the next popup lists again
GIT_TIMEOUT = 10.0
MAX_DIRS = 20_000  # directories the walk may enter
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})
ROWS = 8  # rows the popup shows
MAX_SHOWN = 200  # matches kept for moving through


def list_files(cwd: str, cap: int = MAX_FILES) -> list[str]:
    """The project's files, relative to `cwd`: git's view where there is a repository."""
    listed = _git_files(cwd, cap)
    return listed if listed is not None else _walk(cwd, cap)


def _git_files(cwd: str, cap: int) -> list[str] | None:
    """`git ls-files -co --exclude-standard` (None: no git, or not a repository)."""
    import subprocess

    try:
        proc = subprocess.Popen(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(os.environ, GIT_TERMINAL_PROMPT="0"),
        )
    except OSError:
        return None
    assert proc.stdout is not None
    names: list[str] = []
    rest = b""
    deadline = time.monotonic() + GIT_TIMEOUT
    with proc:
        while len(names) < cap and time.monotonic() < deadline:
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            parts = (rest + chunk).split(b"\0")
            rest = parts.pop()
            names += [os.fsdecode(p) for p in parts if p]
        proc.kill()  # done or capped: a huge repository's listing is not read to its end
        code = proc.wait()
    if code not in (0, -9) or (code == -9 and not names):
        return None
    # -co lists a tracked file deleted from the disk, and a submodule as one entry.
    return [n for n in dict.fromkeys(names[:cap]) if os.path.isfile(os.path.join(cwd, n))]


def _walk(cwd: str, cap: int) -> list[str]:
    out: list[str] = []
    pending = [""]
    entered = 0
    while pending and len(out) < cap and entered < MAX_DIRS:
        rel = pending.pop(0)
        entered += 1
        try:
            with os.scandir(os.path.join(cwd, rel) if rel else cwd) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith(".") and entry.name not in SKIP_DIRS:
                        pending.append(path)
                elif entry.is_file():
                    out.append(path)
            except OSError:
                continue
            if len(out) >= cap:
                break
    return out


def rank(query: str, files: list[str], limit: int = MAX_SHOWN) -> list[str]:
    """The files matching `query` fuzzily (its characters in order, any case), best first."""
    return best(query, matching(query, files) if query else files, limit)


def best(query: str, matched: list[str], limit: int = MAX_SHOWN) -> list[str]:
    """The `limit` best of the files that match `query`: a file name starting with it,
    then containing it, then a path containing it, then the rest; shorter paths first
    within each (with no query: the shallowest, by name)."""
    import heapq

    if not query:
        return heapq.nsmallest(limit, matched, key=lambda f: (f.count("/"), f))
    q = query.lower()
    scored: list[tuple[int, int, str]] = []
    for path in matched:
        low = path.lower()
        name = low[low.rfind("/") + 1 :]
        score = 0 if name.startswith(q) else 1 if q in name else 2 if q in low else 3
        scored.append((score, len(path), path))
    return [path for _, _, path in heapq.nsmallest(limit, scored)]


def matching(query: str, files: list[str]) -> list[str]:
    """The files whose path holds the characters of `query` in order, any case."""
    # c1[^c2]*c2[^c3]*c3…: each character's first place after the last, no backtracking.
    chars = [re.escape(c) for c in query]
    pattern = chars[0] + "".join(f"[^{c}]*{c}" for c in chars[1:]) if chars else ""
    search = re.compile(pattern, re.IGNORECASE).search
    return [f for f in files if search(f)]


class Typed(Struct):
    """The `@` word the cursor is in: where it starts and ends on its line, and what
    follows the `@` (without an opening quote)."""

    start: int
    end: int
    query: str


def typed_at(line: str, col: int) -> Typed | None:
    """The `@` word that the cursor at `col` of `line` is typing, if any."""
    at = line.rfind("@", 0, col)
    while at >= 0:
        if at == 0 or line[at - 1].isspace() or line[at - 1] in "([{<":
            break
        at = line.rfind("@", 0, at)
    if at < 0:
        return None
    word = line[at + 1 : col]
    if word.startswith('"'):
        if '"' in word[1:]:
            return None  # a closed quote: the word is done
        end = line.find('"', col)
        return Typed(at, len(line) if end < 0 else end + 1, word[1:])
    if any(c.isspace() or c == '"' for c in word):
        return None
    end = col
    while end < len(line) and not line[end].isspace():
        end += 1
    return Typed(at, end, word)


class ProjectFiles:
    """The session's list of the project's files, listed off the screen's loop."""

    def __init__(self, cwd: Callable[[], str | None]) -> None:
        self._cwd = cwd
        self.files: list[str] | None = None  # None until the first listing ends
        self._listed_at = 0.0
        self._listing: asyncio.Task[None] | None = None

    def refresh(self, done: Callable[[], None]) -> None:
        """List again in the background if the list is missing or old; `done` runs after."""
        cwd = self._cwd()
        if cwd is None or (self._listing is not None and not self._listing.done()):
            return
        if self.files is not None and time.monotonic() - self._listed_at < REFRESH:
            return
        self._listing = asyncio.get_running_loop().create_task(self._list(cwd, done))

    async def _list(self, cwd: str, done: Callable[[], None]) -> None:
        try:
            files = await asyncio.to_thread(list_files, cwd)
        except Exception:
            files = []
        self.files, self._listed_at = files, time.monotonic()
        done()


class MentionPopup(Static):
    """The list of files above the composer."""

    DEFAULT_CSS = """
    MentionPopup { height: auto; max-height: 9; padding: 0 1; background: $surface; display: none; }
    """

    def __init__(
        self,
        cwd: Callable[[], str | None],
        resources: Callable[[], dict[str, str]] = dict,
        **kw: object,
    ) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self.project = ProjectFiles(cwd)
        # The MCP servers' resources, `server:uri` → its name: offered beside the files.
        self.resources = resources
        self._offered: tuple[list[str] | None, dict[str, str], list[str]] | None = None
        self.items: list[str] = []
        self.index = 0
        self.typed: Typed | None = None
        self.dismissed_for: str | None = None  # Esc closes it until the text changes
        self._query: str | None = None
        self._ranked: tuple[str, list[str] | None] | None = None  # what `items` were ranked from
        self._pool: tuple[str, list[str], list[str]] | None = None  # (query, files, its matches)

    @property
    def open(self) -> bool:
        return bool(self.display) and self.typed is not None

    def follow(self, text: str, line: str, col: int, on_listed: Callable[[], None]) -> None:
        """Open, filter or close for the composer's `text`, cursor at `col` of `line`."""
        if self.dismissed_for is not None and text != self.dismissed_for:
            self.dismissed_for = None
        typed = typed_at(line, col) if self.dismissed_for is None and not text.startswith("!") else None
        if typed is None:
            self.close()
            return
        if not self.open:
            self.project.refresh(on_listed)
        self.typed = typed
        files = self._with_resources(self.project.files)
        ranked = (typed.query, files)
        if typed.query != self._query or not self.display:
            self._query = typed.query
            self.index = 0
        if self._ranked is None or self._ranked[0] != ranked[0] or self._ranked[1] is not files:
            self.items = self._rank(typed.query, files or [])
            self._ranked = ranked
        self.index = min(self.index, max(0, len(self.items) - 1))
        self.display = True
        self._draw(listing=files is None)

    def _with_resources(self, files: list[str] | None) -> list[str] | None:
        """The resources, then the files: one list, made again only when either changes
        (the ranking keeps its matches while the list stays the same)."""
        resources = self.resources()
        if not resources:
            return files
        kept = self._offered
        if kept is not None and kept[0] is files and kept[1] == resources:
            return kept[2]
        offered = [*resources, *(files or [])]
        self._offered = (files, resources, offered)
        return offered

    def _rank(self, query: str, files: list[str]) -> list[str]:
        """`rank`, narrowing the last query's matches when the query grew (typing on)."""
        pool = self._pool
        base = pool[2] if pool is not None and pool[1] is files and query.startswith(pool[0]) else files
        matched = matching(query, base) if query else files
        self._pool = (query, files, matched)
        return best(query, matched)

    def close(self) -> None:
        self.typed = None
        self.items = []
        self._query = self._ranked = None
        self.display = False

    def move(self, step: int) -> None:
        if self.items:
            self.index = (self.index + step) % len(self.items)
            self._draw()

    def current(self) -> str | None:
        return self.items[self.index] if self.items else None

    def _draw(self, listing: bool = False) -> None:
        if not self.items:
            self.update(Text("listing files…" if listing else "no matching files", style=render.MUTED))
            return
        names = self._offered[1] if self._offered is not None else {}
        self.update(popup_rows([(f"@{path}", names.get(path, "")) for path in self.items], self.index, ROWS))


def pick(area: TextArea, popup: MentionPopup) -> bool:
    """Put the chosen file in place of the `@` word being typed; False when there is no
    choice, or the word already is that file (Enter then sends the message)."""
    from uji.agent.mentions import token

    path, typed = popup.current(), popup.typed
    if path is None or typed is None:
        return False
    row = area.cursor_location[0]
    line = area.document.get_line(row)
    written = token(path)
    if line[typed.start : typed.end] == written:
        popup.close()
        return False
    after = " " if typed.end >= len(line) or not line[typed.end].isspace() else ""
    area.replace(written + after, (row, typed.start), (row, typed.end))
    area.move_cursor((row, typed.start + len(written) + 1))
    popup.dismissed_for = area.text  # closed until the text changes
    popup.close()
    return True
