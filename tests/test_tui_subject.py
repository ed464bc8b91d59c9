"""The subject of a call on the screen: a tool's `subject` function, computed once per
call, is what the transcript line shows while the call is asked about, while it runs,
and after `uji resume`; a Lua tool waiting for ctx.done shows how long it has waited."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import SIZE, answerable, idle, make_app, ready, send, shows, until
from uji.tui.approval import ApprovalPanel

GREET = """
computed = 0
uji.tool.add("greet", {
  parameters = { type = "object", properties = { who = { type = "string" } } },
  subject = function(args) computed = computed + 1 return args.who end,
  display = { verb = "Greeted", question = "Greet someone?" },
  policy = "ask",
  run = function(args) return "subject computed " .. computed .. " time(s)" end,
})
"""


async def test_a_subject_function_is_shown_live_and_after_resume(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(tool_call("greet", {"who": "bob"}), text("Greeted."))
    app = make_app(tmp_path, fake, GREET)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "greet bob")
        await shows(pilot, "Greet someone?")
        # Live while the question is open, under the tool's name: "Greeted" would say it ran.
        screen = await shows(pilot, "⏺ greet bob")
        assert "who=bob" not in screen and "Greeted bob" not in screen and app.query(ApprovalPanel)
        await answerable(pilot)  # a question ignores keys until typing has paused
        await pilot.press("y")
        await idle(pilot)
        screen = await shows(pilot, "Greeted.")
        assert "⏺ Greeted bob" in screen and "who=bob" not in screen
    # once per call: the policy, the screen, the question and the events shared one value
    answers = [m for m in fake.turn_requests[-1].body["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in answers] == ["subject computed 1 time(s)"]

    resumed = make_app(tmp_path, fake, GREET, latest=True)
    async with resumed.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await shows(pilot, "Greeted.")
        assert "⏺ Greeted bob" in screen and "who=bob" not in screen


async def test_a_tool_waiting_for_done_shows_the_time_waited(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.tool.add("hang", { policy = "allow", timeout = 30, display = { verb = "Hung" },
      run = function(args, ctx) end })
    """
    fake.script(tool_call("hang", {}), text("never"))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "hang")
        await shows(pilot, "⏺ Hung")
        await shows(pilot, "waiting for ctx.done… 1s")
        await shows(pilot, "waiting for ctx.done… 2s")
        await pilot.press("escape")
        await idle(pilot)
        assert await shows(pilot, "Interrupted")
        await until(pilot, lambda: len(fake.turn_requests) == 1)
