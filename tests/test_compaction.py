"""Compaction against the fake server with a small context window."""

from __future__ import annotations

import json

from tests.conftest import Home
from tests.fakes.openai_server import status, text, tool_call
from uji.agent.messages import SUMMARY_HEAD
from uji.store.sessions import Store

SMALL_MODEL = """
uji.provider.add({{ id = "test", name = "Test", wire = "openai-chat", base_url = "{base_url}",
  models = {{ {{ id = "m", context = 4000, output = 1000 }} }} }})
uji.model.use({{ provider = "test", model = "m" }})
"""


def small(home: Home, extra: str = "") -> None:
    home.init(SMALL_MODEL.format(base_url=home.fake.base_url) + extra, provider=False)


def long_session(home: Home, rounds: int = 12) -> str:
    """A session well over the 3,000 usable tokens, with tool calls and their results."""
    store = Store(str(home.db))
    sid = store.create_session(str(home.work), "long")
    for i in range(rounds):
        store.append(sid, {"type": "user", "text": f"step {i}: " + "please look " * 40})
        args = json.dumps({"path": f"src/file{i}.py"})
        store.append(
            sid,
            {
                "type": "assistant",
                "text": "",
                "tool_calls": [{"id": f"c{i}", "name": "read_file", "arguments": args}],
            },
        )
        store.append(
            sid, {"type": "tool", "tool_call_id": f"c{i}", "name": "read_file", "content": "x = 1\n" * 100}
        )
        store.append(sid, {"type": "assistant", "text": f"done with step {i}"})
    store.close()
    return sid


def assert_no_orphan_results(messages: list[dict]) -> None:
    called = set()
    for m in messages:
        for c in m.get("tool_calls") or []:
            called.add(c["id"])
        if m["role"] == "tool":
            assert m["tool_call_id"] in called, f"a tool result without its call: {m}"


def test_compaction_before_a_turn(home: Home) -> None:
    small(home)
    sid = long_session(home)
    home.fake.script(text("continuing"))
    run = home.run("next step", "--session", sid)
    assert run.rc == 0, run.stderr
    (side,) = home.fake.side_requests
    system = side.body["messages"][0]["content"]
    assert "## Goal" in system and "## Next Steps" in system and "verbatim" in system
    folded = side.body["messages"][1]["content"]
    assert "[user]\nstep 0:" in folded and "[read_file]" in folded
    assert "tools" not in side.body
    turn = home.fake.turn_requests[-1].body["messages"]
    summary = turn[1]
    assert summary["role"] == "user" and summary["content"].startswith(SUMMARY_HEAD)
    assert "SUMMARY OF EARLIER WORK" in summary["content"]
    assert "Files touched so far: src/file0.py" in summary["content"]
    assert turn[-1] == {"role": "user", "content": "next step"}
    assert len(turn) < 2 + 12 * 4
    assert_no_orphan_results(turn)
    saved = home.db_messages(sid)
    (marker,) = [m for m in saved if m["type"] == "compaction"]
    assert marker["summary"] == "SUMMARY OF EARLIER WORK"
    assert marker["files"][0] == "src/file0.py"
    assert isinstance(marker["through"], int)


def test_compaction_mid_turn(home: Home) -> None:
    small(
        home,
        'uji.tool.add("big", { policy = "allow", run = function() return string.rep("data ", 3000) end })',
    )
    home.fake.script(tool_call("big", {}, id="b1"), tool_call("big", {}, id="b2"), text("fits now"))
    run = home.run("fill it up")
    assert run.rc == 0 and run.done["text"] == "fits now"
    assert "context filled up mid-turn; compacted to continue" in run.notices
    assert len(home.fake.side_requests) >= 1
    last = home.fake.turn_requests[-1].body["messages"]
    assert last[1]["content"].startswith(SUMMARY_HEAD)
    assert_no_orphan_results(last)


def test_a_failed_compaction_sends_the_full_context(home: Home) -> None:
    small(home)
    sid = long_session(home)
    home.fake.side_calls = False  # the summary request takes a script step: make it fail
    home.fake.script(status(400, {"error": {"message": "nope"}}), text("went on anyway"))
    run = home.run("next", "--session", sid)
    assert run.rc == 0 and run.done["text"] == "went on anyway"
    assert any(n.startswith("could not compact; sending the full context") for n in run.notices)
    turn = home.fake.turn_requests[-1].body["messages"]
    assert turn[1] == {"role": "user", "content": "step 0: " + "please look " * 40}


def test_compact_from_lua(home: Home) -> None:
    small(
        home,
        'uji.command.add("squash", function() local ok, why = uji.session.compact(); uji.notify("compact " .. tostring(ok) .. " " .. tostring(why)) end)',
    )
    sid = long_session(home, rounds=3)
    run = home.run("/squash", "--session", sid)
    assert "compact true nil" in run.notices
    saved = home.db_messages(sid)
    assert saved[-1]["type"] == "compaction"


