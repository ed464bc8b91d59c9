"""The `@` popup in the composer: the project's files (git's view, ignored files left
out), fuzzy filtering, Tab/Enter/Esc, quoting, and what a sent mention attaches — or
asks before attaching, under an `ask` rule."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import (
    SIZE,
    answerable,
    entries,
    idle,
    make_app,
    ready,
    send,
    shows,
    type_text,
    until,
)


def git_project(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    (work / "src").mkdir()
    (work / "src" / "main.py").write_text("print('main')\n")
    (work / "src" / "util.py").write_text("def util(): ...\n")
    (work / "README.md").write_text("# readme\n")
    (work / ".gitignore").write_text("*.log\nbuild/\n")
    (work / "debug.log").write_text("ignored\n")
    (work / "build").mkdir()
    (work / "build" / "out.txt").write_text("ignored\n")
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run(["git", "add", "src", "README.md", ".gitignore"], cwd=work, check=True)
    (work / "notes new.txt").write_text("untracked, not ignored\n")


async def test_at_lists_git_files_without_ignored_ones_and_tab_inserts_the_mention(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    git_project(tmp_path / "work")
    fake.script(text("ok"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "explain @")
        await until(pilot, lambda: app.mentions.open and app.mentions.items, what="the file list")
        assert sorted(app.mentions.items) == [
            ".gitignore",
            "README.md",
            "notes new.txt",
            "src/main.py",
            "src/util.py",
        ]
        assert app.mode() == "suggest"
        await type_text(pilot, "mn")  # fuzzy: m…n
        assert app.mentions.items == ["src/main.py"]
        await shows(pilot, "@src/main.py")
        await pilot.press("tab")
        assert app.composer.text == "explain @src/main.py "
        assert not app.mentions.open
        await type_text(pilot, "please")
        await pilot.press("enter")
        await idle(pilot)
        sent = fake.turn_requests[0].body["messages"][-1]["content"]
        assert (
            sent
            == "explain @src/main.py please\n\n<file path=\"src/main.py\">\n    1| print('main')\n</file>"
        )
        assert {"label": "attached", "text": "@src/main.py (Read 1 lines)"}.items() <= entries(app, "info")[
            -1
        ].items()


async def test_quoting_esc_and_enter_in_the_popup(tmp_path: Path, fake: FakeOpenAI) -> None:
    git_project(tmp_path / "work")
    fake.script(text("ok"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "@new")
        await until(pilot, lambda: app.mentions.items == ["notes new.txt"])
        await pilot.press("enter")  # Enter picks; a path with a space is quoted
        assert app.composer.text == '@"notes new.txt" '
        assert not fake.turn_requests
        await type_text(pilot, "and @u")
        await until(pilot, lambda: app.mentions.open)
        await pilot.press("escape")  # closes, keeps the text
        assert not app.mentions.open and app.composer.text == '@"notes new.txt" and @u'
        await type_text(pilot, "t")  # typing opens it again
        await until(pilot, lambda: app.mentions.open and app.mentions.items)
        assert app.mentions.items[0] == "src/util.py"
        await pilot.press("down", "up", "enter")
        assert app.composer.text == '@"notes new.txt" and @src/util.py '
        await pilot.press("enter")  # the popup is closed: Enter sends
        await idle(pilot)
        sent = fake.turn_requests[0].body["messages"][-1]["content"]
        assert '<file path="notes new.txt">\n    1| untracked, not ignored\n</file>' in sent
        assert '<file path="src/util.py">\n    1| def util(): ...\n</file>' in sent


async def test_without_a_repository_the_walk_skips_hidden_and_dependency_folders(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    work = tmp_path / "work"
    for rel in ("a.txt", "lib/b.txt", ".hidden/c.txt", "node_modules/d/e.js", ".env"):
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text("x\n")
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await type_text(pilot, "@")
        await until(pilot, lambda: app.mentions.items)
        assert sorted(app.mentions.items) == [".env", "a.txt", "lib/b.txt"]
        await type_text(pilot, "zzz")
        await shows(pilot, "no matching files")


async def test_an_ask_rule_asks_before_attaching(tmp_path: Path, fake: FakeOpenAI) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "plan.md").write_text("PLAN\n")
    fake.script(text("first"), text("second"))
    app = make_app(tmp_path, fake, 'uji.tool.policy({ read_file = { ask = { "plan.md" } } })\n')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "read @plan.md")
        await shows(pilot, "Attach plan.md to your message?")
        await answerable(pilot)
        await pilot.press("n")
        await idle(pilot)
        assert fake.turn_requests[0].body["messages"][-1]["content"] == "read @plan.md"
        await shows(pilot, "@plan.md: user denied")
        await send(pilot, "again @plan.md")
        await shows(pilot, "Attach plan.md to your message?")
        await answerable(pilot)
        await pilot.press("y")
        await idle(pilot)
        assert fake.turn_requests[1].body["messages"][-1]["content"].endswith("    1| PLAN\n</file>")


async def test_a_message_queued_during_a_turn_gets_its_file_when_steered_in(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(tool_call("run_command", {"command": "sh wait.sh"}), text("ran it"), text("got it"))
    app = make_app(tmp_path, fake, 'uji.tool.policy({ run_command = { default = "allow" } })\n')
    work = tmp_path / "work"
    (work / "wait.sh").write_text(
        "i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
    )
    (work / "extra.txt").write_text("EXTRA\n")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "wait")
        await shows(pilot, "⏺ Ran sh wait.sh")
        await type_text(pilot, "and @extra.txt ")  # the space ends the word: the popup closes
        await pilot.press("enter")
        await shows(pilot, "queued > and @extra.txt")
        (work / "go").touch()
        await idle(pilot)
        steered = fake.turn_requests[1].body["messages"][-1]
        assert steered == {
            "role": "user",
            "content": 'and @extra.txt \n\n<file path="extra.txt">\n    1| EXTRA\n</file>',
        }


def test_the_listing_stops_at_its_cap_with_git_and_without(tmp_path: Path) -> None:
    from uji.tui.mentions import list_files

    for i in range(30):
        (tmp_path / f"d{i % 3}").mkdir(exist_ok=True)
        (tmp_path / f"d{i % 3}" / f"f{i}.txt").write_text("x\n")
    walked = list_files(str(tmp_path), cap=7)
    assert len(walked) == 7 and all((tmp_path / f).is_file() for f in walked)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert len(list_files(str(tmp_path))) == 30  # untracked, not ignored: listed by git
    listed = list_files(str(tmp_path), cap=7)
    assert len(listed) == 7 and all((tmp_path / f).is_file() for f in listed)
