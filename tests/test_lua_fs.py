"""uji.fs through real Lua and real files: both call forms, `nil, err` failures, the file
tools' confinement (`..` and symlink escapes), and argument errors at the caller's line."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.waiting import DEADLINE
from uji.app import App
from uji.lua.runtime import LuaError
from uji.paths import resolve


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """tmp/work is the cwd; tmp/outside holds a secret the sandbox must not give away."""
    (tmp_path / "work" / "sub").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    return tmp_path / "work"


@pytest.fixture
def app(work: Path, tmp_path: Path) -> App:
    notices: list[str] = []
    a = App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(work), notice=notices.append)
    a.notices = notices  # type: ignore[attr-defined]
    return a


async def lua(app: App, source: str) -> tuple:
    rt = app.lua
    return await rt.call(rt.load_source(source, "/cfg/test.lua"))


def py(app: App, value: object) -> object:
    return app.lua.convert.to_python(value)


async def until(check: Callable[[], bool], timeout: float = DEADLINE) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.005)


def refusal(path: str, work: Path) -> str:
    return f"{path} is outside the working directory ({work})"


# -- read ------------------------------------------------------------------------------------


async def test_read_waits_and_returns_the_text(app: App, work: Path) -> None:
    (work / "a.txt").write_text("hello\nworld\n")
    (text,) = await lua(app, "return uji.fs.read('a.txt')")
    assert text == "hello\nworld\n"


async def test_read_with_a_callback_returns_a_cancel_function(app: App, work: Path) -> None:
    (work / "a.txt").write_text("hi")
    (kind,) = await lua(
        app, "return type(uji.fs.read('a.txt', function(t, err) uji.notify('got ' .. t) end))"
    )
    assert kind == "function"
    await until(lambda: bool(app.notices))  # type: ignore[attr-defined]
    assert app.notices == ["got hi"]  # type: ignore[attr-defined]


async def test_read_keeps_bytes_exact(app: App, work: Path) -> None:
    (work / "bin").write_bytes(b"\xff\x00a")
    (n, b1, b2) = await lua(app, "local t = uji.fs.read('bin'); return #t, t:byte(1), t:byte(2)")
    assert (n, b1, b2) == (3, 255, 0)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("missing.txt", "read missing.txt: No such file or directory"),
        ("sub", "sub is a directory, not a file"),
    ],
)
async def test_read_failures_are_nil_and_the_reason(app: App, path: str, message: str) -> None:
    (text, err) = await lua(app, f"return uji.fs.read('{path}')")
    assert text is None and err == message


async def test_read_failure_reaches_the_callback_as_nil_err(app: App) -> None:
    await lua(app, "uji.fs.read('missing', function(t, err) uji.notify(tostring(t) .. '|' .. err) end)")
    await until(lambda: bool(app.notices))  # type: ignore[attr-defined]
    assert app.notices == ["nil|read missing: No such file or directory"]  # type: ignore[attr-defined]


# -- lines -----------------------------------------------------------------------------------


async def test_lines_pages_and_counts(app: App, work: Path) -> None:
    (work / "f.txt").write_text("".join(f"line {i}\r\n" for i in range(1, 11)))
    (page,) = await lua(app, "return uji.fs.lines('f.txt', { offset = 3, limit = 2 })")
    assert py(app, page) == {"lines": ["line 3", "line 4"], "cut": {}, "total": 10}


async def test_lines_cuts_long_lines_and_marks_them(app: App, work: Path) -> None:
    (work / "f.txt").write_text("ab\nshort\n" + "x" * 50 + "\néé")
    (page,) = await lua(app, "return uji.fs.lines('f.txt', { max_line = 3 })")
    # "éé" is 4 bytes: the cut backs off the split character.
    assert py(app, page) == {
        "lines": ["ab", "sho", "xxx", "é"],
        "cut": {"2": True, "3": True, "4": True},
        "total": 4,
    }


async def test_lines_with_a_callback_and_no_options(app: App, work: Path) -> None:
    (work / "f.txt").write_text("a\nb")
    await lua(app, "uji.fs.lines('f.txt', function(p) uji.notify(#p.lines .. ' of ' .. p.total) end)")
    await until(lambda: bool(app.notices))  # type: ignore[attr-defined]
    assert app.notices == ["2 of 2"]  # type: ignore[attr-defined]


async def test_lines_past_the_end_is_empty_with_the_total(app: App, work: Path) -> None:
    (work / "f.txt").write_text("a\nb\n")
    (page,) = await lua(app, "return uji.fs.lines('f.txt', { offset = 9 })")
    assert py(app, page) == {"lines": [], "cut": {}, "total": 2}


async def test_lines_refuses_binary_files_and_directories(app: App, work: Path) -> None:
    (work / "b.bin").write_bytes(b"abc\0def")
    (a, a_err, b, b_err) = await lua(
        app, "local a, ae = uji.fs.lines('b.bin'); local b, be = uji.fs.lines('sub'); return a, ae, b, be"
    )
    assert a is None and a_err == "b.bin looks like a binary file"
    assert b is None and b_err == "sub is a directory, not a file"


# -- write -----------------------------------------------------------------------------------


async def test_write_creates_parents_then_overwrites(app: App, work: Path) -> None:
    (first, second) = await lua(
        app,
        "local a = uji.fs.write('new/dir/f.txt', 'one'); local b = uji.fs.write('new/dir/f.txt', 'two'); return a, b",
    )
    assert py(app, first) == {"created": True} and py(app, second) == {"created": False}
    assert (work / "new" / "dir" / "f.txt").read_text() == "two"
    assert os.listdir(work / "new" / "dir") == ["f.txt"]  # no temp file left behind


async def test_write_with_a_callback(app: App, work: Path) -> None:
    await lua(app, "uji.fs.write('cb.txt', 'é', function(r) uji.notify(tostring(r.created)) end)")
    await until(lambda: bool(app.notices))  # type: ignore[attr-defined]
    assert app.notices == ["true"]  # type: ignore[attr-defined]
    assert (work / "cb.txt").read_text() == "é"


async def test_write_over_a_directory_is_nil_err(app: App) -> None:
    (r, err) = await lua(app, "return uji.fs.write('sub', 'x')")
    assert r is None and err == "sub is a directory, not a file"


# -- list, glob, join ------------------------------------------------------------------------


async def test_list_names_and_types_sorted(app: App, work: Path) -> None:
    (work / "b.txt").write_text("")
    (work / "a.txt").write_text("")
    os.symlink("a.txt", work / "c-link")
    os.mkfifo(work / "d-fifo")
    (entries,) = await lua(app, "return uji.fs.list('.')")
    assert py(app, entries) == [
        {"name": "a.txt", "type": "file"},
        {"name": "b.txt", "type": "file"},
        {"name": "c-link", "type": "link"},
        {"name": "d-fifo", "type": "other"},
        {"name": "sub", "type": "dir"},
    ]


async def test_list_of_a_file_or_a_missing_dir_is_nil_err(app: App, work: Path) -> None:
    (work / "f").write_text("")
    (a, a_err, b, b_err) = await lua(
        app, "local a, ae = uji.fs.list('f'); local b, be = uji.fs.list('nope'); return a, ae, b, be"
    )
    assert a is None and a_err == "f is not a directory"
    assert b is None and b_err == "list nope: No such file or directory"


async def test_glob_patterns(app: App, work: Path) -> None:
    for name in ("a.lua", "b.lua", "c.txt", "sub/d.lua", "sub/deep/e.lua", ".hidden/x.lua", "ab.md"):
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("")
    cases = {
        "*.lua": ["a.lua", "b.lua"],
        "?.txt": ["c.txt"],
        "[ab].*": ["a.lua", "b.lua"],
        "**/*.lua": ["a.lua", "b.lua", "sub/d.lua", "sub/deep/e.lua"],
        "sub/**/e.lua": ["sub/deep/e.lua"],
        "sub/**": ["sub/d.lua", "sub/deep", "sub/deep/e.lua"],
        ".hidden/*": [".hidden/x.lua"],
        "nothing*": [],
        "c.txt": ["c.txt"],
    }
    for pattern, expected in cases.items():
        (found,) = await lua(app, f"return uji.fs.glob('{pattern}')")
        assert py(app, found) == expected, pattern


async def test_glob_outside_the_cwd_gives_absolute_paths(app: App, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (found,) = await lua(app, f"uji.tool.roots({{'{outside}'}}); return uji.fs.glob('{outside}/*.txt')")
    assert py(app, found) == [f"{outside}/secret.txt"]


async def test_join(app: App) -> None:
    (a, b, c) = await lua(
        app, "return uji.fs.join('a', 'b', 'c.txt'), uji.fs.join('a/', '/abs'), uji.fs.join('', 'x')"
    )
    assert (a, b, c) == ("a/b/c.txt", "/abs", "x")


# -- confinement -----------------------------------------------------------------------------


async def test_dotdot_escapes_are_refused(app: App, work: Path) -> None:
    path = "../outside/secret.txt"
    source = f"""
    local r = {{}}
    for _, f in ipairs({{
      function() return uji.fs.read('{path}') end,
      function() return uji.fs.lines('{path}') end,
      function() return uji.fs.write('../outside/new.txt', 'x') end,
      function() return uji.fs.list('../outside') end,
      function() return uji.fs.glob('../outside/*') end,
    }}) do
      local v, err = f()
      r[#r + 1] = tostring(v) .. '|' .. tostring(err)
    end
    return r
    """
    (results,) = await lua(app, source)
    shown = [path, path, "../outside/new.txt", "../outside", "../outside/*"]
    tail = "; tools can only reach files under it"
    assert py(app, results) == [f"nil|{refusal(p, work)}{tail}" for p in shown]
    assert not (work.parent / "outside" / "new.txt").exists()


async def test_symlink_escapes_are_refused(app: App, work: Path) -> None:
    os.symlink(work.parent / "outside" / "secret.txt", work / "link.txt")
    os.symlink(work.parent / "outside", work / "linkdir")
    (r1, e1, r2, e2, r3, e3) = await lua(
        app,
        "local a, ae = uji.fs.read('link.txt'); local b, be = uji.fs.list('linkdir');"
        " local c, ce = uji.fs.write('linkdir/x', 'x'); return a, ae, b, be, c, ce",
    )
    assert (r1, r2, r3) == (None, None, None)
    assert e1 == refusal("link.txt", work) + "; tools can only reach files under it"
    assert e2 == refusal("linkdir", work) + "; tools can only reach files under it"
    assert e3 == refusal("linkdir/x", work) + "; tools can only reach files under it"
    # glob lists the link itself (a name inside) but nothing reached through it.
    (found,) = await lua(app, "return uji.fs.glob('*/*')")
    assert "linkdir/secret.txt" not in py(app, found)  # type: ignore[operator]


async def test_unconfined_reaches_outside(app: App) -> None:
    (text,) = await lua(app, "uji.tool.confine(false); return uji.fs.read('../outside/secret.txt')")
    assert text == "secret\n"


# -- argument errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("uji.fs.read(42)", "uji.fs.read: the path must be a non-empty string"),
        ("uji.fs.read('a', 'notfn')", "uji.fs.read: the callback must be a function"),
        ("uji.fs.lines('a', { offset = 0 })", "uji.fs.lines: `offset` must be a whole number >= 1"),
        ("uji.fs.lines('a', { limit = 1.5 })", "uji.fs.lines: `limit` must be a whole number >= 0"),
        ("uji.fs.write('a', nil)", "uji.fs.write: the content must be a string"),
        ("uji.fs.list('')", "uji.fs.list: the path must be a non-empty string"),
        ("uji.fs.glob({})", "uji.fs.glob: the pattern must be a non-empty string"),
        ("uji.fs.join('a', 1)", "uji.fs.join: part 2 is not a string"),
    ],
)
async def test_bad_arguments_raise_at_the_callers_line(app: App, call: str, message: str) -> None:
    with pytest.raises(LuaError) as err:
        await lua(app, f"local x = 1\n{call}")
    assert str(err.value) == f"/cfg/test.lua:2: {message}"


async def test_waiting_outside_a_task_raises(app: App, work: Path) -> None:
    (work / "a").write_text("")
    # Plain Lua called from Python, not a task: there is nothing to wait in.
    outside_task = app.lua.lua.eval("function() return uji.fs.read('a') end")
    with pytest.raises(Exception, match="call it inside a task, or pass a callback"):
        outside_task()
