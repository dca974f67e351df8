"""``optimize``: its JSON document, its tables, its Markdown and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import Job
from ckptcalc.mechanisms import registry
from ckptcalc.mechanisms.base import IN_PLACE, NOWHERE
from ckptcalc.mechanisms.registry import slowed_share as storage_slowdown
from ckptcalc.model.decisions import Cost, Lever, LeverAssumptions, Steps, Targets
from ckptcalc.model.evaluation import TERMS, Result, interval_comparison, unneeded
from ckptcalc.model.statistics import direction, share_of, shares
from ckptcalc.output import documents, wording
from ckptcalc.output.typed import Bounds, NonNegative, Share
from ckptcalc.records import Record

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ckptcalc.model.band import Band
    from ckptcalc.output import schema as schemas

dur = units.format_duration
pct = units.format_percent


def document(
    job: Job,
    result: Result,
    preset: str | None,
    *,
    levers: list[Lever],
    assume: LeverAssumptions | None,
    target: float | None = None,
    targets: Targets | None = None,
    cost: Cost | None = None,
    steps: Steps | None = None,
    band: Band | None = None,
    penalty_pp: float,
    discard: float,
    goodput: float,
) -> dict[str, Any]:
    """Everything ``optimize --json`` prints (``goodput``: the effective time less the ``discard``ed share)."""
    from ckptcalc.output.typed import document_of

    decided = OptimizeDecisions(
        levers=tuple(_lever(v, job, assume) for v in levers),
        discard=discard,
        goodput=goodput,
        target=target,
        targets=None if targets is None else _targets(targets),
        lost_gpu_hours_per_day=cost.lost_gpu_hours_per_day if cost is not None else None,
        lost_cost_per_day=cost.lost_cost_per_day if cost is not None else None,
        lost_cost_per_30_days=cost.lost_cost_per_30_days if cost is not None else None,
        step_time_s=job.scenario.step_time_s,
        optimal_interval_steps=steps.storage if steps is not None else None,
    )
    part = document_of(decided)
    for row, lever in zip(part["levers"], levers, strict=True):
        if lever.cluster_gain_pp is not None:  # a running share's lever only (spare nodes, docs/model.md §15)
            row["cluster_gain_pp"] = lever.cluster_gain_pp
    document: dict[str, Any] = {"schema_version": documents.SCHEMA_VERSION, "command": "optimize", "preset": preset}
    document.update(documents.evaluation(job, result, steps, band, penalty_pp=penalty_pp))
    document.update(part)
    # What the job as evaluated assumes of the mechanisms it lacks (a replacement node always free).
    document["inputs"]["assumed"] = [*document["inputs"]["assumed"], *registry.baseline_notes(levers, wording.SHOW)]
    if steps is not None:
        document["settings"] = documents.settings(result, steps)
    return document


#: The unit kinds of a break-even's value.
BreakEvenUnit = Literal["fraction", "duration", "rate"]


class BreakEvenPart(Record):
    """A lever's break-even in the ``optimize`` document: its JSON and its schema are made from these fields."""

    key: Annotated[str, "the input the lever turns on"]
    value: Annotated[float, "that input's value where the lever's gain is zero, in SI units"]
    unit: Annotated[
        BreakEvenUnit, "the value's unit kind: fraction (0 to 1), duration (seconds), rate (bytes per second)"
    ]
    pays: Annotated[Literal["above", "below"], "on which side of the value the lever pays"]


def _break_even(lever: Lever) -> BreakEvenPart | None:
    """A lever's break-even (SI units), None for a lever without a cost."""
    found = lever.break_even
    if found is None:
        return None
    return BreakEvenPart(found.key, found.value, cast(BreakEvenUnit, found.unit), cast(Any, found.pays))


def _lever(lever: Lever, job: Job, assume: LeverAssumptions | None) -> LeverRow:
    """A lever as its row of the document (its gain over job and idle capacity is added beside it)."""
    name = wording.lever_name(lever.key, lever.changed, assume, job.gpus, lever.value, job.config)
    return LeverRow(lever.key, name, lever.effective, lever.gain_pp, _break_even(lever))


def _targets(targets: Targets) -> TargetsPart:
    return TargetsPart(targets.bandwidth, targets.restart_s, targets.mtbf_s, targets.gpus, targets.unbounded)


class LeverRow(Record):
    """One lever of the ``optimize`` document: its JSON and its schema are made from these fields (a running
    share's lever adds ``cluster_gain_pp`` after them)."""

    key: Annotated[str, "the lever: one change to the job, re-optimised"]
    name: Annotated[str, "the change, in words"]
    effective: Annotated[Share, "the effective time with the change, at its own optimal interval"]
    gain_pp: Annotated[float, "that effective time less the job's, in percentage points"]
    break_even: Annotated[BreakEvenPart | None, "where a lever with a cost starts to pay; null for a lever without one"]


