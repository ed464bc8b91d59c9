"""Compaction: fold older messages into a checkpoint summary so a long session keeps
fitting its model's window (reference internals §5)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from uji.agent.context_fill import estimate
from uji.agent.messages import live
from uji.agent.model_call import describe_failure
from uji.agent.model_requests import TurnFailed
from uji.events.stream import SessionCompacted
from uji.wires.base import Failure

if TYPE_CHECKING:
    from uji.agent.fill_meter import FillMeter
    from uji.agent.model_requests import ModelRequests
    from uji.agent.services import TurnServices
    from uji.agent.session_log import SessionLog
    from uji.events.stream import Sink
    from uji.store.rows import Row

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


def cut_index(history: list[Row], start: int, keep_recent: int) -> int | None:
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


def _label(message: Row) -> str | None:
    if message["type"] == "user":
        return f"[user]\n{message.get('text', '')}"
    if message["type"] == "assistant":
        parts = [message.get("text", "")]
        for call in message.get("tool_calls") or []:
            parts.append(f"(called {call.get('name')} {call.get('arguments', '')})")
        return "[assistant]\n" + "\n".join(p for p in parts if p)
    if message["type"] == "tool":
        return f"[{message.get('name', 'tool')}]\n{message.get('content', '')}"
    if message["type"] == "compaction":
        return f"[earlier summary]\n{message.get('summary', '')}"
    if message["type"] == "file" and isinstance(message.get("content"), str):
        return f"[the user attached {message.get('path', '')}]\n{message['content']}"
    return None


def transcript(messages: list[Row]) -> str:
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


def files_touched(messages: list[Row], previous: list[str]) -> list[str]:
    files = list(previous)
    for message in messages:
        if message["type"] != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            try:
                args = json.loads(call.get("arguments") or "{}")
            except json.JSONDecodeError:
                continue
            path = args.get("path") if isinstance(args, dict) else None
            if isinstance(path, str) and path and path not in files:
                files.append(path)
    return files


def request_text(folded: list[Row], previous_summary: str | None) -> tuple[str, str]:
    """(system prompt, user message) for the summariser."""
    body = transcript(folded)
    if previous_summary:
        return (
            PROMPT + "\n\n" + UPDATE,
            f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n<conversation>\n{body}\n</conversation>",
        )
    return PROMPT, f"<conversation>\n{body}\n</conversation>"


class Compactor:
    """When the live messages near the window, fold the older ones into a summary (once
    per turn at most: a failure sends the full context until the next turn)."""

    def __init__(
        self, services: TurnServices, log: SessionLog, meter: FillMeter, requests: ModelRequests, emit: Sink
    ) -> None:
        self.services = services
        self.log = log
        self.meter = meter
        self.requests = requests
        self._emit = emit
        self.failed = False  # within this turn: do not try again

    def due(self, system: str | None = None) -> bool:
        """The live messages (with `system`, before any count: the prompt and tools too)
        fill the window up to its reserve."""
        usable = self.meter.budget().usable
        if usable is None or self.failed or not self.services.context.compaction.get("enabled", True):
            return False
        return self.meter.used(system) >= usable

    def own_context(self) -> str | None:
        """Why this session is never compacted: its provider runs its own loop."""
        provider = self.services.models.provider()
        if provider is not None and provider.loop is not None:
            return f"{provider.name} keeps its own context"
        return None

    async def compact(self, notice: str | None = None, manual: bool = False) -> tuple[bool, str | None]:
        """Fold older messages into a checkpoint summary. Returns (done, why not)."""
        own = self.own_context()
        if own is not None:
            return False, own
        previous, rest = live(self.log.messages)
        used = self.meter.used()
        keep = self.services.context.compaction.get("keep_recent") or self.meter.budget().keep_recent(
            used, manual
        )
        cut = cut_index(rest, 0, keep)
        if cut is None:
            return False, "nothing to compact yet"
        folded = rest[:cut]
        system, text = request_text(folded, previous.get("summary") if previous else None)
        try:
            summary = await self.requests.side(system, text)
        except (Failure, TurnFailed) as e:
            self.failed = True
            self.services.notice(f"{FAILED_NOTICE} ({describe_failure(e) if isinstance(e, Failure) else e})")
            return False, str(e)
        if not summary.strip():
            self.failed = True
            self.services.notice(FAILED_NOTICE)
            return False, "the summary was empty"
        files = files_touched(folded, previous.get("files") or [] if previous else [])
        saved = self.log.save(
            {"type": "compaction", "summary": summary.strip(), "through": folded[-1]["seq"], "files": files}
        )
        self.log.fold(min(folded[-1]["seq"] + 1, saved["seq"]))
        self.meter.forget()
        if notice:
            self.services.notice(notice)
        self._emit(SessionCompacted(len(folded)))
        return True, None
