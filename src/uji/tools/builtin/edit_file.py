"""edit_file: replace an exact string in a file, written atomically through the sandbox."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from uji.record import Struct
from uji.tools.base import ToolContext, ToolResult
from uji.tools.builtin.read_file import error, os_error, path_arg, required_str
from uji.tools.builtin.tool import BuiltinTool
from uji.tools.confine import OutsideRoots, Sandbox

if TYPE_CHECKING:
    from uji.tools.builtin.tool import BuiltinSpec

SPEC: BuiltinSpec = {
    "name": "edit_file",
    "description": (
        "Replace old_string with new_string in a file. old_string must match the file exactly "
        "(whitespace included, no line-number prefixes) and only once unless replace_all is "
        "true. An empty new_string deletes it. Read the file first."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "old_string": {"type": "string", "description": "Exact text to replace"},
            "new_string": {"type": "string", "description": "Replacement (may be empty)"},
            "replace_all": {"type": "boolean", "description": "Replace every match (default false)"},
        },
        "required": ["path", "old_string", "new_string"],
        "additionalProperties": False,
    },
    "policy": "ask",
    "verb": "Update",
    "question": "Make the following edit?",
    "path_subject": True,
    "subject_key": "path",
}


def make_diff(old: str, new: str, path: str) -> str:
    """A unified diff with 3 lines of context (shared with write_file)."""
    import difflib  # on the first edit, not at start-up

    lines = difflib.unified_diff(_lines(old), _lines(new), fromfile=f"a/{path}", tofile=f"b/{path}", n=3)
    return "".join(lines)


def _lines(text: str) -> list[str]:
    # Every line ends in "\n" so a last line without one doesn't glue onto the next diff row.
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]


class _Edit(Struct):
    """An edit worked out against the file's current bytes, not yet written."""

    path: str
    before: bytes
    after: bytes
    count: int
    line: int

    def diff(self) -> str:
        return make_diff(
            self.before.decode("utf-8", "replace"), self.after.decode("utf-8", "replace"), self.path
        )


def _plan(args: dict[str, Any], sandbox: Sandbox) -> _Edit | ToolResult:
    """Validate the arguments and compute the new content, or the error the model gets."""
    path = path_arg(args)
    if isinstance(path, ToolResult):
        return path
    old = required_str(args, "old_string")
    if isinstance(old, ToolResult):
        return old
    new = args.get("new_string")
    if not isinstance(new, str):
        return error("`new_string` is required and must be a string (empty deletes)")
    replace_all = args.get("replace_all", False)
    if not isinstance(replace_all, bool):
        return error("`replace_all` must be true or false")
    if old == new:
        return error("old_string and new_string are identical; there is nothing to change")
    try:
        before = sandbox.read_bytes(path)
    except OutsideRoots as e:
        return error(str(e))
    except OSError as e:
        return os_error("read", path, e)
    return _apply(path, before, old.encode(), new.encode(), replace_all)


def _apply(path: str, before: bytes, old: bytes, new: bytes, replace_all: bool) -> _Edit | ToolResult:
    count = before.count(old)
    if count == 0:
        return error(
            f"old_string was not found in {path}. Read the file again and copy the text "
            "exactly, without the line-number prefixes."
        )
    if count > 1 and not replace_all:
        return error(
            f"old_string matches {count} times in {path}. Add surrounding lines to make it "
            "unique, or pass replace_all: true."
        )
    line = before[: before.index(old)].count(b"\n") + 1
    after = before.replace(old, new) if replace_all else before.replace(old, new, 1)
    return _Edit(path, before, after, count, line)


def preview(args: dict[str, Any], sandbox: Sandbox) -> str | None:
    """The diff the edit would make, for the approval dialog; None if it cannot be made."""
    edit = _plan(args, sandbox)
    return edit.diff() if isinstance(edit, _Edit) else None


def _edit(args: dict[str, Any], sandbox: Sandbox) -> ToolResult:
    edit = _plan(args, sandbox)
    if isinstance(edit, ToolResult):
        return edit
    try:
        sandbox.write_atomic(edit.path, edit.after, make_parents=False)
    except OutsideRoots as e:
        return error(str(e))
    except OSError as e:
        return os_error("write", edit.path, e)
    if edit.count == 1:
        text = f"edited {edit.path} at line {edit.line}"
    else:
        text = f"edited {edit.path}: replaced {edit.count} occurrences"
    diff = edit.diff()
    return ToolResult(text=text, diff=diff, summary=_summary(diff))


def _summary(diff: str) -> str:
    rows = diff.splitlines()[2:]  # skip the ---/+++ header
    added = sum(1 for r in rows if r.startswith("+"))
    removed = sum(1 for r in rows if r.startswith("-"))
    return f"Added {_n_lines(added)}, removed {_n_lines(removed)}"


def _n_lines(n: int) -> str:
    return "1 line" if n == 1 else f"{n} lines"


async def run(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    # In a thread: a big file must not stall the event loop (the write is atomic either way).
    return await asyncio.to_thread(_edit, args, ctx.sandbox)


class EditFile(BuiltinTool):
    SPEC = SPEC
    writes = True

    def preview(self, args: dict[str, Any]) -> str | None:
        return preview(args, self.sandbox())

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await run(args, ctx)
