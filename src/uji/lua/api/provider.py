"""uji.wire, uji.provider, uji.model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, ApiError, LuaError, Pending
from uji.providers.catalog import EFFORTS, CatalogError
from uji.wires.base import Failure

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.providers.selection import ModelSelection
    from uji.wires.registry import Wires


def install(host: LuaHost, models: ModelSelection, wires: Wires) -> Api:
    return {
        **_wire_api(host, wires),
        **_api_classes(host, wires),
        **_provider_api(host, models, wires),
        **_model_api(host, models),
    }


def _wire_api(host: LuaHost, wires: Wires) -> Api:
    """uji.wire: add, remove, list."""

    def wire_add(name: str, stream: Any) -> None:
        from uji.lua.wire import LuaWire

        wires.add(name, LuaWire(host, name, stream))

    def wire_remove(name: str) -> bool:
        return wires.remove(name)

    def wire_list() -> Any:
        return host.lua.convert.to_lua(wires.names())

    return {
        "wire_add": wire_add,
        "wire_remove": wire_remove,
        "wire_list": wire_list,
    }


def _api_classes(host: LuaHost, wires: Wires) -> Api:
    """The built-in parts the uji.api classes' own methods make (lua/api_wire.py)."""

    def api_part(part: str, info: Any, obj: Any, request: Any) -> Any:
        from uji.lua.api_wire import PARTS, default_part

        convert = host.lua.convert.to_python
        known = next((p for p in PARTS if p == part), None)
        if known is None:
            raise ApiError(f"uji.api: no part {part!r}")
        return default_part(host, wires, known, convert(info) if info else None, obj, convert(request))

    def api_item(role: str, info: Any, obj: Any, item: Any) -> Any:
        from uji.lua.api_wire import ROLES, default_item

        known = next((r for r in ROLES if r == role), None)
        if known is None:
            raise ApiError(f"uji.api.openai: no message role {role!r}")
        convert = host.lua.convert
        info_data = convert.to_python(info) if info else None
        return convert.to_lua(default_item(known, info_data, convert.to_python(item)))

    def api_stream(info: Any, obj: Any, request: Any, reply: Any) -> Pending:
        from uji.lua.api_wire import stream_once

        convert = host.lua.convert.to_python
        return Pending(
            stream_once(host, wires, convert(info) if info else None, obj, convert(request), reply)
        )

    return {"api_part": api_part, "api_item": api_item, "api_stream": api_stream}


def _api_wire(host: LuaHost, wires: Wires, data: dict[str, Any], api: Any, info: Any, stream: Any) -> Any:
    """The provider's fields an api object sets (its wire's name and its options as
    `compat`), and the wire it needs: None when it overrides nothing (the built-in
    wire runs as it is), else a wire that calls its methods."""
    if info is None:  # an object of its own: its `stream` is the wire
        from uji.lua.wire import LuaWire

        data["api"] = "lua"
        return LuaWire(host, str(data.get("id")), stream)
    data["api"] = info["wire"]
    options = info.get("options") or {}
    if options:
        given = data.get("compat")
        data["compat"] = {**options, **(given if isinstance(given, dict) else {})}
    if stream is not None:  # it overrides `stream` itself
        from uji.lua.wire import LuaWire

        return LuaWire(host, str(data.get("id")), stream)
    overrides = frozenset(info.get("overrides") or [])
    if not overrides:
        return None
    from uji.lua.api_wire import Hooks, hooked
    from uji.wires.common import SSEWire

    base = wires.get(info["wire"])
    if not isinstance(base, SSEWire):
        return None  # uji.wire.add replaced it: that wire runs, as for a name
    return hooked(base, Hooks(host, api, overrides))


def _api_efforts(host: LuaHost, api: Any) -> Callable[[str], list[str] | None]:
    """The object's `efforts(model)`: the levels it gives, known ones only; a failure is
    a notice, and the default levels stand."""

    def efforts(model_id: str) -> list[str] | None:
        rt = host.lua
        try:
            values = rt.call_sync(api.efforts, api, model_id)
        except LuaError as e:
            host.notice(f"api efforts: {e}")
            return None
        found = rt.convert.to_python(values[0]) if values else None
        return [e for e in found if e in EFFORTS] if isinstance(found, list) else None

    return efforts


