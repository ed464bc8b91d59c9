"""A turn run by the provider's own loop (reference docs §2 "Custom loop"): a provider
added with `loop = Class` talks to its model itself; uji hands the loop the turn and an
agent to report through, and keeps the session, the gate and the events as for any turn.

`OwnLoop` is what the agent needs of such a loop (lua/provider_loop.py makes one of a
Lua class). `LoopAgent` is what the loop may do, each method the agent's own step: a
streamed delta, an assistant step with its calls, a call decided by the gate (and asked
about), its result through after_tool, usage, the answer or the failure, the queue.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from uji.events.stream import (
    AfterTool,
    CallDecided,
    CallSubject,
    Delta,
    MessageSubmitted,
    ToolStarted,
)
from uji.wires.base import ToolCall

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from uji.agent.in_flight import InFlight
    from uji.agent.services import TurnServices
    from uji.agent.session_log import SessionLog
    from uji.agent.spending import Spending
    from uji.agent.steering import Steering
    from uji.agent.tool_calls import ToolCaller
    from uji.events import Events
    from uji.events.stream import AgentEvent
    from uji.store.rows import AssistantRow, ToolRow, UserRow
    from uji.tools.base import Tool
    from uji.wires.base import Image, Message, ToolSpec, Usage

    class Prompt(TypedDict):
        text: str
        images: NotRequired[list[Image]]

    class LoopTurn(TypedDict):
        """What the loop class is made with: `Loop(agent, turn)`."""

        prompt: Prompt
        model: str
        effort: str | None
        system: str
        messages: list[Message]
        tools: list[ToolSpec]
        reasoning: bool
        max_output: int
        cache: str

    class Approval(TypedDict):
        allow: NotRequired[bool]
        arguments: NotRequired[dict[str, Any]]
        deny: NotRequired[str]


NO_ANSWER = "loop: the turn ended without an answer"


class Agent(Protocol):
    """The parts of the turn's agent (agent/loop.py `Agent`) a loop reports to."""

    services: TurnServices
    hooks: Events
    log: SessionLog
    in_flight: InFlight
    calls: ToolCaller
    spending: Spending
    steering: Steering

    def emit(self, event: AgentEvent) -> None: ...


class OwnLoop(Protocol):
    """A provider's loop: `run` ends when the loop has (after `done` or `failed`, or not);
    `interrupt` is told after the run was cancelled."""

    async def run(self, agent: LoopAgent, turn: LoopTurn) -> None: ...

    def interrupt(self) -> None: ...


