"""/mcp on the screen: each server's state, while the screen is already usable."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_mcp import SERVER, lua_list
from tests.test_mcp_auth import BROWSER, Locked, locked  # noqa: F401 (the fixture)
from tests.test_tui_support import SIZE, answerable, idle, make_app, ready, send, shows, type_text, until


async def pick(pilot: Pilot[Any], title: str, label: str) -> None:
    """In the open list titled `title`, choose the row holding `label` (typed as a filter)."""
    await shows(pilot, title)
    await type_text(pilot, label)
    await pilot.press("enter")


async def test_mcp_is_a_menu_of_the_servers_with_their_state_errors_and_actions(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    command = [sys.executable, str(SERVER), str(tmp_path / "calls.jsonl")]
    lua = f"""
    uji.mcp.add("good", {{ command = {lua_list(command)} }})
    -- never answers the handshake: connecting for as long as the test runs
    uji.mcp.add("mute", {{ command = {{ "sleep", "600" }} }})
    uji.mcp.add("gone", {{ command = {{ "/nonexistent/mcp-server" }} }})
    uji.mcp.add("bad", {{ command = {lua_list([*command, "--fail"])} }})
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        uji = (await ready(pilot)).conversation.app  # the screen takes input while the servers connect
        assert uji is not None
        await send(pilot, "/mcp")
        screen = await shows(pilot, "MCP servers · Enter")
        assert re.search(r"mute +connecting", screen), screen
        await pilot.press("escape")
        # The SDK's import alone takes tens of seconds on a loaded two-core machine.
        servers = uji.mcp.servers
        await until(pilot, lambda: servers["good"].state != "connecting", 180, what="good connected")
        await until(pilot, lambda: servers["bad"].state != "connecting", 180, what="bad failed")
        await send(pilot, "/mcp")
        screen = await shows(pilot, "MCP servers · Enter")
        assert re.search(r"good +connected +12 tools", screen), screen
        assert re.search(r"gone +failed", screen), screen
        # A failed server: its exit status and the end of its stderr, and what can be done.
        await pick(pilot, "MCP servers · Enter", "bad")
        screen = await shows(pilot, "bad: failed")
        assert "exited before it was ready (exit status 2)" in screen
        assert "stderr: bad config: no token given" in screen
        assert "Reconnect" in screen and "Disable for this session" in screen
        await pilot.press("escape")
        # Disabled for the session: its tools leave the registry, the menu says so.
        await send(pilot, "/mcp")
        await pick(pilot, "MCP servers · Enter", "good")
        screen = await shows(pilot, "tools: echo, peek")
        await pick(pilot, "good: connected", "Disable")
        await shows(pilot, "MCP server good disabled for this session")
        assert not [n for n in uji.gate.registry.names() if n.startswith("good__")]
        await send(pilot, "/mcp")
        screen = await shows(pilot, "MCP servers · Enter")
        assert re.search(r"good +disabled", screen), screen
        # Enabled again: connected, its tools back.
        await pick(pilot, "MCP servers · Enter", "good")
        await pick(pilot, "good: disabled", "Enable")
        await shows(pilot, "MCP server good after reconnecting: ready with 12 tools", timeout=180)
        assert "good__echo" in uji.gate.registry.names()


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


async def test_a_turn_that_goes_on_without_a_servers_tools_says_which_and_why_on_the_screen(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    command = [sys.executable, str(SERVER), str(tmp_path / "calls.jsonl"), "--delay", "600"]
    lua = f"""
    uji.mcp.add("slow", {{ command = {lua_list(command)} }})
    uji.mcp.configure({{ wait = 0 }})
    """
    fake.script(text("ok"))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "go")
        await until(pilot, lambda: len(fake.turn_requests) == 1, timeout=120, what="the request")
        await idle(pilot)
        await shows(pilot, "MCP server slow is still connecting after 0s: this turn goes on without")
    assert not [n for n in fake.turn_requests[0].body.get("tools", []) if "slow__" in json.dumps(n)]


async def test_mcp_logs_in_to_a_server_that_needs_it(
    tmp_path: Path,
    fake: FakeOpenAI,
    locked: Locked,  # noqa: F811 (the fixture imported above)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BROWSER", BROWSER)  # follows the authorization page's redirects
    app = make_app(tmp_path, fake, f'uji.mcp.add("web", {{ url = "{locked.url}" }})')
    async with app.run_test(size=SIZE) as pilot:
        uji = (await ready(pilot)).conversation.app
        assert uji is not None
        web = uji.mcp.servers["web"]
        await until(pilot, lambda: web.state == "failed", 180, what="web refused")
        await send(pilot, "/mcp")
        screen = await shows(pilot, "MCP servers · Enter")
        assert re.search(r"web +needs login", screen), screen
        await pick(pilot, "MCP servers · Enter", "web")
        await pick(pilot, "web: needs login", "Log in")
        await until(pilot, lambda: web.state == "ready", 180, what="web logged in")
        assert "web__echo" in uji.gate.registry.names()
