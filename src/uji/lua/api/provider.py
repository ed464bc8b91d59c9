"""uji.wire, uji.provider, uji.model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, ApiError, Pending
from uji.providers.catalog import EFFORTS, CatalogError

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.providers.selection import ModelSelection
    from uji.wires.registry import Wires


def install(host: LuaHost, models: ModelSelection, wires: Wires) -> Api:
    return {**_wire_api(host, wires), **_provider_api(host, models), **_model_api(host, models)}


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


def _provider_api(host: LuaHost, models: ModelSelection) -> Api:
    """uji.provider: add, get, load, remove, list."""

    def provider_add(spec: Any, models_fn: Any = None) -> None:
        """`models_fn`: a lazy `models = function() ... end`, passed apart from the
        table (a function does not convert); it is called when the models are needed."""
        data = host.lua.convert.to_python(spec)
        try:
            provider = models.catalog.add(data, loader=models_fn)
        except CatalogError as e:
            raise ApiError(str(e)) from None
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
