"""The torture and bench suite behind `python bench/run.py` (see its docstring): the
scenario table, one child process per scenario, the results table, and baselines saved
and compared (`--save NAME`, `--compare NAME`; over 120 % of the baseline is flagged).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BASELINES = ROOT / ".cache" / "bench"
THRESHOLD = 1.2  # the original's alert threshold against its baseline

# name, what it measures, "module:function" (modules in bench/)
SCENARIOS: list[tuple[str, str, str]] = [
    ("start-up", "uji --version, median of 10, against bare python", "headless_cases:startup"),
    ("first-frame", "the TUI's first frame, real uji in a pty", "screen_cases:first_frame"),
    ("key-500", "a key with 500 messages on screen", "screen_cases:key_500"),
    ("paste-100k", "a 100 KB paste into the composer", "screen_cases:paste_100k"),
    ("stream-500", "per-token streaming over 500 messages", "screen_cases:stream_500"),
    ("turn", "a full turn over HTTP (uji run --json)", "headless_cases:turn"),
    ("chunks-50k", "50,000 one-character chunks", "headless_cases:chunks_50k"),
    ("sse-5mb", "a 5 MB single SSE event", "headless_cases:sse_5mb"),
    ("garbage", "garbage between events", "headless_cases:garbage"),
    ("calls-200", "200 tool calls in one reply", "headless_cases:calls_200"),
    ("line-10mb", "a 10 MB line of command output", "headless_cases:output_10mb_line"),
    ("lines-1m", "1,000,000 lines of command output", "headless_cases:output_1m_lines"),
    ("interrupts-20", "20 interrupts in a row (TUI)", "screen_cases:interrupts_20"),
    ("queued-100", "100 queued prompts (TUI)", "screen_cases:queued_100"),
    ("read-50mb", "a 50 MB file read", "headless_cases:read_50mb"),
    ("edit-20mb", "a 20 MB edit", "headless_cases:edit_20mb"),
    ("session-5000", "a 5,000-message session opened in the TUI", "screen_cases:session_5000"),
    ("resume-5000", "uji run --session on 5,000 messages", "headless_cases:resume_5000"),
    (
        "resume-50k",
        "uji run --session on 50,000 compacted messages: time and RSS",
        "headless_cases:resume_50k",
    ),
    ("resume-50k-whole", "uji run --session on 50,000 never compacted", "headless_cases:resume_50k_whole"),
    ("markdown-1000", "markdown nested 1,000 deep (lists, quotes)", "screen_cases:markdown_1000"),
]
NAMES = [name for name, _, _ in SCENARIOS]
CHILD_TIMEOUT = 900.0


# --------------------------------------------------------------------------- the child


def child(name: str, out: Path) -> None:
    """Run one scenario in this process and write its figures as JSON to `out`."""
    sys.path.insert(0, str(HERE))
    target = dict((n, t) for n, _, t in SCENARIOS)[name]
    module, func = target.split(":")
    result: dict[str, Any] = {"figures": [], "problems": []}
    try:
        figs = getattr(importlib.import_module(module), func)()
        result = {"figures": [f.as_dict() for f in figs.items], "problems": figs.problems}
    except Exception as e:  # a scenario that breaks is reported, the suite goes on
        import traceback

        result["problems"].append(f"{type(e).__name__}: {e}")
        traceback.print_exc()
    out.write_text(json.dumps(result))


# --------------------------------------------------------------------------- the parent


def run_one(name: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        t0 = time.perf_counter()
        try:
            subprocess.run(
                [sys.executable, str(HERE / "suite.py"), "--child", name, str(out)],
                env=env,
                cwd=ROOT,
                timeout=CHILD_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return {"figures": [], "problems": [f"no result within {CHILD_TIMEOUT:.0f} s"]}
        if not out.exists():
            return {"figures": [], "problems": ["the scenario's process died without a result"]}
        result: dict[str, Any] = json.loads(out.read_text())
        result["took"] = time.perf_counter() - t0
        return result


def fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value / 1000:.2f} s" if value >= 1000 else f"{value:.1f} ms"
    if unit == "MiB":
        return f"{value:.0f} MiB"
    return f"{value:,.0f} {unit}"


def rows_of(name: str, result: dict[str, Any], base: dict[str, float] | None) -> list[list[str]]:
    rows = []
    for f in result["figures"]:
        key = f"{name} :: {f['name']}"
        budget = "" if f["budget"] is None else "≤ " + fmt(f["budget"], f["unit"])
        verdict = "" if f["budget"] is None else ("PASS" if f["value"] <= f["budget"] else "OVER")
        versus = ""
        if base is not None and key in base and f["unit"] in ("ms", "MiB") and base[key] > 0:
            ratio = f["value"] / base[key]
            versus = f"{ratio * 100:.0f} %" + ("  SLOWER" if ratio > THRESHOLD else "")
        rows.append([name, f["name"], fmt(f["value"], f["unit"]), budget, verdict, versus])
    for p in result["problems"]:
        rows.append([name, "PROBLEM: " + p, "", "", "FAIL", ""])
    return rows


def table(rows: list[list[str]], compare: bool) -> str:
    head = ["scenario", "figure", "value", "budget", "verdict"] + (["vs baseline"] if compare else [])
    rows = [r[: len(head)] for r in rows]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    widths[1] = min(widths[1], 70)
    lines = ["  ".join(c.ljust(w) for c, w in zip(head, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def load_baseline(name: str) -> dict[str, float]:
    path = BASELINES / f"{name}.json"
    if not path.exists():
        sys.exit(f"bench: no baseline {name!r} (looked for {path}; make one with --save {name})")
    data: dict[str, float] = json.loads(path.read_text())["figures"]
    return data


def save_baseline(name: str, results: dict[str, dict[str, Any]]) -> Path:
    path = BASELINES / f"{name}.json"
    old: dict[str, float] = json.loads(path.read_text())["figures"] if path.exists() else {}
    for scen, result in results.items():
        for f in result["figures"]:
            old[f"{scen} :: {f['name']}"] = f["value"]
    BASELINES.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"saved": time.strftime("%Y-%m-%d %H:%M:%S"), "figures": old}, indent=1))
    return path


def main(argv: list[str]) -> None:
    if argv[:1] == ["--child"]:
        child(argv[1], Path(argv[2]))
        return
    p = argparse.ArgumentParser(prog="bench/run.py", description="uji's torture and bench suite")
    p.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="run only these (default: all)")
    p.add_argument("--list", action="store_true", help="name the scenarios and stop")
    p.add_argument("--save", metavar="NAME", help="save the figures as baseline NAME (.cache/bench/)")
    p.add_argument(
        "--compare", metavar="NAME", help=f"flag figures over {THRESHOLD * 100:.0f} %% of baseline NAME"
    )
    opts = p.parse_args(argv)
    if opts.list:
        for name, what, _ in SCENARIOS:
            print(f"{name:15} {what}")
        return
    unknown = [s for s in opts.scenarios if s not in NAMES]
    if unknown:
        p.error(f"unknown scenario {', '.join(unknown)}; --list names them")
    base = load_baseline(opts.compare) if opts.compare else None
    chosen = opts.scenarios or NAMES
    results: dict[str, dict[str, Any]] = {}
    rows: list[list[str]] = []
    for name in chosen:
        what = dict((n, w) for n, w, _ in SCENARIOS)[name]
        print(f"--- {name}: {what}", flush=True)
        results[name] = run_one(name)
        mine = rows_of(name, results[name], base)
        rows += mine
        for r in mine:
            print("    " + "  ".join(c for c in r[1:] if c), flush=True)
    print()
    print(table(rows, base is not None))
    over = sum(1 for r in rows if r[4] in ("OVER", "FAIL"))
    slower = sum(1 for r in rows if "SLOWER" in r[5])
    print(f"\n{len(rows)} figures; {over} over budget or failed" + (f"; {slower} slower" if base else ""))
    if opts.save:
        print(f"saved baseline {opts.save!r}: {save_baseline(opts.save, results)}")


if __name__ == "__main__":
    main(sys.argv[1:])
