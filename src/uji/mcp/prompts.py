"""An MCP server's prompts as slash commands, named as Claude Code names them:
`/mcp__server__prompt`. The words after it are the prompt's arguments in order (quoted
words stay whole; the last argument takes the rest of the line); running it calls
`prompts/get` and sends the prompt's messages as the user's message."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from uji.command_registry import Command, CommandError

if TYPE_CHECKING:
    from uji.command_registry import Commands
    from uji.mcp.config import Connection, PromptInfo


def command_name(server: str, prompt: str) -> str:
    return re.sub(r"[\s/]", "_", f"mcp__{server}__{prompt}")


def usage(name: str, prompt: PromptInfo) -> str:
    shown = [a.name.upper() if a.required else f"[{a.name.upper()}]" for a in prompt.arguments]
    return " ".join([f"/{name}", *shown])


def bind(prompt: PromptInfo, words: list[str]) -> tuple[dict[str, str], list[str]]:
    """The arguments the words give, and the required ones they leave out."""
    given: dict[str, str] = {}
    last = len(prompt.arguments) - 1
    for i, argument in enumerate(prompt.arguments):
        if i >= len(words):
            break
        given[argument.name] = " ".join(words[i:]) if i == last else words[i]
    return given, [a.name for a in prompt.arguments if a.required and a.name not in given]


def split(args: str) -> list[str]:
    import shlex

    try:
        return shlex.split(args)
    except ValueError:  # an unclosed quote: the words as typed
        return args.split()


def register(commands: Commands, server: Connection, submit: Callable[[str], None]) -> None:
    """Bring the commands of the server's prompts in line with its list (a user's own
    command of the same name wins)."""
    origin = f"mcp:{server.name}"
    for command in commands.all():
        if command.origin == origin:
            commands.remove(command.name)
    for prompt in server.prompts:
        name = command_name(server.name, prompt.name)
        if commands.get(name) is not None:
            continue
        desc = f"{prompt.description or prompt.name} (MCP {server.name}: {usage(name, prompt)})"
        commands.add(Command(name, _runner(server, prompt, name, submit), desc, origin, lua=False))


def _runner(
    server: Connection, prompt: PromptInfo, name: str, submit: Callable[[str], None]
) -> Callable[[str], Awaitable[None]]:
    async def run(args: str) -> None:
        from uji.mcp.errors import McpRefused

        given, missing = bind(prompt, split(args))
        if missing:
            raise CommandError(f"usage: {usage(name, prompt)} ({', '.join(missing)} required)")
        try:
            result = await server.prompt(prompt.name, given)
        except McpRefused as e:
            raise CommandError(f"MCP server {server.name}: {e}") from e
        text = result.text
        if result.images:
            text += f"\n[{len(result.images)} image(s) of the prompt left out]"
        submit(text)

    return run
