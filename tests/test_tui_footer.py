"""The bottom bar (model, effort, context used) and the activity line
("Working (Ns)" with the spinner)."""

from __future__ import annotations

import re
from pathlib import Path

from textual import events

from tests.fakes.openai_server import FakeOpenAI, make_usage, text, tool_call
from tests.test_tui_support import SIZE, idle, make_app, ready, screen_text, send, shows, type_text, until
from uji.tui.render import SPINNER

ALLOW_COMMANDS = 'uji.tool.policy({ run_command = { default = "allow" } })\n'
# A command that runs until the test creates `go` (60 s at most): no race with a sleep.
WAIT_FOR_GO = "i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"


async def test_footer_shows_model_effort_context_and_working_time(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(
        tool_call("run_command", {"command": "sh wait.sh"}, usage=make_usage(2000, 5)),
        text("ok", usage=make_usage(2500, 7)),
    )
    app = make_app(
        tmp_path,
        fake,
        ALLOW_COMMANDS + 'uji.model.use({ provider = "test", model = "m", effort = "high" })\n',
    )
    # The command runs until the test has seen the activity line count a second.
    (tmp_path / "work" / "wait.sh").write_text(WAIT_FOR_GO)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await shows(pilot, "test/m · effort high")
        await send(pilot, "wait")

        # The activity line counts the seconds (which second the screen is caught at
        # depends on the machine's load: at least the first).
        def counting() -> str | None:
            screen = screen_text(app)
            return screen if re.search(r"Working \([1-9][0-9]*s\)", screen) else None

        screen = await until(pilot, counting, what="Working (Ns) with N >= 1")
        line = next(x for x in screen.splitlines() if "Working (" in x)
        assert line.strip()[0] in SPINNER and "Esc to interrupt" in line
        (tmp_path / "work" / "go").touch()
        await idle(pilot)
        await until(pilot, lambda: not app.activity.display)
        screen = await shows(pilot, "context 2.5k/100.0k (2%)")
        # What the session has spent: both requests' input and output (2000+5 + 2500+7).
        screen = await shows(pilot, "session 4.5k tokens")


async def test_the_context_figure_follows_the_history_as_it_is_saved_and_rewound(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """The estimate is kept between saves (the bar asks twice a second, and it goes over
    every message): a saved message, and a rewind, each give a new figure."""
    from tests.test_rewind import make_repo
    from tests.test_tui_rewind import choose

    fake.script(
        text("first answer", usage=make_usage(2000, 5)), text("second answer", usage=make_usage(3000, 5))
    )
    app = make_app(tmp_path, fake)
    make_repo(tmp_path / "work")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "first question")
        await idle(pilot)
        await shows(pilot, "context 2.0k/100.0k (2%)")
        await type_text(pilot, "second question ")
        app.post_message(events.Paste("x" * 8000))  # pasted, not 8,000 keys: sent whole
        await until(pilot, lambda: app.composer.text.endswith("[paste #1 8000 chars]"))
        await pilot.press("enter")
        await idle(pilot)
        await shows(pilot, "context 3.0k/100.0k (3%)")
        await send(pilot, "/rewind")
        await shows(pilot, "Rewind to before which turn?")
        await choose(pilot, app, "second")
        await choose(pilot, app, "conversation only")
        # Back to the first turn, estimated: "first question" 4 tokens, "first answer" 3.
        await shows(pilot, "context 7/100.0k (0%)")


async def test_a_model_without_a_known_window_says_so(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = f"""
    uji.provider.add({{ id = "mine", name = "Mine", wire = "openai-chat", base_url = "{fake.base_url}",
      models = {{ "custom" }} }})
    uji.model.use({{ provider = "mine", model = "custom" }})
    """
    fake.script(text("hi", usage=make_usage(100, 4)))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "hello")
        await idle(pilot)
        await until(pilot, lambda: re.search(r"context \d+ tokens, window unknown", screen_text(app)))
