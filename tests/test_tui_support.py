"""Helpers for the terminal UI tests (no tests here): build the Textual app in-process
against the fake server, wait for conditions, read the screen as text."""

from __future__ import annotations

import io
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from textual import events
from textual.keys import _character_to_key
from textual.pilot import Pilot

from tests import headless_screen, shared_stylesheet
from tests.conftest import PROVIDER_LUA
from tests.fakes.openai_server import FakeOpenAI
from tests.waiting import DEADLINE
from uji.paths import Paths
from uji.tui.app import UjiApp

SIZE = (100, 32)

# A screen is drawn when a test reads it (screen_text), not at every frame: headless_screen says why.
headless_screen.install()
# Each piece of Textual CSS is parsed once per process, not once per app: shared_stylesheet says why.
shared_stylesheet.install()


def make_app(tmp_path: Path, fake: FakeOpenAI | None, lua: str = "", **kw: Any) -> UjiApp:
    config, data, work = tmp_path / "config", tmp_path / "data", tmp_path / "work"
    for d in (config, data, work):
        d.mkdir(exist_ok=True)
    head = PROVIDER_LUA.format(base_url=fake.base_url) if fake is not None else ""
    (config / "init.lua").write_text(head + textwrap.dedent(lua))
    return UjiApp(Paths(str(config), str(data), str(data / "uji.db")), cwd=str(work), **kw)


# How long a wait for the screen may take before the test fails (tests/waiting.py says why).
WAIT = DEADLINE
# Textual's pilot waits up to 30 s for the widgets to take in each key or pause; the same
# deadline as ours instead, so a loaded machine is slow rather than failing.
Pilot._wait_for_screen.__defaults__ = (DEADLINE,)


async def until(pilot: Pilot[Any], cond: Callable[[], Any], timeout: float = WAIT, what: str = "") -> Any:
    """Pause until `cond()` is truthy; fail with the screen's text after `timeout`."""
    end = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(
                f"timed out waiting for {what or cond}\n--- screen ---\n{screen_text(pilot.app)}"
            )
        await pilot.pause(0.02)


async def ready(pilot: Pilot[Any]) -> UjiApp:
    app = pilot.app
    assert isinstance(app, UjiApp)
    await until(pilot, app.conversation.ready.is_set, what="the config to load")
    await pilot.pause()
    return app


async def idle(pilot: Pilot[Any], timeout: float = WAIT) -> None:
    """Until the turn (and any turn started from the queue) has finished."""
    app = pilot.app
    assert isinstance(app, UjiApp)
    await until(pilot, lambda: not app.conversation.working, timeout, "the turn to finish")
    await pilot.pause()


async def type_text(pilot: Pilot[Any], text: str) -> None:
    """Type `text` as key presses, all queued at once (as a fast typist's would be)."""
    for c in text:
        key = "space" if c == " " else c if c.isalnum() else _character_to_key(c)
        pilot.app.post_message(events.Key(key, c))
    await pilot.pause()


async def send(pilot: Pilot[Any], text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


def screen_text(app: Any) -> str:
    """The screen as plain text, as a user would read it."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


async def shows(pilot: Pilot[Any], snippet: str, timeout: float = WAIT) -> str:
    """Until `snippet` is on the screen; returns the screen's text."""

    def found() -> str | None:
        text = screen_text(pilot.app)
        return text if snippet in text else None

    return await until(pilot, found, timeout, f"{snippet!r} on the screen")


def entries(app: UjiApp, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in app.transcript.entries if e.kind == kind]


async def answerable(pilot: Pilot[Any]) -> Any:
    """Until a question is open and takes keys: past its guard time (it ignores keys typed
    earlier), and moved to if it appeared as the test typed (the `1` picks the first answer,
    the one highlighted when it opens, and moves to a held question)."""
    from textual._time import get_time

    from uji.tui.approval import GUARD_SECONDS, ApprovalPanel

    def top() -> Any:
        panel = pilot.app.top_modal()  # type: ignore[attr-defined]
        return panel if isinstance(panel, ApprovalPanel) and panel.is_mounted else None

    panel = await until(pilot, top, what="a question")
    await until(pilot, lambda: get_time() >= panel.shown_at + GUARD_SECONDS, what="the guard time")
    if not panel.armed():
        await pilot.press("1")
    try:
        await until(pilot, lambda: panel.armed() and panel.has_focus, what="a question that takes keys")
    except AssertionError as e:
        # Seen once in a loaded fresh-clone run and never since: say where the keyboard was.
        app = pilot.app
        state = (
            f"armed={panel.armed()} held={panel.held} mounted={panel.is_mounted} "
            f"answered={panel.answer.done()} top_is_it={app.top_modal() is panel} "  # type: ignore[attr-defined]
            f"focused={app.focused!r}"
        )
        raise AssertionError(f"{state}\n{e}") from None
    return panel
