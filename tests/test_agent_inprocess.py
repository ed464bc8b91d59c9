"""The agent loop in-process against the fake server: titles, queue steering, context
accounting — things `uji run` does not show directly."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROVIDER_LUA
from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.waiting import until_async
from uji.agent.loop import Agent, TurnOptions
from uji.agent.titles import sanitize
from uji.app import App
from uji.events.stream import AgentEvent, Delta, MessageSaved, QueueChanged, SessionTitled
from uji.headless import auto_approver
from uji.paths import resolve


async def make_agent(
    tmp_path: Path, fake: FakeOpenAI, lua: str = "", **options: Any
) -> tuple[App, Agent, list]:
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    (cfg / "init.lua").write_text(PROVIDER_LUA.format(base_url=fake.base_url) + lua)
    notices: list[str] = []
    app = App(resolve(str(cfg), str(tmp_path / "data")), cwd=str(tmp_path), notice=notices.append)
    await app.load_config()
    events: list[AgentEvent] = []
    sid = app.store.create_session(app.cwd)
    agent = Agent(app.turn_services(), sid, events.append, auto_approver("allow"), TurnOptions(**options))
    app.frontend.agent = agent
    return app, agent, events


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ("Fix the login bug", "Fix the login bug"),
        ('"Refactor parser."', "Refactor parser"),
        ("\n\n## Add tests!\nmore", "Add tests"),
        ("- * Wow?", "Wow"),
        ("x" * 100, "x" * 60),
    ],
)
def test_title_sanitising(answer: str, title: str) -> None:
    assert sanitize(answer) == title


async def test_the_first_message_gets_a_title_from_a_side_request(tmp_path: Path, fake: FakeOpenAI) -> None:
    app, agent, events = await make_agent(tmp_path, fake, auto_title=True)
    fake.script(text("hello"), text("again"))
    await agent.turn("please fix the flaky login test in auth.py")
    await asyncio.wait_for(agent.titler.task, 5)  # type: ignore[arg-type]
    assert app.store.get_session(agent.session_id)["title"] == "Title"
    (side,) = fake.side_requests
    assert side.body["messages"][-1]["content"] == "please fix the flaky login test in auth.py"
    assert "6 words" in side.body["messages"][0]["content"]
    assert SessionTitled("Title") in events
    await agent.turn("second message")
    assert len(fake.side_requests) == 1  # only the first message is titled
    await app.close()


async def test_queued_messages_are_steered_in_one_per_model_call(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.tool.add("queue_two", { policy = "allow", run = function()
      uji.session.submit("extra one"); uji.session.submit("extra two"); return "queued"
    end })
    """
    app, agent, events = await make_agent(tmp_path, fake, lua)
    app.frontend.on_submit = agent.steering.enqueue
    fake.script(tool_call("queue_two", {}), text("got one"), text("got two"))
    result = await agent.turn("go")
    assert result.text == "got two"
    second, third = (r.body["messages"] for r in fake.turn_requests[1:3])
    assert second[-2]["role"] == "tool" and second[-1] == {"role": "user", "content": "extra one"}
    assert third[-1] == {"role": "user", "content": "extra two"}
    assert [e.count for e in events if isinstance(e, QueueChanged)] == [1, 2, 1, 0]
    await app.close()


async def test_a_steered_in_message_gets_budgets_of_its_own(tmp_path: Path, fake: FakeOpenAI) -> None:
    # Budgets bound what one prompt leads to: three queued prompts answered in one turn
    # are four prompts of one step each, not a turn of four steps over max_steps = 2.
    lua = """
    uji.session.configure({ max_steps = 2 })
    uji.tool.add("queue_three", { policy = "allow", run = function()
      for i = 1, 3 do uji.session.submit("extra " .. i) end
      return "queued"
    end })
    """
    app, agent, events = await make_agent(tmp_path, fake, lua)
    app.frontend.on_submit = agent.steering.enqueue
    fake.script(tool_call("queue_three", {}), text("one"), text("two"), text("three"))
    result = await agent.turn("go")
    assert result.error is None and result.budget is None
    assert result.text == "three" and len(fake.turn_requests) == 4
    assert fake.turn_requests[3].body["messages"][-1] == {"role": "user", "content": "extra 3"}
    assert not [e for e in events if type(e).__name__ == "BudgetReached"]
    await app.close()


