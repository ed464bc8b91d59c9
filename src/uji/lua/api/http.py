"""uji.http.request: one HTTP request, waited for or called back, optionally streamed.

The reply is `{status, headers, body}` for any status (a 404 is still a response);
only a request that got no response at all (refused, timed out, dropped) is `nil, err`.
With `on_line`, each line of the body goes to the callback as it arrives and the idle
watchdog restarts on every line it does not answer `false` to; the body is still
returned whole at the end. Redirects are followed.

The transport (uji.wires.transport, h11) is imported on the first request: most runs
make none, and start-up stays fast.
"""

from __future__ import annotations

import asyncio
import math
import re
from typing import TYPE_CHECKING, Any

from uji.lua.api.fs import Anchor, later
from uji.lua.runtime import Api, ApiError, LuaError, Pending
from uji.record import Record

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.wires.http import Http
    from uji.wires.transport import Client, HTTPError, Response

DEFAULT_TIMEOUT = 30.0  # seconds for a whole request that is not streamed
DEFAULT_IDLE = 120.0  # seconds without progress before a stream counts as stalled
_METHOD = re.compile(r"^[A-Za-z]+$")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # an RFC 9110 header name
_BAD_VALUE = re.compile(r"[\r\n\0]")


class HttpError(ApiError):
    """A request that got no response; Lua receives `nil, str(e)`."""


class Request(Record):
    url: str
    method: str
    headers: list[tuple[str, str]]
    body: bytes | None
    timeout: float | None  # the whole request; None: no limit
    idle: float | None  # between lines of a stream; None when not streaming
    on_line: Any  # a Lua function, or None


def install(host: LuaHost, http: Http) -> Api:
    keep = Anchor()

    def http_request(
        url: str,
        method: str | None,
        headers: Any,
        body: str | None,
        timeout: float | None,
        idle: float | None,
        on_line: Any,
    ) -> Pending:
        pairs = host.lua.convert.to_python(headers) if headers is not None else []
        request = _build(url, method, pairs, body, timeout, idle, keep(on_line))
        return later(perform, host, http, request)

    return {"http_bind": keep.bind, "http_request": http_request}


def _build(
    url: str,
    method: str | None,
    headers: list[list[str]],
    body: str | None,
    timeout: float | None,
    idle: float | None,
    on_line: Any,
) -> Request:
    """Check what can be checked before sending: a bad URL, method or header raises."""
    _check_url(url)
    verb = (method or "GET").upper()
    if not _METHOD.match(verb):
        raise ApiError(f"uji.http.request: bad method {method!r}")
    for name, value in headers:
        if not _TOKEN.match(name):
            raise ApiError(f"uji.http.request: bad header name {name!r}")
        if _BAD_VALUE.search(value):
            raise ApiError(f"uji.http.request: the value of header {name!r} holds a line break or NUL")
    streaming = on_line is not None
    if timeout is None:
        timeout = None if streaming else DEFAULT_TIMEOUT
    return Request(
        url=url,
        method=verb,
        headers=[(n, v) for n, v in headers],
        body=body.encode() if body is not None else None,
        timeout=None if timeout is None or math.isinf(timeout) else timeout,
        idle=(DEFAULT_IDLE if idle is None else idle) if streaming else None,
        on_line=on_line,
    )


def _check_url(url: str) -> None:
    from urllib.parse import urlsplit

    try:
        parsed = urlsplit(url)
        parsed.port  # noqa: B018 (a bad port raises here)
    except (TypeError, ValueError) as e:
        raise ApiError(f"uji.http.request: bad url {url!r}: {e}")
    if parsed.scheme not in ("http", "https"):
        raise ApiError(f"uji.http.request: bad url {url!r}: the scheme must be http or https")
    if not parsed.hostname:
        raise ApiError(f"uji.http.request: bad url {url!r}: it names no host")


async def perform(host: LuaHost, http: Http, request: Request) -> Any:
    """Send the request and return the Lua response table; failures raise HttpError."""
    from uji.wires.transport import HTTPError

    client = http.client()  # made first: building it (TLS setup) is not the request's time
    watch = _Watch(request)
    try:
        async with watch.timer:
            status, headers, body = await _exchange(host, client, request, watch)
    except TimeoutError:
        if not watch.timer.expired():
            raise
        raise HttpError(watch.expiry_text()) from None
    except HTTPError as e:
        raise HttpError(_failure_text(e)) from None
    return host.lua.convert.to_lua({"status": status, "headers": headers, "body": body})


class _Watch:
    """One deadline for both limits: the whole request's, and (streaming) the idle one
    that every line of progress moves forward."""

    def __init__(self, request: Request) -> None:
        self._loop = asyncio.get_running_loop()
        self._request = request
        now = self._loop.time()
        self._hard = now + request.timeout if request.timeout is not None else math.inf
        self.timer = asyncio.timeout_at(self._deadline())

    def _deadline(self) -> float | None:
        idle = self._request.idle
        soft = self._loop.time() + idle if idle is not None else math.inf
        at = min(self._hard, soft)
        return None if math.isinf(at) else at

    def progress(self) -> None:
        self.timer.reschedule(self._deadline())

    def expiry_text(self) -> str:
        if self._loop.time() >= self._hard:
            return f"timed out after {self._request.timeout:g}s"
        return f"stream stalled: no progress for {self._request.idle:g}s"


async def _exchange(
    host: LuaHost, client: Client, request: Request, watch: _Watch
) -> tuple[int, dict[str, str], bytes]:
    async with client.stream(
        request.method,
        request.url,
        headers=request.headers,
        content=request.body,
        follow_redirects=True,
    ) as response:
        if request.on_line is None:
            body = await response.aread()
        else:
            body = await _stream_lines(host, response, request.on_line, watch)
        return response.status_code, _headers(response), body


async def _stream_lines(host: LuaHost, response: Response, on_line: Any, watch: _Watch) -> bytes:
    """Hand each line to `on_line` as it arrives; the whole body comes back at the end."""
    body = bytearray()
    pending = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        pending += chunk
        start = 0
        while (nl := pending.find(b"\n", start)) != -1:
            await _line(host, on_line, bytes(pending[start:nl]), watch)
            start = nl + 1
        del pending[:start]
    if pending:  # a last line without a newline
        await _line(host, on_line, bytes(pending), watch)
    return bytes(body)


async def _line(host: LuaHost, on_line: Any, line: bytes, watch: _Watch) -> None:
    if line.endswith(b"\r"):
        line = line[:-1]
    try:
        values = await host.lua.call(on_line, line)
    except LuaError as e:  # the plugin's own handling failed: so did its request
        raise HttpError(str(e)) from None
    if not (values and values[0] is False):  # `false` means "not progress"
        watch.progress()


def _headers(response: Response) -> dict[str, str]:
    """Lower-case names; a repeated header's values joined with ", "."""
    out: dict[str, str] = {}
    for name, value in response.headers.multi_items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def _failure_text(error: HTTPError) -> str:
    from uji.wires.transport import ConnectError, TooManyRedirects, TransportError

    detail = str(error) or type(error).__name__
    if isinstance(error, TooManyRedirects):
        return f"too many redirects: {detail}"
    if isinstance(error, ConnectError):
        return f"could not connect: {detail}"
    if isinstance(error, TransportError):
        return f"connection failed: {detail}"
    return f"bad response: {detail}"
