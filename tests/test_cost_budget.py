"""Cost and budgets through `uji run`: prices from the catalog (built in, or given to
`uji.provider.add`) times the usage the fake servers report in their real formats, summed
per session on disk; the budgets of a turn (--max-steps, --max-cost,
uji.session.configure) stopping a run with exit code 3; usage a tool adds with ctx.usage."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes import anthropic_server as anth
from tests.fakes.openai_server import make_usage, text, tool_call

EXIT_BUDGET = 3
AGAIN = 'uji.tool.add("again", { policy = "allow", run = function() return "again" end })\n'


def per_million(tokens: int, price: float) -> float:
    return tokens * price / 1_000_000


def session_usage(home: Home, session_id: str) -> dict[str, Any]:
    con = sqlite3.connect(home.db)
    try:
        (row,) = con.execute("SELECT usage FROM sessions WHERE id = ?", (session_id,)).fetchall()
    finally:
        con.close()
    data: dict[str, Any] = json.loads(row[0]) if row[0] else {}
    return data


@pytest.fixture
def anthropic() -> Iterator[anth.FakeAnthropic]:
    with anth.FakeAnthropic() as server:
        yield server


def test_cost_of_a_builtin_model_from_anthropic_usage_and_summed_over_resumes(
    home: Home, anthropic: anth.FakeAnthropic
) -> None:
    """The built-in claude-sonnet-4-5 (3 / 15 / 0.30 / 3.75 dollars per million) priced
    on what the Messages API reports, cache reads and writes included."""
    (home.work / "a.txt").write_text("alpha\n")
    anthropic.script(
        anth.tool_call("read_file", {"path": "a.txt"}, usage=anth.make_usage(1000, 50, 2000, 300)),
        anth.text("It says alpha.", usage=anth.make_usage(1200, 20, 2300, 0)),
    )
    home.init(
        f"""
        uji.provider.add({{ id = "anthropic", base_url = "{anthropic.base_url}" }})
        uji.model.use({{ provider = "anthropic", model = "claude-sonnet-4-5" }})
        """,
        provider=False,
    )
    env = {"ANTHROPIC_API_KEY": "sk-ant-test"}
    run = home.run("read a.txt", env=env)
    assert run.rc == 0, run.stderr
    assert run.done["usage"] == {"input": 2200, "output": 70, "cache_read": 4300, "cache_write": 300}
    cost = per_million(2200, 3.0) + per_million(70, 15.0) + per_million(4300, 0.30) + per_million(300, 3.75)
    assert run.done["cost"] == round(cost, 10)
    stored = session_usage(home, run.session_id)
    assert stored["requests"] == 2 and stored["input"] == 2200 and stored["cost"] == pytest.approx(cost)

    # A resumed session goes on counting: done says what this run spent, the session
    # row holds both runs.
    anthropic.script(anth.text("again", usage=anth.make_usage(100, 10, 0, 0)))
    more = home.run("once more", "--session", run.session_id, env=env)
    assert more.rc == 0, more.stderr
    second = per_million(100, 3.0) + per_million(10, 15.0)
    assert more.done["cost"] == round(second, 10)
    stored = session_usage(home, run.session_id)
    assert stored["requests"] == 3 and stored["input"] == 2300 and stored["output"] == 80
    assert stored["cost"] == pytest.approx(cost + second)


def test_a_user_defined_provider_with_prices(home: Home) -> None:
    """cost given to uji.provider.add; OpenAI's cached tokens are cache reads, and a
    cache price left out would be charged as input."""
    home.init(
        f"""
        uji.provider.add({{ id = "mine", name = "Mine", wire = "openai-chat", base_url = "{home.fake.base_url}",
          models = {{ {{ id = "big", cost = {{ input = 2, output = 8, cache_read = 0.5 }} }} }} }})
        uji.model.use({{ provider = "mine", model = "big" }})
        """,
        provider=False,
    )
    home.fake.script(text("hi", usage=make_usage(10_000, 300, prompt_tokens_details={"cached_tokens": 4000})))
    run = home.run("hello")
    assert run.rc == 0, run.stderr
    assert run.done["usage"] == {"input": 6000, "output": 300, "cache_read": 4000, "cache_write": 0}
    assert run.done["cost"] == round(per_million(6000, 2) + per_million(300, 8) + per_million(4000, 0.5), 10)


def test_no_prices_no_cost(home: Home) -> None:
    home.init("")
    home.fake.script(text("hi"))
    run = home.run("hello")
    assert run.rc == 0, run.stderr
    assert "cost" not in run.done and run.done["usage"]["input"] == 12
    assert "cost" not in session_usage(home, run.session_id)


@pytest.mark.parametrize(
    ("cost", "error"),
    [
        ('{ input = "cheap", output = 1 }', "cost.input must be a number >= 0 (dollars per million tokens)"),
        ("{ input = 1 }", "cost.output is required (dollars per million tokens)"),
        ("{ input = 1, output = 2, per_request = 1 }", "unknown cost field(s) per_request"),
        ("{ input = -1, output = 2 }", "cost.input must be a number >= 0"),
        ("5", "cost must be a table {input=, output=, cache_read=, cache_write=}"),
    ],
)
def test_bad_prices_are_a_clear_config_error(home: Home, cost: str, error: str) -> None:
    home.init(
        f"""
        uji.provider.add({{ id = "mine", name = "Mine", wire = "openai-chat", base_url = "http://127.0.0.1:9",
          models = {{ {{ id = "big", cost = {cost} }} }} }})
        """
    )
    home.fake.script(text("still works"))
    run = home.run("hello")
    assert run.rc == 0, run.stderr
    (notice,) = [n for n in run.notices if "uji.provider.add" in n]
    line = home.line_of('id = "mine"')
    assert f"init.lua:{line}:" in notice
    assert f"uji.provider.add mine model big: {error}" in notice


def test_max_steps_stops_the_run_with_its_exit_code(home: Home) -> None:
    home.init(AGAIN)
    home.fake.script(*[tool_call("again", {}, id=f"c{i}") for i in range(3)], text("never"))
    run = home.run("loop", "--max-steps", "2")
    assert run.rc == EXIT_BUDGET
    line = "budget reached: 2 of 2 steps this turn (max_steps); the turn stopped"
    assert f"uji: {line}; raise it with --max-steps N or uji.session.configure{{max_steps=...}}" in run.stderr
    assert run.of("budget") == [
        {"type": "budget", "limit": "max_steps", "value": 2, "used": 2, "text": line.split(";")[0]}
    ]
    assert run.done["error"] == line and run.done["budget"] == "max_steps"
    # Two model calls, both tool calls answered; the stop is saved last.
    assert len(home.fake.turn_requests) == 2
    saved = home.db_messages(run.session_id)
    assert [m["type"] for m in saved] == ["user", "assistant", "tool", "assistant", "tool", "error"]
    assert saved[-1]["text"] == line

    # Plain mode: the same line on stderr, nothing on stdout.
    home.fake.script(*[tool_call("again", {}, id=f"d{i}") for i in range(2)])
    plain = home.uji("run", "--max-steps", "1", "loop")
    assert plain.rc == EXIT_BUDGET and plain.stdout == ""
    assert plain.stderr.strip().splitlines()[-1] == (
        "uji: budget reached: 1 of 1 step this turn (max_steps); the turn stopped; "
        "raise it with --max-steps N or uji.session.configure{max_steps=...}"
    )


def test_the_default_is_100_steps(home: Home) -> None:
    home.init(AGAIN)
    home.fake.script(*[tool_call("again", {}, id=f"c{i}") for i in range(101)])
    run = home.run("loop forever", timeout=120)
    assert run.rc == EXIT_BUDGET
    assert run.done["error"] == "budget reached: 100 of 100 steps this turn (max_steps); the turn stopped"
    assert len(home.fake.turn_requests) == 100
    # Each of the 100 steps called the tool and got its answer; the 101st was never asked for.
    assert [c["id"] for c in run.calls] == [f"c{i}" for i in range(100)]
    assert [(t["tool_call_id"], t["content"]) for t in run.tool_results()] == [
        (f"c{i}", "again") for i in range(100)
    ]
    saved = home.db_messages(run.session_id)
    assert [m["type"] for m in saved].count("tool") == 100


def test_a_long_turn_with_a_raised_budget(home: Home) -> None:
    """The original's torture case: 200 sequential tool calls in one turn, possible with
    --max-steps 250 (a few seconds against the fake)."""
    home.init(AGAIN)
    home.fake.script(*[tool_call("again", {}, id=f"c{i}") for i in range(200)], text("all done"))
    run = home.run("loop a while", "--max-steps", "250", timeout=180)
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "all done"
    assert len(home.fake.turn_requests) == 201
    assert [t["tool_call_id"] for t in run.tool_results()] == [f"c{i}" for i in range(200)]


def priced(home: Home, input: float, output: float) -> None:
    """A model with these prices (dollars per million tokens) and the `again` tool."""
    home.init(
        f"""
        uji.provider.add({{ id = "mine", name = "Mine", wire = "openai-chat", base_url = "{home.fake.base_url}",
          models = {{ {{ id = "priced", cost = {{ input = {input}, output = {output} }} }} }} }})
        uji.model.use({{ provider = "mine", model = "priced" }})
        {AGAIN}
        """,
        provider=False,
    )


def test_max_cost_stops_the_run(home: Home) -> None:
    priced(home, 10, 30)
    # Each step costs 1000 * 10 / 1e6 + 100 * 30 / 1e6 = $0.013.
    home.fake.script(*[tool_call("again", {}, id=f"c{i}", usage=make_usage(1000, 100)) for i in range(5)])
    run = home.run("spend", "--max-cost", "0.03")
    assert run.rc == EXIT_BUDGET
    # $0.026 after two; a third, estimated at the last one's $0.013, would pass $0.03.
    assert len(home.fake.turn_requests) == 2
    (budget,) = run.of("budget")
    assert budget["limit"] == "max_cost" and budget["value"] == 0.03
    assert budget["used"] == pytest.approx(0.026)
    assert budget["text"] == (
        "budget reached: $0.0260 of $0.0300 this turn (max_cost); the next request (about $0.0130) would pass it"
    )
    assert run.done["cost"] == pytest.approx(0.026)
    assert "--max-cost DOLLARS or uji.session.configure{max_cost=...}" in run.stderr


def test_a_budget_stops_before_the_request_that_would_pass_it_and_plain_mode_shows_the_work(
    home: Home,
) -> None:
    """--max-cost 0.001 with requests of $0.00045: two requests ($0.0009), not three
    ($0.00135); plain mode prints what the model wrote along the way, then why it stopped."""
    priced(home, 0.3, 1.5)
    said = ["Looking at the first file.", "Now the second.", "", "", ""]
    home.fake.script(
        *[tool_call("again", {}, id=f"c{i}", usage=make_usage(1000, 100), text=said[i]) for i in range(5)]
    )
    plain = home.uji("run", "--max-cost", "0.001", "spend")
    assert plain.rc == EXIT_BUDGET and len(home.fake.turn_requests) == 2
    assert plain.stdout == "Looking at the first file.\n\nNow the second.\n"
    assert "budget reached: $0.0009 of $0.0010 this turn (max_cost)" in plain.stderr


def test_session_configure_sets_budgets_and_the_command_line_wins(home: Home) -> None:
    home.init(AGAIN + "uji.session.configure({ max_steps = 1, max_tokens = 1000000 })\n")
    home.fake.script(*[tool_call("again", {}, id=f"c{i}") for i in range(3)])
    run = home.run("loop")
    assert run.rc == EXIT_BUDGET and len(home.fake.turn_requests) == 1
    assert run.done["error"] == "budget reached: 1 of 1 step this turn (max_steps); the turn stopped"

    home.fake.script(*[tool_call("again", {}, id=f"c{i}") for i in range(2)], text("fine"))
    wider = home.run("loop", "--max-steps", "5")
    assert wider.rc == 0, wider.stderr
    assert wider.done["text"] == "fine"

    # max_tokens: input, output and cache of the turn's requests (15 tokens each here).
    home.init(AGAIN + "uji.session.configure({ max_tokens = 40 })\n")
    home.fake.script(*[tool_call("again", {}, id=f"c{i}") for i in range(5)])
    tokens = home.run("loop")
    assert tokens.rc == EXIT_BUDGET
    assert tokens.done["error"] == (
        "budget reached: 30 of 40 tokens this turn (max_tokens); the next request (about 15 tokens) "
        "would pass it; the turn stopped"
    )


@pytest.mark.parametrize(
    ("opts", "error"),
    [
        ("{ max_steps = 0 }", "uji.session.configure: max_steps must be a number > 0, got 0"),
        ("{ max_steps = 2.5 }", "uji.session.configure: max_steps must be a whole number, got 2.5"),
        ('{ max_cost = "1" }', "uji.session.configure: max_cost must be a number > 0, got '1'"),
        ("{ max_step = 3 }", "uji.session.configure: unknown key(s) max_step"),
        ("5", "uji.session.configure: expects a table"),
    ],
)
def test_session_configure_checks_its_values(home: Home, opts: str, error: str) -> None:
    home.init(f"uji.session.configure({opts})\n")
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    (notice,) = [n for n in run.notices if "uji.session.configure" in n]
    assert f"init.lua:{home.line_of('uji.session.configure')}:" in notice and error in notice


def test_bad_budget_flags_are_usage_errors(home: Home) -> None:
    home.init("")
    for flag, value in (("--max-steps", "0"), ("--max-steps", "x"), ("--max-cost", "-1")):
        run = home.uji("run", flag, value, "hi")
        assert run.rc == 2 and f"argument {flag}: expects" in run.stderr


def test_a_tool_adds_a_childs_usage_and_cost(home: Home) -> None:
    """ctx.usage (how the subagent plugin counts a child's spending toward its parent):
    added to done's usage and cost, the session row, and the turn's budget."""
    home.init(
        """
        uji.tool.add("child", { policy = "allow", run = function(args, ctx)
          ctx.usage({ input = 1000, output = 200, cache_read = 50, cost = 0.25 })
          return "the child answered"
        end })
        uji.tool.add("bad", { policy = "allow", run = function(args, ctx)
          ctx.usage({ input = 1, tokens = 3 })
          return "unreached"
        end })
        """
    )
    home.fake.script(tool_call("child", {}, id="c1"), tool_call("bad", {}, id="c2"), text("done"))
    run = home.run("delegate")
    assert run.rc == 0, run.stderr
    assert run.done["usage"] == {"input": 1036, "output": 209, "cache_read": 50, "cache_write": 0}
    assert run.done["cost"] == 0.25  # the test model has no prices: only the child's
    bad = run.tool_results()[1]["content"]
    assert "ctx.usage: unknown field tokens (known: input, output, cache_read, cache_write, cost)" in bad
    stored = session_usage(home, run.session_id)
    assert stored["input"] == 1036 and stored["cost"] == 0.25 and stored["requests"] == 3

    # A child's dollars count toward the parent's max_cost.
    home.fake.script(*[tool_call("child", {}, id=f"c{i}") for i in range(4)])
    before = len(home.fake.turn_requests)
    capped = home.run("delegate", "--max-cost", "0.6")
    assert capped.rc == EXIT_BUDGET and len(home.fake.turn_requests) - before == 3
    assert capped.done["cost"] == 0.75


def test_max_minutes_is_checked_between_steps(home: Home) -> None:
    """A step that took longer than the budget (a 0.3 s command against 0.06 s) ends the
    turn before the next model call; the command itself was not cut short. The first model
    call is always made (a loaded machine may take longer than 0.06 s to get to it), and a
    0.3 s command is over 0.06 s however slow the machine."""
    home.init(
        'uji.tool.policy({ run_command = { default = "allow" } })\nuji.session.configure({ max_minutes = 0.001 })\n'
    )
    home.fake.script(tool_call("run_command", {"command": "sleep 0.3; echo slept"}), text("never"))
    run = home.run("wait")
    assert run.rc == EXIT_BUDGET, run.stderr
    assert "slept" in run.tool_results()[0]["content"]
    (budget,) = run.of("budget")
    assert budget["limit"] == "max_minutes" and budget["used"] >= 0.005
    assert run.done["error"].endswith("of 0.001 minutes this turn (max_minutes); the turn stopped")
    assert len(home.fake.turn_requests) == 1


def test_lua_sees_the_cost_and_the_sessions_totals(home: Home) -> None:
    home.init(
        """
        uji.provider.add({ id = "test", models = { { id = "m", cost = { input = 1, output = 2 } } } })
        uji.tool.add("report", { policy = "allow", run = function()
          local u = uji.session.usage()
          return string.format("%d %.6f %d %d %.6f", u.requests, u.cost, u.session.requests, u.session.total,
            u.session.cost)
        end })
        """
    )
    home.fake.script(text("first", usage=make_usage(1000, 500)))
    first = home.run("hi")
    assert first.rc == 0, first.stderr
    home.fake.script(tool_call("report", {}, usage=make_usage(100, 50)), text("ok"))
    run = home.run("report", "--session", first.session_id)
    assert run.rc == 0, run.stderr
    # This run: one request (100 * 1 + 50 * 2 per million); the session: both runs.
    assert run.tool_results()[0]["content"] == "1 0.000200 2 1650 0.002200"
