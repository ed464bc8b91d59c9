"""uji.net.open (a streamed HTTP response read line by line) and uji.net.listen (a TCP
server on 127.0.0.1 whose connections Lua reads and writes). uji.net.request is
uji.http.request (net.lua).

The transport (uji.wires.transport) is imported on the first stream, like uji.http's.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from uji.lua.api.fs import later
from uji.lua.api.http import DEFAULT_IDLE, HttpError, _build, _failure_text, _headers
from uji.lua.runtime import Api, ApiError, Pending

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.wires.http import Http

Line = bytes | None  # None: the end


class Stream:
    """An HTTP response whose body is read as it arrives."""

    def __init__(self, idle: float) -> None:
        self.idle = idle
        self.lines: asyncio.Queue[Line] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.error: str | None = None

    async def pump(self, response: Any, closer: Any) -> None:
        pending = b""
        try:
            async for chunk in response.aiter_bytes():
                pending += chunk
                *whole, pending = pending.split(b"\n")
                for line in whole:
                    self.lines.put_nowait(line.removesuffix(b"\r"))
            if pending:
                self.lines.put_nowait(pending.removesuffix(b"\r"))
        except Exception as e:  # the connection dropped: the reader sees the end
            self.error = str(e)
        finally:
            self.lines.put_nowait(None)
            with contextlib.suppress(Exception):
                await closer.__aexit__(None, None, None)

    async def line(self) -> bytes | bool | None:
        """The next line, None at the end, False when none came within `idle`."""
        try:
            item = await asyncio.wait_for(self.lines.get(), self.idle)
        except TimeoutError:
            return False
        if item is None:
            self.lines.put_nowait(None)
        return item

    async def read(self) -> bytes:
        parts = []
        while (item := await self.lines.get()) is not None:
            parts.append(item)
        self.lines.put_nowait(None)
        return b"\n".join(parts)

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()


class Conn:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer


class Server:
    def __init__(self) -> None:
        self.conns: asyncio.Queue[Conn] = asyncio.Queue()
        self.server: asyncio.Server | None = None
        self.port = 0


def install(host: LuaHost, http: Http) -> Api:
    servers: set[Server] = set()
    streams: set[Stream] = set()

    def close_all() -> None:
        for s in list(servers):
            if s.server is not None:
                s.server.close()
        for st in list(streams):
            st.close()

    host.on_close.append(close_all)
    return {**_open_api(host, http, streams), **_listen_api(servers), **_conn_api()}


def _open_api(host: LuaHost, http: Http, streams: set[Stream]) -> Api:
    """uji.net.open: a streamed HTTP response, read a line or a chunk at a time."""

    def lua(value: Any) -> Any:
        return host.lua.convert.to_lua(value, json_null=False)

    def net_open(
        url: str,
        method: str | None,
        headers: Any,
        body: str | None,
        timeout: float | None,
        idle: float | None,
    ) -> Pending:
        pairs = host.lua.convert.to_python(headers) if headers is not None else []
        request = _build(url, method, pairs, body, timeout, None, None)

        async def start() -> Any:
            from uji.wires.transport import HTTPError

            stream = Stream(DEFAULT_IDLE if idle is None else idle)
            closer = http.client().stream(
                request.method,
                request.url,
                headers=request.headers,
                content=request.body,
                follow_redirects=True,
            )
            try:
                async with asyncio.timeout(request.timeout):
                    response = await closer.__aenter__()
            except TimeoutError:
                raise HttpError(f"timed out after {request.timeout:g}s") from None
            except HTTPError as e:
                raise HttpError(_failure_text(e)) from None
            stream.task = asyncio.get_running_loop().create_task(stream.pump(response, closer))
            streams.add(stream)
            return lua({"status": response.status_code, "headers": _headers(response), "_stream": stream})

        return later(start)

    def stream_line(stream: Stream) -> Pending:
        return later(stream.line)

    def stream_read(stream: Stream) -> Pending:
        return later(stream.read)

    def stream_close(stream: Stream) -> None:
        stream.close()
        streams.discard(stream)

    return {
        "net_open": net_open,
        "stream_line": stream_line,
        "stream_read": stream_read,
        "stream_close": stream_close,
    }


def _listen_api(servers: set[Server]) -> Api:
    """uji.net.listen: a TCP server on 127.0.0.1 and the connections it accepts."""

    def net_listen(port: float) -> Pending:
        async def listen() -> Any:
            server = Server()

            async def on_conn(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                server.conns.put_nowait(Conn(reader, writer))

            try:
                server.server = await asyncio.start_server(on_conn, "127.0.0.1", int(port))
            except OSError as e:
                raise ApiError(f"uji.net.listen: port {int(port)}: {e.strerror or e}") from None
            server.port = server.server.sockets[0].getsockname()[1]
            servers.add(server)
            return server

        return later(listen)

    def server_port(server: Server) -> int:
        return server.port

    def server_accept(server: Server) -> Pending:
        return later(server.conns.get)

    def server_close(server: Server) -> None:
        if server.server is not None:
            server.server.close()
        servers.discard(server)

    return {
        "net_listen": net_listen,
        "server_port": server_port,
        "server_accept": server_accept,
        "server_close": server_close,
    }


def _conn_api() -> Api:
    """An accepted connection: read a line or some bytes, write, close."""

    def conn_line(conn: Conn) -> Pending:
        async def line() -> bytes | None:
            data = await conn.reader.readline()
            return data.removesuffix(b"\n").removesuffix(b"\r") if data else None

        return later(line)

    def conn_read(conn: Conn, n: float) -> Pending:
        async def read() -> bytes | None:
            data = await conn.reader.read(int(n))
            return data or None

        return later(read)

    def conn_write(conn: Conn, hex_data: str) -> Pending:
        async def write() -> bool:
            conn.writer.write(bytes.fromhex(hex_data))
            await conn.writer.drain()
            return True

        return later(write)

    def conn_close(conn: Conn) -> None:
        conn.writer.close()

    return {
        "conn_line": conn_line,
        "conn_read": conn_read,
        "conn_write": conn_write,
        "conn_close": conn_close,
    }
