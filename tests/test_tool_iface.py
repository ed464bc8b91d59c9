"""One Tool interface for built-in and Lua tools (tools/base.py), seen through the real
`uji run --json`: the subject each kind of tool gives, the preview an asked call shows
(in the `call` event, as in the TUI's approval question), a built-in replaced from Lua,
and a Lua tool's context."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Home, tool_schemas
from tests.fakes.openai_server import call, text, tool_call, tool_calls

KEY = "sk-test-preview-0123456789abcdef"


def tool_contents(home: Home) -> list[str]:
    body = home.fake.turn_requests[-1].body
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_an_asked_edit_shows_its_diff_in_the_call_event(home: Home) -> None:
    (home.work / "f.txt").write_text("one\nold\nthree\n")
    home.init("")
    home.fake.script(
        tool_call("edit_file", {"path": "f.txt", "old_string": "old", "new_string": "new"}), text("ok")
    )
    run = home.run("edit", check=True)
    [c] = run.calls
    assert (c["decision"], c["by"], c["question"], c["body"]) == (
        "allow",
        "auto",
        "Make the following edit?",
        "f.txt",
    )
    assert c["preview"] == "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-old\n+new\n three\n"
    assert (home.work / "f.txt").read_text() == "one\nnew\nthree\n"


def test_a_call_that_does_not_ask_has_no_preview(home: Home) -> None:
    (home.work / "f.txt").write_text("old\n")
    home.init('uji.tool.policy({ edit_file = { allow = { "f.txt" } } })')
    home.fake.script(
        tool_call("edit_file", {"path": "f.txt", "old_string": "old", "new_string": "new"}), text("ok")
    )
    run = home.run("edit", check=True)
    [c] = run.calls
    assert (c["decision"], c["by"], c["rule"]) == ("allow", "policy", "f.txt")
    assert "preview" not in c and "question" not in c
    assert (home.work / "f.txt").read_text() == "new\n"


def test_the_preview_reads_files_through_the_roots_set_from_lua(home: Home, tmp_path: Path) -> None:
    # The file tools get the sandbox of the moment: a root added in init.lua is reachable.
    other = tmp_path / "other"
    other.mkdir()
    target = other / "g.txt"
    target.write_text("a\n")
    home.init(f'uji.tool.roots({{ "{other}" }})')
    home.fake.script(tool_call("write_file", {"path": str(target), "content": "b\n"}), text("ok"))
    run = home.run("write", check=True)
    [c] = run.calls
    assert c["by"] == "auto" and c["body"] == str(target)
    assert c["preview"] == f"--- a/{target}\n+++ b/{target}\n@@ -1 +1 @@\n-a\n+b\n"
    assert target.read_text() == "b\n"


def test_a_preview_has_the_secrets_cut_out(home: Home) -> None:
    home.init("")
    content = f"token = {KEY}\n"
    home.fake.script(tool_call("write_file", {"path": "k.txt", "content": content}), text("ok"))
    run = home.run("write", env={"OPENAI_API_KEY": KEY}, check=True)
    [c] = run.calls
    assert c["preview"].endswith("+token = [redacted OPENAI_API_KEY]\n")
    assert KEY not in json.dumps(c)
    assert (home.work / "k.txt").read_text() == content


def test_a_lua_tool_gives_its_subject_and_no_preview(home: Home) -> None:
    home.init(
        """
        uji.tool.add("fetch", {
          subject = function(a) return "url " .. a.url end,
          run = function(a) return "fetched " .. a.url end,
        })
        uji.tool.add("bare", { run = function() return "ran" end })
        """
    )
    home.fake.script(tool_calls(call("fetch", {"url": "https://x/"}), call("bare", {"n": 1})), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    fetch, bare = run.calls
    assert (fetch["subject"], fetch["body"], fetch["by"]) == ("url https://x/", "url https://x/", "auto")
    assert (bare["subject"], bare["body"]) == ("bare", "n: 1")
    assert "preview" not in fetch and "preview" not in bare
    assert tool_contents(home) == ["fetched https://x/", "ran"]


def test_a_lua_edit_file_replaces_the_built_in_entirely(home: Home) -> None:
    """Its schema, subject, question, argument checks and run are the Lua tool's; the
    built-in's diff preview and its own argument errors are gone with it."""
    (home.work / "f.txt").write_text("old\n")
    home.init(
        """
        uji.tool.add("edit_file", {
          description = "Edits through Lua.",
          parameters = { type = "object", properties = { path = { type = "string" } }, required = { "path" } },
          subject = function(a) return "lua:" .. a.path end,
          run = function(a) return "lua edit " .. a.path end,
        })
        uji.tool.policy({ edit_file = { deny = { "lua:secret*" } } })
        """
    )
    home.fake.script(
        tool_calls(
            call("edit_file", {"path": "f.txt", "old_string": "old", "new_string": "new"}),
            call("edit_file", {"path": "secret.txt"}),
            call("edit_file", {"old_string": "old"}),
        ),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "allow", check=True)
    schema = tool_schemas(home.fake.turn_requests[0].body)["edit_file"]
    assert schema["description"] == "Edits through Lua." and schema["parameters"]["required"] == ["path"]
    asked, denied = run.calls  # the third call fails its argument check before any decision
    assert (asked["subject"], asked["body"], asked["by"]) == ("lua:f.txt", "lua:f.txt", "auto")
    assert asked["question"] == "Would you like to run `edit_file`?"
    assert "preview" not in asked
    assert (denied["subject"], denied["decision"], denied["rule"]) == (
        "lua:secret.txt",
        "deny",
        "lua:secret*",
    )
    assert tool_contents(home) == [
        "lua edit f.txt",
        "denied: blocked by the policy rule `lua:secret*`",
        "error: `path` is required",
    ]
    assert (home.work / "f.txt").read_text() == "old\n"


