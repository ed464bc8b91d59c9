"""Where this uji used to differ silently from the original's documented behaviour
(docs.md §2), each through `uji run` against the fake model: tool spec fields `resolve`,
`path`, `display.label`/`display.preview`, results' `{diff, summary}`, ito without a screen,
`uji.emit` within the call, the job tools' `id` and `uji.jobs.configure`'s checks."""

from __future__ import annotations

import os

import pytest

from tests.conftest import Home, tool_schemas
from tests.fakes.openai_server import text, tool_call
from tests.waiting import until

pytestmark = pytest.mark.timeout(120)  # each runs uji; a loaded machine is slow


def test_resolve_runs_before_the_policy_and_its_error_becomes_the_result(home: Home) -> None:
    home.init(
        """
        uji.tool.add("open_one", {
          parameters = { type = "object", properties = { name = { type = "string" } } },
          resolve = function(args)
            if args.name == "*.md" then return { name = "README.md" } end
            if args.name == "*" then return nil, "more than one file matches *" end
            return args
          end,
          subject = function(args) return args.name end,
          run = function(args) return "opened " .. args.name end,
        })
        uji.tool.policy({ open_one = { allow = { "README.md" }, default = "deny" } })
        """
    )
    home.fake.script(
        tool_call("open_one", {"name": "*.md"}, id="c1"),
        tool_call("open_one", {"name": "*"}, id="c2"),
        text("done"),
    )
    run = home.run("open")
    assert run.rc == 0, run.stderr
    results = {m["tool_call_id"]: m["content"] for m in run.tool_results()}
    # The policy judged the resolved subject: README.md is allowed, anything else denied.
    assert results == {"c1": "opened README.md", "c2": "error: more than one file matches *"}
    decided = {c["id"]: c for c in run.calls}
    assert decided["c1"]["subject"] == "README.md" and decided["c1"]["by"] == "policy"


def test_path_subjects_match_rules_by_their_full_path(home: Home) -> None:
    home.init(
        f"""
        uji.tool.add("touch", {{
          parameters = {{ type = "object", properties = {{ path = {{ type = "string" }} }} }},
          path = true,
          subject = function(args) return args.path end,
          run = function(args) return "touched " .. args.path end,
        }})
        uji.tool.policy({{ touch = {{ deny = {{ "{home.work}/secret/*" }} }} }})
        """
    )
    home.fake.script(
        tool_call("touch", {"path": "secret/key"}, id="c1"),
        tool_call("touch", {"path": "notes.txt"}, id="c2"),
        text("done"),
    )
    run = home.run("touch", "--on-ask", "allow")
    results = {m["tool_call_id"]: m["content"] for m in run.tool_results()}
    assert results["c1"].startswith("denied:")
    assert results["c2"] == "touched notes.txt"


