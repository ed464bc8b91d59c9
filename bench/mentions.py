"""`@` completion figures: listing a 25,000-file repository (capped at 20,000) with git
and without, and ranking the list for a few queries (one keystroke's work on the
screen's loop). Run by hand: `python bench/mentions.py`."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from uji.tui.mentions import list_files, rank  # noqa: E402


def make_project(root: Path, files: int) -> None:
    for i in range(files):
        d = root / f"pkg{i % 50}" / f"mod{i % 500}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"file_{i}.py").write_text("x\n")


def timed(fn: object, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="uji-bench-") as tmp:
        root = Path(tmp)
        make_project(root, 25_000)
        walk_ms = timed(lambda: list_files(str(root)))
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "."], cwd=root, check=True)
        files = list_files(str(root))
        git_ms = timed(lambda: list_files(str(root)))
        print(f"files listed (cap 20,000): {len(files)}")
        print(f"list with git ls-files: {git_ms:.0f} ms (in a worker thread)")
        print(f"list by walking (no repository): {walk_ms:.0f} ms (in a worker thread)")
        for query in ("", "f", "mod4", "file_1234", "zzz"):
            ms = timed(lambda q=query: rank(q, files))  # type: ignore[misc]
            print(f"rank {query!r:12} over {len(files)} files: {ms:.1f} ms")


if __name__ == "__main__":
    main()
