"""The uji side of the screen: the App with its config, the open session, its agent,
the turn being run, the queue and `!` commands. The Textual app shows what this does;
this module holds no widgets, so its rules (what is refused while a turn runs, what
starts the next turn) are in one place."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Protocol

from uji.events.stream import (
    AgentEvent,
    BeforeQuit,
    QueueChanged,
    SessionCreated,
    SessionResumed,
    ShellFinished,
    ShellStarted,
)
from uji.paths import Paths
from uji.tui.host import ScreenUi, Surface
from uji.tui.shell import ShellRun

if TYPE_CHECKING:
    # The App and the Agent are imported when the config loads, behind the first frame.
    from uji.agent.approval import Answer, Question
    from uji.agent.loop import Agent
    from uji.app import App
    from uji.notices import Notice
    from uji.restart import Handover
    from uji.store.rows import Row
    from uji.tui.entry import Entry
    from uji.tui.transcript import History
    from uji.wires.base import Image

BUSY = "finish or interrupt the turn first (Esc)"
# How long after the screen is ready for input MCP servers start connecting (seconds).
MCP_AFTER_READY = 0.5


class View(Surface, Protocol):
    """What the conversation asks of the screen."""

    def show_notice(self, text: str) -> None: ...

    def agent_event(self, event: AgentEvent) -> None: ...

    async def approve(self, question: Question) -> Answer: ...

    def show_session(self, messages: list[Row], history: History | None = None) -> None: ...

    def state_changed(self) -> None: ...

    def shell_started(self, command: str) -> Entry: ...

    def shell_output(self, entry: Entry, text: str) -> None: ...

    def shell_finished(self, entry: Entry, output: str, code: int) -> None: ...

    def submit_line(self, text: str) -> None: ...


class Conversation:
    def __init__(self, paths: Paths, cwd: str | None, view: View) -> None:
        self.paths = paths
        self.cwd = cwd
        self.view = view
        self.app: App | None = None
        self.agent: Agent | None = None
        self.session_id: str | None = None
        self.turn: asyncio.Task[Any] | None = None
        self.shell: ShellRun | None = None
        self._shell_task: asyncio.Task[Any] | None = None
        self.ready = asyncio.Event()
        self._probe: asyncio.Task[None] | None = None
        self._held: list[str] = []  # notices from loading the config, shown once the session is
        self._loading: App | None = None  # the App whose config is loading
        # The context estimate and what it was made of: (agent, its history list, length, used).
        self._estimate: tuple[Agent, list[Row], int, int | None] | None = None

    # Start-up -------------------------------------------------------------------

    async def start(self, resume: str | None = None, latest: bool = False) -> None:
        """Load the config, then open a new session, the latest one, or `resume`."""
        self.app = await self._make_app()
        store = self.app.store
        session_id = resume
        if latest:
            session_id = store.latest_session(self.app.cwd)
            if session_id is None:
                self.view.show_notice("no earlier session in this directory; starting a new one")
        if session_id is not None:
            self._open(session_id, resumed=True)
        else:
            self._open(self._create_session(), resumed=False)
        self.ready.set()
        self._release_mcp(self.app)

    def _release_mcp(self, app: App) -> None:
        """MCP servers, held by _make_app, connect once the screen has drawn itself ready
        for input: the SDK's import in a thread would slow those frames (it holds the GIL
        much of the time). A turn sent before then releases them at once."""
        asyncio.get_running_loop().call_later(MCP_AFTER_READY, app.mcp.release)

    def _new_app(self, notice: Notice, handover: Handover | None) -> App:
        from uji.app import App

        # The port's notices go where the App's go (held back while the config loads).
        app = App(
            self.paths,
            self.cwd,
            notice=notice,
            ui=ScreenUi(self.view, lambda text: app.notice(text)),
            handover=handover,
        )
        return app

    async def _make_app(self, handover: Handover | None = None) -> App:
        # Notices from loading the config are held back and shown after the session,
        # which replaces what the transcript showed.
        held: list[str] = []
        while True:
            app = self._new_app(held.append, handover)
            self._loading = app
            app.mcp.hold()  # MCP servers connect once the screen takes input (start, reload)
            app.mcp.eager = True  # and at once, even those whose tools are known: /mcp shows their state
            try:
                await app.load_config()
            finally:
                self._loading = None
            asked = app.ui.restart_requested  # while the config loaded: uji.os.restart, override packs
            if asked is None or asked.args is not None or app.ui.quit_requested:
                break
            await app.close()
            handover = asked.handover
        self._held = held
        app.set_notice_sink(self.view.show_notice)
        # uji.session.submit and interrupt: as if typed, and as Esc.
        app.frontend.on_submit = self.view.submit_line
        app.frontend.on_interrupt = self.interrupt
        app.frontend.on_rewound = self.rewound
        if app.models.provider_id is None:  # no model chosen: a local server, if one runs
            self._probe = asyncio.get_running_loop().create_task(self._find_local_server(app))
        return app

    async def _find_local_server(self, app: App) -> None:
        picked = await app.models.find_local_server()
        if picked is not None:
            app.notice(picked)
            self.view.state_changed()

    def _create_session(self) -> str:
        assert self.app is not None
        session_id = self.app.store.create_session(self.app.cwd, "untitled")
        self.app.events.publish(SessionCreated(session_id))
        return session_id

    def _open(self, session_id: str, resumed: bool) -> None:
        app = self.app
        assert app is not None
        from uji.agent.loop import Agent, TurnOptions
        from uji.tui.transcript import OPEN_MESSAGES

        messages: list[Row] = []
        store = app.store
        history = self._history(session_id)
        if resumed:
            store.repair(session_id)  # answer calls a crash left open
            messages = history.read(None, OPEN_MESSAGES)
            app.events.publish(SessionResumed(session_id))
        if session_id != self.session_id:
            app.gate.policy.remembered.forget("session")  # "allow for the session" ends with it
        self.session_id = session_id
        # The screen titles sessions with a side request; `uji run` does not.
        options = TurnOptions(auto_title=True, questions_wait=True)
        self.agent = Agent(app.turn_services(), session_id, self.view.agent_event, self.view.approve, options)
        app.frontend.agent = self.agent
        self.view.show_session(messages, history)
        held, self._held = self._held, []
        for text in held:
            self.view.show_notice(text)
        self.view.state_changed()

    def _history(self, session_id: str) -> History:
        """The screen reads the newest messages now and older ones when scrolled to."""
        from uji.tui.transcript import History

        assert self.app is not None
        store = self.app.store
        return History(
            page=lambda before, limit: store.messages(session_id, before=before, limit=limit),
            count=lambda before: store.count(session_id, before=before),
        )

    def rewound(self, prompt: str | None) -> None:
        """After a rewind: the transcript read again; the rewound prompt back in the
        composer when the conversation went back and the draft is empty."""
        from uji.tui.transcript import OPEN_MESSAGES

        if self.session_id is None:
            return
        history = self._history(self.session_id)
        self.view.show_session(history.read(None, OPEN_MESSAGES), history)
        if prompt and self.app is not None and not self.app.ui.input_get():
            self.app.ui.input_set(prompt)
        self.view.state_changed()

    # State ----------------------------------------------------------------------

    @property
    def working(self) -> bool:
        return self.turn is not None and not self.turn.done()

    @property
    def shell_running(self) -> bool:
        return self._shell_task is not None and not self._shell_task.done()

    def queued(self) -> list[str]:
        return self.agent.steering.texts() if self.agent else []

    def elapsed(self) -> float:
        elapsed = self.agent.elapsed() if self.agent else None
        return elapsed or 0.0

    def context(self) -> tuple[int | None, int | None]:
        """(tokens used, window): the agent's estimate, else the last reported input.

        The estimate goes over the session's live messages, thousands in a long one, and
        the bottom bar asks twice a second, while an answer streams too: it is kept until
        the agent's history changes (a message saved, a rewind or a compaction: a longer
        list, or another one)."""
        agent, app = self.agent, self.app
        if agent is None or app is None:
            return None, None
        history = agent.history
        kept = self._estimate
        if kept is not None and kept[0] is agent and kept[1] is history and kept[2] == len(history):
            return kept[3], agent.meter.budget().window
        figures = agent.meter.context()
        self._estimate = (agent, history, len(history), figures.get("used"))
        return figures.get("used"), figures.get("window")

    def describe(self, name: str, arguments: str) -> tuple[str, str]:
        """A call's verb and subject before its `call` event says them (and in history)."""
        from uji.tui.render import describe_arguments

        tool = self.app.gate.registry.get(name) if self.app else None
        if tool is None:
            return name, describe_arguments(arguments)
        verb = tool.verb or tool.name
        import json  # with the first call: not needed before the first frame

        try:
            args = json.loads(arguments) if arguments else {}
        except ValueError:
            args = None
        hint = tool.subject_hint(args if isinstance(args, dict) else None)
        return verb, describe_arguments(arguments) if hint is None else hint

    # Input ------------------------------------------------------------------------

    def submit(self, text: str, images: list[Image] | None = None, shown: str | None = None) -> None:
        """A message for the model (with the images attached to it): now, or queued
        while a turn runs. `shown`: the transcript's text of it (pastes as markers)."""
        if self.agent is None:
            self.view.show_notice("no session is open (see the error above); /reload tries again")
            return
        if self.working:
            self.agent.steering.enqueue(text, images, shown)
            return
        self._start_turn(text, images, shown)

    def _start_turn(self, text: str, images: list[Image] | None = None, shown: str | None = None) -> None:
        assert self.agent is not None
        if self.app is not None:  # a one-shot run taken up here becomes a conversation
            self.app.store.set_kind(self.agent.session_id, "conversation")
        self.turn = asyncio.get_running_loop().create_task(self._run_turn(self.agent, text, images, shown))
        self.view.state_changed()

    async def _run_turn(
        self, agent: Agent, text: str, images: list[Image] | None = None, shown: str | None = None
    ) -> None:
        try:
            result = await agent.turn(text, images, shown)
            if result.unsent and self.app is not None and not self.app.ui.input_get():
                self.app.ui.input_set(text)  # not sent (a resource it names): back in the draft
        except Exception as e:  # a bug must not take the screen down with it
            self.view.show_notice(f"the turn failed: {type(e).__name__}: {e}")
        finally:
            self.view.state_changed()
        # Typed too late to be steered in: it starts the next turn.
        queue = agent.steering.queue
        if agent is self.agent and queue:
            item = queue.pop(0)
            self.view.agent_event(QueueChanged(len(queue)))
            self._start_turn(item["text"], item.get("images"), item.get("shown"))

    def interrupt(self) -> bool:
        """Esc on an empty composer: a running `!` command first, else the turn."""
        if self.shell_running and self.shell is not None:
            self.shell.kill()
            return True
        if self.working and self.turn is not None:
            self.turn.cancel()
            return True
        return False

    def resumable(self) -> str | None:
        """The session's id if it has messages (worth resuming), else None."""
        app, session_id = self.app, self.session_id
        if app is None or session_id is None:
            return None
        try:
            return session_id if app.store.messages(session_id) else None
        except Exception:
            return None

    def break_lua(self, after: float = 0.0) -> bool:
        """From the terminal's input thread or a signal handler: stop the Lua code that
        runs now (a config file, a hook or a tool that loops and blocks the screen), if
        it has run for `after` seconds."""
        app = self.app or self._loading
        lua = app.host.loaded if app is not None else None
        return lua is not None and lua.request_break(after)

    # ! lines ------------------------------------------------------------------------

    def run_shell(self, command: str) -> None:
        if self.shell_running:
            self.view.show_notice("a shell command is already running (Esc stops it)")
            return
        assert self.app is not None
        entry = self.view.shell_started(command)
        run = ShellRun(command, self.app.cwd, lambda text: self.view.shell_output(entry, text))
        self.shell = run
        self._shell_task = asyncio.get_running_loop().create_task(self._shell(run, entry))
        self.view.state_changed()

    async def _shell(self, run: ShellRun, entry: Entry) -> None:
        app, agent = self.app, self.agent
        assert app is not None and agent is not None
        app.events.publish(ShellStarted(run.command))
        output, code = await run.run()
        self.view.shell_finished(entry, output, code)
        # Saved for the record; `for_model` never sends shell messages.
        app.store.append(
            agent.session_id, {"type": "shell", "command": run.command, "output": output, "code": code}
        )
        app.events.publish(ShellFinished(run.command, code))
        self.shell = None
        self.view.state_changed()

    # Sessions -----------------------------------------------------------------------

    def refusal(self) -> str | None:
        if self.working:
            return BUSY
        if self.shell_running:
            return "a shell command is running (Esc stops it)"
        if self.agent is not None and self.agent.steering.queue:
            return "messages are still queued"
        return None

    def new_session(self) -> str | None:
        problem = self.refusal()
        if problem:
            return problem
        self._open(self._create_session(), resumed=False)
        return None

    def resume(self, session_id: str) -> str | None:
        problem = self.refusal()
        if problem:
            return problem
        self._open(session_id, resumed=True)
        return None

    async def move(self, directory: str) -> str | None:
        """The session goes on in `directory` (a worktree, `/worktree`): saved as that
        directory's, with a fresh App there (its tools, AGENTS.md, checkpoints, sandbox)."""
        import os

        problem = self.refusal()
        if problem:
            return problem
        assert self.app is not None and self.session_id is not None
        self.app.store.move_session(self.session_id, directory)
        self.cwd = directory
        os.chdir(directory)
        os.environ["PWD"] = directory  # the shells of the model's commands start there too
        return await self.reload(notice=None)

    async def reload(self, notice: str | None = "reloaded the config") -> str | None:
        """A fresh App and config on the same session (the screen keeps the draft)."""
        problem = self.refusal()
        if problem:
            return problem
        old = self.app
        assert old is not None and self.session_id is not None
        session_id = self.session_id
        shown = old.ui.show_thinking
        asked = old.ui.restart_requested  # uji.os.restart: what it hands the new start
        await old.close()
        self.app = await self._make_app(asked.handover if asked is not None else None)
        self.app.ui.show_thinking = shown
        for rule in old.gate.policy.remembered.rules:  # the session goes on, and so do its approvals
            if rule.scope == "session":
                self.app.gate.policy.remembered.add(rule.tool, rule.subject, rule.scope, rule.origin)
        self._open(session_id, resumed=True)
        self._release_mcp(self.app)
        if notice:
            self.view.show_notice(notice)
        return None

    async def quit(self) -> None:
        """before_quit, then stop whatever runs and close the App."""
        app = self.app
        if app is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(app.events.deliver(BeforeQuit()), 5)
        if self.shell is not None:
            self.shell.kill()
        for task in (self.turn, self._shell_task):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, 5)
        if app is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(app.close(), 5)
