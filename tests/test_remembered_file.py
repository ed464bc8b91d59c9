"""rules.lua, where "always allow" answers are kept, at its edges: who may read and write it,
a file the user edited last without a final newline, the same answer given twice or once
per layer, an answer that cannot be saved, and forgetting a rule that came from the config.
(The answers themselves, through the screen and `uji run`, are test_remembered.py's.)"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from uji.tools.remembered import (
    ALWAYS,
    RULES_HEADER,
    SESSION,
    RememberedAllow,
    RememberedRules,
    forget,
    remember,
    rule_line,
)

pytestmark = pytest.mark.timeout(10)


@pytest.fixture
def no_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_rules_lua_and_its_folder_are_the_users_alone(tmp_path: Path, no_umask: None) -> None:
    path = tmp_path / "new" / "rules.lua"
    assert remember(RememberedRules(), str(path), "run_command", "make", ALWAYS) is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize("before", ["x", "-- mine"])
def test_a_rule_goes_on_a_line_of_its_own_after_a_file_without_a_final_newline(
    tmp_path: Path, before: str
) -> None:
    path = tmp_path / "rules.lua"
    path.write_text(before)
    rules = RememberedRules()
    remember(rules, str(path), "run_command", "make", ALWAYS)
    assert path.read_text() == before + "\n" + rule_line("run_command", "make")
    assert [r.origin for r in rules.rules] == [f"{path}:2"]


def test_one_line_per_answer_whatever_was_remembered_before(tmp_path: Path) -> None:
    path = tmp_path / "rules.lua"
    rules = RememberedRules()
    remember(rules, str(path), "run_command", "make", ALWAYS)
    remember(rules, str(path), "run_command", "make", ALWAYS)  # already kept: no second line
    remember(rules, str(path), "read_file", "make", ALWAYS)  # the same subject, another tool
    remember(rules, str(path), "run_command", "make test", SESSION)
    remember(rules, str(path), "run_command", "make test", ALWAYS)  # from the session to always
    assert path.read_text() == RULES_HEADER + "".join(
        rule_line(t, s)
        for t, s in [("run_command", "make"), ("read_file", "make"), ("run_command", "make test")]
    )
    assert rules.rules == [
        RememberedAllow("run_command", "make", ALWAYS, f"{path}:3"),
        RememberedAllow("read_file", "make", ALWAYS, f"{path}:4"),
        RememberedAllow("run_command", "make test", ALWAYS, f"{path}:5"),
    ]


def test_an_answer_that_cannot_be_saved_holds_for_the_session_and_says_why(tmp_path: Path) -> None:
    rules = RememberedRules()
    blocked = tmp_path / "file"
    blocked.write_text("")
    said = remember(rules, str(blocked / "rules.lua"), "run_command", "make", ALWAYS)
    assert said is not None and said.startswith(f"could not save the rule to {blocked / 'rules.lua'} (")
    said = remember(rules, str(tmp_path / "rules.lua"), "run_command", "bad \ud800", ALWAYS)
    assert said is not None and "it holds for this session only" in said
    assert [(r.subject, r.scope) for r in rules.rules] == [("make", SESSION), ("bad \ud800", SESSION)]


def test_forgetting_a_rule_from_the_config_says_where_to_delete_it(tmp_path: Path) -> None:
    rules = RememberedRules()
    path = str(tmp_path / "rules.lua")
    from_config = RememberedAllow("run_command", "make", ALWAYS, "init.lua:7")
    unplaced = RememberedAllow("run_command", "make test", ALWAYS, None)
    rules.rules = [from_config, unplaced]
    assert forget(rules, path, unplaced) == (
        "forgot `make test` for run_command until the config loads again; it comes from always, delete it there"
    )
    assert forget(rules, path, from_config).endswith("it comes from init.lua:7, delete it there")
    assert rules.rules == []
    session = RememberedAllow("run_command", "ls", SESSION)
    assert session.where() == "this session"
    assert forget(RememberedRules(), path, session) == "forgot `ls` for run_command"


def test_a_subject_is_written_as_a_lua_string_that_reads_back_the_same() -> None:
    # Control characters as decimal escapes (a raw \r would end the Lua string's line),
    # DEL too; everything printable as it is.
    from uji.tools.remembered import lua_string

    assert lua_string('a\r\x1f\x7f~"\\\n\tz é') == '"a\\013\\031\\127~\\"\\\\\\n\\tz é"'
    assert lua_string(" !") == '" !"'


def test_forgetting_a_saved_rule_removes_its_line_or_says_it_could_not(tmp_path: Path) -> None:
    path = tmp_path / "rules.lua"
    rules = RememberedRules()
    remember(rules, str(path), "run_command", "make", ALWAYS)
    remember(rules, str(path), "run_command", "make test", ALWAYS)
    make, make_test = rules.rules
    # rules.lua cannot be rewritten (its temp file's name is taken by a folder): the rule
    # is forgotten for now, the file is left whole, and the user is told.
    blocker = tmp_path / f"rules.lua.{os.getpid()}.tmp"
    blocker.mkdir()
    said = forget(rules, str(path), make)
    assert said.startswith(f"forgot `make` for now, but could not edit {path} (")
    assert rules.rules == [make_test]
    assert path.read_text() == RULES_HEADER + rule_line("run_command", "make") + rule_line(
        "run_command", "make test"
    )
    blocker.rmdir()
    assert forget(rules, str(path), make_test) == (
        f"forgot `make test` for run_command; its line is gone from {path}"
    )
    assert path.read_text() == RULES_HEADER + rule_line("run_command", "make")
    assert rules.rules == []
