"""What a configured MCP server is (its configuration, the tools it lists) and what the
SDK side (`uji.mcp.client`) needs of a server's state: a leaf of `uji.mcp`, so the
package's modules share these without importing the package, which imports them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from uji.record import Record, Struct, field

if TYPE_CHECKING:
    from uji.tools.base import ToolResult
    from uji.ui.form import Form, FormAnswer
    from uji.ui.port import FormCheck

Transport = Literal["http", "sse"]

# authorization_code: the user signs in in the browser (`uji mcp login`); client_credentials:
# the client's own id and secret (or private key), no user; identity_assertion: an enterprise
# IdP's ID token exchanged for an ID-JAG (SEP-990), no browser either.
Grant = Literal["authorization_code", "client_credentials", "identity_assertion"]
GRANTS: tuple[Grant, ...] = ("authorization_code", "client_credentials", "identity_assertion")


class OAuthConfig(Record):
    """A server's `oauth` table (uji.mcp.add); the defaults discover everything."""

    enabled: bool = True  # `oauth = false`: a 401 is the server's last word
    grant: Grant = "authorization_code"
    client_id: str | None = None  # pre-registered (else dynamic registration or client_metadata_url)
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None  # how a pre-registered client authenticates
    scope: str | None = None  # asked for when the server's challenge names none
    client_metadata_url: str | None = None  # an https URL serving uji's client metadata (CIMD)
    callback_port: int | None = None  # the loopback redirect's port (default: any free one)
    private_key: str | None = None  # PEM: client_credentials with private_key_jwt
    signing_algorithm: str = "RS256"
    issuer: str | None = None  # the authorization server the credentials belong to
    idp_token_endpoint: str | None = None  # identity_assertion: the IdP's token endpoint,
    idp_client_id: str | None = None  # uji's client id there,
    id_token: str | None = None  # and the user's ID token it exchanges


class ServerConfig(Struct):
    command: list[str] | None = None
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    transport: Transport = "http"  # for a url: streamable HTTP, or the legacy HTTP+SSE
    headers: dict[str, str] = field(default_factory=dict)
    trust_read_only: bool = False  # tools the server marks readOnlyHint default to "allow"
    wait: float | None = None  # how long a turn waits for it while it connects (None: configure's)
    oauth: OAuthConfig = field(default_factory=OAuthConfig)  # for a url (uji.mcp.auth)


class ToolInfo(Struct):
    """One tool as the server lists it."""

    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool


class ResourceInfo(Struct):
    """One resource as the server lists it: `@server:uri` mentions it."""

    uri: str
    name: str = ""
    description: str = ""
    mime_type: str = ""


class PromptArgument(Struct):
    name: str
    description: str = ""
    required: bool = False


class PromptInfo(Struct):
    """One prompt as the server lists it: the command `/mcp__server__prompt`."""

    name: str
    description: str = ""
    arguments: list[PromptArgument] = field(default_factory=list)


class Known(Struct):
    """What a server listed: its tools, prompts and resources."""

    tools: list[ToolInfo] = field(default_factory=list)
    prompts: list[PromptInfo] = field(default_factory=list)
    resources: list[ResourceInfo] = field(default_factory=list)


class Service(Protocol):
    """What a server's connection reports to (uji.mcp.McpServers)."""

    notice: Callable[[str], None]
    diagnose: Callable[[str], None]
    roots: Callable[[], list[str]]
    form: Callable[[Form, FormCheck], Awaitable[FormAnswer] | None]
    on_ask: Callable[[], str | None]
    data_dir: str | None


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
    why: str
    needs_login: bool
    task: asyncio.Task[None] | None
    authorizer: Any  # uji.mcp.auth.Authorizer while `uji.mcp.auth.login` connects it
    prompts: list[PromptInfo]
    resources: list[ResourceInfo]

    @property
    def service(self) -> Service: ...

    def ready(self, session: Any, known: Known) -> None: ...

    def set_tools(self, tools: list[ToolInfo]) -> None: ...

    def set_known(self, known: Known) -> None: ...

    def died(self, why: str) -> None: ...

    async def read(self, uri: str) -> ToolResult: ...

    async def prompt(self, name: str, arguments: dict[str, str]) -> ToolResult: ...
