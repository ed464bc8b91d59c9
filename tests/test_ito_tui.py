"""ito on the real screen (reference §6 and §2 uji.ui / uji.input): the documented
examples, each drawn by the TUI and read back as the text a user sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import (
    SIZE,
    answerable,
    idle,
    make_app,
    ready,
    screen_text,
    send,
    shows,
    type_text,
    until,
)
from uji.tui import render

pytestmark = pytest.mark.timeout(120)

TOOLBARS = """
local ito = require("ito")
local count = ito.state(0)
bars = uji.ui.toolbar({
  ito.ToolbarItem("top_bar_leading", ito.Text("LEAD"):bold()),
  ito.ToolbarItem("top_bar_trailing", function()
    return ito.Text("clicked " .. count.value):on_tap(function() count.value = count.value + 1 end)
  end),
  ito.ToolbarItem("keyboard", ito.HStack({ ito.Text("kb-left"), ito.Spacer, ito.Text("kb-right") })),
})
uji.command.add("bump", function() count.value = count.value + 1 end)
uji.command.add("unbar", function() uji.notify("removed: " .. tostring(bars:remove())) end)
"""


def row_of(screen: str, snippet: str) -> str:
    return next(line for line in screen.splitlines() if snippet in line)


async def test_toolbar_items_draw_in_their_placements_and_state_redraws_them(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    app = make_app(tmp_path, fake, TOOLBARS)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await shows(pilot, "clicked 0")
        lines = screen.splitlines()
        # The top bar: leading at the left, trailing at the right, on the first row.
        assert lines[0].strip().startswith("LEAD") and lines[0].rstrip().endswith("clicked 0")
        # The keyboard bar sits above the composer; its Spacer pushes kb-right to the edge.
        kb = row_of(screen, "kb-left")
        assert kb.rstrip().endswith("kb-right")
        assert lines.index(kb) < lines.index(row_of(screen, "Message uji"))
        # A state change redraws the view that read it.
        await send(pilot, "/bump")
        await shows(pilot, "clicked 1")
        # on_tap: a click on the item runs its callback.
        from uji.tui.ito.view import ItoView

        trailing = next(v for v in app.query(ItoView) if "clicked" in str(v.render()))
        await pilot.click(trailing)
        await shows(pilot, "clicked 2")
        # handle:remove() takes the handle's items away.
        await send(pilot, "/unbar")
        screen = await shows(pilot, "removed: true")
        assert "LEAD" not in screen and "kb-left" not in screen


OVERLAY = """
local ito = require("ito")
uji.command.add("fruit", function()
  local name = ito.state("")
  local choice = ito.state(1)
  local h = uji.ui.overlay(function(h)
    return ito.VStack({
      ito.Text("Pick a fruit"):bold(),
      ito.TextField(name):placeholder("your name"):on_submit(function(t) h:close("name " .. t) end),
      ito.List({ "apple", "pear", "plum" }, function(item, selected) return ito.Text(item) end)
        :selection(choice)
        :on_choose(function(item) h:close(item) end),
    }):padding(1):border("rounded"):title("Fruits")
  end)
  uji.notify("chosen: " .. tostring(h:wait()))
end)
"""


async def test_an_overlay_takes_keys_in_its_controls_and_closes_with_a_value(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    app = make_app(tmp_path, fake, OVERLAY)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/fruit")
        screen = await shows(pilot, "Pick a fruit")
        assert "Fruits" in screen and "your name" in screen and "› apple" in screen
        # Keys go to the focused control: the text field first.
        await type_text(pilot, "bob")
        await shows(pilot, "bob")
        assert app.composer.text == ""
        # Tab moves to the list; ↓ moves its selection; Enter chooses.
        await pilot.press("tab")
        await pilot.press("down")
        await shows(pilot, "› pear")
        await pilot.press("enter")
        screen = await shows(pilot, "chosen: pear")
        assert "Pick a fruit" not in screen
        # Esc closes it with nothing.
        await send(pilot, "/fruit")
        await shows(pilot, "Pick a fruit")
        await pilot.press("escape")
        await shows(pilot, "chosen: nil")
        # Enter in the text field submits it.
        await send(pilot, "/fruit")
        await shows(pilot, "Pick a fruit")
        await type_text(pilot, "ann")
        await pilot.press("enter")
        await shows(pilot, "chosen: name ann")


LAYOUT = """
local ito = require("ito")
local Diagonal = ito.Layout(function(sizes, width)
  local out = {}
  for i in ipairs(sizes) do out[i] = { x = (i - 1) * 4, y = i - 1 } end
  return out
end)
local Who = ito.Local("nobody")
local Sum = ito.PreferenceKey({ default = 0, reduce = function(a, b) return a + b end })
local Greeting = ito.view(function(props) return ito.Text(props.word .. " " .. Who.current) end)
uji.command.add("gallery", function()
  uji.ui.overlay(function()
    return ito.VStack({
      Diagonal({ "d1", "d2" }),
      Who:provide("world", Greeting({ word = "hello" })),
      ito.VStack({ ito.Text("p1"):preference(Sum, 2), ito.Text("p2"):preference(Sum, 3) })
        :overlay_preference_value(Sum, function(v) return ito.Text("sum=" .. v) end),
      ito.ScrollView({ "s1", "s2", "s3", "s4", "s5" }):follow_end():height(2),
      ito.HStack({ ito.Spinner(), ito.Text("spinning") }),
      ito.HStack({ ito.Text("left"), ito.Spacer, ito.Text("right") }),
      ito.Text("centred"):align("center"),
      ito.Grid({ ito.GridRow({ "a", "bb" }), ito.GridRow({ "ccc", "d" }) }),
      ito.ZStack({ ito.Text("xxxxxxx"), ito.Text("ON") }, { alignment = "center" }),
      ito.Fold({ rows = { "r1", "r2", "r3", "r4", "r5" }, limit = 2 }),
      ito.Text({ "plain ", { "red", ito.TextStyle({ foreground = ito.Color.red, bold = true }) } }),
      ito.Text("boxed"):padding({ left = 2 }):border("plain", { color = ito.rgb(0x00ff00) }),
      ito.Text("gone"):hidden(),
      ito.Lines({ "line one", "line two" }),
    }):toolbar({ ito.ToolbarItem("top_bar_trailing", ito.Text("TOPR")), ito.ToolbarItem("bottom_bar", ito.Text("FOOT")) })
  end)
end)
"""


async def test_views_stacks_and_modifiers_lay_out_as_documented(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake, LAYOUT)
    async with app.run_test(size=(100, 60)) as pilot:
        await ready(pilot)
        await send(pilot, "/gallery")
        screen = await shows(pilot, "line two")
        left = row_of(screen, "left")
        assert left.index("right") - left.index("left") > 60  # the Spacer took the room between
        centred = row_of(screen, "centred")
        assert abs(centred.index("centred") - (len(left.rstrip()) // 2 - 3)) < 10
        grid_a, grid_c = row_of(screen, " a "), row_of(screen, "ccc")
        assert grid_a.index("bb") == grid_c.index("d")  # columns line up
        assert "xxONxxx" in screen or "xxxONxx" in screen  # ZStack: the second layer on the first
        assert "r1" in screen and "r2" in screen and "r3" not in screen and "+3 lines" in screen
        assert "plain red" in screen
        assert "┌" in screen and "│  boxed" in screen
        assert "gone" not in screen
        assert "line one" in screen
        # The content's own toolbar: its top bar at the top of the box, its bottom bar at the foot.
        lines = screen.splitlines()
        top, foot = lines.index(row_of(screen, "TOPR")), lines.index(row_of(screen, "FOOT"))
        assert top < lines.index(left) and foot > lines.index(row_of(screen, "line two"))
        assert row_of(screen, "TOPR").rstrip(" │").endswith("TOPR")
        d1, d2 = row_of(screen, "d1"), row_of(screen, "d2")
        assert d2.index("d2") - d1.index("d1") == 4  # Layout(measure) placed them
        assert "hello world" in screen  # a component reading a Local
        assert "sum=5" in screen  # the preferences set inside, reduced
        assert "s4" in screen and "s5" in screen and "s3" not in screen  # follow_end in 2 rows
        spin = row_of(screen, "spinning")
        assert spin[spin.index("spinning") - 2] in render.SPINNER


async def test_a_toolbar_item_that_raises_draws_nothing_and_says_so_once(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    lua = """
    local ito = require("ito")
    uji.ui.toolbar({ ito.ToolbarItem("top_bar_leading", function() error("bar broke") end),
                     ito.ToolbarItem("top_bar_trailing", ito.Text("still here")),
                     ito.ToolbarItem("keyboard", ito.Text("host"):toolbar({ ito.ToolbarItem("bottom_bar", "x") })) })
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "still here")
        await shows(pilot, "a view failed to draw")
        app.ticker.redraw_bars()
        await pilot.pause()
        screen = screen_text(app)
        assert screen.count("a view failed to draw") == 1
        # A toolbar item declared where nothing shows its placement: said once.
        assert screen.count("no section shows the toolbar placement 'bottom_bar'") == 1


