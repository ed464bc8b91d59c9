"""The HTTP transport (uji.wires.transport) from outside: through the real `uji run` where a
user would see it (proxies, a CONNECT tunnel to a TLS server, a TLS failure), and on the
wire against loopback servers that misbehave (slow, cut, malformed, stalled, closing an
idle connection, redirecting, compressing)."""

from __future__ import annotations

import contextlib
import gzip
import socket
import threading
from collections.abc import Callable, Iterator
from urllib.parse import urlsplit

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text
from tests.loopback import pump, serving
from tests.test_startup_exit import https_init, self_signed, tls_front
from uji.wires.transport import Client, ConnectError, ProtocolError, ReadError, TooManyRedirects

pytestmark = pytest.mark.timeout(60)


# --------------------------------------------------------------------------- loopback servers


def read_head(conn: socket.socket) -> tuple[str, dict[str, str], bytes]:
    """The request line, the headers (lower-case names) and what came after the head."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise OSError("closed before the head ended")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    line, *fields = head.decode("latin-1").split("\r\n")
    headers = {}
    for field in fields:
        name, _, value = field.partition(":")
        headers[name.strip().lower()] = value.strip()
    return line, headers, rest


def read_request(conn: socket.socket) -> tuple[str, dict[str, str], bytes]:
    line, headers, body = read_head(conn)
    while len(body) < int(headers.get("content-length", "0")):
        body += conn.recv(65536)
    return line, headers, body


class Proxy:
    """An HTTP proxy on loopback: CONNECT tunnels, and forwarding of absolute-form http
    requests (the first of a connection rewritten to origin form). It records each
    connection's first request line and its Proxy-Authorization; `refuse` answers 403."""

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse
        self.seen: list[tuple[str, str]] = []

    def handle(self, conn: socket.socket) -> None:
        line, headers, rest = read_head(conn)
        self.seen.append((line, headers.get("proxy-authorization", "")))
        method, target, version = line.split(" ")
        if self.refuse:
            conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            upstream = socket.create_connection((host, int(port)), timeout=30)
            conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            url = urlsplit(target)
            upstream = socket.create_connection((url.hostname, url.port or 80), timeout=30)
            fields = "".join(f"{k}: {v}\r\n" for k, v in headers.items() if k != "proxy-authorization")
            path = url.path + (f"?{url.query}" if url.query else "")
            upstream.sendall(f"{method} {path} {version}\r\n{fields}\r\n".encode("latin-1") + rest)
        with upstream:
            back = threading.Thread(target=pump, args=(upstream, conn), daemon=True)
            back.start()
            pump(conn, upstream)
            back.join(30)


# --------------------------------------------------------------------------- through `uji run`


@contextlib.contextmanager
def tunnel_to_tls(home: Home, proxy: Proxy) -> Iterator[tuple[int, int, str]]:
    """The fake behind a TLS front with a self-signed certificate, `proxy` listening, and
    uji's init.lua on the https URL: (TLS port, proxy port, certificate file)."""
    assert home.fake is not None
    cert, key = self_signed(home.root)
    with tls_front(home.fake.port, cert, key) as port, serving(proxy.handle) as proxy_port:
        https_init(home, port)
        yield port, proxy_port, str(cert)


def via(name: str, proxy: str, **extra: str) -> dict[str, str]:
    """The run's environment with one proxy variable set and NO_PROXY cleared."""
    return {name: proxy, "NO_PROXY": "", "no_proxy": "", **extra}


def test_an_https_model_is_reached_through_the_proxys_connect_tunnel(home: Home) -> None:
    assert home.fake is not None
    proxy = Proxy()
    with tunnel_to_tls(home, proxy) as (port, proxy_port, cert):
        home.fake.script(text("through the tunnel"))
        proxy_url = f"http://user:s3cret-pw@127.0.0.1:{proxy_port}"
        # fresh: asyncio imported by `uji run` itself, without ssl until the tunnel's TLS
        run = home.run("hi", env=via("HTTPS_PROXY", proxy_url, SSL_CERT_FILE=cert), fresh=True)
    assert run.done["text"] == "through the tunnel", run.stderr
    assert proxy.seen == [(f"CONNECT 127.0.0.1:{port} HTTP/1.1", "Basic dXNlcjpzM2NyZXQtcHc=")]
    assert len(home.fake.turn_requests) == 1  # the model got it, inside the tunnel
    assert "s3cret-pw" not in run.stdout + run.stderr


