"""`uji run PROMPT`: one turn with nobody at the screen, plain or as JSON events."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.agent.approval import Answer, Question
from uji.agent.loop import Agent, TurnOptions, TurnResult
from uji.app import App
from uji.events.stream import (
    AgentEvent,
    Done,
    Event,
    MessageSaved,
    Notice,
    SessionCreated,
    SessionOpened,
    SessionResumed,
)
from uji.paths import Paths
from uji.restart import Handover, exec_into, exit_code
from uji.stdio import UsageError, prompt_from, say, silence, write_all
from uji.ui.headless import HeadlessUi
from uji.worktree import Worktree
from uji.worktree import find as find_worktree

if TYPE_CHECKING:
    from uji.wires.base import Image

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BUDGET = 3  # a budget (--max-steps, --max-cost, uji.session.configure) stopped the turn
EXIT_PIPE = 141  # 128 + SIGPIPE: what a shell reports for `yes | head -1`
RELOAD = -1  # _run: read the config again (uji.reload() while it loaded)
RESTART = -2  # _run: start again as app.ui.restart_requested says (uji.os.restart)
HEADLESS_HINT = "uji run --on-ask allow runs such calls"
HEADLESS_REFUSED = f"a call that would ask was refused: nobody is here to answer, and it would not run inside the sandbox ({HEADLESS_HINT})"
NO_MODEL = (
    "no model chosen and no local server found: add uji.model.use{provider=..., model=...} to init.lua, "
    "pass --model PROVIDER/MODEL, or start a local server such as `ollama serve`"
)


def title_from_prompt(prompt: str) -> str:
    """`uji run` titles a session with the sanitised first line of its prompt."""
    from uji.agent.titles import sanitize

    return sanitize(prompt) or "untitled"


class Printer:
    """Plain mode: the final text on stdout, notices on stderr."""

    def __init__(self, out: Any = None, err: Any = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.closed = False  # the reader of stdout went away (`uji run --json | head -1`)
        self.on_closed: Callable[[], None] | None = None
        # What the model wrote along the way (beside its calls): printed if a budget or an
        # interrupt stops the turn before its answer, so the work is not hidden.
        self.written: list[str] = []
        self.worktree: Worktree | None = None  # the worktree uji made that the run works in

    def write(self, text: str) -> None:
        """Write to stdout. When the reader has gone, stop writing (quietly: no traceback,
        nothing at exit) and tell on_closed, which stops the turn."""
        if self.closed:
            return
        try:
            write_all(self.out, text)
        except BrokenPipeError:
            self.closed = True
            silence(self.out)
            if self.on_closed is not None:
                self.on_closed()

    def notice(self, text: str) -> None:
        say(self.err, f"uji: {text}")

    def emit(self, event: AgentEvent) -> None:
        if isinstance(event, MessageSaved) and event.message.get("type") == "assistant":
            text = event.message.get("text")
            if isinstance(text, str) and text.strip():
                self.written.append(text.strip())
        if isinstance(event, MessageSaved) and event.message["type"] == "file":
            from uji.agent.mentions import line

            label, text = line(event.message)
            if label != "attached":  # a refused @file mention says so (--json: its `message` line)
                self.notice(f"{label}: {text}")

    def session(self, session_id: str, worktree: Worktree | None = None) -> None:
        self.worktree = worktree

    def left(self) -> None:
        """At the end of the run: a worktree stays (`uji run` never removes one)."""
        if self.worktree is not None:
            from uji.worktree import kept

            self.notice(kept(self.worktree))

    def done(self, result: TurnResult) -> None:
        if result.error is not None:
            if (result.budget is not None or result.interrupted) and self.written:
                self.write("\n\n".join(self.written) + "\n")
            self.error(result)
        elif result.text:
            self.write(result.text if result.text.endswith("\n") else result.text + "\n")

    def error(self, result: TurnResult) -> None:
        """The line on stderr that says why the turn ended without an answer."""
        if result.budget is not None:
            flag = {"max_steps": " --max-steps N or", "max_cost": " --max-cost DOLLARS or"}.get(
                result.budget, ""
            )
            say(
                self.err,
                f"uji: {result.error}; raise it with{flag} uji.session.configure{{{result.budget}=...}}",
            )
        else:
            say(self.err, f"uji: error: {result.error}")


class JsonPrinter(Printer):
    """--json: one object per line on stdout."""

    def _line(self, event: Event) -> None:
        from uji.events.jsonl import json_line

        obj = json_line(event)
        if obj is not None:
            self.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def notice(self, text: str) -> None:
        self._line(Notice(text))

    def emit(self, event: AgentEvent) -> None:
        self._line(event)

    def session(self, session_id: str, worktree: Worktree | None = None) -> None:
        where = (worktree.path, worktree.branch) if worktree is not None else (None, None)
        self._line(SessionOpened(session_id, *where))

    def left(self) -> None:
        pass  # the session line said where

    def done(self, result: TurnResult) -> None:
        self._line(Done(result.text, result.error, result.usage, result.cost, result.budget))
        if result.error is not None and not self.closed:
            self.error(result)


class AutoApprover:
    """Answers the calls that would ask, with nobody at the screen. `--on-ask allow` or
    `deny` answer every one so; by default a call runs only where it runs inside the
    sandbox, and the first one refused says once on stderr how to allow them."""

    def __init__(self, on_ask: str | None, notice: Callable[[str], None] | None = None) -> None:
        self.on_ask = on_ask
        self._notice = notice
        self._told = False

    async def __call__(self, question: Question) -> Answer:
        if self.on_ask == "allow" or (self.on_ask in (None, "sandbox") and question.contained):
            return Answer(True, "auto")
        if self.on_ask == "deny":
            return Answer(False, "auto", "nobody is here to approve this call (uji run --on-ask deny)")
        if self._notice is not None and not self._told:
            self._told = True
            self._notice(HEADLESS_REFUSED)
        return Answer(
            False,
            "auto",
            f"nobody is here to approve this call, and it would not run inside the sandbox ({HEADLESS_HINT})",
        )


def auto_approver(on_ask: str | None, notice: Callable[[str], None] | None = None) -> AutoApprover:
    return AutoApprover(on_ask, notice)


def _usage_error(text: str) -> int:
    print(f"uji: error: {text}", file=sys.stderr)
    return EXIT_USAGE


def _choose_model(app: App, opts: Any) -> str | None:
    """Apply --model and --effort; returns a usage error, if any."""
    if opts.model:
        provider, _, model = opts.model.partition("/")
        if not provider or not model:
            return "--model takes PROVIDER/MODEL"
        try:
            app.models.use_model(provider, model, save=False)
        except ValueError as e:
            return f"--model: {e}"
    if opts.effort:
        app.models.effort = opts.effort
    return None


def _set_gate(app: App, opts: Any) -> str | None:
    """Apply --mode, --confine and --root over the config's; returns a usage error, if any.
    (The subagent plugin passes its session's on to a child run this way.)"""
    gate = app.gate
    if getattr(opts, "sandbox", None):
        gate.os_sandbox.mode = opts.sandbox
    if opts.confine is not None:
        gate.confined = opts.confine == "on"
    if opts.root:
        gate.roots = list(opts.root)
    if opts.mode:
        from uji.lua.api.mode import switch_mode
        from uji.lua.runtime import ApiError

        try:
            switch_mode(app.host, gate, opts.mode)
        except ApiError as e:
            return f"--mode: {str(e).removeprefix('uji.mode.set: ')}"
    return None


def _is_command(app: App, prompt: str) -> bool:
    from uji.command_registry import parse

    parsed = parse(prompt)
    return parsed is not None and app.commands.get(parsed[0]) is not None


def _open_session(app: App, opts: Any, prompt: str) -> tuple[str | None, str | None]:
    """(session id, usage error): a new session, or with --session the one to continue."""
    from uji.store.sessions import is_session_id

    store = app.store
    for flag, value in (("--parent", opts.parent), ("--session", opts.session)):
        if value and (not is_session_id(value) or store.get_session(value) is None):
            return None, f"{flag}: no session {value}"
    if opts.session:
        store.repair(opts.session)  # calls a crash left unanswered
        app.events.publish(SessionResumed(opts.session))
        return opts.session, None
    title = opts.title or title_from_prompt(prompt)
    session_id = store.create_session(app.cwd, title, parent=opts.parent, kind="run")
    app.events.publish(SessionCreated(session_id))
    return session_id, None


class Sigint:
    """SIGINT from before the first line of config runs until uji run ends.

    Lua running now (a config that loops, a hook, a tool) is stopped where it is; the
    signal handler runs while Lua loops because the interrupt hook calls into Python.
    Otherwise the task that waits (the config load, the turn) is cancelled. Either way
    the interrupt reaches the turn as a cancellation, which nothing turns into a result.
    """

    def __init__(self, app: App) -> None:
        self.app = app
        self.loop = asyncio.get_running_loop()
        self.target: asyncio.Task[Any] | None = asyncio.current_task()
        self.previous = signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum: int, frame: Any) -> None:
        lua = self.app.host.loaded
        if lua is not None and lua.request_break():
            return
        target = self.target
        if target is not None:
            self.loop.call_soon_threadsafe(target.cancel)

    def restore(self) -> None:
        signal.signal(signal.SIGINT, self.previous)


