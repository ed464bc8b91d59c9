"""The rows that change with time: the activity row (the spinner and elapsed time, a
flash, "press Ctrl+C again to quit"), the "new below" marker, and about twice a second
the bottom bar (model, context used, mode, what the session spent) and ito's toolbars."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from uji.tui import footer
from uji.tui.footer import Status

if TYPE_CHECKING:
    from uji.tui.leaving import Leaving
    from uji.tui.screen_view import ScreenView

TICK = 0.08  # the spinner's frame time (reference limits)
FLASH_SECONDS = 2.0  # how long a flash ("copied 2 lines") stays in the activity row


class Ticker:
    def __init__(self, screen: ScreenView, leaving: Leaving) -> None:
        self.screen = screen
        self.leaving = leaving
        self._ticks = 0
        self._flash: tuple[str, float] | None = None  # a short note and when it was shown
        self._shell_started = 0.0

    def flash(self, text: str) -> None:
        self._flash = (text, asyncio.get_running_loop().time())
        self.tick(advance=False)

    def shell_started(self) -> None:
        self._shell_started = asyncio.get_running_loop().time()

    def tick(self, advance: bool = True) -> None:
        screen = self.screen
        conv = screen.conversation
        screen.new_below.show(screen.transcript.unseen, screen.views)
        now = asyncio.get_running_loop().time()
        armed = self.leaving.still_armed(now)
        flash = self._flash
        if flash is not None and now - flash[1] > FLASH_SECONDS:
            flash = self._flash = None
        if armed:
            screen.activity.note("Press Ctrl+C again to quit")
        elif flash is not None:
            screen.activity.note(flash[0], screen.views)
        elif conv.working:
            screen.activity.tick(footer.WORKING, conv.elapsed(), "Esc to interrupt", screen.views)
        elif conv.shell_running:
            elapsed = now - self._shell_started
            screen.activity.tick("Running a shell command ({}s)", elapsed, "Esc to stop it", screen.views)
        else:
            screen.activity.tick(None, 0)
        if advance:
            self._ticks += 1
            if self._ticks % 6 == 0:  # the bottom bar about twice a second
                self.refresh_status()
                if screen.bottom_bar.children or screen.top_bar.children:
                    self.redraw_bars()

    def redraw_bars(self) -> None:
        """Toolbar items read the session (the model, the context used): drawn again with
        the bottom bar."""
        from uji.tui.ito.view import ToolbarRow

        screen = self.screen
        for bar in (screen.top_bar, screen.keyboard_bar, screen.bottom_bar):
            for row in bar.query(ToolbarRow):
                row.redraw()

    def refresh_status(self) -> None:
        conv = self.screen.conversation
        app = conv.app
        if app is None:
            return
        used, window = conv.context()
        models = app.models
        model = f"{models.provider_id}/{models.model_id}" if models.provider_id and models.model_id else ""
        sandbox = app.gate.sandbox_status()
        totals = conv.agent.spending.totals() if conv.agent else {}
        spent = int(sum(totals.get(k, 0) for k in ("input", "output", "cache_read", "cache_write")))
        self.screen.status.show(
            Status(
                model=model,
                effort=models.effort,
                used=used,
                window=window,
                directory=app.cwd,
                mode=app.gate.modes.get().label,
                session_tokens=spent,
                session_cost=totals.get("cost"),
                estimated=bool(totals.get("estimated")),
                sandbox=(
                    ("sandboxed" if sandbox.mode == "workspace-write" else f"sandbox {sandbox.mode}")
                    if sandbox.available
                    else "no sandbox"
                ),
            )
        )
