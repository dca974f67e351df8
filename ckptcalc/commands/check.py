"""``check``: its Markdown and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from ckptcalc.inputs import units
from ckptcalc.mechanisms import registry
from ckptcalc.output import wording
from ckptcalc.output.typed import Bounds
from ckptcalc.records import Record

pct = units.format_percent

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas

#: A share of time, between 0 and 1.
Share = Annotated[float, Bounds(0, 1)]
#: Where a floor is tested: the point value, or the low end of the effective time's interval.
Tested = Literal["point", "low"]


def where_tested(at: str, interval: bool) -> Tested:
    """Where a preset's floor is tested when ``at`` is asked: the low end only where the preset has an
    ``interval`` of its effective time (docs/model.md §9.3), the point otherwise.

    >>> where_tested("low", True), where_tested("low", False), where_tested("point", True)
    ('low', 'point', 'point')
    """
    return "low" if at == "low" and interval else "point"


class CheckRow(Record):
    """One preset's row of ``check``: its JSON and its schema are made from these fields (each failure
    class's verdict, :func:`ckptcalc.mechanisms.registry.checked`, follows them)."""

    preset: Annotated[str | None, "the preset as named; null for a scenario of the Python API without a name"]
    effective: Annotated[Share | None, "the effective time at the interval checked; null with an error"]
    effective_ci95: Annotated[
        tuple[Share | None, ...] | None,
        "the effective time's 95 % interval from the preset's MTBF interval; null without one",
        Bounds(items=2),
    ]
    tested: Annotated[Tested, "where the floor was tested"]
    interval_s: Annotated[float | None, "seconds; null with an error", Bounds(0)]
    interval_pinned: Annotated[bool | None, "whether the preset pins its interval; null with an error"]
    min_effective_passed: Annotated[
        bool | None,
        "the effective time where tested at or above min_effective; null without a floor or with an error",
    ]
    passed: Annotated[bool, "every bound given holds"]
    error: Annotated[str | None, "why the preset could not be checked (FILE: key: message); null when it was"]
    model: Annotated[
        Literal["exact", "approximate"] | None,
        "whether the effective time is the exact model or contains an approximate form (docs/model.md §18.2);"
        " null where the preset could not be evaluated",
    ]

    @classmethod
    def failed(cls, preset: str | None, tested: Tested, error: str) -> CheckRow:
        """The row of a preset that could not be checked."""
        return cls(preset, None, None, tested, None, None, None, False, error, None)


def row(found: CheckRow, verdicts: dict[str, Any]) -> dict[str, Any]:
    """A row of ``check --json``: the record's fields, then each failure class's verdict."""
    from ckptcalc.output.typed import document_of

    return {**document_of(found), **verdicts}


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import schema_of

    made = schema_of(CheckRow)
    extra = registry.checked_schema()
    own: dict[str, Any] = made["properties"]  # type: ignore[assignment]
    required: list[str] = made["required"]  # type: ignore[assignment]
    rows = {**made, "properties": {**own, **extra}, "required": [*required, *extra]}
    return schemas.document(
        "check",
        "ckptcalc check --json",
        {
            "model": {**schemas.HEADLINE_MODEL, "description": "approximate where any preset's is"},
            "min_effective": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "max_silent_risk": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "at": {"enum": ["point", "low"]},
            "results": {"type": "array", "items": rows},
            "passed": {"type": "boolean"},
            "warnings": schemas.WARNINGS,
        },
    )


def markdown(doc: dict[str, Any]) -> list[str]:
    from ckptcalc.output import markdown as md

    floor = "-" if doc["min_effective"] is None else pct(doc["min_effective"])
    silent = None if doc.get("max_silent_risk") is None else pct(doc["max_silent_risk"])
    lines = ["## " + md.inline(wording.markdown_check_title(floor, silent)), ""]
    return [*lines, *md.table(
        ["preset", "effective", "tested at", "result"],
        [
            [r["preset"], "-" if r["effective"] is None else pct(r["effective"]), r["tested"],
             "error: " + r["error"] if r["error"] else ("pass" if r["passed"] else "FAIL")]
            for r in doc["results"]
        ],
    )]  # fmt: skip
