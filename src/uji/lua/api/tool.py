"""uji.tool: add/remove/list/disable/enable/policy/allow/confine/roots/read_roots/inherit_keys, and
`LuaTool`, the `Tool` a `uji.tool.add` spec becomes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, ApiError, LuaError, Pending
from uji.tools.base import TaskRow, Tool, ToolContext, ToolResult
from uji.tools.registry import normalize_schema, provider_name
from uji.tools.results import from_value
from uji.wires.base import Usage

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from uji.lua.host import LuaHost
    from uji.lua.runtime import Runtime
    from uji.tools.builtin.process import Process
    from uji.tools.gate import Gate
    from uji.tools.verdict import Decision
    from uji.wires.base import Image

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class ResultTable(TypedDict):
        """A tool result as Lua gets it."""

        text: str
        images: NotRequired[list[Image]]
        summary: NotRequired[str]
        diff: NotRequired[str]

    class ProcessStatus(TypedDict):
        """`process:status()`."""

        running: bool
        seconds: float
        pid: int
        stopped: bool
        code: NotRequired[int]  # its exit code (128 + the signal's number when killed)


def install(host: LuaHost, gate: Gate) -> Api:
    return {
        **_registry_api(host, gate),
        **_policy_api(host, gate),
        **_handle_api(host, gate),
        **process_api(host),
    }


def _display(rt: Runtime, display: Any) -> tuple[str | None, str | None, Any]:
    """A `uji.tool.add` spec's `display`: (verb, question, preview), checked."""
    if display is None:
        return None, None, None
    # `label` is the newer docs' name for `verb` (uji.tool.txt's).
    verb, question, preview = display.verb or display.label, display.question, display.preview
    if verb is not None and not isinstance(verb, str):
        raise ApiError("uji.tool.add: `display.verb` (or `display.label`) must be a string")
    if question is not None and not isinstance(question, str):
        raise ApiError("uji.tool.add: `display.question` must be a string")
    if preview is not None and rt.type(preview) != "function":
        raise ApiError("uji.tool.add: `display.preview` must be a function(args) returning a uji.diff")
    return verb, question, preview


def _checked_spec(rt: Runtime, spec: Any) -> dict[str, Any]:
    """The rest of a `uji.tool.add` spec checked; its `parameters` as Python."""
    if spec.resolve is not None and rt.type(spec.resolve) != "function":
        raise ApiError("uji.tool.add: `resolve` must be a function(args) returning args, or nil and an error")
    if spec.path is not None and not isinstance(spec.path, bool):
        raise ApiError("uji.tool.add: `path` must be a boolean")
    params = rt.convert.to_python(spec.parameters) if spec.parameters is not None else {}
    if not isinstance(params, dict):
        raise ApiError("uji.tool.add: `parameters` must be a JSON Schema object")
    return params


def _offered_name(host: LuaHost, gate: Gate, name: str, origin: str | None) -> str:
    """The name the model is offered for a tool added as `name`, said when it differs."""
    offered = provider_name(name)
    if offered != name:  # providers refuse the whole request over one such name
        where = f" ({origin})" if origin else ""
        taken = " (it replaces the tool of that name)" if gate.registry.get(offered) else ""
        host.notice(
            f"uji.tool.add: {name!r} is offered to the model as {offered!r}{taken}: providers accept"
            f" only letters, digits, _ and - in a tool's name, at most 64 of them{where}"
        )
    return offered


