"""Streaming throughput of each wire: 50,000 one-character text deltas from its fake
server over loopback HTTP, parsed and reported. Target: under 1 s per wire.

Then the same through the whole of `uji run --json` (issue 12's "20,000-delta answer"):
the CPU time of the child (user + sys, so other work on the machine counts little)
answering with 20,000 one-character deltas and with a one-delta answer, alternating,
medians; the difference divided by 20,000 is the cost of one delta from the socket to
the answer printed. Wall times are shown too (meaningful when the machine is quiet).

Then the timings the wire tests only check the behaviour of (tests/test_wires.py): how
long after the last progress a stall fails the call (idle 0.5 s: between 0.5 and 0.6 s),
how long a cancel takes to drop the connection, and how long an answer waits for a
server that holds its stream open after the finish (at most the 0.5 s drain).

    python bench/wires.py              # alone, or from bench/run.py
    python bench/wires.py --headless   # only the `uji run` figures [-n ROUNDS]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from bench.common import UJI, Home, compile_src  # noqa: E402
from tests.fakes import anthropic_server, gemini_server, openai_server, responses_server  # noqa: E402
from tests.fakes.base import FakeServer, RecordingReply  # noqa: E402

from uji.wires.anthropic import AnthropicWire  # noqa: E402
from uji.wires.base import WireRequest  # noqa: E402
from uji.wires.gemini import GeminiWire  # noqa: E402
from uji.wires.http import Http  # noqa: E402
from uji.wires.openai_chat import OpenAIChatWire  # noqa: E402
from uji.wires.responses import ResponsesWire  # noqa: E402

DELTAS = 50_000
RUNS = 3
HEADLESS_DELTAS = 20_000
ROUNDS = 11

# (wire, its fake server, the module with its step builders, a model id it takes)
WIRES: list[tuple[Any, type[FakeServer], ModuleType, str]] = [
    (OpenAIChatWire, openai_server.FakeOpenAI, openai_server, "m"),
    (AnthropicWire, anthropic_server.FakeAnthropic, anthropic_server, "claude-sonnet-4-5"),
    (GeminiWire, gemini_server.FakeGemini, gemini_server, "gemini-2.5-flash"),
    (ResponsesWire, responses_server.FakeResponses, responses_server, "gpt-5"),
]


def _request(fake: FakeServer, model: str) -> WireRequest:
    return WireRequest(
        model=model,
        system="bench",
        messages=[{"type": "user", "text": "go"}],
        tools=[{"name": "noop", "description": "", "parameters": {"type": "object"}}],
        provider={"id": "bench", "base_url": fake.base_url},
        auth={"key": "bench-key"},
    )


async def _one(wire: Any, fake: FakeServer, steps: ModuleType, model: str) -> float:
    fake.script(steps.text_deltas(DELTAS))
    request = _request(fake, model)
    reply = RecordingReply()
    started = time.perf_counter()
    await wire.stream(request, reply)
    elapsed = time.perf_counter() - started
    assert len(reply.answer().text) == DELTAS
    return elapsed


async def _measure() -> dict[str, float]:
    out: dict[str, float] = {}
    for wire_class, server_class, steps, model in WIRES:
        with server_class() as fake:
            async with Http() as http:
                wire = wire_class(http)
                samples = [await _one(wire, fake, steps, model) for _ in range(RUNS)]
            out[wire_class.name] = statistics.median(samples)
    return out


async def _timings() -> dict[str, float]:
    """Seconds: a stall after the last progress, a cancel, an answer from a held stream."""
    out: dict[str, float] = {}
    with openai_server.FakeOpenAI() as fake:
        async with Http() as http:
            wire = OpenAIChatWire(http, idle=0.5)
            fake.script(openai_server.drip(0.05))
            started = time.perf_counter()
            await wire.stream(_request(fake, "m"), RecordingReply())
            out["stall (idle 0.5 s)"] = time.perf_counter() - started
            fake.script(openai_server.drip(0.05))
            task = asyncio.create_task(wire.stream(_request(fake, "m"), RecordingReply()))
            while len(fake.requests) < 2:
                await asyncio.sleep(0.005)
            started = time.perf_counter()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            fake.wait_for_drops(1)
            out["cancel to dropped"] = time.perf_counter() - started
    with anthropic_server.FakeAnthropic() as fake:
        async with Http() as http:
            step = anthropic_server.text("late")
            ping = b'event: ping\ndata: {"type":"ping"}\n\n'
            fake.script(replace(step, events=[*step.events, *[ping] * 60], gap=0.05))
            started = time.perf_counter()
            await AnthropicWire(http).stream(_request(fake, "claude-sonnet-4-5"), RecordingReply())
            out["held stream (3 s of pings)"] = time.perf_counter() - started
    return out


def _child_run(home: Home, env: dict[str, str], fake: FakeServer, step: Any) -> tuple[float, float, str]:
    """One `uji run --json`: (CPU ms of the child, wall ms, its stdout)."""
    fake.script(step)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [*UJI, "run", "--json", "go"], env=env, cwd=home.work, capture_output=True, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode != 0:
        raise SystemExit(f"uji run failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return cpu * 1000, wall * 1000, done.stdout.decode()


def bench_headless(
    rounds: int = ROUNDS, against: str | None = None, only: list[str] | None = None
) -> dict[str, float]:
    """Per wire: median CPU ms of `uji run --json` for a one-delta answer and for
    HEADLESS_DELTAS deltas, and the CPU µs per delta. Returns {wire: µs per delta}.
    `against`: the uji of that source tree (a copy of an older version) runs too,
    alternating with this one within each round."""
    compile_src()
    trees: list[str | None] = [None]
    if against:
        trees.append(against)
        subprocess.run([sys.executable, "-m", "compileall", "-q", against], check=False)
    out: dict[str, float] = {}
    load = os.getloadavg()[0]
    print(f"uji run --json, {HEADLESS_DELTAS:,} deltas vs one, medians of {rounds} (load {load:.2f})")
    for wire_class, server_class, steps, model in WIRES:
        if only and wire_class.name not in only:
            continue
        with server_class() as fake:
            home = Home(fake.base_url, wire=wire_class.name)
            lua = home.cfg / "init.lua"
            lua.write_text(lua.read_text().replace('"m"', f'"{model}"'))
            envs = {tree: {**home.env, "PYTHONPATH": tree} if tree else home.env for tree in trees}
            samples: dict[tuple[str | None, str], list[tuple[float, float]]] = {}
            for tree in trees:
                _child_run(home, envs[tree], fake, steps.text("warm"))
            for _ in range(rounds):
                for tree in trees:
                    samples.setdefault((tree, "one"), []).append(
                        _child_run(home, envs[tree], fake, steps.text("hi"))[:2]
                    )
                    cpu, wall, stdout = _child_run(home, envs[tree], fake, steps.text_deltas(HEADLESS_DELTAS))
                    if "x" * HEADLESS_DELTAS not in stdout:
                        raise SystemExit(f"{wire_class.name}: the answer did not arrive whole")
                    samples.setdefault((tree, "many"), []).append((cpu, wall))
        for tree in trees:
            cpu_s, cpu_l = (statistics.median(c for c, _ in samples[(tree, k)]) for k in ("one", "many"))
            wall_s, wall_l = (statistics.median(w for _, w in samples[(tree, k)]) for k in ("one", "many"))
            per = (cpu_l - cpu_s) * 1000 / HEADLESS_DELTAS
            if tree is None:
                out[wire_class.name] = per
            print(
                f"  {wire_class.name:<12} {'this tree' if tree is None else tree}\n"
                f"    one delta {cpu_s:5.0f} ms cpu ({wall_s:4.0f} wall)   {HEADLESS_DELTAS:,} deltas "
                f"{cpu_l:5.0f} ms cpu ({wall_l:4.0f} wall)   {per:5.2f} µs cpu per delta"
            )
    return out


def bench_wires() -> dict[str, float]:
    """Print and return the median seconds per wire for 50,000 deltas."""
    figures = asyncio.run(_measure())
    for name, seconds in figures.items():
        print(f"50,000 deltas, {name:<12}{seconds * 1000:7.1f} ms (median of {RUNS}; target < 1000)")
    for label, seconds in asyncio.run(_timings()).items():
        print(f"{label:<27}{seconds * 1000:7.1f} ms")
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="bench/wires.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--headless", action="store_true", help="only the `uji run --json` figures")
    parser.add_argument("-n", type=int, default=ROUNDS, help=f"rounds for those (default {ROUNDS})")
    parser.add_argument("--against", metavar="OLD/src", help="the uji of that tree too, alternating")
    parser.add_argument("--wire", action="append", help="only this wire's (repeatable)")
    opts = parser.parse_args()
    if not opts.headless:
        bench_wires()
    bench_headless(opts.n, str(Path(opts.against).resolve()) if opts.against else None, opts.wire)
