"""How much of each request's input the provider serves from its prompt cache, per wire:
`python bench/cache.py [--src OTHER/src]` (run by hand; prints figures, fails nothing).

One `uji run` per wire against its loopback fake, with a model declared in init.lua the
plain way (`models = { { id = "m" } }`, no `cache` field): a session of six model
requests (five shell calls, then an answer). The fake answers each request with the
usage the provider would report, by a model of the provider's cache:

- anthropic: explicit. A request with `cache_control` breakpoints writes the prefix up
  to each breakpoint; a later request reads the longest written prefix that ends within
  20 blocks before one of its own breakpoints. Nothing is cached without breakpoints.
- openai-chat, responses, gemini: implicit. Any prefix seen before is read, rounded down
  to 128 tokens. (OpenAI routes requests by `prompt_cache_key` when it is sent, which
  keeps a session's requests on the machine holding its cache: the column shows
  whether uji sent one.)

Prefixes of fewer than 1,024 tokens are not cached (the providers' minimum). Tokens are
estimated as 4 characters of the request's JSON each, block by block (tools, system,
then the messages' blocks in order). `--src` runs the uji of another source tree (say
a checkout of the previous commit) for the figures before a change.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Home, spawn
from tests.fakes import anthropic_server, gemini_server, openai_server, responses_server
from tests.fakes.base import FakeServer, Recorded, Step

MIN_TOKENS = 1024
STEP_TOKENS = 128
LOOKBACK = 20  # blocks an Anthropic breakpoint looks back for an earlier entry
CALLS = 5


def blocks(wire: str, body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as the provider's cache sees it: (a block's canonical JSON, whether it
    carries a breakpoint), in prefix order."""
    out: list[tuple[str, bool]] = []

    def add(value: Any) -> None:
        marked = isinstance(value, dict) and "cache_control" in value
        if marked:
            value = {k: v for k, v in value.items() if k != "cache_control"}
        out.append((json.dumps(value, sort_keys=True), marked))

    if wire == "anthropic":
        for part in ("tools", "system"):
            for block in body.get(part) or []:
                add(block)
        for m in body.get("messages") or []:
            for block in m["content"] if isinstance(m["content"], list) else [m["content"]]:
                add({"role": m["role"], **block} if isinstance(block, dict) else block)
    elif wire == "openai-chat":
        for item in [*(body.get("tools") or []), *(body.get("messages") or [])]:
            add(item)
    elif wire == "responses":
        for item in [body.get("instructions"), *(body.get("tools") or []), *(body.get("input") or [])]:
            add(item)
    else:  # gemini
        add(body.get("systemInstruction"))
        for item in [*(body.get("tools") or []), *(body.get("contents") or [])]:
            add(item)
    return out


def tokens(block: str) -> int:
    return (len(block) + 3) // 4


class Cache:
    """One provider's prompt cache: the prefixes it holds, as tuples of blocks."""

    def __init__(self, wire: str) -> None:
        self.wire = wire
        self.entries: set[tuple[str, ...]] = set()
        self.seen: list[tuple[str, ...]] = []

    def account(self, body: dict[str, Any]) -> tuple[int, int, int]:
        """(uncached input, cache read, cache write) tokens for this request."""
        found = blocks(self.wire, body)
        texts = tuple(b for b, _ in found)
        sizes = [tokens(b) for b in texts]
        total = sum(sizes)
        if self.wire == "anthropic":
            marks = [i + 1 for i, (_, marked) in enumerate(found) if marked]
            read_to = 0
            for end in marks:
                for n in range(end, max(end - LOOKBACK, 0), -1):
                    if texts[:n] in self.entries:
                        read_to = max(read_to, n)
                        break
            read = sum(sizes[:read_to])
            if read < MIN_TOKENS:
                read, read_to = 0, 0
            write_to = max(marks, default=0)
            for end in marks:
                if sum(sizes[:end]) >= MIN_TOKENS:
                    self.entries.add(texts[:end])
            write = (
                sum(sizes[read_to:write_to])
                if write_to > read_to and sum(sizes[:write_to]) >= MIN_TOKENS
                else 0
            )
            return total - read - write, read, write
        common = max((_common(texts, old) for old in self.seen), default=0)
        self.seen.append(texts)
        read = sum(sizes[:common])
        read = read // STEP_TOKENS * STEP_TOKENS if read >= MIN_TOKENS else 0
        return total - read, read, 0


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class Wire:
    def __init__(self, name: str, mod: ModuleType, server: type[FakeServer], call_prefix: str) -> None:
        self.name, self.mod, self.server, self.call_prefix = name, mod, server, call_prefix

    def shell(self, command: str, i: int, usage: dict[str, Any]) -> Step:
        """A call of uji's run_command, reporting `usage`."""
        step: Step = self.mod.tool_call(
            "run_command", {"command": command}, id=f"{self.call_prefix}{i}", usage=usage
        )
        return step

    def usage(self, uncached: int, read: int, write: int) -> dict[str, Any]:
        mod = self.mod
        if self.name == "anthropic":
            return dict(mod.make_usage(input=uncached, cache_read=read, cache_write=write))
        if self.name == "openai-chat":
            return dict(mod.make_usage(uncached + read, prompt_tokens_details={"cached_tokens": read}))
        if self.name == "responses":
            return dict(mod.make_usage(input=uncached + read, cached=read))
        return dict(mod.make_usage(prompt=uncached + read, cached=read))


