"""uji.notify, uji.schedule, uji.defer, uji.json."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from uji.lua.convert import ConvertError
from uji.lua.runtime import Api, ApiError

if TYPE_CHECKING:
    from uji.lua.host import LuaHost


def install(host: LuaHost) -> Api:
    def notify(text: str) -> None:
        host.notice(text)

    def schedule(fn: Any) -> None:
        host.schedule(fn)

    def defer(seconds: float, fn: Any) -> Any:
        loop = asyncio.get_running_loop()
        handle = loop.call_later(seconds, lambda: host.spawn(fn))
        return handle.cancel

    def json_encode(value: Any) -> str:
        rt = host.lua
        try:
            data = rt.convert.to_python(value, strict=True)
        except ConvertError as e:
            raise ApiError(f"uji.json.encode: {e}") from None
        try:
            return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except ValueError as e:
            raise ApiError(f"uji.json.encode: {e}") from None

    def json_decode(text: str, nulls: bool) -> Any:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ApiError(f"uji.json.decode: invalid JSON: {e}") from None
        if not nulls:
            data = _drop_nulls(data)
        return host.lua.convert.to_lua(data, json_null=True)

    return {
        "notify": notify,
        "schedule": schedule,
        "defer": defer,
        "json_encode": json_encode,
        "json_decode": json_decode,
    }


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value
