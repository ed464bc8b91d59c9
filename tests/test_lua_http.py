"""uji.http.request through real Lua against a real HTTP server on 127.0.0.1: both call
forms, statuses, headers, streaming lines with the idle watchdog, timeouts, cancel, and
argument errors at the caller's line."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.waiting import DEADLINE
from uji.app import App
from uji.lua.runtime import LuaError
from uji.paths import resolve


class Handler(BaseHTTPRequestHandler):
    """Routes: /hello, /echo, /status/N, /redirect, /slow, /held/NAME, /lines, /ticks/N."""

    release = threading.Event()  # /held/NAME answers once the test sets it

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        self.route()

    def do_POST(self) -> None:
        self.route()

    def do_PATCH(self) -> None:
        self.route()

    def route(self) -> None:
        path = self.path
        if path == "/hello":
            self.reply(200, b"hello", [("X-Test", "Yes"), ("X-Multi", "a"), ("X-Multi", "b")])
        elif path == "/echo":
            size = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(size).decode()
            data = {
                "method": self.command,
                "body": body,
                "headers": {k.lower(): v for k, v in self.headers.items()},
            }
            self.reply(200, json.dumps(data).encode(), [("Content-Type", "application/json")])
        elif path.startswith("/status/"):
            self.reply(int(path.rsplit("/", 1)[1]), b"nope")
        elif path == "/redirect":
            self.reply(302, b"", [("Location", "/hello")])
        elif path == "/slow":
            time.sleep(0.3)
            self.reply(200, b"late")
        elif path.startswith("/held/"):
            try:
                if Handler.release.wait(30):
                    self.reply(200, b"late")
            except OSError:  # the client went away (a cancel)
                pass
        elif path == "/lines":
            self.stream([b"one\n", b"two\r\n", b"thr", b"ee\nlast"], gap=0.02)
        elif path.startswith("/ticks/"):
            self.stream([b"tick\n"] * int(path.rsplit("/", 1)[1]), gap=0.05)
        else:
            self.reply(404, b"no route")

    def reply(self, status: int, body: bytes, headers: Sequence[tuple[str, str]] = ()) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream(self, chunks: list[bytes], gap: float) -> None:
        # HTTP/1.0 without a length: the body ends when the connection closes.
        self.send_response(200)
        self.end_headers()
        try:
            for chunk in chunks:
                self.wfile.write(chunk)
                self.wfile.flush()
                time.sleep(gap)
        except OSError:  # the client went away (a stall or a cancel)
            pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    notices: list[str] = []
    a = App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path), notice=notices.append)
    a.notices = notices  # type: ignore[attr-defined]
    yield a
    await a.http.aclose()


async def lua(app: App, source: str) -> tuple:
    rt = app.lua
    return await rt.call(rt.load_source(source, "/cfg/test.lua"))


def py(app: App, value: object) -> object:
    return app.lua.convert.to_python(value)


def notices(app: App) -> list[str]:
    return app.notices  # type: ignore[attr-defined]


async def until(check: Callable[[], bool], timeout: float = DEADLINE) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.005)


# -- responses -------------------------------------------------------------------------------


async def test_get_waits_for_the_response(app: App, server: str) -> None:
    (r,) = await lua(app, f"return uji.http.request{{ url = '{server}/hello' }}")
    got = py(app, r)
    assert isinstance(got, dict)
    assert (got["status"], got["body"]) == (200, "hello")
    assert got["headers"]["x-test"] == "Yes"  # names lower-cased
    assert got["headers"]["x-multi"] == "a, b"


async def test_method_headers_and_body_are_sent(app: App, server: str) -> None:
    (r,) = await lua(
        app,
        f"return uji.http.request{{ url = '{server}/echo', method = 'post',"
        " headers = { ['X-Token'] = 'abc', ['X-N'] = 5 }, body = 'payload é' }",
    )
    sent = json.loads(py(app, r)["body"])  # type: ignore[index]
    assert sent["method"] == "POST" and sent["body"] == "payload é"
    assert sent["headers"]["x-token"] == "abc" and sent["headers"]["x-n"] == "5"


async def test_a_non_2xx_status_is_still_a_response(app: App, server: str) -> None:
    (status, body, err) = await lua(
        app, f"local r, err = uji.http.request{{ url = '{server}/status/404' }}; return r.status, r.body, err"
    )
    assert (status, body, err) == (404, "nope", None)


async def test_redirects_are_followed(app: App, server: str) -> None:
    (status, body) = await lua(
        app, f"local r = uji.http.request{{ url = '{server}/redirect' }}; return r.status, r.body"
    )
    assert (status, body) == (200, "hello")


async def test_callback_form_returns_a_cancel_function(app: App, server: str) -> None:
    (kind,) = await lua(
        app,
        f"return type(uji.http.request({{ url = '{server}/status/500' }},"
        " function(r, err) uji.notify(r.status .. ' ' .. r.body) end))",
    )
    assert kind == "function"
    await until(lambda: bool(notices(app)))
    assert notices(app) == ["500 nope"]


async def test_cancel_drops_the_request_without_calling_back(app: App, server: str) -> None:
    Handler.release.clear()
    await lua(
        app,
        f"local cancel = uji.http.request({{ url = '{server}/held/cancelled' }}, function() uji.notify('called') end); cancel()"
        f"\nuji.http.request({{ url = '{server}/held/control' }}, function(r) uji.notify('control ' .. r.body) end)",
    )
    Handler.release.set()  # both answer now (if the cancelled one got out): only one calls back
    await until(lambda: "control late" in notices(app))
    (r,) = await lua(app, f"return uji.http.request{{ url = '{server}/hello' }}.body")  # a round trip more
    assert r == "hello"
    assert notices(app) == ["control late"]


# -- failures are nil, err ---------------------------------------------------------------------


async def test_timeout_is_nil_err(app: App, server: str) -> None:
    (r, err) = await lua(app, f"return uji.http.request{{ url = '{server}/slow', timeout = 0.1 }}")
    assert r is None and err == "timed out after 0.1s"


async def test_connection_refused_is_nil_err(app: App) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    (r, err) = await lua(app, f"return uji.http.request{{ url = 'http://127.0.0.1:{port}/' }}")
    assert r is None and err.startswith("could not connect:")


async def test_failure_reaches_the_callback_as_nil_err(app: App, server: str) -> None:
    await lua(
        app,
        f"uji.http.request({{ url = '{server}/slow', timeout = 0.05 }}, function(r, err) uji.notify(tostring(r) .. '|' .. err) end)",
    )
    await until(lambda: bool(notices(app)))
    assert notices(app) == ["nil|timed out after 0.05s"]


# -- streaming ---------------------------------------------------------------------------------


async def test_on_line_gets_each_line_and_the_body_stays_whole(app: App, server: str) -> None:
    (r,) = await lua(
        app,
        f"local r = uji.http.request{{ url = '{server}/lines', on_line = function(l) uji.notify(l) end }}; return r",
    )
    assert notices(app) == ["one", "two", "three", "last"]
    assert py(app, r)["body"] == "one\ntwo\r\nthree\nlast"  # type: ignore[index]


async def test_lines_that_are_progress_keep_a_stream_alive(app: App, server: str) -> None:
    # 40 ticks 0.05 s apart: twice `idle` in all, but never idle for that long (a wide
    # margin, so a loaded machine's scheduling gaps don't look like a stall).
    (status,) = await lua(
        app,
        f"return uji.http.request{{ url = '{server}/ticks/40', idle = 1.0, on_line = function() end }}.status",
    )
    assert status == 200


async def test_lines_answered_false_are_not_progress(app: App, server: str) -> None:
    (r, err) = await lua(
        app,
        f"return uji.http.request{{ url = '{server}/ticks/20', idle = 0.2, on_line = function() return false end }}",
    )
    assert r is None and err == "stream stalled: no progress for 0.2s"


async def test_a_raising_on_line_fails_the_request(app: App, server: str) -> None:
    (r, err) = await lua(
        app,
        f"return uji.http.request{{ url = '{server}/lines', on_line = function(l) error('bad line') end }}",
    )
    assert r is None and err.startswith("/cfg/test.lua:1:") and "bad line" in err


async def test_streaming_with_a_callback(app: App, server: str) -> None:
    await lua(
        app,
        f"uji.http.request({{ url = '{server}/lines', on_line = function(l) uji.notify('line ' .. l) end }},"
        " function(r) uji.notify('done ' .. r.status) end)",
    )
    await until(lambda: "done 200" in notices(app))
    assert notices(app) == ["line one", "line two", "line three", "line last", "done 200"]


# -- argument errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("{}", "uji.http.request: `url` is required and must be a string"),
        ("{ url = 'ftp://x/' }", "uji.http.request: bad url 'ftp://x/': the scheme must be http or https"),
        ("{ url = 'http:///path' }", "uji.http.request: bad url 'http:///path': it names no host"),
        ("{ url = 'http://x/', method = 'GE T' }", "uji.http.request: bad method 'GE T'"),
        (
            "{ url = 'http://x/', headers = { ['bad name'] = 'v' } }",
            "uji.http.request: bad header name 'bad name'",
        ),
        (
            "{ url = 'http://x/', headers = { a = 'x\\ny' } }",
            "uji.http.request: the value of header 'a' holds a line break or NUL",
        ),
        (
            "{ url = 'http://x/', headers = { a = {} } }",
            "uji.http.request: the value of header a must be a string",
        ),
        ("{ url = 'http://x/', timeout = 0 }", "uji.http.request: `timeout` must be a number of seconds > 0"),
        ("{ url = 'http://x/', on_line = 1 }", "uji.http.request: `on_line` must be a function"),
        ("'http://x/'", "uji.http.request expects a table {url = ..., method = ..., ...}"),
    ],
)
async def test_bad_arguments_raise_at_the_callers_line(app: App, args: str, message: str) -> None:
    with pytest.raises(LuaError) as err:
        await lua(app, f"local x = 1\nuji.http.request({args})")
    assert str(err.value) == f"/cfg/test.lua:2: {message}"


def test_httpx2_is_not_loaded_at_start_up() -> None:
    import subprocess
    import sys

    code = "import sys, uji.app, uji.lua.api.http; print('httpx2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
