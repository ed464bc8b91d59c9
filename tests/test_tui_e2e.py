"""The real `uji` in a real terminal (tmux): start, send a prompt, approve a
write_file with y, see the file, interrupt a long run_command with Esc (the draft
stays), clear a draft with one Ctrl+C and get it back with ↑, quit with Ctrl+C twice
(told how to resume), and find the shell and a sane terminal again. A bracketed paste
of a long log shows as a marker and reaches the model whole."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import ZYGOTE, Home
from tests.fakes.openai_server import text, tool_call
from tests.waiting import DEADLINE
from tests.zygote import ROOT, SCREEN_ENV

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

PROMPT = "SHELL-READY$"  # PS1 is this and a space (capture-pane drops trailing spaces)


class Tmux:
    """One tmux server of our own (its own socket), one window."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def run(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10, check=True
        )
        return out.stdout

    def screen(self, escapes: bool = False) -> str:
        """The pane's text; with `escapes`, its styles as escape sequences too."""
        return self.run("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "main")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "main", *keys)

    def type(self, text: str) -> None:
        self.run("send-keys", "-t", "main", "-l", text)

    def wait(
        self, cond: Callable[[str], bool], what: str, timeout: float = DEADLINE, escapes: bool = False
    ) -> str:
        end = time.monotonic() + timeout
        while True:
            screen = self.screen(escapes)
            if cond(screen):
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}\n--- screen ---\n{screen}")
            time.sleep(0.05)

    def shows(self, snippet: str, timeout: float = DEADLINE) -> str:
        return self.wait(lambda s: snippet in s, repr(snippet), timeout)


def uji_command(*args: str) -> str:
    """The command line that starts `uji ARGS` in the terminal: a real uji with the terminal
    as its stdio, forked by the screen's zygote (tests/zygote.py `_serve_screen`), which
    imported Textual and the screen once, where each fresh uji imports them (~0.5 s of CPU).
    The process in the terminal hands it its stdio, passes on its signals (the resize's
    too) and exits as it exits. A test of what the start-up imports and when starts a fresh
    one (`python -m uji`), as does one using /dev/tty (the forked uji has no controlling
    terminal)."""
    forked = ZYGOTE.screen() is not None
    start = [str(ROOT / "tests" / "forked_uji.py")] if forked else ["-m", "uji"]
    return " ".join(shlex.quote(x) for x in [sys.executable, *start, *args])


def quit_uji(tmux: Tmux) -> str:
    """Ctrl+C on an empty composer says "again to quit"; the second one quits. Pressed
    again if a loaded machine let the hint lapse (its 2 s) before the second arrived."""

    def exited(s: str) -> bool:
        return re.search(r"uji-exited-\d", s) is not None  # not the `$?` of the command line

    for _ in range(5):
        tmux.keys("C-c")
        screen = tmux.wait(lambda s: "again to quit" in s or exited(s), "the quit hint", 15)
        if exited(screen):
            return screen
        tmux.keys("C-c")
        # Either uji exits, or its screen is back without the hint (it lapsed): again.
        screen = tmux.wait(
            lambda s: exited(s) or ("again to quit" not in s and "Message uji" in s), "the exit", 15
        )
        if exited(screen):
            return screen
    raise AssertionError(f"uji did not quit\n{tmux.screen()}")


@pytest.fixture
def tmux(home: Home) -> Iterator[Tmux]:
    t = Tmux(f"uji-test-{os.getpid()}-{time.monotonic_ns()}")
    screen = ZYGOTE.screen()
    env = home.env(TERM="xterm-256color", **({SCREEN_ENV: str(screen)} if screen else {}))
    flags = [x for k, v in sorted(env.items()) for x in ("-e", f"{k}={v}")]
    t.run(
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "main",
        "-x",
        "120",
        "-y",
        "40",
        "-c",
        str(home.work),
        *flags,
        "bash --norc --noprofile",
    )
    # Deliver Esc at once (tmux otherwise waits 500 ms to see if a sequence follows).
    t.run("set-option", "-s", "escape-time", "0")
    try:
        t.shows("#")
        t.type(f"PS1='{PROMPT} '; clear")  # bash takes no PS1 from the environment
        t.keys("Enter")
        t.shows(PROMPT)
        yield t
    finally:
        subprocess.run(["tmux", "-L", t.socket, "kill-server"], capture_output=True, timeout=10)


