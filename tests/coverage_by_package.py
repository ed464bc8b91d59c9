"""Prints the combined coverage of `./test --cov` per package of uji (no tests here):
lines measured in the test processes and in every `uji` process they started.

    COVERAGE_FILE=.cache/coverage/data python tests/coverage_by_package.py [--files PKG]
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from pathlib import Path

import coverage

SRC = Path(__file__).resolve().parent.parent / "src" / "uji"
# The packages the architecture issue holds to at least 90 %.
HELD = ("agent", "tools", "wires", "store")


def package(path: Path) -> str:
    parts = path.relative_to(SRC).parts
    return parts[0] if len(parts) > 1 else "(uji/*.py)"


def main() -> int:
    cov = coverage.Coverage(data_file=os.environ.get("COVERAGE_FILE", ".coverage"))
    cov.combine(strict=False)  # any data files not combined yet (pytest-cov combines its own)
    cov.load()
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    files: dict[str, list[tuple[str, int, int, str]]] = defaultdict(list)
    for name in sorted(cov.get_data().measured_files()):
        path = Path(name)
        if not path.is_relative_to(SRC):
            continue
        _, statements, _, missing, shown = cov.analysis2(name)
        pkg = package(path)
        totals[pkg][0] += len(statements)
        totals[pkg][1] += len(missing)
        files[pkg].append((str(path.relative_to(SRC)), len(statements), len(missing), shown))
    if not totals:
        print("coverage: no data (run `./test --cov`)", file=sys.stderr)
        return 1
    print(f"\n{'package':14} {'lines':>7} {'missed':>7} {'cover':>7}")
    all_lines = all_missed = 0
    for pkg in sorted(totals):
        lines, missed = totals[pkg]
        all_lines += lines
        all_missed += missed
        mark = "  (under 90 %)" if pkg in HELD and lines and (lines - missed) / lines < 0.9 else ""
        print(f"{pkg:14} {lines:7} {missed:7} {100 * (lines - missed) / max(lines, 1):6.1f}%{mark}")
    print(
        f"{'total':14} {all_lines:7} {all_missed:7} {100 * (all_lines - all_missed) / max(all_lines, 1):6.1f}%"
    )
    wanted = sys.argv[sys.argv.index("--files") + 1 :] if "--files" in sys.argv else []
    for pkg in wanted:
        print(f"\n{pkg}:")
        for name, lines, missed, shown in files[pkg]:
            if missed:
                print(f"  {name:40} {lines:5} {missed:5}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
