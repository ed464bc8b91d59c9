"""The commands every frontend has because the App has them: `/sync` (update the packs,
then reload) and `/diagnostics` (the log of what went wrong, newest first). They are
Python commands in the App's table, so `uji run "/sync"` runs them as the screen does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.command_registry import Command, Commands

if TYPE_CHECKING:
    from uji.diagnostics import Diagnostics
    from uji.notices import Notice
    from uji.packs import Packs
    from uji.ui.port import Ui

SHOWN = 50  # /diagnostics shows the newest entries


def add_shared_commands(
    commands: Commands, packs: Packs, diagnostics: Diagnostics, ui: Ui, notice: Notice
) -> None:
    async def sync(args: str) -> None:
        if not packs.specs:
            notice("/sync: no packs (uji.pack.add in init.lua adds them)")
            return
        lines = await packs.update()
        notice("/sync:\n" + "\n".join(f"  {line}" for line in lines))
        ui.reload(False)  # the new code takes effect

    async def show_diagnostics(args: str) -> None:
        entries = diagnostics.list(SHOWN)
        if not entries:
            notice(f"no diagnostics ({diagnostics.path} is empty)")
            return
        lines = [f"diagnostics, newest first ({diagnostics.path}):"]
        lines += [f"  {e['time']} {e['source']}: {e['text']}" for e in entries]
        notice("\n".join(lines))

    commands.add(Command("sync", sync, "update the packs, then reload", "uji", lua=False))
    commands.add(Command("diagnostics", show_diagnostics, "what went wrong, newest first", "uji", lua=False))
