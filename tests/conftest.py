"""Shared fixtures: an isolated uji home, the real `uji` command run as a subprocess,
and a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import atexit
import gc
import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.zygote import Zygote
from uji.cli import GC_YOUNG

# The order the tests are handed to the workers: the slow ones early, spread among the others.
pytest_plugins = ("tests.slowest_first",)

# Real `uji` processes forked from one that imported uji already (see tests/zygote.py).
ZYGOTE = Zygote()

# A "test" provider pointed at the fake server from init.lua.
PROVIDER_LUA = """
uji.provider.add({{ id = "test", name = "Test", wire = "openai-chat", base_url = "{base_url}",
  models = {{ {{ id = "m", context = 100000, images = true }} }} }})
uji.model.use({{ provider = "test", model = "m" }})
"""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject.toml): three workers per core. Many tests wait on processes,
    sockets, timers and terminals rather than compute: with one worker per core the cores
    were idle about a third of the time, and with two still about a sixth (two cores at
    load ~3: six workers ran the suite in 6-7 % less wall time than four, for 5-8 % more
    CPU, in two pairs of runs)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 3 * cores


def pytest_configure(config: pytest.Config) -> None:
    # The cycle collector runs as in a uji process (cli.tune_gc): the screens the tests run
    # in this process are uji's, and at the default threshold (700) its young collections
    # were about 15 % of a TUI test file's CPU.
    gc.set_threshold(GC_YOUNG)
    # With test workers: one zygote for them all, started here, before the workers start
    # (they find it in the environment they inherit).
    if not hasattr(config, "workerinput") and _has_workers(config):
        ZYGOTE.share()
    if hasattr(config, "workerinput"):
        atexit.register(_leave_at_once)  # first registered: the last handler to run


# A test worker whose session ended (it sent its results): what `_leave_at_once` checks.
_WORKER_DONE: list[bool] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        _WORKER_DONE.append(True)


def _leave_at_once() -> None:
    """A test worker whose session ended leaves without the interpreter's teardown: freeing
    what the tests left (the modules, the items, the screens' objects) took each worker 2-6 s
    of CPU after its last test, and the run waited for the last of them (a whole run, two
    pairs alternated: 6.1 and 6.8 s from the last test's end to pytest's, against 1.1 and
    1.3; 7-11 s less CPU). It runs after every other exit handler (registered first); not
    while coverage measures the worker, whose data its own handler may still write."""
    coverage = sys.modules.get("coverage")
    if not _WORKER_DONE or (coverage is not None and coverage.Coverage.current() is not None):
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def pytest_collection_finish(session: pytest.Session) -> None:
    # What collecting made (modules, the test items) lives until the end: later collections
    # skip it, as a uji process freezes what its start-up made (App.load_config).
    gc.freeze()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput") and not _has_workers(session.config):
        ZYGOTE.spawn()  # pytest without workers (with them, see pytest_configure)


def _has_workers(config: pytest.Config) -> bool:
    return bool(getattr(config.option, "numprocesses", None))


def pytest_sessionfinish(session: pytest.Session) -> None:
    ZYGOTE.close()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """For `./test`'s last line: how many tests ran and how they ended, written to the
    file it names in UJI_TEST_COUNTS (in the controlling process, which sees every worker's)."""
    where = os.environ.get("UJI_TEST_COUNTS")
    if not where or hasattr(terminalreporter.config, "workerinput"):
        return
    counts = {k: len(terminalreporter.stats.get(k, [])) for k in ("passed", "failed", "error", "skipped")}
    ran = counts["passed"] + counts["failed"] + counts["skipped"]
    parts = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    Path(where).write_text(f"{ran} tests ({parts})")


def unmeasured(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (by default this process's) without what makes a Python process measure its
    coverage under `./test --cov`: for tests of what a process imports, which coverage's
    own imports (sqlite3, tomllib) would add to."""
    base = dict(os.environ if env is None else env)
    for name in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START"):
        base.pop(name, None)
    return base


@dataclass
class Run:
    rc: int
    stdout: str
    stderr: str
    events: list[dict[str, Any]] = field(default_factory=list)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]

    @property
    def calls(self) -> list[dict[str, Any]]:
        return self.of("call")

    @property
    def notices(self) -> list[str]:
        return [e["text"] for e in self.of("notice")]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [e["message"] for e in self.of("message")]

    def tool_results(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] == "tool"]

    @property
    def done(self) -> dict[str, Any]:
        done = self.of("done")
        assert done, f"no done event; stderr:\n{self.stderr}\nstdout:\n{self.stdout}"
        return done[-1]

    @property
    def session_id(self) -> str:
        return self.of("session")[0]["id"]


class Home:
    """A user's machine in miniature: config, data and a working directory."""

    def __init__(self, root: Path, fake: FakeOpenAI | None) -> None:
        self.root = root
        self.home = root / "home"
        self.config = self.home / ".config" / "uji"
        self.data = self.home / ".local" / "share" / "uji"
        self.work = root / "work"
        for d in (self.home, self.config, self.data, self.work):
            d.mkdir(parents=True, exist_ok=True)
        self.fake = fake
        self.db = self.data / "uji.db"

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_API_KEY") and not k.startswith(("UJI_", "XDG_"))
        }
        env.update(HOME=str(self.home), PYTHONUNBUFFERED="1", NO_PROXY="*", no_proxy="*")
        # No local-server probe unless a test asks for one: this machine's ports are not ours.
        env["UJI_PROBE_PORTS"] = ""
        env.pop("HTTP_PROXY", None)
        env.pop("HTTPS_PROXY", None)
        env.update(extra)
        return env

    def init(self, lua: str, provider: bool = True) -> None:
        text = textwrap.dedent(lua)
        if provider and self.fake is not None:
            text = PROVIDER_LUA.format(base_url=self.fake.base_url) + text
        (self.config / "init.lua").write_text(text)

    def line_of(self, snippet: str, file: str = "init.lua") -> int:
        """The line number of the first line of a config file containing `snippet`."""
        lines = (self.config / file).read_text().splitlines()
        return next(i for i, line in enumerate(lines, 1) if snippet in line)

    def plugin(self, name: str, lua: str) -> None:
        (self.config / "plugin").mkdir(exist_ok=True)
        (self.config / "plugin" / name).write_text(textwrap.dedent(lua))

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "uji", *args]

    def uji(
        self,
        *args: str,
        timeout: float = 60,
        env: dict[str, str] | None = None,
        check: bool = False,
        stdin: str | None = None,
        cwd: Path | None = None,
        fresh: bool = False,
    ) -> Run:
        """Run uji; its stdin is `stdin` through a pipe, else /dev/null (never the test
        runner's own stdin, which may be a terminal or a pipe left open). `fresh`: a new
        interpreter exec'd for this run (so /proc/PID/environ is the run's), not a process
        forked from the zygote."""
        run_env = self.env(**(env or {}))
        where = str(cwd or self.work)
        forked = not fresh and ZYGOTE.usable(run_env)
        proc = ZYGOTE.run(list(args), where, run_env, stdin, timeout) if forked else None
        if proc is None:
            proc = subprocess.run(
                self.command(*args),
                cwd=where,
                env=run_env,
                capture_output=True,
                text=True,
                timeout=timeout,
                input=stdin,
                stdin=subprocess.DEVNULL if stdin is None else None,
            )
        events = []
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        run = Run(proc.returncode, proc.stdout, proc.stderr, events)
        if check:
            assert run.rc == 0, f"rc={run.rc}\nstderr:\n{run.stderr}\nstdout:\n{run.stdout}"
        return run

    def run(self, prompt: str, *flags: str, **kw: Any) -> Run:
        return self.uji("run", "--json", *flags, prompt, **kw)

    def db_messages(self, session_id: str) -> list[dict[str, Any]]:
        con = sqlite3.connect(self.db)
        try:
            rows = con.execute(
                "SELECT type, data FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
        finally:
            con.close()
        return [{"type": t, **json.loads(d)} for t, d in rows]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def home(tmp_path: Path, fake: FakeOpenAI) -> Home:
    return Home(tmp_path, fake)


def tool_schemas(request_body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in request_body.get("tools", [])}


@pytest.fixture(autouse=True)
def _no_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process apps probe no local-server ports either (a test sets its own)."""
    monkeypatch.setenv("UJI_PROBE_PORTS", "")
