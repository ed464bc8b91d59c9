"""Streaming throughput of each wire: 50,000 one-character text deltas from its fake
server over loopback HTTP, parsed and reported. Target: under 1 s per wire.

Then the timings the wire tests only check the behaviour of (tests/test_wires.py): how
long after the last progress a stall fails the call (idle 0.5 s: between 0.5 and 0.6 s),
how long a cancel takes to drop the connection, and how long an answer waits for a
server that holds its stream open after the finish (at most the 0.5 s drain).

    python bench/wires.py          # alone, or from bench/run.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

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


def bench_wires() -> dict[str, float]:
    """Print and return the median seconds per wire for 50,000 deltas."""
    figures = asyncio.run(_measure())
    for name, seconds in figures.items():
        print(f"50,000 deltas, {name:<12}{seconds * 1000:7.1f} ms (median of {RUNS}; target < 1000)")
    for label, seconds in asyncio.run(_timings()).items():
        print(f"{label:<27}{seconds * 1000:7.1f} ms")
    return figures


if __name__ == "__main__":
    bench_wires()