class TargetsPart(Record):
    """What each input alone must reach for the target: its JSON and its schema are made from these fields."""

    bandwidth_bytes_per_s: Annotated[NonNegative | None, "the storage bandwidth needed, bytes per second"]
    restart_s: Annotated[NonNegative | None, "the restart time needed, seconds"]
    mtbf_s: Annotated[NonNegative | None, "the job MTBF needed, seconds"]
    gpus: Annotated[float | None, "the most GPUs the job may run on"]
    unbounded: Annotated[tuple[str, ...], "the keys every value of which reaches the target"]


#: What :class:`TargetsPart`'s part of the schema says of the whole.
TARGETS = (
    "the value each input alone must reach for the target; null where none does, unless the key is listed in"
    " unbounded: every value does; null without --target"
)


class OptimizeDecisions(Record):
    """What ``optimize --json`` says after the evaluation: the levers, goodput, target, cost and steps. Its
    JSON and its schema are made from these fields."""

    levers: Annotated[tuple[LeverRow, ...], "each lever, one change at a time, re-optimised"]
    discard: Annotated[Share, "the share of the effective time thrown away (--discard)"]
    goodput: Annotated[Share, "the effective time less the discarded share"]
    target: Annotated[
        Annotated[float, Bounds(above=0, below=1)] | None, "the effective time aimed at (--target); null without"
    ]
    targets: Annotated[TargetsPart | None, TARGETS]
    lost_gpu_hours_per_day: Annotated[NonNegative | None, "GPU-hours lost per day; null without a GPU count"]
    lost_cost_per_day: Annotated[float | None, "what they cost per day; null without --gpu-hour-cost"]
    lost_cost_per_30_days: Annotated[float | None, "what they cost per 30 days; null without --gpu-hour-cost"]
    step_time_s: Annotated[NonNegative | None, "the time of one training step, seconds; null without --step-time"]
    optimal_interval_steps: Annotated[
        int | None, "the optimal storage interval in steps; null without --step-time", Bounds(1)
    ]


