"""The shared SSE reader every HTTP wire streams through (reference internals §6).

    async with open_sse(client, url, headers=h, body=b, idle=120.0) as events:
        async for datas in events.batches():  # the events' data of one network read
            for obj in objects(datas):        # their JSON objects, decoded as used
                ...                           # the wire decodes obj, and on real progress:
                events.progress()             # pushes the stall deadline forward

What it owns, so no wire repeats it:

- POSTs the body as JSON (`Content-Type` and `Accept` added).
- Maps a non-2xx status to a `Failure`: 401/403 → `auth`, anything else → `http` with the
  status, an integer `retry-after`, and the body clipped to 2000 characters. A 2xx that
  is not `text/event-stream` is a `provider` failure quoting the start of the body.
- Yields the JSON objects of `data:` events; `[DONE]` ends the stream. Comment lines,
  `event:`-only events and data that is not a JSON object are skipped (a torture test
  feeds garbage between events). The events are cut out of the response's bytes here
  (`EventSplitter`), all those of one read at once, and their JSON read by the C scanner
  directly: an `EventSource` object per line and per event (as httpx-sse builds)
  was the largest cost per delta of a streamed answer (bench/wires.py).
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
import codecs
import json
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from .base import Failure

if TYPE_CHECKING:
    from .transport import Client, Response, TransportError

BODY_CLIP = 2000  # characters of an error body we keep (reference internals §1)
QUOTE_CLIP = 500  # characters of an unexpected 2xx body quoted in the failure
# One event may be a whole 5 MB reply (a torture case); a bigger one than this, in
# characters, fails the stream rather than filling memory.
MAX_EVENT_CHARS = 64 * 1024 * 1024
JSON_SPACE = " \t\n\r"  # the whitespace JSON allows around a value
DRAIN_SECONDS = 0.5


class EventStreamError(Exception):
    """The event stream cannot be read (an event past the size limit)."""


class SSEStream:
    """An open event stream. Iterate `batches()` once; call `progress()` on real progress."""

    def __init__(self, response: Response, timeout: asyncio.Timeout, idle: float) -> None:
        self._response = response
        self._timeout = timeout
        self._idle = idle
        self._clock: Callable[[], float] = asyncio.get_running_loop().time
        self._moved = False
        self.saw_done = False  # True once `data: [DONE]` arrived
        timeout.reschedule(self._clock() + idle)  # the status came: `idle` for the first event

    @property
    def response(self) -> Response:
        return self._response

    def progress(self) -> None:
        """Something real arrived: the stall deadline restarts from now. (It is moved when
        the reader next waits for the network: a read's events are handled without a
        pause, so that is the same instant to the timer, and it costs one timer move per
        read instead of one per delta.)"""
        self._moved = True

    def _settle(self) -> None:
        if self._moved:
            self._moved = False
            self._timeout.reschedule(self._clock() + self._idle)

    async def batches(self) -> AsyncIterator[list[str]]:
        """The data of the events, a list per network read that held any, up to
        `[DONE]`. `objects()` reads them: decoded one at a time as they are used, a
        long answer's chunks never pile up for the garbage collector."""
        splitter = EventSplitter()
        chunks = aiter(self._response.aiter_bytes())
        final = False
        while not final:
            try:
                chunk = await anext(chunks)
            except StopAsyncIteration:
                chunk, final = b"", True
            datas = splitter.feed(chunk, final=final)
            if not datas:
                continue
            done = "[DONE]" in datas
            if done:
                datas = datas[: datas.index("[DONE]")]
            if datas:
                yield datas
                self._settle()
            if done:
                self.saw_done = True
                await _drain(chunks)
                return


class EventSplitter:
    """The `data` of each whole event of an event stream, fed one network read at a time
    (the WHATWG interpretation): lines end in LF, CRLF or CR, split anywhere between
    reads; a blank line ends an event; its `data` lines are joined with LF; comments and
    the other fields (`event`, `id`, `retry`) are not needed here and skipped; a leading
    byte order mark is dropped; an event the body ends inside is dropped. Text that is
    not UTF-8 becomes U+FFFD. An event growing past `limit` characters fails the stream.

    Whole events in a read are cut out of it at once (the common event, one `data:`
    line, with a single slice), so the cost per event stays small at 50,000 deltas.
    """

    def __init__(self, limit: int = MAX_EVENT_CHARS) -> None:
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._limit = limit
        self._tail: list[str] = []  # the event being received: LF-ended lines, no blank line
        self._size = 0  # characters in _tail
        self._cr = False  # the last read ended in CR: it may be half of a CRLF
        self._start = True

    def feed(self, chunk: bytes, final: bool = False) -> list[str]:
        """The data of the events `chunk` completes; `final`: the body ended after it."""
        text = self._text(chunk, final)
        tail = self._tail
        if "\n\n" not in text and not (text[:1] == "\n" and tail and tail[-1][-1] == "\n"):
            if text:
                tail.append(text)
                self._grew(self._size + len(text))
            return []
        whole = "".join(tail) + text if tail else text
        cut = whole.rfind("\n\n")
        rest = whole[cut + 2 :]
        self._tail = [rest] if rest else []
        self._grew(len(rest))
        return _events(whole[:cut])

    def _text(self, chunk: bytes, final: bool) -> str:
        """The chunk decoded, without the stream's BOM, its line ends as LF (a CR at its end
        waits for the next read: it may be half of a CRLF)."""
        text = self._decode(chunk, final)
        if self._start and text:
            self._start = False
            text = text.removeprefix("\ufeff")
        if self._cr:
            text = "\r" + text
            self._cr = False
        if text.endswith("\r") and not final:
            self._cr = True
            text = text[:-1]
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text

    def _grew(self, size: int) -> None:
        """The event being received is now `size` characters: past the limit, the stream fails."""
        self._size = size
        if size > self._limit:
            raise EventStreamError(f"an event exceeded the {self._limit} character limit")


