"""A pack laid out as the original's docs describe (a git repository reached by file://,
`plugin/*.lua` run after the config, `lua/` on the require path) whose plugin builds a
toolbar and an overlay with ito: the real `uji` draws them in a real terminal (tmux)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.test_config_compat import git
from tests.test_tui_e2e import Tmux, quit_uji, tmux  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"), pytest.mark.timeout(120)]

MODULE = """
local ito = require("ito")
local M = {}

function M.setup(opts)
  local clicks = ito.state(0)
  uji.ui.toolbar({
    ito.ToolbarItem("top_bar_leading", ito.Text(opts.title):bold():foreground(ito.Color.cyan)),
    ito.ToolbarItem("top_bar_trailing", function() return ito.Text("picks " .. clicks.value) end),
  })
  uji.command.add("fruit", function()
    local h = uji.ui.overlay(function(h)
      return ito.VStack({
        ito.Text("Which fruit?"),
        ito.List({ "apple", "pear" }, function(item) return ito.Text(item) end)
          :on_choose(function(item) h:close(item) end),
      }):border("rounded"):title("Fruit picker")
    end)
    local chosen = h:wait()
    if chosen then clicks.value = clicks.value + 1 end
    uji.notify("picked " .. tostring(chosen))
  end)
  -- The terminal itself (uji.tty.open): uji's screen steps aside until the screen closes.
  uji.command.add("draw", function()
    local screen, input = ito.open()
    local taps = ito.state(0)
    local name = ito.state("")
    local dirty = false
    local window = ito.Window(screen, function() dirty = true end)
    local function draw()
      window:render(function()
        return ito.VStack({
          ito.Text("TTY " .. screen.width .. "x" .. screen.height):bold(),
          ito.Text("[tap me] " .. taps.value):on_tap(function() taps.value = taps.value + 1 end),
          ito.TextField(name):placeholder("type here"),
          ito.Text("NAME=" .. name.value),
        })
      end)
      screen:text(4, 5, "RAW TEXT", { foreground = "red" })
      screen:flush()
      dirty = false
    end
    draw()
    local seen = {}
    for event in input:events() do
      assert(type(event) == "table", "an event is a table")
      if event.type == "key" then
        if event.key == "q" then
          seen[#seen + 1] = "q"
          break
        end
        seen[#seen + 1] = event.key .. (window:key(event) and "*" or "")
      elseif event.type == "mouse" and event.action == "press" then
        seen[#seen + 1] = "tap:" .. tostring(window:press(event.x, event.y)) .. (dirty and "+" or "")
      elseif event.type == "paste" then
        seen[#seen + 1] = "paste:" .. event.text
      end
      draw()
    end
    screen:close()
    uji.notify("tty saw " .. table.concat(seen, ","))
  end)
  -- The mouse on an ito.Window: the wheel scrolls the ScrollView under the pointer, a drag
  -- selects, the release copies what was selected.
  uji.command.add("mouse", function()
    local screen, input = ito.open()
    local rows = {}
    for i = 1, 30 do rows[i] = ito.Text("line " .. i) end
    local window = ito.Window(screen)
    window:render(ito.VStack({ ito.Text("SELECT ME please"), ito.ScrollView(rows):height(4) }))
    local seen = {}
    for event in input:events() do
      if event.type == "key" then break end
      if event.type == "mouse" then
        local used, text = window[event.action](window, event)
        seen[#seen + 1] = event.action .. ":" .. tostring(used) .. (text and ("=" .. text) or "")
      end
    end
    screen:close()
    uji.notify("mouse saw " .. table.concat(seen, ","))
  end)
end

return M
"""


def fruit_pack(root: Path) -> Path:
    repo = root / "src" / "fruit-pack"
    (repo / "plugin").mkdir(parents=True)
    (repo / "lua" / "fruitbar").mkdir(parents=True)
    (repo / "lua" / "fruitbar" / "init.lua").write_text(MODULE)
    (repo / "plugin" / "fruitbar.lua").write_text('require("fruitbar").setup({ title = "FRUIT PACK" })\n')
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fruit pack")
    return repo


def test_a_packs_ito_toolbar_and_overlay_draw_in_the_real_terminal(home: Home, tmux: Tmux) -> None:  # noqa: F811
    repo = fruit_pack(home.root)
    home.init(f'uji.pack.add({{ "file://{repo}" }})\n')
    command = " ".join(shlex.quote(x) for x in [sys.executable, "-m", "uji"])
    tmux.type(f"{command}; echo uji-exited-$?")
    tmux.keys("Enter")
    screen = tmux.shows("picks 0")
    first = screen.splitlines()[0]
    assert first.strip().startswith("FRUIT PACK") and first.rstrip().endswith("picks 0")
    tmux.type("/fruit")
    tmux.keys("Enter")
    screen = tmux.shows("Which fruit?")
    assert "Fruit picker" in screen and "› apple" in screen
    tmux.keys("Down")
    tmux.shows("› pear")
    tmux.keys("Enter")
    screen = tmux.shows("picked pear")
    assert "Which fruit?" not in screen
    tmux.shows("picks 1")
    # uji.tty.open through ito.open: a screen of its own, painted by an ito.Window and drawn
    # raw; its input gives keys, clicks (the on_tap under them) and pastes.
    tmux.type("/draw")
    tmux.keys("Enter")
    # Two flushes: the window's paint, then the raw text; wait for both to be on screen.
    screen = tmux.wait(
        lambda s: "TTY 120x40" in s and len(s.splitlines()) > 5 and s.splitlines()[5][4:12] == "RAW TEXT",
        "the tty program's screen, window and raw text",
    )
    assert "Message uji" not in screen and "[tap me] 0" in screen
    tmux.keys("a", "b", "Up")  # letters go to the focused TextField (its state redraws)
    tmux.shows("NAME=ab")
    tmux.type("\x1b[<0;3;2M\x1b[<0;3;2m")  # a click on "[tap me]" (row 2, column 3), as xterm sends it
    tmux.shows("[tap me] 1")
    tmux.type("\x1b[200~pasted\x1b[201~")
    tmux.keys("q")
    tmux.shows("tty saw a*,b*,Up,tap:true+,paste:pasted,q")  # the tap's state change invalidated
    # The notice can show before the screen has drawn itself whole again: wait for that.
    screen = tmux.shows("Message uji")
    assert "TTY 120x40" not in screen
    # The mouse on an ito.Window (xterm's SGR reports: button 64/65 the wheel, 32 a drag).
    tmux.run("set-option", "-g", "set-clipboard", "on")  # OSC 52 makes a tmux buffer
    tmux.type("/mouse")
    tmux.keys("Enter")
    tmux.shows("line 4")
    tmux.type("\x1b[<65;3;3M")  # the wheel, down, over the scroll view: three rows
    screen = tmux.shows("line 7")
    assert "line 3" not in screen and "line 4" in screen
    tmux.type("\x1b[<64;3;1M")  # the wheel over the text above it: nothing scrolls
    tmux.type("\x1b[<0;1;1M\x1b[<32;6;1M\x1b[<32;9;1M\x1b[<0;9;1m")  # press, drag, release
    colored = tmux.wait(lambda s: "\x1b[7mSELECT ME" in s, "the selection in reverse", escapes=True)
    assert "\x1b[7mSELECT ME\x1b[" in colored.splitlines()[0]  # the selected cells, and no more
    tmux.keys("q")
    tmux.shows("mouse saw wheel:true,wheel:false,press:false,drag:true,drag:true,release:true=SELECT ME")
    assert tmux.run("show-buffer") == "SELECT ME"  # OSC 52 reached the terminal's clipboard
    quit_uji(tmux)
