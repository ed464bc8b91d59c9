"""`uji run` as a user scripts it: flags, output, exit codes, config loading, the loop's
failure handling, sessions on disk — all through the real command."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROVIDER_LUA, Home, tool_schemas, unmeasured
from tests.fakes.openai_server import drip, drop_after, raw_lines, status, text, tool_call


def test_version_and_help_load_neither_lua_nor_http() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from uji.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    main(['--version']); main(['--help'])\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('lupa', 'httpx2', 'httpcore2', 'textual', 'sqlite3')]\n"
        "print(out.getvalue().splitlines()[0]); print(bad)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=unmeasured()
    ).stdout
    first, bad = out.splitlines()
    assert first.startswith("uji 0.")
    assert bad == "[]"


def test_help_lists_the_commands() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "uji", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for word in ("run PROMPT", "resume", "list", "delete", "--config-dir", "--data-dir", "--db"):
        assert word in out


def test_plain_mode_prints_the_answer(home: Home) -> None:
    home.init("")
    home.fake.script(text("The answer is 42."))
    run = home.uji("run", "what", "is", "it?")
    assert run.rc == 0 and run.stdout == "The answer is 42.\n"
    body = home.fake.turn_requests[0].body
    assert body["messages"][-1] == {"role": "user", "content": "what is it?"}


def test_an_answer_of_many_deltas_arrives_whole_and_in_order(home: Home) -> None:
    home.init("")
    answer = "".join(f"{i} " for i in range(6000)) + "end"
    home.fake.script(text(answer, piece=2))  # 12,000 deltas, most of them many to a read
    plain = home.uji("run", "count")
    assert plain.rc == 0 and plain.stdout == answer + "\n"
    home.fake.script(text(answer, piece=2))
    run = home.run("count")
    assert run.rc == 0 and run.done["text"] == answer
    assistant = [e["message"]["text"] for e in run.of("message") if e["message"]["type"] == "assistant"]
    assert assistant == [answer]
    assert not [e for e in run.events if e["type"] not in ("session", "message", "done")]


def test_bad_usage_exits_2(home: Home) -> None:
    home.init("")
    assert home.uji("run").rc == 2
    assert home.uji("run", "--effort", "huge", "x").rc == 2
    run = home.uji("run", "--model", "nope/x", "hi")
    assert run.rc == 2 and "unknown provider 'nope'" in run.stderr
    assert home.uji("run", "--model", "noslash", "hi").rc == 2


def test_session_event_is_a_real_row_and_every_message_is_saved(home: Home) -> None:
    (home.work / "a.txt").write_text("hello\n")
    home.init("")
    home.fake.script(tool_call("read_file", {"path": "a.txt"}), text("it says hello"))
    run = home.run("read a.txt", "--title", "Reading")
    assert run.rc == 0
    con = sqlite3.connect(home.db)
    row = con.execute(
        "SELECT title, directory, parent FROM sessions WHERE id = ?", (run.session_id,)
    ).fetchone()
    assert row == ("Reading", str(home.work), None)
    saved = home.db_messages(run.session_id)
    assert [m["type"] for m in saved] == ["user", "assistant", "tool", "assistant"]
    assert saved == [{k: v for k, v in m.items() if k != "seq"} for m in run.messages]
    assert run.done["text"] == "it says hello"
    assert run.done["usage"] == {"input": 24, "output": 6, "cache_read": 0, "cache_write": 0}


def test_title_defaults_to_the_prompts_first_line_and_parent_links(home: Home) -> None:
    home.init("")
    home.fake.script(text("a"), text("b"))
    first = home.run("  \nfirst line here\nsecond")
    child = home.run("child", "--parent", first.session_id)
    con = sqlite3.connect(home.db)
    assert con.execute("SELECT title FROM sessions WHERE id=?", (first.session_id,)).fetchone() == (
        "first line here",
    )
    assert con.execute("SELECT parent FROM sessions WHERE id=?", (child.session_id,)).fetchone() == (
        first.session_id,
    )
    assert home.run("x", "--parent", "00000000-0000-0000-0000-000000000000").rc == 2


def test_directories_from_flags_and_variables(home: Home, tmp_path) -> None:
    home.fake.script(text("a"), text("b"), text("c"))
    lua = f"""
    uji.provider.add({{ id = "test", name = "T", wire = "openai-chat", base_url = "{home.fake.base_url}", models = {{ "m" }} }})
    uji.model.use({{ provider = "test", model = "m" }})
    uji.notify("loaded")
    """
    cfg, data, db = tmp_path / "c", tmp_path / "d", tmp_path / "x.db"
    cfg.mkdir()
    (cfg / "init.lua").write_text(lua)
    run = home.uji("--config-dir", str(cfg), "--data-dir", str(data), "run", "--json", "hi")
    assert run.rc == 0 and "loaded" in run.notices and (data / "uji.db").exists()
    run = home.uji("--config-dir", str(cfg), "--db", str(db), "run", "--json", "hi")
    assert run.rc == 0 and db.exists()
    xdg = tmp_path / "xdg"
    (xdg / "uji").mkdir(parents=True)
    (xdg / "uji" / "init.lua").write_text(lua)
    run = home.uji(
        "run", "--json", "hi", env={"XDG_CONFIG_HOME": str(xdg), "UJI_DATA_DIR": str(tmp_path / "ud")}
    )
    assert run.rc == 0 and "loaded" in run.notices and (tmp_path / "ud" / "uji.db").exists()


def test_tools_flag_limits_what_is_offered(home: Home) -> None:
    home.init("")
    home.fake.script(tool_call("write_file", {"path": "f", "content": "x"}), text("ok"))
    run = home.run("go", "--tools", "read_file,run_command")
    assert sorted(tool_schemas(home.fake.turn_requests[0].body)) == ["read_file", "run_command"]
    assert run.tool_results()[0]["content"].startswith("error: unknown tool `write_file`")
    assert not (home.work / "f").exists()


def test_append_prompt_reaches_the_system_prompt(home: Home) -> None:
    home.init('uji.on("before_turn", function(e) return e.system .. "\\nFROM HOOK" end)')
    home.fake.script(text("ok"))
    home.run("go", "--append-prompt", "Answer in French.")
    system = home.fake.turn_requests[0].body["messages"][0]
    assert system["role"] == "system"
    assert system["content"].endswith("FROM HOOK\n\nAnswer in French.")
    assert str(home.work) in system["content"]


def test_model_flag_overrides_the_config(home: Home) -> None:
    home.init(
        'uji.provider.add({ id = "other", name = "O", wire = "openai-chat", base_url = "http://127.0.0.1:9", models = { "z" } })'
    )
    home.fake.script(text("ok"))
    run = home.run("go", "--model", "test/other-model")
    assert run.rc == 0 and home.fake.turn_requests[0].body["model"] == "other-model"


def test_the_chosen_model_is_saved_and_restored(home: Home) -> None:
    home.init("")
    home.fake.script(text("a"), text("b"))
    home.run("go", check=True)
    # A config without uji.model.use still has a provider defined, and the saved choice.
    home.init(
        f'uji.provider.add({{ id = "test", name = "T", wire = "openai-chat", base_url = "{home.fake.base_url}", models = {{ "m" }} }})',
        provider=False,
    )
    run = home.run("again")
    assert run.rc == 0, run.stderr
    assert home.fake.turn_requests[-1].body["model"] == "m"


def test_no_model_chosen_is_one_clear_line(home: Home) -> None:
    home.init("", provider=False)
    run = home.uji("run", "hi")
    assert run.rc == 1
    assert run.stderr.strip().splitlines()[-1].startswith("uji: error: no model chosen")


def test_a_missing_key_names_the_variable(home: Home) -> None:
    home.init('uji.model.use({ provider = "openai", model = "gpt-5" })', provider=False)
    run = home.uji("run", "hi")
    assert run.rc == 1
    assert "OPENAI_API_KEY" in run.stderr.strip().splitlines()[-1]


# Config loading.


def test_a_syntax_error_is_reported_with_file_and_line_and_uji_still_runs(home: Home) -> None:
    home.init("uji.notify('fine')\nlocal = broken\n", provider=False)
    home.plugin("a.lua", PROVIDER_LUA.format(base_url=home.fake.base_url) + "uji.notify('plugin ran')")
    home.fake.script(text("still works"))
    run = home.run("hi")
    assert run.rc == 0 and run.done["text"] == "still works"
    (err,) = [n for n in run.notices if "config error" in n]
    assert f"{home.config / 'init.lua'}:{home.line_of('local = broken')}:" in err
    assert "plugin ran" in run.notices
    assert "fine" not in run.notices  # a file that does not compile runs nothing


def test_a_runtime_error_keeps_what_loaded_before_it(home: Home) -> None:
    home.init(
        """
        uji.tool.add("kept", { policy = "allow", run = function() return "kept" end })
        local x = nil
        x.field = 1
        uji.tool.add("lost", { run = function() end })
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.rc == 0
    (err,) = [n for n in run.notices if "config error" in n]
    assert f"init.lua:{home.line_of('x.field = 1')}:" in err and "attempt to index" in err
    tools = tool_schemas(home.fake.turn_requests[0].body)
    assert "kept" in tools and "lost" not in tools


