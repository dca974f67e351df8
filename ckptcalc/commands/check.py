"""``check``: its Markdown and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ckptcalc.inputs import units
from ckptcalc.mechanisms import registry
from ckptcalc.output import wording

pct = units.format_percent

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas

    row = schemas.object_schema(
        {
            "preset": {"type": "string"},
            "effective": {**schemas.FRACTION, "type": ["number", "null"], "description": "null with an error"},
            "effective_ci95": {"oneOf": [{"type": "null"}, schemas.pair(schemas.FRACTION)]},
            "tested": {"enum": ["point", "low"], "description": "where the floor was tested"},
            "interval_s": {**schemas.MAYBE_SECONDS, "description": "seconds; null with an error"},
            "interval_pinned": {"type": ["boolean", "null"], "description": "null with an error"},
            "min_effective_passed": {
                "type": ["boolean", "null"],
                "description": "the effective time where tested at or above min_effective; null without a floor"
                " or with an error",
            },
            "passed": {"type": "boolean"},
            "error": {
                "type": ["string", "null"],
                "description": "why the preset could not be checked (FILE: key: message); null when it was",
            },
            "model": {
                "enum": ["exact", "approximate", None],
                "description": "whether the effective time is the exact model or contains an approximate form"
                " (docs/model.md §18.2); null where the preset could not be evaluated",
            },
            **registry.checked_schema(),
        }
    )
    return schemas.document(
        "check",
        "ckptcalc check --json",
        {
            "model": {**schemas.HEADLINE_MODEL, "description": "approximate where any preset's is"},
            "min_effective": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "max_silent_risk": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "at": {"enum": ["point", "low"]},
            "results": {"type": "array", "items": row},
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
