"""uji.command: add, remove, list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.commands import Command, Commands

if TYPE_CHECKING:
    from uji.lua.host import LuaHost


def install(host: LuaHost, commands: Commands) -> dict[str, Any]:
    def command_add(name: str, handler: Any, desc: str | None, origin: str | None) -> None:
        commands.add(Command(name, handler, desc or "", origin))

    def command_remove(name: str) -> bool:
        return commands.remove(name)

    def command_list() -> Any:
        # The config's commands; uji's own (/sync, /diagnostics) are built-ins, not listed
        return host.lua.convert.to_lua([c.name for c in commands.all() if c.lua])

    return {"command_add": command_add, "command_remove": command_remove, "command_list": command_list}
