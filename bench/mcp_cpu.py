"""What one configured MCP server costs a turn that does not use it (issue 23, "free until
used"). Run by hand: `python bench/mcp_cpu.py` (RUNS=7 by default). Prints figures, fails
nothing.

A headless `uji run --json go` whose model makes one `run_command` call and then answers,
with no MCP server and with one stdio server written with the SDK (tests/mcp_server.py),
run alternately. The figure is the CPU time (user + sys) of the whole process tree: each
run is started by a small reaper (a child subreaper) that collects every descendant, the
MCP server too, before reading RUSAGE_CHILDREN. The server's tools must be in the turn's
first request: the script checks it and says so.

The first run of each kind is a warm-up and is not counted: bytecode, and the server's
first start, which lists its tools (uji keeps them in <data>/mcp-tools.json and offers them
from there; the server then starts on a call to one of them). It waits for the server as
long as it takes; the median of RUNS after that is shown, with the ratio and the load average.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT  # sys.path and bytecode as a user has them
from tests.conftest import PROVIDER_LUA
from tests.fakes.openai_server import FakeOpenAI, text, tool_call

RUNS = int(os.environ.get("RUNS", "7"))
SERVER = ROOT / "tests" / "mcp_server.py"

# Runs argv as a child subreaper: every orphaned descendant is reparented to it and reaped,
# so RUSAGE_CHILDREN is the CPU of the whole tree. Prints "user sys".
REAPER = r"""
import ctypes, os, resource, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid == 0:
        time.sleep(0.02)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime, r.ru_stime)
"""


def setup(root: Path, fake: FakeOpenAI, with_server: bool, warm_up: bool = False) -> dict[str, str]:
    cfg, work, data = root / "cfg", root / "work", root / "data"
    for d in (cfg, work, data):
        d.mkdir(parents=True, exist_ok=True)
    lua = PROVIDER_LUA.format(base_url=fake.base_url)
    if with_server:
        command = [sys.executable, str(SERVER), str(root / "calls.jsonl")]
        lua += "uji.mcp.add('t', { command = { " + ", ".join(json.dumps(c) for c in command) + " } })\n"
        if warm_up:  # the server's first start, however loaded the machine: it must list its tools
            lua += "uji.mcp.configure({ wait = 600 })\n"
    (cfg / "init.lua").write_text(lua)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
    env.update(UJI_CONFIG_DIR=str(cfg), UJI_DATA_DIR=str(data), HOME=str(root), UJI_PROBE_PORTS="")
    return env


def one_run(root: Path, fake: FakeOpenAI, with_server: bool, warm_up: bool) -> tuple[float, bool]:
    """CPU seconds of the tree, and whether the server's tools were in the first request."""
    env = setup(root, fake, with_server, warm_up)
    fake.script(tool_call("run_command", {"command": "echo hi"}), text("ok"))
    before = len(fake.turn_requests)
    argv = [sys.executable, "-c", REAPER, sys.executable, "-m", "uji", "run", "--json", "go"]
    out = subprocess.run(argv, cwd=root / "work", env=env, capture_output=True, text=True, timeout=180)
    user, sys_ = (float(x) for x in out.stdout.split())
    first = fake.turn_requests[before].body if len(fake.turn_requests) > before else {}
    names = [t.get("function", {}).get("name") for t in first.get("tools", [])]
    return user + sys_, "t__echo" in names


def main() -> None:
    figures: dict[bool, list[float]] = {False: [], True: []}
    offered: list[bool] = []
    first_start: dict[bool, float] = {}
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        homes = {False: Path(tmp) / "without", True: Path(tmp) / "with"}
        for i in range(RUNS + 1):
            for with_server in (False, True):
                cpu, has_tools = one_run(homes[with_server], fake, with_server, i == 0)
                if i == 0:
                    first_start[with_server] = cpu  # warm-up: shown, not counted
                    continue
                figures[with_server].append(cpu)
                if with_server:
                    offered.append(has_tools)
    without, with_ = statistics.median(figures[False]), statistics.median(figures[True])
    print(f"uji run, one run_command call, no MCP server   {without * 1000:7.0f} ms CPU (median of {RUNS})")
    print(f"uji run, one run_command call, one MCP server  {with_ * 1000:7.0f} ms CPU (median of {RUNS})")
    print(f"ratio {with_ / without:.2f} (target <= 1.3)")
    print(f"server's tools in the first request: {sum(offered)} of {len(offered)} runs")
    print(
        f"warm-up runs (not counted): {first_start[False] * 1000:.0f} ms without, "
        f"{first_start[True] * 1000:.0f} ms with the server's first start (SDK imported, tools listed)"
    )
    print("load average: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
