"""The sandbox on the screen: the bottom bar names it, `/sandbox` says what commands may
reach, and a command the sandbox stopped is offered to run once more outside it (a
question like any approval, never automatic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import SIZE, answerable, idle, make_app, ready, send, shows
from uji.sandbox.landlock import abi_version

pytestmark = pytest.mark.skipif(
    abi_version() < 4, reason="needs Landlock ABI 4+ (this machine's kernel has it)"
)

OUTSIDE = tool_call("run_command", {"command": "touch ../outside.txt"})


async def _blocked_then(tmp_path: Path, fake: FakeOpenAI, key: str) -> str:
    fake.script(OUTSIDE, text("ok"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "sandboxed")  # the bottom bar
        await send(pilot, "make a file beside the project")
        await shows(pilot, "Would you like to run run_command?")
        await answerable(pilot)
        await pilot.press("y")  # the gate's question: run it (in the sandbox)
        screen = await shows(pilot, "Run it again outside the sandbox?")
        assert "blocked by the sandbox: writing outside the working directory" in screen
        assert not (tmp_path / "outside.txt").exists()  # the kernel held the first run
        await answerable(pilot)
        await pilot.press(key)
        await idle(pilot)
    result = fake.turn_requests[1].body["messages"][-1]
    assert result["role"] == "tool"
    return str(result["content"])


async def test_a_blocked_command_runs_again_outside_when_the_user_says_so(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    result = await _blocked_then(tmp_path, fake, "y")
    assert (tmp_path / "outside.txt").exists()
    assert result.startswith(
        "[the sandbox stopped this command; the user let it run again outside the sandbox]"
    )


async def test_a_blocked_command_stays_blocked_when_the_user_says_no(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    result = await _blocked_then(tmp_path, fake, "n")
    assert not (tmp_path / "outside.txt").exists()
    assert "blocked by the sandbox: writing outside the working directory" in result


async def test_slash_sandbox_says_what_commands_may_reach(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake, 'uji.sandbox.configure{ network = false, writable = { "/srv/out" } }\n')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/sandbox")
        screen = await shows(pilot, "network: off")
        assert "Sandbox: workspace-write" in screen and "/srv/out" in screen and "~/.ssh" in screen


async def test_the_bar_says_when_there_is_no_sandbox(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake, 'uji.sandbox.configure{ mode = "off" }\n')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "no sandbox")
