"""ito on the screen: `ItoView` draws one root (a toolbar item, an overlay's content) and
gives keys and clicks to its controls; `ToolbarRow` holds a placement's items; and
`OverlayPanel` is `uji.ui.overlay`'s box above the composer.

Keys reach the focused control first (a text field, a list, a scroll view); keys it does
not use fall through to the keymap (Esc closes an overlay; Enter too when no control used it)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Static

from uji.tui.focus import KeyRouter
from uji.tui.ito.layout import Painted, measure, paint
from uji.tui.modals import Modal
from uji.ui.ito import ItoError

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.geometry import Size

    from uji.ui.ito import ItoSource, Node, ToolbarEntry

Report = Callable[[str], None]


class ItoView(KeyRouter, Widget):
    DEFAULT_CSS = "ItoView { height: auto; width: 1fr; }"

    def __init__(
        self,
        source: ItoSource,
        report: Report,
        colors: Callable[[], dict[str, str]],
        max_rows: Callable[[], int | None] = lambda: None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self.source = source
        self._on_error = report
        self._palette = colors
        self._rows_limit = max_rows
        self._ito_tree: Node | None = None
        self._ito_width = -1
        self._ito_painted: Painted | None = None
        self._ito_ito_painted_for: tuple[int, int | None] | None = None
        self._ito_focus: int | None = None
        self._ito_reported = False
        self._ito_timer: Any = None

    # Drawing -------------------------------------------------------------------------

    def redraw(self) -> None:
        """The Lua side changed something: ask for the tree again."""
        self._ito_width = -1
        self._ito_painted = None
        self.refresh(layout=True)

    def ito_tree(self, width: int) -> Node | None:
        if width != self._ito_width:
            self._ito_width = width
            try:
                self._ito_tree = self.source.render(width)
            except ItoError as e:
                self._ito_tree = None
                if not self._ito_reported:  # an item that raises draws nothing and says so once
                    self._ito_reported = True
                    self._on_error(f"ito: a view failed to draw: {e}")
            else:
                for placement in self._ito_unshown():
                    self._on_error(f"ito: no section shows the toolbar placement {placement!r}")
        return self._ito_tree

    def _ito_unshown(self) -> list[str]:
        try:
            return self.source.unshown()
        except Exception:
            return []

    def painted(self, width: int) -> Painted:
        limit = self._rows_limit()
        key = (width, limit)
        if self._ito_painted is None or self._ito_ito_painted_for != key:
            tree = self.ito_tree(width)
            if self._ito_focus is None and tree is not None:
                self._ito_focus = first_focus(tree)
            painted = paint(
                tree, width, None, source=self.source, focus=self._ito_focus, colors=self._palette()
            )
            if limit is not None and len(painted.lines) > limit:
                painted = paint(
                    tree, width, limit, source=self.source, focus=self._ito_focus, colors=self._palette()
                )
            self._ito_painted, self._ito_ito_painted_for = painted, key
            self._ito_spin(painted.animated)
        return self._ito_painted

    def _ito_spin(self, on: bool) -> None:
        if on and self._ito_timer is None:
            self._ito_timer = self.set_interval(0.08, lambda: self._ito_repaint())
        elif not on and self._ito_timer is not None:
            self._ito_timer.stop()
            self._ito_timer = None

    def _ito_repaint(self) -> None:
        self._ito_painted = None
        self.refresh()

    def get_content_width(self, container: Size, viewport: Size) -> int:
        tree = self.ito_tree(container.width)
        if tree is None:
            return 0
        from uji.tui.ito.layout import Ctx, _console

        return measure(Ctx(None, None, self._palette(), _console()), tree, container.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.painted(width).lines)

    def render(self) -> RenderableType:
        lines = self.painted(self.size.width).lines
        out = Text("\n").join(lines) if lines else Text("")
        out.no_wrap = True
        return out

    # Keys and clicks -------------------------------------------------------------------

    @property
    def controls(self) -> int:
        return len(self._ito_painted.controls) if self._ito_painted is not None else 0

    def focused_control(self) -> Any:
        painted = self.painted(self.size.width) if self.size.width else self._ito_painted
        if painted is None or not painted.controls:
            return None
        index = self._ito_focus or 0
        return painted.controls[index] if index < len(painted.controls) else None

    def take_key(self, key: str, character: str | None) -> bool:
        """Whether the focused control used the key."""
        control = self.focused_control()
        if key == "tab" and self.controls > 1:
            self._ito_focus = ((self._ito_focus or 0) + 1) % self.controls
            self._ito_repaint()
            return True
        if control is None:
            return False
        from uji.tui.ito.controls import take_key

        return take_key(control, key, character, self._ito_fire)

    def _ito_fire(self, handler: int, *args: Any) -> None:
        self._ito_painted = None  # a text field's new text shows at once
        self.refresh()
        self.source.fire(handler, *args)

    async def _on_key(self, event: events.Key) -> None:
        route = getattr(self.app, "route_key", None)
        if self.take_key(event.key, event.character) or (route is not None and route(event)):
            event.prevent_default()  # the focused control first; keys it leaves go to the keymap
            event.stop()

    def on_click(self, event: events.Click) -> None:
        # A redraw may have dropped the last layout before this click arrived (a busy
        # machine paints late): the taps are those of the tree now shown.
        painted = self.painted(self.size.width) if self.size.width else self._ito_painted
        if painted is None:
            return
        for tap in reversed(painted.taps):  # the innermost first
            if tap.x <= event.x < tap.x + tap.width and tap.y <= event.y < tap.y + tap.height:
                self.source.fire(tap.handler)
                event.stop()
                return


def first_focus(tree: Node) -> int:
    """The control that starts focused: the first with `:focused()`, else the first text
    field or list, else the first scroll view."""
    index = 0
    found: int | None = None
    field: int | None = None

    def walk(node: Node) -> None:
        nonlocal index, found, field
        kind = node.get("kind")
        if kind in ("textfield", "scroll") or (kind == "list" and not node.get("passive")):
            if found is None and any(
                m and m[0] == "focused" and (len(m) < 2 or m[1]) for m in node.get("mods") or []
            ):
                found = index
            if field is None and kind != "scroll":
                field = index
            index += 1
        for child in node.get("children") or []:
            walk(child)

    walk(tree)
    return found if found is not None else field or 0


class ToolbarRow(Horizontal):
    """A placement's items side by side; the top bar puts the leading items, room, then
    the trailing ones."""

    DEFAULT_CSS = """
    ToolbarRow { height: auto; width: 1fr; padding: 0 1; display: none; }
    ToolbarRow .filler { width: 1fr; height: 1; }
    ToolbarRow ItoView.-auto { width: auto; }
    """

    def __init__(
        self,
        placements: tuple[str, ...],
        report: Report,
        colors: Callable[[], dict[str, str]],
        rows: int | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(**kw)
        self._rows = rows  # the top and bottom bars are one row: what is longer is cut
        self.placements = placements
        self._on_error = report
        self._palette = colors
        self._shown: list[ToolbarEntry] = []

    def show(self, entries: list[ToolbarEntry]) -> None:
        mine = [e for e in entries if e.placement in self.placements]
        if [id(e) for e in mine] == [id(e) for e in self._shown]:
            return
        self._shown = mine
        self.remove_children()
        widgets: list[Widget] = []
        split = len(self.placements) > 1
        for placement in self.placements:
            if split and placement == self.placements[-1]:
                widgets.append(Static("", classes="filler"))
            for entry in (e for e in mine if e.placement == placement):
                widgets.append(
                    ItoView(
                        entry.source,
                        self._on_error,
                        self._palette,
                        max_rows=lambda: self._rows,
                        classes="-auto" if split else "",
                    )
                )
        self.display = bool(mine)
        if widgets:
            self.mount_all(widgets)

    def redraw(self) -> None:
        for view in self.query(ItoView):
            view.redraw()


class OverlayPanel(Modal):
    """uji.ui.overlay: an ito view in a box; Esc closes it, Enter too when no control used it."""

    mode = "overlay"
    DEFAULT_CSS = "OverlayPanel.-float { margin: 0 0 0 4; }"

    def __init__(
        self,
        handle: int,
        source: ItoSource,
        floating: bool,
        report: Report,
        colors: Callable[[], dict[str, str]],
        rows: Callable[[], int],
    ) -> None:
        super().__init__("")
        self.handle = handle
        self.view = ItoView(source, report, colors, max_rows=rows)
        self.view.can_focus = True
        self.set_class(floating, "-float")
        if floating:
            from uji.tui import modals

            self.styles.width = f"{round(modals.FLOAT[0] * 100)}%"

    def compose(self) -> Any:
        yield self.view

    def focus_field(self) -> None:
        self.view.focus()

    def modal_up(self) -> None:
        self.view.take_key("up", None)

    def modal_down(self) -> None:
        self.view.take_key("down", None)

    def modal_accept(self) -> None:
        if not self.view.take_key("enter", None):
            self.finish(None)


def closed_future() -> asyncio.Future[None]:
    return asyncio.get_running_loop().create_future()
