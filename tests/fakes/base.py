"""The machinery every fake model server shares: a loopback HTTP/1.1 listener in a
background thread, a script of steps, request recording, and real SSE over chunked
bodies. Each provider's format lives in its own module (openai_server, anthropic_server,
gemini_server), which subclasses `FakeServer` and supplies the step builders.

A subclass supplies its format:

- `_text(content)`: a plain text answer, as a step. Side calls (requests without tools:
  titles and compaction summaries) get "Title" or "SUMMARY OF EARLIER WORK" without
  taking a step, and a turn once the script has run out gets "done";
- `_system(body)`: the system prompt of a request, as text (it tells the side calls apart);
- `_tail(request, step)`: events appended to an SSE step (OpenAI's usage chunk and
  `[DONE]`); the default appends nothing.

Steps built here are format-free: `raw_lines`, `status`, `drop_after`, `drip`.
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
from typing import TYPE_CHECKING, Any, Literal, Self

if TYPE_CHECKING:
    from uji.wires.base import Answer, Failure, WireRequest

WRITE_BATCH = 256 * 1024  # bytes per HTTP chunk when no gap/drop asks for one event each


# --------------------------------------------------------------------------- steps


@dataclass
class Step:
    """One scripted response. Build it with the helpers rather than directly."""

    kind: Literal["sse", "status", "drip"] = "sse"
    events: list[bytes] = field(default_factory=list)  # pre-rendered, each a whole event
    usage: dict[str, Any] | None = None  # OpenAI: sent as a usage chunk when include_usage is set
    done: bool = True  # OpenAI: end with `data: [DONE]`
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


def sse(obj: Any, name: str | None = None) -> bytes:
    """One whole SSE event: an optional `event:` line, then the `data:` line."""
    data = b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"
    return b"event: " + name.encode() + b"\n" + data if name else data


def pieces(s: str, size: int) -> list[str]:
    return [s[i : i + size] for i in range(0, len(s), size)]


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


def cut(step: Step, n_events: int) -> Step:
    """`step` cut off after n events: the socket closes mid-body."""
    return replace(step, drop_after=n_events, label=f"drop after {n_events}")


def drip_step(
    interval: float,
    count: int | None,
    event: bytes,
    *,
    then: Step | None = None,
    delay: float = 0.0,
) -> Step:
    """`event` every `interval` s until the client drops (counted in `.drops`); with
    `count`, stops after that many and streams `then` (default: ends the body)."""
    return Step(
        kind="drip", interval=interval, count=count, drip_event=event, then=then, delay=delay, label="drip"
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


class FakeServer:
    PREFIX = "/v1"  # the path part of `base_url`

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
        # GET listings, as a local server answers them: `/v1/models` (OpenAI) and
        # `/api/tags` (Ollama). None answers 404. Each GET is counted in `.listings`.
        self.models: list[str] | None = None
        self.tags: list[str] | None = None
        self._listings: list[str] = []

    # -- what a format supplies

    def _text(self, content: str) -> Step:
        raise NotImplementedError

    def _system(self, body: dict[str, Any]) -> str:
        raise NotImplementedError

    def _side_step(self, body: dict[str, Any]) -> Step:
        return self._text(side_answer(self._system(body)))

    def _default_step(self) -> Step:
        return self._text("done")

    def _tail(self, request: Recorded, step: Step) -> list[bytes]:
        return []

    def _is_side(self, body: dict[str, Any]) -> bool:
        return not body.get("tools")

    # -- lifecycle

    def start(self) -> Self:
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.PREFIX}"

    # -- script and inspection

    def script(self, *steps: Step) -> Self:
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
    def open_connections(self) -> int:
        """TCP connections the client still holds open."""
        with self._lock:
            return len(self._conns)

    def wait_for_open_connections(self, n: int, timeout: float = 60.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.open_connections == n:
                return True
            time.sleep(0.01)
        return self.open_connections == n

    @property
    def exhausted(self) -> bool:
        with self._lock:
            return self._exhausted

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) - self._next

    def wait_for_drops(self, n: int, timeout: float = 60.0) -> bool:
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
                if request.method == "GET":
                    _send(conn, self._listing(request.path))
                    continue
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

    @property
    def listings(self) -> list[str]:
        """The paths of the GET requests seen (model listings)."""
        with self._lock:
            return list(self._listings)

    def _listing(self, path: str) -> bytes:
        with self._lock:
            self._listings.append(path)
            models, tags = self.models, self.tags
        doc: Any = None
        if path == f"{self.PREFIX}/models" and models is not None:
            doc = {
                "object": "list",
                "data": [{"id": m, "object": "model", "owned_by": "fake"} for m in models],
            }
        elif path == "/api/tags" and tags is not None:
            doc = {"models": [{"name": m, "model": m, "details": {"family": "fake"}} for m in tags]}
        if doc is None:
            return _status_head(404, "text/plain", {}, 9) + b"not found"
        body = json.dumps(doc).encode()
        return _status_head(200, "application/json", {}, len(body)) + body

    def _choose(self, request: Recorded) -> tuple[Step, bool]:
        """Record the request and pick its answer; the bool says keep the connection."""
        keep = request.headers.get("connection", "").lower() != "close"
        body = request.body if isinstance(request.body, dict) else {}
        with self._lock:
            if self.side_calls and self._is_side(body):
                request.side = True
                self._requests.append(request)
                return self._side_step(body), keep
            if self._next < len(self._steps):
                request.step = self._next
                step = self._steps[self._next]
                self._next += 1
            else:
                self._exhausted = True
                step = self._default_step()
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
        events = [*step.events, *self._tail(request, step)]
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


def side_answer(system: str) -> str:
    """The text of a side call: a summary when the system prompt asks to compact or
    summarise, else a title."""
    lowered = system.lower()
    return "SUMMARY OF EARLIER WORK" if "compact" in lowered or "summar" in lowered else "Title"


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


# --------------------------------------------------------------------------- a request, a recording Reply


def wire_request(base_url: str, **fields: Any) -> WireRequest:
    """A small WireRequest for wire tests: the user says "hi" to model "m", the read_file
    tool is offered, key "sk-test", session "sess-1"; `fields` set any field."""
    from tests import golden
    from uji.wires.base import WireRequest

    return WireRequest(
        **{
            "model": "m",
            "system": "You are a test.",
            "messages": [{"type": "user", "text": "hi"}],
            "tools": golden.TOOLS[:1],
            "provider": {"id": "test", "base_url": base_url},
            "auth": {"key": "sk-test"},
            "session": "sess-1",
        }
        | fields
    )


@dataclass
class RecordingReply:
    """A wire's `Reply` that keeps everything it is told, for wire tests."""

    texts: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)
    touches: int = 0
    ends: list[Any] = field(default_factory=list)  # Answer or Failure, exactly one expected

    def text(self, delta: str) -> None:
        self.texts.append(delta)

    def reasoning(self, delta: str) -> None:
        self.thoughts.append(delta)

    def touch(self) -> None:
        self.touches += 1

    def done(self, answer: Any) -> None:
        self.ends.append(answer)

    def fail(self, failure: Any) -> None:
        self.ends.append(failure)

    def answer(self) -> Answer:
        """The Answer the call ended with; fails the test unless it ended with exactly one."""
        from uji.wires.base import Answer

        assert len(self.ends) == 1, self.ends
        assert isinstance(self.ends[0], Answer), self.ends[0]
        return self.ends[0]

    def failure(self) -> Failure:
        """The Failure the call ended with; fails the test unless it ended with exactly one."""
        from uji.wires.base import Failure

        assert len(self.ends) == 1, self.ends
        assert isinstance(self.ends[0], Failure), self.ends[0]
        return self.ends[0]
