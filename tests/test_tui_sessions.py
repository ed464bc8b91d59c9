"""A compacted session resumed on the screen: the model is sent what it would have been
sent by the session that compacted, though the screen and the agent read only part of it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, text
from tests.test_tui_support import SIZE, idle, make_app, ready, send, shows, until
from uji.agent.messages import SUMMARY_HEAD
from uji.paths import Paths
from uji.store.sessions import Store
from uji.tui.app import UjiApp
from uji.tui.modals import SelectPanel

SMALL = """
uji.provider.add({ id = "small", name = "Small", wire = "openai-chat", base_url = "%s",
  models = { { id = "m", context = 4000, output = 1000 } } })
uji.model.use({ provider = "small", model = "m" })
"""


def fill(db: str, directory: str, rounds: int = 12) -> str:
    store = Store(db)
    sid = store.create_session(directory, "long")
    for i in range(rounds):
        store.append(sid, {"type": "user", "text": f"step {i}: " + "please look " * 40})
        call = {"id": f"c{i}", "name": "read_file", "arguments": json.dumps({"path": f"src/file{i}.py"})}
        store.append(sid, {"type": "assistant", "text": "", "tool_calls": [call]})
        store.append(
            sid, {"type": "tool", "tool_call_id": f"c{i}", "name": "read_file", "content": "x = 1\n" * 100}
        )
        store.append(sid, {"type": "assistant", "text": f"done with step {i}"})
    store.close()
    return sid


async def test_resuming_a_compacted_session_sends_the_same_messages(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake, SMALL % fake.base_url)
    sid = fill(str(tmp_path / "data" / "uji.db"), str(tmp_path / "work"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert app.conversation.resume(sid) is None
        await shows(pilot, "done with step 11")
        fake.script(text("continuing"))  # the fake answers the summary request itself
        await send(pilot, "next step")
        await idle(pilot)
        await shows(pilot, "continuing")
        assert len(fake.side_requests) == 1
        first = fake.turn_requests[-1].body["messages"]
        assert first[1]["content"].startswith(SUMMARY_HEAD) and first[-1]["content"] == "next step"
        # Opened again: a new agent reads the session from its checkpoint on.
        assert app.conversation.resume(sid) is None
        await shows(pilot, "continuing")
        fake.script(text("still going"))
        await send(pilot, "again")
        await idle(pilot)
        await until(pilot, lambda: len(fake.turn_requests) == 2)
        second = fake.turn_requests[-1].body["messages"]
        assert second[:-2] == first
        assert second[-2:] == [
            {"role": "assistant", "content": "continuing"},
            {"role": "user", "content": "again"},
        ]
        assert len(fake.side_requests) == 1


async def test_resume_and_sessions_keep_one_shot_runs_apart_from_conversations(home: Home) -> None:
    """Scripts make `uji run`s by the dozen: `uji resume`, `uji list` and `/sessions` show
    the conversations, and `uji list --runs` and `/sessions runs` the one-shot runs."""
    home.init("")
    assert home.fake is not None
    paths = Paths(str(home.config), str(home.data), str(home.db))
    app = UjiApp(paths, cwd=str(home.work))
    home.fake.script(text("talked"))
    async with app.run_test(size=SIZE) as pilot:
        conv = (await ready(pilot)).conversation
        await send(pilot, "a conversation")
        await idle(pilot)
        talk = conv.session_id
    runs = [home.run(f"one-shot {i}", check=True).session_id for i in (1, 2)]  # newer than the talk

    listed = home.uji("list", check=True).stdout.splitlines()
    assert len(listed) == 1 and listed[0].endswith(talk)
    listed = home.uji("list", "--runs", check=True).stdout.splitlines()
    assert [line.split()[-1] for line in listed] == runs[::-1]

    app = UjiApp(paths, cwd=str(home.work), latest=True)  # `uji resume`
    async with app.run_test(size=SIZE) as pilot:
        conv = (await ready(pilot)).conversation
        assert conv.session_id == talk
        await send(pilot, "/sessions")
        panel = await until(pilot, lambda: app.query(SelectPanel))
        screen = await shows(pilot, "Conversations in this directory")
        assert talk in screen and not any(r in screen for r in runs)
        await pilot.press("escape")
        await until(pilot, lambda: not panel[0].is_attached)
        await send(pilot, "/sessions runs")
        screen = await shows(pilot, "One-shot runs")
        assert all(r in screen for r in runs) and talk not in screen