def _unknown_tools(app: App, tools: list[str] | None) -> str | None:
    """A usage error naming the --tools entries no tool answers to, with the known ones."""
    if tools is None:
        return None
    known = app.gate.registry.names()
    unknown = [t for t in tools if t not in known]
    if not unknown:
        return None
    names = ", ".join(repr(t) for t in unknown)
    return f"--tools: no tool {names}; the tools are: {', '.join(known) or '(none)'}"


def _stop_on_closed_output(app: App) -> Callable[[], None]:
    """When stdout's reader goes away, stop the turn as an interrupt would (its messages
    are saved up to there); the run then ends with EXIT_PIPE."""
    loop = asyncio.get_running_loop()

    def stop() -> None:
        if app.frontend.on_interrupt is not None:
            app.frontend.on_interrupt()

    def closed() -> None:
        loop.call_soon(stop)  # not from inside the write: the turn is cancelled between steps

    return closed


async def run(paths: Paths, opts: Any) -> int:
    printer: Printer = JsonPrinter() if opts.json else Printer()
    stream = getattr(opts, "input_format", "text") == "stream-json"
    if stream and (opts.prompt or opts.image):
        return _usage_error(
            "--input-format stream-json reads the messages from stdin: give no PROMPT or --image"
        )
    try:
        prompt = "" if stream else prompt_from(opts.prompt, notice=printer.notice)
    except UsageError as e:
        return _usage_error(str(e))
    handover: Handover | None = None  # what a restart hands the next start
    reloaded = False
    while True:  # uji.reload() from the config: once more, with a fresh Lua; uji.os.restart too
        app = App(paths, notice=printer.notice, ui=HeadlessUi(printer.notice), handover=handover)
        app.trust.approve_all = bool(getattr(opts, "trust_project", False))  # --trust-project
        printer.on_closed = _stop_on_closed_output(app)
        sigint = Sigint(app)
        try:
            code = await _run(app, opts, printer, sigint, prompt, may_reload=not reloaded)
        except asyncio.CancelledError:  # an interrupt outside a turn (the config, a /command)
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            print("uji: interrupted", file=sys.stderr, flush=True)
            return EXIT_INTERRUPTED
        finally:
            sigint.restore()
            await app.close()
        asked = app.ui.restart_requested
        if asked is not None and asked.args is not None:  # a new command line: a new process
            from uji.lua.runtime import flush_c_stdio

            flush_c_stdio()
            exec_into(asked)
        if code == RESTART and asked is not None:
            handover = asked.handover
            continue
        if code != RELOAD:
            return exit_code(code)
        reloaded = True


