"""The run_command gate's cost, printed; run by hand: `python bench/gate.py`.

- the one-time cost of loading tree-sitter and the bash grammar;
- the median time to parse and decide a typical 5-part compound line once loaded
  (the target is under 1 ms);
- a 100 KB line and a pathological nesting, to show neither hangs;
- `uji --version`, and whether tree-sitter is imported by it (it must not be).

Not a test: nothing here fails, it only measures.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

# Measure what users get: bytecode present (this machine may set PYTHONDONTWRITEBYTECODE).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=False)

LINE = 'cd src && git diff --stat | grep -v test > /tmp/x 2>&1; ls -la "$HOME" && cargo test -p core'
RULES = {
    "run_command": {
        "allow": ["git status", "git diff *", "ls *", "grep *", "cargo test*", "cd *"],
        "deny": [
            "/^(\\S*/)?rm(?=\\s)(?=.*\\s(-[a-zA-Z]*[rR][a-zA-Z]*|--r[ecursiv]*)(\\s|$))"
            "(?=.*\\s(-[a-zA-Z]*f[a-zA-Z]*|--f[orce]*)(\\s|$))/"
        ],
    }
}


def main() -> None:
    t0 = time.perf_counter()
    from uji.tools import shell
    from uji.tools.policy import Policy

    shell.load()
    load_ms = (time.perf_counter() - t0) * 1000

    policy = Policy()
    policy.set(RULES)
    parts = shell.parse_command(LINE)
    for _ in range(200):
        policy.decide_command("run_command", LINE, "ask")
    samples = []
    for _ in range(2000):
        t = time.perf_counter()
        policy.decide_command("run_command", LINE, "ask")
        samples.append(time.perf_counter() - t)
    decide_ms = statistics.median(samples) * 1000

    big = "echo " + "x" * 100_000
    t = time.perf_counter()
    policy.decide_command("run_command", big, "ask")
    big_ms = (time.perf_counter() - t) * 1000
    deep = "$(" * 5000 + "ls" + ")" * 5000
    t = time.perf_counter()
    policy.decide_command("run_command", deep, "ask")
    deep_ms = (time.perf_counter() - t) * 1000

    version = []
    for _ in range(10):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "uji", "--version"], stdout=subprocess.DEVNULL, check=False)
        version.append(time.perf_counter() - t)
    probe = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "uji", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    loads_parser = "tree_sitter" in probe.stderr

    print(f"line: {LINE}")
    print(f"parts: {[p.text for p in parts]}")
    print(f"parser load (once):              {load_ms:8.2f} ms")
    print(f"parse + decide, 5 parts (median): {decide_ms:8.3f} ms  (target < 1 ms)")
    print(f"parse + decide, 100 KB line:      {big_ms:8.2f} ms")
    print(f"parse + decide, 5000-deep $(…):   {deep_ms:8.2f} ms")
    print(f"uji --version (median of 10):     {statistics.median(version) * 1000:8.1f} ms")
    print(f"uji --version imports tree_sitter: {'yes' if loads_parser else 'no'}")


if __name__ == "__main__":
    main()
