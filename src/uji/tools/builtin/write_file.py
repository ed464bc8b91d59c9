"""write_file: create a file or replace its whole content, atomically."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from uji.tools.base import ToolContext, ToolResult
from uji.tools.builtin.edit_file import make_diff
from uji.tools.builtin.read_file import error, os_error, path_arg
from uji.tools.builtin.tool import BuiltinTool
from uji.tools.confine import OutsideRoots, Sandbox

if TYPE_CHECKING:
    from uji.tools.builtin.tool import BuiltinSpec

SPEC: BuiltinSpec = {
    "name": "write_file",
    "description": (
        "Create a file with the given content, or replace all of an existing file's content. "
        "Creates missing parent directories. Prefer edit_file to change an existing file."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string", "description": "The whole new content"},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    "policy": "ask",
    "verb": "Write",
    "question": None,
    "path_subject": True,
    "subject_key": "path",
}


def count_lines(text: str) -> int:
    """Newlines, plus one for a last line without one; an empty text has 0."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _args(args: dict[str, Any]) -> tuple[str, str] | ToolResult:
    path = path_arg(args)
    if isinstance(path, ToolResult):
        return path
    content = args.get("content")
    if not isinstance(content, str):
        return error("`content` is required and must be a string")
    return path, content


def _current(sandbox: Sandbox, path: str) -> str | None:
    """The file's content now; None when it does not exist yet or cannot be read (a
    write-only file can still be replaced, just without a diff)."""
    try:
        return sandbox.read_bytes(path).decode("utf-8", "replace")
    except (FileNotFoundError, PermissionError):
        return None


def preview(args: dict[str, Any], sandbox: Sandbox) -> str | None:
    """The diff against the current content (or empty), for the approval dialog."""
    parsed = _args(args)
    if isinstance(parsed, ToolResult):
        return None
    path, content = parsed
    try:
        old = _current(sandbox, path)
    except (OSError, OutsideRoots):
        return None
    return make_diff(old or "", content, path)


def _write(args: dict[str, Any], sandbox: Sandbox) -> ToolResult:
    parsed = _args(args)
    if isinstance(parsed, ToolResult):
        return parsed
    path, content = parsed
    try:
        old = _current(sandbox, path)
        created = sandbox.write_atomic(path, content.encode())
    except OutsideRoots as e:
        return error(str(e))
    except OSError as e:
        return os_error("write", path, e)
    n = count_lines(content)
    verb = "created" if created else "overwrote"
    diff = make_diff(old, content, path) if old is not None else None
    return ToolResult(text=f"{verb} {path} ({n} lines)", diff=diff, summary=f"Wrote {n} lines")


async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    return await asyncio.to_thread(_write, args, ctx.sandbox)


class WriteFile(BuiltinTool):
    SPEC = SPEC
    writes = True

    def preview(self, args: dict[str, Any]) -> str | None:
        return preview(args, self.sandbox())

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await run(args, ctx)
