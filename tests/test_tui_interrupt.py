"""Interrupts and quitting: Esc stops the turn (or a `!` command) and keeps the draft;
Ctrl+C twice fires before_quit and exits cleanly."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual import events

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import SIZE, entries, idle, make_app, ready, send, shows, type_text, until

ALLOW_COMMANDS = 'uji.tool.policy({ run_command = { default = "allow" } })\n'


async def test_escape_interrupts_a_long_command(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(tool_call("run_command", {"command": "sleep 30"}), text("never"))
    app = make_app(tmp_path, fake, ALLOW_COMMANDS)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "wait")
        await shows(pilot, "⏺ Ran sleep 30")
        await until(pilot, lambda: any(e.get("status") == "running" for e in entries(app, "tool")))
        await type_text(pilot, "draft")
        await pilot.press("escape")  # interrupts; the draft stays
        await idle(pilot)
        assert (
            app.composer.text == "draft"
        )  # well before the 30 s of the sleep (how soon: bench/reactions.py)
        tool = entries(app, "tool")[0]
        assert tool["content"] == "error: interrupted by the user while this tool ran"
        assert await shows(pilot, "Interrupted")
        assert len(fake.turn_requests) == 1


async def test_a_message_queued_before_the_interrupt_starts_the_next_turn(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(tool_call("run_command", {"command": "sleep 30"}), text("after the interrupt"))
    app = make_app(tmp_path, fake, ALLOW_COMMANDS)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "wait")
        await until(pilot, lambda: any(e.get("status") == "running" for e in entries(app, "tool")))
        await send(pilot, "then this")
        await pilot.press("escape")
        await shows(pilot, "after the interrupt")
        await idle(pilot)
        assert fake.turn_requests[-1].body["messages"][-1] == {"role": "user", "content": "then this"}


async def test_escape_stops_a_shell_line(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "!echo started; sleep 30")
        await shows(pilot, "started")
        await pilot.press("escape")
        await until(pilot, lambda: not app.conversation.shell_running)
        screen = await shows(pilot, "exit code 130")
        assert "interrupted" in screen


async def test_ctrl_c_fires_before_quit_and_exits(tmp_path: Path, fake: FakeOpenAI) -> None:
    marker = tmp_path / "quit-ran"
    lua = (
        ALLOW_COMMANDS
        + f"""
    uji.on("before_quit", function()
      local f = io.open("{marker}", "w"); f:write("bye"); f:close()
    end)
    """
    )
    fake.script(tool_call("run_command", {"command": "sleep 30"}))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "wait")
        await until(pilot, lambda: any(e.get("status") == "running" for e in entries(app, "tool")))
        # Two presses typed at once (read by the terminal together): the first stops the
        # turn and says "again to quit", the second quits however late it is handled.
        for _ in range(2):
            app.post_message(events.Key("ctrl+c", None))
        # The quit runs before_quit and stops the command first: wait for its exit code
        # (Textual's `_exit_renderables` is a list, never None: that wait ended at once).
        await until(pilot, lambda: app.return_code is not None, 20, "the app to exit")
    assert app.return_code == 0
    assert marker.read_text() == "bye"


async def test_a_second_ctrl_c_counts_from_when_it_was_typed(tmp_path: Path, fake: FakeOpenAI) -> None:
    # Typed 0.1 s after the first but handled seconds later (a busy machine): it quits.
    app = make_app(tmp_path, fake, "")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        first = events.Key("ctrl+c", None)
        app.post_message(first)
        await until(pilot, lambda: app.leaving.armed is not None, what='"again to quit"')
        loop = asyncio.get_running_loop()
        await until(pilot, lambda: loop.time() > first.time + 3, what="the quit window to pass")
        second = events.Key("ctrl+c", None)
        second.time = first.time + 0.1
        app.post_message(second)
        await until(pilot, lambda: app.return_code is not None, what="the app to exit")
    assert app.return_code == 0
