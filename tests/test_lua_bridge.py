"""The Lua bridge in-process: values crossing both ways, errors with positions, the
callback-or-wait convention, uji.json, uji.schedule/defer/notify."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from tests.waiting import until_async
from uji.app import App
from uji.lua.runtime import LuaError, LuaInterrupt
from uji.paths import resolve


@pytest.fixture
def app(tmp_path: Path) -> App:
    notices: list[str] = []
    a = App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path), notice=notices.append)
    a.notices = notices  # type: ignore[attr-defined]
    return a


async def lua(app: App, source: str) -> tuple:
    rt = app.lua
    return await rt.call(rt.load_source(source, "/cfg/test.lua"))


def py(app: App, value: object) -> object:
    return app.lua.convert.to_python(value)


async def test_runs_on_luajit_with_the_jit_off(app: App) -> None:
    (version, jit_on) = await lua(app, "return jit.version, (jit.status())")
    assert version.startswith("LuaJIT 2.1")
    assert jit_on is False


async def test_tables_become_lists_and_dicts(app: App) -> None:
    (value,) = await lua(
        app, "return { list = {1, 2, 3}, map = { a = 1 }, empty = {}, arr = uji.json.array({}) }"
    )
    assert py(app, value) == {"list": [1, 2, 3], "map": {"a": 1}, "empty": {}, "arr": []}


async def test_sparse_and_mixed_tables_become_objects(app: App) -> None:
    (value,) = await lua(app, "return { sparse = { [1] = 'a', [3] = 'c' }, mixed = { 1, 2, x = 3 } }")
    assert py(app, value) == {"sparse": {"1": "a", "3": "c"}, "mixed": {"1": 1, "2": 2, "x": 3}}


async def test_integers_and_floats(app: App) -> None:
    (i, f, big) = await lua(app, "return 3, 3.5, 2^40")
    assert (i, f, big) == (3, 3.5, 2**40) and isinstance(i, int) and isinstance(big, int)


async def test_json_null_crosses_as_none_and_back(app: App) -> None:
    (value, is_null) = await lua(
        app, 'local t = uji.json.decode(\'{"a":null,"b":[1,null]}\'); return t, t.a == uji.json.null'
    )
    assert is_null is True
    assert py(app, value) == {"a": None, "b": [1, None]}


async def test_non_utf8_strings_become_replacement_characters(app: App) -> None:
    (value,) = await lua(app, "return { s = 'ok\\255\\254end', good = 'h\\195\\169' }")
    assert py(app, value) == {"s": "ok\ufffd\ufffdend", "good": "hé"}


async def test_python_values_reach_lua_with_arrays_marked(app: App) -> None:
    rt = app.lua
    fn = rt.lua.eval("function(t) return uji.json.encode(t), #t.list, t.none == uji.json.null end")
    encoded, n, none_is_null = fn(rt.convert.to_lua({"list": [1, "x"], "empty": [], "obj": {}, "none": None}))
    assert n == 2 and none_is_null is True
    assert encoded.count('"empty":[]') == 1 and '"obj":{}' in encoded


async def test_json_encode_rules(app: App) -> None:
    (a, b, c) = await lua(
        app,
        "return uji.json.encode({}), uji.json.encode(uji.json.array({})), uji.json.encode({ x = uji.json.null, n = 1.5, s = 'é' })",
    )
    assert a == "{}" and b == "[]"
    assert json.loads(c) == {"x": None, "n": 1.5, "s": "é"}


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("uji.json.encode({ f = function() end })", "cannot encode a function"),
        ("local t = {}; t.self = t; uji.json.encode(t)", "contains itself"),
        ("uji.json.decode('{bad')", "invalid JSON"),
    ],
)
async def test_json_errors_point_at_the_callers_line(app: App, expr: str, message: str) -> None:
    with pytest.raises(LuaError) as err:
        await lua(app, "\n\n" + expr)
    assert "/cfg/test.lua:3:" in str(err.value)
    assert message in str(err.value)


async def test_decode_without_nulls_drops_keys(app: App) -> None:
    (value,) = await lua(app, 'return uji.json.decode(\'{"a":null,"b":2}\', { nulls = false })')
    assert py(app, value) == {"b": 2}


async def test_lua_errors_carry_file_and_line(app: App) -> None:
    with pytest.raises(LuaError, match=r"^/cfg/test.lua:2: boom$"):
        await lua(app, "local x = 1\nerror('boom')")


async def test_error_with_a_table_is_described(app: App) -> None:
    with pytest.raises(LuaError, match="custom message"):
        await lua(app, "error({ message = 'custom message' })")
    with pytest.raises(LuaError, match="error object"):
        await lua(app, "error({ code = 1 })")


async def test_syntax_errors_carry_file_and_line(app: App) -> None:
    with pytest.raises(LuaError, match=r"/cfg/test.lua:2:"):
        app.lua.load_source("local x = 1\nlocal = 2", "/cfg/test.lua")


async def test_python_is_not_reachable(app: App) -> None:
    (kind,) = await lua(app, "return type(python)")
    assert kind == "nil"
    # Even a host function dug out through the debug library gives nothing away.
    source = """
    local i, host = 1, nil
    while true do
      local name, value = debug.getupvalue(uji.tool.remove, i)
      if name == nil then break end
      if name == "host" then host = value end
      i = i + 1
    end
    return host.tool_remove.__globals__
    """
    with pytest.raises(LuaError, match="opaque"):
        await lua(app, source)


async def test_notify_and_print_become_notices(app: App) -> None:
    await lua(app, "uji.notify('hello'); print('a', 1, nil)")
    assert app.notices == ["hello", "a\t1\tnil"]  # type: ignore[attr-defined]


async def test_defer_runs_later_and_can_be_cancelled(app: App) -> None:
    # The cancelled one is due first: by the time the other has run, it would have too.
    await lua(
        app,
        "local c = uji.defer(0.01, function() uji.notify('never') end); c(); uji.defer(0.05, function() uji.notify('later') end)",
    )
    await until_async(lambda: app.notices, what="the deferred function")  # type: ignore[attr-defined]
    assert app.notices == ["later"]  # type: ignore[attr-defined]


async def test_schedule_during_config_runs_after_all_files(app: App, tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    (cfg / "plugin").mkdir(parents=True)
    (cfg / "init.lua").write_text(
        "uji.schedule(function() uji.notify('scheduled') end)\nuji.notify('init')\n"
    )
    (cfg / "plugin" / "a.lua").write_text("uji.notify('plugin a')\n")
    await app.load_config()
    await until_async(lambda: "scheduled" in app.notices, what="the scheduled function")  # type: ignore[attr-defined]
    assert app.notices == ["init", "plugin a", "scheduled"]  # type: ignore[attr-defined]


def _break_when_lua_runs(app: App) -> threading.Thread:
    """What the terminal's input thread does on Esc: ask the running Lua to stop."""
    rt = app.lua

    def wait_then_break() -> None:
        for _ in range(2000):  # 20 s at most
            if rt.running and rt.request_break():
                return
            time.sleep(0.01)

    thread = threading.Thread(target=wait_then_break, daemon=True)
    thread.start()
    return thread


