"""Typed documents: a part of a ``--json`` document declared once, as a :class:`~ckptcalc.records.Record`
whose fields carry their JSON types and descriptions, from which both the part and its JSON Schema are made
(the schema module is loaded only to publish a schema).

A field is annotated ``Annotated[T, "what it is"]``; ``T`` is ``str``, ``int``, ``float``, ``bool``, a
``Literal`` of strings (an enum), another such record (a nested object), a ``tuple[T, ...]`` of one of them
(an array), or any of them ``| None``.

>>> from typing import Annotated, Literal
>>> class Span(Record):
...     unit: Annotated[Literal["s", "h"], "the unit"]
...     length: Annotated[float | None, "how long, null when open"]
>>> document_of(Span("s", None))
{'unit': 's', 'length': None}
>>> schema_of(Span)["properties"]["length"]
{'type': ['number', 'null'], 'description': 'how long, null when open'}
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from ckptcalc.records import Record

if TYPE_CHECKING:
    from ckptcalc.output.schema import Schema

#: JSON Schema's name of each plain Python type a document holds.
_JSON_TYPES: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}


def document_of(record: Record) -> dict[str, Any]:
    """The record as a document part: its fields in order, nested records as objects."""
    return {name: _value(getattr(record, name)) for name in record._fields}


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

    hints = get_type_hints(record, include_extras=True)
    return object_schema({name: _field(hints[name]) for name in record._fields}, description)


def _field(hint: Any) -> Schema:
    """The schema of one annotated field: its type's, with the annotation's words as its description."""
    words = None
    if get_origin(hint) is Annotated:
        hint, words, *_ = get_args(hint)
    schema = _type(hint)
    return schema if words is None else {**schema, "description": words}


def _type(hint: Any) -> Schema:
    """The schema of one type: a plain type, a Literal (an enum), a record (an object), ``tuple[T, ...]`` (an
    array) or ``T | None``."""
    origin = get_origin(hint)
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
