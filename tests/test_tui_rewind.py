"""`/rewind` on the screen: the last turns with the files each changed; picking one puts
its files and the conversation back to before it (issue 13 part 2)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_rewind import git, make_repo, user_repo_state
from tests.test_tui_support import SIZE, entries, idle, make_app, ready, send, shows, type_text, until
from uji.tui.modals import SelectPanel

ALLOW = 'uji.tool.policy({ write_file = { default = "allow" }, run_command = { default = "allow" } })\n'


async def choose(pilot, app, filter_text: str) -> None:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: app.query(SelectPanel) and app.mode() == "select")
    await type_text(pilot, filter_text)
    await pilot.press("enter")


def script_two_turns(fake: FakeOpenAI) -> None:
    fake.script(
        text("first answer"),
        tool_call("write_file", {"path": "a.txt", "content": "changed by write_file\n"}, id="c1"),
        tool_call("run_command", {"command": "sed -i s/alpha/beta/ b.txt"}, id="c2"),
        tool_call("write_file", {"path": "made.txt", "content": "created\n"}, id="c3"),
        text("second answer"),
        text("third answer"),
    )


async def test_rewind_restores_the_files_and_the_conversation(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake, ALLOW)
    work = tmp_path / "work"
    make_repo(work)
    before = user_repo_state(work)
    script_two_turns(fake)
    async with app.run_test(size=SIZE) as pilot:
        conv = (await ready(pilot)).conversation
        await send(pilot, "first question")
        await idle(pilot)
        await send(pilot, "second question")
        await idle(pilot)
        await shows(pilot, "second answer")
        assert (work / "b.txt").read_text() == "beta\n"
        await send(pilot, "/rewind")
        screen = await shows(pilot, "Rewind to before which turn?")
        # The newest turn first, with the files it changed and their line counts.
        assert "3 file(s): a.txt +1 -1, b.txt +1 -1, made.txt +1 -0" in screen, screen
        assert "no file changed" in screen  # the first turn ran no tool
        await choose(pilot, app, "second")
        await shows(pilot, "Restore the files and the conversation")
        await choose(pilot, app, "files and")
        await shows(pilot, "restored 2 file(s), removed 1")
        assert (work / "a.txt").read_text() == "one\n"
        assert (work / "b.txt").read_text() == "alpha\n"
        assert not (work / "made.txt").exists()
        assert user_repo_state(work) == before
        # The transcript lost the turn; its prompt is back in the composer to edit.
        assert [e["text"] for e in entries(app, "user")] == ["first question"]
        assert app.composer.text == "second question"
        await pilot.press("ctrl+u")
        await send(pilot, "third question")
        await idle(pilot)
        sent = fake.turn_requests[-1].body["messages"]
        assert [m.get("content") for m in sent if m["role"] != "system"] == [
            "first question",
            "first answer",
            "third question",
        ]
        assert conv.agent is not None
        assert [m["type"] for m in conv.agent.services.store.messages(conv.agent.session_id)] == [
            "user",
            "assistant",
            "user",
            "assistant",
        ]


async def test_rewind_asks_before_overwriting_a_file_changed_outside_uji(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    app = make_app(tmp_path, fake, ALLOW)
    work = tmp_path / "work"
    make_repo(work)
    script_two_turns(fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "first question")
        await idle(pilot)
        await send(pilot, "second question")
        await idle(pilot)
        (work / "a.txt").write_text("my own edit\n")
        await send(pilot, "/rewind")
        await choose(pilot, app, "second")
        await choose(pilot, app, "files only")
        await shows(pilot, "1 file(s) changed outside uji since the checkpoint would be overwritten: a.txt")
        await choose(pilot, app, "Cancel")
        await shows(pilot, "rewind cancelled: nothing changed")
        assert (work / "a.txt").read_text() == "my own edit\n"
        assert (work / "b.txt").read_text() == "beta\n"
        await send(pilot, "/rewind")
        await choose(pilot, app, "second")
        await choose(pilot, app, "files only")
        await choose(pilot, app, "Overwrite")
        await shows(pilot, "restored 2 file(s), removed 1")
        assert (work / "a.txt").read_text() == "one\n"
        assert (work / "b.txt").read_text() == "alpha\n"
        # Files only: the conversation kept the turn.
        assert [e["text"] for e in entries(app, "user")] == ["first question", "second question"]
        assert git(work, "status", "--porcelain") == "A  staged.txt\n"