async def _run(
    app: App, opts: Any, printer: Printer, sigint: Sigint, prompt: str, may_reload: bool = False
) -> int:
    await app.load_config()
    if app.host.config_interrupted is not None:
        print(f"uji: interrupted while loading the config ({app.host.config_interrupted})", file=sys.stderr)
        return EXIT_INTERRUPTED
    if app.ui.quit_requested:  # uji.quit() from the config: nothing more to do
        return EXIT_OK
    if app.ui.restart_requested is not None:  # uji.os.restart, or packs that replace uji's modules
        return RESTART
    if app.ui.reload_requested:
        if may_reload:
            return RELOAD
        printer.notice("uji.reload: the config was read again once already in this run")
    return await _run_loaded(app, opts, printer, sigint, prompt)


async def _run_loaded(app: App, opts: Any, printer: Printer, sigint: Sigint, prompt: str) -> int:
    problem = _choose_model(app, opts) or _set_gate(app, opts)
    if problem:
        return _usage_error(problem)
    tools = [t.strip() for t in opts.tools.split(",") if t.strip()] if opts.tools is not None else None
    problem = _unknown_tools(app, tools)
    if problem:
        return _usage_error(problem)
    app.gate.only, app.gate.on_ask = tools, opts.on_ask or "sandbox"  # what Lua (a subagent's child) reads
    if app.models.provider_id is None and not _is_command(app, prompt):
        picked = await app.models.find_local_server()
        if picked is None:
            printer.done(TurnResult(error=NO_MODEL))
            return EXIT_FAILED
        printer.notice(picked)
    if getattr(opts, "input_format", "text") == "stream-json":
        return await _run_stream(app, opts, printer, sigint, tools)
    images: list[Image] = []
    if opts.image:
        refusal = await _image_refusal(app)
        if refusal:
            printer.done(TurnResult(error=refusal))
            return EXIT_FAILED
        images, problem = await _load_images(app, opts.image)
        if problem:
            return _usage_error(problem)
    session_id, problem = _open_session(app, opts, prompt)
    if problem or session_id is None:
        return _usage_error(problem or "no session")
    printer.session(session_id, find_worktree(app.cwd))
    if printer.closed:
        return EXIT_PIPE
    agent = _make_agent(app, opts, printer, session_id, tools)
    result = await _run_prompt(app, agent, prompt, sigint, images)
    printer.done(result)
    printer.left()
    return _exit_code(printer, result)