def test_real_uji_in_a_real_terminal(home: Home, tmux: Tmux) -> None:
    home.init('uji.tool.policy({ run_command = { default = "allow" } })\n')
    assert home.fake is not None
    home.fake.script(
        tool_call("write_file", {"path": "hello.txt", "content": "hello from uji\n"}),
        text("I wrote hello.txt."),
        tool_call("run_command", {"command": "sleep 30"}, id="sleep"),
        text("never sent"),
    )
    command = uji_command()
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("Message uji")
    tmux.shows("test/m")

    tmux.type("please write hello.txt")
    tmux.keys("Enter")
    # The question and its diff: a frame may show the question before the diff is laid out.
    tmux.wait(
        lambda s: "Would you like to run write_file?" in s and "+hello from uji" in s,
        "the question to write hello.txt, with its diff",
    )
    tmux.shows("y yes · a session")  # the question takes keys once typing has paused
    tmux.keys("y")
    tmux.shows("I wrote hello.txt.")
    assert (home.work / "hello.txt").read_text() == "hello from uji\n"

    tmux.type("now wait")
    tmux.keys("Enter")
    tmux.shows("Ran sleep 30")
    tmux.shows("Working (")
    tmux.type("a draft to keep")
    tmux.keys("Escape")  # interrupts, and leaves the draft alone
    tmux.shows("Interrupted")  # well before the 30 s of the sleep (how soon: bench/reactions.py)
    tmux.shows("a draft to keep")

    tmux.keys("C-c")  # a draft: Ctrl+C clears it and uji stays; ↑ brings it back
    tmux.wait(lambda s: "a draft to keep" not in s.split("Interrupted", 1)[1], "the draft cleared")
    tmux.keys("Up")
    tmux.shows("a draft to keep")
    tmux.keys("C-u")
    tmux.wait(lambda s: "a draft to keep" not in s.split("Interrupted", 1)[1], "the draft cleared")

    quit_uji(tmux)
    session = _only_session(home)
    tmux.shows(f"Resume this session with: uji resume --id {session}")
    screen = tmux.wait(lambda s: PROMPT in s.partition("uji-exited-0")[2], "the prompt after exit")
    assert PROMPT in screen.split("uji-exited-0", 1)[1]  # the shell is back
    # The terminal is sane again: line editing and echo are on, the screen is normal.
    tmux.type("stty -a | tr ' ' '\\n' | grep -x -e icanon -e echo | tr '\\n' ,; echo stty-$((1 + 1))-done")
    tmux.keys("Enter")
    screen = tmux.shows("stty-2-done")
    assert "icanon,echo," in screen
    assert tmux.run("display-message", "-p", "-t", "main", "#{alternate_on}").strip() == "0"
    messages = home.db_messages(_only_session(home))
    assert [m["type"] for m in messages][:2] == ["user", "assistant"]
    assert any(m["type"] == "error" and m["text"] == "interrupted" for m in messages)


def _only_session(home: Home) -> str:
    import sqlite3

    con = sqlite3.connect(home.db)
    try:
        rows = con.execute("SELECT id FROM sessions").fetchall()
    finally:
        con.close()
    assert len(rows) == 1
    return rows[0][0]


def test_resume_with_an_unknown_id_is_an_error(home: Home) -> None:
    run = home.uji("resume", "--id", "0190a1b2-0000-7000-8000-000000000000")
    assert run.rc == 1 and "no session 0190a1b2" in run.stderr
    run = home.uji("resume", "--id", "nope")
    assert run.rc == 1 and "not a session id" in run.stderr


def test_without_a_terminal_it_says_so(home: Home) -> None:
    run = home.uji()
    assert run.rc == 1 and "needs a terminal" in run.stderr


def test_uji_run_never_imports_textual(home: Home) -> None:
    code = "import sys, uji.headless, uji.lua.api.ui, uji.lua.api.keymap; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout.strip() == "False"


def test_resume_shows_the_history(home: Home, tmux: Tmux) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("the first answer"))
    run = home.run("first question")
    assert run.rc == 0
    command = uji_command("resume")
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    screen = tmux.shows("the first answer")
    assert "> first question" in screen
    quit_uji(tmux)
    tmux.shows("uji-exited-0")


def test_uji_list_at_a_terminal_opens_the_picker(home: Home, tmux: Tmux) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("a"), text("b"))
    older = home.run("the older session")
    newer = home.run("the newer session")
    command = uji_command("list", "--runs")
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    screen = tmux.shows("One-shot runs (uji run) in this directory")
    assert older.session_id in screen and f"{newer.session_id} (current)" in screen
    tmux.keys("Escape")
    tmux.wait(lambda s: "One-shot runs (uji run)" not in s, "the picker to close")
    quit_uji(tmux)
    tmux.shows("uji-exited-0")


