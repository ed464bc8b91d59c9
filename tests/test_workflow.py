"""The workflow plugin (reference §5 workflow): a Lua script orchestrating subagents with
agent(), parallel(), pipeline(), phase(), log() and args, its result, saved workflows,
/workflow and /workflows, resume and the sandbox. Through `uji run` against the routed
fake model of test_subagent: what each agent was sent, and what the model got back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import drip, text, tool_call
from tests.test_subagent import Routed, _tool_answers

pytestmark = pytest.mark.timeout(120)

SETUP = 'require("uji.plugins.subagent").setup{}\nrequire("uji.plugins.workflow").setup{}\n'

SCRIPT = """
meta = { name = "review", description = "two reviews, then a summary", phases = { "review", "sum" } }
phase("review")
local answers = parallel({
  function() return agent("CHILD-A review the parser", { label = "parser" }) end,
  function() return agent("CHILD-B review the lexer", { label = "lexer" }) end,
})
phase("sum")
log("reviews in:", #answers)
local summary = agent("CHILD-C summarise: " .. answers[1]:match("^[^\\n]*") .. " / " .. answers[2]:match("^[^\\n]*"))
return { summary = summary:match("^[^\\n]*"), args = args }
"""


@pytest.fixture
def fake() -> Iterator[Routed]:
    with Routed() as server:
        yield server


def test_a_script_runs_agents_in_parallel_then_in_turn_and_returns_json(home: Home, fake: Routed) -> None:
    home.init(SETUP)
    fake.route("PARENT", tool_call("workflow", {"script": SCRIPT, "args": {"n": 1}}), text("reviewed"))
    fake.route("CHILD-A", text("parser ok"))
    fake.route("CHILD-B", text("lexer slow"))
    fake.route("CHILD-C", text("all fine"))
    fake.together = {"CHILD-A", "CHILD-B"}
    run = home.run("PARENT: review", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    assert fake.met  # the two reviews ran at the same time
    assert "CHILD-C summarise: parser ok / lexer slow" in str(fake.marked("CHILD-C")[0].body["messages"])
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    head, body = answer.split("\n", 1)
    assert head.startswith("workflow wf_") and head.endswith(" done:")
    assert json.loads(body) == {"summary": "all fine", "args": {"n": 1}}
    rows = [e["tasks"] for e in run.of("tasks") if e["tool"] == "workflow"][-1]
    assert [(r["label"], r["group"], r["status"]) for r in rows] == [
        ("parser", "review", "done"),
        ("lexer", "review", "done"),
        ("CHILD-C summarise: parser ok / lexer slow", "sum", "done"),
    ]
    assert "reviews in: 2" in [e["line"] for e in run.of("progress") if e["tool"] == "workflow"]


def test_the_sandbox_has_no_files_processes_or_modules(home: Home, fake: Routed) -> None:
    home.init(SETUP)
    for i, line in enumerate(
        ['io.open("x", "w")', 'os.execute("touch x")', 'require("uji")', "getmetatable('').__index = {}"]
    ):
        fake.route(
            "PARENT", tool_call("workflow", {"script": f"meta = {{ name = 'bad' }}\n{line}\n"}), text("ok")
        )
        run = home.run("PARENT: escape", "--on-ask", "allow")
        answer = _tool_answers(fake.marked("PARENT")[2 * i + 1])[0]
        assert answer.startswith("error: workflow wf_") and "the script failed: " in answer, answer
    assert not (home.work / "x").exists()
    assert run.rc == 0


def test_saved_workflows_run_by_name_and_from_the_commands_and_resume_reuses_answers(
    home: Home, fake: Routed
) -> None:
    (home.config / "workflows").mkdir()
    (home.config / "workflows" / "hello.lua").write_text(
        'meta = { name = "hello" }\nreturn agent("CHILD-A hello " .. tostring(args))\n'
    )
    home.init(SETUP)
    listing = home.run("/workflow")
    assert "workflows:\n  hello" in listing.notices

    fake.route("CHILD-A", text("hi there"), text("hi again"))
    run = home.run("/workflow hello world")
    assert run.rc == 0, run.stderr
    (said,) = [n for n in run.notices if n.startswith("workflow wf_")]
    assert said.endswith(": hi there\n[subagent session " + said.split("[subagent session ")[1])
    assert "CHILD-A hello world" in str(fake.marked("CHILD-A")[0].body["messages"])

    # By name from the model, twice in one session: the second resumes the first's answers.
    fake.route(
        "PARENT",
        tool_call("workflow", {"name": "hello", "args": "x"}, id="c1"),
        text("first"),
    )
    first = home.run("PARENT: run hello", "--on-ask", "allow")
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    run_id = answer.split()[1]
    assert answer.startswith(f"workflow {run_id} done:\nhi again")
    asked = len(fake.marked("CHILD-A"))
    fake.route(
        "PARENT",
        tool_call("workflow", {"name": "hello", "args": "x", "resume": run_id}, id="c2"),
        text("second"),
    )
    again = home.run("PARENT: again", "--session", first.session_id, "--on-ask", "allow")
    assert again.rc == 0, again.stderr
    assert _tool_answers(fake.marked("PARENT")[-1])[-1].split("\n", 1)[1].startswith("hi again")
    assert len(fake.marked("CHILD-A")) == asked  # no agent ran again


async def test_workflows_on_the_screen_stops_a_run_opens_an_agents_session_and_edits_it(
    tmp_path: Path, fake: Routed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reference §5 workflow: /workflows shows the runs and their details, opens an agent's
    session, edits the saved workflow and stops a run."""
    from tests.test_tui_support import SIZE, make_app, ready, send, shows, type_text, until

    record = tmp_path / "editor.txt"
    editor = tmp_path / "editor.sh"
    editor.write_text(f'#!/bin/sh\necho "$@" >> {record}\n')
    editor.chmod(0o755)
    monkeypatch.setenv("UJI_EDITOR", str(editor))
    fake.route("PARENT", tool_call("workflow", {"name": "two"}), text("parent done"))
    fake.route("CHILD-A", text("alpha answer"))
    fake.route("CHILD-B", drip(0.2))  # keep-alives, no answer: it runs until stopped
    app = make_app(
        tmp_path, fake, SETUP.replace('workflow").setup{}', 'workflow").setup{ policy = "allow" }')
    )
    saved = tmp_path / "config" / "workflows" / "two.lua"
    saved.parent.mkdir()
    saved.write_text(
        'meta = { name = "two" }\n'
        'local a = agent("CHILD-A quick", { label = "quick" })\n'
        'local b, err = agent("CHILD-B slow", { label = "slow" })\n'
        'return a:match("^[^\\n]*") .. " / " .. tostring(b or err)\n'
    )

    async def choose(what: str) -> None:
        await send(pilot, "/workflows")
        await shows(pilot, "Workflow runs")
        await pilot.press("enter")  # the newest run
        await shows(pilot, what)
        await type_text(pilot, what)  # the actions filter as typed
        await pilot.press("enter")

    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "PARENT: run two")
        await until(pilot, lambda: fake.marked("CHILD-B"), what="the slow agent to start")
        await choose("stop this run")
        await shows(pilot, "stopped")
        await shows(pilot, "parent done")
        answer = _tool_answers(fake.marked("PARENT")[1])[0]
        assert answer.startswith("workflow wf_") and " stopped:\nalpha answer / the subagent failed" in answer
        await choose("open quick's session")
        screen = await shows(pilot, "> CHILD-A quick")
        assert "alpha answer" in screen
        await pilot.press("escape")
        await choose("edit")
        await until(pilot, lambda: record.exists(), what="the editor to run")
        assert record.read_text().strip() == str(saved)
