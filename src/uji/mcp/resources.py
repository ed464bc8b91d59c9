"""`@server:uri` in a message: the resource `uri` of the MCP server `server`, read
through `resources/read` and sent with the message as an `@file` is (agent/mentions.py).
A word like it whose part before the colon names no configured server stays text; a
resource the server cannot read stops the message, with why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uji.agent.mentioned import Mentioned
    from uji.mcp.config import Connection


def find(servers: Mapping[str, Connection], text: str) -> list[tuple[Connection, str]]:
    """(server, uri) of each `@server:uri` in `text`, in order, once each."""
    from uji.agent.mentions import trim, words

    found: list[tuple[Connection, str]] = []
    for word in words(text):
        name, colon, uri = word.partition(":")
        server = servers.get(name)
        if server is None or not colon or not uri:
            continue
        listed = {r.uri for r in server.resources}
        if uri not in listed:  # `@srv:notes://a.` at a sentence's end
            uri = trim(uri)
        if uri and (server, uri) not in found:
            found.append((server, uri))
    return found


async def mentioned(servers: Mapping[str, Connection], text: str) -> list[Mentioned]:
    from uji.agent.mentioned import Mentioned, MentionFailed
    from uji.agent.mentions import MAX_MENTIONS
    from uji.mcp.errors import McpRefused, describe

    out: list[Mentioned] = []
    for server, uri in find(servers, text)[:MAX_MENTIONS]:
        try:
            result = await server.read(uri)
        except McpRefused as e:
            raise MentionFailed(f"@{server.name}:{uri}: {e}") from e
        except Exception as e:
            raise MentionFailed(f"@{server.name}:{uri}: {describe(e)}") from e
        out.append(Mentioned(server.name, uri, result))
    return out
