"""The original's runtime helpers (docs.md §2 "Runtime"), each run through `uji run` with a
real Lua config: tasks and promises, processes, SQLite, sockets and streamed HTTP on
127.0.0.1, the text and encoding helpers, and the system values. A config writes what it
saw to a JSON file the test reads; failures show as notices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home

pytestmark = pytest.mark.timeout(120)  # each runs uji; a loaded machine is slow


def run_config(home: Home, lua: str) -> dict[str, Any]:
    """Runs `lua` (which fills the table `out`) as the config of one `uji run`."""
    out = home.root / "out.json"
    home.init(
        "local out = {}\n"
        # {nil, err} would encode as {"2": err}: `failed` gives [true, err] for it
        "local function failed(value, err) return uji.json.array({ value == nil, err }) end\n"
        + lua
        + f"\nlocal f = assert(io.open({json.dumps(str(out))}, 'w'))\nf:write(uji.json.encode(out))\nf:close()\n"
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert out.exists(), (run.notices, run.stderr)
    data: dict[str, Any] = json.loads(out.read_text())
    data["_notices"] = run.notices
    return data


def test_tasks_sleep_race_timeout_and_promises(home: Home) -> None:
    got = run_config(
        home,
        """
        local log = {}
        local p = uji.promise()
        out.settled_before = p.settled
        local t = uji.task.spawn(function(a, b)
          log[#log + 1] = "spawned " .. a .. b
          uji.sleep(0)
          p:resolve("x", 2)
        end, "a", "b")
        log[#log + 1] = "after spawn"      -- the task begins once this one waits
        out.awaited = { p:await() }
        out.settled_after = p.settled
        out.resolve_again = p:resolve("y")
        out.log = log
        -- race: the position of the first to finish and what it returned
        local slow_ran = false
        out.race = { uji.task.race(
          function() uji.sleep(math.huge) slow_ran = true end,
          function() uji.sleep(0.01) return "fast", 7 end) }
        out.slow_ran = slow_ran
        out.race_error = select(2, pcall(uji.task.race, function() error("boom", 0) end))
        out.timeout_ok = { uji.task.timeout(5, function() return "done" end) }
        out.timeout_late = { uji.task.timeout(0.05, function() uji.sleep(math.huge) end) }
        -- a cancelled task stops where it waits
        local stopped = true
        local long = uji.task.spawn(function() uji.sleep(math.huge) stopped = false end)
        uji.sleep(0)
        long:cancel()
        uji.sleep(0.02)
        out.cancelled_stayed = stopped
        out.sleep_bad = select(2, pcall(uji.sleep, "soon"))
        """,
    )
    assert got["settled_before"] is False and got["settled_after"] is True
    assert got["awaited"] == ["x", 2]
    assert got["resolve_again"] is False
    assert got["log"] == ["after spawn", "spawned ab"]
    assert got["race"] == [2, "fast", 7] and got["slow_ran"] is False
    assert got["race_error"] == "boom"
    assert got["timeout_ok"] == [True, "done"]
    assert got["timeout_late"] == [False]
    assert got["cancelled_stayed"] is True
    assert "uji.sleep expects a number of seconds" in got["sleep_bad"]


def test_waiting_outside_a_task_raises(home: Home) -> None:
    got = run_config(
        home,
        """
        local co = coroutine.create(function() return pcall(uji.sleep, 0) end)
        local _, ok, err = coroutine.resume(co)
        out.ok, out.err = ok, err
        """,
    )
    assert got["ok"] is False
    assert "call it inside a task" in got["err"]


def test_processes_lines_streams_input_and_exit(home: Home) -> None:
    got = run_config(
        home,
        """
        local p = assert(uji.proc.spawn({ "sh", "-c", "echo one; echo two >&2; read x; echo got $x; exit 3" }))
        out.pid = type(p.pid)
        p:write("hello\\n")
        p:close()
        local lines = {}
        for line, stream in p:lines() do lines[#lines + 1] = stream .. ":" .. line end
        table.sort(lines)
        out.lines = lines
        out.status = p:wait()
        local q = assert(uji.proc.spawn({ "sh", "-c", "echo $UJI_T; pwd" }, { env = { UJI_T = "set" }, cwd = "/" }))
        out.env = { q:line(), (q:line()) }
        local k = assert(uji.proc.spawn({ "sleep", "30" }))
        k:kill()
        out.killed = k:wait()
        out.missing = failed(uji.proc.spawn({ "/no/such/program" }))
        """,
    )
    assert got["pid"] == "number"
    assert got["lines"] == ["stderr:two", "stdout:got hello", "stdout:one"]
    assert got["status"] == {"code": 3, "success": False}
    assert got["env"] == ["set", "/"]
    assert got["killed"]["success"] is False and got["killed"]["signal"] == "SIGKILL"
    assert got["missing"][0] is True and "/no/such/program" in got["missing"][1]


def test_a_process_nobody_references_is_killed_when_lua_collects_its_handle(home: Home) -> None:
    got = run_config(
        home,
        """
        -- Running: a /proc entry that is not a zombie (killed, not yet reaped).
        local function running(pid)
          local f = io.open("/proc/" .. pid .. "/stat")
          if f == nil then return false end
          local stat = f:read("*a")
          f:close()
          return stat:match("^%d+ %b() Z") == nil
        end
        local function start() return assert(uji.proc.spawn({ "sleep", "300" })).pid end
        local dropped = start()                    -- its handle is garbage once start returns
        local kept = assert(uji.proc.spawn({ "sleep", "300" }))
        out.before = running(dropped)
        collectgarbage()
        collectgarbage()
        local polls = 0
        while running(dropped) and polls < 2000 do uji.sleep(0.01) polls = polls + 1 end
        out.dropped_running = running(dropped)
        out.kept_running = running(kept.pid)       -- still referenced: left alone
        kept:kill()
        out.kept_status = kept:wait().signal
        """,
    )
    assert got["before"] is True
    assert got["dropped_running"] is False
    assert got["kept_running"] is True
    assert got["kept_status"] == "SIGKILL"


def test_sqlite_exec_query_transactions_and_null(home: Home) -> None:
    db = home.root / "plugin.db"
    got = run_config(
        home,
        f"""
        local db = assert(uji.db.open({json.dumps(str(db))}))
        out.created = db:exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, note TEXT); CREATE INDEX i ON t(name)")
        out.inserted = db:exec("INSERT INTO t (name, note) VALUES (?, ?), (?, ?)", {{ "a", "x", "b", uji.db.null }})
        out.named = db:query("SELECT name FROM t WHERE name = :n", {{ n = "b" }})
        local rows = db:query("SELECT name, note FROM t ORDER BY id")
        out.null_is_sentinel = rows[2].note == uji.db.null
        out.first = rows[1]
        local ok, err = pcall(db.transaction, db, function(d)
          d:exec("INSERT INTO t (name) VALUES ('c')")
          error("no", 0)
        end)
        out.rolled_back = {{ ok, err, #db:query("SELECT * FROM t") }}
        db:transaction(function(d) d:exec("INSERT INTO t (name) VALUES ('d')") end)
        out.committed = #db:query("SELECT * FROM t")
        out.bad_sql = select(2, pcall(db.exec, db, "SELEC nonsense"))
        db:close()
        """,
    )
    assert got["created"] == 0 and got["inserted"] == 2
    assert got["named"] == [{"name": "b"}]
    assert got["null_is_sentinel"] is True
    assert got["first"] == {"name": "a", "note": "x"}
    assert got["rolled_back"] == [False, "no", 2]
    assert got["committed"] == 3
    assert "sql:" in got["bad_sql"] and "syntax error" in got["bad_sql"]
    import sqlite3

    assert sqlite3.connect(db).execute("SELECT count(*) FROM t").fetchone() == (3,)


def test_a_socket_server_and_a_streamed_response(home: Home) -> None:
    got = run_config(
        home,
        """
        local server = assert(uji.net.listen(0))
        out.port = server.port > 0
        uji.task.spawn(function()
          local conn = server:accept()
          local request = conn:line()
          repeat local header = conn:line() until header == "" or header == nil
          conn:write("HTTP/1.1 200 OK\\r\\nContent-Type: text/plain\\r\\nX-Seen: " .. request:sub(1, 3) .. "\\r\\nConnection: close\\r\\n\\r\\nfirst\\nsecond\\nthird")
          conn:close()
        end)
        local r = assert(uji.net.open({ url = "http://127.0.0.1:" .. server.port .. "/x" }))
        out.status, out.seen = r.status, r.headers["x-seen"]
        out.line = r:line()
        out.rest = r:read()
        out.eof = r:line()
        server:close()
        """,
    )
    assert got["port"] is True
    assert got["status"] == 200 and got["seen"] == "GET"
    assert got["line"] == "first"
    assert got["rest"] == "second\nthird"
    assert "eof" not in got  # nil at the end


def test_text_helpers(home: Home) -> None:
    got = run_config(
        home,
        """
        local re = assert(uji.regex("b+c"))
        out.re = { re:test("aabbc"), re:find("aabbc") }
        out.re_none = re:find("xyz") == nil
        out.re_bad = failed(uji.regex("("))
        local g = assert(uji.glob("src/*.rs"))
        out.glob = { g:test("src/main.rs"), g:test("src/a/b.rs"), uji.glob("src/*.rs", { separator = true }):test("src/a/b.rs"), uji.glob("**/*.lua", { separator = true }):test("a/b/c.lua") }
        out.fuzzy = uji.fuzzy("mn", { "xyz", "main.rs", "mod/name.lua", "m_n" })
        out.fuzzy_all = uji.fuzzy("", { "b", "a" })
        out.width = { uji.width("abc"), uji.width("日本"), uji.width("e\\204\\129") }
        out.lossy = uji.lossy("a\\255b")
        local events = uji.markdown("# Title\\n\\nSome *em* and `code` and $x^2$.\\n\\n$$y$$\\n\\n- [x] done\\n\\n---\\n")
        local kinds = {}
        for _, e in ipairs(events) do kinds[#kinds + 1] = e[1] .. (type(e[2]) == "string" and (":" .. e[2]) or "") end
        out.md = kinds
        out.md_first = events[1]
        local math_events = {}
        for _, e in ipairs(events) do if e[1] == "math" then math_events[#math_events + 1] = { e[2], e[3] } end end
        out.math = math_events
        """,
    )
    assert got["re"] == [True, 3, 5]
    assert got["re_none"] is True
    assert got["re_bad"][0] is True and "invalid regex" in got["re_bad"][1]
    assert got["glob"] == [True, True, False, True]
    assert got["fuzzy"] == [4, 2, 3]
    assert got["fuzzy_all"] == [1, 2]
    assert got["width"] == [3, 4, 1]
    assert got["lossy"] == "a\ufffdb"
    assert got["md"][:3] == ["start:h1", "text:Title", "end:h1"]
    assert got["md_first"][-2:] == [1, 8]  # byte positions of its line
    assert {"code:code", "start:em", "rule", "task"} <= set(got["md"])
    assert got["math"] == [["x^2", False], ["y", True]]


def test_encodings_hashes_and_random(home: Home) -> None:
    got = run_config(
        home,
        """
        out.b64 = uji.base64.encode("hello\\255")
        out.b64_url = uji.base64.encode("\\251\\255", { url = true, pad = false })
        out.round = uji.base64.decode(uji.base64.encode("\\0\\1\\2\\255")) == "\\0\\1\\2\\255"
        out.b64_bad = failed(uji.base64.decode("!!!"))
        local digest = uji.sha256("abc")
        out.sha_len = #digest
        out.sha_hex = (digest:gsub(".", function(c) return string.format("%02x", c:byte()) end))
        out.random = { #uji.random(16), uji.random(16) ~= uji.random(16) }
        local text = uji.toml.encode({ name = "x", n = 3, list = { 1, 2 }, sub = { on = true } })
        out.toml_back = uji.toml.decode(text)
        out.toml_bad = select(2, pcall(uji.toml.decode, "= nope"))
        """,
    )
    assert got["b64"] == "aGVsbG//"
    assert got["b64_url"] == "-_8"
    assert got["round"] is True
    assert got["b64_bad"][0] is True
    assert got["sha_len"] == 32
    assert got["sha_hex"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert got["random"] == [16, True]
    assert got["toml_back"] == {"name": "x", "n": 3, "list": [1, 2], "sub": {"on": True}}
    assert "invalid TOML" in got["toml_bad"]


def test_class_message_diff_and_system(home: Home) -> None:
    (home.config / "lua" / "uji" / "themes" / "dark").mkdir(parents=True)
    (home.config / "lua" / "uji" / "themes" / "dark" / "init.lua").write_text("return {}")
    (home.config / "lua" / "uji" / "themes" / "mine.lua").write_text("return {}")
    got = run_config(
        home,
        """
        local Animal = uji.class()
        function Animal:init(name) self.name = name end
        function Animal:speak() return self.name .. " makes a sound" end
        local Dog = uji.class(Animal)
        function Dog:speak() return Animal.speak(self) .. ", woof" end
        out.class = Dog("rex"):speak()
        out.message = uji.message(select(2, pcall(error, "plain failure\\nstack traceback:\\n\\tsomewhere", 0)))
        local d = uji.diff("a\\nb\\nc\\n", "a\\nB\\nc\\n", "x.txt")
        out.diff_path = d.path
        out.diff = d.changes[1]
        out.diff_bad = select(2, pcall(uji.diff, 1, "x"))
        out.platform = uji.os.platform
        out.argv1 = type(uji.os.argv[1])
        out.env = { uji.os.env("HOME") ~= nil, uji.os.env("UJI_SURELY_UNSET") }
        out.now = uji.os.now() > 1.6e12
        out.clock = uji.os.clock() >= 0
        out.home = uji.os.home()
        out.expand = uji.os.expand("~/x")
        out.roots = uji.os.roots
        out.modules = uji.modules("uji.themes")
        out.library = uji.os.library
        """,
    )
    assert got["class"] == "rex makes a sound, woof"
    assert got["message"] == "plain failure"
    assert got["diff_path"] == "x.txt"
    assert [(r["kind"], r.get("old"), r.get("new")) for r in got["diff"]] == [
        ("context", 1, 1),
        ("removed", 2, None),
        ("added", None, 2),
        ("context", 3, 3),
    ]
    assert got["diff"][2]["parts"] == [{"text": "B", "changed": True}]
    assert "old must be a string" in got["diff_bad"]
    assert got["platform"] == "linux" and got["argv1"] == "string" and got["library"] == "so"
    assert got["env"] == [True]
    assert got["now"] is True and got["clock"] is True
    assert got["home"] == str(home.home) and got["expand"] == f"{home.home}/x"
    assert got["roots"][0] == str(home.config)
    # The config's themes beside the seven uji ships.
    shipped = ["default", "dracula", "gruvbox", "light", "nord", "solarized", "tokyonight"]
    assert got["modules"] == sorted(f"uji.themes.{n}" for n in ["dark", "mine", *shipped])


def test_image_fit_scales_the_long_edge(home: Home, tmp_path: Path) -> None:
    from PIL import Image

    png = tmp_path / "big.png"
    Image.new("RGB", (400, 200), (200, 10, 10)).save(png)
    got = run_config(
        home,
        f"""
        local f = assert(io.open({json.dumps(str(png))}, "rb"))
        local data = f:read("*a")
        f:close()
        local img = assert(uji.image.fit(data, 100, 1000000))
        out.fit = {{ img.media_type, img.width, img.height, #img.data > 0 }}
        out.bad = failed(uji.image.fit("not an image", 100, 1000))
        """,
    )
    assert got["fit"] == ["image/png", 100, 50, True]
    assert got["bad"][0] is True and "not a png" in got["bad"][1]
