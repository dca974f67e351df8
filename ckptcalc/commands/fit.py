"""``fit``: its JSON document, its table and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from ckptcalc.inputs import units
from ckptcalc.output import documents, wording
from ckptcalc.output.typed import Bounds, NonNegative, Share
from ckptcalc.records import Record

if TYPE_CHECKING:
    from ckptcalc.logs.fit import EventLog, FailureFit
    from ckptcalc.output import schema as schemas

dur = units.format_duration
pct = units.format_percent

#: What the Weibull fit says of the failures (docs/fit.md §7).
Verdict = Literal["exponential", "clustered", "wear_out"]
#: A count of zero or more.
Count = Annotated[int, Bounds(0)]
#: A duration or a time of zero or more, seconds; null where absent or not finite.
MaybeSeconds = NonNegative | None
#: A pair of seconds, [low, high] of a 95 % interval; an end null where there is none.
SecondsPair = Annotated[tuple[MaybeSeconds, ...], Bounds(items=2)]
#: A Weibull shape: above 0.
Shape = Annotated[float, Bounds(above=0)]


class FitRead(Record):
    """What ``fit --json`` read, before the reading itself: its JSON and its schema are made from these
    fields."""

    source: Annotated[Literal["log", "counts"], "logs read, or --failures counted in --window"]
    logs: Annotated[tuple[str, ...], "the logs read, as named"]
    where: Annotated[tuple[str, ...], "the --where conditions every event kept meets"]
    where_any: Annotated[tuple[str, ...], "the --where-any conditions, one of which every event kept meets"]
    time_kind: Annotated[
        Literal["timestamp", "number"],
        "timestamp: the window's ends in seconds since 1970 UTC; number: from the log's own zero (counts: 0)",
    ]
    time_field: Annotated[str | None, "the field the times were read from; null for counts"]
    cause_field: Annotated[str | None, "the field the causes were read from; null without one"]
    naive_timestamps: Annotated[Count, "timestamps read without a zone"]
    tz: Annotated[str | None, "the zone naive timestamps were read in; null: UTC, none given"]


class WeibullPart(Record):
    """The Weibull fit of the gaps (docs/fit.md §7)."""

    shape: Annotated[Shape, "the shape k"]
    shape_ci95: Annotated[
        tuple[float | None, ...], "k's 95 % interval; an end null where there is none", Bounds(items=2)
    ]
    scale_s: Annotated[NonNegative, "the scale, seconds"]
    mean_s: Annotated[MaybeSeconds, "the mean gap; null where Γ(1 + 1/k) overflows a double (k near 0)"]
    lr_statistic: Annotated[NonNegative, "the likelihood-ratio statistic of the test of k = 1"]
    p_value: Annotated[Share, "the test's p-value"]
    p_value_underflow: Annotated[bool, "p < 1e-300; p_value is then 0.0"]
    verdict: Annotated[Verdict, "exponential unless the test rejects k = 1; then clustered (k < 1) or wear_out"]
    gaps: Annotated[Count, "the gaps fitted"]
    censored_s: Annotated[MaybeSeconds, "the time from the last interruption to the window's end, censored"]


class CausePart(Record):
    """One cause of the interruptions counted."""

    cause: Annotated[str, "the cause as the log names it"]
    count: Annotated[Count, "interruptions of this cause"]
    share: Annotated[Share, "its share of the interruptions"]


class FitEstimate(Record):
    """What ``fit --json`` estimated, up to the causes: its JSON and its schema are made from these fields
    (docs/fit.md §10)."""

    events_read: Annotated[Count, "events read"]
    events_kept: Annotated[Count, "events the conditions kept"]
    skipped_bad: Annotated[Count, "malformed rows skipped (--skip-bad)"]
    events_outside_window: Annotated[Count, "events kept outside the window"]
    events_coalesced: Annotated[Count, "events merged into an interruption before them (--coalesce)"]
    coalesce_s: Annotated[MaybeSeconds, "the coalescing window, seconds"]
    interruptions: Annotated[Count, "the interruptions counted (n)"]
    window_start_s: Annotated[float | None, "the window's start (see time_kind)"]
    window_end_s: Annotated[float | None, "the window's end (see time_kind)"]
    window_s: Annotated[MaybeSeconds, "the window's length"]
    mtbf_s: Annotated[MaybeSeconds, "window / interruptions; null without an interruption"]
    mtbf_ci95: Annotated[SecondsPair, "the MTBF's exact 95 % interval; [low, null] without an interruption"]
    mtbf_lower_bound_s: Annotated[MaybeSeconds, "the MTBF's one-sided 95 % lower bound"]
    observed_gpus: Annotated[NonNegative | None, "the GPUs the log covers (--observed-gpus); null otherwise"]
    gpu_mtbf_s: Annotated[MaybeSeconds, "the per-GPU MTBF; null without --observed-gpus"]
    gpu_mtbf_ci95: Annotated[SecondsPair | None, "its 95 % interval; null without --observed-gpus"]
    weibull: Annotated[
        WeibullPart | None, "the Weibull fit of the gaps (the time to the window's end censored); null without"
    ]
    weibull_reason: Annotated[
        Literal["too_few_gaps", "no_finite_estimate", "counts_only"] | None,
        "why there is no Weibull fit: fewer than two gaps, all gaps equal, or counts; null with one",
    ]
    causes: Annotated[tuple[CausePart, ...], "the interruptions by cause, the most frequent first"]


class HistogramPart(Record):
    """The gaps between interruptions, counted in bins."""

    edges_s: Annotated[tuple[NonNegative, ...], "the bins' edges, seconds (one more than the counts)"]
    counts: Annotated[tuple[Count, ...], "the gaps in each bin"]


class CoalescingRow(Record):
    """The fit at one coalescing window (docs/fit.md §2)."""

    coalesce_s: Annotated[NonNegative, "the coalescing window, seconds"]
    interruptions: Annotated[Count, "the interruptions counted"]
    mtbf_s: Annotated[MaybeSeconds, "the MTBF"]
    shape: Annotated[Shape | None, "the Weibull shape; null without a fit"]
    verdict: Annotated[Verdict | None, "the Weibull fit's verdict; null without a fit"]


class FitGaps(Record):
    """What ``fit --json`` says of the gaps, after the causes and classes: its JSON and its schema are made
    from these fields."""

    histogram: Annotated[HistogramPart, "the gaps between interruptions"]
    near_zero_gaps: Annotated[Count, "gaps under 1 min"]
    coalescing: Annotated[
        tuple[CoalescingRow, ...] | None,
        "the fit at 0, 1, 5 and 30 min of coalescing (and the window used), when at least 10 % of the gaps are"
        " under 1 min; null otherwise",
    ]
    interruptions_note: Annotated[
        str | None,
        "why fewer interruptions are counted than events kept (outside the window, coalesced, the first opening"
        " the window); null when as many, or for counts",
    ]


def document(
    fitted: FailureFit,
    logs: list[str],
    *,
    log: EventLog | None = None,
    where: list[str] | None = None,
    where_any: list[str] | None = None,
    source: Literal["log", "counts"] = "log",
    classes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything ``fit --json`` prints: what was read and what was estimated, in SI units; ``classes`` the
    interruptions split by a preset's classes (docs/model.md §20.6; None without any).

    ``time_kind``: ``timestamp`` (window ends in seconds since 1970 UTC) or ``number`` (the log's own zero;
    counts, ``source = "counts"``, start at 0). ``tz`` is the zone naive timestamps were read in, null for
    UTC by default.
    """
    from ckptcalc.output.typed import document_of, record_of

    naive = 0 if log is None else log.naive_timestamps
    tz = None if log is None else log.tz
    notes = []
    if naive and tz is None:
        notes.append(wording.naive_as_utc(naive))
    if fitted.coalescing is not None:
        notes.append(wording.near_zero_gaps(fitted.near_zero_gaps, fitted.mtbf.interruptions, fitted.coalesce_s))
    read = FitRead(
        source=source,
        logs=tuple(logs),
        where=tuple(where or ()),
        where_any=tuple(where_any or ()),
        time_kind="number" if log is None else log.time_kind,
        time_field=None if log is None else log.time_field,
        cause_field=None if log is None else log.cause_field,
        naive_timestamps=naive,
        tz=tz,
    )
    found = fitted.to_dict()
    estimate = record_of(FitEstimate, {key: found.pop(key) for key in FitEstimate._fields})
    gaps = record_of(FitGaps, {**found, "interruptions_note": None if log is None else _interruptions_note(fitted)})
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "fit",
        **document_of(read),
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
        **document_of(estimate),
        "classes": classes,
        **document_of(gaps),
        "warnings": notes,
    }


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
    from ckptcalc.output.typed import properties_of

    return schemas.document(
        "fit",
        "ckptcalc fit --json",
        {
            **properties_of(FitRead),
            "reading": {"oneOf": [{"type": "null"}, schemas.reading()], "description": "null: counts, no log"},
            **properties_of(FitEstimate),
            "classes": classes.schema(),
            **properties_of(FitGaps),
            **registry.incident_log_schema(),
            "warnings": schemas.WARNINGS,
        },
    )
