"""uji.mcp: add/remove/list/configure MCP servers (uji.mcp does the work; the SDK loads only when
a server is added)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, ApiError
from uji.mcp.config import ServerConfig
from uji.tools.confine import expand_user

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.mcp import McpServers
    from uji.mcp.config import OAuthConfig


def install(host: LuaHost, servers: McpServers, cwd: str) -> Api:
    def mcp_add(name: str, spec: Any) -> None:
        data = host.lua.convert.to_python(spec)
        if not isinstance(data, dict):
            raise ApiError("uji.mcp.add: the spec must be a table")
        where = data.get("cwd")
        config = ServerConfig(
            command=[str(p) for p in data["command"]] if data.get("command") else None,
            env={str(k): str(v) for k, v in (data.get("env") or {}).items()},
            cwd=os.path.join(cwd, expand_user(where)) if where else cwd,
            url=data.get("url"),
            transport="sse" if data.get("transport") == "sse" else "http",  # checked in mcp.lua
            headers={str(k): str(v) for k, v in (data.get("headers") or {}).items()},
            trust_read_only=bool(data.get("trust_read_only")),
            wait=float(data["wait"]) if data.get("wait") is not None else None,
            oauth=oauth_config(data.get("oauth")),
        )
        servers.add(name, config)

    def mcp_remove(name: str) -> bool:
        return servers.remove(name)

    def mcp_list() -> Any:
        return host.lua.convert.to_lua(servers.rows())

    def mcp_configure(project: bool | None, wait: float | None) -> None:
        if project is not None:
            servers.project = project
        if wait is not None:
            servers.wait = float(wait)

    return {
        "mcp_add": mcp_add,
        "mcp_remove": mcp_remove,
        "mcp_list": mcp_list,
        "mcp_configure": mcp_configure,
    }


def oauth_config(spec: Any) -> OAuthConfig:
    """A server's `oauth` (checked in mcp.lua): false turns OAuth off, a table configures it."""
    from uji.mcp.config import GRANTS, OAuthConfig  # here: a run with no server has no use for it

    if spec is False:
        return OAuthConfig(enabled=False)
    if not isinstance(spec, dict):
        return OAuthConfig()

    def text(value: Any) -> str | None:
        return str(value) if value is not None else None

    idp = spec.get("idp") or {}
    grant = spec.get("grant") or "authorization_code"
    return OAuthConfig(
        grant=grant if grant in GRANTS else "authorization_code",
        client_id=text(spec.get("client_id")),
        client_secret=text(spec.get("client_secret")),
        token_endpoint_auth_method=text(spec.get("token_endpoint_auth_method")),
        scope=text(spec.get("scope")),
        client_metadata_url=text(spec.get("client_metadata_url")),
        callback_port=int(spec["callback_port"]) if spec.get("callback_port") is not None else None,
        private_key=text(spec.get("private_key")),
        signing_algorithm=str(spec.get("signing_algorithm") or "RS256"),
        issuer=text(spec.get("issuer")),
        idp_token_endpoint=text(idp.get("token_endpoint")),
        idp_client_id=text(idp.get("client_id")),
        id_token=text(idp.get("id_token")),
    )
