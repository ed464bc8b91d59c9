"""Rules, matching, precedence and how run_command lines are decided, tested directly."""

from __future__ import annotations

import pytest

from uji.tools.policy import Policy
from uji.tools.shell import parse_command


def decide(policy: Policy, tool: str, subject: str, declared: str | None = "ask") -> str:
    if tool == "run_command":
        return policy.decide_command(tool, subject, declared).decision
    return policy.decide(tool, [subject], declared).decision


@pytest.mark.parametrize(
    ("rule", "subject", "hit"),
    [
        ("git status", "git status", True),
        ("git status", "git status ", False),
        ("git status", "Git status", False),  # exact is case-sensitive
        ("git diff *", "git diff --stat", True),
        ("git diff *", "git diff", False),
        ("cargo test*", "cargo test -p x", True),
        ("src/*", "src/a/b/c.py", True),  # * crosses /
        ("*.py", "dir with space/x.py", True),  # and spaces
        ("src/**/x.py", "src/a/b/x.py", True),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("[ab].txt", "a.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("[!ab].txt", "c.txt", True),
        ("ls *", "xls -l", False),  # globs are anchored to the whole subject
        ("/^rm\\s+-rf/", "rm -rf /", True),
        ("/^rm\\s+-rf/", "echo rm -rf", False),
        ("/rm/", "echo rm -rf", True),  # regexes search unanchored
        ("/(?i)DROP/", "drop table", True),
        ("/secret/", "SECRET", False),  # case-sensitive unless (?i)
        ("/", "/", True),  # one slash is a path, not an empty regex matching everything
        ("/", "ls", False),
        ("//", "ls", True),  # two: the empty regex
    ],
)
def test_rule_kinds(rule: str, subject: str, hit: bool) -> None:
    policy = Policy()
    policy.set({"t": {"deny": [rule], "default": "allow"}})
    assert decide(policy, "t", subject) == ("deny" if hit else "allow")


def test_deny_beats_allow_beats_ask() -> None:
    policy = Policy()
    policy.set({"t": {"ask": ["x*"], "allow": ["x*"], "deny": ["x*"]}})
    assert decide(policy, "t", "xy", "allow") == "deny"
    policy.set({"t": {"ask": ["x*"], "allow": ["x*"]}})
    assert decide(policy, "t", "xy", "deny") == "allow"
    policy.set({"t": {"ask": ["x*"]}})
    assert decide(policy, "t", "xy", "allow") == "ask"


def test_precedence_without_a_match() -> None:
    policy = Policy()
    # nothing anywhere: ask
    assert decide(policy, "t", "s", None) == "ask"
    # the top-level default
    policy.set({"default": "deny"})
    assert decide(policy, "t", "s", None) == "deny"
    # the declared policy beats the top-level default
    assert decide(policy, "t", "s", "allow") == "allow"
    # the tool's default beats its declared policy
    policy.set({"t": {"default": "ask"}})
    assert decide(policy, "t", "s", "allow") == "ask"


def test_top_level_default_allow_does_not_allow_a_tool_that_declares_ask() -> None:
    policy = Policy()
    policy.set({"default": "allow"})
    assert decide(policy, "write_file", "a.txt", "ask") == "ask"


def test_each_call_replaces_only_the_tools_it_names() -> None:
    policy = Policy()
    policy.set({"a": {"deny": ["x"]}, "b": {"deny": ["x"]}})
    policy.set({"a": {"allow": ["x"]}})
    assert decide(policy, "a", "x") == "allow"
    assert decide(policy, "b", "x") == "deny"


def test_invalid_patterns_raise_the_tool_to_ask_with_a_notice() -> None:
    policy = Policy()
    notices = policy.set({"t": {"allow": ["/([/", "ok"], "default": "allow"}}, "init.lua:3")
    assert notices and "invalid regular expression" in notices[0] and "init.lua:3" in notices[0]
    assert decide(policy, "t", "other", "allow") == "ask"
    assert decide(policy, "t", "ok", "allow") == "allow"  # the readable rule still works
    notices = policy.set({"t": {"default": "sometimes"}})
    assert "default must be allow, ask or deny" in notices[0]
    assert decide(policy, "t", "x", "allow") == "ask"


def test_home_in_rules_is_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/u")
    policy = Policy()
    policy.set({"t": {"deny": ["~/secret/*"], "default": "allow"}})
    assert decide(policy, "t", "/home/u/secret/k") == "deny"
    assert decide(policy, "t", "~/secret/k") == "deny"


def test_verdicts_name_the_rule_and_where_it_was_set() -> None:
    policy = Policy()
    policy.set({"run_command": {"allow": ["git diff *"]}}, "/cfg/init.lua:7")
    v = policy.decide_command("run_command", "git diff --stat", "ask")
    assert (v.decision, v.by, v.rule, v.origin) == ("allow", "rule", "git diff *", "/cfg/init.lua:7")


@pytest.mark.parametrize(
    ("line", "parts"),
    [
        ("git status", ["git status"]),
        ("a; b", ["a", "b"]),
        ("a && b || c", ["a", "b", "c"]),
        ("a | b & c", ["a", "b", "c"]),
        ("a\nb", ["a", "b"]),
        # Redirections are not commands, and not part of the normal form.
        ("cmd 2>&1 | tail", ["cmd", "tail"]),
        ("cmd >&2", ["cmd"]),
        ("cmd &> log", ["cmd"]),
        ("cmd <&3", ["cmd"]),  # `<&` duplicates a descriptor: no split, no second command
        ("cat <&0 | wc", ["cat", "wc"]),
        ("echo 'a; b' \"c | d\"", ["echo a; b c | d"]),
        ("echo a\\;b", ["echo a;b"]),
        ("echo $(rm -rf x; ls)", ["rm -rf x", "ls", "echo $(rm -rf x; ls)"]),
        ("echo `whoami`", ["whoami", "echo `whoami`"]),
        ("(cd x && make)", ["cd x", "make"]),
        ('echo "$(id)"', ["id", "echo $(id)"]),
    ],
)
def test_parts_of_a_line(line: str, parts: list[str]) -> None:
    got = parse_command(line)
    assert sorted(p.text for p in got) == sorted(parts)
    # every part is fixed text but one whose words hold a substitution's output
    assert all(p.fixed == ("$(" not in p.text and "`" not in p.text) for p in got)


def test_compound_commands_take_the_strictest_part() -> None:
    policy = Policy()
    policy.set({"run_command": {"allow": ["git diff*", "ls"], "deny": ["/^rm\\s+-rf/"]}})
    assert decide(policy, "run_command", "git diff --stat") == "allow"
    assert decide(policy, "run_command", "git diff; rm -rf ~") == "deny"
    assert decide(policy, "run_command", "git diff && curl x | sh") == "ask"
    assert decide(policy, "run_command", "ls; ls") == "allow"
    assert decide(policy, "run_command", "echo $(rm -rf /)") == "deny"
    # `cmd 2>&1 | tail` also needs a rule for tail
    assert decide(policy, "run_command", "git diff 2>&1 | tail") == "ask"


def test_a_deny_rule_on_the_whole_line_still_applies() -> None:
    policy = Policy()
    policy.set({"run_command": {"allow": ["echo *"], "deny": ["*curl*"]}})
    assert decide(policy, "run_command", "echo a; echo curl") == "deny"


def test_a_descriptor_duplication_is_not_a_second_command() -> None:
    # The seed's splitter split `<&` as if it were `<` then `&` (a background list).
    policy = Policy()
    policy.set({"run_command": {"allow": ["cat *", "cat"], "deny": ["/^rm\\s+-rf/"]}})
    v = policy.decide_command("run_command", "cat <&3 rm -rf x", "ask")
    assert (v.decision, v.subject) == ("allow", "cat rm -rf x")  # cat gets the words as file names


def test_a_part_that_is_not_fixed_text_is_never_allowed() -> None:
    policy = Policy()
    policy.set({"run_command": {"allow": ["*"], "deny": ["/^rm\\s+-rf/"]}})
    for line in ("$CMD x", "eval ls", "$(echo ls) -la", "ls; r?m x", "echo 'unterminated"):
        v = policy.decide_command("run_command", line, "ask")
        assert (v.decision, v.by) == ("ask", "unfixed"), line
        assert v.note and v.subject
    # deny rules still reach a part that is not fixed, and the words eval runs
    assert decide(policy, "run_command", 'eval "rm -rf x"') == "deny"
    assert decide(policy, "run_command", "$X; rm -rf x") == "deny"
    # nor does a default or declared allow allow it
    policy.set({"run_command": {"default": "allow"}})
    assert decide(policy, "run_command", "$CMD") == "ask"
    assert decide(Policy(), "run_command", "$CMD", declared="allow") == "ask"


def test_the_verdict_names_the_normalised_part_that_decided_it() -> None:
    policy = Policy()
    policy.set({"run_command": {"allow": ["ls *", "git diff *"], "deny": ["/^rm\\s+-rf/"]}})
    v = policy.decide_command("run_command", "ls x && \\rm -r'f' y", "ask")
    assert (v.decision, v.rule, v.subject) == ("deny", "/^rm\\s+-rf/", "rm -rf y")
    v = policy.decide_command("run_command", "ls x; curl y", "ask")
    assert (v.decision, v.by, v.subject) == ("ask", "declared", "curl y")
    v = policy.decide_command("run_command", "  git   diff --stat ", "ask")
    assert (v.decision, v.rule, v.subject) == ("allow", "git diff *", "git diff --stat")


def test_a_line_with_no_command_gets_the_fallback() -> None:
    policy = Policy()
    assert decide(policy, "run_command", "X=1", "ask") == "ask"
    assert decide(policy, "run_command", "# just a comment", "allow") == "allow"


def test_an_unreadable_rule_raises_the_default_without_losing_who_set_it() -> None:
    # The floor an unreadable rule sets (ask) only replaces a laxer verdict: a default
    # already at ask keeps its origin, so the call event still says where it came from.
    policy = Policy()
    notices = policy.set({"t": {"allow": [3], "default": "ask"}}, "init.lua:4")
    assert notices and "not a pattern" in notices[0]
    verdict = policy.decide("t", ["x"], None)
    assert (verdict.decision, verdict.by, verdict.origin) == ("ask", "tool-default", "init.lua:4")
    lax = Policy()
    lax.set({"t": {"allow": [3], "default": "allow"}}, "init.lua:5")
    assert (lax.decide("t", ["x"], None).decision, lax.decide("t", ["x"], None).by) == ("ask", "fallback")


def test_rule_sets_add_up_and_the_strictest_default_wins() -> None:
    policy = Policy()
    policy.set({"t": {"deny": ["x"], "default": "ask"}, "default": "deny"}, "defaults.lua:1", "defaults")
    policy.set({"t": {"allow": ["x", "y"], "default": "allow"}, "default": "allow"}, "init.lua:1")
    assert decide(policy, "t", "x") == "deny"  # a deny of any set first
    assert decide(policy, "t", "y") == "allow"
    assert decide(policy, "t", "z") == "ask"  # the stricter tool default
    assert decide(policy, "u", "z", None) == "deny"  # the stricter top-level default
    policy.set({"t": {}}, "init.lua:9", "defaults")  # naming the set replaces its rules for t
    assert decide(policy, "t", "x") == "allow"
    assert decide(policy, "t", "z") == "allow"


def test_a_rule_table_carries_its_message_into_the_verdict() -> None:
    policy = Policy()
    notices = policy.set({"t": {"deny": {"pattern": "/^x/", "message": "not x"}, "ask": [{"pattern": "y"}]}})
    assert notices == []
    v = policy.decide("t", ["xx"], None)
    assert (v.decision, v.rule, v.message) == ("deny", "/^x/", "not x")
    assert policy.decide("t", ["y"], "allow").decision == "ask"
    notices = policy.set({"t": {"deny": [{"pattern": "/^x/", "text": "?"}, {"message": "m"}]}}, "init.lua:4")
    assert len(notices) == 2 and all("init.lua:4" in n for n in notices)
    assert "pattern and message" in notices[0] and "needs a pattern" in notices[1]
