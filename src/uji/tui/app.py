"""The Textual app: the default screen of reference §6, top to bottom — transcript,
queued messages, activity ("Working (Ns)"), questions, command suggestions, the
composer, the bottom bar — and the one place keys are decided.

Every key goes through the keymap first (`on_event`), for the mode of what is on
top: a question, the suggestions, or the composer. What the keymap does not take goes
on to the focused widget as usual (typing, arrows in the text)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar, assert_never, cast

from textual import events
from textual.app import App as TextualApp
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.driver import Driver
from textual.widgets import Input, TextArea

from uji.events.stream import (
    AgentEvent,
    BudgetReached,
    CallDecided,
    CallSubject,
    Delta,
    MessageSaved,
    MessageSubmitted,
    Progress,
    QueueChanged,
    SessionCompacted,
    SessionTitled,
    StatusChanged,
    StreamCleared,
    Tasks,
    ToolStarted,
    TurnFinished,
)
from uji.paths import Paths
from uji.tui import render
from uji.tui.attachments import Attachments, Pastes
from uji.tui.composer import EDIT_ACTIONS, Composer, KillRing, Suggestions, edit
from uji.tui.conversation import Conversation
from uji.tui.draft import Draft
from uji.tui.entry import Entry
from uji.tui.focus import KeyRouter
from uji.tui.footer import Activity, NewBelow, QueueView, Status, StatusBar
from uji.tui.leaving import Leaving
from uji.tui.mentions import MentionPopup
from uji.tui.popups import Popups
from uji.tui.rendering import Rendering
from uji.tui.scrolling import Scrolling
from uji.tui.textual_keys import from_textual
from uji.tui.ticker import TICK, Ticker
from uji.tui.transcript import History, Transcript
from uji.ui.keys import Binding, Keymap

if TYPE_CHECKING:
    # Questions, panels and their answers load with the first one, behind the first frame.

    from uji.agent.approval import Answer, Question
    from uji.store.rows import Row
    from uji.tui.modals import Modal
    from uji.tui.panel_views import RowsView
    from uji.ui.bell import Reason, Style
    from uji.ui.form import Form, FormAnswer
    from uji.ui.ito import ToolbarEntry
    from uji.ui.port import FormCheck, Preview, Query
    from uji.wires.base import Image

T = TypeVar("T")
# Esc or Ctrl+C stops Lua from the input thread only once it has blocked the screen this
# long; Lua that ends sooner leaves the key to the screen, as usual.
BLOCKED = 0.25


class UjiApp(TextualApp[int], inherit_bindings=False):  # Ctrl+C/Ctrl+Q are ours
    ENABLE_COMMAND_PALETTE = False
    TITLE = "uji"
    # The composer has the focus from the first frame. Textual would focus the first
    # focusable widget (the transcript) until on_mount's focus() took effect, and keys
    # typed before the screen was ready went to the transcript, which dropped them.
    AUTO_FOCUS = "#composer"
    CSS = """
    Screen { layout: vertical; }
    #modals { height: auto; }
    #top-bar, #keyboard-bar, #bottom-bar { height: auto; }
    .-left-out { display: none !important; }
    """

    def __init__(
        self,
        paths: Paths,
        cwd: str | None = None,
        resume: str | None = None,
        latest: bool = False,
        prompt: str | None = None,
    ) -> None:
        super().__init__()
        self.conversation = Conversation(paths, cwd, self)
        self._data_dir = paths.data
        self._resume, self._latest = resume, latest
        self.ring = KillRing()
        self.attachments = Attachments()  # the draft's images, `[image #N]` in its text
        self.pastes = Pastes()  # the draft's long pastes: `[paste #N +L lines]` in it and the transcript
        # Typed before the config finished loading, or given on the command line (`uji "PROMPT"`).
        self._early: list[str] = [prompt] if prompt else []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._quitting = False
        self.last_typed = float("-inf")  # when a key last went to the composer (the question guard)
        self.key_time: float | None = None  # when the key being handled was read (None: not a key)
        # The screen's pieces, each with one job (they reach the widgets below through
        # `screen_view.ScreenView`).
        self.draft: Draft = Draft(self)
        self.popups: Popups = Popups(self, self.draft.submit)
        self.scrolling: Scrolling = Scrolling(self)
        self.leaving: Leaving = Leaving(self, lambda: self.ticker.tick(advance=False))
        self.ticker: Ticker = Ticker(self, self.leaving)
        self._spare_keymap = Keymap()  # the defaults, until the App exists
        self.transcript = Transcript(self.conversation.describe, id="transcript", classes="-hide-thinking")
        # render_message and the replaced views (uji.ui.<View>): Lua draws what they stand for.
        self.rendering = Rendering(self)
        self.views = self.rendering.views
        self.rendering.wire()
        self.new_below = NewBelow(id="new-below")
        self.queue_view = QueueView(id="queue")
        self.queue_view.custom = self.rendering.queued
        self.activity = Activity(id="activity")
        self.modals = Vertical(id="modals")
        self.suggestions = Suggestions(id="suggestions")
        # `@` completion: the project's files and the MCP servers' resources
        self.mentions = MentionPopup(self.popups.project_dir, self.popups.resources, id="mentions")
        self.composer = Composer(id="composer")
        self.status = StatusBar(id="status")
        # ito's toolbars (uji.ui.toolbar): empty until a config adds an item; ito loads then.
        self.top_bar = Vertical(id="top-bar")
        self.keyboard_bar = Vertical(id="keyboard-bar")
        self.bottom_bar = Vertical(id="bottom-bar")
        self._overlays: dict[int, Any] = {}  # uji.ui.overlay's panels by handle
        self._redraw_asked = False

    def get_driver_class(self) -> type[Driver]:
        from uji.tui.terminal import interrupting_driver

        # Called by Textual's __init__, before `conversation` exists: look it up late.
        return interrupting_driver(super().get_driver_class(), self._key_from_input_thread)

    def _key_from_input_thread(self, key: str) -> None:
        # Ctrl+C that stops a config looping as it loads quits at once (nothing to lose).
        if self.conversation.break_lua(BLOCKED) and key == "ctrl+c" and not self.conversation.ready.is_set():
            self.leaving.broke_lua = True

    def compose(self) -> ComposeResult:
        yield self.top_bar
        yield self.transcript
        yield self.new_below
        yield self.queue_view
        yield self.activity
        yield self.modals
        yield self.suggestions
        yield self.mentions
        yield self.keyboard_bar
        yield self.composer
        yield self.status
        yield self.bottom_bar

    def on_mount(self) -> None:
        self.composer.focus()
        self.status.show(Status(model="loading config…"))
        self.set_interval(TICK, self.ticker.tick)
        # Paint the first frame, then load the config (Lua, plugins) behind it.
        self.call_after_refresh(self.spawn, self._start())

    async def _start(self) -> None:
        self._keep_first_frame()
        try:
            await self.conversation.start(self._resume, self._latest)
        except Exception as e:
            self.show_notice(f"uji could not open the session: {e}")
            self.conversation.ready.set()  # what is typed now gets a clear answer
            return
        if self.conversation.app is not None:
            self.transcript.set_thinking(self.conversation.app.ui.show_thinking)
        early, self._early = self._early, []
        for text in early:
            self.submit_line(text)
        self.state_changed()

    def _keep_first_frame(self) -> None:
        """What Textual drew for a new session's first frame, kept for the next start to
        paint before Textual loads (uji.early_frame)."""
        import os
        import sys

        take = getattr(self._driver, "first_frame", None)
        out = sys.__stderr__  # the terminal Textual writes to, as text
        if take is None or out is None:
            return
        try:
            columns, rows = os.get_terminal_size(out.fileno())
        except OSError:
            return
        drawn = take(columns * rows)
        if not drawn or self._resume is not None or self._latest:
            return
        from uji.early_frame import keep

        keep(self._data_dir, columns, rows, drawn.encode(out.encoding or "utf-8", "backslashreplace"))

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run work in the background (commands, questions); a failure is a notice."""

        async def guarded() -> None:
            try:
                await coro
            except asyncio.CancelledError:
                raise
            except Exception as e:
                self.show_notice(f"{type(e).__name__}: {e}")

        task = asyncio.get_running_loop().create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def current_keymap(self) -> Keymap:
        """The UI port's keymap (the config's bindings), or the defaults until it exists."""
        app = self.conversation.app
        return app.ui.keymap if app is not None else self._spare_keymap

    # What the conversation asks of the screen -------------------------------------

    def show_notice(self, text: str) -> None:
        self.transcript.notice(text)

    def on_text_selected(self, event: events.TextSelected) -> None:
        """A mouse selection is copied: to the system clipboard, else through the terminal
        (OSC 52), and a flash says how many lines."""
        text = self.screen.get_selected_text()
        if text:
            self.spawn(self._copy_selection(text))

    async def _copy_selection(self, text: str) -> None:
        from uji.clipboard import ClipboardError, set_clipboard_text

        how = ""
        try:
            await set_clipboard_text(text)
        except ClipboardError:
            self.copy_to_clipboard(text)  # OSC 52: the terminal puts it on the clipboard
            how = " via the terminal"
        lines = len(text.rstrip("\n").split("\n"))
        self.ticker.flash(f"copied {lines} line{'' if lines == 1 else 's'}{how}")

    def agent_event(self, event: AgentEvent) -> None:
        t = self.transcript
        match event:
            case Delta(kind=kind, text=text):
                t.delta(kind, text)
            case MessageSaved(message=message):
                t.message(message.copy())
            case CallSubject(id=call_id, verb=verb, subject=subject):
                t.call(call_id, verb, subject)
            case CallDecided(id=call_id, verb=verb, subject=subject):
                t.call(call_id, verb, subject)
            case ToolStarted(id=call_id):
                t.tool_started(call_id)
            case Progress(id=call_id, line=line):
                t.progress(call_id, line)
            case Tasks(id=call_id, tasks=rows):
                t.progress(call_id, render.tasks_line(rows))
            case StreamCleared():
                t.stream_cleared()
            case QueueChanged():
                self.queue_view.show(self.conversation.queued())
            case TurnFinished():
                self.attention("turn_done", "the turn has ended")
            case MessageSubmitted() | StatusChanged() | SessionTitled() | SessionCompacted():
                pass  # for Lua handlers; the conversation redraws the state itself
            case BudgetReached():
                pass  # the question that follows says it (and a stop is saved as an error)
            case _:
                assert_never(event)  # a new kind of event: mypy asks what the screen does with it

    async def approve(self, question: Question) -> Answer:
        from uji.agent.approval import Answer
        from uji.tui.approval import ApprovalPanel, Reply

        panel = ApprovalPanel(
            question.title,
            question.body,
            question.preview,
            question.remember,
            tell=True,
            cwd=self._cwd(question),
        )
        reply = await self.ask(panel)
        if isinstance(reply, Reply) and reply.allow:
            return Answer(True, "user", remember=reply.kind if reply.kind != "yes" else None)
        if isinstance(reply, Reply) and reply.kind == "tell":
            return Answer(False, "user", f"the user said instead: {reply.text}")
        return Answer(False, "user", "user denied")

    def _cwd(self, question: Question) -> str | None:
        """The working directory, for a file tool's question (its scope reads relative)."""
        app = self.conversation.app
        tool = app.gate.registry.get(question.tool) if app is not None else None
        return app.cwd if app is not None and tool is not None and tool.path_subject else None

    def show_session(self, messages: list[Row], history: History | None = None) -> None:
        from uji.tui.screen_layout import arrange

        arrange(self)  # the config's uji.ui.Screen and Input, once it has loaded
        self.transcript.clear()
        self.transcript.load(messages, history)
        self.composer.sent.items = [m.get("text", "") for m in messages if m["type"] == "user"]
        self.queue_view.show([])

    def state_changed(self) -> None:
        self.ticker.refresh_status()
        self.ticker.tick(advance=False)

    def shell_started(self, command: str) -> Entry:
        self.ticker.shell_started()
        return self.transcript.add("shell", command=command, output="", code=None)

    def shell_output(self, entry: Entry, text: str) -> None:
        entry.data["output"] = (entry.data.get("output", "") + text)[-200_000:]
        self.transcript.update(entry)

    def shell_finished(self, entry: Entry, output: str, code: int) -> None:
        entry.data.update(output=output, code=code)
        self.transcript.update(entry)

    # uji.ui and uji.input (host.Surface, behind the UI port) --------------------------------------------

    async def ask(self, modal: Modal) -> Any:
        """Show a question above the composer and wait for its answer."""
        self.suggestions.close()
        self.mentions.close()
        await self.modals.mount(modal)
        self.attention("question", "a question waits for you")
        modal.focus_field()
        try:
            return await modal.answer
        finally:
            modal.remove()
            self.call_after_refresh(self._focus_top)

    def attention(self, reason: Reason, text: str) -> None:
        """A turn ended or a question waits: when the terminal is not focused (focus
        reporting), the bell that `uji.ui.configure{notify}` says (`uji.ui.bell`)."""
        app = self.conversation.app
        if self.app_focus or app is None:
            return
        setting = app.ui.notify
        if isinstance(setting, str):
            from uji.ui.bell import STYLES

            self._ring(next((s for s in STYLES if s == setting), "auto"), text)
            return

        async def ask_lua() -> None:
            from uji.ui.bell import STYLES

            result = await app.lua.call(setting, reason, text)
            style = next((s for s in STYLES if result and result[0] == s), None)
            if style is not None:
                self._ring(style, text)

        self.spawn(ask_lua())

    def _ring(self, style: Style, text: str) -> None:
        from uji.ui.bell import escape

        data = escape(style, "uji", text)
        if data and self._driver is not None:
            self._driver.write(data)
            self._driver.flush()

    def _focus_top(self) -> None:
        top = self.top_modal()
        if top is not None:
            top.focus_field()
        else:
            self.composer.focus()

    def top_modal(self) -> Modal | None:
        if not self.modals.children:
            return None  # on each key: nothing to import for the question panels
        from uji.tui.modals import Modal

        for child in reversed(self.modals.children):
            if isinstance(child, Modal) and not child.answer.done():
                return child
        return None

    async def select(
        self,
        title: str,
        labels: list[str],
        current: int | None = None,
        on_move: Callable[[int], None] | None = None,
        rows: RowsView | None = None,
    ) -> int | None:
        from uji.tui.modals import SelectPanel

        return cast("int | None", await self.ask(SelectPanel(title, labels, current, on_move, rows)))

    async def pick(
        self, title: str, labels: list[str], current: int | None, preview: Preview | None, query: Query | None
    ) -> tuple[int, int] | None:
        from uji.tui.modals import PickPanel

        return cast(
            "tuple[int, int] | None", await self.ask(PickPanel(title, labels, current, preview, query))
        )

    async def prompt(self, title: str, value: str = "", hidden: bool = False) -> str | None:
        from uji.tui.modals import PromptPanel

        return cast("str | None", await self.ask(PromptPanel(title, value, hidden)))

    async def confirm(
        self,
        title: str,
        body: str,
        preview: str | None = None,
        labels: tuple[str, str] | None = None,
        asked_for: bool = False,
    ) -> bool:
        """A yes/no question (y, n or Esc). `asked_for`: by the user's own command, so
        keys answer it at once (see ApprovalPanel)."""
        from uji.tui.approval import ApprovalPanel, Reply

        reply = await self.ask(ApprovalPanel(title, body, preview, labels=labels, asked_for=asked_for))
        return isinstance(reply, Reply) and reply.allow

    async def form(self, form: Form, check: FormCheck) -> FormAnswer:
        """An MCP server's question (tui/form.py); dismissed (quitting too): cancel."""
        from uji.tui.form import FormPanel
        from uji.ui.form import FormAnswer

        answer = await self.ask(FormPanel(form, check))
        return answer if isinstance(answer, FormAnswer) else FormAnswer("cancel")

    def set_thinking(self, shown: bool) -> None:
        self.transcript.set_thinking(shown)

    def input_get(self) -> str:
        return self.composer.text

    def input_set(self, text: str) -> None:
        self.composer.set_text(text)
        self.composer.focus()

    def screen_size(self) -> tuple[int, int]:
        return self.size.width, self.size.height

    def attach_to_composer(self, image: Image) -> None:
        """uji.input.attach: the image goes in the draft as `[image #N]`."""
        self.composer.insert(self.attachments.add(image))

    def run_suspended(self, argv: list[str]) -> int:
        """uji.ui.exec: the screen gives the terminal to a program until it exits."""
        import subprocess

        from textual.app import SuspendNotSupported

        try:
            with self.suspend():
                try:
                    return subprocess.run(argv).returncode
                except OSError as e:
                    print(f"uji.ui.exec: {argv[0]}: {e.strerror or e}")
                    return 127
        except SuspendNotSupported:  # no terminal to hand over (a headless test): run it unseen
            return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True).returncode

    def take_terminal(self) -> Callable[[], None]:
        """uji.tty.open: the screen stops reading keys and drawing until the function
        returned gives the terminal back (then it draws itself again)."""
        from textual.app import SuspendNotSupported

        held = self.suspend()
        try:
            held.__enter__()
        except SuspendNotSupported:  # no terminal of our own (a headless test)
            return lambda: None

        def give_back() -> None:
            held.__exit__(None, None, None)
            self.refresh(layout=True)

        return give_back

    def request_quit(self) -> None:
        self.spawn(self.quit())

    # ito: toolbars, overlays, themes (uji.tui.ito) -----------------------------------

    def ito_colors(self) -> dict[str, str]:
        """The theme's colours by name, for views that name them ("accent", "muted")."""
        return {
            "text": render.TEXT, "muted": render.MUTED, "code": render.CODE, "accent": render.ACCENT,
            "user_bg": render.USER_BG, "error": render.ERROR, "notice": render.NOTICE,
            "selected_bg": render.SELECTED_BG,
        }  # fmt: skip

    def toolbars_changed(self, entries: list[ToolbarEntry]) -> None:
        if not entries and not self.top_bar.children and not self.bottom_bar.children:
            return
        from uji.tui.ito.view import ToolbarRow

        for bar, placements, rows in (
            (self.top_bar, ("top_bar_leading", "top_bar_trailing"), 1),
            (self.keyboard_bar, ("keyboard",), None),
            (self.bottom_bar, ("bottom_bar",), 1),
        ):
            if not bar.children:
                bar.mount(ToolbarRow(placements, self.show_notice, self.ito_colors, rows))
            row = bar.children[0]
            if isinstance(row, ToolbarRow):
                row.show(entries)
        # The statusline plugin's bar takes the place of the built-in status line; other
        # bottom_bar items (a badge, uji.status segments) draw in the row under it.
        self.status.display = not any(
            e.placement == "bottom_bar" and e.item_id == "statusline" for e in entries
        )

    def ito_redraw(self) -> None:
        """A state changed: the ito views draw again, once per screen refresh."""
        if self._redraw_asked:
            return
        self._redraw_asked = True

        def redraw() -> None:
            self._redraw_asked = False
            from uji.tui.ito.view import ItoView

            for view in self.query(ItoView):
                view.redraw()

        self.call_after_refresh(redraw)

    def open_overlay(self, handle: int, source: Any, floating: bool) -> asyncio.Future[None]:
        from uji.tui import modals
        from uji.tui.ito.view import OverlayPanel

        def rows() -> int:
            return max(3, int(self.size.height * (modals.FLOAT[1] if floating else 0.5)) - 2)

        panel = OverlayPanel(handle, source, floating, self.show_notice, self.ito_colors, rows)
        self._overlays[handle] = panel
        closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def show() -> None:
            try:
                await self.ask(panel)
            finally:
                self._overlays.pop(handle, None)
                if not closed.done():
                    closed.set_result(None)

        self.spawn(show())
        return closed

    def close_overlay(self, handle: int) -> None:
        panel = self._overlays.get(handle)
        if panel is not None:
            panel.finish(None)

    def apply_theme(self, theme: Any) -> None:
        """uji.ui.configure{theme}: colours, symbols, strings and limits, then every entry
        and bar drawn again."""
        from uji.tui.theme import apply

        apply(theme)
        from uji.tui import composer

        self.composer.styles.max_height = composer.INPUT_ROWS + 2  # with its rules above and below
        self.suggestions.styles.max_height = composer.SUGGEST_ROWS + 2
        background = theme.color("background", "")
        if background:
            self.screen.styles.background = background
        else:
            self.screen.styles.clear_rule("background")
        for entry in self.transcript.entries:
            self.transcript.update(entry)
        self.ticker.refresh_status()
        self.ito_redraw()
        if self.conversation.ready.is_set():
            from uji.tui.screen_layout import arrange

            arrange(self)

    def request_reload(self) -> None:
        from uji.tui import screen_commands

        self.spawn(screen_commands.run(self, "reload", ""))

    # Keys ---------------------------------------------------------------------------

    def mode(self) -> str:
        top = self.top_modal()
        if top is not None:
            return top.mode
        if self.suggestions.open or self.mentions.open:
            return "suggest"
        return "normal"

    async def on_event(self, event: events.Event) -> None:
        # Our focusable widgets route keys themselves (see focus.py); anything else
        # focused (or nothing) is routed here.
        if (
            isinstance(event, events.Key)
            and not event.is_forwarded
            and not isinstance(self.focused, KeyRouter)
            and self.route_key(event)
        ):
            return
        await super().on_event(event)

    def route_key(self, event: events.Key) -> bool:
        """True when the keymap took the key."""
        self.key_time = event.time
        try:
            return self._route_key(event)
        finally:
            self.key_time = None

    def _route_key(self, event: events.Key) -> bool:
        app = self.conversation.app
        if app is not None and app.ui.capture is not None:
            from uji.tui.capture import deliver

            deliver(app, event.key, event.character)  # uji.input.capture: every key goes there
            return True
        mode = self.mode()
        if mode == "confirm":
            from uji.tui.approval import ApprovalPanel

            top = self.top_modal()
            took = top.takes(event.key, event.time) if isinstance(top, ApprovalPanel) else "answer"
            if took == "moved":
                return True  # the user moved to a held question: the key does nothing else
            if took == "typing":
                # Typed before the question appeared, or while it is held: not an answer.
                # It goes where it would have gone without the question.
                mode = "normal"
        if mode in ("normal", "suggest"):
            self.last_typed = max(self.last_typed, event.time)  # a question appearing now is held
        found = self.current_keymap().lookup(mode, from_textual(event.key, event.character))
        if found is None:
            if mode == "confirm":
                # A question owns the keyboard: stray typing must not reach the composer.
                return event.is_printable
            if (
                mode == "normal"
                and event.is_printable
                and event.character
                and self.focused is not self.composer
            ):
                # Typing while the transcript has focus still goes to the composer.
                self.composer.focus()
                self.composer.insert(event.character)
                return True
            return False
        if isinstance(found, str):
            self.run_named(found)
        elif found.kind == "action":
            self.run_named(found.value)
        elif found.kind == "command":
            from uji.tui import screen_commands

            self.spawn(screen_commands.run(self, found.value, ""))
        elif found.kind == "function":
            app = self.conversation.app
            if app is not None:
                app.host.spawn(found.value)
        return True  # "unbound" keys do nothing at all

    def run_named(self, action: str) -> None:
        """One of the reference's action names (or an implicit key's)."""
        if action in EDIT_ACTIONS:
            target = self.active_field()
            if target is not None:
                edit(target, action, self.ring)
            return
        if action.startswith("confirm_"):  # a question's keys (y, a, A, n, t, Tab)
            self.popups.confirm(action)
            return
        app = self.conversation.app
        if app is not None and action in app.ui.actions:  # a config's (uji.action.add)
            app.host.spawn(app.ui.actions[action])
            return
        handler = KEY_ACTIONS.get(action)
        if handler is not None:
            handler(self)

    def active_field(self) -> TextArea | Input | None:
        top = self.top_modal()
        if top is not None:
            return top.field()
        return self.composer

    # The composer -------------------------------------------------------------------

    async def paste_into_composer(self, text: str) -> bool:
        """A paste, offered to the draft first (composer.py): an image or a long one."""
        return await self.draft.paste(text)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is self.composer:
            if not self.composer.sent.browsing:  # the draft's markers come back with it
                self.attachments.prune(self.composer.text)  # a deleted marker drops its image
                self.pastes.prune(self.composer.text)  # and its paste
            self.popups.update_suggestions()
            self.popups.update_mentions()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if event.text_area is self.composer and (self.mentions.open or "@" in self.composer.text):
            self.popups.update_mentions()

    def submit_line(self, text: str, images: list[Image] | None = None, shown: str | None = None) -> None:
        """A line from the composer (or uji.session.submit): a command, `!`, or a message
        (with the images attached to it; `shown`: the transcript's text of it)."""
        conv = self.conversation
        if not conv.ready.is_set():
            self._early.append(text)
            self.show_notice("still loading the config; this goes out once it has loaded")
            return
        if text.startswith("!"):
            command = text[1:].strip()
            if command:
                conv.run_shell(command)
            return
        from uji.command_registry import parse as parse_command

        parsed = parse_command(text.strip())
        if parsed is not None:
            from uji.tui import screen_commands  # the slash commands (and /login's) load with the first one

            self.spawn(screen_commands.run(self, *parsed))
            return
        conv.submit(text, images, shown)
        if conv.working:
            self.queue_view.show(conv.queued())
        self.transcript.follow()

    # Quitting -----------------------------------------------------------------------

    async def quit(self) -> None:
        """Ctrl+C or /quit: before_quit, stop the turn, close, restore the terminal."""
        if self._quitting:
            return
        self._quitting = True
        self.leaving.resume_hint = self.conversation.resumable()
        for modal in list(self.modals.children):
            from uji.tui.modals import Modal

            if isinstance(modal, Modal):
                modal.finish(None)
        leaving = await self.leaving.leave_worktree()
        await self.conversation.quit()
        if leaving is not None:
            await self.leaving.left_worktree(*leaving)
        for task in list(self._tasks):
            if task is not asyncio.current_task():
                task.cancel()
        with contextlib.suppress(Exception):
            self.exit(0)


