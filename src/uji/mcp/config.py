"""What a configured MCP server is (its configuration, the tools it lists) and what the
SDK side (`uji.mcp.client`) needs of a server's state: a leaf of `uji.mcp`, so the
package's modules share these without importing the package, which imports them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from uji.record import Struct, field

if TYPE_CHECKING:
    from uji.ui.form import Form, FormAnswer
    from uji.ui.port import FormCheck

Transport = Literal["http", "sse"]


class ServerConfig(Struct):
    command: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    transport: Transport = "http"  # for a url: streamable HTTP, or the legacy HTTP+SSE
    headers: dict[str, str] = field(default_factory=dict)
    trust_read_only: bool = False  # tools the server marks readOnlyHint default to "allow"
    wait: float | None = None  # how long a turn waits for it while it connects (None: configure's)


class ToolInfo(Struct):
    """One tool as the server lists it."""

    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool


class Service(Protocol):
    """What a server's connection reports to (uji.mcp.McpServers)."""

    notice: Callable[[str], None]
    diagnose: Callable[[str], None]
    roots: Callable[[], list[str]]
    form: Callable[[Form, FormCheck], Awaitable[FormAnswer] | None]


class Connection(Protocol):
    """One server as its connection (uji.mcp.client) sees it (uji.mcp.Server)."""

    name: str
    config: ServerConfig
    state: str
    session: Any
    process: Any
    stop: asyncio.Event
    refreshing: set[asyncio.Task[None]]
    log: list[str]
    declined: list[str]

    @property
    def service(self) -> Service: ...

    def ready(self, session: Any, tools: list[ToolInfo]) -> None: ...

    def set_tools(self, tools: list[ToolInfo]) -> None: ...

    def died(self, why: str) -> None: ...
