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
from pathlib import Path
from typing import Any

from common import Figures, Home, Run, fill, median, spawn
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


def _result_sizes(fake: FakeOpenAI) -> list[int]:
    """The sizes of the tool results the model received in the last turn request."""
    body = fake.turn_requests[-1].body
    return [len(str(m.get("content", ""))) for m in body["messages"] if m.get("role") == "tool"]


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


def turn(n: int = 7) -> Figures:
    """A full turn over loopback HTTP: `uji run --json` with one run_command call, then
    a text answer; and a text-only turn."""
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        shell, plain = [], []
        for _ in range(n):
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
    return figs


# --------------------------------------------------------------------------- the stream


def chunks_50k() -> Figures:
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        fake.script(text_deltas(50_000))
        r = home.run("run", "--json", "go")
        if _ok(figs, r, "50,000 chunks"):
            got = r.done().get("text", "")
            figs.check(got == "x" * 50_000, f"the answer has {len(got)} characters, not 50,000")
        figs.add("50,000 one-character chunks, whole turn", r.ms, budget=10_000, where=ORIGINAL)
    return figs


def sse_5mb() -> Figures:
    figs = Figures()
    body = "".join(random.Random(5).choice("abcdefgh ij\n") for _ in range(1000)) * 5_000  # 5 MB
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        fake.script(text(body, piece=len(body)))
        r = home.run("run", "--json", "go")
        if _ok(figs, r, "5 MB event"):
            got = r.done().get("text", "")
            figs.check(got == body, f"the answer has {len(got)} characters, not {len(body)}")
        figs.add("a 5 MB reply in one SSE event", r.ms, budget=5_000, where=ORIGINAL)
    return figs


def garbage() -> Figures:
    """1,000 deltas with garbage between the events: lines that do not parse, comments,
    `event:` lines, stray fields, binary junk, blank runs."""
    figs = Figures()
    junk = [
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
    lines = [json_event(chunk({"role": "assistant", "content": ""})), ""]
    rng = random.Random(1)
    for i in range(1000):
        lines += [json_event(chunk({"content": f"{i % 10}"})), ""]
        lines += [*rng.sample(junk, 3), ""]
    lines += [json_event(chunk({}, "stop")), "", "data: [DONE]", ""]
    want = "".join(f"{i % 10}" for i in range(1000))
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        fake.script(raw_lines(lines))
        r = home.run("run", "--json", "go")
        if _ok(figs, r, "garbage between events"):
            got = r.done().get("text", "")
            figs.check(got == want, f"the answer is {got[:40]!r}…, not the 1,000 digits sent")
        figs.add("1,000 deltas with garbage between events", r.ms, budget=2_000, where=DEFAULT)
    return figs


def json_event(obj: Any) -> str:
    return "data: " + json.dumps(obj, separators=(",", ":"))


# --------------------------------------------------------------------------- tools


def calls_200() -> Figures:
    """200 run_command calls in one reply, then a text answer. (The step limit of 100
    counts model calls; this is two.)"""
    figs = Figures()
    calls = [call("run_command", {"command": f"echo {i}"}) for i in range(200)]
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        fake.script(tool_calls(*calls), text("done"))
        r = home.run("run", "--json", "go", timeout=300)
        if _ok(figs, r, "200 tool calls"):
            results = [m for m in fake.turn_requests[-1].body["messages"] if m.get("role") == "tool"]
            figs.check(len(results) == 200, f"the model got {len(results)} tool results, not 200")
            figs.check(
                all("199" in str(m["content"]) for m in results[-1:]),
                "the last call's output is not in its result",
            )
        figs.add("200 tool calls in one reply", r.ms, budget=10_000, where=ORIGINAL)
    return figs


def _command(command: str, label: str, budget: float) -> Figures:
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        fake.script(tool_call("run_command", {"command": command}), text("done"))
        r = home.run("run", "--json", "go", timeout=300)
        figs.add(label + ", whole turn", r.ms, budget=budget, where=ORIGINAL)
        if _ok(figs, r, label):
            sizes = _result_sizes(fake)
            figs.check(len(sizes) == 1, f"{len(sizes)} tool results")
            if sizes:
                figs.add("  what the model got of it", sizes[0], "chars")
    return figs


def output_10mb_line() -> Figures:
    return _command("head -c 10000000 /dev/zero | tr '\\0' x", "a 10 MB single-line output", 10_000)


def output_1m_lines() -> Figures:
    return _command("seq 1 1000000", "seq 1 1000000", 10_000)


def read_50mb() -> Figures:
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        line = "the quick brown fox jumps over the lazy dog, line after line of it\n"
        big = home.work / "big.txt"
        with big.open("w") as f:
            f.write(line * (50_000_000 // len(line)))
        fake.script(tool_call("read_file", {"path": "big.txt"}), text("done"))
        r = home.run("run", "--json", "go", timeout=300)
        if _ok(figs, r, "50 MB read"):
            sizes = _result_sizes(fake)
            figs.check(bool(sizes) and sizes[0] > 1000, f"the read gave {sizes}")
        figs.add("reading a 50 MB file, whole turn", r.ms, budget=5_000, where=ORIGINAL)
    return figs


def edit_20mb() -> Figures:
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        line = "x = compute(y) + 1  # a line of code, repeated\n"
        big = home.work / "big.py"
        size = 20_000_000
        with big.open("w") as f:
            f.write(line * (size // len(line)) + "END = 'old'\n")
        fake.script(
            tool_call(
                "edit_file", {"path": "big.py", "old_string": "END = 'old'", "new_string": "END = 'new'"}
            ),
            text("done"),
        )
        r = home.run("run", "--json", "go", timeout=300)
        if _ok(figs, r, "20 MB edit"):
            with big.open("rb") as f:
                f.seek(-40, 2)
                tail = f.read()
            figs.check(tail.endswith(b"END = 'new'\n"), f"the file ends {tail!r}")
        figs.add("editing the end of a 20 MB file, whole turn", r.ms, budget=5_000, where=ORIGINAL)
    return figs


# --------------------------------------------------------------------------- sessions


def fill_store(db: Path, directory: str, n: int) -> str:
    from uji.store.sessions import Store

    store = Store(str(db))
    sid = store.create_session(directory, "bench")
    fill(store, sid, n)
    store.close()
    return sid


def _resume(n: int, runs: int, time_budget: float | None, rss_budget: float | None) -> Figures:
    figs = Figures()
    with FakeOpenAI() as fake, Home(fake.base_url) as home:
        sid = fill_store(home.data / "uji.db", str(home.work), n)
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
    return _resume(50_000, 3, 300, 60)
