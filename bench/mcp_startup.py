"""Start-up with MCP servers configured (issue 10): a server that takes 3 s to start
(tests/mcp_server.py --delay 3) must not slow `uji --version`, the first frame, or a turn
that does not wait for it. Run by hand: `python bench/mcp_startup.py`. Prints figures
(median of RUNS), fails nothing.

- `uji --version`: no server / the slow server configured;
- `uji run --json go` to its `done`: no server / the slow server with `wait = 0` (the
  turn goes on without it) / the slow server with the default wait (the turn waits for
  it, up to 5 s);
- the terminal UI's first frame ready for input (in-process, Textual's pilot): no server
  / the slow server.
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from tests.conftest import PROVIDER_LUA  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, text  # noqa: E402

RUNS = int(os.environ.get("RUNS", "5"))
SERVER = ROOT / "tests" / "mcp_server.py"


def slow_server(root: Path, wait: float | None) -> str:
    command = [sys.executable, str(SERVER), str(root / "calls.jsonl"), "--delay", "3"]
    lua_cmd = "{ " + ", ".join(json.dumps(c) for c in command) + " }"
    extra = "" if wait is None else f", wait = {wait:g}"
    return f'uji.mcp.add("slow", {{ command = {lua_cmd}{extra} }})\n'


def run_uji(fake: FakeOpenAI, root: Path, lua: str, *args: str) -> float:
    cfg, work = root / "cfg", root / "work"
    for d in (cfg, work):
        d.mkdir(parents=True, exist_ok=True)
    (cfg / "init.lua").write_text(PROVIDER_LUA.format(base_url=fake.base_url) + lua)
    fake.script(text("ok"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
    env.update(UJI_CONFIG_DIR=str(cfg), UJI_DATA_DIR=str(root / "data"), HOME=str(root), UJI_PROBE_PORTS="")
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "uji", *args], cwd=work, env=env, capture_output=True, timeout=120)
    return time.monotonic() - started


async def first_frame(fake: FakeOpenAI, root: Path, lua: str) -> float:
    from tests.test_tui_support import SIZE, make_app, ready

    started = time.monotonic()
    app = make_app(root, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        took = time.monotonic() - started
    return took


def median(fn: Callable[[Path], float]) -> float:
    values = []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            values.append(fn(Path(tmp)))
    return statistics.median(values)


def main() -> None:
    with FakeOpenAI() as fake:
        cases = [
            ("uji --version, no server", "", ("--version",)),
            ("uji --version, slow server", slow_server(Path("/tmp"), None), ("--version",)),
            ("uji run, no server", "", ("run", "--json", "go")),
            ("uji run, slow server, wait = 0", slow_server(Path("/tmp"), 0), ("run", "--json", "go")),
            ("uji run, slow server, default wait", slow_server(Path("/tmp"), None), ("run", "--json", "go")),
        ]
        for name, lua, args in cases:
            figure = median(lambda root, lua=lua, args=args: run_uji(fake, root, lua, *args))
            print(f"{name:<40} {figure * 1000:8.0f} ms")
        for name, lua in (
            ("first frame, no server", ""),
            ("first frame, slow server", slow_server(Path("/tmp"), None)),
        ):
            figure = median(lambda root, lua=lua: asyncio.run(first_frame(fake, root, lua)))
            print(f"{name:<40} {figure * 1000:8.0f} ms")


if __name__ == "__main__":
    main()
