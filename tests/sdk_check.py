"""Strict checks of JSON bodies against the official SDKs' request types (test-only).

Two kinds of types:

- `TypedDict` request params (openai, anthropic): `check_typed` walks the value and the
  type hints together. Strict means: every key of a dict must be a declared key of its
  TypedDict (under its wire alias, if the SDK gives one), every required key must be
  there, a `Literal` must match exactly, `str`/`int`/`float`/`bool` take only their own
  JSON type (no coercion; a bool is not an int), lists must be lists, and a `Union`
  passes when one member passes. pydantic is not used here: it ignores unknown keys of
  a TypedDict and validates `Iterable[...]` fields lazily, so it would let both through.
- pydantic models (mistralai, google-genai): `check_model` validates the JSON text with
  the model (JSON mode, so base64 `bytes` fields read as the API sends them) and then
  walks the input beside the validated object: every key must be a field (by name or
  alias) of the model that took it. google-genai's models forbid extras already;
  mistralai's ignore them, and the walk is what catches `stream_options` there.

Both return a list of errors, each "path: what", empty when the value conforms.
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import json
import types
import typing
from typing import Any

import typing_extensions
from pydantic import BaseModel, ValidationError
from typing_extensions import is_typeddict

Errors = list[str]

_WRAPPERS = (typing.Required, typing.NotRequired, typing_extensions.ReadOnly)


def _unwrap(tp: Any) -> tuple[Any, list[Any]]:
    """(the bare type, its Annotated metadata) with Required/NotRequired/ReadOnly stripped."""
    meta: list[Any] = []
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            meta += list(tp.__metadata__)
            tp = tp.__origin__
        elif origin in _WRAPPERS:
            tp = typing.get_args(tp)[0]
        else:
            return tp, meta


def _alias(meta: list[Any]) -> str | None:
    for m in meta:
        alias = getattr(m, "alias", None)  # openai/anthropic PropertyInfo
        if isinstance(alias, str):
            return alias
    return None


@functools.cache
def _hints(td: Any) -> dict[str, tuple[str, Any]]:
    """{wire name: (key, type)} of a TypedDict."""
    out: dict[str, tuple[str, Any]] = {}
    for key, tp in typing.get_type_hints(td, include_extras=True).items():
        bare, meta = _unwrap(tp)
        out[_alias(meta) or key] = (key, bare)
    return out


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp)


def check_typed(value: Any, tp: Any, path: str = "body") -> Errors:
    tp, _ = _unwrap(tp)
    if tp is Any or tp is object:
        return []
    if tp is type(None) or tp is None:
        return [] if value is None else [f"{path}: expected null, got {value!r:.60}"]
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _union(value, typing.get_args(tp), path)
    if origin is typing.Literal:
        ok = any(value == v and type(value) is type(v) for v in typing.get_args(tp))
        return [] if ok else [f"{path}: {value!r:.60} is not one of {typing.get_args(tp)}"]
    if is_typeddict(tp):
        return _typeddict(value, tp, path)
    if tp is str:
        return [] if isinstance(value, str) else [f"{path}: expected a string, got {value!r:.60}"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: expected a boolean, got {value!r:.60}"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected an integer, got {value!r:.60}"]
    if tp is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return [] if ok else [f"{path}: expected a number, got {value!r:.60}"]
    if origin in (dict, collections.abc.Mapping, collections.abc.MutableMapping) or tp is dict:
        if not isinstance(value, dict):
            return [f"{path}: expected an object, got {value!r:.60}"]
        args = typing.get_args(tp)
        item = args[1] if len(args) == 2 else Any
        return [e for k, v in value.items() for e in check_typed(v, item, f"{path}.{k}")]
    name = getattr(origin, "__name__", "")
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence) or name == "SequenceNotStr":
        if not isinstance(value, list):
            return [f"{path}: expected an array, got {value!r:.60}"]
        (item,) = typing.get_args(tp) or (Any,)
        return [e for i, v in enumerate(value) for e in check_typed(v, item, f"{path}[{i}]")]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return check_model(value, tp, path)
    raise TypeError(f"{path}: the checker does not know the type {tp!r}")


def _union(value: Any, members: tuple[Any, ...], path: str) -> Errors:
    tried: list[Errors] = []
    for member in members:
        errors = check_typed(value, member, path)
        if not errors:
            return []
        tried.append(errors)

    def fit(errors: Errors) -> tuple[int, int, int]:
        # The member whose tag (`role`, `type`) matched explains the failure best; then
        # the one that got furthest in; then the one with the fewest complaints.
        tag_missed = sum(1 for e in errors if " is not one of " in e and e.count(".") == path.count(".") + 1)
        depth = max(len(e.split(": ")[0]) for e in errors)
        return (tag_missed, -depth, len(errors))

    return min(tried, key=fit)


def _typeddict(value: Any, td: Any, path: str) -> Errors:
    if not isinstance(value, dict):
        return [f"{path}: expected an object ({_name(td)}), got {value!r:.60}"]
    hints = _hints(td)
    errors: Errors = []
    for key, item in value.items():
        if key not in hints:
            errors.append(f"{path}.{key}: not a field of {_name(td)} (known: {', '.join(sorted(hints))})")
        else:
            errors += check_typed(item, hints[key][1], f"{path}.{key}")
    required = {wire for wire, (key, _) in hints.items() if key in td.__required_keys__}
    errors += [f"{path}.{k}: missing (required by {_name(td)})" for k in sorted(required - set(value))]
    return errors


# --------------------------------------------------------------------------- pydantic models


def check_model(value: Any, model: type[BaseModel], path: str = "body") -> Errors:
    try:
        validated = model.model_validate_json(json.dumps(value))
    except ValidationError as e:
        return [f"{path}.{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()]
    return _extras(value, validated, path)


def _extras(value: Any, obj: Any, path: str) -> Errors:
    if isinstance(obj, enum.Enum):  # the SDK reads some enums in any case; it sends its own
        ok = value == obj.value
        return [] if ok else [f"{path}: {value!r} is read as {obj.value!r}, which is what the SDK sends"]
    if isinstance(obj, BaseModel):
        if not isinstance(value, dict):
            return []
        fields = type(obj).model_fields
        names: dict[str, str] = {}
        for name, info in fields.items():
            names[name] = name
            for alias in (info.alias, info.serialization_alias):
                if isinstance(alias, str):
                    names[alias] = name
            if isinstance(info.validation_alias, str):
                names[info.validation_alias] = name
        errors: Errors = []
        for key, item in value.items():
            if key not in names:
                known = ", ".join(sorted(k for k in names if k == names[k]))
                errors.append(f"{path}.{key}: not a field of {type(obj).__name__} (known: {known})")
            else:
                errors += _extras(item, getattr(obj, names[key]), f"{path}.{key}")
        return errors
    if isinstance(obj, (list, tuple)) and isinstance(value, list):
        return [
            e for i, (v, o) in enumerate(zip(value, obj, strict=False)) for e in _extras(v, o, f"{path}[{i}]")
        ]
    if isinstance(obj, dict) and isinstance(value, dict):
        return [e for k, v in value.items() if k in obj for e in _extras(v, obj[k], f"{path}.{k}")]
    return []
