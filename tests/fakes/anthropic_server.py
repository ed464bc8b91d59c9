"""A fake Anthropic Messages API server on 127.0.0.1, speaking the real stream format.

    with FakeAnthropic() as fake:             # base_url "http://127.0.0.1:PORT/v1"
        fake.script(text("hello", thinking="hmm"), tool_call("read_file", {"path": "a"}))
        ... point a provider with wire "anthropic" at fake.base_url ...
        fake.requests[0].body["messages"]     # every request, recorded

Each SSE step is `message_start`, a `ping`, content blocks (`content_block_start`,
`content_block_delta`…, `content_block_stop`), `message_delta` with the stop reason and
output usage, then `message_stop`; every event has its `event:` line as the API sends.

- `text(s, thinking=None, signature="sig-1", redacted=None, usage=..., stop="end_turn")`
- `tool_call(name, args, id="toolu_1")` / `tool_calls(call(...), ..., text=None)`:
  `args` is a dict or a raw JSON string (cut-off JSON), sent as `input_json_delta` pieces.
- `error_after(kind, message, text="")`: a stream that starts, then sends an `error` event
  (`overloaded_error` is what a busy API sends mid-stream).
- `text_deltas(n)`, `drop_after(n, step)`, `drip(interval, count, event="ping"|"comment")`,
  and from the base: `raw_lines`, `status`. `event(obj)` renders one event for raw_lines.

Side calls (no tools) are answered "Title" or "SUMMARY OF EARLIER WORK" without taking a
step; once the script runs out, turns get "done" and `.exhausted` becomes True.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

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
    "FakeAnthropic",
    "Recorded",
    "Step",
    "call",
    "drip",
    "drop_after",
    "error_after",
    "event",
    "make_usage",
    "raw_lines",
    "status",
    "text",
    "text_deltas",
    "tool_call",
    "tool_calls",
]

MODEL = "fake-claude"


def make_usage(input: int = 12, output: int = 3, cache_read: int = 0, cache_write: int = 0) -> dict[str, int]:
    return {
        "input_tokens": input,
        "output_tokens": output,
        "cache_read_input_tokens": cache_read,
        "cache_creation_input_tokens": cache_write,
    }


DEFAULT_USAGE = make_usage()


@dataclass
class FakeCall:
    name: str
    arguments: dict[str, Any] | str
    id: str | None = "auto"  # "auto" → toolu_<index>; None → an empty id

    def raw_arguments(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


def call(name: str, arguments: dict[str, Any] | str, id: str | None = "auto") -> FakeCall:
    return FakeCall(name, arguments, id)


def _ev(obj: dict[str, Any]) -> bytes:
    return sse(obj, obj["type"])


def event(obj: dict[str, Any]) -> str:
    """One event (its `event:` and `data:` lines) for `raw_lines`; follow it with ""."""
    return _ev(obj).decode().rstrip("\n")


def _start(usage: dict[str, Any]) -> list[bytes]:
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**{k: v for k, v in usage.items() if k != "output_tokens"}, "output_tokens": 1},
    }
    return [_ev({"type": "message_start", "message": message}), _ev({"type": "ping"})]


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    out = [_ev({"type": "content_block_start", "index": index, "content_block": start})]
    out += [_ev({"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    out.append(_ev({"type": "content_block_stop", "index": index}))
    return out


def _end(stop: str | None, usage: dict[str, Any], stopped: bool) -> list[bytes]:
    out: list[bytes] = []
    if stop is not None:
        delta = {"stop_reason": stop, "stop_sequence": None}
        out.append(
            _ev({"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}})
        )
    if stopped:
        out.append(_ev({"type": "message_stop"}))
    return out


def _thinking_blocks(
    thinking: str | None, signature: str | None, redacted: str | None, piece: int
) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if thinking is not None:
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(thinking, piece)]
        if signature:
            deltas.append({"type": "signature_delta", "signature": signature})
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
    if redacted is not None:
        blocks.append(({"type": "redacted_thinking", "data": redacted}, []))
    return blocks


def _render(
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    *,
    stop: str | None,
    usage: dict[str, Any],
    stopped: bool,
    label: str,
    delay: float,
    gap: float,
) -> Step:
    events = _start(usage)
    for index, (start, deltas) in enumerate(blocks):
        events += _block(index, start, deltas)
    events += _end(stop, usage, stopped)
    return Step(kind="sse", events=events, done=False, delay=delay, gap=gap, label=label)


def text(
    content: str,
    *,
    thinking: str | None = None,
    signature: str | None = "sig-1",
    redacted: str | None = None,
    piece: int = 4,
    usage: dict[str, Any] = DEFAULT_USAGE,
    stop: str | None = "end_turn",
    stopped: bool = True,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    """A text answer in `piece`-character deltas, thinking blocks first."""
    blocks = _thinking_blocks(thinking, signature, redacted, piece)
    if content:
        deltas = [{"type": "text_delta", "text": p} for p in pieces(content, piece)]
        blocks.append(({"type": "text", "text": ""}, deltas))
    return _render(
        blocks, stop=stop, usage=usage, stopped=stopped, label=f"text {content[:20]!r}", delay=delay, gap=gap
    )


def tool_call(name: str, arguments: dict[str, Any] | str, *, id: str | None = "toolu_1", **kw: Any) -> Step:
    return tool_calls(FakeCall(name, arguments, id), **kw)


def tool_calls(
    *calls: FakeCall,
    text: str | None = None,
    thinking: str | None = None,
    signature: str | None = "sig-1",
    piece: int = 8,
    usage: dict[str, Any] = DEFAULT_USAGE,
    stop: str | None = "tool_use",
    stopped: bool = True,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    """One assistant step: thinking, optional text, then a `tool_use` block per call."""
    blocks = _thinking_blocks(thinking, signature, None, 4)
    if text:
        blocks.append(({"type": "text", "text": ""}, [{"type": "text_delta", "text": text}]))
    for index, c in enumerate(calls):
        call_id = f"toolu_{index}" if c.id == "auto" else (c.id or "")
        start = {"type": "tool_use", "id": call_id, "name": c.name, "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": ""}]  # the API opens with an empty one
        deltas += [{"type": "input_json_delta", "partial_json": p} for p in pieces(c.raw_arguments(), piece)]
        blocks.append((start, deltas))
    names = ",".join(c.name for c in calls)
    return _render(
        blocks, stop=stop, usage=usage, stopped=stopped, label=f"calls {names}", delay=delay, gap=gap
    )


def error_after(kind: str = "overloaded_error", message: str = "Overloaded", text: str = "") -> Step:
    """A 200 stream that breaks off with an `error` event (after some text, if given)."""
    events = _start(DEFAULT_USAGE)
    if text:
        deltas = [{"type": "text_delta", "text": text}]
        events += _block(0, {"type": "text", "text": ""}, deltas)[:-1]  # left open
    events.append(_ev({"type": "error", "error": {"type": kind, "message": message}}))
    return Step(kind="sse", events=events, done=False, label=f"error {kind}")


def text_deltas(n: int, char: str = "x", *, usage: dict[str, Any] = DEFAULT_USAGE) -> Step:
    """n one-character text deltas; rendered once and repeated, so 50,000 is instant."""
    one = _ev({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": char}})
    events = [
        *_start(usage),
        _ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        *([one] * n),
        _ev({"type": "content_block_stop", "index": 0}),
        *_end("end_turn", usage, True),
    ]
    return Step(kind="sse", events=events, done=False, label=f"{n} deltas")


def drop_after(n_events: int, step: Step | None = None) -> Step:
    """`step` (default: a long one-character-delta text) cut off after n events."""
    return cut(step if step is not None else text("x" * 200, piece=1), n_events)


def drip(
    interval: float,
    count: int | None = None,
    *,
    event: Literal["ping", "comment"] = "ping",
    then: Step | None = None,
    delay: float = 0.0,
) -> Step:
    """Keep-alives only: `ping` events (what the API sends) or `:` comments."""
    ev = _ev({"type": "ping"}) if event == "ping" else b": keep-alive\n\n"
    return drip_step(interval, count, ev, then=then, delay=delay)


class FakeAnthropic(FakeServer):
    def _text(self, content: str) -> Step:
        return text(content)

    def _system(self, body: dict[str, Any]) -> str:
        system = body.get("system")
        if isinstance(system, list):
            system = " ".join(b.get("text", "") for b in system if isinstance(b, dict))
        return system if isinstance(system, str) else ""