def _events(done: str) -> list[str]:
    """The data of each event in `done` (whole events, LF line ends)."""
    out = done.split("\n\ndata: ")
    if done[:6] == "data: " and done.count("\n") == 2 * len(out) - 2:
        # Every newline is between events: each is one `data: ` line (Chat Completions).
        out[0] = out[0][6:]
        return out
    out = []
    for block in done.split("\n\n"):
        # The common events: one `data:` line, or an `event:` line and one `data:` line.
        line = block
        if line[:6] == "event:":
            line = line[line.find("\n") + 1 :]
        if line[:5] == "data:" and "\n" not in line:
            out.append(line[6:] if line[5:6] == " " else line[5:])
        elif block:
            _block_data(block, out)
    return out


def _block_data(block: str, out: list[str]) -> None:
    """The data of the events in `block` (LF-separated lines, blank ones among them
    ending events) appended to `out`."""
    data: list[str] = []
    for line in block.split("\n"):
        if not line:
            if data:
                out.append("\n".join(data))
                data = []
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value[:1] == " " else value)
    if data:
        out.append("\n".join(data))


# The scanner json.loads ends in (C in CPython), called without the three Python layers
# and two regex matches above it: half the cost of decoding a small chunk.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def objects(datas: list[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects among the events' data; data that is not a JSON object is skipped."""
    scan = _scan
    for data in datas:
        try:
            obj, end = scan(data, 0)
        except StopIteration:  # empty, or space before the value
            obj = _loads(data)
            if obj is None:
                continue
        except ValueError:
            continue
        else:
            if end != len(data) and data[end:].strip(JSON_SPACE):
                continue  # more after the value: not JSON
            if obj.__class__ is not dict:
                continue
        yield obj


def _loads(data: str) -> dict[str, Any] | None:
    try:
        obj = json.loads(data)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


async def _drain(chunks: AsyncIterator[Any]) -> None:
    from .transport import HTTPError

    """Read to the end of the body after [DONE], briefly: a response read to its end
    returns its connection to the pool, so the next call of the turn skips a new TCP
    and TLS handshake. A server that keeps the stream open only costs DRAIN_SECONDS."""
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in chunks:
                pass
    except (TimeoutError, HTTPError):
        pass


@asynccontextmanager
async def open_sse(
    client: Client,
    url: str,
    *,
    headers: dict[str, str],
    body: Mapping[str, object],
    idle: float,
) -> AsyncIterator[SSEStream]:
    """POST `body` and give an `SSEStream`; every failure leaves as a `Failure`."""
    from .transport import HTTPError, TransportError

    # A lone surrogate (a model can send one as `\udc80` in its arguments) cannot be UTF-8;
    # written back as the same JSON escape, the request stays valid.
    payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")
    sent = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "Cache-Control": "no-store",
        **headers,
    }
    # Waiting for the status line counts against `idle` too: a server that never
    # answers is as stalled as one that stops mid-stream.
    timeout = asyncio.timeout_at(asyncio.get_running_loop().time() + idle)
    try:
        async with (
            timeout,
            client.stream("POST", url, content=payload, headers=sent) as response,
        ):
            await _check_response(response)
            yield SSEStream(response, timeout, idle)
    except TimeoutError:
        if not timeout.expired():
            raise
        raise Failure("http", f"stream stalled: no data for {idle:g}s") from None
    except EventStreamError as e:
        raise Failure("provider", f"bad event stream: {e}") from None
    except TransportError as e:
        raise Failure("http", _transport_message(e)) from None
    except HTTPError as e:  # a bad URL and the like: not worth a retry
        raise Failure("provider", f"bad response: {e}") from None


async def _check_response(response: Response) -> None:
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
    content_type = (response.headers.get("content-type") or "").partition(";")[0].strip().lower()
    if content_type != "text/event-stream":
        text = await read_clipped(response, QUOTE_CLIP)
        got = content_type or "no content type"
        raise Failure("provider", f"expected an event stream, got {got}: {text}")


async def read_clipped(response: Response, limit: int) -> str:
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


def _transport_message(error: TransportError) -> str:
    from .transport import ConnectError, ConnectTimeout

    detail = str(error) or type(error).__name__
    if isinstance(error, ConnectTimeout):
        return f"connection timed out: {detail}"
    if isinstance(error, ConnectError):
        return f"could not connect: {detail}"
    return f"connection dropped mid-stream: {detail}"
