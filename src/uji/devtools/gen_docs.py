"""Write the generated documentation: `python -m uji.devtools.gen_docs` (or `--check`,
which writes nothing and exits 1 naming the files that are out of date).

- docs/lua-api.md: the Lua API reference, from uji.lua.surface (functions, types) and
  uji.events.catalog (notifications and hooks)
- src/uji/lua/meta/uji.lua: the same as LuaLS definitions (`---@meta`), shipped in the
  package for editors (`uji lua-types` prints its directory)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository: src/uji/devtools/ is three below


def outputs() -> dict[Path, Callable[[], str]]:
    """Each generated file (relative to the repository) and what produces its text."""
    from uji.lua import typegen

    return typegen.outputs()


def stale(root: Path = ROOT) -> list[Path]:
    """The generated files whose text on disk differs from what would be generated."""
    out = []
    for rel, make in outputs().items():
        path = root / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != make():
            out.append(rel)
    return out


def write(root: Path = ROOT) -> list[Path]:
    written = []
    for rel, make in outputs().items():
        path = root / rel
        text = make()
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            written.append(rel)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m uji.devtools.gen_docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        old = stale()
        for rel in old:
            print(f"out of date: {rel} (run python -m uji.devtools.gen_docs)", file=sys.stderr)
        return 1 if old else 0
    for rel in write():
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
