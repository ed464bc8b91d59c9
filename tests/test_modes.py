"""The gate's modes (uji.mode; Shift+Tab in the terminal UI): each a policy layer over the
rules as written, and the verdict really changes (what ran, what was denied)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_calls

WRITES = tool_calls(
    call("write_file", {"path": "inside.txt", "content": "in\n"}),
    call("write_file", {"path": "../outside.txt", "content": "out\n"}),
)
# Outside the working directory needs confinement off; the asks then show who answered.
UNCONFINED = "uji.tool.confine(false)\n"


def _by(run: object) -> list[tuple[str, str]]:
    return [(c["by"], c["decision"]) for c in run.calls]  # type: ignore[attr-defined]


def test_ask_mode_is_the_rules_as_written(home: Home) -> None:
    home.init(UNCONFINED)
    home.fake.script(WRITES, text("done"))
    run = home.run("write", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    assert _by(run) == [("auto", "allow"), ("auto", "allow")]  # both asked (--on-ask allow says yes)
    # With no --on-ask, an unconfined file tool does not run inside the sandbox: refused.
    home.fake.script(WRITES, text("done"))
    run = home.run("write")
    assert _by(run) == [("auto", "deny"), ("auto", "deny")]


def test_accept_edits_allows_file_tools_inside_the_roots_only(home: Home) -> None:
    home.init(UNCONFINED + 'uji.mode.set("accept_edits")\n')
    home.fake.script(WRITES, text("done"))
    run = home.run("write", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    assert _by(run) == [("policy", "allow"), ("auto", "allow")]  # the outside one still asked
    assert (home.work / "inside.txt").read_text() == "in\n"


def test_a_deny_as_written_stays_a_deny_in_accept_edits(home: Home) -> None:
    home.init('uji.tool.policy({ write_file = { deny = { "inside.txt" } } })\nuji.mode.set("accept_edits")\n')
    home.fake.script(tool_calls(call("write_file", {"path": "inside.txt", "content": "x"})), text("ok"))
    run = home.run("write")
    assert _by(run) == [("policy", "deny")]
    assert not (home.work / "inside.txt").exists()


def test_plan_mode_denies_edits_even_where_the_rules_allow_them(home: Home) -> None:
    home.init('uji.tool.policy({ write_file = { default = "allow" } })\nuji.mode.set("plan")\n')
    home.fake.script(
        tool_calls(
            call("write_file", {"path": "a.txt", "content": "x"}), call("read_file", {"path": "r.txt"})
        ),
        text("ok"),
    )
    (home.work / "r.txt").write_text("read me\n")
    run = home.run("write")
    assert _by(run) == [("policy", "deny"), ("policy", "allow")]  # reading is not an edit
    results = [m["content"] for m in run.tool_results()]
    assert results[0].startswith("denied: blocked by the plan mode")
    assert "read me" in results[1]
    assert not (home.work / "a.txt").exists()


def test_a_config_adds_a_mode_and_lists_every_layer(home: Home, tmp_path: Path) -> None:
    out = tmp_path / "modes.json"
    home.init(
        f"""
        uji.mode.add("no_shell", {{ run_command = {{ default = "deny" }} }}, {{ desc = "no commands" }})
        uji.mode.set("no_shell")
        local f = io.open("{out}", "w")
        f:write(uji.json.encode({{ current = uji.mode.get(), list = uji.mode.list() }}))
        f:close()
        """
    )
    home.fake.script(tool_calls(call("run_command", {"command": "touch ran"})), text("ok"))
    run = home.run("go")
    assert _by(run) == [("policy", "deny")]
    assert not (home.work / "ran").exists()
    listed = json.loads(out.read_text())
    assert listed["current"] == "no_shell"
    rows = {r["name"]: r for r in listed["list"]}
    assert list(rows) == ["ask", "accept_edits", "plan", "no_shell"]
    assert rows["no_shell"] == {
        "name": "no_shell",
        "desc": "no commands",
        "current": True,
        "policy": {"run_command": {"default": "deny"}},
        "origin": rows["no_shell"]["origin"],
    }
    assert rows["no_shell"]["origin"].split("/")[-1].startswith("init.lua:")
    assert rows["plan"]["policy"] == {"edit_file": {"default": "deny"}, "write_file": {"default": "deny"}}
    assert rows["ask"]["policy"] == {}


def test_an_unknown_mode_is_a_clear_error(home: Home) -> None:
    home.init('uji.mode.set("nope")\n')
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert any("no mode 'nope'" in n and "ask, accept_edits, plan" in n for n in run.notices), run.notices


def test_a_modes_own_rule_matches_every_spelling_of_a_path(home: Home) -> None:
    # A mode's rule is matched against the same forms of a path as the rules as written:
    # as given, absolute, and through a symlink. A model cannot step round it by spelling.
    (home.work / "secrets").mkdir()
    (home.work / "alias").symlink_to("secrets")
    home.init(
        'uji.tool.policy({ write_file = { default = "allow" } })\n'
        'uji.mode.add("guard", { write_file = { deny = { "secrets/*" } } })\n'
        'uji.mode.set("guard")\n'
    )
    spellings = [
        "secrets/a.txt",
        "./secrets/../secrets/b.txt",
        str(home.work / "secrets" / "c.txt"),
        "alias/d.txt",
        "open.txt",
    ]
    home.fake.script(
        tool_calls(*(call("write_file", {"path": p, "content": "x"}) for p in spellings)), text("ok")
    )
    run = home.run("write")
    assert [(c["by"], c["decision"], c.get("rule")) for c in run.calls] == [
        *[("policy", "deny", "guard")] * 4,
        ("policy", "allow", None),
    ], run.calls
    assert sorted(p.name for p in (home.work / "secrets").iterdir()) == []
    assert (home.work / "open.txt").read_text() == "x"