def _wait_for(path: object, what: str) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    end = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def _start_with_a_looping_config(home: Home, tmux: Tmux) -> None:
    """uji in the terminal, its init.lua looping for ever (after writing a marker)."""
    looping = home.root / "config-looping"
    home.init(f'io.open("{looping}", "w"):close()\nwhile true do end\n')
    command = uji_command()
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    _wait_for(looping, "init.lua to start looping")


def test_esc_stops_a_config_that_loops_and_the_screen_starts(home: Home, tmux: Tmux) -> None:
    home.plugin("later.lua", 'uji.notify("the plugin ran")')
    _start_with_a_looping_config(home, tmux)
    tmux.keys("Escape")
    screen = tmux.shows("config interrupted")
    assert "the plugin ran" not in screen
    tmux.shows("test/m")  # what loaded before the loop (the model) is kept
    quit_uji(tmux)
    tmux.shows("uji-exited-0")


def test_ctrl_c_stops_a_config_that_loops_and_quits(home: Home, tmux: Tmux) -> None:
    _start_with_a_looping_config(home, tmux)
    tmux.keys("C-c")
    # The shell's prompt comes back after the exit line (waited for: it may come a moment later).
    screen = tmux.wait(
        lambda s: "uji-exited-0" in s and PROMPT in s.split("uji-exited-0", 1)[1], "the prompt after exit", 15
    )
    assert PROMPT in screen.split("uji-exited-0", 1)[1]


def test_shift_tab_to_plan_mode_refuses_an_edit(home: Home, tmux: Tmux) -> None:
    home.init('uji.tool.policy({ write_file = { default = "allow" } })\n')
    assert home.fake is not None
    home.fake.script(
        tool_call("write_file", {"path": "plan.txt", "content": "no\n"}, id="w1"),
        text("I could not write it."),
    )
    command = uji_command()
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("mode ask")
    tmux.keys("BTab")
    tmux.shows("mode accept edits")
    tmux.keys("BTab")
    tmux.shows("mode plan")
    tmux.type("write plan.txt")
    tmux.keys("Enter")
    screen = tmux.shows("I could not write it.")
    assert "Denied write_file" in screen
    assert not (home.work / "plan.txt").exists()
    quit_uji(tmux)
    tmux.shows("uji-exited-0")


def test_a_long_paste_in_a_real_terminal_is_a_marker_and_reaches_the_model_whole(
    home: Home, tmux: Tmux
) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("Seen the log."))
    log = "".join(f"2026-12-03 12:00:{i:02d} ERROR worker {i} failed\n" for i in range(40))
    command = uji_command()
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("Message uji")
    tmux.type("why this? ")
    # A bracketed paste, as a terminal sends one when the application asked for it.
    subprocess.run(
        ["tmux", "-L", tmux.socket, "load-buffer", "-b", "log", "-"], input=log.encode(), check=True
    )
    tmux.run("paste-buffer", "-p", "-b", "log", "-t", "main")
    screen = tmux.shows("why this? [paste #1 +40 lines]")
    assert "worker 7 failed" not in screen  # the composer holds the marker, not the log
    tmux.keys("Enter")
    screen = tmux.shows("Seen the log.")
    # Sent, it stays a marker in the transcript; the model got the whole log.
    assert "> why this? [paste #1 +40 lines]" in screen and "worker 7 failed" not in screen
    assert home.fake.turn_requests[-1].body["messages"][-1]["content"] == "why this? " + log
    quit_uji(tmux)
    tmux.shows("uji-exited-0")


def test_ui_exec_gives_the_terminal_to_a_program_and_the_screen_comes_back(home: Home, tmux: Tmux) -> None:
    go = home.root / "go"
    home.init(
        f"""
        uji.command.add("shell", function()
          local code = uji.ui.exec({{ "sh", "-c", "echo EXEC-HAS-THE-TERMINAL; while [ ! -e {go} ]; do sleep 0.05; done; exit 4" }})
          uji.notify("exec ended with " .. code)
        end)
        """
    )
    command = uji_command()
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.shows("Message uji", timeout=30)
    tmux.type("/shell")
    tmux.keys("Enter")
    screen = tmux.shows("EXEC-HAS-THE-TERMINAL")
    assert "Message uji" not in screen  # the screen is suspended while the program runs
    go.touch()
    tmux.shows("exec ended with 4")
    quit_uji(tmux)
    tmux.shows("uji-exited-0")
