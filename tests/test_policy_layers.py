"""Rules keep their promise: a user's `uji.tool.policy` adds to uji's shipped defaults
(it never drops the shipped deny of a forced recursive rm), dropping that deny takes the
documented opt-out (`uji.tool.policy(rules, { name = "defaults" })`), and the original
uji's rule form `{ pattern = …, message = … }` works in every list. Through the real
`uji run --json`: the decision, who made it and with which rule, what the model read,
and what is still on disk."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Home, Run
from tests.fakes.openai_server import call, text, tool_call, tool_calls

SHIPPED_RM = "/^(\\S*/)?rm(?=\\s)"  # how the shipped deny rule begins


def tool_contents(home: Home) -> list[str]:
    """What the model received as tool results, in order, from the last request."""
    body = home.fake.turn_requests[-1].body
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def one_call(
    home: Home, lua: str, tool: str, args: dict[str, str], *flags: str
) -> tuple[Run, dict[str, Any]]:
    """Run one call of `tool` under `lua`'s config; the run and the call's event."""
    home.init(lua)
    home.fake.script(tool_call(tool, args), text("ok"))
    run = home.run("go", *flags, timeout=50)
    assert run.rc == 0, run.stderr
    [event] = run.calls
    return run, event


def build_dir(home: Home) -> None:
    (home.work / "build").mkdir()
    (home.work / "build" / "keep.txt").write_text("precious")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("on_ask", [None, "allow"])
def test_a_users_allow_rules_keep_the_shipped_rm_deny(home: Home, on_ask: str | None) -> None:
    build_dir(home)
    lua = 'uji.tool.policy({ run_command = { allow = { "git status", "pytest*" } } })'
    flags = ["--on-ask", on_ask] if on_ask else []
    _, event = one_call(home, lua, "run_command", {"command": "rm -rf build"}, *flags)
    assert (event["decision"], event["by"], event["policy"]) == ("deny", "policy", "deny")
    assert event["rule"].startswith(SHIPPED_RM) and "builtin/defaults.lua" in event["source"]
    assert "question" not in event  # refused by the rule: nobody was asked
    assert (home.work / "build" / "keep.txt").read_text() == "precious"
    assert tool_contents(home)[0].startswith("denied: blocked by the policy rule")


@pytest.mark.timeout(60)
def test_a_users_own_allow_for_rm_does_not_lift_the_shipped_deny(home: Home) -> None:
    build_dir(home)
    lua = 'uji.tool.policy({ default = "allow", run_command = { allow = { "rm *" }, default = "allow" } })'
    _, event = one_call(home, lua, "run_command", {"command": "rm -rf build"}, "--on-ask", "allow")
    assert (event["decision"], event["by"]) == ("deny", "policy")
    assert event["rule"].startswith(SHIPPED_RM)
    assert (home.work / "build").is_dir()


@pytest.mark.timeout(60)
def test_naming_the_defaults_set_drops_the_shipped_deny(home: Home) -> None:
    """The documented opt-out: the shipped rules are the rule set named "defaults", and a
    call naming that set replaces its rules for the tools it names, like any call."""
    build_dir(home)
    lua = """
        uji.tool.policy({ run_command = {} }, { name = "defaults" })
        uji.tool.policy({ run_command = { allow = { "rm -rf build" } } })
    """
    _, event = one_call(home, lua, "run_command", {"command": "rm -rf build"}, "--on-ask", "deny")
    assert (event["decision"], event["by"], event["rule"]) == ("allow", "policy", "rm -rf build")
    line = home.line_of('allow = { "rm -rf build" }')
    assert f"init.lua:{line}" in event["source"]
    assert not (home.work / "build").exists()


@pytest.mark.timeout(60)
def test_named_sets_add_deny_rules_and_each_call_replaces_its_own_set(home: Home) -> None:
    """`opts.name` keeps a rule set of its own: every set's deny rules apply; a later call
    of the unnamed set replaces the unnamed set's rules only."""
    (home.work / "a.txt").write_text("a")
    lua = """
        uji.tool.policy({ read_file = { deny = { "a.txt" } } }, { name = "mine" })
        uji.tool.policy({ read_file = { allow = { "*" } } })
        uji.tool.policy({ read_file = { allow = { "a.txt" } } })
    """
    _, event = one_call(home, lua, "read_file", {"path": "a.txt"}, "--on-ask", "allow")
    assert (event["decision"], event["by"], event["rule"]) == ("deny", "policy", "a.txt")
    line = home.line_of('name = "mine"')
    assert f"init.lua:{line}" in event["source"]


