"""The tools the model can call: built-in Python tools and tools added from Lua share
one registry of `Tool`s (tools/base.py), so a Lua `read_file` replaces ours and
`remove` works on either."""

from __future__ import annotations

import re
from typing import Any

from uji.tools.base import Tool

__all__ = ["POLICIES", "Registry", "Tool", "normalize_schema", "provider_name"]

POLICIES = ("allow", "ask", "deny")
NAME_LIMIT = 64  # OpenAI's and Anthropic's limit on a tool's name
_REFUSED = re.compile(r"[^A-Za-z0-9_-]")  # what providers refuse in a tool name


def provider_name(name: str) -> str:
    """`name` as every provider accepts a tool's name: each other character made `_`, at
    most NAME_LIMIT characters. A tool is registered, looked up and given rules under it."""
    return _REFUSED.sub("_", name)[:NAME_LIMIT] or "_"


class Registry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self.disabled: set[str] = set()

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def remove(self, name: str) -> bool:
        return self._tools.pop(provider_name(name), None) is not None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(provider_name(name))

    def names(self) -> list[str]:
        return sorted(self._tools)

    def disable(self, names: list[str]) -> None:
        self.disabled.update(provider_name(n) for n in names)

    def enable(self, names: list[str]) -> None:
        self.disabled.difference_update(provider_name(n) for n in names)

    def offered(self, only: list[str] | None = None) -> list[Tool]:
        """What the model sees, sorted by name; disabled tools stay visible."""
        names = self.names()
        if only is not None:
            wanted = {provider_name(n) for n in only}
            names = [n for n in names if n in wanted]
        return [self._tools[n] for n in names]


def normalize_schema(schema: Any) -> Any:
    """Lua cannot tell an empty array from an empty object: fix the JSON Schema keywords
    that must be arrays (`required`, `enum`, `type` lists, `anyOf`...) when they came
    across as `{}`."""
    if isinstance(schema, list):
        return [normalize_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, object] = {}
    for key, value in schema.items():
        if key in ("required", "enum", "anyOf", "oneOf", "allOf", "prefixItems") and value == {}:
            value = []
        elif key == "properties" and value == []:
            value = {}
        if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {k: normalize_schema(v) for k, v in value.items()}
        else:
            out[key] = normalize_schema(value)
    return out
