"""The host side of uji.tty.open (api/tty.lua): each open terminal by number, its screen's
drawing calls and its input. In the terminal UI the screen stops reading and drawing
while Lua has the terminal (the UI port's `take_terminal`) and comes back when it closes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.lua.api.fs import later
from uji.lua.runtime import ApiError, Pending
from uji.ui.ito import ItoError

if TYPE_CHECKING:
    from rich.style import Style
    from rich.text import Text

    from uji.lua.host import LuaHost
    from uji.ui.port import Ui
    from uji.ui.tty import Terminal


def style_of(spec: Any) -> Style | None:
    """An ito style ({foreground, background, bold, ...}, or a colour) as Rich's."""
    from rich.errors import StyleSyntaxError
    from rich.style import Style

    if spec is None:
        return None
    if isinstance(spec, str):
        spec = {"foreground": spec}
    if not isinstance(spec, dict):
        raise ApiError(f"uji.tty: a style is a table {{foreground, background, bold, ...}}, got {spec!r}")

    def flag(name: str, key: str | None = None) -> bool | None:
        value = spec.get(key or name)
        return None if value is None else bool(value)

    try:
        return Style(
            color=spec.get("foreground"), bgcolor=spec.get("background"), bold=flag("bold"), dim=flag("dim"),
            italic=flag("italic"), underline=flag("underline"), reverse=flag("reverse"),
            strike=flag("strike", "strikethrough"), blink=flag("blink"),
        )  # fmt: skip
    except StyleSyntaxError as e:
        raise ApiError(f"uji.tty: {e}") from None


def spans_of(spans: Any) -> Text:
    """A string, or a list of spans ({text, style} or {text = , style = }), as Rich text."""
    from rich.text import Text

    out = Text(end="")
    if isinstance(spans, str):
        out.append(spans)
        return out
    for span in spans if isinstance(spans, list) else []:
        if isinstance(span, str):
            out.append(span)
        elif isinstance(span, dict):
            out.append(str(span.get("text", "")), style=style_of(span.get("style")) or "")
        elif isinstance(span, list) and span:
            out.append(str(span[0]), style=style_of(span[1] if len(span) > 1 else None) or "")
    return out


