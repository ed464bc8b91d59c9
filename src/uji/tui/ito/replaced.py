"""The replaceable views (`uji.ui.<View>`, reference §6) that stand for a piece of the screen
rather than a whole transcript entry: a tool's diff, the answer while it streams and the
blocks of its markdown, the activity row, a flash, the jump-to-bottom label.

uji draws these itself, as Rich text, until a config or a theme replaces one: the default
path asks the Lua side once per piece drawn (never per streamed delta) and draws as before.
A replaced view's ito tree is painted into rows of Rich text in the place uji would draw
its own; one that raises, or returns no view, falls back to uji's drawing and is logged in
the diagnostics."""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType

    from uji.app import App
    from uji.lua.api.ito import LuaSource
    from uji.lua.runtime import Runtime

# The views uji/api/ui.lua lists; the transcript entries' (message.py) and these.
ViewName = Literal[
    "UserMessage", "ToolCall", "ToolOutput", "Shell", "SystemMessage", "ErrorMessage", "Notice", "Thinking",
    "Queued", "Running", "Diff", "Partial", "Compaction", "Job", "Jump", "Paragraph", "Heading", "CodeBlock",
    "MathBlock", "TableRow", "Rule", "Activity", "Flash",
]  # fmt: skip

# The views an answer's markdown may be drawn with (blocks.py).
MARKDOWN_VIEWS: tuple[ViewName, ...] = (
    "Partial",
    "Paragraph",
    "Heading",
    "CodeBlock",
    "MathBlock",
    "TableRow",
    "Rule",
)


class Props(TypedDict, total=False):
    """What a view drawn from Python is given (docs/lua-api.md lists each view's)."""

    type: str
    text: str
    width: int
    name: str
    path: str
    markdown: str
    level: int
    language: str
    cells: list[str]
    header: bool
    widths: list[int]
    seconds: int
    spinner: str
    hint: str
    count: int


# Called in Lua: the replacement's view as an ito root, or nil when uji draws it itself.
REPLACED = """
return function(name, payload)
  local current = package.loaded["uji.themes.current"]
  local fn = current and current.replacement and current.replacement(name)
  if fn == nil then return nil end
  local v = fn(payload)
  local ito = require("ito")
  if ito.is_view(v) then return ito.root(v) end
  error("uji.ui." .. name .. " returned a " .. type(v) .. ", not an ito view", 0)
end
"""
# Called in Lua: which of the names are replaced, joined by spaces.
WHICH = """
return function(...)
  local current = package.loaded["uji.themes.current"]
  if not (current and current.replacement) then return "" end
  local out = {}
  for _, name in ipairs({ ... }) do
    if current.replacement(name) ~= nil then out[#out + 1] = name end
  end
  return table.concat(out, " ")
end
"""


_LOADED: weakref.WeakKeyDictionary[Runtime, dict[str, object]] = weakref.WeakKeyDictionary()


def _loaded(rt: Runtime, code: str) -> Any:
    """`code`'s function, loaded once per Lua runtime (a reload makes a new one)."""
    chunks = _LOADED.setdefault(rt, {})
    if code not in chunks:
        chunks[code] = rt.load_source(code, "=uji.ui views")()
    return chunks[code]


def replaced_among(app: App, names: Iterable[str]) -> frozenset[str]:
    """Which of `names` a config or a theme replaced."""
    from uji.lua.runtime import LuaError

    rt = app.lua
    try:
        values = rt.call_sync(_loaded(rt, WHICH), *names)
    except LuaError:
        return frozenset()
    return frozenset(str(values[0]).split()) if values and values[0] else frozenset()


def _root(app: App, name: str, given: Any) -> LuaSource | None:
    """The replacement's view for the Lua table `given`, not drawn yet (None: not replaced).
    Raises LuaError when it fails."""
    from uji.lua.api.ito import LuaSource

    rt = app.lua
    values = rt.call_sync(_loaded(rt, REPLACED), name, given)
    root = values[0] if values else None
    return LuaSource(app.host, root) if root is not None else None


def source(app: App, name: str, given: Any, width: int) -> LuaSource | None:
    """The replacement of `uji.ui.<name>` drawn for the Lua table `given`, or None when uji
    draws it itself (not replaced, or the replacement failed: logged)."""
    from uji.lua.runtime import LuaError
    from uji.ui.ito import ItoError

    try:
        drawn = _root(app, name, given)
        if drawn is not None:
            drawn.render(width)  # one that fails to draw fails here, not on the screen
    except (LuaError, ItoError) as e:
        app.diagnostics.add("ui", f"uji.ui.{name} failed, drawn as uji draws it: {e}")
        return None
    return drawn


class Views:
    """The screen's way to the replaced views: which are replaced, and one drawn as rows."""

    def __init__(self, app: Callable[[], App | None], colors: Callable[[], dict[str, str]]) -> None:
        self._app = app
        self._colors = colors

    def replaced(self, *names: ViewName) -> frozenset[str]:
        """Which of `names` a config or a theme replaced (asked each time: an assignment to
        `uji.ui` is not seen otherwise; one call into Lua)."""
        app = self._app()
        return replaced_among(app, names) if app is not None else frozenset()

    def rows(self, name: ViewName, props: Props) -> list[Text] | None:
        """The replacement's rows for `props` (at `props["width"]`), or None to draw as uji does."""
        app = self._app()
        if app is None:
            return None
        from uji.lua.runtime import LuaError
        from uji.tui.ito.layout import paint
        from uji.ui.ito import ItoError

        width = max(1, int(props.get("width", 80)))
        try:
            drawn = _root(app, name, app.lua.convert.to_lua(dict(props), json_null=False))
            if drawn is None:
                return None
            return paint(drawn.render(width), width, source=drawn, colors=self._colors()).lines
        except (LuaError, ItoError) as e:
            app.diagnostics.add("ui", f"uji.ui.{name} failed, drawn as uji draws it: {e}")
            return None


class Drawn:
    """A replaced view as a Rich renderable: its rows at the width Rich gives (asked once a
    width), or `fallback` when the view fails."""

    def __init__(
        self, views: Views, name: ViewName, props: Props, fallback: Callable[[], RenderableType]
    ) -> None:
        self.views, self.name, self.props, self.fallback = views, name, props, fallback
        self._rows: dict[int, list[Text] | None] = {}

    def lines(self, width: int) -> list[Text] | None:
        if width not in self._rows:
            self._rows[width] = self.views.rows(self.name, {**self.props, "width": width})
        return self._rows[width]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[RenderableType]:
        rows = self.lines(options.max_width)
        if rows is None:
            yield self.fallback()
            return
        yield joined(rows)


def joined(rows: list[Text]) -> Text:
    """A view's rows as one text (each is a row's width already: never wrapped again)."""
    out = Text("\n").join(line.copy() for line in rows)
    out.no_wrap, out.overflow = True, "crop"
    return out
