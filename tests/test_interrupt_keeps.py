"""An interrupt keeps what was made before it: a command's output so far (on the screen, in
the saved tool result and in what the model receives next, after a line saying the user
interrupted it), and an answer cut off mid-stream (saved, and sent back marked)."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess

from tests.conftest import Home
from tests.fakes.base import drip_step
from tests.fakes.openai_server import _render, chunk, text, tool_call
from tests.test_tui_e2e import Tmux, tmux, uji_command  # noqa: F401  (the fixture)
from tests.waiting import drain, lines_until, until

ALLOW = 'uji.tool.policy({ run_command = { default = "allow" } })\n'


def ticking(home: Home) -> str:
    """Prints five lines, says so with a file, then runs until it is stopped: the test
    interrupts once the file is there, so the five lines are all in the pipe by then."""
    printed = home.work / "printed"
    # Fixed words only: a part with a variable asks even where run_command is allowed.
    ticks = "; ".join(f"echo tick {i}" for i in range(1, 6))
    return f"{ticks}; touch {shlex.quote(str(printed))}; exec sleep 300"


def tool_message(body: dict) -> dict:  # type: ignore[type-arg]
    return next(m for m in body["messages"] if m["role"] == "tool")


def test_sigint_keeps_a_commands_output_in_the_saved_result_and_for_the_model(home: Home) -> None:
    home.init(ALLOW)
    home.fake.script(tool_call("run_command", {"command": ticking(home)}), text("never"))
    proc = subprocess.Popen(
        home.command("run", "--json", "count"),
        cwd=home.work,
        env=home.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = lines_until(proc.stdout, lambda x: json.loads(x)["type"] == "session")
    until(lambda: (home.work / "printed").exists(), what="the command to print its lines")
    proc.send_signal(signal.SIGINT)
    rest, err = drain(proc)
    assert proc.returncode == 130, err
    session = json.loads(first[-1])["id"]
    saved = [m for m in home.db_messages(session) if m["type"] == "tool"]
    ticks = "\n".join(f"tick {i}" for i in range(1, 6))
    want = f"error: interrupted by the user while this tool ran; its output until then:\n{ticks}"
    assert saved[0]["content"] == want
    # The JSON stream's saved result says the same, and the next turn sends it to the model.
    events = [json.loads(x) for x in rest.splitlines()]
    results = [e["message"] for e in events if e["type"] == "message" and e["message"]["type"] == "tool"]
    assert results and results[0]["content"] == want
    home.fake.script(text("seen"))
    home.run("go on", "--session", session, check=True)
    assert tool_message(home.fake.turn_requests[-1].body)["content"] == want


def test_escape_keeps_the_lines_on_screen_and_for_the_model(home: Home, tmux: Tmux) -> None:  # noqa: F811
    home.init(ALLOW)
    home.fake.script(tool_call("run_command", {"command": ticking(home)}), text("after the interrupt"))
    tmux.type(uji_command() + "; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("Message uji")
    tmux.type("count")
    tmux.keys("Enter")
    until(lambda: (home.work / "printed").exists(), what="the command to print its lines")
    tmux.keys("Escape")
    screen = tmux.shows("interrupted by the user while this tool ran")
    assert "tick 1" in screen and "tick 5" in screen
    tmux.type("go on")
    tmux.keys("Enter")
    tmux.shows("after the interrupt")
    content = tool_message(home.fake.turn_requests[-1].body)["content"]
    assert content.startswith("error: interrupted by the user while this tool ran; its output until then:\n")
    assert content.endswith("tick 4\ntick 5")


def test_an_answer_cut_off_by_escape_is_saved_and_sent_back_marked(home: Home, tmux: Tmux) -> None:  # noqa: F811
    home.init("")
    # The answer streams a word every 50 ms and never ends: the test stops it once it shows.
    word = _render(chunk({"content": "Half "}))
    home.fake.script(drip_step(0.05, None, word), text("fine"))
    tmux.type(uji_command() + "; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("Message uji")
    tmux.type("explain")
    tmux.keys("Enter")
    tmux.shows("Half Half")
    tmux.keys("Escape")
    tmux.shows("Interrupted")
    tmux.type("go on")
    tmux.keys("Enter")
    tmux.shows("fine")
    sent = [m for m in home.fake.turn_requests[-1].body["messages"] if m["role"] == "assistant"]
    assert sent[0]["content"].startswith("Half Half ")
    assert sent[0]["content"].endswith("\n\n[the user interrupted this answer here]")