def test_compaction_can_be_turned_off(home: Home) -> None:
    small(home, "uji.context.configure({ compaction = { enabled = false } })")
    sid = long_session(home)
    home.fake.script(text("no compaction"))
    run = home.run("next", "--session", sid)
    assert run.rc == 0 and home.fake.side_requests == []


def test_a_resume_after_compaction_sends_what_the_running_session_would(home: Home) -> None:
    """A resume loads from the latest checkpoint on; the model gets the same messages as
    the session that compacted would have sent next (summary, kept part, new turn)."""
    small(home)
    sid = long_session(home)
    home.fake.script(text("continuing"))
    assert home.run("next step", "--session", sid).rc == 0
    first = home.fake.turn_requests[-1].body["messages"]
    assert first[1]["content"].startswith(SUMMARY_HEAD)
    home.fake.script(text("still going"))
    run = home.run("again", "--session", sid)
    assert run.rc == 0, run.stderr
    second = home.fake.turn_requests[-1].body["messages"]
    assert second[:-2] == first
    assert second[-2:] == [
        {"role": "assistant", "content": "continuing"},
        {"role": "user", "content": "again"},
    ]
    assert len(home.fake.side_requests) == 1  # no second compaction was needed
    # The folded messages are still in the store, whole.
    saved = home.db_messages(sid)
    assert len(saved) == 12 * 4 + 5  # 48, the compaction and the two turns
    assert saved[0]["text"].startswith("step 0:")


def test_lua_reads_folded_messages_from_the_store_in_pages(home: Home) -> None:
    small(
        home,
        """
        uji.command.add("pages", function()
          local all = uji.session.messages()
          uji.notify("all " .. #all .. " first " .. all[1].seq .. " " .. all[1].type .. " last " .. all[#all].type)
          local page = uji.session.messages({ before = 5, limit = 2 })
          uji.notify("page " .. #page .. " " .. page[1].seq .. " " .. page[2].seq .. " " .. page[1].text)
          local ok, err = pcall(uji.session.messages, { limit = -1 })
          uji.notify("bad limit " .. tostring(ok) .. " " .. err)
        end)
        """,
    )
    sid = long_session(home, rounds=12)
    home.fake.script(text("continuing"))
    assert home.run("next step", "--session", sid).rc == 0
    total = len(home.db_messages(sid))
    run = home.run("/pages", "--session", sid)
    assert run.rc == 0, run.stderr
    assert f"all {total} first 1 user last assistant" in run.notices
    assert "page 2 3 4 " + "x = 1\n" * 100 in run.notices
    (bad,) = [n for n in run.notices if n.startswith("bad limit")]
    assert bad.startswith("bad limit false") and "limit must be a whole number" in bad


def test_a_cut_between_parallel_tool_calls_keeps_both_results_with_their_call(home: Home) -> None:
    # The newest results are two of one message's parallel calls, the second big enough
    # that the kept part (750 tokens here) would begin between them: the cut goes back to
    # their call, and the model still gets the call and both results.
    small(home)
    sid = long_session(home, rounds=6)
    store = Store(str(home.db))
    store.append(sid, {"type": "user", "text": "read both"})
    store.append(
        sid,
        {
            "type": "assistant",
            "text": "",
            "tool_calls": [
                {"id": "pa", "name": "read_file", "arguments": json.dumps({"path": "a.py"})},
                {"id": "pb", "name": "read_file", "arguments": json.dumps({"path": "b.py"})},
            ],
        },
    )
    store.append(sid, {"type": "tool", "tool_call_id": "pa", "name": "read_file", "content": "RESULT-A"})
    store.append(
        sid,
        {"type": "tool", "tool_call_id": "pb", "name": "read_file", "content": "RESULT-B " + "b = 2\n" * 600},
    )
    store.close()
    home.fake.script(text("continuing"))
    run = home.run("next step", "--session", sid)
    assert run.rc == 0, run.stderr
    assert len(home.fake.side_requests) == 1  # it did compact
    turn = home.fake.turn_requests[-1].body["messages"]
    assert turn[1]["content"].startswith(SUMMARY_HEAD)
    calls = [m for m in turn if m.get("tool_calls")]
    assert [[c["id"] for c in m["tool_calls"]] for m in calls] == [["pa", "pb"]]
    results = [(m["tool_call_id"], m["content"][:8]) for m in turn if m["role"] == "tool"]
    assert results == [("pa", "RESULT-A"), ("pb", "RESULT-B")]
    assert_no_orphan_results(turn)
    # What was folded is the older rounds, not the parallel calls.
    folded = home.fake.side_requests[0].body["messages"][1]["content"]
    assert "RESULT-A" not in folded and "step 0:" in folded
