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

Inspect: `.requests` (a copy: `Recorded(method, path, headers, body, side, step)`, header
names lower-cased, body parsed JSON), `.turn_requests`, `.side_requests`, `.drops`,
`.exhausted`, `.connections` (TCP connections accepted), `wait_for_drops(n, timeout)`.
All thread-safe.
"""

from __future__ import annotations

import contextlib
import http
import json
import select
import socket
import socketserver
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

MODEL = "fake-model"
DEFAULT_USAGE: dict[str, Any] = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
WRITE_BATCH = 256 * 1024  # bytes per HTTP chunk when no gap/drop asks for one event each


# --------------------------------------------------------------------------- steps


@dataclass
class Step:
    """One scripted response. Build it with the helpers below rather than directly."""

    kind: Literal["sse", "status", "drip"] = "sse"
    events: list[bytes] = field(default_factory=list)  # pre-rendered, each a whole event
    usage: dict[str, Any] | None = None  # sent as a usage chunk when include_usage is set
    done: bool = True  # end with `data: [DONE]`
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    delay: float = 0.0
    gap: float = 0.0
    drop_after: int | None = None
    interval: float = 1.0  # drip
    count: int | None = None  # drip
    drip_event: bytes = b": keep-alive\n\n"
    then: Step | None = None  # drip, after `count`
    label: str = ""


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


def _pieces(s: str, size: int) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)]


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
    piece: int = 8,
    usage: dict[str, Any] | None = DEFAULT_USAGE,
    finish: str | None = "tool_calls",
    done: bool = True,
    delay: float = 0.0,
    gap: float = 0.0,
) -> Step:
    """One assistant step with calls: a head chunk (id, name) then argument pieces each."""
    chunks = [chunk({"role": "assistant", "content": text})]
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


def raw_lines(
    lines: Iterable[str], *, status: int = 200, content_type: str = "text/event-stream", delay: float = 0.0
) -> Step:
    """Exact body lines, sent as they are (no usage chunk, no [DONE] added)."""
    events = [(line + "\n").encode() for line in lines]
    return Step(
        kind="sse",
        events=events,
        done=False,
        status=status,
        content_type=content_type,
        delay=delay,
        label="raw",
    )


def status(
    code: int,
    body: str | dict[str, Any] = "",
    headers: dict[str, str] | None = None,
    *,
    content_type: str = "application/json",
    delay: float = 0.0,
) -> Step:
    data = json.dumps(body) if isinstance(body, dict) else body
    return Step(
        kind="status",
        status=code,
        body=data.encode(),
        headers=dict(headers or {}),
        content_type=content_type,
        delay=delay,
        label=f"status {code}",
    )


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
    return Step(
        kind="drip", interval=interval, count=count, drip_event=ev, then=then, delay=delay, label="drip"
    )


# --------------------------------------------------------------------------- server


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    side: bool = False
    step: int | None = None  # index of the script step that answered, None for side/exhausted


class ClientGone(Exception):
    """The client closed the connection while we were answering."""


class FakeOpenAI:
    def __init__(self, *, side_calls: bool = True) -> None:
        self.side_calls = side_calls
        self._lock = threading.Lock()
        self._steps: list[Step] = []
        self._next = 0
        self._requests: list[Recorded] = []
        self._drops = 0
        self._connections = 0
        self._exhausted = False
        self._stopping = threading.Event()
        self._server: socketserver.ThreadingTCPServer | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()
        self.port = 0

    # -- lifecycle

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                fake._serve_connection(self.request)

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        server.daemon_threads = True
        server.allow_reuse_address = True
        server.server_bind()
        server.server_activate()
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script and inspection

    def script(self, *steps: Step) -> FakeOpenAI:
        """Replace the script; the next turn request takes `steps[0]`."""
        with self._lock:
            self._steps = list(steps)
            self._next = 0
            self._exhausted = False
        return self

    def reset(self) -> None:
        """Forget the script, the recorded requests and the drop count."""
        with self._lock:
            self._steps, self._next, self._exhausted = [], 0, False
            self._requests.clear()
            self._drops = 0
            self._connections = 0

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    @property
    def turn_requests(self) -> list[Recorded]:
        return [r for r in self.requests if not r.side]

    @property
    def side_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.side]

    @property
    def drops(self) -> int:
        with self._lock:
            return self._drops

    @property
    def connections(self) -> int:
        """TCP connections accepted (keep-alive reuse shows as fewer than requests)."""
        with self._lock:
            return self._connections

    @property
    def exhausted(self) -> bool:
        with self._lock:
            return self._exhausted

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) - self._next

    def wait_for_drops(self, n: int, timeout: float = 5.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.drops >= n:
                return True
            time.sleep(0.01)
        return self.drops >= n

    # -- one connection: HTTP/1.1 keep-alive, one request after another

    def _serve_connection(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            self._conns.add(conn)
            self._connections += 1
        reader = conn.makefile("rb")
        try:
            while not self._stopping.is_set():
                request = _read_request(reader)
                if request is None:
                    return
                step, keep = self._choose(request)
                try:
                    if not self._answer(conn, request, step):
                        return
                except ClientGone:
                    with self._lock:
                        self._drops += 1
                    return
                if not keep:
                    return
        except OSError:
            return
        finally:
            with self._lock:
                self._conns.discard(conn)
            with contextlib.suppress(OSError):
                reader.close()

    def _choose(self, request: Recorded) -> tuple[Step, bool]:
        """Record the request and pick its answer; the bool says keep the connection."""
        keep = request.headers.get("connection", "").lower() != "close"
        body = request.body if isinstance(request.body, dict) else {}
        with self._lock:
            if self.side_calls and not body.get("tools"):
                request.side = True
                self._requests.append(request)
                return text(_side_answer(body)), keep
            if self._next < len(self._steps):
                request.step = self._next
                step = self._steps[self._next]
                self._next += 1
            else:
                self._exhausted = True
                step = text("done")
            self._requests.append(request)
        return step, keep

    def _answer(self, conn: socket.socket, request: Recorded, step: Step) -> bool:
        """Write the response; False when the connection must not be reused."""
        if step.delay:
            _wait_unless_gone(conn, step.delay)
        if step.kind == "status":
            _send(
                conn, _status_head(step.status, step.content_type, step.headers, len(step.body)) + step.body
            )
            return True
        _send(conn, _stream_head(step.status, step.content_type))
        if step.kind == "drip":
            return self._drip(conn, request, step)
        return self._stream(conn, request, step)

    def _stream(self, conn: socket.socket, request: Recorded, step: Step) -> bool:
        events = list(step.events)
        if step.usage is not None and _wants_usage(request):
            events.append(_render({**chunk({}), "choices": [], "usage": step.usage}))
        if step.done:
            events.append(b"data: [DONE]\n\n")
        if step.drop_after is not None:
            for ev in events[: step.drop_after]:
                _send(conn, _http_chunk(ev))
            _abort(conn)
            return False
        if step.gap:
            for ev in events:
                _send(conn, _http_chunk(ev))
                _wait_unless_gone(conn, step.gap)
                if self._stopping.is_set():
                    return False
        else:
            for batch in _batches(events, WRITE_BATCH):
                _send(conn, _http_chunk(batch))
        _send(conn, b"0\r\n\r\n")
        return True

    def _drip(self, conn: socket.socket, request: Recorded, step: Step) -> bool:
        sent = 0
        while step.count is None or sent < step.count:
            if self._stopping.is_set():
                return False
            _send(conn, _http_chunk(step.drip_event))
            sent += 1
            _wait_unless_gone(conn, step.interval)
        if step.then is not None:
            return self._stream(conn, request, replace(step.then, delay=0.0))
        _send(conn, b"0\r\n\r\n")
        return True


def _side_answer(body: dict[str, Any]) -> str:
    system = " ".join(
        _content_text(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"
    )
    lowered = system.lower()
    return "SUMMARY OF EARLIER WORK" if "compact" in lowered or "summar" in lowered else "Title"


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


# --------------------------------------------------------------------------- HTTP bits


def _read_request(reader: Any) -> Recorded | None:
    line = reader.readline(65536)
    if not line or not line.strip():
        return None
    method, path, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        h = reader.readline(65536).decode("latin-1").rstrip("\r\n")
        if not h:
            break
        name, _, value = h.partition(":")
        headers[name.strip().lower()] = value.strip()
    raw = reader.read(int(headers.get("content-length", "0") or 0))
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode("utf-8", "replace")
    return Recorded(method=method, path=path, headers=headers, body=body)


def _reason(code: int) -> str:
    try:
        return http.HTTPStatus(code).phrase
    except ValueError:
        return "Unknown"


def _status_head(code: int, content_type: str, headers: dict[str, str], length: int) -> bytes:
    lines = [f"HTTP/1.1 {code} {_reason(code)}", f"Content-Type: {content_type}", f"Content-Length: {length}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _stream_head(code: int, content_type: str) -> bytes:
    head = f"HTTP/1.1 {code} {_reason(code)}\r\nContent-Type: {content_type}\r\nCache-Control: no-cache\r\n"
    return (head + "Transfer-Encoding: chunked\r\n\r\n").encode("latin-1")


def _http_chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _batches(events: Sequence[bytes], size: int) -> Iterable[bytes]:
    batch: list[bytes] = []
    total = 0
    for ev in events:
        batch.append(ev)
        total += len(ev)
        if total >= size:
            yield b"".join(batch)
            batch, total = [], 0
    if batch:
        yield b"".join(batch)


def _send(conn: socket.socket, data: bytes) -> None:
    try:
        conn.sendall(data)
    except OSError as e:  # broken pipe / reset: the client went away
        raise ClientGone() from e


def _abort(conn: socket.socket) -> None:
    """Close mid-body, so the client sees an incomplete chunked message."""
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    conn.close()


def _wait_unless_gone(conn: socket.socket, seconds: float) -> None:
    """Sleep `seconds`, but notice at once when the client closes its end."""
    end = time.monotonic() + seconds
    readable, _, _ = select.select([conn], [], [], seconds)
    if readable:
        try:
            data = conn.recv(1, socket.MSG_PEEK)
        except OSError as e:
            raise ClientGone() from e
        if not data:
            raise ClientGone()
        time.sleep(max(0.0, end - time.monotonic()))  # stray bytes, not a close: keep the pace
