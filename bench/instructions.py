"""Instructions uji's own process executes for one headless turn with one shell call
(the bench/peers.py scenario), counted by valgrind's callgrind: a figure that does not
move with the machine's load, where CPU time on two busy cores does. Run by hand:
`python bench/instructions.py [--keep DIR] [-n N]`.

The turn is `uji run --json --sandbox off --on-ask allow "touch the marker"` against the
loopback Chat Completions fake (one run_command call, then an answer), from the venv's
`uji` script: valgrind does not know Landlock's system calls, so under it the sandbox
cannot start and the command would be refused; the sandbox's own cost is left out here
(bench/sandbox.py measures it). The shell command uji starts is not counted either
(callgrind does not follow children). With --keep the
callgrind files are left in DIR for `callgrind_annotate`. Needs valgrind on PATH.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import UJI, Home, compile_src, median
from tests.fakes import openai_server


def count(home: Home, out: Path, uji: list[str]) -> int:
    """Instructions of one turn: its callgrind total, read from the output file."""
    marker = home.work / "marker"
    marker.unlink(missing_ok=True)
    p = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            *uji,
            "run",
            "--json",
            "--sandbox",
            "off",
            "--on-ask",
            "allow",
            "touch the marker",
        ],
        env=home.env,
        cwd=home.work,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    if p.returncode != 0 or not marker.exists():
        sys.exit(f"bench/instructions.py: the turn failed (exit {p.returncode}): {p.stderr[-800:]}")
    totals = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.M)
    if totals is None:
        sys.exit(f"bench/instructions.py: no total in {out}")
    return int(totals.group(1))


def main() -> None:
    p = argparse.ArgumentParser(prog="bench/instructions.py", description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=3, help="runs (default 3); the median is shown")
    p.add_argument("--keep", type=Path, help="leave the callgrind files in this directory")
    opts = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench/instructions.py: valgrind is not on PATH")
    compile_src()
    script = Path(sys.executable).with_name("uji")
    uji = [str(script)] if script.exists() else UJI
    with (
        openai_server.FakeOpenAI() as fake,
        Home(fake.base_url) as home,
        tempfile.TemporaryDirectory() as tmp,
    ):
        keep = opts.keep or Path(tmp)
        keep.mkdir(parents=True, exist_ok=True)
        one(fake, home, keep / "warm.out", uji)  # the first run makes the data dir and caches
        runs = [one(fake, home, keep / f"callgrind.{i}.out", uji) for i in range(opts.n)]
    print(f"one turn with one shell call: {median(runs) / 1e6:.1f} M instructions (median of {opts.n})")
    print("  all: " + ", ".join(f"{r / 1e6:.1f}" for r in runs))
    if opts.keep:
        print(f"  callgrind files in {opts.keep} (callgrind_annotate {opts.keep}/callgrind.0.out)")


def one(fake: openai_server.FakeOpenAI, home: Home, out: Path, uji: list[str]) -> int:
    fake.reset()
    fake.script(
        openai_server.tool_call("run_command", {"command": "touch marker"}), openai_server.text("done")
    )
    return count(home, out, uji)


if __name__ == "__main__":
    main()