def _exit_code(printer: Printer, result: TurnResult) -> int:
    if printer.closed:
        return EXIT_PIPE
    if result.interrupted:
        return EXIT_INTERRUPTED
    if result.budget is not None:
        return EXIT_BUDGET
    return EXIT_FAILED if result.error is not None else EXIT_OK


def _make_agent(app: App, opts: Any, printer: Printer, session_id: str, tools: list[str] | None) -> Agent:
    if opts.max_steps is not None:  # the command line wins over the config
        app.limits.max_steps = opts.max_steps
    if opts.max_cost is not None:
        app.limits.max_cost = opts.max_cost
    agent = Agent(
        app.turn_services(),
        session_id,
        printer.emit,
        auto_approver(opts.on_ask, None if opts.json else printer.notice),
        TurnOptions(append_prompt=opts.append_prompt),
    )
    app.frontend.agent = agent
    return agent


async def _run_stream(app: App, opts: Any, printer: Printer, sigint: Sigint, tools: list[str] | None) -> int:
    """--input-format stream-json: a turn for each user message on stdin, all in one
    session, each ending with its own `done`. A bad line is reported with its number and
    skipped (the run then exits 1); the end of stdin ends the run."""
    from uji.stream_input import BadLine, lines, parse

    agent: Agent | None = None
    code = EXIT_OK
    try:
        async for number, line in lines(sys.stdin.fileno()):
            try:
                message = parse(line)
                images = await _stream_images(app, message.images, number)
            except BadLine as e:
                _bad_line(printer, number, str(e))
                code = code or EXIT_FAILED
                continue
            if agent is None:
                session_id, problem = _open_session(app, opts, message.text)
                if problem or session_id is None:
                    return _usage_error(problem or "no session")
                printer.session(session_id, find_worktree(app.cwd))
                agent = _make_agent(app, opts, printer, session_id, tools)
            result = await _run_prompt(app, agent, message.text, sigint, images)
            printer.done(result)
            turn_code = _exit_code(printer, result)
            if turn_code in (EXIT_PIPE, EXIT_INTERRUPTED):
                return turn_code
            code = turn_code or code
    except BadLine as e:  # a line too long to read on from
        _bad_line(printer, None, str(e))
        return EXIT_FAILED
    return code


