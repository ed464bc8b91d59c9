"""`Record`: a frozen value class, as `@dataclass(frozen=True)` makes one, without its cost.

A frozen dataclass generates its methods with `exec` when the class is created: about
0.3 ms a class here, 7 ms for the event module alone, paid by every `uji` start. A
`Record` subclass declares its fields the same way (annotations, optional defaults) and
gets the same behaviour from shared methods: keyword or positional construction, no
assignment after it, equality and hash by field values (within one class), a dataclass
style repr and `match` support. Type checkers treat it as a dataclass (PEP 681).

What it does not do: `dataclasses.fields`/`replace`/`asdict` (use `record_fields`),
`field(default_factory=...)`, or `ClassVar` fields declared through a string alias.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any, ClassVar, dataclass_transform

_NO_DEFAULT = object()


@dataclass_transform(frozen_default=True, eq_default=True)
class Record:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = list(cls._fields)
        defaults = dict(cls._defaults)
        own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (the class's own; inspect costs an import)
        for name, annotation in own.items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in fields:
                fields.append(name)
            default = cls.__dict__.get(name, _NO_DEFAULT)
            if default is not _NO_DEFAULT:
                defaults[name] = default
            elif defaults and name not in defaults:
                raise TypeError(
                    f"{cls.__name__}: field {name!r} without a default follows one with a default"
                )
        cls._fields = tuple(fields)
        cls._defaults = defaults
        setattr(cls, "__match_args__", cls._fields)  # noqa: B010 (class attribute set at run time)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = self._fields
        if len(args) > len(names):
            raise TypeError(
                f"{type(self).__name__}() takes {len(names)} arguments but {len(args)} were given"
            )
        assign = object.__setattr__
        for name, value in zip(names, args, strict=False):
            assign(self, name, value)
        for name in names[len(args) :]:
            if name in kwargs:
                assign(self, name, kwargs.pop(name))
            elif name in self._defaults:
                assign(self, name, self._defaults[name])
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}() got unexpected or repeated argument(s) {', '.join(kwargs)}"
            )

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({inner})"


def record_fields(cls: type[Record]) -> tuple[str, ...]:
    """The names of a record class's fields, in order (inherited ones first)."""
    return cls._fields
