"""/jobs in the terminal UI: the jobs with their state, and stopping one from the picker;
a job that ended by itself is reported to the model with the next turn."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeCall, FakeOpenAI, text, tool_calls
from tests.test_jobs_plugin import group_gone
from tests.test_tui_support import SIZE, idle, make_app, ready, send, shows, type_text, until
from uji.tui.modals import SelectPanel

SETUP = """
require("uji.plugins.jobs").setup{}
uji.tool.policy({ run_command = { default = "allow" } })
"""


async def test_jobs_lists_and_stops_and_the_next_turn_gets_the_report(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    pidfile = tmp_path / "work" / "server.pid"
    done = tmp_path / "work" / "done"
    app = make_app(tmp_path, fake, SETUP)
    fake.script(
        tool_calls(
            FakeCall(
                "run_command",
                {"command": f"echo $$ > {pidfile}; exec sleep 300", "run_in_background": True},
                "a",
            ),
            FakeCall(
                "run_command",
                {"command": f"echo finished-line; touch {done}", "run_in_background": True},
                "b",
            ),
        ),
        text("both started"),
        text("noted"),
    )
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "start two jobs")
        await idle(pilot)
        await until(pilot, lambda: done.exists() and pidfile.exists() and pidfile.read_text().strip())
        await shows(pilot, "Background job 2 (`echo finished-line; touch")
        await send(pilot, "/jobs")
        await until(pilot, lambda: app.query(SelectPanel) and app.mode() == "select")
        screen = await shows(pilot, "job 1  running for")
        assert "job 2  finished, exit 0" in screen
        assert screen.index("job 1  running for") < screen.index("job 2  finished")  # running first
        await type_text(pilot, "running")
        await pilot.press("enter")
        await shows(pilot, "stopped job 1")
        pid = int(pidfile.read_text())
        await until(pilot, lambda: group_gone(pid), what="the stopped job's group to be gone")
        await send(pilot, "/jobs")
        await until(pilot, lambda: app.query(SelectPanel) and app.mode() == "select")
        await shows(pilot, "job 1  stopped")
        await pilot.press("escape")
        await send(pilot, "and now?")
        await idle(pilot)
    second = fake.turn_requests[-1].body["messages"]
    report = [
        m["content"] for m in second if isinstance(m.get("content"), str) and "Background job" in m["content"]
    ]
    assert len(report) == 1
    assert report[0].startswith("Background job 2 (`echo finished-line; touch")
    assert "finished, exit 0." in report[0] and "finished-line" in report[0]
    assert "job 1" not in report[0]  # stopped on purpose: not reported
