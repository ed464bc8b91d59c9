"""Lua values ⇄ JSON-like Python values.

Lua has one table type for arrays and objects, so the rules are explicit:
- a table whose keys are exactly 1..n is a list; an empty table is an object unless it
  carries the array marker (`uji.json.array(t)`, or any list that came from Python);
- `uji.json.null` stands for JSON null (plain `nil` cannot live in a table);
- numbers that are whole stay ints, others floats (LuaJIT has only doubles);
- strings were made valid UTF-8 on the Lua side before crossing (see prelude `clean`).
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 200


class ConvertError(ValueError):
    pass


class Converter:
    """Bound to one runtime: knows its array marker and null sentinel."""

    def __init__(self, lua: Any, lua_type: Any, null: Any, mark_array: Any, kind: Any) -> None:
        self._lua = lua
        self.lua_type = lua_type  # the lupa module's own: each lupa flavour has its own types
        self.null = null
        self._mark_array = mark_array  # Lua function: (t) -> t with the array marker
        self._kind = kind  # Lua function: (t) -> "null" | "array" | "table"
        self._table_from = lua.table_from

    # Lua → Python -----------------------------------------------------------

    def to_python(
        self, value: Any, *, strict: bool = False, _depth: int = 0, _seen: set[str] | None = None
    ) -> Any:
        """Convert a Lua value. `strict` raises on functions and other non-data values
        (uji.json.encode); otherwise they become None."""
        kind = self.lua_type(value)
        if kind is None:  # already a Python value (str, int, float, bool, None, or a Python object)
            if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
                return int(value)
            return value
        if kind == "table":
            table_kind = self._kind(value)
            if table_kind == "null":
                return None
            if _depth > MAX_DEPTH:
                raise ConvertError("table nested too deeply (or contains a cycle)")
            seen = _seen if _seen is not None else set()
            key = self._lua_id(value)
            if key in seen:
                raise ConvertError("cannot convert a table that contains itself")
            seen.add(key)
            try:
                return self._table(value, table_kind == "array", strict, _depth, seen)
            finally:
                seen.discard(key)
        if strict:
            raise ConvertError(f"cannot encode a {kind}")
        return None

    def _lua_id(self, table: Any) -> str:
        # Distinct lupa wrappers can point at one Lua table; its address identifies it.
        return repr(table)

    def _table(self, table: Any, is_array: bool, strict: bool, depth: int, seen: set[str]) -> Any:
        items = list(table.items())
        if not items:
            return [] if is_array else {}
        n = len(items)
        if all(type(k) is int for k, _ in items):
            keys = sorted(k for k, _ in items)
            if keys[0] == 1 and keys[-1] == n:
                by_key = dict(items)
                return [
                    self.to_python(by_key[i], strict=strict, _depth=depth + 1, _seen=seen)
                    for i in range(1, n + 1)
                ]
        out: dict[str, Any] = {}
        for k, v in items:
            if isinstance(k, bool) or not isinstance(k, (str, int, float)):
                if strict:
                    raise ConvertError(
                        f"cannot encode a table key of type {self.lua_type(k) or type(k).__name__}"
                    )
                continue
            if isinstance(k, float) and k.is_integer():
                k = int(k)
            out[str(k)] = self.to_python(v, strict=strict, _depth=depth + 1, _seen=seen)
        return out

    # Python → Lua -----------------------------------------------------------

    def to_lua(self, value: Any, *, json_null: bool = True) -> Any:
        """Convert a JSON-like Python value. `None` becomes `uji.json.null` inside
        containers when `json_null` (decoded JSON), else it is left out (nil)."""
        if isinstance(value, dict):
            table = self._table_from()
            for k, v in value.items():
                if v is None and not json_null:
                    continue
                table[k] = self.to_lua(v, json_null=json_null)
            return table
        if isinstance(value, (list, tuple)):
            table = self._table_from()
            for i, v in enumerate(value, 1):
                table[i] = self.null if v is None else self.to_lua(v, json_null=json_null)
            return self._mark_array(table)
        if value is None:
            return self.null if json_null else None
        return value
