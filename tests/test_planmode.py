"""The shipped plan mode plugin, used as a user would: require it from init.lua."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, call, text, tool_calls
from tests.test_tui_support import screen_text


def test_plan_mode_takes_away_edits_and_unlisted_commands(home: Home) -> None:
    (home.work / "a.txt").write_text("a\n")
    home.init('require("uji.plugins.planmode").setup({ allow = { "ls", "cat" } })')
    home.fake.script(
        tool_calls(
            call("write_file", {"path": "b.txt", "content": "b"}),
            call("run_command", {"command": "cat a.txt"}),
            call("run_command", {"command": "rm a.txt"}),
            call("run_command", {"command": "cat a.txt; rm a.txt"}),
        ),
        text("1. do it"),
    )
    run = home.run("/plan tidy the repo")
    assert run.rc == 0, run.stderr
    assert "plan mode: on (edits are off; /approve to carry out the plan)" in run.notices
    first = home.fake.turn_requests[0].body["messages"]
    assert first[-2] == {"role": "user", "content": "Make a plan for: tidy the repo"}
    assert first[-1]["content"].startswith("Plan mode is on")
    results = [m["content"] for m in run.tool_results()]
    assert results[0] == "denied: write_file is disabled"
    assert results[1] == "a"
    assert results[2] == "denied: plan mode: `rm a.txt` is not on the plan mode allow list"
    assert results[3].startswith("denied: plan mode: only simple")
    assert (home.work / "a.txt").exists() and not (home.work / "b.txt").exists()
    assert [c["by"] for c in run.calls] == ["disabled", "hook", "hook", "hook"]


def test_the_plan_mode_of_shift_tab_is_the_plugins(home: Home) -> None:
    (home.work / "a.txt").write_text("a\n")
    home.init('require("uji.plugins.planmode").setup({ allow = { "cat" } })\nuji.mode.set("plan")\n')
    home.fake.script(
        tool_calls(
            call("run_command", {"command": "cat a.txt"}),
            call("run_command", {"command": "rm a.txt"}),
            call("edit_file", {"path": "a.txt", "old": "a", "new": "b"}),
        ),
        text("1. do it"),
    )
    run = home.run("tidy the repo")
    assert run.rc == 0, run.stderr
    assert "plan mode: on (edits are off; /approve to carry out the plan)" in run.notices
    results = [m["content"] for m in run.tool_results()]
    assert results[0] == "a"
    assert results[1] == "denied: plan mode: `rm a.txt` is not on the plan mode allow list"
    assert results[2].startswith("denied:")
    assert (home.work / "a.txt").read_text() == "a\n"
    first = home.fake.turn_requests[0].body["messages"]
    assert first[-1]["content"].startswith("Plan mode is on")  # the model was told


def test_slash_plan_is_the_plan_mode_the_footer_shows(home: Home, tmp_path: Path) -> None:
    out = tmp_path / "mode.txt"
    home.init(
        'require("uji.plugins.planmode").setup()\n'
        f'uji.on("turn_finished", function() local f = io.open("{out}", "w"); f:write(uji.mode.get()); f:close() end)\n'
    )
    home.fake.script(text("planned"), text("carried out"))
    run = home.run("/plan x")
    assert run.rc == 0, run.stderr
    assert out.read_text() == "plan"


def badge(app: object) -> str:
    """What the bottom bar's ito items draw (planmode's badge is the only one here)."""
    from uji.tui.ito.view import ItoView

    bar = app.bottom_bar  # type: ignore[attr-defined]
    return "".join(str(v.render()) for v in bar.query(ItoView)).strip()


async def test_ctrl_b_toggles_plan_mode_and_a_planning_turn_ends_with_the_picker(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """The reference (§5 planmode): Ctrl+B toggles; `confirm` (default true) offers accept /
    keep planning / leave at the end of each planning turn; accepting carries the plan out."""
    from tests.test_tui_support import SIZE, make_app, ready, send, shows, until
    from uji.tui.modals import SelectPanel

    fake.script(text("1. read\n2. change"), text("carried out"))
    app = make_app(tmp_path, fake, 'require("uji.plugins.planmode").setup()\n')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert not badge(app)
        await pilot.press("ctrl+b")
        await shows(pilot, "plan mode: on (edits are off; /approve to carry out the plan)")
        await shows(pilot, "mode plan")
        # The badge: planmode.Badge(), "plan" in the bottom bar while planning.
        await until(pilot, lambda: badge(app) == "plan", what="the plan badge")
        await pilot.press("ctrl+b")
        await shows(pilot, "plan mode: off")
        await until(pilot, lambda: "mode plan" not in screen_text(app), what="the footer to leave plan mode")
        await until(pilot, lambda: not badge(app), what="the badge to go")
        await pilot.press("ctrl+b")
        await send(pilot, "plan the change")
        screen = await shows(pilot, "Plan mode: the plan is ready")
        assert "Keep planning" in screen and "Leave plan mode without carrying it out" in screen
        await until(pilot, lambda: app.query(SelectPanel))
        await pilot.press("enter")  # the first choice: accept
        await shows(pilot, "carried out")
        second = fake.turn_requests[1].body["messages"]
        assert {"role": "user", "content": "The plan is approved. Carry it out."} in second
        assert app.mode() != "select" and "mode plan" not in screen_text(app)
