"""Confinement (uji.tools.confine.Sandbox) at the edges its mutation survivors showed
untested: on unless told, the read-only roots open to reads by default and never to writes,
the nearest of nested roots, a new file's mode and a kept one's, a limited read, and a FIFO
that cannot hang an open. test_confine.py covers the walk's attacks (symlinks, `..`, races)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from uji.tools.confine import Sandbox

pytestmark = pytest.mark.timeout(10)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def test_confinement_is_on_unless_told_and_reads_reach_the_read_only_roots(tmp_path: Path) -> None:
    work, skills, other = tmp_path / "work", tmp_path / "skills", tmp_path / "other"
    for d in (work, skills, other):
        d.mkdir()
    (skills / "s.md").write_text("skill")
    sandbox = Sandbox(str(work), [], read_roots=[str(skills)])
    assert sandbox.check(str(other / "x")) is not None  # on by default
    assert sandbox.check(str(skills / "s.md")) is None  # a read by default
    assert sandbox.read_bytes(str(skills / "s.md")) == b"skill"
    assert sandbox.check(str(skills / "s.md"), write=True) is not None
    with pytest.raises(Exception, match="outside the working directory"):
        sandbox.write_atomic(str(skills / "s.md"), b"x")
    assert (skills / "s.md").read_text() == "skill"
    assert Sandbox(str(work), [], enabled=False).check(str(other / "x")) is None


def test_a_path_under_nested_roots_is_reached_through_the_nearest(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    inner = outer / "inner"
    inner.mkdir(parents=True)
    (inner / "f").write_text("deep")
    work = tmp_path / "work"
    work.mkdir()
    sandbox = Sandbox(str(work), [str(outer), str(inner)])
    assert sandbox.read_bytes(str(inner / "f")) == b"deep"
    sandbox = Sandbox(str(work), [str(inner), str(outer)])
    assert sandbox.read_bytes(str(inner / "f")) == b"deep"
    assert sandbox.read_bytes(str(inner / "f"), limit=2) == b"de"


def test_a_new_file_is_0644_and_a_replaced_one_keeps_its_mode(tmp_path: Path, umask_022: None) -> None:
    sandbox = Sandbox(str(tmp_path), [])
    assert sandbox.write_atomic("new.txt", b"x") is True
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644
    (tmp_path / "run.sh").write_text("old")
    (tmp_path / "run.sh").chmod(0o750)
    assert sandbox.write_atomic("run.sh", b"new") is False
    assert stat.S_IMODE((tmp_path / "run.sh").stat().st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt", "run.sh"]  # no temp file left


def test_a_fifo_is_opened_without_hanging_and_read_as_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    sandbox = Sandbox(str(tmp_path), [])
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer, so a read gets data, not EOF
    try:
        os.write(writer, b"data")
        with sandbox.open_read("pipe") as f:
            # Blocking again once open: a later read waits for a writer's bytes instead of
            # coming back empty-handed (None) while the writer is still at work.
            assert os.get_blocking(f.fileno())
            assert f.read(4) == b"data"
    finally:
        os.close(writer)


def test_without_proc_the_place_a_walk_reached_is_resolved_by_name(tmp_path: Path) -> None:
    # The guard is told the real path a walk reached, read from /proc/self/fd; where that
    # cannot be read (no /proc, as in some containers) it falls back to the path's name.
    from uji.tools.confine import _reached

    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to("real")
    closed = os.open(tmp_path, os.O_RDONLY)
    os.close(closed)  # /proc/self/fd/<closed> cannot be read
    assert _reached(closed, "f.txt", str(tmp_path / "alias" / "f.txt")) == str(tmp_path / "real" / "f.txt")
