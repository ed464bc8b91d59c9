"""Performance figures for uji, run by hand. Everything talks to fake provider servers on
127.0.0.1. Not a test: nothing here fails a build, it measures and prints.

    python bench/run.py                      # the whole torture and bench suite, a table
    python bench/run.py chunks-50k turn      # some scenarios (--list names them)
    python bench/run.py --save base          # ... and keep the figures as baseline "base"
    python bench/run.py --compare base       # ... and flag figures over 120 % of "base"
    python bench/run.py figures              # the older overview: start-up, loop overhead...
    python bench/run.py startup [--against OLD/src] [-n N]   # start-up, two trees alternating
    python bench/peers.py                    # side by side with Codex CLI and Claude Code

Each scenario runs in a child process of its own (`--child`), prints its median figures
with the budget each has (the original's torture budgets, else issue 12's targets, else
the original's default of 2 s) and PASS or OVER. Baselines are kept in .cache/bench/, as
they only mean something on the machine that made them.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fakes.openai_server import FakeOpenAI, call, text, text_deltas, tool_call, tool_calls  # noqa: E402

# A normal install has bytecode; this machine sets PYTHONDONTWRITEBYTECODE, which would
# make every start compile uji from source (~70 ms). Measure what users get.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=False)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def wall(cmd: list[str], n: int, **kw: object) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, **kw)  # type: ignore[call-overload]
        out.append(time.perf_counter() - t0)
    return out


def bench_startup() -> None:
    bare = wall([sys.executable, "-c", "pass"], 20)
    version = wall([sys.executable, "-m", "uji", "--version"], 20)
    print(f"python -c pass            {median_ms(bare):7.1f} ms (median of 20)")
    print(
        f"uji --version             {median_ms(version):7.1f} ms  ({median_ms(version) / median_ms(bare):.2f}x bare python)"
    )


def _home(fake: FakeOpenAI, extra_lua: str = "") -> tuple[dict[str, str], Path]:
    root = Path(tempfile.mkdtemp(prefix="uji-bench-"))
    cfg = root / "cfg"
    cfg.mkdir()
    (cfg / "init.lua").write_text(
        f'uji.provider.add({{ id = "b", name = "B", wire = "openai-chat", base_url = "{fake.base_url}", models = {{ "m" }} }})\n'
        'uji.model.use({ provider = "b", model = "m" })\n' + extra_lua
    )
    env = dict(os.environ, UJI_CONFIG_DIR=str(cfg), UJI_DATA_DIR=str(root / "data"), HOME=str(root))
    (root / "work").mkdir()
    return env, root / "work"


def bench_headless_turns() -> None:
    with FakeOpenAI() as fake:
        env, work = _home(fake)
        samples = []
        for _ in range(7):
            fake.script(tool_call("run_command", {"command": "true"}), text("done"))
            samples.append(
                wall([sys.executable, "-m", "uji", "run", "--json", "go"], 1, env=env, cwd=work)[0]
            )
        print(
            f"uji run, 1 run_command     {median_ms(samples):7.1f} ms end to end (median of 7; target < 500)"
        )
        samples = []
        for _ in range(7):
            fake.script(text("hi"))
            samples.append(wall([sys.executable, "-m", "uji", "run", "go"], 1, env=env, cwd=work)[0])
        print(f"uji run, text only         {median_ms(samples):7.1f} ms end to end (median of 7)")


async def _in_process_turn(fake: FakeOpenAI, steps: list, lua: str = "") -> float:
    from uji.agent.loop import Agent
    from uji.app import App
    from uji.events.stream import discard
    from uji.headless import auto_approver
    from uji.paths import resolve

    env, work = _home(fake, lua)
    paths = resolve(env["UJI_CONFIG_DIR"], env["UJI_DATA_DIR"])
    app = App(paths, cwd=str(work))
    await app.load_config()
    session = app.store.create_session(app.cwd)
    agent = Agent(app.turn_services(), session, discard, auto_approver("allow"))
    fake.script(text("warm up"))
    await agent.turn("warm up")  # connection, imports
    fake.script(*steps)
    t0 = time.perf_counter()
    result = await agent.turn("go")
    elapsed = time.perf_counter() - t0
    assert result.error is None, result.error
    await app.close()
    return elapsed


def bench_loop_overhead() -> None:
    noop = 'uji.tool.add("noop", { policy = "allow", run = function() return "ok" end })'
    with FakeOpenAI() as fake:
        base = [asyncio.run(_in_process_turn(fake, [text("done")], noop)) for _ in range(5)]
        one_step = [
            asyncio.run(
                _in_process_turn(
                    fake, [tool_calls(*[call("noop", {}, f"c{i}") for i in range(20)]), text("done")], noop
                )
            )
            for _ in range(5)
        ]
        rounds = [
            asyncio.run(
                _in_process_turn(
                    fake, [*[tool_call("noop", {}, id=f"c{i}") for i in range(20)], text("done")], noop
                )
            )
            for _ in range(5)
        ]
        b, s, r = (statistics.median(x) for x in (base, one_step, rounds))
        print(f"turn, text only            {b * 1000:7.1f} ms in process")
        print(
            f"20 calls in one step       {s * 1000:7.1f} ms  → {(s - b) / 20 * 1000:.2f} ms per tool call (target < 5)"
        )
        print(
            f"20 rounds of one call      {r * 1000:7.1f} ms  → {(r - b) / 20 * 1000:.2f} ms per round (model call + tool)"
        )


def bench_streaming() -> None:
    with FakeOpenAI() as fake:
        samples = [asyncio.run(_in_process_turn(fake, [text_deltas(50_000)])) for _ in range(3)]
        print(f"50,000 deltas, full turn   {median_ms(samples):7.1f} ms (median of 3; target < 1000)")


def bench_fixed_prompt() -> None:
    from uji.agent.prompt import system_prompt
    from uji.tools.builtin import builtin_tools

    system = system_prompt("/home/user/project")
    tools = json.dumps([t.schema() for t in builtin_tools()], separators=(",", ":"))
    chars = len(system) + len(tools)
    print(
        f"fixed prompt               {chars} chars ≈ {chars // 4} tokens (system {len(system)}, four tool schemas {len(tools)}; target < 4000 tokens)"
    )


def bench_startup_compare(against: Path | None, n: int) -> None:
    """`python bench/run.py startup [--against OLD/src] [-n N]`: `uji --version`, a text-only
    `uji run` and one with a run_command call, against bare `python -c pass`, each run N
    times. With --against, the same commands from another source tree run alternately with
    this one in the same sitting, so a loaded machine weighs on both alike."""
    trees = {"now": ROOT / "src"}
    if against is not None:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(against)], check=False)
        trees["before"] = against.resolve()
    with FakeOpenAI() as fake:
        # A home per tree: a tree with a newer schema would make the older one refuse the
        # database (and fail fast, which would read as a fast run).
        homes = {tree: _home(fake) for tree in trees}
        scenarios: list[tuple[str, list[str], list[object]]] = [
            ("uji --version", ["--version"], []),
            ("uji run, text only", ["run", "go"], [text("hi")]),
            (
                "uji run, 1 run_command",
                ["run", "--json", "go"],
                [tool_call("run_command", {"command": "true"}), text("done")],
            ),
        ]
        samples: dict[tuple[str, str], list[float]] = {}
        for _ in range(n):
            bare = wall([sys.executable, "-c", "pass"], 1)
            samples.setdefault(("python -c pass", ""), []).extend(bare)
            for label, args, steps in scenarios:
                for tree, src in trees.items():
                    if steps:
                        fake.script(*steps)
                    env, work = homes[tree]
                    run_env = dict(env, PYTHONPATH=str(src))
                    took = wall([sys.executable, "-m", "uji", *args], 1, env=run_env, cwd=work)
                    samples.setdefault((label, tree), []).extend(took)
    bare_ms = median_ms(samples[("python -c pass", "")])
    print(f"medians of {n}, alternating; trees: " + ", ".join(f"{k} = {v}" for k, v in trees.items()))
    print(f"{'python -c pass':26} {bare_ms:7.1f} ms")
    for label, _, _ in scenarios:
        cells = [
            f"{tree} {median_ms(samples[(label, tree)]):7.1f} ms ({median_ms(samples[(label, tree)]) / bare_ms:.2f}x bare)"
            for tree in trees
        ]
        print(f"{label:26} " + "   ".join(cells))


def figures() -> None:
    bench_startup()
    bench_fixed_prompt()
    bench_headless_turns()
    bench_loop_overhead()
    bench_streaming()
    extra = [p for p in ("wires.py", "sessions.py", "tui.py") if (ROOT / "bench" / p).exists()]
    for name in extra:
        print(f"--- bench/{name}")
        subprocess.run([sys.executable, str(ROOT / "bench" / name)], check=False)


def main() -> None:
    if sys.argv[1:2] == ["startup"]:
        import argparse

        p = argparse.ArgumentParser(prog="bench/run.py startup")
        p.add_argument("--against", type=Path, help="another uji source tree (its src/) to compare with")
        p.add_argument("-n", type=int, default=11, help="runs of each command (default 11)")
        opts = p.parse_args(sys.argv[2:])
        bench_startup_compare(opts.against, opts.n)
        return
    if sys.argv[1:2] == ["figures"]:
        figures()
        return
    from suite import main as suite_main

    suite_main(sys.argv[1:])


if __name__ == "__main__":
    main()
