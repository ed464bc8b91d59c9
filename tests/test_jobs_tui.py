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


async def test_ctrl_z_moves_the_running_command_to_the_background(tmp_path: Path, fake: FakeOpenAI) -> None:
    """The reference (§1 keys): "Ctrl+Z sends the running foreground command to the
    background" (a job of the jobs plugin): the call ends at once, the model is told the
    job's number, and the command goes on running."""
    started = tmp_path / "work" / "started"
    finished = tmp_path / "work" / "finished"
    gate = tmp_path / "work" / "go"
    app = make_app(tmp_path, fake, SETUP)
    fake.script(
        tool_calls(
            FakeCall(
                "run_command",
                {
                    "command": f"touch {started}; while [ ! -e {gate} ]; do sleep 0.05; done; echo late; touch {finished}"
                },
                "a",
            )
        ),
        text("it runs in the background"),
    )
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "run the slow thing")
        await until(pilot, started.exists, what="the command to start")
        await pilot.press("ctrl+z")
        await shows(pilot, "it runs in the background")
        answer = fake.turn_requests[1].body["messages"][-1]["content"]
        assert answer.startswith("The user moved the command to the background as job 1 (it keeps running;")
        assert not finished.exists()  # it was not waited for
        gate.touch()
        await until(pilot, finished.exists, what="the backgrounded command to go on and finish")
        await shows(pilot, "Background job 1")
