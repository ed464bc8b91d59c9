"""Remembered approvals ("allow for the session", "always allow"): a layer of exact
subjects the policy consults after its deny rules, only to answer an ask; and
`<data>/rules.lua`, the file of "always" answers that a new process loads."""

from __future__ import annotations

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import SIZE, answerable, idle, ready, send, shows, until
from uji.paths import Paths
from uji.tools.policy import Policy
from uji.tools.remembered import RULES_HEADER, append_rule, lua_string
from uji.tui.app import UjiApp
from uji.tui.approval import ApprovalPanel
from uji.tui.modals import SelectPanel


def command(policy: Policy, line: str) -> tuple[str, str | None]:
    v = policy.decide_command("run_command", line, "ask")
    return v.decision, v.subject


def test_a_remembered_part_answers_only_its_own_ask() -> None:
    policy = Policy()
    policy.remembered.add("run_command", "git status", "session")
    assert command(policy, "git status")[0] == "allow"
    assert command(policy, "git status --short")[0] == "ask"  # exact, not a prefix
    assert command(policy, "git status && rm x") == ("ask", "rm x")  # the other part still asks
    assert command(policy, "ls; git status")[0] == "ask"
    policy.remembered.add("run_command", "ls", "always", "rules.lua:3")
    assert command(policy, "ls; git status")[0] == "allow"  # both parts were allowed
    assert command(policy, "ls; rm x") == ("ask", "rm x")
    verdict = policy.decide_command("run_command", "ls", "ask")
    assert (verdict.by, verdict.rule, verdict.origin) == ("remembered", "ls", "rules.lua:3")
    assert policy.decide("write_file", ["ls"], "ask").decision == "ask"  # one tool's, not another's


def test_a_remembered_allow_never_overrides_a_deny() -> None:
    policy = Policy()
    policy.set({"run_command": {"deny": ["/^rm\\s/"]}, "edit_file": {"default": "deny"}})
    policy.remembered.add("run_command", "rm x", "always")
    policy.remembered.add("edit_file", "/w/a.txt", "always")
    policy.remembered.add("tool", "t", "always")
    assert command(policy, "rm x")[0] == "deny"
    assert command(policy, "echo && rm x")[0] == "deny"
    assert policy.decide("edit_file", ["a.txt", "/w/a.txt"], "ask").decision == "deny"  # tool default
    assert policy.decide("tool", ["t"], "deny").decision == "deny"  # declared deny
    # A tool whose rules could not be read asks, whatever was remembered.
    policy.set({"tool": {"deny": ["/(/"]}})
    assert policy.decide("tool", ["t"], "ask").decision == "ask"


def test_a_remembered_allow_never_allows_a_part_whose_command_word_is_not_fixed() -> None:
    policy = Policy()
    for subject in ("eval ls", "$CMD", "$CMD x", "sh -c $X"):
        policy.remembered.add("run_command", subject, "always")
    for line in ("eval ls", "$CMD", "$CMD x"):
        decision, _ = command(policy, line)
        assert decision == "ask", line
        verdict = policy.decide_command("run_command", line, "ask")
        assert not policy.can_remember("run_command", verdict)  # the question offers no a / A


def test_an_ask_rule_on_the_line_is_answered_when_the_line_is_the_remembered_part() -> None:
    policy = Policy()
    policy.set({"run_command": {"ask": ["git *"], "default": "allow"}})
    assert command(policy, "git push") == ("ask", "git push")
    policy.remembered.add("run_command", "git push", "session")
    assert command(policy, "git push")[0] == "allow"
    assert command(policy, "git push && git push --force") == ("ask", "git push --force")


def test_allow_rules_are_untouched_and_session_answers_can_be_forgotten() -> None:
    policy = Policy()
    policy.remembered.add("t", "s", "session")
    policy.remembered.add("t", "k", "always")
    assert policy.decide("t", ["s"], "ask").decision == "allow"
    policy.remembered.forget("session")
    assert policy.decide("t", ["s"], "ask").decision == "ask"
    assert policy.decide("t", ["k"], "ask").decision == "allow"


