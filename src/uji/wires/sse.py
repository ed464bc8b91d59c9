"""The shared SSE reader every HTTP wire streams through (reference internals §6).

    async with open_sse(client, url, headers=h, body=b, idle=120.0) as events:
        async for obj in events:      # parsed JSON objects from `data:` events
            ...                       # the wire decodes obj, and on real progress:
            events.progress()         # pushes the stall deadline forward

What it owns, so no wire repeats it:

- POSTs the body as JSON (`Content-Type` and `Accept` added).
- Maps a non-2xx status to a `Failure`: 401/403 → `auth`, anything else → `http` with the
  status, an integer `retry-after`, and the body clipped to 2000 characters. A 2xx that
  is not `text/event-stream` is a `provider` failure quoting the start of the body.
- Yields the JSON objects of `data:` events; `[DONE]` ends the stream. Comment lines,
  `event:`-only events and data that is not a JSON object are skipped (a torture test
  feeds garbage between events).
- A dropped connection becomes a retryable `http` failure without a status.
- The stall watchdog: one `asyncio.timeout()` around the whole call, its deadline moved
  forward by `progress()`. Only the wire knows what progress is (keep-alives and empty
  deltas are not), so the reader never moves it by itself. A stall fails with
  "stream stalled: no data for Ns".

The watchdog works by cancelling the task; `open_sse` turns that cancellation into the
stall failure when it unwinds through the context, so anything the body awaits counts
against the same deadline. Cancelling the task from outside drops the connection at once
(the response is closed unread) and propagates as a plain cancellation.
After `[DONE]` the rest of the body is read for at most DRAIN_SECONDS, so the
connection goes back to the pool for the next call of the turn.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx2

from .base import Failure

BODY_CLIP = 2000  # characters of an error body we keep (reference internals §1)
QUOTE_CLIP = 500  # characters of an unexpected 2xx body quoted in the failure
# One event may be a whole 5 MB reply (a torture case); httpx2's default cap is 1 MB.
MAX_EVENT_BYTES = 64 * 1024 * 1024
# `progress()` runs once per delta (50,000 of them in a torture case). Rescheduling the
# timer each time costs a timer handle and a heap push, so it is moved at most once per
# `grain`, each time to `idle + grain` ahead: a stall then fires between `idle` and
# `idle + grain` after the last progress — late by a hair, never early.
MAX_GRAIN = 0.1
DRAIN_SECONDS = 0.5


class SSEStream:
    """An open event stream. Iterate it once; call `progress()` on real progress."""

    def __init__(self, source: httpx2.EventSource, timeout: asyncio.Timeout, idle: float) -> None:
        self._source = source
        self._timeout = timeout
        self._idle = idle
        self._grain = min(MAX_GRAIN, idle / 20)
        self._clock: Callable[[], float] = asyncio.get_running_loop().time
        self._next_move = 0.0
        self.saw_done = False  # True once `data: [DONE]` arrived
        self.progress()

    @property
    def response(self) -> httpx2.Response:
        return self._source.response

    def progress(self) -> None:
        """Something real arrived: the stall deadline restarts from now."""
        now = self._clock()
        if now >= self._next_move:
            self._next_move = now + self._grain
            self._timeout.reschedule(now + self._idle + self._grain)

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        loads = json.loads
        events = aiter(self._source)
        async for event in events:
            data = event.data
            if not data:  # comments never get here; `event:`-only blocks do
                continue
            if data == "[DONE]":
                self.saw_done = True
                await _drain(events)
                return
            try:
                obj = loads(data)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj


async def _drain(events: AsyncIterator[Any]) -> None:
    """Read to the end of the body after [DONE], briefly: a response read to its end
    returns its connection to the pool, so the next call of the turn skips a new TCP
    and TLS handshake. A server that keeps the stream open only costs DRAIN_SECONDS."""
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in events:
                pass
    except (TimeoutError, httpx2.HTTPError):
        pass


@asynccontextmanager
async def open_sse(
    client: httpx2.AsyncClient,
    url: str,
    *,
    headers: dict[str, str],
    body: dict[str, Any],
    idle: float,
) -> AsyncIterator[SSEStream]:
    """POST `body` and give an `SSEStream`; every failure leaves as a `Failure`."""
    # A lone surrogate (a model can send one as `\udc80` in its arguments) cannot be UTF-8;
    # written back as the same JSON escape, the request stays valid.
    payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")
    sent = {"Content-Type": "application/json", "Accept": "text/event-stream", **headers}
    # Waiting for the status line counts against `idle` too: a server that never
    # answers is as stalled as one that stops mid-stream.
    timeout = asyncio.timeout_at(asyncio.get_running_loop().time() + idle)
    try:
        async with (
            timeout,
            client.sse(
                url, method="POST", content=payload, headers=sent, max_event_size=MAX_EVENT_BYTES
            ) as source,
        ):
            await _check_response(source.response)
            yield SSEStream(source, timeout, idle)
    except TimeoutError:
        if not timeout.expired():
            raise
        raise Failure("http", f"stream stalled: no data for {idle:g}s") from None
    except httpx2.SSEError as e:  # before TransportError: SSEError is one
        raise Failure("provider", f"bad event stream: {e}") from None
    except httpx2.TransportError as e:
        raise Failure("http", _transport_message(e)) from None
    except httpx2.HTTPError as e:  # decoding errors and the like: not worth a retry
        raise Failure("provider", f"bad response: {e}") from None


async def _check_response(response: httpx2.Response) -> None:
    status = response.status_code
    if status in (401, 403):
        message = f"authentication rejected ({status}) - check the api key for this provider"
        raise Failure("auth", message, status=status)
    if not 200 <= status <= 299:
        text = await read_clipped(response, BODY_CLIP)
        raise Failure(
            "http",
            f"http: {status}: {text}",
            status=status,
            retry_after=retry_after(response.headers.get("retry-after")),
        )
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if content_type != "text/event-stream":
        text = await read_clipped(response, QUOTE_CLIP)
        got = content_type or "no content type"
        raise Failure("provider", f"expected an event stream, got {got}: {text}")


async def read_clipped(response: httpx2.Response, limit: int) -> str:
    """The start of the body, without reading more of a huge error page than needed."""
    parts: list[str] = []
    size = 0
    async for chunk in response.aiter_text():
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return "".join(parts)[:limit].strip()


def retry_after(value: str | None) -> float | None:
    """Seconds from a `retry-after` header; an HTTP date is not honoured (as the original)."""
    if value is None:
        return None
    value = value.strip()
    return float(value) if value.isdigit() else None


def _transport_message(error: httpx2.TransportError) -> str:
    detail = str(error) or type(error).__name__
    if isinstance(error, httpx2.TimeoutException):
        return f"connection timed out: {detail}"
    if isinstance(error, httpx2.ConnectError):
        return f"could not connect: {detail}"
    return f"connection dropped mid-stream: {detail}"
