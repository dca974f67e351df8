"""The small immutable-by-convention records every module builds on."""

from __future__ import annotations

from typing import Any, TypeVar


class Record:
    """Base of the small records here: fields in ``__slots__``, equality and repr from them.

    Cheaper to define than dataclasses or named tuples, which matters for a
    command line that starts in a fraction of a second.
    """

    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with some fields changed, like :func:`dataclasses.replace`."""
        unknown = set(changes) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        copy = object.__new__(type(self))
        for name in self.__slots__:
            object.__setattr__(copy, name, changes.get(name, getattr(self, name)))
        return copy


_R = TypeVar("_R", bound=Record)


def replace(record: _R, **changes: Any) -> _R:
    """A copy of ``record`` with some fields changed."""
    return record.replace(**changes)


