"""`uji --worktree [NAME]`, `uji run --worktree` and `/worktree`: a session in its own git
worktree and branch, with real git. What is checked is what lands on disk and in which
branch, what the model was told (its working directory, AGENTS.md), what the sandbox let a
command write, where the checkpoints went, and where `uji resume` goes back to."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_sandbox import _landlock
from tests.test_tui_e2e import Tmux, _only_session, uji_command
from tests.test_tui_e2e import tmux as tmux_fixture

tmux = tmux_fixture  # the fixture: uji in a real terminal

GIT_ENV = {
    "GIT_AUTHOR_NAME": "T",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "T",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(where: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def repo(home: Home) -> Path:
    """The working directory as a repository: one commit with AGENTS.md and a.txt, then
    AGENTS.md changed in the main checkout only (not committed)."""
    home.init("")
    work = home.work
    git(work, "init", "-q", "-b", "main")
    (work / "AGENTS.md").write_text("COMMITTED RULE\n")
    (work / "a.txt").write_text("one\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    (work / "AGENTS.md").write_text("MAIN CHECKOUT ONLY\n")
    return work


def system_of(home: Home, i: int) -> str:
    assert home.fake is not None
    content = home.fake.turn_requests[i].body["messages"][0]["content"]
    return str(content)


def test_uji_run_worktree_works_in_its_own_worktree_and_branch(home: Home) -> None:
    work = repo(home)
    assert home.fake is not None
    home.fake.script(
        tool_call("write_file", {"path": "new.txt", "content": "made in the worktree\n"}, id="w"),
        tool_call(
            "run_command", {"command": "git add -A && git commit -q -m 'from uji' && echo committed"}, id="c"
        ),
        text("done"),
    )
    run = home.run(
        "PROMPT: add new.txt and commit it", "--worktree", "feat", "--on-ask", "allow", env=GIT_ENV
    )
    assert run.rc == 0, run.stderr
    where = work / ".uji" / "worktrees" / "feat"

    # The JSON says where the run worked, and it is kept.
    (session,) = run.of("session")
    assert session["worktree"] == {"path": str(where), "branch": "uji/feat"}
    assert where.is_dir()
    assert "feat" in git(work, "worktree", "list")

    # The file and the commit landed in the worktree and its branch; the main checkout and
    # its branch are as they were, and do not list the worktree as untracked.
    assert (where / "new.txt").read_text() == "made in the worktree\n"
    assert not (work / "new.txt").exists()
    assert "committed" in run.tool_results()[1]["content"]
    assert git(work, "log", "--format=%s", "uji/feat") == "from uji\nfirst"
    assert git(work, "log", "--format=%s", "main") == "first"
    assert git(work, "status", "--porcelain") == "M AGENTS.md"

    # The model was told it works in the worktree, with the worktree's AGENTS.md (the
    # committed one, not the main checkout's uncommitted change).
    system = system_of(home, 0)
    assert f"You work in {where}" in system
    assert "COMMITTED RULE" in system and "MAIN CHECKOUT ONLY" not in system

    # The session is saved as the worktree's; the turn's checkpoint went to the
    # worktree's shadow repository, not the main checkout's.
    assert home.db_messages(run.session_id)[0]["type"] == "user"
    key = hashlib.sha256(os.fsencode(os.path.realpath(where))).hexdigest()[:20]
    main_key = hashlib.sha256(os.fsencode(os.path.realpath(work))).hexdigest()[:20]
    assert (home.data / "checkpoints" / key).is_dir()
    assert not (home.data / "checkpoints" / main_key).exists()

    # `uji run --session` from the main checkout goes back to the worktree.
    home.fake.script(text("back"))
    again = home.run("PROMPT: again", "--session", run.session_id)
    assert again.rc == 0, again.stderr
    assert f"You work in {where}" in system_of(home, 3)
    assert again.of("session")[0]["worktree"]["path"] == str(where)


def test_a_second_run_with_the_same_name_reuses_the_worktree(home: Home) -> None:
    work = repo(home)
    assert home.fake is not None
    home.fake.script(tool_call("write_file", {"path": "b.txt", "content": "b\n"}), text("one"), text("two"))
    first = home.run("PROMPT: one", "--worktree", "same", "--on-ask", "allow")
    second = home.run("PROMPT: two", "--worktree=same")
    assert first.rc == 0 and second.rc == 0, second.stderr
    where = str(work / ".uji" / "worktrees" / "same")
    assert first.of("session")[0]["worktree"]["path"] == second.of("session")[0]["worktree"]["path"] == where
    assert (Path(where) / "b.txt").exists()  # the second run found the first one's file
    assert git(work, "worktree", "list").count(".uji/worktrees/") == 1


def test_a_bare_worktree_flag_makes_a_name_and_leaves_the_prompt_alone(home: Home) -> None:
    work = repo(home)
    assert home.fake is not None
    home.fake.script(text("ok"))
    run = home.uji("run", "--json", "--worktree", "add a test")
    assert run.rc == 0, run.stderr
    path = Path(run.of("session")[0]["worktree"]["path"])
    assert path.parent == work / ".uji" / "worktrees" and path.name.startswith("wt-")
    assert run.of("session")[0]["worktree"]["branch"] == f"uji/{path.name}"
    assert home.fake.turn_requests[0].body["messages"][-1]["content"] == "add a test"


def test_plain_mode_says_where_the_worktree_is_kept(home: Home) -> None:
    work = repo(home)
    assert home.fake is not None
    home.fake.script(text("the answer"))
    run = home.uji("run", "--worktree", "plain", "hello")
    assert run.rc == 0, run.stderr
    assert run.stdout == "the answer\n"
    where = work / ".uji" / "worktrees" / "plain"
    assert f"the worktree {where} (branch uji/plain) is kept" in run.stderr


def test_worktree_outside_a_repository_or_with_a_bad_name_is_a_usage_error(home: Home) -> None:
    run = home.uji("run", "--worktree=x", "hi")
    assert run.rc == 2 and "--worktree: " in run.stderr and "is not in a git repository" in run.stderr
    repo(home)
    run = home.uji("run", "--worktree=../up", "hi")
    assert run.rc == 2 and "is not a worktree name" in run.stderr
    run = home.uji("list", "--worktree=x")
    assert run.rc == 2 and "--worktree goes with uji, uji run or uji resume" in run.stderr
    run = home.uji("resume", "--worktree=missing")
    assert run.rc == 2 and "no worktree missing in" in run.stderr


@pytest.mark.skipif(not _landlock(), reason="needs Landlock (the kernel's sandbox)")
def test_the_sandbox_writes_in_the_worktree_and_its_git_data_not_in_the_main_checkout(home: Home) -> None:
    """A command in the worktree (sandboxed: `uji run`'s default lets it run) may write its
    files and commit, but not the main checkout's files, nor the repository's hooks or
    config, which would run code outside the sandbox later."""
    work = repo(home)
    assert home.fake is not None
    home.fake.script(
        tool_call(
            "run_command",
            {
                "command": "echo w > inside.txt && git add inside.txt && git commit -q -m inside && echo ok-commit; "
                "echo x > ../../../a.txt || echo no-main; "
                "echo x > ../../../.git/hooks/pre-commit || echo no-hooks; "
                "git config core.hooksPath /tmp || echo no-config"
            },
        ),
        text("done"),
    )
    run = home.run("PROMPT: try", "--worktree", "box", env=GIT_ENV)
    assert run.rc == 0, run.stderr
    (call,) = run.calls
    assert call["decision"] == "allow" and call["by"] == "auto"  # asked nobody: it ran sandboxed
    out = run.tool_results()[0]["content"]
    for said in ("ok-commit", "no-main", "no-hooks", "no-config"):
        assert said in out, out
    assert (work / ".uji" / "worktrees" / "box" / "inside.txt").read_text() == "w\n"
    assert (work / "a.txt").read_text() == "one\n"
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
    assert git(work, "log", "--format=%s", "uji/box") == "inside\nfirst"


def test_the_screen_in_a_worktree_asks_on_leaving_and_resume_comes_back(home: Home, tmux: Tmux) -> None:
    """`uji --worktree keep`: the write lands in the worktree; leaving asks, Enter keeps it
    (and says how to remove it); `uji resume --id` from the main checkout goes back into
    it; leaving again and choosing Remove takes the worktree and its branch away."""
    work = repo(home)
    home.init('uji.tool.policy({ write_file = { default = "allow" } })\n')
    assert home.fake is not None
    home.fake.script(
        tool_call("write_file", {"path": "screen.txt", "content": "from the screen\n"}),
        text("I wrote screen.txt."),
        text("back again."),
    )
    where = work / ".uji" / "worktrees" / "keep"
    command = uji_command()
    tmux.type(f"{command} --worktree keep; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("Message uji")
    tmux.type("please write screen.txt")
    tmux.keys("Enter")
    tmux.shows("I wrote screen.txt.")
    assert (where / "screen.txt").read_text() == "from the screen\n"
    assert not (work / "screen.txt").exists()
    assert f"You work in {where}" in system_of(home, 0)

    _ask_to_leave(tmux)
    screen = tmux.shows("Leaving the worktree: 1 uncommitted file in .uji/worktrees/keep (branch uji/keep)")
    assert "Remove it and its branch uji/keep (1 uncommitted file: lost)" in screen
    tmux.keys("Enter")  # the first choice: keep it
    tmux.shows("uji-exited-0")
    assert f"the worktree {where} (branch uji/keep) is kept" in joined(tmux)
    assert where.is_dir() and git(work, "branch", "--list", "uji/keep")
    session = _only_session(home)

    tmux.type(f"clear; {command} resume --id {session}; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("I wrote screen.txt.")  # the session, reopened
    tmux.type("and again")
    tmux.keys("Enter")
    tmux.shows("back again.")
    assert f"You work in {where}" in system_of(home, 2)

    _ask_to_leave(tmux)
    tmux.shows("Leaving the worktree")
    tmux.keys("Down", "Enter")  # remove it
    tmux.shows("uji-exited-0")  # the screen was cleared before the second start
    assert f"removed the worktree {where} and its branch uji/keep" in joined(tmux)
    assert not where.exists()
    assert git(work, "branch", "--list", "uji/keep") == ""
    assert "keep" not in git(work, "worktree", "list")


def joined(tmux: Tmux) -> str:
    """The screen with the lines the terminal wrapped joined again."""
    return tmux.run("capture-pane", "-p", "-J", "-t", "main")


def _ask_to_leave(tmux: Tmux) -> None:
    """Ctrl+C twice on an empty composer: the question comes instead of the exit."""
    for _ in range(5):
        tmux.keys("C-c")
        tmux.shows("again to quit", 15)
        tmux.keys("C-c")
        screen = tmux.wait(
            lambda s: "Leaving the worktree" in s or "again to quit" not in s, "the question", 15
        )
        if "Leaving the worktree" in screen:
            return
    raise AssertionError(f"no question on leaving\n{tmux.screen()}")


async def test_slash_worktree_moves_the_session_into_a_worktree(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/worktree try`: the session goes on in .uji/worktrees/try (its next request says
    so, its write lands there), listed as that directory's session; `/worktree` again
    says where it is and what it holds."""
    from tests.test_tui_support import SIZE, idle, make_app, ready, screen_text, send, shows, until

    monkeypatch.chdir(tmp_path)  # /worktree changes this process's directory: put it back after
    monkeypatch.setenv("PWD", str(tmp_path))
    app = make_app(tmp_path, fake, 'uji.tool.policy({ write_file = { default = "allow" } })\n')
    work = tmp_path / "work"
    git(work, "init", "-q", "-b", "main")
    (work / "a.txt").write_text("one\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    where = work / ".uji" / "worktrees" / "try"
    fake.script(
        text("in the main checkout"),
        tool_call("write_file", {"path": "w.txt", "content": "w\n"}),
        text("wrote w.txt"),
    )

    async def wrapped_shows(words: str) -> None:
        """Until `words` are on the screen, wherever its rows break them."""
        await until(pilot, lambda: words in " ".join(screen_text(pilot.app).split()), what=repr(words))

    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "first")
        await shows(pilot, "in the main checkout")
        await send(pilot, "/worktree try")
        await shows(pilot, "this session now works in the worktree")
        # The branch follows the worktree's path, which is as long as pytest's temporary
        # folder: "(branch" may end one row and "uji/try)" begin the next.
        await wrapped_shows("(branch uji/try)")
        await send(pilot, "write w.txt")
        await shows(pilot, "wrote w.txt")
        await idle(pilot)
        assert (where / "w.txt").read_text() == "w\n" and not (work / "w.txt").exists()
        requests = fake.turn_requests
        assert f"You work in {work} on" in requests[0].body["messages"][0]["content"]
        assert f"You work in {where} on" in requests[1].body["messages"][0]["content"]
        # The conversation went on: the first answer is in the next request.
        assert any(m.get("content") == "in the main checkout" for m in requests[1].body["messages"])
        await send(pilot, "/worktree")
        await wrapped_shows("1 uncommitted file")  # after the path too
    from uji.store.sessions import Store

    with Store(str(tmp_path / "data" / "uji.db")) as store:
        assert [s["directory"] for s in store.list_sessions()] == [str(where)]
