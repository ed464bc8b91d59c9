"""Compaction: fold older messages into a checkpoint summary so a long session keeps
fitting its model's window (reference internals §5)."""

from __future__ import annotations

import json
from typing import Any

from uji.agent.context_fill import estimate

TRANSCRIPT_CHARS = 200_000
FAILED_NOTICE = "could not compact; sending the full context"
MID_TURN_NOTICE = "context filled up mid-turn; compacted to continue"
SKIPPED = ("context", "shell", "job", "system", "error")

PROMPT = """You summarise a coding session so that it can continue from your summary alone.
Write a checkpoint with exactly these sections:

## Goal
## Constraints & Preferences
## Progress
### Done
### In Progress
### Blocked
## Key Decisions
## Next Steps
## Critical Context

Keep file paths, commands, identifiers and error messages verbatim. Be concise; leave out
what no longer matters."""

UPDATE = """Update the previous summary (in <previous-summary>) with the newer part of the
conversation that follows it, keeping the same sections."""


def cut_index(history: list[dict[str, Any]], start: int, keep_recent: int) -> int | None:
    """Where the kept part begins: walk back from the end until `keep_recent` tokens are
    kept, then back to a non-tool message so no tool result loses its call. None when
    nothing would be left to fold."""
    total = 0
    i = len(history)
    while i > start:
        i -= 1
        total += estimate(history[i])
        if total >= keep_recent:
            break
    while i > start and history[i]["type"] in ("tool", "file"):
        i -= 1
    if i <= start:
        return None
    return i


def _label(message: dict[str, Any]) -> str | None:
    kind = message["type"]
    if kind == "user":
        return f"[user]\n{message.get('text', '')}"
    if kind == "assistant":
        parts = [message.get("text", "")]
        for call in message.get("tool_calls") or []:
            parts.append(f"(called {call.get('name')} {call.get('arguments', '')})")
        return "[assistant]\n" + "\n".join(p for p in parts if p)
    if kind == "tool":
        return f"[{message.get('name', 'tool')}]\n{message.get('content', '')}"
    if kind == "compaction":
        return f"[earlier summary]\n{message.get('summary', '')}"
    if kind == "file" and isinstance(message.get("content"), str):
        return f"[the user attached {message.get('path', '')}]\n{message['content']}"
    return None


def transcript(messages: list[dict[str, Any]]) -> str:
    """The part to fold, as labelled text, newest kept first when it must be cut."""
    blocks: list[str] = []
    size = 0
    for message in reversed(messages):
        if message["type"] in SKIPPED:
            continue
        block = _label(message)
        if block is None:
            continue
        if size + len(block) > TRANSCRIPT_CHARS:
            break
        blocks.append(block)
        size += len(block) + 2
    return "\n\n".join(reversed(blocks))


def files_touched(messages: list[dict[str, Any]], previous: list[str]) -> list[str]:
    files = list(previous)
    for message in messages:
        for call in message.get("tool_calls") or []:
            try:
                args = json.loads(call.get("arguments") or "{}")
            except json.JSONDecodeError:
                continue
            path = args.get("path") if isinstance(args, dict) else None
            if isinstance(path, str) and path and path not in files:
                files.append(path)
    return files


def request_text(folded: list[dict[str, Any]], previous_summary: str | None) -> tuple[str, str]:
    """(system prompt, user message) for the summariser."""
    body = transcript(folded)
    if previous_summary:
        return (
            PROMPT + "\n\n" + UPDATE,
            f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n<conversation>\n{body}\n</conversation>",
        )
    return PROMPT, f"<conversation>\n{body}\n</conversation>"
