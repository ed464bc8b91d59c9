"""The tools the model can call: built-in Python tools and tools added from Lua share
one registry of `Tool`s (tools/base.py), so a Lua `read_file` replaces ours and
`remove` works on either."""

from __future__ import annotations

from typing import Any

from uji.tools.base import Tool

__all__ = ["POLICIES", "Registry", "Tool", "normalize_schema"]

POLICIES = ("allow", "ask", "deny")


class Registry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self.disabled: set[str] = set()

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def remove(self, name: str) -> bool:
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return sorted(self._tools)

    def disable(self, names: list[str]) -> None:
        self.disabled.update(names)

    def enable(self, names: list[str]) -> None:
        self.disabled.difference_update(names)

    def offered(self, only: list[str] | None = None) -> list[Tool]:
        """What the model sees, sorted by name; disabled tools stay visible."""
        names = self.names()
        if only is not None:
            wanted = set(only)
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
    out: dict[str, Any] = {}
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
