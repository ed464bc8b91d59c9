"""A session as Markdown: prompts, answers, and each call with its result and diff."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from uji.export.entries import Call, Entry, Note, Prompt, Reply

if TYPE_CHECKING:
    from uji.store.sessions import Session

NOTE_TITLES = {
    "shell": "Shell command",
    "error": "Error",
    "compaction": "Summary of the earlier conversation",
    "context": "Context",
    "file": "Attached file",
    "system": "System",
}


def fence(text: str, lang: str = "") -> str:
    """A code block whose fence is longer than any run of backticks inside it."""
    longest = 0
    run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def when(ms: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(int(ms) / 1000)) if ms else ""


def markdown(session: Session, items: list[Entry]) -> str:
    out = [f"# {session['title']}", ""]
    out.append(f"- Session: `{session['id']}`")
    out.append(f"- Directory: `{session['directory']}`")
    if session.get("time_created"):
        out.append(f"- Started: {when(session['time_created'])}")
    out.append("")
    for item in items:
        lines = _entry(item)
        if lines:
            out.extend([*lines, ""])
    return "\n".join(out).rstrip() + "\n"


def _entry(item: Entry) -> list[str]:
    match item:
        case Prompt(text=text, images=images):
            extra = f"\n\n*({images} image{'s' if images != 1 else ''} attached)*" if images else ""
            return ["## User", "", text + extra]
        case Reply(text=text, reasoning=reasoning):
            if not text and not reasoning:  # an answer that only made calls: they follow
                return []
            lines = ["## uji", ""]
            if reasoning:
                lines += ["<details><summary>Thinking</summary>", "", reasoning, "", "</details>", ""]
            if text:
                lines.append(text)
            return lines
        case Call():
            return _call(item)
        case Note(kind=kind, text=text):
            body = fence(text) if kind in ("shell", "error") else text
            return [f"### {NOTE_TITLES.get(kind, kind)}", "", body]
    return []


def _call(call: Call) -> list[str]:
    mark = " (failed)" if call.failed else ""
    lines = [f"### Tool call: `{call.name}` {call.subject}{mark}", ""]
    args = call.argument_object()
    if args:
        lines += [fence(json.dumps(args, indent=2, ensure_ascii=False), "json"), ""]
    lines += ["Result:", "", fence(call.result)]
    if call.diff:
        lines += ["", fence(call.diff, "diff")]
    return lines
