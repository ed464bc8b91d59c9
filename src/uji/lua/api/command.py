"""uji.command: add, remove, list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.commands import Command

if TYPE_CHECKING:
    from uji.app import App


def install(app: App) -> dict[str, Any]:
    def command_add(name: str, handler: Any, desc: str | None, origin: str | None) -> None:
        app.commands.add(Command(name, handler, desc or "", origin))

    def command_remove(name: str) -> bool:
        return app.commands.remove(name)

    def command_list() -> Any:
        return app.lua.convert.to_lua(app.commands.names())

    return {"command_add": command_add, "command_remove": command_remove, "command_list": command_list}
