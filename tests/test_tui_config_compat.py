"""The original's pieces on the screen: a key bound to a config's action by name runs it,
uji.ui.pick opens the filtering picker, uji.reload restarts Lua (not while the config
loads), uji.os.restart carries a value to the next start and uji.quit exits."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.test_tui_support import SIZE, make_app, ready, send, shows, type_text, until
from uji.tui.modals import SelectPanel


async def test_actions_pick_reload_and_quit_on_the_screen(tmp_path: Path, fake: FakeOpenAI) -> None:
    count = tmp_path / "loads"
    lua = f"""
    local f = io.open({str(count)!r}, "a"); f:write("x"); f:close()
    f = io.open({str(count)!r}); local loads = #f:read("*a"); f:close()
    uji.reload()  -- refused while the config loads: it would load again and again
    uji.action.add("greet", function() uji.notify("greeted after load " .. loads) end)
    uji.keymap.add("normal", "<F6>", "greet")
    uji.command.add("theme", function()
      local v = uji.ui.pick({{ title = "Pick a theme", items = {{ "dark", "light", "solarized" }} }})
      uji.notify("theme " .. tostring(v))
    end)
    uji.command.add("again", function() uji.reload() end)
    uji.command.add("bye", function() uji.quit() end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "uji.reload: not while the config loads")
        assert count.read_text() == "x"
        await pilot.press("f6")
        await shows(pilot, "greeted after load 1")
        await send(pilot, "/theme")
        await shows(pilot, "Pick a theme")
        await until(pilot, lambda: app.query(SelectPanel))
        await type_text(pilot, "sol")
        await pilot.press("enter")
        await shows(pilot, "theme solarized")
        await send(pilot, "/again")
        await shows(pilot, "reloaded the config")
        await until(pilot, lambda: count.read_text() == "xx", what="the config read again")
        await pilot.press("f6")  # the reloaded config bound it again
        await shows(pilot, "greeted after load 2")
        await send(pilot, "/bye")
        await until(pilot, lambda: app.return_code is not None, what="exit")
    assert app.return_code == 0


async def test_a_restart_carries_a_value_to_the_next_start_on_the_same_screen(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    lua = """
    uji.notify("carry: " .. tostring(uji.os.carry))
    if uji.os.carry == nil then uji.os.restart({ carry = "from the config" }) end
    uji.command.add("again", function() uji.os.restart({ carry = "from a command" }) end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "carry: from the config")  # the config asked while it loaded: after it
        session = app.conversation.session_id
        await send(pilot, "/again")
        await shows(pilot, "carry: from a command")
        assert app.conversation.session_id == session  # the same session goes on
