"""Undo of every change (issue 13 part 2): checkpoints of the files before each turn in a
shadow git repository, and `uji.session.rewind` putting files and conversation back —
through `uji run` against the fake server, with real git and real files."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text, tool_call

# `/undo [force]` in `uji run`: rewinds one turn and says what happened as a notice.
UNDO_LUA = """
uji.command.add("undo", function(args)
  local opts = { force = args == "force" }
  if args == "files" then opts.conversation = false end
  local ok, r, files = uji.session.rewind(1, opts)
  if ok then
    uji.notify("rewound: restored=" .. table.concat(r.restored, ",") .. " removed=" .. table.concat(r.removed, ",")
      .. " messages=" .. r.messages .. " text=" .. r.text)
  else
    uji.notify("refused: " .. r .. " files=" .. table.concat(files or {}, ","))
  end
end)
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(work: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_ENV, HOME=str(work.parent))
    return subprocess.run(
        ["git", *args], cwd=work, env=env, check=True, capture_output=True, text=True
    ).stdout


def user_repo_state(work: Path) -> dict[str, str]:
    """A hash of each file of the user's .git that says where it stands: its index,
    HEAD, refs (the stash among them), logs, config and hooks."""
    dot = work / ".git"
    found: dict[str, str] = {}
    for path in sorted(dot.rglob("*")):
        rel = path.relative_to(dot).as_posix()
        if path.is_file() and (
            rel in ("index", "HEAD", "config", "packed-refs", "ORIG_HEAD")
            or rel.startswith(("refs/", "logs/", "hooks/", "info/"))
        ):
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def make_repo(work: Path) -> None:
    (work / ".gitignore").write_text("ignored.log\n")
    (work / "a.txt").write_text("one\n")
    (work / "b.txt").write_text("alpha\n")
    (work / "ignored.log").write_text("keep\n")
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "init")
    (work / "a.txt").write_text("stashed change\n")
    git(work, "stash", "-q")  # the user's stash must survive untouched
    (work / "staged.txt").write_text("staged\n")
    git(work, "add", "staged.txt")  # and so must their index


def the_turn(home: Home) -> None:
    """A turn that writes a.txt, edits b.txt with `sed -i`, appends to an ignored file
    and creates new/c.txt."""
    home.fake.script(
        tool_call("write_file", {"path": "a.txt", "content": "changed by write_file\n"}, id="c1"),
        tool_call(
            "run_command", {"command": "sed -i s/alpha/beta/ b.txt && echo more >> ignored.log"}, id="c2"
        ),
        tool_call("write_file", {"path": "new/c.txt", "content": "created\n"}, id="c3"),
        text("done"),
    )


def test_rewind_restores_write_file_and_sed_and_the_conversation(home: Home) -> None:
    work = home.work
    make_repo(work)
    before = user_repo_state(work)
    home.init(UNDO_LUA)
    home.fake.script(text("first answer"))
    first = home.run("first question")
    assert first.rc == 0, first.stderr
    session = first.session_id
    the_turn(home)
    second = home.run("second question", "--session", session)
    assert second.rc == 0, second.stderr
    assert (work / "a.txt").read_text() == "changed by write_file\n"
    assert (work / "b.txt").read_text() == "beta\n"
    assert (work / "new" / "c.txt").exists()

    undo = home.run("/undo", "--session", session)
    assert undo.rc == 0, undo.stderr
    said = [n for n in undo.notices if n.startswith(("rewound", "refused"))]
    assert said == ["rewound: restored=a.txt,b.txt removed=new/c.txt messages=8 text=second question"], (
        undo.notices
    )
    assert (work / "a.txt").read_text() == "one\n"
    assert (work / "b.txt").read_text() == "alpha\n"
    assert not (work / "new").exists()  # the file the turn created, and its folder
    assert (work / "ignored.log").read_text() == "keep\nmore\n"  # ignored: untouched
    assert (work / "staged.txt").read_text() == "staged\n"
    # The user's repository: index, HEAD, refs, stash, logs, hooks, config as they were.
    assert user_repo_state(work) == before
    assert git(work, "stash", "list").count("\n") == 1
    assert git(work, "diff", "--cached", "--name-only") == "staged.txt\n"

    # The conversation went back too: the next request has no trace of the second turn.
    home.fake.script(text("third answer"))
    third = home.run("third question", "--session", session)
    assert third.rc == 0, third.stderr
    sent = home.fake.turn_requests[-1].body["messages"]
    contents = [m.get("content") for m in sent if m["role"] != "system"]
    assert contents == ["first question", "first answer", "third question"]
    assert [m["type"] for m in home.db_messages(session)] == ["user", "assistant", "user", "assistant"]
    # Nothing of uji's in the project: the shadow repository is under the data dir.
    assert sorted(p.name for p in work.iterdir()) == [
        ".git",
        ".gitignore",
        "a.txt",
        "b.txt",
        "ignored.log",
        "staged.txt",
    ]
    assert any((home.data / "checkpoints").iterdir())


