"""Flags that make an allowed read command write files or run programs (issue 22, the
shipped `uji.tool.write_flags` table in uji/builtin/defaults.lua), through the real
`uji run --json --on-ask deny` against the loopback fake server.

The user allows the commands (`git *`, `find *`, `rg *`, …); each case carries one entry of
the table and must be refused by the gate itself: the `call` event says the policy asked
(`policy` "ask", so `--on-ask deny` answered: `by` "auto") and names the entry as its `rule`,
with the defaults file as its `source`; its marker file `m<i>` (or victim `v<i>`) shows that
nothing ran. Every entry of the shipped table has a case here (checked against the table
itself). Controls: the same commands without such a flag are still allowed and run."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_calls

if TYPE_CHECKING:
    from uji.app import App

ALLOWED = [
    "git *", "find *", "fd *", "fdfind *", "rg *", "sed *", "gsed *", "awk *", "gawk *", "mawk *",
    "nawk *", "sort *", "tee *", "uniq *", "tar *", "less *", "man *", "tree *", "file *",
    "base64 *", "yq *", "curl *", "echo *", "ls *",
]  # fmt: skip
LUA = "uji.tool.policy({ run_command = { allow = { " + ", ".join(f'"{a}"' for a in ALLOWED) + " } } })"

# (command, the rule the call event must name). `{m}` is the case's marker file, `{v}` its
# victim directory; a rule `key #n` is the n-th regular expression listed for `key`.
GIT = [
    ("git diff --output={m}", "git --output"),
    ("git diff --outp={m}", "git --output"),  # git takes abbreviations of long options
    ("git -c core.pager='touch {m}' -p log", "git -c"),
    ("git --config-env=core.pager=PAGER_CMD log", "git --config-env"),
    ("git --exec-path=. status", "git --exec-path"),
    ("git --git-dir=.git status", "git --git-dir"),
    ("git --work-tree=. status", "git --work-tree"),
    ("git diff --ext-diff > {m}", "git --ext-diff"),
    ("git log -p --textconv > {m}", "git --textconv"),
    ("git grep -O'touch {m}' hello", "git -O"),
    ("git grep --open-files-in-pager='touch {m}' hello", "git --open-files-in-pager"),
    ("git fetch --upload-pack='touch {m}' .", "git --upload-pack"),
    ("git push --receive-pack='touch {m}' . HEAD:refs/heads/x", "git --receive-pack"),
    ("git archive --exec='touch {m}' --remote=. HEAD", "git --exec"),
    ("git rebase -x 'touch {m}' HEAD", "git rebase -x"),
    ("git difftool -x 'touch {m}' HEAD", "git difftool -x"),
    ("git difftool --extcmd='touch {m}' HEAD", "git difftool --extcmd"),
    ("git difftool -t mytool HEAD", "git difftool -t"),
    ("git difftool --tool=mytool HEAD", "git difftool --tool"),
    ("git mergetool -t mytool", "git mergetool -t"),
    ("git mergetool --tool=mytool", "git mergetool --tool"),
    ("git bisect run touch {m}", "git bisect run"),
    ("git submodule foreach 'touch {m}'", "git submodule foreach"),
    ("git archive -o {m} HEAD", "git archive -o"),
    ("git format-patch -o {m} HEAD", "git format-patch -o"),
    ("git format-patch --output-directory={m} HEAD", "git format-patch --output-directory"),
]
FIND = [
    ("find . -maxdepth 0 -exec touch {m} ';'", "find -exec"),
    ("find . -maxdepth 0 -execdir touch {m} ';'", "find -execdir"),
    ("find . -maxdepth 0 -ok touch {m} ';'", "find -ok"),
    ("find . -maxdepth 0 -okdir touch {m} ';'", "find -okdir"),
    ("find {v} -delete", "find -delete"),
    ("find . -maxdepth 0 -fprint {m}", "find -fprint"),
    ("find . -maxdepth 0 -fprint0 {m}", "find -fprint0"),
    ("find . -maxdepth 0 -fprintf {m} %p", "find -fprintf"),
    ("find . -maxdepth 0 -fls {m}", "find -fls"),
    ("fd -x touch {m}", "fd -x"),
    ("fd --exec touch {m}", "fd --exec"),
    ("fd -X touch {m}", "fd -X"),
    ("fd --exec-batch touch {m}", "fd --exec-batch"),
    ("fdfind --exec touch {m}", "fdfind --exec"),
    ("rg --pre ./pre.sh hello", "rg --pre"),
    ("rg --pre=./pre.sh hello", "rg --pre"),
    ("rg --hostname-bin=./pre.sh hello", "rg --hostname-bin"),
    ("rg -z hello", "rg -z"),
    ("rg --search-zip hello", "rg --search-zip"),
    ("tar -cf {m} --to-command='touch x' .", "tar --to-command"),
    ("tar -cf {m} --checkpoint=1 --checkpoint-action=exec='touch x' hello.txt", "tar --checkpoint-action"),
    ("tar -cf {m} --info-script=./pre.sh hello.txt", "tar --info-script"),
    ("tar -cf {m} --new-volume-script=./pre.sh hello.txt", "tar --new-volume-script"),
    ("tar -cf {m} -F ./pre.sh hello.txt", "tar -F"),
    ("tar --use-compress-program=./pre.sh -cf {m} hello.txt", "tar --use-compress-program"),
    ("tar -I ./pre.sh -cf {m} hello.txt", "tar -I"),
    ("tar --rsh-command=./pre.sh -cf {m} hello.txt", "tar --rsh-command"),
    ("tar --rmt-command=./pre.sh -cf {m} hello.txt", "tar --rmt-command"),
]
TEXT = [
    ("sed -i s/hello/bye/ hello.txt", "sed -i"),
    ("sed -ni s/hello/bye/ hello.txt", "sed -i"),  # in a cluster
    ("sed --in-place s/hello/bye/ hello.txt", "sed --in-place"),
    ("sed -f script.sed hello.txt", "sed -f"),
    ("sed --file=script.sed hello.txt", "sed --file"),
    ("sed 'w{m}' hello.txt", "sed #0"),
    ("sed --expression='w {m}' hello.txt", "sed #0"),
    ("sed -n '1w {m}' hello.txt", "sed #1"),
    ("sed '1etouch {m}' hello.txt", "sed #1"),
    ("sed -n '/hello/w {m}' hello.txt", "sed #2"),
    ("sed 's/hello/bye/w {m}' hello.txt", "sed #3"),
    ("sed 's/hello/touch {m}/e' hello.txt", "sed #3"),
    ("gsed -i s/hello/bye/ hello.txt", "gsed -i"),
    ("awk -f prog.awk hello.txt", "awk -f"),
    ("awk --file=prog.awk hello.txt", "awk --file"),
    ("awk -E prog.awk hello.txt", "awk -E"),
    ("awk --exec=prog.awk hello.txt", "awk --exec"),
    ("awk -i inc.awk 1 hello.txt", "awk -i"),
    ("awk --include=inc.awk 1 hello.txt", "awk --include"),
    ("awk -l ext 1 hello.txt", "awk -l"),
    ("awk --load=ext 1 hello.txt", "awk --load"),
    ("awk '@include \"inc.awk\"' hello.txt", "awk #0"),
    ("awk 'BEGIN { system(\"touch {m}\") }'", "awk #1"),
    ('awk \'BEGIN { print "x" | "cat > {m}" }\'', "awk #2"),
    ("awk '{ print > \"{m}\" }' hello.txt", "awk #3"),
    ("gawk 'BEGIN { system(\"touch {m}\") }'", "gawk #1"),
    ("mawk 'BEGIN { system(\"touch {m}\") }'", "mawk #1"),
    ("nawk 'BEGIN { system(\"touch {m}\") }'", "nawk #1"),
    ("sort -o {m} hello.txt", "sort -o"),
    ("sort --output={m} hello.txt", "sort --output"),
    ("sort --compress-program=./pre.sh hello.txt", "sort --compress-program"),
    ("echo hi | tee {m}", "tee"),
    ("uniq hello.txt {m}", "uniq #0"),
    ("less -o {m} hello.txt", "less -o"),
    ("less -O {m} hello.txt", "less -O"),
    ("less --log-file={m} hello.txt", "less --log-file"),
    ("less --LOG-FILE={m} hello.txt", "less --LOG-FILE"),
    ("less -k keys hello.txt", "less -k"),
    ("less --lesskey-file=keys hello.txt", "less --lesskey-file"),
    ("less --lesskey-src=keys hello.txt", "less --lesskey-src"),
    ("less --lesskey-content=keys hello.txt", "less --lesskey-content"),
    ("less '+!touch {m}' hello.txt", "less #0"),
    ("man -P 'touch {m}' ls", "man -P"),
    ("man --pager='touch {m}' ls", "man --pager"),
    ("man -H'touch {m}' ls", "man -H"),
    ("man --html='touch {m}' ls", "man --html"),
    ("man -C conf ls", "man -C"),
    ("man --config-file=conf ls", "man --config-file"),
    ("tree -o {m}", "tree -o"),
    ("file -C -m magic", "file -C"),
    ("file --compile -m magic", "file --compile"),
    ("base64 -o {m} hello.txt", "base64 -o"),
    ("base64 --output={m} hello.txt", "base64 --output"),
    ("yq -i .a hello.yaml", "yq -i"),
    ("yq --inplace .a hello.yaml", "yq --inplace"),
]
CURL = [
    (f"curl {flag} {{m}} http://127.0.0.1:9/", f"curl {flag}")
    for flag in (
        "-o", "--output", "-O", "--remote-name", "--remote-name-all", "--output-dir", "-D",
        "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl",
        "--stderr", "--etag-save", "--hsts", "--alt-svc", "-K", "--config",
    )
]  # fmt: skip


def shipped_app(tmp_path: Path) -> App:
    """A real App with uji's defaults loaded and no config of the user's."""
    from uji.app import App
    from uji.paths import resolve

    app = App(
        resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path), notice=lambda _: None
    )
    asyncio.run(app.load_config())
    return app


def shipped_table(tmp_path: Path) -> dict[str, Any]:
    """The write-flags table uji's defaults set, read from a real App's gate."""
    return dict(shipped_app(tmp_path).gate.policy.write_flags.table)


def rule_of(expected: str, table: dict[str, Any]) -> str:
    key, _, tail = expected.rpartition(" #")
    if not key:
        return expected
    regexes = [s for s in table[key] if s.startswith("/")]
    return f"{key} {regexes[int(tail)]}"


def repo(home: Home) -> None:
    """A git repository with a commit and a change, files to search, a script that would
    mark that it ran."""
    work = home.work
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    (work / "hello.txt").write_text("hello\n")
    (work / "hello.yaml").write_text("a: 1\n")
    subprocess.run(["git", "add", "."], cwd=work, check=True)
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    subprocess.run(
        ["git", "commit", "-qm", "one"], cwd=work, check=True, env={**env, "PATH": "/usr/bin:/bin"}
    )
    (work / "hello.txt").write_text("hello again\n")
    (work / "pre.sh").write_text('#!/bin/sh\ntouch ran-pre\ncat "$@"\n')
    (work / "pre.sh").chmod(0o755)


def refused(home: Home, cases: list[tuple[str, str]], tmp_path: Path) -> None:
    table = shipped_table(tmp_path / "shipped")
    repo(home)
    commands = []
    for i, (command, _) in enumerate(cases):
        (home.work / f"v{i}").mkdir()
        (home.work / f"v{i}" / "keep.txt").write_text("precious")
        commands.append(command.replace("{m}", f"m{i}").replace("{v}", f"v{i}"))
    before = {p.name: p.stat().st_mtime_ns for p in home.work.iterdir() if p.is_file()}
    home.init(LUA)
    home.fake.script(tool_calls(*(call("run_command", {"command": c}) for c in commands)), text("ok"))
    run = home.run("go", "--on-ask", "deny", timeout=110)
    assert run.rc == 0, run.stderr
    assert [c["subject"] for c in run.calls] == commands
    failures = []
    for i, ((_, expected), command, event) in enumerate(zip(cases, commands, run.calls, strict=True)):
        decided = (event["decision"], event["by"], event.get("policy"), event.get("rule"))
        if decided != ("deny", "auto", "ask", rule_of(expected, table)):
            failures.append(f"{command!r}: expected rule {rule_of(expected, table)!r}, got {event}")
        elif not event.get("source", "").endswith(
            "uji/builtin/defaults.lua:" + event["source"].rsplit(":", 1)[-1]
        ):
            failures.append(f"{command!r}: the rule's source should be the shipped defaults: {event}")
        if (home.work / f"m{i}").exists() or not (home.work / f"v{i}" / "keep.txt").exists():
            failures.append(f"{command!r} ran")
    assert not failures, "\n".join(failures)
    after = {p.name: p.stat().st_mtime_ns for p in home.work.iterdir() if p.is_file()}
    assert after == before  # nothing written, nothing created (ran-pre, x, out files…)


def test_git_flags_that_write_or_run_ask(home: Home, tmp_path: Path) -> None:
    refused(home, GIT, tmp_path)


def test_find_fd_rg_and_tar_flags_that_write_or_run_ask(home: Home, tmp_path: Path) -> None:
    refused(home, FIND, tmp_path)


def test_text_tool_flags_that_write_or_run_ask(home: Home, tmp_path: Path) -> None:
    refused(home, TEXT + CURL, tmp_path)


def test_every_shipped_entry_has_a_case(tmp_path: Path) -> None:
    table = shipped_table(tmp_path)
    from uji.tools.write_flags import WriteFlags

    WriteFlags().set(table, None)  # its regular expressions compile (uji compiles them when needed)
    shipped = set()
    for key, value in table.items():
        if value is True:
            shipped.add(key)
        else:
            shipped.update(
                rule_of(f"{key} #{n}", table) for n in range(sum(s.startswith("/") for s in value))
            )
            shipped.update(f"{key} {s}" for s in value if not s.startswith("/"))
    tested = {rule_of(rule, table) for _, rule in GIT + FIND + TEXT + CURL}
    # gsed, gawk, mawk, nawk and fdfind share sed's, awk's and fd's list: one case each
    aliases = {"gsed": "sed", "gawk": "awk", "mawk": "awk", "nawk": "awk", "fdfind": "fd"}
    for alias, same in aliases.items():
        assert table[alias] == table[same]
        shipped = {r for r in shipped if not r.startswith(alias + " ")}
        assert any(r.startswith(alias + " ") for r in tested)
    assert shipped - tested == set()


@pytest.mark.parametrize("on_ask", ["deny"])
def test_the_same_commands_without_such_flags_are_still_allowed(home: Home, on_ask: str) -> None:
    repo(home)
    commands = [
        "git diff --stat > m0",
        "git log --oneline > m1",
        "git grep -n hello > m2",
        "find . -maxdepth 1 -name hello.txt > m3",
        "sed -n 1p hello.txt > m4",
        "sed -n -e 's/hello/bye/gp' -e 2p ./hello.txt ./pre.sh > m8",
        "sort -r hello.txt > m5",
        "awk '{ print $1 }' hello.txt > m6",
        "git diff --no-ext-diff --output-indicator-new=+ > m7",
    ]
    home.init(LUA)
    home.fake.script(tool_calls(*(call("run_command", {"command": c}) for c in commands)), text("ok"))
    run = home.run("go", "--on-ask", on_ask, timeout=110)
    for i, event in enumerate(run.calls):
        assert (event["decision"], event["by"], event["policy"]) == ("allow", "policy", "allow"), event
        assert (home.work / f"m{i}").exists()


def test_a_user_reads_the_list_changes_it_and_sets_it_again(home: Home) -> None:
    repo(home)
    home.init(
        LUA + "\nlocal flags = uji.tool.write_flags()\nflags.git = nil\n"
        'flags.sort = { "--compress-program" }\nuji.tool.write_flags(flags)'
    )
    commands = ["git diff --output=m0", "sort -o m1 hello.txt", "find . -maxdepth 0 -fprint m2"]
    home.fake.script(tool_calls(*(call("run_command", {"command": c}) for c in commands)), text("ok"))
    run = home.run("go", "--on-ask", "deny", timeout=60)
    got = [(c["decision"], c["by"], c.get("rule")) for c in run.calls]
    assert got == [
        ("allow", "policy", "git *"),
        ("allow", "policy", "sort *"),
        ("deny", "auto", "find -fprint"),
    ]
    assert (
        run.calls[2]["source"] == f"{home.config / 'init.lua'}:{home.line_of('uji.tool.write_flags(flags)')}"
    )
    assert (home.work / "m0").exists() and (home.work / "m1").exists() and not (home.work / "m2").exists()


@pytest.mark.parametrize(
    ("lua", "error"),
    [
        ("uji.tool.write_flags({ git = 5 })", "git: expected a list of flags or true, got 5"),
        (
            'uji.tool.write_flags({ ["a b c"] = true })',
            "a key must be a command name or a name and a subcommand",
        ),
        ('uji.tool.write_flags({ sed = { "/(/" } })', "sed: invalid regular expression /(/"),
        ('uji.tool.write_flags("git")', "uji.tool.write_flags expects a table"),
    ],
)
def test_a_list_that_cannot_be_read_is_an_error_at_its_line(home: Home, lua: str, error: str) -> None:
    home.init(lua)
    home.fake.script(text("ok"))
    run = home.run("go", timeout=60)
    where = f"{home.config / 'init.lua'}:{home.line_of(lua)}"
    assert any(where in n and error in n for n in run.notices), run.notices


def test_setting_the_list_returns_it_as_reading_it_back_gives_it(home: Home) -> None:
    home.init(
        """
        local mine = { tee = true, sed = { "-i", "/w/" }, ["git rebase"] = { "-x" } }
        local set = uji.tool.write_flags(mine)
        local read = uji.tool.write_flags()
        mine.sed[1] = "changed after"
        uji.notify("set " .. uji.json.encode(set))
        uji.notify("read " .. uji.json.encode(read))
        """
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    set_ = json.loads(next(n for n in run.notices if n.startswith("set "))[4:])
    read = json.loads(next(n for n in run.notices if n.startswith("read "))[5:])
    assert set_ == read == {"tee": True, "sed": ["-i", "/w/"], "git rebase": ["-x"]}  # a copy
