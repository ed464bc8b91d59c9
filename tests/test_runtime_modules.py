"""Runtime modules and native modules (docs.md §1 files, §2 "General contract" and
"Runtime"): a C shared object in `native/`, of the config dir or of a pack, is found by
`require` and opened through its `luaopen_<name>`; `uji.sys.<name>` modules, Lua or
native, in the config dir replace the runtime helpers and answer names `uji` lacks. Each
native module is compiled here from a few lines of C (uji's LuaJIT C API, declared by
hand: no Lua headers are needed); everything runs through `uji run`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Home
from uji.lua.runtime import RUNTIME_DIR

pytestmark = pytest.mark.timeout(120)

# A module whose one function returns `greeting`; `opener` names its luaopen_ function.
C_MODULE = """
typedef struct lua_State lua_State;
extern void lua_pushstring(lua_State *L, const char *s);
extern void lua_pushcclosure(lua_State *L, int (*fn)(lua_State *), int n);
static int greet(lua_State *L) {{ lua_pushstring(L, "{greeting}"); return 1; }}
int {opener}(lua_State *L) {{ lua_pushcclosure(L, greet, 0); return 1; }}
"""


def compile_module(target: Path, opener: str, greeting: str) -> Path:
    """Builds `target` (a .so) from C_MODULE with the machine's C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc is not None, "a C compiler (cc) is needed to build the test's native module"
    target.parent.mkdir(parents=True, exist_ok=True)
    source = target.with_suffix(".c")
    source.write_text(C_MODULE.format(opener=opener, greeting=greeting))
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(target), str(source)], check=True, timeout=60)
    source.unlink()
    return target


