"""``analyze``: its JSON document, its table, its Markdown and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ckptcalc.inputs import units
from ckptcalc.mechanisms import registry
from ckptcalc.model.statistics import part_of
from ckptcalc.output import documents, wording

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
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "analyze",
        "log": log,
        "time_kind": tl.time_kind,
        "lines": {"read": tl.lines, "used": tl.used, "unknown_events": tl.unknown, "skipped_bad": tl.skipped_bad,
                  "progress": tl.progress},
        "reading": documents.reading(
            files=tl.files, format=tl.format, read=tl.lines, used=tl.used, ignored=tl.unknown, filtered=0,
            skipped_bad=tl.skipped_bad, bad=tl.bad, notes=tl.notes, year_from=tl.year_from,
        ),
        "start_s": tl.start_s,
        "end_s": tl.end_s,
        "wall_s": split.wall_s,
        "realised": {
            "useful": split.useful,
            "write": split.write,
            "rework": split.rework,
            "restart": split.restart,
            **_own(split),
            "silent": split.silent,
            "effective": split.effective,
            "effective_ci95": list(analysis.effective_ci95),
            "goodput": goodput,
        },
        "discard": discard,
        "measured": {
            "write_s": None if storage is None else storage.stall_s,
            "write_p90_s": None if storage is None else storage.stall_p90_s,
            "restart_s": analysis.restart_s,
            "restart_p90_s": analysis.restart_p90_s,
            "restarts": analysis.restarts_measured,
            "interval_s": analysis.interval_s,
            "storage_every": analysis.storage_every,
            "memory_share": analysis.memory_share,
            "approximate": list(analysis.approximate),
            "failures": analysis.failures,
            "mtbf_s": documents.number(fitted.mtbf.mtbf_s),
            "mtbf_ci95": [documents.number(low), documents.number(high)],
            "shape": None if weibull is None else weibull.shape,
            "shape_p_value": None if weibull is None else weibull.p_value,
            "levels": [
                {"name": lv.name, "checkpoints": lv.checkpoints, "write_s": lv.stall_s, "write_p90_s": lv.stall_p90_s,
                 "persist_s": lv.persist_s, "restarts": lv.restarts, "restart_s": lv.restart_s}
                for lv in analysis.levels
            ],
            **registry.measured_entries(analysis),
            **registry.measured_parts(analysis),
        },
        "model": None if model is None
        else {**{k: v for k, v in model.items() if k != "result"}, "model": model["result"].model,
              **registry.own_parts(model["result"])},
        "gpus": gpus,
        "causes": [
            {"cause": c.cause, "failures": c.failures, "lost_s": c.lost_s, "share_of_wall": share}
            for c, share in zip(analysis.causes, cause_shares, strict=True)
        ],
        "classes": classes,
        "slo": slo,
        "windows": None
        if analysis.windows is None
        else [
            {"start_s": w.start_s, "end_s": w.end_s, "effective": w.split.effective, "write": w.split.write,
             "rework": w.split.rework, "restart": w.split.restart, **_own(w.split), "silent": w.split.silent,
             "below_slo": below}
            for w, below in zip(analysis.windows, below_slo or (), strict=True)
        ],
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

    share = schemas.FRACTION
    level = schemas.object_schema(
        {
            "name": {"type": "string"},
            "checkpoints": {"type": "integer", "minimum": 1},
            "write_s": schemas.SECONDS,
            "write_p90_s": schemas.SECONDS,
            "persist_s": schemas.MAYBE_SECONDS,
            "restarts": {"type": "integer", "minimum": 0},
            "restart_s": schemas.MAYBE_SECONDS,
        }
    )
    model = schemas.object_schema(
        {
            "effective_at_interval": schemas.FRACTION,
            "difference_pp": schemas.NUMBER,
            "agrees": {"type": "boolean"},
            "optimal_interval_s": schemas.SECONDS,
            "optimal_memory_interval_s": schemas.MAYBE_SECONDS,
            "optimal_effective": schemas.FRACTION,
            "robust_interval_s": schemas.SECONDS,
            "gain_pp": schemas.NUMBER,
            "gain_gpu_hours": schemas.MAYBE_NUMBER,
            "model": schemas.HEADLINE_MODEL,
            **registry.measured_model_schemas(),
        },
        "the exact model at the measured inputs; null when they do not make one",
    )
    window = schemas.object_schema(
        {
            "start_s": schemas.NUMBER,
            "end_s": schemas.NUMBER,
            "effective": share,
            "write": share,
            "rework": share,
            "restart": share,
            **{key: share for key, _ in registry.log_split_keys()},
            "silent": share,
            "below_slo": {"type": ["boolean", "null"]},
        }
    )
    maybe_count = {"type": ["integer", "null"], "minimum": 1}
    return schemas.document(
        "analyze",
        "ckptcalc analyze --json",
        {
            "log": {"type": "string"},
            "time_kind": {"enum": ["timestamp", "number"]},
            "reading": schemas.reading(),
            "lines": schemas.object_schema({k: {"type": "integer", "minimum": 0} for k in
                              ("read", "used", "unknown_events", "skipped_bad", "progress")}),
            "start_s": schemas.NUMBER,
            "end_s": schemas.NUMBER,
            "wall_s": schemas.SECONDS,
            "realised": schemas.object_schema(
                {
                    "useful": share,
                    "write": share,
                    "rework": share,
                    "restart": share,
                    **{key: {**share, "description": words} for key, words in registry.log_split_keys()},
                    "silent": {
                        **share,
                        "description": "kept work lost to silent events: rolled back past (to the detection) and"
                        " skipped, less what is stall, restart or rework already",
                    },
                    "effective": share,
                    "effective_ci95": {"type": "array", "items": schemas.NUMBER, "minItems": 2, "maxItems": 2},
                    "goodput": share,
                },
                "shares of the run's wall time (useful + write + rework + restart + the groups' three + silent"
                " = 1)",
            ),
            "discard": schemas.FRACTION,
            "measured": schemas.object_schema(
                {
                    "write_s": schemas.MAYBE_SECONDS,
                    "write_p90_s": schemas.MAYBE_SECONDS,
                    "restart_s": schemas.MAYBE_SECONDS,
                    "restart_p90_s": schemas.MAYBE_SECONDS,
                    "restarts": {"type": "integer", "minimum": 0},
                    "interval_s": schemas.MAYBE_SECONDS,
                    "storage_every": maybe_count,
                    "memory_share": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                    "approximate": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "the figures that are not exact: quantiles read from a KLL sketch, past 1e5"
                        " values of a quantity (interval_s, restart_p90_s, LEVEL.write_p90_s), and, past 1e5"
                        " checkpoints, effective_ci95 (and with it the model's agrees) and windows where an edge fell"
                        " in a folded block (empty: every one exact)",
                    },
                    "failures": {"type": "integer", "minimum": 0},
                    "mtbf_s": schemas.MAYBE_SECONDS,
                    "mtbf_ci95": {"type": "array", "prefixItems": [schemas.SECONDS, schemas.MAYBE_SECONDS],
                                  "minItems": 2, "maxItems": 2},
                    "shape": schemas.MAYBE_NUMBER,
                    "shape_p_value": schemas.MAYBE_NUMBER,
                    "levels": {"type": "array", "items": level},
                    **registry.measured_entry_schemas(),
                    **registry.measured_schema(),
                }
            ),
            "model": {"oneOf": [{"type": "null"}, model]},
            "gpus": schemas.MAYBE_NUMBER,
            "causes": {
                "type": "array",
                "items": schemas.object_schema({"cause": {"type": "string"},
                                               "failures": {"type": "integer", "minimum": 1},
                                               "lost_s": schemas.SECONDS, "share_of_wall": share}),
            },
            "classes": classes.schema(),
            **registry.incident_log_schema(),
            "slo": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "windows": {"oneOf": [{"type": "null"}, {"type": "array", "items": window}]},
            "warnings": schemas.WARNINGS,
        },
    )  # fmt: skip


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
