"""Lays an ito tree out in a width and paints it as Rich text lines.

ito's layout rules are its own (reference §6): a Spacer splits a stack's room, the 9
alignments, ZStack layers, borders with titles, modifiers applied innermost first. So one
widget per root (`uji.tui.ito.view.ItoView`) draws its whole tree with these rules, rather
than one Textual container per view, whose layout would differ; a toolbar row then repaints
without a layout pass of the screen.

Every block drawn here is a list of lines, each exactly `width` cells."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text

from uji.record import Struct, field

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console

    from uji.ui.ito import ItoSource, Node, Span

    Modifier = Callable[["Inside", list[Any]], "Lines | None"]

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_FRAME = 0.08
BORDERS = {
    "rounded": "╭╮╰╯─│",
    "plain": "┌┐└┘─│",
    "single": "┌┐└┘─│",
    "double": "╔╗╚╝═║",
    "thick": "┏┓┗┛━┃",
    "heavy": "┏┓┗┛━┃",
    "ascii": "++++-|",
    "horizontal": "  ──── ",
}
TEXT_MODS = frozenset(
    {"foreground", "bold", "dim", "italic", "underline", "reverse", "strikethrough", "blink", "style"}
)
ALIGN_X = {"leading": 0.0, "center": 0.5, "trailing": 1.0}
ALIGN_Y = {"top": 0.0, "center": 0.5, "bottom": 1.0}

Lines = list[Text]


class Control(Struct):
    """A control drawn in the tree: keys go to the focused one."""

    node: Node
    kind: str  # textfield | list | scroll
    rows: int = 0  # a scroll view: all its rows, the rows shown, the first shown
    window: int = 0
    top: int = 0
    x: int = 0  # a scroll view: where it is drawn (the wheel scrolls the one under the pointer)
    y: int = 0
    width: int = 0


class Tap(Struct):
    x: int
    y: int
    width: int
    height: int
    handler: int


class Painted(Struct):
    lines: Lines = field(default_factory=list)
    controls: list[Control] = field(default_factory=list)
    taps: list[Tap] = field(default_factory=list)
    animated: bool = False  # a Spinner: repaint on a timer


class Ctx:
    def __init__(
        self, source: ItoSource | None, focus: int | None, colors: dict[str, str], console: Console
    ) -> None:
        self.source = source
        self.focus = focus
        self.colors = colors
        self.console = console
        self.painted = Painted()


def _console() -> Console:
    import io

    from rich.console import Console

    return Console(width=200, color_system="truecolor", file=io.StringIO(), legacy_windows=False)


_CONSOLE: Console | None = None


def paint(
    node: Node | None,
    width: int,
    height: int | None = None,
    *,
    source: ItoSource | None = None,
    focus: int | None = None,
    colors: dict[str, str] | None = None,
) -> Painted:
    """The tree in `width` cells (and `height` rows when given)."""
    global _CONSOLE
    if _CONSOLE is None:
        _CONSOLE = _console()
    ctx = Ctx(source, focus, colors or {}, _CONSOLE)
    if node is None or width <= 0:
        return ctx.painted
    ctx.painted.lines = draw(ctx, node, max(1, width), height, 0, 0, Style())
    return ctx.painted


# Helpers -----------------------------------------------------------------------------


def blank(width: int, style: Style | None = None) -> Text:
    return Text(" " * width, style=style or "", end="", no_wrap=True)


def fit(line: Text, width: int) -> Text:
    """The line cut or padded to exactly `width` cells."""
    n = line.cell_len
    if n > width:
        line = line.copy()
        line.truncate(width)
        while line.cell_len > width:  # wide characters
            line.right_crop(1)
        n = line.cell_len
    if n < width:
        line = line.copy()
        line.append(" " * (width - n))
    line.end = ""
    line.no_wrap = True
    return line


def shape(lines: Lines, width: int, height: int | None) -> Lines:
    out = [fit(line, width) for line in lines]
    if height is not None:
        out = out[:height] + [blank(width) for _ in range(height - len(out))]
    return out


def place(inner: Lines, iw: int, width: int, height: int, ax: float, ay: float) -> tuple[Lines, int, int]:
    """`inner` (iw wide) aligned in a width×height box; with its offset."""
    dx = int((width - iw) * ax)
    dy = int((height - len(inner)) * ay)
    out = [blank(width) for _ in range(max(0, dy))]
    for line in inner[: max(0, height - max(0, dy))]:
        row = blank(dx)
        row.append_text(line)
        out.append(fit(row, width))
    out += [blank(width) for _ in range(height - len(out))]
    return out, dx, max(0, dy)


def composite(under: Lines, over: Lines, x: int, y: int, width: int) -> Lines:
    """`over` painted on `under` at (x, y); its blank cells let `under` show."""
    out = list(under)
    for i, line in enumerate(over):
        row = y + i
        if row < 0 or row >= len(out):
            continue
        plain = line.plain
        lead = len(plain) - len(plain.lstrip(" "))
        body = line[lead : len(plain.rstrip(" "))] if plain.strip() else None
        if body is None:
            continue
        start = x + cell_len(plain[:lead])
        base = out[row]
        left, right = base[:start], base[start + body.cell_len :]
        new = Text(end="", no_wrap=True)
        new.append_text(left)
        new.append_text(body)
        new.append_text(right)
        out[row] = fit(new, width)
    return out


def mods_of(node: Node) -> list[list[Any]]:
    return node.get("mods") or []


def mod(node: Node, name: str) -> list[Any] | None:
    for m in reversed(mods_of(node)):
        if m and m[0] == name:
            found: list[Any] = m
            return found
    return None


def arg(m: list[Any] | None, i: int = 1, default: Any = None) -> Any:
    if m is None or len(m) <= i or m[i] is None:
        return default
    return m[i]


def _color(ctx: Ctx, value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return ctx.colors.get(value, value)  # a theme colour name ("accent") or a colour


def text_style(ctx: Ctx, node: Node, base: Style) -> Style:
    """The base style with the node's text modifiers on it (they reach every text inside)."""
    style = base
    for m in mods_of(node):
        name = m[0]
        if name not in TEXT_MODS:
            continue
        if name == "foreground":
            c = _color(ctx, arg(m))
            style = style + Style(color=c) if c else style
        elif name == "style":
            style = style + span_style(ctx, arg(m))
        else:
            on = bool(arg(m, 1, True))
            flags: dict[str, Any] = {name: on}
            style = style + Style(**flags)
    return style


