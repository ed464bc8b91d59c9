"""The screen's start-up in a real terminal (tmux): the first frame is painted before
the config loads, and the config still applies when it loads behind it — a key bound
in init.lua works, a Lua error is shown with its file and line. Run as a real process
because the screen imports what the config needs (the App, the agent, Markdown) only
after its first frame: in-process tests, which import all of it, would not see a
missing import."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys

import pytest

from tests.conftest import Home, unmeasured
from tests.test_tui_e2e import Tmux, quit_uji
from tests.test_tui_e2e import tmux as tmux  # the fixture, shared

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


@needs_tmux
def test_first_frame_comes_before_the_config_which_then_applies(home: Home, tmux: Tmux) -> None:
    go = home.root / "config-may-load"
    home.init(
        f"""
        while not io.open("{go}") do end  -- held until the test has seen the first frame
        uji.keymap.add("normal", "<F5>", function() uji.notify("F5 pressed") end)
        uji.keymap.add("nowhere", "x", "quit")
        """
    )
    bad_line = home.line_of('"nowhere"')
    command = " ".join(shlex.quote(x) for x in [sys.executable, "-m", "uji"])
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    screen = tmux.shows("Message uji")  # the composer, while init.lua waits
    assert "loading config" in screen
    go.write_text("")
    screen = tmux.shows(f"init.lua:{bad_line}:")
    assert "unknown key mode 'nowhere'" in screen
    tmux.shows("test/m")  # what came before the error applies: the model...
    tmux.keys("F5")
    tmux.shows("F5 pressed")  # ... and the key bound in init.lua
    quit_uji(tmux)
    tmux.shows("uji-exited-0")


def test_the_screen_module_leaves_the_config_and_markdown_for_later() -> None:
    """What `uji` imports before its first frame: no Lua, no agent, no Markdown parser,
    no question panels, image checks or prices."""
    code = (
        "import sys, uji.tui.app\n"
        "late = ['lupa', 'uji.app', 'uji.agent.loop', 'uji.lua.host', 'markdown_it', 'rich.markdown',"
        " 'textual.widgets._markdown', 'pygments', 'httpx2', 'sqlite3', 'uji.tui.modals',"
        " 'uji.tui.approval', 'uji.agent.approval', 'uji.images', 'uji.agent.limits', 'uji.command_registry']\n"
        "print(sorted(m for m in late if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True, env=unmeasured()
    )
    assert out.stdout.strip() == "[]", out.stdout


@needs_tmux
def test_keys_typed_before_the_screen_is_ready_reach_the_composer(home: Home, tmux: Tmux) -> None:
    """Keys sent with the command line, so they wait in the terminal's input before uji's
    process exists, and more keys while init.lua still holds the config: all of them land
    in the composer, in order."""
    go = home.root / "config-may-load"
    home.init(f'while not io.open("{go}") do end\n')
    command = " ".join(shlex.quote(x) for x in [sys.executable, "-m", "uji"])
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    tmux.type("typed early")  # before the first frame: still in the terminal's buffer
    # The screen is up (the tty's echo of the keys is gone with the shell's screen), the
    # config still held, the keys in the composer.
    screen = tmux.wait(lambda s: "loading config" in s and "SHELL-READY" not in s, "the first frame")
    assert "typed early" in screen
    tmux.type(", then more")  # the screen is up, the config is not loaded
    go.write_text("")
    tmux.wait(lambda s: "loading config" not in s, "the config loaded")
    tmux.shows("typed early, then more")
    tmux.keys("C-u")  # an empty composer, so Ctrl+C quits
    quit_uji(tmux)


# uji with Textual's import held until a file exists: what shows meanwhile was painted
# before Textual, from the first frame the start before kept (uji.early_frame).
HOLD_TEXTUAL = """
import os, sys, time
class Hold:
    def find_spec(self, name, path=None, target=None):
        if name == "textual":
            sys.meta_path.remove(self)
            end = time.monotonic() + 60
            while not os.path.exists(GO) and time.monotonic() < end:
                time.sleep(0.02)
        return None
GO = sys.argv[1]
sys.meta_path.insert(0, Hold())
sys.argv = ["uji"]
from uji.cli import main
raise SystemExit(main())
"""


@needs_tmux
def test_the_first_frame_is_painted_before_textual_loads_and_keys_wait_for_it(home: Home, tmux: Tmux) -> None:
    """The second start paints the first frame the first one kept, before importing
    Textual; Textual's own first frame is the same on screen (styles and all); keys typed
    before the early frame and while it shows are not echoed, and reach the composer in
    order once Textual reads them."""
    hold = home.root / "config-may-load"
    home.init(f'while not io.open("{hold}") do end\n')

    def start(*argv: str) -> None:
        command = " ".join(shlex.quote(x) for x in [sys.executable, *argv])
        tmux.type(f"clear; {command}; echo uji-exited-$?")
        tmux.keys("Enter")

    def leave() -> None:
        hold.write_text("")
        tmux.wait(lambda s: "loading config" not in s, "the config loaded")
        tmux.keys("C-u")
        quit_uji(tmux)
        hold.unlink()

    # A first start, with nothing typed: Textual's first frame is kept.
    start("-m", "uji")
    textual_frame = tmux.wait(
        lambda s: "loading config" in s and "SHELL-READY" not in s, "the first frame", escapes=True
    )
    leave()
    assert len(list((home.data / "first-frame").iterdir())) == 1

    # Again, with Textual held: the kept frame shows, the same as Textual's was.
    go = home.root / "textual-may-load"
    start("-c", HOLD_TEXTUAL, str(go))
    tmux.type("typed early")  # before the early frame: in the terminal's buffer
    early = tmux.wait(
        lambda s: "loading config" in s and "SHELL-READY" not in s, "the early frame", escapes=True
    )
    assert early == textual_frame
    tmux.type(", then more")  # on the early frame: not echoed
    assert tmux.screen(escapes=True) == early
    go.write_text("")  # Textual loads, reads the keys
    tmux.shows("typed early, then more")
    assert "loading config" in tmux.screen()  # the config still held: the keys came first
    leave()
    # The terminal's modes are as they were: line editing and echo.
    tmux.type("stty -a | tr ' ' '\\n' | grep -x -e icanon -e -icanon -e echo -e -echo | tr '\\n' ,; echo")
    tmux.keys("Enter")
    tmux.shows("icanon,echo,")
