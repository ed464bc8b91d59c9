"""The bell when uji needs you, in a real terminal (tmux): when a turn ends or a question
waits while the terminal is not focused (focus reporting: the terminal sends ESC [ O on
leaving, and any key brings the focus back), the screen sends what
`uji.ui.configure{notify}` says. The pane's raw output is recorded (`pipe-pane`)."""

from __future__ import annotations

import shlex

from tests.conftest import Home
from tests.fakes.openai_server import text, tool_call
from tests.test_tui_e2e import Tmux, quit_uji, uji_command
from tests.test_tui_e2e import tmux as tmux  # the fixture, shared
from tests.waiting import until
from uji.ui.bell import escape, resolve

BLUR = ("-H", "1b", "5b", "4f")  # ESC [ O: the terminal lost the focus


def test_a_turn_end_and_a_question_ring_only_while_unfocused(home: Home, tmux: Tmux) -> None:
    log = home.root / "notify.log"
    home.init(
        f"""
        uji.tool.policy({{ run_command = {{ default = "allow" }} }})
        uji.ui.configure({{ notify = function(reason, text)
          local f = io.open("{log}", "a"); f:write(reason, "\\n"); f:close()
          return "osc9"
        end }})
        """
    )
    assert home.fake is not None
    wait_for = "while [ ! -e {0} ]; do sleep 0.05; done; echo {0}-seen"
    home.fake.script(
        tool_call("run_command", {"command": wait_for.format("go1")}, id="c1"),
        text("first done"),
        tool_call("run_command", {"command": wait_for.format("go2")}, id="c2"),
        tool_call("write_file", {"path": "x.txt", "content": "x"}, id="c3"),
        text("second done"),
    )
    raw = home.root / "pane.out"
    tmux.run("pipe-pane", "-o", "-t", "main", f"cat >> {shlex.quote(str(raw))}")
    command = uji_command()
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("Message uji", timeout=30)
    tmux.type("first")
    tmux.keys("Enter")
    tmux.shows("go1", timeout=30)  # the command runs, waiting for its file
    tmux.run("send-keys", "-t", "main", *BLUR)
    (home.work / "go1").write_text("")
    tmux.shows("first done", timeout=30)
    until(lambda: log.exists() and log.read_text() == "turn_done\n", 30, "the turn_done bell")
    tmux.type("second")  # typing brings the focus back
    tmux.keys("Enter")
    tmux.shows("go2", timeout=30)
    tmux.run("send-keys", "-t", "main", *BLUR)
    (home.work / "go2").write_text("")
    tmux.shows("Would you like", timeout=30)
    until(lambda: log.read_text() == "turn_done\nquestion\n", 30, "the question's bell")
    tmux.shows("y yes · a session", timeout=30)  # the question takes keys once typing has paused
    tmux.keys("y")
    tmux.shows("second done", timeout=30)
    quit_uji(tmux)
    tmux.shows("uji-exited-0")
    # Focused at its end: the second turn rang nothing.
    assert log.read_text() == "turn_done\nquestion\n"
    out = raw.read_bytes()
    assert out.count(b"\x1b]9;uji: ") == 2
    assert b"\x1b]9;uji: the turn has ended\x07" in out and b"\x1b]9;uji: a question waits for you\x07" in out


def test_each_style_is_the_escape_its_terminals_show() -> None:
    assert escape("osc9", "uji", "done") == "\x1b]9;uji: done\x07"
    assert escape("osc777", "uji", "a;b\x1b") == "\x1b]777;notify;uji;a;b\x07"
    assert escape("bell", "uji", "x") == "\x07" and escape("off", "uji", "x") == ""
    assert resolve("auto", {"TERM_PROGRAM": "WezTerm"}) == "osc9"
    assert resolve("auto", {"TERM": "foot"}) == "osc777"
    assert resolve("auto", {"TERM": "xterm-256color"}) == "bell"


def test_a_bad_notify_value_names_the_line(home: Home) -> None:
    home.init('uji.ui.configure({ notify = "loud" })\n')
    run = home.run("hi")
    assert any(
        "init.lua:" in n and "`notify` must be one of auto, osc9, osc777, bell, off" in n for n in run.notices
    ), run.notices
