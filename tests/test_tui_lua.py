"""Keys and questions from Lua: uji.keymap, uji.ui.select/prompt/confirm,
uji.ui.toggle_thinking and uji.input — on the screen, and headless."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.test_tui_support import SIZE, answerable, make_app, ready, send, shows, type_text, until
from uji.app import App
from uji.paths import Paths
from uji.tui.modals import PromptPanel, SelectPanel


async def test_keymap_bindings_function_command_action_and_remove(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.command.add("hello", function(args) uji.notify("hello command ran") end)
    uji.keymap.add("normal", "<F5>", function() uji.notify("F5 pressed") end)
    uji.keymap.add("normal", "<C-o>", { command = "hello" })
    uji.keymap.add("normal", "<C-x>", "clear_input")
    uji.keymap.add({ "normal", "prompt" }, "<C-l>", { action = "cursor_start" })
    uji.keymap.remove("normal", "<C-w>")
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("f5")
        await shows(pilot, "F5 pressed")
        await pilot.press("ctrl+o")
        await shows(pilot, "hello command ran")
        await type_text(pilot, "some words")
        await pilot.press("ctrl+w")  # unbound now: nothing happens
        assert app.composer.text == "some words"
        await pilot.press("ctrl+l")
        assert app.composer.cursor_location == (0, 0)
        await pilot.press("ctrl+x")
        assert app.composer.text == ""


async def test_select_with_current_filter_and_labels(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.command.add("pick", function()
      local v = uji.ui.select({ title = "Pick a fruit", items = { "apple", "pear", "plum" }, current = "pear" })
      uji.notify("picked " .. tostring(v))
    end)
    uji.command.add("pickt", function()
      local v = uji.ui.select({ title = "Pick one", items = { { n = "first" }, { n = "second" } },
        label = function(item) return item.n end })
      uji.notify("got " .. v.n)
    end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/pick")
        screen = await shows(pilot, "Pick a fruit")
        assert "pear (current)" in screen
        assert app.mode() == "select"
        await type_text(pilot, "plu")
        await pilot.press("enter")
        await shows(pilot, "picked plum")
        await send(pilot, "/pick")
        await until(pilot, lambda: app.query(SelectPanel))
        await pilot.press("escape")
        await shows(pilot, "picked nil")
        await send(pilot, "/pickt")
        await until(pilot, lambda: app.query(SelectPanel))
        await pilot.press("ctrl+n", "enter")
        await shows(pilot, "got second")
        assert app.composer.has_focus


async def test_prompt_hidden_and_confirm_with_timeout(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.command.add("key", function()
      local v = uji.ui.prompt({ title = "Your secret", hidden = true })
      uji.notify("length " .. #v)
    end)
    uji.command.add("name", function()
      uji.notify("name: " .. tostring(uji.ui.prompt({ title = "Name?", value = "Al" })))
    end)
    uji.command.add("sure", function()
      uji.notify("sure: " .. tostring(uji.ui.confirm({ title = "Really?", body = "It is big." })))
    end)
    uji.command.add("quick", function()
      uji.notify("quick: " .. tostring(uji.ui.confirm({ title = "Quick?", body = "", timeout = 0.2 })))
    end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/key")
        await until(pilot, lambda: app.query(PromptPanel))
        assert app.mode() == "prompt"
        await type_text(pilot, "hunter2")
        screen = await shows(pilot, "Your secret")
        assert "hunter2" not in screen
        await pilot.press("enter")
        await shows(pilot, "length 7")
        await send(pilot, "/name")
        await until(pilot, lambda: app.query(PromptPanel))
        await type_text(pilot, "ice")
        await pilot.press("ctrl+a", "ctrl+d", "enter")  # the prompt's field takes the emacs keys
        await shows(pilot, "name: lice")
        await send(pilot, "/sure")
        screen = await shows(pilot, "Really?")
        assert "It is big." in screen
        await answerable(pilot)
        await pilot.press("y")
        await shows(pilot, "sure: true")
        await send(pilot, "/quick")
        await shows(pilot, "quick: nil")


async def test_input_and_toggle_thinking_from_lua(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = """
    uji.command.add("fill", function()
      uji.input.set("hello")
      uji.input.append(" world")
      uji.notify("input is [" .. uji.input.get() .. "]")
      uji.notify("thinking shown: " .. tostring(uji.ui.toggle_thinking()))
    end)
    uji.command.add("empty", function() uji.input.clear() end)
    uji.keymap.add("normal", "<F6>", function() uji.input.clear() end)
    uji.keymap.add("normal", "<F7>", function() uji.input.set("/he") end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/fill")
        await shows(pilot, "input is [hello world]")
        await shows(pilot, "thinking shown: true")
        assert app.composer.text == "hello world"
        assert not app.transcript.has_class("-hide-thinking")
        await pilot.press("f6")
        await until(pilot, lambda: app.composer.text == "")
        await pilot.press("f7")
        await until(pilot, lambda: app.suggestions.open)


def _headless_app(tmp_path: Path, lua: str) -> tuple[App, list[str]]:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "init.lua").write_text(textwrap.dedent(lua))
    notices: list[str] = []
    paths = Paths(str(tmp_path / "c"), str(tmp_path / "d"), str(tmp_path / "d" / "uji.db"))
    return App(paths, cwd=str(tmp_path), notice=notices.append), notices


