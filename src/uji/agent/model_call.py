"""One model call with the loop's retries and stall watchdog (reference internals §1)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from uji.events.stream import Delta, DeltaKind, Sink, StreamCleared
from uji.wires.base import Answer, Failure, Usage, WireRequest

MAX_RETRIES = 5
RETRY_AFTER_CAP = 60.0


class Collector:
    """The Reply a wire talks to: gathers one model call and tracks progress.

    The deltas of one network read arrive together; they go out as one `Delta` event
    when the wire next waits (a callback of the event loop), or before anything else
    the call reports. A kind change (text after reasoning) sends the other kind's
    first, so the events keep the order of the stream. Nobody consumes a delta event
    per delta (`--json` shows none, Lua gets none, the screen draws what arrived), and
    50,000 of them cost more than the parsing.
    """

    def __init__(self, emit: Sink) -> None:
        self._emit = emit
        self._loop = asyncio.get_running_loop()
        self.text_parts: list[str] = []
        self.reasoning_parts: list[str] = []
        self.answer: Answer | None = None
        self.failure: Failure | None = None
        self.last_progress = time.monotonic()
        self.finished = self._loop.create_future()
        self._kind: DeltaKind | None = None  # of the parts not yet sent
        self._since = 0  # the first of them in that kind's parts
        self._scheduled = False

    def text(self, delta: str) -> None:
        if delta:
            if self._kind != "text":
                self._start("text", len(self.text_parts))
            self.text_parts.append(delta)
            self.last_progress = time.monotonic()

    def reasoning(self, delta: str) -> None:
        if delta:
            if self._kind != "reasoning":
                self._start("reasoning", len(self.reasoning_parts))
            self.reasoning_parts.append(delta)
            self.last_progress = time.monotonic()

    def _start(self, kind: DeltaKind, since: int) -> None:
        self.flush()
        self._kind, self._since = kind, since
        if not self._scheduled:
            self._scheduled = True
            self._loop.call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        """Send the deltas not sent yet, as one event."""
        kind = self._kind
        if kind is None:
            return
        self._kind = None
        parts = self.text_parts if kind == "text" else self.reasoning_parts
        if len(parts) > self._since:
            self._emit(Delta(kind, "".join(parts[self._since :])))

    def touch(self) -> None:
        self.last_progress = time.monotonic()

    def done(self, answer: Answer) -> None:
        self.flush()
        if self.finished.done():
            return
        if not answer.text and self.text_parts:
            answer.text = "".join(self.text_parts)
        if not answer.reasoning and self.reasoning_parts:
            answer.reasoning = "".join(self.reasoning_parts)
        self.answer = answer
        self.finished.set_result(None)

    def fail(self, failure: Failure) -> None:
        self.flush()
        if self.finished.done():
            return
        self.failure = failure
        self.finished.set_result(None)


def estimated_usage(request: WireRequest, answer: Answer) -> Usage:
    """What a call took, counted here (characters / 4, as the context bar does) for a
    server that sends no usage: the prompt, tools and history sent, and what came back.
    Marked `estimated`, so the bar and `--json` say so."""
    import json

    from uji.agent.context_fill import estimate, tokens

    sent = (
        tokens(request.system) + tokens(json.dumps(request.tools))
        if request.tools
        else tokens(request.system)
    )
    sent += sum(estimate(dict(m)) for m in request.messages)
    calls = sum(tokens(c.name) + tokens(c.arguments) for c in answer.tool_calls)
    return Usage(input=sent, output=tokens(answer.text) + tokens(answer.reasoning) + calls, estimated=True)


def describe_failure(f: Failure) -> str:
    if f.kind == "auth":
        return f"authentication rejected ({f.status}) - check the api key for this provider"
    if f.kind == "provider":
        return f.message if f.message.startswith("provider:") else f"provider: {f.message}"
    return f.message


def backoff(attempt: int, retry_after: float | None) -> float:
    if retry_after is not None:
        return min(max(retry_after, 0.0), RETRY_AFTER_CAP)
    import random  # only a retry needs it: not loaded on every run

    return float(min(2.0 * 2**attempt, 30.0) * random.uniform(0.75, 1.25))


def first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line[:160]


def refused_locally(failure: Failure, request: WireRequest, hint: str | None) -> Failure | None:
    """A connection to a loopback or LAN address that nothing accepts: retrying will not
    help, so it fails at once, naming the URL with a hint. None for anything else."""
    from uji.wires.common import is_local

    url = str(request.provider.get("base_url") or "")
    if failure.kind != "http" or failure.status is not None or not is_local(url):
        return None
    if not failure.message.startswith("could not connect"):
        return None  # a timeout or a dropped stream may be passing
    detail = failure.message.partition(":")[2].strip()
    if not detail or detail == "All connection attempts failed":
        detail = "connection refused"
    why = hint or "is the server running at that address?"
    return Failure("http", f"could not connect to {url} ({detail}) - {why}")


async def call_model(
    wire: Any,
    request: WireRequest,
    idle: float,
    emit: Sink,
    notice: Callable[[str], None],
    track: Callable[[Collector | None], None] = lambda reply: None,
    hint: str | None = None,
    slot: Callable[[WireRequest], AbstractAsyncContextManager[None]] | None = None,
) -> Answer:
    """Stream one answer, retrying what can be retried. Raises Failure when it gives up.
    `track` sees the reply in flight, so an interrupt can keep its partial text. `hint`
    is what to suggest when a local server refuses the connection. `slot` is held around
    each attempt (not the waits between them): a one-slot server's calls take turns."""
    for attempt in range(MAX_RETRIES + 1):
        reply = Collector(emit)
        track(reply)
        async with slot(request) if slot is not None else contextlib.nullcontext():
            await stream_once(wire, request, reply, idle)
        track(None)
        if reply.answer is not None:
            answer = reply.answer
            if answer.usage.total == 0:  # the server sent none
                answer.usage = estimated_usage(request, answer)
            return answer
        failure = reply.failure or Failure("provider", "the wire ended without an answer")
        refused = refused_locally(failure, request, hint)
        if refused is not None:
            raise refused
        if not failure.retryable or attempt == MAX_RETRIES:
            raise failure
        delay = backoff(attempt, failure.retry_after)
        emit(StreamCleared())
        notice(
            f"request failed ({first_line(describe_failure(failure))}), "
            f"retrying in {delay:.0f}s ({attempt + 1}/{MAX_RETRIES})"
        )
        await asyncio.sleep(delay)
    raise AssertionError("unreachable")


async def stream_once(wire: Any, request: WireRequest, reply: Collector, idle: float) -> None:
    """Run the wire with a stall watchdog: no progress for `idle` seconds fails it."""
    task = asyncio.ensure_future(wire.stream(request, reply))
    try:
        while not reply.finished.done():
            remaining = reply.last_progress + idle - time.monotonic()
            if remaining <= 0:
                reply.fail(Failure("http", f"stream stalled: no data for {idle:.0f}s"))
                break
            await asyncio.wait({task, reply.finished}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
            if task.done() and not reply.finished.done():
                exc = task.exception()
                reply.fail(
                    exc
                    if isinstance(exc, Failure)
                    else Failure(
                        "provider",
                        f"the wire failed: {exc}" if exc else "the wire ended without an answer",
                    )
                )
    finally:
        if not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        elif not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log it
        reply.flush()  # an interrupt saves what streamed: its deltas go out before that
