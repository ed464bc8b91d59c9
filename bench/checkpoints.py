"""Checkpoint figures (issue 13 part 2), run by hand, never asserted:

    python bench/checkpoints.py                      # a checkpoint of a 10,000-file repository
    python bench/checkpoints.py --against OLD/src    # ... and `uji run` turns in it, now vs OLD

1. A git repository of 10,000 files (100 folders of 100): the first checkpoint (every
   file hashed once into the shadow repository), then rounds of 3 files changed and a
   checkpoint taken — what each turn pays before its first tool runs — and what the
   turn's end costs, which records what the turn left.
2. With --against: `uji run` in that repository, a text-only turn and one with a
   write_file call, this tree and OLD alternating (OLD has no checkpoints), medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from uji.store.checkpoints import Checkpoints  # noqa: E402

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what an install gets: bytecode

GIT_ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="b",
    GIT_AUTHOR_EMAIL="b@b",
    GIT_COMMITTER_NAME="b",
    GIT_COMMITTER_EMAIL="b@b",
    GIT_CONFIG_NOSYSTEM="1",
)


def make_repo(root: Path, files: int = 10_000) -> Path:
    work = root / "work"
    for i in range(files):
        folder = work / f"pkg{i // 100:03d}"
        if i % 100 == 0:
            folder.mkdir(parents=True)
        (folder / f"mod{i % 100:03d}.py").write_text(f"# module {i}\n" + "x = 1\n" * 20)
    (work / ".gitignore").write_text("*.log\nbuild/\n")
    subprocess.run(["git", "init", "-q"], cwd=work, check=True, env=GIT_ENV)
    subprocess.run(["git", "add", "-A"], cwd=work, check=True, env=GIT_ENV)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=work, check=True, env=GIT_ENV)
    return work


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def bench_checkpoint(root: Path, work: Path, rounds: int = 15) -> None:
    cps = Checkpoints(str(root / "data"), str(work))
    t0 = time.perf_counter()
    cps.begin("bench", 1)
    first = time.perf_counter() - t0
    cps.end()
    begins, ends = [], []
    for r in range(rounds):
        for k in range(3):  # 3 files changed, as a turn's edits would leave them
            path = work / f"pkg{(r * 7 + k * 31) % 100:03d}" / f"mod{k:03d}.py"
            path.write_text(path.read_text() + f"y_{r} = {k}\n")
        t0 = time.perf_counter()
        cps.begin("bench", r + 2)
        begins.append(time.perf_counter() - t0)
        cps.touched()
        t0 = time.perf_counter()
        cps.end()
        ends.append(time.perf_counter() - t0)
    print(f"first checkpoint, 10,000 files         {ms(first)}  (every file hashed once)")
    print(
        f"checkpoint, 10,000 files, 3 changed    {ms(statistics.median(begins))}  "
        f"median of {rounds} (min {ms(min(begins)).strip()}, max {ms(max(begins)).strip()}; target < 100 ms)"
    )
    print(f"turn end, nothing changed since        {ms(statistics.median(ends))}  median of {rounds}")
    # The floor on this machine now: one lstat of each file, which any snapshot pays.
    paths = [os.path.join(d, f) for d, _, fs in os.walk(work) if ".git" not in d for f in fs]
    t0 = time.perf_counter()
    for path in paths:
        os.lstat(path)
    print(
        f"for scale: lstat of the {len(paths)} files    {ms(time.perf_counter() - t0)}  (Python, same sitting)"
    )


def bench_turns(root: Path, work: Path, against: Path, n: int) -> None:
    from tests.fakes.openai_server import FakeOpenAI, text, tool_call

    trees = {"now": ROOT / "src", "before": against.resolve()}
    for src in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=False)
    with FakeOpenAI() as fake:
        cfg = root / "cfg"
        cfg.mkdir(exist_ok=True)
        (cfg / "init.lua").write_text(
            f'uji.provider.add({{ id = "b", name = "B", wire = "openai-chat", base_url = "{fake.base_url}",'
            ' models = { "m" } })\nuji.model.use({ provider = "b", model = "m" })\n'
        )
        env = dict(os.environ, UJI_CONFIG_DIR=str(cfg), UJI_DATA_DIR=str(root / "uji-data"), HOME=str(root))
        cases = [
            ("uji run, text only", ["run", "go"], [text("hi")]),
            (
                "uji run, 1 write_file",
                ["run", "go"],
                [tool_call("write_file", {"path": "pkg000/new.py", "content": "z = 1\n"}), text("done")],
            ),
        ]
        samples: dict[tuple[str, str], list[float]] = {}
        for i in range(n + 1):  # the first round fills the shadow repository: not counted
            for label, args, steps in cases:
                for tree, src in trees.items():
                    fake.script(*steps)
                    t0 = time.perf_counter()
                    subprocess.run(
                        [sys.executable, "-m", "uji", *args],
                        cwd=work,
                        env=dict(env, PYTHONPATH=str(src)),
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        check=False,
                    )
                    if i:
                        samples.setdefault((label, tree), []).append(time.perf_counter() - t0)
    print(f"in the 10,000-file repository, medians of {n}, alternating (before = {against})")
    for label, _, _ in cases:
        cells = [f"{tree} {ms(statistics.median(samples[(label, tree)]))}" for tree in trees]
        print(f"{label:26} " + "   ".join(cells))


def main() -> None:
    p = argparse.ArgumentParser(prog="bench/checkpoints.py", description=__doc__.splitlines()[0])
    p.add_argument("--against", type=Path, help="another uji source tree (its src/) for `uji run` turns")
    p.add_argument("-n", type=int, default=7, help="runs of each `uji run` (default 7)")
    opts = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="uji-bench-cp-") as tmp:
        root = Path(tmp)
        work = make_repo(root)
        bench_checkpoint(root, work)
        if opts.against is not None:
            bench_turns(root, work, opts.against, opts.n)


if __name__ == "__main__":
    main()
