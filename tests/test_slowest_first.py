"""The order the tests are handed to pytest's workers (tests/slowest_first.py): only the
order changes, never which tests run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import pytest

from tests.slowest_first import LIST, read, spread, write


@dataclass
class Item:
    nodeid: str


def _order(names: list[str], took: dict[str, float]) -> list[str]:
    items = cast(list[pytest.Item], [Item(n) for n in names])
    return [cast(Any, item).nodeid for item in spread(items, took)]


def test_the_slow_ones_come_slowest_first_spread_among_the_others_in_their_order() -> None:
    names = [f"t{i}" for i in range(20)]
    order = _order(names, {"t3": 2.0, "t10": 5.0, "t19": 1.0, "gone": 9.0})
    assert sorted(order) == sorted(names)  # every test once, a listed one that is gone ignored
    assert [n for n in order if n in ("t3", "t10", "t19")] == ["t10", "t3", "t19"]
    assert [n for n in order if n not in ("t3", "t10", "t19")] == [
        n for n in names if n not in ("t3", "t10", "t19")
    ]
    assert order.index("t19") < 15  # within the first 70 % of the others: the run ends on short ones
    assert order[:2] == ["t10", "t0"]


def test_without_a_list_the_order_is_as_collected() -> None:
    names = [f"t{i}" for i in range(5)]
    assert _order(names, {}) == names


def test_the_list_reads_back_what_a_run_wrote_and_keeps_only_slow_tests() -> None:
    held = {"a.py::x[1 2]": 0.7, "a.py::y": 0.1, "b.py::z": 3.25}
    text = write(held)
    assert text == "3.25 b.py::z\n0.70 a.py::x[1 2]\n"
    assert read(text) == {"b.py::z": 3.25, "a.py::x[1 2]": 0.7}


def test_the_shipped_list_reads() -> None:
    took = read(LIST.read_text())
    assert took and all(seconds >= 0.5 for seconds in took.values())