def span_style(ctx: Ctx, spec: Any) -> Style:
    if not isinstance(spec, dict):
        return Style()
    kw: dict[str, Any] = {}
    fg, bg = _color(ctx, spec.get("foreground")), _color(ctx, spec.get("background"))
    if fg:
        kw["color"] = fg
    if bg:
        kw["bgcolor"] = bg
    for name in ("bold", "dim", "italic", "underline", "reverse", "strikethrough", "blink"):
        if name in spec:
            kw[name] = bool(spec[name])
    try:
        return Style(**kw)
    except Exception:  # an unknown colour name: drawn plain rather than not at all
        return Style()


# Measuring -----------------------------------------------------------------------------


def measure(ctx: Ctx, node: Node, avail: int) -> int:
    """The width the node takes at most `avail` cells, as drawn alone."""
    if mod(node, "hidden") is not None:
        return 0
    w = mod(node, "width")
    if w is not None and isinstance(arg(w), (int, float)):
        return min(avail, int(arg(w)))
    extra = 0
    for m in mods_of(node):
        if m[0] == "padding":
            left, _, right, _ = _pads(arg(m, 1, 1))
            extra += left + right
        elif m[0] == "border":
            edges = _edges(m)
            extra += ("left" in edges) + ("right" in edges)
    inner = max(0, avail - extra)
    natural = _measure_core(ctx, node, inner)
    mw = mod(node, "max_width")
    if mw is not None and isinstance(arg(mw), (int, float)):
        natural = min(natural, int(arg(mw)))
    return min(avail, natural + extra)


