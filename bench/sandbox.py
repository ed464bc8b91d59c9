"""What the OS sandbox costs: a figure script, run by hand (never a timed test).

1. Per command: starting `true` and waiting for it, in this process, three ways in
   alternating rounds: as run_command started commands before the sandbox
   (asyncio.create_subprocess_exec), through uji.sandbox.spawn with no sandbox, and
   inside the default sandbox (a new thread builds the Landlock ruleset, restricts
   itself and starts the command). Medians of wall time, and the added median.
2. A headless turn with one command: the real `uji run --json` against the loopback fake,
   the sandbox on (default) and off (`uji.sandbox.configure{ mode = "off" }`), alternating,
   with --on-ask allow (off, the call would be refused):
   CPU (user + sys of the process tree) and wall medians, their ratio, the load average.

    .venv/bin/python bench/sandbox.py [-n ROUNDS]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time

from common import Home, median
from tests.fakes.openai_server import FakeOpenAI, text, tool_call


async def _per_command(rounds: int) -> dict[str, list[float]]:
    from uji.sandbox import private_tmpdir
    from uji.sandbox.policy import SandboxSettings, resolve
    from uji.sandbox.spawn import start

    work = tempfile.mkdtemp(prefix="uji-bench-sandbox-")
    data = os.path.expanduser("~/.local/share/uji")
    policy = resolve(SandboxSettings(), work, [], [data], private_tmpdir())
    env = dict(os.environ)
    argv = ["/bin/true"]
    times: dict[str, list[float]] = {"asyncio (before)": [], "no sandbox": [], "sandbox": []}
    cpu: dict[str, list[float]] = {name: [] for name in times}

    async def before() -> None:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=work, env=env, stdin=asyncio.subprocess.DEVNULL, start_new_session=True
        )
        await proc.wait()

    async def ours(sandboxed: bool) -> None:
        child = await start(
            argv, cwd=work, env=env, stdout=None, stderr=None, policy=policy if sandboxed else None
        )
        await child.wait()

    cases = {
        "asyncio (before)": before,
        "no sandbox": lambda: ours(False),
        "sandbox": lambda: ours(True),
    }
    for _ in range(5):  # warm: imports, the first ruleset
        for case in cases.values():
            await case()
    for _ in range(rounds):
        for name, case in cases.items():
            t0, c0 = time.perf_counter(), time.process_time()
            await case()
            times[name].append((time.perf_counter() - t0) * 1000)
            cpu[name].append((time.process_time() - c0) * 1000)
    return {**times, **{f"{name} CPU": xs for name, xs in cpu.items()}}


def _turns(rounds: int) -> dict[str, tuple[list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float]]] = {"sandbox on": ([], []), "sandbox off": ([], [])}
    with (
        FakeOpenAI() as fake,
        Home(fake.base_url) as on,
        Home(fake.base_url, lua='uji.sandbox.configure{ mode = "off" }\n') as off,
    ):
        for _ in range(rounds):
            for name, home in (("sandbox on", on), ("sandbox off", off)):
                fake.script(tool_call("run_command", {"command": "echo hi > made.txt"}), text("done"))
                run = home.run("run", "--json", "--on-ask", "allow", "go")
                if run.code != 0 or not (home.work / "made.txt").exists():
                    raise SystemExit(f"{name}: the turn failed: {run.why()}")
                (home.work / "made.txt").unlink()
                out[name][0].append(run.cpu_ms)
                out[name][1].append(run.ms)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "-n", type=int, default=200, help="rounds of the per-command case (turns: n / 20, at least 7)"
    )
    args = parser.parse_args()
    from uji.sandbox.landlock import abi_version

    print(f"Landlock ABI {abi_version()}; load average {os.getloadavg()[0]:.2f} (1 min)")
    times = asyncio.run(_per_command(args.n))
    print(
        f"\nstart + wait of /bin/true, median of {args.n} alternating rounds (ms; CPU: uji's process only):"
    )
    for kind in ("", " CPU"):
        base = median(times["asyncio (before)" + kind])
        for name in ("asyncio (before)", "no sandbox", "sandbox"):
            xs = times[name + kind]
            print(f"  {name + kind:<22} {median(xs):7.2f}   ({median(xs) - base:+.2f} over before)")
    rounds = max(7, args.n // 20)
    turns = _turns(rounds)
    print(f"\nuji run --json, one command (`echo hi > made.txt`), median of {rounds} alternating rounds:")
    for name, (cpu, wall) in turns.items():
        print(f"  {name:<12} CPU {median(cpu):7.1f} ms   wall {median(wall):7.1f} ms")
    on, off = turns["sandbox on"], turns["sandbox off"]
    print(
        f"  on / off     CPU {median(on[0]) / median(off[0]):.3f}x   wall {median(on[1]) / median(off[1]):.3f}x"
    )
    print(f"load average now {os.getloadavg()[0]:.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
