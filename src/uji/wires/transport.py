"""The HTTP/1.1 client the wires, model listings and `uji.http` share: h11 for the
protocol, asyncio streams for the bytes, and only the glue between them here.

    client = Client()
    async with client.stream("POST", url, content=body, headers=h) as response:
        response.status_code, response.headers.get("content-type")
        async for chunk in response.aiter_bytes(): ...
    await client.aclose()

Why not a general client library: the one this replaced (httpx2 with httpcore2 and
anyio) cost a third of a whole turn's CPU in its own layers. h11 is the sans-IO HTTP/1.1
engine httpcore itself is built on; what is left is opening connections, TLS, proxies
and the pool:

- HTTPS verifies as the library did (certificate and host name), with the CA store read
  on the first handshake (tls.py). `connect_timeout` covers the TCP connect, a proxy's
  CONNECT and the TLS handshake; reading has no timeout here (the callers own theirs:
  the SSE stall watchdog, uji.http's limits, discovery's).
- HTTP_PROXY / HTTPS_PROXY / ALL_PROXY and NO_PROXY from the environment (proxy.py):
  an https URL goes through a CONNECT tunnel, an http one is forwarded.
- A response read to its end gives its connection back to the pool of its host (scheme,
  host, port, proxy); one closed early is dropped. A request on a pooled connection the
  server closed meanwhile is sent again once on a new connection.
- Redirects when asked (uji.http): 301/302/303 become a GET without a body (a HEAD stays
  one), 307/308 repeat the request; credentials are not sent to another host.
- `gzip` / `deflate` bodies are decoded.

Errors are `HTTPError`s: `ConnectError` (and `ConnectTimeout`) before a request was
sent, `ReadError` for a connection lost after, `ProtocolError` for a response that is
not HTTP, `TooManyRedirects`, and `InvalidURL`.
"""

from __future__ import annotations

import asyncio
import sys
import zlib
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Final, Literal
from urllib.parse import SplitResult, urljoin, urlsplit

import h11

if TYPE_CHECKING:
    import ssl

    from .proxy import Proxy

CONNECT_TIMEOUT = 10.0
MAX_REDIRECTS = 20
READ_SIZE = 64 * 1024
USER_AGENT = "uji"
REDIRECTS: Final = (301, 302, 303, 307, 308)
CREDENTIALS: Final = ("authorization", "proxy-authorization", "cookie")


class HTTPError(Exception):
    """Anything that kept a request from getting a whole response."""


class InvalidURL(HTTPError, ValueError):
    pass


class TransportError(HTTPError):
    """The connection failed (as opposed to a response that says no)."""


class ConnectError(TransportError):
    """No connection: refused, unknown host, TLS failure, a proxy that said no."""


class ConnectTimeout(ConnectError):
    pass


class ReadError(TransportError):
    """The connection was lost after the request was sent."""


class ProtocolError(TransportError):
    """What came back is not an HTTP/1.1 response."""


class TooManyRedirects(HTTPError):
    pass


class URL:
    """An http(s) URL split into what a request needs."""

    __slots__ = ("host", "port", "scheme", "target", "text")

    def __init__(self, text: str) -> None:
        try:
            parts: SplitResult = urlsplit(text)
            port = parts.port
        except ValueError as e:
            raise InvalidURL(str(e)) from None
        if parts.scheme not in ("http", "https"):
            raise InvalidURL(f"the scheme must be http or https: {text!r}")
        if not parts.hostname:
            raise InvalidURL(f"no host in {text!r}")
        self.text = text
        self.scheme: Literal["http", "https"] = "https" if parts.scheme == "https" else "http"
        self.host = parts.hostname
        self.port = port or (443 if self.scheme == "https" else 80)
        path = parts.path or "/"
        self.target = f"{path}?{parts.query}" if parts.query else path

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


