"""docs/architecture.md names every module of src/uji (its last section, "Every module"),
and only modules that exist: a module added, moved or removed shows up here first."""

from __future__ import annotations

import re
from pathlib import Path

import uji

SRC = Path(uji.__file__).resolve().parent
DOC = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def modules() -> set[str]:
    """Every Python module of src/uji as its path there (`agent/loop.py`); the Lua
    runtime's folder holds no Python."""
    return {p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if "runtime" not in p.parts[:-1]}


def named() -> set[str]:
    """The modules "Every module" names: a bullet that opens with a package (`` `tui/`: ``)
    names it and its modules, relative to it; the others are at the top level."""
    section = DOC.read_text().split("\n## Every module\n", 1)[1].split("\n## ", 1)[0]
    found: set[str] = set()
    for bullet in re.split(r"\n- ", "\n" + section)[1:]:
        package = re.match(r"`([a-z_/]+/)`", bullet)
        prefix = package.group(1) if package else ""
        if package:
            found.add(prefix + "__init__.py")  # the package is its __init__
        found |= {prefix + name for name in re.findall(r"`([a-z_]+\.py)`", bullet)}
    return found


def test_every_module_is_named_in_the_architecture() -> None:
    missing = sorted(modules() - named())
    assert missing == [], f"docs/architecture.md, 'Every module', does not name: {missing}"


def test_the_architecture_names_no_module_that_is_gone() -> None:
    assert sorted(named() - modules()) == []


def test_a_package_without_its_own_line_would_be_seen() -> None:
    # The parser reads a package's bullet: the agent's loop is named as agent/loop.py.
    assert {"agent/loop.py", "tools/builtin/run_command.py", "cli.py"} <= named()
