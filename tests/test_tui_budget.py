"""Cost and budgets on the screen: the bottom bar's session tokens, dollars and context
fill (carried over when a session is resumed), and the question at a budget (go on, or
stop the turn)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, make_usage, text, tool_call
from tests.test_tui_support import SIZE, idle, make_app, ready, send, shows, until
from uji.tui.modals import SelectPanel

# The test provider's model, with prices (dollars per million tokens).
PRICED = """
uji.provider.add({ id = "test", models = { { id = "m", context = 100000, cost = { input = 3, output = 15 } } } })
uji.model.use({ provider = "test", model = "m" })
uji.tool.add("again", { policy = "allow", run = function() return "again" end })
"""


async def test_footer_shows_session_tokens_cost_and_context_fill(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(
        tool_call("again", {}, usage=make_usage(2000, 5)),
        text("ok", usage=make_usage(2500, 7)),
    )
    app = make_app(tmp_path, fake, PRICED)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "go")
        await idle(pilot)
        # The turn's 4500 input at $3 and 12 output at $15 per million ($0.01368), and the
        # title's side request (12 and 3: $0.000081): $0.013761 over 4527 tokens.
        await shows(pilot, "context 2.5k/100.0k (2%) · session 4.5k tokens · $0.0138")
        session_id = app.conversation.agent.session_id  # type: ignore[union-attr]

    # Resumed on another screen: the session's totals carry on from the store.
    fake.script(text("more", usage=make_usage(3000, 10)))
    again = make_app(tmp_path, fake, PRICED, resume=session_id)
    async with again.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "session 4.5k tokens · $0.0138")
        await send(pilot, "more")
        await idle(pilot)
        # + 3000 at $3 and 10 at $15 per million: $0.022911 over 7537 tokens.
        await shows(pilot, "session 7.5k tokens · $0.0229")


async def test_a_budget_asks_to_go_on_or_stop(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(*[tool_call("again", {}, id=f"c{i}") for i in range(4)], text("never"))
    app = make_app(tmp_path, fake, PRICED + "uji.session.configure({ max_steps = 2 })\n")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "loop")
        panel = await until(pilot, lambda: app.query(SelectPanel) and app.query(SelectPanel).first())
        await shows(pilot, "Budget reached: 2 of 2 steps this turn (max_steps)")
        assert panel.labels == ["Continue: 2 steps more", "Stop the turn"]
        assert len(fake.turn_requests) == 2
        await pilot.press("enter")  # go on: two more steps
        await until(pilot, lambda: not panel.is_attached)
        second = await until(pilot, lambda: app.query(SelectPanel) and app.query(SelectPanel).first())
        await shows(pilot, "Budget reached: 4 of 4 steps this turn (max_steps)")
        assert len(fake.turn_requests) == 4
        await pilot.press("down", "enter")  # stop
        await until(pilot, lambda: not second.is_attached)
        await idle(pilot)
        await shows(pilot, "budget reached: 4 of 4 steps this turn (max_steps); the turn stopped")
        assert len(fake.turn_requests) == 4 and not fake.exhausted