@pytest.mark.timeout(60)
def test_a_bad_policy_option_is_an_error_with_file_and_line(home: Home) -> None:
    home.init('uji.tool.policy({ run_command = { allow = { "ls" } } }, { name = 3 })')
    home.fake.script(text("ok"))
    run = home.run("hi", timeout=50)
    assert run.rc == 0, run.stderr
    line = home.line_of("name = 3")
    assert any(f"init.lua:{line}" in n and "name" in n for n in run.notices), run.notices


# The original uji's rule form: { pattern = "/re/", message = "…" }, in every list.


@pytest.mark.timeout(60)
def test_a_deny_rule_with_a_message_tells_the_model_that_message(home: Home) -> None:
    build_dir(home)
    lua = """
        uji.tool.policy({ run_command = {
          deny = { { pattern = "/^rm\\\\s+-r/", message = "never rm -r here" } },
        } })
    """
    run, event = one_call(home, lua, "run_command", {"command": "rm -r build"}, "--on-ask", "allow")
    assert not any("not a pattern" in n for n in run.notices), run.notices
    assert (event["decision"], event["by"], event["rule"]) == ("deny", "policy", "/^rm\\s+-r/")
    assert event["reason"] == "never rm -r here"
    line = home.line_of("uji.tool.policy")
    assert f"init.lua:{line}" in event["source"]
    assert tool_contents(home) == ["denied: never rm -r here"]
    assert (home.work / "build" / "keep.txt").is_file()


@pytest.mark.timeout(60)
def test_the_table_form_works_in_the_allow_and_ask_lists(home: Home) -> None:
    home.init(
        """
        uji.tool.policy({ run_command = {
          allow = { { pattern = "touch allowed*" } },
          ask = { { pattern = "/^touch asked/", message = "Touch the asked file?" } },
          default = "allow",
        } })
        """
    )
    home.fake.script(
        tool_calls(
            call("run_command", {"command": "touch allowed.txt"}),
            call("run_command", {"command": "touch asked.txt"}),
        ),
        text("ok"),
    )
    run = home.run("touch", "--on-ask", "deny", timeout=50)
    assert run.rc == 0, run.stderr
    allowed, asked = run.calls
    assert (allowed["decision"], allowed["by"], allowed["rule"]) == ("allow", "policy", "touch allowed*")
    assert (asked["decision"], asked["by"], asked["policy"], asked["rule"]) == (
        "deny",
        "auto",
        "ask",
        "/^touch asked/",
    )
    assert asked["question"] == "Touch the asked file?"  # an ask rule's message is the question
    assert (home.work / "allowed.txt").exists() and not (home.work / "asked.txt").exists()


@pytest.mark.timeout(60)
def test_a_table_rule_without_a_pattern_is_a_notice_and_the_tool_asks(home: Home) -> None:
    home.init(
        """
        uji.tool.policy({ run_command = {
          allow = { { message = "no pattern" }, "touch *" },
          default = "allow",
        } })
        """
    )
    home.fake.script(
        tool_calls(call("run_command", {"command": "touch a.txt"}), call("run_command", {"command": "ls"})),
        text("ok"),
    )
    run = home.run("touch", "--on-ask", "deny", timeout=50)
    assert run.rc == 0, run.stderr
    line = home.line_of("uji.tool.policy")
    assert any("run_command.allow" in n and "pattern" in n and f"init.lua:{line}" in n for n in run.notices)
    touched, listed = run.calls
    assert (touched["decision"], touched["rule"]) == ("allow", "touch *")  # the readable rule works
    assert (listed["decision"], listed["by"], listed["policy"]) == ("deny", "auto", "ask")
