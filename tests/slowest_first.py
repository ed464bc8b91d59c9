"""The order pytest hands the tests to its workers: the slow ones listed in
tests/slow_tests.txt early, slowest first, spread among the others (`spread`).

pytest-xdist gives each worker its next test as it finishes one, in this order. Collected
as written, the screen tests (tests/test_tui_*.py), many of which wait on timers and
terminals, came together near the end, with the cores a third idle while they ran, and a
test of several seconds handed out last kept the run waiting for it alone. Spread through
the first part of the run, the long ones overlap with short ones, and the run ends on
short ones.

The list only orders: a test missing from it (a new one) counts as a short one, and a
listed test that no longer exists is ignored. `UJI_TEST_RECORD_SLOW=1 ./test` writes it
again from that run: each test that held its worker for `LISTED_FROM` seconds or more, with
the seconds it took (its set-up, call and teardown)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

LIST = Path(__file__).with_name("slow_tests.txt")
RECORD_ENV = "UJI_TEST_RECORD_SLOW"
LISTED_FROM = 0.5


def read(text: str) -> dict[str, float]:
    """The list's lines, `SECONDS NODEID`, as {nodeid: seconds}."""
    took: dict[str, float] = {}
    for line in text.splitlines():
        seconds, _, nodeid = line.partition(" ")
        if nodeid:
            took[nodeid] = float(seconds)
    return took


def write(held: dict[str, float]) -> str:
    """The list for `held` ({nodeid: seconds}): the tests from `LISTED_FROM`, slowest first."""
    slow = sorted(((s, n) for n, s in held.items() if s >= LISTED_FROM), key=lambda t: (-t[0], t[1]))
    return "".join(f"{seconds:.2f} {nodeid}\n" for seconds, nodeid in slow)


# How far into the others the listed tests are spread (see `spread`).
SPREAD = 0.7


@pytest.hookimpl(tryfirst=True)  # before --lf/--ff, which then still choose what runs first
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    took = read(LIST.read_text()) if LIST.exists() else {}
    items[:] = spread(items, took)


def spread(items: list[pytest.Item], took: dict[str, float]) -> list[pytest.Item]:
    """The listed tests slowest first, each followed by an even share of the first `SPREAD`
    of the others (as collected), then the rest of those. All slow ones first had many that
    wait on timers at once, with the cores idle a quarter of the time for the first ~20 s."""
    slow = sorted((item for item in items if item.nodeid in took), key=lambda item: -took[item.nodeid])
    others = [item for item in items if item.nodeid not in took]
    if not slow:
        return others
    share = len(others) * SPREAD / len(slow)
    ordered: list[pytest.Item] = []
    for i, item in enumerate(slow):
        ordered += [item, *others[round(i * share) : round((i + 1) * share)]]
    return ordered + others[round(len(slow) * share) :]


_HELD: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get(RECORD_ENV):
        _HELD[report.nodeid] = _HELD.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    # In the process that saw every worker's reports (or the only one, without workers).
    if os.environ.get(RECORD_ENV) and not hasattr(session.config, "workerinput") and _HELD:
        LIST.write_text(write(_HELD))
