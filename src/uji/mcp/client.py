"""The `mcp` SDK side of a server: connect, list tools, call one. Imported only when a
server is configured (uji.mcp imports it in a thread)."""

from __future__ import annotations

import asyncio
import json
import os
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import mcp_types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from uji.mcp import ToolInfo
from uji.tools.base import ToolResult
from uji.tools.results import keep_images

if TYPE_CHECKING:
    from uji.mcp import Server

LIST_PAGES = 50  # at most this many pages of tools/list
REFRESH_WAIT = 10.0  # how long a call's result waits for a tools/list it caused


async def serve(server: Server) -> None:
    """Connect, list the tools, then hold the connection until the server is stopped (a
    connection that broke shows at the next call, which then fails and restarts it)."""
    refused: list[int] = []  # 401/403 answers: the server wants authorization

    async def on_response(response: Any) -> None:
        if response.status_code in (401, 403):
            refused.append(response.status_code)

    try:
        await _serve(server, on_response)
    except Exception as e:
        if refused:
            raise NeedsAuth(refused[-1]) from e
        raise


class NeedsAuth(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(
            f"HTTP {status}: the server asks for authorization (OAuth), which uji does not do yet; "
            "give a token in `headers` instead"
        )


async def _serve(server: Server, on_response: Any) -> None:
    cfg = server.config
    async with AsyncExitStack() as stack:
        if cfg.url is not None:
            http = create_mcp_http_client(headers=dict(cfg.headers))
            http.event_hooks["response"].append(on_response)
            await stack.enter_async_context(http)
            read, write = await stack.enter_async_context(streamable_http_client(cfg.url, http_client=http))
        else:
            assert cfg.command
            errlog = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 (closed by the stack)
            params = StdioServerParameters(
                command=cfg.command[0], args=cfg.command[1:], env=dict(cfg.env) or None, cwd=cfg.cwd
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        refreshing = server.refreshing

        async def refresh() -> None:
            try:
                server.set_tools(await list_tools(session))
            except Exception as e:
                server.service.notice(f"MCP server {server.name}: listing its tools failed: {e}")

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):
                return
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                task = asyncio.get_running_loop().create_task(refresh())
                refreshing.add(task)
                task.add_done_callback(refreshing.discard)

        session = await stack.enter_async_context(ClientSession(read, write, message_handler=on_message))
        await session.initialize()
        server.ready(session, await list_tools(session))
        await server.stop.wait()
        for task in refreshing:
            task.cancel()


async def list_tools(session: ClientSession) -> list[ToolInfo]:
    tools: list[ToolInfo] = []
    cursor: str | None = None
    for _ in range(LIST_PAGES):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        for tool in page.tools:
            hints = tool.annotations
            tools.append(
                ToolInfo(
                    name=tool.name,
                    description=tool.description or tool.title or "",
                    schema=dict(tool.input_schema),
                    read_only=bool(hints is not None and hints.read_only_hint),
                )
            )
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def call_tool(server: Server, tool: str, args: dict[str, Any]) -> ToolResult:
    session: ClientSession = server.session
    try:
        result = await session.call_tool(tool, args)
        # A tools/list_changed sent during the call: the next request offers the new list.
        if server.refreshing:
            await asyncio.wait(set(server.refreshing), timeout=REFRESH_WAIT)
    except MCPError as e:
        if e.error.code == mcp_types.CONNECTION_CLOSED:
            server.died("the server exited during a call")
            return ToolResult(
                f"error: MCP server {server.name} exited during the call; it starts again on the next call"
            )
        return ToolResult(f"error: {e.error.message}")
    return as_result(result)


def as_result(result: mcp_types.CallToolResult) -> ToolResult:
    """What the model gets: the text blocks, cut as run_command's output is (the last
    MAX_LINES lines or MAX_BYTES, the whole kept in a file the model can read); each
    distinct image once; `structuredContent` only when there is no content at all (a
    server that sends both puts the same data in its content, as the spec asks)."""
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent):
            image = {"media_type": block.mime_type, "data": block.data}
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
