"""Typed documents (ckptcalc.output.typed): a document part and its schema made from one record type."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from jsonschema import Draft202012Validator

from ckptcalc.commands.optimize import BreakEvenPart
from ckptcalc.output.typed import document_of, schema_of
from ckptcalc.records import Record

#: The break-even's schema as it was written by hand before it was made from BreakEvenPart.
HAND_WRITTEN = {
    "type": "object",
    "properties": {
        "key": {"type": "string", "description": "the input the lever turns on"},
        "value": {"type": "number", "description": "that input's value where the lever's gain is zero, in SI units"},
        "unit": {
            "enum": ["fraction", "duration", "rate"],
            "description": "the value's unit kind: fraction (0 to 1), duration (seconds), rate (bytes per second)",
        },
        "pays": {"enum": ["above", "below"], "description": "on which side of the value the lever pays"},
    },
    "required": ["key", "value", "unit", "pays"],
    "description": "where a lever with a cost starts to pay; null for a lever without one",
}


def test_the_generated_schema_is_the_hand_written_one() -> None:
    generated = schema_of(BreakEvenPart, HAND_WRITTEN["description"])  # type: ignore[arg-type]
    assert generated == HAND_WRITTEN
    assert list(generated) == list(HAND_WRITTEN)  # the same key order, so `ckptcalc schema` prints the same


def test_the_part_validates_against_its_schema() -> None:
    part = document_of(BreakEvenPart("restart", 300.0, "duration", "below"))
    assert part == {"key": "restart", "value": 300.0, "unit": "duration", "pays": "below"}
    Draft202012Validator(schema_of(BreakEvenPart)).validate(part)
    with pytest.raises(Exception, match="is not one of"):
        Draft202012Validator(schema_of(BreakEvenPart)).validate({**part, "pays": "sideways"})


class _Inner(Record):
    n: Annotated[int, "a count"]


class _Outer(Record):
    flag: bool
    kind: Literal["a", "b"] | None
    inner: Annotated[_Inner | None, "nested"]


def test_each_type_maps_to_its_json_type() -> None:
    properties = schema_of(_Outer)["properties"]
    assert properties == {
        "flag": {"type": "boolean"},
        "kind": {"oneOf": [{"type": "null"}, {"enum": ["a", "b"]}]},
        "inner": {  # an object or null, as the project's other optional objects (MAYBE_STORAGE)
            "type": ["object", "null"],
            "properties": {"n": {"type": "integer", "description": "a count"}},
            "required": ["n"],
            "description": "nested",
        },
    }
    assert document_of(_Outer(True, None, _Inner(3))) == {"flag": True, "kind": None, "inner": {"n": 3}}


class _Unpublishable(Record):
    items: list[int]


def test_a_type_without_a_json_form_is_refused() -> None:
    with pytest.raises(TypeError, match="no JSON type"):
        schema_of(_Unpublishable)
