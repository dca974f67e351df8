"""``presets list``: its table and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ckptcalc.output import wording

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas

    pass


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

    row = schemas.object_schema(
        {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "path": {"type": "string"},
            "title": {"type": "string", "description": "the preset's own name key; the file's stem where it has none"},
        }
    )
    return schemas.document(
        "presets list", "ckptcalc presets list --json", {"presets": {"type": "array", "items": row}}
    )
