"""Every command's schema by name, and the Markdown of the commands that have it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ckptcalc.commands import analyze, check, compare, events, fit, optimize, plan, presets, simulate, sweep
from ckptcalc.output.documents import SCHEMA_VERSION

SCHEMAS = {
    "optimize": optimize.schema,
    "sweep": sweep.schema,
    "compare": compare.schema,
    "simulate": simulate.schema,
    "check": check.schema,
    "presets-list": presets.schema,
    "fit": fit.schema,
    "plan": plan.schema,
    "analyze": analyze.schema,
    "events": events.schema,
    "event": events.event_schema,
}

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas


def for_command(command: str) -> schemas.Schema:
    """The schema of one command's ``--json`` output (``presets list`` is ``presets-list``)."""
    return SCHEMAS[command.replace(" ", "-")]()


def everything() -> schemas.Schema:
    """All schemas in one document, under ``$defs``, keyed by command."""
    from ckptcalc.output import schema as schemas

    return {
        "$schema": schemas.DRAFT,
        "$id": f"ckptcalc:all:v{SCHEMA_VERSION}",
        "title": "ckptcalc --json documents",
        "$defs": {name: build() for name, build in SCHEMAS.items()},
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in SCHEMAS if name != "event"],
    }


def markdown(doc: dict[str, Any]) -> str:
    """``--markdown`` of optimize, compare, check and sweep: GitHub-flavoured tables for reviews."""
    from ckptcalc.output import markdown as md

    command = doc["command"]
    writers: dict[str, Callable[[dict[str, Any]], list[str]]] = {
        "optimize": optimize.markdown,
        "compare": compare.markdown,
        "check": check.markdown,
        "sweep": sweep.markdown,
    }
    if command not in writers:  # pragma: no cover - the command line offers --markdown on these only
        raise ValueError(f"no Markdown for {command}")
    lines = writers[command](doc)
    lines.extend(md.quotes("warning: ", doc.get("warnings", [])))
    return md.finished(lines)
