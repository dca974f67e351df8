"""``analyze``: its JSON document, its table, its Markdown and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from ckptcalc.inputs import units
from ckptcalc.mechanisms import registry
from ckptcalc.model.statistics import part_of
from ckptcalc.output import documents, wording
from ckptcalc.output.typed import Bounds, NonNegative, Share
from ckptcalc.records import Record

if TYPE_CHECKING:
    from rich.console import Console

    from ckptcalc.logs.analyze import Analysis
    from ckptcalc.logs.fit import FailureFit
    from ckptcalc.output import schema as schemas

dur = units.format_duration
pct = units.format_percent


def _own(split: Any) -> dict[str, float]:
    """The mechanisms' parts of a realised split (``log_split_keys``), 0 where the log has none of their events."""
    return {key: split.own.get(key, 0.0) for key, _ in registry.log_split_keys()}


#: A figure that is measured only where the log shows it: seconds, null without.
MaybeSeconds = Annotated[NonNegative | None, "seconds; null where the log shows none"]


class AnalyzedLines(Record):
    """How many of the log's lines ``analyze`` read and used."""

    read: Annotated[int, "lines read", Bounds(0)]
    used: Annotated[int, "lines used as events", Bounds(0)]
    unknown_events: Annotated[int, "events of a kind not known, skipped", Bounds(0)]
    skipped_bad: Annotated[int, "bad lines skipped (--skip-bad)", Bounds(0)]
    progress: Annotated[int, "progress events (the steps reached)", Bounds(0)]


class AnalyzedLog(Record):
    """What ``analyze --json`` read: its JSON and its schema are made from these fields (the log's reading,
    shared with ``events``, follows them)."""

    log: Annotated[str, "the logs read, comma-separated"]
    time_kind: Annotated[Literal["timestamp", "number"], "the log's times: timestamps, or numbers in --time-unit"]
    lines: Annotated[AnalyzedLines, "the log's lines"]


class AnalyzedSpan(Record):
    """The run's span in the ``analyze`` document."""

    start_s: Annotated[float, "the run's first event, seconds from the log's zero"]
    end_s: Annotated[float, "the run's last event, seconds from the log's zero"]
    wall_s: Annotated[NonNegative, "the run's wall time, seconds"]


class RealisedLosses(Record):
    """The realised split's own shares, before the mechanisms' parts (``log_split_keys``)."""

    useful: Annotated[Share, "work kept"]
    write: Annotated[Share, "checkpoint stalls"]
    rework: Annotated[Share, "work lost to failures, done again"]
    restart: Annotated[Share, "restarts"]


class RealisedOutcome(Record):
    """The realised split's shares after the mechanisms' parts, and what the run got."""

    silent: Annotated[
        Share,
        "kept work lost to silent events: rolled back past (to the detection) and skipped, less what is stall,"
        " restart or rework already",
    ]
    effective: Annotated[Share, "the effective time: the work kept"]
    effective_ci95: Annotated[tuple[float, ...], "its 95 % confidence interval", Bounds(items=2)]
    goodput: Annotated[Share, "the effective time less the discarded share (--discard)"]


#: What the realised split's schema says of the whole.
REALISED = "shares of the run's wall time (useful + write + rework + restart + the groups' three + silent = 1)"


class MeasuredLevel(Record):
    """One checkpoint level the log shows, in ``measured.levels``."""

    name: Annotated[str, "memory, storage, or a tier's name"]
    checkpoints: Annotated[int, "checkpoints written at this level", Bounds(1)]
    write_s: Annotated[NonNegative, "the mean stall of a checkpoint, seconds"]
    write_p90_s: Annotated[NonNegative, "its 90th percentile, seconds"]
    persist_s: Annotated[MaybeSeconds, "the mean persist of an asynchronous checkpoint; null without"]
    restarts: Annotated[int, "restarts that loaded this level", Bounds(0)]
    restart_s: Annotated[MaybeSeconds, "their mean restart, seconds; null without"]


#: The figures of ``measured`` that are not exact, in words.
APPROXIMATE = (
    "the figures that are not exact: quantiles read from a KLL sketch, past 1e5 values of a quantity (interval_s,"
    " restart_p90_s, LEVEL.write_p90_s), and, past 1e5 checkpoints, effective_ci95 (and with it the model's"
    " agrees) and windows where an edge fell in a folded block (empty: every one exact)"
)


