"""uji.command: add, remove, list."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.command_registry import SCREEN_COMMANDS, Command, Commands

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.lua.runtime import Api


def install(host: LuaHost, commands: Commands) -> Api:
    def command_add(name: str, handler: Any, desc: str | None, origin: str | None) -> None:
        commands.add(Command(name, handler, desc or "", origin))

    def command_remove(name: str) -> bool:
        return commands.remove(name)

    def command_list() -> Any:
        # Every command, built-in and added, sorted (the original's list).
        return host.lua.convert.to_lua(sorted({*SCREEN_COMMANDS, *commands.names()}))

    return {"command_add": command_add, "command_remove": command_remove, "command_list": command_list}
