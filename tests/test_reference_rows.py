"""docs/parity.md shows tests/reference_rows.py as it is, and the rows say what is true:
each `uji.*` function a row calls present now is one the declared API has."""

from __future__ import annotations

import re
from pathlib import Path

from tests.reference_rows import ROWS, summary, table
from uji.lua import surface

# Lua modules and the opt-in plugins' tables, not the `uji` table's API.
NOT_API = ("uji.builtin.", "uji.jobs.", "uji.plugins.", "uji.themes.")
PAGE = Path(__file__).parent.parent / "docs" / "parity.md"


def test_the_parity_page_shows_the_rows_as_they_are() -> None:
    text = PAGE.read_text()
    assert summary() in text, "docs/parity.md is out of date: write it again from tests/reference_rows.py"
    assert table() in text


def test_every_row_names_a_status_and_the_present_functions_are_declared() -> None:
    assert len(ROWS) >= 250
    declared = {f.name for f in surface.functions()} | {v.name for v in surface.values()}
    for row in ROWS:
        assert row[2] in ("present", "partial", "missing") and row[3] in ("present", "partial", "missing")
        if row[3] != "present":
            continue
        for name in re.findall(r"\buji(?:\.\w+)+", row[1]):
            if name.startswith(NOT_API):
                continue
            if name.count(".") == 1 and any(d.startswith(name + ".") for d in declared):
                continue  # a namespace
            values = {v.name for v in surface.values()}  # a value's members: uji.api.openai
            assert (
                name in declared
                or any(d.startswith(name + ".") for d in declared)
                or any(name.startswith(v + ".") for v in values)
            ), (name, row)