def test_plugins_run_in_name_order_after_init_and_lua_dir_is_on_require_path(home: Home) -> None:
    (home.config / "lua").mkdir()
    (home.config / "lua" / "helper.lua").write_text("return { greet = function() return 'from lua/' end }")
    home.init('uji.notify("init")\nrequire("uji.builtin.defaults")')
    home.plugin("b.lua", "uji.notify('b')")
    home.plugin("a.lua", "uji.notify(require('helper').greet())")
    home.plugin("c.txt", "this is not lua")
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.notices == ["init", "from lua/", "b"]


def test_an_error_in_a_plugin_names_the_plugin_and_the_rest_load(home: Home) -> None:
    home.init("")
    home.plugin("1-bad.lua", "\n\nerror('plugin failed')")
    home.plugin("2-good.lua", "uji.notify('good')")
    home.fake.script(text("ok"))
    run = home.run("hi")
    (err,) = [n for n in run.notices if "config error" in n]
    assert f"{home.config / 'plugin' / '1-bad.lua'}:3: plugin failed" in err
    assert "good" in run.notices


def test_a_project_never_runs_lua(home: Home) -> None:
    marker = home.root / "project-ran"
    project_lua = f"uji.notify('project code ran'); io.open('{marker}', 'w'):close()"
    (home.work / "init.lua").write_text(project_lua)
    (home.work / ".uji" / "plugin").mkdir(parents=True)
    (home.work / ".uji" / "init.lua").write_text(project_lua)
    (home.work / ".uji" / "plugin" / "p.lua").write_text(project_lua)
    (home.work / "plugin").mkdir()
    (home.work / "plugin" / "p.lua").write_text(project_lua)
    home.init("uji.notify('user config ran')")
    home.plugin("mine.lua", "uji.notify('user plugin ran')")
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.rc == 0 and run.done["text"] == "ok", run.stderr
    assert "user config ran" in run.notices and "user plugin ran" in run.notices
    assert "project code ran" not in run.notices
    assert not marker.exists()