@pytest.mark.parametrize(
    "subject",
    [
        'say "hi"',
        "a\\b\\\\c",
        "two\nlines",
        "tab\there",
        "]] ]=] [[x",
        "bell\x07 del\x7f",
        "ünï ☃ 🙂",
        "$(x) `y`",
    ],
)
def test_rules_lua_reads_back_exactly_what_was_remembered(home: Home, subject: str) -> None:
    rules = home.data / "rules.lua"
    append_rule(str(rules), "run_command", "ls")
    number = append_rule(str(rules), "t", subject)
    assert rules.read_text().startswith(RULES_HEADER)
    assert rules.read_text().splitlines()[number - 1] == f'uji.tool.allow("t", {lua_string(subject)})'
    lua = """
    uji.tool.add("t", { subject = function(a) return a.s end, run = function(a) return "ran" end })
    """
    home.init(lua)
    home.fake.script(
        tool_call("t", {"s": subject}, id="a"),
        tool_call("t", {"s": subject + " "}, id="b"),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny", check=True)
    a, b = run.calls
    assert a["decision"] == "allow" and a["remembered"] is True and a["rule"] == subject
    assert a["source"] == f"{rules}:{number}"
    assert b["decision"] == "deny"  # exact: one more space is another subject
    assert [m["content"] for m in run.tool_results()] == [
        "ran",
        "denied: nobody is here to approve this call (uji run --on-ask deny)",
    ]


def tui(home: Home) -> UjiApp:
    return UjiApp(Paths(str(home.config), str(home.data), str(home.db)), cwd=str(home.work))


async def test_always_allow_writes_rules_lua_and_a_new_process_allows_that_part(
    home: Home, fake: FakeOpenAI
) -> None:
    home.init("")
    fake.script(tool_call("run_command", {"command": "touch made.txt"}), text("Done."))
    app = tui(home)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "make it")
        screen = await shows(pilot, "always allow")
        assert "3. Yes, and always allow `touch made.txt` (saved in rules.lua)" in screen
        await answerable(pilot)
        await pilot.press("A")
        await idle(pilot)
        assert not app.query(ApprovalPanel)
    rules = home.data / "rules.lua"
    assert rules.read_text() == RULES_HEADER + 'uji.tool.allow("run_command", "touch made.txt")\n'
    (home.work / "made.txt").unlink()
    fake.script(
        tool_call("run_command", {"command": "touch made.txt"}, id="a"),
        tool_call("run_command", {"command": "touch other.txt"}, id="b"),
        tool_call("run_command", {"command": "touch made.txt; touch other.txt"}, id="c"),
        text("ok"),
    )
    run = home.run("again", "--on-ask", "deny", check=True)
    a, b, c = run.calls
    assert a["decision"] == "allow" and a["remembered"] is True and a["source"] == f"{rules}:3"
    assert b["decision"] == "deny" and c["decision"] == "deny"
    assert (home.work / "made.txt").exists() and not (home.work / "other.txt").exists()


