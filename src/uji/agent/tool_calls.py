"""One tool call: check the arguments, have the gate decide (`Gate.decide`: disabled →
confinement → before_tool → policy), ask when its verdict is ask, run, pass the result
through after_tool (reference internals §1)."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from uji.agent.approval import (
    TIMEOUT_TEXT,
    Approver,
    Asked,
    Decision,
    Question,
    approval_timeout,
    default_question,
    question_body,
)
from uji.events.stream import (
    AfterTool,
    BeforeTool,
    CallDecided,
    CallSubject,
    Progress,
    Sink,
    Tasks,
    ToolStarted,
)
from uji.record import replace
from uji.tools.base import TaskRow, ToolContext, ToolResult
from uji.tools.decision import HookVerdict, read_hook
from uji.tools.remembered import Scope, is_scope
from uji.tools.secrets import Redactor
from uji.tools.validate import check_arguments
from uji.wires.base import ToolCall, Usage

if TYPE_CHECKING:
    from collections.abc import Callable

    from uji.agent.services import TurnServices
    from uji.store.rows import FileRow, ToolRow
    from uji.tools.base import Tool


def describe(e: Exception) -> str:
    """An exception for the model: its message (clipped), else its kind."""
    text = str(e).strip()
    return (text if len(text) <= 2000 else text[:2000] + "…") if text else type(e).__name__


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


class ToolCaller:
    """Runs the calls of one session's turns."""

    def __init__(self, services: TurnServices, emit: Sink, approver: Approver) -> None:
        self.services = services
        self.gate = services.gate
        self.hooks = services.hooks
        self._emit = emit
        self._approver = approver
        self.running: str | None = None  # the id of the call whose tool is running
        self._redact: Redactor = Redactor({})  # the secrets known when the call began
        self.subjects: dict[str, str] = {}  # call id -> subject, for the turn's interrupt answers
        self.partial: dict[str, str] = {}  # call id -> what its interrupted tool had produced
        self.spent: Callable[[Usage, float | None], None] | None = None  # ctx.usage (the agent's)
        self.questions_wait = False  # TurnOptions.questions_wait

    def notice(self, text: str) -> None:
        self.services.notice(text)

    def _tool_message(self, call: ToolCall, result: ToolResult, subject: str | None = None) -> ToolRow:
        redact = self._redact
        message: ToolRow = {
            "type": "tool",
            "tool_call_id": call.id,
            "name": call.name,
            "content": redact(result.text),
        }
        if subject is not None:
            # Saved for the transcript (`uji resume`), never sent to the model.
            message["subject"] = redact(subject)
        if result.images:
            message["images"] = result.images
        if result.diff:
            message["diff"] = redact(result.diff)
        if result.summary:
            message["summary"] = redact(result.summary)
        return message

    def _call_event(self, call: ToolCall, tool: Tool | None, subject: str, decision: Decision) -> None:
        verb = (tool.verb or tool.name) if tool else call.name
        self._emit(CallDecided(call.id, call.name, subject, verb, decision.outcome()))

    async def run(self, call: ToolCall) -> ToolRow:
        """Decide, run and answer one call; returns the tool message to save.

        Nothing a model sends may crash uji: an exception anywhere in the call (subject,
        decision, preview, run) becomes an `error:` result the model can read."""
        try:
            self._redact = self.gate.redactor()
            return await self._run(call)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            return self._tool_message(call, ToolResult(f"error: {call.name} failed: {describe(e)}"))

    async def _run(self, call: ToolCall) -> ToolRow:
        gate = self.gate
        offered = {t.name for t in gate.offered()}
        tool = gate.registry.get(call.name) if call.name in offered else None
        if tool is None:
            names = ", ".join(sorted(offered)) or "none"
            return self._tool_message(
                call, ToolResult(f"error: unknown tool `{call.name}`. Available tools: {names}")
            )
        args, problem = parse_arguments(call.arguments)
        if problem is None and not tool.checks_arguments:
            problem = check_arguments(tool.parameters, args or {})
        if problem is not None or args is None:
            return self._tool_message(call, ToolResult(problem or "error: bad arguments"))
        try:
            resolved = await tool.resolve(args)
        except Exception as e:
            return self._tool_message(call, ToolResult(f"error: {e}"))
        if isinstance(resolved, str):
            return self._tool_message(call, ToolResult(resolved))
        args = resolved
        try:
            subject = tool.subject(args)  # once per call: policy, screen, events, saved
        except Exception as e:
            return self._tool_message(call, ToolResult(f"error: {e}"))
        if tool.path_subject:
            from uji.tools.path_forms import path_problem

            bad = path_problem(subject)
            if bad is not None:
                return self._tool_message(call, ToolResult(f"error: {bad}"))
        self.subjects[call.id] = subject
        # The screen shows the subject while the call is decided (an approval question).
        self._emit(CallSubject(call.id, call.name, subject, tool.verb))
        decision = await self.decide(tool, subject, args)
        self._call_event(call, tool, subject, decision)
        if not decision.allow:
            return self._tool_message(call, ToolResult(f"denied: {decision.reason or 'denied'}"), subject)
        if self.services.checkpoints is not None:  # the turn's checkpoint, a file's pre-image
            await self.services.checkpoints.before_tool(tool, subject, gate.sandbox().abspath)
        self.running = call.id
        self._emit(ToolStarted(call.id, tool.name, subject))
        result = await self._after_tool(tool, await self._execute(tool, args, call))
        return self._tool_message(call, result, subject)

    async def _after_tool(self, tool: Tool, result: ToolResult) -> ToolResult:
        if self.hooks.has("after_tool"):
            # The hook sees the result with the secrets cut out, like everything else.
            text = self._redact(result.text)
            result.text, _ = await self.hooks.hook(AfterTool(tool.name, text))
        return result

    async def attach(self, path: str) -> FileRow:
        """An `@path` mention (agent/mentions.py): decided and read exactly as the model's
        read_file call of `path` would be, by the built-in read_file; returns the `file`
        row to save. The approval question, if any, asks to attach the file."""
        from uji.tools.builtin.read_file import ReadFile

        self._redact = self.gate.redactor()
        row: FileRow = {"type": "file", "path": path}
        tool = self.gate.registry.get("read_file")
        if not isinstance(tool, ReadFile):  # replaced or removed: the rules for read_file still apply
            tool = ReadFile(self.gate.sandbox)
        args = {"path": path}
        try:
            decision = await self.decide(tool, path, args, f"Attach {path} to your message?")
            if not decision.allow:
                row["denied"] = decision.reason or "denied"
                return row
            call = ToolCall("mention", tool.name, json.dumps(args))
            result = await self._after_tool(tool, await self._execute(tool, args, call))
        except asyncio.CancelledError:
            raise
        except Exception as e:
            row["error"] = describe(e)
            return row
        text = self._redact(result.text)
        if text.startswith("error: "):
            row["error"] = text.removeprefix("error: ")
            return row
        row["content"] = text
        if result.summary:
            row["summary"] = self._redact(result.summary)
        if result.images:
            row["images"] = result.images
        return row

    async def decide(
        self, tool: Tool, subject: str, args: dict[str, Any], title: str | None = None
    ) -> Decision:
        """The gate's verdict, and the answer to its question when it is ask."""
        hooks = self._before_tool if self.hooks.has("before_tool") else None
        verdict = await self.gate.decide(tool, subject, args, hooks)
        extra: Asked = {}
        if verdict.by == "hook" and verdict.hook is not None:
            extra = {"hook": verdict.hook, "hook_origin": verdict.origin}
        if verdict.decision == "allow":
            return Decision(True, verdict.layer, verdict=verdict, extra=extra)
        if verdict.decision == "deny":
            return Decision(False, verdict.layer, verdict.reason, verdict=verdict, extra=extra)
        by_hook = verdict.by == "hook"
        title = verdict.title or title
        decision = await self._ask(tool, subject, args, title, by_hook, extra, verdict.remember)
        decision.verdict = verdict
        return decision

    async def _before_tool(self, tool: str, args: dict[str, Any]) -> HookVerdict | None:
        """The before_tool hooks, for Gate.decide: what the first handler that decided
        said. A handler that raises denies the call (fail closed)."""
        from uji.events import HookFailed

        try:
            result, handler = await self.hooks.hook(BeforeTool(tool, args))
        except HookFailed as e:
            return HookVerdict("deny", str(e), e.handler.name, e.handler.origin)
        said = read_hook(result, handler.label() if handler else "a hook")
        if said is None:
            return None
        decision, text = said
        return HookVerdict(
            decision, text, handler.name if handler else None, handler.origin if handler else None
        )

    async def _ask(
        self,
        tool: Tool,
        subject: str,
        args: dict[str, Any],
        title: str | None,
        by_hook: bool = False,
        extra: Asked | None = None,
        remember: str | None = None,
    ) -> Decision:
        try:
            preview = tool.preview(args)
        except Exception:
            preview = None
        if preview is not None:
            preview = self._redact(preview)
        question = Question(
            tool.name,
            title or default_question(tool),
            question_body(tool, subject, args),
            subject,
            args,
            preview,
            remember,
            contained=self.gate.contains(tool),
        )
        try:
            # not wait_for: it can swallow an interrupt
            async with asyncio.timeout(None if self.questions_wait else approval_timeout()):
                answer = await self._approver(question)
        except TimeoutError:
            return Decision(False, "user", TIMEOUT_TEXT, extra={**(extra or {}), "question": question.title})
        out = Decision(
            answer.allow,
            answer.by,
            None if answer.allow else (answer.reason or "user denied"),
            extra={**(extra or {}), "question": question.title, "body": question.body},
        )
        if preview:
            out.extra["preview"] = preview  # what the question showed: the diff of an edit
        if by_hook:
            out.extra["asked_by"] = "hook"
        if answer.allow and is_scope(answer.remember) and remember:
            self._remember(tool.name, remember, answer.remember)
            out.extra["remember"] = answer.remember
        return out

    async def _ask_outside_sandbox(self, tool: Tool, args: dict[str, Any], call: ToolCall, why: str) -> bool:
        """The sandbox stopped the call's command: may it run once more outside it? Only a
        person's yes counts; never remembered."""
        question = Question(
            tool.name,
            "Run it again outside the sandbox?",
            f"{why}.\nRun this command once more without the sandbox?",
            self.subjects.get(call.id, ""),
            args,
        )
        try:
            async with asyncio.timeout(approval_timeout()):
                answer = await self._approver(question)
        except TimeoutError:
            return False
        return answer.allow and answer.by == "user"

    def _remember(self, tool: str, subject: str, scope: Scope) -> None:
        problem = self.gate.remember(tool, subject, scope)
        if problem:
            self.notice(problem)

    async def _execute(self, tool: Tool, args: dict[str, Any], call: ToolCall) -> ToolResult:
        def progress(line: str) -> None:
            self._emit(Progress(tool.name, call.id, self._redact(line)))

        def tasks(rows: tuple[TaskRow, ...]) -> None:
            redact = self._redact
            shown = tuple(
                replace(
                    row,
                    label=redact(row.label),
                    line=row.line and redact(row.line),
                    detail=row.detail and redact(row.detail),
                )
                for row in rows
            )
            self._emit(Tasks(tool.name, call.id, shown))

        ctx: ToolContext | None = None
        try:
            sandbox = self.gate.sandbox()
            if tool.path_subject:
                sandbox.guard = self.gate.path_guard(tool)
            ctx = ToolContext(
                cwd=self.gate.cwd,
                sandbox=sandbox,
                progress=progress,
                tasks=tasks,
                find_images=self.services.models.model_images,
                find_env=self.gate.env,
                redact=self._redact,
                notice=self.notice,
                os_sandbox=self.gate.command_sandbox(),
            )
            if self.spent is not None:
                ctx.usage = self.spent
            if self.questions_wait and ctx.os_sandbox is not None:

                async def outside(why: str) -> bool:
                    return await self._ask_outside_sandbox(tool, args, call, why)

                ctx.outside_sandbox = outside
            from uji.sandbox import current

            token = current.set(ctx.os_sandbox)  # what a Lua tool starts while it runs
            try:
                result = await tool.run(args, ctx)
            finally:
                current.reset(token)
            return result if isinstance(result, ToolResult) else ToolResult(str(result))
        except asyncio.CancelledError:
            if ctx is not None and ctx.partial:
                self.partial[call.id] = self._redact(ctx.partial)
            raise
        except Exception as e:
            return ToolResult(f"error: {describe(e)}")
