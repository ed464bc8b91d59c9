"""A fake OpenAI Responses API server on 127.0.0.1, speaking the real stream format.

    with FakeResponses() as fake:             # base_url "http://127.0.0.1:PORT/v1"
        fake.script(tool_call("read_file", {"path": "a"}, summary="Reading it."), text("hello"))
        ... point a provider (or a model) with wire "responses" at fake.base_url ...
        fake.requests[0].body["input"]        # every request, recorded

Each SSE step is what `POST /v1/responses` with `stream: true` sends: `response.created`,
`response.in_progress`, then per output item `response.output_item.added`, its deltas
(`response.reasoning_summary_part.added` / `…_text.delta` / `…_text.done` /
`…_part.done`, `response.content_part.added` / `response.output_text.delta` /
`response.output_text.done` / `response.content_part.done`,
`response.function_call_arguments.delta` / `.done`) and `response.output_item.done`, and
last `response.completed` (or `response.incomplete`) with the whole response and its
usage. Every event has its `event:` line and a `sequence_number`, as the API sends; the
body ends after the last event (no `[DONE]`). The events are consistent enough for the
openai SDK's own stream accumulator, which checks item identities.

- `text(s, summary=None, encrypted=None, phase=None, usage=..., piece=4)`: an answer,
  reasoning first when `summary` (a string, or a list of summary parts) or `encrypted`
  is given; `phase` marks the message ("commentary" / "final_answer").
- `tool_call(name, args, id="call_1", summary=None, encrypted=None)` /
  `tool_calls(call(...), ..., text=None, summary=None, encrypted=None)`: `args` is a
  dict or a raw JSON string (cut-off JSON), sent as argument deltas of `piece` chars.
- `incomplete(text, reason="max_output_tokens")`: the answer cut off, ending in
  `response.incomplete` with its usage.
- `refusal(s)`: a message whose content is a refusal, streamed as `response.refusal.delta`.
- `failed(code, message, text="")`: a stream that ends in an `error` event and
  `response.failed`, after some text if given.
- `text_deltas(n)`, `drop_after(n, step)`, `drip(interval, count)`, and from the base:
  `raw_lines`, `status`. `event(obj)` renders one event for raw_lines.

Side calls (no tools) are answered "Title" or "SUMMARY OF EARLIER WORK" (from the
`instructions`) without taking a step; once the script runs out, turns get "done" and
`.exhausted` becomes True.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.fakes.base import (
    ClientGone,
    FakeServer,
    Recorded,
    Step,
    cut,
    drip_step,
    pieces,
    raw_lines,
    sse,
    status,
)

__all__ = [
    "DEFAULT_USAGE",
    "ClientGone",
    "FakeResponses",
    "Recorded",
    "Step",
    "call",
    "drip",
    "drop_after",
    "event",
    "failed",
    "incomplete",
    "make_usage",
    "raw_lines",
    "refusal",
    "status",
    "text",
    "text_deltas",
    "tool_call",
    "tool_calls",
]

MODEL = "gpt-5-fake"
RESPONSE_ID = "resp_fake"


def make_usage(input: int = 12, output: int = 3, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input + output,
    }


DEFAULT_USAGE = make_usage()


@dataclass
class FakeCall:
    name: str
    arguments: dict[str, Any] | str
    id: str | None = "auto"  # "auto" → call_<index>; None → an empty call_id

    def raw_arguments(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


def call(name: str, arguments: dict[str, Any] | str, id: str | None = "auto") -> FakeCall:
    return FakeCall(name, arguments, id)


def event(obj: dict[str, Any]) -> str:
    """One event (its `event:` and `data:` lines) for `raw_lines`; follow it with ""."""
    return sse(obj, obj["type"]).decode().rstrip("\n")


def _response(status: str, output: list[dict[str, Any]], usage: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": RESPONSE_ID,
        "object": "response",
        "created_at": 1765552659,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    }


class _Events:
    """Builds one response's events with running sequence numbers."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.output: list[dict[str, Any]] = []

    def add(self, kind: str, **fields: Any) -> None:
        self.events.append({"type": kind, "sequence_number": len(self.events), **fields})

    def start(self) -> None:
        self.add("response.created", response=_response("in_progress", [], None))
        self.add("response.in_progress", response=_response("in_progress", [], None))

    def reasoning(self, summary: str | list[str] | None, encrypted: str | None, piece: int) -> None:
        index = len(self.output)
        item_id = f"rs_fake_{index}"
        parts = [summary] if isinstance(summary, str) else list(summary or [])
        added: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        if encrypted is not None:
            added["encrypted_content"] = encrypted + "-draft"  # the API's first one is not final
        self.add("response.output_item.added", output_index=index, item=added)
        for s, part in enumerate(parts):
            where = {"item_id": item_id, "output_index": index, "summary_index": s}
            self.add(
                "response.reasoning_summary_part.added", **where, part={"type": "summary_text", "text": ""}
            )
            for p in pieces(part, piece):
                self.add("response.reasoning_summary_text.delta", **where, delta=p)
            self.add("response.reasoning_summary_text.done", **where, text=part)
            self.add(
                "response.reasoning_summary_part.done", **where, part={"type": "summary_text", "text": part}
            )
        done = {
            "id": item_id,
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": p} for p in parts],
        }
        if encrypted is not None:
            done["encrypted_content"] = encrypted
        self.add("response.output_item.done", output_index=index, item=done)
        self.output.append(done)

    def message(
        self,
        content: str,
        piece: int,
        *,
        refused: bool = False,
        finished: bool = True,
        phase: str | None = None,
    ) -> None:
        index = len(self.output)
        item_id = f"msg_fake_{index}"
        item: dict[str, Any] = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
        }
        item["content"] = []
        if phase is not None:
            item["phase"] = phase
        self.add("response.output_item.added", output_index=index, item=item)
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        if refused:
            part: dict[str, Any] = {"type": "refusal", "refusal": ""}
            final: dict[str, Any] = {"type": "refusal", "refusal": content}
            deltas, done_kind, done_field = "response.refusal.delta", "response.refusal.done", "refusal"
        else:
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            final = {**part, "text": content}
            deltas, done_kind, done_field = "response.output_text.delta", "response.output_text.done", "text"
        self.add("response.content_part.added", **where, part=part)
        extra: dict[str, Any] = {} if refused else {"logprobs": []}
        for p in pieces(content, piece):
            self.add(deltas, **where, delta=p, **extra)
        self.add(done_kind, **where, **{done_field: content}, **extra)
        self.add("response.content_part.done", **where, part=final)
        status = "completed" if finished else "incomplete"
        done = {**item, "status": status, "content": [final]}
        self.add("response.output_item.done", output_index=index, item=done)
        self.output.append(done)

    def function_call(self, c: FakeCall, call_id: str, piece: int) -> None:
        index = len(self.output)
        item_id = f"fc_fake_{index}"
        raw = c.raw_arguments()
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": c.name,
        }
        self.add("response.output_item.added", output_index=index, item=item)
        for p in pieces(raw, piece):
            self.add("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=p)
        self.add("response.function_call_arguments.done", item_id=item_id, output_index=index, arguments=raw)
        done = {**item, "status": "completed", "arguments": raw}
        self.add("response.output_item.done", output_index=index, item=done)
        self.output.append(done)

    def end(self, usage: dict[str, Any] | None, *, reason: str | None = None) -> None:
        if reason is None:
            self.add("response.completed", response=_response("completed", self.output, usage))
        else:
            response = _response("incomplete", self.output, usage)
            response["incomplete_details"] = {"reason": reason}
            self.add("response.incomplete", response=response)

    def step(self, label: str, delay: float, gap: float) -> Step:
        rendered = [sse(e, e["type"]) for e in self.events]
        return Step(kind="sse", events=rendered, done=False, delay=delay, gap=gap, label=label)


def text(
    content: str,
    *,
    summary: str | list[str] | None = None,
    encrypted: str | None = None,
    phase: str | None = None,
    piece: int = 4,
    usage: dict[str, Any] | None = DEFAULT_USAGE,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    """A text answer in `piece`-character deltas, a reasoning item first if asked."""
    ev = _Events()
    ev.start()
    if summary is not None or encrypted is not None:
        ev.reasoning(summary, encrypted, piece)
    ev.message(content, piece, phase=phase)
    ev.end(usage)
    return ev.step(f"text {content[:20]!r}", delay, gap)


def tool_call(name: str, arguments: dict[str, Any] | str, *, id: str | None = "call_1", **kw: Any) -> Step:
    return tool_calls(FakeCall(name, arguments, id), **kw)


def tool_calls(
    *calls: FakeCall,
    text: str | None = None,
    summary: str | list[str] | None = None,
    encrypted: str | None = None,
    piece: int = 8,
    usage: dict[str, Any] | None = DEFAULT_USAGE,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    """One assistant step: a reasoning item (if asked), optional text, then the calls."""
    ev = _Events()
    ev.start()
    if summary is not None or encrypted is not None:
        ev.reasoning(summary, encrypted, 4)
    if text:
        ev.message(text, 4)
    for index, c in enumerate(calls):
        ev.function_call(c, f"call_{index}" if c.id == "auto" else (c.id or ""), piece)
    ev.end(usage)
    return ev.step("calls " + ",".join(c.name for c in calls), delay, gap)


def incomplete(
    content: str, *, reason: str = "max_output_tokens", usage: dict[str, Any] | None = DEFAULT_USAGE
) -> Step:
    """An answer cut off: the message is left incomplete, the response says why."""
    ev = _Events()
    ev.start()
    ev.message(content, 4, finished=False)
    ev.end(usage, reason=reason)
    return ev.step(f"incomplete {reason}", 0.0, 0.0)


def refusal(content: str, *, usage: dict[str, Any] | None = DEFAULT_USAGE) -> Step:
    ev = _Events()
    ev.start()
    ev.message(content, 4, refused=True)
    ev.end(usage)
    return ev.step("refusal", 0.0, 0.0)


def failed(code: str = "server_error", message: str = "The server had an error", text: str = "") -> Step:
    """A stream that breaks off: an `error` event, then `response.failed`."""
    ev = _Events()
    ev.start()
    if text:
        ev.add(
            "response.output_item.added",
            output_index=0,
            item={
                "id": "msg_fake_0",
                "type": "message",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            },
        )
        where = {"item_id": "msg_fake_0", "output_index": 0, "content_index": 0}
        ev.add(
            "response.content_part.added",
            **where,
            part={"type": "output_text", "text": "", "annotations": []},
        )
        ev.add("response.output_text.delta", **where, delta=text, logprobs=[])
    ev.add("error", code=code, message=message, param=None)
    response = _response("failed", [], None)
    response["error"] = {"code": code, "message": message}
    ev.add("response.failed", response=response)
    return ev.step(f"failed {code}", 0.0, 0.0)


def text_deltas(n: int, char: str = "x", *, usage: dict[str, Any] = DEFAULT_USAGE) -> Step:
    """n one-character text deltas; rendered once and repeated, so 50,000 is instant."""
    head = _Events()
    head.start()
    item = {
        "id": "msg_fake_0",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    head.add("response.output_item.added", output_index=0, item=item)
    where = {"item_id": "msg_fake_0", "output_index": 0, "content_index": 0}
    head.add(
        "response.content_part.added", **where, part={"type": "output_text", "text": "", "annotations": []}
    )
    one = sse({"type": "response.output_text.delta", **where, "delta": char}, "response.output_text.delta")
    final = {"type": "output_text", "text": char * n, "annotations": []}
    tail = _Events()
    done = {**item, "status": "completed", "content": [final]}
    tail.add("response.output_item.done", output_index=0, item=done)
    tail.output.append(done)
    tail.end(usage)
    events = [sse(e, e["type"]) for e in head.events] + [one] * n + [sse(e, e["type"]) for e in tail.events]
    return Step(kind="sse", events=events, done=False, label=f"{n} deltas")


def drop_after(n_events: int, step: Step | None = None) -> Step:
    """`step` (default: a long one-character-delta text) cut off after n events."""
    return cut(step if step is not None else text("x" * 200, piece=1), n_events)


def drip(interval: float, count: int | None = None, *, then: Step | None = None, delay: float = 0.0) -> Step:
    """`:` comments only (the API sends no keep-alive events of its own)."""
    return drip_step(interval, count, b": keep-alive\n\n", then=then, delay=delay)


class FakeResponses(FakeServer):
    def _text(self, content: str) -> Step:
        return text(content)

    def _system(self, body: dict[str, Any]) -> str:
        instructions = body.get("instructions")
        return instructions if isinstance(instructions, str) else ""