class MeasuredFigures(Record):
    """What ``analyze`` measured in the log, before the mechanisms' entries and parts: its JSON and its schema
    are made from these fields (``mtbf_ci95``'s schema keeps its pair of a number and a number or null)."""

    write_s: Annotated[MaybeSeconds, "the storage checkpoints' mean stall"]
    write_p90_s: Annotated[MaybeSeconds, "their 90th percentile"]
    restart_s: Annotated[MaybeSeconds, "the mean restart"]
    restart_p90_s: Annotated[MaybeSeconds, "its 90th percentile"]
    restarts: Annotated[int, "restarts measured", Bounds(0)]
    interval_s: Annotated[MaybeSeconds, "the median work between two checkpoints (the memory interval with two levels)"]
    storage_every: Annotated[
        int | None, "with a memory level beside storage: checkpoints per storage checkpoint; null without", Bounds(1)
    ]
    memory_share: Annotated[
        Share | None, "the share of restarts resumed from memory; null without a memory level or restarts"
    ]
    approximate: Annotated[tuple[str, ...], APPROXIMATE]
    failures: Annotated[int, "failures", Bounds(0)]
    mtbf_s: Annotated[MaybeSeconds, "the MTBF fitted to the failures"]
    mtbf_ci95: Annotated[tuple[NonNegative | None, ...], "its 95 % confidence interval", Bounds(items=2)]
    shape: Annotated[float | None, "the Weibull shape fitted to the gaps between failures; null with too few"]
    shape_p_value: Annotated[float | None, "the p-value of an exponential fit against it; null with too few"]
    levels: Annotated[tuple[MeasuredLevel, ...], "each checkpoint level the log shows"]


class AnalyzedModel(Record):
    """The exact model at the measured inputs, before the running shares' parts: read from what the model
    at the log returns (:func:`ckptcalc.output.typed.record_of`), so it holds no key its schema leaves out."""

    effective_at_interval: Annotated[Share, "the effective time at the interval the run used"]
    difference_pp: Annotated[float, "the realised effective time less it, in percentage points"]
    agrees: Annotated[bool, "whether it lies within the realised effective time's 95 % interval"]
    optimal_interval_s: Annotated[NonNegative, "the optimal storage interval, seconds"]
    optimal_memory_interval_s: Annotated[MaybeSeconds, "the optimal memory interval; null with one level"]
    optimal_effective: Annotated[Share, "the effective time at the optimal interval"]
    robust_interval_s: Annotated[NonNegative, "the interval robust to the MTBF's uncertainty, seconds"]
    gain_pp: Annotated[float, "the optimal effective time less the one at the interval used, in pp"]
    gain_gpu_hours: Annotated[float | None, "that gain over the run in GPU-hours; null without --gpus"]
    model: Annotated[Literal["exact", "approximate"], "whether the model is exact or approximate"]


#: What the model's schema says of the whole.
MODEL = "the exact model at the measured inputs; null when they do not make one"


class CauseRow(Record):
    """One failure cause of the ``analyze`` document."""

    cause: Annotated[str, "the cause, as the log names it"]
    failures: Annotated[int, "failures of this cause", Bounds(1)]
    lost_s: Annotated[NonNegative, "the time they lost, seconds"]
    share_of_wall: Annotated[Share, "that time as a share of the wall time"]


class AnalyzedOutcome(Record):
    """After the model: the GPUs and the time lost per cause."""

    gpus: Annotated[float | None, "GPUs of the run (--gpus); null without"]
    causes: Annotated[tuple[CauseRow, ...], "the time lost per failure cause, the most lost first"]


class WindowLosses(Record):
    """A window's span and shares, before the mechanisms' parts (``log_split_keys``)."""

    start_s: Annotated[float, "the window's start, seconds from the log's zero"]
    end_s: Annotated[float, "its end"]
    effective: Annotated[Share, "its effective time"]
    write: Annotated[Share, "its checkpoint stalls"]
    rework: Annotated[Share, "its rework"]
    restart: Annotated[Share, "its restarts"]


class WindowOutcome(Record):
    """A window's shares after the mechanisms' parts, and its verdict."""

    silent: Annotated[Share, "its work lost to silent events"]
    below_slo: Annotated[bool | None, "whether its effective time is below --slo; null without"]


