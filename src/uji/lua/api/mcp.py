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
