"""`/context` and `uji.context.parts()`: every part of the next request, the conversation
included, with a total that matches the provider's own count of that request.

The fake here reports usage honestly and deterministically: a request's input tokens are
the characters of the JSON of its messages and tools, / 4 (rounded up), which is not what
uji estimates (uji counts the text it sends, without the JSON around it), as a real
tokenizer is not; uji's calibration on the last request's count has to close the gap."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.base import Recorded, Step
from tests.fakes.openai_server import FakeOpenAI, make_usage, text, tool_call
from uji.agent.window import Calibration


def counted(body: dict[str, object]) -> int:
    """What the fake reports as a request's input: characters of its JSON / 4."""
    return math.ceil(len(json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))) / 4)


class Counting(FakeOpenAI):
    def _tail(self, request: Recorded, step: Step) -> list[bytes]:
        body = request.body if isinstance(request.body, dict) else {}
        return super()._tail(request, replace(step, usage=make_usage(counted(body), 3)))


@pytest.fixture
def counting() -> Iterator[Counting]:
    with Counting() as server:
        yield server


def rows_of(screen: str) -> dict[str, tuple[int, str]]:
    """The /context table: name -> (tokens, note)."""
    block = screen[screen.rindex("Context (tokens,") :]
    out = {}
    for m in re.finditer(r"^\W*(\S.*?)\s{2,}([\d,]+)(?:\s{2}(.*?))?\s*$", block, re.M):
        out[m.group(1)] = (int(m.group(2).replace(",", "")), m.group(3) or "")
    return out


PROSE = "".join(f'Line {i}: "quoted" text, with a tab\tand more words to read.\n' for i in range(150))


async def test_context_total_matches_the_next_requests_count(tmp_path: Path, counting: Counting) -> None:
    from tests.test_tui_support import SIZE, idle, make_app, ready, send, shows

    work = tmp_path / "work"
    work.mkdir()
    (work / "AGENTS.md").write_text("Answer briefly. " * 40)
    (work / "data.txt").write_text(PROSE)
    counting.script(
        tool_call("read_file", {"path": "data.txt"}),
        text("It holds 150 numbered lines. " * 10),
        text("A longer answer, with details. " * 60),
        text("ok"),
    )
    app = make_app(tmp_path, counting, 'uji.context.add("notes", function() return string.rep("n", 800) end)')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "what is in data.txt?")
        await idle(pilot)
        await send(pilot, "tell me more")
        await idle(pilot)
        await send(pilot, "/context")
        screen = await shows(pilot, "the provider's count of the last request")
        rows = rows_of(screen)
        assert {"base prompt", "tools (4)", "AGENTS.md", "notes", "conversation", "total"} <= set(rows), (
            screen
        )
        assert rows["conversation"][1] == "6 messages"  # two questions, a call, its result, two answers
        assert rows["conversation"][0] > rows["notes"][0] > 0
        total = rows["total"][0]
        assert abs(total - sum(v for k, (v, _) in rows.items() if k != "total")) <= len(rows)
        # The same parts without the calibration: characters / 4 alone.
        agent = app.conversation.agent
        assert agent is not None
        calibration, agent.meter.calibration = agent.meter.calibration, Calibration()
        uncalibrated = agent.meter.window().total
        agent.meter.calibration = calibration

        # The next request: the provider's count is the total, within 2 % (plus the few
        # tokens of the message typed now, which /context could not know).
        await send(pilot, "ok?")
        await idle(pilot)
        reported = counted(counting.turn_requests[-1].body)
        assert abs(total - reported) <= 0.02 * reported, (total, reported)

        # Characters / 4 alone would have been off by more than that.
        assert abs(uncalibrated - reported) > 0.05 * reported, (uncalibrated, reported)


def test_lua_parts_count_the_conversation_and_its_images(home: Home) -> None:
    """uji.context.parts() after a turn with an image: the conversation and the image each
    a row; before any session, the prompt's parts alone."""
    from tests.test_images import png

    (home.work / "shot.png").write_bytes(png(64, 48))
    home.init(
        """
        local function show(when)
          for _, p in ipairs(uji.context.parts()) do uji.notify(when .. " " .. uji.json.encode(p)) end
        end
        show("config")
        uji.on("turn_finished", function() show("after") end)
        """
    )
    assert home.fake is not None
    home.fake.script(text("a small picture"))
    run = home.run("what is this?", "--image", "shot.png")
    assert run.rc == 0, run.stderr
    rows: dict[str, list[dict[str, object]]] = {"config": [], "after": []}
    for n in run.notices:
        when, _, row = n.partition(" ")
        if when in rows:
            rows[when].append(json.loads(row))
    assert [r["kind"] for r in rows["config"]] == ["base", "tools"]
    kinds = {str(r["kind"]): r for r in rows["after"]}
    assert kinds["conversation"]["count"] == 2
    assert kinds["images"]["count"] == 1


def test_lua_parts_tell_what_compaction_folded(home: Home) -> None:
    """After a compaction: a `compaction summary` row saying how many messages it folded,
    and the conversation row for the rest, as the next request sends them."""
    from tests.test_compaction import long_session, small

    small(
        home,
        """
        uji.on("turn_finished", function()
          for _, p in ipairs(uji.context.parts()) do uji.notify("part " .. uji.json.encode(p)) end
        end)
        """,
    )
    sid = long_session(home)
    assert home.fake is not None
    home.fake.script(text("continuing"))
    run = home.run("next step", "--session", sid)
    assert run.rc == 0, run.stderr
    parts = {p["kind"]: p for p in (json.loads(n[5:]) for n in run.notices if n.startswith("part "))}
    sent = home.fake.turn_requests[-1].body["messages"]
    kept = len(sent) - 3  # the system prompt, the summary and "next step" aside
    assert parts["summary"]["name"] == "compaction summary" and parts["summary"]["count"] == 48 - kept
    assert parts["conversation"]["count"] >= 2