def test_a_built_in_removed_and_added_back_from_lua_runs_the_lua_tool(home: Home) -> None:
    home.init(
        """
        uji.tool.remove("read_file")
        uji.tool.add("read_file", {
          policy = "allow",
          subject = function(a) return a.path end,
          run = function(a, ctx)
            local f = assert(io.open(a.path))
            local body = f:read("*a")
            f:close()
            return "wrapped: " .. body
          end,
        })
        """
    )
    (home.work / "r.txt").write_text("hello")
    home.fake.script(tool_call("read_file", {"path": "r.txt"}), text("ok"))
    run = home.run("go", check=True)
    assert run.calls[0]["subject"] == "r.txt" and run.calls[0]["by"] == "policy"
    assert tool_contents(home) == ["wrapped: hello"]


def test_a_lua_tool_whose_cancel_fails_tells_the_user(home: Home) -> None:
    # ctx.done never comes: at the timeout uji calls the cancel function, which fails.
    home.init(
        """
        uji.tool.add("stuck", {
          policy = "allow",
          timeout = 0.2,
          run = function() return function() error("cannot stop") end end,
        })
        """
    )
    home.fake.script(tool_call("stuck", {}), text("ok"))
    run = home.run("go", check=True)
    assert tool_contents(home) == ["error: stuck timed out after 0.2s waiting for ctx.done"]
    [notice] = [n for n in run.notices if n.startswith("stuck:")]
    assert notice.startswith("stuck: its cancel function failed:") and "cannot stop" in notice


def test_lua_tool_names_providers_refuse_are_offered_made_safe(home: Home) -> None:
    # `git.branch` is offered as `git_branch` (a dot makes providers refuse the request);
    # its rules, written under either name, go with it. `a.b` then `a_b`: one name once
    # safe, so the later replaces the earlier, as a tool of the same name does.
    home.init(
        """
        uji.tool.add("git.branch", { policy = "ask", run = function() return "on main" end })
        uji.tool.policy({ ["git.branch"] = { default = "allow" } })
        uji.tool.add("a.b", { policy = "allow", run = function() return "first" end })
        uji.tool.add("a_b", { policy = "allow", run = function() return "second" end })
        """
    )
    home.fake.script(
        tool_calls(call("git_branch", {}, id="g"), call("a_b", {}, id="ab")),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny", check=True)
    names = list(tool_schemas(home.fake.turn_requests[0].body))
    assert "git_branch" in names and "a_b" in names and not [n for n in names if "." in n]
    decided = {c["id"]: c for c in run.calls}
    assert (decided["g"]["decision"], decided["g"]["by"], decided["g"]["name"]) == (
        "allow",
        "policy",
        "git_branch",
    )
    assert [m["content"] for m in run.tool_results()] == ["on main", "second"]
    init = home.config / "init.lua"
    assert (
        "uji.tool.add: 'git.branch' is offered to the model as 'git_branch': providers accept only letters,"
        f" digits, _ and - in a tool's name, at most 64 of them ({init}:{home.line_of('git.branch')})"
    ) in run.notices
    assert any(n.startswith("uji.tool.add: 'a.b' is offered to the model as 'a_b'") for n in run.notices)
