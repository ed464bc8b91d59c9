"""`uji run PROMPT`: one turn with nobody at the screen, plain or as JSON events."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from typing import Any

from uji.agent.approval import Answer, Question
from uji.agent.loop import Agent, TurnOptions, TurnResult
from uji.app import App
from uji.paths import Paths

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def title_from_prompt(prompt: str) -> str:
    for line in prompt.splitlines():
        line = line.strip()
        if line:
            return line[:60]
    return "untitled"


class Printer:
    """Plain mode: the final text on stdout, notices on stderr."""

    def __init__(self, out: Any = None, err: Any = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def notice(self, text: str) -> None:
        print(f"uji: {text}", file=self.err, flush=True)

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        pass

    def session(self, session_id: str) -> None:
        pass

    def done(self, result: TurnResult) -> None:
        if result.error is not None:
            print(f"uji: error: {result.error}", file=self.err, flush=True)
        elif result.text:
            self.out.write(result.text if result.text.endswith("\n") else result.text + "\n")
            self.out.flush()


class JsonPrinter(Printer):
    """--json: one object per line on stdout."""

    EVENTS = frozenset({"message", "call", "progress"})

    def _line(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def notice(self, text: str) -> None:
        self._line({"type": "notice", "text": text})

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "message":
            self._line({"type": "message", "message": data})
        elif kind in self.EVENTS:
            self._line({"type": kind, **data})

    def session(self, session_id: str) -> None:
        self._line({"type": "session", "id": session_id})

    def done(self, result: TurnResult) -> None:
        out: dict[str, Any] = {"type": "done"}
        if result.error is not None:
            out["error"] = result.error
        else:
            out["text"] = result.text or ""
        out["usage"] = result.usage.as_dict()
        self._line(out)
        if result.error is not None:
            print(f"uji: error: {result.error}", file=self.err, flush=True)


def auto_approver(on_ask: str) -> Any:
    async def approve(question: Question) -> Answer:
        if on_ask == "allow":
            return Answer(True, "auto")
        return Answer(False, "auto", "nobody is here to approve this call (uji run --on-ask deny)")

    return approve


async def run(paths: Paths, opts: Any) -> int:
    printer: Printer = JsonPrinter() if opts.json else Printer()
    app = App(paths, notice=printer.notice)
    try:
        await app.load_config()
        if opts.model:
            provider, _, model = opts.model.partition("/")
            if not provider or not model:
                print("uji: error: --model takes PROVIDER/MODEL", file=sys.stderr)
                return EXIT_USAGE
            try:
                app.use_model(provider, model, save=False)
            except ValueError as e:
                print(f"uji: error: --model: {e}", file=sys.stderr)
                return EXIT_USAGE
        if opts.effort:
            app.effort = opts.effort
        tools = [t for t in opts.tools.split(",") if t] if opts.tools is not None else None
        prompt = " ".join(opts.prompt)
        store = app.store
        if opts.parent and store.get_session(opts.parent) is None:
            print(f"uji: error: --parent: no session {opts.parent}", file=sys.stderr)
            return EXIT_USAGE
        session_id = store.create_session(
            app.cwd, opts.title or title_from_prompt(prompt), parent=opts.parent
        )
        printer.session(session_id)
        app.events.emit("session_created", {"session_id": session_id})
        agent = Agent(
            app,
            session_id,
            printer.emit,
            auto_approver(opts.on_ask),
            TurnOptions(tools=tools, append_prompt=opts.append_prompt),
        )
        result = await _turn_with_sigint(app, agent, prompt)
        printer.done(result)
        if result.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_FAILED if result.error is not None else EXIT_OK
    finally:
        await app.close()


async def _turn_with_sigint(app: App, agent: Agent, prompt: str) -> TurnResult:
    loop = asyncio.get_running_loop()
    task = loop.create_task(agent.turn(prompt))

    def on_sigint(signum: int, frame: Any) -> None:
        # A plain handler (not loop.add_signal_handler) also runs while Lua loops, when
        # the interrupt hook calls into Python; the turn is cancelled on the loop.
        if app._lua is not None:
            app._lua.break_requested = True
        loop.call_soon_threadsafe(task.cancel)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        return await task
    finally:
        signal.signal(signal.SIGINT, previous)
