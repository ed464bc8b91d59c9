"""The command line people type: global options anywhere, `=` forms and `-m`, the prompt
from stdin, `--json` into a reader that stops early, `--tools` naming what is unknown,
the headless notice, and `uji list --json` — all through the real `uji` command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text, tool_call
from tests.waiting import drain, lines_until, read_line
from uji.stdio import STDIN_LIMIT


def other_config(home: Home, tmp_path: Path) -> Path:
    """A config directory apart from the home's, with a second model and a notice that
    shows it was the one loaded."""
    assert home.fake is not None
    cfg = tmp_path / "elsewhere"
    cfg.mkdir()
    (cfg / "init.lua").write_text(
        f'uji.provider.add({{ id = "test", name = "T", wire = "openai-chat", '
        f'base_url = "{home.fake.base_url}", models = {{ "m", "m2" }} }})\n'
        'uji.model.use({ provider = "test", model = "m" })\n'
        'uji.notify("elsewhere loaded")\n'
    )
    return cfg


def spawn(
    home: Home, *args: str, stdin: Any = subprocess.DEVNULL, text: bool = True
) -> subprocess.Popen[Any]:
    """uji running in the home's work directory, its stdout and stderr pipes to read."""
    return subprocess.Popen(
        home.command(*args),
        cwd=home.work,
        env=home.env(),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text,
    )


def last_user_text(home: Home) -> str:
    assert home.fake is not None
    content = home.fake.turn_requests[-1].body["messages"][-1]
    assert content["role"] == "user"
    return str(content["content"])


def test_global_options_after_the_subcommand_and_with_equals(home: Home, tmp_path: Path) -> None:
    assert home.fake is not None
    cfg = other_config(home, tmp_path)
    db = tmp_path / "other.db"
    home.fake.script(text("a"), text("b"), text("c"))

    run = home.uji("run", "--config-dir", str(cfg), "--json", "hi")
    assert run.rc == 0, run.stderr
    assert "elsewhere loaded" in run.notices

    run = home.uji("run", f"--config-dir={cfg}", f"--db={db}", "-m", "test/m2", "--json", "hi")
    assert run.rc == 0, run.stderr
    assert "elsewhere loaded" in run.notices and db.exists()
    assert home.fake.turn_requests[-1].body["model"] == "m2"

    # Before the subcommand, as before; prompt words on both sides of an option join in order.
    run = home.uji(f"--config-dir={cfg}", "run", "--json", "two", "--model=test/m2", "words")
    assert run.rc == 0, run.stderr
    assert home.fake.turn_requests[-1].body["model"] == "m2"
    assert last_user_text(home) == "two words"

    listed = home.uji("list", "--runs", "--json", f"--db={db}")
    assert [json.loads(line)["title"] for line in listed.stdout.splitlines()] == ["hi"]


def test_errors_name_the_wrong_word(home: Home) -> None:
    home.init("")
    run = home.uji("run", "--jsn", "hi")
    assert run.rc == 2 and "unknown option '--jsn' for `uji run`" in run.stderr
    run = home.uji("list", "--all")
    assert run.rc == 2 and "'--all'" in run.stderr
    run = home.uji("hello")  # a prompt for the screen (`uji "PROMPT"`), which needs a terminal
    assert run.rc == 1 and "the screen needs a terminal; use `uji run PROMPT`" in run.stderr
    run = home.uji("run", "-m", "noslash", "hi")
    assert run.rc == 2 and "--model takes PROVIDER/MODEL" in run.stderr
    assert home.fake is not None and home.fake.turn_requests == []


def test_help_shows_examples(home: Home) -> None:
    top = home.uji("--help")
    assert top.rc == 0 and "examples:" in top.stdout and 'uji run "' in top.stdout
    run = home.uji("run", "--help")
    assert run.rc == 0
    for word in ("examples:", "git diff | uji run", "-m MODEL, --model MODEL", "--on-ask deny", "stdin"):
        assert word in run.stdout


def test_the_prompt_from_a_pipe(home: Home) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("one"), text("two"))
    run = home.uji("run", "--json", stdin="what is in a pipe?\n")
    assert run.rc == 0, run.stderr
    assert last_user_text(home) == "what is in a pipe?"
    run = home.uji("run", "--json", "-", stdin="  the dash reads stdin  \n")
    assert run.rc == 0, run.stderr
    assert last_user_text(home) == "the dash reads stdin"


