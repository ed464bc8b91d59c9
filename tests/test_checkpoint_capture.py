"""The checkpoint store's own bookkeeping, driven as `uji.agent.checkpointing` drives it:
`begin`, `capture` before a file tool's write, `touched` after any tool that may write,
`end`, then `plan` and `restore` as a rewind does. Real git, real files. These pin what
the rewind tests through `uji run` reach only indirectly: which pre-images a capture
keeps (and which it leaves alone), and how a restore puts back a path whose kind changed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.test_rewind import make_repo
from uji.store.checkpoints import Checkpoints


def store(tmp_path: Path, **kw: int) -> tuple[Checkpoints, Path]:
    work = tmp_path / "work"
    work.mkdir()
    make_repo(work)  # a.txt, b.txt, staged.txt tracked; ignored.log ignored by .gitignore
    (work / ".gitignore").write_text("ignored.log\n*.big\nbuild/\n")
    return Checkpoints(str(tmp_path / "data"), str(work), **kw), work


def rewind(cps: Checkpoints, session: str, seq: int) -> None:
    plan = cps.plan(session, seq)
    assert plan.conflicts == [], plan.conflicts  # nothing looks changed outside uji
    cps.restore(plan, session)


def test_a_capture_keeps_an_ignored_files_pre_image_and_notes_a_created_one(tmp_path: Path) -> None:
    # Ignored files are not in the turn's snapshot: a file tool's write to one is undone
    # only because capture kept its pre-image; a file the tool creates is noted absent,
    # and the rewind deletes it (with the folders it made). No `touched()` here: the
    # capture alone must mark the turn as one that wrote.
    cps, work = store(tmp_path)
    (work / "deep").mkdir()
    (work / "deep" / "keep.txt").write_text("there before\n")
    cps.begin("s", 1)
    cps.capture(str(work / "ignored.log"))
    (work / "ignored.log").write_text("overwritten\n")
    cps.capture(str(work / "deep" / "er" / "new.txt"))
    (work / "deep" / "er").mkdir()
    (work / "deep" / "er" / "new.txt").write_text("created\n")
    cps.capture(str(work / "deep" / "other" / "made.txt"))
    (work / "deep" / "other").mkdir()
    (work / "deep" / "other" / "made.txt").write_text("created\n")
    cps.end()
    plan = cps.plan("s", 1)
    assert sorted(plan.write) == ["ignored.log"] and sorted(plan.delete) == [
        "deep/er/new.txt",
        "deep/other/made.txt",
    ]
    rewind(cps, "s", 1)
    assert (work / "ignored.log").read_text() == "keep\n"
    assert (work / "ignored.log").stat().st_mode & 0o777 == 0o644
    # The folders the turn's files left empty go; one that still holds a file stays.
    assert not (work / "deep" / "er").exists() and not (work / "deep" / "other").exists()
    assert (work / "deep" / "keep.txt").read_text() == "there before\n"


def test_a_second_capture_of_a_path_keeps_the_first_pre_image(tmp_path: Path) -> None:
    cps, work = store(tmp_path)
    cps.begin("s", 1)
    cps.capture(str(work / "ignored.log"))
    (work / "ignored.log").write_text("first write\n")
    cps.capture(str(work / "ignored.log"))
    (work / "ignored.log").write_text("second write\n")
    cps.end()
    rewind(cps, "s", 1)
    assert (work / "ignored.log").read_text() == "keep\n"


def test_a_capture_outside_the_project_or_outside_a_turn_does_nothing(tmp_path: Path) -> None:
    cps, work = store(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("theirs\n")
    cps.capture(str(work / "ignored.log"))  # no turn yet
    cps.begin("s", 1)
    cps.capture(str(outside))
    cps.capture(str(work / ".git" / "config"))
    cps.end()
    assert cps.plan("s", 1).paths == []
    assert outside.read_text() == "theirs\n"


def test_only_regular_files_up_to_the_size_cap_are_kept(tmp_path: Path) -> None:
    # Exactly at the cap is kept (and put back, though the turn grew it past the cap);
    # one byte over is left alone by a rewind, as is a folder a file tool was pointed at.
    cps, work = store(tmp_path, max_file_bytes=5)
    (work / "at.big").write_text("1234\n")
    (work / "over.big").write_text("12345\n")
    (work / "build").mkdir()
    (work / "build" / "out.o").write_text("o\n")
    cps.begin("s", 1)
    for name in ("at.big", "over.big", "build"):
        cps.capture(str(work / name))
    (work / "at.big").write_text("changed\n")
    (work / "over.big").write_text("changed\n")
    cps.end()
    plan = cps.plan("s", 1)
    assert sorted(plan.write) == ["at.big"] and plan.delete == []
    rewind(cps, "s", 1)
    assert (work / "at.big").read_text() == "1234\n"
    assert cps.plan("s", 1).paths == []  # what uji left is what is there
    assert (work / "over.big").read_text() == "changed\n"
    assert (work / "build" / "out.o").read_text() == "o\n"


@pytest.mark.parametrize("became", ["folder", "link to a folder"])
def test_a_file_the_turn_replaced_by_a_folder_or_a_link_comes_back_as_the_file(
    tmp_path: Path, became: str
) -> None:
    cps, work = store(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "theirs.txt").write_text("not the project's\n")
    cps.begin("s", 1)
    (work / "a.txt").unlink()
    if became == "folder":
        (work / "a.txt").mkdir()
        (work / "a.txt" / "inside.txt").write_text("x\n")
    else:
        os.symlink(elsewhere, work / "a.txt")
    cps.touched()
    cps.end()
    rewind(cps, "s", 1)
    assert (work / "a.txt").is_file() and not (work / "a.txt").is_symlink()
    assert (work / "a.txt").read_text() == "one\n"
    assert (work / "a.txt").stat().st_mode & 0o777 == 0o644
    # A link is replaced, never followed: the folder it pointed at keeps its files.
    assert sorted(p.name for p in elsewhere.iterdir()) == ["theirs.txt"]


@pytest.mark.parametrize("became", ["file", "link out of the project"])
def test_a_folder_the_turn_replaced_by_a_file_or_a_link_comes_back_as_the_folder(
    tmp_path: Path, became: str
) -> None:
    cps, work = store(tmp_path)
    (work / "sub" / "in").mkdir(parents=True)
    (work / "sub" / "in" / "f.txt").write_text("f before\n")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "in").mkdir(parents=True)
    (elsewhere / "in" / "f.txt").write_text("not the project's\n")
    cps.begin("s", 1)
    for path in ((work / "sub" / "in" / "f.txt"), (work / "sub" / "in"), (work / "sub")):
        path.unlink() if path.is_file() else path.rmdir()
    if became == "file":
        (work / "sub").write_text("a file now\n")
    else:
        os.symlink(elsewhere, work / "sub")
    cps.touched()
    cps.end()
    rewind(cps, "s", 1)
    assert (work / "sub").is_dir() and not (work / "sub").is_symlink()
    assert (work / "sub" / "in" / "f.txt").read_text() == "f before\n"
    # Never written through the link: the folder it pointed at is as it was.
    assert (elsewhere / "in" / "f.txt").read_text() == "not the project's\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["in"]


def test_a_write_through_a_link_leading_out_of_the_project_is_refused(tmp_path: Path) -> None:
    # A plan read back from the store could name a path whose folder is now a link out of
    # the project (a link the plan does not delete): it is refused before anything is
    # written, and nothing lands where the link points.
    from uji.store.checkpoints import CheckpointError, Plan

    cps, work = store(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, work / "out")
    cps.begin("s", 1)
    (work / "a.txt").write_text("changed\n")
    cps.touched()
    cps.end()
    blob = cps.plan("s", 1).write["a.txt"]
    for path in ("out/a.txt", "out/new/deeper/a.txt"):
        with pytest.raises(CheckpointError, match="a link on its way leaves the project"):
            cps.restore(Plan(seq=1, write={path: blob}), "s")
    assert list(elsewhere.iterdir()) == []
    assert (work / "a.txt").read_text() == "changed\n"


def test_a_rewind_past_two_turns_puts_back_what_the_later_turn_captured(tmp_path: Path) -> None:
    # Rewinding to before turn 1 also undoes turn 2: an ignored file turn 2 first wrote
    # comes back as turn 2 found it (turn 1's checkpoint never had it), and a file turn 2
    # created goes.
    cps, work = store(tmp_path)
    cps.begin("s", 1)
    cps.capture(str(work / "a.txt"))
    (work / "a.txt").write_text("turn 1\n")
    cps.end()
    cps.begin("s", 2)
    cps.capture(str(work / "ignored.log"))
    (work / "ignored.log").write_text("turn 2\n")
    cps.capture(str(work / "new.txt"))
    (work / "new.txt").write_text("turn 2\n")
    cps.end()
    plan = cps.plan("s", 1)
    assert sorted(plan.write) == ["a.txt", "ignored.log"] and plan.delete == ["new.txt"]
    rewind(cps, "s", 1)
    assert (work / "a.txt").read_text() == "one\n"
    assert (work / "ignored.log").read_text() == "keep\n"
    assert not (work / "new.txt").exists()
