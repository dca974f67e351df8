"""``compare``: its JSON document, its table, its Markdown and its schema (its document: the optimize evaluation
per scenario, after the scenario's own part)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import Job
from ckptcalc.model.evaluation import TERMS, Result, headline_model
from ckptcalc.model.statistics import largest, points
from ckptcalc.output import documents, wording
from ckptcalc.records import Record

if TYPE_CHECKING:
    from rich.console import Console

    from ckptcalc.output import schema as schemas

dur = units.format_duration
pct = units.format_percent


class ComparedScenario(Record):
    """A scenario's own part of ``compare --json``, before its evaluation (optimize's): its JSON and its
    schema are made from these fields."""

    name: Annotated[
        str,
        "the scenario's column: the preset's name, with the job flags given over it (params=70B gpus=4096), or"
        " a what-if's name (its changes as written when it has none)",
    ]


def document(evaluated: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """``compare --json``: each scenario's part, then its evaluation (:func:`ckptcalc.output.documents.evaluation`),
    from ``evaluated`` (name, evaluation) pairs in column order."""
    from ckptcalc.output.typed import document_of

    scenarios = [{**document_of(ComparedScenario(name)), **evaluation} for name, evaluation in evaluated]
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "compare",
        "model": headline_model(scenario["model"] for scenario in scenarios),
        "scenarios": scenarios,
    }


def table(rows: list[tuple[str, Job, Result]], scenarios: list[dict[str, Any]]) -> None:
    from rich.text import Text

    from ckptcalc.output import tables

    out = tables.console()
    table = tables.grid()
    table.add_column("")
    for name, _, _ in rows:
        table.add_column(name, justify="right", overflow="fold")
    best = largest([float(r.effective) for _, _, r in rows])
    first = float(rows[0][2].effective)

    widths = [0] + [len(name) for name, _, _ in rows]

    def line(label: str, cells: list[str]) -> None:
        for i, text in enumerate([label, *cells]):
            widths[i] = max(widths[i], len(text))
        table.add_row(label, *cells)

    line("checkpoint size", [units.format_size(j.config.checkpoint_bytes) for _, j, _ in rows])
    line("write time δ", [dur(j.config.write_s) for _, j, _ in rows])
    line("MTBF", [dur(j.config.mtbf_s) for _, j, _ in rows])
    bands = [doc["uncertainty"] for doc in scenarios]
    if any(band is not None for band in bands):
        line("MTBF 95 %", ["-" if b is None else wording.span(b["mtbf_s"], dur) for b in bands])
    if any(j.config.shape is not None for _, j, _ in rows):
        shapes = [j.config.shape for _, j, _ in rows]
        line("failures", ["exponential" if k is None else f"Weibull {units.sig(float(k))}" for k in shapes])
    line("restart", [dur(j.config.storage_restart_s) for _, j, _ in rows])
    line(
        "levels",
        [
            f"{'+'.join(item.level.name for item in r.levels)}{' (async)' if j.config.is_async else ''}"
            for _, j, r in rows
        ],
    )
    line("optimal interval", [wording.periodic_interval(float(r.optimal_interval_s)) for _, _, r in rows])
    if any(r.optimal_storage_every is not None for _, _, r in rows):
        line(
            "memory × m",
            [
                "-"
                if r.optimal_storage_every is None
                else f"{dur(r.optimal_memory_interval_s or 0.0)} × {int(r.optimal_storage_every)}"
                for _, _, r in rows
            ],
        )
    table.add_section()
    for term in TERMS:
        line(f"{term} loss", [pct(float(getattr(r, term))) for _, _, r in rows])
    if any(r.elastic is not None for _, _, r in rows):
        # Elastic replica groups: what the groups down, the quorum pauses and the overhead take (approximate).
        line(
            "elastic loss",
            ["-" if r.elastic is None else pct(float(r.elastic.groups_loss)) for _, _, r in rows],
        )
    line("total loss", [pct(r.total) for _, _, r in rows])
    table.add_section()
    effective = [Text(pct(r.effective), style="bold green" if i == best else "") for i, (_, _, r) in enumerate(rows)]
    table.add_row("effective", *effective)
    line(
        "vs first (pp)",
        ["-" if i == 0 else f"{points(float(r.effective), first):+.2f}" for i, (_, _, r) in enumerate(rows)],
    )
    line("dominant", [TERMS[int(r.dominant)] for _, _, r in rows])
    if any(band is not None for band in bands):
        table.add_section()
        line("effective, 95 %", ["-" if b is None else wording.span(b["effective"], pct) for b in bands])
        line("robust interval", ["-" if b is None else dur(b["robust_interval_s"]) for b in bands])
    out.print(Text("ckptcalc compare (exact model, shares of elapsed time)", style="bold"))
    if _too_wide(widths, out.width):
        # Too many columns to fit: one scenario a row, or one a block on the narrowest terminals.
        _compare_rows(out, rows, first, best)
    else:
        out.print(table)
    out.print(f"best: {rows[best][0]} ({pct(rows[best][2].effective)} effective)")
    assumed = wording.compare_assumed(scenarios)
    if assumed:
        out.print(Text(wording.ASSUMED))
        for text in assumed:
            out.print(Text(f"  {text}"))
    for name, one, result in rows:
        tables.warn([f"{name}: {message}" for message in [*documents.input_warnings(one), *documents.warnings(result)]])


def _too_wide(widths: list[int], width: int) -> bool:
    """Whether columns of ``widths``, two spaces apart, overflow a terminal ``width`` wide."""
    return sum(widths) + 2 * (len(widths) - 1) > width


def _compare_rows(out: Console, rows: list[tuple[str, Job, Result]], first: float, best: int) -> None:
    """compare with the scenarios as rows; as blocks of lines when even that would not fit."""
    from rich.text import Text

    from ckptcalc.output import tables

    header = ("scenario", "interval", "write", "rework", "restart", "effective", "vs first", "dominant")
    lines = []
    for i, (name, _, r) in enumerate(rows):
        lines.append(
            (
                name,
                dur(r.optimal_interval_s),
                pct(float(r.write)),
                pct(float(r.rework)),
                pct(float(r.restart)),
                pct(r.effective),
                "-" if i == 0 else f"{points(float(r.effective), first):+.2f} pp",
                TERMS[int(r.dominant)],
            )
        )
    table = tables.grid(narrow=tables.narrow(out))
    table.add_column(header[0], overflow="fold", min_width=8)
    for title in header[1:]:
        table.add_column(title, justify="right", no_wrap=True)
    for i, cells in enumerate(lines):
        table.add_row(*cells, style="bold green" if i == best else "")
    numbers = [max(len(title), *(len(cells[i]) for cells in lines)) for i, title in enumerate(header) if i]
    if 8 + sum(numbers) + 2 * len(numbers) <= out.width:  # the names may fold; numbers never are cut
        out.print(table)
        return
    for cells in lines:
        out.print(Text(cells[0], style="bold"))
        for title, cell in zip(header[1:], cells[1:], strict=True):
            out.print(f"  {title}: {cell}")


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import properties_of

    scenario = schemas.object_schema({**properties_of(ComparedScenario), **schemas.EVALUATION})
    return schemas.document(
        "compare",
        "ckptcalc compare --json",
        {
            "model": {**schemas.HEADLINE_MODEL, "description": "approximate where any scenario's is"},
            "scenarios": {"type": "array", "items": scenario, "minItems": 1},
        },
    )


def markdown(doc: dict[str, Any]) -> list[str]:
    from ckptcalc.model.statistics import points
    from ckptcalc.output import markdown as md

    scenarios = doc["scenarios"]
    names = [s["name"] for s in scenarios]
    lines = ["## " + md.inline(wording.markdown_title("compare", None)), "", md.inline(wording.MARKDOWN_INPUTS), ""]
    lines.extend(md.table(*_compare_inputs(scenarios)))
    first = scenarios[0]["effective"]
    bands = [s["uncertainty"] for s in scenarios]
    banded = any(b is not None for b in bands)
    header = ["scenario", "interval", "write", "rework", "restart", "effective", "vs first", "dominant"]
    rows = [
        [s["name"], md.interval(s["optimal_interval_s"]), pct(s["loss"]["write"]), pct(s["loss"]["rework"]),
         pct(s["loss"]["restart"]), pct(s["effective"]),
         "-" if i == 0 else f"{points(s['effective'], first):+.2f} pp", s["dominant"]]
        for i, s in enumerate(scenarios)
    ]  # fmt: skip
    if banded:
        header += ["effective, 95 %", "robust interval"]
        for row, b in zip(rows, bands, strict=True):
            row.extend(
                ["-", "-"] if b is None else [wording.span(b["effective"], pct), md.interval(b["robust_interval_s"])]
            )
    lines += ["", md.inline(wording.MARKDOWN_RESULTS), "", *md.table(header, rows)]
    if any(len(s["levels"]) != 1 for s in scenarios):
        # Every tier's interval, a memory replica's as well as storage's: one row per scenario and level.
        level_rows = [[name, *row] for name, s in zip(names, scenarios, strict=True) for row in md.levels(s["levels"])]
        lines += ["", md.inline(wording.MARKDOWN_LEVELS), "", *md.table(["scenario", *md.LEVEL_HEADER], level_rows)]
    assumed = wording.compare_assumed(scenarios)
    if assumed:
        lines += ["", md.inline(wording.ASSUMED), "", *(f"- {md.inline(text)}" for text in assumed)]
    return [
        *lines,
        *md.quotes("warning: ", [wording.of_scenario(s["name"], w) for s in scenarios for w in s["warnings"]]),
    ]


def _compare_inputs(scenarios: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The inputs the compare table shows, one row per scenario; a column only where one has it."""
    inputs = [s["inputs"] for s in scenarios]
    columns: list[tuple[str, list[str]]] = [
        ("scenario", [s["name"] for s in scenarios]),
        ("checkpoint size", [units.format_size(i["checkpoint_bytes"]) for i in inputs]),
        ("write time δ", [dur(s["write_s"]) for s in scenarios]),
        ("MTBF", [dur(i["mtbf_s"]) for i in inputs]),
    ]
    if any(s["uncertainty"] is not None for s in scenarios):
        columns.append(
            ("MTBF 95 %", ["-" if s["uncertainty"] is None else wording.span(s["uncertainty"]["mtbf_s"], dur)
                           for s in scenarios])
        )  # fmt: skip
    if any(i["shape"] is not None for i in inputs):
        columns.append(("failures", [wording.failure_law(i["shape"]) for i in inputs]))
    columns.append(("restart", [dur(i["restart_s"]) for i in inputs]))
    asynchronous = [i["snapshot_bandwidth_bytes_per_s"] is not None for i in inputs]
    names = [[v["name"] for v in s["levels"]] for s in scenarios]
    columns.append(("levels", [wording.level_list(n, a) for n, a in zip(names, asynchronous, strict=True)]))
    header = [name for name, _ in columns]
    return header, [list(row) for row in zip(*(values for _, values in columns), strict=True)]