def test_a_prompt_and_a_file_on_stdin_are_joined(home: Home, tmp_path: Path) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("looks fine"))
    diff = tmp_path / "diff.txt"
    diff.write_text("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n")
    with diff.open() as stdin:  # `uji run "review this" < diff.txt`
        proc = subprocess.run(
            home.command("run", "--json", "review this"),
            cwd=home.work,
            env=home.env(),
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 0, proc.stderr
    assert last_user_text(home) == "review this\n\n" + diff.read_text().rstrip("\n")
    session = json.loads(proc.stdout.splitlines()[0])
    listed = home.uji("list", "--runs", "--json")
    assert [(s["id"], s["title"]) for s in map(json.loads, listed.stdout.splitlines())] == [
        (session["id"], "review this")
    ]


def test_no_prompt_and_nothing_on_stdin_is_a_usage_error(home: Home) -> None:
    home.init("")
    run = home.uji("run", stdin="")
    assert run.rc == 2 and "the prompt from stdin is empty" in run.stderr
    run = home.uji("run")  # stdin /dev/null
    assert run.rc == 2 and "the prompt from stdin is empty" in run.stderr
    run = home.uji("run", "-", stdin=" \n\n")
    assert run.rc == 2
    run = home.uji("run", "too much", stdin="x" * (STDIN_LIMIT + 1))
    assert run.rc == 2 and "stdin is over 8 MiB" in run.stderr
    assert home.fake is not None and home.fake.turn_requests == []


def test_a_pipe_left_open_and_silent_does_not_hold_a_prompt(home: Home) -> None:
    """A harness that runs `uji run PROMPT` with stdin a pipe it never writes to nor closes."""
    home.init("")
    assert home.fake is not None
    home.fake.script(text("ran anyway"))
    proc = spawn(home, "run", "--json", "the prompt", stdin=subprocess.PIPE)
    try:
        out, err = _wait(proc)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
    assert proc.returncode == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[0]["type"] == "notice" and "nothing came on stdin" in events[0]["text"]
    assert events[-1]["type"] == "done" and events[-1]["text"] == "ran anyway"
    assert last_user_text(home) == "the prompt"


def _wait(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Read stdout and stderr to the end while stdin stays open (communicate would close it)."""
    assert proc.stdout is not None and proc.stderr is not None
    return drain(proc)


def test_json_into_a_reader_that_leaves_while_a_tool_runs(home: Home) -> None:
    """The reader leaves mid-turn: no traceback, exit 141, and the session is whole."""
    go = home.root / "go"
    home.init("")
    assert home.fake is not None
    wait = f"for i in $(seq 1 1200); do [ -e {go} ] && break; sleep 0.05; done"
    home.fake.script(tool_call("run_command", {"command": wait}), text("never read"))
    proc = spawn(home, "run", "--json", "wait for it")
    assert proc.stdout is not None and proc.stderr is not None
    lines = [json.loads(x) for x in lines_until(proc.stdout, lambda x: json.loads(x)["type"] == "call")]
    proc.stdout.close()  # the reader goes away while the command runs
    go.touch()  # only now does the command end and uji write again
    first = lines[0]
    _, err = drain(proc, timeout=60)
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert first["type"] == "session"
    saved = home.db_messages(first["id"])
    # Stopped as an interrupt stops (at the tool's message, the first write after the
    # reader left): the call answered, then the interruption, and no further model turn.
    assert [m["type"] for m in saved] == ["user", "assistant", "tool", "error"]
    assert saved[-1]["text"] == "interrupted"
    assert home.fake is not None and len(home.fake.turn_requests) == 1


def test_json_into_a_reader_that_stops_at_once(home: Home) -> None:
    """`uji run --json | head -1`: the reader closes after the first line."""
    home.init("")
    assert home.fake is not None
    home.fake.script(text("never read"))
    proc = spawn(home, "run", "--json", "hi")
    assert proc.stdout is not None and proc.stderr is not None
    first = json.loads(read_line(proc.stdout))
    proc.stdout.close()
    _, err = drain(proc, timeout=60)
    # 141 once a write finds the reader gone: at once, or (on a busy machine) only at the
    # answer or `done`; 0 when everything fit in the pipe before the reader closed it.
    assert proc.returncode in (0, 141), err
    assert err == ""
    saved = home.db_messages(first["id"])
    # Whole either way: the answer, or the turn stopped as an interrupt stops it.
    assert saved[0]["type"] == "user" and saved[-1]["type"] in ("assistant", "error"), saved
    if saved[-1]["type"] == "error":
        assert saved[-1]["text"] == "interrupted" and proc.returncode == 141


def test_plain_output_into_a_closed_pipe_is_quiet(home: Home) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("line\n" * 40000))  # more than a pipe holds
    proc = spawn(home, "run", "many lines", text=False)
    assert proc.stdout is not None and proc.stderr is not None
    assert read_line(proc.stdout) == "line\n"
    proc.stdout.close()
    _, err = drain(proc, timeout=60)
    assert proc.returncode == 141, err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_unknown_tools_are_named(home: Home) -> None:
    home.init("")
    run = home.uji("run", "--tools", "read_file,zzz", "hi")
    assert run.rc == 2
    assert "--tools: no tool 'zzz'; the tools are: " in run.stderr
    assert "read_file" in run.stderr and "run_command" in run.stderr
    assert home.fake is not None and home.fake.turn_requests == []


def test_headless_says_nothing_about_asking_calls_until_one_is_refused(home: Home) -> None:
    """The old line on every run ("calls that would ask are allowed") is gone: a run
    whose calls all run inside the sandbox prints nothing on stderr (tests/test_sandbox.py
    has the run where a refused call says it, once)."""
    home.init("")
    assert home.fake is not None
    home.fake.script(text("a"), text("b"), text("c"))
    for flags in ((), ("--on-ask", "deny"), ("--on-ask", "allow")):
        plain = home.uji("run", *flags, "hi")
        assert plain.rc == 0 and plain.stderr == "", flags


def test_list_json_for_scripts(home: Home) -> None:
    home.init("")
    assert home.fake is not None
    home.fake.script(text("a"), text("b"))
    older = home.run("the older one")
    newer = home.run("the newer one")
    assert home.uji("list", "--json").stdout == ""  # one-shot runs, no conversation
    listed = home.uji("list", "--runs", "--json")
    assert listed.rc == 0
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["id"], r["title"], r["directory"]) for r in rows] == [
        (newer.session_id, "the newer one", str(home.work)),
        (older.session_id, "the older one", str(home.work)),
    ]
    assert rows[0]["updated"] >= rows[1]["updated"] > 0
    empty = home.uji("list", "--json", "--db=" + str(home.root / "none.db"))
    assert empty.rc == 0 and empty.stdout == ""


@pytest.mark.parametrize("args", [["list"], ["list", "--json"]])
def test_list_into_a_closed_pipe_is_quiet(home: Home, args: list[str]) -> None:
    home.init("")
    assert home.fake is not None
    # Sessions enough to fill the pipe, made straight in the db.
    from uji.store.sessions import Store

    store = Store(home.db)
    try:
        for i in range(3000):
            store.create_session(str(home.work), f"session {i} " + "x" * 40)
    finally:
        store.close()
    proc = spawn(home, *args, text=False)
    assert proc.stdout is not None and proc.stderr is not None
    assert read_line(proc.stdout)
    proc.stdout.close()
    _, err = drain(proc, timeout=60)
    assert proc.returncode == 0, err
    assert err == ""


# Plain `uji run` lines: the quick parse reads each as argparse does.
PLAIN_RUN_LINES = [
    ["run", "go"],
    ["run", "--json", "go"],
    ["run", "--json", "say", "hi", "--effort", "low", "there"],
    ["--db", "x.db", "run", "--json", "go"],
    ["--db=x.db", "--config-dir", "c", "run", "go", "--data-dir=d"],
    ["--db", "a.db", "run", "--db", "b.db", "go"],
    ["--db", "run", "run", "hi"],
    ["run", "-m", "p/m", "--model=q/n", "x"],
    ["run", "--image", "a.png", "--image=b.png", "--root", "r1", "--root=r2", "look"],
    ["run", "--max-steps", "3", "--max-cost=0.5", "go"],
    ["run", "--on-ask", "deny", "--confine=off", "--mode", "plan", "--trust-project", "go"],
    ["run", "--tools", "read_file,grep", "--append-prompt", "be brief", "--title", "T", "q"],
    ["run", "--parent", "abc", "--session", "def", "-", "tail"],
    ["run", "a=b", "", "c"],
    ["run", "--title=", "--image=", "x"],
    ["run"],
]
# Left to argparse: help, errors, other commands and forms the quick parse does not take.
LEFT_LINES = [
    ["run", "--help"],
    ["run", "-h"],
    ["run", "--effort", "huge", "x"],
    ["run", "--max-steps", "0", "x"],
    ["run", "--max-steps", "two", "x"],
    ["run", "--max-cost", "-1", "x"],
    ["run", "--max-cost", "inf", "x"],
    ["run", "--max-cost", "nan", "x"],
    ["run", "--title"],
    ["run", "--title", "--json"],
    ["run", "--json=yes", "x"],
    ["run", "-mp/m", "x"],
    ["run", "-m=p/m", "x"],
    ["run", "-5"],
    ["run", "--", "--json"],
    ["run", "--jso", "x"],
    ["run", "--unknown", "x"],
    ["--json", "run", "x"],
    ["list"],
    ["list", "--json"],
    ["resume", "--id", "x"],
    ["delete", "x"],
    [],
]


@pytest.mark.parametrize("args", PLAIN_RUN_LINES, ids=lambda a: " ".join(a))
def test_the_quick_parse_of_uji_run_reads_a_line_as_argparse_does(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Plain `uji run` lines skip building argparse's parser (~5 ms of each headless
    turn), and come out as argparse reads them."""
    from uji.cli import _parse_full, _quick_run

    quick = _quick_run(args)
    assert quick is not None
    assert vars(quick) == vars(_parse_full(args))


@pytest.mark.parametrize("args", LEFT_LINES, ids=lambda a: " ".join(a) or "(none)")
def test_help_errors_and_other_commands_are_left_to_argparse(args: list[str]) -> None:
    from uji.cli import _quick_run

    assert _quick_run(args) is None


def test_uji_collects_young_cycles_less_often(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    """`uji` raises the collector's young threshold (700 -> GC_YOUNG): at 700 the cycle
    collector took 30 % of the screen's CPU per streamed token (bench stream-500)."""
    import gc

    from uji.cli import GC_YOUNG, main

    for key, value in home.env().items():
        monkeypatch.setenv(key, value)
    before = gc.get_threshold()
    try:
        gc.set_threshold(700)
        assert main(["list", "--json"]) == 0
        assert gc.get_threshold()[0] == GC_YOUNG > 700
    finally:
        gc.set_threshold(*before)
