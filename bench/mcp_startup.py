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
- the same with the slow server in the project's `.mcp.json` instead of the config:
  approved before (it starts at once) / not yet approved (the question comes behind the
  first frame).
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
from typing import Any

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


def project_server(root: Path, data: Path, approved: bool) -> None:
    """The slow server in `root/work/.mcp.json`, approved beforehand or not."""
    from uji.trust import ProjectTrust, digest

    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    command = [str(SERVER), str(root / "calls.jsonl"), "--delay", "3"]
    spec = {"mcpServers": {"slow": {"command": sys.executable, "args": command}}}
    (work / ".mcp.json").write_text(json.dumps(spec))
    if approved:
        trust = ProjectTrust(str(data), str(work.resolve()), None, print)  # type: ignore[arg-type]
        trust.remember("mcp.json", digest(trust.root, [str(work.resolve() / ".mcp.json")]), True)


def run_uji(fake: FakeOpenAI, root: Path, lua: str, *args: str, project: bool = False) -> float:
    cfg, work = root / "cfg", root / "work"
    for d in (cfg, work):
        d.mkdir(parents=True, exist_ok=True)
    if project:
        project_server(root, root / "data", approved=True)
    (cfg / "init.lua").write_text(PROVIDER_LUA.format(base_url=fake.base_url) + lua)
    fake.script(text("ok"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
    env.update(UJI_CONFIG_DIR=str(cfg), UJI_DATA_DIR=str(root / "data"), HOME=str(root), UJI_PROBE_PORTS="")
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "uji", *args], cwd=work, env=env, capture_output=True, timeout=120)
    return time.monotonic() - started


async def first_frame(fake: FakeOpenAI, root: Path, lua: str, project: bool | None = None) -> float:
    """Until the config has loaded and the composer takes input. `project`: the slow
    server in .mcp.json, approved (True) or not (False: the question is up by then)."""
    from tests.test_tui_support import SIZE, make_app, ready

    if project is not None:
        project_server(root, root / "data", approved=project)
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
            print(f"{name:<48} {figure * 1000:8.0f} ms")
        for name, args in (
            ("uji --version, approved .mcp.json", ("--version",)),
            ("uji run, approved .mcp.json, wait = 0", ("run", "--json", "go")),
        ):
            lua = "uji.mcp.configure({ wait = 0 })\n" if "run" in args else ""
            figure = median(lambda root, lua=lua, args=args: run_uji(fake, root, lua, *args, project=True))
            print(f"{name:<48} {figure * 1000:8.0f} ms")
        for index, (name, _, _) in enumerate(FRAMES):
            figure = median(lambda root, i=index: frame_in_a_new_process(fake, root, i))
            print(f"{name:<48} {figure * 1000:8.0f} ms")


FRAMES: list[tuple[str, str, bool | None]] = [
    ("first frame, no server", "", None),
    ("first frame, slow server", slow_server(Path("/tmp"), None), None),
    ("first frame, approved .mcp.json", "", True),
    ("first frame, .mcp.json not yet approved", "", False),
]


def frame_in_a_new_process(fake: FakeOpenAI, root: Path, index: int) -> float:
    """Each in a process of its own: the SDK, once imported, would stay for the next."""
    argv = [sys.executable, __file__, "--frame", str(index), fake.base_url, str(root)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True).stdout
    return float(out.split()[-1])


def one_frame(index: int, base_url: str, root: Path) -> None:
    class Remote:  # the parent's fake server, as make_app needs it
        pass

    fake: Any = Remote()
    fake.base_url = base_url
    _, lua, project = FRAMES[index]
    print(asyncio.run(first_frame(fake, root, lua, project)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--frame"]:
        one_frame(int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
    else:
        main()
