"""uji.on/off/emit: every notification, the four hooks, priorities, names, and handlers
that raise."""

from __future__ import annotations

from tests.conftest import Home
from tests.fakes.openai_server import text, tool_call

RECORD = """
local function record(event)
  uji.on(event, function(e)
    local parts = { e.event }
    for _, k in ipairs({ "session_id", "type", "name", "count", "provider", "model", "title", "state", "text" }) do
      if e[k] ~= nil then parts[#parts + 1] = k .. "=" .. tostring(e[k]) end
    end
    uji.notify(table.concat(parts, " "))
  end)
end
"""


def events_of(notices: list[str], name: str) -> list[str]:
    return [n for n in notices if n.split(" ")[0] == name]


def test_notifications_of_a_turn(home: Home) -> None:
    home.init(
        RECORD
        + """
        for _, e in ipairs({ "session_created", "message_submitted", "message_appended", "tool_started",
                             "turn_finished", "status_changed", "model_changed" }) do record(e) end
        uji.provider.add({ id = "test2", name = "T2", wire = "openai-chat", base_url = "http://127.0.0.1:9", models = { "z" } })
        uji.model.use({ provider = "test2", model = "z" })
        uji.model.use({ provider = "test", model = "m" })
        """
    )
    (home.work / "a.txt").write_text("a")
    home.fake.script(tool_call("read_file", {"path": "a.txt"}), text("done"))
    run = home.run("hello")
    n = run.notices
    assert events_of(n, "model_changed") == [
        "model_changed provider=test2 model=z",
        "model_changed provider=test model=m",
    ]
    assert events_of(n, "session_created") == [f"session_created session_id={run.session_id}"]
    assert events_of(n, "message_submitted") == ["message_submitted text=hello"]
    assert [e.split(" ")[1] for e in events_of(n, "message_appended")] == [
        "type=user",
        "type=assistant",
        "type=tool",
        "type=assistant",
    ]
    assert events_of(n, "message_appended")[0] == "message_appended type=user text=hello"
    assert events_of(n, "tool_started") == ["tool_started name=read_file"]
    assert events_of(n, "turn_finished") == ["turn_finished"]
    assert events_of(n, "status_changed") == ["status_changed state=working", "status_changed state=idle"]


def test_priorities_names_off_and_emit(home: Home) -> None:
    home.init(
        """
        uji.on("ping", function(e) uji.notify("late " .. e.n) end, { priority = 90 })
        uji.on("ping", function(e) uji.notify("early " .. e.n) end, { priority = 1 })
        uji.on("ping", function(e) uji.notify("replaced") end, { name = "mine" })
        uji.on("ping", function(e) uji.notify("default " .. e.event) end, { name = "mine" })
        local gone = uji.on("ping", function() uji.notify("never") end)
        uji.notify("off " .. tostring(uji.off("ping", gone)) .. " " .. tostring(uji.off("ping", gone)))
        uji.emit("ping", { n = 1 })
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    pings = [x for x in run.notices if x != "off true false"]
    assert "off true false" in run.notices
    assert pings == ["early 1", "default ping", "late 1"]


def test_a_handler_that_raises_is_a_notice_and_the_turn_goes_on(home: Home) -> None:
    home.init(
        """
        uji.on("message_appended", function() error("handler broke") end, { name = "bad" })
        uji.on("before_turn", function() error("turn hook broke") end)
        uji.on("after_tool", function() error("after broke") end)
        """
    )
    home.fake.script(tool_call("read_file", {"path": "x"}), text("fine"))
    run = home.run("hi")
    assert run.rc == 0 and run.done["text"] == "fine"
    assert any(
        "message_appended handler 'bad'" in n and "handler broke" in n and "init.lua:" in n
        for n in run.notices
    )
    assert any("turn hook broke" in n for n in run.notices)
    assert any("after broke" in n for n in run.notices)


def test_before_turn_replaces_the_system_prompt_chained_by_priority(home: Home) -> None:
    home.init(
        """
        uji.on("before_turn", function(e) return e.system .. " +second" end, { priority = 60 })
        uji.on("before_turn", function(e) return "REPLACED for " .. e.text end, { priority = 10 })
        uji.on("before_turn", function(e) return 42 end, { priority = 70 })
        """
    )
    home.fake.script(text("ok"))
    run = home.run("the prompt")
    assert home.fake.turn_requests[0].body["messages"][0] == {
        "role": "system",
        "content": "REPLACED for the prompt +second",
    }
    assert any("not a string; ignored" in n for n in run.notices)


def test_after_tool_replaces_the_result_text_chained(home: Home) -> None:
    (home.work / "k.txt").write_text("password=hunter2\n")
    home.init(
        """
        uji.on("after_tool", function(e) return (e.content:gsub("hunter2", "[redacted]")) end)
        uji.on("after_tool", function(e) return e.name .. ": " .. e.content end, { priority = 60 })
        """
    )
    home.fake.script(tool_call("read_file", {"path": "k.txt"}), text("ok"))
    run = home.run("hi")
    body = home.fake.turn_requests[-1].body
    tool = next(m for m in body["messages"] if m["role"] == "tool")
    assert tool["content"] == "read_file:     1| password=[redacted]"
    assert "hunter2" not in home.db.read_bytes().decode("utf-8", "replace")
    assert run.tool_results()[0]["content"] == tool["content"]


def test_before_stop_continues_as_long_as_the_handler_asks(home: Home) -> None:
    home.init(
        """
        uji.on("before_stop", function(e)
          uji.notify("stop? " .. e.continued .. " " .. e.text)
          if e.continued < 2 then return "keep going " .. e.continued end
        end)
        """
    )
    home.fake.script(text("one"), text("two"), text("three"), text("four"))
    run = home.run("hi")
    assert run.done["text"] == "three"
    assert [n for n in run.notices if n.startswith("stop?")] == [
        "stop? 0 one",
        "stop? 1 two",
        "stop? 2 three",
    ]
    assert len(home.fake.turn_requests) == 3
    last = home.fake.turn_requests[-1].body["messages"]
    assert last[-1] == {"role": "user", "content": "keep going 1"}
    kinds = [m["type"] for m in home.db_messages(run.session_id)]
    assert kinds == ["user", "assistant", "context", "assistant", "context", "assistant"]


def test_before_tool_sees_the_arguments(home: Home) -> None:
    home.init(
        """
        uji.on("before_tool", function(e)
          uji.notify(e.event .. " " .. e.name .. " " .. e.arguments.path)
        end)
        """
    )
    home.fake.script(tool_call("read_file", {"path": "some/file"}), text("ok"))
    run = home.run("hi")
    assert "before_tool read_file some/file" in run.notices


def test_session_events_titled_and_resumed(home: Home) -> None:
    home.init(
        RECORD
        + """
        record("session_titled"); record("session_resumed")
        uji.command.add("title", function(args) uji.session.set_title(args) end)
        """
    )
    home.fake.script(text("a"), text("b"))
    first = home.run("hello")
    run = home.run("/title My New Title", "--session", first.session_id)
    assert events_of(run.notices, "session_resumed") == [f"session_resumed session_id={first.session_id}"]
    assert events_of(run.notices, "session_titled") == ["session_titled title=My New Title"]
