"""Issue 8, "interrupts always land; hooks fail closed" and "the subject everywhere",
through the real `uji run` against the fake server: SIGINT to a real process, marker
files for what actually ran, the JSON events and the session database."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_call, tool_calls

# init.lua writes the marker, then Lua runs `loop`: the test waits for the marker
# (never sleep-then-hope) and sends SIGINT.
MARK = 'local f = io.open("{marker}", "w"); f:write("x"); f:close()'
SPIN = "while true do end"


def start(home: Home, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        home.command("run", "--json", *args),
        cwd=home.work,
        env=home.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"uji ended (rc={proc.returncode}) before {path.name}\n{err}\n{out}")
        if time.monotonic() > end:
            proc.kill()
            raise AssertionError(f"timed out waiting for {path}")
        time.sleep(0.02)


def interrupt(proc: subprocess.Popen[str]) -> tuple[int, list[dict[str, object]], str]:
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"uji did not stop on SIGINT\n{err}") from None
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return proc.returncode, events, err


# Interrupts -------------------------------------------------------------------------


def test_sigint_stops_a_config_that_loops_before_any_turn(home: Home) -> None:
    marker = home.root / "config-running"
    home.init(MARK.format(marker=marker) + "\n" + SPIN + "\n")
    home.plugin("after.lua", f'io.open("{home.root / "plugin-ran"}", "w"):close()')
    proc = start(home, "hi")
    wait_for(marker, proc)
    rc, _, err = interrupt(proc)
    assert rc == 130, err
    assert f"uji: interrupted while loading the config ({home.config / 'init.lua'})" in err
    assert "Traceback" not in err
    assert not (home.root / "plugin-ran").exists()  # the files after it did not run
    assert home.fake.turn_requests == []


@pytest.mark.parametrize(
    "where",
    [
        'uji.on("before_tool", function() {mark} {spin} end)',
        'uji.on("before_turn", function() {mark} {spin} end)',
        'uji.context.add("loops", function() {mark} {spin} end)',
        'uji.on("before_tool", function() {mark} for i = 1, 5 do pcall(function() {spin} end) end end)',
    ],
    ids=["before_tool", "before_turn", "context provider", "pcall in a hook"],
)
def test_sigint_while_a_hook_loops_stops_the_turn_and_the_tool_never_runs(home: Home, where: str) -> None:
    marker, ran = home.root / "hook-running", home.work / "tool-ran"
    hook = where.format(mark=MARK.format(marker=marker), spin=SPIN)
    home.init('uji.tool.policy({ run_command = { default = "allow" } })\n' + hook + "\n")
    home.fake.script(tool_call("run_command", {"command": "touch tool-ran"}), text("done"))
    proc = start(home, "go")
    wait_for(marker, proc)
    rc, events, err = interrupt(proc)
    assert rc == 130, err
    assert not ran.exists()
    done = [e for e in events if e["type"] == "done"]
    assert done and done[-1]["error"] == "interrupted"
    assert not any("failed" in str(e.get("text", "")) for e in events if e["type"] == "notice")
    assert not [e for e in events if e["type"] == "call" and e["decision"] == "allow"]
    saved = home.db_messages(next(str(e["id"]) for e in events if e["type"] == "session"))
    assert saved[-1] == {"type": "error", "text": "interrupted"}
    if "before_tool" in where:
        assert saved[-2]["type"] == "tool"
        assert saved[-2]["content"] == "error: interrupted by the user before this tool ran"


def test_sigint_while_a_lua_tool_loops_calls_no_later_tool(home: Home) -> None:
    marker = home.root / "tool-running"
    home.init(
        f"""
        uji.tool.policy({{ run_command = {{ default = "allow" }} }})
        uji.tool.add("spin", {{ policy = "allow", run = function() {MARK.format(marker=marker)} {SPIN} end }})
        """
    )
    home.fake.script(
        tool_calls(call("spin", {}), call("run_command", {"command": "touch second-ran"})), text("no")
    )
    proc = start(home, "go")
    wait_for(marker, proc)
    rc, events, err = interrupt(proc)
    assert rc == 130, err
    assert not (home.work / "second-ran").exists()
    tools = [e["message"] for e in events if e["type"] == "message" and e["message"]["type"] == "tool"]
    assert [t["content"] for t in tools] == [
        "error: interrupted by the user while this tool ran",
        "error: interrupted by the user before this tool ran",
    ]


# Hooks fail closed ----------------------------------------------------------------------


def test_a_raising_before_tool_hook_denies_and_names_its_file_and_line(home: Home) -> None:
    home.init(
        """
        uji.tool.policy({ run_command = { default = "allow" } })
        uji.on("before_tool", function(e)
          if e.arguments.command == "touch a" then error("cannot decide") end
        end, { name = "guard" })
        """
    )
    home.fake.script(
        tool_calls(call("run_command", {"command": "touch a"}), call("run_command", {"command": "touch b"})),
        text("ok"),
    )
    run = home.run("go", check=True)
    init = home.config / "init.lua"
    first, second = run.calls
    assert (first["decision"], first["by"], first["hook"]) == ("deny", "hook", "guard")
    assert f"{init}:{home.line_of('cannot decide')}: cannot decide" in first["reason"]
    assert first["hook_origin"] == f"{init}:{home.line_of('uji.on(')}"
    assert (second["decision"], second["by"]) == ("allow", "policy")
    assert not (home.work / "a").exists() and (home.work / "b").exists()
    tool = run.tool_results()[0]
    assert tool["content"].startswith("denied: before_tool handler 'guard'")


@pytest.mark.parametrize(
    ("result", "ran"),
    [
        ('{ deny = "" }', False),
        ("{ deny = 0 }", False),
        ("{ deny = {} }", False),
        ('{ allow = true, deny = "both" }', False),
        ('{ deny = "both", allow = true }', False),
        ('{ allow = true, ask = true, deny = "all three" }', False),
        ("{ allow = true, deny = false }", True),
        ("{ allow = 0 }", True),
        ("{ allow = false }", False),  # no decision: the policy's "ask" becomes --on-ask deny
        ("{ ask = true, allow = true }", False),  # the stricter ask, answered by --on-ask deny
    ],
)
def test_hook_results_are_read_with_lua_truthiness(home: Home, result: str, ran: bool) -> None:
    home.init(f'uji.on("before_tool", function() return {result} end)')
    home.fake.script(tool_call("run_command", {"command": "touch ran"}), text("ok"))
    run = home.run("go", "--on-ask", "deny", check=True)
    assert (home.work / "ran").exists() is ran
    assert run.calls[0]["decision"] == ("allow" if ran else "deny")


def test_a_hook_returning_allow_and_deny_denies_with_its_reason(home: Home) -> None:
    # Deny wins even under --on-ask allow, and even where the policy would allow.
    home.init(
        'uji.tool.policy({ run_command = { allow = { "touch *" } } })\n'
        'uji.on("before_tool", function() return { allow = true, deny = "not today" } end)'
    )
    home.fake.script(tool_call("run_command", {"command": "touch ran"}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert not (home.work / "ran").exists()
    assert (run.calls[0]["decision"], run.calls[0]["by"]) == ("deny", "hook")
    sent = [m for m in home.fake.turn_requests[-1].body["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in sent] == ["denied: not today"]


# Waiting for ctx.done --------------------------------------------------------------------


def test_a_tool_that_never_calls_done_shows_progress_then_times_out(home: Home) -> None:
    cancelled = home.root / "cancelled"
    home.init(
        f"""
        uji.tool.add("hang", {{ policy = "allow", timeout = 1.5,
          run = function(args, ctx)
            return function() io.open("{cancelled}", "w"):close() end
          end }})
        uji.tool.add("slow", {{ policy = "allow", timeout = 1.5,
          run = function(args, ctx) ctx.progress("fetching") end }})
        """
    )
    home.fake.script(tool_calls(call("hang", {}), call("slow", {})), text("ok"))
    run = home.run("go", check=True)
    assert [t["content"] for t in run.tool_results()] == [
        "error: hang timed out after 1.5s waiting for ctx.done",
        "error: slow timed out after 1.5s waiting for ctx.done",
    ]
    assert cancelled.exists()
    lines = [(e["tool"], e["line"]) for e in run.of("progress")]
    assert ("hang", "waiting for ctx.done… 1s") in lines
    assert ("slow", "fetching") in lines and ("slow", "fetching · 1s") in lines
    assert len(lines) <= 6  # about one a second


@pytest.mark.parametrize("bad", ["0", "-1", '"10"', "1/0", "0/0"])
def test_a_bad_timeout_is_an_error_at_the_add(home: Home, bad: str) -> None:
    home.init(f'uji.tool.add("t", {{ timeout = {bad}, run = function() return "" end }})\n')
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    line = home.line_of("uji.tool.add")
    assert any(f"init.lua:{line}: uji.tool.add: `timeout` must be a number" in n for n in run.notices)


# The subject everywhere ------------------------------------------------------------------


def test_a_subject_function_reaches_the_events_and_the_saved_session(home: Home) -> None:
    home.init(
        """
        computed = 0
        uji.tool.add("greet", {
          parameters = { type = "object", properties = { who = { type = "string" } } },
          subject = function(args) computed = computed + 1 return "to " .. args.who end,
          display = { verb = "Greeted" },
          run = function(args) return "computed " .. computed end,
        })
        uji.tool.policy({ greet = { allow = { "to bob" }, deny = { "to eve" } } })
        """
    )
    home.fake.script(
        tool_calls(call("greet", {"who": "bob"}), call("greet", {"who": "eve"})),
        text("ok"),
    )
    run = home.run("go", check=True)
    assert [(c["subject"], c["verb"], c["decision"]) for c in run.calls] == [
        ("to bob", "Greeted", "allow"),
        ("to eve", "Greeted", "deny"),
    ]
    saved = [m for m in home.db_messages(run.session_id) if m["type"] == "tool"]
    assert [(m["subject"], m["content"]) for m in saved] == [
        ("to bob", "computed 1"),  # once for the first call, the policy and all
        ("to eve", "denied: blocked by the policy rule `to eve`"),
    ]
    # ... and the model sees no subject field
    answers = [m for m in home.fake.turn_requests[-1].body["messages"] if m["role"] == "tool"]
    assert answers and all("subject" not in m for m in answers)
