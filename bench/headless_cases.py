"""The torture and bench scenarios that run the real `uji run --json` in a subprocess
against a loopback fake model (tests/fakes/). Each returns `Figures`; `bench/run.py`
runs them, prints the table and compares with a saved baseline.

Budgets: the original's torture budgets where it had one (internals.md §7), else the
targets of issue 12, else the original's default torture budget of 2 s.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import Figure, Figures, Home, Run, fill, median, spawn
from tests.fakes.base import Step
from tests.fakes.openai_server import (
    FakeOpenAI,
    call,
    chunk,
    raw_lines,
    text,
    text_deltas,
    tool_call,
    tool_calls,
)

ORIGINAL = "the original's torture budget"
DEFAULT = "the original's default torture budget"
ISSUE = "issue 12's target"


def _ok(figs: Figures, run: Run, what: str) -> bool:
    ok = run.code == 0 and "error" not in run.done()
    figs.check(ok, f"{what}: {run.why()}")
    return ok


# --------------------------------------------------------------------------- start-up


def startup(n: int = 10) -> Figures:
    """`uji --version` against bare `python -c pass`, alternating, median of n."""
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        bare, version, rss = [], [], []
        for _ in range(n):
            bare.append(spawn([sys.executable, "-c", "pass"], env=home.env, cwd=home.work).ms)
            r = home.run("--version")
            figs.check(r.code == 0, f"uji --version: {r.why()}")
            version.append(r.ms)
            rss.append(r.rss_mib)
    b = median(bare)
    figs.add(f"python -c pass (median of {n})", b)
    figs.add(f"uji --version (median of {n})", median(version), budget=1.5 * b, where="1.5x bare python")
    figs.add("uji --version peak RSS", median(rss), "MiB")
    return figs


# The same turn without uji: a fresh interpreter with the stack uji runs on (asyncio,
# httpx2, SQLite, a subprocess) making the turn's two streamed requests. What uji takes
# above it is uji's own (its imports, Lua, the store, the gate, the output).
_FLOOR = r"""
import asyncio, json, os, sqlite3, sys
async def main(url):
    import httpx2
    db = sqlite3.connect(sys.argv[2])
    # verify=False: no CA bundle read for this http:// URL (uji reads it on the first https use)
    async with httpx2.AsyncClient(verify=False, timeout=httpx2.Timeout(None, connect=10.0)) as client:
        for step in range(2):
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
            async with client.stream("POST", url, json=body) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: {"):
                        json.loads(line[6:])
            if step == 0:
                proc = await asyncio.create_subprocess_exec("true")
                await proc.wait()
            db.execute("CREATE TABLE IF NOT EXISTS t (x)")
            db.execute("INSERT INTO t VALUES (?)", (step,))
            db.commit()
    db.close()
asyncio.run(main(sys.argv[1]))
os._exit(0)  # no interpreter teardown, as uji run
"""


def turn(n: int = 7) -> Figures:
    """A full turn over loopback HTTP: `uji run --json` with one run_command call, then
    a text answer; a text-only turn; and the stack's floor (`_FLOOR`) for the first."""
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        shell, plain, floor = [], [], []
        for _ in range(n):
            fake.script(tool_call("run_command", {"command": "true"}), text("done"))
            url = fake.base_url.rstrip("/") + "/chat/completions"
            before = len(fake.requests)
            r = spawn(
                [sys.executable, "-c", _FLOOR, url, str(home.root / "floor.db")], env=home.env, cwd=home.work
            )
            figs.check(r.code == 0 and len(fake.requests) == before + 2, f"the stack's floor: {r.why()}")
            floor.append(r.ms)
            fake.script(tool_call("run_command", {"command": "true"}), text("done"))
            r = home.run("run", "--json", "go")
            if _ok(figs, r, "turn with a shell call"):
                shell.append(r.ms)
            fake.script(text("hi"))
            r = home.run("run", "--json", "go")
            if _ok(figs, r, "text-only turn"):
                plain.append(r.ms)
    if shell:
        figs.add(
            f"turn with one shell call (median of {n})",
            median(shell),
            budget=170,
            where=ISSUE + " (0.5x Codex's here)",
        )
    if plain:
        figs.add(f"text-only turn (median of {n})", median(plain))
    if floor:
        figs.add(
            f"the same two requests from bare python + asyncio + httpx2 (median of {n})",
            median(floor),
            note="the floor of the stack uji runs on",
        )
    if shell and floor:
        figs.add("uji's own share of the turn with a shell call", median(shell) - median(floor))
    return figs


# --------------------------------------------------------------------------- the torture cases

RUNS = 3  # each torture case: the median of 3 turns (the original ran each once)


def _torture(
    label: str,
    steps: Callable[[], list[Step]],
    check: Callable[[Run, FakeOpenAI, Home], str | None],
    budget: float,
    where: str = ORIGINAL,
    before: Callable[[Home], None] | None = None,
    info: Callable[[Run, FakeOpenAI, Home], list[Figure]] | None = None,
) -> Figures:
    """`uji run --json go` RUNS times against `steps`, each run checked (a string is a
    problem); the figure is the median whole-run time."""
    figs = Figures()
    samples: list[float] = []
    extra: list[Figure] = []
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        for _ in range(RUNS):
            if before is not None:
                before(home)
            fake.script(*steps())
            r = home.run("run", "--json", "go", timeout=300)
            samples.append(r.ms)
            if _ok(figs, r, label):
                problem = check(r, fake, home)
                figs.check(problem is None, f"{label}: {problem}")
                if info is not None:
                    extra = info(r, fake, home)
    figs.add(f"{label} (median of {RUNS})", median(samples), budget=budget, where=where)
    figs.items += extra
    return figs


def _answer_is(want: str) -> Callable[[Run, FakeOpenAI, Home], str | None]:
    def check(r: Run, fake: FakeOpenAI, home: Home) -> str | None:
        got = r.done().get("text", "")
        return (
            None
            if got == want
            else f"the answer has {len(got):,} characters ({got[:30]!r}…), not {len(want):,}"
        )

    return check


def chunks_50k() -> Figures:
    return _torture(
        "50,000 one-character chunks", lambda: [text_deltas(50_000)], _answer_is("x" * 50_000), 10_000
    )


def sse_5mb() -> Figures:
    body = "".join(random.Random(5).choice("abcdefgh ij\n") for _ in range(1000)) * 5_000  # 5 MB
    return _torture(
        "a 5 MB reply in one SSE event", lambda: [text(body, piece=len(body))], _answer_is(body), 5_000
    )


JUNK = [
    "data: {not json",
    ": a comment",
    "event: ping",
    "id: 7",
    "retry: 10",
    "data: \x00\x01\xff garbage",
    "garbage without a field",
    "data: []",
    "data: null",
    "data: 12",
    '{"choices": "not an event"}',
    "",
]


def garbage() -> Figures:
    """1,000 deltas with garbage between the events: lines that do not parse, comments,
    `event:` lines, stray fields, control characters, JSON that is not an event."""
    lines = [json_event(chunk({"role": "assistant", "content": ""})), ""]
    rng = random.Random(1)
    for i in range(1000):
        lines += [json_event(chunk({"content": f"{i % 10}"})), ""]
        lines += [*rng.sample(JUNK, 3), ""]
    lines += [json_event(chunk({}, "stop")), "", "data: [DONE]", ""]
    want = "".join(f"{i % 10}" for i in range(1000))
    return _torture(
        "1,000 deltas with garbage between events",
        lambda: [raw_lines(lines)],
        _answer_is(want),
        2_000,
        DEFAULT,
    )


def json_event(obj: Any) -> str:
    return "data: " + json.dumps(obj, separators=(",", ":"))


def _results(fake: FakeOpenAI) -> list[dict[str, Any]]:
    """The tool results the model received in the last turn request."""
    return [m for m in fake.turn_requests[-1].body["messages"] if m.get("role") == "tool"]


def calls_200() -> Figures:
    """200 run_command calls in one reply, then a text answer. (The step limit of 100
    counts model calls; this is two.)"""

    def check(r: Run, fake: FakeOpenAI, home: Home) -> str | None:
        results = _results(fake)
        if len(results) != 200:
            return f"the model got {len(results)} tool results, not 200"
        wrong = [i for i, m in enumerate(results) if str(m["content"]).strip() != f"marker {i}"]
        return f"results {wrong[:5]}… are not their command's output" if wrong else None

    calls = [call("run_command", {"command": f"echo marker {i}"}) for i in range(200)]
    return _torture("200 tool calls in one reply", lambda: [tool_calls(*calls), text("done")], check, 10_000)


def _one_result(r: Run, fake: FakeOpenAI, home: Home) -> str | None:
    results = _results(fake)
    return None if len(results) == 1 else f"{len(results)} tool results, not 1"


def _result_size(r: Run, fake: FakeOpenAI, home: Home) -> list[Figure]:
    return [Figure("  what the model got of it", len(str(_results(fake)[0]["content"])), "chars")]


def _command(command: str, label: str, budget: float) -> Figures:
    steps = [tool_call("run_command", {"command": command}), text("done")]
    return _torture(label, lambda: steps, _one_result, budget, info=_result_size)


def output_10mb_line() -> Figures:
    return _command("head -c 10000000 /dev/zero | tr '\\0' x", "a 10 MB single-line output", 10_000)


def output_1m_lines() -> Figures:
    return _command("seq 1 1000000", "seq 1 1000000 (1,000,000 lines)", 10_000)


def read_50mb() -> Figures:
    line = "the quick brown fox jumps over the lazy dog, line after line of it\n"

    def before(home: Home) -> None:
        big = home.work / "big.txt"
        if not big.exists():
            with big.open("w") as f:
                f.write(line * (50_000_000 // len(line)))

    def check(r: Run, fake: FakeOpenAI, home: Home) -> str | None:
        got = str(_results(fake)[0]["content"]) if _results(fake) else ""
        return None if line.strip() in got else f"the result does not show the file: {got[:80]!r}"

    steps = [tool_call("read_file", {"path": "big.txt"}), text("done")]
    return _torture("reading a 50 MB file", lambda: steps, check, 5_000, before=before, info=_result_size)


def edit_20mb() -> Figures:
    line = "x = compute(y) + 1  # a line of code, repeated\n"

    def before(home: Home) -> None:  # the file afresh for each run
        with (home.work / "big.py").open("w") as f:
            f.write(line * (20_000_000 // len(line)) + "END = 'old'\n")

    def check(r: Run, fake: FakeOpenAI, home: Home) -> str | None:
        with (home.work / "big.py").open("rb") as f:
            f.seek(-40, 2)
            tail = f.read()
        return None if tail.endswith(b"END = 'new'\n") else f"the file ends {tail!r}"

    args = {"path": "big.py", "old_string": "END = 'old'", "new_string": "END = 'new'"}
    steps = [tool_call("edit_file", args), text("done")]
    return _torture("editing the end of a 20 MB file", lambda: steps, check, 5_000, before=before)


# --------------------------------------------------------------------------- sessions


def fill_store(db: Path, directory: str, n: int, compact_every: int | None = None) -> str:
    from uji.store.sessions import Store

    store = Store(str(db))
    sid = store.create_session(directory, "bench")
    fill(store, sid, n, compact_every)
    store.close()
    return sid


def _resume(
    n: int, runs: int, time_budget: float | None, rss_budget: float | None, compact_every: int | None = None
) -> Figures:
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        sid = fill_store(home.data / "uji.db", str(home.work), n, compact_every)
        resumed, fresh, rss_r, rss_f = [], [], [], []
        for _ in range(runs):  # alternating, so load hits both alike
            fake.script(text("ok"))
            r = home.run("run", "--json", "--session", sid, "next", timeout=300)
            if _ok(figs, r, f"resume of {n:,}"):
                resumed.append(r.ms)
                rss_r.append(r.rss_mib)
            fake.script(text("ok"))
            r = home.run("run", "--json", "next")
            if _ok(figs, r, "a new session"):
                fresh.append(r.ms)
                rss_f.append(r.rss_mib)
        sent = len(fake.turn_requests[-2].body["messages"]) if len(fake.turn_requests) >= 2 else 0
    if resumed and fresh:
        m_r, m_f = median(resumed), median(fresh)
        figs.add(f"uji run --session ({n:,} messages), whole run", m_r)
        figs.add("uji run, a new session", m_f)
        figs.add(
            f"resume of {n:,} messages over a new session",
            m_r - m_f,
            budget=time_budget,
            where=ISSUE if time_budget == 300 else DEFAULT,
        )
        figs.add(
            f"peak RSS resuming {n:,} (a new session: {median(rss_f):.0f} MiB)",
            median(rss_r),
            "MiB",
            budget=rss_budget,
            where=ISSUE if rss_budget else "",
        )
        figs.add("  messages sent to the model on resume", sent, "msgs")
    return figs


def resume_5000() -> Figures:
    return _resume(5_000, 5, 2_000, None)


def resume_50k() -> Figures:
    """A long session compacts (any model's window is far smaller than 50,000 messages):
    a compaction every 4,000 messages, the last at 48,000, so 2,100 are live."""
    return _resume(50_000, 3, 300, 60, compact_every=4_000)


def resume_50k_whole() -> Figures:
    """The same 50,000 messages never compacted (a model window of 10^9 tokens): all of
    them go to the model, so this measures the request, not the resume. No budget."""
    return _resume(50_000, 3, None, None)
