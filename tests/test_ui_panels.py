"""The panels' and the screen's replaceable views (reference §6): `uji.ui.SelectList`,
`Picker`, `Sessions`, `Suggestions`, `Approval`, `PromptField`, `Input` and `Screen`,
replaced in a config, draw on the real screen (Textual's pilot); one that raises falls
back to uji's drawing and the diagnostics log names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, text
from tests.test_tui_support import SIZE, answerable, idle, make_app, ready, send, shows, type_text, until

pytestmark = pytest.mark.timeout(120)

# Commands that open each question.
COMMANDS = """
uji.command.add("fruit", function()
  uji.notify("fruit " .. tostring(uji.ui.select({ title = "Fruit", items = { "apple", "pear" }, current = "pear" })))
end)
uji.command.add("find", function()
  uji.notify("found " .. tostring(uji.ui.pick({ title = "Find", items = { "alpha", "beta" } })))
end)
uji.command.add("sure", function()
  uji.notify("sure " .. tostring(uji.ui.confirm({ title = "Really", body = "It is big." })))
end)
uji.command.add("name", function() uji.notify("name " .. tostring(uji.ui.prompt({ title = "Your name" }))) end)
"""

PANELS = """
local ito = require("ito")
uji.ui.SelectList = function(p) return ito.Text((p.selected and "=> " or "   ") .. p.label:upper()) end
uji.ui.Picker = function(p) error("picker broke") end
uji.ui.Sessions = function(p) return ito.Text("SESSION " .. p.title .. " / " .. p.ago) end
uji.ui.Suggestions = function(p) return ito.Text((p.selected and "*" or " ") .. "CMD " .. p.name) end
uji.ui.Approval = function(p)
  local rows = { ito.Text("ASK " .. p.title .. ": " .. p.body) }
  for i, c in ipairs(p.choices) do rows[#rows + 1] = ito.Text((i == p.selected and "[x] " or "[ ] ") .. c.label) end
  return ito.VStack(rows):border("double")
end
uji.ui.PromptField = function(p) return ito.Text("PROMPT>> " .. p.title) end
"""


async def test_replaced_panels_draw_and_a_failing_one_falls_back(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(text("the answer"))
    app = make_app(tmp_path, fake, PANELS + COMMANDS)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "hello")
        await idle(pilot)
        # Suggestions: each row of the `/` popup; Enter still runs the chosen command.
        await type_text(pilot, "/fru")
        await shows(pilot, "*CMD fruit")
        await pilot.press("enter")
        # SelectList: uji.ui.select's rows; the keys stay uji's.
        screen = await shows(pilot, "=> PEAR")
        assert "   APPLE" in screen and "› pear" not in screen
        await pilot.press("up")
        await shows(pilot, "=> APPLE")
        await pilot.press("enter")
        await shows(pilot, "fruit apple")
        # Picker raises: uji draws the picker itself, and the log names the view.
        await send(pilot, "/find")
        await shows(pilot, "› alpha")
        await pilot.press("enter")
        await shows(pilot, "found alpha")
        log = (tmp_path / "data" / "diagnostics.log").read_text()
        assert "uji.ui.Picker failed" in log and "picker broke" in log
        # Approval: the whole question, frame and all; y still answers it.
        await send(pilot, "/sure")
        screen = await shows(pilot, "ASK Really: It is big.")
        assert "[x] Yes, proceed" in screen and "[ ] No" in screen and "╔" in screen
        await answerable(pilot)
        await pilot.press("y")
        await shows(pilot, "sure true")
        # PromptField: above the prompt's field, in place of its frame.
        await send(pilot, "/name")
        await shows(pilot, "PROMPT>> Your name")
        await type_text(pilot, "Al")
        await pilot.press("enter")
        await shows(pilot, "name Al")
        # Sessions: a row of /sessions.
        await send(pilot, "/sessions")
        screen = await shows(pilot, "SESSION ")
        assert "just now" in screen or "ago" in screen
        await pilot.press("escape")
        await until(pilot, lambda: app.top_modal() is None)


SCREEN = """
local ito = require("ito")
uji.ui.Screen = function(screen)
  return ito.VStack({ screen.bottom_bar(), ito.Text("BANNER TOP"):bold(), screen.transcript(), screen.modals(),
    screen.composer() })
end
uji.ui.Input = function(p) return ito.Text("INPUT " .. p.width .. " " .. string.rep("=", 5)) end
"""


async def test_a_replaced_screen_orders_the_regions_and_adds_views(tmp_path: Path, fake: FakeOpenAI) -> None:
    """The bottom bar on top, a banner under it, the activity left out; the Input view in
    place of the composer's rules. The regions stay uji's widgets: a message still sends."""
    fake.script(text("the answer"))
    app = make_app(tmp_path, fake, SCREEN)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await shows(pilot, "BANNER TOP")
        assert "INPUT 100 =====" in screen
        lines = screen.splitlines()
        banner = next(i for i, line in enumerate(lines) if "BANNER TOP" in line)
        head = next(i for i, line in enumerate(lines) if "INPUT 100" in line)
        assert app.status.region.y < banner < app.transcript.region.y
        assert head < app.composer.region.y
        assert app.activity.has_class("-left-out") and app.activity.region.height == 0
        await send(pilot, "hello")
        await idle(pilot)
        await shows(pilot, "the answer")


async def test_a_failing_screen_or_input_gives_the_default_and_is_logged(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    lua = """
    uji.ui.Screen = function(screen) return ito_missing.VStack({}) end
    uji.ui.Input = function(p) error("input broke") end
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "Message uji")
        assert app.transcript.region.y < app.composer.region.y < app.status.region.y
        log = (tmp_path / "data" / "diagnostics.log").read_text()
        assert "uji.ui.Screen failed, the default screen is drawn" in log
        assert "uji.ui.Input failed" in log and "input broke" in log


WRAPPED = """
for _, name in ipairs({ "Screen", "Input", "SelectList", "Suggestions", "Approval", "PromptField", "Sessions" }) do
  local base = uji.ui[name]
  uji.ui[name] = function(props) return base(props) end
end
"""


async def test_the_default_views_wrapped_draw_as_uji_does(tmp_path: Path, fake: FakeOpenAI) -> None:
    """The defaults in uji/ui/views.lua are what a config wraps: each one draws."""
    app = make_app(tmp_path, fake, WRAPPED + COMMANDS)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "─" * 20)  # the Input view's rule above the composer
        await type_text(pilot, "/fru")
        await shows(pilot, "› /fruit")
        await pilot.press("enter")
        screen = await shows(pilot, "› pear (current)")
        assert "  apple" in screen
        await pilot.press("enter")
        await shows(pilot, "fruit pear")
        await send(pilot, "/sure")
        screen = await shows(pilot, "It is big.")
        assert "› 1. Yes, proceed" in screen and "Really" in screen
        await answerable(pilot)
        await pilot.press("n")
        await shows(pilot, "sure false")
        await send(pilot, "/name")
        await shows(pilot, "Your name")
        await pilot.press("escape")
        await shows(pilot, "name nil")
        log = tmp_path / "data" / "diagnostics.log"
        assert "failed" not in (log.read_text() if log.exists() else "")