def test_plain_mode_notices_go_to_stderr(home: Home) -> None:
    home.init("uji.notify('hello')")
    home.fake.script(text("answer"))
    run = home.uji("run", "hi")
    assert run.stdout == "answer\n" and "uji: hello" in run.stderr


# The loop: retries, failures, stalls, the iteration cap.


def test_5xx_and_429_are_retried_with_a_notice(home: Home) -> None:
    home.init("")
    home.fake.script(
        status(503, {"error": {"message": "busy"}}, {"retry-after": "0"}),
        status(429, {"error": {"message": "slow down"}}, {"retry-after": "1"}),
        text("finally"),
    )
    run = home.run("hi")
    assert run.rc == 0 and run.done["text"] == "finally"
    retries = [n for n in run.notices if n.startswith("request failed")]
    assert len(retries) == 2
    assert retries[0].startswith("request failed (http: 503") and retries[0].endswith("retrying in 0s (1/5)")
    assert "retrying in 1s (2/5)" in retries[1]
    assert len(home.fake.turn_requests) == 3


def test_a_500_without_retry_after_backs_off(home: Home) -> None:
    home.init("")
    home.fake.script(status(500, "oops"), text("ok"))
    run = home.run("hi")
    assert run.rc == 0
    (notice,) = [n for n in run.notices if n.startswith("request failed")]
    seconds = int(notice.split("retrying in ")[1].split("s")[0])
    assert 1 <= seconds <= 3  # 2 s × jitter in [0.75, 1.25]