def _measure_core(ctx: Ctx, node: Node, avail: int) -> int:
    kind = node.get("kind")
    kids = node.get("children") or []
    if kind == "text":
        text = "".join(s.get("text", "") for s in node.get("spans") or [])
        if mod(node, "repeating") is not None:
            return avail
        return min(avail, max((cell_len(line) for line in text.split("\n")), default=0))
    if kind == "spacer":
        return int(node.get("min") or 0)
    if kind == "hstack":
        return _measure_hstack(ctx, node, kids, avail)
    if kind in ("vstack", "zstack", "scroll", "layout"):
        return max((measure(ctx, k, avail) for k in kids), default=0)
    if kind == "grid":
        cols = _grid_columns(ctx, kids, avail)
        return min(avail, sum(cols) + max(0, len(cols) - 1) * _spacing(node, 1))
    if kind == "gridrow":
        return min(avail, sum(measure(ctx, k, avail) for k in kids) + max(0, len(kids) - 1))
    if kind == "spinner":
        return 1
    if kind in ("textfield", "markdown"):
        return avail
    if kind == "list":
        rows = node.get("rows") or []
        return min(avail, max((measure(ctx, r, avail) for r in rows), default=0) + 2)
    return 0


def _measure_hstack(ctx: Ctx, node: Node, kids: list[Node], avail: int) -> int:
    spacing = _spacing(node, 1)
    total, shown = 0, 0
    for kid in kids:
        if kid.get("kind") == "spacer":
            total += int(kid.get("min") or 0)
            continue
        w = measure(ctx, kid, max(0, avail - total))
        if w:
            total += w + (spacing if shown else 0)
            shown += 1
    return min(avail, total)


def _spacing(node: Node, default: int) -> int:
    s = node.get("spacing")
    return int(s) if isinstance(s, (int, float)) else default


def _pads(p: Any) -> tuple[int, int, int, int]:
    """left, top, right, bottom."""
    if isinstance(p, (int, float)):
        n = int(p)
        return n, n, n, n
    if isinstance(p, dict):
        h = int(p.get("horizontal", 0) or 0)
        v = int(p.get("vertical", 0) or 0)
        return (
            int(p.get("left", h) or 0),
            int(p.get("top", v) or 0),
            int(p.get("right", h) or 0),
            int(p.get("bottom", v) or 0),
        )
    return 1, 1, 1, 1


def _edges(m: list[Any]) -> set[str]:
    opts = arg(m, 2, {})
    edges = opts.get("edges") if isinstance(opts, dict) else None
    if arg(m, 1) == "horizontal":
        return {"top", "bottom"}
    if isinstance(edges, list) and edges:
        return {str(e) for e in edges}
    if isinstance(edges, str):
        return (
            {"top", "bottom"}
            if edges == "horizontal"
            else {"left", "right"}
            if edges == "vertical"
            else {edges}
        )
    return {"top", "bottom", "left", "right"}


def _grid_columns(ctx: Ctx, rows: list[Node], avail: int) -> list[int]:
    cols: list[int] = []
    for row in rows:
        cells = row.get("children") or [] if row.get("kind") == "gridrow" else []
        for i, cell in enumerate(cells):
            w = measure(ctx, cell, avail)
            if i < len(cols):
                cols[i] = max(cols[i], w)
            else:
                cols.append(w)
    return cols


# Drawing ---------------------------------------------------------------------------------


def draw(ctx: Ctx, node: Node, width: int, height: int | None, x: int, y: int, base: Style) -> Lines:
    """The node, its modifiers applied from the innermost: lines `width` wide (`height`
    rows when given)."""
    if mod(node, "hidden") is not None:
        return [] if height is None else [blank(width) for _ in range(height)]
    style = text_style(ctx, node, base)
    layout = [m for m in mods_of(node) if m[0] not in TEXT_MODS]
    return _wrap(ctx, node, layout, width, height, x, y, style)


def _wrap(
    ctx: Ctx, node: Node, mods: list[list[Any]], width: int, height: int | None, x: int, y: int, style: Style
) -> Lines:
    """The node drawn inside its modifiers, the last one outermost."""
    if not mods:
        return shape(_core(ctx, node, width, height, x, y, style), width, height)
    m, inner = mods[-1], mods[:-1]
    modifier = MODIFIERS.get(m[0])
    drawn = (
        modifier(Inside(ctx, node, inner, width, height, x, y, style), m) if modifier is not None else None
    )
    # None: a modifier that changes nothing drawn (id, layout_id, grow, share...) or whose
    # argument is not one it takes.
    return drawn if drawn is not None else _wrap(ctx, node, inner, width, height, x, y, style)


