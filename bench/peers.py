"""uji side by side with Codex CLI and Claude Code, against the same loopback fake model;
run by hand: `python bench/peers.py [-n N]`.

The peers are installed from npm into .cache/peers/ on first use (never project
dependencies): `@openai/codex` and `@anthropic-ai/claude-code`, each of which ships a
native binary for this platform, run directly (as their npm launchers end up doing).
Each agent talks to the fake of its own wire, all from tests/fakes/:

- uji: Chat Completions (`openai-chat`), a provider pointing at the fake;
- Codex: the Responses API, a custom `model_providers.fake` in its CODEX_HOME's
  config.toml (`wire_api = "responses"`);
- Claude Code: the Messages API, through ANTHROPIC_BASE_URL.

Scenarios, the agents alternating within each round, medians of N rounds:
`--version`; one headless turn with one shell call; a 20,000-delta answer; 20
sequential tool calls (20 model steps of one shell call each, then an answer). Every
shell call touches a marker file, checked after the run, so a skipped call shows.
Printed: each agent's median, and uji's ratio to each peer (issue 12's target: ≤ 0.5x the
fastest peer). Not a test: nothing here fails a build.
"""

from __future__ import annotations

import argparse
import glob
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, UJI, Home, Run, median, spawn
from tests.fakes import anthropic_server, openai_server, responses_server
from tests.fakes.base import FakeServer, Step

CACHE = ROOT / ".cache" / "peers"
PACKAGES = ["@openai/codex", "@anthropic-ai/claude-code"]


# --------------------------------------------------------------------------- install


def install() -> None:
    """npm install the peers into .cache/peers/ unless they are there already."""
    if codex_binary() and claude_binary():
        return
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("bench/peers.py: npm is not on PATH, so the peers cannot be installed")
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"installing {' '.join(PACKAGES)} into {CACHE} ...", flush=True)
    subprocess.run(
        [npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(CACHE), *PACKAGES],
        check=True,
    )


def codex_binary() -> str | None:
    """The native codex of this platform (from the optional dependency
    @openai/codex-<os>-<arch>), else the npm launcher."""
    machine = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(platform.machine(), "")
    found = sorted(glob.glob(str(CACHE / f"node_modules/@openai/codex-*/vendor/{machine}-*linux*/bin/codex")))
    if found:
        return found[0]
    launcher = CACHE / "node_modules/.bin/codex"
    return str(launcher) if launcher.exists() else None


def claude_binary() -> str | None:
    """The native claude (the postinstall copies it over bin/claude.exe; without the
    postinstall, it is in the platform package)."""
    main = CACHE / "node_modules/@anthropic-ai/claude-code/bin/claude.exe"
    if main.exists() and main.stat().st_size > 1_000_000:
        return str(main)
    found = sorted(glob.glob(str(CACHE / "node_modules/@anthropic-ai/claude-code-linux-*/claude")))
    return found[0] if found else None


def version_of(cmd: list[str]) -> str:
    p = subprocess.run([*cmd, "--version"], capture_output=True, text=True, timeout=60, check=False)
    return (p.stdout or p.stderr).strip().splitlines()[0] if (p.stdout or p.stderr).strip() else "?"


# --------------------------------------------------------------------------- agents


@dataclass
class Agent:
    """One agent, its fake model and how to run a headless prompt."""

    name: str
    fake: FakeServer
    mod: Any  # the fake's step builders
    shell_call: Callable[[str, int], Step]  # a call of its shell tool running `command`
    cmd: list[str]
    env: dict[str, str]
    work: Path
    versions: list[str] = field(default_factory=list)

    def prompt(self, text: str) -> list[str]:
        raise NotImplementedError

    def run(self, args: list[str]) -> Run:
        return spawn([*self.cmd, *args], env=self.env, cwd=self.work, timeout=300)


class Uji(Agent):
    def prompt(self, text: str) -> list[str]:
        return ["run", "--json", text]


class Codex(Agent):
    def prompt(self, text: str) -> list[str]:
        return ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", text]


class Claude(Agent):
    def prompt(self, text: str) -> list[str]:
        return ["-p", text, "--output-format", "json", "--allowedTools", "Bash"]


