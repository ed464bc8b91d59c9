"""The bench scripts (run by hand, never timed here) at least start: every scenario that
`bench/run.py` lists resolves to a function, and the scripts answer --help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def test_every_listed_scenario_resolves_to_a_function() -> None:
    listed = bench("bench/run.py", "--list")
    assert listed.returncode == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    assert len(names) >= 19 and "chunks-50k" in names and "resume-50k" in names
    probe = bench(
        "-c",
        "import importlib, sys; sys.path.insert(0, 'bench'); import suite\n"
        "for name, _, target in suite.SCENARIOS:\n"
        "    module, func = target.split(':')\n"
        "    assert callable(getattr(importlib.import_module(module), func)), name\n"
        "    print(name)\n",
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == names


def test_the_scripts_answer_help_and_refuse_unknown_names() -> None:
    for script in ("bench/run.py", "bench/peers.py"):
        helped = bench(script, "--help")
        assert helped.returncode == 0, helped.stderr
        assert "usage:" in helped.stdout
    unknown = bench("bench/run.py", "no-such-scenario")
    assert unknown.returncode == 2 and "unknown scenario no-such-scenario" in unknown.stderr
    missing = bench("bench/run.py", "--compare", "no-such-baseline", "garbage")
    assert missing.returncode != 0 and "no baseline 'no-such-baseline'" in missing.stderr
