"""The background jobs plugin (`require("uji.plugins.jobs").setup{}`) through `uji run`
against the fake provider: what the model gets back, what really runs, and that nothing a
job started outlives uji, even a uji killed with -9."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Home, tool_schemas
from tests.fakes.openai_server import FakeCall, text, tool_call, tool_calls
from tests.waiting import alive, until

SETUP = 'require("uji.plugins.jobs").setup{}\n'


def group_gone(pgid: int) -> bool:
    """No process of the group is left (zombies waiting for a reaper do not count)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return False
    return True


def server_command(portfile: Path, pidfile: Path) -> str:
    # $$ is the shell, which `exec` turns into the server: its pid leads the job's group. The
    # server takes a free port itself and writes it down: a port picked before it started
    # could have been taken by another test meanwhile (seen once in a loaded full run).
    code = (
        "import http.server, os\n"
        "s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)\n"
        f"open({str(portfile)!r} + '.tmp', 'w').write(str(s.server_port))\n"
        f"os.replace({str(portfile)!r} + '.tmp', {str(portfile)!r})\n"
        "s.serve_forever()\n"
    )
    return f"echo $$ > {pidfile}; exec {sys.executable} -c {shlex.quote(code)}"


def fetch_command(portfile: Path) -> str:
    # Until the server answers (its port file appears once it listens); bounded by the test's timeout.
    code = (
        "import time, urllib.request\n"
        "for i in range(2400):\n"
        "    try:\n"
        f"        port = open({str(portfile)!r}).read()\n"
        "        r = urllib.request.urlopen('http://127.0.0.1:%s/' % port); print('status', r.status); break\n"
        "    except OSError: time.sleep(0.05)\n"
    )
    return f"{sys.executable} -c {shlex.quote(code)}"


def refused_command(portfile: Path) -> str:
    code = (
        "import socket, time\n"
        f"port = int(open({str(portfile)!r}).read())\n"
        "for i in range(2400):\n"
        "    try: socket.create_connection(('127.0.0.1', port), 1).close(); time.sleep(0.05)\n"
        "    except OSError: print('refused'); break\n"
    )
    return f"{sys.executable} -c {shlex.quote(code)}"


def test_a_server_in_the_background_is_queried_stopped_and_gone(home: Home) -> None:
    portfile, pidfile = home.work / "server.port", home.work / "server.pid"
    home.init(SETUP)
    home.fake.script(
        tool_call("run_command", {"command": server_command(portfile, pidfile), "run_in_background": True}),
        tool_call("run_command", {"command": fetch_command(portfile)}, id="c2"),
        tool_call("job_output", {"id": 1}, id="c3"),
        tool_call("stop_job", {"id": 1}, id="c4"),
        tool_call("run_command", {"command": refused_command(portfile)}, id="c5"),
        text("done"),
    )
    run = home.run("serve")
    assert run.rc == 0, run.stderr
    tools = tool_schemas(home.fake.turn_requests[0].body)
    assert sorted(tools) == ["edit_file", "job_output", "read_file", "run_command", "stop_job", "write_file"]
    assert tools["run_command"]["parameters"]["properties"]["run_in_background"]["type"] == "boolean"
    assert [c["policy"] for c in run.calls if c["name"] != "run_command"] == ["allow", "allow"]
    assert [c["subject"] for c in run.calls if c["name"] != "run_command"] == ["job 1", "job 1"]
    results = [r["content"] for r in run.tool_results()]
    assert results[0].startswith("Started in the background as job 1")
    assert results[1] == "status 200"
    assert results[2].startswith("job 1 (`") and "GET / HTTP/1.1" in results[2]
    assert results[3] == "stopped job 1"
    assert results[4] == "refused"
    pid = int(pidfile.read_text())
    until(lambda: group_gone(pid), what="the server's group to be gone")


def wait_for_file(path: Path, proc: subprocess.Popen[str]) -> None:
    def there() -> bool:
        assert proc.poll() is None, "uji ended first"
        return path.exists() and path.stat().st_size > 0

    until(there, timeout=60, what=str(path))


