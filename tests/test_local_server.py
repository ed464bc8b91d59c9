"""uji against a server that behaves as llama.cpp's does (tests/fakes/llama_server.py):
the tools reach the model (`tool_choice: "auto"`), a server that sends no usage gets an
estimate marked as one, a prompt over its context is one clear line at once, the model's
output limit holds, and the session's title never races the turn on a one-slot server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import Home
from tests.fakes.llama_server import FakeLlama
from tests.fakes.openai_server import text, tool_call
from tests.test_tui_support import SIZE, idle, ready, send, shows, until
from uji.paths import Paths
from uji.tui.app import UjiApp

# A llama.cpp server as a user declares it: a small model with a 64-token output limit.
LLAMA = """
uji.provider.add({{ id = "llamacpp", name = "llama.cpp", wire = "openai-chat", base_url = "{url}",
  models = {{ {{ id = "local", context = {context}, output = 64 }} }} }})
uji.model.use({{ provider = "llamacpp", model = "local" }})
"""


@pytest.fixture
def llama() -> Iterator[FakeLlama]:
    with FakeLlama(n_ctx=4096) as server:
        yield server


def setup(home: Home, llama: FakeLlama, context: int = 4096) -> None:
    home.init(LLAMA.format(url=llama.base_url, context=context), provider=False)


def test_the_tools_reach_the_model_its_output_limit_holds_and_usage_is_estimated(
    home: Home, llama: FakeLlama
) -> None:
    setup(home, llama)
    (home.work / "a.txt").write_text("alpha\n")
    llama.script(tool_call("read_file", {"path": "a.txt"}), text("a.txt says alpha"))
    run = home.run("what does a.txt say?")
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "a.txt says alpha"
    assert llama.blind == 0  # the server put the tools in the prompt
    first = llama.turn_requests[0].body
    assert first["tool_choice"] == "auto" and first["tools"]
    assert all(r.body["max_tokens"] == 64 for r in llama.turn_requests)  # not raised to 1024
    assert [c["name"] for c in run.calls] == ["read_file"]
    # No usage from the server: uji counted, and says it did.
    usage = run.done["usage"]
    assert usage["estimated"] is True and usage["input"] > 100 and usage["output"] > 0


def test_a_prompt_over_the_servers_context_fails_at_once_in_one_line(home: Home, llama: FakeLlama) -> None:
    setup(home, llama, context=100_000)  # the model table says more than the server holds
    run = home.uji("run", "-", stdin="summarise this: " + "word " * 20_000)
    assert run.rc == 1
    said = [line for line in run.stderr.splitlines() if "does not fit" in line]
    assert len(said) == 1, run.stderr
    n_prompt = int(said[0].split("does not fit: ")[1].split(" tokens")[0])
    assert n_prompt > 4096 and "the server holds 4096" in said[0]
    assert len(llama.turn_requests) == 1  # no retries
    assert "retrying" not in run.stderr


async def test_the_title_waits_for_the_turns_stream_on_a_one_slot_server(
    home: Home, llama: FakeLlama
) -> None:
    setup(home, llama)
    llama.script(text("the first answer, streamed slowly " * 3, gap=0.01))
    app = UjiApp(Paths(str(home.config), str(home.data), str(home.db)), cwd=str(home.work))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "hello")
        await idle(pilot)
        await until(pilot, lambda: llama.side_requests, what="the title request")
        screen = await shows(pilot, "the first answer, streamed slowly")
        assert llama.cut == 0 and "retrying" not in screen
        assert llama.requests[0].side is False  # the turn's call first, then the title
        # The bar says its token counts are uji's estimate.
        await shows(pilot, "(estimated)")


def test_tool_choice_can_be_turned_off_for_a_server_that_refuses_it(home: Home, llama: FakeLlama) -> None:
    home.init(
        LLAMA.format(url=llama.base_url, context=4096).replace(
            'base_url = "', 'compat = { tool_choice = false }, base_url = "'
        ),
        provider=False,
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert "tool_choice" not in llama.turn_requests[0].body
