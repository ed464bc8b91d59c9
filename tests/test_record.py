"""`Record` behaves as a frozen dataclass does, `Struct` as a mutable one, for everything
uji's classes use. That no uji class is a dataclass (each costs ~0.3 ms at every start) is
ruff's banned-api rule (TID251, pyproject.toml)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, field
from typing import ClassVar

import pytest

from uji.events.stream import Delta, Done, Outcome
from uji.record import Record, Struct, record_fields, record_types, replace
from uji.wires.base import Failure, Usage


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


class Bag(Struct):
    name: str
    items: list[str] = field(default_factory=list)
    secret: str | None = field(default=None, repr=False)
    count: int = 0


def test_a_struct_is_mutable_with_fresh_defaults_per_instance() -> None:
    a, b = Bag("a"), Bag("b", count=2)
    a.items.append("x")
    a.count += 1
    assert (a.items, b.items, a.count, b.count) == (["x"], [], 1, 2)
    assert Bag("c", ["y"]).items == ["y"]
    assert "items" not in Bag.__dict__  # the field() declaration is gone from the class, as a dataclass's
    assert record_fields(Bag) == ("name", "items", "secret", "count")
    assert record_types(Bag)["count"] == "int"


def test_a_struct_compares_by_value_is_unhashable_and_hides_repr_false_fields() -> None:
    assert Bag("a", ["x"]) == Bag("a", ["x"])
    assert Bag("a") != Bag("b")
    with pytest.raises(TypeError, match="unhashable"):
        hash(Bag("a"))
    assert repr(Bag("a", secret="sk-123")) == "Bag(name='a', items=[], count=0)"
    with pytest.raises(TypeError, match="missing argument 'name'"):
        Bag()  # type: ignore[call-arg]


def test_replace_copies_with_changes_and_refuses_unknown_fields() -> None:
    a = Bag("a", ["x"], count=3)
    b = replace(a, count=4)
    assert (b.name, b.items, b.count, a.count) == ("a", ["x"], 4, 3)
    assert replace(Point(1, 2), y=5) == Point(1, 5)
    with pytest.raises(TypeError, match="no field"):
        replace(a, colour="red")


def test_field_options_a_record_cannot_honour_are_refused() -> None:
    with pytest.raises(TypeError, match="takes only default, default_factory and repr"):

        class Bad(Struct):
            a: int = field(default=0, compare=False)


def test_an_exception_struct_keeps_its_fields_and_message() -> None:
    failure = Failure("http", "boom", status=503)
    with pytest.raises(Failure) as caught:
        raise failure
    assert (caught.value.kind, caught.value.status, str(caught.value)) == ("http", 503, "boom")
    assert caught.value.retryable
