"""Approvals: the question titled by the tool, its body and diff preview; y allows,
n / Esc / Ctrl+G deny and hand the composer back for what to do instead."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import SIZE, idle, make_app, ready, send, shows, type_text, until
from uji.tui.approval import ApprovalPanel


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
        screen = await shows(pilot, "Would you like to run `write_file`?")
        assert "hello.txt" in screen and "+hi there" in screen  # body and diff preview
        assert "1. Yes, proceed" in screen
        assert app.mode() == "confirm"
        await type_text(pilot, "zz")  # stray keys go nowhere while a question is open
        assert app.composer.text == ""
        await pilot.press("y")
        await idle(pilot)
        assert (tmp_path / "work" / "hello.txt").read_text() == "hi there\n"
        assert not app.query(ApprovalPanel)
        assert app.composer.has_focus


async def test_n_denies_and_what_is_typed_next_is_sent(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(
        tool_call("write_file", {"path": "hello.txt", "content": "x"}, delay=0),
        text("OK, I will not.", delay=0.5),  # time to type what to do instead
        text("Writing bye.txt instead."),
    )
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "write hello")
        await shows(pilot, "Would you like to run `write_file`?")
        await pilot.press("n")
        await until(pilot, lambda: not app.query(ApprovalPanel))
        assert app.composer.has_focus
        assert "what to do instead" in str(app.composer.placeholder)
        await send(pilot, "call it bye.txt")
        await idle(pilot)
        assert not (tmp_path / "work" / "hello.txt").exists()
        tool_answer = fake.turn_requests[1].body["messages"][-1]
        assert tool_answer["role"] == "tool" and tool_answer["content"] == "denied: user denied"
        assert fake.turn_requests[-1].body["messages"][-1] == {"role": "user", "content": "call it bye.txt"}
        screen = await shows(pilot, "Writing bye.txt instead.")
        assert "denied: user denied" in screen


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
        await pilot.press("escape")
        await until(pilot, lambda: asking(app, "b.txt"))
        await pilot.press("ctrl+g")
        await until(pilot, lambda: asking(app, "c.txt"))
        await pilot.press("ctrl+n")  # to "No"
        await pilot.press("ctrl+p")  # back to "Yes"
        await pilot.press("enter")
        await idle(pilot)
        work = tmp_path / "work"
        assert not (work / "a.txt").exists() and not (work / "b.txt").exists()
        assert (work / "c.txt").read_text() == "c"