def test_display_label_preview_and_result_diff_and_summary(home: Home) -> None:
    home.init(
        """
        uji.tool.add("rewrite", {
          parameters = { type = "object", properties = { path = { type = "string" } } },
          subject = function(args) return args.path end,
          display = {
            label = "Rewrote",
            question = "Rewrite it?",
            preview = function(args) return uji.diff("old\\n", "new\\n", args.path) end,
          },
          run = function(args)
            return { text = "rewritten", diff = uji.diff("old\\n", "new\\n", args.path), summary = "1 line changed" }
          end,
        })
        """
    )
    home.fake.script(tool_call("rewrite", {"path": "a.txt"}, id="c1"), text("done"))
    run = home.run("rewrite", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    call = run.calls[0]
    assert call["question"] == "Rewrite it?"
    assert "-old" in call["preview"] and "+new" in call["preview"] and "a/a.txt" in call["preview"]
    saved = run.tool_results()[0]
    assert saved["content"] == "rewritten"
    assert saved["summary"] == "1 line changed"
    assert "@@ -1,1 +1,1 @@" in saved["diff"] and "+new" in saved["diff"]
    # UI only: the model gets the text.
    sent = home.fake.turn_requests[1].body["messages"][-1]
    assert sent == {"role": "tool", "tool_call_id": "c1", "content": "rewritten"}


def test_ito_screen_calls_without_a_screen_are_quiet_no_ops(home: Home) -> None:
    """`uji run` has no screen: toolbars are kept (and removable) but not drawn, an overlay
    is closed at once with a notice and its wait() gives nil, capture takes no key, and a
    render_message handler is registered without a word; nothing stops the run."""
    home.init(
        """
        local ito = require("ito")
        local bar = uji.ui.toolbar({ ito.ToolbarItem("bottom_bar", ito.Text("status")) })
        uji.notify("removed: " .. tostring(bar:remove()) .. " again: " .. tostring(bar:remove()))
        uji.on("render_message", function(m) return ito.Text(m.text) end)
        uji.input.capture(function() end)
        uji.notify("released: " .. tostring(uji.input.release()))
        uji.schedule(function()
          local h = uji.ui.overlay(function() return ito.Text("hi") end)
          uji.notify("overlay gave: " .. tostring(h:wait()))
        end)
        local ok, err = pcall(ito.ToolbarItem, "sidebar", ito.Text("x"))
        uji.notify("bad placement: " .. tostring(err))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert "removed: true again: false" in run.notices
    assert "released: true" in run.notices
    assert "uji.ui.overlay: no screen to show it on" in run.notices
    assert "overlay gave: nil" in run.notices
    assert any("bad placement:" in n and "placement must be top_bar_leading" in n for n in run.notices)
    assert not any("render_message" in n for n in run.notices)


def test_emit_runs_the_handlers_inside_the_call(home: Home) -> None:
    home.init(
        """
        local seen = {}
        uji.on("my_event", function(e) seen[#seen + 1] = e.event .. ":" .. e.n end)
        uji.on("my_event", function(e) uji.sleep(0) seen[#seen + 1] = "second" end, { priority = 60 })
        uji.emit("my_event", { n = 1 })
        uji.notify("after emit: " .. table.concat(seen, ","))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert "after emit: my_event:1,second" in run.notices


def test_job_tools_take_id_and_jobs_configure_checks_its_keys(home: Home) -> None:
    home.init(
        """
        local jobs = require("uji.plugins.jobs").setup()
        local ok, err = pcall(jobs.configure, { wakeup = true })
        uji.notify("configure: " .. tostring(ok) .. " " .. err)
        ok, err = pcall(jobs.configure, { max = 0 })
        uji.notify("configure: " .. tostring(ok) .. " " .. err)
        """
    )
    home.fake.script(
        tool_call("run_command", {"command": "echo hi", "run_in_background": True}, id="c1"),
        tool_call("stop_job", {"id": 99}, id="c2"),
        text("done"),
    )
    run = home.run("go", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    schemas = tool_schemas(home.fake.turn_requests[0].body)
    assert schemas["job_output"]["parameters"]["required"] == ["id"]
    assert schemas["stop_job"]["parameters"]["required"] == ["id"]
    results = {m["tool_call_id"]: m["content"] for m in run.tool_results()}
    assert "job_output with id=1" in results["c1"]
    assert results["c2"] == "error: job 99 is not running"
    assert any("unknown key wakeup (known: wake, max, limit)" in n for n in run.notices)
    assert any("`max` must be a whole number >= 1" in n for n in run.notices)


def test_stand_ins_are_falsy_to_feature_checks_and_name_the_call(home: Home) -> None:
    home.init(
        """
        if uji.ui.not_a_thing then uji.notify("has it") else uji.notify("no such thing") end
        uji.notify("type: " .. type(uji.ui.not_a_thing))
        local handle = uji.ui.not_a_thing({})
        uji.notify("handle: " .. tostring(handle))
        local ok, err = pcall(function() local t = nil; return t.field end)
        uji.notify("plain nil still raises: " .. tostring(ok) .. " " .. tostring(err))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    init = home.config / "init.lua"
    assert {"no such thing", "type: nil", "handle: nil"} <= set(run.notices)
    assert (
        f"{init}:{home.line_of('uji.ui.not_a_thing({})')}: uji.ui.not_a_thing is not supported yet; the call "
        "did nothing"
    ) in run.notices
    assert any(n.startswith("plain nil still raises: false") and "attempt to index" in n for n in run.notices)


def test_ctx_task_reports_every_task_as_a_tasks_event(home: Home) -> None:
    home.init(
        """
        uji.tool.add("fan_out", {
          run = function(args, ctx)
            local a = ctx.task("agent a", { group = "review" })
            local b = ctx.task("agent b", { status = "queued", group = "review" })
            a:update({ line = "reading files" })
            b:update({ status = "running" })
            a:done("found 2 issues")
            b:fail("timed out")
            local ok, err = pcall(ctx.task, "c", { status = "sleeping" })
            return "fanned out; " .. tostring(err)
          end,
        })
        """
    )
    home.fake.script(tool_call("fan_out", {}, id="c1"), text("done"))
    run = home.run("go", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    events = run.of("tasks")
    assert all(e["tool"] == "fan_out" and e["id"] == "c1" for e in events)
    assert [[(t["label"], t["status"]) for t in e["tasks"]] for e in events] == [
        [("agent a", "running")],
        [("agent a", "running"), ("agent b", "queued")],
        [("agent a", "running"), ("agent b", "queued")],
        [("agent a", "running"), ("agent b", "running")],
        [("agent a", "done"), ("agent b", "running")],
        [("agent a", "done"), ("agent b", "failed")],
    ]
    last = events[-1]["tasks"]
    assert last[0]["detail"] == "found 2 issues" and last[0]["line"] == "reading files"
    assert last[0]["group"] == "review" and last[1]["detail"] == "timed out"
    assert all(isinstance(t["seconds"], float) for t in last)
    assert "seconds" not in events[1]["tasks"][1]  # queued: not started
    assert "status must be queued, running, done or failed" in run.tool_results()[0]["content"]


def test_the_readonly_plugin_denies_edits_under_its_directories(home: Home) -> None:
    (home.work / "vendor").mkdir()
    (home.work / "vendor" / "lib.py").write_text("x = 1\n")
    home.init(
        """
        require("uji.plugins.readonly").setup({ paths = { "vendor", "~/notes" } })
        uji.tool.policy({ write_file = { default = "allow" }, edit_file = { default = "allow" } })
        """
    )
    home.fake.script(
        tool_call("write_file", {"path": "vendor/../vendor/new.py", "content": "y"}, id="c1"),
        tool_call(
            "edit_file", {"path": "vendor/lib.py", "old_string": "x = 1", "new_string": "x = 2"}, id="c2"
        ),
        tool_call("write_file", {"path": "src.py", "content": "ok"}, id="c3"),
        text("done"),
    )
    run = home.run("go", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    results = {m["tool_call_id"]: m["content"] for m in run.tool_results()}
    assert results["c1"].startswith("denied:") and "read-only directory" in results["c1"]
    assert results["c2"].startswith("denied:") and f"({home.work}/vendor)" in results["c2"]
    assert not results["c3"].startswith("denied")
    decided = {c["id"]: c for c in run.calls}
    assert decided["c1"]["by"] == "hook" and decided["c1"]["hook"] == "readonly"
    assert (home.work / "vendor" / "lib.py").read_text() == "x = 1\n"
    assert not (home.work / "vendor" / "new.py").exists() and (home.work / "src.py").read_text() == "ok"


def test_ui_exec_runs_a_program_and_ui_open_hands_a_target_to_the_opener(home: Home) -> None:
    bin_dir = home.root / "bin"
    bin_dir.mkdir()
    opener = bin_dir / "xdg-open"
    opener.write_text(f'#!/bin/sh\necho "$1" > {home.root}/opened\n')
    opener.chmod(0o755)
    home.init(
        f"""
        uji.notify("exec: " .. uji.ui.exec("echo ran > {home.root}/ran; exit 3"))
        uji.notify("argv: " .. uji.ui.exec({{ "sh", "-c", "exit 0" }}))
        uji.notify("open: " .. tostring(uji.ui.open("https://example.com/x")))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi", env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert run.rc == 0, run.stderr
    assert {"exec: 3", "argv: 0", "open: true"} <= set(run.notices)
    assert (home.root / "ran").read_text() == "ran\n"
    opened = home.root / "opened"
    until(lambda: opened.exists() and opened.read_text() == "https://example.com/x\n", timeout=10)


def test_input_attach_without_a_screen_checks_the_file_and_says_there_is_no_draft(home: Home) -> None:
    (home.work / "notes.txt").write_text("text")
    home.init(
        """
        local ok, err = uji.input.attach("notes.txt")
        uji.notify("text: " .. tostring(ok) .. " " .. err)
        ok, err = uji.input.attach("missing.png")
        uji.notify("missing: " .. tostring(ok) .. " " .. err)
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert any(n.startswith("text: nil notes.txt: not a png") for n in run.notices), run.notices
    assert any(n.startswith("missing: nil missing.png") for n in run.notices), run.notices
