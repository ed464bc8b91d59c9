"""The terminal UI's side of the UI port (`uji.ui.port.Ui`): questions, the composer and
the thinking switch go to the screen. One `ScreenUi` per `App` (a reload builds a new
one, with the new config's keymap). No Textual imports.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from uji.notices import Notice
from uji.record import Struct
from uji.ui.port import Deferred, FormCheck, Preview, Query, Ui

if TYPE_CHECKING:
    from uji.restart import Restart
    from uji.ui.form import Form, FormAnswer
    from uji.wires.base import Image

if TYPE_CHECKING:
    from uji.ui.ito import ItoSource, Node, Painted, Theme, ToolbarEntry


class WindowPaint(Struct):
    """A tree painted for an ito.Window (uji.ui.ito.Painted)."""

    lines: list[Any]
    taps: list[tuple[int, int, int, int, int]]
    controls: list[Any]
    focus: int = 0


class Surface(Protocol):
    """The screen's side: implemented by the Textual app."""

    async def select(self, title: str, labels: list[str], current: int | None) -> int | None: ...

    async def pick(
        self, title: str, labels: list[str], current: int | None, preview: Preview | None, query: Query | None
    ) -> tuple[int, int] | None: ...

    async def prompt(self, title: str, value: str, hidden: bool) -> str | None: ...

    async def confirm(self, title: str, body: str, preview: str | None) -> bool: ...

    async def form(self, form: Form, check: FormCheck) -> FormAnswer: ...

    def set_thinking(self, shown: bool) -> None: ...

    def input_get(self) -> str: ...

    def input_set(self, text: str) -> None: ...

    def screen_size(self) -> tuple[int, int]: ...

    def request_quit(self) -> None: ...

    def request_reload(self) -> None: ...

    def run_suspended(self, argv: list[str]) -> int: ...

    def take_terminal(self) -> Callable[[], None]: ...

    def ito_colors(self) -> dict[str, str]: ...

    def attach_to_composer(self, image: Image) -> None: ...

    def toolbars_changed(self, entries: list[ToolbarEntry]) -> None: ...

    def ito_redraw(self) -> None: ...

    def open_overlay(self, handle: int, source: ItoSource, floating: bool) -> asyncio.Future[None]: ...

    def close_overlay(self, handle: int) -> None: ...

    def apply_theme(self, theme: Theme) -> None: ...


class ScreenUi(Ui):
    choose_model = "choose one with /models (or /login to add a provider)"

    def __init__(self, surface: Surface, notice: Notice) -> None:
        super().__init__(notice)
        self.surface = surface
        self._overlays: dict[int, asyncio.Future[None]] = {}

    def select(self, title: str, labels: list[str], current: int | None) -> Awaitable[int | None]:
        return Deferred(self.surface.select, title, labels, current)

    def pick(
        self, title: str, labels: list[str], current: int | None, preview: Preview | None, query: Query | None
    ) -> Awaitable[tuple[int, int] | None]:
        return Deferred(self.surface.pick, title, labels, current, preview, query)

    def prompt(self, title: str, value: str, hidden: bool) -> Awaitable[str | None]:
        return Deferred(self.surface.prompt, title, value, hidden)

    def confirm(self, title: str, body: str, preview: str | None) -> Awaitable[bool]:
        return Deferred(self.surface.confirm, title, body, preview)

    def form(self, form: Form, check: FormCheck) -> Awaitable[FormAnswer]:
        return Deferred(self.surface.form, form, check)

    def input_get(self) -> str:
        return self.surface.input_get()

    def input_set(self, text: str) -> None:
        self.surface.input_set(text)

    def size(self) -> tuple[int, int]:
        return self.surface.screen_size()

    def set_thinking(self, shown: bool) -> None:
        self.surface.set_thinking(shown)

    async def run_program(self, argv: list[str]) -> int:
        return self.surface.run_suspended(argv)

    def take_terminal(self) -> Callable[[], None]:
        return self.surface.take_terminal()

    def paint_ito(self, tree: Node | None, width: int, height: int, source: ItoSource) -> Painted | None:
        from uji.tui.ito.layout import paint
        from uji.tui.ito.view import first_focus

        focus = first_focus(tree) if tree is not None else 0
        painted = paint(tree, width, height, source=source, focus=focus, colors=self.surface.ito_colors())
        return WindowPaint(
            painted.lines,
            [(t.x, t.y, t.width, t.height, t.handler) for t in painted.taps],
            list(painted.controls),
            focus,
        )

    def ito_key(self, painted: Painted, key: str, character: str | None, source: ItoSource) -> bool:
        from uji.tui.ito.controls import take_key

        if key == "tab" and len(painted.controls) > 1:
            painted.focus = (painted.focus + 1) % len(painted.controls)
            return True
        if not painted.controls:
            return False
        return take_key(painted.controls[painted.focus % len(painted.controls)], key, character, source.call)

    def ito_wheel(self, painted: Painted, x: int, y: int, delta: int) -> tuple[int, int, bool] | None:
        from uji.tui.ito.controls import wheel

        moved: list[tuple[int, int, bool]] = []
        wheel(painted.controls, x, y, delta, lambda handler, top, end: moved.append((handler, top, end)))
        return moved[0] if moved else None

    async def attach_image(self, image: Image) -> str | None:
        self.surface.attach_to_composer(image)
        return None

    def quit(self) -> None:
        self.quit_requested = True
        self.surface.request_quit()

    def reload(self, loading_config: bool) -> None:
        if loading_config:  # the reloaded config would ask again, and again
            self.notice("uji.reload: not while the config loads (use uji.schedule, or /reload)")
            return
        self.reload_requested = True
        self.surface.request_reload()

    def restart(self, request: Restart, loading_config: bool) -> None:
        # While the config loads, the screen starts again once it has loaded (_make_app);
        # later, at once (with args: the screen quits, then the process is replaced).
        self.restart_requested = request
        if request.args is not None:
            self.quit()
        elif not loading_config:
            self.surface.request_reload()

    def toolbars_changed(self) -> None:
        self.surface.toolbars_changed(list(self.toolbars))

    def redraw(self) -> None:
        self.surface.ito_redraw()

    def open_overlay(self, handle: int, source: ItoSource, floating: bool) -> bool:
        closed = self.surface.open_overlay(handle, source, floating)
        self._overlays[handle] = closed
        closed.add_done_callback(lambda _: self._overlays.pop(handle, None))
        return True

    def overlay_closed(self, handle: int) -> Awaitable[None] | None:
        closed = self._overlays.get(handle)
        return None if closed is None else asyncio.shield(closed)

    def close_overlay(self, handle: int) -> None:
        self.surface.close_overlay(handle)

    def set_theme(self, theme: Theme) -> None:
        super().set_theme(theme)
        self.surface.apply_theme(theme)