def figure_table(title: str, rows: list[Any], narrow: bool = False) -> Table:
    """A mechanism's figures (the spare pool's, docs/model.md §15): rows of figure, value and note."""
    from ckptcalc.output import tables

    table = tables.grid(title, narrow)
    table.add_column("figure", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in rows:
        table.add_row(*row)
    return table


def part_table(key: str, found: dict[str, Any], narrow: bool = False) -> Table:
    """A failure class's part ``key`` of a document, as its home words it (silent events: docs/model.md §16)."""
    from ckptcalc.output import tables

    table = tables.grid(registry.part_title(key), narrow)
    table.add_column("figure", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in registry.part_rows(key, found, wording):
        table.add_row(*row)
    return table


def uncertainty_table(band: dict[str, Any], narrow: bool = False) -> Table:
    """The answer across the MTBF's 95 % interval, and the robust interval."""
    from ckptcalc.output import tables

    table = tables.grid(wording.uncertainty_title(band), narrow)
    table.add_column("", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("note", overflow="fold")
    for row in wording.uncertainty_rows(band):
        table.add_row(*row)
    return table


def levels_table(result: Result, narrow: bool = False) -> Table:
    from ckptcalc.output import tables

    given = any(item.level.interval_s is not None for item in result.levels)
    table = tables.grid("Levels", narrow)
    slowed = any(item.level.slows for item in result.levels)
    gap = ["-"] if slowed else []  # the slowdown column of the failure classes
    names = ["level", "stall", *(["slowdown"] if slowed else []), "persist", "interval",
             *(["optimal"] if given else []), "serves", "restart"]  # fmt: skip
    for name in names:
        table.add_column(name, justify="left" if name == "level" else "right", no_wrap=True)
    c = result.config
    # The failure classes of docs/model.md §13 first: they go back less far than any periodic tier. The one
    # that goes back nowhere, then the one in place (a one-step tier with no stall).
    for found in sorted(c.classes, key=lambda k: k.landing != NOWHERE):
        if found.landing == NOWHERE:
            table.add_row(found.label, "-", *gap, "-", "-", *(["-"] if given else []), pct(float(found.share)),
                          dur(found.restart_s))  # fmt: skip
        elif found.landing == IN_PLACE:
            step = dur(c.step)
            table.add_row(found.label, dur(0.0), *gap, "-", step, *([step] if given else []),
                          pct(float(found.share)), dur(found.restart_s))  # fmt: skip
    for item in result.levels:
        lv = item.level
        optimal = [wording.periodic_interval(float(item.optimal_interval_s))] if given else []
        table.add_row(
            lv.name,
            dur(lv.snapshot_s),
            *([dur(lv.slowdown_s) if lv.slowdown_s else "-"] if slowed else []),
            dur(lv.persist_s) if lv.persist_s else "-",
            wording.periodic_interval(float(item.interval_s)),
            *optimal,
            pct(lv.share),
            dur(lv.restart_s),
        )
    return table


def _pct_or_blank(share: float | None) -> str:
    """A share as a percentage, blank where there is none."""
    return "" if share is None else pct(share)


def loss_table(result: Result, title: str, narrow: bool = False) -> Table:
    from rich.text import Text

    from ckptcalc.output import tables

    table = tables.grid(title, narrow)
    table.add_column("term", no_wrap=True)
    table.add_column("of time", justify="right", no_wrap=True)
    table.add_column("of loss", justify="right", no_wrap=True)
    table.add_column("", no_wrap=True)
    top = TERMS[int(result.dominant)]
    total = float(result.total)
    parts = {term: float(getattr(result, term)) for term in TERMS}
    of_loss = shares(parts, total)
    for term, value in parts.items():
        mark = "◀ dominant" if term == top else ""
        table.add_row(Text(term, style=tables.TERM_STYLE[term]), pct(value), pct(of_loss[term]), mark)
    for name, value, note in registry.split_rows(result):
        table.add_row(name, pct(float(value)), _pct_or_blank(share_of(float(value), total)), note)
    slowdown = storage_slowdown(result)
    if slowdown:  # a share of time, never negative: shown when there is any
        of_total = _pct_or_blank(share_of(slowdown, total))
        table.add_row(wording.SLOWDOWN_ROW, pct(slowdown), of_total, wording.SLOWDOWN_NOTE)
    table.add_section()
    table.add_row(Text("total loss", style="bold"), pct(total), "100 %", "")
    table.add_row(Text("effective", style="bold green"), pct(result.effective), "", "")
    return table


def exact_table(result: Result, narrow: bool = False) -> Table | None:
    from ckptcalc.output import tables

    rows = interval_comparison(result.config)
    if rows is None:
        return None
    table = tables.grid("Interval by model (effective: exact model)", narrow)
    table.add_column("model", no_wrap=True)
    table.add_column("interval", justify="right", no_wrap=True)
    table.add_column("effective", justify="right", no_wrap=True)
    names = {"young": "Young (first order)", "daly": "Daly (higher order)", "exact": "exact (Lambert W)"}
    for name, tau, eff in rows:
        table.add_row(names[name], dur(tau), pct(eff))
    if result.config.interval_s is not None:
        table.add_row("given --interval", dur(result.interval_s), pct(result.effective))
    return table


def table(job: Job, result: Result, preset: str | None, default_preset: bool, document: dict[str, Any]) -> None:
    from rich.text import Text

    from ckptcalc.output import tables

    out = tables.console()
    header = f"preset {preset}" if preset else "no preset"
    if default_preset:
        header += " (the default; flags override it)"
    out.print(Text(f"ckptcalc optimize: {header}", style="bold"))
    narrow = tables.narrow(out)
    out.print(tables.inputs_table(job, narrow))
    _print_assumed(out, document)
    out.print()
    if result.tiered or job.config.is_async or job.config.has_recovery:
        out.print(levels_table(result, narrow))
        if job.config.is_nested:
            names = [str(item.level.name) for item in result.levels]
            out.print(wording.sentence(wording.nesting(names, [float(item.interval_s) for item in result.levels])))
        elif result.storage_every is not None:
            every = int(result.storage_every)
            which = "every memory checkpoint" if every == 1 else f"every {wording.ordinal(every)} memory checkpoint"
            out.print(
                f"Storage with {which} ({dur(result.memory_interval_s or 0.0)} × {every} = {dur(result.interval_s)})."
            )
        for caveat in result.caveats:
            if caveat.kind == "lag_bound":
                level = next(item for item in result.levels if item.level.name == caveat.level)
                out.print(wording.lag_bound(str(caveat.level), float(level.level.lag_s)))
        out.print()
    label = wording.model_label(result.config)
    line = f"Optimal storage interval: {dur(result.optimal_interval_s)}  ({label})"
    if job.config.is_nested:
        names = [str(item.level.name) for item in result.levels]
        line = f"Optimal: {wording.nesting(names, [float(i.optimal_interval_s) for i in result.levels])}  ({label})"
    elif result.optimal_storage_every is not None:
        line = (
            f"Optimal: memory every {dur(result.optimal_memory_interval_s or 0.0)}, storage with every"
            f" {wording.ordinal(int(result.optimal_storage_every))} ({dur(result.optimal_interval_s)})  ({label})"
        )
    if unneeded(job.config):
        line = wording.no_periodic_needed()
    out.print(Text(line, style="bold"))
    title = "Loss at the optimal interval (share of elapsed time)"
    if result.config.interval_s is not None or result.config.memory_interval_s is not None:
        title = f"Loss at the given interval ({dur(result.interval_s)})"
    out.print(loss_table(result, title, narrow))
    explanation = wording.first_order_line(result)
    if explanation is not None:
        out.print(explanation)
    for line in registry.result_lines(result, wording.figure):
        out.print(line)
    out.print()
    for title, _, rows in registry.figure_tables(document, wording.SHOW):
        out.print(figure_table(title, rows, narrow))
        out.print()
    for key in registry.part_keys():
        if document.get(key) is not None:
            out.print(part_table(key, document[key], narrow))
            out.print()
    if document["uncertainty"] is not None:
        out.print(uncertainty_table(document["uncertainty"], narrow))
        out.print()
    if direction(document["interval_penalty_pp"], 0.0) == 1 and title.startswith("Loss at the given"):
        out.print(wording.penalty(document["interval_penalty_pp"], result.effective, result.optimal_effective))
    table = exact_table(result, narrow)
    if table is not None:
        out.print(table)
        out.print()
    decisions(out, job, document, narrow)
    out.print(Text(f"verdict: {wording.verdict(result, document['levers'])}", style="bold"))
    tables.warn([*documents.input_warnings(job), *documents.warnings(result)])


def decisions(out: Console, job: Job, document: dict[str, Any], narrow: bool) -> None:
    """Goodput, cost, steps, levers and targets, as far as the document has them."""
    from rich.text import Text

    from ckptcalc.output import tables

    if document["discard"]:
        out.print(
            f"Goodput: {pct(document['goodput'])} (effective {pct(document['effective'])}"
            f" × (1 − {pct(document['discard'])} discarded))"
        )
    if document["lost_gpu_hours_per_day"] is not None:
        line = f"Lost: {tables.amount(document['lost_gpu_hours_per_day'])} GPU-hours per day"
        if document["lost_cost_per_day"] is not None:
            line += (
                f", costing {tables.amount(document['lost_cost_per_day'])} per day"
                f" and {tables.amount(document['lost_cost_per_30_days'])} per 30 days"
            )
        out.print(line + ".")
    for line in wording.storage_lines(document.get("storage")):
        out.print(line)
    if document["optimal_interval_steps"] is not None:
        steps = document["optimal_interval_steps"]
        out.print(f"Checkpoint to storage {_every_steps(steps)} ({dur(document['step_time_s'])} a step).")
        for item in document["levels"][:-1]:
            out.print(f"Checkpoint to {item['name']} {_every_steps(item['optimal_interval_steps'])}.")
        for name, setting in document["settings"].items():
            out.print(Text(f"  {name:<16} {setting}"))
    if document["lost_gpu_hours_per_day"] is not None or document["optimal_interval_steps"] is not None:
        out.print()
    if document["levers"]:
        table = tables.grid("Levers (one change at a time, re-optimised)", narrow)
        table.add_column("lever", overflow="fold")
        table.add_column("effective", justify="right", no_wrap=True)
        table.add_column("gain", justify="right", no_wrap=True)
        for lever in document["levers"]:
            name = lever["name"]
            if "cluster_gain_pp" in lever:
                name = f"{name}{wording.cluster_gain(lever['cluster_gain_pp'])}"
            name = f"{name}{wording.break_even(lever.get('break_even'))}"
            table.add_row(name, pct(lever["effective"]), f"{lever['gain_pp']:+.2f} pp")
        out.print(table)
        out.print()
    if document["targets"] is not None:
        goal = pct(document["target"])
        table = tables.grid(f"Targets: what each input alone must reach for {goal} effective", narrow)
        table.add_column("input")
        table.add_column("needed", justify="right", no_wrap=True)
        table.add_column("now", justify="right", no_wrap=True)
        c = job.config
        found = document["targets"]
        rows = [
            ("storage bandwidth", "bandwidth_bytes_per_s", units.format_rate, c.bandwidth, "at least"),
            ("restart", "restart_s", dur, c.storage_restart_s, "at most"),
            ("MTBF", "mtbf_s", dur, c.mtbf_s, "at least"),
            ("GPUs", "gpus", units.format_count, job.gpus, "at most"),
        ]
        for name, key, fmt, now, bound in rows:
            if name == "GPUs" and now is None:
                continue
            value = found[key]
            if key in found.get("unbounded", []):
                needed = "any"
            else:
                needed = f"{bound} {fmt(value)}" if value is not None else "not reachable"
            shown = fmt(now) if now is not None else "-"
            if key == "bandwidth_bytes_per_s" and "bandwidth" in job.scenario.per_gpu and job.gpus:
                # Stated per GPU: the per-GPU figures beside the aggregates the model takes.
                gpus = job.gpus
                if value is not None and needed != "any":
                    needed += f" ({units.format_aggregate_per_gpu(value, gpus)})"
                shown += f" ({units.format_aggregate_per_gpu(now, gpus)})"
            table.add_row(name, needed, shown)
        out.print(table)
        out.print()


def _every_steps(count: int) -> str:
    return "every step" if count == 1 else f"every {count} steps"


def _print_assumed(out: Console, document: dict[str, Any]) -> None:
    """The values nobody stated, under the inputs (JSON ``inputs.assumed``)."""
    from rich.text import Text

    lines = document["inputs"]["assumed"]
    if lines:
        out.print(Text(wording.ASSUMED))
        for line in lines:
            out.print(Text(f"  {line}"))


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import properties_of

    decided = properties_of(OptimizeDecisions)
    lever = cast(dict[str, Any], decided["levers"]["items"])
    keys = [
        "bandwidth_x2", "restart_half", "mtbf_x2", "async", "memory_replica", "detect_half", "read_bw_x2",
        "without_jit", "without_notice", *registry.running_lever_keys(), "without_elastic", *registry.lever_keys(),
        "without_tier", *registry.other_lever_keys(),
    ]  # fmt: skip
    key = {"enum": keys, "description": lever["properties"]["key"]["description"]}
    # A running share's levers only: their gain over job and idle capacity (spare nodes, docs/model.md §15).
    cluster = {**schemas.NUMBER, "description": "with a spare pool: the gain over job and idle capacity, in pp"}
    lever["properties"] = {**lever["properties"], "key": key, "cluster_gain_pp": cluster}
    document = schemas.document(
        "optimize",
        "ckptcalc optimize --json",
        {"preset": {"type": ["string", "null"]}, **schemas.EVALUATION, **decided},
    )
    settings = {
        "type": "object",
        "description": "lines to paste into training frameworks (with --step-time)",
        "additionalProperties": {"type": "string"},
    }
    return schemas.with_optional(document, {"settings": settings, **registry.scale_schema()})


def markdown(doc: dict[str, Any]) -> list[str]:
    from ckptcalc.model.evaluation import TERMS
    from ckptcalc.model.statistics import shares
    from ckptcalc.output import markdown as md

    loss = doc["loss"]
    of_loss = shares({t: loss[t] for t in TERMS}, loss["total"])
    lines = ["## " + md.inline(wording.markdown_title("optimize", doc["preset"])), ""]
    interval, effective = md.interval(doc["optimal_interval_s"]), pct(doc["effective"])
    lines += [wording.markdown_headline(_strong(interval), _strong(effective), md.inline(doc["dominant"])), ""]
    if doc["inputs"]["assumed"]:
        lines += [md.inline(wording.ASSUMED), "", *(f"- {md.inline(line)}" for line in doc["inputs"]["assumed"]), ""]
    if len(doc["levels"]) != 1:  # a level or more beside storage
        lines += [*md.table(md.LEVEL_HEADER, md.levels(doc["levels"])), ""]
    lines.extend(
        md.table(
            ["term", "share of time", "share of loss"],
            [[t, pct(loss[t]), pct(of_loss[t])] for t in TERMS] + [["total", pct(loss["total"]), "100 %"]],
        )
    )
    band = doc["uncertainty"]
    if band is not None:
        lines += ["", md.inline(wording.markdown_band(wording.span(band["mtbf_s"], dur))), ""]
        lines.extend(md.table(["", "value", "note"], [list(row) for row in wording.uncertainty_rows(band)]))
    if doc["levers"]:
        lines += ["", md.inline(wording.MARKDOWN_LEVERS), ""]
        lines.extend(
            md.table(
                ["lever", "effective", "gain"],
                [
                    [
                        f"{v['name']}{wording.break_even(v.get('break_even'))}",
                        pct(v["effective"]),
                        f"{v['gain_pp']:+.2f} pp",
                    ]
                    for v in doc["levers"]
                ],
            )
        )
    return lines


def _strong(text: str) -> str:
    from ckptcalc.output import markdown as md

    return f"**{md.inline(text)}**"
