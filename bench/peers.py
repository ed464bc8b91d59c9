"""uji side by side with Codex CLI, Claude Code and pi, against the same loopback fake
model; run by hand: `python bench/peers.py [-n N] [--only SCENARIO] [--check-codex-switches]`.

The peers are installed from npm into .cache/peers/ on first use (never project
dependencies): `@openai/codex`, `@anthropic-ai/claude-code` and
`@mariozechner/pi-coding-agent`. Codex and Claude Code are run as their native binaries
(from the platform package's vendor folder), not through their Node launchers, which
add a Node start-up to every run; pi is a Node program and runs as `node dist/cli.js`.
Each agent talks to the fake of its own wire, all from tests/fakes/, with everything
that would reach past the fake turned off (it would wait on blocked traffic otherwise):

- uji: Chat Completions (`openai-chat`), a provider pointing at the fake, its home in
  .cache/peers/ as Codex's and Claude Code's are (a second row, "uji, home in /tmp", keeps
  it in the temporary folder, where its sandbox pays a rule per entry of that folder);
- Codex: the Responses API, a custom `model_providers.fake` in its CODEX_HOME's
  config.toml, and `-c features.plugins=false -c features.remote_plugin=false
  -c analytics.enabled=false` (`--check-codex-switches` shows what they save), its
  commands run without its sandboxing (`--dangerously-bypass-approvals-and-sandbox`);
- "Codex sandboxed": the same, its commands in its workspace-write sandbox (`-s
  workspace-write`), as uji runs them by default (in its Landlock sandbox): the
  like-for-like configuration, shown beside the other; the verdict stays against the
  unsandboxed one;
- Claude Code: the Messages API, through ANTHROPIC_BASE_URL, with
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC and the auto-updater, telemetry and error
  reporting off;
- pi: Chat Completions, a provider in its models.json, `--offline`.

Scenarios, every agent run once per round in turn, medians of N rounds: `--version`
(with bare `python -c pass` and the checkout's `./uji` script in the same alternation); one headless turn with one shell
call; a 20,000-delta answer; 20 sequential tool calls (20 model steps of one shell call
each, then an answer). A run counts only if the agent did the work: its requests reached
the fake, and every shell call touched the marker file (checked after the run).

Printed per scenario: CPU (user + sys of the agent's process and every process it
waited for) and wall medians, peak RSS, and uji's ratios to each peer, with the load
average before and after. Verdicts use the CPU ratio (steady on a busy machine, where
wall time mostly measures the other load); wall is shown beside it. Not a test: nothing
here fails a build.
"""

from __future__ import annotations

import argparse
import atexit
import glob
import json
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

from common import ROOT, UJI, Home, Run, compile_src, median, spawn
from tests.fakes import anthropic_server, openai_server, responses_server
from tests.fakes.base import FakeServer, Step

CACHE = ROOT / ".cache" / "peers"
UJI_IN_TMP = "uji, home in /tmp"
PACKAGES = ["@openai/codex", "@anthropic-ai/claude-code", "@mariozechner/pi-coding-agent"]
# What keeps Codex from reaching for its plugin registry and analytics, which it cannot
# reach here and would wait on (about 5 s a run).
CODEX_SWITCHES = [
    "-c",
    "features.plugins=false",
    "-c",
    "features.remote_plugin=false",
    "-c",
    "analytics.enabled=false",
]


# --------------------------------------------------------------------------- install


