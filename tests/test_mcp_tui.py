"""/mcp on the screen: each server's state, while the screen is already usable."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.test_mcp import SERVER
from tests.test_tui_support import SIZE, make_app, ready, send, shows, until


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
        await shows(pilot, "good: ready with 10 tools")
        await shows(pilot, "gone: failed: command not found: /nonexistent/mcp-server")