WIRES = [
    Wire(name, mod, server, prefix)
    for name, mod, server, prefix in [
        ("anthropic", anthropic_server, anthropic_server.FakeAnthropic, "toolu_"),
        ("openai-chat", openai_server, openai_server.FakeOpenAI, "call_"),
        ("responses", responses_server, responses_server.FakeResponses, "call_"),
        ("gemini", gemini_server, gemini_server.FakeGemini, "call_"),
    ]
]


def accounting(wire: Wire) -> tuple[FakeServer, list[tuple[int, int, int, bool]]]:
    """A fake of the wire whose every answer reports the usage its cache model gives;
    the figures of each request are kept (uncached, read, write, sent a cache key)."""
    cache = Cache(wire.name)
    figures: list[tuple[int, int, int, bool]] = []
    lock = threading.Lock()

    class Accounting(wire.server):  # type: ignore[misc, name-defined]
        def _choose(self, request: Recorded) -> tuple[Step, bool]:
            _, keep = super()._choose(request)
            body = request.body if isinstance(request.body, dict) else {}
            with lock:
                uncached, read, write = cache.account(body)
                i = len(figures)
                figures.append((uncached, read, write, "prompt_cache_key" in body))
            usage = wire.usage(uncached, read, write)
            if i < CALLS:
                return wire.shell(f"seq {i} 400", i, usage), keep  # ~370 tokens of output each
            return wire.mod.text("done", usage=usage), keep

    fake: FakeServer = Accounting(side_calls=False).start()
    return fake, figures


def run(wire: Wire, src: str | None) -> list[tuple[int, int, int, bool]]:
    fake, figures = accounting(wire)
    home = Home(fake.base_url, wire=wire.name)
    try:
        env = dict(home.env, UJI_TEST_KEY="k")
        for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
            env[var] = "sk-bench-key"
        if src:
            env["PYTHONPATH"] = src
        r = spawn(
            [sys.executable, "-m", "uji", "run", "--json", "list numbers five times"], env=env, cwd=home.work
        )
        if r.code != 0:
            print(f"  {wire.name}: uji failed: {r.why()}")
    finally:
        fake.stop()
        home.__exit__()
    return figures


def main() -> None:
    p = argparse.ArgumentParser(prog="bench/cache.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--src", help="run the uji of this source tree (its src/ folder) instead")
    opts = p.parse_args()
    src = str(Path(opts.src).resolve()) if opts.src else None
    print(f"uji from {src or 'this tree'}; tokens estimated at 4 characters each")
    for wire in WIRES:
        figures = run(wire, src)
        print(f"\n{wire.name}  (request: uncached input / cache read / cache write tokens, cache key sent)")
        for i, (uncached, read, write, key) in enumerate(figures, 1):
            total = uncached + read + write
            share = f"{100 * read / total:3.0f}% read" if total else ""
            print(f"  {i}: {uncached:6d} / {read:6d} / {write:6d}  {share}  {'key' if key else 'no key'}")
        later = figures[1:]
        read = sum(f[1] for f in later)
        total = sum(f[0] + f[1] + f[2] for f in later)
        if total:
            print(
                f"  requests 2-{len(figures)}: {100 * read / total:.0f}% of input tokens read from the cache"
            )


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    main()