def _registry_api(host: LuaHost, gate: Gate) -> Api:
    """uji.tool.add/remove/list/disable/enable: the tools the gate's registry holds."""

    def tool_add(name: str, spec: Any, origin: str | None) -> None:
        rt = host.lua
        verb, question, preview = _display(rt, spec.display)
        params = _checked_spec(rt, spec)
        offered = _offered_name(host, gate, name, origin)
        gate.registry.add(
            LuaTool(
                rt,
                offered,
                spec.run,
                subject=spec.subject,
                description=spec.description or "",
                parameters=normalize_schema(params) if params else {},
                policy=spec.policy,
                verb=verb,
                question=question,
                origin=origin,
                timeout=float(spec.timeout) if spec.timeout is not None else None,
                command=spec.command is True,
                resolve=spec.resolve,
                preview=preview,
                path=spec.path is True,
            )
        )

    def tool_display(name: str, opts: Any, origin: str | None) -> None:
        """uji.tool.display: a tool the gate judges and the screen shows, that a provider's
        own loop runs (agent/own_loop.py `approve`)."""
        from uji.tools.displayed import NOT_OURS

        rt = host.lua
        # Its run, never called by uji: what a call would say if it were.
        says = rt.lua.eval("function(text) return function() return text end end")
        gate.displays[name] = LuaTool(
            rt,
            name,
            says(NOT_OURS.format(name=name)),
            subject=opts.subject,
            verb=opts.label,
            question=opts.question,
            preview=opts.preview,
            origin=origin,
        )

    def tool_remove(name: str) -> bool:
        return gate.registry.remove(name)

    def tool_list() -> Any:
        return host.lua.convert.to_lua(gate.registry.names())

    def tool_disable(names: Any) -> None:
        gate.registry.disable(list(names.values()))

    def tool_enable(names: Any) -> None:
        gate.registry.enable(list(names.values()))

    return {
        "tool_add": tool_add,
        "tool_remove": tool_remove,
        "tool_display": tool_display,
        "tool_list": tool_list,
        "tool_disable": tool_disable,
        "tool_enable": tool_enable,
    }


def _policy_api(host: LuaHost, gate: Gate) -> Api:
    """uji.tool.policy/write_flags/allow/confine/roots/...: what the gate decides with."""

    def tool_policy(rules: Any, name: str, origin: str | None) -> None:
        data = host.lua.convert.to_python(rules)
        if not isinstance(data, dict):
            raise ApiError("uji.tool.policy expects a table that maps tool names to rules")
        # Rules for a tool go with it under the name the model is offered (see tool_add).
        data = {
            k if k == "default" or not isinstance(k, str) else provider_name(k): v for k, v in data.items()
        }
        for notice in gate.policy.set(data, origin, name, shipped=_shipped(origin)):
            host.notice(notice)

    def tool_write_flags(flags: Any, origin: str | None) -> Any:
        from uji.tools.write_flags import WriteFlagError

        if flags is not None:
            data = host.lua.convert.to_python(flags)
            if not isinstance(data, dict):
                raise ApiError("uji.tool.write_flags expects a table: command = { flags } or true")
            try:
                gate.policy.write_flags.set(data, origin, shipped=_shipped(origin))
            except WriteFlagError as e:
                raise ApiError(f"uji.tool.write_flags: {e}") from None
            return None  # the Lua side gives back its copy of what was set
        return host.lua.convert.to_lua(gate.policy.write_flags.table)

    def tool_allow(tool: str, subject: str, origin: str | None) -> None:
        # rules.lua's lines: an "always allow" answer, one exact subject of one tool.
        gate.policy.remembered.add(tool, subject, "always", origin)

    def tool_confine(enabled: bool | None) -> bool:
        if enabled is not None:
            gate.confined = enabled
        return gate.confined

    def tool_on_ask() -> str | None:
        return gate.on_ask

    def tool_available() -> Any:
        return host.lua.convert.to_lua(gate.available())

    def tool_roots(paths: Any) -> Any:
        if paths is not None:
            gate.roots = [p for p in paths.values()]
        return host.lua.convert.to_lua(list(gate.roots))

    def tool_read_roots(paths: Any) -> Any:
        if paths is not None:
            gate.read_roots = [p for p in paths.values()]
        return host.lua.convert.to_lua(list(gate.read_roots))

    def tool_inherit_keys(keep: Any) -> Any:
        if isinstance(keep, bool):
            gate.inherit_keys = keep
        elif keep is not None:
            gate.inherit_keys = [str(v) for v in keep.values()]
        now = gate.inherit_keys
        return host.lua.convert.to_lua(list(now)) if isinstance(now, list) else now

    return {
        "tool_policy": tool_policy,
        "tool_write_flags": tool_write_flags,
        "tool_allow": tool_allow,
        "tool_confine": tool_confine,
        "tool_roots": tool_roots,
        "tool_on_ask": tool_on_ask,
        "tool_available": tool_available,
        "tool_read_roots": tool_read_roots,
        "tool_inherit_keys": tool_inherit_keys,
    }


