"""An MCP server's question (elicitation/create) on the screen: a form with the
server's message and a field per property of its schema; what the user answers
(accept with the values, decline, cancel) is what the server receives."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from textual._time import get_time
from textual.pilot import Pilot

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_mcp import SERVER, calls, lua_list
from tests.test_tui_support import SIZE, idle, make_app, ready, shows, type_text, until


async def open_form(pilot: Pilot[Any], answered: Any = None) -> Any:
    """Until a form (another than `answered`, which must have its answer) is up and past
    its guard time (Enter before it is the composer's)."""
    from uji.tui.approval import GUARD_SECONDS
    from uji.tui.form import FormPanel

    def top() -> Any:
        panel = pilot.app.top_modal()  # type: ignore[attr-defined]
        return panel if isinstance(panel, FormPanel) and panel.is_mounted else None

    if answered is not None:  # a click's Pressed message may still be on its way
        await until(pilot, answered.answer.done, what="the last form's answer")
    panel = await until(pilot, top, timeout=300, what="the form")
    await until(pilot, lambda: get_time() >= panel.shown_at + GUARD_SECONDS, what="the guard time")
    return panel


async def test_a_servers_question_is_a_form_and_the_server_gets_the_answer(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    log = tmp_path / "calls.jsonl"
    command = [sys.executable, str(SERVER), str(log)]
    lua = f"""
    uji.mcp.add("t", {{ command = {lua_list(command)}, wait = 300 }})
    uji.tool.policy({{ t__survey = {{ allow = {{ "*" }} }} }})
    """
    fake.script(
        tool_call("t__survey", {}, id="a"),
        tool_call("t__survey", {}, id="b"),
        tool_call("t__survey", {}, id="c"),
        text("done"),
    )
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "fill it in")
        await pilot.press("enter")
        first = await open_form(pilot)
        screen = await shows(pilot, "Tell me about you")
        # A field per property: titles, required marked, defaults filled in.
        assert "MCP server t asks" in screen
        assert "Your name *" in screen and "Age *" in screen and "Subscribe" in screen
        assert "0.5" in screen and "Green" in screen and "Red" in screen
        await type_text(pilot, "Al")
        await pilot.press("tab")
        await type_text(pilot, "200")
        await pilot.press("enter")
        # Checked against the schema: the form says why and stays open.
        await shows(pilot, "Age: 200 is greater than the maximum of 150")
        await pilot.press("backspace", "backspace", "backspace")
        await type_text(pilot, "42")
        await pilot.press("tab", "tab", "space", "tab", "down", "enter")
        # Declined with its button, then cancelled with Esc.
        second = await open_form(pilot, first)
        await pilot.click("#form-decline")
        await open_form(pilot, second)
        await pilot.press("escape")
        await until(pilot, lambda: len(fake.turn_requests) == 4, timeout=120, what="the turn's end")
        await idle(pilot)
    answers = [c["args"] for c in calls(log) if c["tool"] == "survey"]
    assert answers == [
        {
            "action": "accept",
            "content": {"name": "Al", "age": 42, "ratio": 0.5, "subscribe": False, "color": "blue"},
        },
        {"action": "decline", "content": None},
        {"action": "cancel", "content": None},
    ]
    contents = [m["content"] for m in fake.turn_requests[3].body["messages"] if m["role"] == "tool"]
    assert contents[0] == "survey: accept " + json.dumps(answers[0]["content"], sort_keys=True)
    assert contents[1:] == ["survey: decline null", "survey: cancel null"]