def make_agents(tmp: Path) -> list[Agent]:
    work = tmp / "work"
    work.mkdir()
    agents: list[Agent] = []

    fake_u = openai_server.FakeOpenAI().start()
    home = Home(fake_u.base_url)
    home.work = work
    uji_cmd = [str(Path(sys.executable).with_name("uji"))]
    if not Path(uji_cmd[0]).exists():
        uji_cmd = UJI
    agents.append(
        Uji(
            "uji",
            fake_u,
            openai_server,
            lambda c, i: openai_server.tool_call("run_command", {"command": c}, id=f"call_{i}"),
            uji_cmd,
            home.env,
            work,
        )
    )

    codex = codex_binary()
    if codex:
        fake_c = responses_server.FakeResponses().start()
        codex_home = CACHE / "home-codex"  # not under /tmp: codex refuses helper links there
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            'model = "gpt-5-fake"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\n'
            f'base_url = "{fake_c.base_url}"\nwire_api = "responses"\nenv_key = "FAKE_API_KEY"\n'
        )
        env = _clean_env(HOME=str(tmp / "home-codex-user"), CODEX_HOME=str(codex_home), FAKE_API_KEY="fake")
        agents.append(
            Codex(
                "Codex CLI",
                fake_c,
                responses_server,
                lambda c, i: responses_server.tool_call("exec_command", {"cmd": c}, id=f"call_{i}"),
                [codex],
                env,
                work,
            )
        )

    claude = claude_binary()
    if claude:
        fake_a = anthropic_server.FakeAnthropic().start()
        claude_home = CACHE / "home-claude"
        claude_home.mkdir(parents=True, exist_ok=True)
        env = _clean_env(
            HOME=str(claude_home),
            ANTHROPIC_BASE_URL=fake_a.base_url.removesuffix("/v1"),
            ANTHROPIC_API_KEY="sk-ant-fake",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        agents.append(
            Claude(
                "Claude Code",
                fake_a,
                anthropic_server,
                lambda c, i: anthropic_server.tool_call("Bash", {"command": c}, id=f"toolu_{i:02d}"),
                [claude],
                env,
                work,
            )
        )
    return agents


def _clean_env(**extra: str) -> dict[str, str]:
    drop = ("UJI_", "XDG_", "ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra)
    return env


# --------------------------------------------------------------------------- scenarios


def one(agent: Agent, scenario: str, problems: list[str]) -> Run:
    """One run of `scenario` by `agent`; a wrong outcome is noted in problems."""
    marker = agent.work / "marker"
    marker.unlink(missing_ok=True)
    mod = agent.mod
    if scenario == "--version":
        r = agent.run(["--version"])
        ok = r.code == 0
    elif scenario == "one turn, one shell call":
        agent.fake.script(agent.shell_call("touch marker", 0), mod.text("done"))
        r = agent.run(agent.prompt("touch the marker"))
        ok = r.code == 0 and marker.exists()
    elif scenario == "a 20,000-delta answer":
        agent.fake.script(mod.text_deltas(20_000))
        r = agent.run(agent.prompt("say x 20,000 times"))
        ok = r.code == 0 and "x" * 20_000 in r.stdout
    else:  # 20 sequential tool calls
        steps = [agent.shell_call(f"echo {i} >> marker", i) for i in range(20)]
        agent.fake.script(*steps, mod.text("done"))
        r = agent.run(agent.prompt("append 20 lines to the marker"))
        lines = marker.read_text().split() if marker.exists() else []
        ok = r.code == 0 and lines == [str(i) for i in range(20)]
    if not ok:
        problems.append(f"{agent.name}, {scenario}: {r.why()} (stdout ends {r.stdout[-200:]!r})")
    return r


SCENARIOS = {
    "version": "--version",
    "turn": "one turn, one shell call",
    "deltas": "a 20,000-delta answer",
    "calls": "20 sequential tool calls",
}


def main() -> None:
    p = argparse.ArgumentParser(prog="bench/peers.py", description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=7, help="rounds (default 7); the median of each is shown")
    p.add_argument("--only", choices=SCENARIOS, action="append", help="only this scenario (repeatable)")
    opts = p.parse_args()
    install()
    with tempfile.TemporaryDirectory(prefix="uji-peers-") as tmp:
        agents = make_agents(Path(tmp))
        try:
            missing = {"Codex CLI", "Claude Code"} - {a.name for a in agents}
            for name in sorted(missing):
                print(f"{name}: not installed in {CACHE} (see the npm output above); left out")
            for a in agents:
                print(f"{a.name:12} {version_of(a.cmd)}   ({a.cmd[0]})")
            problems: list[str] = []
            scenarios = [SCENARIOS[k] for k in opts.only or SCENARIOS]
            for a in agents:  # a warm-up each: first-run set-up, page cache
                one(a, scenarios[-1], [])
            samples: dict[tuple[str, str], list[float]] = {}
            cpu: dict[tuple[str, str], list[float]] = {}  # user + sys ms of each run
            for _ in range(opts.n):
                for s in scenarios:
                    for a in agents:
                        r = one(a, s, problems)
                        samples.setdefault((a.name, s), []).append(r.ms)
                        cpu.setdefault((a.name, s), []).append(r.cpu_ms)
            bare = median(
                [
                    spawn([sys.executable, "-c", "pass"], env=dict(os.environ), cwd=tmp).ms
                    for _ in range(opts.n)
                ]
            )
            report(agents, scenarios, samples, bare, opts.n)
            print("\nCPU time (user + sys) of the same runs, medians; less disturbed by a loaded machine")
            for s in scenarios:
                mine = median(cpu[("uji", s)])
                line = "  ".join(
                    f"{a.name} {median(cpu[(a.name, s)]):.0f} ms"
                    + (f" ({mine / median(cpu[(a.name, s)]):.2f}x)" if a.name != "uji" else "")
                    for a in agents
                )
                print(f"  {s}: {line}")
            for line in dict.fromkeys(problems):
                print("PROBLEM:", line)
        finally:
            for a in agents:
                a.fake.stop()


def report(
    agents: list[Agent],
    scenarios: list[str],
    samples: dict[tuple[str, str], list[float]],
    bare: float,
    n: int,
) -> None:
    names = [a.name for a in agents]
    peers = names[1:]
    head = ["scenario", *names, *(f"uji / {p}" for p in peers), "target", "verdict"]
    rows = []
    for s in scenarios:
        med = {a: median(samples[(a, s)]) for a in names}
        ratios = [med["uji"] / med[p] for p in peers]
        if s == "--version":
            target, ok = f"≤ 1.5x python -c pass ({bare:.0f} ms)", med["uji"] <= 1.5 * bare
        elif peers:
            fastest = min(med[p] for p in peers)
            target, ok = "≤ 0.5x the fastest peer", med["uji"] <= 0.5 * fastest
        else:
            target, ok = "", True
        rows.append(
            [
                s,
                *(f"{med[a]:.0f} ms" for a in names),
                *(f"{r:.2f}x" for r in ratios),
                target,
                "PASS" if ok else "OVER",
            ]
        )
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    print(f"\nmedians of {n} rounds, the agents alternating; same loopback fake model for all")
    for r in [head, ["-" * w for w in widths], *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


if __name__ == "__main__":
    main()
