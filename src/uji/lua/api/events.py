"""uji.on / uji.off / uji.emit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.app import App


def install(app: App) -> dict[str, Any]:
    def on(event: str, handler: Any, priority: float, name: str | None, origin: str | None) -> str:
        return app.events.on(event, handler, priority, name, origin)

    def off(event: str, name: str) -> bool:
        return app.events.off(event, name)

    def emit(event: str, payload: Any) -> None:
        app.events.emit(event, app.lua.convert.to_python(payload))

    return {"on": on, "off": off, "emit": emit}