async def test_interrupt_stops_a_pure_lua_loop(app: App) -> None:
    assert app.lua.request_break() is False  # nothing runs: nothing to stop, nothing lingers
    _break_when_lua_runs(app).join(0)
    with pytest.raises(LuaInterrupt):
        await lua(app, "while true do end")
    assert await lua(app, "local n = 0 for i = 1, 3000000 do n = n + 1 end return n") == (3000000,)


async def test_a_pcall_cannot_swallow_an_interrupt(app: App) -> None:
    _break_when_lua_runs(app)
    with pytest.raises(LuaInterrupt):
        await lua(app, "for i = 1, 3 do pcall(function() while true do end end) end return 'swallowed'")


def test_lua_values_kept_by_python_outlive_their_coroutine(tmp_path: Path) -> None:
    """lupa ties a value to the coroutine that handed it over; freeing it after Lua
    collected that coroutine used to crash the process. Run it in a child process so a
    crash fails this test instead of killing the run."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        f"""
        import asyncio, gc
        from uji.app import App
        from uji.paths import resolve

        async def main():
            app = App(resolve({str(tmp_path / "c")!r}, {str(tmp_path / "d")!r}), cwd={str(tmp_path)!r})
            rt = app.lua
            src = 'uji.defer(0.01, function() DEFERRED = true end); uji.on("x", function() end); ' \\
                  'uji.tool.add("t", {{ run = function() end, subject = function() return "s" end }})'
            await rt.call(rt.load_source(src, "t"))
            rt.lua.execute("collectgarbage(); collectgarbage()")
            for _ in range(3000):  # until the deferred function has run (30 s at most)
                if rt.lua.eval("DEFERRED"):
                    break
                await asyncio.sleep(0.01)
            else:
                raise SystemExit("the deferred function never ran")
            app.events._handlers.clear()
            app.gate.registry.remove("t")
            gc.collect()
            rt.lua.execute("collectgarbage(); collectgarbage()")
            print("survived")

        asyncio.run(main())
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "survived", out.stderr


def test_every_host_function_the_lua_tree_calls_is_found_by_its_prefix(app: App) -> None:
    # The host functions are installed a namespace at a time, when Lua first asks for a
    # name (uji.lua.host.HostApi); the namespace is found by the name's prefix. Each
    # `host.NAME` of uji's Lua tree is installed by exactly one namespace, which lists
    # its prefix (a missing prefix would still find it, after installing the others).
    import re

    from uji.lua.host import HostApi
    from uji.lua.runtime import RUNTIME_DIR

    api = app._install_api()
    assert isinstance(api, HostApi)
    called = set()
    for lua_file in Path(RUNTIME_DIR).rglob("*.lua"):
        called |= set(re.findall(r"\bhost\.([a-z][a-z0-9_]*)", lua_file.read_text()))
    called -= {"check_interrupt", "errtext", "settle", "cancel"}  # the runtime's own
    assert len(called) > 150
    assert api("no_such_function") is None  # every namespace is installed by now
    assert api.waiting() == []
    assert sorted(called - set(api.owner)) == []
    assert sorted(n for n in called if n.split("_", 1)[0] not in api.owner[n].prefixes) == []
    installed = [n for ns in app_namespaces(app) for n in ns]
    assert len(installed) == len(set(installed)), "a name installed by two namespaces"


def app_namespaces(app: App) -> list[list[str]]:
    """Each namespace's names, installed one by one."""
    return [
        list(ns.install(__import__(f"uji.lua.api.{ns.module}", fromlist=["install"])))
        for ns in app._install_api()._waiting
    ]
