"""One turn: request → stream → tool calls → decide → run → repeat (reference internals §1).

Tool calls run one after another in the model's order. Every message is saved the
moment it exists, so an interrupt or a crash keeps everything up to it.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from uji.agent.approval import (
    APPROVAL_TIMEOUT,
    TIMEOUT_TEXT,
    Approver,
    Decision,
    Question,
    default_question,
    deny_text,
    hook_decision,
    policy_verdict,
    question_body,
)
from uji.agent.messages import for_model
from uji.agent.prompt import system_prompt
from uji.tools.base import ToolContext, ToolResult
from uji.tools.validate import check_arguments
from uji.wires.base import Answer, Failure, ToolCall, Usage, WireRequest

if TYPE_CHECKING:
    from uji.app import App
    from uji.tools.registry import Tool

MAX_ITERATIONS = 100
MAX_RETRIES = 5
STALL_SECONDS = 120.0
RETRY_AFTER_CAP = 60.0
INTERRUPTED_RUNNING = "error: interrupted by the user while this tool ran"
INTERRUPTED_BEFORE = "error: interrupted by the user before this tool ran"

Emit = Callable[[str, dict[str, Any]], None]


class TurnFailed(Exception):
    pass


@dataclass
class TurnResult:
    text: str | None = None
    error: str | None = None
    interrupted: bool = False
    usage: Usage = field(default_factory=Usage)


@dataclass
class TurnOptions:
    tools: list[str] | None = None  # offer only these
    append_prompt: str | None = None
    max_output: int = 8192


class Collector:
    """The Reply a wire talks to: gathers one model call and tracks progress."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self.text_parts: list[str] = []
        self.reasoning_parts: list[str] = []
        self.answer: Answer | None = None
        self.failure: Failure | None = None
        self.last_progress = time.monotonic()
        self.finished = asyncio.get_running_loop().create_future()

    def text(self, delta: str) -> None:
        if delta:
            self.text_parts.append(delta)
            self.last_progress = time.monotonic()
            self._emit("delta", {"kind": "text", "text": delta})

    def reasoning(self, delta: str) -> None:
        if delta:
            self.reasoning_parts.append(delta)
            self.last_progress = time.monotonic()
            self._emit("delta", {"kind": "reasoning", "text": delta})

    def touch(self) -> None:
        self.last_progress = time.monotonic()

    def done(self, answer: Answer) -> None:
        if self.finished.done():
            return
        if not answer.text and self.text_parts:
            answer.text = "".join(self.text_parts)
        if not answer.reasoning and self.reasoning_parts:
            answer.reasoning = "".join(self.reasoning_parts)
        self.answer = answer
        self.finished.set_result(None)

    def fail(self, failure: Failure) -> None:
        if self.finished.done():
            return
        self.failure = failure
        self.finished.set_result(None)


def describe_failure(f: Failure) -> str:
    if f.kind == "auth":
        return f"authentication rejected ({f.status}) - check the api key for this provider"
    if f.kind == "provider":
        return f.message if f.message.startswith("provider:") else f"provider: {f.message}"
    return f.message


def backoff(attempt: int, retry_after: float | None) -> float:
    if retry_after is not None:
        return min(max(retry_after, 0.0), RETRY_AFTER_CAP)
    return min(2.0 * 2**attempt, 30.0) * random.uniform(0.75, 1.25)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line[:160]


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    if not raw or not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        clipped = raw if len(raw) <= 500 else raw[:500] + "…"
        return None, (
            f"error: the arguments are not valid JSON ({e.msg} at line {e.lineno} column {e.colno}); "
            f"send one JSON object, no markdown fences. You sent: {clipped}"
        )
    if not isinstance(value, dict):
        kinds = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
        got = "null" if value is None else kinds.get(type(value), type(value).__name__)
        return None, f"error: arguments must be a JSON object, got {got}"
    return value, None


