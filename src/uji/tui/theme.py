"""A theme (`uji.ui.configure{theme}`) on the screen: its colours, symbols, strings and
limits become those `uji.tui.render` draws with. The entries drawn before are drawn again
by the caller."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from uji.tui import approval, attachments, composer, footer, modals, render

if TYPE_CHECKING:
    from uji.tui.command_view import CommandView
    from uji.ui.ito import Theme

# render's names and the theme keys they come from.
COLORS = {
    "TEXT": "text", "MUTED": "muted", "CODE": "code", "ACCENT": "accent", "USER_BG": "user_bg",
    "ERROR": "error", "NOTICE": "notice", "SELECTED_BG": "selected_bg",
    "ADDED": "diff.added", "REMOVED": "diff.removed", "HUNK": "diff.hunk",
}  # fmt: skip
SYMBOLS = {"TOOL": "tool", "BRANCH": "branch", "PROMPT": "prompt", "SPINNER": "spinner"}
DEFAULTS = {name: getattr(render, name) for name in [*COLORS, *SYMBOLS, "MORE"]}
# The theme's text strings (printf forms: "%d" becomes "{}") and limits, by module: the
# module's name, the theme key, its default.
STRINGS = [
    (render, "MORE", "more_lines", "+%d lines"), (footer, "WORKING", "working", "Working (%ds)"),
    (approval, "YES", "yes", "Yes"), (approval, "NO", "no", "No"),
    (approval, "PROCEED", "proceed", "proceed"),
    (approval, "TELL", "tell", "and tell uji what to do differently"),
]  # fmt: skip
LIMITS = [
    (render, "TOOL_PREVIEW", "tool_preview", 8), (render, "DIFF_PREVIEW", "diff_preview", 20),
    (modals, "SELECT_ROWS", "select_rows", 13), (composer, "SUGGEST_ROWS", "suggest_rows", 5),
    (composer, "INPUT_ROWS", "input_rows", 10), (attachments, "PASTE_LINES", "paste_lines", 1),
    (attachments, "PASTE_CHARS", "paste_chars", 80),
]  # fmt: skip


def _form(printf: str, default: str) -> str:
    """A theme string as Python formats it: one "%d" (or none where the default has none)."""
    if printf.count("%d") != default.count("%d") or "{" in printf or "}" in printf:
        printf = default
    return printf.replace("%d", "{}")


def apply(theme: Theme) -> None:
    for name, key in COLORS.items():
        setattr(render, name, theme.color(key, str(DEFAULTS[name])))
    for name, key in SYMBOLS.items():
        setattr(render, name, theme.symbol(key, str(DEFAULTS[name])) or str(DEFAULTS[name]))
    for module, name, key, text in STRINGS:
        setattr(module, name, _form(theme.string(key, text), text))
    attachments.use_image_format(_form(theme.string("image", "[image #%d]"), "[image #%d]"))
    for module, name, key, number in LIMITS:
        setattr(module, name, max(1, int(theme.limit(key, number))))
    footer.FRAME = max(0.02, theme.limit("spinner", 0.08))
    width, height = theme.limit("float.1", 0.9), theme.limit("float.2", 0.8)
    modals.FLOAT = (min(1.0, max(0.2, width)), min(1.0, max(0.2, height)))


def reset() -> None:
    """Back to the default theme's colours, symbols, strings and limits."""
    from uji.ui.ito import Theme

    apply(Theme(name="default", colors=(), symbols=(), text=(), limits=()))


async def command(tui: CommandView, args: str) -> None:
    """/theme [name]: pick a theme; the screen shows each as the list moves over it (a live
    preview), Enter keeps and saves it, Esc goes back to the one before."""
    from uji.lua.api.system import list_modules
    from uji.lua.runtime import LuaError

    app = tui.conversation.app
    if app is None:
        return
    rt = app.lua
    names = [n.rsplit(".", 1)[-1] for n in list_modules("uji.themes", str(rt.lua.globals().package.path))]
    before = str(rt.uji.ui.theme() or "default")

    async def use(name: str, save: bool = False) -> bool:
        try:
            await rt.call(rt.uji.ui.configure, rt.convert.to_lua({"theme": name}))
            if save:
                await rt.call(rt.uji.ui.save_theme, name)
        except LuaError as e:
            tui.show_notice(f"/theme: {e}")
            return False
        return True

    wanted = args.strip()
    if wanted:
        if await use(wanted, save=True):
            tui.show_notice(f"theme: {wanted} (saved)")
        return
    if not names:
        tui.show_notice("no themes found (lua/uji/themes/*.lua)")
        return
    current = names.index(before) if before in names else None

    previews: list[asyncio.Task[bool]] = []

    def preview(index: int) -> None:
        for task in previews:  # only the theme moved to last counts
            task.cancel()
        previews[:] = [asyncio.get_running_loop().create_task(use(names[index]))]

    chosen = await tui.select("Theme", names, current, on_move=preview)
    if chosen is None:
        await use(before)
        return
    if await use(names[chosen], save=True):
        tui.show_notice(f"theme: {names[chosen]} (saved)")
