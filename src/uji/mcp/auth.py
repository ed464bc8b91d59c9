"""Authorization for HTTP MCP servers: OAuth as the MCP specification describes it, done by
the SDK's own client (uji.mcp.oauth picks its provider); here is what needs no SDK: how a
server's `oauth` is configured, the loopback listener that catches the authorization
server's redirect, the browser, and `login`, the entry point of `uji mcp login NAME` and
of the terminal UI's /mcp → login.

A run with nobody to open a browser for (`uji run`, a turn of the terminal UI) never starts
an authorization: it uses the token kept from the last login (refreshing it when it has
expired) and, when the server wants a new one, fails the server with NeedsLogin, whose
message names the command to run. Only `login` opens the browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Protocol

from uji import mcp_tokens as tokens
from uji.record import Record

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

    from uji.mcp.config import ServerConfig, ToolInfo

# How long a login waits for the browser to come back with the authorization server's answer.
LOGIN_WAIT = 300.0
CALLBACK_PATH = "/callback"


class Target(Protocol):
    """A server as `login` handles it (uji.mcp.Server)."""

    config: ServerConfig
    state: str
    why: str
    tools: list[ToolInfo]
    settled: asyncio.Event
    authorizer: Authorizer | None

    def start(self) -> None: ...

    async def close(self) -> None: ...


class Servers(Protocol):
    """The configured servers (uji.mcp.McpServers)."""

    @property
    def servers(self) -> Mapping[str, Target]: ...

    @property
    def data_dir(self) -> str | None: ...


class NeedsLogin(Exception):
    """The server wants an authorization only the user can give (in the browser)."""

    explained = True  # uji.mcp.errors.describe says it as it is
    needs_login = True  # the server is marked so (/mcp offers the login)

    def __init__(self, name: str, scope: str | None = None) -> None:
        self.name = name
        more = f" (scope {scope})" if scope else ""
        super().__init__(
            f"needs authorization{more}: run `uji mcp login {name}` (in the terminal UI: /mcp, then login)"
        )


class LoginError(Exception):
    """Why a login did not happen, said for the user."""


class Answer(Record):
    """What the browser brought back to the loopback redirect URI."""

    code: str | None
    state: str | None
    iss: str | None
    error: str | None


class Authorizer:
    """The browser's side of one login: a listener on 127.0.0.1 for the authorization
    server's redirect (a port of the system's choosing unless `port`), and the browser opened
    on the authorization URL through `webbrowser` (so $BROWSER is honoured)."""

    def __init__(self, say: Callable[[str], None], port: int = 0) -> None:
        self.say = say
        self.opened = False  # the browser was asked for: the server did want an authorization
        self._loop = asyncio.get_running_loop()
        self._answer: asyncio.Future[Answer] = self._loop.create_future()
        self._server = self._listen(port)
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, name="uji-mcp-callback", daemon=True).start()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    def _listen(self, port: int) -> ThreadingHTTPServer:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import parse_qs, urlsplit

        deliver = self._deliver

        class Callback(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urlsplit(self.path)
                if url.path != CALLBACK_PATH:
                    self.send_error(404)
                    return
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                error = query.get("error")
                if error and query.get("error_description"):
                    error += f": {query['error_description']}"
                deliver(Answer(query.get("code"), query.get("state"), query.get("iss"), error))
                text = (
                    f"uji: the authorization server said {error}."
                    if error
                    else "uji has the authorization: you can close this page."
                )
                body = f"<!doctype html><title>uji</title><p>{text}</p>".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # not on uji's stderr

        try:
            return ThreadingHTTPServer(("127.0.0.1", port), Callback)
        except OSError as e:
            raise LoginError(
                f"cannot listen on 127.0.0.1:{port} for the redirect: {e.strerror or e}"
            ) from None

    def _deliver(self, answer: Answer) -> None:
        def settle() -> None:
            if not self._answer.done():  # the first answer counts
                self._answer.set_result(answer)

        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            self._loop.call_soon_threadsafe(settle)

    async def open(self, url: str) -> None:
        """Send the user to `url`: the browser, and the URL said (it may not open)."""
        self.opened = True
        self.say(f"Opening the authorization page in your browser; if it does not open, visit:\n  {url}")

        def browse() -> None:
            import webbrowser

            # $BROWSER's command is waited for, so not on the event loop: the redirect it
            # follows is answered there.
            try:
                opened = webbrowser.open(url)
            except Exception:
                opened = False
            if not opened:
                with contextlib.suppress(RuntimeError):
                    self._loop.call_soon_threadsafe(
                        self.say,
                        "No browser could be opened ($BROWSER, xdg-open): open the URL above yourself.",
                    )

        threading.Thread(target=browse, name="uji-mcp-browser", daemon=True).start()

    async def answer(self) -> Answer:
        try:
            return await asyncio.wait_for(asyncio.shield(self._answer), LOGIN_WAIT)
        except TimeoutError:
            raise LoginError(f"the browser did not come back within {LOGIN_WAIT:g}s") from None

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


async def login(servers: Servers, name: str, say: Callable[[str], None]) -> str:
    """Authorize uji with MCP server `name` and keep the token: the entry point of
    `uji mcp login NAME` and of the terminal UI's /mcp → login.

    The server (re)connects with the browser at hand: when it asks for authorization, the
    SDK's OAuth client discovers its authorization server, registers uji (or uses the
    configured client), and `say` tells the user the page it opens; the token lands in
    `<data>/mcp-auth.json` (0600). Ready, the server stays connected with its tools listed.
    Returns the line to show; raises LoginError saying why not.
    """
    server = servers.servers.get(name)
    if server is None:
        known = ", ".join(sorted(servers.servers)) or "none (uji.mcp.add)"
        raise LoginError(f"no MCP server named {name}; configured: {known}")
    config = server.config
    if config.url is None:
        raise LoginError(f"{name} is a stdio server: it has nothing to log in to")
    if not config.oauth.enabled:
        raise LoginError(f"{name} has `oauth = false` in its spec")
    data_dir = servers.data_dir
    if data_dir is None:
        raise LoginError("no data directory to keep the token in")
    kept = tokens.entry(data_dir, name, config.url)
    authorizer = Authorizer(say, _callback_port(config.oauth.callback_port, kept))
    await server.close()
    server.authorizer = authorizer
    try:
        server.start()
        await server.settled.wait()  # the authorizer's own wait bounds the browser's part
    finally:
        server.authorizer = None
        authorizer.close()
    if server.state != "ready":
        raise LoginError(f"{name}: {server.why or server.state}")
    now = tokens.entry(data_dir, name, config.url)
    if authorizer.opened:
        return f"logged in to {name}; the token is kept in {tokens.path(data_dir)}"
    if now.get("tokens") != kept.get("tokens"):
        return f"{name}: token obtained ({config.oauth.grant}); kept in {tokens.path(data_dir)}"
    return f"{name} did not ask for authorization: it is ready with {len(server.tools)} tools"


def _callback_port(configured: int | None, kept: tokens.Entry) -> int:
    """The port the redirect comes back to: the configured one, else the one uji registered
    last time (a registered redirect URI is matched exactly by many servers) when it is
    free, else any."""
    if configured is not None:
        return configured
    from urllib.parse import urlsplit

    client = kept.get("client")
    uris = client.get("redirect_uris") if isinstance(client, dict) else None
    if isinstance(uris, list) and uris and isinstance(uris[0], str):
        port = urlsplit(uris[0]).port
        if port is not None and _free(port):
            return port
    return 0


def _free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True