def _handle_api(host: LuaHost, gate: Gate) -> Api:
    """uji.tool.get: a handle on a registered tool, whose run and start call it."""

    def tool_get(name: str) -> Any:
        """The tool now registered under `name` (kept by the handle, so a wrapper that
        replaces it still reaches it), and what Lua shows of it."""
        tool = gate.registry.get(name)
        if tool is None:
            return None
        info = {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "policy": tool.policy,
            "starts": _starts(tool),
        }
        return tool, host.lua.convert.to_lua(info, json_null=False)

    def call_of(ctx: Any, fname: str) -> ToolContext:
        if not isinstance(ctx, ToolContext):
            raise ApiError(f"{fname}: `ctx` must be the ctx of the tool call that is running")
        return ctx

    def tool_run(tool: Tool, args: Any, ctx: Any) -> Pending:
        call = call_of(ctx, f"uji.tool.get(...).run ({tool.name})")
        data = host.lua.convert.to_python(args) if args is not None else {}
        if not isinstance(data, dict):
            raise ApiError(f"{tool.name}.run: `args` must be a table")

        async def run() -> Any:
            try:
                result = await tool.run(data, call)
            except Exception as e:  # as the agent reports a failing tool
                result = ToolResult(f"error: {e}")
            return host.lua.convert.to_lua(_result_table(result), json_null=False)

        return Pending(run())

    def tool_start(tool: Tool, args: Any, ctx: Any) -> Pending:
        call = call_of(ctx, f"uji.tool.get(...).start ({tool.name})")
        if not _starts(tool):
            raise ApiError(f"{tool.name} cannot start in the background")
        from uji.tools.builtin.process import close_all, start

        data = host.lua.convert.to_python(args) if args is not None else {}
        if not isinstance(data, dict):
            raise ApiError(f"{tool.name}.start: `args` must be a table")
        if not watching:
            host.on_close.append(close_all)  # the session's end ends every process started
            watching.append(True)

        async def run() -> Any:
            started = await start(data, call)
            if isinstance(started, ToolResult):  # the wait gives nil and this text
                raise ApiError(started.text)
            return started

        return Pending(run())

    watching: list[bool] = []

    return {"tool_get": tool_get, "tool_run": tool_run, "tool_start": tool_start}


# How long a Lua tool that returned nothing may wait for ctx.done, unless its spec says
# (`timeout`, in seconds). Long enough for a build or a test run behind uji.job, short
# enough that a forgotten ctx.done does not hold a turn (or a headless run) for ever.
WAIT_TIMEOUT = 600.0
WAIT_TICK = 1.0  # how often the waiting line is brought up to date


