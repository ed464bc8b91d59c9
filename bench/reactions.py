"""How soon uji reacts: the figures that tests used to assert as wall-clock limits (a
test now asserts only what happened; how fast is measured here). Run by hand:
`python bench/reactions.py`. Prints figures, fails nothing.

1. Through `uji run --json` against the fake server, each event stamped as it arrives:
   - a command over its `timeout` (1 s) is stopped: call event -> its result;
   - a command that leaves a background child returns without waiting for it;
   - `cat` returns at once (its stdin is /dev/null);
   - SIGINT while a command runs: the signal -> uji has exited.
2. In the terminal UI (in-process, Textual's pilot): Esc while a command runs -> the
   turn is over.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.conftest import PROVIDER_LUA  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, text, tool_call  # noqa: E402
from tests.waiting import drain, read_line  # noqa: E402

RUNS = 5
ALLOW = 'uji.tool.policy({ run_command = { default = "allow" } })\n'


def _start(fake: FakeOpenAI, root: Path, args: dict[str, Any]) -> subprocess.Popen[str]:
    cfg, work = root / "cfg", root / "work"
    for d in (cfg, work):
        d.mkdir(parents=True, exist_ok=True)
    (cfg / "init.lua").write_text(PROVIDER_LUA.format(base_url=fake.base_url) + ALLOW)
    fake.script(tool_call("run_command", args), text("ok"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
    env.update(UJI_CONFIG_DIR=str(cfg), UJI_DATA_DIR=str(root / "data"), HOME=str(root), UJI_PROBE_PORTS="")
    return subprocess.Popen(
        [sys.executable, "-m", "uji", "run", "--json", "go"],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _until(proc: subprocess.Popen[str], kind: str) -> float:
    """Read events until one of `kind` ("call" or "tool"); the time it arrived."""
    assert proc.stdout is not None
    while True:
        line = read_line(proc.stdout, 60)
        if not line:
            raise SystemExit(f"uji ended before a {kind} event: {drain(proc, 10)[1]}")
        event = json.loads(line)
        if event["type"] == kind or (kind == "tool" and event.get("message", {}).get("type") == "tool"):
            return time.perf_counter()


def call_to_result(args: dict[str, Any]) -> list[float]:
    samples = []
    with FakeOpenAI() as fake:
        for _ in range(RUNS):
            proc = _start(fake, Path(tempfile.mkdtemp(prefix="uji-bench-")), args)
            called = _until(proc, "call")
            samples.append(_until(proc, "tool") - called)
            drain(proc, 60)
    return samples


def sigint_to_exit() -> list[float]:
    samples = []
    with FakeOpenAI() as fake:
        for _ in range(RUNS):
            proc = _start(fake, Path(tempfile.mkdtemp(prefix="uji-bench-")), {"command": "sleep 30"})
            _until(proc, "call")
            time.sleep(0.2)  # the command is running (a figure, not a test: a pause is fine)
            sent = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            drain(proc, 60)
            samples.append(time.perf_counter() - sent)
    return samples


async def _esc_once() -> float:
    from tests.test_tui_support import SIZE, entries, idle, make_app, ready, send, until

    with FakeOpenAI() as fake:
        fake.script(tool_call("run_command", {"command": "sleep 30"}), text("never"))
        app = make_app(Path(tempfile.mkdtemp(prefix="uji-bench-")), fake, ALLOW)
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await send(pilot, "wait")
            await until(pilot, lambda: any(e.get("status") == "running" for e in entries(app, "tool")))
            start = time.perf_counter()
            await pilot.press("escape")
            await idle(pilot)
            return time.perf_counter() - start


def esc_to_idle() -> list[float]:
    return [asyncio.run(_esc_once()) for _ in range(RUNS)]


def show(label: str, samples: list[float], note: str) -> None:
    ms = sorted(s * 1000 for s in samples)
    print(
        f"{label:44} {statistics.median(ms):8.1f} ms median, max {ms[-1]:.1f}"
        + (f"  ({note})" if note else "")
    )


def main() -> None:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"median of {RUNS} runs each")
    show(
        "command over its 1 s timeout -> result",
        call_to_result({"command": "sleep 30 & echo $!; wait", "timeout": 1}),
        "was asserted < 5 s",
    )
    show(
        "command leaving a background child -> result",
        call_to_result({"command": "sleep 30 & echo $!"}),
        "was asserted < 2 s",
    )
    show("cat (stdin /dev/null) -> result", call_to_result({"command": "cat"}), "was asserted < 2 s")
    show("SIGINT during a command -> uji exited", sigint_to_exit(), "was asserted < 20 s")
    show("TUI: Esc during a command -> turn over", esc_to_idle(), "was asserted < 5 s")


if __name__ == "__main__":
    main()
