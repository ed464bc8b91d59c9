"""The step in flight: the tool calls the model asked for and not yet answered, run one
after another in the model's order, and the answer being streamed. An interrupt answers
every call of it, so the history the model sees next is whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from uji.agent.model_call import Collector
    from uji.agent.tool_calls import ToolCaller
    from uji.store.rows import Row, ToolRow
    from uji.wires.base import ToolCall

INTERRUPTED_RUNNING = "error: interrupted by the user while this tool ran"
INTERRUPTED_BEFORE = "error: interrupted by the user before this tool ran"

Save: TypeAlias = "Callable[[Row], Row]"  # SessionLog.save


class InFlight:
    def __init__(self, calls: ToolCaller, save: Save) -> None:
        self.calls = calls
        self.save = save
        self.pending: list[ToolCall] = []
        self.partial: Collector | None = None

    def track(self, reply: Collector | None) -> None:
        self.partial = reply

    async def run_calls(self) -> None:
        """Each pending call through the gate and its tool, its result saved as it ends."""
        calls = self.calls
        while self.pending:
            call = self.pending[0]
            result = await calls.run(call)
            self.pending.pop(0)
            calls.running = None
            calls.subjects.pop(call.id, None)
            self.save(result)

    def interrupted(self) -> None:
        """Answer every call of the step in flight, then record the interrupt."""
        calls = self.calls
        partial = self.partial
        if partial is not None and partial.text_parts and not self.pending:
            # An answer cut off: kept, and marked so the model knows it was stopped (messages.py).
            self.save({"type": "assistant", "text": "".join(partial.text_parts), "interrupted": True})
        for call in self.pending:
            content = INTERRUPTED_RUNNING if call.id == calls.running else INTERRUPTED_BEFORE
            output = calls.partial.pop(call.id, None)
            if output and call.id == calls.running:
                content = f"{content}; its output until then:\n{output}"
            message: ToolRow = {
                "type": "tool",
                "tool_call_id": call.id,
                "name": call.name,
                "content": content,
            }
            subject = calls.subjects.get(call.id)
            if subject is not None:
                message["subject"] = subject
            self.save(message)
        self.pending = []
        calls.subjects.clear()
        calls.partial.clear()
        calls.running = None
        self.save({"type": "error", "text": "interrupted"})
