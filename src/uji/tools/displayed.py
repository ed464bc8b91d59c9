"""Tools uji judges and shows but does not run: a provider's own loop runs them
(uji.tool.display describes one, agent/own_loop.py asks the gate about its calls)."""

from __future__ import annotations

from typing import Any

from uji.tools.base import Tool, ToolContext, ToolResult

NOT_OURS = "error: {name} runs in the provider's own loop, not in uji"


class Displayed(Tool):
    """A tool uji judges and shows but does not run: a provider's loop runs it
    (uji.tool.display describes one; this is one it does not)."""

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(NOT_OURS.format(name=self.name))
