"""Replacing a tool with a wrapper that calls the original (`uji.tool.get`), and a Lua
tool whose subject is a command line judged part by part (`command = true`)."""

from __future__ import annotations

from tests.conftest import Home, tool_schemas
from tests.fakes.openai_server import FakeCall, text, tool_call, tool_calls


def test_a_wrapper_calls_the_tool_it_replaced(home: Home) -> None:
    (home.work / "a.txt").write_text("hello\n")
    home.init(
        """
        local original = uji.tool.get("read_file")
        uji.notify(original.name .. " " .. original.policy .. " " .. tostring(original.start))
        uji.tool.add("read_file", {
          description = original.description, parameters = original.parameters, policy = "allow",
          subject = function(args) return args.path end,
          run = function(args, ctx)
            local r = original.run(args, ctx)
            return "wrapped: " .. r.text
          end,
        })
        """
    )
    home.fake.script(tool_call("read_file", {"path": "a.txt"}), text("ok"))
    run = home.run("go", check=True)
    assert "read_file allow nil" in run.notices  # read_file cannot start in the background
    assert run.tool_results()[0]["content"] == "wrapped:     1| hello"
    assert sorted(tool_schemas(home.fake.turn_requests[0].body)) == [
        "edit_file",
        "read_file",
        "run_command",
        "write_file",
    ]


def test_get_of_an_unknown_tool_and_a_run_without_the_calls_ctx(home: Home) -> None:
    home.init(
        """
        uji.notify("unknown: " .. tostring(uji.tool.get("nope")))
        local shell = uji.tool.get("run_command")
        uji.tool.add("bad", { policy = "allow", run = function(args, ctx)
          local ok, err = pcall(shell.run, { command = "echo x" }, { progress = ctx.progress })
          local ok2, err2 = pcall(shell.start, { command = "echo x" }, nil)
          return tostring(err) .. " | " .. tostring(err2)
        end })
        """
    )
    home.fake.script(tool_call("bad", {}), text("ok"))
    run = home.run("go", check=True)
    assert "unknown: nil" in run.notices
    first, second = run.tool_results()[0]["content"].split(" | ")
    assert first.endswith(
        'uji.tool.get("run_command").run: `ctx` must be the ctx of the tool call that is running'
    )
    assert second.endswith(
        'uji.tool.get("run_command").start: `ctx` must be the ctx of the tool call that is running'
    )


def test_a_command_subject_is_judged_part_by_part(home: Home) -> None:
    marker, whole_marker = home.work / "ran", home.work / "ran-whole"
    home.init(
        """
        local shell = uji.tool.get("run_command")
        for _, name in ipairs({ "whole", "parts" }) do
          uji.tool.add(name, {
            parameters = { type = "object", properties = { command = { type = "string" } } },
            command = name == "parts",
            subject = function(args) return args.command end,
            run = function(args, ctx) return shell.run(args, ctx) end,
          })
        end
        uji.tool.policy({ whole = { deny = { "touch *" } }, parts = { deny = { "touch *" } } })
        """
    )
    line = f"echo hi && touch {marker}"
    home.fake.script(
        tool_calls(
            FakeCall("parts", {"command": line}, "p"),
            FakeCall("whole", {"command": f"echo only && touch {whole_marker}"}, "w"),
        ),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "allow", check=True)
    assert [(c["name"], c["decision"]) for c in run.calls] == [("parts", "deny"), ("whole", "allow")]
    assert not marker.exists()
    # Without `command = true` the rule meets the whole line only, which it does not match.
    assert run.tool_results()[1]["content"] == "only" and whole_marker.exists()


def test_command_must_be_a_boolean(home: Home) -> None:
    home.init(
        """
        local ok, err = pcall(uji.tool.add, "x", { command = "yes", run = function() end })
        uji.notify(tostring(err))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    assert any(n.endswith("uji.tool.add: `command` must be a boolean") for n in run.notices)