class LuaTool(Tool):
    """A tool added with `uji.tool.add`: its subject is a string or what a Lua function
    returns, and `run(args, ctx)` returns in the three styles of uji.tool.txt."""

    def __init__(
        self,
        rt: Runtime,
        name: str,
        fn: Any,
        *,
        subject: Any = None,
        description: str = "",
        parameters: dict[str, Any] | None = None,
        policy: Decision | None = None,
        verb: str | None = None,
        question: str | None = None,
        origin: str | None = None,
        timeout: float | None = None,
        command: bool = False,
        resolve: Any = None,
        preview: Any = None,
        path: bool = False,
    ) -> None:
        super().__init__(
            name, description=description, parameters=parameters, policy=policy, verb=verb, question=question
        )
        self.rt = rt
        self.fn = fn  # the spec's run function
        self.declared = subject  # a string, a Lua function, or None
        self.declares_subject = subject is not None
        self.origin = origin  # file:line of the uji.tool.add call
        self.timeout = timeout  # how long to wait for ctx.done (seconds)
        # `command = true`: the subject is a shell line, judged part by part like run_command's.
        self.command_subject = command
        self.resolver = resolve  # resolve(args) -> args | nil, err: before the policy
        self.previewer = preview  # display.preview(args) -> a uji.diff for the approval
        # `path = true`: the subject is a path, matched like the file tools' (its full form too).
        self.path_subject = path

    async def resolve(self, args: dict[str, Any]) -> dict[str, Any] | str:
        if self.resolver is None:
            return args
        rt = self.rt
        try:
            values = await rt.call(self.resolver, rt.convert.to_lua(args))
        except LuaError as e:
            return f"error: {e}"
        first = rt.convert.to_python(values[0]) if values else None
        if isinstance(first, dict):
            return first
        if first is None and len(values) > 1 and values[1] is not None:
            return f"error: {rt.convert.to_python(values[1])}"
        return f"error: the resolve function of {self.name} returned no arguments"

    def preview(self, args: dict[str, Any]) -> str | None:
        if self.previewer is None:
            return None
        from uji.tools.results import unified

        rt = self.rt
        values = rt.call_sync(self.previewer, rt.convert.to_lua(args))
        shown = rt.convert.to_python(values[0]) if values else None
        if isinstance(shown, str):
            return shown
        return unified(shown) if isinstance(shown, dict) else None

    def subject(self, args: dict[str, Any]) -> str:
        """Its string, or what its function returns for the args (the name for nil)."""
        subject = self.declared
        if subject is None:
            return self.name
        if isinstance(subject, str):
            return subject
        rt = self.rt
        values = rt.call_sync(subject, rt.convert.to_lua(args))
        value = values[0] if values else None
        if value is None:
            return self.name
        if not isinstance(value, str):
            raise LuaError(f"the subject function of {self.name} returned a {rt.type(value)}, not a string")
        return value

    def subject_hint(self, args: dict[str, Any] | None) -> str | None:
        return self.declared if isinstance(self.declared, str) else None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the spec's `run(args, ctx)` in its three return styles."""
        rt = self.rt
        progress, notice = ctx.progress, ctx.notice
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[Any] = loop.create_future()
        reported: list[str] = []  # the tool's own latest progress line

        def done(value: Any = None) -> None:
            # A second ctx.done, or one after an interrupt or the timeout, is ignored.
            if not finished.done():
                finished.set_result(rt.convert.to_python(value))

        def on_progress(line: Any) -> None:
            if finished.done():  # the call is over (answered, interrupted, timed out)
                return
            text = "" if line is None else str(line)
            reported[:] = [text]
            progress(text)

        def on_usage(spent: Any) -> None:
            data = rt.convert.to_python(spent)
            if not isinstance(data, dict):
                data = {}  # an empty table: nothing spent
            spent_now = Usage(
                input=int(data.get("input", 0)),
                output=int(data.get("output", 0)),
                cache_read=int(data.get("cache_read", 0)),
                cache_write=int(data.get("cache_write", 0)),
            )
            cost = data.get("cost")
            ctx.usage(spent_now, None if cost is None else float(cost))

        timing: dict[int, tuple[float, float | None]] = {}  # task -> (started, ended)
        # A tool with tasks (ctx.task) has them as its live line: no waiting note over it.
        reports_tasks: list[bool] = []

        def on_tasks(rows: Any) -> None:
            if finished.done():
                return
            reports_tasks[:] = [True]
            ctx.tasks(task_rows(rt.convert.to_python(rows), timing, loop.time()))

        lua_ctx = rt.make_ctx(done, on_progress, on_usage, ctx, on_tasks)
        try:
            values = await rt.call(self.fn, rt.convert.to_lua(args), lua_ctx)
        except LuaError as e:
            return ToolResult(f"error: {e}")
        first = values[0] if values else None
        cancel = None
        if first is not None and rt.type(first) == "function":
            cancel = first
        elif first is not None:
            return _as_result(rt.convert.to_python(first))

        def stop() -> None:
            if not finished.done():
                finished.cancel()
            if cancel is not None:
                try:
                    rt.call_sync(cancel)
                except LuaError as e:
                    notice(f"{self.name}: its cancel function failed: {e}")

        limit = self.timeout or WAIT_TIMEOUT
        try:
            value = await _wait_for_done(
                finished, limit, lambda line: None if reports_tasks else progress(_waiting(reported, line))
            )
        except asyncio.CancelledError:
            stop()
            raise
        except TimeoutError:
            stop()
            return ToolResult(f"error: {self.name} timed out after {limit:g}s waiting for ctx.done")
        return _as_result(value)