def test_a_native_module_in_the_config_dir_and_in_a_pack_loads_with_require(
    home: Home, tmp_path: Path
) -> None:
    compile_module(home.config / "native" / "hello.so", "luaopen_hello", "hello from C")
    # A dotted name is a folder, and its opener names the whole path: native/acme/fast.so.
    pack = tmp_path / "pack"
    compile_module(pack / "native" / "acme" / "fast.so", "luaopen_acme_fast", "fast from a pack")
    home.init(
        f"""
        uji.notify("config: " .. require("hello")())
        uji.pack.add({{ {{ dir = "{pack}" }} }})
        uji.notify("pack: " .. require("acme.fast")())
        uji.notify("library: " .. uji.os.library)
        """
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert "config: hello from C" in run.notices
    assert "pack: fast from a pack" in run.notices
    assert "library: so" in run.notices


def test_a_native_module_without_its_opener_is_an_error_at_the_requiring_line(home: Home) -> None:
    compile_module(home.config / "native" / "broken.so", "luaopen_something_else", "x")
    home.init(
        """
        uji.notify("before")
        local ok = require("broken")
        uji.notify("not reached")
        """
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr  # a config error is a notice; the run goes on
    line = home.line_of('require("broken")')
    error = next(n for n in run.notices if "broken" in n)
    assert f"init.lua:{line}:" in error
    assert "luaopen_broken" in error
    assert "before" in run.notices and "not reached" not in run.notices


def test_runtime_modules_in_the_config_replace_the_helpers_and_answer_names_uji_lacks(home: Home) -> None:
    sys_dir = home.config / "lua" / "uji" / "sys"
    sys_dir.mkdir(parents=True)
    # Replaces uji.regex from boot (the config's lua/ is on the path from the start).
    (sys_dir / "regex.lua").write_text(
        "return function(p) return { test = function(_, s) return s == 'replaced:' .. p end } end\n"
    )
    (sys_dir / "greeting.lua").write_text("return { hello = function(n) return 'hi ' .. n end }\n")
    (sys_dir / "empty.lua").write_text("local x = 1\n")
    compile_module(home.config / "native" / "uji" / "sys" / "fast.so", "luaopen_uji_sys_fast", "native sys")
    home.init(
        """
        uji.notify("regex: " .. tostring(uji.regex("a"):test("replaced:a")))
        uji.notify("greeting: " .. uji.greeting.hello("you"))
        uji.notify("same: " .. tostring(uji.greeting == uji.sys.greeting))
        uji.notify("native: " .. uji.fast())
        uji.notify("absent: " .. tostring(uji.no_such_module) .. " " .. tostring(uji.sys.no_such_module))
        uji.notify("glob: " .. tostring(uji.glob("*.lua"):test("a.lua")))
        local ok, err = pcall(function() return uji.empty end)
        uji.notify("empty: " .. err)
        """
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert "regex: true" in run.notices
    assert "greeting: hi you" in run.notices
    assert "same: true" in run.notices
    assert "native: native sys" in run.notices
    assert "absent: nil nil" in run.notices
    assert "glob: true" in run.notices  # not replaced: uji's own
    line = home.line_of("uji.empty")
    assert f"empty: {home.config / 'init.lua'}:{line}: uji.sys.empty must return its module" in " ".join(
        run.notices
    )


def test_a_broken_replacement_is_a_notice_naming_its_line_and_the_helper_stays(home: Home) -> None:
    sys_dir = home.config / "lua" / "uji" / "sys"
    sys_dir.mkdir(parents=True)
    (sys_dir / "glob.lua").write_text("return {\n  oops = = 1\n}\n")
    home.init('uji.notify("glob: " .. tostring(uji.glob("*.lua"):test("a.lua")))\n')
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert "glob: true" in run.notices
    notice = next(n for n in run.notices if "glob.lua" in n)
    assert "glob.lua:2: unexpected symbol" in notice and str(sys_dir / "glob.lua") in notice
    assert "uji.glob stays uji's own" in notice


def test_uji_runtime_names_the_lua_tree_uji_runs_instead_of_its_own(home: Home, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(RUNTIME_DIR, tree)
    defaults = tree / "uji" / "builtin" / "defaults.lua"
    defaults.write_text(defaults.read_text() + '\nuji.notify("defaults from my tree")\n')
    (tree / "uji" / "plugins" / "readonly.lua").unlink()
    home.init('uji.notify("readonly: " .. tostring(pcall(require, "uji.plugins.readonly")))\n')
    run = home.run("hi", env={"UJI_RUNTIME": str(tree)})
    assert run.rc == 0, run.stderr
    assert "defaults from my tree" in run.notices
    assert "readonly: false" in run.notices  # uji's own tree is not searched
    plain = home.run("hi")
    assert "defaults from my tree" not in plain.notices and "readonly: true" in plain.notices


def test_uji_runtime_without_a_uji_tree_is_an_error_before_anything_runs(home: Home, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    home.init('uji.notify("config ran")\n')
    run = home.run("hi", env={"UJI_RUNTIME": str(empty)})
    assert run.rc == 1
    assert f"uji: error: UJI_RUNTIME={empty}: no uji/prelude.lua there" in run.stderr
    assert "config ran" not in run.stdout


def test_each_api_file_loaded_on_first_use_defines_the_names_it_waits_for() -> None:
    """uji.lua.runtime.LAZY_API: a name read loads the file that defines it, and that file
    defines exactly the names listed (a name left out would read as missing)."""
    from uji.lua.runtime import LAZY_API, Runtime

    rt = Runtime(lambda name: lambda *args: None, [], [], RUNTIME_DIR)
    api = Path(RUNTIME_DIR) / "uji" / "api"
    started = {"apis.lua", "core.lua", "sys.lua", "missing.lua"}  # loaded at every start
    assert {p.name for p in api.glob("*.lua")} == set(LAZY_API) | started
    keys = rt.lua.eval(
        "function(t) local o = {} for k in next, t do o[#o + 1] = k end return table.concat(o, ' ') end"
    )
    for file, names in LAZY_API.items():
        before = set(keys(rt.uji).split())
        assert not set(names) & before, file
        assert rt.uji[names[0]] is not None, file
        assert set(keys(rt.uji).split()) - before == set(names), file


def test_a_namespace_loaded_on_first_use_points_its_errors_and_missing_names_at_the_callers_line(
    home: Home,
) -> None:
    # Each line is the config's first use of its namespace.
    home.init(
        """
        uji.session.no_such_function()
        local ok, err = pcall(uji.fs.read, 42)
        uji.notify("fs: " .. tostring(err))
        for name in pairs(uji) do if name == "tty" then uji.notify("pairs saw tty") end end
        uji.notify("regex: " .. tostring(uji.regex("a.c"):test("abc")))
        """
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    init = home.config / "init.lua"
    line = home.line_of("uji.session.no_such_function")
    assert (
        f"{init}:{line}: uji.session.no_such_function is not supported yet; the call did nothing"
        in run.notices
    )
    fs = next(n for n in run.notices if n.startswith("fs: "))
    assert fs.startswith(f"fs: {init}:{home.line_of('pcall(uji.fs.read')}: "), fs
    assert "pairs saw tty" in run.notices
    assert "regex: true" in run.notices
