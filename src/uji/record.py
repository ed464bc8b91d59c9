"""`Record` and `Struct`: value classes as `@dataclass` makes them, without its cost.

A dataclass generates its methods with `exec` when the class is created: about 0.3 ms a
class here, 14 ms for the 43 of them every `uji run` imported. A `Record` (frozen, as
`@dataclass(frozen=True)`) or `Struct` (mutable, as `@dataclass`) subclass declares its
fields the same way (annotations, optional defaults, `dataclasses.field(default=...,
default_factory=..., repr=False)`) and gets the same behaviour from shared methods: keyword
or positional construction, equality by field values (within one class), a dataclass
style repr and `match` support; a `Record` cannot be assigned to after its construction
and hashes by its values, a `Struct` is unhashable (as a dataclass with `eq`). Type
checkers treat both as dataclasses (PEP 681).

What they do not do: `dataclasses.fields`/`replace`/`asdict` (use `record_fields`,
`record_types` and `replace` here), `__post_init__`, other `field()` options, or
`ClassVar` fields declared through a string alias.

`field` here takes `default`, `default_factory` and `repr` as `dataclasses.field` does,
without importing `dataclasses` (with `inspect` and `ast` behind it, a tenth of an
interpreter's start-up); a `dataclasses.field(...)` is read too.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, dataclass_transform, overload

_NO_DEFAULT = object()
_T = TypeVar("_T", bound="_Fields")
_V = TypeVar("_V")


class _Spec:
    """What `field(...)` declared."""

    __slots__ = ("default", "factory", "repr")

    def __init__(self, default: Any, factory: Any, repr: bool) -> None:
        self.default = default
        self.factory = factory
        self.repr = repr


@overload
def field(*, default_factory: Callable[[], _V], repr: bool = True) -> _V: ...
@overload
def field(*, default: _V, repr: bool = True) -> _V: ...
@overload
def field(*, repr: bool = True) -> Any: ...
def field(*, default: Any = _NO_DEFAULT, default_factory: Any = None, repr: bool = True) -> Any:
    """A field's declaration, as `dataclasses.field` with only these options."""
    if default is not _NO_DEFAULT and default_factory is not None:
        raise ValueError("field(): default and default_factory both given")
    return _Spec(default, default_factory, repr)


class _Factory:
    """A default made anew for each instance (`field(default_factory=...)`)."""

    __slots__ = ("make",)

    def __init__(self, make: Any) -> None:
        self.make = make


class _Fields:
    """What `Record` and `Struct` share: the fields, read from the class's annotations."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _types: ClassVar[dict[str, Any]] = {}
    _hidden: ClassVar[frozenset[str]] = frozenset()  # field(repr=False)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = list(cls._fields)
        defaults = dict(cls._defaults)
        types = dict(cls._types)
        hidden = set(cls._hidden)
        own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (the class's own; inspect costs an import)
        for name, annotation in own.items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in fields:
                fields.append(name)
            types[name] = annotation
            default = cls.__dict__.get(name, _NO_DEFAULT)
            if isinstance(default, _Spec) or _is_dataclass_field(default):
                default = _from_field(cls, name, default, hidden)
            if default is not _NO_DEFAULT:
                defaults[name] = default
            elif defaults and name not in defaults:
                raise TypeError(
                    f"{cls.__name__}: field {name!r} without a default follows one with a default"
                )
        cls._fields = tuple(fields)
        cls._defaults = defaults
        cls._types = types
        cls._hidden = frozenset(hidden)
        setattr(cls, "__match_args__", cls._fields)  # noqa: B010 (class attribute set at run time)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self._fields
        if len(args) > len(names):
            raise TypeError(
                f"{type(self).__name__}() takes {len(names)} arguments but {len(args)} were given"
            )
        assign = object.__setattr__  # past a Record's refusing __setattr__
        for name, value in zip(names, args, strict=False):
            assign(self, name, value)
        defaults = self._defaults
        for name in names[len(args) :]:
            if name in kwargs:
                assign(self, name, kwargs.pop(name))
            elif name in defaults:
                value = defaults[name]
                assign(self, name, value.make() if value.__class__ is _Factory else value)
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}() got unexpected or repeated argument(s) {', '.join(kwargs)}"
            )

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        hidden = self._hidden
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields if name not in hidden)
        return f"{type(self).__qualname__}({inner})"


def _is_dataclass_field(value: Any) -> bool:
    """A `dataclasses.field(...)`: only possible when something imported dataclasses."""
    dataclasses = sys.modules.get("dataclasses")
    return dataclasses is not None and isinstance(value, dataclasses.Field)


def _from_field(cls: type, name: str, spec: Any, hidden: set[str]) -> Any:
    """A `field(...)` declaration read: its default (a `_Factory` for a default_factory);
    the class attribute it was goes, as a dataclass does."""
    if not isinstance(spec, _Spec):
        from dataclasses import MISSING

        if not spec.init or not spec.compare or spec.kw_only is True or spec.metadata:
            raise TypeError(
                f"{cls.__name__}.{name}: field() takes only default, default_factory and repr here"
            )
        default = _NO_DEFAULT if spec.default is MISSING else spec.default
        factory = None if spec.default_factory is MISSING else spec.default_factory
        spec = _Spec(default, factory, spec.repr)
    if not spec.repr:
        hidden.add(name)
    if spec.factory is not None:
        delattr(cls, name)
        return _Factory(spec.factory)
    if spec.default is not _NO_DEFAULT:
        setattr(cls, name, spec.default)
        return spec.default
    delattr(cls, name)
    return _NO_DEFAULT


@dataclass_transform(frozen_default=True, eq_default=True, field_specifiers=(field,))
class Record(_Fields):
    """A frozen value: as `@dataclass(frozen=True)`."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        from dataclasses import FrozenInstanceError  # the error dataclasses raise; imported when raised

        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        from dataclasses import FrozenInstanceError

        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(self._values())


@dataclass_transform(eq_default=True, field_specifiers=(field,))
class Struct(_Fields):
    """A mutable value: as `@dataclass`."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as a dataclass


def record_fields(cls: type[_Fields]) -> tuple[str, ...]:
    """The names of a record class's fields, in order (inherited ones first)."""
    return cls._fields


def record_types(cls: type[_Fields]) -> dict[str, Any]:
    """Each field's annotation as written (a string under `from __future__ import annotations`)."""
    return dict(cls._types)


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of `obj` with `changes`, as `dataclasses.replace`."""
    values = {name: getattr(obj, name) for name in obj._fields}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field(s) {', '.join(sorted(unknown))}")
    values.update(changes)
    return type(obj)(**values)
