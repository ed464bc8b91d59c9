"""`Record` behaves as a frozen dataclass does, for everything the events use."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import ClassVar

import pytest

from uji.events.stream import Delta, Done, Outcome
from uji.record import Record, record_fields
from uji.wires.base import Usage


class Point(Record):
    x: int
    y: int = 0
    kind: ClassVar[str] = "point"


class Other(Record):
    x: int
    y: int = 0


def test_construction_by_position_keyword_and_default() -> None:
    assert (Point(1, 2).x, Point(1, 2).y) == (1, 2)
    assert Point(y=5, x=4).y == 5
    assert Point(3).y == 0
    assert record_fields(Point) == ("x", "y")


def test_bad_arguments_say_what_is_wrong() -> None:
    with pytest.raises(TypeError, match="missing argument 'x'"):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 2 arguments but 3"):
        Point(1, 2, 3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected or repeated argument"):
        Point(1, z=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected or repeated argument"):
        Point(1, x=2)  # type: ignore[misc]


def test_frozen() -> None:
    p = Point(1)
    with pytest.raises(FrozenInstanceError):
        p.x = 2  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del p.x
    assert p.x == 1


def test_equality_and_hash_by_value_within_one_class() -> None:
    assert Point(1, 2) == Point(1, 2)
    assert Point(1, 2) != Point(2, 1)
    assert Point(1, 2) != Other(1, 2)
    assert hash(Point(1, 2)) == hash(Point(1, 2))
    assert len({Point(1, 2), Point(1, 2), Point(2, 2)}) == 2


def test_repr_and_match() -> None:
    assert repr(Point(1, 2)) == "Point(x=1, y=2)"
    match Delta("text", "hi"):
        case Delta(kind, text):
            assert (kind, text) == ("text", "hi")
        case _:
            pytest.fail("Delta did not match positionally")


def test_a_required_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="'b' without a default"):

        class Bad(Record):
            a: int = 1
            b: int  # type: ignore[misc]


def test_events_keep_their_fields_and_defaults() -> None:
    outcome = Outcome("deny", "policy", rule="rm *")
    assert (outcome.decision, outcome.rule, outcome.remembered, outcome.hook) == ("deny", "rm *", False, None)
    done = Done(text="ok", error=None, usage=Usage())
    assert done == Done("ok", None, Usage())
