"""Typed documents: a part of a ``--json`` document declared once, as a :class:`~ckptcalc.records.Record`
whose fields carry their JSON types and descriptions, from which both the part and its JSON Schema are made
(the schema module is loaded only to publish a schema).

A field is annotated ``Annotated[T, "what it is"]``; ``T`` is ``str``, ``int``, ``float``, ``bool``, a
``Literal`` of strings (an enum), another such record (a nested object), a ``tuple[T, ...]`` of one of them
(an array), or any of them ``| None``. A :class:`Bounds` beside the words bounds a number or an array
(``Bounds(0, 1)`` for a share, ``Bounds(above=0)`` for a number above 0, ``Bounds(above=0, below=1)`` for one
strictly between 0 and 1, ``Bounds(items=2)`` for a pair);
``Annotated[float, Bounds(0, 1)]`` is a
bounded type of its own, to use as an array's items or with ``| None``. A :class:`Format` names a string's
form (``Format("date-time")``).

>>> from typing import Annotated, Literal
>>> class Span(Record):
...     unit: Annotated[Literal["s", "h"], "the unit"]
...     length: Annotated[float | None, "how long, null when open"]
>>> document_of(Span("s", None))
{'unit': 's', 'length': None}
>>> schema_of(Span)["properties"]["length"]
{'type': ['number', 'null'], 'description': 'how long, null when open'}
>>> class Part(Record):
...     share: Annotated[Annotated[float, Bounds(0, 1)] | None, "a share of the time"]
...     ends: Annotated[tuple[Annotated[float, Bounds(0, 1)], ...], "an interval", Bounds(items=2)]
>>> schema_of(Part)["properties"]["share"]
{'type': ['number', 'null'], 'minimum': 0, 'maximum': 1, 'description': 'a share of the time'}
>>> schema_of(Part)["properties"]["ends"]["minItems"]
2
>>> document_of(record_of(Part, {"share": None, "ends": [0.1, 0.2]}))
{'share': None, 'ends': [0.1, 0.2]}
>>> class Stamp(Record):
...     at: Annotated[str | None, "when", Format("date-time")]
>>> schema_of(Stamp)["properties"]["at"]
{'type': ['string', 'null'], 'description': 'when', 'format': 'date-time'}
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    NamedTuple,
    TypeVar,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from ckptcalc.records import Record

if TYPE_CHECKING:
    from ckptcalc.output.schema import Schema

_R = TypeVar("_R", bound=Record)


class Bounds(NamedTuple):
    """The bounds of a number (``minimum``, ``maximum``; ``above`` and ``below``: its exclusive minimum and
    maximum) or the number of an array's items (``items``)."""

    minimum: float | None = None
    maximum: float | None = None
    items: int | None = None
    above: float | None = None
    below: float | None = None

    def schema(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if self.minimum is not None:
            found["minimum"] = self.minimum
        if self.maximum is not None:
            found["maximum"] = self.maximum
        if self.items is not None:
            found.update(minItems=self.items, maxItems=self.items)
        if self.above is not None:
            found["exclusiveMinimum"] = self.above
        if self.below is not None:
            found["exclusiveMaximum"] = self.below
        return found


class Format(NamedTuple):
    """The form of a string (JSON Schema's ``format``: ``date-time`` for ISO 8601)."""

    name: str

    def schema(self) -> dict[str, Any]:
        return {"format": self.name}


#: A share, between 0 and 1.
Share = Annotated[float, Bounds(0, 1)]
#: A number of zero or more (seconds, bytes, counts averaged over runs).
NonNegative = Annotated[float, Bounds(0)]

#: JSON Schema's name of each plain Python type a document holds.
_JSON_TYPES: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}


def document_of(record: Record) -> dict[str, Any]:
    """The record as a document part: its fields in order, nested records as objects."""
    return {name: _value(getattr(record, name)) for name in record._fields}


