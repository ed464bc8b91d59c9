"""The peers' habits through the real `uji` in a real terminal (tmux): `uji "PROMPT"`
opens the screen on a new session and sends PROMPT at once, `uji -c` reopens the
latest session of the directory (with a PROMPT, sends it there), and `uji -p PROMPT`
is `uji run PROMPT`."""

from __future__ import annotations

from tests.conftest import Home
from tests.fakes.openai_server import text
from tests.test_tui_e2e import Tmux, quit_uji, uji_command
from tests.test_tui_e2e import tmux as tmux  # the fixture, shared


def start(tmux: Tmux, *args: str) -> None:
    command = uji_command(*args)
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")


def test_a_prompt_on_the_command_line_opens_the_screen_and_sends_it(home: Home, tmux: Tmux) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("an answer to the command line"))
    start(tmux, "what is here?")
    screen = tmux.shows("an answer to the command line", timeout=30)
    assert "> what is here?" in screen
    quit_uji(tmux)
    tmux.shows("uji-exited-0")
    assert home.fake.turn_requests[0].body["messages"][-1] == {"role": "user", "content": "what is here?"}
    listed = home.uji("list", "--json", check=True).stdout.splitlines()
    assert len(listed) == 1  # a new session


def test_continue_reopens_the_latest_session_and_sends_its_prompt(home: Home, tmux: Tmux) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("the first answer"), text("the second answer"))
    first = home.run("first question")
    assert first.rc == 0
    start(tmux, "-c", "and a second one")
    screen = tmux.shows("the second answer", timeout=30)
    assert "the first answer" in screen and "> and a second one" in screen
    quit_uji(tmux)
    tmux.shows("uji-exited-0")
    saved = [m["text"] for m in home.db_messages(first.session_id) if m["type"] == "user"]
    assert saved == ["first question", "and a second one"]
    start(tmux, "--continue")
    tmux.shows("the second answer", timeout=30)
    quit_uji(tmux)


def test_print_is_uji_run(home: Home) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("printed"), text("as json"))
    run = home.uji("-p", "say it")
    assert (run.rc, run.stdout) == (0, "printed\n")
    run = home.uji("--print", "--json", "again")
    assert run.rc == 0 and run.done["text"] == "as json"