def test_a_file_changed_outside_uji_is_not_overwritten_unless_forced(home: Home) -> None:
    work = home.work
    make_repo(work)
    home.init(UNDO_LUA)
    the_turn(home)
    run = home.run("change things")
    assert run.rc == 0, run.stderr
    (work / "b.txt").write_text("the user's own edit\n")

    refused = home.run("/undo", "--session", run.session_id)
    said = [n for n in refused.notices if n.startswith(("rewound", "refused"))]
    assert len(said) == 1 and said[0].startswith("refused: 1 file(s) changed outside uji"), refused.notices
    assert "b.txt" in said[0] and said[0].endswith("files=b.txt")
    # Nothing changed: neither the files nor the conversation.
    assert (work / "b.txt").read_text() == "the user's own edit\n"
    assert (work / "a.txt").read_text() == "changed by write_file\n"
    assert len(home.db_messages(run.session_id)) == 8

    forced = home.run("/undo force", "--session", run.session_id)
    assert any(n.startswith("rewound: restored=a.txt,b.txt") for n in forced.notices), forced.notices
    assert (work / "b.txt").read_text() == "alpha\n"
    assert (work / "a.txt").read_text() == "one\n"


def test_outside_a_git_repository_the_file_tools_writes_are_undone(home: Home) -> None:
    work = home.work
    assert not any((p / ".git").exists() for p in [work, *work.parents])
    (work / "x.txt").write_text("x before\n")
    (work / "z.txt").write_text("z before\n")
    home.init(UNDO_LUA)
    home.fake.script(
        tool_call("edit_file", {"path": "x.txt", "old_string": "before", "new_string": "after"}, id="c1"),
        tool_call("write_file", {"path": "y.txt", "content": "new file\n"}, id="c2"),
        tool_call("write_file", {"path": "x.txt", "content": "x written twice\n"}, id="c3"),
        tool_call("run_command", {"command": "echo changed > z.txt"}, id="c4"),
        text("done"),
    )
    run = home.run("edit")
    assert run.rc == 0, run.stderr
    assert (work / "x.txt").read_text() == "x written twice\n"
    undo = home.run("/undo files", "--session", run.session_id)
    assert any(n == "rewound: restored=x.txt removed=y.txt messages=0 text=edit" for n in undo.notices), (
        undo.notices
    )
    assert (work / "x.txt").read_text() == "x before\n"
    assert not (work / "y.txt").exists()
    # Outside git only what the file tools wrote is kept: run_command's change stays.
    assert (work / "z.txt").read_text() == "changed\n"
    assert sorted(p.name for p in work.iterdir()) == ["x.txt", "z.txt"]
    assert len(home.db_messages(run.session_id)) == 10  # conversation=false kept it


def test_rewind_says_why_when_there_is_nothing_to_rewind(home: Home) -> None:
    home.init(UNDO_LUA)
    home.fake.script(text("hi"))
    run = home.run("hello")
    undo = home.run("/undo", "--session", run.session_id)
    assert any(n.startswith("rewound: restored= removed= messages=2") for n in undo.notices), undo.notices
    again = home.run("/undo", "--session", run.session_id)
    assert "refused: the session has no turn(s) to rewind files=" in again.notices, again.notices


def shadow_refs(home: Home) -> set[str]:
    base = home.data / "checkpoints"
    return {
        p.relative_to(base).as_posix().split("/", 1)[1] for p in base.glob("*/refs/uji/*/*") if p.is_file()
    }


def test_checkpoints_older_than_a_week_are_pruned(home: Home) -> None:
    make_repo(home.work)
    home.init(UNDO_LUA)
    home.fake.script(tool_call("write_file", {"path": "a.txt", "content": "x\n"}, id="c1"), text("done"))
    old = home.run("old work")
    assert old.rc == 0, old.stderr
    refs = shadow_refs(home)
    assert refs == {f"refs/uji/{old.session_id}/1", f"refs/uji/{old.session_id}/1-end"}
    week_ago = time.time() - 8 * 86400
    for path in (home.data / "checkpoints").glob(f"*/refs/uji/{old.session_id}/*"):
        os.utime(path, (week_ago, week_ago))
    home.fake.script(text("hi"))
    new = home.run("new work")
    assert new.rc == 0, new.stderr
    assert shadow_refs(home) == {f"refs/uji/{new.session_id}/1", f"refs/uji/{new.session_id}/1-end"}
    assert list((home.data / "checkpoints").glob("*/uji-gc"))  # and git gc ran
    # The old session's conversation can still be rewound; its files cannot.
    undo = home.run("/undo", "--session", old.session_id)
    assert any("no checkpoint of the files before that turn" in n for n in undo.notices), undo.notices
    assert (home.work / "a.txt").read_text() == "x\n"


