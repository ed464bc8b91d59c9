"""A redirection that writes outside the working directory (issue 22): an allow rule for a
command (`echo *`) allows the command, not a write to `~/.bashrc` through `>`. Through the
real `uji run --json` with the OS sandbox off (`--sandbox off`), so the gate's decision is
the only layer: each call event must say the policy asked because of the redirection
(`basis` "redirect"), the refused question (`--on-ask deny`), and the file must not exist.
Writes inside the working directory, to /dev/null or to another descriptor stay allowed by
the rule."""

from __future__ import annotations

import os

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_calls

RULES = 'uji.tool.policy({ run_command = { allow = { "echo *", "cat *", "ls", "ls *", "cd *" } } })'


def run_lines(home: Home, lines: list[str]) -> list[dict[str, object]]:
    home.init(RULES)
    home.fake.script(tool_calls(*(call("run_command", {"command": c}) for c in lines)), text("ok"))
    run = home.run("go", "--on-ask", "deny", "--sandbox", "off", timeout=110)
    assert run.rc == 0, run.stderr
    assert [c["subject"] for c in run.calls] == lines
    return list(run.calls)


def test_a_redirection_outside_the_working_directory_asks_though_a_rule_allows_the_command(
    home: Home,
) -> None:
    outside = home.root / "outside"
    outside.mkdir()
    (home.work / "link").symlink_to(outside)
    lines = [
        f"echo x > {outside}/a",
        "echo x > ~/b",
        "echo x >> ../c",
        "cat /dev/null >| link/d",  # a symlink inside the working directory to outside
        f"echo x &> {outside}/e",
        f"echo x >&{outside}/f",
        f"{{ echo x; }} > {outside}/g",
        f"ls; echo x > {outside}/h",
        'echo x > "$HOME/i"',  # the name is not fixed text
        f"echo x > {outside}/{{j,k}}",
        "cd .. && echo x > l",  # relative, after a change of directory out
        "cd - && echo x > m",
        "cd sub && echo x > ../../n",
        # /dev/fd is /proc/self/fd: its `..` climbs to / (a descriptor's name is only digits)
        f"echo x > /dev/fd/../../..{outside}/o",
        f"echo x > /dev/fd/1/../../../..{outside}/p",
    ]
    events = run_lines(home, lines)
    failures = []
    for line, event in zip(lines, events, strict=True):
        decided = (event["decision"], event["by"], event.get("policy"), event.get("basis"))
        if decided != ("deny", "auto", "ask", "redirect"):
            failures.append(f"{line!r}: {event}")
    assert not failures, "\n".join(failures)
    written = sorted(os.listdir(outside)) + sorted(
        p for p in ("b", "i", "l", "n") if (home.home / p).exists() or (home.root / p).exists()
    )
    assert written == []
    assert 'echo x > "$HOME/i"' in lines and "not fixed text" in str(events[8].get("unfixed"))


def test_writes_inside_the_working_directory_and_to_descriptors_stay_allowed(home: Home) -> None:
    lines = [
        "echo x > inside.txt",
        "echo x >> nothing/../inside2.txt",
        "ls > /dev/null 2>&1",
        "echo x >&2",
        "cat /dev/null 2>/dev/stderr > inside3.txt",
        "cd . && echo x > inside4.txt",
        "cd sub && echo x > inside5.txt",  # a change of directory inside
        "echo x > /dev/fd/2",
    ]
    (home.work / "sub").mkdir()
    events = run_lines(home, lines)
    for line, event in zip(lines, events, strict=True):
        assert (event["decision"], event["by"], event.get("policy"), event.get("basis")) == (
            "allow",
            "policy",
            "allow",
            "rule",
        ), (line, event)
    assert (home.work / "inside.txt").read_text() == "x\n"
    assert (home.work / "inside2.txt").exists() is False  # nothing/ does not exist: the shell failed
    assert (home.work / "inside3.txt").exists() and (home.work / "inside4.txt").exists()
    assert (home.work / "sub" / "inside5.txt").exists()
