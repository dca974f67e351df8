"""``presets list``: its table and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from ckptcalc.output import wording
from ckptcalc.records import Record

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas


class PresetRow(Record):
    """One preset of ``presets list --json``: its schema is made from these fields, and every row the list
    holds is read back as one (:func:`ckptcalc.output.typed.record_of`) in the tests."""

    name: Annotated[str, "the name the preset is found by (its file's stem)"]
    description: Annotated[str, "one line saying what the preset is"]
    path: Annotated[str, "the preset's TOML file"]
    title: Annotated[str, "the preset's own name key; the file's stem where it has none"]


def table(rows: list[dict[str, Any]]) -> None:
    """One row per preset found: its name and description (the ``presets`` of ``presets list --json``)."""
    from ckptcalc.output import tables

    out = tables.console()
    table = tables.grid()
    table.add_column("name", no_wrap=True)
    table.add_column("description", overflow="fold")
    for info in rows:
        title = info.get("title") or info["name"]
        described = info["description"] if title == info["name"] else wording.titled(title, info["description"])
        table.add_row(info["name"], described)
    out.print(table)


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import schema_of

    row = schema_of(PresetRow)
    return schemas.document(
        "presets list", "ckptcalc presets list --json", {"presets": {"type": "array", "items": row}}
    )
