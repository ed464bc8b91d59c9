"""The tools each server listed last time, kept in `<data>/mcp-tools.json`, so a turn can
offer them in its first request without starting the server or importing the SDK: the
server starts when one of its tools is called (and its list is then read again).

An entry holds for one configuration: its fingerprint covers the command line, env, cwd,
URL and headers (hashed: no value is stored) and the size and modification time of the
program and of every argument that names a file, so editing the server's script or
upgrading its program lists the tools again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.mcp.config import Known, ServerConfig

FILE = "mcp-tools.json"
MAX_BYTES = 16 * 1024 * 1024


def fingerprint(config: ServerConfig) -> str:
    files: list[Any] = []
    if config.command:
        program = shutil.which(config.command[0]) or config.command[0]
        for part in [program, *config.command[1:]]:
            path = part if os.path.isabs(part) or config.cwd is None else os.path.join(config.cwd, part)
            with contextlib.suppress(OSError, ValueError):
                st = os.stat(path)
                files.append([part, st.st_size, st.st_mtime_ns])
    shape = {
        "command": config.command,
        "env": config.env,
        "cwd": config.cwd,
        "url": config.url,
        "headers": config.headers,
        "files": files,
    }
    return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()


def _read(data_dir: str) -> dict[str, Any]:
    try:
        with open(os.path.join(data_dir, FILE), "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        table = json.loads(raw) if len(raw) <= MAX_BYTES else {}
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def load(data_dir: str, name: str, config: ServerConfig) -> Known | None:
    """The tools, prompts and resources `name` listed last time with this configuration,
    or None."""
    from uji.mcp.config import Known, PromptArgument, PromptInfo, ResourceInfo, ToolInfo

    entry = _read(data_dir).get(name)
    if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint(config):
        return None
    try:
        return Known(
            [
                ToolInfo(str(t["name"]), str(t["description"]), dict(t["schema"]), bool(t["read_only"]))
                for t in entry["tools"]
            ],
            [
                PromptInfo(
                    str(p["name"]),
                    str(p["description"]),
                    [
                        PromptArgument(str(a["name"]), str(a["description"]), bool(a["required"]))
                        for a in p["arguments"]
                    ],
                )
                for p in entry.get("prompts", [])
            ],
            [
                ResourceInfo(str(r["uri"]), str(r["name"]), str(r["description"]), str(r["mime_type"]))
                for r in entry.get("resources", [])
            ],
        )
    except (KeyError, TypeError, ValueError):
        return None


def save(data_dir: str, name: str, config: ServerConfig, known: Known) -> None:
    """Remember the lists (written whole to a temporary file, then renamed over the old)."""
    table = _read(data_dir)
    table[name] = {
        "fingerprint": fingerprint(config),
        "tools": [
            {"name": t.name, "description": t.description, "schema": t.schema, "read_only": t.read_only}
            for t in known.tools
        ],
        "prompts": [
            {
                "name": p.name,
                "description": p.description,
                "arguments": [
                    {"name": a.name, "description": a.description, "required": a.required}
                    for a in p.arguments
                ],
            }
            for p in known.prompts
        ],
        "resources": [
            {"uri": r.uri, "name": r.name, "description": r.description, "mime_type": r.mime_type}
            for r in known.resources
        ],
    }
    with contextlib.suppress(OSError):
        os.makedirs(data_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".mcp-tools.", dir=data_dir)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(table, f, ensure_ascii=False)
            os.replace(tmp, os.path.join(data_dir, FILE))
        except OSError:
            os.unlink(tmp)
