"""The transcript: streamed markdown, reasoning shown or hidden, tool calls with their
live progress and a short result, diffs, notices and errors, long sessions."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from textual.widgets._markdown import MarkdownFence

from tests.fakes.openai_server import FakeOpenAI, status, text, tool_call
from tests.test_tui_support import SIZE, entries, idle, make_app, ready, screen_text, send, shows, until
from uji.tui import transcript as transcript_mod
from uji.tui.live import LiveAnswer
from uji.tui.modals import OutputPanel
from uji.tui.transcript import EntryView

ALLOW_ALL = """
uji.tool.policy({ default = "allow", write_file = { default = "allow" },
  edit_file = { default = "allow" }, run_command = { default = "allow" } })
"""


async def test_streamed_markdown_answer_with_highlighted_code(tmp_path: Path, fake: FakeOpenAI) -> None:
    reply = "Here is **bold** and a list:\n\n- one\n- two\n\n```python\ndef f(x):\n    return x + 1\n```\n"
    fake.script(text(reply, piece=3))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "show me")
        await idle(pilot)
        screen = await shows(pilot, "return x + 1")
        assert "> show me" in screen
        assert "bold" in screen and "**" not in screen  # rendered, not raw markdown
        live = app.query(LiveAnswer)
        assert len(live) == 1, "the answer streams into one Markdown widget"
        assert app.query(MarkdownFence), "the code block is a highlighted fence"
        assert entries(app, "answer")[0]["text"].startswith("Here is **bold**")


async def test_reasoning_hidden_until_thinking_is_toggled(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(text("The answer.", reasoning="Let me think about it carefully."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "q")
        await idle(pilot)
        await shows(pilot, "The answer.")
        assert [w for w in app.query(EntryView) if w.entry.kind == "thinking"]
        assert app.transcript.has_class("-hide-thinking")
        assert "think about it" not in await shows(pilot, "The answer.")
        await send(pilot, "/thinking")
        screen = await shows(pilot, "think about it carefully")
        assert "thinking shown" in screen
        await send(pilot, "/thinking")
        await until(pilot, lambda: app.transcript.has_class("-hide-thinking"))


async def test_tool_call_progress_then_short_preview(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = (
        ALLOW_ALL
        + """
    uji.tool.add("count", {
      description = "Counts.",
      parameters = { type = "object", properties = {} },
      display = { verb = "Counted" },
      run = function(args, ctx)
        ctx.progress("halfway there")
        -- done once the test has seen the progress line and says so (a file appears)
        local function finish()
          local go = io.open(GO)
          if not go then return uji.defer(0.02, finish) end
          go:close()
          local lines = {}
          for i = 1, 20 do lines[i] = "line " .. i end
          ctx.done(table.concat(lines, "\\n"))
        end
        finish()
      end,
    })
    """
    ).replace("GO", json.dumps(str(tmp_path / "go")))
    fake.script(tool_call("count", {}), text("Counted them."))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "count")
        running = await shows(pilot, "halfway there")
        assert "⏺ Counted" in running
        (tmp_path / "go").touch()
        screen = await shows(pilot, "Counted them.")
        assert "halfway there" not in screen
        assert "line 8" in screen and "line 9" not in screen
        assert "+12 lines" in screen


async def test_diff_for_edit_file_and_new_file_lines(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(
        tool_call("write_file", {"path": "notes.txt", "content": "alpha\nbeta\n"}, id="w"),
        tool_call("edit_file", {"path": "notes.txt", "old_string": "beta", "new_string": "gamma"}, id="e"),
        text("Edited."),
    )
    app = make_app(tmp_path, fake, ALLOW_ALL)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "edit")
        await idle(pilot)
        screen = await shows(pilot, "Edited.")
        assert "⏺ Write notes.txt" in screen and "+alpha" in screen
        assert "⏺ Update notes.txt" in screen
        assert "-beta" in screen and "+gamma" in screen
        assert (tmp_path / "work" / "notes.txt").read_text() == "alpha\ngamma\n"


async def test_errors_and_notices_are_shown(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(status(401, {"error": {"message": "bad key"}}))
    app = make_app(tmp_path, fake, 'uji.notify("hello from init.lua")\n')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "hello from init.lua")
        await send(pilot, "hi")
        await idle(pilot)
        screen = await shows(pilot, "authentication rejected")
        assert "error:" in screen


async def test_long_history_keeps_widgets_bounded(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    store = None
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        store = app.conversation.app.store  # type: ignore[union-attr]
        sid = store.create_session(app.conversation.app.cwd, "long")  # type: ignore[union-attr]
        for i in range(100):
            store.append(sid, {"type": "user", "text": f"question {i}"})
            store.append(sid, {"type": "assistant", "text": f"answer **{i}**"})
        assert app.conversation.resume(sid) is None
        await shows(pilot, "answer 99")
        t = app.transcript
        assert len(t.entries) == 200
        mounted = [e for e in t.entries if e.widget is not None]
        assert len(mounted) == transcript_mod.KEEP_MOUNTED
        assert "earlier entries" in str(t._earlier.render())
        t.scroll_home(animate=False)
        await until(
            pilot, lambda: len([e for e in t.entries if e.widget is not None]) > transcript_mod.KEEP_MOUNTED
        )
        # New messages while following the end let the oldest go again.
        t.follow()
        for i in range(transcript_mod.MAX_MOUNTED):
            t.notice(f"notice {i}")
        await until(
            pilot,
            lambda: len([e for e in t.entries if e.widget is not None]) <= transcript_mod.MAX_MOUNTED,
            what="at most MAX_MOUNTED widgets",
        )


def _long_session(app: Any, turns: int) -> str:
    """A session of `turns` turns in the store, each a question, a call, its result and
    an answer ("answer N"); returns its id."""
    uji = app.conversation.app
    assert uji is not None
    sid: str = uji.store.create_session(uji.cwd, "long")
    for i in range(turns):
        uji.store.append(sid, {"type": "user", "text": f"question {i}"})
        call = {"id": f"c{i}", "name": "read_file", "arguments": json.dumps({"path": f"f{i}.py"})}
        uji.store.append(sid, {"type": "assistant", "text": "", "tool_calls": [call]})
        uji.store.append(
            sid, {"type": "tool", "tool_call_id": f"c{i}", "name": "read_file", "content": f"body {i}"}
        )
        uji.store.append(sid, {"type": "assistant", "text": f"answer {i}"})
    return sid


async def test_a_long_session_opens_with_its_newest_messages_and_reads_older_ones_on_scroll(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        n = transcript_mod.OPEN_MESSAGES * 3
        sid = _long_session(app, n // 4)
        assert app.conversation.resume(sid) is None
        await shows(pilot, f"answer {n // 4 - 1}")
        t = app.transcript

        def texts() -> list[str]:
            return [e.data.get("text", "") for e in t.entries if e.kind == "user"]

        # Only the newest messages were read: the first question is not in memory.
        assert "question 0" not in texts() and f"question {n // 4 - 1}" in texts()
        assert len(texts()) <= transcript_mod.OPEN_MESSAGES // 4 + 1
        assert "older messages" in str(t._earlier.render())
        # Scrolling to the top reads older pages from the store until the first one.
        for _ in range(40):
            if "question 0" in texts():
                break
            t.scroll_home(animate=False)
            await pilot.pause()
            await until(pilot, lambda: not t._loading)
        assert texts() == [f"question {i}" for i in range(n // 4)]
        # Each result is shown with its call, whatever page it was read in.
        tools = [e for e in t.entries if e.kind == "tool"]
        assert [e.data.get("content") for e in tools] == [f"body {i}" for i in range(n // 4)]
        assert all(e.data.get("status") == "done" for e in tools) and len(tools) == n // 4
        for _ in range(40):  # the last entries read get their widgets as the top is reached
            await until(pilot, lambda: not t._loading)
            t.scroll_home(animate=False)
            await pilot.pause()
            if "> question 0" in screen_text(app):
                break
        assert "> question 0" in screen_text(app) and t._first == 0
        assert not t._earlier.display


async def test_ctrl_o_shows_the_whole_cut_output_in_a_scrollable_view(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(tool_call("run_command", {"command": "seq 1 40"}), text("Counted."))
    app = make_app(tmp_path, fake, ALLOW_ALL)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "count")
        screen = await shows(pilot, "Counted.")
        assert "+32 lines" in screen and "\n40" not in screen
        await pilot.press("ctrl+o")
        panel = await until(pilot, lambda: isinstance(app.top_modal(), OutputPanel) and app.top_modal())
        assert panel.view.text.split() == [str(n) for n in range(1, 41)]  # all of it
        await until(pilot, lambda: panel.view.has_focus)
        await pilot.press("pagedown", "pagedown", "pagedown")  # it scrolls to the end
        await until(pilot, lambda: panel.view.scroll_y > 0, what="the view to scroll")
        await pilot.press("escape")
        await until(pilot, lambda: app.top_modal() is None and app.composer.has_focus)


async def test_a_denied_call_reads_denied_not_ran(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = 'uji.tool.policy({ run_command = { default = "deny" } })\n'
    fake.script(tool_call("run_command", {"command": "rm -rf build"}), text("Fine."))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "clean")
        screen = await shows(pilot, "Fine.")
        assert "⏺ Denied run_command rm -rf build" in screen
        assert "Ran rm -rf build" not in screen


async def test_without_a_model_the_screen_points_to_models_and_login(tmp_path: Path) -> None:
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "hi")
        await idle(pilot)
        screen = await shows(pilot, "/models")
        assert "/login" in screen and "uji run --model" not in screen


# Answers nested 1,000 deep (the original's markdown torture case): a list, a quote.
DEEP_LIST = "".join("  " * i + f"- level {i}\n" for i in range(1000)) + "\nEND-OF-LIST\n"
DEEP_QUOTE = "> " * 1000 + "deep quote text\n\nEND-OF-QUOTE\n"


async def test_markdown_nested_1000_deep_shows_all_its_text(tmp_path: Path, fake: FakeOpenAI) -> None:
    """markdown-it drops what is nested past 20 blocks, and everything after it; deep
    nesting shows flat instead, streamed and when the session is opened again."""
    fake.script(text(DEEP_LIST, piece=4096), text(DEEP_QUOTE, piece=4096))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "a list")
        await idle(pilot)
        screen = await shows(pilot, "END-OF-LIST")
        assert "- level 998" in screen and "- level 999" in screen, "the deepest items are shown, flat"
        await send(pilot, "a quote")
        await idle(pilot)
        screen = await shows(pilot, "END-OF-QUOTE")
        assert "deep quote text" in screen
        sid = app.conversation.session_id
        assert sid is not None
        # Opened again: the finished answers, drawn by Rich rather than streamed.
        assert app.conversation.resume(sid) is None
        await until(pilot, lambda: not app.query(LiveAnswer))
        screen = await shows(pilot, "END-OF-QUOTE")
        assert "deep quote text" in screen and "END-OF-LIST" in screen and "- level 999" in screen
        app.transcript.scroll_home(animate=False)
        screen = await shows(pilot, "level 1")
        assert "level 0" in screen and "level 7" in screen, "the first levels are a nested list"


async def test_older_streamed_answers_with_many_blocks_become_plain_and_read_the_same(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    rich_answer = "Steps:\n\n- item **one**\n- item two\n- item three\n\n```python\nprint('first')\n```\n"
    fake.script(text(rich_answer), *[text(f"short answer {i}") for i in range(7)])
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for i in range(8):
            await send(pilot, f"q{i}")
            await idle(pilot)
        await shows(pilot, "short answer 6")
        answers = [e for e in app.transcript.entries if e.kind == "answer"]
        assert len(answers) == 8
        # The first (a list and a code block) is one plain widget now; the short ones stay.
        await until(pilot, lambda: isinstance(answers[0].widget, EntryView))
        assert all(isinstance(e.widget, LiveAnswer) for e in answers[1:])
        app.transcript.scroll_home(animate=False)
        screen = await shows(pilot, "print('first')")
        assert "item one" in screen and "item three" in screen and "**" not in screen


def _steps(tag: str, n: int = 10) -> str:
    """An answer of many blocks (about 7 widgets a step in Textual's Markdown)."""
    return "".join(
        f"## {tag} step {k}\n\n- first **{k}**\n- second\n\nDone with {tag} {k}.\n\n" for k in range(n)
    )


def _block_widgets(app: Any) -> int:
    """Widgets in the transcript beyond one per mounted entry: the blocks of the answers
    kept as Markdown (each layout, a streamed line, walks every mounted widget)."""
    t = app.transcript
    mounted = len([e for e in t.entries if e.widget is not None])
    return len(t.walk_children()) - mounted - 1  # the "earlier entries" line


def _plain_answers(app: Any) -> list[bool]:
    return [isinstance(e.widget, EntryView) for e in app.transcript.entries if e.kind == "answer"]


async def test_long_streamed_answers_do_not_pile_up_widgets_above_the_next_one(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(*[text(_steps(f"a{i}")) for i in range(6)])
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        t = app.transcript
        for i in range(6):
            await send(pilot, f"q{i}")
            await idle(pilot)
            newest = t.entries[-1].widget
            assert isinstance(newest, LiveAnswer)  # in sight: it stays as it was drawn
            await until(pilot, newest.finished.is_set)
            # Those above it, over the bound and scrolled past, are one plain widget each.
            want = [True] * i + [False]
            await until(pilot, lambda want=want: _plain_answers(app) == want, what=f"{i} plain answers")
            blocks = len(newest.walk_children())
            await until(pilot, lambda blocks=blocks: _block_widgets(app) == blocks, what="only its blocks")
        assert len(t.query(LiveAnswer)) == 1
        # What became plain reads the same: the first answer's steps, its lists, no markup.
        t.scroll_home(animate=False)
        screen = await shows(pilot, "Done with a0 2.")
        assert "a0 step 0" in screen and "• first 1" in screen and "**" not in screen and "##" not in screen


async def _streamed_over(tmp_path: Path, fake: FakeOpenAI, turns: int) -> tuple[int, int]:
    """A session of `turns` turns (4 messages each) opened, then a long answer streamed
    into it: (widgets on the screen once the answer has all its blocks, once it is done)."""
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        sid = _long_session(app, turns)
        assert app.conversation.resume(sid) is None
        await shows(pilot, f"answer {turns - 1}")
        reply = _steps("long")
        for k in range(0, len(reply), 4):
            app.transcript.delta("text", reply[k : k + 4])
        await shows(pilot, "Done with long 9.")  # the screen follows the end
        streaming = len(app.screen.walk_children())
        app.transcript.assistant({"type": "assistant", "text": reply})
        await until(pilot, app.query(LiveAnswer).last().finished.is_set)
        await pilot.pause()
        return streaming, len(app.screen.walk_children())


async def test_a_streamed_answer_lays_out_as_many_widgets_in_a_long_session_as_in_a_short_one(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    (tmp_path / "short").mkdir()
    (tmp_path / "long").mkdir()
    short = await _streamed_over(tmp_path / "short", fake, 14)  # 56 messages
    # 400 messages: twice what a session opens with (OPEN_MESSAGES), so the screen holds as
    # many entries as in any longer session.
    assert 2 * transcript_mod.OPEN_MESSAGES <= 400
    long = await _streamed_over(tmp_path / "long", fake, 100)
    assert long == short
    assert long[0] > 50, "the answer has its blocks as widgets while it streams"


async def test_a_mouse_selection_is_copied_and_falls_back_to_osc_52(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference (§1 keys): "Mouse selection copies the text and flashes 'copied N
    line(s)', falling back to OSC52 'via the terminal'". A selection over the transcript's
    notice is copied with wl-copy when there is one (a stand-in on PATH records what it
    got), and through the terminal when there is none."""
    from textual import events
    from textual.selection import Selection

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    got = tmp_path / "copied.txt"
    for name, body in (("wl-paste", "exit 0"), ("wl-copy", f"cat > {got}")):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setattr("uji.tui.ticker.FLASH_SECONDS", math.inf)  # the flash stays while the test reads it
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    app = make_app(tmp_path, fake, 'uji.notify("first line\\nsecond line")\n')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "second line")

        def select_notice() -> None:
            app.screen.selections = {app.query(EntryView).last(): Selection(None, None)}
            app.screen.post_message(events.TextSelected())

        select_notice()
        # The stand-in's `cat > FILE` makes the file before it writes: wait for what it got.
        await until(pilot, lambda: got.exists() and "second line" in got.read_text(), what="wl-copy's input")
        assert "first line\nsecond line" in got.read_text()
        await shows(pilot, "copied 2 lines")

        monkeypatch.setenv("PATH", "/nonexistent")
        select_notice()
        await shows(pilot, "copied 2 lines via the terminal")
        assert app.clipboard is not None and "second line" in app.clipboard
