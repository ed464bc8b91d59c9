"""A theme (`uji.ui.configure{theme}`) on the screen: its colours, symbols, strings and
limits become those `uji.tui.render` draws with. The entries drawn before are drawn again
by the caller."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from uji.tui import modals, render

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


def apply(theme: Theme) -> None:
    for name, key in COLORS.items():
        setattr(render, name, theme.color(key, str(DEFAULTS[name])))
    for name, key in SYMBOLS.items():
        setattr(render, name, theme.symbol(key, str(DEFAULTS[name])) or str(DEFAULTS[name]))
    render.MORE = theme.string("more_lines", "+%d lines").replace("%d", "{}")
    modals.SELECT_ROWS = int(theme.limit("select_rows", 13))


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
