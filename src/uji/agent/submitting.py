"""What a user's message brings with it (the turn's first message, or one steered in):
the MCP resources it mentions (`@server:uri`), read before the message is saved so a
failure leaves it unsent, then the files it mentions (`@path`) and those resources,
each saved as a row after it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uji.agent.mentioned import Mentioned
    from uji.agent.services import TurnServices
    from uji.agent.tool_calls import ToolCaller
    from uji.store.rows import Row


class Submitter:
    def __init__(self, services: TurnServices, calls: ToolCaller, save: Callable[[Row], Row]) -> None:
        self.services = services
        self.calls = calls
        self.save = save

    async def resources(self, text: str) -> list[Mentioned]:
        """The MCP resources the message mentions, read; raises MentionFailed."""
        if "@" not in text or self.services.resources is None:
            return []
        return await self.services.resources(text)

    async def attach(self, text: str, mentioned: list[Mentioned]) -> None:
        """The files the message mentions, each saved as a `file` row after it, then the
        resources it mentions."""
        if "@" in text:
            from uji.agent import mentions

            await mentions.attach(text, self.services.cwd, self.calls, self.save)
        if mentioned:
            redact = self.services.gate.redactor()
            for resource in mentioned:
                self.save(resource.row(redact))