def test_a_tls_failure_inside_the_tunnel_names_the_certificate(home: Home) -> None:
    assert home.fake is not None
    proxy = Proxy()
    with tunnel_to_tls(home, proxy) as (port, proxy_port, _):
        run = home.run("hi", env=via("HTTPS_PROXY", f"127.0.0.1:{proxy_port}"))
    assert run.rc == 1
    assert "certificate verify failed" in run.done["error"].lower()
    assert [line for line, _ in proxy.seen] == [f"CONNECT 127.0.0.1:{port} HTTP/1.1"]
    assert home.fake.turn_requests == []


def test_an_http_model_is_forwarded_by_the_proxy_unless_no_proxy_names_it(home: Home) -> None:
    assert home.fake is not None
    home.init("")
    proxy = Proxy()
    with serving(proxy.handle) as proxy_port:
        env = via("HTTP_PROXY", f"http://127.0.0.1:{proxy_port}", NO_PROXY="example.com")
        home.fake.script(text("forwarded"))
        run = home.run("hi", env=env)
        assert run.done["text"] == "forwarded", run.stderr
        assert proxy.seen == [(f"POST {home.fake.base_url}/chat/completions HTTP/1.1", "")]
        home.fake.script(text("direct"))
        run = home.run("hi", env={**env, "NO_PROXY": "localhost,.127.0.0.1"})
        assert run.done["text"] == "direct", run.stderr
        assert len(proxy.seen) == 1  # the second run went direct
    assert len(home.fake.turn_requests) == 2


def test_a_proxy_that_refuses_the_tunnel_fails_the_run_with_its_answer(home: Home) -> None:
    assert home.fake is not None
    cert, key = self_signed(home.root)
    with tls_front(home.fake.port, cert, key) as port, serving(Proxy(refuse=True).handle) as proxy_port:
        https_init(home, port)
        run = home.run(
            "hi", env={"HTTPS_PROXY": f"http://127.0.0.1:{proxy_port}", "NO_PROXY": "", "no_proxy": ""}
        )
    assert run.rc == 1
    assert (
        f"the proxy http://127.0.0.1:{proxy_port} refused the tunnel to 127.0.0.1:{port}: 403"
        in run.done["error"]
    )


# --------------------------------------------------------------------------- on the wire