def test_background_jobs_end_with_uji(home: Home) -> None:
    portfile, pidfile = home.work / "server.port", home.work / "server.pid"
    home.init(SETUP)
    home.fake.script(
        tool_call("run_command", {"command": server_command(portfile, pidfile), "run_in_background": True}),
        tool_call("run_command", {"command": fetch_command(portfile)}, id="c2"),
        text("left it running"),
    )
    run = home.run("serve")
    assert run.rc == 0 and [r["content"] for r in run.tool_results()][1] == "status 200"
    pid = int(pidfile.read_text())
    until(lambda: group_gone(pid), what="the server's group to be gone after uji exited")


@pytest.mark.parametrize("how", ["kill -9", "sigint"])
def test_background_jobs_die_with_a_killed_uji(home: Home, how: str) -> None:
    portfile, pidfile = home.work / "server.port", home.work / "server.pid"
    child = home.work / "child.pid"
    blocked = home.work / "blocked"
    # A grandchild in the job's group, started by the server's shell: it dies too.
    command = f"(sleep 300 & echo $! > {child}; wait) & " + server_command(portfile, pidfile)
    home.init(
        SETUP
        + f"""
        uji.tool.add("block", {{ policy = "allow", run = function()
          local f = io.open("{blocked}", "w"); f:write("x"); f:close()
          return function() end
        end }})
        """
    )
    home.fake.script(
        tool_call("run_command", {"command": command, "run_in_background": True}),
        tool_call("run_command", {"command": fetch_command(portfile)}, id="c2"),
        tool_call("block", {}, id="c3"),
        text("never"),
    )
    proc = subprocess.Popen(
        home.command("run", "--json", "serve"),
        cwd=home.work,
        env=home.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        wait_for_file(blocked, proc)
        pid, grandchild = int(pidfile.read_text()), int(child.read_text())
        assert alive(pid) and alive(grandchild)
        proc.send_signal(signal.SIGKILL if how == "kill -9" else signal.SIGINT)
        proc.wait(timeout=30)
        until(lambda: group_gone(pid), what="the server's group to die with uji")
        assert not alive(grandchild)
    finally:
        proc.kill()
        proc.wait()


def test_a_deny_rule_blocks_a_background_command(home: Home) -> None:
    marker = home.work / "ran"
    home.init(SETUP + 'uji.tool.policy({ run_command = { deny = { "touch *" } } })\n')
    home.fake.script(
        tool_call("run_command", {"command": f"touch {marker}", "run_in_background": True}),
        tool_call(
            "run_command", {"command": f"echo hi && touch {marker}", "run_in_background": True}, id="c2"
        ),
        text("ok"),
    )
    run = home.run("go")
    assert run.rc == 0
    assert [c["decision"] for c in run.calls] == ["deny", "deny"]
    assert all("denied" in r["content"] for r in run.tool_results()) and len(run.tool_results()) == 2
    assert not marker.exists()


def test_an_unanswered_question_denies_a_background_command(home: Home) -> None:
    marker = home.work / "ran"
    home.init(SETUP)
    home.fake.script(
        tool_call("run_command", {"command": f"touch {marker}", "run_in_background": True}),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny")
    assert (run.calls[0]["decision"], run.calls[0]["policy"]) == ("deny", "ask")
    assert run.tool_results()[0]["content"].startswith("denied")
    assert not marker.exists()


def test_a_before_tool_hook_sees_background_commands(home: Home) -> None:
    marker = home.work / "ran"
    home.init(
        SETUP
        + """
        uji.on("before_tool", function(e)
          if e.name == "run_command" and e.arguments.run_in_background then
            return { deny = "no background commands here: " .. e.arguments.command }
          end
        end)
        """
    )
    home.fake.script(
        tool_call("run_command", {"command": f"touch {marker}", "run_in_background": True}),
        text("ok"),
    )
    run = home.run("go")
    assert run.calls[0]["decision"] == "deny" and run.calls[0]["by"] == "hook"
    assert "no background commands here: touch" in run.tool_results()[0]["content"]
    assert not marker.exists()


def results_of(run) -> list[str]:  # type: ignore[no-untyped-def]
    return [r["content"] for r in run.tool_results()]


def test_a_command_at_its_timeout_moves_to_the_background(home: Home) -> None:
    pidfile = home.work / "job.pid"
    home.init(SETUP)
    command = f"echo $$ > {pidfile}; echo first; exec sleep 300"
    home.fake.script(
        tool_call("run_command", {"command": command, "timeout": 1}),
        tool_call("job_output", {"id": 1}, id="c2"),
        tool_call("stop_job", {"id": 1}, id="c3"),
        tool_call("stop_job", {"id": 1}, id="c4"),
        tool_call("job_output", {"id": 7}, id="c5"),
        text("ok"),
    )
    run = home.run("go")
    assert run.rc == 0, run.stderr
    moved, output, stopped, again, unknown = results_of(run)
    assert moved.startswith(
        "The command did not finish within its 1s timeout and was moved to the background as job 1"
    )
    assert moved.endswith("Output so far:\nfirst")
    assert output.startswith("job 1 (`echo $$") and "running for" in output.splitlines()[0]
    assert "(no new output)" in output  # "first" was read with the move
    assert stopped == "stopped job 1" and again == "error: job 1 is not running"
    assert unknown == "error: there is no job 7"
    until(lambda: group_gone(int(pidfile.read_text())), what="the stopped job's group to be gone")


def test_sleep_at_its_timeout_is_killed_not_moved(home: Home) -> None:
    pidfile = home.work / "sleep.pid"
    home.init(SETUP)
    home.fake.script(
        tool_call(
            "run_command", {"command": f"sleep 300 & echo $! > {pidfile}; echo waiting; wait", "timeout": 1}
        ),
        tool_call("job_output", {"id": 1}, id="c2"),
        text("ok"),
    )
    run = home.run("go")
    killed, none = results_of(run)
    assert killed == "error: command timed out after 1s\nwaiting"
    assert none == "error: there is no job 1"
    pid = int(pidfile.read_text())
    until(lambda: not alive(pid), what="the sleep to be killed")


def test_at_most_max_jobs_run_and_a_timed_out_command_is_then_killed(home: Home) -> None:
    home.init(SETUP + "uji.jobs.configure{ max = 2 }\n")
    background = [
        FakeCall("run_command", {"command": f"exec sleep 30{i}", "run_in_background": True}, f"b{i}")
        for i in range(3)
    ]
    home.fake.script(
        tool_calls(*background),
        tool_call("run_command", {"command": "echo partial; exec sleep 300", "timeout": 1}, id="c4"),
        tool_call("stop_job", {"id": 1}, id="c5"),
        tool_call("run_command", {"command": "exec sleep 305", "run_in_background": True}, id="c6"),
        text("ok"),
    )
    run = home.run("go")
    first, second, third, timed_out, stopped, fourth = results_of(run)
    assert first.startswith("Started in the background as job 1")
    assert second.startswith("Started in the background as job 2")
    assert third == "error: the background job limit (2) is reached; stop a job with stop_job first"
    assert timed_out == (
        "error: command timed out after 1s, and the background job limit (2) is reached\npartial"
    )
    assert stopped == "stopped job 1"
    assert fourth.startswith("Started in the background as job 3")


def test_a_job_is_stopped_at_its_limit_and_reported(home: Home) -> None:
    pidfile = home.work / "job.pid"
    home.init(SETUP + "uji.jobs.configure{ limit = 0.5 }\n")
    wait_gone = (
        f"for i in $(seq 400); do kill -0 $(cat {pidfile}) 2>/dev/null || break; sleep 0.05; done; echo gone"
    )
    home.fake.script(
        tool_call(
            "run_command", {"command": f"echo $$ > {pidfile}; exec sleep 300", "run_in_background": True}
        ),
        tool_call("run_command", {"command": wait_gone}, id="c2"),
        tool_call("job_output", {"id": 1}, id="c3"),
        text("ok"),
    )
    run = home.run("go")
    started, gone, output = results_of(run)
    assert "(stopped after 0.5s)" in started
    assert gone == "gone"
    assert output.splitlines()[0].endswith("stopped at its 0.5s limit")
    assert any(
        n.startswith("Background job 1 (`echo") and n.endswith("stopped at its 0.5s limit.")
        for n in run.notices
    )


def test_the_model_may_not_ask_past_the_hard_cap(home: Home) -> None:
    home.init(SETUP)
    home.fake.script(
        tool_call("run_command", {"command": "exec sleep 300", "run_in_background": True, "timeout": 99999}),
        text("ok"),
    )
    run = home.run("go")
    assert "(stopped after 7200s)" in results_of(run)[0]


def test_configure_raises_on_bad_values(home: Home) -> None:
    home.init(
        SETUP
        + """
        for _, bad in ipairs({ { max = 0 }, { max = 1.5 }, { limit = 0 }, { limit = 7201 }, { limit = "1" },
                               { wake = 1 } }) do
          local ok, err = pcall(uji.jobs.configure, bad)
          uji.notify((ok and "accepted " or "refused: ") .. tostring(err))
        end
        uji.jobs.configure{ max = 3, limit = 60 }
        uji.notify("jobs: " .. #uji.jobs.list() .. " " .. tostring(uji.jobs.stop(1)))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("go")
    refused = [n for n in run.notices if n.startswith("refused: ")]
    assert len(refused) == 6, run.notices
    assert "`max` must be a whole number >= 1, got 0" in refused[0]
    assert "`limit` must be seconds above 0 and at most 7200, got 7201" in refused[3]
    assert "jobs: 0 false" in run.notices


def test_job_output_is_bounded_and_read_in_parts(home: Home) -> None:
    pidfile = home.work / "job.pid"
    home.init(SETUP)
    # 12 MB of numbered lines, more than the log keeps (8 MB), then a last line (awk writes
    # them in 0.15 s of CPU; a Python loop of writes took 1.5 s).
    write = "awk 'BEGIN { for (i = 1; i <= 1200000; i++) printf \"%09d\\n\", i }'; echo last"
    wait_done = f"for i in $(seq 1200); do kill -0 $(cat {pidfile}) 2>/dev/null || break; sleep 0.05; done"
    home.fake.script(
        tool_call("run_command", {"command": f"echo $$ > {pidfile}; {write}", "run_in_background": True}),
        tool_call("run_command", {"command": wait_done}, id="c2"),
        tool_call("job_output", {"id": 1}, id="c3"),
        tool_call("job_output", {"id": 1, "since": 1199998}, id="c4"),
        tool_call("job_output", {"id": 1}, id="c5"),
        text("ok"),
    )
    run = home.run("go", timeout=120)
    assert run.rc == 0, run.stderr
    _, _, everything, tail, nothing = results_of(run)
    lines = everything.splitlines()
    assert lines[0].endswith("finished, exit 0")
    assert lines[1].startswith("[") and "older lines were dropped to keep the log under 8.0MB" in lines[1]
    assert lines[2].startswith("[") and "lines not shown" in lines[2]
    assert lines[-2:] == ["last", "[lines 1198002-1200001; the next read starts after line 1200001]"]
    assert lines[3] == "001198002"  # the newest 2000 lines of it
    assert len(everything.encode()) < 60 * 1024
    log = Path(lines[1].rsplit(": ", 1)[1].rstrip("]"))
    assert not log.exists()  # deleted when uji ended
    assert tail.splitlines()[1:] == [
        "001199999",
        "001200000",
        "last",
        "[lines 1199999-1200001; the next read starts after line 1200001]",
    ]
    assert "(no new output)" in nothing