def test_401_fails_at_once(home: Home) -> None:
    home.init("")
    home.fake.script(status(401, {"error": {"message": "bad key"}}), text("never"))
    run = home.run("hi")
    assert run.rc == 1
    assert run.done["error"] == "authentication rejected (401) - check the api key for this provider"
    assert len(home.fake.turn_requests) == 1
    saved = home.db_messages(run.session_id)
    assert saved[-1] == {"type": "error", "text": run.done["error"]}


def test_giving_up_after_five_retries(home: Home) -> None:
    home.init("")
    home.fake.script(*[status(502, "bad gateway", {"retry-after": "0"}) for _ in range(6)])
    run = home.run("hi")
    assert run.rc == 1 and run.done["error"].startswith("http: 502")
    assert len(home.fake.turn_requests) == 6
    assert len([n for n in run.notices if n.startswith("request failed")]) == 5


def test_a_dropped_stream_is_retried_without_duplicating_text(home: Home) -> None:
    home.init("")
    home.fake.script(
        drop_after(5, text("Hello world, this is long", piece=2)), text("Hello world, this is long")
    )
    run = home.run("hi")
    assert run.rc == 0 and run.done["text"] == "Hello world, this is long"
    assistants = [m for m in home.db_messages(run.session_id) if m["type"] == "assistant"]
    assert assistants == [{"type": "assistant", "text": "Hello world, this is long"}]


def test_garbage_lines_are_skipped(home: Home) -> None:
    home.init("")
    chunk = '{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}]}'
    home.fake.script(
        raw_lines(
            [
                "data: not json",
                "",
                ": comment",
                "",
                "event: ping",
                "",
                f"data: {chunk}",
                "",
                'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
                "",
                "data: [DONE]",
                "",
            ]
        )
    )
    run = home.run("hi")
    assert run.rc == 0 and run.done["text"] == "ok"


def test_a_stalled_stream_fails_and_is_retried(home: Home) -> None:
    home.init(
        f'uji.provider.add({{ id = "test", name = "T", wire = "openai-chat", base_url = "{home.fake.base_url}", '
        'models = { "m" }, idle = 1 })\nuji.model.use({ provider = "test", model = "m" })',
        provider=False,
    )
    home.fake.script(drip(0.2), text("after the stall"))
    run = home.run("hi")
    assert run.rc == 0 and run.done["text"] == "after the stall"
    (notice,) = [n for n in run.notices if n.startswith("request failed")]
    assert "stalled" in notice
    assert home.fake.wait_for_drops(1)


def test_blank_call_ids_are_filled(home: Home) -> None:
    home.init("")
    home.fake.script(tool_call("read_file", {"path": "x"}, id=None), text("ok"))
    run = home.run("hi")
    call_id = run.messages[1]["tool_calls"][0]["id"]
    assert call_id.startswith("call_") and len(call_id) == 21
    assert run.tool_results()[0]["tool_call_id"] == call_id


# Lua wires.


