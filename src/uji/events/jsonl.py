"""`uji run --json`: the JSON line of each event that has one.

`session {id}`, `message {message}` (the saved form), `call {id, name, subject, verb,
decision, by, ...}`, `progress {tool, id, line}`, `notice {text}`, `budget {limit, value,
used, text}` (a budget stopped the turn) and last `done {text | error, usage, cost?,
budget?}`; every other event has no line.
"""

from __future__ import annotations

from typing import assert_never

from uji.events.stream import (
    BeforeQuit,
    BudgetReached,
    CallDecided,
    CallSubject,
    Delta,
    Done,
    Event,
    MessageSaved,
    MessageSubmitted,
    ModelChanged,
    Notice,
    Outcome,
    Progress,
    QueueChanged,
    SessionCompacted,
    SessionCreated,
    SessionOpened,
    SessionResumed,
    SessionTitled,
    ShellFinished,
    ShellStarted,
    StatusChanged,
    StreamCleared,
    Tasks,
    ToolStarted,
    TurnFinished,
)
from uji.record import record_fields
from uji.tools.base import TaskRow

# A line as printed (json.dumps): uji writes it and never reads it back.
JsonObject = dict[str, object]


def outcome_fields(o: Outcome) -> JsonObject:
    """What decided a call, as the `call` line spells it (absent keys: not applicable)."""
    out: JsonObject = {"decision": o.decision, "by": o.by}
    for key in ("rule", "source", "part", "unfixed", "basis"):
        value = getattr(o, key)
        if value is not None:
            out[key] = value
    if o.remembered:
        out["remembered"] = True
    if o.form is not None:
        out["form"] = o.form
    if o.policy is not None:
        out["policy"] = o.policy
    if o.reason:
        out["reason"] = o.reason
    if o.hook is not None:
        out["hook"] = o.hook.name
        out["hook_origin"] = o.hook.origin
    for key in ("question", "body", "preview", "asked_by", "remember"):
        value = getattr(o, key)
        if value is not None:
            out[key] = value
    return out


def json_line(event: Event) -> JsonObject | None:
    """The object `uji run --json` prints for `event`, or None for an event it does not show."""
    match event:
        case SessionOpened(id=session_id, worktree=None):
            return {"type": "session", "id": session_id}
        case SessionOpened(id=session_id, worktree=path, branch=branch):
            return {"type": "session", "id": session_id, "worktree": {"path": path, "branch": branch}}
        case MessageSaved(message=message):
            return {"type": "message", "message": message}
        case CallDecided():
            return {
                "type": "call",
                "id": event.id,
                "name": event.name,
                "subject": event.subject,
                "verb": event.verb,
                **outcome_fields(event.outcome),
            }
        case Progress():
            return {"type": "progress", "tool": event.tool, "id": event.id, "line": event.line}
        case Tasks():
            rows = [
                {k: getattr(row, k) for k in record_fields(TaskRow) if getattr(row, k) is not None}
                for row in event.tasks
            ]
            return {"type": "tasks", "tool": event.tool, "id": event.id, "tasks": rows}
        case Notice(text=text):
            return {"type": "notice", "text": text}
        case Done():
            out: JsonObject = {"type": "done"}
            if event.error is not None:
                out["error"] = event.error
            else:
                out["text"] = event.text or ""
            usage: JsonObject = dict(event.usage.as_dict())
            if event.usage.estimated:  # the server sent none: uji counted characters / 4
                usage["estimated"] = True
            out["usage"] = usage
            if event.cost is not None:
                out["cost"] = round(event.cost, 10)
            if event.budget is not None:
                out["budget"] = event.budget
            return out
        case BudgetReached():
            used = round(event.used, 10)
            return {
                "type": "budget",
                "limit": event.limit,
                "value": event.value,
                "used": used,
                "text": event.text,
            }
        case (
            Delta()
            | StreamCleared()
            | MessageSubmitted()
            | QueueChanged()
            | StatusChanged()
            | TurnFinished()
            | SessionTitled()
            | SessionCompacted()
            | CallSubject()
            | ToolStarted()
            | SessionCreated()
            | SessionResumed()
            | ModelChanged()
            | ShellStarted()
            | ShellFinished()
            | BeforeQuit()
        ):
            return None
        case _:
            assert_never(event)  # a new kind of event: mypy asks whether it has a line
