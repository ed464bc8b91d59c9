"""`uji acp` driven by the official ACP client (npm `@agentclientprotocol/sdk`,
`ClientSideConnection`) against the fake model: streamed text, a permission request
answered both ways (the file on disk or not), cancel, and the load of a saved session.

The client (tests/acp/client.mjs) runs under Node, with the SDK installed from npm into
.cache/acp-client on first use; an install that fails fails the test."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text, tool_call

ROOT = Path(__file__).resolve().parent.parent
CLIENT_SRC = ROOT / "tests" / "acp"
CLIENT_DIR = ROOT / ".cache" / "acp-client"

pytestmark = pytest.mark.timeout(240)


def client_dir() -> Path:
    """The client with the SDK installed (once per checkout; workers take turns)."""
    CLIENT_DIR.mkdir(parents=True, exist_ok=True)
    with open(CLIENT_DIR.parent / "acp-client.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        wanted = (CLIENT_SRC / "package.json").read_text()
        installed = CLIENT_DIR / "package.json"
        sdk = CLIENT_DIR / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
        if not sdk.exists() or not installed.exists() or installed.read_text() != wanted:
            installed.write_text(wanted)
            npm = shutil.which("npm")
            assert npm, "npm is needed to install the ACP client (Node 20+)"
            proc = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=CLIENT_DIR,
                capture_output=True,
                text=True,
                timeout=240,
            )
            assert proc.returncode == 0, f"npm install failed:\n{proc.stdout}\n{proc.stderr}"
        shutil.copyfile(CLIENT_SRC / "client.mjs", CLIENT_DIR / "client.mjs")
    return CLIENT_DIR


class Transcript:
    """What the client printed: each request's result and everything the agent sent."""

    def __init__(self, lines: list[dict[str, Any]], stderr: str) -> None:
        self.lines = lines
        self.stderr = stderr

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["kind"] == kind]

    def result(self, kind: str, index: int = 0) -> dict[str, Any]:
        line = self.of(kind)[index]
        assert "error" not in line, f"{kind} failed: {line['error']}\nstderr:\n{self.stderr}"
        result: dict[str, Any] = line["result"]
        return result

    def updates(self, kind: str | None = None) -> list[dict[str, Any]]:
        ups = [line["update"] for line in self.of("update")]
        return [u for u in ups if kind is None or u["sessionUpdate"] == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"]["text"] for u in self.updates(kind))


def drive(home: Home, steps: list[dict[str, Any]], timeout: float = 180) -> Transcript:
    where = client_dir()
    node = shutil.which("node")
    assert node, "node is needed to run the ACP client"
    # `python -m uji acp`, forked by this worker's zygote (tests/forked_uji.py).
    agent = [sys.executable, str(ROOT / "tests" / "forked_uji.py"), "acp"]
    proc = subprocess.run(
        [node, str(where / "client.mjs"), json.dumps(agent), json.dumps(steps)],
        cwd=home.work,
        env=home.env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"client failed:\n{proc.stdout}\n{proc.stderr}"
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    out = Transcript(lines, proc.stderr)
    assert out.of("exit") == [{"kind": "exit", "code": 0}], proc.stderr
    return out


def start(home: Home) -> list[dict[str, Any]]:
    return [{"op": "initialize"}, {"op": "new", "cwd": str(home.work)}]


def test_a_prompt_streams_text_and_thoughts_and_the_session_is_uji_s(home: Home) -> None:
    home.init("")
    home.fake.script(text("Hello from uji, streamed.", reasoning="thinking it over", piece=3, gap=0.02))
    out = drive(home, [*start(home), {"op": "prompt", "text": "say hello"}])
    init = out.result("initialize")
    assert init["protocolVersion"] == 1
    assert init["agentCapabilities"]["loadSession"] is True
    assert init["agentInfo"]["name"] == "uji"
    new = out.result("new")
    modes = new["modes"]
    assert modes["currentModeId"] == "ask"
    assert [m["id"] for m in modes["availableModes"]] == ["ask", "accept_edits", "plan"]
    assert out.result("prompt")["stopReason"] == "end_turn"
    assert out.text() == "Hello from uji, streamed."
    assert len(out.updates("agent_message_chunk")) > 1  # streamed, not sent whole
    assert out.text("agent_thought_chunk") == "thinking it over"
    # What the model was sent, and an ordinary uji session: `uji list` shows it.
    assert home.fake.turn_requests[0].body["messages"][-1] == {"role": "user", "content": "say hello"}
    listed = home.uji("list", "--json", check=True)
    ids = [json.loads(line)["id"] for line in listed.stdout.splitlines()]
    assert ids == [new["sessionId"]]
    saved = home.db_messages(new["sessionId"])
    assert [m["type"] for m in saved] == ["user", "assistant"]


def test_a_permission_request_allowed_makes_the_file_and_rejected_does_not(home: Home) -> None:
    home.init("")
    home.fake.script(
        tool_call("write_file", {"path": "made.txt", "content": "yes\n"}, id="call_a"),
        text("wrote it"),
        tool_call("write_file", {"path": "refused.txt", "content": "no\n"}, id="call_b"),
        text("did not write it"),
    )
    out = drive(
        home,
        [
            *start(home),
            {"op": "prompt", "text": "make made.txt", "answers": ["allow_once"]},
            {"op": "prompt", "text": "make refused.txt", "answers": ["reject"]},
        ],
    )
    assert (home.work / "made.txt").read_text() == "yes\n"
    assert not (home.work / "refused.txt").exists()
    first, second = out.of("permission")
    asked = first["params"]
    assert asked["toolCall"]["toolCallId"] == "call_a"
    assert asked["toolCall"]["title"] == "made.txt"
    kinds = {o["optionId"]: o["kind"] for o in asked["options"]}
    assert kinds == {
        "allow_once": "allow_once",
        "allow_session": "allow_always",
        "allow_always": "allow_always",
        "reject": "reject_once",
    }
    assert second["params"]["toolCall"]["toolCallId"] == "call_b"
    # The calls as the editor shows them: pending, running, then done with their result.
    calls = out.updates("tool_call")
    assert [(c["toolCallId"], c["title"], c["kind"], c["status"]) for c in calls] == [
        ("call_a", "made.txt", "edit", "pending"),
        ("call_b", "refused.txt", "edit", "pending"),
    ]
    assert calls[0]["locations"] == [{"path": str(home.work / "made.txt")}]
    done = {
        u["toolCallId"]: u
        for u in out.updates("tool_call_update")
        if u.get("status") in ("completed", "failed")
    }
    assert done["call_a"]["status"] == "completed"
    diff = next(c for c in done["call_a"]["content"] if c["type"] == "diff")
    assert diff == {
        "type": "diff",
        "path": str(home.work / "made.txt"),
        "newText": "yes\n",
    }  # no oldText: a new file
    assert done["call_b"]["status"] == "failed"
    assert "denied" in done["call_b"]["content"][0]["content"]["text"]
    # What the model was told of each call.
    results = [r.body["messages"][-1] for r in home.fake.turn_requests]
    assert results[1]["role"] == "tool" and results[1]["content"].startswith("created made.txt")
    assert results[3]["role"] == "tool" and results[3]["content"] == "denied: user denied"


def test_cancel_stops_the_turn_as_esc_does(home: Home) -> None:
    home.init("")
    home.fake.script(text("slow " * 400, piece=5, gap=0.05))  # about 20 s if nobody stops it
    out = drive(home, [*start(home), {"op": "prompt", "text": "talk", "cancelOn": "agent_message_chunk"}])
    result = out.result("prompt")
    assert result["stopReason"] == "cancelled"
    print(f"cancel answered after {result['msAfterCancel']} ms")
    saved = home.db_messages(out.result("new")["sessionId"])
    assert saved[-1] == {"type": "error", "text": "interrupted"}


def test_load_tells_a_saved_session_again_and_goes_on_with_it(home: Home) -> None:
    home.init("")
    home.fake.script(tool_call("read_file", {"path": "a.txt"}, id="call_r"), text("it says hi"))
    (home.work / "a.txt").write_text("hi\n")
    first = drive(home, [*start(home), {"op": "prompt", "text": "read a.txt"}])
    session_id = first.result("new")["sessionId"]
    home.fake.script(text("still here"))
    out = drive(
        home,
        [
            {"op": "initialize"},
            {"op": "load", "sessionId": session_id, "cwd": str(home.work)},
            {"op": "prompt", "text": "and now?"},
        ],
    )
    assert out.result("load")["modes"]["currentModeId"] == "ask"
    kinds = [u["sessionUpdate"] for u in out.updates()]
    assert kinds[:4] == ["user_message_chunk", "tool_call", "agent_message_chunk", "agent_message_chunk"]
    assert out.updates("user_message_chunk")[0]["content"]["text"] == "read a.txt"
    call = out.updates("tool_call")[0]
    assert (call["toolCallId"], call["title"], call["status"]) == ("call_r", "a.txt", "completed")
    assert out.result("prompt")["stopReason"] == "end_turn"
    # The model got the whole conversation, the loaded part first.
    messages = home.fake.turn_requests[-1].body["messages"]
    assert [m["role"] for m in messages[1:]] == ["user", "assistant", "tool", "assistant", "user"]
    assert messages[-1]["content"] == "and now?"


def test_modes_map_onto_the_gate_and_bad_input_is_an_error(home: Home) -> None:
    home.init("")
    home.fake.script(tool_call("write_file", {"path": "x.txt", "content": "x"}, id="call_w"), text("ok"))
    out = drive(
        home,
        [
            *start(home),
            {"op": "mode", "mode": "nope"},
            {"op": "mode", "mode": "accept_edits"},
            {"op": "prompt", "text": "write x.txt"},
        ],
    )
    bad = out.of("mode")[0]["error"]
    assert bad["code"] == -32602 and "no mode 'nope'" in json.dumps(bad)
    assert out.of("permission") == []  # accept edits: the write inside the project is allowed
    assert (home.work / "x.txt").read_text() == "x"


def test_mcp_servers_the_client_passes_are_uji_s_tools(home: Home) -> None:
    from tests.test_mcp import SERVER, calls

    home.init("")
    log = home.root / "calls.jsonl"
    home.fake.script(tool_call("t__echo", {"text": "hi"}, id="call_m"), text("ok"))
    server = {"name": "t", "command": sys.executable, "args": [str(SERVER), str(log)], "env": []}
    out = drive(
        home,
        [
            {"op": "initialize"},
            {"op": "new", "cwd": str(home.work), "mcpServers": [server]},
            {"op": "prompt", "text": "echo hi", "answers": ["allow_once"]},
        ],
    )
    assert out.result("prompt")["stopReason"] == "end_turn"
    assert "t__echo" in [t["function"]["name"] for t in home.fake.turn_requests[0].body["tools"]]
    [asked] = out.of("permission")
    assert asked["params"]["toolCall"]["title"] == '{"text":"hi"}'
    assert [c["args"] for c in calls(log)] == [{"text": "hi"}]
    assert home.fake.turn_requests[1].body["messages"][-1]["content"] == "echo: hi"


def test_a_budget_ends_the_prompt_with_its_stop_reason(home: Home) -> None:
    home.init("uji.session.configure({ max_steps = 1 })\n")
    (home.work / "a.txt").write_text("a\n")
    home.fake.script(tool_call("read_file", {"path": "a.txt"}, id="c1"), text("never reached"))
    out = drive(home, [*start(home), {"op": "prompt", "text": "read it"}])
    assert out.result("prompt")["stopReason"] == "max_turn_requests"
    assert len(home.fake.turn_requests) == 1