def test_a_lua_wire_answers_a_turn(home: Home) -> None:
    home.init(
        """
        uji.wire.add("echo", { stream = function(request, reply)
          local last = request.messages[#request.messages]
          if last.type == "user" then
            reply.done({ text = "", tool_calls = { { id = "c1", name = "read_file", arguments = '{"path":"nope"}' } },
                         usage = { input = 1, output = 1 } })
          else
            reply.text("echo: ")
            reply.done({ text = "echo: " .. request.model .. " " .. #request.tools .. " " .. last.content:sub(1, 11),
                         usage = { input = 3, output = 2 } })
          end
        end })
        uji.provider.add({ id = "mine", name = "Mine", wire = "echo", base_url = "local", models = { "e1" } })
        uji.model.use({ provider = "mine", model = "e1" })
        uji.notify(table.concat(uji.wire.list(), ","))
        """,
        provider=False,
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "echo: e1 4 error: read"
    assert run.done["usage"]["input"] == 4 and "estimated" not in run.done["usage"]
    assert "anthropic,echo,gemini,openai-chat,responses" in run.notices


def test_a_lua_wire_that_fails_or_raises(home: Home) -> None:
    home.init(
        """
        uji.wire.add("bad", { stream = function(request, reply)
          reply.fail({ kind = "provider", message = "model is offline" })
        end })
        uji.wire.add("raises", { stream = function() error("wire exploded") end })
        uji.provider.add({ id = "b", name = "B", wire = "bad", base_url = "x", models = { "m" } })
        uji.provider.add({ id = "r", name = "R", wire = "raises", base_url = "x", models = { "m" } })
        """,
        provider=False,
    )
    bad = home.run("hi", "--model", "b/m")
    assert bad.rc == 1 and bad.done["error"] == "provider: model is offline"
    raises = home.run("hi", "--model", "r/m")
    assert raises.rc == 1 and "wire exploded" in raises.done["error"] and "init.lua:" in raises.done["error"]


def test_sigint_during_a_lua_wire_calls_its_cancel_function(home: Home) -> None:
    marker = home.root / "wire-cancelled"
    started = home.root / "wire-started"
    home.init(
        f"""
        uji.wire.add("slow", {{ stream = function(request, reply)
          reply.text("partial answer")
          io.open("{started}", "w"):close()
          return function() io.open("{marker}", "w"):write("yes"):close() end
        end }})
        uji.provider.add({{ id = "s", name = "S", wire = "slow", base_url = "x", models = {{ "m" }} }})
        uji.model.use({{ provider = "s", model = "m" }})
        uji.notify("ready")
        """,
        provider=False,
    )
    import signal

    proc = subprocess.Popen(
        home.command("run", "--json", "hi"),
        cwd=home.work,
        env=home.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_file(started, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert marker.read_text() == "yes"
    events = [json.loads(line) for line in out.splitlines()]
    saved = home.db_messages(events[1]["id"] if events[0]["type"] == "notice" else events[0]["id"])
    assert saved[1:] == [
        {"type": "assistant", "text": "partial answer", "interrupted": True},
        {"type": "error", "text": "interrupted"},
    ]


@pytest.mark.skipif(not hasattr(os, "setsid"), reason="POSIX only")
def test_sigint_while_lua_loops_forever(home: Home) -> None:
    import signal

    started = home.root / "spin-started"
    home.init(
        'uji.tool.add("spin", { policy = "allow", run = function() '
        f'io.open("{started}", "w"):close() while true do end end }})'
    )
    home.fake.script(tool_call("spin", {}), text("never"))
    proc = subprocess.Popen(
        home.command("run", "--json", "hi"),
        cwd=home.work,
        env=home.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_file(started, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["type"] == "done" and events[-1]["error"] == "interrupted"
    tool = [e["message"] for e in events if e["type"] == "message" and e["message"]["type"] == "tool"]
    assert tool and "interrupted" in tool[0]["content"]


def wait_for_file(path: Path, proc: subprocess.Popen[str], limit: float = 60.0) -> None:
    """Wait until `path` exists (the child reached the point under test), or fail."""
    import time

    deadline = time.monotonic() + limit
    while not path.exists():
        if proc.poll() is not None:
            pytest.fail(
                f"uji exited ({proc.returncode}) before {path.name} appeared: {proc.stderr.read() if proc.stderr else ''}"
            )
        if time.monotonic() > deadline:
            pytest.fail(f"{path.name} never appeared")
        time.sleep(0.01)
