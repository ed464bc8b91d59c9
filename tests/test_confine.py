"""Confinement and atomic writes, with real files, symlinks and a racing thread."""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.waiting import DEADLINE
from uji.tools import confine
from uji.tools.confine import OutsideRoots, Sandbox


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """cwd/ with a file and a subdir; out/ (forbidden) with a secret; root/ (an extra root)."""
    cwd, out, root = tmp_path / "cwd", tmp_path / "out", tmp_path / "root"
    for d in (cwd / "sub", out, root):
        d.mkdir(parents=True)
    (cwd / "a.txt").write_text("inside\n")
    (cwd / "sub" / "b.txt").write_text("b\n")
    (out / "secret").write_text("secret\n")
    (root / "r.txt").write_text("in root\n")
    return {"cwd": cwd, "out": out, "root": root, "tmp": tmp_path}


def box(tree: dict[str, Path], roots: list[str] | None = None, enabled: bool = True) -> Sandbox:
    return Sandbox(str(tree["cwd"]), roots or [], enabled)


def listing(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


# -- refusals ------------------------------------------------------------------------------


def test_refusal_text_without_roots(tree: dict[str, Path]) -> None:
    cwd = tree["cwd"]
    assert box(tree).check("../out/secret") == (
        f"../out/secret is outside the working directory ({cwd}); tools can only reach files under it"
    )


def test_refusal_text_with_roots(tree: dict[str, Path]) -> None:
    cwd, root = tree["cwd"], tree["root"]
    other = tree["tmp"] / "other"
    sb = box(tree, [str(root), str(other)])
    assert sb.check("/etc/passwd") == (
        f"/etc/passwd is outside the working directory ({cwd}) and the roots ({root}, {other}); "
        "tools can only reach files under them"
    )


def test_dotdot_escape_is_refused_for_read_and_write(tree: dict[str, Path]) -> None:
    sb = box(tree)
    for path in ("../out/secret", "sub/../../out/secret", "..", "missing/../../out/new"):
        assert sb.check(path) is not None, path
    with pytest.raises(OutsideRoots):
        sb.read_bytes("../out/secret")
    with pytest.raises(OutsideRoots):
        sb.write_atomic("../out/new", b"x")
    with pytest.raises(OutsideRoots):
        sb.write_atomic("missing/../../out/new", b"x")
    assert listing(tree["out"]) == ["secret"]
    assert not (tree["cwd"] / "missing").exists()  # refused before any directory was made


def test_dotdot_that_stays_inside_is_fine(tree: dict[str, Path]) -> None:
    sb = box(tree)
    assert sb.check("sub/../a.txt") is None
    assert sb.read_bytes("sub/../a.txt") == b"inside\n"
    assert sb.read_bytes("./sub/./b.txt") == b"b\n"


def test_absolute_path_outside_is_refused(tree: dict[str, Path]) -> None:
    sb = box(tree)
    secret = str(tree["out"] / "secret")
    assert sb.check(secret) is not None
    assert sb.check("/") is not None
    with pytest.raises(OutsideRoots):
        sb.open_read(secret)


def test_absolute_path_inside_cwd_is_fine(tree: dict[str, Path]) -> None:
    assert box(tree).read_bytes(str(tree["cwd"] / "a.txt")) == b"inside\n"


def test_symlink_to_outside_file_is_refused(tree: dict[str, Path]) -> None:
    (tree["cwd"] / "link").symlink_to(tree["out"] / "secret")
    (tree["cwd"] / "rel").symlink_to("../out/secret")
    sb = box(tree)
    for name in ("link", "rel"):
        assert sb.check(name) is not None
        with pytest.raises(OutsideRoots):
            sb.read_bytes(name)
        with pytest.raises(OutsideRoots):
            sb.write_atomic(name, b"pwned")
    assert (tree["out"] / "secret").read_text() == "secret\n"


def test_symlink_to_outside_directory_is_refused(tree: dict[str, Path]) -> None:
    (tree["cwd"] / "ld").symlink_to(tree["out"], target_is_directory=True)
    sb = box(tree)
    assert sb.check("ld/secret") is not None
    assert sb.check("ld/new.txt") is not None
    with pytest.raises(OutsideRoots):
        sb.read_bytes("ld/secret")
    with pytest.raises(OutsideRoots):
        sb.write_atomic("ld/new.txt", b"x")
    assert listing(tree["out"]) == ["secret"]


def test_symlinked_parent_of_a_new_file_is_refused(tree: dict[str, Path]) -> None:
    (tree["cwd"] / "deep").mkdir()
    (tree["cwd"] / "deep" / "hop").symlink_to(tree["out"])
    sb = box(tree)
    assert sb.check("deep/hop/made/new.txt") is not None
    with pytest.raises(OutsideRoots):
        sb.write_atomic("deep/hop/made/new.txt", b"x", make_parents=True)
    assert listing(tree["out"]) == ["secret"]  # no `made/` created outside either


def test_final_symlink_pointing_outside_is_refused(tree: dict[str, Path]) -> None:
    (tree["cwd"] / "dangling").symlink_to(tree["out"] / "not-yet")
    sb = box(tree)
    assert sb.check("dangling") is not None
    with pytest.raises(OutsideRoots):
        sb.write_atomic("dangling", b"x")
    assert not (tree["out"] / "not-yet").exists()
    assert (tree["cwd"] / "dangling").is_symlink()


def test_symlinks_that_stay_inside_are_followed(tree: dict[str, Path]) -> None:
    cwd = tree["cwd"]
    (cwd / "rel").symlink_to("sub")
    (cwd / "abs").symlink_to(cwd / "sub")
    (cwd / "chain").symlink_to("rel/b.txt")
    (cwd / "sub" / "up").symlink_to("../a.txt")
    sb = box(tree)
    assert sb.read_bytes("rel/b.txt") == b"b\n"
    assert sb.read_bytes("abs/b.txt") == b"b\n"
    assert sb.read_bytes("chain") == b"b\n"
    assert sb.read_bytes("sub/up") == b"inside\n"
    assert sb.write_atomic("rel/new.txt", b"n") is True
    assert (cwd / "sub" / "new.txt").read_bytes() == b"n"


def test_symlink_from_cwd_into_a_root_is_fine(tree: dict[str, Path]) -> None:
    (tree["cwd"] / "toroot").symlink_to(tree["root"])
    sb = box(tree, [str(tree["root"])])
    assert sb.check("toroot/r.txt") is None
    assert sb.read_bytes("toroot/r.txt") == b"in root\n"
    assert box(tree).check("toroot/r.txt") is not None  # without the root it is outside


def test_write_through_a_final_symlink_keeps_the_link(tree: dict[str, Path]) -> None:
    cwd = tree["cwd"]
    (cwd / "alias").symlink_to("sub/b.txt")
    assert box(tree).write_atomic("alias", b"replaced\n") is False
    assert (cwd / "alias").is_symlink()
    assert (cwd / "sub" / "b.txt").read_bytes() == b"replaced\n"


def test_symlink_loop_is_an_os_error_not_a_refusal(tree: dict[str, Path]) -> None:
    cwd = tree["cwd"]
    (cwd / "x").symlink_to("y")
    (cwd / "y").symlink_to("x")
    sb = box(tree)
    assert sb.check("x") is None
    with pytest.raises(OSError) as info:
        sb.read_bytes("x")
    assert info.value.errno == errno.ELOOP


def test_root_given_with_tilde(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    home = tree["tmp"] / "home"
    (home / "ref").mkdir(parents=True)
    (home / "ref" / "notes.md").write_text("notes\n")
    monkeypatch.setenv("HOME", str(home))
    sb = box(tree, ["~/ref"])
    assert sb.read_bytes("~/ref/notes.md") == b"notes\n"
    assert sb.read_bytes(str(home / "ref" / "notes.md")) == b"notes\n"
    assert sb.check("~/elsewhere") == (
        f"~/elsewhere is outside the working directory ({tree['cwd']}) and the roots "
        f"({home / 'ref'}); tools can only reach files under them"
    )


def test_file_in_a_root_by_absolute_path(tree: dict[str, Path]) -> None:
    sb = box(tree, [str(tree["root"])])
    target = str(tree["root"] / "r.txt")
    assert sb.check(target) is None
    assert sb.read_bytes(target) == b"in root\n"
    assert sb.write_atomic(str(tree["root"] / "new" / "n.txt"), b"n") is True
    assert (tree["root"] / "new" / "n.txt").read_bytes() == b"n"


def test_root_enclosing_the_cwd_allows_going_up_into_it(tree: dict[str, Path]) -> None:
    sb = box(tree, [str(tree["tmp"])])
    assert sb.read_bytes("../out/secret") == b"secret\n"


def test_root_that_is_itself_a_symlink(tree: dict[str, Path]) -> None:
    (tree["tmp"] / "rootlink").symlink_to(tree["root"])
    sb = box(tree, [str(tree["tmp"] / "rootlink")])
    assert sb.read_bytes(str(tree["tmp"] / "rootlink" / "r.txt")) == b"in root\n"
    assert sb.read_bytes(str(tree["root"] / "r.txt")) == b"in root\n"


def test_confinement_off_reaches_anything(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tree["out"]))
    (tree["cwd"] / "ld").symlink_to(tree["out"])
    sb = box(tree, enabled=False)
    assert sb.check("../out/secret") is None
    assert sb.read_bytes("../out/secret") == b"secret\n"
    assert sb.read_bytes(str(tree["out"] / "secret")) == b"secret\n"
    assert sb.read_bytes("~/secret") == b"secret\n"
    assert sb.read_bytes("ld/secret") == b"secret\n"
    assert sb.write_atomic("../out/made/new.txt", b"x") is True
    assert (tree["out"] / "made" / "new.txt").read_bytes() == b"x"


def test_tilde_user_is_not_expanded(tree: dict[str, Path]) -> None:
    sb = box(tree)
    assert sb.abspath("~root/x") == str(tree["cwd"] / "~root" / "x")
    sb.write_atomic("~root", b"literal")
    assert (tree["cwd"] / "~root").read_bytes() == b"literal"


def test_abspath_is_lexical(tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")
    sb = box(tree)
    assert sb.abspath("~/x") == "/home/someone/x"
    assert sb.abspath("~") == "/home/someone"
    assert sb.abspath("a/../b") == str(tree["cwd"] / "b")
    assert sb.abspath("/..") == "/"


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_permission_denied_is_not_an_escape(tree: dict[str, Path]) -> None:
    locked = tree["cwd"] / "locked"
    locked.write_text("x")
    locked.chmod(0)
    sb = box(tree)
    assert sb.check("locked") is None
    with pytest.raises(PermissionError):
        sb.read_bytes("locked")


def test_permission_error_mid_walk_is_not_an_escape(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def denying(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if path == "sub":
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denying)
    sb = box(tree)
    assert sb.check("sub/b.txt") is None
    with pytest.raises(PermissionError):
        sb.read_bytes("sub/b.txt")


def test_missing_file_is_an_os_error(tree: dict[str, Path]) -> None:
    sb = box(tree)
    assert sb.check("nope/deeper.txt") is None
    with pytest.raises(FileNotFoundError) as info:
        sb.read_bytes("nope.txt")
    assert info.value.strerror == "No such file or directory"


# -- races -------------------------------------------------------------------------------


def test_swap_between_check_and_write_is_refused(tree: dict[str, Path]) -> None:
    cwd = tree["cwd"]
    (cwd / "d").mkdir()
    sb = box(tree)
    assert sb.check("d/f.txt") is None
    (cwd / "d").rename(cwd / "d.real")
    (cwd / "d").symlink_to(tree["out"])
    with pytest.raises(OutsideRoots):
        sb.write_atomic("d/f.txt", b"x")
    assert listing(tree["out"]) == ["secret"]


def test_swap_during_the_walk_cannot_redirect_the_write(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The directory is swapped for a symlink right after the walk opened it: the write
    still lands in the directory the walk holds, never outside."""
    cwd = tree["cwd"]
    (cwd / "d").mkdir()
    real_open = os.open

    def open_then_swap(path: str, flags: int, *args: object, **kwargs: object) -> int:
        fd = real_open(path, flags, *args, **kwargs)
        if path == "d" and (cwd / "d").is_dir() and not (cwd / "d").is_symlink():
            (cwd / "d").rename(cwd / "d.real")
            (cwd / "d").symlink_to(tree["out"])
        return fd

    monkeypatch.setattr(os, "open", open_then_swap)
    box(tree).write_atomic("d/f.txt", b"x")
    monkeypatch.undo()
    assert listing(tree["out"]) == ["secret"]
    assert (cwd / "d.real" / "f.txt").read_bytes() == b"x"


def flip_until(folder: Path, stop: threading.Event) -> int:
    """Swap `folder/d` (a directory) and `folder/d.link` (a symlink) until `stop` is set;
    returns how many round trips it made."""
    flips = 0
    while not stop.is_set():
        os.rename(folder / "d", folder / "d.dir")
        os.rename(folder / "d.link", folder / "d")
        os.rename(folder / "d", folder / "d.link")
        os.rename(folder / "d.dir", folder / "d")
        flips += 1
    return flips


def test_racing_thread_never_gets_a_write_outside(tree: dict[str, Path]) -> None:
    cwd, out = tree["cwd"], tree["out"]
    (cwd / "d").mkdir()
    (cwd / "d.link").symlink_to(out)
    stop = threading.Event()

    def swap() -> None:
        flip_until(cwd, stop)

    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    swapper = threading.Thread(target=swap)
    swapper.start()
    outcomes = {"written": 0, "refused": 0, "oserror": 0}
    sb = box(tree)
    try:
        # Until the race has gone both ways (a loaded machine takes longer), 60 s at most.
        deadline = time.monotonic() + DEADLINE
        while not (outcomes["written"] and outcomes["refused"]) and time.monotonic() < deadline:
            try:
                sb.write_atomic("d/f.txt", b"x", make_parents=False)
                outcomes["written"] += 1
            except OutsideRoots:
                outcomes["refused"] += 1
            except OSError:
                outcomes["oserror"] += 1
    finally:
        stop.set()
        swapper.join()
        sys.setswitchinterval(old_interval)
    assert listing(out) == ["secret"], outcomes
    assert outcomes["written"] > 0 and outcomes["refused"] > 0, outcomes


# -- atomic writes -----------------------------------------------------------------------


def test_write_reports_created_and_makes_parents(tree: dict[str, Path]) -> None:
    sb = box(tree)
    assert sb.write_atomic("x/y/z.txt", b"new") is True
    assert sb.write_atomic("x/y/z.txt", b"newer") is False
    assert (tree["cwd"] / "x" / "y" / "z.txt").read_bytes() == b"newer"
    with pytest.raises(FileNotFoundError):
        sb.write_atomic("p/q.txt", b"x", make_parents=False)


def test_write_keeps_the_mode(tree: dict[str, Path]) -> None:
    target = tree["cwd"] / "script.sh"
    target.write_text("old")
    target.chmod(0o751)
    box(tree).write_atomic("script.sh", b"new")
    assert target.stat().st_mode & 0o7777 == 0o751
    assert target.read_bytes() == b"new"


def test_write_over_a_directory_fails(tree: dict[str, Path]) -> None:
    with pytest.raises(IsADirectoryError):
        box(tree).write_atomic("sub", b"x")


@pytest.mark.parametrize("fail", ["fsync", "rename", "write"])
def test_failed_write_leaves_the_old_file_and_no_temp(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch, fail: str
) -> None:
    target = tree["cwd"] / "a.txt"

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, fail, broken)
    with pytest.raises(OSError):
        box(tree).write_atomic("a.txt", b"half-written")
    monkeypatch.undo()
    assert target.read_text() == "inside\n"
    assert listing(tree["cwd"]) == ["a.txt", "sub"]


def test_interrupt_mid_write_leaves_the_old_file(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(fd: int, data: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        box(tree).write_atomic("a.txt", b"never")
    monkeypatch.undo()
    assert (tree["cwd"] / "a.txt").read_text() == "inside\n"
    assert listing(tree["cwd"]) == ["a.txt", "sub"]


def test_open_read_refuses_a_directory_as_an_os_error(tree: dict[str, Path]) -> None:
    with pytest.raises(IsADirectoryError):
        box(tree).open_read("sub")
    with pytest.raises(IsADirectoryError):
        box(tree).read_bytes(".")


def _chain(cwd: Path, links: int) -> str:
    """`c0 -> c1 -> ... -> c{links-1} -> a.txt`: reading c0 follows `links` symlinks."""
    for i in range(links):
        (cwd / f"c{i}").symlink_to(f"c{i + 1}" if i + 1 < links else "a.txt")
    return "c0"


@pytest.mark.parametrize("enabled", [True, False])
def test_a_chain_of_40_links_is_followed_and_41_is_a_loop(tree: dict[str, Path], enabled: bool) -> None:
    # The kernel's own limit (40, as MAXSYMLINKS), kept by the walk that resolves links by hand.
    assert confine.MAX_LINKS == 40
    long_dir, short_dir = tree["cwd"] / "long", tree["cwd"] / "short"
    long_dir.mkdir()
    short_dir.mkdir()
    (long_dir / "a.txt").write_text("end of 41\n")
    (short_dir / "a.txt").write_text("end of 40\n")
    sb = box(tree, enabled=enabled)
    assert sb.read_bytes("short/" + _chain(short_dir, 40)) == b"end of 40\n"
    assert sb.write_atomic("short/c0", b"rewritten\n") is False  # through the chain, link kept
    assert (short_dir / "a.txt").read_bytes() == b"rewritten\n" and (short_dir / "c0").is_symlink()
    _chain(long_dir, 41)
    for act in (lambda: sb.read_bytes("long/c0"), lambda: sb.write_atomic("long/c0", b"x")):
        with pytest.raises(OSError) as info:
            act()
        assert info.value.errno == errno.ELOOP
    assert (long_dir / "a.txt").read_text() == "end of 41\n"