async def test_headless_questions_answer_nil_and_keymap_is_recorded(tmp_path: Path) -> None:
    app, notices = _headless_app(
        tmp_path,
        """
        uji.keymap.add("normal", "<C-x>", "quit")
        uji.keymap.add("confirm", "a", "confirm_allow")
        uji.keymap.remove("normal", "<C-t>")
        print("select:", uji.ui.select({ title = "t", items = { "a" } }))
        print("prompt:", uji.ui.prompt({ title = "t" }))
        print("confirm:", uji.ui.confirm({ title = "t", body = "b" }))
        uji.input.set("draft")
        uji.input.append("!")
        print("input:", uji.input.get())
        print("size:", uji.ui.size())
        for _, row in ipairs(uji.keymap.list()) do
          if row.key == "<C-x>" or row.key == "<C-t>" or (row.mode == "confirm" and row.key == "a") then
            print("row", row.mode, row.key, row.action, row.unbound)
          end
        end
        """,
    )
    try:
        await app.load_config()
    finally:
        await app.close()
    assert "uji.ui.select: no screen to ask on" in notices
    assert "uji.ui.prompt: no screen to ask on" in notices
    assert "uji.ui.confirm: no screen to ask on" in notices
    for what in ("select:\tnil", "prompt:\tnil", "confirm:\tnil", "input:\tdraft!", "size:"):
        assert what in notices
    assert "row\tnormal\t<C-x>\tquit\tnil" in notices
    assert "row\tnormal\t<C-t>\tnil\ttrue" in notices
    assert "row\tconfirm\ta\tconfirm_allow\tnil" in notices


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ('uji.keymap.add("nowhere", "x", "quit")', "unknown key mode 'nowhere'"),
        ('uji.keymap.add("normal", "<Q-x>", "quit")', 'cannot read the key "<Q-x>"'),
        ('uji.keymap.add("normal", "x", "fly")', "unknown action 'fly'"),
        ('uji.keymap.add("normal", "x", 42)', "the binding must be an action name"),
        ('uji.ui.select({ title = "t", items = { {} } })', "item 1 has no text to show"),
        ('uji.ui.confirm({ title = "t", timeout = -1 })', "`timeout` must be a number"),
    ],
)
async def test_bad_arguments_raise_at_the_callers_line(tmp_path: Path, call: str, message: str) -> None:
    app, notices = _headless_app(tmp_path, f"\n\n{call}\n")
    try:
        await app.load_config()
    finally:
        await app.close()
    assert any("init.lua:3:" in n and message in n for n in notices), notices