async def test_rules_lua_loads_after_the_config_and_cannot_beat_its_deny(home: Home) -> None:
    home.init('uji.tool.policy({ run_command = { deny = { "/^touch a/" } } })\n')
    home.plugin("p.lua", 'uji.tool.allow("run_command", "touch b.txt")\n')
    (home.data / "rules.lua").write_text(
        RULES_HEADER
        + 'uji.tool.allow("run_command", "touch a.txt")\n'
        + 'uji.tool.allow("run_command", 42)\n'
        + 'uji.tool.allow("run_command", "touch c.txt")\n'
    )
    home.fake.script(
        tool_call("run_command", {"command": "touch a.txt"}, id="a"),
        tool_call("run_command", {"command": "touch b.txt"}, id="b"),
        tool_call("run_command", {"command": "touch c.txt"}, id="c"),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny")
    a, b, c = run.calls
    assert a["decision"] == "deny" and a["by"] == "policy" and a["rule"] == "/^touch a/"
    assert b["decision"] == "allow" and b["source"].endswith("p.lua:1")  # the public API, anywhere
    # A bad line is reported with its file and line; the lines before it hold.
    assert any("rules.lua:4" in n and "subject must be a non-empty string" in n for n in run.notices)
    assert c["decision"] == "deny"
    work = home.work
    assert not (work / "a.txt").exists() and (work / "b.txt").exists() and not (work / "c.txt").exists()


async def test_slash_rules_lists_remembered_approvals_and_forgets_one(home: Home, fake: FakeOpenAI) -> None:
    home.init("")
    rules = home.data / "rules.lua"
    append_rule(str(rules), "run_command", "ls")
    append_rule(str(rules), "run_command", "touch x.txt")
    fake.script(tool_call("run_command", {"command": "touch x.txt"}), text("ok"))
    app = tui(home)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/rules")
        panel = await until(pilot, lambda: app.query(SelectPanel) and app.query(SelectPanel).first())
        await shows(pilot, "Remembered approvals")
        assert panel.labels == [f"run_command  ls  ({rules}:3)", f"run_command  touch x.txt  ({rules}:4)"]
        # First "n" keeps it, at once: no filter field takes the key typed after Enter.
        await pilot.press("down", "enter", "n")
        await until(pilot, lambda: not app.query(ApprovalPanel) and not app.query(SelectPanel))
        assert app.composer.text == "" and "touch x.txt" in rules.read_text()
        await send(pilot, "/rules")
        await until(pilot, lambda: app.query(SelectPanel))
        await pilot.press("down", "enter")
        screen = await shows(pilot, "Forget touch x.txt?")  # titles drop Markdown backticks
        assert "1. Forget it" in screen and "2. Keep it" in screen
        await pilot.press("y")
        await shows(pilot, "its line is gone from")
        assert app.composer.text == ""
        assert rules.read_text() == RULES_HEADER + 'uji.tool.allow("run_command", "ls")\n'
        await send(pilot, "touch it")  # asks again now
        await until(pilot, lambda: app.query(ApprovalPanel))
        await answerable(pilot)
        await pilot.press("n")
        await idle(pilot)
        assert not (home.work / "x.txt").exists()


def test_a_remembered_command_does_not_cover_it_writing_through_a_redirection(home: Home) -> None:
    home.init("")
    (home.data / "rules.lua").write_text(RULES_HEADER + 'uji.tool.allow("run_command", "echo hi")\n')
    home.fake.script(
        tool_call("run_command", {"command": "echo hi"}, id="a"),
        tool_call("run_command", {"command": "echo hi 2>&1 >/dev/null"}, id="b"),
        tool_call("run_command", {"command": "echo hi > f.txt"}, id="c"),
        tool_call("run_command", {"command": "echo hi >&f.txt"}, id="d"),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny", check=True)
    assert [c["decision"] for c in run.calls] == ["allow", "allow", "deny", "deny"]
    assert not (home.work / "f.txt").exists()


def test_a_remembered_file_is_its_absolute_path_however_it_is_spelled(home: Home) -> None:
    home.init("")
    notes = home.work / "notes.md"
    (home.data / "rules.lua").write_text(
        RULES_HEADER + f"uji.tool.allow({lua_string('write_file')}, {lua_string(str(notes))})\n"
    )
    home.fake.script(
        tool_call("write_file", {"path": "notes.md", "content": "1"}, id="a"),
        tool_call("write_file", {"path": "./sub/../notes.md", "content": "2"}, id="b"),
        tool_call("write_file", {"path": "other.md", "content": "3"}, id="c"),
        tool_call("edit_file", {"path": "notes.md", "old_string": "2", "new_string": "4"}, id="d"),
        text("ok"),
    )
    run = home.run("go", "--on-ask", "deny", check=True)
    assert [c["decision"] for c in run.calls] == ["allow", "allow", "deny", "deny"]  # one tool's, not edit's
    assert notes.read_text() == "2" and not (home.work / "other.md").exists()
    # Once the path leads elsewhere through a symlink, it is not the file that was allowed.
    notes.unlink()
    (home.work / "target.md").write_text("keep")
    notes.symlink_to(home.work / "target.md")
    home.fake.script(tool_call("write_file", {"path": "notes.md", "content": "5"}), text("ok"))
    run = home.run("again", "--on-ask", "deny", check=True)
    assert [c["decision"] for c in run.calls] == ["deny"]
    assert (home.work / "target.md").read_text() == "keep"


async def test_a_question_a_hook_asked_offers_no_remembering(home: Home, fake: FakeOpenAI) -> None:
    home.init('uji.on("before_tool", function(e) return { ask = "The hook asks: run it?" } end)\n')
    fake.script(tool_call("run_command", {"command": "touch h.txt"}), text("ok"))
    app = tui(home)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "go")
        screen = await shows(pilot, "The hook asks: run it?")
        assert "1. Yes, proceed" in screen and "for this session" not in screen and "always" not in screen
        panel = await answerable(pilot)
        await pilot.press("a")  # not an option here: nothing happens (the key is handled by now)
        assert not panel.answer.done()
        assert app.query(ApprovalPanel) and not (home.work / "h.txt").exists()
        await pilot.press("y")
        await idle(pilot)
        assert (home.work / "h.txt").exists() and not app.conversation.app.gate.policy.remembered.rules
