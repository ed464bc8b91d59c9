"""The `mcp` SDK side of a server: connect, list tools, call one. Imported only when a
server is configured (uji.mcp imports it in a thread)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import re
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import mcp.client.stdio as sdk_stdio
import mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.auth import OAuthFlowError
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from uji import __version__
from uji.mcp import oauth
from uji.mcp.auth import LoginError, NeedsLogin
from uji.mcp.config import Connection, Known, PromptArgument, PromptInfo, ResourceInfo, ToolInfo
from uji.mcp.errors import McpRefused, describe, leaves
from uji.tools.base import ToolResult
from uji.tools.results import keep_images

if TYPE_CHECKING:
    from uji.wires.base import Image

LIST_PAGES = 50  # at most this many pages of tools/list
REFRESH_WAIT = 10.0  # how long a call's result waits for a tools/list it caused
STDERR_LINES = 5  # the last lines of a server's stderr that a failure shows
AUTH_WAIT = 3.0  # how long a call that lost its connection waits to learn why
CLIENT_INFO = mcp_types.Implementation(name="uji", version=__version__)

# The SDK logs a server's non-JSON stdout line (a banner) with a traceback, which would land
# on uji's stderr or screen: the line is skipped either way, so its log is not shown.
logging.getLogger("mcp").addHandler(logging.NullHandler())
logging.getLogger("mcp").propagate = False

# The process the SDK's stdio_client spawns, caught so that its exit (while idle too) and
# exit status are known: the SDK keeps it to itself.
_spawned: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("uji_mcp_spawned", default=None)


def _keep_spawned() -> None:
    spawn: Any = getattr(sdk_stdio, "_create_platform_compatible_process", None)
    if spawn is None:  # another SDK version: exit statuses are not known, nothing else changes
        return

    async def spawn_and_keep(*args: Any, **kwargs: Any) -> Any:
        process = await spawn(*args, **kwargs)
        kept = _spawned.get()
        if kept is not None:
            kept.append(process)
        return process

    setattr(sdk_stdio, "_create_platform_compatible_process", spawn_and_keep)  # noqa: B010


_keep_spawned()


class Failed(Exception):
    """Why a server failed, said in full (its exit status and the end of its stderr)."""

    explained = True


async def serve(server: Connection) -> None:
    """Connect, list the tools, then hold the connection until the server is stopped or
    its process exits (which is noticed at once: the next call starts it again)."""
    refused: list[tuple[int, str]] = []  # 401/403 answers, and what WWW-Authenticate said

    async def on_response(response: Any) -> None:
        if response.status_code in (401, 403):
            challenge = response.headers.get("www-authenticate", "")
            said = re.search(r'error_description="([^"]*)"', challenge) or re.search(
                r'error="([^"]*)"', challenge
            )
            refused.append((response.status_code, said.group(1) if said else ""))

    auth = oauth.provider(server) if server.config.url is not None else None
    spawned: list[Any] = []
    token = _spawned.set(spawned)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            await _serve(server, auth, on_response, errlog, spawned)
        except Exception as e:
            raise refusal(server, e, auth, refused) or Failed(
                explain(
                    "exited before it was ready"
                    if spawned and spawned[0].returncode is not None
                    else describe(e),
                    spawned,
                    errlog,
                )
            ) from e
        finally:
            _spawned.reset(token)
        if spawned and spawned[0].returncode is not None and server.state == "ready":
            why = explain("exited while idle", spawned, errlog)
            server.service.notice(f"MCP server {server.name} {why}; it starts again on its next call")
            server.died(why)


def refusal(
    server: Connection, e: BaseException, auth: Any, refused: list[tuple[int, str]]
) -> Exception | None:
    """What a failure that is about authorization says: the login to run, the OAuth step
    that failed, or the server's refusal; None for any other failure."""
    found = leaves(e)
    for leaf in found:
        if isinstance(leaf, (NeedsLogin, LoginError)):
            return leaf
    for leaf in found:
        if isinstance(leaf, OAuthFlowError):
            return Failed(f"authorization failed: {leaf}")
    if not refused:
        return None
    status, said = refused[-1]
    if auth is None and server.config.oauth.enabled and status == 401:
        return NeedsLogin(server.name)
    if auth is None and status == 401:
        return Failed("HTTP 401: the server asks for authorization, and its spec says `oauth = false`")
    return Failed(f"HTTP {status}: the server refused uji's authorization{f' ({said})' if said else ''}")


