"""The screen tests' apps draw the screen only when a test reads it.

Under `App.run_test` an app has a headless driver, which writes nothing; yet each frame
Textual still renders the changed part of the screen (`Screen._compositor_refresh`: the
compositor's `render_update`) and the driver drops it. The tests read the screen through
`tests.test_tui_support.screen_text`, which renders the whole screen itself, so that
render was work no one saw: about 15 % of the CPU of the screen tests (five TUI files,
`-n 2`, alternated twice: 36.3 s and 35.1 s of CPU with it, 30.3 s and 30.1 s without).

`install` makes a headless app's current screen skip that render. It still lays out what
changed, as before, and forgets the regions it would have drawn (the next read renders
everything). The screen a terminal shows (tmux tests, a user's uji) is untouched: its
driver is not headless. What the skipped render used to catch, a widget whose drawing
raises, still fails its test: as a test leaves `run_test` without an error, the whole
screen is drawn once (`_drawn_on_leaving`).

The patched method is Textual's private one; `tests/test_headless_screen.py` fails if it
no longer applies (a frame would draw again) or if a raising widget went unnoticed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import cache
from typing import Any

from textual.app import App, ScreenStackError
from textual.pilot import Pilot
from textual.screen import Screen


@cache
def install() -> None:
    """Patch Textual's classes, once per process (every screen test imports this)."""
    Screen._compositor_refresh = _skipping(Screen._compositor_refresh)  # type: ignore[method-assign]
    App.run_test = _drawn_on_leaving(App.run_test)  # type: ignore[method-assign, assignment]


def _skipping(refresh: Callable[[Screen[Any]], None]) -> Callable[[Screen[Any]], None]:
    def compositor_refresh(self: Screen[Any]) -> None:
        app = self.app
        if not (app.is_headless and not app.is_inline and self is app.screen):
            return refresh(self)
        # What the original does for the top screen, but the render and its display.
        self._compositor._dirty_regions.clear()
        self._dirty_widgets.clear()
        app._update_mouse_over(self)

    return compositor_refresh


RunTest = Callable[..., AbstractAsyncContextManager[Pilot[Any]]]


def _drawn_on_leaving(run_test: RunTest) -> RunTest:
    @asynccontextmanager
    async def drawn(self: App[Any], *args: Any, **kwargs: Any) -> AsyncIterator[Pilot[Any]]:
        async with run_test(self, *args, **kwargs) as pilot:
            yield pilot
            try:
                screen = self.screen
            except ScreenStackError:  # the test closed the app: nothing left to draw
                return
            screen._compositor.render_update(full=True)

    return drawn
