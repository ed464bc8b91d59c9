"""A light check of a call's arguments against its tool's JSON Schema: required keys
and the types of top-level properties, so a wrong call gets a clear answer before
anyone is asked to approve it."""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _matches(value: Any, kind: str) -> bool:
    if kind == "null":
        return value is None
    types = _TYPES.get(kind)
    if types is None:
        return True
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, types)


def check_arguments(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """The first problem with `args`, as text for the model, or None."""
    if not isinstance(schema, dict):
        return None
    for key in schema.get("required") or []:
        if isinstance(key, str) and key not in args:
            return f"error: `{key}` is required"
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    for key, value in args.items():
        prop = properties.get(key)
        if not isinstance(prop, dict) or "type" not in prop:
            continue
        kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        if not any(_matches(value, k) for k in kinds if isinstance(k, str)):
            wanted = " or ".join(str(k) for k in kinds)
            return f"error: `{key}` must be {_article(wanted)}, got {type_name(value)}"
    return None


def _article(kind: str) -> str:
    return ("an " if kind[:1] in "aeiou" else "a ") + kind