class Headers:
    """A response's headers in their order; `get` ignores case and joins repeats."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        self._items = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in items]

    def get(self, name: str, default: str | None = None) -> str | None:
        key = name.lower()
        found = [v for n, v in self._items if n.lower() == key]
        return ", ".join(found) if found else default

    def multi_items(self) -> list[tuple[str, str]]:
        return list(self._items)


# --------------------------------------------------------------------------- a connection


class Connection:
    """One TCP (maybe TLS) connection and its h11 state."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: tuple[object, ...]
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.key = key
        self.h11 = h11.Connection(h11.CLIENT)
        self.reused = False
        self.eof = False  # the server closed its side

    @property
    def usable(self) -> bool:
        """Still open at our end and not closed by the server while it was pooled."""
        return not self.writer.is_closing() and not self.reader.at_eof()

    async def send(self, request: h11.Request, body: bytes | None) -> None:
        out = self.h11.send(request) or b""
        if body:
            out += self.h11.send(h11.Data(data=body)) or b""
        out += self.h11.send(h11.EndOfMessage()) or b""
        try:
            self.writer.write(out)
            await self.writer.drain()
        except OSError as e:
            raise ReadError(_why(e)) from None

    async def next_event(self) -> object:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as e:
                if not self.eof:
                    raise ProtocolError(str(e)) from None
                if self.h11.their_state is h11.SEND_RESPONSE:
                    raise ReadError("the server closed the connection without a response") from None
                raise ReadError(str(e)) from None  # "peer closed connection without sending complete..."
            if event is not h11.NEED_DATA:
                return event
            try:
                data = await self.reader.read(READ_SIZE)
            except OSError as e:
                raise ReadError(_why(e)) from None
            self.eof = not data
            self.h11.receive_data(data)

    def close(self) -> None:
        """Close now: the socket is shut down at once (the server sees it even if this
        loop does not run again soon, as when a cancelled caller goes on to block), and
        the transport is closed on the loop's next turn."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None and not self.writer.is_closing():
            try:
                sock.shutdown(2)  # socket.SHUT_RDWR
            except OSError:
                pass
        self.writer.close()


def _why(e: BaseException) -> str:
    return str(e) or type(e).__name__


def _connect_failure(e: OSError, host: str, port: int) -> str:
    """What went wrong opening a connection, said plainly."""
    import socket

    if isinstance(e, ConnectionRefusedError) or "[Errno 111]" in str(e):  # all addresses refused
        return "connection refused"
    if isinstance(e, socket.gaierror):
        return f"cannot resolve {host}: {e.strerror or e}"
    return f"{host}:{port}: {_why(e)}"


# --------------------------------------------------------------------------- a response


class Response:
    """A response whose body is read as it is iterated."""

    def __init__(self, conn: Connection, head: h11.Response, on_done: Pool) -> None:
        self._conn: Connection | None = conn
        self._pool = on_done
        self.status_code = head.status_code
        self.reason = head.reason.decode("latin-1", "replace")
        self.headers = Headers(head.headers)
        self._read = False
        coding = (self.headers.get("content-encoding") or "").strip().lower()
        self._inflate = (
            zlib.decompressobj(zlib.MAX_WBITS | 32) if coding in ("gzip", "x-gzip", "deflate") else None
        )

    @property
    def charset(self) -> str:
        content_type = self.headers.get("content-type") or ""
        for param in content_type.split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                return value.strip().strip('"')
        return "utf-8"

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (decoded when gzip or deflate)."""
        conn = self._conn
        if conn is None or self._read:
            return
        self._read = True
        inflate = self._inflate
        while True:
            event = await conn.next_event()
            if type(event) is h11.Data:
                data = bytes(event.data)
                if inflate is not None:
                    try:
                        data = inflate.decompress(data)
                    except zlib.error as e:
                        raise ProtocolError(f"bad {self.headers.get('content-encoding')} body: {e}") from None
                if data:
                    yield data
            elif type(event) is h11.EndOfMessage:
                if inflate is not None and (rest := inflate.flush()):
                    yield rest
                self._conn = None
                self._pool.release(conn)
                return
            else:  # ConnectionClosed before the end: h11 raised for a cut body already
                raise ReadError("the server closed the connection before the body ended")

    async def aiter_text(self) -> AsyncIterator[str]:
        import codecs

        try:
            decoder = codecs.getincrementaldecoder(self.charset)("replace")
        except LookupError:
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
        async for chunk in self.aiter_bytes():
            if text := decoder.decode(chunk):
                yield text
        if text := decoder.decode(b"", True):
            yield text

    async def aread(self) -> bytes:
        return b"".join([chunk async for chunk in self.aiter_bytes()])

    def close(self) -> None:
        """Drop the connection unless the body was read to its end (then it is pooled)."""
        if self._conn is not None:
            self._pool.discard(self._conn)
            self._conn = None


