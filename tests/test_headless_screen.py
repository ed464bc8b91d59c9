"""The screen tests' headless apps draw only when a test reads the screen
(tests/headless_screen.py): a frame does not render, a read shows what changed, and a
widget whose drawing raises still fails its test."""

from __future__ import annotations

from typing import Any

import pytest
from textual._compositor import Compositor
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.test_tui_support import screen_text, until

pytestmark = pytest.mark.timeout(120)


class Broken(Static):
    DEFAULT_CSS = "Broken { height: 1; }"
    broken = False

    def render(self) -> Any:
        if self.broken:
            raise RuntimeError("this widget cannot draw")
        return "fine"


class Shown(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("before", id="text")
        yield Broken()


async def test_a_frame_is_not_drawn_but_a_read_shows_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = 0
    render_update = Compositor.render_update

    def counted(self: Compositor, *args: Any, **kwargs: Any) -> Any:
        nonlocal drawn
        drawn += 1
        return render_update(self, *args, **kwargs)

    monkeypatch.setattr(Compositor, "render_update", counted)
    app = Shown()
    async with app.run_test(size=(40, 5)) as pilot:
        app.query_one("#text", Static).update("after")
        # The change is laid out (the screen's frame ran) without being drawn.
        await until(pilot, lambda: not app.screen._dirty_widgets, what="the frame")
        await pilot.pause()
        assert drawn == 0
        assert "after" in screen_text(app)
        assert drawn == 1


async def test_a_widget_that_cannot_draw_fails_the_test_as_it_leaves() -> None:
    app = Shown()
    with pytest.raises(RuntimeError, match="this widget cannot draw"):
        async with app.run_test(size=(40, 5)) as pilot:
            app.query_one(Broken).broken = True
            app.query_one(Broken).refresh()
            await pilot.pause()
