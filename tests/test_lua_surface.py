"""The declared `uji.*` API (uji.lua.surface) against the `uji` table a real uji installs,
and the generated docs/lua-api.md and LuaLS file against the declaration."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import Home
from uji.lua import surface, typegen

# Walks the `uji` table and writes what it finds: a function with its parameter count, or
# another value with its type. Tables are walked into, except those that stand for a value
# (uji.json.null: empty, with a metatable); a namespace's metatable (the stand-ins for
# missing names) is marked `__uji_namespace`.
WALK = """
local found = {}
local function walk(t, prefix, seen)
  if seen[t] then return end
  seen[t] = true
  for k, v in pairs(t) do
    local name = prefix .. "." .. tostring(k)
    local mt = getmetatable(v)
    if type(v) == "table" and (mt == nil or rawget(mt, "__uji_namespace")) and next(v) ~= nil then
      walk(v, name, seen)
    elseif type(v) == "function" then
      local info = debug.getinfo(v, "u")
      found[name] = { type = "function", nparams = info.nparams, vararg = info.isvararg }
    else
      found[name] = { type = type(v) }
    end
  end
end
walk(uji, "uji", {})
local f = assert(io.open({out!r}, "w"))
f:write(uji.json.encode(found))
f:close()
"""


def installed(home: Home) -> dict[str, dict[str, object]]:
    out = home.root / "surface.json"
    home.init(WALK.replace("{out!r}", json.dumps(str(out))))
    run = home.run("hello")
    assert run.rc == 0, run.stderr
    found: dict[str, dict[str, object]] = json.loads(out.read_text())
    return found


def test_the_declaration_names_exactly_what_a_running_uji_installs(home: Home) -> None:
    found = installed(home)
    functions = {name for name, v in found.items() if v["type"] == "function"}
    declared = {f.name for f in surface.functions()}
    assert len(functions) > 50  # the walk saw the whole table
    assert sorted(functions - declared) == [], "installed but not declared in uji/lua/surface.py"
    assert sorted(declared - functions) == [], "declared in uji/lua/surface.py but not installed"
    # Other values: each declared one is there; whatever else is there sits under one.
    values = {v.name for v in surface.values()}
    others = {name for name, v in found.items() if v["type"] != "function"}
    assert (
        sorted(name for name in others if not any(name == v or name.startswith(v + ".") for v in values))
        == []
    )
    assert (
        sorted(v for v in values if not any(name == v or name.startswith(v + ".") for name in others)) == []
    )


def test_each_declared_function_takes_the_parameters_its_lua_function_takes(home: Home) -> None:
    found = installed(home)
    wrong = []
    for f in surface.functions():
        fixed = [p for p in f.params if p.name != "..."]
        want = {
            "nparams": len(fixed) + (1 if f.waits is not None else 0),
            "vararg": len(fixed) < len(f.params),
        }
        got = {"nparams": found[f.name]["nparams"], "vararg": found[f.name]["vararg"]}
        if got != want:
            wrong.append(f"{f.name}: declared {want}, installed {got}")
    assert wrong == []


def test_the_generated_files_are_up_to_date() -> None:
    from uji.devtools import gen_docs

    assert set(typegen.outputs()) <= set(gen_docs.outputs())
    assert gen_docs.stale() == [], "run `python -m uji.devtools.gen_docs` and commit the files it writes"


def test_the_reference_and_the_luals_file_include_the_event_catalog() -> None:
    from uji.events.catalog import HOOKS, NOTIFICATIONS

    markdown, luals = typegen.markdown_file(), typegen.luals_file()
    assert NOTIFICATIONS and HOOKS
    for spec in NOTIFICATIONS + HOOKS:
        assert f"`{spec.name}`" in markdown
        assert f"---@class uji.event.{spec.name}\n" in luals
        assert f'---@overload fun(event: "{spec.name}", handler: fun(e: uji.event.{spec.name})' in luals
    # One definition of each function: uji.on with the catalog's overloads, once.
    assert luals.count("function uji.on(") == 1


def test_the_luals_file_declares_every_function_and_type_it_uses() -> None:
    text = typegen.luals_file()
    assert text.startswith("---@meta")
    for f in surface.functions():
        assert f"function {f.name}(" in text
    # Every uji.X type named in a signature or field is an alias or a class of the file.
    defined = set(re.findall(r"^---@(?:class|alias) (\S+)", text, re.M))
    assert {a.name for a in surface.ALIASES} | {s.name for s in surface.SHAPES} <= defined
    used = set(re.findall(r"\buji\.(?:[a-z_]+\.)*[A-Z][A-Za-z]*\b", text))
    assert len(used) > 20
    # (uji.ui.Markdown is a function named as the original names views.)
    named = {v.name for v in surface.values()} | {f.name for f in surface.functions()}
    assert sorted(used - defined - named) == []


def test_the_types_path_is_shipped_in_the_package(home: Home) -> None:
    run = home.uji("lua-types", check=True)
    path = Path(run.stdout.strip())
    assert path.is_dir()
    assert (path / "uji.lua").read_text() == typegen.luals_file()


# An editor's view: a language server reads a sample init.lua with the shipped definitions.
SAMPLE = """\
uji.tool.add("branch", {
  description = "Name of the current git branch.",
  policy = "allow",
  run = function(_args, ctx)
    ctx.progress("looking")
    return "main"
  end,
})
uji.tool.policy({ run_command = { allow = { "git status" } } })
uji.notify(uji.model.current().model)
uji.fs.read("README.md", function(_text, _err) end)
uji.keymap.add("normal", "<C-o>", { command = "models" })
uji.on("turn_finished", function(_e) end, { priority = 10 })
uji.tool.remove(42)
uji.tool.add("x", { policy = "sometimes", run = function() end })
uji.nosuch()
"""


def language_server() -> str | None:
    """lua-language-server, or EmmyLua's emmylua_ls (which reads the same annotations and
    .luarc.json), from $UJI_LUA_LS or PATH."""
    import os
    import shutil

    return os.environ.get("UJI_LUA_LS") or shutil.which("lua-language-server") or shutil.which("emmylua_ls")


def test_a_language_server_checks_an_init_lua_against_the_definitions(tmp_path: Path) -> None:
    import pytest

    from tests.lsp_client import diagnostics

    server = language_server()
    if server is None:
        pytest.skip("no lua-language-server or emmylua_ls here (set UJI_LUA_LS to one)")
    (tmp_path / "init.lua").write_text(SAMPLE)
    library = str(Path(typegen.META_DIR))
    (tmp_path / ".luarc.json").write_text(
        json.dumps({"runtime.version": "LuaJIT", "workspace.library": [library]})
    )
    found = diagnostics(server, tmp_path, tmp_path / "init.lua")
    flagged = sorted({line for line, code, _ in found if code != "unused"})
    # The last three lines are wrong: a number for a name, an unknown policy, no such function.
    assert flagged == [14, 15, 16], found


def test_the_screens_view_names_are_the_declared_replaceable_views() -> None:
    """The Python sides' vocabularies of `uji.ui.<View>` (the pieces replaced.py draws, the
    panels panel_views.py draws) are together the views surface.py declares, which the
    test above holds to what ui.lua installs."""
    from typing import get_args

    from uji.tui.ito.replaced import ViewName
    from uji.tui.panel_views import PanelName

    pieces, panels = set(get_args(ViewName)), set(get_args(PanelName))
    assert not pieces & panels
    assert pieces | panels == {name for name, _, _ in surface.REPLACEABLE_VIEWS}
