"""Sessions that last: crash repair, resuming, many messages, concurrent writers, and
the `uji list` / `uji delete` commands."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess

from tests.conftest import Home
from tests.fakes.openai_server import text, tool_call
from tests.waiting import until
from uji.store.sessions import Store


def test_kill_9_mid_tool_call_then_continue_sees_everything_and_a_repaired_result(home: Home) -> None:
    started = home.work / "started"
    home.init("")
    home.fake.script(tool_call("run_command", {"command": f"touch {started}; sleep 60"}, id="call_k"))
    proc = subprocess.Popen(
        home.command("run", "--json", "run the slow thing"),
        cwd=home.work,
        env=home.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    until(started.exists, what=f"{started} to appear")
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=10)
    session = json.loads(out.splitlines()[0])["id"]
    saved = home.db_messages(session)
    assert [m["type"] for m in saved] == ["user", "assistant"]  # nothing after the kill
    home.fake.script(text("picked up again"))
    run = home.run("carry on", "--session", session)
    assert run.rc == 0 and run.done["text"] == "picked up again"
    body = home.fake.turn_requests[-1].body
    roles = [(m["role"], m.get("content")) for m in body["messages"][1:]]
    assert roles[0] == ("user", "run the slow thing")
    assert roles[1][0] == "assistant"
    assert roles[2] == ("tool", "error: uji stopped before this tool returned a result")
    assert roles[3] == ("user", "carry on")
    saved = home.db_messages(session)
    assert [m["type"] for m in saved] == ["user", "assistant", "tool", "user", "assistant"]
    assert saved[2]["tool_call_id"] == "call_k"


def test_session_ids_are_validated(home: Home) -> None:
    home.init("")
    run = home.uji("run", "--session", "not-an-id", "x")
    assert run.rc == 2 and "--session: no session not-an-id" in run.stderr
    run = home.uji("run", "--session", "01a23800-0000-7000-8000-000000000000", "x")
    assert run.rc == 2


def test_a_5000_message_session_resumes(home: Home) -> None:
    home.init("")
    store = Store(str(home.db))
    sid = store.create_session(str(home.work), "big")
    for i in range(2500):
        store.append(sid, {"type": "user", "text": f"question {i}"})
        store.append(sid, {"type": "assistant", "text": f"answer {i}"})
    store.close()
    home.fake.script(text("still here"))
    run = home.run("and now?", "--session", sid)  # how fast: bench/sessions.py
    assert run.rc == 0 and run.done["text"] == "still here"
    messages = home.fake.turn_requests[-1].body["messages"]
    assert len(messages) == 1 + 5000 + 1
    assert messages[1] == {"role": "user", "content": "question 0"}
    assert messages[-2] == {"role": "assistant", "content": "answer 2499"}


def test_two_runs_on_one_database_lose_nothing(home: Home) -> None:
    home.init('uji.tool.add("t", { policy = "allow", run = function() return "r" end })')
    home.fake.script(*[tool_call("t", {}, id=f"c{i}") for i in range(10)], *[text("ok")] * 4)
    procs = [
        subprocess.Popen(
            home.command("run", "--json", f"job {i}"),
            cwd=home.work,
            env=home.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    for out in outs:
        events = [json.loads(line) for line in out.splitlines()]
        session = events[0]["id"]
        shown = [e["message"] for e in events if e["type"] == "message"]
        saved = home.db_messages(session)
        assert saved == [{k: v for k, v in m.items() if k != "seq"} for m in shown]
        seqs = [m["seq"] for m in shown]
        assert seqs == list(range(1, len(seqs) + 1))


def test_list_and_delete(home: Home) -> None:
    home.init("")
    home.fake.script(text("a"), text("b"), text("c"))
    first = home.run("first session", check=True)
    second = home.run("second session", check=True)
    child = home.run("a child", "--parent", first.session_id, check=True)
    listing = home.uji("list", "--runs")
    lines = listing.stdout.splitlines()
    assert listing.rc == 0 and len(lines) == 2  # children are not listed
    assert lines[0].startswith("second session") and lines[0].endswith(second.session_id)
    assert lines[1].startswith("first session") and lines[1].endswith(first.session_id)
    gone = home.uji("delete", first.session_id)
    assert gone.rc == 0
    con = sqlite3.connect(home.db)
    ids = {r[0] for r in con.execute("SELECT id FROM sessions")}
    assert ids == {second.session_id}  # the child went with its parent
    assert con.execute(
        "SELECT COUNT(*) FROM messages WHERE session_id IN (?, ?)", (first.session_id, child.session_id)
    ).fetchone() == (0,)
    assert home.uji("delete", first.session_id).rc == 1
    assert home.uji("delete", "nope").rc == 2
