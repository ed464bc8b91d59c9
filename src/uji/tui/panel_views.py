"""The panels' replaceable views (reference §6): `uji.ui.SelectList` and `uji.ui.Picker`
draw a row of `uji.ui.select`'s and `uji.ui.pick`'s lists, `uji.ui.Sessions` a row of
`/sessions`, `uji.ui.Suggestions` a row of the `/` suggestions, `uji.ui.Approval` the
whole question and `uji.ui.PromptField` what sits above a prompt's field (`Screen` and
`Input`: screen_layout.py). uji draws them itself until a config or a theme replaces one,
and asks once per panel (when it opens) whether one is; a replacement that raises is
logged to the diagnostics and uji draws as usual. The filter, the field, the keys and the
answers stay uji's whatever draws them.

They are drawn through the screen's `views` (tui/ito/replaced.py `Views`), reached by
name: the question panels are a base of tui/ito's overlays, so nothing here imports it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

from uji.record import Record

if TYPE_CHECKING:
    from rich.text import Text
    from textual.widget import Widget

PanelName = Literal[
    "Screen", "Input", "SelectList", "Picker", "Sessions", "Suggestions", "Approval", "PromptField"
]


class ChoiceProps(TypedDict):
    """An answer of the approval question (uji.ui.Approval's `choices`)."""

    label: str
    key: str
    kind: str


class PanelProps(TypedDict, total=False):
    """What a panel's view is given (docs/lua-api.md lists each one's)."""

    width: int
    label: str  # a list's row
    index: int
    selected: bool | int  # a row: whether it is the highlighted one; Approval: which choice is
    current: bool
    title: str  # /sessions' rows, the questions
    ago: str
    id: str
    name: str  # a suggestion
    desc: str
    body: str  # the approval question
    preview: str
    choices: list[ChoiceProps]
    hint: str
    hidden: bool  # a prompt's field
    placeholder: str  # the composer's


class RowsView(Record):
    """A list's rows drawn by `uji.ui.<name>`, each given its own fields besides uji's."""

    name: PanelName
    props: tuple[PanelProps, ...] = ()


def replaced(widget: Widget, name: PanelName) -> bool:
    views = getattr(widget.app, "views", None)
    return views is not None and name in views.replaced(name)


def drawn(widget: Widget, name: PanelName, props: PanelProps) -> list[Text] | None:
    """`uji.ui.<name>(props)` as rows (at `props["width"]`); None when it failed (logged)."""
    views = getattr(widget.app, "views", None)
    return views.rows(name, props) if views is not None else None


def rows(widget: Widget, name: PanelName, props: list[PanelProps]) -> Text | None:
    """Each row's view one under the other; None (uji draws them) when one fails."""
    from rich.text import Text

    out: list[Text] = []
    for row in props:
        lines = drawn(widget, name, row)
        if lines is None:
            return None
        out.extend(lines)
    drawn_rows = Text("\n").join(out)
    drawn_rows.no_wrap, drawn_rows.overflow = True, "crop"
    return drawn_rows