class Agent:
    """Runs turns of one session."""

    def __init__(
        self, app: App, session_id: str, emit: Emit, approver: Approver, options: TurnOptions | None = None
    ) -> None:
        self.app = app
        self.session_id = session_id
        self._emit = emit
        self._approver = approver
        self.options = options or TurnOptions()
        self.usage = Usage()
        # What an interrupt must answer: the calls of the step in flight.
        self._pending_calls: list[ToolCall] = []
        self._running_call: str | None = None
        self._partial: Collector | None = None
        # Messages typed during a turn: one is steered in per model call.
        self.queue: list[dict[str, Any]] = []
        self.running = False

    # Saving -------------------------------------------------------------------

    def save(self, message: dict[str, Any]) -> dict[str, Any]:
        seq = self.app.store.append(self.session_id, message)
        saved = dict(message, seq=seq)
        self._emit("message", saved)
        text = message.get("text") or message.get("content") or ""
        self.app.events.emit("message_appended", {"type": message["type"], "text": text})
        return saved

    def notice(self, text: str) -> None:
        self.app.notice(text)

    def enqueue(self, text: str, images: list[dict[str, Any]] | None = None) -> None:
        """Queue a message typed during a turn; it is steered in at the next model call."""
        item: dict[str, Any] = {"text": text}
        if images:
            item["images"] = images
        self.queue.append(item)
        self._queue_changed()

    def _queue_changed(self) -> None:
        self._emit("queue_changed", {"count": len(self.queue)})
        self.app.events.emit("queue_changed", {"count": len(self.queue)})

    def _steer(self) -> bool:
        """Send one queued message as a user message; True if there was one."""
        if not self.queue:
            return False
        item = self.queue.pop(0)
        self._queue_changed()
        message: dict[str, Any] = {"type": "user", "text": item["text"]}
        if item.get("images"):
            message["images"] = item["images"]
        self.app.events.emit("message_submitted", {"text": item["text"]})
        self.save(message)
        return True

    # The turn -----------------------------------------------------------------

    async def turn(self, text: str, images: list[dict[str, Any]] | None = None) -> TurnResult:
        user: dict[str, Any] = {"type": "user", "text": text}
        if images:
            user["images"] = images
        self.app.events.emit("message_submitted", {"text": text})
        self.save(user)
        self.running = True
        try:
            system = await self._system_prompt(text)
            return await self._loop(system)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            self._after_interrupt()
            return TurnResult(error="interrupted", interrupted=True, usage=self.usage)
        except TurnFailed as e:
            self.save({"type": "error", "text": str(e)})
            return TurnResult(error=str(e), usage=self.usage)
        finally:
            self.running = False
            self.app.events.emit("turn_finished", {})

    async def _system_prompt(self, text: str) -> str:
        system = system_prompt(self.app.cwd)
        if self.app.events.has("before_turn"):
            system = await self.app.events.chain("before_turn", {"text": text}, "system", system)
        if self.options.append_prompt:
            system = f"{system}\n\n{self.options.append_prompt}"
        return system

    async def _loop(self, system: str) -> TurnResult:
        continued = 0
        for _ in range(MAX_ITERATIONS):
            self._steer()
            answer = await self._generate(system)
            for call in answer.tool_calls:
                if not call.id:
                    call.id = "call_" + secrets.token_hex(8)
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
                    return TurnResult(text=answer.text, usage=self.usage)
                continued += 1
                self.save({"type": "context", "text": more})
                continue
            while self._pending_calls:
                call = self._pending_calls[0]
                result = await self._run_call(call)
                self._pending_calls.pop(0)
                self._running_call = None
                self.save(result)
        raise TurnFailed(f"stopped after {MAX_ITERATIONS} tool iterations without a final answer")

    async def _before_stop(self, text: str, continued: int) -> str | None:
        if not self.app.events.has("before_stop"):
            return None
        result, _ = await self.app.events.first("before_stop", {"text": text, "continued": continued})
        return result if isinstance(result, str) and result else None

    def _after_interrupt(self) -> None:
        """Answer every call of the step in flight, then record the interrupt."""
        partial = self._partial
        if partial is not None and partial.text_parts and not self._pending_calls:
            self.save({"type": "assistant", "text": "".join(partial.text_parts)})
        for call in self._pending_calls:
            content = INTERRUPTED_RUNNING if call.id == self._running_call else INTERRUPTED_BEFORE
            self.save({"type": "tool", "tool_call_id": call.id, "name": call.name, "content": content})
        self._pending_calls = []
        self._running_call = None
        self.save({"type": "error", "text": "interrupted"})

    # The model call -------------------------------------------------------------

    def _request(self, system: str) -> tuple[WireRequest, Any, float]:
        app = self.app
        provider = app.provider()
        if provider is None or not app.model_id:
            raise TurnFailed(
                "no model chosen: add uji.model.use{provider=..., model=...} to init.lua, "
                "or pass uji run --model PROVIDER/MODEL"
            )
        from uji.providers.auth import AuthError, find_key, missing_key_message

        try:
            key = find_key(app.paths.auth_file, provider)
        except AuthError as e:
            raise TurnFailed(str(e)) from None
        if key is None and provider.needs_key:
            raise TurnFailed(missing_key_message(provider))
        try:
            wire = app.wire(provider.wire)
        except LookupError as e:
            raise TurnFailed(str(e)) from None
        model = provider.model(app.model_id)
        tools = [t.schema() for t in app.registry.offered(self.options.tools)]
        history = app.store.messages(self.session_id)
        request = WireRequest(
            model=app.model_id,
            system=system,
            messages=for_model(history),
            tools=tools,
            provider={"id": provider.id, "base_url": provider.base_url, "compat": {}},
            auth={"key": key, "oauth": None},
            effort=app.effort,
            reasoning=bool(model and model.reasoning),
            max_output=(model.output if model and model.output else self.options.max_output),
            cache="short",
            session=self.session_id,
        )
        return request, wire, provider.idle or STALL_SECONDS

    async def _generate(self, system: str) -> Answer:
        request, wire, idle = self._request(system)
        for attempt in range(MAX_RETRIES + 1):
            reply = Collector(self._emit)
            self._partial = reply
            await self._stream(wire, request, reply, idle)
            self._partial = None
            if reply.answer is not None:
                self.usage.add(reply.answer.usage)
                return reply.answer
            failure = reply.failure or Failure("provider", "the wire ended without an answer")
            if not failure.retryable or attempt == MAX_RETRIES:
                raise TurnFailed(describe_failure(failure))
            delay = backoff(attempt, failure.retry_after)
            self._emit("stream_cleared", {})
            self.notice(
                f"request failed ({_first_line(describe_failure(failure))}), "
                f"retrying in {delay:.0f}s ({attempt + 1}/{MAX_RETRIES})"
            )
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _stream(self, wire: Any, request: WireRequest, reply: Collector, idle: float) -> None:
        """Run the wire with a stall watchdog: no progress for `idle` seconds fails it."""
        task = asyncio.ensure_future(wire.stream(request, reply))
        try:
            while not reply.finished.done():
                remaining = reply.last_progress + idle - time.monotonic()
                if remaining <= 0:
                    reply.fail(Failure("http", f"stream stalled: no data for {idle:.0f}s"))
                    break
                await asyncio.wait(
                    {task, reply.finished}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
                )
                if task.done() and not reply.finished.done():
                    exc = task.exception()
                    reply.fail(
                        exc
                        if isinstance(exc, Failure)
                        else Failure(
                            "provider",
                            f"the wire failed: {exc}" if exc else "the wire ended without an answer",
                        )
                    )
        finally:
            if not task.done():
                task.cancel()
                try:
                    await task
                except (asyncio.CancelledError, Exception):
                    pass
            elif not task.cancelled():
                task.exception()  # retrieved, so asyncio does not log it

    # Tool calls ---------------------------------------------------------------

    def _tool_message(self, call: ToolCall, result: ToolResult) -> dict[str, Any]:
        message: dict[str, Any] = {
            "type": "tool",
            "tool_call_id": call.id,
            "name": call.name,
            "content": result.text,
        }
        if result.images:
            message["images"] = result.images
        if result.diff:
            message["diff"] = result.diff
        if result.summary:
            message["summary"] = result.summary
        return message

    def _call_event(self, call: ToolCall, tool: Tool | None, subject: str, decision: Decision) -> None:
        verb = (tool.verb or tool.name) if tool else call.name
        self._emit(
            "call", {"id": call.id, "name": call.name, "subject": subject, "verb": verb, **decision.event()}
        )

    async def _run_call(self, call: ToolCall) -> dict[str, Any]:
        app = self.app
        offered = {t.name for t in app.registry.offered(self.options.tools)}
        tool = app.registry.get(call.name) if call.name in offered else None
        if tool is None:
            names = ", ".join(sorted(offered)) or "none"
            return self._tool_message(
                call, ToolResult(f"error: unknown tool `{call.name}`. Available tools: {names}")
            )
        args, problem = parse_arguments(call.arguments)
        if problem is None and not tool.builtin:
            problem = check_arguments(tool.parameters, args or {})
        if problem is not None or args is None:
            return self._tool_message(call, ToolResult(problem or "error: bad arguments"))
        try:
            subject = self._subject(tool, args)
        except Exception as e:
            return self._tool_message(call, ToolResult(f"error: {e}"))
        decision = await self._decide(tool, subject, args)
        self._call_event(call, tool, subject, decision)
        if not decision.allow:
            return self._tool_message(call, ToolResult(f"denied: {decision.reason or 'denied'}"))
        self._running_call = call.id
        app.events.emit("tool_started", {"name": tool.name})
        self._emit("tool_started", {"id": call.id, "name": tool.name, "subject": subject})
        result = await self._execute(tool, args, call)
        if app.events.has("after_tool"):
            result.text = await app.events.chain("after_tool", {"name": tool.name}, "content", result.text)
        return self._tool_message(call, result)

    def _subject(self, tool: Tool, args: dict[str, Any]) -> str:
        if tool.subject_key is not None:
            value = args.get(tool.subject_key)
            return value if isinstance(value, str) else ""
        if tool.lua:
            from uji.lua.api.tool import lua_subject

            return lua_subject(self.app.lua, tool, args)
        return tool.subject if isinstance(tool.subject, str) else tool.name

    async def _decide(self, tool: Tool, subject: str, args: dict[str, Any]) -> Decision:
        app = self.app
        if tool.name in app.registry.disabled:
            return Decision(False, "disabled", f"{tool.name} is disabled")
        if tool.confined and app.confined:
            refusal = app.sandbox().check(subject)
            if refusal:
                return Decision(False, "confine", refusal)
        title = None
        if app.events.has("before_tool"):
            result, handler = await app.events.first("before_tool", {"name": tool.name, "arguments": args})
            hooked = hook_decision(result, handler.label() if handler else "a hook")
            if hooked is not None:
                kind, text = hooked
                extra = {"hook": handler.name} if handler else {}
                if kind == "allow":
                    return Decision(True, "hook", extra=extra)
                if kind == "deny":
                    return Decision(False, "hook", text, extra=extra)
                title = text
                return await self._ask(tool, subject, args, title, by_hook=True, extra=extra)
        verdict = policy_verdict(app, tool, subject, args)
        if verdict.decision == "allow":
            return Decision(True, "policy", verdict=verdict)
        if verdict.decision == "deny":
            return Decision(False, "policy", deny_text(verdict, tool.name), verdict=verdict)
        decision = await self._ask(tool, subject, args, title)
        decision.verdict = verdict
        return decision

    async def _ask(
        self,
        tool: Tool,
        subject: str,
        args: dict[str, Any],
        title: str | None,
        by_hook: bool = False,
        extra: dict[str, Any] | None = None,
    ) -> Decision:
        preview = None
        if tool.preview is not None:
            try:
                preview = tool.preview(args, self.app.sandbox())
            except Exception:
                preview = None
        question = Question(
            tool.name,
            title or default_question(tool),
            question_body(tool, subject, args),
            subject,
            args,
            preview,
        )
        try:
            answer = await asyncio.wait_for(self._approver(question), APPROVAL_TIMEOUT)
        except TimeoutError:
            return Decision(False, "user", TIMEOUT_TEXT, extra=dict(extra or {}, question=question.title))
        out = Decision(
            answer.allow,
            answer.by,
            None if answer.allow else (answer.reason or "user denied"),
            extra=dict(extra or {}, question=question.title, body=question.body),
        )
        if by_hook:
            out.extra["asked_by"] = "hook"
        return out

    async def _execute(self, tool: Tool, args: dict[str, Any], call: ToolCall) -> ToolResult:
        def progress(line: str) -> None:
            self._emit("progress", {"tool": tool.name, "id": call.id, "line": line})

        try:
            if tool.lua:
                from uji.lua.api.tool import run_lua_tool

                return await run_lua_tool(self.app.lua, tool, args, progress, self.notice)
            ctx = ToolContext(
                cwd=self.app.cwd, sandbox=self.app.sandbox(), progress=progress, images=self._model_images()
            )
            result = await tool.run(args, ctx)
            return result if isinstance(result, ToolResult) else ToolResult(str(result))
        except asyncio.CancelledError:
            raise
        except Exception as e:
            return ToolResult(f"error: {e}")

    def _model_images(self) -> bool | None:
        provider = self.app.provider()
        model = provider.model(self.app.model_id) if provider and self.app.model_id else None
        return model.images if model else None
