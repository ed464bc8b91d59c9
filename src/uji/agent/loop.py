"""One turn: request → stream → tool calls → decide → run → repeat (reference internals §1).

`Agent` keeps the turn's story; each of its collaborators does one job: the session's
messages (`session_log.py`), what a message brings with it (`submitting.py`), the queue of
messages typed meanwhile (`steering.py`), the system prompt (`turn_prompt.py`), the requests
(`model_requests.py`), the tool calls of the step in flight (`in_flight.py`), how full the
window is (`fill_meter.py`) and compacting it (`compaction.py`), what is spent and the
budgets (`spending.py`), and the title (`titles.py`). Every message is saved the moment it
exists, so an interrupt or a crash keeps everything up to it.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from uji.agent import compaction
from uji.agent.approval import Approver
from uji.agent.fill_meter import FillMeter
from uji.agent.in_flight import InFlight
from uji.agent.model_call import describe_failure
from uji.agent.model_requests import ModelRequests, TurnFailed
from uji.agent.session_log import SessionLog
from uji.agent.spending import Spending
from uji.agent.steering import Steering
from uji.agent.submitting import Submitter
from uji.agent.titles import Titler
from uji.agent.tool_calls import ToolCaller
from uji.agent.turn_prompt import turn_prompt
from uji.events.stream import (
    AgentEvent,
    BeforeStop,
    MessageSubmitted,
    Sink,
    StatusChanged,
    TurnFinished,
)
from uji.record import Struct, field
from uji.wires.base import Answer, Failure, Usage

if TYPE_CHECKING:
    from uji.agent.own_loop import OwnLoop
    from uji.agent.services import TurnServices
    from uji.store.rows import AssistantRow, Row, UserRow
    from uji.wires.base import Image

__all__ = ["Agent", "TurnFailed", "TurnOptions", "TurnResult"]


class TurnResult(Struct):
    text: str | None = None
    error: str | None = None
    interrupted: bool = False
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None  # dollars, when the model's prices are known
    budget: str | None = None  # the budget that stopped the turn (max_steps, ...)
    unsent: bool = False  # refused before anything was sent or saved (a resource it names)


class TurnOptions(Struct):
    append_prompt: str | None = None
    max_output: int = 8192
    auto_title: bool = False  # the UI titles sessions with a side request; `uji run` does not
    # The user is at the screen (the TUI): a question waits for the answer however long.
    # Elsewhere (ACP, Lua's UI headless) nobody may be there: denied after approval_timeout().
    questions_wait: bool = False


class Agent:
    """Runs turns of one session."""

    def __init__(
        self,
        services: TurnServices,
        session_id: str,
        emit: Sink,
        approver: Approver,
        options: TurnOptions | None = None,
    ) -> None:
        self.services = services
        self.hooks = services.hooks
        self.session_id = session_id
        self._frontend = emit
        self.options = options or TurnOptions()
        self.running = False
        self.started_at: float | None = None
        self.log = SessionLog(services.store, session_id, self.emit)
        self.spending = Spending(services, session_id, self.emit)
        self.calls = ToolCaller(services, self.emit, approver)
        self.calls.questions_wait = self.options.questions_wait
        self.calls.spent = self.spending.add  # ctx.usage: a child session's spending counts here
        self.meter = FillMeter(services, self.log)
        self.requests = ModelRequests(
            services, self.log, self.spending, self.meter, self.emit, self.options.max_output
        )
        self.in_flight = InFlight(self.calls, self.log.save)
        self.requests.track = self.in_flight.track
        self.compactor = compaction.Compactor(services, self.log, self.meter, self.requests, self.emit)
        self.titler = Titler(
            self.log, self.emit, self.requests.side, self.options.auto_title, self._after_first_call
        )
        self.steering = Steering(self.emit)
        self.submitter = Submitter(services, self.calls, self.log.save)

    def emit(self, event: AgentEvent) -> None:
        """Every event goes out once: to the frontend, and to the Lua handlers of its
        notification (the catalog derives their payload from the same event)."""
        self._frontend(event)
        self.hooks.publish(event)

    @property
    def history(self) -> list[Row]:
        """The session's live messages (see session_log.py)."""
        return self.log.messages

    def truncate(self, since: int) -> int:
        """Drop the messages from seq `since` on (a rewind); read the history afresh."""
        dropped = self.log.truncate(since)
        self.meter.forget()
        return dropped

    def elapsed(self) -> float | None:
        if self.started_at is None:
            return None
        return asyncio.get_running_loop().time() - self.started_at

    def _result(self, **kw: Any) -> TurnResult:
        return TurnResult(usage=self.spending.usage, cost=self.spending.cost, **kw)

    async def _after_first_call(self) -> None:
        if self.requests.to_local_server():
            await self.requests.streamed.wait()

    # The turn -----------------------------------------------------------------

    async def turn(
        self, text: str, images: list[Image] | None = None, shown: str | None = None
    ) -> TurnResult:
        """One prompt to the end of its turn. `shown`: what the transcript shows of the
        prompt instead of `text` (the screen's long pastes as their markers); the model
        gets `text`."""
        user: UserRow = {"type": "user", "text": text}
        if images:
            user["images"] = images
        if shown is not None and shown != text:
            user["shown"] = shown
        self.running = True
        self.compactor.failed = False
        self.started_at = self.spending.start_turn()
        self.emit(StatusChanged("working"))
        try:
            from uji.agent.mentioned import MentionFailed

            try:
                mentioned = await self.submitter.resources(text)
            except MentionFailed as e:
                self.services.notice(f"{e}; the message was not sent")
                return TurnResult(error=str(e), unsent=True)
            own = self.services.models.own_loop()  # a provider that runs its turns itself
            if own is None and self.compactor.due():
                await self.compactor.compact(notice=None)
            self.emit(MessageSubmitted(text))
            seq = self.log.save(user)["seq"]
            if self.services.checkpoints is not None:  # the files as they are before the turn
                self.services.checkpoints.begin(self.session_id, seq)
            await self.submitter.attach(text, mentioned)
            self.requests.streamed.clear()
            self.titler.first_message(text)
            if self.services.tools_ready is not None:
                await self.services.tools_ready()  # MCP servers still connecting: seconds at most
            system = await turn_prompt(
                self.services, text, self.options.append_prompt, self.log.save, self.services.notice
            )
            if own is not None:
                return await self._own_loop(own, system, user)
            return await self._loop(system)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            await self.titler.cancel()
            self.in_flight.interrupted()
            return self._result(error="interrupted", interrupted=True)
        except (TurnFailed, Failure) as e:
            text = describe_failure(e) if isinstance(e, Failure) else str(e)
            self.log.save({"type": "error", "text": text})
            return self._result(error=text)
        finally:
            self.requests.streamed.set()  # a title still waiting for the turn's call goes now
            if self.services.checkpoints is not None:
                await self.services.checkpoints.end()
            self.running = False
            self.started_at = None
            self.spending.end_turn()
            self.emit(TurnFinished())
            self.emit(StatusChanged("idle"))

    async def _loop(self, system: str) -> TurnResult:
        continued = 0
        while True:  # bounded by the turn's budgets: max_steps is always set
            await self._steer()  # first: a queued prompt starts budgets of its own
            reached = await self.spending.over_budget()
            if reached is not None:
                text = f"{reached.text}; the turn stopped"
                self.log.save({"type": "error", "text": text})
                return self._result(error=text, budget=reached.limit)
            if self.compactor.due(system):
                await self.compactor.compact(notice=compaction.MID_TURN_NOTICE)
            answer = await self.requests.step(system)
            self._save_answer(answer)
            if not answer.tool_calls:
                if self.steering.queue:
                    continue  # the next iteration steers the queued message in
                more = await self._before_stop(answer.text, continued)
                if more is None:
                    return self._result(text=answer.text)
                continued += 1
                self.log.save({"type": "context", "text": more})
                continue
            await self.in_flight.run_calls()

    async def _own_loop(self, own: OwnLoop, system: str, user: UserRow) -> TurnResult:
        """The turn through the provider's own loop (agent/own_loop.py)."""
        from uji.agent.own_loop import run_turn, turn_table

        text, error = await run_turn(self, own, turn_table(self, system, user, self.options.max_output))
        if error is not None:
            self.log.save({"type": "error", "text": error})
            return self._result(error=error)
        return self._result(text=text)

    def _save_answer(self, answer: Answer) -> None:
        """The model's answer as an assistant message; its calls become the step in flight."""
        for call in answer.tool_calls:
            if not call.id:
                call.id = "call_" + os.urandom(8).hex()  # what secrets.token_hex does, without its imports
        if answer.text or answer.tool_calls or answer.reasoning:
            message: AssistantRow = {"type": "assistant", "text": answer.text}
            if answer.tool_calls:
                message["tool_calls"] = [c.as_dict() for c in answer.tool_calls]
            if answer.reasoning:
                message["reasoning"] = answer.reasoning
            if answer.replay is not None:
                message["replay"] = answer.replay
            self.in_flight.pending = list(answer.tool_calls)
            self.log.save(message)

    async def _steer(self) -> bool:
        """Send one queued message as a user message; True if there was one."""
        item = self.steering.next()
        if item is None:
            return False
        self.spending.restart_turn()
        message: UserRow = {"type": "user", "text": item["text"]}
        if item.get("images"):
            message["images"] = item["images"]
        if item.get("shown"):
            message["shown"] = item["shown"]
        from uji.agent.mentioned import MentionFailed

        try:
            mentioned = await self.submitter.resources(item["text"])
        except MentionFailed as e:
            self.services.notice(f"{e}; the queued message was not sent")
            return False
        self.emit(MessageSubmitted(item["text"]))
        self.log.save(message)
        await self.submitter.attach(item["text"], mentioned)
        return True

    async def _before_stop(self, text: str, continued: int) -> str | None:
        if not self.hooks.has("before_stop"):
            return None
        result, _ = await self.hooks.hook(BeforeStop(text, continued))
        return result if isinstance(result, str) and result else None
