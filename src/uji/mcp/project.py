"""A project's `.mcp.json` (Claude Code's format), imported only once approved.

    {"mcpServers": {"name": {"command": "npx", "args": [...], "env": {...}},
                    "web": {"type": "http", "url": "https://...", "headers": {...}}}}

The file is found from the working directory up to the project's root. Before anything
runs, the user sees each server's command line or URL exactly as written (variables not
expanded, header and env values not shown) and approves the file for this project
(`uji.trust`); after approval `${VAR}` and `${VAR:-default}` are expanded from uji's
environment, as Claude Code does. A server of the same name in the user's config wins.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from typing import Any

from uji.mcp.config import ServerConfig, Transport
from uji.record import Struct

FILE = ".mcp.json"
KIND = "mcp.json"  # the trust kind
MAX_BYTES = 1024 * 1024
MAX_SERVERS = 100
# Compiled by re when a .mcp.json is first read.
_NAME = r"^[A-Za-z0-9_-]{1,64}$"
_VAR = r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}"


class ProjectServer(Struct):
    name: str
    shown: str  # the command line or URL as written
    command: list[str] | None
    url: str | None
    env: dict[str, str]
    headers: dict[str, str]
    transport: Transport = "http"

    def config(self, cwd: str, environ: dict[str, str]) -> ServerConfig:
        def expand(text: str) -> str:
            return re.sub(_VAR, lambda m: environ.get(m.group(1)) or (m.group(2) or ""), text)

        return ServerConfig(
            command=[expand(p) for p in self.command] if self.command else None,
            env={k: expand(v) for k, v in self.env.items()},
            cwd=cwd,
            url=expand(self.url) if self.url else None,
            transport=self.transport,
            headers={k: expand(v) for k, v in self.headers.items()},
        )


def find(cwd: str, root: str) -> str | None:
    """The first `.mcp.json` from `cwd` up to `root` (both included)."""
    here = os.path.abspath(cwd)
    for _ in range(256):
        path = os.path.join(here, FILE)
        if os.path.isfile(path):
            return path
        if here == root or os.path.dirname(here) == here or not here.startswith(root):
            return None
        here = os.path.dirname(here)
    return None


def parse(path: str) -> tuple[list[ProjectServer], list[str]]:
    """The servers of the file, and what is wrong with it (each problem names the file
    and the server)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as e:
        return [], [f"{path}: {e.strerror or e}"]
    if len(raw) > MAX_BYTES:
        return [], [f"{path}: larger than {MAX_BYTES // 1024} KB; not read"]
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        return [], [f"{path}: not valid JSON ({e})"]
    table = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(table, dict):
        return [], [f'{path}: no "mcpServers" object']
    servers: list[ProjectServer] = []
    problems: list[str] = []
    for name, spec in list(table.items())[:MAX_SERVERS]:
        server, problem = _server(str(name), spec)
        if problem:
            problems.append(f"{path}: server {name!r}: {problem}")
        elif server is not None:
            servers.append(server)
    return servers, problems


def _strings(value: Any) -> dict[str, str] | None:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        return None
    return {str(k): v for k, v in value.items()}


def _server(name: str, spec: Any) -> tuple[ProjectServer | None, str | None]:
    if not re.match(_NAME, name):
        return None, "the name must be 1 to 64 letters, digits, _ or -"
    if not isinstance(spec, dict):
        return None, "must be an object"
    kind = spec.get("type", "http" if "url" in spec and "command" not in spec else "stdio")
    env, headers = _strings(spec.get("env")), _strings(spec.get("headers"))
    if env is None or headers is None:
        return None, '"env" and "headers" must map names to strings'
    if kind == "stdio":
        command, args = spec.get("command"), spec.get("args", [])
        if not isinstance(command, str) or not command:
            return None, '"command" must be a non-empty string'
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            return None, '"args" must be a list of strings'
        argv = [command, *args]
        return ProjectServer(name, shlex.join(argv), argv, None, env, {}), None
    if kind in ("http", "streamable-http", "sse"):
        url = spec.get("url")
        if not isinstance(url, str) or not re.match(r"^https?://", url):
            return None, '"url" must be an http:// or https:// URL'
        return ProjectServer(name, url, None, url, {}, headers, "sse" if kind == "sse" else "http"), None
    return None, f'type "{kind}" is not supported (stdio, http, streamable-http or sse)'


def question(path: str, servers: list[ProjectServer]) -> tuple[str, str]:
    """The question's title and body: every server as written."""
    lines = []
    for s in servers:
        extra = [f"env {k}" for k in s.env] + [f"header {k}" for k in s.headers]
        lines.append(f"  {s.name}: {s.shown}" + (f"  ({', '.join(extra)})" if extra else ""))
    body = (
        f"{path} asks uji to start {len(servers)} MCP server{'s' if len(servers) != 1 else ''}:\n"
        + "\n".join(lines)
        + "\nAllow them for this project? (asked again if the file changes)"
    )
    return "Start this project's MCP servers?", body