class LoopAgent:
    """What a provider's loop reports through, for one turn of `agent`."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.answer: str | None = None  # the final text, once `done`
        self.error: str | None = None  # once `failed`
        self.text: list[str] = []  # streamed since the last step, kept on an interrupt

    @property
    def finished(self) -> bool:
        return self.answer is not None or self.error is not None

    def delta(self, kind: str, text: str) -> None:
        if self.finished or not text:
            return
        if kind == "text":
            self.text.append(text)
        self.agent.emit(Delta("reasoning" if kind == "reasoning" else "text", text))

    def assistant_step(self, row: AssistantRow) -> None:
        """A step with calls: saved; its calls are the step in flight until answered."""
        if self.finished:
            return
        self.text = []
        self.agent.in_flight.pending = [
            ToolCall(c["id"], c["name"], c["arguments"], c.get("signature"))
            for c in row.get("tool_calls", [])
        ]
        self.agent.log.save(row)

    def tool_running(self, call_id: str, name: str) -> None:
        calls = self.agent.calls
        calls.running = call_id
        self.agent.emit(ToolStarted(call_id, name, calls.subjects.get(call_id, "")))

    async def approve(self, name: str, args: dict[str, Any], subject: str | None) -> Approval:
        """The gate's decision on a call the loop runs (asking when it says ask), judged
        as the tool uji knows by that name or as `uji.tool.display` describes it."""
        caller = self.agent.calls
        tool = self._tool(name)
        shown = subject if subject is not None else tool.subject(args)
        # The step's first call of that tool not decided yet (two calls of one tool: in order).
        pending = self.agent.in_flight.pending
        call_id = next((c.id for c in pending if c.name == name and c.id not in caller.subjects), "")
        caller.subjects[call_id] = shown
        self.agent.emit(CallSubject(call_id, name, shown, tool.verb))
        decision = await caller.decide(tool, shown, args)
        self.agent.emit(CallDecided(call_id, name, shown, tool.verb or name, decision.outcome()))
        if not decision.allow:
            return {"deny": decision.reason or "denied"}
        return {"allow": True, "arguments": args}

    def _tool(self, name: str) -> Tool:
        gate = self.agent.calls.gate
        return gate.registry.get(name) or gate.displayed(name)

    async def after_tool(self, name: str, content: str) -> str:
        hooks = self.agent.hooks
        if not hooks.has("after_tool"):
            return content
        result, _ = await hooks.hook(AfterTool(name, content))
        return result if isinstance(result, str) else content

    def tool_result(self, call_id: str, name: str, content: str, images: list[Image] | None) -> None:
        row: ToolRow = {"type": "tool", "tool_call_id": call_id, "name": name, "content": content}
        subject = self.agent.calls.subjects.pop(call_id, None)
        if subject is not None:
            row["subject"] = subject
        if images:
            row["images"] = images
        pending = self.agent.in_flight.pending
        self.agent.in_flight.pending = [c for c in pending if c.id != call_id]
        if self.agent.calls.running == call_id:
            self.agent.calls.running = None
        self.agent.log.save(row)

    def usage(self, spent: Usage) -> None:
        self.agent.spending.count(spent)

    def done(self, row: AssistantRow) -> None:
        if self.finished:
            return
        row.pop("tool_calls", None)
        self.answer = row["text"]
        self.text = []
        if row["text"] or row.get("reasoning"):
            self.agent.log.save(row)

    def failed(self, text: str) -> None:
        if not self.finished:
            self.error = text or "loop: failed"

    def queued(self) -> bool:
        return bool(self.agent.steering.queue)

    def steer(self) -> UserRow | None:
        """The next queued message, saved and sent as a user message; None if none."""
        item = self.agent.steering.next()
        if item is None:
            return None
        message: UserRow = {"type": "user", "text": item["text"]}
        if item.get("images"):
            message["images"] = item["images"]
        self.agent.emit(MessageSubmitted(item["text"]))
        self.agent.log.save(message)
        return message


def turn_table(agent: Agent, system: str, user: UserRow, max_output: int) -> LoopTurn:
    """The turn as the loop class is made with it (reference docs §2)."""
    from uji.agent.messages import for_model
    from uji.providers.efforts import DEFAULT_EFFORTS, for_request

    services = agent.services
    models = services.models
    model = models.model()
    provider = models.provider()
    prompt: Prompt = {"text": user["text"]}
    if user.get("images"):
        prompt["images"] = user["images"]
    efforts = provider.default_efforts(models.model_id or "") if provider is not None else DEFAULT_EFFORTS
    return {
        "prompt": prompt,
        "model": models.model_id or "",
        "effort": for_request(models.effort, model, efforts),
        "system": system,
        "messages": for_model(agent.log.messages),
        "tools": [t.schema() for t in services.gate.offered()],
        "reasoning": bool(model and model.reasoning),
        "max_output": model.output if model and model.output else max_output,
        "cache": services.context.cache,
    }


async def run_turn(agent: Agent, loop: OwnLoop, turn: LoopTurn) -> tuple[str | None, str | None]:
    """Run the provider's loop for the turn: (the answer, or the error). An interrupt
    cancels the run, then tells the loop (`interrupt`), and goes on as for any turn."""
    port = LoopAgent(agent)
    try:
        await loop.run(port, turn)
    except asyncio.CancelledError:
        try:
            loop.interrupt()
        except Exception as e:  # its interrupt must not hide the user's
            agent.services.notice(f"loop: interrupt failed: {e}")
        raise
    except Exception as e:
        if not port.finished:
            port.error = f"loop: {e}"
    if port.error is not None:
        return None, port.error
    if port.answer is None:
        return None, NO_ANSWER
    return port.answer, None
