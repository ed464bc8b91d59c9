"""The system prompt a turn sends, assembled as `uji.context` configures it: the base
(`prompt.py`), the instruction files, the context providers' text, what `before_turn`
hooks make of it, and `--append-prompt`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from uji.agent.prompt import system_prompt

if TYPE_CHECKING:
    from uji.agent.services import TurnServices
    from uji.store.rows import Row


async def turn_prompt(
    services: TurnServices,
    text: str,
    append: str | None,
    save: Callable[[Row], object],
    notice: Callable[[str], None],
) -> str:
    """The system prompt of a turn that starts with `text`: the base, the instruction
    files, the context providers' text (a provider's `{text, at="turn"}` is saved as
    hidden turn context instead), what `before_turn` hooks make of it, then `append`."""
    from uji.agent.instructions import section

    system = system_prompt(services.cwd)
    context = services.context
    # AGENTS.md and the like, as they read now: text for the model, never run.
    instructions = section(context.instructions.load(services.cwd, notice))
    if instructions:
        system = f"{system}\n\n{instructions}"
    for provider in context.providers():
        try:
            value = await context.call(provider)
        except Exception as e:
            notice(f"context {provider.name!r} failed: {e}")
            continue
        if isinstance(value, str):
            if value:
                system = f"{system}\n\n{value}"
        elif isinstance(value, dict) and value.get("at") == "turn" and isinstance(value.get("text"), str):
            save({"type": "context", "text": value["text"]})
        elif value is not None:
            notice(
                f'context {provider.name!r} returned something that is neither a string nor {{text=, at="turn"}}'
            )
    if services.hooks.has("before_turn"):
        from uji.events.stream import BeforeTurn

        system, _ = await services.hooks.hook(BeforeTurn(text, system))
    if append:
        system = f"{system}\n\n{append}"
    return system
