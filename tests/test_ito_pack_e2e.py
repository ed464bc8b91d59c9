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
    quit_uji(tmux)