def record_of(record: type[_R], part: Mapping[str, Any]) -> _R:
    """The record a document part holds, the inverse of :func:`document_of`: nested objects become their
    records and arrays tuples, by the fields' types. A part with a key the record lacks, or without one it
    has, is refused, so that a part built elsewhere and published by ``record`` is all in its schema.

    >>> from typing import Annotated
    >>> class Count(Record):
    ...     n: Annotated[int, "how many"]
    >>> record_of(Count, {"n": 3})
    Count(n=3)
    >>> record_of(Count, {"n": 3, "m": 4})
    Traceback (most recent call last):
    ...
    ValueError: Count has no field m
    """
    fields = record._fields
    unknown, missing = [k for k in part if k not in fields], [k for k in fields if k not in part]
    if unknown or missing:
        problem = f"has no field {', '.join(unknown)}" if unknown else f"needs {', '.join(missing)}"
        raise ValueError(f"{record.__name__} {problem}")
    hints = get_type_hints(record, include_extras=True)
    return record(**{name: _read(hints[name], part[name]) for name in fields})


def _read(hint: Any, value: Any) -> Any:
    """A field's value read from a document part: an object as its record, an array as a tuple."""
    origin = get_origin(hint)
    if value is None:
        return None
    if origin is Annotated:
        return _read(get_args(hint)[0], value)
    if origin in (Union, types.UnionType):
        return _read(next(kind for kind in get_args(hint) if kind is not type(None)), value)
    if origin is tuple:
        return tuple(_read(get_args(hint)[0], item) for item in value)
    if isinstance(hint, type) and issubclass(hint, Record):
        return record_of(hint, value)
    return value


def _value(value: Any) -> Any:
    """A field's value in a document: a record as an object, a tuple as a list."""
    if isinstance(value, Record):
        return document_of(value)
    if isinstance(value, tuple):
        return [_value(item) for item in value]
    return value


def schema_of(record: type[Record], description: str | None = None) -> Schema:
    """The JSON Schema of :func:`document_of`'s parts of ``record``: every field required, in order."""
    from ckptcalc.output.schema import object_schema

    return object_schema(properties_of(record), description)


def properties_of(record: type[Record]) -> dict[str, Schema]:
    """The schema of each of ``record``'s fields, in order: the keys a record adds to a document that holds
    its fields beside others (``{**document_of(part), ...}``).

    >>> from typing import Annotated
    >>> class Count(Record):
    ...     n: Annotated[int, "how many", Bounds(0)]
    >>> properties_of(Count)
    {'n': {'type': 'integer', 'description': 'how many', 'minimum': 0}}
    """
    hints = get_type_hints(record, include_extras=True)
    return {name: _field(hints[name]) for name in record._fields}


def _field(hint: Any) -> Schema:
    """The schema of one annotated field: its type's, with the annotation's words as its description and its
    :class:`Bounds`."""
    more: dict[str, Any] = {}
    if get_origin(hint) is Annotated:
        hint, *notes = get_args(hint)
        for note in notes:
            more.update({"description": note} if isinstance(note, str) else note.schema())
    return {**_type(hint), **more}


def _type(hint: Any) -> Schema:
    """The schema of one type: a plain type, a Literal (an enum), a record (an object), ``tuple[T, ...]`` (an
    array) or ``T | None``."""
    origin = get_origin(hint)
    if origin is Annotated:  # an array's items, bounded
        return _field(hint)
    if origin in (Union, types.UnionType):
        kinds = [kind for kind in get_args(hint) if kind is not type(None)]
        if len(kinds) != 1 or len(get_args(hint)) != 2:
            raise TypeError(f"only T | None is a document's union, not {hint!r}")
        inner = _type(kinds[0])
        if isinstance(inner.get("type"), str) and "enum" not in inner:
            return {**inner, "type": [inner["type"], "null"]}
        return {"oneOf": [{"type": "null"}, inner]}
    if origin is Literal:
        return {"enum": list(get_args(hint))}
    if origin is tuple:
        item, *rest = get_args(hint)
        if rest != [Ellipsis]:
            raise TypeError(f"only tuple[T, ...] is a document's array, not {hint!r}")
        return {"type": "array", "items": _type(item)}
    if isinstance(hint, type) and issubclass(hint, Record):
        return schema_of(hint)
    if hint in _JSON_TYPES:
        return {"type": _JSON_TYPES[hint]}
    raise TypeError(f"no JSON type for {hint!r}")
