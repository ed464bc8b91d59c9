"""The subagent plugin's agent files, chains and commands as the reference documents them
(§5 subagent): agents are markdown files with front matter in `agents/` of the config dir
and `.uji/agents/` of the project; `chain` runs steps in turn with `{previous}`; `/agent`
lists and runs them; `/subagents` lists this session's. Through `uji run` against the
routed fake model of test_subagent: what each child was sent, the answers, the events."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import Home
from tests.fakes.base import status
from tests.fakes.openai_server import text, tool_call
from tests.test_subagent import Routed, _children, _tool_answers, _tools

pytestmark = pytest.mark.timeout(120)

PROVIDER = """
uji.provider.add({{ id = "test", name = "T", wire = "openai-chat", base_url = "{url}",
  models = {{ {{ id = "m" }}, {{ id = "big", reasoning = true, efforts = {{ "low", "high" }} }} }} }})
uji.model.use({{ provider = "test", model = "m" }})
"""

REVIEWER = """---
name: reviewer
description: Reviews code for bugs
tools: [read_file]
model: test/big
effort: high
---
You are REVIEWER-PROMPT: report bugs only.
"""


@pytest.fixture
def fake() -> Iterator[Routed]:
    with Routed() as server:
        yield server


def _setup(home: Home, fake: Routed, options: str = "") -> None:
    home.init(
        PROVIDER.format(url=fake.base_url) + f'require("uji.plugins.subagent").setup({{ {options} }})\n',
        provider=False,
    )


def _agent(folder: object, name: str, body: str) -> None:
    from pathlib import Path

    path = Path(str(folder))
    path.mkdir(parents=True, exist_ok=True)
    (path / name).write_text(body)


def _system(request: object) -> str:
    return str(request.body["messages"][0]["content"])  # type: ignore[attr-defined]


def test_an_agent_file_gives_the_child_its_prompt_tools_model_and_effort(home: Home, fake: Routed) -> None:
    _agent(home.config / "agents", "reviewer.md", REVIEWER)
    _agent(home.config / "agents", "notes.txt", "not an agent: not markdown")
    _setup(home, fake)
    fake.route(
        "PARENT", tool_call("subagent", {"agent": "reviewer", "task": "CHILD-A: review a.py"}), text("ok")
    )
    fake.route("CHILD-A", text("no bugs"))
    run = home.run("PARENT: review")
    assert run.rc == 0, run.stderr

    # The model was told about the agent in the tool's description.
    (tool,) = [t for t in fake.marked("PARENT")[0].body["tools"] if t["function"]["name"] == "subagent"]
    assert "- reviewer: Reviews code for bugs" in tool["function"]["description"]

    (child,) = fake.marked("CHILD-A")
    assert "You are a subagent" in _system(child) and "You are REVIEWER-PROMPT: report bugs only." in _system(
        child
    )
    assert _tools(child) == ["read_file"]
    assert child.body["model"] == "big" and child.body["reasoning_effort"] == "high"
    assert _tool_answers(fake.marked("PARENT")[1])[0].startswith("no bugs")
    ((_, title),) = _children(home.db, run.session_id)
    assert title == "reviewer: CHILD-A: review a.py"
    rows = [e["tasks"] for e in run.of("tasks") if e["tool"] == "subagent"]
    assert rows[0][0]["label"] == "reviewer" and rows[-1][0]["status"] == "done"


def test_an_unknown_agent_and_a_file_without_a_description_are_explained(home: Home, fake: Routed) -> None:
    _agent(home.config / "agents", "broken.md", "---\nname: broken\n---\nno description\n")
    _agent(home.config / "agents", "helper.md", "---\ndescription: Helps\n---\n")
    _setup(home, fake)
    fake.route("PARENT", tool_call("subagent", {"agent": "nobody", "task": "CHILD-A x"}), text("ok"))
    run = home.run("PARENT: ask nobody")
    assert run.rc == 0, run.stderr
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    assert (
        answer == "error: task 1: no agent `nobody` (scope user); agents: helper"
    )  # name from the file name
    broken = home.config / "agents" / "broken.md"
    assert f"subagent: {broken} is not an agent: its front matter has no `description`" in run.notices
    assert fake.marked("CHILD-A") == []


def test_project_agents_need_the_scope_and_a_confirmation(home: Home, fake: Routed) -> None:
    _agent(home.config / "agents", "helper.md", "---\ndescription: the user's helper\n---\nUSER-HELPER\n")
    _agent(
        home.work / ".uji" / "agents",
        "helper.md",
        "---\ndescription: the project's helper\n---\nPROJECT-HELPER\n",
    )

    # scope "user" (the default): the project's file is not read.
    _setup(home, fake)
    fake.route("PARENT", tool_call("subagent", {"agent": "helper", "task": "CHILD-A go"}), text("ok"))
    fake.route("CHILD-A", text("done"))
    assert home.run("PARENT: go").rc == 0
    assert "USER-HELPER" in _system(fake.marked("CHILD-A")[0])

    # scope "both": the project's agent replaces the user's, but nobody can confirm it here.
    _setup(home, fake, 'scope = "both"')
    fake.route("PARENT", tool_call("subagent", {"agent": "helper", "task": "CHILD-B go"}), text("ok"))
    run = home.run("PARENT: go")
    answer = _tool_answers(fake.marked("PARENT")[-1])[0]
    project_file = home.work / ".uji" / "agents" / "helper.md"
    assert answer.startswith(f"error: the project's agent `helper` ({project_file}) was not confirmed")
    assert fake.marked("CHILD-B") == [] and _children(home.db, run.session_id) == []

    # confirm_project = false trusts them.
    _setup(home, fake, 'scope = "both", confirm_project = false')
    fake.route("PARENT", tool_call("subagent", {"agent": "helper", "task": "CHILD-C go"}), text("ok"))
    fake.route("CHILD-C", text("done"))
    assert home.run("PARENT: go").rc == 0
    assert "PROJECT-HELPER" in _system(fake.marked("CHILD-C")[0])


def test_a_chain_hands_each_answer_to_the_next_step(home: Home, fake: Routed) -> None:
    _setup(home, fake, 'on_ask = "allow"')
    (home.config / "init.lua").write_text(
        (home.config / "init.lua").read_text() + 'uji.tool.policy({ run_command = { default = "allow" } })\n'
    )
    (home.work / "sub").mkdir()
    fake.route(
        "PARENT",
        tool_call(
            "subagent",
            {
                "chain": [
                    {"task": "CHILD-A find the bug"},
                    {"task": "CHILD-B fix this: {previous}", "cwd": "sub"},
                ]
            },
        ),
        text("chained"),
    )
    fake.route("CHILD-A", text("the bug is in f()"))
    fake.route("CHILD-B", tool_call("run_command", {"command": "pwd"}), text("fixed f()"))
    run = home.run("PARENT: chain")
    assert run.rc == 0, run.stderr
    (second,) = fake.marked("CHILD-B")[:1]
    assert "CHILD-B fix this: the bug is in f()" in str(second.body["messages"])
    assert _tool_answers(fake.marked("CHILD-B")[1])[0].strip().endswith("/work/sub")  # its cwd
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    assert answer.startswith("fixed f()") and "the bug is in f()" not in answer  # only the last answer
    rows = [e["tasks"] for e in run.of("tasks") if e["tool"] == "subagent"][-1]
    assert [(r["label"], r["status"]) for r in rows] == [("step 1", "done"), ("step 2", "done")]


def test_a_failed_step_stops_the_chain(home: Home, fake: Routed) -> None:
    _setup(home, fake)
    fake.route(
        "PARENT",
        tool_call("subagent", {"chain": [{"task": "CHILD-A a"}, {"task": "CHILD-B b"}]}),
        text("stopped"),
    )
    fake.route("CHILD-A", status(400, {"error": {"message": "CHILD-A-REFUSED"}}))
    run = home.run("PARENT: chain")
    assert run.rc == 0, run.stderr
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    assert answer.startswith(
        "error: step 1 of the chain failed, so it stopped there:\nerror: the subagent failed: "
    )
    assert "CHILD-A-REFUSED" in answer
    assert fake.marked("CHILD-B") == []
    rows = [e["tasks"] for e in run.of("tasks") if e["tool"] == "subagent"][-1]
    assert [r["status"] for r in rows] == ["failed", "queued"]


def test_slash_agent_lists_the_agents_and_runs_one(home: Home, fake: Routed) -> None:
    _agent(home.config / "agents", "reviewer.md", REVIEWER)
    _setup(home, fake)
    listing = home.run("/agent")
    assert listing.rc == 0, listing.stderr
    assert "agents:\n  reviewer — Reviews code for bugs" in listing.notices

    fake.route("CHILD-A", text("two bugs"))
    run = home.run("/agent reviewer CHILD-A: review b.py")
    assert run.rc == 0, run.stderr
    assert "agent reviewer: two bugs\n[subagent session" in "\n".join(run.notices)
    assert "You are REVIEWER-PROMPT" in _system(fake.marked("CHILD-A")[0])
    ((child_id, _),) = _children(home.db, run.session_id)

    # /subagents lists this session's subagents (no screen to pick one on).
    again = home.uji("run", "--json", "--session", run.session_id, "/subagents")
    assert again.rc == 0, again.stderr
    assert f"subagents:\n  reviewer: CHILD-A: review b.py  {child_id}" in again.notices


def test_slash_agent_with_no_agents_says_where_they_go(home: Home, fake: Routed) -> None:
    _setup(home, fake)
    run = home.run("/agent")
    assert run.rc == 0, run.stderr
    assert "no agents: add markdown files to agents/ in the config dir" in run.notices
