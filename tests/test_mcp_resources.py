"""An MCP server's resources as `@server:uri` mentions and its prompts as
`/mcp__server__prompt` commands, through `uji run --json` and the terminal UI, against
the SDK-written server (tests/mcp_server.py records every read and prompt it serves)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, text
from tests.mcp_server import PNG
from tests.test_mcp import SERVER, calls, stdio_server
from tests.test_tui_support import SIZE, idle, make_app, ready, send, shows, type_text, until


def user_messages(body: dict[str, Any]) -> list[Any]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_a_resource_mention_is_read_and_sent_with_the_message(home: Home) -> None:
    log = stdio_server(home)
    home.fake.script(text("ok"))
    run = home.run("look at @t:file:///notes.txt and @t:img://pixel.", "--on-ask", "allow", check=True)
    [content] = user_messages(home.fake.turn_requests[0].body)
    rendered = json.dumps(content)
    assert "look at @t:file:///notes.txt and @t:img://pixel." in rendered
    assert (
        '<resource server=\\"t\\" uri=\\"file:///notes.txt\\">\\nthe notes say hello\\n</resource>'
        in rendered
    )
    assert f"data:image/png;base64,{PNG}" in rendered  # the image resource as an image
    assert [c["args"] for c in calls(log) if c["tool"] == "resource"] == [
        {"uri": "file:///notes.txt"},
        {"uri": "img://pixel"},
    ]
    # Saved with the message, as an @file is: the transcript says what was attached.
    files = [m for m in run.messages if m["type"] == "file"]
    assert [f["path"] for f in files] == ["t:file:///notes.txt", "t:img://pixel"]


def test_an_unknown_resource_is_a_clear_error_and_nothing_is_sent(home: Home) -> None:
    stdio_server(home)
    home.fake.script(text("ok"))
    run = home.run("look at @t:file:///nope.txt", "--on-ask", "allow")
    assert run.rc != 0
    assert home.fake.turn_requests == []
    said = " ".join([*run.notices, run.stderr, *(e.get("error", "") for e in run.of("done"))])
    assert "@t:file:///nope.txt" in said and "not sent" in said, said
    # A word like it that names no server stays text.
    home.fake.script(text("ok"))
    home.run("mail me@t:x and @nobody:file:///x", "--on-ask", "allow", check=True)
    assert user_messages(home.fake.turn_requests[0].body) == ["mail me@t:x and @nobody:file:///x"]


def test_a_prompt_is_a_command_whose_messages_are_the_users_turn(home: Home) -> None:
    log = stdio_server(home)
    home.fake.script(text("ok"))
    home.run("/mcp__t__review src/a.py security", "--on-ask", "allow", check=True)
    assert user_messages(home.fake.turn_requests[0].body) == ["Please review src/a.py, looking for security."]
    assert [c["args"] for c in calls(log) if c["tool"] == "prompt"] == [
        {"name": "review", "file": "src/a.py", "focus": "security"}
    ]
    # A required argument missing: said, and nothing sent.
    run = home.run("/mcp__t__review", "--on-ask", "allow")
    assert run.rc != 0 and len(home.fake.turn_requests) == 1
    said = " ".join([*run.notices, run.stderr, *(e.get("error", "") for e in run.of("done"))])
    assert "/mcp__t__review FILE [FOCUS]" in said, said


async def test_resources_and_prompts_in_the_terminal_ui(tmp_path: Path, fake: FakeOpenAI) -> None:
    log = tmp_path / "calls.jsonl"
    command = [sys.executable, str(SERVER), str(log)]
    lua = f'uji.mcp.add("t", {{ command = {json.dumps(command).replace("[", "{").replace("]", "}")}, wait = 300 }})'
    fake.script(text("read it"), text("reviewed"))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        uji = (await ready(pilot)).conversation.app
        assert uji is not None
        await until(pilot, lambda: uji.mcp.servers["t"].state == "ready", 300, what="t connected")
        # `@` offers the server's resources beside the files; Tab puts the mention in.
        await type_text(pilot, "see @notes")
        await shows(pilot, "@t:file:///notes.txt")
        await pilot.press("tab")
        await until(pilot, lambda: app.composer.text == "see @t:file:///notes.txt ", what="the mention")
        await pilot.press("enter")
        await until(pilot, lambda: len(fake.turn_requests) == 1, 120, what="the request")
        await idle(pilot)
        await shows(pilot, "attached")
        # The prompt is in the command list, and runs with its arguments.
        await type_text(pilot, "/mcp__")
        await shows(pilot, "/mcp__t__review")
        await pilot.press("tab")
        await until(pilot, lambda: app.composer.text == "/mcp__t__review ", what="the completed command")
        await send(pilot, "x.py")
        await until(pilot, lambda: len(fake.turn_requests) == 2, 120, what="the prompt's turn")
        await idle(pilot)
    first = json.dumps(user_messages(fake.turn_requests[0].body))
    assert "the notes say hello" in first
    assert user_messages(fake.turn_requests[1].body)[-1] == "Please review x.py, looking for bugs."
