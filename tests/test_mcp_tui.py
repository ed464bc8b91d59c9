"""/mcp on the screen: each server's state, while the screen is already usable."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_mcp import SERVER
from tests.test_tui_support import SIZE, answerable, idle, make_app, ready, send, shows, until


async def test_mcp_shows_each_servers_state(tmp_path: Path, fake: FakeOpenAI) -> None:
    command = [sys.executable, str(SERVER), str(tmp_path / "calls.jsonl")]
    lua = f"""
    uji.mcp.add("good", {{ command = {json.dumps(command).replace("[", "{").replace("]", "}")} }})
    -- never answers the handshake: connecting for as long as the test runs
    uji.mcp.add("mute", {{ command = {{ "sleep", "600" }} }})
    uji.mcp.add("gone", {{ command = {{ "/nonexistent/mcp-server" }} }})
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        uji = (await ready(pilot)).conversation.app  # the screen takes input while the servers connect
        await send(pilot, "/mcp")
        screen = await shows(pilot, "mute: connecting")
        assert "MCP servers:" in screen
        assert uji is not None
        # The SDK's import alone takes tens of seconds on a loaded two-core machine.
        await until(pilot, lambda: uji.mcp.servers["good"].state != "connecting", 180, what="good connected")
        await send(pilot, "/mcp")
        await shows(pilot, "good: ready with 11 tools")
        await shows(pilot, "gone: failed: command not found: /nonexistent/mcp-server")


async def test_allow_for_the_session_allows_an_mcp_tool_whatever_its_arguments(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    log = tmp_path / "calls.jsonl"
    command = [sys.executable, str(SERVER), str(log)]
    lua = f'uji.mcp.add("t", {{ command = {json.dumps(command).replace("[", "{").replace("]", "}")}, wait = 300 }})'
    fake.script(
        tool_call("t__echo", {"text": "one"}, id="a"),
        tool_call("t__echo", {"text": "two"}, id="b"),
        text("done"),
    )
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        uji = (await ready(pilot)).conversation.app
        assert uji is not None
        await send(pilot, "echo twice")
        screen = await shows(pilot, "for this session", timeout=300)
        assert "2. Yes, and allow this tool for this session" in screen
        await answerable(pilot)
        await pilot.press("a")
        # The second call, with other arguments, is not asked: the remembered allow is the tool's.
        await until(pilot, lambda: len(fake.turn_requests) == 3, timeout=120, what="the turn's end")
        await idle(pilot)
    assert [c["args"] for c in (json.loads(line) for line in log.read_text().splitlines())] == [
        {"text": "one"},
        {"text": "two"},
    ]
    assert [r.subject for r in uji.gate.policy.remembered.rules] == ["*"]
