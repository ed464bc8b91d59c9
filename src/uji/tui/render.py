"""How each transcript entry looks, as Rich renderables (reference §6: symbols ⏺ ⎿,
limits tool_preview 8 and diff_preview 20, the "+%d lines" text).

Kept apart from the widgets so the look is in one place and testable without a screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text

if TYPE_CHECKING:
    from rich.markdown import Markdown

    from uji.tools.base import TaskRow

TOOL = "⏺"
BRANCH = "⎿"
PROMPT = ">"
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TOOL_PREVIEW = 8
DIFF_PREVIEW = 20
MORE = "+{} lines"
MORE_CHARS = "+{} characters"
CODE_THEME = "monokai"

# Colours of the reference's default theme.
TEXT, MUTED, CODE, ACCENT = "#d4d4d4", "#808080", "#e0af68", "cyan"
USER_BG, ERROR, NOTICE = "#343541", "#e06c75", "#d19a66"
SELECTED_BG = "#3a3a4a"
ADDED, REMOVED, HUNK = "#98c379", "#e06c75", "cyan"


USER_LINES, USER_CHARS = 100, 10_000  # of a user message shown (a 5 MB paste is sent whole)


def user(text: str) -> RenderableType:
    """`> text`; a long message shows its start and how much more it has: drawing all of
    a 5 MB paste held the screen for minutes."""
    head, cut = text[:USER_CHARS], text[USER_CHARS:]
    lines, hidden = preview_lines(head, USER_LINES)
    out = Text(f"{PROMPT} ", style=f"bold {ACCENT}")
    out.append("\n".join(lines) if hidden else head, style=TEXT)
    if not hidden and not cut:
        return out
    hidden += cut.count("\n")
    if hidden:
        return Group(out, more(hidden))
    return Group(out, Text("    " + MORE_CHARS.format(len(cut)), style=MUTED))


def markdown(text: str) -> Markdown:
    # Imported here: Rich's Markdown brings markdown-it and Pygments (about 30 ms of CPU),
    # which the first frame does not need.
    from uji.tui.mdparse import rich_markdown

    return rich_markdown(text, CODE_THEME)


def thinking(text: str) -> Text:
    return Text(text.strip("\n"), style=f"italic {MUTED}")


def notice(text: str) -> Text:
    return Text(text, style=NOTICE)


def error(text: str) -> Text:
    if text == "interrupted":
        return Text(f"  {BRANCH} Interrupted — tell uji what to do instead", style=MUTED)
    return Text(f"error: {text}", style=ERROR)


def info(label: str, text: str) -> Text:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return Text(f"{label}: {first}", style=MUTED, no_wrap=True, overflow="ellipsis")


def more(n: int) -> Text:
    return Text("    " + MORE.format(n), style=MUTED)


def preview_lines(text: str, limit: int | None = None, tail: bool = False) -> tuple[list[str], int]:
    """At most `limit` lines of `text` (the theme's tool_preview), and how many were left out."""
    limit = TOOL_PREVIEW if limit is None else limit
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= limit:
        return lines, 0
    kept = lines[-limit:] if tail else lines[:limit]
    return kept, len(lines) - limit


def diff(text: str, limit: int | None = None) -> list[Text]:
    """A unified diff, coloured, without its ---/+++ header (the theme's diff_preview rows)."""
    limit = DIFF_PREVIEW if limit is None else limit
    rows = [r for r in text.splitlines() if not r.startswith(("--- ", "+++ "))]
    out: list[Text] = []
    for row in rows[:limit]:
        style = ADDED if row.startswith("+") else REMOVED if row.startswith("-") else HUNK
        if not row.startswith(("+", "-", "@@")):
            style = MUTED
        out.append(Text("    " + row, style=style, no_wrap=True, overflow="ellipsis"))
    if len(rows) > limit:
        out.append(more(len(rows) - limit))
    return out


PROGRESS_ROWS = 8  # lines of a running tool's progress shown under it
# A replaced Diff view: the diff's text and uji's own rows of it → what to show.
DrawDiff = Callable[[str, list[RenderableType]], RenderableType]


def tool_call(state: dict[str, Any], draw_diff: DrawDiff | None = None) -> Group:
    """`⏺ <verb> <subject>`, then the progress line while it runs, then the result.

    `state` keys: verb, subject, status (pending|running|done|failed|denied), progress,
    content, summary, diff."""
    status = state.get("status", "pending")
    dot = {
        "pending": MUTED,
        "running": CODE,
        "done": ADDED,
        "failed": ERROR,
        "denied": ERROR,
    }.get(status, MUTED)
    head = Text(f"{TOOL} ", style=dot)
    if status == "denied":  # it never ran: not "Ran rm -rf build"
        head.append("Denied", style=f"bold {ERROR}")
        head.append(" " + (state.get("name") or state.get("verb") or "tool"), style=MUTED)
    elif status == "pending":  # not decided yet (perhaps asking): not "Ran …" before it ran
        head.append(state.get("name") or state.get("verb") or "tool", style=f"bold {TEXT}")
    else:
        head.append(state.get("verb") or state.get("name") or "tool", style=f"bold {TEXT}")
    subject = state.get("subject") or ""
    if subject:
        head.append(" " + _one_line(subject), style=TEXT)
    head.no_wrap, head.overflow = True, "ellipsis"
    parts: list[RenderableType] = [head]
    if status == "running":
        # A tool that runs several things at once (the subagent plugin) reports one line each.
        rows = (state.get("progress") or "running…").splitlines()[:PROGRESS_ROWS] or ["running…"]
        for i, line in enumerate(rows):
            lead = f"  {BRANCH} " if i == 0 else "    "
            parts.append(Text(lead + _one_line(line), style=MUTED, no_wrap=True, overflow="ellipsis"))
    elif status in ("done", "failed", "denied"):
        parts.extend(_result(state, draw_diff))
    return Group(*parts)


def _result(state: dict[str, Any], draw_diff: DrawDiff | None) -> list[RenderableType]:
    content = state.get("content") or ""
    summary = state.get("summary")
    failed = state.get("status") in ("failed", "denied")
    if failed:
        lines, hidden = preview_lines(content)
        out: list[RenderableType] = [
            Text(f"  {BRANCH} " + (lines[0] if lines else ""), style=ERROR, no_wrap=True, overflow="ellipsis")
        ]
        out += [Text("    " + x, style=ERROR, no_wrap=True, overflow="ellipsis") for x in lines[1:]]
        if hidden:
            out.append(more(hidden))
        return out
    out = []
    if summary:
        out.append(Text(f"  {BRANCH} {summary}", style=MUTED, no_wrap=True, overflow="ellipsis"))
    shown = state.get("diff")
    name = state.get("name")
    if not shown and name == "write_file":
        created = argument(state.get("arguments"), "content")
        if not created:
            return out
        shown = "\n".join("+" + x for x in created.splitlines())  # a new file has no diff: its lines as added
    if shown:
        rows: list[RenderableType] = list(diff(shown))
        out.extend([draw_diff(shown, rows)] if draw_diff is not None else rows)
        return out
    if summary and name in ("read_file", "edit_file"):
        return out  # the file's text is for the model; the summary says enough
    lines, hidden = preview_lines(content)
    for i, line in enumerate(lines):
        lead = f"  {BRANCH} " if i == 0 and not summary else "    "
        out.append(Text(lead + line, style=MUTED, no_wrap=True, overflow="ellipsis"))
    if hidden:
        out.append(more(hidden))
    return out


def shell(state: dict[str, Any]) -> Group:
    """A `!` line: the command, its output (a short preview) and a non-zero exit code."""
    head = Text("! ", style=f"bold {CODE}")
    head.append(state.get("command", ""), style=TEXT)
    parts: list[RenderableType] = [head]
    output = state.get("output") or ""
    running = state.get("code") is None
    lines, hidden = preview_lines(output, tail=running)
    for i, line in enumerate(lines):
        lead = f"  {BRANCH} " if i == 0 else "    "
        parts.append(Text(lead + line, style=MUTED, no_wrap=True, overflow="ellipsis"))
    if hidden:
        parts.append(more(hidden))
    code = state.get("code")
    if running:
        parts.append(Text(f"  {BRANCH} running… (Esc stops it)", style=MUTED))
    elif code:
        parts.append(Text(f"  {BRANCH} exit code {code}", style=ERROR))
    elif not lines:
        parts.append(Text(f"  {BRANCH} (no output)", style=MUTED))
    return Group(*parts)


def argument(arguments: Any, key: str) -> str | None:
    try:
        import json  # with the first tool call: not needed before the first frame

        args = json.loads(arguments) if isinstance(arguments, str) and arguments else {}
    except ValueError:
        return None
    value = args.get(key) if isinstance(args, dict) else None
    return value if isinstance(value, str) else None


def _one_line(text: str) -> str:
    line = text.strip().replace("\n", " ⏎ ")
    return line if len(line) <= 300 else line[:300] + "…"


def describe_arguments(arguments: str) -> str:
    """A short subject for a call we know nothing else about."""
    try:
        import json

        args = json.loads(arguments) if arguments else {}
    except ValueError:
        return _one_line(arguments)
    if isinstance(args, dict):
        return ", ".join(f"{k}={_short(v)}" for k, v in sorted(args.items()))
    return _one_line(str(args))


def _short(value: Any) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ")
    return text if len(text) <= 60 else text[:60] + "…"


def plain_title(title: str) -> str:
    """A title without the Markdown backticks around code ("run `x`?" reads "run x?")."""
    return re.sub(r"`([^`\n]+)`", r"\1", title)


def tasks_line(rows: tuple[TaskRow, ...]) -> str:
    """A tool's tasks (`ctx.task`) as its live line: how many are done, then the running
    ones with their own line."""
    done = sum(row.status in ("done", "failed") for row in rows)
    running = [
        f"{row.label}: {row.line}" if row.line else row.label for row in rows if row.status == "running"
    ]
    failed = sum(row.status == "failed" for row in rows)
    head = f"{done}/{len(rows)} done" + (f", {failed} failed" if failed else "")
    return " · ".join([head, *running])
