"""uji.context and uji.session from Lua, and /commands from `uji run`."""

from __future__ import annotations

import re

from tests.conftest import Home
from tests.fakes.openai_server import text, tool_call


def test_context_strings_join_the_system_prompt_and_turn_context_is_hidden(home: Home) -> None:
    home.init(
        """
        uji.context.add("rules", function() return "Always answer in haiku." end)
        local n = 0
        uji.context.add("once", function() n = n + 1; if n == 1 then return { text = "The build is red.", at = "turn" } end end)
        uji.context.add("gone", function() return "never" end)
        uji.context.add("nothing", function() return nil end, { priority = 1 })
        uji.notify(tostring(uji.context.remove("gone")) .. " " .. tostring(uji.context.remove("gone")))
        local names = {}
        for _, part in ipairs(uji.context.parts()) do
          if part.kind == "context" then names[#names + 1] = part.name end
        end
        uji.notify(table.concat(names, ","))
        uji.notify("list: " .. table.concat(uji.context.list(), ","))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("fix it")
    assert "true false" in run.notices and "rules,once,nothing" in run.notices
    # The original's shape: names, in the order they run (priority 1 first).
    assert "list: nothing,rules,once" in run.notices
    messages = home.fake.turn_requests[0].body["messages"]
    assert messages[0]["content"].endswith("\n\nAlways answer in haiku.")
    assert "never" not in messages[0]["content"]
    assert messages[1:] == [
        {"role": "user", "content": "fix it"},
        {"role": "user", "content": "The build is red."},
    ]
    saved = home.db_messages(run.session_id)
    assert saved[1] == {"type": "context", "text": "The build is red."}


def test_context_configure_checks_its_keys(home: Home) -> None:
    home.init(
        """
        uji.context.configure({ cache = "long", compaction = { reserve = 1000 } })
        for _, bad in ipairs({ { cache = "forever" }, { color = 1 }, { compaction = { when = 1 } } }) do
          local ok, err = pcall(uji.context.configure, bad)
          uji.notify(err)
        end
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    errors = [n for n in run.notices if "uji.context.configure" in n]
    assert len(errors) == 3
    assert "cache must be off, short or long" in errors[0]
    assert "unknown key(s) color" in errors[1]
    assert "unknown compaction key(s) when" in errors[2]


def test_commands_run_from_uji_run_and_can_submit(home: Home) -> None:
    home.init(
        """
        uji.command.add("review", { desc = "Review a file", handler = function(args)
          uji.session.submit("Please review " .. args)
        end })
        uji.command.add("hello", function(args) uji.notify("hello " .. args) end)
        uji.notify(table.concat(uji.command.list(), ","))
        """
    )
    home.fake.script(text("reviewed"))
    run = home.run("/review src/a.py")
    assert run.rc == 0 and run.done["text"] == "reviewed"
    assert home.fake.turn_requests[0].body["messages"][-1] == {
        "role": "user",
        "content": "Please review src/a.py",
    }
    # Every command, built-in and added, sorted.
    listed = next(n for n in run.notices if "review" in n).split(",")
    assert listed == sorted(listed) and {"help", "hello", "review", "sync", "quit", "models"} <= set(listed)
    run = home.run("/hello world")
    assert run.rc == 0 and "hello world" in run.notices and len(home.fake.turn_requests) == 1
    run = home.run("/unknown is just a prompt")
    assert home.fake.turn_requests[-1].body["messages"][-1]["content"] == "/unknown is just a prompt"


def test_a_command_that_raises_fails_the_run(home: Home) -> None:
    home.init('uji.command.add("boom", function() error("command broke") end)')
    run = home.run("/boom")
    assert run.rc == 1 and "command broke" in run.done["error"]


def test_session_functions(home: Home) -> None:
    home.init(
        """
        uji.command.add("info", function()
          local i = uji.session.info()
          uji.notify("id " .. i.id .. " title " .. i.title .. " dir " .. i.directory .. " short " .. i.short_directory)
          uji.notify("state " .. uji.session.state() .. " elapsed " .. tostring(uji.session.elapsed()))
          uji.notify("queue " .. #uji.session.queue())
          local u = uji.session.usage()
          uji.notify("usage " .. u.input .. " " .. u.output .. " " .. u.total .. " " .. u.requests)
          local c = uji.session.context()
          uji.notify("context " .. c.used .. " " .. tostring(c.window))
          for _, m in ipairs(uji.session.messages()) do uji.notify("msg " .. m.type .. " " .. m.text) end
          local ok, why = uji.session.compact()
          uji.notify("compact " .. tostring(ok) .. " " .. tostring(why))
          local rows = uji.session.list()
          uji.notify("list " .. #rows .. " " .. rows[1].id)
          local ok2, err2 = uji.session.delete(i.id)
          uji.notify("delete open " .. tostring(ok2) .. " " .. err2)
          local ok3, err3 = uji.session.delete("bogus")
          uji.notify("delete bogus " .. tostring(ok3) .. " " .. err3)
          local ok4, err4 = pcall(uji.session.delete, 42)
          uji.notify("delete number " .. tostring(ok4))
          local ok5, err5 = pcall(uji.session.set_title, "")
          uji.notify("empty title " .. tostring(ok5) .. " " .. err5)
          local ok6, err6 = pcall(uji.session.submit, "  ")
          uji.notify("empty submit " .. tostring(ok6))
        end)
        """
    )
    home.fake.script(text("first answer"))
    first = home.run("first question", check=True)
    run = home.run("/info", "--session", first.session_id)
    n = run.notices
    assert f"id {first.session_id} title first question dir {home.work} short {home.work}" in n
    assert "state idle elapsed nil" in n and "queue 0" in n
    assert "usage 0 0 0 0" in n
    assert any(re.fullmatch(r"context \d+ 100000", x) for x in n)
    assert "msg user first question" in n and "msg assistant first answer" in n
    assert "compact true nil" in n  # even one exchange can be folded on request
    assert f"list 1 {first.session_id}" in n
    assert "delete open nil cannot delete the open session" in n
    assert "delete bogus nil not a session id: 'bogus'" in n
    assert "delete number false" in n
    assert any(x.startswith("empty title false") and "non-empty string" in x for x in n)
    assert "empty submit false" in n
    fresh = home.run("/info")
    assert "compact false nothing to compact yet" in fresh.notices


def test_submit_during_a_turn_is_steered_in_after_the_tool_results(home: Home) -> None:
    home.init(
        """
        uji.tool.add("ask_more", { policy = "allow", run = function()
          uji.session.submit("extra")
          uji.notify("queued " .. #uji.session.queue() .. " " .. uji.session.state())
          return "tool ran"
        end })
        """
    )
    home.fake.script(tool_call("ask_more", {}), text("saw it"))
    run = home.run("go")
    assert "queued 1 working" in run.notices
    second = home.fake.turn_requests[1].body["messages"]
    assert second[-2]["role"] == "tool" and second[-1] == {"role": "user", "content": "extra"}
    assert run.done["text"] == "saw it"


def test_interrupt_from_lua_stops_the_turn(home: Home) -> None:
    home.init(
        """
        uji.tool.add("stopper", { policy = "allow", run = function(a, ctx)
          uji.defer(0.05, function() uji.session.interrupt() end)
          return function() uji.notify("cancel called") end
        end })
        """
    )
    home.fake.script(tool_call("stopper", {}), text("never"))
    run = home.run("go")
    assert run.rc == 130 and run.done["error"] == "interrupted"
    assert "cancel called" in run.notices
