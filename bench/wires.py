"""Streaming throughput of each wire: 50,000 one-character text deltas from its fake
server over loopback HTTP, parsed and reported. Target: under 1 s per wire.

    python bench/wires.py          # alone, or from bench/run.py
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fakes import anthropic_server, gemini_server, openai_server  # noqa: E402
from tests.fakes.base import FakeServer, RecordingReply  # noqa: E402

from uji.wires.anthropic import AnthropicWire  # noqa: E402
from uji.wires.base import WireRequest  # noqa: E402
from uji.wires.gemini import GeminiWire  # noqa: E402
from uji.wires.http import Http  # noqa: E402
from uji.wires.openai_chat import OpenAIChatWire  # noqa: E402

DELTAS = 50_000
RUNS = 3

# (wire, its fake server, the module with its step builders, a model id it takes)
WIRES: list[tuple[Any, type[FakeServer], ModuleType, str]] = [
    (OpenAIChatWire, openai_server.FakeOpenAI, openai_server, "m"),
    (AnthropicWire, anthropic_server.FakeAnthropic, anthropic_server, "claude-sonnet-4-5"),
    (GeminiWire, gemini_server.FakeGemini, gemini_server, "gemini-2.5-flash"),
]


async def _one(wire: Any, fake: FakeServer, steps: ModuleType, model: str) -> float:
    fake.script(steps.text_deltas(DELTAS))
    request = WireRequest(
        model=model,
        system="bench",
        messages=[{"type": "user", "text": "go"}],
        tools=[{"name": "noop", "description": "", "parameters": {"type": "object"}}],
        provider={"id": "bench", "base_url": fake.base_url},
        auth={"key": "bench-key"},
    )
    reply = RecordingReply()
    started = time.perf_counter()
    await wire.stream(request, reply)
    elapsed = time.perf_counter() - started
    assert len(reply.answer.text) == DELTAS
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


def bench_wires() -> dict[str, float]:
    """Print and return the median seconds per wire for 50,000 deltas."""
    figures = asyncio.run(_measure())
    for name, seconds in figures.items():
        print(f"50,000 deltas, {name:<12}{seconds * 1000:7.1f} ms (median of {RUNS}; target < 1000)")
    return figures


if __name__ == "__main__":
    bench_wires()