async def test_a_steered_in_message_is_held_to_its_budgets_too(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.session.configure({ max_steps = 2 })
    uji.tool.add("queue_one", { policy = "allow", run = function() uji.session.submit("more") return "ok" end })
    uji.tool.add("again", { policy = "allow", run = function() return "again" end })
    """
    app, agent, _ = await make_agent(tmp_path, fake, lua)
    app.frontend.on_submit = agent.steering.enqueue
    fake.script(
        tool_call("queue_one", {}, id="q"),
        *[tool_call("again", {}, id=f"a{i}") for i in range(3)],
        text("never"),
    )
    result = await agent.turn("go")
    # "go": its call, then "more" steered in: two steps of its own, then its budget.
    assert result.budget == "max_steps" and len(fake.turn_requests) == 3
    assert fake.turn_requests[1].body["messages"][-1] == {"role": "user", "content": "more"}
    await app.close()


async def test_context_is_anchored_on_the_reported_input(tmp_path: Path, fake: FakeOpenAI) -> None:
    from tests.fakes.openai_server import make_usage

    app, agent, _ = await make_agent(tmp_path, fake)
    before = agent.meter.context()
    assert before["window"] == 100000 and before["used"] == 0
    fake.script(text("an answer of some length", usage=make_usage(prompt=5000, completion=7)))
    await agent.turn("hello")
    after = agent.meter.context()["used"]
    # 5,000 reported for the request, plus the estimate of the answer saved after it.
    assert after == 5000 + -(-len("an answer of some length") // 4)
    await app.close()


async def test_an_interrupt_during_streaming_keeps_the_partial_text(tmp_path: Path, fake: FakeOpenAI) -> None:
    app, agent, events = await make_agent(tmp_path, fake)
    fake.script(text("slow " * 200, piece=5, gap=0.02))
    task = asyncio.get_running_loop().create_task(agent.turn("talk"))
    await until_async(lambda: any(isinstance(e, Delta) for e in events), what="the first delta")
    task.cancel()
    result = await task
    assert result.interrupted
    saved = app.store.messages(agent.session_id)
    assert saved[1]["type"] == "assistant" and saved[1]["text"].startswith("slow")
    assert saved[-1]["type"] == "error" and saved[-1]["text"] == "interrupted"
    assert fake.wait_for_drops(1)  # the HTTP connection was dropped
    await app.close()


async def test_deltas_reach_the_screen_whole_in_order_and_before_the_saved_message(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    app, agent, events = await make_agent(tmp_path, fake)
    thought = "".join(f"t{i} " for i in range(1000))
    answer = "".join(f"a{i} " for i in range(2000))
    fake.script(text(answer, reasoning=thought, piece=2))
    result = await agent.turn("go")
    assert result.text == answer
    deltas = [e for e in events if isinstance(e, Delta)]
    kinds = [d.kind for d in deltas]
    assert kinds == sorted(kinds, key=["reasoning", "text"].index)  # all the reasoning came first
    assert "".join(d.text for d in deltas if d.kind == "reasoning") == thought
    assert "".join(d.text for d in deltas if d.kind == "text") == answer
    # The deltas of one network read go out as one event: far fewer than 2,500 deltas.
    assert len(deltas) < 250
    saved = next(i for i, e in enumerate(events) if isinstance(e, MessageSaved) and e.type == "assistant")
    assert max(i for i, e in enumerate(events) if isinstance(e, Delta)) < saved
    await app.close()


async def test_an_interrupt_shows_every_delta_it_saves(tmp_path: Path, fake: FakeOpenAI) -> None:
    app, agent, events = await make_agent(tmp_path, fake)
    fake.script(text("slow " * 200, piece=5, gap=0.01))
    task = asyncio.get_running_loop().create_task(agent.turn("talk"))
    await until_async(lambda: len([e for e in events if isinstance(e, Delta)]) >= 3, what="three deltas")
    task.cancel()
    assert (await task).interrupted
    saved = next(e for e in events if isinstance(e, MessageSaved) and e.type == "assistant")
    shown = [e for e in events[: events.index(saved)] if isinstance(e, Delta)]
    assert "".join(d.text for d in shown) == saved.text
    assert not [e for e in events[events.index(saved) :] if isinstance(e, Delta)]
    await app.close()
