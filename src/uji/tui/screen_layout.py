"""uji.ui.Screen and uji.ui.Input (reference §6). A replaced Screen gets the screen's
regions — `screen.top_bar()`, `transcript()`, `activity()`, `modals()`, `keyboard()`,
`composer()`, `bottom_bar()` — and returns them in an `ito.VStack`, in the order it wants,
with ito views of its own between them (a banner); uji moves its real widgets into that
order and draws the views. A region left out is hidden; one without the transcript, the
modals or the composer, or that raises, gives the default screen and is logged. A replaced
Input draws above the composer's text, in place of its rules.

Both are asked for once the config has loaded, and again when a theme is applied."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Protocol

from uji.tui.panel_views import replaced

if TYPE_CHECKING:
    from textual.css.query import DOMQuery
    from textual.geometry import Size
    from textual.screen import Screen
    from textual.widget import Widget

    from uji.app import App
    from uji.tui.composer import Composer
    from uji.tui.conversation import Conversation


class UjiApp(Protocol):
    """What of the screen (tui/app.py) this needs; the regions' widgets are its attributes."""

    @property
    def conversation(self) -> Conversation: ...
    @property
    def screen(self) -> Screen[Any]: ...
    @property
    def composer(self) -> Composer: ...
    @property
    def size(self) -> Size: ...

    def query(self, selector: str) -> DOMQuery[Widget]: ...

    def show_notice(self, text: str) -> None: ...

    def ito_colors(self) -> dict[str, str]: ...


# Each region and the widgets of UjiApp in it, in the default screen's order.
REGIONS: dict[str, tuple[str, ...]] = {
    "top_bar": ("top_bar",),
    "transcript": ("transcript", "new_below", "queue_view"),
    "activity": ("activity",),
    "modals": ("modals",),
    "keyboard": ("keyboard_bar",),
    "composer": ("suggestions", "mentions", "composer"),
    "bottom_bar": ("status", "bottom_bar"),
}
NEEDED = ("transcript", "modals", "composer")  # a screen without them could not be used
# Called in Lua: the replaced Screen's items, a region's name or an ito root each.
LAYOUT = """
return function()
  local ito = require("ito")
  local fn = package.loaded["uji.themes.current"].replacement("Screen")
  local screen = {}
  for _, name in ipairs({ "top_bar", "transcript", "activity", "modals", "keyboard", "composer", "bottom_bar" }) do
    screen[name] = function()
      local v = ito.Text("")
      v.uji_region = name
      return v
    end
  end
  local v = fn(screen)
  if not (ito.is_view(v) and v.kind == "vstack") then
    error("uji.ui.Screen returned a " .. type(v) .. ", not an ito.VStack of the screen's regions", 0)
  end
  local out = {}
  for i, item in ipairs(v.children) do
    out[i] = type(item) == "table" and item.uji_region or ito.root(item)
  end
  return out
end
"""
INPUT = """
return function(placeholder)
  local ito = require("ito")
  local fn = package.loaded["uji.themes.current"].replacement("Input")
  return ito.root(ito.SubcomposeLayout(function(width) return fn({ width = width, placeholder = placeholder }) end))
end
"""


_arranged: weakref.WeakSet[UjiApp] = weakref.WeakSet()  # screens not in the default order


def arrange(tui: UjiApp) -> None:
    """The screen as the Screen view (or the default) orders it, and the Input view."""
    app = tui.conversation.app
    screen = app is not None and replaced(tui.screen, "Screen")
    framed = app is not None and replaced(tui.screen, "Input")
    if not (screen or framed or tui in _arranged):
        return  # the default screen, as composed
    for old in tui.query(".screen-view"):
        old.remove()
    order = _items(tui, app) if screen and app is not None else None
    _place(tui, order or list(REGIONS))
    head = _input(tui, app) if framed and app is not None else None
    tui.composer.set_class(head is not None, "-framed")
    if head is not None:
        tui.screen.mount(head, before=tui.composer)
    _arranged.add(tui)


def _items(tui: UjiApp, app: App) -> list[str | Widget] | None:
    from uji.lua.api.ito import LuaSource
    from uji.lua.runtime import LuaError
    from uji.tui.ito.view import ItoView
    from uji.ui.ito import ItoError

    rt = app.lua
    try:
        values = rt.call_sync(rt.load_source(LAYOUT, "=uji.ui.Screen")())
        items: list[str | Widget] = []
        for item in values[0].values():
            if isinstance(item, str):
                items.append(item)
                continue
            source = LuaSource(app.host, item)
            source.render(tui.size.width)  # one that fails to draw fails here, not on the screen
            items.append(ItoView(source, tui.show_notice, tui.ito_colors, classes="screen-view"))
        missing = [r for r in NEEDED if r not in items]
        if missing:
            raise ItoError(f"it left out the {', '.join(missing)}")
    except (LuaError, ItoError) as e:
        app.diagnostics.add("ui", f"uji.ui.Screen failed, the default screen is drawn: {e}")
        return None
    return items


def _place(tui: UjiApp, order: list[str | Widget]) -> None:
    screen = tui.screen
    shown: set[str] = set()
    previous: Widget | None = None
    for item in order:
        if isinstance(item, str):
            shown.update(REGIONS[item])
            widgets = [getattr(tui, name) for name in REGIONS[item]]
        else:
            widgets = [item]
        for widget in widgets:
            moved = widget.parent is not None  # uji's own widget; else a view of the Screen's
            if previous is None:
                screen.move_child(widget, before=0) if moved else screen.mount(widget, before=0)
            else:
                screen.move_child(widget, after=previous) if moved else screen.mount(widget, after=previous)
            previous = widget
    for names in REGIONS.values():
        for name in names:
            getattr(tui, name).set_class(name not in shown, "-left-out")


def _input(tui: UjiApp, app: App) -> Widget | None:
    from uji.lua.api.ito import LuaSource
    from uji.lua.runtime import LuaError
    from uji.tui.composer import PLACEHOLDER
    from uji.tui.ito.view import ItoView
    from uji.ui.ito import ItoError

    rt = app.lua
    try:
        root = rt.call_sync(rt.load_source(INPUT, "=uji.ui.Input")(), PLACEHOLDER)[0]
        source = LuaSource(app.host, root)
        source.render(tui.size.width)
    except (LuaError, ItoError) as e:
        app.diagnostics.add("ui", f"uji.ui.Input failed, drawn as uji draws it: {e}")
        return None
    return ItoView(source, tui.show_notice, tui.ito_colors, classes="screen-view")
