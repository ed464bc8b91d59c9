"""Strict validation of request bodies against an official SDK's request types.

The SDKs describe request bodies as TypedDicts, which pydantic validates but lets
unknown keys through, and whose `Iterable[...]` fields it checks only when iterated.
`strict_validator` rebuilds the type's schema with every TypedDict forbidding extra
keys, and `check` consumes every lazily validated iterable, so a misspelt or unknown
field anywhere in a body fails, as the real API would reject it. Test-only: the
runtime never imports an SDK.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import SchemaValidator


@cache
def strict_validator(typed_dict: Any) -> SchemaValidator:
    schema = copy.deepcopy(TypeAdapter(typed_dict).core_schema)
    _forbid_extra(schema)
    return SchemaValidator(schema)


def _forbid_extra(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "typed-dict":
            node["extra_behavior"] = "forbid"
        for value in node.values():
            _forbid_extra(value)
    elif isinstance(node, list):
        for value in node:
            _forbid_extra(value)


def check(typed_dict: Any, body: Mapping[str, Any]) -> None:
    """Raise pydantic's ValidationError unless `body` fits `typed_dict` exactly."""
    _consume(strict_validator(typed_dict).validate_python(body, strict=True))


def _consume(value: Any) -> None:
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return
    if isinstance(value, Mapping):
        for v in value.values():
            _consume(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _consume(v)
    elif isinstance(value, Iterable):  # pydantic's ValidatorIterator: validates as it goes
        _consume(list(value))