def _api_ready(host: LuaHost, api: Any) -> Callable[[str], Awaitable[None]]:
    """The object's `ready(model)`, awaited before a request (it may wait); a failure
    fails the request with the method's error."""

    async def ready(model_id: str) -> None:
        try:
            await host.lua.call(api.ready, api, model_id)
        except LuaError as e:
            raise Failure("provider", f"api ready: {e}") from None

    return ready


def _provider_api(host: LuaHost, models: ModelSelection, wires: Wires) -> Api:
    """uji.provider: add, get, load, remove, list."""

    def provider_add(
        spec: Any,
        models_fn: Any = None,
        api: Any = None,
        info: Any = None,
        stream: Any = None,
        loop: Any = None,
        make_agent: Any = None,
    ) -> None:
        """What does not convert comes apart from the table: `models_fn`, a lazy `models =
        function() ... end`, called when the models are needed; `api`, an api object
        (`info` what apis.lua tells of it, `stream` its own `stream` method bound to it);
        `loop`, a loop class (the provider runs its turns), and `make_agent`, which makes
        the agent table its objects are made with."""
        data = host.lua.convert.to_python(spec)
        wire = None
        if api is not None:
            wire = _api_wire(
                host, wires, data, api, host.lua.convert.to_python(info) if info else None, stream
            )
        own = None
        if loop is not None:
            from uji.lua.provider_loop import LuaLoop

            own = LuaLoop(host, loop, make_agent)
        try:
            provider = models.catalog.add(data, loader=models_fn, loop=own)
        except CatalogError as e:
            raise ApiError(str(e)) from None
        if api is not None or "api" in data or "wire" in data:
            provider.api_wire = wire
            described = host.lua.convert.to_python(info) if info else {}
            provider.api_efforts = _api_efforts(host, api) if described.get("efforts") else None
            provider.api_ready = _api_ready(host, api) if described.get("ready") else None
        if models_fn is not None and provider.id == models.provider_id:
            models.use_model(provider.id, models.model_id, save=False)  # current: load it now

    def provider_row(pid: str) -> Any:
        provider = models.catalog.get(pid)
        if provider is None and pid == "custom":
            provider = models.restore_custom()
        return None if provider is None else host.lua.convert.to_lua(provider.as_dict(), json_null=False)

    def provider_load(pid: str) -> Pending:
        provider = models.catalog.get(pid) or (models.restore_custom() if pid == "custom" else None)
        if provider is None:
            raise ApiError(f"uji.provider.load: unknown provider {pid!r}")

        async def load() -> Any:
            await models.load_provider(provider)
            return host.lua.convert.to_lua(provider.as_dict(), json_null=False)

        return Pending(load())

    def provider_remove(pid: str) -> bool:
        return models.catalog.remove(pid)

    def provider_list() -> Any:
        return host.lua.convert.to_lua([p.as_dict() for p in models.catalog.list()], json_null=False)

    return {
        "provider_add": provider_add,
        "provider_remove": provider_remove,
        "provider_list": provider_list,
        "provider_get": provider_row,
        "provider_load": provider_load,
    }


def _model_api(host: LuaHost, models: ModelSelection) -> Api:
    """uji.model: use, current, efforts."""

    def model_use(spec: Any) -> None:
        data = host.lua.convert.to_python(spec)
        unknown = set(data) - {"provider", "model", "effort", "base_url"}
        if unknown:
            raise ApiError(f"uji.model.use: unknown field(s) {', '.join(sorted(unknown))}")
        effort = data.get("effort")
        if effort is not None and effort not in EFFORTS:
            raise ApiError(f"uji.model.use: effort must be one of {', '.join(EFFORTS)}, got {effort!r}")
        base_url = data.get("base_url")
        if base_url is not None and not isinstance(base_url, str):
            raise ApiError("uji.model.use: base_url must be a string")
        try:
            models.use_model(data.get("provider"), data.get("model"), effort, base_url=base_url)
        except ValueError as e:
            raise ApiError(f"uji.model.use: {e}") from None

    def model_current() -> Any:
        return host.lua.convert.to_lua(models.current_model(), json_null=False)

    def model_efforts() -> Any:
        return host.lua.convert.to_lua(models.model_efforts())

    return {
        "model_use": model_use,
        "model_current": model_current,
        "model_efforts": model_efforts,
    }
