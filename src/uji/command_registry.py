"""Slash commands: `/name args`, from `uji.command.add` or built into the UI."""

from __future__ import annotations

from typing import Any

from uji.record import Struct

# The commands the screen builds in (uji.tui.screen_commands.BUILTINS, which a test keeps the
# same): uji.command.list() names them beside the added ones, as the original does.
SCREEN_COMMANDS = (
    "compact",
    "context",
    "effort",
    "export",
    "help",
    "login",
    "mcp",
    "mode",
    "models",
    "new",
    "quit",
    "reload",
    "sandbox",
    "rewind",
    "rules",
    "sessions",
    "theme",
    "thinking",
    "worktree",
)


class CommandError(Exception):
    """A command that could not run as asked (a Python one's): the message says why."""


class Command(Struct):
    name: str
    handler: Any  # a Lua function (args_text) or an async Python function (args_text)
    desc: str = ""
    origin: str | None = None
    lua: bool = True


class Commands:
    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}

    def add(self, command: Command) -> None:
        self._commands[command.name] = command

    def remove(self, name: str) -> bool:
        return self._commands.pop(name, None) is not None

    def get(self, name: str) -> Command | None:
        return self._commands.get(name)

    def names(self) -> list[str]:
        return sorted(self._commands)

    def all(self) -> list[Command]:
        return [self._commands[n] for n in self.names()]


def parse(text: str) -> tuple[str, str] | None:
    """`/name rest` → (name, rest); None when the text is not a command line."""
    if not text.startswith("/") or text.startswith("//"):
        return None
    head, _, rest = text[1:].partition(" ")
    head = head.strip()
    if not head or "/" in head:
        return None
    return head, rest.strip()
