"""uji.on / uji.off / uji.emit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, Pending

if TYPE_CHECKING:
    from uji.events import Events
    from uji.lua.host import LuaHost


def install(host: LuaHost, events: Events) -> Api:
    def on(event: str, handler: Any, priority: float, name: str | None, origin: str | None) -> str:
        return events.on(event, handler, priority, name, origin)

    def off(event: str, name: str) -> bool:
        return events.off(event, name)

    def emit(event: str, payload: Any) -> None:
        events.emit(event, host.lua.convert.to_python(payload))

    def emit_now(event: str, payload: Any) -> Pending:
        return Pending(events.notify(event, host.lua.convert.to_python(payload)))

    return {"on": on, "off": off, "emit": emit, "emit_now": emit_now}
