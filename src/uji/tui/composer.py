"""The composer (a multi-line TextArea), its history, the emacs editing actions, and
the `/` command suggestions.

The editing actions work on any text field of the screen — the composer, a prompt's
field, a picker's filter — through `edit()`, so one keymap serves all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.widgets import Input, Static, TextArea

if TYPE_CHECKING:
    from textual.document._wrapped_document import WrappedDocument

    from uji.tui.panel_views import PanelProps

from uji.record import Struct
from uji.tui import render
from uji.tui.focus import KeyRouter


def _quick_wrapping() -> None:
    """Textual's wrapping of the composer's text, with the same results sooner: a 5 MB
    paste (230,000 lines) spent 2 s scanning each line word by word although none needed
    wrapping, and asked the document's height, a sum over every line, for each row drawn.
    A line of ASCII without tabs no longer than the width has no breaks and one section;
    the height is the count of wrapped rows Textual keeps anyway. Other lines go to
    Textual's own functions; a Textual without these names is left as it is (and
    tests/test_composer_patch.py fails, as it does when their shapes change)."""
    from textual.document import _wrapped_document as wrapped

    wrap_offsets: Callable[..., list[int]] | None = getattr(wrapped, "compute_wrap_offsets", None)
    tab_widths: Callable[..., list[tuple[str, int]]] | None = getattr(wrapped, "get_tab_widths", None)
    if wrap_offsets is None or tab_widths is None or getattr(wrap_offsets, "_uji", False):
        return

    def compute_wrap_offsets(
        text: str,
        width: int,
        tab_size: int,
        fold: bool = True,
        precomputed_tab_sections: list[tuple[str, int]] | None = None,
    ) -> list[int]:
        if len(text) <= width and text.isascii() and "\t" not in text:
            return []  # an ASCII character takes at most one cell
        return wrap_offsets(text, width, tab_size, fold, precomputed_tab_sections)

    def get_tab_widths(line: str, tab_size: int = 4) -> list[tuple[str, int]]:
        if "\t" not in line:
            return [(line, 0)] if line else []
        return tab_widths(line, tab_size)

    compute_wrap_offsets._uji = True  # type: ignore[attr-defined]
    setattr(wrapped, "compute_wrap_offsets", compute_wrap_offsets)  # noqa: B010 (not exported)
    setattr(wrapped, "get_tab_widths", get_tab_widths)  # noqa: B010
    from textual.document._document import Document

    probe = wrapped.WrappedDocument(Document("a\nb"), width=0)
    if len(getattr(probe, "_offset_to_line_info", ())) == probe.height == 2:
        wrapped.WrappedDocument.height = property(_height)  # type: ignore[method-assign,assignment]


def _height(self: WrappedDocument) -> int:
    return len(self._offset_to_line_info)


_quick_wrapping()

PLACEHOLDER = "Message uji — Enter sends · Shift/Alt+Enter or Ctrl+J: new line · / commands · ! shell"
SUGGEST_ROWS = 5  # the theme's limits.suggest_rows
INPUT_ROWS = 10  # the composer's rows before it scrolls (limits.input_rows): max-height less the rules


class Composer(KeyRouter, TextArea):
    # A plain horizontal rule above and below, as in the reference's default screen. The
    # scrollbar's columns are kept free, so the text does not wrap again (all of a big
    # paste) when the scrollbar comes.
    DEFAULT_CSS = """
    Composer {
        height: auto; max-height: 12; min-height: 3; padding: 0 1; background: $background;
        border: none; border-top: solid $foreground 25%; border-bottom: solid $foreground 25%;
        scrollbar-gutter: stable;
    }
    Composer:focus {
        border: none; border-top: solid $accent 60%; border-bottom: solid $accent 60%; background-tint: 0%;
    }
    Composer.-framed, Composer.-framed:focus { border-top: none; border-bottom: none; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__(
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            placeholder=PLACEHOLDER,
            highlight_cursor_line=False,
            **kw,  # type: ignore[arg-type]
        )
        self.sent = History()  # not `history`: TextArea keeps its undo history there

    def _rewrap_and_refresh_virtual_size(self) -> None:
        # Textual wraps every line again on each resize and when the scrollbar comes or
        # goes, even at the width the lines are wrapped at (edits keep the wrapping up to
        # date): a 100 KB paste, which grows the composer and brings the scrollbar, was
        # wrapped three times over. Wrap again only when the width changes.
        wrapped = self.wrapped_document
        if wrapped._width == self.wrap_width and wrapped._tab_width == self.indent_width:
            self._line_cache.clear()
            self._refresh_size()
            return
        super()._rewrap_and_refresh_virtual_size()

    def set_text(self, text: str) -> None:
        """Replace the text and put the cursor at the end. As an edit (Ctrl+Z takes it
        back): setting `text` builds a new document and wraps all of it twice, 2 s for a
        recalled 5 MB message; an edit wraps the lines it brings once."""
        self.replace(text, self.document.start, self.document.end)
        self.move_cursor(self.document.end)

    async def _on_paste(self, event: events.Paste) -> None:
        # A pasted path to an image attaches the image instead (tui/attachments.py).
        attach = getattr(self.app, "paste_into_composer", None)
        if attach is not None and await attach(event.text):
            event.prevent_default()


class History:
    """Ctrl+P/Ctrl+N through what was sent, keeping the draft being written."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: int | None = None  # None: editing the draft
        self._draft = ""

    def add(self, text: str) -> None:
        if text.strip() and (not self.items or self.items[-1] != text):
            self.items.append(text)
        self._index = None

    @property
    def browsing(self) -> bool:
        """Whether a sent message (not the draft) is shown."""
        return self._index is not None

    def prev(self, current: str) -> str | None:
        if not self.items:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self.items) - 1
        elif self._index > 0:
            self._index -= 1
        else:
            return None
        return self.items[self._index]

    def next(self) -> str | None:
        if self._index is None:
            return None
        if self._index < len(self.items) - 1:
            self._index += 1
            return self.items[self._index]
        self._index = None
        return self._draft


# Editing ---------------------------------------------------------------------------


class KillRing(Struct):
    """What Ctrl+K/U/W/Alt+D cut, for Ctrl+Y."""

    text: str = ""


EDIT_ACTIONS = frozenset(
    {
        "cursor_start",
        "cursor_end",
        "cursor_left",
        "cursor_right",
        "word_left",
        "word_right",
        "backspace",
        "delete_forward",
        "delete_word_back",
        "delete_word_forward",
        "delete_to_start",
        "delete_to_end",
        "yank",
        "transpose",
        "insert_newline",
    }
)


def edit(field: TextArea | Input, action: str, ring: KillRing) -> bool:
    """Run an editing action on a text field; False if it does not apply."""
    if isinstance(field, TextArea):
        return _edit_area(field, action, ring)
    return _edit_input(field, action, ring)


def _edit_area(area: TextArea, action: str, ring: KillRing) -> bool:
    row, col = area.cursor_location
    line = area.document.get_line(row)
    simple = {
        "cursor_start": area.action_cursor_line_start,
        "cursor_end": area.action_cursor_line_end,
        "cursor_left": area.action_cursor_left,
        "cursor_right": area.action_cursor_right,
        "word_left": area.action_cursor_word_left,
        "word_right": area.action_cursor_word_right,
        "backspace": area.action_delete_left,
        "delete_forward": area.action_delete_right,
    }
    if action in simple:
        simple[action]()
        return True
    if action == "insert_newline":
        area.insert("\n")
        return True
    if action == "yank":
        if ring.text:
            area.insert(ring.text)
        return True
    if action == "transpose":
        if col == 0 or len(line) < 2:
            return True
        if col == len(line):  # at the end: swap the last two characters
            col -= 1
        swapped = line[col] + line[col - 1]
        area.replace(swapped, (row, col - 1), (row, col + 1))
        area.move_cursor((row, col + 1))
        return True
    cuts: dict[str, Callable[[], tuple[tuple[int, int], tuple[int, int]]]] = {
        # At the start or end of a line, the kill takes the line break, as in emacs.
        "delete_to_start": lambda: ((row, 0), (row, col)) if col else (_before(area, row, col), (row, col)),
        "delete_to_end": lambda: (
            ((row, col), (row, len(line))) if col < len(line) else ((row, col), _after(area, row, col))
        ),
        "delete_word_back": lambda: (area.get_cursor_word_left_location(), (row, col)),
        "delete_word_forward": lambda: ((row, col), area.get_cursor_word_right_location()),
    }
    if action in cuts:
        start, end = cuts[action]()
        if start != end:
            result = area.delete(start, end)
            ring.text = result.replaced_text
        return True
    return False


def _before(area: TextArea, row: int, col: int) -> tuple[int, int]:
    return (row - 1, len(area.document.get_line(row - 1))) if row > 0 else (row, col)


def _after(area: TextArea, row: int, col: int) -> tuple[int, int]:
    return (row + 1, 0) if row + 1 < area.document.line_count else (row, col)


def _edit_input(field: Input, action: str, ring: KillRing) -> bool:
    value, pos = field.value, field.cursor_position
    simple = {
        "cursor_start": field.action_home,
        "cursor_end": field.action_end,
        "cursor_left": field.action_cursor_left,
        "cursor_right": field.action_cursor_right,
        "word_left": field.action_cursor_left_word,
        "word_right": field.action_cursor_right_word,
        "backspace": field.action_delete_left,
        "delete_forward": field.action_delete_right,
    }
    if action in simple:
        simple[action]()
        return True
    if action == "yank":
        field.insert_text_at_cursor(ring.text)
        return True
    if action == "transpose":
        if pos == 0 or len(value) < 2:
            return True
        pos = min(pos, len(value) - 1)
        field.value = value[: pos - 1] + value[pos] + value[pos - 1] + value[pos + 1 :]
        field.cursor_position = pos + 1
        return True
    if action == "delete_to_start":
        ring.text, field.value, field.cursor_position = value[:pos], value[pos:], 0
        return True
    if action == "delete_to_end":
        ring.text, field.value = value[pos:], value[:pos]
        return True
    if action == "delete_word_back":
        start = _word_start(value, pos)
        ring.text = value[start:pos]
        field.value, field.cursor_position = value[:start] + value[pos:], start
        return True
    if action == "delete_word_forward":
        end = _word_end(value, pos)
        ring.text = value[pos:end]
        field.value = value[:pos] + value[end:]
        field.cursor_position = pos
        return True
    return action == "insert_newline"  # one-line fields take no newline


def _word_start(value: str, pos: int) -> int:
    i = pos
    while i > 0 and not value[i - 1].isalnum():
        i -= 1
    while i > 0 and value[i - 1].isalnum():
        i -= 1
    return i


def _word_end(value: str, pos: int) -> int:
    i = pos
    while i < len(value) and not value[i].isalnum():
        i += 1
    while i < len(value) and value[i].isalnum():
        i += 1
    return i


# Suggestions -------------------------------------------------------------------------


class Suggestion(Struct):
    name: str
    desc: str


class Suggestions(Static):
    """The `/` popup above the composer: commands matching what was typed."""

    DEFAULT_CSS = """
    Suggestions { height: auto; max-height: 7; padding: 0 1; background: $surface; display: none; }
    """

    def __init__(self, **kw: object) -> None:
        super().__init__("", **kw)  # type: ignore[arg-type]
        self.items: list[Suggestion] = []
        self.index = 0
        self.dismissed_for: str | None = None  # Esc closes it until the text changes
        self._custom = False  # uji.ui.Suggestions draws the rows (asked each time it opens)

    @property
    def open(self) -> bool:
        return bool(self.display) and bool(self.items)

    def show(self, items: list[Suggestion]) -> None:
        if not self.open and items:
            from uji.tui.panel_views import replaced

            self._custom = replaced(self, "Suggestions")
        self.items = items
        self.index = min(self.index, max(0, len(items) - 1))
        self.display = bool(items)
        self._draw()

    def close(self) -> None:
        self.items = []
        self.display = False

    def move(self, step: int) -> None:
        if self.items:
            self.index = (self.index + step) % len(self.items)
            self._draw()

    def current(self) -> Suggestion | None:
        return self.items[self.index] if self.items else None

    def _draw(self) -> None:
        if self._custom:
            from uji.tui.panel_views import rows

            first = max(0, min(self.index - SUGGEST_ROWS + 1, len(self.items) - SUGGEST_ROWS))
            shown = self.items[first : first + SUGGEST_ROWS]
            width = max(10, self.app.size.width - 2)
            props: list[PanelProps] = [
                {"name": s.name, "desc": s.desc, "selected": i == self.index, "width": width}
                for i, s in enumerate(shown, first)
            ]
            drawn = rows(self, "Suggestions", props)
            self._custom = drawn is not None
            if drawn is not None:
                self.update(drawn)
                return
        self.update(popup_rows([(f"/{i.name}", i.desc) for i in self.items], self.index, SUGGEST_ROWS))


def popup_rows(items: list[tuple[str, str]], index: int, rows: int) -> Text:
    """A popup's (label, description) rows around the chosen one, `rows` at most."""
    first = max(0, min(index - rows + 1, len(items) - rows))
    out = Text()
    for i, (label, desc) in enumerate(items[first : first + rows], first):
        chosen = i == index
        out.append("› " if chosen else "  ", style=render.ACCENT)
        out.append(label, style=f"bold {render.ACCENT}" if chosen else render.TEXT)
        if desc:
            out.append(f"  {desc}", style=render.MUTED)
        out.append("\n")
    out.rstrip()
    return out


def matching(typed: str, commands: list[Suggestion]) -> list[Suggestion]:
    """Commands whose name starts with what follows the `/` (then those containing it)."""
    word = typed[1:].lower()
    starts = [c for c in commands if c.name.lower().startswith(word)]
    inside = [c for c in commands if word and word in c.name.lower() and c not in starts]
    return starts + inside
