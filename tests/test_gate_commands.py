"""An adversarial corpus for run_command's gate, through the real `uji run --json` against
the loopback fake server. Each case asserts what actually happened on disk (a directory
that must survive, a marker file that must or must not appear), and the decision.

The model calls every command of a group in one step; each case has its own victim
directory `v<i>` or marker `m<i>` in the test's own working directory."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_calls


@dataclass
class Case:
    command: str  # `{v}` is the case's victim directory, `{m}` its marker file
    survives: bool = True  # the victim directory is still there / the marker is absent
    decision: str | None = "deny"  # the call event's decision, when it matters


def run_group(
    home: Home, lua: str, on_ask: str, cases: list[Case], env: dict[str, str] | None = None
) -> None:
    names = []
    for i, case in enumerate(cases):
        victim = home.work / f"v{i}"
        victim.mkdir()
        (victim / "keep.txt").write_text("precious")
        names.append(case.command.replace("{v}", f"v{i}").replace("{m}", f"m{i}"))
    home.init(lua)
    home.fake.script(tool_calls(*(call("run_command", {"command": c}) for c in names)), text("ok"))
    run = home.run("go", "--on-ask", on_ask, timeout=110, env=env)
    assert run.rc == 0, run.stderr
    calls = run.calls
    assert [c["subject"] for c in calls] == names
    failures = []
    for i, (case, command, event) in enumerate(zip(cases, names, calls, strict=True)):
        if "{m}" in case.command:
            happened = not (home.work / f"m{i}").exists()
            what = "marker absent" if case.survives else "marker created"
        else:
            happened = (home.work / f"v{i}" / "keep.txt").exists()
            what = "victim survived" if case.survives else "victim removed"
        if happened != case.survives:
            failures.append(f"{command!r}: expected {what}; call was {event}")
        if case.decision is not None and event["decision"] != case.decision:
            failures.append(f"{command!r}: expected {case.decision}, got {event}")
    assert not failures, "\n".join(failures)


def rm_path() -> str:
    return shutil.which("rm") or "/bin/rm"


def sudo_shim(home: Home) -> dict[str, str]:
    """A stand-in `sudo` that runs its arguments, so `sudo rm` would really run rm."""
    bin_dir = home.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    sudo = bin_dir / "sudo"
    sudo.write_text(
        '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do case $1 in -u|-g) shift 2;; *) shift;; esac; done\nexec "$@"\n'
    )
    sudo.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}


# 1. The shipped default deny, however the rm is written. `--on-ask allow`: anything the
# gate does not deny runs, so a victim survives only if the deny held.

RM_BYPASSES = [
    # leading whitespace, tab, newline
    " rm -rf {v}",
    "\trm -rf {v}",
    "\nrm -rf {v}",
    # brace groups, functions, reserved words
    "{ rm -rf {v}; }",
    "f() { rm -rf {v}; }; f",
    "if true; then rm -rf {v}; fi",
    "if false; then :; else rm -rf {v}; fi",
    "for i in 1; do rm -rf {v}; done",
    "while true; do rm -rf {v}; break; done",
    "until false; do rm -rf {v}; break; done",
    "case a in a) rm -rf {v};; esac",
    "! rm -rf {v}",
    # quoting the command word or the flags
    "\\rm -rf {v}",
    "r''m -rf {v}",
    '"rm" -rf {v}',
    "$'rm' -rf {v}",
    "rm -r'f' {v}",
    # line continuations
    "rm \\\n-rf {v}",
    "r\\\nm -rf {v}",
    # assignment and redirection prefixes
    "X=1 rm -rf {v}",
    "2>/dev/null rm -rf {v}",
    "X=1 2>/dev/null Y=2 rm -rf {v} >/dev/null",
    # descriptor duplications, and a `0` the grammar would read as the command word
    "<&0 rm -rf {v}",
    "0<&0 rm -rf {v}",
    "0</dev/null rm -rf {v}",
    "rm -rf {v} 0<&0",
    # a comment whose apostrophe would swallow the next line; a heredoc with a quote
    "echo hi # it's\nrm -rf {v}",
    "cat <<EOF\nit's\nEOF\nrm -rf {v}",
    "cat <<'EOF'\nit's\nEOF\nrm -rf {v}",
    # every spelling of a forced recursive rm
    "rm -fr {v}",
    "rm -r -f {v}",
    "rm -Rf {v}",
    "rm -fR {v}",
    "rm -rfv {v}",
    "rm --recursive --force {v}",
    "rm --force --recursive {v}",
    "rm -r --force {v}",
    "rm {v} -rf",
    "rm --recursive -f {v}",
    "rm --recu --fo {v}",  # GNU rm takes any unambiguous abbreviation of a long option
    "rm -r'f' {v}",
    "'rm' -rf {v}",
    f"{rm_path()} -rf {{v}}",
    # the forms that already held
    "ls; rm -rf {v}",
    "ls && rm -rf {v}",
    "false || rm -rf {v}",
    "ls | rm -rf {v}",
    "echo $(rm -rf {v})",
    "echo `rm -rf {v}`",
    'echo "$(rm -rf {v})"',
    "(rm -rf {v})",
    "cat <(rm -rf {v})",
    "x=$(rm -rf {v})",
    "cat <<EOF\n$(rm -rf {v})\nEOF",
    "cat <<-EOF\n\t$(rm -rf {v})\n\tEOF",
    # shells given a string or a heredoc
    "sh -c 'rm -rf {v}'",
    'bash -c "rm -rf {v}"',
    "bash -c \"sh -c 'rm -rf {v}'\"",
    "bash <<'EOF'\nrm -rf {v}\nEOF",
    "bash <<<'rm -rf {v}'",
    "eval 'rm -rf {v}'",
    # wrappers
    "command rm -rf {v}",
    "env rm -rf {v}",
    "env -i X=1 rm -rf {v}",
    "/usr/bin/env rm -rf {v}",
    "exec rm -rf {v}",
    "nohup rm -rf {v}",
    "time rm -rf {v}",
    "nice -n 5 rm -rf {v}",
    "timeout 5 rm -rf {v}",
    "timeout -s KILL 5s rm -rf {v}",
    "echo {v} | xargs rm -rf",
    "echo {v} | xargs -I{} rm -rf {}",
    "find . -maxdepth 1 -name {v} -exec rm -rf {} +",
    "sudo rm -rf {v}",
    "sudo -u root rm -rf {v}",
    "nohup nice sudo env rm -rf {v}",
    "script -qc 'rm -rf {v}' /dev/null",
    "busybox rm -rf {v}",
]


def test_the_default_deny_holds_however_rm_is_written(home: Home) -> None:
    cases = [Case(c) for c in RM_BYPASSES]
    cases += [
        # Controls: these are not a forced recursive rm, so with --on-ask allow they run.
        Case("rm -r {v}", survives=False, decision="allow"),
        Case("rm -f {v}/keep.txt", survives=False, decision="allow"),
        Case("echo rm -rf {v}", decision="allow"),  # echo's part
        # bash reads `&>` as one redirection, so rm is only true's argument (dash would run it)
        Case("true &>/dev/null rm -rf {v}", decision="allow"),
    ]
    run_group(home, "", "allow", cases, env=sudo_shim(home))


# 2. Allow rules do not widen: with `allow = {"ls *"}` and --on-ask deny, nothing but ls runs.

WIDENING = [
    "ls # it's\ntouch {m}",
    "ls\ntouch {m}",
    "ls; touch {m}",
    "ls && touch {m}",
    "ls || touch {m}",
    "ls | touch {m}",
    "ls & touch {m}",
    "ls $(touch {m})",
    "ls `touch {m}`",
    'ls "$(touch {m})"',
    "ls <(touch {m})",
    "ls >(touch {m})",
    "ls > $(touch {m})",
    "(ls; touch {m})",
    "{ ls; touch {m}; }",
    "ls <<EOF\nit's\nEOF\ntouch {m}",
    "ls <<EOF\n$(touch {m})\nEOF",
    "ls <<EOF\n`touch {m}`\nEOF",
    "ls <<-EOF\n\t$(touch {m})\n\tEOF",
    "ls ${x:-`touch {m}`}",
    "ls \\\n; touch {m}",
    "if ls; then touch {m}; fi",
    "ls; f() { touch {m}; }; f",
]


def test_an_allow_rule_allows_only_its_own_part(home: Home) -> None:
    cases = [Case(c) for c in WIDENING]
    cases += [
        Case("ls &>/dev/null touch {m}", decision="allow"),  # ls gets touch and m as names
        Case("ls -la > {m}", survives=False, decision="allow"),  # control: ls does run
        Case("ls 2<&1 > {m}", survives=False, decision="allow"),  # `<&` is a redirection
        Case("ls 0<&0 > {m}", survives=False, decision="allow"),
        Case("ls <<'EOF'\n$(touch x) `touch y`\nEOF\n", decision="allow"),  # a quoted heredoc is data
    ]
    run_group(home, 'uji.tool.policy({ run_command = { allow = { "ls", "ls *" } } })', "deny", cases)
    assert not (home.work / "x").exists() and not (home.work / "y").exists()


# 3. Wrappers run their command: allowing the wrapper does not allow what it runs.

WRAPPED = [
    "env touch {m}",
    "env X=1 touch {m}",
    "env - touch {m}",
    "command touch {m}",
    "exec touch {m}",
    "nohup touch {m}",
    "time touch {m}",
    "nice -n 1 touch {m}",
    "timeout 5 touch {m}",
    "echo {m} | xargs touch",
    "echo {m} | xargs -0 -n1 touch",
    "sudo touch {m}",
    "sh -c 'touch {m}'",
    "bash -c 'echo hi; touch {m}'",
    "find . -maxdepth 0 -exec touch {m} \\;",
]


def test_allowing_a_wrapper_does_not_allow_what_it_runs(home: Home) -> None:
    allow = ["env *", "command *", "exec *", "nohup *", "time *", "nice *", "timeout *", "xargs *"]
    allow += ["sudo *", "sh -c *", "bash -c *", "find *", "echo *"]
    rules = ", ".join(f'"{a}"' for a in allow)
    lua = f"uji.tool.policy({{ run_command = {{ allow = {{ {rules} }} }} }})"
    cases = [Case(c) for c in WRAPPED]
    cases += [
        Case("env X=1 echo hi > {m}", survives=False, decision="allow"),  # both parts allowed
        Case("sh -c 'echo hi' > {m}", survives=False, decision="allow"),
    ]
    run_group(home, lua, "deny", cases, env=sudo_shim(home))


# 4. A command word that is not fixed text asks, even under `allow = {"*"}`.

NOT_FIXED = [
    "X=touch; $X {m}",
    "${X:-touch} {m}",
    "$(echo touch) {m}",
    "`echo touch` {m}",
    "eval 'touch {m}'",
    "eval touch {m}",
    "X='touch {m}'; sh -c \"$X\"",
    "echo 'touch {m}' | sh",
    "bash <<EOF\ntouch {m}\nEOF",
    "echo 'touch {m}' > s{m}.sh; . ./s{m}.sh",
    "echo 'touch {m}' > t{m}.sh; source ./t{m}.sh",
    "trap 'touch {m}' EXIT",
    "PATH=.:$PATH fake-ls {m}",
    "touch {m}\n)",  # the line cannot be parsed, but bash would run its first line
    "{touch,{m}}",
]


def test_a_command_that_is_not_fixed_text_asks(home: Home) -> None:
    fake = home.work / "fake-ls"
    fake.write_text('#!/bin/sh\ntouch "$1"\n')
    fake.chmod(0o755)
    cases = [Case(c) for c in NOT_FIXED]
    cases += [
        Case("touch {m}", survives=False, decision="allow"),  # control: fixed text is allowed
        Case("X=1 t'ouch' {m}", survives=False, decision="allow"),
    ]
    run_group(home, 'uji.tool.policy({ run_command = { allow = { "*" } } })', "deny", cases)


# 5. Everyday commands are still allowed by the rules written for them.


def test_legitimate_commands_are_still_allowed(home: Home) -> None:
    subprocess.run(["git", "init", "-q"], cwd=home.work, check=True)
    cases = [
        Case("git diff --stat > {m}", survives=False, decision="allow"),
        Case("ls -la | grep v > {m}", survives=False, decision="allow"),
        Case("  git  diff   --stat\t> {m}", survives=False, decision="allow"),
        Case("git diff && ls -la | grep x; cd . && ls > {m} 2>&1", survives=False, decision="allow"),
        Case("git status > {m}", decision="deny"),  # no rule for it: asks, and --on-ask deny
    ]
    run_group(
        home,
        'uji.tool.policy({ run_command = { allow = { "git diff *", "git diff", "ls", "ls *", "grep *", "cd *" } } })',
        "deny",
        cases,
    )


def test_the_corpus_is_large() -> None:
    assert len(RM_BYPASSES) + len(WIDENING) + len(WRAPPED) + len(NOT_FIXED) >= 100


def test_run_command_runs_in_bash_when_there_is_one(home: Home) -> None:
    if shutil.which("bash") is None:
        pytest.skip("no bash on this machine: run_command uses sh")
    home.init('uji.tool.policy({ run_command = { allow = { "echo *" } } })')
    home.fake.script(tool_calls(call("run_command", {"command": 'echo "$BASH_VERSION" > m'})), text("ok"))
    # `$BASH_VERSION` is not fixed text, so the call asks: the answer is yes here
    run = home.run("go", "--on-ask", "allow", check=True)
    assert (run.calls[0]["by"], run.calls[0]["policy"]) == ("auto", "ask")
    assert (home.work / "m").read_text().strip()
