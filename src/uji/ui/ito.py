"""What the screen knows of an ito view (reference §6): the plain tree a root draws, the
roots the Lua side hands over (toolbar items, overlays), and the theme in use. No
Textual and no Lua here: `uji.lua.api.ito` makes the sources, `uji.tui.ito` draws them.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, TypedDict

from uji.record import Record

Placement = Literal["top_bar_leading", "top_bar_trailing", "keyboard", "bottom_bar"]
PLACEMENTS: tuple[Placement, ...] = ("top_bar_leading", "top_bar_trailing", "keyboard", "bottom_bar")


class Span(TypedDict, total=False):
    text: str
    style: dict[str, Any] | None  # {foreground, background, bold, dim, ...}: ito.TextStyle


class Node(TypedDict, total=False):
    """One view of a drawn tree (`ito.root(...):render(width)` in ito/init.lua)."""

    kind: str  # text vstack hstack zstack grid gridrow scroll layout spacer spinner markdown textfield list
    mods: list[list[Any]]  # the modifiers, innermost first: [name, args...]
    children: list[Node]
    spans: list[Span]
    spacing: int | None
    alignment: str | None
    min: int | None
    text: str  # markdown
    value: str  # textfield
    placeholder: str
    hidden: bool
    change: int  # callback numbers, handed back to ItoSource.fire
    submit: int
    rows: list[Node]  # list
    selected: int  # from 1; 0 when empty
    passive: bool
    footer: Node
    select: int
    choose: int
    offset: int  # scroll
    follow: bool
    scrolled: int
    measure: int  # layout


class ItoError(Exception):
    """A view failed to draw (its Lua raised): the text says where."""


class ItoSource(Protocol):
    """A root the screen draws: a toolbar item's content, an overlay's content."""

    def render(self, width: int) -> Node | None:
        """The tree for this width; raises ItoError."""

    def fire(self, handler: int, *args: Any) -> None:
        """Run a callback of the last tree (a tap, a submit, a choice) in the background."""

    def call(self, handler: int, *args: Any) -> Any:
        """Run a callback that must answer now (a Layout's measure)."""

    def unshown(self) -> list[str]:
        """Toolbar placements views declared that no host drew (said once each)."""


class Painted(Protocol):
    """An ito tree painted for a screen of uji.tty.open: its lines (Rich text), its taps
    (x, y, width, height, handler) and its controls, the focused one by index."""

    lines: list[Any]
    taps: list[tuple[int, int, int, int, int]]
    controls: list[Any]
    focus: int


class ToolbarEntry(Record):
    handle: int  # the `uji.ui.toolbar` call it came from
    placement: Placement
    source: ItoSource
    item_id: str | None = None


class Theme(Record):
    """What the screen takes of a theme (`uji.ui.configure{theme}`): all strings, so the
    Lua theme table never crosses as a loose dict."""

    name: str
    colors: tuple[tuple[str, str], ...]  # ("text", "#d4d4d4"), ("diff.added", ...)
    symbols: tuple[tuple[str, str], ...]
    text: tuple[tuple[str, str], ...]
    limits: tuple[tuple[str, float], ...]

    def color(self, key: str, default: str) -> str:
        return next((v for k, v in self.colors if k == key), default)

    def symbol(self, key: str, default: str) -> str:
        return next((v for k, v in self.symbols if k == key), default)

    def string(self, key: str, default: str) -> str:
        return next((v for k, v in self.text if k == key), default)

    def limit(self, key: str, default: float) -> float:
        return next((v for k, v in self.limits if k == key), default)