def _window(window: Any, below: bool | None) -> dict[str, Any]:
    """One window of the document: its record's fields around the mechanisms' parts of its split."""
    from ckptcalc.output.typed import document_of

    w = window.split
    head = WindowLosses(window.start_s, window.end_s, w.effective, w.write, w.rework, w.restart)
    return {**document_of(head), **_own(w), **document_of(WindowOutcome(w.silent, below))}


def document(
    analysis: Analysis,
    fitted: FailureFit,
    model: dict[str, Any] | None,
    reason: str | None,
    *,
    log: str,
    gpus: float | None,
    discard: float,
    slo: float | None,
    goodput: float,
    cause_shares: list[float],
    below_slo: list[bool | None] | None,
    classes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything ``analyze --json`` prints (SI units; shares of the run's wall time). ``goodput`` is the
    realised effective time less the ``discard``ed share, ``cause_shares`` each cause's lost time as a
    share of wall time, ``below_slo`` each window's verdict against ``slo`` (None without one), ``classes`` the
    failures split by the preset's classes (docs/model.md §20.6; None without any)."""
    tl, split = analysis.timeline, analysis.realised
    storage = analysis.levels[-1] if analysis.levels else None
    low, high = fitted.mtbf.ci95
    weibull = fitted.weibull
    notes = []
    if reason is not None:
        notes.append(wording.no_model(reason))
    elif model is not None and not model["agrees"]:
        notes.append(wording.model_disagrees(model["difference_pp"]))
    if weibull is not None and weibull.verdict != "exponential":
        notes.append(wording.clustered_failures(weibull.shape))
    from ckptcalc.output.typed import document_of, record_of

    lines = AnalyzedLines(tl.lines, tl.used, tl.unknown, tl.skipped_bad, tl.progress)
    read = AnalyzedLog(log, cast(Literal["timestamp", "number"], tl.time_kind), lines)
    losses = RealisedLosses(split.useful, split.write, split.rework, split.restart)
    outcome = RealisedOutcome(split.silent, split.effective, tuple(analysis.effective_ci95), goodput)
    figures = MeasuredFigures(
        write_s=None if storage is None else storage.stall_s,
        write_p90_s=None if storage is None else storage.stall_p90_s,
        restart_s=analysis.restart_s,
        restart_p90_s=analysis.restart_p90_s,
        restarts=analysis.restarts_measured,
        interval_s=analysis.interval_s,
        storage_every=analysis.storage_every,
        memory_share=analysis.memory_share,
        approximate=tuple(analysis.approximate),
        failures=analysis.failures,
        mtbf_s=documents.number(fitted.mtbf.mtbf_s),
        mtbf_ci95=(documents.number(low), documents.number(high)),
        shape=None if weibull is None else weibull.shape,
        shape_p_value=None if weibull is None else weibull.p_value,
        levels=tuple(
            MeasuredLevel(lv.name, lv.checkpoints, lv.stall_s, lv.stall_p90_s, lv.persist_s, lv.restarts, lv.restart_s)
            for lv in analysis.levels
        ),
    )
    causes = tuple(
        CauseRow(c.cause, c.failures, c.lost_s, share) for c, share in zip(analysis.causes, cause_shares, strict=True)
    )
    found = None
    if model is not None:
        fixed = record_of(AnalyzedModel, {**{k: v for k, v in model.items() if k != "result"},
                                          "model": model["result"].model})  # fmt: skip
        found = {**document_of(fixed), **registry.own_parts(model["result"])}
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "analyze",
        **document_of(read),
        "reading": documents.reading(
            files=tl.files, format=tl.format, read=tl.lines, used=tl.used, ignored=tl.unknown, filtered=0,
            skipped_bad=tl.skipped_bad, bad=tl.bad, notes=tl.notes, year_from=tl.year_from,
        ),
        **document_of(AnalyzedSpan(tl.start_s, tl.end_s, split.wall_s)),
        "realised": {**document_of(losses), **_own(split), **document_of(outcome)},
        "discard": discard,
        "measured": {
            **document_of(figures),
            **registry.measured_entries(analysis),
            **registry.measured_parts(analysis),
        },
        "model": found,
        **document_of(AnalyzedOutcome(gpus, causes)),
        "classes": classes,
        "slo": slo,
        "windows": None
        if analysis.windows is None
        else [_window(w, below) for w, below in zip(analysis.windows, below_slo or (), strict=True)],
        "warnings": notes,
    }  # fmt: skip


def table(document: dict[str, Any]) -> None:
    """``analyze``: the realised split, what was measured, the model at those inputs, causes and windows."""
    from rich.text import Text

    from ckptcalc.output import tables

    out = tables.console()
    narrow = tables.narrow(out)
    r, m = document["realised"], document["measured"]
    out.print(Text(wording.analyze_header(document), style="bold"))
    inferred = wording.inference_rows(document["reading"])
    if inferred:
        table = tables.grid("Read from the log", narrow)
        table.add_column("", overflow="fold")
        table.add_column("count", justify="right", no_wrap=True)
        for what, count in inferred:
            table.add_row(what, count)
        out.print(table)
        out.print()
    table = tables.grid("Where the run's time went (share of wall time)", narrow)
    table.add_column("", no_wrap=True)
    table.add_column("share", justify="right", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    wall = document["wall_s"]
    for key, name in wording.split_parts(document):
        table.add_row(name, pct(r[key]), dur(part_of(r[key], wall)))
    out.print(table)
    low, high = r["effective_ci95"]
    out.print(f"Effective {pct(r['effective'])} (95 %: {pct(low)} to {pct(high)}), goodput {pct(r['goodput'])}.")
    out.print()
    table = tables.grid("Measured", narrow)
    table.add_column("", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in wording.measured_rows(m):
        table.add_row(*row)
    out.print(table)
    model = document["model"]
    if model is not None:
        out.print()
        model_table = tables.grid("The exact model at these inputs", narrow)
        model_table.add_column("", no_wrap=True)
        model_table.add_column("value", justify="right", no_wrap=True)
        for pair in wording.model_rows(model):
            model_table.add_row(*pair)
        table = model_table
        out.print(table)
        out.print(wording.model_verdict(model, r["effective"]))
    if document["causes"]:
        out.print()
        table = tables.grid("Time lost per failure cause", narrow)
        table.add_column("cause", overflow="fold")
        table.add_column("failures", justify="right", no_wrap=True)
        table.add_column("lost", justify="right", no_wrap=True)
        table.add_column("of wall", justify="right", no_wrap=True)
        for c in document["causes"][: tables.MAX_ROWS]:
            table.add_row(c["cause"], f"{c['failures']}", dur(c["lost_s"]), pct(c["share_of_wall"]))
        out.print(table)
    if document["classes"] is not None:
        out.print()
        from ckptcalc.commands.fit import class_table

        class_table(out, document["classes"], narrow)
    from ckptcalc.commands.optimize import figure_table

    for title, _, rows in registry.figure_tables(document, wording.SHOW):  # the log's repairs (docs/model.md §22)
        out.print()
        out.print(figure_table(title, rows, narrow))
    if document["windows"] is not None:
        out.print()
        _windows(out, document, narrow)
    tables.warn(document["warnings"])


def _windows(out: Console, document: dict[str, Any], narrow: bool) -> None:
    from rich.text import Text

    from ckptcalc.output import tables

    windows = document["windows"]
    width = max(10, min(40, out.width - 40))
    table = tables.grid("Per window: time lost (stacked) and effective time", narrow)
    table.add_column("from", no_wrap=True)
    table.add_column("effective", justify="right", no_wrap=True)
    table.add_column("lost", no_wrap=True)
    table.add_column("", no_wrap=True)
    top = max((1.0 - w["effective"] for w in windows), default=0.0) or 1.0
    start = document["start_s"]
    for w in windows[: tables.MAX_ROWS]:
        mark = "below SLO" if w["below_slo"] else ""
        table.add_row(
            dur(w["start_s"] - start) if w["start_s"] > start else "0",
            pct(w["effective"]),
            tables.bar(w["write"], w["rework"], w["restart"], top, width),
            Text(mark, style="bold red") if mark else "",
        )
    out.print(table)
    if len(windows) > tables.MAX_ROWS:
        out.print(wording.rows_omitted(len(windows) - tables.MAX_ROWS))
    out.print(tables.legend())


def schema() -> schemas.Schema:
    from ckptcalc.logs import classes
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import properties_of

    share = schemas.FRACTION
    model = schemas.object_schema({**properties_of(AnalyzedModel), **registry.measured_model_schemas()}, MODEL)
    own = {key: share for key, _ in registry.log_split_keys()}
    window = schemas.object_schema({**properties_of(WindowLosses), **own, **properties_of(WindowOutcome)})
    realised = {
        **properties_of(RealisedLosses),
        **{key: {**share, "description": words} for key, words in registry.log_split_keys()},
        **properties_of(RealisedOutcome),
    }
    figures = properties_of(MeasuredFigures)
    # The interval's lower end is a number; its upper one null where the failures are too few.
    pair = {"type": "array", "prefixItems": [schemas.SECONDS, schemas.MAYBE_SECONDS], "minItems": 2, "maxItems": 2}
    figures["mtbf_ci95"] = {**pair, "description": figures["mtbf_ci95"]["description"]}
    outcome = properties_of(AnalyzedOutcome)
    return schemas.document(
        "analyze",
        "ckptcalc analyze --json",
        {
            **properties_of(AnalyzedLog),
            "reading": schemas.reading(),
            **properties_of(AnalyzedSpan),
            "realised": schemas.object_schema(realised, REALISED),
            "discard": {**share, "description": "the share of steps later thrown away (--discard)"},
            "measured": schemas.object_schema(
                {**figures, **registry.measured_entry_schemas(), **registry.measured_schema()}
            ),
            "model": {"oneOf": [{"type": "null"}, model]},
            "gpus": outcome["gpus"],
            "causes": outcome["causes"],
            "classes": classes.schema(),
            **registry.incident_log_schema(),
            "slo": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "windows": {"oneOf": [{"type": "null"}, {"type": "array", "items": window}]},
            "warnings": schemas.WARNINGS,
        },
    )


def markdown(doc: dict[str, Any]) -> str:
    """``analyze --markdown``: the same document as a short Markdown report."""
    from ckptcalc.output import markdown as md

    r, m = doc["realised"], doc["measured"]
    lines = [
        "# " + md.inline(wording.analyze_markdown_title(doc["log"])),
        "",
        md.inline(wording.analyze_markdown_line(doc["wall_s"], r)),
        "",
        *md.table(["where the time went", "share"], [[name, pct(r[key])] for key, name in wording.split_parts(doc)]),
        "",
    ]
    rows: list[list[str]] = [
        [name, fmt(m[key])]
        for key, name, fmt in (
            ("write_s", "write time (mean)", dur),
            ("write_p90_s", "write time (p90)", dur),
            ("restart_s", "restart (mean)", dur),
            ("restart_p90_s", "restart (p90)", dur),
            ("interval_s", "interval used (median)", dur),
            ("mtbf_s", "MTBF", dur),
        )
        if m[key] is not None
    ]
    rows.append(["failures", str(m["failures"])])
    rows += [[what, value] for what, value, _ in wording.mechanism_rows(m)]
    rows += [[what, value] for what, value, _ in registry.measured_rows(m, wording)]
    lines.extend(md.table(["measured", "value"], rows))
    model = doc["model"]
    if model is not None:
        model_rows = [
            ["effective at the interval used", pct(model["effective_at_interval"])],
            ["optimal interval", dur(model["optimal_interval_s"])],
            ["robust interval", dur(model["robust_interval_s"])],
            ["gain", f"{model['gain_pp']:.3g} pp"],
        ]
        if model["gain_gpu_hours"] is not None:
            model_rows.append(["gain over the run", f"{model['gain_gpu_hours']:,.0f} GPU-hours"])
        lines += ["", *md.table(["model at these inputs", "value"], model_rows)]
    if doc["causes"]:
        lines += ["", *md.table(["cause", "failures", "time lost"],
                             [[c["cause"], str(c["failures"]), dur(c["lost_s"])] for c in doc["causes"]])]  # fmt: skip
    from ckptcalc.commands.fit import class_markdown

    lines.extend(class_markdown(doc["classes"]))
    for title, _, found in registry.figure_tables(doc, wording.SHOW):  # the log's repairs (docs/model.md §22)
        rows = [list(row) for row in found]
        lines.extend(["", f"**{md.inline(title)}**", "", *md.table(["figure", "value", "note"], rows)])
    lines.extend(md.quotes("", doc["warnings"]))
    return md.finished(lines)
