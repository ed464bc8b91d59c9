"""The composer: Enter sends, the newline keys, history, the emacs keys, `/`
suggestions, `!` shell lines, Esc, and messages queued during a turn."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import (
    SIZE,
    entries,
    idle,
    make_app,
    ready,
    screen_text,
    send,
    shows,
    type_text,
    until,
)
from uji.tui.modals import SelectPanel

ALLOW_COMMANDS = 'uji.tool.policy({ run_command = { default = "allow" } })\n'


async def test_enter_sends_and_newline_keys_insert_newlines(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "one")
        for key in ("ctrl+j", "shift+enter", "alt+enter"):
            await pilot.press(key)
        await type_text(pilot, "two")
        assert app.composer.text == "one\n\n\ntwo"
        await pilot.press("enter")
        await idle(pilot)
        assert app.composer.text == ""
        await until(pilot, lambda: fake.turn_requests)
        sent = fake.turn_requests[0].body["messages"][-1]["content"]
        assert sent == "one\n\n\ntwo"


async def test_history_with_ctrl_p_and_ctrl_n_keeps_the_draft(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for prompt in ("first", "second"):
            await send(pilot, prompt)
            await idle(pilot)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+p")
        assert app.composer.text == "second"
        await pilot.press("ctrl+p")
        assert app.composer.text == "first"
        await pilot.press("ctrl+n", "ctrl+n")
        assert app.composer.text == "draft"


async def test_emacs_editing_keys(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        c = app.composer
        await type_text(pilot, "hello big world")
        await pilot.press("ctrl+w")  # delete_word_back
        assert c.text == "hello big "
        await pilot.press("ctrl+y")  # yank it back
        assert c.text == "hello big world"
        await pilot.press("ctrl+a")
        assert c.cursor_location == (0, 0)
        await pilot.press("ctrl+f", "ctrl+f", "ctrl+b")
        assert c.cursor_location == (0, 1)
        await pilot.press("ctrl+t")  # transpose: "ehllo"
        assert c.text.startswith("ehllo")
        await pilot.press("ctrl+k")
        assert c.text == "eh"
        await pilot.press("ctrl+e")
        await type_text(pilot, " there")
        await pilot.press("ctrl+left")  # what terminals send for Alt+B
        await pilot.press("alt+d")
        assert c.text == "eh "
        await pilot.press("ctrl+u")
        assert c.text == ""
        await type_text(pilot, "ab")
        await pilot.press("ctrl+a", "ctrl+d")
        assert c.text == "b"
        await pilot.press("ctrl+e", "ctrl+h")
        assert c.text == ""


async def test_slash_opens_suggestions_tab_completes_enter_runs(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = 'uji.command.add("hello", { desc = "say hello", handler = function(args) uji.notify("hello " .. args) end })\n'
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "/")
        await until(pilot, lambda: app.suggestions.open)
        names = [s.name for s in app.suggestions.items]
        assert {"login", "models", "help", "hello", "quit"} <= set(names)
        assert app.mode() == "suggest"
        await type_text(pilot, "hel")
        assert [s.name for s in app.suggestions.items][:2] == ["hello", "help"]
        screen = await shows(pilot, "say hello")
        assert "/help" in screen
        await pilot.press("tab")
        assert app.composer.text == "/hello "
        assert not app.suggestions.open
        await type_text(pilot, "you")
        await pilot.press("enter")
        await shows(pilot, "hello you")
        # Esc closes the list and keeps the text; Enter on a highlighted entry runs it.
        await type_text(pilot, "/he")
        await until(pilot, lambda: app.suggestions.open)
        await pilot.press("escape")
        assert not app.suggestions.open and app.composer.text == "/he"
        await pilot.press("ctrl+u")
        await type_text(pilot, "/hel")
        await pilot.press("down", "enter")
        await shows(pilot, "commands:")  # /help ran


async def test_shell_line_runs_is_saved_and_never_sent(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "!echo secret-$((40+2)) && pwd")
        screen = await shows(pilot, "secret-42")
        assert str(tmp_path / "work") in screen
        await until(pilot, lambda: not app.conversation.shell_running)
        conv = app.conversation
        saved = [m for m in conv.app.store.messages(conv.session_id) if m["type"] == "shell"]  # type: ignore[union-attr]
        assert saved and saved[0]["code"] == 0 and "secret-42" in saved[0]["output"]
        await send(pilot, "hi")
        await idle(pilot)
        assert "secret-42" not in str(fake.turn_requests[-1].body["messages"])
        # A failing command shows its exit code.
        await send(pilot, "!exit 3")
        await shows(pilot, "exit code 3")


async def test_escape_keeps_the_draft_and_ctrl_c_clears_it_into_the_history(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "some draft")
        await pilot.press("escape")
        assert app.composer.text == "some draft"
        await pilot.press("ctrl+c")
        assert app.composer.text == ""
        assert app.is_running and "again to quit" not in screen_text(app)
        await pilot.press("up")  # the cleared draft is the last thing in the history
        assert app.composer.text == "some draft"


async def test_ctrl_c_twice_on_an_empty_composer_quits_and_says_how_to_resume(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(text("hello back"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "hello")
        await idle(pilot)
        await type_text(pilot, "a draft")
        await pilot.press("ctrl+c")  # the draft goes, uji stays
        assert app.composer.text == "" and app.is_running
        await pilot.press("ctrl+c")  # on an empty composer: the hint, uji stays
        await shows(pilot, "Press Ctrl+C again to quit")
        assert app.is_running and app.return_code is None
        await pilot.press("ctrl+c")
        await until(pilot, lambda: app.return_code is not None, what="the exit")
    assert app.return_code == 0
    assert app.leaving.resume_hint == app.conversation.session_id is not None


async def test_up_on_the_first_line_recalls_the_last_message(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(text("one"), text("two"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for prompt in ("first", "second"):
            await send(pilot, prompt)
            await idle(pilot)
        await type_text(pilot, "line one")
        await pilot.press("ctrl+j")
        await type_text(pilot, "line two")
        await pilot.press("up")  # not on the first line: the cursor goes up a line
        assert app.composer.text == "line one\nline two" and app.composer.cursor_location[0] == 0
        await pilot.press("up")
        assert app.composer.text == "second"
        await pilot.press("up")
        assert app.composer.text == "first"
        await pilot.press("down", "down")
        assert app.composer.text == "line one\nline two"


async def test_ctrl_r_searches_messages_of_this_and_earlier_sessions(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(text("a"), text("b"), text("c"))
    earlier = make_app(tmp_path, fake)
    async with earlier.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "refactor the parser please")
        await idle(pilot)
        await pilot.press("ctrl+c", "ctrl+c")
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "fix the flaky test")
        await idle(pilot)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+r")
        await shows(pilot, "Search past messages")
        await shows(pilot, "refactor the parser please")
        panel = app.top_modal()
        assert isinstance(panel, SelectPanel)
        assert panel.labels == ["fix the flaky test", "refactor the parser please"]  # newest first
        await type_text(pilot, "pars")  # typing filters
        await until(pilot, lambda: [panel.labels[i] for i in panel.shown] == ["refactor the parser please"])
        await pilot.press("enter")
        await until(
            pilot, lambda: app.composer.text == "refactor the parser please", what="the recalled message"
        )


async def test_messages_typed_during_a_turn_are_queued_then_sent(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(tool_call("run_command", {"command": "sh wait.sh"}), text("ran it"), text("got the extra"))
    app = make_app(tmp_path, fake, ALLOW_COMMANDS)
    # The command runs until the message is queued (60 s at most): no race with a sleep.
    (tmp_path / "work" / "wait.sh").write_text(
        "i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
    )
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "sleep a bit")
        await shows(pilot, "⏺ Ran sh wait.sh")
        await send(pilot, "and one more thing")
        screen = await shows(pilot, "queued > and one more thing")
        assert "Working (" in screen
        (tmp_path / "work" / "go").touch()
        await idle(pilot)
        # Steered in after the tool result, in the same turn.
        second = fake.turn_requests[1].body["messages"]
        assert second[-1] == {"role": "user", "content": "and one more thing"}
        assert [e["text"] for e in entries(app, "user")] == ["sleep a bit", "and one more thing"]
        assert not app.queue_view.display


async def test_the_queue_shows_a_row_per_message_and_the_newest_five(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(tool_call("run_command", {"command": "sh wait.sh"}), *[text(f"answer {i}") for i in range(9)])
    app = make_app(tmp_path, fake, ALLOW_COMMANDS)
    (tmp_path / "work" / "wait.sh").write_text(
        "i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
    )
    long = "a long one " + "x" * 300
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "sleep a bit")
        await shows(pilot, "⏺ Ran sh wait.sh")
        await send(pilot, long)
        screen = await shows(pilot, "queued > a long one")
        row = next(r for r in screen.splitlines() if "queued > a long one" in r)
        assert row.rstrip().endswith("…"), "a message wider than the screen keeps to its row"
        for i in range(2, 8):
            await send(pilot, f"q{i}")
        screen = await shows(pilot, "+2 more queued")
        assert "queued > q7" in screen and "queued > q3" in screen and "queued > q2" not in screen
        await send(pilot, "q8")  # as many rows as before: the rows change in place
        screen = await shows(pilot, "+3 more queued")
        assert "queued > q8" in screen and "queued > q3" not in screen
        (tmp_path / "work" / "go").touch()
        await idle(pilot)
        sent = [m["content"] for m in fake.turn_requests[-1].body["messages"] if m["role"] == "user"]
        assert sent == ["sleep a bit", long] + [f"q{i}" for i in range(2, 9)]
        assert not app.queue_view.display


async def test_enter_right_after_fast_typing_sends_everything_typed(tmp_path: Path, fake: FakeOpenAI) -> None:
    from textual import events

    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for c in "all of this":
            app.post_message(events.Key("space" if c == " " else c, c))
        app.post_message(events.Key("enter", "\r"))  # queued behind the letters, not ahead
        await idle(pilot)
        await until(pilot, lambda: fake.turn_requests)
        assert fake.turn_requests[0].body["messages"][-1]["content"] == "all of this"


async def test_slash_then_esc_gives_up_the_command_and_what_follows_is_a_message(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(text("hi"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "/")
        await until(pilot, lambda: app.suggestions.open)
        await pilot.press("escape")
        assert app.composer.text == "" and not app.suggestions.open
        await send(pilot, "hello")
        await idle(pilot)
        await until(pilot, lambda: fake.turn_requests)
        assert fake.turn_requests[0].body["messages"][-1]["content"] == "hello"
        assert "unknown command" not in screen_text(app)


async def test_slash_sessions_typed_fast_runs_sessions_not_the_first_suggestion(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    from textual import events

    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "/")
        await until(pilot, lambda: app.suggestions.open)  # the popup is up, showing every command
        assert app.suggestions.current() is not None and app.suggestions.current().name != "sessions"  # type: ignore[union-attr]
        for c in "sessions":  # then the rest, and Enter, before the popup can catch up
            app.post_message(events.Key(c, c))
        app.post_message(events.Key("enter", "\r"))
        await shows(pilot, "Conversations in this directory")
        assert "compact" not in screen_text(app).lower()
