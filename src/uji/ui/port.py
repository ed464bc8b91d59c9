"""The UI port: what the Lua bridge (`uji.keymap`, `uji.ui`, `uji.input`) talks to.

A frontend implements it and hands it to the `App` it builds: the terminal UI
(`uji.tui.host.ScreenUi`) puts the questions on the screen; `uji run` uses
`uji.ui.headless.HeadlessUi`, which has nobody to ask. Either way the port keeps the
state the Lua side sets — the keymap, whether thinking is shown — so a config's
bindings are recorded (and listed) with or without a screen, and the screen reads them
from the port once it is there.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

from uji.notices import Notice

if TYPE_CHECKING:
    from uji.restart import Restart
    from uji.ui.form import Form, FormAnswer, Value
    from uji.ui.ito import ItoSource, Node, Painted, Theme, ToolbarEntry
    from uji.ui.keys import Keymap
    from uji.wires.base import Image

# Checks a form's values before it is sent: the problem to show, or None.
FormCheck = Callable[[dict[str, "Value"]], str | None]

T = TypeVar("T")
P = ParamSpec("P")

# uji.ui.pick's callbacks: the preview lines of a list's label, and a query's new list.
Preview = Callable[[int, int], Awaitable[list[str]]]
Query = Callable[[str], Awaitable[tuple[list[str], int]]]


class Deferred(Generic[T]):
    """An answer that starts being worked out only when awaited.

    A question whose Lua side then fails (asked outside a task, with no callback) is
    dropped unawaited; a coroutine made up front would warn "never awaited" then."""

    __slots__ = ("_args", "_fn", "_kwargs")

    def __init__(self, fn: Callable[P, Coroutine[Any, Any, T]], *args: P.args, **kwargs: P.kwargs) -> None:
        self._fn: Callable[..., Coroutine[Any, Any, T]] = fn
        self._args: tuple[Any, ...] = args
        self._kwargs: dict[str, Any] = kwargs

    def __await__(self) -> Generator[Any, None, T]:
        return self._fn(*self._args, **self._kwargs).__await__()


class Ui(ABC):
    """Keymap, composer input, questions (select, prompt, confirm) and notices.

    A question method returns the answer to await, or None when nobody can answer
    (no screen); the Lua side then answers nil at once instead of waiting."""

    # How a user of this frontend chooses a model (the no-model error ends with it).
    choose_model = "pass uji run --model PROVIDER/MODEL"

    def __init__(self, notice: Notice) -> None:
        self.notice: Notice = notice
        self.show_thinking = False
        self._keymap: Keymap | None = None
        self.actions: dict[str, object] = {}  # a config's actions (uji.action.add): name → Lua function
        # The bell when a turn ends or a question waits unfocused (uji.ui.configure{notify}):
        # a style name (uji.ui.bell.STYLES) or a Lua function(reason, text).
        self.notify: Any = "auto"
        # ito (reference §6): the toolbar items of `uji.ui.toolbar`, in the order added; the
        # theme of `uji.ui.configure{theme}`; the key handler of `uji.input.capture`.
        self.toolbars: list[ToolbarEntry] = []
        self.theme: Theme | None = None
        self.capture: Any = None
        self.suggest = True  # uji.ui.configure{suggest = {enabled}}: the `/` popup

    @property
    def keymap(self) -> Keymap:
        """The bindings: the defaults, changed by the config's `uji.keymap` calls."""
        if self._keymap is None:  # uji.ui.keys builds its tables on import: only when used
            from uji.ui.keys import Keymap

            self._keymap = Keymap()
        return self._keymap

    # Questions --------------------------------------------------------------------

    @abstractmethod
    def select(self, title: str, labels: list[str], current: int | None) -> Awaitable[int | None] | None:
        """The index (from 0) of the label chosen, None if cancelled; `current` is
        the index shown first."""

    def pick(
        self, title: str, labels: list[str], current: int | None, preview: Preview | None, query: Query | None
    ) -> Awaitable[tuple[int, int] | None] | None:
        """uji.ui.pick: like select, with `preview(list, index)` giving the lines shown for
        the highlighted label and `query(text)` giving a new list (its labels and its
        number) for what is typed; the answer is (list number, index), list 0 being
        `labels`. Without a screen of its own for that, the frontend's select."""
        answer = self.select(title, labels, current)
        if answer is None:
            return None

        async def first_list(answer: Awaitable[int | None]) -> tuple[int, int] | None:
            index = await answer
            return None if index is None else (0, index)

        return Deferred(first_list, answer)

    @abstractmethod
    def prompt(self, title: str, value: str, hidden: bool) -> Awaitable[str | None] | None:
        """A line of text (starting as `value`; `hidden` masks it), None if cancelled."""

    @abstractmethod
    def confirm(self, title: str, body: str, preview: str | None) -> Awaitable[bool] | None:
        """Whether the user allowed it."""

    def form(self, form: Form, check: FormCheck) -> Awaitable[FormAnswer] | None:
        """A form filled in (an MCP server's question): accepted with values `check`
        passed, declined or cancelled. None here: no screen to show it on."""
        return None

    # The composer -----------------------------------------------------------------

    @abstractmethod
    def input_get(self) -> str: ...

    @abstractmethod
    def input_set(self, text: str) -> None: ...

    def input_append(self, text: str) -> None:
        self.input_set(self.input_get() + text)

    async def attach_image(self, image: Image) -> str | None:
        """uji.input.attach: put a loaded image in the draft as `[image #N]`; None when it
        is there, else why not (with no screen there is no draft to hold it)."""
        return "there is no composer to attach to without a screen (uji run takes --image)"

    # Quit and reload (uji.quit, uji.reload) ---------------------------------------

    quit_requested = False
    reload_requested = False
    restart_requested: Restart | None = None

    def quit(self) -> None:
        """uji.quit: the screen quits (before_quit first); with no screen, `uji run` ends
        cleanly once the Lua code that asked returns (no prompt runs after it)."""
        self.quit_requested = True

    def reload(self, loading_config: bool) -> None:
        """uji.reload: the screen restarts Lua on the same session, keeping the draft;
        `uji run` reads the config again before its prompt (once per run).
        `loading_config`: asked while the config itself loads."""
        self.reload_requested = True

    def restart(self, request: Restart, loading_config: bool) -> None:
        """uji.os.restart, or new override packs: `uji run` starts again once the config has
        loaded (its prompt runs in the new start); with `args`, as a new process."""
        self.restart_requested = request

    # The screen -------------------------------------------------------------------

    @abstractmethod
    def size(self) -> tuple[int, int] | None:
        """Width and height in cells, or None without a screen."""

    @abstractmethod
    def set_thinking(self, shown: bool) -> None:
        """Show or hide the model's reasoning."""

    async def run_program(self, argv: list[str]) -> int:
        """uji.ui.exec: run a program and wait for it; its exit code. With no screen its
        output goes to stderr (stdout may be the JSON stream) and it reads nothing."""
        import asyncio
        import sys

        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=sys.stderr, stderr=sys.stderr
        )
        return await proc.wait()

    def take_terminal(self) -> Callable[[], None]:
        """uji.tty.open: the screen lets go of the terminal; the function returned gives it
        back. With no screen there is nothing to let go of."""
        return lambda: None

    def paint_ito(self, tree: Node | None, width: int, height: int, source: ItoSource) -> Painted | None:
        """An ito tree painted in `width` x `height` cells: its lines, its taps and its
        controls; None where ito views are not drawn (no screen)."""
        return None

    def ito_key(self, painted: Painted, key: str, character: str | None, source: ItoSource) -> bool:
        """A key for the focused control of a painted tree (an ito.Window's): whether it
        used it. Tab moves the focus."""
        return False

    def ito_wheel(self, painted: Painted, x: int, y: int, delta: int) -> tuple[int, int, bool] | None:
        """A step of the mouse wheel at a cell of a painted tree (an ito.Window's): the
        callback of the scroll view under it that moved, with its new top row and whether
        that is its end, for Lua to run; None when none moved."""
        return None

    # ito: toolbars, overlays, redraws, the theme ------------------------------------

    def add_toolbar(self, entry: ToolbarEntry) -> None:
        self.toolbars.append(entry)
        self.toolbars_changed()

    def remove_toolbar(self, handle: int) -> bool:
        kept = [t for t in self.toolbars if t.handle != handle]
        removed = len(kept) != len(self.toolbars)
        self.toolbars = kept
        if removed:
            self.toolbars_changed()
        return removed

    def toolbars_changed(self) -> None:
        """The screen lays its bars out again; with no screen there are none to draw."""
        return None

    def redraw(self) -> None:
        """A state an ito view read changed: the screen draws its views again."""
        return None

    def open_overlay(self, handle: int, source: ItoSource, floating: bool) -> bool:
        """uji.ui.overlay: show the view above the composer until it is closed; False with
        no screen (the overlay's `wait()` then answers nil at once)."""
        return False

    def overlay_closed(self, handle: int) -> Awaitable[None] | None:
        """What `handle:wait()` waits for; None when the overlay is not open."""
        return None

    def close_overlay(self, handle: int) -> None:
        """handle:close(v): the overlay goes (its value stays on the Lua side)."""
        return None

    def set_theme(self, theme: Theme) -> None:
        """uji.ui.configure{theme}: the screen's colours, symbols, strings and limits."""
        self.theme = theme

    def toggle_thinking(self) -> bool:
        """Flip whether the model's reasoning is shown, say so, and return it."""
        self.show_thinking = not self.show_thinking
        self.set_thinking(self.show_thinking)
        self.notice("thinking shown" if self.show_thinking else "thinking hidden")
        return self.show_thinking
