"""`Gate.decide` and its order (arguments → subject → disabled → confinement → before_tool
hooks → the policy with the mode and the remembered approvals), through the real
`uji run --json`: each call's event names the layer that decided (`by`), the rule or
hook and where it was set, and whether a question was asked; the hook's own record says
whether it was called at all."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_calls
from uji.tools.base import Tool
from uji.tools.verdict import Verdict

# A before_tool hook that writes each call it sees to hook.log, then decides by the
# call's subject.
HOOKED = """
uji.tool.policy({ run_command = { deny = { "echo denied-by-rule" }, allow = { "echo *" } } })
uji.tool.disable({ "write_file" })
uji.on("before_tool", function(e)
  local f = io.open("hook.log", "a")
  f:write(e.name .. " " .. (e.arguments.command or e.arguments.path or "") .. "\\n")
  f:close()
  local c = e.arguments.command
  if c == "echo hook-mixes" then return { deny = "the hook says no", ask = true, allow = true } end
  if c == "echo hook-asks" then return { ask = "Echo this?" } end
  if c == "echo denied-by-rule" then return { allow = true } end
end)
"""


@pytest.mark.timeout(90)
def test_each_layer_decides_in_order_and_says_so(home: Home) -> None:
    outside = home.root / "outside.txt"
    outside.write_text("secret")
    home.init(HOOKED)
    home.fake.script(
        tool_calls(
            call("write_file", {"path": "w.txt", "content": "x"}),  # disabled
            call("read_file", {"path": str(outside)}),  # confinement
            call("run_command", {"command": "echo hook-mixes"}),  # a hook: deny wins
            call("run_command", {"command": "echo hook-asks"}),  # a hook asks
            call("run_command", {"command": "echo denied-by-rule"}),  # a hook's allow beats a rule
            call("run_command", {"command": "echo by-rule"}),  # the policy
        ),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny", timeout=80)
    assert run.rc == 0, run.stderr
    got = [(c["decision"], c["by"], c.get("rule"), c.get("hook"), c.get("question")) for c in run.calls]
    assert got == [
        ("deny", "disabled", None, None, None),
        ("deny", "confine", None, None, None),
        ("deny", "hook", None, "before_tool#1", None),
        ("deny", "auto", None, "before_tool#1", "Echo this?"),
        ("allow", "hook", None, "before_tool#1", None),
        ("allow", "policy", "echo *", None, None),
    ]
    hook_origin = f"init.lua:{home.line_of('uji.on(')}"
    assert all(hook_origin in c["hook_origin"] for c in run.calls[2:5])
    assert [c.get("policy") for c in run.calls] == [None, None, None, None, None, "allow"]
    assert run.calls[2]["reason"] == "the hook says no"
    assert run.calls[3]["asked_by"] == "hook"
    # The hook was called for the calls past disabled and confinement only.
    seen = (home.work / "hook.log").read_text().splitlines()
    commands = ["hook-mixes", "hook-asks", "denied-by-rule", "by-rule"]
    assert seen == [f"run_command echo {c}" for c in commands]
    assert not (home.work / "w.txt").exists()
    results = [m["content"] for m in run.tool_results()]
    assert results[0] == "denied: write_file is disabled"
    assert results[2] == "denied: the hook says no"
    assert results[4].strip() == "denied-by-rule" and results[5].strip() == "by-rule"


def test_gate_decide_gives_the_verdict_who_decided_and_why(tmp_path: Path) -> None:
    """The gate alone (no agent, no Lua): the verdict of each layer, with the hook given
    as the callable the agent passes."""
    from uji.tools.builtin import builtin_tools
    from uji.tools.decision import HookVerdict
    from uji.tools.gate import Gate

    gate = Gate(str(tmp_path), str(tmp_path / "auth.toml"), str(tmp_path / "rules.lua"), list)
    for tool in builtin_tools(gate.sandbox):
        gate.registry.add(tool)
    gate.policy.set({"run_command": {"ask": [{"pattern": "git push*", "message": "Push?"}]}}, "init.lua:2")
    gate.policy.set({"run_command": {"deny": ["/^rm\\s+-rf/"]}}, "defaults.lua:9", "defaults")
    run_command = gate.registry.get("run_command")
    read_file = gate.registry.get("read_file")
    assert run_command is not None and read_file is not None
    seen: list[str] = []

    async def hook(name: str, args: dict[str, Any]) -> HookVerdict | None:
        seen.append(args.get("command") or args.get("path") or "")
        return HookVerdict("deny", "no", "guard", "init.lua:5") if args.get("command") == "ls" else None

    def decide(tool: Tool, subject: str, key: str) -> Verdict:
        return asyncio.run(gate.decide(tool, subject, {key: subject}, hook))

    v = decide(read_file, "/etc/hostname", "path")
    assert (v.decision, v.by, v.layer, v.reason) == ("deny", "confine", "confine", v.reason) and v.reason
    v = decide(run_command, "ls", "command")
    assert (v.decision, v.by, v.layer, v.reason, v.hook, v.origin) == (
        "deny",
        "hook",
        "hook",
        "no",
        "guard",
        "init.lua:5",
    )
    v = decide(run_command, "rm -rf x", "command")
    assert (v.decision, v.by, v.layer, v.rule, v.origin) == (
        "deny",
        "rule",
        "policy",
        "/^rm\\s+-rf/",
        "defaults.lua:9",
    )
    assert v.reason == "blocked by the policy rule `/^rm\\s+-rf/` (in `rm -rf x`)"
    v = decide(run_command, "git push origin", "command")
    assert (v.decision, v.by, v.title, v.remember) == ("ask", "rule", "Push?", "git push origin")
    gate.registry.disable(["run_command"])
    v = decide(run_command, "ls", "command")
    assert (v.decision, v.by, v.reason) == ("deny", "disabled", "run_command is disabled")
    assert seen == ["ls", "rm -rf x", "git push origin"]  # never for what confinement or disabling refused