class Inside(NamedTuple):
    """Where a modifier draws: the node, the modifiers inside this one, and the room."""

    ctx: Ctx
    node: Node
    inner: list[list[Any]]
    width: int
    height: int | None
    x: int
    y: int
    style: Style


def _padding(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    left, top, right, bottom = _pads(arg(m, 1, 1))
    iw = max(0, width - left - right)
    ih = None if height is None else max(0, height - top - bottom)
    body = _wrap(ctx, node, inner, iw, ih, x + left, y + top, style) if iw > 0 else []
    out = [blank(width) for _ in range(top)]
    for line in body:
        row = blank(left)
        row.append_text(line)
        out.append(fit(row, width))
    out += [blank(width) for _ in range(bottom)]
    return shape(out, width, height)


def _background(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    """`background(color)`, or `opaque`: the theme's background behind what is drawn."""
    opaque = m[0] == "opaque"
    color = ctx.colors.get("background") if opaque else _color(ctx, arg(m))
    body = _wrap(ctx, node, inner, width, height, x, y, style)
    if color or opaque:
        fill = Style(bgcolor=color) if color else Style()
        for line in body:
            line.style = fill + (
                line.style if isinstance(line.style, Style) else Style.parse(str(line.style or ""))
            )
    return body


def _invisible(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    if not arg(m, 1, True):
        return None
    body = _wrap(ctx, node, inner, width, height, x, y, style)
    return [blank(width) for _ in body]


def _width(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    """`width(n)` or `max_width(n)`: drawn at most n wide."""
    if not isinstance(arg(m), (int, float)):
        return None
    w = min(width, int(arg(m)))
    return shape(_wrap(ctx, node, inner, w, height, x, y, style), width, height)


def _height(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    if not isinstance(arg(m), (int, float)):
        return None
    h = int(arg(m)) if height is None else min(height, int(arg(m)))
    return shape(_wrap(ctx, node, inner, width, h, x, y, style), width, height)


def _max_height(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    if not isinstance(arg(m), (int, float)):
        return None
    limit = int(arg(m)) if height is None else min(height, int(arg(m)))
    body = _wrap(ctx, node, inner, width, None, x, y, style)
    if len(body) > limit:
        body = _wrap(ctx, node, inner, width, limit, x, y, style)
    return shape(body, width, height)


def _align(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    ax, ay = alignment(str(arg(m, 1, "center")))
    iw = min(width, _measure_mods(ctx, node, inner, width))
    probe = _wrap(ctx, node, inner, iw, None, 0, 0, style)
    h = height if height is not None else len(probe)
    dx = int((width - iw) * ax)
    dy = int((h - len(probe)) * ay)
    body = _wrap(ctx, node, inner, iw, None, x + dx, y + max(0, dy), style)
    placed, _, _ = place(body, iw, width, h, ax, ay)
    return placed


def _overlay(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    under = _wrap(ctx, node, inner, width, height, x, y, style)
    found = arg(m)
    if not isinstance(found, dict) or not under:
        return under
    over_node = cast("Node", found)
    ax, ay = alignment(str(arg(m, 2, "center")))
    ow = measure(ctx, over_node, width)
    probe = draw(ctx, over_node, ow, None, 0, 0, style)
    dx, dy = int((width - ow) * ax), max(0, int((len(under) - len(probe)) * ay))
    over = draw(ctx, over_node, ow, None, x + dx, y + dy, style)
    return composite(under, over, dx, dy, width)


def _on_tap(at: Inside, m: list[Any]) -> Lines | None:
    ctx, node, inner, width, height, x, y, style = at
    if not isinstance(arg(m), int):
        return None
    body = _wrap(ctx, node, inner, width, height, x, y, style)
    ctx.painted.taps.append(Tap(x, y, width, len(body), int(arg(m))))
    return body


def _measure_mods(ctx: Ctx, node: Node, mods: list[list[Any]], avail: int) -> int:
    return measure(ctx, {**node, "mods": mods}, avail)


def alignment(name: str) -> tuple[float, float]:
    """The 9 alignments: top_leading … bottom_trailing, center."""
    name = name.replace("-", "_")
    if name == "center":
        return 0.5, 0.5
    if name in ALIGN_X:
        return ALIGN_X[name], 0.5
    if name in ALIGN_Y:
        return 0.5, ALIGN_Y[name]
    v, _, h = name.partition("_")
    return ALIGN_X.get(h, 0.5), ALIGN_Y.get(v, 0.5)


def _border(at: Inside, m: list[Any]) -> Lines:
    ctx, node, inner, width, height, x, y, style = at
    chars = BORDERS.get(str(arg(m, 1, "rounded")), BORDERS["rounded"])
    opts = arg(m, 2, {})
    color = _color(ctx, opts.get("color") if isinstance(opts, dict) else None) or ctx.colors.get("muted")
    line_style = Style(color=color) if color else Style()
    edges = _edges(m)
    left, right = int("left" in edges), int("right" in edges)
    top, bottom = int("top" in edges), int("bottom" in edges)
    iw = max(0, width - left - right)
    ih = None if height is None else max(0, height - top - bottom)
    body = _wrap(ctx, node, inner, iw, ih, x + left, y + top, style) if iw > 0 else []
    title_mod = next((t for t in reversed(inner) if t[0] == "title"), None) or mod(node, "title")
    title = str(arg(title_mod, 1, "")) if title_mod else ""
    out: Lines = []
    h_char = chars[4]
    if top:
        row = Text(end="", no_wrap=True)
        row.append(chars[0] if left else h_char, style=line_style)
        fill = iw
        if title:
            label = f" {title} "[: max(0, iw - 1)]
            row.append(h_char, style=line_style)
            row.append(label, style=style + Style(bold=True))
            fill = iw - 1 - cell_len(label)
        row.append(h_char * max(0, fill), style=line_style)
        if right:
            row.append(chars[1], style=line_style)
        out.append(fit(row, width))
    for line in body:
        row = Text(end="", no_wrap=True)
        if left:
            row.append(chars[5], style=line_style)
        row.append_text(line)
        if right:
            row.append(chars[5], style=line_style)
        out.append(fit(row, width))
    if bottom:
        row = Text(end="", no_wrap=True)
        row.append(chars[2] if left else h_char, style=line_style)
        row.append(h_char * iw, style=line_style)
        if right:
            row.append(chars[3], style=line_style)
        out.append(fit(row, width))
    return out


def _flex(node: Node) -> float:
    """How much of a stack's spare room the node takes (0: none)."""
    if node.get("kind") == "spacer":
        return 1.0
    for name in ("grow", "share"):
        m = mod(node, name)
        if m is not None:
            v = arg(m, 1, 1)
            return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 1.0
    return 0.0


def _core(ctx: Ctx, node: Node, width: int, height: int | None, x: int, y: int, style: Style) -> Lines:
    kind = node.get("kind")
    if kind == "text":
        return _text(ctx, node, width, style)
    if kind == "spacer":
        return [blank(width) for _ in range(height or 0)]
    if kind == "hstack":
        return _hstack(ctx, node, width, height, x, y, style)
    if kind == "layout" and node.get("measure") and ctx.source is not None:
        placed = _custom_layout(ctx, node, width, x, y, style)
        if placed is not None:
            return placed
    if kind in ("vstack", "layout"):
        return _vstack(ctx, node, node.get("children") or [], width, height, x, y, style)
    if kind == "zstack":
        return _zstack(ctx, node, width, height, x, y, style)
    if kind == "grid":
        return _grid(ctx, node, width, x, y, style)
    if kind == "gridrow":
        return _hstack(ctx, node, width, height, x, y, style)
    if kind == "scroll":
        return _scroll(ctx, node, width, height, x, y, style)
    if kind == "spinner":
        ctx.painted.animated = True
        frame = SPINNER[int(time.monotonic() / SPINNER_FRAME) % len(SPINNER)]
        return [Text(frame, style=style + Style(color=ctx.colors.get("code", "#e0af68")))]
    if kind == "markdown":
        return _markdown(ctx, node.get("text", ""), width, style)
    if kind == "textfield":
        return _textfield(ctx, node, width, style)
    if kind == "list":
        return _list(ctx, node, width, height, x, y, style)
    return []


def _text(ctx: Ctx, node: Node, width: int, style: Style) -> Lines:
    spans: list[Span] = node.get("spans") or []
    text = Text(end="", style=style)
    for span in spans:
        text.append(str(span.get("text", "")), style=span_style(ctx, span.get("style")))
    if mod(node, "repeating") is not None and text.cell_len > 0:
        unit = text
        text = Text(end="", style=style)
        while text.cell_len < width:
            text.append_text(unit)
        return [fit(text, width)]
    wrap = mod(node, "wrap")
    if wrap is not None and arg(wrap, 1, True) is False:
        return [fit(line, width) for line in text.split("\n", allow_blank=True)] or [blank(width)]
    lines = text.wrap(ctx.console, width, overflow="fold")
    return [fit(line, width) for line in lines] or [blank(width)]


def _hstack(ctx: Ctx, node: Node, width: int, height: int | None, x: int, y: int, style: Style) -> Lines:
    kids = [k for k in node.get("children") or [] if mod(k, "hidden") is None]
    spacing = _spacing(node, 1)
    widths = _hstack_widths(ctx, kids, width, spacing)
    rows_by_kid: list[Lines] = []
    cx = 0
    for i, kid in enumerate(kids):
        if _spaced_before(kids, widths, i, cx):
            cx += spacing
        w = max(0, min(widths[i], width - cx))
        rows_by_kid.append(draw(ctx, kid, w, None, x + cx, y, style) if w else [])
        widths[i] = w
        cx += w
    h = height if height is not None else max((len(r) for r in rows_by_kid), default=0)
    ay = ALIGN_Y.get(str(node.get("alignment") or "top"), 0.0)
    out: Lines = []
    for row in range(h):
        line = Text(end="", no_wrap=True, style=style)
        cx = 0
        for i, lines in enumerate(rows_by_kid):
            if _spaced_before(kids, widths, i, cx):
                line.append(" " * spacing)
                cx += spacing
            r = row - int((h - len(lines)) * ay)
            line.append_text(lines[r] if 0 <= r < len(lines) else blank(widths[i]))
            cx += widths[i]
        out.append(fit(line, width))
    return out


def _spaced_before(kids: list[Node], widths: list[int], i: int, cx: int) -> bool:
    """Whether the spacing goes before kid `i`: a shown kid after another, where neither
    is a spacer."""
    return bool(
        i and widths[i] and kids[i].get("kind") != "spacer" and kids[i - 1].get("kind") != "spacer" and cx
    )


def _hstack_widths(ctx: Ctx, kids: list[Node], width: int, spacing: int) -> list[int]:
    """Fixed children take their natural widths; the room left goes to the spacers and the
    children that grow, by their shares; a spacer never gets a spacing of its own."""
    widths: list[int] = []
    used = 0
    for kid in kids:
        if _flex(kid) and kid.get("kind") == "spacer":
            widths.append(int(kid.get("min") or 0))
        else:
            widths.append(measure(ctx, kid, max(0, width - used)))
        used += widths[-1]
    gaps = sum(
        spacing
        for i, kid in enumerate(kids[1:], 1)
        if widths[i]
        and kid.get("kind") != "spacer"
        and any(widths[j] for j in range(i))
        and kids[i - 1].get("kind") != "spacer"
    )
    spare = width - used - gaps
    flex = [_flex(k) for k in kids]
    total = sum(flex)
    if spare > 0 and total:
        given = 0
        last = max(i for i, f in enumerate(flex) if f)
        for i, f in enumerate(flex):
            if f:
                share = spare - given if i == last else int(spare * f / total)
                widths[i] += share
                given += share
    return widths


def _vstack(
    ctx: Ctx, node: Node, kids: list[Node], width: int, height: int | None, x: int, y: int, style: Style
) -> Lines:
    kids = [k for k in kids if mod(k, "hidden") is None]
    spacing = _spacing(node, 0)
    ax = ALIGN_X.get(str(node.get("alignment") or "leading"), 0.0)
    # Spacers, scroll views and what grows share the rows left when the height is known.
    flex = [_flex(k) or (1.0 if k.get("kind") == "scroll" else 0.0) for k in kids]
    heights: list[int | None] = [None] * len(kids)
    if height is not None and any(flex):
        probe = Ctx(None, None, ctx.colors, ctx.console)
        fixed = spacing * max(0, len(kids) - 1)
        for i, kid in enumerate(kids):
            if not flex[i]:
                heights[i] = len(_child(probe, kid, width, None, 0, 0, style, ax))
                fixed += heights[i] or 0
        spare = max(0, height - fixed)
        total = sum(flex)
        flexible = [i for i, f in enumerate(flex) if f]
        given = 0
        for i in flexible:
            share = spare - given if i == flexible[-1] else int(spare * flex[i] / total)
            heights[i] = share
            given += share
    out: Lines = []
    for i, kid in enumerate(kids):
        if i and spacing:
            out += [blank(width) for _ in range(spacing)]
        out += _child(ctx, kid, width, heights[i], x, y + len(out), style, ax)
    return out


def _child(
    ctx: Ctx, kid: Node, width: int, height: int | None, x: int, y: int, style: Style, ax: float
) -> Lines:
    if ax == 0.0 or kid.get("kind") in ("spacer",):
        return draw(ctx, kid, width, height, x, y, style)
    w = measure(ctx, kid, width)
    dx = int((width - w) * ax)
    body = draw(ctx, kid, w, height, x + dx, y, style)
    placed, _, _ = place(body, w, width, len(body), ax, 0.0)
    return placed


def _custom_layout(ctx: Ctx, node: Node, width: int, x: int, y: int, style: Style) -> Lines | None:
    """ito.Layout(measure): `measure(sizes, width)` places the children ({x, y} each, from
    0); None (a VStack) when it gives no places."""
    kids = node.get("children") or []
    probe = Ctx(None, None, ctx.colors, ctx.console)
    widths = [measure(ctx, k, width) for k in kids]
    sizes = [
        {"width": w, "height": len(draw(probe, k, w, None, 0, 0, style))}
        for k, w in zip(kids, widths, strict=True)
    ]
    assert ctx.source is not None
    try:
        places = ctx.source.call(int(node.get("measure") or 0), sizes, width)
    except Exception:
        return None
    if not isinstance(places, list) or len(places) != len(kids):
        return None
    points = [(int(p.get("x", 0)), int(p.get("y", 0))) if isinstance(p, dict) else (0, 0) for p in places]
    height = max((py + size["height"] for (_, py), size in zip(points, sizes, strict=True)), default=0)
    out = [blank(width) for _ in range(height)]
    for kid, w, (px, py) in zip(kids, widths, points, strict=True):
        w = max(0, min(w, width - px))
        if w:
            out = composite(out, draw(ctx, kid, w, None, x + px, y + py, style), px, py, width)
    return out


def _zstack(ctx: Ctx, node: Node, width: int, height: int | None, x: int, y: int, style: Style) -> Lines:
    kids = node.get("children") or []
    ax, ay = alignment(str(node.get("alignment") or "center"))
    probes = [
        draw(Ctx(None, None, ctx.colors, ctx.console), k, measure(ctx, k, width), None, 0, 0, style)
        for k in kids
    ]
    h = height if height is not None else max((len(p) for p in probes), default=0)
    out = [blank(width) for _ in range(h)]
    for kid, probe in zip(kids, probes, strict=True):
        w = measure(ctx, kid, width)
        dx, dy = int((width - w) * ax), max(0, int((h - len(probe)) * ay))
        body = draw(ctx, kid, w, None, x + dx, y + dy, style)
        out = composite(out, body, dx, dy, width)
    return out


def _grid(ctx: Ctx, node: Node, width: int, x: int, y: int, style: Style) -> Lines:
    rows = node.get("children") or []
    spacing = _spacing(node, 1)
    cols = _grid_columns(ctx, rows, width)
    out: Lines = []
    for row in rows:
        if row.get("kind") != "gridrow":
            out += draw(ctx, row, width, None, x, y + len(out), style)
            continue
        cells = row.get("children") or []
        drawn = []
        cx = 0
        for i, cell in enumerate(cells):
            w = cols[i] if i < len(cols) else 0
            drawn.append((draw(ctx, cell, w, None, x + cx, y + len(out), style), w))
            cx += w + spacing
        h = max((len(d) for d, _ in drawn), default=0)
        for r in range(h):
            line = Text(end="", no_wrap=True)
            for i, (d, w) in enumerate(drawn):
                if i:
                    line.append(" " * spacing)
                line.append_text(d[r] if r < len(d) else blank(w))
            out.append(fit(line, width))
    return out


def _scroll(ctx: Ctx, node: Node, width: int, height: int | None, x: int, y: int, style: Style) -> Lines:
    kids = node.get("children") or []
    control = Control(node, "scroll", x=x, y=y, width=width)  # ↑/↓, PageUp/PageDown, Home/End move it
    ctx.painted.controls.append(control)
    probe_ctx = Ctx(None, None, ctx.colors, ctx.console)
    full = _vstack(probe_ctx, node, kids, width, None, 0, 0, style)
    if height is None or len(full) <= height:
        control.rows = control.window = len(full)
        return _vstack(ctx, node, kids, width, None, x, y, style)
    top = (
        len(full) - height
        if node.get("follow")
        else max(0, min(int(node.get("offset") or 0), len(full) - height))
    )
    control.rows, control.window, control.top = len(full), height, top
    return full[top : top + height]


def _markdown(ctx: Ctx, text: str, width: int, style: Style) -> Lines:
    from rich.markdown import Markdown

    options = ctx.console.options.update_width(width)
    out: Lines = []
    for segments in ctx.console.render_lines(Markdown(text), options, pad=False):
        line = Text(end="", no_wrap=True, style=style)
        for seg in segments:
            line.append(seg.text, style=seg.style)
        out.append(fit(line, width))
    return out


def _focused(ctx: Ctx, node: Node, kind: str) -> bool:
    ctx.painted.controls.append(Control(node, kind))
    index = len(ctx.painted.controls) - 1
    return ctx.focus == index if ctx.focus is not None else index == 0


def _textfield(ctx: Ctx, node: Node, width: int, style: Style) -> Lines:
    focused = _focused(ctx, node, "textfield")
    value = str(node.get("value", ""))
    shown = "•" * len(value) if node.get("hidden") else value
    line = Text(end="", no_wrap=True, style=style)
    if not value and node.get("placeholder"):
        if focused:
            line.append(" ", style=Style(reverse=True))
        line.append(str(node.get("placeholder")), style=Style(color=ctx.colors.get("muted", "#808080")))
    else:
        keep = max(0, width - 1)
        line.append(shown[-keep:] if len(shown) > keep else shown)
        if focused:
            line.append(" ", style=Style(reverse=True))
    return [fit(line, width)]


def _list(ctx: Ctx, node: Node, width: int, height: int | None, x: int, y: int, style: Style) -> Lines:
    focused = False if node.get("passive") else _focused(ctx, node, "list")
    rows = node.get("rows") or []
    selected = int(node.get("selected") or 0)
    footer = node.get("footer")
    footer_lines = draw(ctx, footer, width, None, x, y, style) if footer else []
    room = None if height is None else max(1, height - len(footer_lines))
    drawn: list[Lines] = []
    pointer_style = Style(color=ctx.colors.get("accent", "cyan"), bold=True)
    sel_bg = ctx.colors.get("selected_bg", "#3a3a4a")
    for i, row in enumerate(rows, 1):
        mark = "› " if i == selected else "  "
        body = draw(ctx, row, max(1, width - 2), None, x + 2, y, style)
        lines = []
        for j, line in enumerate(body or [blank(width - 2)]):
            out = Text(mark if j == 0 else "  ", style=pointer_style, end="", no_wrap=True)
            out.append_text(line)
            if i == selected and (focused or node.get("passive")):
                out.stylize(Style(bgcolor=sel_bg))
            lines.append(fit(out, width))
        drawn.append(lines)
    flat = [line for lines in drawn for line in lines]
    if room is not None and len(flat) > room:
        start_row = sum(len(d) for d in drawn[: max(0, selected - 1)])
        top = max(0, min(start_row - room // 2, len(flat) - room))
        flat = flat[top : top + room]
    return flat + footer_lines


# What each modifier does to the lines drawn inside it (`_wrap`): its lines, or None to
# draw them unchanged.
MODIFIERS: dict[str, Modifier] = {
    "padding": _padding,
    "border": _border,
    "background": _background,
    "opaque": _background,
    "invisible": _invisible,
    "width": _width,
    "max_width": _width,
    "height": _height,
    "max_height": _max_height,
    "align": _align,
    "overlay": _overlay,
    "on_tap": _on_tap,
}
