"""A saved session's messages as what a reader follows: prompts, answers, and each call
with its arguments, result and diff (a call is paired with its tool message by id)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

from uji.record import Record

if TYPE_CHECKING:
    from uji.store.rows import Row


class Prompt(Record):
    text: str
    images: int = 0  # how many images went with it


class Reply(Record):
    text: str
    reasoning: str = ""
    calls: tuple[str, ...] = ()  # the ids of the calls it made


class Call(Record):
    id: str
    name: str
    subject: str
    arguments: str  # as the model sent them (JSON text)
    result: str
    diff: str | None = None

    @property
    def failed(self) -> bool:
        return self.result.startswith(("error:", "denied:"))

    def argument_object(self) -> dict[str, Any]:
        """The arguments as an object ({"raw": text} when they are not a JSON object)."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return {"raw": self.arguments}
        return value if isinstance(value, dict) else {"raw": self.arguments}


# The saved messages a Note stands for.
NoteKind = Literal["shell", "error", "compaction", "context", "file", "system"]
TEXT_NOTES: dict[str, NoteKind] = {"error": "error", "context": "context", "system": "system"}


class Note(Record):
    """What is neither prompt, answer nor call: a `!` command, an error, a summary."""

    kind: NoteKind
    text: str


Entry = Prompt | Reply | Call | Note


def entries(messages: list[Row]) -> list[Entry]:
    arguments: dict[str, tuple[str, str]] = {}  # call id -> (name, arguments)
    out: list[Entry] = []
    for m in messages:
        if m["type"] == "user":
            out.append(Prompt(str(m.get("text", "")), len(m.get("images") or [])))
        elif m["type"] == "assistant":
            calls = m.get("tool_calls") or []
            for c in calls:
                arguments[str(c.get("id"))] = (str(c.get("name", "")), str(c.get("arguments", "")))
            out.append(
                Reply(
                    str(m.get("text") or ""),
                    str(m.get("reasoning") or ""),
                    tuple(str(c.get("id")) for c in calls),
                )
            )
        elif m["type"] == "tool":
            call_id = str(m.get("tool_call_id", ""))
            name, args = arguments.get(call_id, (str(m.get("name", "")), ""))
            diff = m.get("diff")
            out.append(
                Call(
                    call_id,
                    name,
                    str(m.get("subject") or name),
                    args,
                    str(m.get("content", "")),
                    diff if isinstance(diff, str) and diff else None,
                )
            )
        elif m["type"] == "shell":
            out.append(Note("shell", f"$ {m.get('command', '')}\n{m.get('output', '')}".rstrip()))
        elif m["type"] == "compaction":
            out.append(Note("compaction", str(m.get("summary", ""))))
        elif m["type"] == "file":
            out.append(Note("file", str(m.get("path", ""))))
        elif m["type"] in TEXT_NOTES:
            out.append(Note(TEXT_NOTES[m["type"]], str(m.get("text", ""))))
    return out
