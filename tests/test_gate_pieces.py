"""The pieces of Gate.decide that need none of its state (uji.tools.decision), each at its
edges: a before_tool result read with Lua truthiness, the form of a path a rule matched, a
symlink making a path another file, and the words of a deny. The layers around them are
tested through `uji run` in test_gate_decide.py and test_gate_layers.py; these edges are
ones a run reaches only by accident (a hook returning 0 or "", a path with a NUL)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from uji.tools.base import Tool, ToolContext, ToolResult
from uji.tools.confine import Sandbox
from uji.tools.decision import deny_text, matched_form, read_hook, through_symlink
from uji.tools.verdict import Verdict

pytestmark = pytest.mark.timeout(10)


def test_a_hook_result_is_read_with_lua_truthiness() -> None:
    # 0 and "" are true in Lua: `{ deny = 0 }` denies, with the handler's name for reason.
    assert read_hook({"deny": 0}, "guard") == ("deny", "denied by guard")
    assert read_hook({"deny": ""}, "guard") == ("deny", "denied by guard")
    assert read_hook({"deny": True}, "guard") == ("deny", "denied by guard")
    assert read_hook({"deny": "no"}, "guard") == ("deny", "no")
    assert read_hook({"ask": 0}, "guard") == ("ask", None)
    assert read_hook({"ask": ""}, "guard") == ("ask", None)
    assert read_hook({"ask": "sure?"}, "guard") == ("ask", "sure?")
    assert read_hook({"allow": 0}, "guard") == ("allow", None)
    # false and nil decide nothing; the strictest of several wins.
    assert read_hook({"deny": False, "ask": False, "allow": False}, "guard") is None
    assert read_hook({"allow": True, "ask": True}, "guard") == ("ask", None)
    assert read_hook({"allow": True, "ask": True, "deny": "x"}, "guard") == ("deny", "x")
    assert read_hook("deny", "guard") is None
    assert read_hook(None, "guard") is None


def test_the_form_a_rule_matched_is_named_only_when_not_as_written() -> None:
    forms = ["link/.env", "/project/real/.env"]
    assert matched_form("link/*", forms) is None  # matched as written
    assert matched_form("/project/real/*", forms) == "/project/real/.env"
    assert matched_form("*.env", ["a.env", "b.env"]) is None  # the first form matched
    assert matched_form("b.*", ["a.env", "b.env", "c.env"]) == "b.env"  # a middle one
    assert matched_form("zzz", forms) is None


def test_a_symlink_in_the_path_or_the_file_makes_it_another_file(tmp_path: Path) -> None:
    cwd = tmp_path.resolve()
    (cwd / "real").mkdir()
    (cwd / "real" / "f").write_text("x")
    (cwd / "a" / "b").mkdir(parents=True)
    os.symlink(cwd / "real", cwd / "dir")
    os.symlink(cwd / "a" / "b", cwd / "deep")
    os.symlink(cwd / "real" / "f", cwd / "file")
    sandbox = Sandbox(str(cwd), [])
    assert through_symlink(sandbox, "dir/f")
    assert through_symlink(sandbox, "file")
    assert through_symlink(sandbox, "deep/../x")  # a/x: climbs from where `deep` points
    assert not through_symlink(sandbox, "real/f")
    assert not through_symlink(sandbox, "missing/file")
    # A path the system cannot resolve is treated as another file (the stricter answer).
    assert through_symlink(sandbox, "real/f\0x")


def test_a_deny_tells_the_model_what_decided_it() -> None:
    rule = Verdict(decision="deny", by="rule", rule="rm *", subject="rm -rf x")
    assert deny_text(rule, "run_command") == "blocked by the policy rule `rm *` (in `rm -rf x`)"
    form = Verdict(decision="deny", by="rule", rule="/p/real/*", subject="link", form="/p/real/f")
    assert deny_text(form, "read_file") == "blocked by the policy rule `/p/real/*` (the file is `/p/real/f`)"
    said = Verdict(decision="deny", by="rule", rule="rm *", message="never rm here")
    assert deny_text(said, "run_command") == "never rm here"
    assert deny_text(Verdict(decision="deny", by="rule", rule="rm"), "t") == "blocked by the policy rule `rm`"
    mode = Verdict(decision="deny", by="mode", rule="plan")
    assert deny_text(mode, "t") == "blocked by the plan mode (Shift+Tab or uji.mode.set changes the mode)"
    default = Verdict(decision="deny", by="default")
    assert deny_text(default, "t") == "blocked by policy (the top-level default `deny`)"


def test_a_path_that_cannot_name_a_file_is_refused_with_where() -> None:
    from uji.tools.path_forms import MAX_PATH_BYTES, path_problem

    assert MAX_PATH_BYTES == 4096  # Linux's PATH_MAX
    assert path_problem("a" * 4096) is None
    assert path_problem("a" * 4097) == "path is too long (4097 bytes; the limit is 4096)"
    assert path_problem("é" * 2048) is None  # bytes, not characters: 4096 of them
    assert path_problem("ab\0c") == "path contains a NUL byte at character 3"
    assert path_problem("\nx") == "path contains a newline at character 1"
    assert path_problem("x\r") == "path contains a carriage return at character 2"
    assert path_problem("ok\ud800") == "path is not valid text (an unpaired surrogate at character 3)"
    assert path_problem("a/b c/é.txt") is None


def test_every_spelling_of_a_file_is_a_form_the_rules_see(tmp_path: Path) -> None:
    from uji.tools.path_forms import path_forms

    cwd = tmp_path.resolve()
    (cwd / "real").mkdir()
    os.symlink(cwd / "real", cwd / "link")
    sandbox = Sandbox(str(cwd), [])
    assert path_forms(sandbox, "./sub/../b.txt") == ["./sub/../b.txt", str(cwd / "b.txt"), "b.txt"]
    assert "link/f" in path_forms(sandbox, "./link/f")  # as written, folded: a rule for link/* sees it
    assert path_forms(sandbox, "link/f") == [
        "link/f",
        str(cwd / "link" / "f"),
        str(cwd / "real" / "f"),
        "real/f",
    ]


def test_what_runs_inside_the_sandbox_is_what_the_headless_default_allows(tmp_path: Path) -> None:
    """Gate.contains answers `--on-ask sandbox` (uji run's default): a question is allowed
    only for a call that runs inside. A file tool is inside when confined, a write only
    when the sandbox is not read-only; a command when the kernel's sandbox is on; a Lua or
    MCP tool never."""
    from uji.sandbox import status
    from uji.sandbox.policy import SandboxSettings
    from uji.tools.builtin import builtin_tools
    from uji.tools.gate import Gate

    gate = Gate(str(tmp_path), str(tmp_path / "auth.toml"), str(tmp_path / "rules.lua"), list)
    tools = {t.name: t for t in builtin_tools(gate.sandbox)}
    read, write, command = tools["read_file"], tools["write_file"], tools["run_command"]
    kernel = status(SandboxSettings()).available
    assert (gate.contains(read), gate.contains(write), gate.contains(command)) == (True, True, kernel)
    assert (gate.command_sandbox() is not None) == kernel
    gate.os_sandbox = SandboxSettings(mode="read-only")
    assert (gate.contains(read), gate.contains(write)) == (True, False)
    gate.os_sandbox = SandboxSettings(mode="off")
    assert (gate.contains(read), gate.contains(write), gate.contains(command)) == (True, True, False)
    assert gate.command_sandbox() is None
    gate.confined = False  # uji.tool.confine(false): a file tool reaches anywhere
    assert (gate.contains(read), gate.contains(write)) == (False, False)
    gate.confined = True
    outside = _Outside("lua_paths")
    assert not gate.contains(outside)  # a path subject, not confined: runs in uji
    # Nor does confinement judge its subject: the policy does (here: nothing set, so ask).
    import asyncio

    verdict = asyncio.run(gate.decide(outside, "/etc/passwd", {}))
    assert (verdict.decision, verdict.by) == ("ask", "fallback")
    verdict = asyncio.run(gate.decide(read, "/etc/passwd", {"path": "/etc/passwd"}))
    assert (verdict.decision, verdict.by) == ("deny", "confine")


class _Outside(Tool):
    """A tool of a config or a server: its subject may be a path, uji does not confine it."""

    path_subject = True
    writes = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise AssertionError("not run here")


def test_the_policy_layer_at_its_edges() -> None:
    """Policy alone: the strictest top-level default of several sets, a tool whose rules
    could not be read never decided below ask but never loosened either, a remembered
    allow of a whole tool answering only where asked to, and a deny rule not turned into
    a question by a write flag."""
    from uji.tools.policy import Policy
    from uji.tools.remembered import ANY_SUBJECT, SESSION

    policy = Policy()
    policy.set({"default": "allow"}, "init.lua:1")
    policy.set({"default": "deny"}, "pack.lua:1", name="pack")
    verdict = policy.fallback("web_fetch", None)
    assert (verdict.decision, verdict.by, verdict.origin) == ("deny", "default", "pack.lua:1")

    # A glob that cannot be read is named as a glob, with why.
    notices = policy.set({"edit_file": {"allow": ["src/*{a"]}}, "init.lua:9")
    assert notices == [
        "policy: edit_file.allow: invalid glob 'src/*{a': unclosed '{' in glob 'src/*{a'; edit_file now asks (init.lua:9)"
    ]
    # A bad rule: the tool asks at least, and its default deny stays a deny.
    notices = policy.set({"run_command": {"default": "deny", "allow": [{"nopattern": 1}]}}, "init.lua:2")
    assert notices and "run_command now asks" in notices[0]
    assert (policy.floor("run_command"), policy.fallback("run_command", None).decision) == ("ask", "deny")
    policy.set({"read_file": {"default": "allow", "allow": [{"nopattern": 1}]}}, "init.lua:3")
    lifted = policy.fallback("read_file", None)
    assert (lifted.decision, lifted.by) == ("ask", "fallback")

    # "Allow this tool for the session" answers calls of that tool only where the caller
    # says the tool is remembered whole (an MCP tool), not a subject that happens to be "*".
    policy.remembered.add("mcp__srv__get", ANY_SUBJECT, SESSION)
    policy.set({"mcp__srv__get": {"default": "ask"}}, "init.lua:4")
    assert policy.decide("mcp__srv__get", ["{}"], None).decision == "ask"
    assert policy.decide("mcp__srv__get", ["{}"], None, whole_tool=True).by == "remembered"

    # A deny rule stays a deny whatever flag the command carries; an allow rule asks.
    policy.write_flags.set({"git diff": ["--output"], "git log": ["--output"]}, "init.lua:5")
    policy.set({"run_command": {"deny": ["git diff*"], "allow": ["git log*"]}}, "init.lua:6")
    for line in ("git diff --output=/tmp/x", "git log -1; git diff --output=/tmp/x"):
        denied = policy.decide_command("run_command", line, None)
        assert (denied.decision, denied.by, denied.rule) == ("deny", "rule", "git diff*"), line
    flagged = policy.decide_command("run_command", "git log --output=/tmp/x", None)
    assert (flagged.decision, flagged.by) == ("ask", "write-flag")


def test_what_an_allow_for_the_session_answer_would_remember(tmp_path: Path) -> None:
    """Gate.remember_scope: the part of a command line that asked, a file's absolute
    normal path (never one reached through a symlink, which could be swapped), nothing for
    a line that writes through `>`."""
    import asyncio

    from uji.tools.builtin import builtin_tools
    from uji.tools.gate import Gate

    cwd = tmp_path.resolve()
    (cwd / "real").mkdir()
    os.symlink(cwd / "real", cwd / "link")
    gate = Gate(str(cwd), str(cwd / "auth.toml"), str(cwd / "rules.lua"), list)
    tools = {t.name: t for t in builtin_tools(gate.sandbox)}
    gate.policy.set({"run_command": {"allow": ["ls*"]}, "read_file": {"default": "ask"}}, "init.lua:1")

    def scope(tool: str, subject: str, args: dict[str, Any]) -> str | None:
        verdict = asyncio.run(gate.decide(tools[tool], subject, args))
        assert verdict.decision == "ask", subject
        return verdict.remember

    assert scope("run_command", "ls; git push", {"command": "ls; git push"}) == "git push"
    assert scope("run_command", "git push > out.txt", {"command": "git push > out.txt"}) is None
    assert scope("read_file", "./real/../a.txt", {"path": "./real/../a.txt"}) == str(cwd / "a.txt")
    assert scope("read_file", "link/a.txt", {"path": "link/a.txt"}) is None