async def test_themes_configure_and_theme_command_preview_live(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.ui.configure({ theme = "nord" })
    uji.notify("theme is " .. uji.ui.theme())
    local ok, err = pcall(uji.ui.configure, { colour = "red" })
    uji.notify("unknown key: " .. tostring(err))
    ok, err = pcall(uji.ui.configure, { theme = "no-such-theme" })
    uji.notify("bad theme: " .. tostring(err) .. " / still " .. uji.ui.theme())
    """
    app = make_app(tmp_path, fake, lua)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            screen = await shows(pilot, "theme is nord")
            assert "unknown key `colour`" in screen
            assert "no theme named no-such-theme" in screen and "still nord" in screen
            assert render.ACCENT == "#88c0d0"
            # /theme lists the seven; moving over one shows it at once, Esc goes back.
            await send(pilot, "/theme")
            screen = await shows(pilot, "tokyonight")
            for name in ("default", "dracula", "gruvbox", "light", "nord", "solarized", "tokyonight"):
                assert name in screen
            assert "nord (current)" in screen
            await pilot.press("down")  # solarized
            await until(pilot, lambda: render.ACCENT == "#268bd2", what="the preview of solarized")
            await pilot.press("escape")
            await until(pilot, lambda: render.ACCENT == "#88c0d0", what="nord back")
            # Enter keeps and saves it: the next start applies it before the config runs.
            await send(pilot, "/theme")
            await shows(pilot, "nord (current)")
            await pilot.press("up")  # light
            await until(pilot, lambda: render.ACCENT == "#0184bc", what="the preview of light")
            await pilot.press("enter")
            await shows(pilot, "theme: light (saved)")
        app2 = make_app(tmp_path, fake, 'uji.notify("at load: " .. uji.ui.theme())\n')
        async with app2.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await shows(pilot, "at load: light")
    finally:
        from uji.tui.theme import reset

        reset()


async def test_input_capture_gets_every_key_until_release(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.command.add("grab", function()
      uji.input.capture(function(k)
        uji.notify("key " .. k.key .. (k.ctrl and " ctrl" or "") .. (k.char and (" char " .. k.char) or ""))
        if k.key == "Esc" then uji.notify("released: " .. tostring(uji.input.release())) end
      end)
    end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/grab")
        await pilot.press("x")
        await shows(pilot, "key x char x")
        await pilot.press("ctrl+a")
        await shows(pilot, "key a ctrl")
        await pilot.press("enter")
        await shows(pilot, "key CR")
        await pilot.press("escape")
        await shows(pilot, "released: true")
        assert app.composer.text == ""  # none of them reached the composer
        await type_text(pilot, "hi")
        await until(pilot, lambda: app.composer.text == "hi", what="typing back in the composer")


async def test_statusline_plugin_and_status_segments_draw_the_bottom_bar(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    fake.script(text("hello"))
    lua = """
    require("uji.plugins.statusline").setup()
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        # The whole bar: its segments are drawn as they are ready, the model before the context.
        screen = await shows(pilot, "context 0%")
        last = screen.rstrip().splitlines()[-1]
        # The default bar: the logo (empty session), the model and the context, then the
        # directory at the right; the built-in status line gives way to it.
        assert last.strip().startswith("uji  ·  test/m  ·  context 0%")
        assert last.rstrip().endswith("work")
        assert "mode ask" not in screen
        await send(pilot, "hi")
        await idle(pilot)
        app.ticker.redraw_bars()
        await until(pilot, lambda: "uji  ·" not in screen_text(app).splitlines()[-1], what="the logo to go")


async def test_older_status_segments_render_in_priority_order(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.status.add("b", function() return "BEE" end, { priority = 20 })
    uji.status.add("a", function() return "AYE" end, { priority = 10 })
    uji.status.add("none", function() return nil end)
    uji.notify("list: " .. table.concat(uji.status.list(), ","))
    uji.notify("model: " .. uji.status.model() .. " render: " .. uji.status.render({ "b" }))
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "AYE · BEE")
        await shows(pilot, "list: a,b,none")
        await shows(pilot, "model: m render: BEE")


async def test_render_message_views_replace_the_entry(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(text("the answer"))
    lua = """
    local ito = require("ito")
    uji.on("render_message", function(m)
      if m.type == "user" then return ito.Text("YOU SAID: " .. m.text):bold() end
      if m.type == "assistant" then return ito.Text("MODEL SAID: " .. m.text):border("rounded") end
      if m.type == "notice" and m.text == "odd" then return 42 end
      if m.type == "notice" and m.text == "old style" then return { "OLD LINE ONE", { { "OLD TWO", { bold = true } } } } end
    end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "question")
        await idle(pilot)
        screen = await shows(pilot, "MODEL SAID: the answer")
        assert "YOU SAID: question" in screen and "> question" not in screen
        app.show_notice("odd")
        await shows(pilot, "not an ito view; skipped")
        app.show_notice("old style")  # the older set_lines format: a list of lines
        screen = await shows(pilot, "OLD LINE ONE")
        assert "OLD TWO" in screen and "old style" not in screen


THEMED = """
uji.ui.configure({ theme = require("uji.themes.default"){
  name = "terse",
  text = { yes = "Ja", no = "Nein", proceed = "los", tell = "und sag was anders", working = "Busy %ds",
           more_lines = "(%d more)", image = "<img %d>" },
  limits = { tool_preview = 2, paste_chars = 10, input_rows = 3, float = { 0.5, 0.5 } },
} })
"""


async def test_a_themes_text_strings_and_limits_are_what_the_screen_shows(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Reference §6: the text strings ("Yes"/"No", "proceed", "and tell uji what to do
    differently", "Working (%ds)", "+%d lines", "[image #%d]") and the limits (tool_preview,
    the paste thresholds, input_rows) come from the theme."""
    from textual import events

    from tests.test_tui_images import png
    from uji.tui.theme import reset

    fake.script(tool_call("run_command", {"command": "printf 'l1\\nl2\\nl3\\nl4\\nl5\\n'"}), text("done"))
    app = make_app(tmp_path, fake, THEMED)
    (tmp_path / "work" / "shot.png").write_bytes(png())
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await send(pilot, "go")
            screen = await shows(pilot, "1. Ja, los")
            assert "Nein, und sag was anders" in screen and "Busy " in screen and "Working" not in screen
            await answerable(pilot)
            await pilot.press("y")
            await idle(pilot)
            screen = await shows(pilot, "(3 more)")
            shown = [line.strip() for line in screen.splitlines()]
            assert "l2" in shown and "l3" not in shown
            app.post_message(events.Paste("0123456789A"))  # 11 characters: more than paste_chars
            await until(pilot, lambda: app.composer.text == "[paste #1 11 chars]")
            app.post_message(events.Paste(str(tmp_path / "work" / "shot.png")))
            await until(pilot, lambda: app.composer.text.endswith("<img 1>"))
            assert app.composer.styles.max_height is not None and app.composer.styles.max_height.value == 5
            await pilot.press("enter")
            await until(pilot, lambda: len(fake.turn_requests) == 3)
            sent = fake.turn_requests[2].body["messages"][-1]["content"]
            assert sent[0]["text"] == "0123456789A<img 1>" and sent[1]["type"] == "image_url"
    finally:
        reset()


SCROLLING = """
local ito = require("ito")
uji.command.add("log", function()
  local rows = {}
  for i = 1, 10 do rows[i] = "row " .. i end
  uji.ui.overlay(ito.VStack({ ito.Text("the log"), ito.ScrollView(rows):follow_end():height(3) }))
end)
"""


async def test_a_scroll_view_scrolls_by_keys_and_follows_its_end_again_at_the_end(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Reference §6 controls: keys go to the focused control; a ScrollView's are ↑/↓,
    PageUp/PageDown, Home/End, and `:follow_end()` keeps the end in view until scrolled away."""
    app = make_app(tmp_path, fake, SCROLLING)

    def rows() -> list[str]:
        return [w for w in screen_text(app).split("│") if w.strip().startswith("row ")]

    def showing(*numbers: int) -> bool:
        return [r.strip() for r in rows()] == [f"row {n}" for n in numbers]

    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/log")
        await until(pilot, lambda: showing(8, 9, 10), what="the end in view")
        await pilot.press("up")
        await until(pilot, lambda: showing(7, 8, 9), what="a row up")
        await pilot.press("pageup")
        await until(pilot, lambda: showing(5, 6, 7), what="a page up")
        await pilot.press("home")
        await until(pilot, lambda: showing(1, 2, 3), what="the start")
        await pilot.press("down")
        await until(pilot, lambda: showing(2, 3, 4), what="a row down")
        await pilot.press("end")
        await until(pilot, lambda: showing(8, 9, 10), what="the end again")
        assert app.composer.text == ""


async def test_render_message_offers_a_pending_call_and_a_queued_message(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Reference §2 render_message: `type` may also be pending (a tool call before its
    result, with `tool_calls`) and queued (a message typed during a turn)."""
    fake.script(tool_call("run_command", {"command": "sh wait.sh"}), text("ran it"), text("got the extra"))
    lua = """
    uji.tool.policy({ run_command = { default = "allow" } })
    local ito = require("ito")
    uji.on("render_message", function(m)
      if m.type == "pending" then
        return ito.Text("WAITING FOR " .. m.tool_calls[1].name .. " " .. m.tool_calls[1].arguments.command)
      end
      if m.type == "tool" then return ito.Text("RESULT OF " .. m.name) end
      if m.type == "queued" then return ito.Text("LATER: " .. m.text):bold() end
    end)
    """
    app = make_app(tmp_path, fake, lua)
    (tmp_path / "work" / "wait.sh").write_text(
        "i=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
    )
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "sleep a bit")
        await shows(pilot, "WAITING FOR run_command sh wait.sh")
        await send(pilot, "and one more thing")
        screen = await shows(pilot, "LATER: and one more thing")
        assert "queued > and one more thing" not in screen
        (tmp_path / "work" / "go").touch()
        await idle(pilot)
        screen = await shows(pilot, "RESULT OF run_command")
        assert "WAITING FOR" not in screen and "LATER:" not in screen
        assert fake.turn_requests[1].body["messages"][-1] == {"role": "user", "content": "and one more thing"}


async def test_replaced_views_draw_their_messages_and_a_failing_one_falls_back(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Reference §6 replaceable views: `uji.ui.<View>` draws that kind of message; the
    default can be wrapped; one that fails falls back to the default and is logged."""
    fake.script(text("the answer"))
    lua = """
    local ito = require("ito")
    uji.ui.UserMessage = function(props) return ito.Text("ME: " .. props.text):bold() end
    local base = uji.ui.Notice
    uji.ui.Notice = function(props) return base(props):border("rounded"):title("NOTE") end
    uji.ui.Shell = function(props) error("broken view") end
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "question")
        await idle(pilot)
        screen = await shows(pilot, "ME: question")
        assert "> question" not in screen and "the answer" in screen
        app.show_notice("heads up")
        screen = await shows(pilot, "heads up")
        assert "NOTE" in row_of(screen, "╭") and row_of(screen, "heads up").strip().startswith("│heads up")
        await send(pilot, "!echo shell-said-hi")
        await shows(pilot, "⎿ shell-said-hi")  # drawn as uji draws shell lines
        log = (tmp_path / "data" / "diagnostics.log").read_text()
        assert "uji.ui.Shell failed" in log and "broken view" in log


WINDOWS = """
local log = uji.ui.open_win({ view = "input", title = "build log", lines = { "step one" } })
uji.command.add("more", function()
  uji.ui.set_lines(log, { "step one", { { "step two", { bold = true } }, " ok" } })
  uji.ui.set_title(log, "build log (2)")
end)
uji.command.add("pop", function()
  local modal = uji.ui.open_win({ view = "modal", title = "popped", lines = { "in a box" }, height = 2 })
  uji.notify("windows: " .. table.concat(uji.ui.list_wins(), ","))
end)
uji.command.add("shut", function()
  uji.ui.clear(log)
  uji.notify("closed: " .. tostring(uji.ui.close_win(log)) .. " again: " .. tostring(uji.ui.close_win(log)))
  local ok, err = pcall(uji.ui.set_lines, log, {})
  uji.notify("after: " .. err .. " / left " .. #uji.ui.list_wins())
end)
"""


async def test_the_older_window_model_opens_updates_and_closes_windows(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Reference §2 uji.ui (older): open_win with a view, set_lines, clear, set_size,
    set_title, close_win, list_wins."""
    app = make_app(tmp_path, fake, WINDOWS)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        screen = await shows(pilot, "step one")
        lines = screen.splitlines()
        assert "build log" in row_of(screen, "╭")
        assert lines.index(row_of(screen, "step one")) < lines.index(row_of(screen, "Message uji"))
        await send(pilot, "/more")
        screen = await shows(pilot, "step two ok")
        assert "build log (2)" in screen
        await send(pilot, "/pop")
        screen = await shows(pilot, "in a box")
        assert "popped" in screen
        await shows(pilot, "windows: 1,2")
        await pilot.press("escape")  # a modal window closes with Esc, and leaves the list
        await until(pilot, lambda: "in a box" not in screen_text(app), what="the modal to close")
        await send(pilot, "/shut")
        screen = await shows(pilot, "closed: true again: false")
        assert "step two" not in screen
        await shows(pilot, "uji.ui.set_lines: no window 1 (open_win gives the ids")
        await shows(pilot, "/ left 0")
