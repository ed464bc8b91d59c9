"""MCP servers through `uji run --json`: a stdio server and a streamable-HTTP one, both
written with the `mcp` SDK's server side (tests/mcp_server.py, which records every call
it gets to a file). Their tools are offered with their schemas, called, gated, and a
server that dies mid-call is survived."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home, tool_schemas
from tests.fakes.openai_server import call, text, tool_call, tool_calls
from tests.mcp_server import PNG

SERVER = Path(__file__).with_name("mcp_server.py")


def lua_list(items: list[str]) -> str:
    return "{ " + ", ".join(json.dumps(i) for i in items) + " }"


# How long a turn waits for a server to connect: the SDK's import alone takes seconds
# on a loaded machine.
WAIT = "wait = 90"


def stdio_server(home: Home, extra: str = "", lua: str = "") -> Path:
    log = home.root / "calls.jsonl"
    command = [sys.executable, str(SERVER), str(log)]
    home.init(f"uji.mcp.add('t', {{ command = {lua_list(command)}, {WAIT}{extra} }})\n{lua}")
    return log


def calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def tool_contents(home: Home, index: int = -1) -> list[Any]:
    body = home.fake.turn_requests[index].body
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_stdio_tool_is_offered_with_its_schema_and_called(home: Home) -> None:
    log = stdio_server(home)
    home.fake.script(tool_call("t__echo", {"text": "hi"}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    schema = tool_schemas(home.fake.turn_requests[0].body)["t__echo"]
    assert schema["description"] == "Says the text back."
    assert schema["parameters"]["properties"]["text"]["type"] == "string"
    assert schema["parameters"]["required"] == ["text"]
    [c] = run.calls
    # Asked by default (uji run answers asks itself); the subject is the arguments' JSON.
    assert (c["name"], c["policy"], c["decision"], c["by"]) == ("t__echo", "ask", "allow", "auto")
    assert c["subject"] == '{"text":"hi"}'
    assert calls(log) == [{"tool": "echo", "args": {"text": "hi"}, "pid": calls(log)[0]["pid"]}]
    assert tool_contents(home) == ["echo: hi"]


def test_a_deny_rule_on_the_subject_keeps_the_call_from_the_server(home: Home) -> None:
    log = stdio_server(home, lua='uji.tool.policy({ t__echo = { deny = { \'*"text":"secret*\' } } })')
    home.fake.script(
        tool_call("t__echo", {"text": "secret stuff"}), tool_call("t__echo", {"text": "fine"}), text("ok")
    )
    run = home.run("go", "--on-ask", "allow", check=True)
    assert [(c["decision"], c["by"]) for c in run.calls] == [("deny", "policy"), ("allow", "auto")]
    assert [c["args"] for c in calls(log)] == [{"text": "fine"}]
    assert tool_contents(home, 1)[0] == 'denied: blocked by the policy rule `*"text":"secret*`'


def test_a_disabled_mcp_tool_is_refused_without_reaching_the_server(home: Home) -> None:
    log = stdio_server(home, lua="uji.tool.disable({ 't__echo' })")
    home.fake.script(tool_call("t__echo", {"text": "hi"}), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    assert calls(log) == []
    [content] = tool_contents(home)
    assert content == "denied: t__echo is disabled"


def test_hooks_see_mcp_calls_and_a_read_only_tool_is_allowed_when_trusted(home: Home) -> None:
    log = stdio_server(
        home,
        extra=", trust_read_only = true",
        lua="""
        uji.on("before_tool", function(e) uji.notify("before " .. e.name) end)
        uji.on("after_tool", function(e) uji.notify("after " .. e.name .. " " .. e.content) end)
        """,
    )
    home.fake.script(tool_call("t__peek", {}), tool_call("t__echo", {"text": "x"}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert [(c["name"], c["policy"], c["decision"], c["by"]) for c in run.calls] == [
        ("t__peek", "allow", "allow", "policy"),
        ("t__echo", "ask", "allow", "auto"),
    ]
    assert [c["tool"] for c in calls(log)] == ["peek", "echo"]
    notes = " | ".join(run.notices)
    assert "before t__peek" in notes and "after t__peek peeked" in notes


def test_images_and_errors_become_tool_results(home: Home) -> None:
    stdio_server(home)
    home.fake.script(tool_call("t__look", {}), tool_call("t__broken", {}), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    look = home.fake.turn_requests[1].body["messages"]
    rendered = json.dumps(look)
    assert "a pixel" in rendered and f"data:image/png;base64,{PNG}" in rendered
    assert "1 had no supported media_type" in rendered  # the image/bmp one was left out
    broken = tool_contents(home, 2)[-1]
    assert isinstance(broken, str) and broken.startswith("error:")


def test_a_server_that_dies_mid_call_gives_an_error_and_starts_again(home: Home) -> None:
    log = stdio_server(home)
    home.fake.script(tool_call("t__crash", {}), tool_call("t__echo", {"text": "again"}), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    crashed = tool_contents(home, 1)[-1]
    assert crashed.startswith("error:") and "exited during the call" in crashed
    assert tool_contents(home, 2)[-1] == "echo: again"
    first, second = calls(log)
    assert (first["tool"], second["tool"]) == ("crash", "echo")
    assert first["pid"] != second["pid"]  # a new server process


def test_tools_added_at_run_time_are_picked_up(home: Home) -> None:
    log = stdio_server(home)
    home.fake.script(tool_call("t__grow", {}), tool_call("t__extra", {}), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    assert "t__extra" not in tool_schemas(home.fake.turn_requests[0].body)
    assert "t__extra" in tool_schemas(home.fake.turn_requests[2].body)
    assert [c["tool"] for c in calls(log)] == ["grow", "extra"]
    assert tool_contents(home, 2)[-1] == "extra ran"


def test_a_broken_server_fails_with_why_and_the_turn_goes_on(home: Home) -> None:
    home.init(
        """
        uji.mcp.add("gone", { command = { "/nonexistent/mcp-server" }, wait = 90 })
        """
    )
    home.fake.script(text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert (
        "MCP server gone failed: command not found: /nonexistent/mcp-server; its tools are not offered (see /mcp)"
    ) in run.notices
    assert not [n for n in tool_schemas(home.fake.turn_requests[0].body) if n.startswith("gone__")]


def test_bad_specs_are_refused_at_the_users_line(home: Home) -> None:
    home.init('uji.mcp.add("x", { command = "not a list" })', provider=True)
    run = home.run("go", "--on-ask", "allow")
    line = home.line_of("uji.mcp.add")
    assert any(
        n.endswith(
            f"init.lua:{line}: uji.mcp.add: `command` must be a non-empty list of strings (the program and its arguments)"
        )
        for n in run.notices
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield from serve_http(tmp_path, "--http", "/mcp")


@pytest.fixture
def sse_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    yield from serve_http(tmp_path, "--sse", "/sse")


def serve_http(tmp_path: Path, flag: str, path: str) -> Iterator[tuple[str, Path]]:
    log = tmp_path / "http-calls.jsonl"
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), str(log), flag, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:  # wait for it to listen
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "the MCP test server exited"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}{path}", log
    finally:
        proc.kill()
        proc.wait()


def test_a_streamable_http_tool_is_offered_called_and_gated(
    home: Home, http_server: tuple[str, Path]
) -> None:
    url, log = http_server
    home.init(
        f"""
        uji.mcp.add("web", {{ url = "{url}", headers = {{ ["X-Test"] = "1" }}, {WAIT} }})
        uji.tool.policy({{ web__echo = {{ deny = {{ '*"text":"no"*' }} }} }})
        """
    )
    home.fake.script(
        tool_call("web__echo", {"text": "no"}), tool_call("web__echo", {"text": "yes"}), text("ok")
    )
    run = home.run("go", "--on-ask", "allow", check=True)
    assert tool_schemas(home.fake.turn_requests[0].body)["web__echo"]["parameters"]["required"] == ["text"]
    assert [c["decision"] for c in run.calls] == ["deny", "allow"]
    assert [c["args"] for c in calls(log)] == [{"text": "yes"}]
    assert tool_contents(home, 2)[-1] == "echo: yes"


def test_a_legacy_http_sse_server_is_used_with_transport_sse(
    home: Home, sse_server: tuple[str, Path]
) -> None:
    url, log = sse_server
    home.init(f'uji.mcp.add("old", {{ url = "{url}", transport = "sse", {WAIT} }})')
    home.fake.script(tool_call("old__echo", {"text": "hi"}), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    assert [c["args"] for c in calls(log)] == [{"text": "hi"}]
    assert tool_contents(home) == ["echo: hi"]


class _Unauthorized(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer resource_metadata="http://127.0.0.1/x"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


def test_a_server_that_wants_oauth_fails_naming_the_login_command(home: Home) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unauthorized)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        home.init(f'uji.mcp.add("locked", {{ url = "http://127.0.0.1:{server.server_port}/mcp", {WAIT} }})')
        home.fake.script(text("ok"))
        run = home.run("go", "--on-ask", "allow", check=True)
    finally:
        server.shutdown()
    assert any(
        n.startswith("MCP server locked failed: needs authorization: run `uji mcp login locked`")
        for n in run.notices
    ), run.notices


def sdk_imported(home: Home, *argv: str) -> tuple[bool, str]:
    """Run `python -X importtime -m uji ARGV`: whether the SDK (`mcp`, `mcp_types`) was
    imported, and the output."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "uji", *argv],
        env=home.env(),
        cwd=home.work,
        capture_output=True,
        text=True,
        timeout=90,
    )
    names = [
        line.rsplit("|", 1)[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    ]
    assert "uji.cli" in names  # the probe sees uji's own imports
    return any(n.split(".")[0] in ("mcp", "mcp_types") for n in names), proc.stdout


def test_the_sdk_is_imported_only_when_a_server_is_configured(home: Home) -> None:
    stdio_server(home)
    assert sdk_imported(home, "--version") == (False, "uji 0.1.0\n")
    home.fake.script(text("ok"))
    loaded, out = sdk_imported(home, "run", "--json", "go")
    assert loaded and '"done"' in out
    home.init("")
    home.fake.script(text("ok"))
    loaded, out = sdk_imported(home, "run", "--json", "go")
    assert not loaded and '"done"' in out


def test_tool_names_providers_refuse_are_made_safe_and_kept_apart(home: Home) -> None:
    # The server has `fs.read` and `fs_read`: both are `t__fs_read` once the dot is made `_`.
    log = home.root / "calls.jsonl"
    command = [sys.executable, str(SERVER), str(log), "--odd-names"]
    home.init(
        f"uji.mcp.add('t', {{ command = {lua_list(command)}, {WAIT} }})\n"
        'uji.tool.policy({ t__fs_read = { allow = { "*" } }, t__fs_read_2 = { deny = { "*" } } })'
    )
    home.fake.script(
        tool_calls(
            call("t__fs_read", {"path": "a"}, id="dot"),
            call("t__fs_read_2", {"path": "b"}, id="underscore"),
        ),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny", check=True)
    names = tool_schemas(home.fake.turn_requests[0].body)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in names), names
    assert {"t__fs_read", "t__fs_read_2"} <= set(names) and not any("." in n for n in names)
    decided = {c["id"]: c for c in run.calls}
    assert (decided["dot"]["decision"], decided["dot"]["by"], decided["dot"]["rule"]) == (
        "allow",
        "policy",
        "*",
    )
    assert (decided["underscore"]["decision"], decided["underscore"]["by"]) == ("deny", "policy")
    # Each name reaches its own tool: the allowed call reached `fs.read`, the denied one nothing.
    assert [(c["tool"], c["args"]) for c in calls(log)] == [("fs.read", {"path": "a"})]
    assert tool_contents(home)[0] == "fs.read read a"


def starts(log: Path) -> int:
    """How many times the server started (tests/mcp_server.py writes LOG.starts)."""
    path = Path(f"{log}.starts")
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_tools_known_from_last_time_are_offered_and_the_server_starts_on_their_first_call(
    home: Home,
) -> None:
    log = stdio_server(home)
    home.fake.script(text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    assert starts(log) == 1 and "t__echo" in tool_schemas(home.fake.turn_requests[0].body)
    # Next time the tools come from <data>/mcp-tools.json: offered in the first request, with
    # neither the server started nor the SDK imported.
    home.fake.script(text("ok"))
    loaded, out = sdk_imported(home, "run", "--json", "go")
    assert not loaded and '"done"' in out
    schema = tool_schemas(home.fake.turn_requests[1].body)["t__echo"]
    assert schema["parameters"]["required"] == ["text"]
    assert starts(log) == 1
    # A call starts it.
    home.fake.script(tool_call("t__echo", {"text": "hi"}), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    assert tool_contents(home) == ["echo: hi"]
    assert starts(log) == 2 and [c["tool"] for c in calls(log)] == ["echo"]
    # Another configuration (here an env variable) lists its tools again at start.
    log = stdio_server(home, extra=", env = { X = '1' }")
    home.fake.script(text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    assert starts(log) == 3


def test_a_turn_that_goes_on_without_a_servers_tools_says_which_and_why(home: Home) -> None:
    log = home.root / "calls.jsonl"
    command = [sys.executable, str(SERVER), str(log), "--delay", "60"]
    home.init(
        f"""
        uji.mcp.add('slow', {{ command = {lua_list(command)} }})
        uji.mcp.configure({{ wait = 0 }}) -- for every server, those added before too
        """
    )
    home.fake.script(text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert (
        "MCP server slow is still connecting after 0s: this turn goes on without its tools "
        "(raise the wait with uji.mcp.configure{ wait = N }; see /mcp)"
    ) in run.notices
    assert not [n for n in tool_schemas(home.fake.turn_requests[0].body) if n.startswith("slow__")]


def test_results_are_bounded_like_run_commands_and_images_sent_once(home: Home) -> None:
    stdio_server(home)
    home.fake.script(tool_call("t__many", {"lines": 5000}), tool_call("t__shot", {}, id="call_2"), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    [many] = tool_contents(home, 1)
    assert isinstance(many, str) and many.startswith("line 3001\n") and "\nline 5000\n" in many
    note = many.rsplit("\n", 1)[-1]
    assert note.startswith("[Showing lines 3001-5000 of 5000 (50.0KB limit). Full output")
    spill = note.split(": ", 1)[1].rstrip("]")
    # The whole result is in the file the note names (while uji runs; gone after).
    assert not Path(spill).exists()
    messages = home.fake.turn_requests[2].body["messages"]
    asked = next(i for i, m in enumerate(messages) if "t__shot" in json.dumps(m.get("tool_calls")))
    shot = json.dumps(messages[asked + 1 :])
    # One image (the two identical blocks sent once), and no structuredContent as text.
    assert shot.count(PNG) == 1 and len(shot) < 2000, shot[:2000]


def test_a_server_that_fails_to_start_shows_its_exit_status_and_stderr(home: Home) -> None:
    command = [sys.executable, str(SERVER), str(home.root / "calls.jsonl"), "--fail"]
    home.init(f"uji.mcp.add('bad', {{ command = {lua_list(command)}, {WAIT} }})")
    home.fake.script(text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert (
        "MCP server bad failed: exited before it was ready (exit status 2)\n"
        "  stderr: starting\n  stderr: bad config: no token given; its tools are not offered (see /mcp)"
    ) in run.notices, run.notices
    assert "Traceback" not in run.stderr


def test_a_banner_line_is_skipped_and_uji_names_itself(home: Home) -> None:
    log = stdio_server(home, extra="")
    command = [sys.executable, str(SERVER), str(log), "--banner"]
    home.init(f"uji.mcp.add('t', {{ command = {lua_list(command)}, {WAIT} }})")
    home.fake.script(tool_call("t__whoami", {}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert tool_contents(home) == ["uji 0.1.0"]  # clientInfo
    assert "Traceback" not in run.stderr and run.stderr.strip() == "", run.stderr


def test_a_server_that_exits_while_idle_is_started_again_before_the_next_call(home: Home) -> None:
    # After the first call, a hook kills the server and waits until it is gone: the next
    # call must reach a new server rather than fail.
    log = stdio_server(
        home,
        lua="""
        uji.on("after_tool", function(e)
          if e.name == "t__pid" then
            os.execute("kill -9 " .. e.content .. "; while kill -0 " .. e.content .. " 2>/dev/null; do sleep 0.05; done")
          end
        end)
        """,
    )
    home.fake.script(
        tool_call("t__pid", {}), tool_call("t__echo", {"text": "again"}, id="call_2"), text("ok")
    )
    run = home.run("go", "--on-ask", "allow", check=True)
    assert tool_contents(home)[-1] == "echo: again"
    first, second = calls(log)
    assert first["pid"] != second["pid"]
    assert any(
        n.startswith("MCP server t exited while idle (killed by signal 9); it starts again on its next call")
        for n in run.notices
    ), run.notices


def test_progress_logging_roots_and_a_declined_question(home: Home) -> None:
    stdio_server(home, lua=f"uji.tool.roots({{ {json.dumps(str(home.root / 'extra'))} }})")
    home.fake.script(tool_call("t__chatty", {}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    # Progress notifications (uji sends a progressToken) are the call's progress lines.
    assert [p["line"] for p in run.of("progress")] == ["1/2 halfway", "2/2 done"]
    [content] = tool_contents(home)
    work, extra = home.work.resolve().as_uri(), (home.root / "extra").as_uri()
    assert content == (
        f"asked: decline; roots: {work} {extra}\n"
        "[the server asked the user: 'What is your name?'; uji declined it, as nobody can answer here]"
    )
    log = (home.data / "diagnostics.log").read_text()
    assert "\tmcp\tt: info: a log line" in log


def test_with_on_ask_allow_a_question_with_defaults_is_accepted_with_them(home: Home) -> None:
    log = home.root / "calls.jsonl"
    command = [sys.executable, str(SERVER), str(log), "--confirm"]
    # The call itself is allowed by the policy either way; only --on-ask allow answers for the user.
    home.init(
        f"uji.mcp.add('t', {{ command = {lua_list(command)}, {WAIT} }})\n"
        "uji.tool.policy({ t__confirm = { default = 'allow' } })"
    )
    home.fake.script(tool_call("t__confirm", {}), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    home.fake.script(tool_call("t__confirm", {}), text("ok"))
    home.run("go", check=True)
    accepted, declined = tool_contents(home, 1), tool_contents(home, 3)
    assert accepted == [
        'accept: {"mode": "safe", "count": 3}\n[the server asked the user: \'Go ahead?\'; uji accepted '
        'its defaults (--on-ask allow): {"mode": "safe", "count": 3}]'
    ]
    assert declined == [
        "decline: null\n[the server asked the user: 'Go ahead?'; uji declined it, as nobody can answer here]"
    ]