def explain(why: str, spawned: list[Any], errlog: Any) -> str:
    """`why`, with the process's exit status and the last lines of its stderr."""
    code = spawned[0].returncode if spawned else None
    if code is not None:
        why += f" (exit status {code})" if code >= 0 else f" (killed by signal {-code})"
    tail = stderr_tail(errlog)
    return why + "".join(f"\n  stderr: {line}" for line in tail)


def stderr_tail(errlog: Any) -> list[str]:
    try:
        errlog.flush()
        size = errlog.seek(0, 2)
        errlog.seek(max(0, size - 4096))
        lines = [line.rstrip() for line in errlog.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []
    return [line[:300] for line in lines[-STDERR_LINES:]]


async def _serve(server: Connection, auth: Any, on_response: Any, errlog: Any, spawned: list[Any]) -> None:
    cfg = server.config
    async with AsyncExitStack() as stack:
        if cfg.url is not None and cfg.transport == "sse":  # the legacy HTTP+SSE transport
            read, write = await stack.enter_async_context(
                sse_client(cfg.url, headers=dict(cfg.headers), auth=auth)
            )
        elif cfg.url is not None:
            http = create_mcp_http_client(headers=dict(cfg.headers), auth=auth)
            http.event_hooks["response"].append(on_response)
            await stack.enter_async_context(http)
            read, write = await stack.enter_async_context(streamable_http_client(cfg.url, http_client=http))
        else:
            assert cfg.command
            params = StdioServerParameters(
                command=cfg.command[0], args=cfg.command[1:], env=dict(cfg.env) or None, cwd=cfg.cwd
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        refreshing = server.refreshing

        async def refresh() -> None:
            try:
                server.set_known(await list_all(session, capabilities))
            except Exception as e:
                server.service.notice(f"MCP server {server.name}: listing its tools failed: {e}")

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                return
            if getattr(message, "method", None) in LIST_CHANGED:
                task = asyncio.get_running_loop().create_task(refresh())
                refreshing.add(task)
                task.add_done_callback(refreshing.discard)

        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                message_handler=on_message,
                client_info=CLIENT_INFO,
                logging_callback=lambda params: on_log(server, params),
                list_roots_callback=lambda context: list_roots(server),
                elicitation_callback=lambda context, params: elicit(server, params),
            )
        )
        capabilities = (await session.initialize()).capabilities
        server.process = spawned[0] if spawned else None
        server.ready(session, await list_all(session, capabilities))
        await until_stopped_or_exited(server, server.process)
        for task in refreshing:
            task.cancel()


