"""``fit``: its JSON document, its table and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ckptcalc.inputs import units
from ckptcalc.output import documents, wording

if TYPE_CHECKING:
    from ckptcalc.logs.fit import EventLog, FailureFit
    from ckptcalc.output import schema as schemas

dur = units.format_duration
pct = units.format_percent


def document(
    fitted: FailureFit,
    logs: list[str],
    *,
    log: EventLog | None = None,
    where: list[str] | None = None,
    where_any: list[str] | None = None,
    source: str = "log",
    classes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything ``fit --json`` prints: what was read and what was estimated, in SI units; ``classes`` the
    interruptions split by a preset's classes (docs/model.md §20.6; None without any).

    ``time_kind``: ``timestamp`` (window ends in seconds since 1970 UTC) or ``number`` (the log's own zero;
    counts, ``source = "counts"``, start at 0). ``tz`` is the zone naive timestamps were read in, null for
    UTC by default.
    """
    naive = 0 if log is None else log.naive_timestamps
    tz = None if log is None else log.tz
    notes = []
    if naive and tz is None:
        notes.append(wording.naive_as_utc(naive))
    if fitted.coalescing is not None:
        notes.append(wording.near_zero_gaps(fitted.near_zero_gaps, fitted.mtbf.interruptions, fitted.coalesce_s))
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "fit",
        "source": source,
        "logs": logs,
        "where": where or [],
        "where_any": where_any or [],
        "time_kind": "number" if log is None else log.time_kind,
        "time_field": None if log is None else log.time_field,
        "cause_field": None if log is None else log.cause_field,
        "naive_timestamps": naive,
        "tz": tz,
        "reading": None
        if log is None
        else documents.reading(
            files=log.files,
            format=log.format,
            read=log.read,
            used=log.kept,
            ignored=log.ignored,
            filtered=log.filtered,
            skipped_bad=log.skipped_bad,
            bad=log.bad,
            notes=log.notes,
            year_from=log.year_from,
        ),
        **_with_classes(fitted.to_dict(), classes),
        "interruptions_note": None if log is None else _interruptions_note(fitted),
        "warnings": notes,
    }


def _with_classes(found: dict[str, Any], classes: dict[str, Any] | None) -> dict[str, Any]:
    """The fit's keys with ``classes`` after its ``causes``."""
    placed: dict[str, Any] = {}
    for key, value in found.items():
        placed[key] = value
        if key == "causes":
            placed["classes"] = classes
    return placed


def _interruptions_note(fitted: FailureFit) -> str | None:
    """Why the interruptions counted are fewer than the events kept: those outside the window, those
    coalesced, and an interruption at the window's start (it only starts the clock)."""
    return wording.interruptions_counted(
        fitted.events_kept,
        fitted.events_outside_window,
        fitted.events_coalesced,
        fitted.interruptions_at_start,
        fitted.mtbf.interruptions,
    )


#: The most causes ``fit``'s table lists, the most frequent first; the rest share one row.
CAUSE_ROWS = 20