def _interrupt(screen: UjiApp) -> None:
    """Esc: stop the running `!` command or turn; the draft stays as it is."""
    screen.conversation.interrupt()


def _toggle_thinking(screen: UjiApp) -> None:
    app = screen.conversation.app
    if app is not None:
        app.ui.toggle_thinking()


def _cycle_mode(screen: UjiApp) -> None:
    """Shift+Tab: the gate's next mode (ask → accept edits → plan → modes a config added)."""
    app = screen.conversation.app
    if app is None:
        return
    from uji.lua.api.mode import switch_mode

    switch_mode(app.host, app.gate, app.gate.modes.next_name())
    screen.state_changed()


# The keymap's actions the screen runs, by name (`uji.ui.keys.ACTIONS` less the edit
# actions, which go to the field being typed in, and the `confirm_` ones, a question's):
# a table mypy checks, which a test keeps whole.
KEY_ACTIONS: dict[str, Callable[[UjiApp], None]] = {
    "nothing": lambda screen: None,
    "quit": lambda screen: screen.request_quit(),
    "clear_or_quit": lambda screen: screen.leaving.clear_or_quit(),
    "interrupt": _interrupt,
    "toggle_thinking": _toggle_thinking,
    "submit": lambda screen: screen.draft.submit(),
    "clear_input": lambda screen: screen.draft.clear(),
    "paste_image": lambda screen: screen.draft.paste_image(),
    "history_prev": lambda screen: screen.draft.history_prev(),
    "history_next": lambda screen: screen.draft.history_next(),
    "history_up": lambda screen: screen.draft.history_up(),
    "history_down": lambda screen: screen.draft.history_down(),
    "history_search": lambda screen: screen.draft.history_search(),
    "cycle_mode": _cycle_mode,
    "expand_output": lambda screen: screen.scrolling.expand_output(),
    "modal_up": lambda screen: screen.popups.up(),
    "modal_down": lambda screen: screen.popups.down(),
    "modal_accept": lambda screen: screen.popups.accept(),
    "modal_cancel": lambda screen: screen.popups.cancel(),
    "suggest_complete": lambda screen: screen.popups.complete(),
    "scroll_up": lambda screen: screen.scrolling.up(),
    "scroll_down": lambda screen: screen.scrolling.down(),
    "page_up": lambda screen: screen.scrolling.page_up(),
    "page_down": lambda screen: screen.scrolling.page_down(),
    "scroll_top": lambda screen: screen.scrolling.top(),
    "scroll_bottom": lambda screen: screen.scrolling.bottom(),
}

__all__ = ["KEY_ACTIONS", "Binding", "UjiApp"]