def install() -> None:
    """npm install the peers into .cache/peers/ unless they are there already."""
    if codex_binary() and claude_binary() and pi_script():
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
    """The native codex of this platform, from the optional dependency
    @openai/codex-<os>-<arch> (its vendor folder); the Node launcher is not measured."""
    machine = {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(platform.machine(), "")
    pattern = f"node_modules/@openai/codex*/vendor/{machine}-*linux*/bin/codex"
    found = sorted(glob.glob(str(CACHE / pattern)))
    return found[0] if found else None


def claude_binary() -> str | None:
    """The native claude (the postinstall copies it over bin/claude.exe; without the
    postinstall, it is in the platform package)."""
    main = CACHE / "node_modules/@anthropic-ai/claude-code/bin/claude.exe"
    if main.exists() and main.stat().st_size > 1_000_000:
        return str(main)
    found = sorted(glob.glob(str(CACHE / "node_modules/@anthropic-ai/claude-code-linux-*/claude")))
    return found[0] if found else None


def pi_script() -> str | None:
    script = CACHE / "node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
    return str(script) if script.exists() and shutil.which("node") else None


def version_of(cmd: list[str], env: dict[str, str]) -> str:
    p = subprocess.run(
        [*cmd, "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    out = (p.stdout or p.stderr).strip()
    return out.splitlines()[0] if out else "?"


# --------------------------------------------------------------------------- agents


@dataclass
class Agent:
    """One agent, its fake model and how to run a headless prompt."""

    name: str
    fake: FakeServer | None
    mod: Any  # the fake's step builders
    shell_call: Callable[[str, int], Step]  # a call of its shell tool running `command`
    cmd: list[str]
    env: dict[str, str]
    work: Path
    flags: list[str] = field(default_factory=list)  # before the prompt's arguments

    def prompt(self, text: str) -> list[str]:
        raise NotImplementedError

    def run(self, args: list[str]) -> Run:
        return spawn([*self.cmd, *args], env=self.env, cwd=self.work, timeout=300)


class Uji(Agent):
    def prompt(self, text: str) -> list[str]:
        return ["run", "--json", text]


class Codex(Agent):
    def prompt(self, text: str) -> list[str]:
        return [
            *self.flags,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            text,
        ]


class CodexSandboxed(Agent):
    def prompt(self, text: str) -> list[str]:
        return [*self.flags, "exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", text]


class Claude(Agent):
    def prompt(self, text: str) -> list[str]:
        return ["-p", text, "--output-format", "json", "--allowedTools", "Bash"]


class Pi(Agent):
    def prompt(self, text: str) -> list[str]:
        return ["--offline", "--no-session", "--model", "fake/m", "-p", text]


class Bare(Agent):
    """A command run as it is, in the `--version` scenario only: `python -c pass` of the
    interpreter uji runs on (what `--version` is compared with), and `./uji --version`."""

    def run(self, args: list[str]) -> Run:
        return spawn(self.cmd, env=self.env, cwd=self.work, timeout=60)


def _none(c: str, i: int) -> Step:
    raise AssertionError("bare python runs no turn")


def make_agents(tmp: Path, *, codex_switches: bool = True) -> list[Agent]:
    work = tmp / "work"
    work.mkdir()
    agents: list[Agent] = []

    uji_cmd = [str(Path(sys.executable).with_name("uji"))]
    if not Path(uji_cmd[0]).exists():
        uji_cmd = UJI
    # uji's home (its config and data folders) beside Codex's and Claude Code's, in
    # .cache/peers/, as a user's home is out of the temporary folder. Its sandbox keeps
    # commands out of its data folder, and Landlock can only grant: every other entry of
    # each folder above it gets a rule of its own. With the home in a temporary folder of
    # ~1,500 entries, that is ~1,500 rules a turn: the row "uji, home in /tmp" shows it.
    for name, parent in (("uji", CACHE), (UJI_IN_TMP, None)):
        fake_u = openai_server.FakeOpenAI().start()
        home = Home(fake_u.base_url, parent=parent)
        atexit.register(shutil.rmtree, home.root, True)
        agents.append(
            Uji(
                name,
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
                "Codex",
                fake_c,
                responses_server,
                lambda c, i: responses_server.tool_call("exec_command", {"cmd": c}, id=f"call_{i}"),
                [codex, *(CODEX_SWITCHES if codex_switches else [])],
                env,
                work,
            )
        )
        agents.append(
            CodexSandboxed(
                "Codex sandboxed",
                fake_c,
                responses_server,
                lambda c, i: responses_server.tool_call("exec_command", {"cmd": c}, id=f"call_{i}"),
                [codex, *CODEX_SWITCHES],
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
            DISABLE_BUG_COMMAND="1",
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

    pi = pi_script()
    if pi:
        fake_p = openai_server.FakeOpenAI().start()
        pi_dir = tmp / "home-pi" / "agent"
        pi_dir.mkdir(parents=True)
        provider = {
            "baseUrl": fake_p.base_url,
            "api": "openai-completions",
            "apiKey": "fake",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": "m", "contextWindow": 1_000_000, "maxTokens": 32_000}],
        }
        (pi_dir / "models.json").write_text(json.dumps({"providers": {"fake": provider}}))
        env = _clean_env(
            HOME=str(tmp / "home-pi"),
            PI_CODING_AGENT_DIR=str(pi_dir),
            PI_OFFLINE="1",
            PI_SKIP_VERSION_CHECK="1",
            PI_TELEMETRY="0",
        )
        agents.append(
            Pi(
                "pi",
                fake_p,
                openai_server,
                lambda c, i: openai_server.tool_call("bash", {"command": c}, id=f"call_{i}"),
                [shutil.which("node") or "node", pi],
                env,
                work,
            )
        )
    return agents


def _clean_env(**extra: str) -> dict[str, str]:
    drop = ("UJI_", "XDG_", "ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "PI_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(extra)
    return env


# --------------------------------------------------------------------------- scenarios


def one(agent: Agent, scenario: str, problems: list[str]) -> Run:
    """One run of `scenario` by `agent`; a wrong outcome (the work not done) is noted in
    problems."""
    marker = agent.work / "marker"
    marker.unlink(missing_ok=True)
    mod = agent.mod
    fake = agent.fake
    if fake is not None:
        fake.reset()
    if scenario == "--version":
        r = agent.run(["--version"])
        ok, why = r.code == 0, ""
    elif scenario == "one turn, one shell call":
        assert fake is not None
        fake.script(agent.shell_call("touch marker", 0), mod.text("done"))
        r = agent.run(agent.prompt("touch the marker"))
        ok, why = r.code == 0 and marker.exists(), "no marker"
    elif scenario == "a 20,000-delta answer":
        assert fake is not None
        fake.script(mod.text_deltas(20_000))
        r = agent.run(agent.prompt("say x 20,000 times"))
        ok, why = r.code == 0 and "x" * 20_000 in r.stdout, "the answer is not in its output"
    else:  # 20 sequential tool calls
        assert fake is not None
        steps = [agent.shell_call(f"echo {i} >> marker", i) for i in range(20)]
        fake.script(*steps, mod.text("done"))
        r = agent.run(agent.prompt("append 20 lines to the marker"))
        lines = marker.read_text().split() if marker.exists() else []
        ok, why = r.code == 0 and lines == [str(i) for i in range(20)], f"marker lines {lines}"
    if fake is not None and scenario != "--version":
        turns = len(fake.turn_requests)
        wanted = {"one turn, one shell call": 2, "a 20,000-delta answer": 1}.get(scenario, 21)
        if turns < wanted:
            ok, why = False, f"{turns} requests reached the fake, {wanted} expected"
    if not ok:
        problems.append(f"{agent.name}, {scenario}: {why}; {r.why()} (stdout ends {r.stdout[-200:]!r})")
    return r


SCENARIOS = {
    "version": "--version",
    "turn": "one turn, one shell call",
    "deltas": "a 20,000-delta answer",
    "calls": "20 sequential tool calls",
}


class Samples:
    """Every run's wall, CPU and peak RSS, by (agent, scenario)."""

    def __init__(self) -> None:
        self.wall: dict[tuple[str, str], list[float]] = {}
        self.cpu: dict[tuple[str, str], list[float]] = {}
        self.rss: dict[tuple[str, str], list[float]] = {}

    def add(self, agent: str, scenario: str, r: Run) -> None:
        key = (agent, scenario)
        self.wall.setdefault(key, []).append(r.ms)
        self.cpu.setdefault(key, []).append(r.cpu_ms)
        self.rss.setdefault(key, []).append(r.rss_mib)


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def measure(agents: list[Agent], scenarios: list[str], n: int, problems: list[str]) -> Samples:
    samples = Samples()
    for a in agents:  # a warm-up each: first-run set-up, page cache
        if not isinstance(a, Bare):
            one(a, scenarios[-1], [])
    for _ in range(n):
        for s in scenarios:
            for a in agents:
                if isinstance(a, Bare) and s != "--version":
                    continue
                samples.add(a.name, s, one(a, s, problems))
    return samples


def main() -> None:
    p = argparse.ArgumentParser(prog="bench/peers.py", description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=7, help="rounds (default 7); the median of each is shown")
    p.add_argument("--only", choices=SCENARIOS, action="append", help="only this scenario (repeatable)")
    p.add_argument(
        "--peer",
        choices=["Codex", "Codex sandboxed", "Claude Code", "pi"],
        action="append",
        help="only this peer beside uji (repeatable; default all)",
    )
    p.add_argument(
        "--check-codex-switches",
        action="store_true",
        help="alternate native Codex's turn with and without its opt-out switches instead",
    )
    opts = p.parse_args()
    install()
    # uji's bytecode as it is now: where PYTHONDONTWRITEBYTECODE is set (this machine), a
    # module changed since it was last compiled would be compiled again in every run.
    compile_src()
    if opts.check_codex_switches:
        check_codex_switches(opts.n)
        return
    with tempfile.TemporaryDirectory(prefix="uji-peers-") as tmp:
        agents = [
            a
            for a in make_agents(Path(tmp))
            if a.name in ("uji", UJI_IN_TMP) or a.name in (opts.peer or [a.name])
        ]
        bare = Bare(
            "python -c pass", None, None, _none, [sys.executable, "-c", "pass"], dict(os.environ), Path(tmp)
        )
        script = Bare(
            "./uji", None, None, _none, [str(ROOT / "uji"), "--version"], dict(os.environ), Path(tmp)
        )
        try:
            every = ["Codex", "Codex sandboxed", "Claude Code", "pi"]
            for name in sorted(set(opts.peer or every) - {a.name for a in agents}):
                print(f"{name}: not installed in {CACHE} (see the npm output above); left out")
            for a in agents:
                print(f"{a.name:12} {version_of(a.cmd, a.env):40} {' '.join(a.cmd)}")
            print(f"{'python':12} {platform.python_version():40} {sys.executable}")
            scenarios = [SCENARIOS[k] for k in opts.only or SCENARIOS]
            problems: list[str] = []
            before = load()
            samples = measure([*agents, bare, script], scenarios, opts.n, problems)
            after = load()
            print(
                f"\nmedians of {opts.n} rounds, the agents alternating; load average {before} before, {after} after"
            )
            report([a.name for a in agents], scenarios, samples)
            for line in dict.fromkeys(problems):
                print("PROBLEM:", line)
        finally:
            for a in agents:
                if a.fake is not None:
                    a.fake.stop()


def check_codex_switches(n: int) -> None:
    """Native Codex's turn with its opt-out switches and without, alternating: the
    difference is time spent waiting on traffic that cannot leave this machine."""
    with tempfile.TemporaryDirectory(prefix="uji-peers-") as tmp:
        agents = make_agents(Path(tmp))
        codex = next((a for a in agents if isinstance(a, Codex)), None)
        if codex is None:
            sys.exit("bench/peers.py: Codex is not installed")
        bare_cmd = [c for c in codex.cmd if c not in CODEX_SWITCHES[1::2] and c != "-c"]
        plain = Codex(
            "Codex without switches", codex.fake, codex.mod, codex.shell_call, bare_cmd, codex.env, codex.work
        )
        problems: list[str] = []
        try:
            samples = measure([codex, plain], [SCENARIOS["turn"]], n, problems)
            for a in (codex, plain):
                key = (a.name, SCENARIOS["turn"])
                print(
                    f"{a.name:24} wall {median(samples.wall[key]):7.0f} ms   cpu {median(samples.cpu[key]):6.0f} ms"
                )
            for line in dict.fromkeys(problems):
                print("PROBLEM:", line)
        finally:
            for a in agents:
                if a.fake is not None:
                    a.fake.stop()


def report(names: list[str], scenarios: list[str], samples: Samples) -> None:
    """One table per scenario: each agent's medians and uji's ratios to it, then the
    verdict on the CPU ratio."""
    for s in scenarios:
        rows = [["agent", "cpu", "wall", "peak rss", "uji/it cpu", "uji/it wall"]]
        mine = (median(samples.cpu[("uji", s)]), median(samples.wall[("uji", s)]))
        shown = [*names, "python -c pass", "./uji"] if s == "--version" else names
        for name in shown:
            if (name, s) not in samples.cpu:
                continue
            cpu, wall = median(samples.cpu[(name, s)]), median(samples.wall[(name, s)])
            rss = median(samples.rss[(name, s)])
            ratios = ["", ""] if name == "uji" else [f"{mine[0] / cpu:.2f}x", f"{mine[1] / wall:.2f}x"]
            rows.append([name, f"{cpu:.0f} ms", f"{wall:.0f} ms", f"{rss:.0f} MiB", *ratios])
        if s == "--version":
            base, target, limit = "python -c pass", "uji's CPU <= 1.5x bare python's", 1.5
        else:
            base, target, limit = "Codex", "uji's CPU <= 0.5x native Codex's", 0.5
        if (base, s) in samples.cpu:
            ratio = mine[0] / median(samples.cpu[(base, s)])
            verdict = f"{target}: {ratio:.2f}x {'PASS' if ratio <= limit else 'OVER'}"
            verdict += f" (wall {mine[1] / median(samples.wall[(base, s)]):.2f}x)"
        else:
            verdict = f"{target}: {base} not measured"
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        print(f"\n{s}")
        for r in rows:
            print(
                "  "
                + "  ".join(
                    c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
                )
            )
        print(f"  verdict: {verdict}")
        if s != "--version" and ("Codex sandboxed", s) in samples.cpu:
            ratio = mine[0] / median(samples.cpu[("Codex sandboxed", s)])
            print(f"  like for like (both sandboxed): uji's CPU is {ratio:.2f}x sandboxed Codex's")
        if s == "--version" and (base, s) in samples.cpu and ("./uji", s) in samples.cpu:
            ratio = median(samples.cpu[("./uji", s)]) / median(samples.cpu[(base, s)])
            print(
                f"  verdict: ./uji's CPU <= 1.5x bare python's: {ratio:.2f}x {'PASS' if ratio <= 1.5 else 'OVER'}"
            )


if __name__ == "__main__":
    main()