async def until_stopped_or_exited(server: Connection, process: Any) -> None:
    """Hold the connection until uji stops the server or its process exits."""
    stopping = asyncio.ensure_future(server.stop.wait())
    waits: set[asyncio.Future[Any]] = {stopping}
    if process is not None:
        waits.add(asyncio.ensure_future(process.wait()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


LOG_LINES = 50  # the server's log messages /mcp keeps


async def on_log(server: Connection, params: mcp_types.LoggingMessageNotificationParams) -> None:
    """A server's log message: to <data>/diagnostics.log, and the last ones to /mcp."""
    data = params.data if isinstance(params.data, str) else json.dumps(params.data, ensure_ascii=False)
    line = f"{params.level}{f' ({params.logger})' if params.logger else ''}: {data}"[:500]
    server.log = [*server.log, line][-LOG_LINES:]
    server.service.diagnose(f"{server.name}: {line}")


async def list_roots(server: Connection) -> mcp_types.ListRootsResult:
    """The working directory and uji.tool.roots, as file:// URIs."""
    import pathlib

    seen: list[str] = []
    for path in server.service.roots():
        uri = pathlib.Path(os.path.abspath(path)).as_uri()
        if uri not in seen:
            seen.append(uri)
    return mcp_types.ListRootsResult(roots=[mcp_types.Root.model_validate({"uri": uri}) for uri in seen])


async def elicit(server: Connection, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
    """A server's question (elicitation): a form on the screen, the answer sent back as the
    spec says (accept with the values checked against the requested schema, decline,
    cancel). With no screen it is declined, and the call's result tells the model so."""
    from uji.mcp import elicit as questions

    message = getattr(params, "message", "") or ""
    if isinstance(params, mcp_types.ElicitRequestURLParams):
        form = questions.Form(f"MCP server {server.name} asks you to open a page", message, url=params.url)
        schema: dict[str, Any] = {}
    else:
        schema = dict(params.requested_schema)
        form = questions.form(server.name, message, schema)
    shown = server.service.form(form, lambda values: questions.check(schema, values))
    if shown is None:  # nobody at the screen
        # Under `uji run --on-ask allow` (every question answered yes), a form whose fields all
        # have defaults, or are optional, is accepted with the defaults (SEP-1034).
        content = defaults(schema) if server.service.on_ask() == "allow" and schema else None
        if content is not None:
            server.declined.append(
                f"{message!r}; uji accepted its defaults (--on-ask allow): {json.dumps(content)}"
            )
            return mcp_types.ElicitResult(action="accept", content=content)
        server.declined.append(f"{message!r}; uji declined it, as nobody can answer here")
        return mcp_types.ElicitResult(action="decline")
    answer = await shown
    if answer.action != "accept":
        return mcp_types.ElicitResult(action=answer.action)
    if form.url:
        import webbrowser  # $BROWSER is honoured

        await asyncio.to_thread(webbrowser.open, form.url)
        return mcp_types.ElicitResult(action="accept")
    return mcp_types.ElicitResult(action="accept", content=dict(answer.values))


def defaults(schema: dict[str, Any]) -> dict[str, Any] | None:
    """Each field's default; None when a required field has none."""
    fields = schema.get("properties")
    if not isinstance(fields, dict):
        return None
    content = {k: f["default"] for k, f in fields.items() if isinstance(f, dict) and "default" in f}
    required = schema.get("required") or []
    return content if all(name in content for name in required) else None


LIST_CHANGED = frozenset(f"notifications/{kind}/list_changed" for kind in ("tools", "prompts", "resources"))


async def list_all(session: ClientSession, capabilities: mcp_types.ServerCapabilities) -> Known:
    """Its tools, and its prompts and resources if it offers them (a failure to list
    those two leaves them out: its tools still work)."""
    tools = await list_tools(session)
    prompts: list[PromptInfo] = []
    resources: list[ResourceInfo] = []
    if capabilities.prompts is not None:
        with contextlib.suppress(Exception):
            prompts = await list_prompts(session)
    if capabilities.resources is not None:
        with contextlib.suppress(Exception):
            resources = await list_resources(session)
    return Known(tools, prompts, resources)


async def paged(list_page: Callable[..., Awaitable[Any]], items: str) -> list[Any]:
    """Every item of a paginated list (tools/list and the like), LIST_PAGES pages at most."""
    out: list[Any] = []
    cursor: str | None = None
    for _ in range(LIST_PAGES):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await list_page(params=params)
        out.extend(getattr(page, items))
        cursor = page.next_cursor
        if not cursor:
            break
    return out


async def list_tools(session: ClientSession) -> list[ToolInfo]:
    return [
        ToolInfo(
            name=tool.name,
            description=tool.description or tool.title or "",
            schema=dict(tool.input_schema),
            read_only=bool(tool.annotations is not None and tool.annotations.read_only_hint),
        )
        for tool in await paged(session.list_tools, "tools")
    ]


async def list_prompts(session: ClientSession) -> list[PromptInfo]:
    return [
        PromptInfo(
            prompt.name,
            prompt.description or prompt.title or "",
            [PromptArgument(a.name, a.description or "", bool(a.required)) for a in prompt.arguments or []],
        )
        for prompt in await paged(session.list_prompts, "prompts")
    ]


async def list_resources(session: ClientSession) -> list[ResourceInfo]:
    return [
        ResourceInfo(str(res.uri), res.name or "", res.description or res.title or "", res.mime_type or "")
        for res in await paged(session.list_resources, "resources")
    ]


async def read_resource(server: Connection, uri: str) -> ToolResult:
    """resources/read: text contents as text, image contents as images, other binary
    contents named with their size; cut as a tool's text result is."""
    session: ClientSession = server.session
    try:
        result = await session.read_resource(uri)
    except MCPError as e:
        raise McpRefused(e.error.message) from e
    texts: list[str] = []
    images: list[Image] = []
    for part in result.contents:
        if isinstance(part, mcp_types.TextResourceContents):
            texts.append(part.text)
        elif (part.mime_type or "").startswith("image/"):
            images.append({"media_type": part.mime_type or "", "data": part.blob})
        else:
            texts.append(
                f"[{part.uri}: {part.mime_type or 'binary'}, {len(part.blob) * 3 // 4} bytes, left out]"
            )
    text, kept = keep_images(bounded("\n".join(texts)), images)
    return ToolResult(text, kept)


async def get_prompt(server: Connection, name: str, arguments: dict[str, str]) -> ToolResult:
    """prompts/get: the text of its messages, in order, as one message (an embedded text
    resource as its text; images kept)."""
    session: ClientSession = server.session
    try:
        result = await session.get_prompt(name, arguments)
    except MCPError as e:
        raise McpRefused(e.error.message) from e
    texts: list[str] = []
    images: list[Image] = []
    for message in result.messages:
        block = message.content
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            images.append({"media_type": block.mime_type, "data": block.data})
        elif isinstance(block, mcp_types.EmbeddedResource) and isinstance(
            block.resource, mcp_types.TextResourceContents
        ):
            texts.append(block.resource.text)
        else:
            texts.append(f"[{block.type} content left out]")
    text, kept = keep_images("\n\n".join(texts), images)
    return ToolResult(text, kept)


async def call_tool(
    server: Connection, tool: str, args: dict[str, Any], show: Callable[[str], None] | None = None
) -> ToolResult:
    session: ClientSession = server.session

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if show is not None:  # the call's live line, and `progress` events
            figure = f"{progress:g}/{total:g}" if total else f"{progress:g}"
            show(f"{figure} {message}" if message else figure)

    server.declined = []
    try:
        # A progress callback makes the SDK send a progressToken with the call.
        result = await session.call_tool(tool, args, progress_callback=on_progress)
        # A tools/list_changed sent during the call: the next request offers the new list.
        if server.refreshing:
            await asyncio.wait(set(server.refreshing), timeout=REFRESH_WAIT)
    except MCPError as e:
        if e.error.code == mcp_types.CONNECTION_CLOSED:
            task = server.task
            if task is not None and not task.done():  # why it closed: the connection's task says
                await asyncio.wait({task}, timeout=AUTH_WAIT)
            if server.needs_login:  # a step-up (403 insufficient_scope) the user must give
                return ToolResult(f"error: MCP server {server.name} {server.why}")
            if server.config.url is not None:
                server.died("the connection closed during a call")
                return ToolResult(
                    f"error: the connection to MCP server {server.name} closed during the call; "
                    "uji connects again on the next call"
                )
            server.died("the server exited during a call")
            return ToolResult(
                f"error: MCP server {server.name} exited during the call; it starts again on the next call"
            )
        return ToolResult(f"error: {e.error.message}")
    out = as_result(result)
    for said in server.declined:
        note = f"[the server asked the user: {said}]"
        out = ToolResult(f"{out.text}\n{note}" if out.text else note, out.images)
    return out


def as_result(result: mcp_types.CallToolResult) -> ToolResult:
    """What the model gets: the text blocks, cut as run_command's output is (the last
    MAX_LINES lines or MAX_BYTES, the whole kept in a file the model can read); each
    distinct image once; `structuredContent` only when there is no content at all (a
    server that sends both puts the same data in its content, as the spec asks)."""
    texts: list[str] = []
    images: list[Image] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            image: Image = {"media_type": block.mime_type, "data": block.data}
            if image not in images:
                images.append(image)
        elif isinstance(block, mcp_types.EmbeddedResource):
            res = block.resource
            if isinstance(res, mcp_types.TextResourceContents):
                texts.append(res.text)
            else:
                texts.append(
                    f"[resource {res.uri} ({res.mime_type or 'binary'}, {len(res.blob) * 3 // 4} bytes)]"
                )
        elif isinstance(block, mcp_types.ResourceLink):
            texts.append(f"[resource {block.uri}]")
        else:
            texts.append(f"[{block.type} content left out]")
    if not result.content and result.structured_content is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = bounded("\n".join(texts))
    if result.is_error:
        return ToolResult(f"error: {text or 'the tool failed'}")
    text, kept = keep_images(text, images)
    return ToolResult(text, kept)


def bounded(text: str) -> str:
    """`text` as run_command would show it: its tail, and where the rest is."""
    from uji.tools.builtin.run_command import MAX_BYTES, MAX_LINES, Output

    if len(text) <= MAX_BYTES // 4 or (len(text.encode()) <= MAX_BYTES and text.count("\n") < MAX_LINES):
        return text
    out = Output()
    out.feed(text.encode())
    out.finish()
    return out.render()
