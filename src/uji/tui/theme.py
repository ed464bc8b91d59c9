"""A theme (`uji.ui.configure{theme}`) on the screen: its colours, symbols, strings and
limits become those `uji.tui.render` draws with. The entries drawn before are drawn again
by the caller."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.tui import modals, render

if TYPE_CHECKING:
    from uji.ui.ito import Theme

# render's names and the theme keys they come from.
COLORS = {
    "TEXT": "text", "MUTED": "muted", "CODE": "code", "ACCENT": "accent", "USER_BG": "user_bg",
    "ERROR": "error", "NOTICE": "notice", "SELECTED_BG": "selected_bg",
    "ADDED": "diff.added", "REMOVED": "diff.removed", "HUNK": "diff.hunk",
}  # fmt: skip
SYMBOLS = {"TOOL": "tool", "BRANCH": "branch", "PROMPT": "prompt", "SPINNER": "spinner"}
DEFAULTS = {name: getattr(render, name) for name in [*COLORS, *SYMBOLS, "MORE"]}


def apply(theme: Theme) -> None:
    for name, key in COLORS.items():
        setattr(render, name, theme.color(key, str(DEFAULTS[name])))
    for name, key in SYMBOLS.items():
        setattr(render, name, theme.symbol(key, str(DEFAULTS[name])) or str(DEFAULTS[name]))
    render.MORE = theme.string("more_lines", "+%d lines").replace("%d", "{}")
    modals.SELECT_ROWS = int(theme.limit("select_rows", 13))