class Terminals:
    """The open terminals by number, and the host functions that reach them."""

    def __init__(self, host: LuaHost, ui: Ui) -> None:
        self.host = host
        self.ui = ui
        self.terms: dict[int, Terminal] = {}

    def term(self, n: int) -> Terminal:
        found = self.terms.get(int(n))
        if found is None or found.closed:
            raise ApiError("uji.tty: this terminal is closed")
        return found

    def py(self, value: Any) -> Any:
        return self.host.lua.convert.to_python(value)

    def tty_open(self) -> tuple[int, int, int]:
        from uji.ui.tty import Terminal

        give_back = self.ui.take_terminal()
        try:
            opened = Terminal.open()
        except OSError as e:
            give_back()
            raise ApiError(f"uji.tty.open: no terminal to open ({e.strerror or e})") from None
        opened.on_close = give_back
        n = max(self.terms, default=0) + 1
        self.terms[n] = opened
        return n, opened.width, opened.height

    def tty_size(self, n: int) -> tuple[int, int]:
        t = self.term(n)
        return t.width, t.height

    def tty_text(self, n: int, x: int, y: int, text: str, style: Any) -> None:
        self.term(n).text(int(x), int(y), str(text), style_of(self.py(style)))

    def tty_spans(self, n: int, x: int, y: int, spans: Any) -> None:
        self.term(n).spans(int(x), int(y), spans_of(self.py(spans)))

    def tty_line(self, n: int, y: int, spans: Any) -> None:
        self.term(n).line(int(y), spans_of(self.py(spans)))

    def tty_fill(self, n: int, x: int, y: int, w: int, h: int, char: str | None, style: Any) -> None:
        self.term(n).fill(int(x), int(y), int(w), int(h), str(char or " "), style_of(self.py(style)))

    def tty_paint(self, n: int, root: Any) -> None:
        from uji.lua.api.ito import LuaSource

        t = self.term(n)
        source = LuaSource(self.host, root)
        try:
            tree = source.render(t.width)
        except ItoError as e:
            raise ApiError(f"uji.tty: the view failed to draw: {e}") from None
        painted = self.ui.paint_ito(tree, t.width, t.height, source)
        if painted is None:
            raise ApiError(
                "uji.tty: painting an ito view needs the terminal UI (draw with text, spans, line)"
            )
        t.paint(painted, source)

    def tty_clicked(self, n: int, x: int, y: int) -> int | None:
        """The handler of the tap painted at the cell: Lua fires it (api/tty.lua)."""
        return self.term(n).clicked(int(x), int(y))

    def tty_key(self, n: int, key: Any) -> bool:
        """A key event of the input for the focused control of the last paint."""
        from uji.ui.key_table import textual_key

        t = self.term(n)
        event = self.py(key)
        if t.painted is None or t.source is None or not isinstance(event, dict):
            return False
        name = textual_key(event)
        try:
            return self.ui.ito_key(t.painted, name, event.get("char") or None, t.source)
        except ItoError as e:
            raise ApiError(f"uji.tty: a control's callback failed: {e}") from None

    def tty_wheel(self, n: int, x: int, y: int, delta: int) -> tuple[int, int, bool] | tuple[None]:
        """A wheel step for the scroll view under the cell, of the last paint: the
        callback for Lua to run (api/tty.lua), its new top row and whether that is its end."""
        t = self.term(n)
        moved = self.ui.ito_wheel(t.painted, int(x), int(y), int(delta)) if t.painted is not None else None
        return moved or (None,)

    def tty_select(self, n: int, x0: int | None, y0: int, x1: int, y1: int, style: Any) -> None:
        cells = None if x0 is None else (int(x0), int(y0), int(x1), int(y1))
        self.term(n).select(cells, style_of(self.py(style)))

    def tty_selection(self, n: int) -> str | None:
        t = self.term(n)
        return t.selected_text() if t.selection is not None else None

    def tty_copy(self, n: int, text: str) -> None:
        self.term(n).copy(str(text))

    def tty_cursor(self, n: int, shape: str, x: int | None, y: int | None) -> None:
        self.term(n).cursor(str(shape), None if x is None else int(x), None if y is None else int(y))

    def tty_write(self, n: int, raw: str) -> None:
        self.term(n).write(str(raw))

    def tty_flush(self, n: int) -> None:
        self.term(n).flush()

    def tty_suspend(self, n: int) -> None:
        self.term(n).suspend()

    def tty_resume(self, n: int) -> None:
        self.term(n).resume()

    def tty_read(self, n: int, timeout: float | None) -> Pending:
        t = self.term(n)

        async def read() -> Any:
            event = await t.next_event(None if timeout is None else float(timeout))
            return (
                None if event is None else self.host.lua.convert.to_lua(event, json_null=False)
            )  # a Lua table

        return later(read)

    def tty_close(self, n: int) -> bool:
        t = self.terms.pop(int(n), None)
        if t is None or t.closed:
            return False
        t.close()
        return True


NAMES = ("tty_open", "tty_size", "tty_text", "tty_spans", "tty_line", "tty_fill", "tty_paint", "tty_clicked", "tty_key",
         "tty_wheel", "tty_select", "tty_selection", "tty_copy",
         "tty_cursor", "tty_write", "tty_flush", "tty_suspend", "tty_resume", "tty_read", "tty_close")  # fmt: skip


def install(host: LuaHost, ui: Ui) -> dict[str, Callable[..., Any]]:
    terminals = Terminals(host, ui)
    return {name: getattr(terminals, name) for name in NAMES}
