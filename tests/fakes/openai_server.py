"""A fake OpenAI-compatible Chat Completions server on 127.0.0.1, over real sockets.

It plays the part of the original's `support/server.lua`: a real loopback listener with
hand-written HTTP/1.1 responses and real SSE, so wires are tested through httpx2 exactly
as they run. It lives in a background thread (a `socketserver.ThreadingTCPServer`), so
the same object serves pytest fixtures and bench scripts.

    with FakeOpenAI() as fake:                  # or fake = FakeOpenAI().start(); fake.stop()
        fake.script(text("hello"), tool_call("read_file", {"path": "a"}), status(500))
        ... point a provider at fake.base_url ("http://127.0.0.1:PORT/v1") ...
        fake.requests[0].body["messages"]       # every request, recorded

Script. Each *turn* request (one that carries `tools`) takes the next step, in order:

- `text(s, reasoning=None, usage=..., finish="stop")` streams `s` as several deltas.
- `tool_call(name, args, id="call_1")` / `tool_calls(call(...), call(...), text=None)`:
  one assistant step with calls; `args` is a dict or a raw JSON string (cut-off JSON
  tests), `id=None` leaves the id out (missing-id tests).
- `raw_lines([...])`: exact lines; an event needs its blank line (`""`) after it.
  `event(obj)` renders one `data:` line, `chunk(delta, finish)` one chunk object.
- `status(code, body, headers={"retry-after": "1"})`: an error response.
- `drop_after(n_events, step=None)`: sends n events of `step`, then closes the socket.
- `drip(interval, count=None, event="comment", then=None)`: a `: keep-alive` comment
  (or an empty delta, `event="empty"`) every `interval` s until the client drops (each
  drop is counted in `.drops`); with `count`, stops after that many and streams `then`
  (default: ends the body without a finish).
- `text_deltas(n, char="x")`: n one-character deltas, pre-rendered fast (benchmarks).

Every step takes `delay=` (seconds before the response) and SSE steps `gap=` (seconds
between events). Streams use the real format: a role chunk, content/tool-call chunks
with `finish_reason: null`, a final chunk with "stop"/"tool_calls", a usage chunk with
empty `choices` when `stream_options.include_usage` is set, then `data: [DONE]`.

Side calls: a request *without* tools (title, compaction summary) does not take a step;
it is answered "SUMMARY OF EARLIER WORK" when the system prompt mentions compacting or
summarising, else "Title", and is recorded with `side=True`. When the script runs out,
turns are answered with a plain "done" and `.exhausted` becomes True.

Model listings: set `.models = ["id", ...]` to answer `GET /v1/models`, and `.tags` for
Ollama's `GET /api/tags` (else 404); each GET's path is kept in `.listings`.

Inspect: `.requests` (a copy: `Recorded(method, path, headers, body, side, step)`, header
names lower-cased, body parsed JSON), `.turn_requests`, `.side_requests`, `.drops`,
`.exhausted`, `.connections` (TCP connections accepted), `wait_for_drops(n, timeout)`.
All thread-safe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Literal

from tests.fakes.base import (
    WRITE_BATCH,
    ClientGone,
    FakeServer,
    Recorded,
    Step,
    drip_step,
    raw_lines,
    status,
)
from tests.fakes.base import pieces as _pieces

__all__ = [
    "DEFAULT_USAGE",
    "MODEL",
    "WRITE_BATCH",
    "ClientGone",
    "FakeCall",
    "FakeOpenAI",
    "Recorded",
    "Step",
    "call",
    "chunk",
    "drip",
    "drop_after",
    "event",
    "make_usage",
    "raw_lines",
    "status",
    "text",
    "text_deltas",
    "tool_call",
    "tool_calls",
]

MODEL = "fake-model"
DEFAULT_USAGE: dict[str, Any] = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}


# --------------------------------------------------------------------------- steps


@dataclass
class FakeCall:
    name: str
    arguments: dict[str, Any] | str
    id: str | None = "auto"  # "auto" → call_<index>; None → no id sent

    def raw_arguments(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


def chunk(delta: dict[str, Any], finish: str | None = None, *, model: str = MODEL) -> dict[str, Any]:
    """One `chat.completion.chunk` object with a single choice."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def event(obj: Any) -> str:
    """A `data:` line for `raw_lines` (follow it with "" to end the event)."""
    return "data: " + json.dumps(obj, separators=(",", ":"))


def _render(obj: Any) -> bytes:
    return (event(obj) + "\n\n").encode()


def make_usage(prompt: int = 12, completion: int = 3, **extra: Any) -> dict[str, Any]:
    """An OpenAI usage object; `extra` adds fields such as `prompt_tokens_details`."""
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    } | extra


