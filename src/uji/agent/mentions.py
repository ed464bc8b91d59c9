"""`@path` mentions: a file the user names in a message goes to the model with it.

Each `@path` token of a sent message that names an existing file is read as a read_file
call of that path would be, through the same gate (disabled → confinement → before_tool
→ policy → the approval question), and saved right after the user message as a `file`
row: `{type: "file", path, content, summary?, images?}` when attached, `{type: "file",
path, denied}` when the gate refused it, `{type: "file", path, error}` when read_file
could not read it (a binary file, say). Only attached rows reach the model: their
content is appended to the user message they follow, as `<file path="...">…</file>`,
the way Claude Code and Gemini CLI attach mentioned files, so every wire carries it as
plain user text (images, if the file is one, as the user message's images).

A token is `@` at the start of the text or after a space or an opening bracket, then
either `"a path with spaces"` or a run of characters without spaces; trailing
punctuation (`.`, `,`, `)`, ...) is dropped when the token with it names no file. Tokens
that name no file (`@decorator`, `user@example.com`) stay plain text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.agent.tool_calls import ToolCaller
    from uji.store.rows import FileRow

MAX_MENTIONS = 20  # files attached per message; more are left as text, with a notice
_TOKEN = re.compile(r'(?:^|(?<=[\s(\[{<]))@(?:"([^"\n]+)"|([^\s"]+))')
_TRAILING = ".,;:!?)]}>'`"


def token(path: str) -> str:
    """How a path is written as a mention: `@src/a.py`, or `@"my notes.txt"` with a space."""
    return f'@"{path}"' if any(c.isspace() for c in path) else f"@{path}"


def words(text: str) -> Iterator[str]:
    """What follows each `@` token of `text` (without its quotes)."""
    for match in _TOKEN.finditer(text):
        yield match.group(1) if match.group(1) is not None else match.group(2)


def trim(word: str) -> str:
    """`word` without the punctuation a sentence puts after it."""
    return word.rstrip(_TRAILING)


def find(text: str, cwd: str) -> list[str]:
    """The paths of the `@` tokens in `text` that name existing files, in order, once each."""
    found: list[str] = []
    for match in _TOKEN.finditer(text):
        quoted, bare = match.group(1), match.group(2)
        path = _existing(quoted, cwd) if quoted is not None else _bare(bare, cwd)
        if path is not None and path not in found:
            found.append(path)
    return found


def _bare(word: str, cwd: str) -> str | None:
    while word:
        if _existing(word, cwd) is not None:
            return word
        if word[-1] not in _TRAILING:
            return None
        word = word[:-1]
    return None


def _existing(path: str, cwd: str) -> str | None:
    from uji.tools.confine import expand_user
    from uji.tools.path_forms import path_problem

    if path_problem(path) is not None:
        return None
    try:
        return path if os.path.isfile(os.path.join(cwd, expand_user(path))) else None
    except (OSError, ValueError):
        return None


async def attach(text: str, cwd: str, caller: ToolCaller, save: Callable[[FileRow], Any]) -> None:
    """Attach the files `text` mentions: one saved `file` row each, decided by the gate."""
    paths = find(text, cwd)
    if len(paths) > MAX_MENTIONS:
        caller.notice(f"only the first {MAX_MENTIONS} @files of a message are attached")
        paths = paths[:MAX_MENTIONS]
    for path in paths:
        save(await caller.attach(path))


def block(row: FileRow) -> str | None:
    """What the model is sent for a saved `file` row (None: nothing, it was not attached)."""
    content = row.get("content")
    if not isinstance(content, str):
        return None
    if isinstance(row.get("server"), str):  # an MCP resource (`@server:uri`)
        return f'<resource server="{row["server"]}" uri="{row.get("uri", "")}">\n{content}\n</resource>'
    return f'<file path="{row.get("path", "")}">\n{content}\n</file>'


def line(row: FileRow) -> tuple[str, str]:
    """(label, text) of a `file` row, for a transcript: attached, or why not."""
    path = token(str(row.get("path", "")))
    if isinstance(row.get("content"), str):
        summary = row.get("summary")
        return "attached", f"{path} ({summary})" if isinstance(summary, str) and summary else path
    reason = row.get("denied") if isinstance(row.get("denied"), str) else row.get("error")
    return "not attached", f"{path}: {reason or 'refused'}"