def test_over_the_size_cap_the_oldest_sessions_go_but_not_a_recent_one(tmp_path: Path) -> None:
    from uji.store.checkpoints import Checkpoints

    work = tmp_path / "work"
    work.mkdir()
    make_repo(work)
    cps = Checkpoints(str(tmp_path / "data"), str(work))
    for session in ("s-old", "s-older", "s-now"):
        cps.begin(session, 1)
        (work / "a.txt").write_text(f"{session}\n")
        cps.touched()
        cps.end()
    base = Path(cps.dir) / "refs" / "uji"
    now = time.time()
    for session, age in (("s-old", 2 * 3600), ("s-older", 3 * 3600)):
        for path in (base / session).iterdir():
            os.utime(path, (now - age, now - age))
    assert cps.prune(now=now, max_bytes=1) == 4
    assert sorted(p.name for p in base.iterdir() if p.is_dir()) == ["s-now"]
    assert set(cps.turns("s-now")) == {1}
    plan = cps.plan("s-now", 1)  # what it needs survived the gc
    assert plan.write == {"a.txt": plan.write["a.txt"]} and not plan.delete


def test_rewind_keeps_an_executable_files_mode_and_puts_a_symlink_back(home: Home) -> None:
    work = home.work
    (work / "run.sh").write_text("echo before\n")
    (work / "run.sh").chmod(0o755)
    (work / "a.txt").write_text("one\n")
    (work / "other.txt").write_text("other\n")
    os.symlink("a.txt", work / "link")
    os.symlink("a.txt", work / "moved")
    git(work, "init", "-q")
    git(work, "add", ".")
    git(work, "commit", "-qm", "init")
    home.init(UNDO_LUA)
    home.fake.script(
        tool_call("write_file", {"path": "run.sh", "content": "echo after\n"}, id="c1"),
        # The link replaced by a file, the other pointed elsewhere, the script's bit off.
        tool_call(
            "run_command",
            {"command": "rm link && echo file > link && ln -sfn other.txt moved && chmod -x run.sh"},
            id="c2",
        ),
        text("done"),
    )
    run = home.run("change them", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    assert [(c["id"], c["decision"]) for c in run.calls] == [("c1", "allow"), ("c2", "allow")]
    assert not os.access(work / "run.sh", os.X_OK) and not (work / "link").is_symlink()
    undo = home.run("/undo files", "--session", run.session_id)
    assert any(n.startswith("rewound: restored=link,moved,run.sh removed=") for n in undo.notices), (
        undo.notices
    )
    assert (work / "run.sh").read_text() == "echo before\n"
    assert (work / "run.sh").stat().st_mode & 0o777 == 0o755
    assert os.readlink(work / "link") == "a.txt" and os.readlink(work / "moved") == "a.txt"
    assert (work / "a.txt").read_text() == "one\n"


def test_outside_git_a_file_tools_write_keeps_the_executable_bit_and_the_link(home: Home) -> None:
    work = home.work
    (work / "run.sh").write_text("echo before\n")
    (work / "run.sh").chmod(0o750)
    (work / "target.txt").write_text("target before\n")
    os.symlink("target.txt", work / "link")
    home.init(UNDO_LUA)
    home.fake.script(
        tool_call("write_file", {"path": "run.sh", "content": "echo after\n"}, id="c1"),
        tool_call("write_file", {"path": "link", "content": "through the link\n"}, id="c2"),
        text("done"),
    )
    run = home.run("write", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    assert [(c["id"], c["decision"], c["by"]) for c in run.calls] == [
        ("c1", "allow", "auto"),
        ("c2", "allow", "auto"),
    ]
    undo = home.run("/undo files", "--session", run.session_id)
    assert any(n.startswith("rewound: ") for n in undo.notices), undo.notices
    assert (work / "run.sh").read_text() == "echo before\n"
    assert os.access(work / "run.sh", os.X_OK)
    assert os.readlink(work / "link") == "target.txt"
    assert (work / "target.txt").read_text() == "target before\n"


@pytest.mark.parametrize("escape", ["../escape.txt", "sub/../../escape.txt", "ABS", ".git/hooks/pre-commit"])
def test_a_restore_never_writes_or_deletes_outside_the_project(tmp_path: Path, escape: str) -> None:
    # A plan is read back from the checkpoint store, which a process of the user's could
    # have written: a path in it that leaves the project (or is absolute, even inside it,
    # or is in .git) is refused before anything is written, and nothing else is touched.
    from uji.store.checkpoints import CheckpointError, Checkpoints, Plan

    work = tmp_path / "work"
    work.mkdir()
    make_repo(work)
    cps = Checkpoints(str(tmp_path / "data"), str(work))
    cps.begin("s", 1)
    (work / "a.txt").write_text("changed\n")
    cps.touched()
    cps.end()
    blob = cps.plan("s", 1).write["a.txt"]
    path = str(work / "a.txt") if escape == "ABS" else escape
    for plan in (Plan(seq=1, write={path: blob}), Plan(seq=1, delete=[path])):
        with pytest.raises(CheckpointError, match="outside the project"):
            cps.restore(plan, "s")
    assert not (tmp_path / "escape.txt").exists()
    assert (work / "a.txt").read_text() == "changed\n"
    assert not (work / ".git" / "hooks" / "pre-commit").exists()
