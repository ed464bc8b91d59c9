"""A fake Gemini API server on 127.0.0.1: `streamGenerateContent?alt=sse` in the real format.

    with FakeGemini() as fake:                # base_url "http://127.0.0.1:PORT/v1beta"
        fake.script(text("hello", thoughts="hmm"), tool_call("read_file", {"path": "a"}))
        ... point a provider with wire "gemini" at fake.base_url ...
        fake.requests[0].path                 # "/v1beta/models/m:streamGenerateContent?alt=sse"

Each SSE step is a run of `GenerateContentResponse` chunks separated by CRLF blank lines
(as Google sends them), each with `usageMetadata`; the last carries `finishReason`.

- `text(s, thoughts=None, signature=None, usage=..., finish="STOP")`
- `tool_call(name, args, id=None, signature="sig-1")` / `tool_calls(call(...), ..., text=None)`:
  Gemini sends each call whole, in one part, with its `thoughtSignature` beside it.
- `error_chunk(code, message, status)`: an `{"error": …}` object inside the stream.
- `text_deltas(n)`, `drop_after(n, step)`, `drip(interval, count, event="comment"|"empty")`,
  and from the base: `raw_lines`, `status`. `event(obj)` renders one data line for raw_lines.

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
    status,
)

__all__ = [
    "DEFAULT_USAGE",
    "ClientGone",
    "FakeGemini",
    "Recorded",
    "Step",
    "call",
    "drip",
    "drop_after",
    "error_chunk",
    "event",
    "make_usage",
    "raw_lines",
    "status",
    "text",
    "text_deltas",
    "tool_call",
    "tool_calls",
]


def make_usage(prompt: int = 12, candidates: int = 3, cached: int = 0, thoughts: int = 0) -> dict[str, int]:
    usage = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates,
    }
    if cached:
        usage["cachedContentTokenCount"] = cached
    if thoughts:
        usage["thoughtsTokenCount"] = thoughts
        usage["totalTokenCount"] += thoughts
    return usage


DEFAULT_USAGE = make_usage()


@dataclass
class FakeCall:
    name: str
    arguments: dict[str, Any]
    id: str | None = None
    signature: str | None = "sig-1"


def call(
    name: str, arguments: dict[str, Any], id: str | None = None, signature: str | None = "sig-1"
) -> FakeCall:
    return FakeCall(name, arguments, id, signature)


def _chunk(
    parts: list[dict[str, Any]], finish: str | None = None, usage: dict[str, Any] | None = None
) -> bytes:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    obj: dict[str, Any] = {"candidates": [candidate], "modelVersion": "fake-gemini", "responseId": "r1"}
    if usage is not None:
        obj["usageMetadata"] = usage
    return _data(obj)


def _data(obj: Any) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\r\n\r\n"


def event(obj: Any) -> str:
    """One `data:` line for `raw_lines` (follow it with "" to end the event)."""
    return "data: " + json.dumps(obj, separators=(",", ":"))


def _growing(usage: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Usage as Gemini sends it: on every chunk, the output count growing to the total."""
    total = usage.get("candidatesTokenCount", 0)
    return [{**usage, "candidatesTokenCount": max(1, total * (i + 1) // n)} for i in range(n)]


def _step(
    parts: list[dict[str, Any]], finish: str | None, usage: dict[str, Any], label: str, **kw: Any
) -> Step:
    """One chunk per part; the finish reason rides on the last, as Gemini sends it."""
    parts = parts or [{"text": ""}]
    usages = _growing(usage, len(parts))
    events = [_chunk([p], finish if i == len(parts) - 1 else None, usages[i]) for i, p in enumerate(parts)]
    return Step(kind="sse", events=events, done=False, label=label, **kw)


def text(
    content: str,
    *,
    thoughts: str | None = None,
    signature: str | None = None,
    piece: int = 4,
    usage: dict[str, Any] = DEFAULT_USAGE,
    finish: str | None = "STOP",
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    parts: list[dict[str, Any]] = [{"text": p, "thought": True} for p in pieces(thoughts or "", piece)]
    parts += [{"text": p} for p in pieces(content, piece)]
    if signature and parts:
        parts[-1] = {**parts[-1], "thoughtSignature": signature}
    return _step(parts, finish, usage, f"text {content[:20]!r}", delay=delay, gap=gap)


def tool_call(
    name: str, arguments: dict[str, Any], *, id: str | None = None, signature: str | None = "sig-1", **kw: Any
) -> Step:
    return tool_calls(FakeCall(name, arguments, id, signature), **kw)


def tool_calls(
    *calls: FakeCall,
    text: str | None = None,
    usage: dict[str, Any] = DEFAULT_USAGE,
    finish: str | None = "STOP",
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for c in calls:
        fc: dict[str, Any] = {"name": c.name, "args": c.arguments}
        if c.id is not None:
            fc["id"] = c.id
        part: dict[str, Any] = {"functionCall": fc}
        if c.signature:
            part["thoughtSignature"] = c.signature
        parts.append(part)
    names = ",".join(c.name for c in calls)
    return _step(parts, finish, usage, f"calls {names}", delay=delay, gap=gap)


def error_chunk(
    code: int = 503, message: str = "The model is overloaded.", status: str = "UNAVAILABLE"
) -> Step:
    events = [
        _chunk([{"text": "par"}]),
        _data({"error": {"code": code, "message": message, "status": status}}),
    ]
    return Step(kind="sse", events=events, done=False, label=f"error {code}")


def text_deltas(n: int, char: str = "x", *, usage: dict[str, Any] = DEFAULT_USAGE) -> Step:
    """n one-character chunks; rendered once and repeated, so 50,000 is instant."""
    one = _chunk([{"text": char}], None, usage)
    events = [*([one] * n), _chunk([{"text": ""}], "STOP", usage)]
    return Step(kind="sse", events=events, done=False, label=f"{n} deltas")


def drop_after(n_events: int, step: Step | None = None) -> Step:
    """`step` (default: a long one-character text) cut off after n events."""
    return cut(step if step is not None else text("x" * 200, piece=1), n_events)


def drip(
    interval: float,
    count: int | None = None,
    *,
    event: Literal["comment", "empty"] = "comment",
    then: Step | None = None,
    delay: float = 0.0,
) -> Step:
    """No progress: `:` comments, or chunks with an empty text part."""
    ev = b": keep-alive\r\n\r\n" if event == "comment" else _chunk([{"text": ""}])
    return drip_step(interval, count, ev, then=then, delay=delay)


class FakeGemini(FakeServer):
    PREFIX = "/v1beta"

    def _text(self, content: str) -> Step:
        return text(content)

    def _system(self, body: dict[str, Any]) -> str:
        system = body.get("systemInstruction") or {}
        parts = system.get("parts") if isinstance(system, dict) else None
        return " ".join(p.get("text", "") for p in parts or [] if isinstance(p, dict))