def _bad_line(printer: Printer, number: int | None, why: str) -> None:
    where = f"stdin line {number}: " if number is not None else "stdin: "
    say(sys.stderr, f"uji: error: {where}{why}")
    if isinstance(printer, JsonPrinter):
        printer.notice(f"{where}{why}")


async def _stream_images(app: App, parts: tuple[tuple[str, bytes], ...], number: int) -> list[Image]:
    """A message's image parts, checked and fitted as --image files are."""
    from uji.images import ImageError, current_limits, from_bytes
    from uji.stream_input import BadLine

    if not parts:
        return []
    refusal = await _image_refusal(app)
    if refusal:
        raise BadLine(refusal.removeprefix("--image: "))
    limits = current_limits(app.models)
    out = []
    for i, (_media_type, data) in enumerate(parts, 1):
        try:
            out.append(await asyncio.to_thread(from_bytes, data, f"line-{number}-{i}", limits, f"image {i}"))
        except ImageError as e:
            raise BadLine(str(e)) from None
    return out


async def _image_refusal(app: App) -> str | None:
    """Why the chosen model cannot take the --image files, before any request."""
    from uji.images import refusal

    try:
        await app.models.ready_model()  # a provider whose models are listed lazily
    except Exception:
        pass  # the turn reports a provider that cannot load
    why = refusal(app.models)
    return f"--image: {why}; choose a model that does with --model PROVIDER/MODEL" if why else None


async def _load_images(app: App, paths: list[str]) -> tuple[list[Image], str | None]:
    """The --image files, checked and fitted to the current wire's limits, or the first
    problem, naming its path."""
    from uji.images import ImageError, current_limits, load

    limits = current_limits(app.models)
    try:
        return [await asyncio.to_thread(load, path, limits, app.cwd) for path in paths], None
    except ImageError as e:
        return [], f"--image {e}"


async def _run_prompt(
    app: App, agent: Agent, prompt: str, sigint: Sigint, images: list[Image] | None = None
) -> TurnResult:
    """A prompt, or a `/command args` line whose handler may submit prompts. The images
    go with the first message."""
    from uji.command_registry import parse
    from uji.lua.runtime import LuaError

    submitted: list[str] = []
    app.frontend.on_submit = lambda text: (
        agent.steering.enqueue(text) if agent.running else submitted.append(text)
    )
    from uji.command_registry import CommandError

    parsed = parse(prompt)
    command = app.commands.get(parsed[0]) if parsed else None
    if command is None and parsed and parsed[0].startswith("mcp__"):
        await app.mcp.wait_ready()  # an MCP prompt's command, its server still connecting
        command = app.commands.get(parsed[0])
    if command is None:
        submitted.append(prompt)
    else:
        try:
            if command.lua:
                await app.lua.call(command.handler, parsed[1] if parsed else "")
            else:
                await command.handler(parsed[1] if parsed else "")
        except (LuaError, CommandError) as e:
            return TurnResult(error=f"/{command.name}: {e}")
        if not submitted:
            return TurnResult(text="")
    result = TurnResult(text="")
    while submitted and not app.ui.quit_requested:  # uji.quit() ends the run after its code
        result = await _turn(app, agent, submitted.pop(0), sigint, images)
        images = None
        if result.error is not None:
            break
    return result


async def _turn(
    app: App, agent: Agent, prompt: str, sigint: Sigint, images: list[Image] | None = None
) -> TurnResult:
    """One turn in its own task, so an interrupt cancels the turn and not uji run."""
    task = asyncio.get_running_loop().create_task(agent.turn(prompt, images))

    def interrupt() -> bool:
        if task.done():
            return False
        task.cancel()
        return True

    app.frontend.on_interrupt = interrupt
    outer, sigint.target = sigint.target, task
    try:
        return await task
    except asyncio.CancelledError:
        # SIGINT reached uji run itself just before the turn began; awaiting the turn
        # passed it on, and the turn answers it like any interrupt.
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        if task.cancelled():
            return TurnResult(error="interrupted", interrupted=True)
        return await task
    finally:
        sigint.target = outer
