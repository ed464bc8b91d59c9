"""Leaving the screen: Ctrl+C's three steps (clear the field, stop what runs, quit on a
second press) and, in a worktree uji made, the question whether to keep it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.widgets import Input, TextArea

if TYPE_CHECKING:
    from uji.tui.screen_view import ScreenView
    from uji.worktree import Worktree

QUIT_WINDOW = 2.0  # seconds in which a second Ctrl+C on an empty composer quits


class Leaving:
    def __init__(self, screen: ScreenView, redraw: Callable[[], None]) -> None:
        self.screen = screen
        self.redraw = redraw  # the activity row, which says "press Ctrl+C again to quit"
        self.armed: float | None = None  # when Ctrl+C said "again to quit"
        self.broke_lua = False  # Ctrl+C stopped a config that looped as it loaded
        self.resume_hint: str | None = None  # the session to resume, printed on exit
        self.exit_notes: list[str] = []  # printed on exit too (the worktree kept or removed)

    def clear_or_quit(self) -> None:
        """Ctrl+C, as in Claude Code and Codex: clear the field being typed in (the draft
        goes to the history: ↑ brings it back); on an empty one stop what runs and say
        "press Ctrl+C again to quit"; quit on a second press within QUIT_WINDOW seconds.
        Ctrl+C that stopped a config looping as it loaded quits at once."""
        screen = self.screen
        # When the key was read, not when it is handled: on a busy machine the second press
        # may be handled long after the first though typed at once.
        now = screen.key_time if screen.key_time is not None else asyncio.get_running_loop().time()
        if self.broke_lua:
            self.broke_lua = False
            screen.spawn(screen.quit())
            return
        field = screen.active_field()
        text = field.text if isinstance(field, TextArea) else field.value if field is not None else ""
        if text:
            if field is screen.composer:
                screen.composer.sent.add(screen.pastes.expand(text))  # the marker's paste goes now
                screen.composer.text = ""
                screen.suggestions.close()
            elif isinstance(field, Input):
                field.value = ""
            self.armed = None
            return
        if self.still_armed(now):
            screen.spawn(screen.quit())
            return
        screen.conversation.interrupt()
        self.armed = now
        self.redraw()

    def still_armed(self, now: float) -> bool:
        """Whether "press Ctrl+C again to quit" still shows (it lapses after QUIT_WINDOW).
        The time it was armed stays: a second press typed in time quits even when it is
        handled after the words went away."""
        return self.armed is not None and now - self.armed <= QUIT_WINDOW

    async def leave_worktree(self) -> tuple[Worktree, bool] | None:
        """In a worktree uji made: ask whether to keep it (the default) or remove it and its
        branch, saying what it holds. (the worktree, remove?), or None elsewhere."""
        from uji import worktree as wt

        app = self.screen.conversation.app
        current = wt.find(app.cwd) if app is not None else None
        if current is None:
            return None
        try:
            changes = await asyncio.to_thread(wt.changes, current)
            held = changes.describe()
            lost = f" ({held}: lost)" if changes.any else ""
        except wt.WorktreeError as e:
            held, lost = str(e), ""
        where = os.path.relpath(current.path, current.repo)
        answer = await self.screen.select(
            f"Leaving the worktree: {held} in {where} (branch {current.branch})",
            [
                "Keep it (uji resume there comes back to it)",
                f"Remove it and its branch {current.branch}{lost}",
            ],
        )
        return current, answer == 1

    async def left_worktree(self, current: Worktree, remove: bool) -> None:
        from uji import worktree as wt

        if not remove:
            self.exit_notes.append(wt.kept(current))
            return
        try:
            self.exit_notes.append(await asyncio.to_thread(wt.remove, current))
        except wt.WorktreeError as e:
            self.exit_notes.append(f"could not remove the worktree {current.path}: {e}")