def table(document: dict[str, Any]) -> None:
    """The fitted failure process: counts, MTBF with its interval, the Weibull shape, causes, gaps."""
    from rich.text import Text

    from ckptcalc.output import tables

    out = tables.console()
    out.print(Text(wording.fit_title(document), style="bold"))
    if document["source"] == "log":
        table = tables.grid("Events", tables.narrow(out))
        table.show_header = False
        table.add_column("", no_wrap=True)
        table.add_column("", justify="right", no_wrap=True)
        note = document.get("interruptions_note")
        if note:
            table.add_column("", overflow="fold")  # why fewer interruptions than events kept
        table.add_row("read", f"{document['events_read']}")
        table.add_row("kept", f"{document['events_kept']}")
        if document["skipped_bad"]:
            table.add_row("bad rows skipped", f"{document['skipped_bad']}")
        if document["naive_timestamps"]:
            table.add_row("naive timestamps", wording.naive_timestamps(document))
        for what, count in wording.inference_rows(document["reading"], skip=("naive_timestamps",)):
            table.add_row(what, count)
        table.add_row("interruptions", f"{document['interruptions']}", *([note] if note else []))
        table.add_row("window", dur(document["window_s"]) if document["window_s"] else "-")
        out.print(table)
        out.print()
    low, high = document["mtbf_ci95"]
    if document["mtbf_s"] is None:
        out.print(Text(f"MTBF: no interruption; at least {_bound(low, '-')} (95 % one-sided)", style="bold"))
    else:
        interval = f"{_bound(low, '-')} to {_bound(high, '∞')}"
        out.print(Text(f"MTBF: {dur(document['mtbf_s'])}  (95 %: {interval})", style="bold"))
    if document["gpu_mtbf_s"] is not None:
        g_low, g_high = document["gpu_mtbf_ci95"]
        out.print(f"per GPU: {dur(document['gpu_mtbf_s'])}  (95 %: {_bound(g_low, '-')} to {_bound(g_high, '∞')})")
    weibull = document["weibull"]
    if weibull is not None:
        k_low, k_high = weibull["shape_ci95"]
        interval = f"{units.sig(k_low)} to {units.sig(k_high)}" if k_low is not None and k_high is not None else "-"
        out.print(
            f"Weibull shape k = {units.sig(weibull['shape'])} (95 %: {interval}),"
            f" scale {dur(weibull['scale_s'])}; test of k = 1: {wording.p_value(weibull)}"
        )
        out.print(wording.weibull_verdict(weibull["verdict"]))
    out.print()
    if document["coalescing"] is not None:
        table = tables.grid(wording.COALESCING_TITLE, tables.narrow(out))
        for name in ("coalesce", "interruptions", "MTBF", "k", "verdict"):
            table.add_column(name, justify="left" if name in ("coalesce", "verdict") else "right", no_wrap=True)
        for row in document["coalescing"]:
            table.add_row(*wording.coalescing_row(row, document["coalesce_s"]))
        out.print(table)
        out.print()
    if document["causes"]:
        causes = tables.grid("Causes", tables.narrow(out))
        causes.add_column("cause", overflow="fold")
        causes.add_column("count", justify="right", no_wrap=True)
        causes.add_column("share", justify="right", no_wrap=True)
        shown, rest = document["causes"][:CAUSE_ROWS], document["causes"][CAUSE_ROWS:]
        for row in shown:
            causes.add_row(row["cause"], f"{row['count']}", pct(row["share"]))
        if rest:  # a log of a million distinct causes (an Xid line with its pid each) prints its most frequent
            more = sum(row["count"] for row in rest), sum(row["share"] for row in rest)
            causes.add_row(f"{len(rest):,} more causes (--json gives each)", f"{more[0]}", pct(more[1]))
        out.print(causes)
        out.print()
    if document["classes"] is not None:
        class_table(out, document["classes"], tables.narrow(out))
        out.print()
    from ckptcalc.commands.optimize import figure_table
    from ckptcalc.mechanisms import registry

    for title, _, rows in registry.figure_tables(document, wording.SHOW):  # a log's repairs (docs/model.md §22)
        out.print(figure_table(title, rows, tables.narrow(out)))
        out.print()
    histogram = document["histogram"]
    if histogram["counts"]:
        chart = tables.grid("Gaps between interruptions", tables.narrow(out))
        chart.add_column("gap", justify="right", no_wrap=True)
        chart.add_column("count", justify="right", no_wrap=True)
        chart.add_column("", no_wrap=True)
        top = max(histogram["counts"]) or 1
        edges = histogram["edges_s"]
        width = max(4, min(40, out.width - 30))
        for i, count in enumerate(histogram["counts"]):
            chart.add_row(f"{dur(edges[i])}–{dur(edges[i + 1])}", f"{count}", "█" * round(count / top * width))
        out.print(chart)
    tables.warn(document["warnings"])


def class_table(out: Any, part: dict[str, Any], narrow: bool) -> None:
    """A log's failures split by class (docs/model.md §20.6): ``analyze``'s and ``fit``'s table."""
    from ckptcalc.output import tables

    table = tables.grid(wording.class_split_title(part), narrow)
    for name in wording.class_split_header(part):
        table.add_column(name, justify="left" if name == "class" else "right", overflow="fold")
    for row in wording.class_split_rows(part):
        table.add_row(*row)
    out.print(table)
    note = wording.class_split_note(part)
    if note is not None:
        out.print(note)


def class_markdown(part: dict[str, Any] | None) -> list[str]:
    """A log's failures split by class as Markdown lines (none without a split)."""
    from ckptcalc.output import markdown as md

    if part is None:
        return []
    note = wording.class_split_note(part)
    return ["", f"**{md.inline(wording.class_split_title(part))}**", "",
            *md.table(wording.class_split_header(part), wording.class_split_rows(part)),
            *(["", md.inline(note)] if note is not None else [])]  # fmt: skip


def _bound(value: float | None, missing: str) -> str:
    """A bound of an interval, or ``missing`` where the document has none (an upper bound that does not
    exist, or one too large for a double: times near 1e308)."""
    return missing if value is None else dur(value)


