"""The gate's edges, each through the real `uji run --json`, asserting which layer decided
(`by`, the rule, whether a question was asked) beside what ran or changed on disk. Each test
here was seen to fail with a one-line bug planted in the layer it names (see the commit)."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_call, tool_calls

SECRET = "PRIVATE-NOTES-5e1d"


def by_id(run: Any) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in run.calls}


def seen_by_model(home: Home) -> str:
    return "\n".join(json.dumps(r.body) for r in home.fake.turn_requests)


# (a) An ask rule keeps asking whatever the spelling: symlinks, `..`, both at once.


def test_an_ask_rule_asks_through_symlink_and_dotdot_spellings(home: Home) -> None:
    w = home.work
    (w / "private" / "inner").mkdir(parents=True)
    (w / "private" / "notes.txt").write_text(SECRET + "\n")
    (w / "public.txt").write_text("hello\n")
    os.symlink("private/inner", w / "inner")  # inner/../notes.txt is private/notes.txt
    os.symlink("private", w / "priv")
    os.symlink("private/notes.txt", w / "alias.txt")
    spellings = ["inner/../notes.txt", "priv/notes.txt", "alias.txt", "./private/../private/notes.txt"]
    home.init(
        'uji.tool.policy({ read_file = { ask = { "private/*" }, default = "allow" },\n'
        '  write_file = { ask = { "private/*" }, default = "allow" } })'
    )
    reads = [call("read_file", {"path": p}, id=f"r{i}") for i, p in enumerate(spellings)]
    writes = [
        call("write_file", {"path": p, "content": "overwritten\n"}, id=f"w{i}")
        for i, p in enumerate(spellings)
    ]
    control = call("read_file", {"path": "public.txt"}, id="pub")
    home.fake.script(tool_calls(*reads, *writes, control), text("ok"))
    run = home.run("go", "--on-ask", "deny", check=True)
    calls = by_id(run)
    for i in range(len(spellings)):
        for cid in (f"r{i}", f"w{i}"):
            c = calls[cid]
            # The policy asked (its rule, matched on the file reached), the question was
            # put, and --on-ask deny answered it: not a deny rule, not confinement.
            assert (c["decision"], c["by"], c["policy"], c["rule"]) == ("deny", "auto", "ask", "private/*"), c
            assert c["question"], c
    assert (calls["pub"]["decision"], calls["pub"]["by"]) == ("allow", "policy")
    assert SECRET not in seen_by_model(home) and "hello" in seen_by_model(home)
    assert (w / "private" / "notes.txt").read_text() == SECRET + "\n"


# (b) A before_tool hook's result mixing allow, ask and deny, under --on-ask allow (which
# would run anything that merely asks): deny wins, then ask, then allow.


@pytest.mark.parametrize(
    ("result", "decision", "by", "asked"),
    [
        ('{ deny = "no", ask = true }', "deny", "hook", False),
        ('{ ask = true, deny = "no" }', "deny", "hook", False),
        ('{ allow = true, ask = true, deny = "no" }', "deny", "hook", False),
        ('{ allow = true, deny = "no" }', "deny", "hook", False),
        ('{ ask = "Really?", allow = true }', "allow", "auto", True),
        ("{ ask = true }", "allow", "auto", True),
        ("{ allow = true }", "allow", "hook", False),
    ],
)
def test_hook_results_mixing_allow_ask_and_deny_under_on_ask_allow(
    home: Home, result: str, decision: str, by: str, asked: bool
) -> None:
    # The policy denies `touch *`: a hook's allow overrides it, a hook's ask is answered
    # by --on-ask allow; neither reaches the policy.
    home.init(
        'uji.tool.policy({ run_command = { deny = { "touch *" } } })\n'
        f'uji.on("before_tool", function() return {result} end)'
    )
    home.fake.script(tool_call("run_command", {"command": "touch ran"}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    (c,) = run.calls
    assert (c["decision"], c["by"], c["hook"]) == (decision, by, "before_tool#1"), c
    assert ("asked_by" in c) is asked and ("question" in c) is asked
    if asked:
        assert c["question"] == ("Really?" if "Really" in result else "Would you like to run `run_command`?")
    assert "policy" not in c  # the hook decided: the policy was never asked
    assert (home.work / "ran").exists() is (decision == "allow")
    if decision == "deny":
        assert run.tool_results()[0]["content"] == "denied: no"


# (c) Confinement comes before the hook: a call it refuses never reaches before_tool.


def test_a_before_tool_hook_is_not_called_for_a_call_confinement_refuses(home: Home) -> None:
    outside = home.root / "outside.txt"
    home.init(
        """
        uji.on("before_tool", function(e)
          uji.notify("hook saw " .. e.name .. " " .. tostring(e.arguments.path))
          return { allow = true }
        end)
        """
    )
    home.fake.script(
        tool_calls(
            call("write_file", {"path": "../outside.txt", "content": "escaped\n"}, id="out"),
            call("write_file", {"path": "inside.txt", "content": "fine\n"}, id="in"),
        ),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny", check=True)
    calls = by_id(run)
    assert (calls["out"]["decision"], calls["out"]["by"]) == ("deny", "confine")
    assert "hook" not in calls["out"] and "question" not in calls["out"]
    assert (calls["in"]["decision"], calls["in"]["by"], calls["in"]["hook"]) == (
        "allow",
        "hook",
        "before_tool#1",
    ), json.dumps(calls["in"])
    assert [n for n in run.notices if n.startswith("hook saw")] == ["hook saw write_file inside.txt"]
    assert not outside.exists() and (home.work / "inside.txt").read_text() == "fine\n"


# (e) Every variable that changes what a command runs makes an allowed command ask. The
# list is spelled out here, not read from uji's own set, so a name dropped there fails.

RISKY = [
    "PATH",
    "IFS",
    "ENV",
    "BASH_ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "PERL5OPT",
    "PERL5LIB",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "NODE_OPTIONS",
    "RUBYOPT",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_EDITOR",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_TEMPLATE_DIR",
    "GIT_SEQUENCE_EDITOR",
    "LESSOPEN",
    "LESSCLOSE",
    "LESSKEY",
    "LESSKEYIN",
    "LESSEDIT",
    "MANOPT",
    "BROWSER",
    "SHELL",
    "TAR_OPTIONS",
    "RIPGREP_CONFIG_PATH",
    "AWKPATH",
    "AWKLIBPATH",
    "CURL_HOME",
    "WGETRC",
    "GCONV_PATH",
    "TEXTDOMAIN",
    "TEXTDOMAINDIR",
    # by prefix
    "GIT_TRACE",
    "GIT_TRACE_SETUP",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_KEY_0",
]


def test_every_risky_variable_turns_an_allowed_command_into_a_question(home: Home) -> None:
    home.init('uji.tool.policy({ run_command = { allow = { "touch *", "env *" } } })')
    # As a prefix assignment and through `env`; a harmless variable is the control.
    cases = {f"p_{v}": f"{v}=./x touch p_{v}" for v in RISKY}
    cases |= {f"e_{v}": f"env {v}=./x touch e_{v}" for v in RISKY}
    cases |= {"p_HARMLESS": "HARMLESS=1 touch p_HARMLESS", "e_HARMLESS": "env HARMLESS=1 touch e_HARMLESS"}
    home.fake.script(
        tool_calls(*(call("run_command", {"command": c}, id=i) for i, c in cases.items())), text("ok")
    )
    run = home.run("go", "--on-ask", "deny", check=True, timeout=120)
    calls = by_id(run)
    for cid in cases:
        c = calls[cid]
        if cid.endswith("HARMLESS"):
            assert (c["decision"], c["by"], c["rule"]) == (
                "allow",
                "policy",
                "env *" if cid[0] == "e" else "touch *",
            )
            assert (home.work / cid).exists()
            continue
        var = cid[2:]
        # Asked (the part is not fixed text), answered by --on-ask deny; nothing ran.
        assert (c["decision"], c["by"], c["policy"]) == ("deny", "auto", "ask"), (cid, c)
        if cid[0] == "p":  # not fixed text, for the variable's sake
            assert c.get("unfixed") == f"setting {var} changes what runs", (cid, json.dumps(c))
        else:  # `env` is looked through no further: its whole command is the part judged
            assert c.get("part") == f"{var}=./x touch {cid}", (cid, json.dumps(c))
        assert not (home.work / cid).exists(), cid


# What the model is told of a deny names the layer that made it: a tool's default, a
# tool's declared policy, the top-level default.


def test_a_deny_tells_the_model_which_default_made_it(home: Home) -> None:
    home.init(
        """
        uji.tool.add("probe", { policy = "deny", run = function() return "ran" end })
        uji.tool.add("plain", { run = function() return "ran" end })  -- no policy of its own
        uji.tool.policy({ default = "deny", write_file = { default = "deny" } })
        uji.tool.policy({ probe = {} })
        """
    )
    home.fake.script(
        tool_calls(
            call("write_file", {"path": "w.txt", "content": "x"}, id="tool-default"),
            call("probe", {}, id="declared"),
            call("plain", {}, id="default"),
        ),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "allow", check=True)
    init = home.config / "init.lua"
    policy_line = home.line_of("write_file = { default")
    decided = by_id(run)
    assert {cid: (c["decision"], c["by"]) for cid, c in decided.items()} == {
        "tool-default": ("deny", "policy"),
        "declared": ("deny", "policy"),
        "default": ("deny", "policy"),
    }
    assert [m["content"] for m in run.tool_results()] == [
        f"denied: blocked by policy (write_file's default `deny` ({init}:{policy_line}))",
        "denied: blocked by policy (probe's declared policy `deny`)",
        f"denied: blocked by policy (the top-level default `deny` ({init}:{policy_line}))",
    ]
    assert not (home.work / "w.txt").exists()
