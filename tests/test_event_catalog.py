"""The catalog of notifications and hooks tells the truth: what Lua handlers receive has
exactly the declared fields with the declared types; the `call` line of `uji run --json`
spells every part of a decision; the generated reference and LuaLS file are up to date."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_compaction import long_session, small
from tests.test_tui_support import SIZE, make_app, ready, send, until
from uji.agent.approval import Decision
from uji.events.catalog import BY_NAME, CATALOG, HOOKS, NOTIFICATIONS
from uji.events.jsonl import json_line
from uji.events.stream import CallDecided
from uji.tools.policy import Verdict

ROOT = Path(__file__).resolve().parents[1]

# Every handler reports its event's payload as `payload <event> key=luatype ...`, keys sorted.
RECORD = """
local function record(name)
  uji.on(name, function(e)
    local parts = {}
    for k, v in pairs(e) do parts[#parts + 1] = k .. "=" .. type(v) end
    table.sort(parts)
    uji.notify("payload " .. name .. " " .. table.concat(parts, " "))
  end)
end
for _, name in ipairs({ NAMES }) do record(name) end
"""
RECORD_ALL = (
    RECORD
    + """
uji.provider.add({ id = "test2", name = "T2", wire = "openai-chat", base_url = "http://127.0.0.1:9", models = { "z" } })
uji.model.use({ provider = "test2", model = "z" })
uji.model.use({ provider = "test", model = "m" })
uji.tool.add("queue_one", { policy = "allow", run = function() uji.session.submit("one more"); return "queued" end })
uji.command.add("go", function(args) uji.session.set_title("Titled"); uji.session.submit(args) end)
"""
)


def lua_type_of(declared: str) -> str:
    """What Lua's type() gives for a value of the declared LuaLS type."""
    if declared.startswith('"') or declared == "string":
        return "string"
    if declared in ("integer", "number"):
        return "number"
    if declared.startswith("table"):
        return "table"
    return declared


def expected(name: str) -> str:
    spec = BY_NAME[name]
    parts = [f"{f.name}={lua_type_of(spec.lua_type(f.name))}" for f in spec.fields] + ["event=string"]
    return f"payload {name} " + " ".join(sorted(parts))


def test_lua_payloads_have_exactly_the_declared_fields(home: Home) -> None:
    names = ", ".join(f'"{spec.name}"' for spec in CATALOG)
    home.init(RECORD_ALL.replace("NAMES", names))
    (home.work / "a.txt").write_text("a")
    home.fake.script(tool_call("read_file", {"path": "a.txt"}), tool_call("queue_one", {}), text("done"))
    first = home.run("/go hello")
    assert first.rc == 0, first.stderr
    home.fake.script(text("again"))
    second = home.run("more", "--session", first.session_id)
    assert second.rc == 0, second.stderr
    home.fake.script(tool_call("read_file", {"path": "a.txt"}))
    third = home.run("read it", "--max-steps", "1")  # a budget stops it
    assert third.rc == 3, third.stderr
    seen = [n for n in first.notices + second.notices + third.notices if n.startswith("payload ")]
    names_seen = {line.split(" ")[1] for line in seen}
    # A `uji run` reaches all but these: compaction and the screen's `!` commands are
    # below; before_quit (no fields) is in test_tui_interrupt.py.
    assert names_seen == {s.name for s in CATALOG} - {
        "shell_started",
        "shell_finished",
        "before_quit",
        "session_compacted",
    }
    for line in seen:
        assert line == expected(line.split(" ")[1])


def test_compaction_payload(home: Home) -> None:
    small(home, RECORD.replace("NAMES", '"session_compacted"'))
    sid = long_session(home)
    home.fake.script(text("continuing"))
    run = home.run("next step", "--session", sid)
    assert run.rc == 0, run.stderr
    assert [n for n in run.notices if n.startswith("payload ")] == [expected("session_compacted")]


async def test_the_screens_notifications_have_the_declared_fields(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake, RECORD.replace("NAMES", '"shell_started", "shell_finished"'))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "!exit 3")

        def payloads() -> list[str]:
            notices = (e.data["text"] for e in app.transcript.entries if e.kind == "notice")
            return [n for n in notices if n.startswith("payload ")]

        await until(pilot, lambda: len(payloads()) == 2, what="both shell notifications")
        assert payloads() == [expected("shell_started"), expected("shell_finished")]


def test_every_catalog_field_has_a_lua_type() -> None:
    assert {s.name for s in NOTIFICATIONS} & {s.name for s in HOOKS} == set()
    for spec in CATALOG:
        assert spec.doc.endswith("."), spec.name
        for f in spec.fields:
            assert spec.lua_type(f.name)
        if spec.fold == "chain":
            assert spec.chained in {f.name for f in spec.fields}


def test_the_call_line_spells_every_part_of_a_decision() -> None:
    verdict = Verdict("ask", "rule", rule="git *", origin="init.lua:3", subject="git push", form="~/x")
    extra = {"hook": "guard", "hook_origin": None, "question": "Run it?", "body": "git push"}
    decision = Decision(True, "user", verdict=verdict, extra=dict(extra, asked_by="hook", remember="session"))
    line = json_line(CallDecided("c1", "run_command", "git push", "run", decision.outcome()))
    assert line is not None
    assert list(line.items()) == [
        ("type", "call"),
        ("id", "c1"),
        ("name", "run_command"),
        ("subject", "git push"),
        ("verb", "run"),
        ("decision", "allow"),
        ("by", "user"),
        ("rule", "git *"),
        ("source", "init.lua:3"),
        ("part", "git push"),
        ("basis", "rule"),
        ("form", "~/x"),
        ("policy", "ask"),
        ("hook", "guard"),
        ("hook_origin", None),
        ("question", "Run it?"),
        ("body", "git push"),
        ("asked_by", "hook"),
        ("remember", "session"),
    ]
    remembered = Decision(False, "policy", "no", Verdict("deny", "remembered", rule="x", note="why"))
    line = json_line(CallDecided("c2", "t", "s", "t", remembered.outcome()))
    assert line == {
        "type": "call",
        "id": "c2",
        "name": "t",
        "subject": "s",
        "verb": "t",
        "decision": "deny",
        "by": "policy",
        "rule": "x",
        "unfixed": "why",
        "basis": "remembered",
        "remembered": True,
        "policy": "deny",
        "reason": "no",
    }


def test_the_generated_reference_and_luals_file_are_up_to_date() -> None:
    from uji.devtools.gen_docs import stale

    assert stale(ROOT) == [], "run: python -m uji.devtools.gen_docs"


def test_the_shipped_luals_file_types_every_event_for_uji_on() -> None:
    meta = (ROOT / "src" / "uji" / "lua" / "meta" / "uji.lua").read_text()
    assert meta.startswith("---@meta")
    for spec in CATALOG:
        assert f"---@class uji.event.{spec.name}\n" in meta
        assert f'---@overload fun(event: "{spec.name}", handler: fun(e: uji.event.{spec.name})' in meta