async def _wait_for_done(finished: asyncio.Future[Any], limit: float, tick: Callable[[int], None]) -> Any:
    """Wait for ctx.done at most `limit` seconds, calling `tick(seconds waited)` about
    once a second while waiting. Raises TimeoutError at the limit."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while True:
        remaining = started + limit - loop.time()
        if remaining <= 0:
            raise TimeoutError
        done, _ = await asyncio.wait({finished}, timeout=min(WAIT_TICK, remaining))
        if done:
            return finished.result()
        tick(int(loop.time() - started))


def _waiting(reported: list[str], seconds: int) -> str:
    """The live line under a tool that waits for ctx.done: its own last progress line,
    or a waiting note, with the time waited."""
    if reported and reported[0]:
        return f"{reported[0]} · {seconds}s"
    return f"waiting for ctx.done… {seconds}s"


def task_rows(
    rows: list[dict[str, Any]], timing: dict[int, tuple[float, float | None]], now: float
) -> tuple[TaskRow, ...]:
    """The rows of ctx.task with their seconds: from when each was first seen running to
    when it was first seen done or failed (or now)."""
    out = []
    for i, row in enumerate(rows):
        status = row.get("status", "running")
        started, ended = timing.get(i, (now, None)) if status != "queued" else (None, None)
        if started is not None:
            if ended is None and status in ("done", "failed"):
                ended = now
            timing[i] = (started, ended)
        seconds = None if started is None else round((ended or now) - started, 3)
        out.append(
            TaskRow(
                str(row.get("label", "")),
                status,
                line=row.get("line"),
                detail=row.get("detail"),
                group=row.get("group"),
                seconds=seconds,
            )
        )
    return tuple(out)


def _as_result(value: Any) -> ToolResult:
    if value is None:
        return ToolResult("")
    result = from_value(value)
    return result if isinstance(result, ToolResult) else ToolResult(result)


def _starts(tool: Tool) -> bool:
    """Whether `uji.tool.get(...).start` can run the tool's calls past their end: the
    built-in run_command (uji.tools.builtin.process)."""
    from uji.tools.builtin.run_command import RunCommand

    return isinstance(tool, RunCommand)


def _result_table(result: ToolResult) -> ResultTable:
    out: ResultTable = {"text": result.text}
    if result.images:
        out["images"] = result.images
    if result.summary is not None:
        out["summary"] = result.summary
    if result.diff is not None:
        out["diff"] = result.diff
    return out


def process_api(host: LuaHost) -> Api:
    """The methods of what `start` returns (a uji.Process)."""

    def process_wait(p: Process, seconds: float | None, ctx: Any) -> Pending:
        call = ctx if isinstance(ctx, ToolContext) else None

        async def run() -> Any:
            result = await p.wait(seconds, call)
            return None if result is None else host.lua.convert.to_lua(_result_table(result), json_null=False)

        return Pending(run())

    def process_status(p: Process) -> Any:
        info: ProcessStatus = {
            "running": p.running,
            "seconds": p.seconds,
            "pid": p.pid,
            "stopped": p.stopped,
        }
        if p.code is not None:
            info["code"] = 128 - p.code if p.code < 0 else p.code
        return host.lua.convert.to_lua(info, json_null=False)

    def process_output(p: Process) -> str:
        return p.output.render()

    def process_read(p: Process, since: int | None) -> Any:
        return host.lua.convert.to_lua(p.read(since), json_null=False)

    def process_stop(p: Process) -> bool:
        return p.stop()

    def process_release(p: Process) -> bool:
        return p.release()

    return {
        "process_wait": process_wait,
        "process_status": process_status,
        "process_output": process_output,
        "process_read": process_read,
        "process_stop": process_stop,
        "process_release": process_release,
    }


def _shipped(origin: str | None) -> bool:
    """Whether a call comes from uji's own Lua (uji/builtin/ of the tree it runs)."""
    import os

    from uji.lua.runtime import runtime_dir

    return origin is not None and origin.startswith(os.path.join(runtime_dir(), "uji", "builtin") + os.sep)
