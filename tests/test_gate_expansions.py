"""run_command's parser against words bash expands after parsing (issue 22), through the real
`uji run --json` against the loopback fake server. Each case asserts who decided (`by`, the
rule, the policy's verdict, why a part is not fixed) next to what happened on disk: a victim
directory `v<i>` that must survive, or a marker `m<i>` that must not appear.

1. The shipped deny on a forced recursive rm, with no user rules and `--on-ask allow`: only
   the gate's deny can keep the victim, so each spelling must be read as the `rm -rf` bash
   runs (brace expansion done as bash does it, `$IFS` and unset variables as bash expands
   them) and denied by the shipped rule.
2. Words whose text bash evaluates as code, or that are not fixed text, with `allow = {"*"}`
   and `--on-ask deny`: no allow rule may allow them; they ask, and the question is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_calls
from tests.test_gate_commands import sudo_shim

SHIPPED_RM_RULE = "/^(\\S*/)?rm(?=\\s)(?=.*\\s(-[a-zA-Z]*[rR][a-zA-Z]*|--r[ecursiv]*)(\\s|$))(?=.*\\s(-[a-zA-Z]*f[a-zA-Z]*|--f[orce]*)(\\s|$))/"


def run_cases(
    home: Home, lua: str, on_ask: str, commands: list[str], env: dict[str, str] | None = None
) -> list[tuple[str, dict[str, Any], bool]]:
    """Run every command in one step; returns (command, call event, victim or marker intact)."""
    names = []
    for i, command in enumerate(commands):
        victim = home.work / f"v{i}"
        victim.mkdir()
        (victim / "keep.txt").write_text("precious")
        names.append(command.replace("{v}", f"v{i}").replace("{m}", f"m{i}"))
    home.init(lua)
    home.fake.script(tool_calls(*(call("run_command", {"command": c}) for c in names)), text("ok"))
    run = home.run("go", "--on-ask", on_ask, timeout=110, env=env)
    assert run.rc == 0, run.stderr
    assert [c["subject"] for c in run.calls] == names
    out = []
    for i, (command, event) in enumerate(zip(names, run.calls, strict=True)):
        intact = (home.work / f"v{i}" / "keep.txt").exists() and not (home.work / f"m{i}").exists()
        out.append((command, event, intact))
    return out


# What was seen passing the shipped deny, then more spellings of the same rm.
SHIPPED_DENY_SPELLINGS = [
    "${IFS}rm -rf {v}",
    "rm -rf${IFS}{v}",
    "rm$IFS-rf {v}",
    "rm -r${IFS}-f {v}",
    "rm -r{f,} {v}",
    "rm -{r,f} {v}",
    "{rm,-rf,{v}}",
    'rm -r$"f" {v}',
    "coproc { rm -rf {v}; }",
    # brace expansion elsewhere in the words, and in the command word after a list
    "rm -{r,}f {v}",
    "rm -rf {{v},nothing}",
    "true; {rm,-r,-f,{v}}",
    "{rm,-fr} {v}",
    # expansions of variables the line does not set, or sets to fixed text
    "rm -r${x}f {v}",
    "rm -rf$@ {v}",
    'rm "-r${x:-f}" {v}',
    "X=rm; $X -rf {v}",
    "X=-rf; rm $X {v}",
    "${IFS}sudo rm -rf {v}",
    "e${x}nv rm -rf {v}",
    'eval "rm -r${x}f {v}"',
    "X='rm -rf {v}'; sh -c \"$X\"",
    "X='rm -rf {v}'; eval $X",
    'rm -r""$"f" {v}',
    # compound commands after the coproc and time keywords
    "coproc NAME { rm -rf {v}; }",
    "coproc ( rm -rf {v} )",
    "coproc NAME (rm -rf {v})",
    "coproc while true; do rm -rf {v}; break; done",
    "time { rm -rf {v}; }",
    "time -p ( rm -rf {v} )",
    "! coproc { rm -rf {v}; }",
    "! { rm -rf {v}; }",
    # more expansions bash performs: a substring, an alternate value, empty substitutions
    "rm -r${IFS:0:0}f {v}",
    "rm${x:+} -rf {v}",
    "rm -r$(:)f {v}",
    "rm -r`:`f {v}",
    "rm -rf {,}{v}",
    # programs that run the command they are given
    "su root -c 'rm -rf {v}'",
    "strace -e trace=file rm -rf {v}",
    "chrt 1 rm -rf {v}",
    "builtin command rm -rf {v}",
    "command eval 'rm -rf {v}'",
    # text run by `.` from its input, by a shell named by a variable
    ". /dev/stdin <<< 'rm -rf {v}'",
    "$SHELL -c 'rm -rf {v}'",
]


def test_spellings_bash_expands_meet_the_shipped_deny(home: Home) -> None:
    failures = []
    for command, event, intact in run_cases(home, "", "allow", SHIPPED_DENY_SPELLINGS, env=sudo_shim(home)):
        decided = (event["decision"], event["by"], event.get("rule"), event.get("policy"))
        if decided != ("deny", "policy", SHIPPED_RM_RULE, "deny") or not intact:
            failures.append(f"{command!r}: victim {'kept' if intact else 'REMOVED'}; call {event}")
    assert not failures, "\n".join(failures)


# Text bash evaluates as code although the line only shows a variable's name, and words that
# are not fixed text: under `allow = {"*"}` each must still ask (refused by --on-ask deny).
EVALUATED = [
    "x='a[$(touch {m})]'; ls $((x))",  # what was seen
    "x='$(touch {m})'; ls ${x@P}",
    "x='a[$(touch {m})]'; ls ${!x}",
    "x='a[$(touch {m})]'; ls ${y[x]}",
    "x='a[$(touch {m})]'; ls $[x]",
    "x='a[$(touch {m})]'; ((x))",
    "x='a[$(touch {m})]'; [[ x -eq 1 ]]",
    "x='a[$(touch {m})]'; a[x]=1",
    "x='a[$(touch {m})]'; declare -i n; n=x",
    "printf -v 'a[$(touch {m})]' x",
    "read 'a[$(touch {m})]' <<< x",
    "x='a[$(touch {m})]'; cat <<EOF\n$((x))\nEOF",
    "x='a[$(touch {m})]'; ls > $((x))",
    "x='a[$(touch {m})]'; for ((i=x;i<0;)); do :; done",
    "[[ -v 'a[$(touch {m})]' ]]",
    "mapfile -C 'touch {m}' -c 1 <<< x",
    "x='a[$(touch {m})]'; case $((x)) in *) ;; esac",
    "x='a[$(touch {m})]'; let x",
    # the words of a part that are not fixed text
    "echo 'touch {m}' | xargs -I{} sh -c '{}'",
    "echo {m} | xargs touch",
    "X=touch; ls; $X {m}",
    'rm -r"$(printf f)" {v}',
    "rm -r $(echo {v})",  # (-rf would meet the shipped deny, which holds under allow-all)
    'set -- -rf {v}; rm "$@"',
    # a prefix assignment that makes a program read another configuration or filter
    "HOME=. git log",
    "GIT_DIR=elsewhere git status",
    "LESSOPEN='|touch {m} %s' less nothing",
    "TAR_OPTIONS=--to-command='touch {m}' tar -xf nothing.tar",
]


def test_text_evaluated_as_code_or_not_fixed_asks_under_an_allow_all_rule(home: Home) -> None:
    failures = []
    results = run_cases(home, 'uji.tool.policy({ run_command = { allow = { "*" } } })', "deny", EVALUATED)
    for command, event, intact in results:
        decided = (event["decision"], event["by"], event.get("policy"))
        if decided != ("deny", "auto", "ask") or not event.get("unfixed") or not intact:
            failures.append(f"{command!r}: {'intact' if intact else 'RAN'}; call {event}")
    assert not failures, "\n".join(failures)


def test_everyday_spellings_are_still_allowed(home: Home) -> None:
    commands = [
        "mkdir -p {v}/{a,b} && ls {v} > {m}",  # brace expansion of fixed text is fixed text
        "ls -la > {m}",
        "coproc ls > {m}",
        "diff <(ls) <(ls) > {m}",
    ]
    results = run_cases(
        home,
        'uji.tool.policy({ run_command = { allow = { "ls *", "ls", "mkdir *", "diff *", "coproc *" } } })',
        "deny",
        commands,
    )
    for command, event, intact in results:
        assert (event["decision"], event["by"], event["policy"]) == ("allow", "policy", "allow"), (
            command,
            event,
        )
        assert not intact, command  # it ran: the marker is there
    assert (home.work / "v0" / "a").is_dir() and (home.work / "v0" / "b").is_dir()


def test_the_shipped_rules_compile(tmp_path: Path) -> None:
    """uji compiles the regular expressions of its own rules when they first match a subject
    (not at every start): each of them compiles, and the shipped rm rule is among them."""
    from tests.test_gate_write_flags import shipped_app
    from uji.tools.policy import compile_matcher

    rules = [r for t in shipped_app(tmp_path).gate.policy.sets["defaults"].tools.values() for r in t.rules]
    for rule in rules:
        compile_matcher(rule.pattern)  # raises PolicyError if it does not compile
    rm = next(r for r in rules if r.pattern == SHIPPED_RM_RULE)
    assert rm.matches("rm -rf x") and rm.matches("/bin/rm x --force -R") and not rm.matches("rm -r x")