def schema() -> schemas.Schema:
    from ckptcalc.logs import classes
    from ckptcalc.mechanisms import registry
    from ckptcalc.output import schema as schemas

    maybe_pair = {
        "oneOf": [{"type": "array", "items": schemas.MAYBE_SECONDS, "minItems": 2, "maxItems": 2}, {"type": "null"}]
    }
    weibull = schemas.object_schema(
        {
            "shape": {"type": "number", "exclusiveMinimum": 0},
            "shape_ci95": {"type": "array", "items": schemas.MAYBE_NUMBER, "minItems": 2, "maxItems": 2},
            "scale_s": schemas.SECONDS,
            "mean_s": schemas.MAYBE_SECONDS,  # null where Γ(1 + 1/k) overflows a double (k near 0)
            "lr_statistic": {"type": "number", "minimum": 0},
            "p_value": schemas.FRACTION,
            "p_value_underflow": {"type": "boolean", "description": "p < 1e-300; p_value is then 0.0"},
            "verdict": {"enum": ["exponential", "clustered", "wear_out"]},
        },
        "Weibull fit of the gaps (the time to the window's end censored)",
    )
    coalescing_row = schemas.object_schema(
        {
            "coalesce_s": schemas.SECONDS,
            "interruptions": {"type": "integer", "minimum": 0},
            "mtbf_s": schemas.MAYBE_SECONDS,
            "shape": {"type": ["number", "null"], "exclusiveMinimum": 0},
            "verdict": {"enum": ["exponential", "clustered", "wear_out", None]},
        }
    )
    maybe_text = {"type": ["string", "null"]}
    cause = schemas.object_schema(
        {"cause": {"type": "string"}, "count": {"type": "integer", "minimum": 0}, "share": schemas.FRACTION}
    )
    return schemas.document(
        "fit",
        "ckptcalc fit --json",
        {
            "source": {"enum": ["log", "counts"], "description": "logs read, or --failures counted in --window"},
            "logs": {"type": "array", "items": {"type": "string"}},
            "where": {"type": "array", "items": {"type": "string"}},
            "where_any": {"type": "array", "items": {"type": "string"}},
            "time_kind": {"enum": ["timestamp", "number"]},
            "time_field": maybe_text,
            "cause_field": maybe_text,
            "naive_timestamps": {"type": "integer", "minimum": 0},
            "tz": {**maybe_text, "description": "the zone naive timestamps were read in; null: UTC, none given"},
            "reading": {"oneOf": [{"type": "null"}, schemas.reading()], "description": "null: counts, no log"},
            "events_read": {"type": "integer", "minimum": 0},
            "events_kept": {"type": "integer", "minimum": 0},
            "skipped_bad": {"type": "integer", "minimum": 0},
            "interruptions": {"type": "integer", "minimum": 0},
            "interruptions_note": {
                **maybe_text,
                "description": "why fewer interruptions are counted than events kept (outside the window,"
                " coalesced, the first opening the window); null when as many, or for counts",
            },
            "window_start_s": schemas.MAYBE_NUMBER,
            "window_end_s": schemas.MAYBE_NUMBER,
            "window_s": schemas.MAYBE_SECONDS,
            "mtbf_s": schemas.MAYBE_SECONDS,
            "mtbf_ci95": {"type": "array", "items": schemas.MAYBE_SECONDS, "minItems": 2, "maxItems": 2},
            "mtbf_lower_bound_s": schemas.MAYBE_SECONDS,
            "gpu_mtbf_s": schemas.MAYBE_SECONDS,
            "gpu_mtbf_ci95": maybe_pair,
            "weibull": {"oneOf": [weibull, {"type": "null"}]},
            "causes": {"type": "array", "items": cause},
            "classes": classes.schema(),
            "histogram": schemas.object_schema(
                {
                    "edges_s": {"type": "array", "items": schemas.SECONDS},
                    "counts": {"type": "array", "items": {"type": "integer"}},
                }
            ),
            "near_zero_gaps": {"type": "integer", "minimum": 0, "description": "gaps under 1 min"},
            "coalescing": {
                "oneOf": [{"type": "array", "items": coalescing_row}, {"type": "null"}],
                "description": "the fit at 0, 1, 5 and 30 min of coalescing (and the window used), when at"
                " least 10 % of the gaps are under 1 min; null otherwise",
            },
            **registry.incident_log_schema(),
            "warnings": schemas.WARNINGS,
        },
    )
