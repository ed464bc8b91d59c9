"""Approvals: the question titled by the tool, its body and diff preview; y allows,
n / Esc / Ctrl+G deny, t denies with what to do instead; a and A remember the part that
asked. Keys typed before the question appeared, or within its guard time, answer nothing;
a question that appeared as the user typed takes no letter until they move to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual._time import get_time

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import (
    SIZE,
    answerable,
    idle,
    make_app,
    ready,
    send,
    shows,
    type_text,
    until,
)
from uji.tui import approval
from uji.tui.approval import GUARD_SECONDS, ApprovalPanel


def asking(app: object, subject: str) -> bool:
    panels = app.query(ApprovalPanel)  # type: ignore[attr-defined]
    return bool(panels) and panels.first().body == subject and not panels.first().answer.done()


WRITE = tool_call("write_file", {"path": "hello.txt", "content": "hi there\n"})


async def test_y_allows_and_the_file_is_written(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(WRITE, text("Done."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "write hello")
        screen = await shows(pilot, "Would you like to run write_file?")  # no Markdown backticks
        assert "hello.txt" in screen and "+hi there" in screen  # body and diff preview
        assert "1. Yes, proceed" in screen
        assert "2. Yes, and allow `hello.txt` for this session" in screen  # the file, shown as written here
        assert app.mode() == "confirm"
        await answerable(pilot)
        await type_text(pilot, "zz")  # stray keys go nowhere while a question is open
        assert app.composer.text == ""
        await pilot.press("y")
        await idle(pilot)
        assert (tmp_path / "work" / "hello.txt").read_text() == "hi there\n"
        assert not app.query(ApprovalPanel)
        assert app.composer.has_focus


async def test_n_denies_and_the_turn_goes_on(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(tool_call("write_file", {"path": "hello.txt", "content": "x"}), text("OK, I will not."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "write hello")
        await shows(pilot, "Would you like to run write_file?")
        await answerable(pilot)
        await pilot.press("n")
        await idle(pilot)
        assert app.composer.has_focus
        assert not (tmp_path / "work" / "hello.txt").exists()
        tool_answer = fake.turn_requests[1].body["messages"][-1]
        assert tool_answer["role"] == "tool" and tool_answer["content"] == "denied: user denied"
        screen = await shows(pilot, "OK, I will not.")
        assert "denied: user denied" in screen


async def test_an_unanswered_question_waits_for_the_user(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screen's question has no timeout (a user who stepped away comes back to it):
    with the headless/ACP timeout shortened to 0.2 s, it is still open after a timer of
    1 s started after it (timers run in deadline order, so the 0.2 s one had its turn),
    and the user's answer then decides."""
    import asyncio

    monkeypatch.setenv("UJI_APPROVAL_TIMEOUT", "0.2")
    fake.script(WRITE, text("Written."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "write hello")
        panel = await answerable(pilot)
        later = asyncio.Event()
        asyncio.get_running_loop().call_later(1.0, later.set)
        await until(pilot, later.is_set, what="a timer due after the old timeout")
        assert panel.is_mounted and not panel.answer.done() and len(fake.turn_requests) == 1
        await pilot.press("y")
        await shows(pilot, "Written.")
        assert (tmp_path / "work" / "hello.txt").exists()
        tool_answer = fake.turn_requests[1].body["messages"][-1]
        assert tool_answer["role"] == "tool" and not tool_answer["content"].startswith("denied")


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, 300.0),
        ("2.5", 2.5),
        ("0", 300.0),
        ("-1", 300.0),
        ("soon", 300.0),
        ("inf", 300.0),
        ("nan", 300.0),
    ],
)
def test_the_approval_timeout_is_300_s_unless_shortened(
    monkeypatch: pytest.MonkeyPatch, value: str | None, seconds: float
) -> None:
    from uji.agent.approval import approval_timeout

    if value is None:
        monkeypatch.delenv("UJI_APPROVAL_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("UJI_APPROVAL_TIMEOUT", value)
    assert approval_timeout() == seconds


async def test_t_waits_for_what_to_do_instead_and_the_model_gets_it(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(
        tool_call("write_file", {"path": "hello.txt", "content": "x"}), text("Writing bye.txt instead.")
    )
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "write hello")
        await shows(pilot, "5. No, and tell uji what to do differently")
        panel = await answerable(pilot)
        await pilot.press("t")
        await until(pilot, lambda: panel.telling is not None and panel.telling.has_focus)
        assert app.mode() == "prompt"
        await type_text(pilot, "ya")  # y and a are text here, not answers
        await pilot.press("escape")  # back to the question, nothing lost but the draft
        await until(pilot, lambda: panel.telling is None and panel.has_focus)
        assert app.mode() == "confirm" and not panel.answer.done()
        await pilot.press("t")
        await until(pilot, lambda: panel.telling is not None and panel.telling.has_focus)
        await pilot.press("enter")  # nothing typed: it keeps waiting
        await type_text(pilot, "call it bye.txt, not hello")
        await until(
            pilot, lambda: panel.telling is not None and panel.telling.value == "call it bye.txt, not hello"
        )
        # The turn waits for the text: the model has not been asked again.
        assert len(fake.turn_requests) == 1 and not panel.answer.done()
        await pilot.press("enter")
        await idle(pilot)
        assert not (tmp_path / "work" / "hello.txt").exists()
        tool_answer = fake.turn_requests[1].body["messages"][-1]
        assert tool_answer == {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "denied: the user said instead: call it bye.txt, not hello",
        }
        await shows(pilot, "Writing bye.txt instead.")


async def test_escape_and_ctrl_g_deny_arrows_and_enter_choose(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(
        tool_call("write_file", {"path": "a.txt", "content": "a"}, id="a"),
        tool_call("write_file", {"path": "b.txt", "content": "b"}, id="b"),
        tool_call("write_file", {"path": "c.txt", "content": "c"}, id="c"),
        text("done"),
    )
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "three files")
        await shows(pilot, "a.txt")
        await until(pilot, lambda: app.query(ApprovalPanel))
        await answerable(pilot)
        await pilot.press("escape")
        await until(pilot, lambda: asking(app, "b.txt"))
        await answerable(pilot)
        await pilot.press("ctrl+g")
        await until(pilot, lambda: asking(app, "c.txt"))
        await answerable(pilot)
        await pilot.press("ctrl+n")  # to "No"
        await pilot.press("ctrl+p")  # back to "Yes"
        await pilot.press("enter")
        await idle(pilot)
        work = tmp_path / "work"
        assert not (work / "a.txt").exists() and not (work / "b.txt").exists()
        assert (work / "c.txt").read_text() == "c"


def stamped(app: object, text: str, start: float, step: float = 0.04) -> None:
    """Post `text` as key presses stamped as typed from `start`, `step` apart: the time
    the terminal read them, which is what the question judges (not when they arrive)."""
    for i, c in enumerate(text):
        key = "space" if c == " " else c
        event = events.Key(key, c)
        event.time = start + i * step
        app.post_message(event)  # type: ignore[attr-defined]


async def asked(pilot: Any, app: Any) -> ApprovalPanel:
    """Sends a message; the question its answer's call opens, once on the screen."""
    await send(pilot, "make a file")
    panel = await until(pilot, lambda: app.top_modal(), timeout=15)
    assert isinstance(panel, ApprovalPanel)
    await until(pilot, lambda: panel.is_mounted, timeout=15)
    return panel


async def test_keys_typed_as_a_question_appears_do_not_answer_it(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(tool_call("run_command", {"command": "touch ran.txt"}), text("Done."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        panel = await asked(pilot, app)
        # Typed just before the question appeared (still on their way: ends in `n`),
        # then right after it appeared (ends in `y`); Enter of the highlighted "Yes" too.
        stamped(app, "a function", panel.shown_at - 0.45)
        stamped(app, " why", panel.shown_at + 0.05)
        await until(pilot, lambda: app.composer.text == "a function why")
        assert not panel.answer.done() and app.top_modal() is panel
        assert not (tmp_path / "work" / "ran.txt").exists()
        assert len(fake.turn_requests) == 1  # nothing was answered, so the model waits
        assert (
            panel.takes("enter", panel.shown_at + 0.1) == "typing"
        )  # inside the guard: Enter would not count
        # A deliberate answer, once typing has paused, works.
        await answerable(pilot)
        await pilot.press("y")
        await idle(pilot)
        assert (tmp_path / "work" / "ran.txt").exists()
        assert app.composer.text == "a function why"  # what was typed is kept for the user
        tool_answer = fake.turn_requests[1].body["messages"][-1]
        assert tool_answer["role"] == "tool" and not tool_answer["content"].startswith("denied")


async def test_a_number_typed_while_held_picks_though_it_is_read_after_the_hold_ends(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    # On a busy machine a key can be read after the question took the keyboard back; it is
    # judged as of when it was typed: a number typed while the question was held picks
    # that answer, as a number always does (it went to the composer as a "1" once).
    fake.script(tool_call("run_command", {"command": "touch ran.txt"}), text("Done."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        panel = await asked(pilot, app)
        stamped(app, " why", panel.shown_at + 0.05)
        await until(pilot, lambda: app.composer.text.endswith("why"))
        held_until = panel.quiet_until
        await until(pilot, lambda: panel.armed() and not panel.held)  # the hold ended
        assert panel.choice == 0
        stamped(app, "2", held_until - 0.1)  # typed while it was held, read only now
        await until(pilot, lambda: panel.choice == 1)
        assert app.composer.text.endswith("why")  # picked, not typed
        assert not (tmp_path / "work" / "ran.txt").exists()  # Enter takes it, not the number


async def test_allow_for_the_session_remembers_the_part_not_the_line(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(
        tool_call("run_command", {"command": "mkdir -p d && touch d/1"}, id="a"),
        tool_call("run_command", {"command": "touch d/2"}, id="b"),
        tool_call("run_command", {"command": "touch   'd/2' && mkdir -p d && touch d/3"}, id="c"),
        text("done"),
    )
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "touch them")
        # The compound line asks for its first part that asks; `a` remembers that part only.
        screen = await shows(pilot, "for this session")
        assert "2. Yes, and allow `mkdir -p d` for this session" in screen
        await answerable(pilot)
        await pilot.press("a")
        await until(pilot, lambda: asking(app, "touch d/2"))
        await shows(pilot, "allow `touch d/2` for this session")  # a part not remembered asks
        await answerable(pilot)
        await pilot.press("a")
        # `touch d/2` is remembered too. The next line is the same parts, spelled
        # differently, plus a new one: it asks, for the new one (a question for the
        # remembered parts would be in the way).
        await until(pilot, lambda: asking(app, "touch   'd/2' && mkdir -p d && touch d/3"))
        work = tmp_path / "work"
        assert (work / "d" / "1").exists() and (work / "d" / "2").exists()
        await shows(pilot, "allow `touch d/3` for this session")
        await answerable(pilot)
        await pilot.press("n")
        await idle(pilot)
        assert not (work / "d" / "3").exists()
        answers = [m["content"] for m in fake.turn_requests[-1].body["messages"] if m["role"] == "tool"]
        assert answers == ["(no output, exit code 0)"] * 2 + ["denied: user denied"]


async def test_shift_tab_cycles_the_modes_and_the_gate_follows(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(
        tool_call("write_file", {"path": "a.txt", "content": "a\n"}, id="wa"),
        text("Wrote a."),
        tool_call("write_file", {"path": "b.txt", "content": "b\n"}, id="wb"),
        text("Could not write b."),
    )
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "mode ask")
        await pilot.press("shift+tab")
        await shows(pilot, "mode accept edits")
        await send(pilot, "write a")
        await idle(pilot)
        assert (tmp_path / "work" / "a.txt").read_text() == "a\n"  # no question: the mode allowed it
        assert not app.query(ApprovalPanel)
        await pilot.press("shift+tab")
        await shows(pilot, "mode plan")
        await send(pilot, "write b")
        await idle(pilot)
        assert not (tmp_path / "work" / "b.txt").exists()
        answer = fake.turn_requests[-1].body["messages"][-1]
        assert answer["role"] == "tool" and answer["content"].startswith("denied: blocked by the plan mode")
        await shows(pilot, "Denied write_file")
        await pilot.press("shift+tab")  # round to the rules as written
        await shows(pilot, "mode ask")
        await send(pilot, "/mode")  # every layer, inspectable
        await shows(pilot, "Modes (Shift+Tab cycles)")
        labels = app.top_modal().labels  # type: ignore[union-attr]
        # Each mode named as the bar names it, its layer in words (not JSON).
        assert labels[0] == "ask (current): the rules as written · no layer"
        assert labels[1].startswith("accept edits: file tools inside the roots are allowed · ")
        assert "write_file allow inside the roots" in labels[1]
        assert labels[2].startswith("plan: read-only: edits are denied · ")
        assert "write_file deny" in labels[2] and "{" not in "".join(labels)
        await pilot.press("down", "down", "enter")  # choosing one switches to it
        await shows(pilot, "mode plan")


TOUCH = tool_call("run_command", {"command": "touch ran.txt"})


async def typed_over(pilot: Any, app: Any) -> ApprovalPanel:
    """The question, sent for, with "why not" typed just before it appeared and "yet" 0.7 s after
    (a pause between words): both in the composer, nothing answered."""
    panel = await asked(pilot, app)
    stamped(app, "why not", panel.shown_at - 0.5)
    stamped(app, " yet", panel.shown_at + 0.7)
    await until(pilot, lambda: app.composer.text == "why not yet", timeout=15)
    return panel


async def test_a_question_that_appears_while_typing_takes_no_letter_until_moved_to(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approval, "PAUSE_SECONDS", 600.0)  # only a key moves to it here
    fake.script(TOUCH, text("Not run."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        panel = await typed_over(pilot, app)
        # The `y` of "yet" did not approve: the call waits, nothing ran, the model waits.
        assert not panel.answer.done() and panel.held and not panel.has_focus
        assert not (tmp_path / "work" / "ran.txt").exists() and len(fake.turn_requests) == 1
        screen = await shows(pilot, "you were typing: letters wait for a 600 s pause or Tab/↑/↓")
        assert "1–5 and Enter choose now" in screen
        # The call above the question is not told in the past tense: it has not run.
        assert "⏺ run_command touch ran.txt" in screen and "Ran touch" not in screen
        await until(pilot, lambda: get_time() >= panel.shown_at + GUARD_SECONDS)
        await pilot.press("tab")  # moves to the question, and does nothing else
        await until(pilot, lambda: panel.has_focus and not panel.held)
        assert panel.choice == 0 and not panel.answer.done()
        await shows(pilot, "↑/↓ or 1–5 and Enter")
        await pilot.press("n")
        await idle(pilot)
        assert not (tmp_path / "work" / "ran.txt").exists()
        assert fake.turn_requests[1].body["messages"][-1]["content"] == "denied: user denied"
        assert app.composer.text == "why not yet"  # what was typed is kept


async def test_a_number_and_enter_answer_a_question_typed_over(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approval, "PAUSE_SECONDS", 600.0)
    fake.script(TOUCH, text("Ran it."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        panel = await typed_over(pilot, app)
        await until(pilot, lambda: get_time() >= panel.shown_at + GUARD_SECONDS)
        await pilot.press("4")  # "4. No" highlighted, nothing answered yet
        await until(pilot, lambda: panel.choice == 3 and panel.has_focus)
        assert not panel.answer.done()
        await pilot.press("1", "enter")  # "1. Yes, proceed", taken
        await idle(pilot)
        assert (tmp_path / "work" / "ran.txt").exists()
        await shows(pilot, "Ran touch ran.txt")  # past tense once it ran
        assert app.composer.text == "why not yet"


async def test_a_question_typed_over_takes_letters_after_a_pause(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approval, "PAUSE_SECONDS", 0.5)  # 2 s in use; shortened, not waited for
    fake.script(TOUCH, text("Ran it."))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        panel = await asked(pilot, app)
        stamped(app, "why", panel.shown_at - 0.1)
        await until(pilot, lambda: app.composer.text == "why")
        assert not (tmp_path / "work" / "ran.txt").exists()
        # No key for the pause: the question takes the keyboard and says which keys answer.
        await until(pilot, lambda: panel.armed() and panel.has_focus and not panel.held)
        await shows(pilot, "n/Esc no")
        await pilot.press("y")
        await idle(pilot)
        assert (tmp_path / "work" / "ran.txt").exists()