def respond(raw: bytes) -> Callable[[socket.socket], None]:
    """A server that reads one request and sends `raw`, then closes."""

    def handle(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(raw)

    return handle


async def fetch(client: Client, url: str, **kw: object) -> tuple[int, bytes]:
    async with client.stream("GET", url, **kw) as response:  # type: ignore[arg-type]
        return response.status_code, await response.aread()


async def test_a_slow_body_arrives_whole() -> None:
    def handle(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for i in range(20):
            piece = f"part {i}\n".encode()
            conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            threading.Event().wait(0.005)
        conn.sendall(b"0\r\n\r\n")

    client = Client()
    with serving(handle) as port:
        status, body = await fetch(client, f"http://127.0.0.1:{port}/")
    await client.aclose()
    assert status == 200
    assert body == b"".join(f"part {i}\n".encode() for i in range(20))


async def test_a_body_cut_short_is_a_read_error() -> None:
    client = Client()
    cut = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this"
    with serving(respond(cut)) as port, pytest.raises(ReadError, match="peer closed connection"):
        await fetch(client, f"http://127.0.0.1:{port}/")
    await client.aclose()


async def test_an_answer_that_is_not_http_is_a_protocol_error() -> None:
    client = Client()
    with serving(respond(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")) as port, pytest.raises(ProtocolError):
        await fetch(client, f"http://127.0.0.1:{port}/")
    await client.aclose()


async def test_a_stalled_server_is_left_to_the_callers_deadline_and_its_connection_dropped() -> None:
    import asyncio

    gone = threading.Event()

    def handle(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab")
        if conn.recv(1) == b"":  # the client went away
            gone.set()

    client = Client()
    with serving(handle) as port:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await fetch(client, f"http://127.0.0.1:{port}/")
        assert await asyncio.to_thread(gone.wait, 10)
    await client.aclose()


async def test_a_refused_connection_says_so() -> None:
    with socket.create_server(("127.0.0.1", 0)) as s:
        port = s.getsockname()[1]
    client = Client()
    with pytest.raises(ConnectError, match="connection refused"):
        await fetch(client, f"http://127.0.0.1:{port}/")
    await client.aclose()


async def test_a_connection_is_reused_and_one_the_server_closed_is_replaced() -> None:
    connections: list[int] = []

    def handle(conn: socket.socket) -> None:
        connections.append(1)
        for i in range(2):  # two requests on a connection, then the server closes it
            read_request(conn)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n%d" % i)

    client = Client()
    with serving(handle) as port:
        url = f"http://127.0.0.1:{port}/"
        bodies = [(await fetch(client, url))[1] for _ in range(4)]
    await client.aclose()
    assert bodies == [b"0", b"1", b"0", b"1"]
    assert len(connections) == 2


async def test_redirects_change_the_method_as_browsers_do_and_keep_credentials_home() -> None:
    seen: list[tuple[str, str, bytes]] = []

    def other(conn: socket.socket) -> None:
        line, headers, body = read_request(conn)
        seen.append((line, headers.get("authorization", "-"), body))
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\nhere")

    with serving(other) as other_port:

        def first(conn: socket.socket) -> None:
            while True:
                line, headers, body = read_request(conn)
                seen.append((line, headers.get("authorization", "-"), body))
                if line.startswith("POST /a "):
                    conn.sendall(b"HTTP/1.1 307 Temporary\r\nLocation: /b\r\nContent-Length: 0\r\n\r\n")
                elif line.startswith("POST /b "):
                    conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: /c\r\nContent-Length: 0\r\n\r\n")
                else:
                    where = f"http://localhost:{other_port}/d".encode()
                    conn.sendall(b"HTTP/1.1 301 Moved\r\nLocation: %s\r\nContent-Length: 0\r\n\r\n" % where)

        client = Client()
        with serving(first) as port:
            async with client.stream(
                "POST",
                f"http://127.0.0.1:{port}/a",
                content=b"payload",
                headers={"Authorization": "Bearer k"},
                follow_redirects=True,
            ) as response:
                assert (response.status_code, await response.aread()) == (200, b"here")
        await client.aclose()
    assert seen == [
        ("POST /a HTTP/1.1", "Bearer k", b"payload"),
        ("POST /b HTTP/1.1", "Bearer k", b"payload"),  # 307 repeats the request
        ("GET /c HTTP/1.1", "Bearer k", b""),  # 302 becomes a GET without the body
        ("GET /d HTTP/1.1", "-", b""),  # another host gets no credentials
    ]


async def test_a_redirect_loop_ends() -> None:
    def loop(conn: socket.socket) -> None:
        while True:
            read_request(conn)
            conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n")

    client = Client()
    with serving(loop) as port:
        with pytest.raises(TooManyRedirects, match="more than 20 redirects"):
            await fetch(client, f"http://127.0.0.1:{port}/", follow_redirects=True)
        status, _ = await fetch(client, f"http://127.0.0.1:{port}/")  # not followed unless asked
    await client.aclose()
    assert status == 302


async def test_a_gzip_body_is_decoded() -> None:
    packed = gzip.compress(b"squeezed " * 100)
    head = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed)
    client = Client()
    with serving(respond(head + packed)) as port:
        _, body = await fetch(client, f"http://127.0.0.1:{port}/")
    await client.aclose()
    assert body == b"squeezed " * 100