# --------------------------------------------------------------------------- the pool


class Pool:
    """Idle connections by host, and every open one (to close them all)."""

    def __init__(self) -> None:
        self.idle: dict[tuple[object, ...], list[Connection]] = {}
        self.open: set[Connection] = set()

    def take(self, key: tuple[object, ...]) -> Connection | None:
        waiting = self.idle.get(key)
        while waiting:
            conn = waiting.pop()
            if conn.usable:
                conn.reused = True
                return conn
            self.discard(conn)
        return None

    def release(self, conn: Connection) -> None:
        if conn.h11.our_state is h11.DONE and conn.h11.their_state is h11.DONE and conn.usable:
            conn.h11.start_next_cycle()
            self.idle.setdefault(conn.key, []).append(conn)
        else:
            self.discard(conn)

    def discard(self, conn: Connection) -> None:
        self.open.discard(conn)
        conn.close()

    async def close(self) -> None:
        conns = list(self.open)
        self.open.clear()
        self.idle.clear()
        for conn in conns:
            conn.close()
        for conn in conns:
            try:
                await conn.writer.wait_closed()
            except OSError:  # ssl.SSLError is one
                pass


# --------------------------------------------------------------------------- the client


class Client:
    """Pooled HTTP/1.1 connections of one event loop. `verify`: the TLS context for
    https (tls.trust_context() when None); `trust_env`: proxies from the environment."""

    def __init__(
        self,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        verify: ssl.SSLContext | None = None,
        trust_env: bool = True,
    ) -> None:
        self.connect_timeout = connect_timeout
        self._verify = verify
        self._trust_env = trust_env
        self._pool = Pool()
        self.is_closed = False

    @property
    def tls(self) -> ssl.SSLContext:
        if self._verify is None:
            from .tls import trust_context

            self._verify = trust_context()
        return self._verify

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
        follow_redirects: bool = False,
    ) -> AsyncIterator[Response]:
        """Send the request; the response's head is there, its body is read on demand.
        Leaving the block drops the connection unless the body was read to its end."""
        if self.is_closed:
            raise RuntimeError("the HTTP client is closed")
        target = URL(url)
        pairs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        for _ in range(MAX_REDIRECTS + 1):
            response = await self._send(method, target, pairs, content)
            location = response.headers.get("location") if follow_redirects else None
            if response.status_code not in REDIRECTS or not location:
                try:
                    yield response
                finally:
                    response.close()
                return
            await response.aread()  # the connection goes back to the pool
            nxt = URL(urljoin(target.text, location))
            if response.status_code in (301, 302, 303) and method != "HEAD":
                method, content = "GET", None
                pairs = [(n, v) for n, v in pairs if n.lower() not in ("content-length", "content-type")]
            if nxt.origin[1:] != target.origin[1:]:
                pairs = [(n, v) for n, v in pairs if n.lower() not in CREDENTIALS]
            target = nxt
        raise TooManyRedirects(f"more than {MAX_REDIRECTS} redirects, the last to {target.text}")

    async def _send(
        self, method: str, url: URL, headers: list[tuple[str, str]], body: bytes | None
    ) -> Response:
        # A cancellation point before anything leaves: an interrupt scheduled just before
        # (a reader that went away, Ctrl+C between steps) stops the request unsent, as it
        # would if opening a connection had to wait.
        await asyncio.sleep(0)
        proxy = self._proxy(url)
        key = (url.origin, proxy.url if proxy else None)
        request = self._request(method, url, headers, body, proxy)
        for _ in range(2):
            conn = self._pool.take(key) or await self._connect(url, proxy, key)
            try:
                await conn.send(request, body)
                event = await conn.next_event()
                while type(event) is h11.InformationalResponse:
                    event = await conn.next_event()
            except ReadError:
                self._pool.discard(conn)
                if conn.reused:  # the server closed it while it was idle: once more, anew
                    continue
                raise
            except BaseException:
                self._pool.discard(conn)
                raise
            if type(event) is not h11.Response:  # ConnectionClosed
                self._pool.discard(conn)
                if conn.reused:
                    continue
                raise ReadError("the server closed the connection without a response")
            return Response(conn, event, self._pool)
        raise ReadError("the server closed the connection")  # not reached: a new one raises first

    def _request(
        self, method: str, url: URL, headers: list[tuple[str, str]], body: bytes | None, proxy: Proxy | None
    ) -> h11.Request:
        names = {n.lower() for n, _ in headers}
        sent: list[tuple[str, str]] = [("Host", url.authority)] if "host" not in names else []
        sent += headers
        has_body = body is not None or method in ("POST", "PUT", "PATCH")
        if has_body and "content-length" not in names and "transfer-encoding" not in names:
            sent.append(("Content-Length", str(len(body or b""))))
        defaults = (("accept", "*/*"), ("accept-encoding", "gzip, deflate"), ("user-agent", USER_AGENT))
        sent += [(n.title(), v) for n, v in defaults if n not in names]
        target = url.target
        if proxy is not None and url.scheme == "http":  # forwarded: the whole URL, and its credentials
            target = f"http://{url.authority}{url.target}"
            sent += proxy.auth_headers()
        try:
            return h11.Request(method=method, target=target, headers=sent)
        except h11.LocalProtocolError as e:
            raise InvalidURL(f"bad request: {e}") from None

    def _proxy(self, url: URL) -> Proxy | None:
        if not self._trust_env:
            return None
        from .proxy import proxy_for

        try:
            return proxy_for(url.scheme, url.host, url.port)
        except ValueError as e:
            raise ConnectError(f"bad proxy setting: {e}") from None

    async def _connect(self, url: URL, proxy: Proxy | None, key: tuple[object, ...]) -> Connection:
        host, port = (proxy.host, proxy.port) if proxy else (url.host, url.port)
        tls = None
        if url.scheme == "https":
            from uji.aio import asyncio_ssl

            asyncio_ssl()  # asyncio was imported without it (uji.aio)
            tls = self.tls
        try:
            async with asyncio.timeout(self.connect_timeout):
                if proxy is None:
                    reader, writer = await asyncio.open_connection(
                        host, port, ssl=tls, server_hostname=host if tls else None
                    )
                else:
                    reader, writer = await asyncio.open_connection(host, port)
                    if tls is not None:
                        await _tunnel(reader, writer, url, proxy)
                        await writer.start_tls(tls, server_hostname=url.host)
        except TimeoutError:
            raise ConnectTimeout(f"no connection to {host}:{port} within {self.connect_timeout:g}s") from None
        except OSError as e:  # ssl.SSLError is one, and ssl is imported when tls is used
            if tls is not None and isinstance(e, sys.modules["ssl"].SSLError):
                raise ConnectError(_why(e)) from None
            raise ConnectError(_connect_failure(e, host, port)) from None
        conn = Connection(reader, writer, key)
        self._pool.open.add(conn)
        return conn

    async def aclose(self) -> None:
        self.is_closed = True
        await self._pool.close()


async def _tunnel(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, url: URL, proxy: Proxy) -> None:
    """CONNECT through the proxy to the URL's host; on a 2xx the socket is the tunnel."""
    authority = f"[{url.host}]:{url.port}" if ":" in url.host else f"{url.host}:{url.port}"
    conn = h11.Connection(h11.CLIENT)
    headers = [("Host", authority), *proxy.auth_headers()]
    writer.write(conn.send(h11.Request(method="CONNECT", target=authority, headers=headers)) or b"")
    await writer.drain()
    while True:
        try:
            event = conn.next_event()
        except h11.RemoteProtocolError as e:
            raise ConnectError(f"the proxy {proxy.url} answered badly: {e}") from None
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(READ_SIZE))
            continue
        if type(event) is h11.InformationalResponse:
            continue
        if type(event) is h11.Response and 200 <= event.status_code <= 299:
            return
        status = event.status_code if isinstance(event, h11.Response) else "no answer"
        writer.close()
        raise ConnectError(f"the proxy {proxy.url} refused the tunnel to {authority}: {status}")