def text(
    content: str,
    *,
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    piece: int = 4,
    usage: dict[str, Any] | None = DEFAULT_USAGE,
    finish: str | None = "stop",
    done: bool = True,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    """A text answer streamed in `piece`-character deltas, reasoning deltas first."""
    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({reasoning_field: p}) for p in _pieces(reasoning or "", piece)]
    chunks += [chunk({"content": p}) for p in _pieces(content, piece)]
    return _sse_step(
        chunks, finish, usage=usage, done=done, delay=delay, gap=gap, label=f"text {content[:20]!r}"
    )


def call(name: str, arguments: dict[str, Any] | str, id: str | None = "auto") -> FakeCall:
    return FakeCall(name, arguments, id)


def tool_call(name: str, arguments: dict[str, Any] | str, *, id: str | None = "call_1", **kw: Any) -> Step:
    return tool_calls(FakeCall(name, arguments, id), **kw)


def tool_calls(
    *calls: FakeCall | tuple[Any, ...],
    text: str | None = None,
    reasoning: str | None = None,
    reasoning_field: str = "reasoning_content",
    piece: int = 8,
    usage: dict[str, Any] | None = DEFAULT_USAGE,
    finish: str | None = "tool_calls",
    done: bool = True,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    """One assistant step with calls: reasoning deltas, then for each call a head chunk
    (id, name) and its argument pieces."""
    chunks = [chunk({"role": "assistant", "content": text})]
    chunks += [chunk({reasoning_field: p}) for p in _pieces(reasoning or "", piece)]
    for index, c in enumerate(FakeCall(*c) if isinstance(c, tuple) else c for c in calls):
        head: dict[str, Any] = {
            "index": index,
            "type": "function",
            "function": {"name": c.name, "arguments": ""},
        }
        if c.id is not None:
            head["id"] = f"call_{index}" if c.id == "auto" else c.id
        chunks.append(chunk({"tool_calls": [head]}))
        for p in _pieces(c.raw_arguments(), piece):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]}))
    names = ",".join(c.name if isinstance(c, FakeCall) else str(c[0]) for c in calls)
    return _sse_step(chunks, finish, usage=usage, done=done, delay=delay, gap=gap, label=f"calls {names}")


def _sse_step(chunks: list[dict[str, Any]], finish: str | None, *, label: str, **kw: Any) -> Step:
    if finish is not None:
        chunks = [*chunks, chunk({}, finish)]
    return Step(kind="sse", events=[_render(c) for c in chunks], label=label, **kw)


def text_deltas(n: int, char: str = "x", *, usage: dict[str, Any] | None = DEFAULT_USAGE) -> Step:
    """n one-character deltas; rendered once and repeated, so building 50,000 is instant."""
    one = _render(chunk({"content": char}))
    events = [_render(chunk({"role": "assistant", "content": ""})), *([one] * n), _render(chunk({}, "stop"))]
    return Step(kind="sse", events=events, usage=usage, label=f"{n} deltas")


def drop_after(n_events: int, step: Step | None = None) -> Step:
    """`step` (default: a long one-character-delta text) cut off after n events."""
    base = step if step is not None else text("x" * 200, piece=1)
    return replace(base, drop_after=n_events, label=f"drop after {n_events}")


def drip(
    interval: float,
    count: int | None = None,
    *,
    event: Literal["comment", "empty"] = "comment",
    then: Step | None = None,
    delay: float = 0.0,
) -> Step:
    ev = b": keep-alive\n\n" if event == "comment" else _render(chunk({}))
    return drip_step(interval, count, ev, then=then, delay=delay)


# --------------------------------------------------------------------------- server


class FakeOpenAI(FakeServer):
    """Chat Completions: a usage chunk when `stream_options.include_usage` asks for it,
    then `data: [DONE]` unless the step says otherwise."""

    def _text(self, content: str) -> Step:
        return text(content)

    def _system(self, body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        return " ".join(_content_text(m.get("content")) for m in messages if m.get("role") == "system")

    def _tail(self, request: Recorded, step: Step) -> list[bytes]:
        tail: list[bytes] = []
        if step.usage is not None and _wants_usage(request):
            tail.append(_render({**chunk({}), "choices": [], "usage": step.usage}))
        if step.done:
            tail.append(b"data: [DONE]\n\n")
        return tail


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _wants_usage(request: Recorded) -> bool:
    body = request.body if isinstance(request.body, dict) else {}
    options = body.get("stream_options") or {}
    return bool(options.get("include_usage"))
