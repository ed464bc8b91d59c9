"""One turn: request → stream → tool calls → decide → run → repeat (reference internals §1).

Tool calls run one after another in the model's order. Every message is saved the
moment it exists, so an interrupt or a crash keeps everything up to it.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any

from uji.agent import compaction, titles
from uji.agent.approval import (
    Approver,
)
from uji.agent.context_fill import Budget, budget, estimate, tokens
from uji.agent.contexts import Part
from uji.agent.instructions import section
from uji.agent.limits import Reached, Spend
from uji.agent.messages import for_model, live
from uji.agent.model_call import Collector, call_model, describe_failure
from uji.agent.prompt import system_prompt
from uji.agent.tool_calls import ToolCaller
from uji.agent.window import Calibration, Window, request_tokens, window
from uji.events.stream import (
    AgentEvent,
    BeforeStop,
    BeforeTurn,
    BudgetReached,
    MessageSaved,
    MessageSubmitted,
    QueueChanged,
    SessionCompacted,
    SessionTitled,
    Sink,
    StatusChanged,
    TurnFinished,
    discard,
)
from uji.record import Struct, field
from uji.wires.base import STALL_SECONDS, Answer, Failure, ToolCall, Usage, WireRequest

if TYPE_CHECKING:
    from collections.abc import Callable

    from uji.agent.mentioned import Mentioned
    from uji.agent.services import TurnServices

# What a provider answers when a model cannot take images (reference internals §4).
TEXT_ONLY_STATUSES = frozenset({400, 413, 415, 422})
INTERRUPTED_RUNNING = "error: interrupted by the user while this tool ran"
INTERRUPTED_BEFORE = "error: interrupted by the user before this tool ran"


class TurnFailed(Exception):
    pass


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
        self.models = services.models
        self.hooks = services.hooks
        self.store = services.store
        self.session_id = session_id
        self._frontend = emit
        self.options = options or TurnOptions()
        self.usage = Usage()
        self.cost: float | None = None  # dollars, once a request of a priced model counted
        self.last_usage = Usage()
        self.requests = 0
        self._totals: dict[str, float] | None = None  # the session's, as stored
        self._spend: Spend | None = None  # the running turn against its budgets
        self._unpriced_notice = False
        # What an interrupt must answer: the calls of the step in flight.
        self._pending_calls: list[ToolCall] = []
        self.calls = ToolCaller(services, self._emit, approver)
        self.calls.questions_wait = self.options.questions_wait
        self.calls.spent = self.add_usage  # ctx.usage: a child session's spending counts here
        self._partial: Collector | None = None
        # Messages typed during a turn: one is steered in per model call.
        self.queue: list[dict[str, Any]] = []
        self.running = False
        self.started_at: float | None = None
        # Context accounting: the provider's reported input for the request that ended
        # at message seq `_anchor_seq`; messages after it are estimated.
        self._anchor_tokens: int | None = None
        self._anchor_seq = 0
        self._anchor_pending = 0
        self._last_seq = 0
        self._title_task: asyncio.Task[None] | None = None
        self._history: list[dict[str, Any]] | None = None
        self._since = 1  # the seq `_history` starts at
        self._compaction_failed = False  # within this turn: do not try again
        # For /context: the provider's count of the last request beside our estimate of
        # it (agent/window.py), and the last system prompt sent.
        self.calibration = Calibration()
        self._last_system: str | None = None

    def _emit(self, event: AgentEvent) -> None:
        """Every event goes out once: to the frontend, and to the Lua handlers of its
        notification (the catalog derives their payload from the same event)."""
        self._frontend(event)
        self.hooks.publish(event)

    # Saving -------------------------------------------------------------------

    @property
    def history(self) -> list[dict[str, Any]]:
        """The session's live messages, read once and then kept in step with every save:
        from its latest compaction's checkpoint on (what the model is sent comes only
        from there; older messages stay in the store, read on demand)."""
        if self._history is None:
            store = self.store
            self._since = store.checkpoint(self.session_id)
            self._history = store.messages(self.session_id, since=self._since)
            if self._history:
                self._last_seq = self._history[-1]["seq"]
        return self._history

    def save(self, message: dict[str, Any]) -> dict[str, Any]:
        history = self.history
        seq = self.store.append(self.session_id, message)
        self._last_seq = seq
        saved = dict(message, seq=seq)
        history.append(saved)
        self._emit(MessageSaved(saved))
        return saved

    def truncate(self, since: int) -> int:
        """Drop the messages from seq `since` on (a rewind); read the history afresh."""
        dropped = self.store.truncate(self.session_id, since)
        self._history = None
        self._anchor_tokens = None
        self._last_seq = 0
        return dropped

    def notice(self, text: str) -> None:
        self.services.notice(text)

    def enqueue(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        """Queue a message typed during a turn; it is steered in at the next model call."""
        item: dict[str, Any] = {"text": text}
        if images:
            item["images"] = images
        self.queue.append(item)
        self._queue_changed()

    def _queue_changed(self) -> None:
        self._emit(QueueChanged(len(self.queue)))

    async def _steer(self) -> bool:
        """Send one queued message as a user message; True if there was one."""
        if not self.queue:
            return False
        item = self.queue.pop(0)
        self._queue_changed()
        if self._spend is not None:  # budgets bound what one prompt leads to: this one starts afresh
            self._spend = Spend(self.services.limits, asyncio.get_running_loop().time())
        message: dict[str, Any] = {"type": "user", "text": item["text"]}
        if item.get("images"):
            message["images"] = item["images"]
        from uji.agent.mentioned import MentionFailed

        try:
            mentioned = await self._resources(item["text"])
        except MentionFailed as e:
            self.notice(f"{e}; the queued message was not sent")
            return False
        self._emit(MessageSubmitted(item["text"]))
        self.save(message)
        await self._attach(item["text"], mentioned)
        return True

    async def _resources(self, text: str) -> list[Mentioned]:
        """The MCP resources the message mentions (`@server:uri`), read before it is sent."""
        if "@" not in text or self.services.resources is None:
            return []
        return await self.services.resources(text)

    async def _attach(self, text: str, mentioned: list[Mentioned]) -> None:
        """The files the message mentions (`@path`), each saved as a `file` row after it,
        then the resources it mentions."""
        if "@" in text:
            from uji.agent import mentions

            await mentions.attach(text, self.services.cwd, self.calls, self.save)
        if mentioned:
            redact = self.services.gate.redactor()
            for resource in mentioned:
                self.save(resource.row(redact))

    # The turn -----------------------------------------------------------------

    async def turn(self, text: str, images: list[dict[str, Any]] | None = None) -> TurnResult:
        user: dict[str, Any] = {"type": "user", "text": text}
        if images:
            user["images"] = images
        self.running = True
        self._compaction_failed = False
        self.started_at = asyncio.get_running_loop().time()
        self._spend = Spend(self.services.limits, self.started_at)
        self._unpriced_notice = False
        self._emit(StatusChanged("working"))
        try:
            from uji.agent.mentioned import MentionFailed

            try:
                mentioned = await self._resources(text)
            except MentionFailed as e:
                self.notice(f"{e}; the message was not sent")
                return TurnResult(error=str(e), unsent=True)
            if self._over_budget():
                await self.compact(notice=None)
            self._emit(MessageSubmitted(text))
            seq = self.save(user)["seq"]
            if self.services.checkpoints is not None:  # the files as they are before the turn
                self.services.checkpoints.begin(self.session_id, seq)
            await self._attach(text, mentioned)
            self._maybe_title(text)
            if self.services.tools_ready is not None:
                await self.services.tools_ready()  # MCP servers still connecting: seconds at most
            system = await self._system_prompt(text)
            return await self._loop(system)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            # Esc stops everything the turn started: a title still retrying included.
            if self._title_task is not None and not self._title_task.done():
                self._title_task.cancel()
                await asyncio.wait({self._title_task}, timeout=5)  # let it finish cancelling
            self._after_interrupt()
            return TurnResult(error="interrupted", interrupted=True, usage=self.usage, cost=self.cost)
        except (TurnFailed, Failure) as e:
            text = describe_failure(e) if isinstance(e, Failure) else str(e)
            self.save({"type": "error", "text": text})
            return TurnResult(error=text, usage=self.usage, cost=self.cost)
        finally:
            if self.services.checkpoints is not None:
                await self.services.checkpoints.end()
            self.running = False
            self.started_at = None
            self._spend = None
            self._emit(TurnFinished())
            self._emit(StatusChanged("idle"))

    async def _system_prompt(self, text: str) -> str:
        system = system_prompt(self.services.cwd)
        context = self.services.context
        # AGENTS.md and the like, as they read now: text for the model, never run.
        instructions = section(context.instructions.load(self.services.cwd, self.notice))
        if instructions:
            system = f"{system}\n\n{instructions}"
        for provider in context.providers():
            try:
                value = await context.call(provider)
            except Exception as e:
                self.notice(f"context {provider.name!r} failed: {e}")
                continue
            if isinstance(value, str):
                if value:
                    system = f"{system}\n\n{value}"
            elif isinstance(value, dict) and value.get("at") == "turn" and isinstance(value.get("text"), str):
                self.save({"type": "context", "text": value["text"]})
            elif value is not None:
                self.notice(
                    f'context {provider.name!r} returned something that is neither a string nor {{text=, at="turn"}}'
                )
        if self.hooks.has("before_turn"):
            system, _ = await self.hooks.hook(BeforeTurn(text, system))
        if self.options.append_prompt:
            system = f"{system}\n\n{self.options.append_prompt}"
        return system

    # Context and compaction --------------------------------------------------------

    def budget(self) -> Budget:
        provider = self.models.provider()
        model = self.models.model()
        window = (model.context if model else None) or (provider.context_window if provider else None)
        settings = self.services.context.compaction
        return budget(window, model.output if model else None, settings.get("reserve"))

    def context(self) -> dict[str, Any]:
        """{used, window}: the provider's last reported input plus an estimate of what
        came after it."""
        history = self.history
        return {"used": self._used(history), "window": self.budget().window}

    def _used(self, history: list[dict[str, Any]], system: str | None = None) -> int:
        compacted, rest = live(history)
        if self._anchor_tokens is not None:
            return self._anchor_tokens + sum(estimate(m) for m in rest if m.get("seq", 0) > self._anchor_seq)
        used = sum(estimate(m) for m in rest)
        if compacted is not None:
            used += estimate({"text": compacted.get("summary", "")})
        if system is not None:
            tools = [t.schema() for t in self.services.gate.offered()]
            used += (len(system) + len(json.dumps(tools))) // 4
        return used

    def window(self, notice: Callable[[str], None] | None = None) -> Window:
        """Every part of the next request and its size, calibrated on the provider's
        count of the last one (`/context`, `uji.context.list`)."""
        tools = [t.schema() for t in self.services.gate.offered()]
        prompt = self.services.context.parts(self.services.cwd, tools, notice)
        if self._last_system is not None:
            # What the system prompt held beyond the parts (--append-prompt, before_turn).
            known = sum(p.tokens for p in prompt if p.kind in ("base", "instructions") or p.at == "system")
            other = tokens(self._last_system) - known
            if other > len(prompt):  # more than the blank lines between the parts
                prompt.append(Part("other prompt text", "other", other))
        return window(
            prompt,
            self.history,
            self.calibration,
            lambda through: self.store.count(self.session_id, before=through + 1),
        )

    def _anchor(self, answer: Answer) -> None:
        u = answer.usage
        reported = u.input + u.cache_read + u.cache_write
        if reported > 0:
            self._anchor_tokens = reported
            self._anchor_seq = self._anchor_pending

    def _over_budget(self, system: str | None = None) -> bool:
        usable = self.budget().usable
        if (
            usable is None
            or self._compaction_failed
            or not self.services.context.compaction.get("enabled", True)
        ):
            return False
        return self._used(self.history, system) >= usable

    async def compact(self, notice: str | None = None, manual: bool = False) -> tuple[bool, str | None]:
        """Fold older messages into a checkpoint summary. Returns (done, why not)."""
        history = self.history
        previous, rest = live(history)
        used = self._used(history)
        keep = self.services.context.compaction.get("keep_recent") or self.budget().keep_recent(used, manual)
        cut = compaction.cut_index(rest, 0, keep)
        if cut is None:
            return False, "nothing to compact yet"
        folded = rest[:cut]
        system, text = compaction.request_text(folded, previous.get("summary") if previous else None)
        try:
            summary = await self.side_request(system, text)
        except (Failure, TurnFailed) as e:
            self._compaction_failed = True
            self.notice(
                f"{compaction.FAILED_NOTICE} ({describe_failure(e) if isinstance(e, Failure) else e})"
            )
            return False, str(e)
        if not summary.strip():
            self._compaction_failed = True
            self.notice(compaction.FAILED_NOTICE)
            return False, "the summary was empty"
        files = compaction.files_touched(folded, (previous or {}).get("files") or [])
        saved = self.save(
            {"type": "compaction", "summary": summary.strip(), "through": folded[-1]["seq"], "files": files}
        )
        # What it folded is no longer live: keep memory to the live part, as a resume would.
        self._since = min(folded[-1]["seq"] + 1, saved["seq"])
        self._history = [m for m in self.history if m["seq"] >= self._since]
        self._anchor_tokens = None
        if notice:
            self.notice(notice)
        self._emit(SessionCompacted(len(folded)))
        return True, None

    async def side_request(self, system: str, text: str, max_output: int = 8192, quiet: bool = False) -> str:
        """A call without tools (titles, summaries): the same model, effort off, no cache.
        `quiet` keeps its retries out of the notices (a title runs beside the turn's own
        request, whose retries already say that the provider is failing)."""
        await self.models.ready_model()
        request, wire, idle = self._request(system)
        request.messages = [{"type": "user", "text": text}]
        request.tools = []
        request.effort = None
        request.cache = "off"
        request.max_output = min(request.max_output, max_output)
        notice = (lambda text: None) if quiet else self.notice
        answer = await call_model(wire, request, idle, discard, notice, hint=self._hint())
        self._count(answer.usage)
        return answer.text

    # Titles ----------------------------------------------------------------------

    def _maybe_title(self, text: str) -> None:
        if not self.options.auto_title:
            return
        session = self.store.get_session(self.session_id)
        if session is None or session["title"].strip().lower() not in titles.PLACEHOLDERS:
            return
        history = self.history
        if self._since > 1 or sum(1 for m in history if m["type"] == "user") != 1:
            return
        self._title_task = asyncio.get_running_loop().create_task(self._title(text))

    async def _title(self, text: str) -> None:
        try:
            answer = await self.side_request(titles.PROMPT, titles.clip_input(text), 64, quiet=True)
        except Exception:
            return  # a title is a nicety; the turn goes on without one
        title = titles.sanitize(answer)
        if title:
            self.set_title(title)

    def set_title(self, title: str) -> None:
        self.store.set_title(self.session_id, title)
        self._emit(SessionTitled(title))

    async def _loop(self, system: str) -> TurnResult:
        continued = 0
        while True:  # bounded by the turn's budgets: max_steps is always set
            await self._steer()  # first: a queued prompt starts budgets of its own
            stopped = await self._check_budgets()
            if stopped is not None:
                return stopped
            if self._over_budget(system):
                await self.compact(notice=compaction.MID_TURN_NOTICE)
            answer = await self._generate(system)
            for call in answer.tool_calls:
                if not call.id:
                    call.id = (
                        "call_" + os.urandom(8).hex()
                    )  # what secrets.token_hex does, without its imports
            if answer.text or answer.tool_calls or answer.reasoning:
                message: dict[str, Any] = {"type": "assistant", "text": answer.text}
                if answer.tool_calls:
                    message["tool_calls"] = [c.as_dict() for c in answer.tool_calls]
                if answer.reasoning:
                    message["reasoning"] = answer.reasoning
                if answer.replay is not None:
                    message["replay"] = answer.replay
                self._pending_calls = list(answer.tool_calls)
                self.save(message)
            if not answer.tool_calls:
                if self.queue:
                    continue  # the next iteration steers the queued message in
                more = await self._before_stop(answer.text, continued)
                if more is None:
                    return TurnResult(text=answer.text, usage=self.usage, cost=self.cost)
                continued += 1
                self.save({"type": "context", "text": more})
                continue
            while self._pending_calls:
                call = self._pending_calls[0]
                result = await self.calls.run(call)
                self._pending_calls.pop(0)
                self.calls.running = None
                self.calls.subjects.pop(call.id, None)
                self.save(result)

    async def _check_budgets(self) -> TurnResult | None:
        """Before a model call: at a budget, ask whether to go on; the result that ends
        the turn if not."""
        spend = self._spend
        if spend is None:
            return None
        loop = asyncio.get_running_loop()
        reached = spend.reached(loop.time())
        if reached is None:
            return None
        self._emit(BudgetReached(reached.limit, reached.value, reached.used, reached.text))
        if await self._ask_continue(reached):
            spend.go_on(reached)
            return None
        text = f"{reached.text}; the turn stopped"
        self.save({"type": "error", "text": text})
        return TurnResult(error=text, usage=self.usage, cost=self.cost, budget=reached.limit)

    async def _ask_continue(self, reached: Reached) -> bool:
        ask = self.services.ask_continue
        if ask is None:
            return False
        return await ask(
            f"{reached.text[0].upper()}{reached.text[1:]}", f"Continue: {reached.amount(reached.base)} more"
        )

    async def _before_stop(self, text: str, continued: int) -> str | None:
        if not self.hooks.has("before_stop"):
            return None
        result, _ = await self.hooks.hook(BeforeStop(text, continued))
        return result if isinstance(result, str) and result else None

    def _after_interrupt(self) -> None:
        """Answer every call of the step in flight, then record the interrupt."""
        partial = self._partial
        if partial is not None and partial.text_parts and not self._pending_calls:
            # An answer cut off: kept, and marked so the model knows it was stopped (messages.py).
            self.save({"type": "assistant", "text": "".join(partial.text_parts), "interrupted": True})
        for call in self._pending_calls:
            content = INTERRUPTED_RUNNING if call.id == self.calls.running else INTERRUPTED_BEFORE
            output = self.calls.partial.pop(call.id, None)
            if output and call.id == self.calls.running:
                content = f"{content}; its output until then:\n{output}"
            message = {"type": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
            subject = self.calls.subjects.get(call.id)
            if subject is not None:
                message["subject"] = subject
            self.save(message)
        self._pending_calls = []
        self.calls.subjects.clear()
        self.calls.partial.clear()
        self.calls.running = None
        self.save({"type": "error", "text": "interrupted"})

    # The model call -------------------------------------------------------------

    def _request(self, system: str) -> tuple[WireRequest, Any, float]:
        models = self.models
        provider = models.provider()
        if provider is None or not models.model_id:
            if provider is not None and provider.error:
                raise TurnFailed(f"no model for {provider.name}: {provider.error}")
            raise TurnFailed(
                "no model chosen: add uji.model.use{provider=..., model=...} to init.lua, "
                f"or {self.services.choose_model}"
            )
        from uji.providers.auth import AuthError, find_key, missing_key_message

        try:
            key = find_key(models.auth_file, provider)
        except AuthError as e:
            raise TurnFailed(str(e)) from None
        if key is None and provider.needs_key:
            raise TurnFailed(missing_key_message(provider))
        try:  # a model may have its own wire (OpenAI's reasoning models: `responses`)
            wire = self.services.wires.get(provider.wire_for(models.model_id))
        except LookupError as e:
            raise TurnFailed(str(e)) from None
        model = provider.model(models.model_id)
        tools = [t.schema() for t in self.services.gate.offered()]
        history = self.history
        from uji.providers.efforts import for_request

        request = WireRequest(
            model=models.model_id,
            system=system,
            messages=for_model(history),
            tools=tools,
            provider={
                "id": provider.id,
                "base_url": models.base_url(provider),
                "compat": dict(provider.compat),
            },
            auth={"key": key, "oauth": None},
            # The user's level, moved to the nearest one this model accepts.
            effort=for_request(models.effort, model),
            reasoning=bool(model and model.reasoning),
            max_output=(model.output if model and model.output else self.options.max_output),
            cache=self.services.context.cache,
            session=self.session_id,
            model_cache=model.cache if model else None,
            images=models.model_images(),
        )
        return request, wire, provider.idle or STALL_SECONDS

    async def _generate(self, system: str) -> Answer:
        if self._spend is not None:
            self._spend.steps += 1  # a step of the turn: titles and summaries are not
        await self.models.ready_model()
        request, wire, idle = self._request(system)
        self._anchor_pending = self._last_seq
        self._last_system = system
        estimated = request_tokens(system, request.tools, request.messages)
        try:
            answer = await call_model(wire, request, idle, self._emit, self.notice, self._track, self._hint())
        except Failure as failure:
            if failure.usage is not None:
                self._count(failure.usage)  # a refusal or a cut-off call still cost tokens
            if not self._may_be_text_only(failure, request):
                raise
            # A model of unknown ability refused a request with images: once more without
            # them, and if that works, remember that it takes none.
            request.images = False
            answer = await call_model(wire, request, idle, self._emit, self.notice, self._track, self._hint())
            self.models.remember_text_only()
            self.notice(f"{self.models.model_id} does not take images; they are left out from now on")
        self._count(answer.usage)
        self._anchor(answer)
        reported = answer.usage.input + answer.usage.cache_read + answer.usage.cache_write
        if reported > 0:
            self.calibration = Calibration(reported, estimated)
        if answer.limited:
            self.notice(f"the answer was cut off at the output limit ({request.max_output} tokens)")
        return answer

    def _hint(self) -> str | None:
        provider = self.models.provider()
        return provider.hint if provider else None

    def _count(self, usage: Usage) -> None:
        """One model request's usage, priced by the current model's list prices."""
        self.last_usage = usage
        self.requests += 1
        prices = None
        provider = self.models.provider()
        model = provider.model(self.models.model_id) if provider and self.models.model_id else None
        if model is not None:
            prices = model.cost
        if prices is None and not self._unpriced_notice and self.services.limits.max_cost is not None:
            self._unpriced_notice = True
            self.notice(f"max_cost is set, but {self.models.model_id} has no prices: its cost is not counted")
        self._spent(usage, prices.of(usage) if prices is not None else None, requests=1)

    def add_usage(self, usage: Usage, cost: float | None) -> None:
        """Usage spent on the session's behalf outside its own requests (a child session,
        reported by a tool through ctx.usage): it counts toward the session's totals and
        the turn's budgets."""
        self._spent(usage, cost, requests=0)

    def _spent(self, usage: Usage, cost: float | None, requests: int) -> None:
        self.usage.add(usage)
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost
        spend = self._spend
        if spend is not None:
            spend.tokens += usage.total
            spend.cost += cost or 0.0
            if requests:  # the turn's own request: the estimate of its next one
                spend.last_tokens, spend.last_cost = usage.total, cost or 0.0
        row: dict[str, float] = {**usage.as_dict(), "requests": requests}
        if cost is not None:
            row["cost"] = cost
        try:
            self._totals = self.store.add_usage(self.session_id, row)
        except KeyError:  # the session was deleted meanwhile: nothing to add to
            pass

    def totals(self) -> dict[str, float]:
        """What the session has spent in all its runs: `input`, `output`, `cache_read`,
        `cache_write`, `requests`, and `cost` once a priced request counted."""
        if self._totals is None:
            self._totals = self.store.usage(self.session_id)
        return self._totals

    def usage_report(self) -> dict[str, Any]:
        u = self.usage
        report: dict[str, Any] = {
            **u.as_dict(),
            "total": u.total,
            "last": self.last_usage.as_dict(),
            "requests": self.requests,
        }
        if self.cost is not None:
            report["cost"] = self.cost
        session = dict(self.totals())
        session["total"] = sum(session.get(k, 0) for k in ("input", "output", "cache_read", "cache_write"))
        report["session"] = session
        return report

    def elapsed(self) -> float | None:
        if self.started_at is None:
            return None
        return asyncio.get_running_loop().time() - self.started_at

    @staticmethod
    def _may_be_text_only(failure: Failure, request: WireRequest) -> bool:
        return (
            failure.kind == "http"
            and failure.status in TEXT_ONLY_STATUSES
            and request.images is None
            and any(m.get("images") for m in request.messages)
        )

    def _track(self, reply: Collector | None) -> None:
        self._partial = reply
