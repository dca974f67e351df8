"""``plan``: its JSON document, its table and its schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import Job
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import Result
from ckptcalc.output import documents, wording
from ckptcalc.output.typed import Bounds, Format, NonNegative, Share
from ckptcalc.records import Record

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas
    from ckptcalc.simulation.plan import Completion

dur = units.format_duration

#: Where the MTBF's interval came from: failures counted in a window, a bound when none was, or stated.
BandSource = Literal["failures", "failures_bound", "stated"]
#: A 95 % interval of a share (Wilson's, over the runs): [low, high].
ShareInterval = Annotated[tuple[Share, ...], Bounds(items=2)]


class Spread(Record):
    """One quantity over the runs: its quantiles and its mean."""

    p10: Annotated[NonNegative, "the 10th percentile over the runs"]
    p50: Annotated[NonNegative, "the median over the runs"]
    p90: Annotated[NonNegative, "the 90th percentile over the runs"]
    p95: Annotated[NonNegative, "the 95th percentile over the runs"]
    mean: Annotated[NonNegative, "the mean over the runs"]


class PlanBand(Record):
    """``plan``'s runs at either end of the MTBF's 95 % interval, at the plan's schedule and seed: its JSON
    and its schema are made from these fields."""

    source: Annotated[
        BandSource,
        "where the interval came from: failures counted in a window, a bound when none was, or stated",
    ]
    mtbf_s: Annotated[tuple[NonNegative | None, ...], "the job MTBF at either end, seconds", Bounds(items=2)]
    completion_s: Annotated[tuple[Spread | None, ...], "the runs' wall time, seconds", Bounds(items=2)]
    expected_s: Annotated[tuple[NonNegative | None, ...], "W / effective by the exact model, seconds", Bounds(items=2)]
    failures: Annotated[tuple[Spread | None, ...], "failures per run", Bounds(items=2)]
    p_deadline: Annotated[
        tuple[Share | None, ...] | None,
        "the share of runs done by the deadline; null without a deadline or a low end",
        Bounds(items=2),
    ]
    p_deadline_ci95: Annotated[
        tuple[ShareInterval | None, ...] | None,
        "that share's 95 % interval; null without a deadline or a low end",
        Bounds(items=2),
    ]


#: What :class:`PlanBand`'s part of the schema says of the whole.
BAND = (
    "the same runs (schedule, runs, seed) at either end of the job MTBF's 95 % interval; pairs are [at low"
    " M, at high M], null at an open end; null without an interval"
)


class PlanRuns(Record):
    """What ``plan --json`` says of its runs, between the inputs and the failure classes' parts: its JSON
    and its schema are made from these fields."""

    work_s: Annotated[NonNegative, "the useful work the run needs, seconds"]
    steps: Annotated[int | None, "the training steps asked for (--steps); null otherwise", Bounds(1)]
    failure_dist: Annotated[Literal["exponential", "weibull"], "the law of the time between failures"]
    shape: Annotated[float | None, "the Weibull shape; null under exponential failures"]
    interval_s: Annotated[
        NonNegative | None, "the storage checkpoint interval, seconds; null when no periodic checkpoint is needed"
    ]
    memory_interval_s: Annotated[NonNegative | None, "the memory checkpoint interval, seconds; null without one"]
    storage_every: Annotated[
        int | None, "memory checkpoints per storage checkpoint; null without memory checkpoints", Bounds(1)
    ]
    effective: Annotated[Share, "the model's effective time at the schedule run"]
    runs: Annotated[int, "the runs simulated", Bounds(1)]
    seed: Annotated[int, "the random seed; the same seed gives the same runs", Bounds(0)]
    completion_s: Annotated[Spread, "the runs' wall time, seconds"]
    expected_s: Annotated[NonNegative | None, "W / effective by the exact model; null without one"]
    mean_vs_expected: Annotated[float | None, "the mean wall time over expected_s, less 1; null without it"]
    failures: Annotated[Spread, "failures per run"]
    p_no_failure: Annotated[Share, "the share of runs without a failure"]
    p_no_failure_ci95: Annotated[ShareInterval, "that share's 95 % interval"]
    gpu_hours: Annotated[Spread | None, "GPU-hours per run; null without a GPU count"]
    cost: Annotated[Spread | None, "cost per run (GPU-hours x --gpu-hour-cost); null without a price"]
    deadline_s: Annotated[NonNegative | None, "the deadline as wall time from the start, seconds; null without"]
    p_deadline: Annotated[Share | None, "the share of runs done by the deadline; null without a deadline"]
    p_deadline_ci95: Annotated[ShareInterval | None, "that share's 95 % interval; null without a deadline"]
    start: Annotated[
        str | None, "with a --deadline date or --start: when the run starts (ISO 8601)", Format("date-time")
    ]
    deadline: Annotated[str | None, "with a --deadline date or --start: the deadline (ISO 8601)", Format("date-time")]
    uncertainty: Annotated[PlanBand | None, BAND]


def document(
    job: Job,
    result: Result,
    done: Completion,
    preset: str | None,
    *,
    work_s: float,
    steps: int | None,
    expected_s: float | None,
    deadline_s: float | None,
    figures: dict[str, Any],
) -> dict[str, Any]:
    """Everything ``plan --json`` prints: the runs' wall time, failures and cost (SI units); ``figures``
    holds what was worked out from the runs (their quantiles, shares and intervals), and may hold
    ``band`` (the same at either end of the MTBF's interval), ``start`` and ``deadline`` (ISO 8601)."""
    from ckptcalc.output.typed import document_of

    c = job.config
    runs = PlanRuns(
        work_s=work_s,
        steps=steps,
        failure_dist="exponential" if c.shape is None else "weibull",
        shape=documents.number(c.shape),
        interval_s=documents.interval(result.interval_s),
        memory_interval_s=documents.interval(result.memory_interval_s),
        storage_every=documents.whole(result.storage_every),
        effective=float(result.effective),
        runs=figures["runs"],
        seed=done.seed,
        completion_s=Spread(**figures["completion_s"]),
        expected_s=expected_s,
        mean_vs_expected=figures["mean_vs_expected"],
        failures=Spread(**figures["failures"]),
        p_no_failure=figures["p_no_failure"],
        p_no_failure_ci95=tuple(figures["p_no_failure_ci95"]),
        gpu_hours=_spread(figures["gpu_hours"]),
        cost=_spread(figures["cost"]),
        deadline_s=deadline_s,
        p_deadline=figures["p_deadline"],
        p_deadline_ci95=_pair(figures["p_deadline_ci95"]),
        start=figures.get("start"),
        deadline=figures.get("deadline"),
        uncertainty=band(job, figures.get("band")),
    )
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "plan",
        "preset": preset,
        "inputs": documents.inputs(job),
        "model": result.model,
        **document_of(runs),
        **registry.class_parts(job, result),
        "warnings": [
            *documents.input_warnings(job),
            *documents.warnings(result),
            *([] if expected_s is not None else [wording.NO_EXACT]),
            *documents.storage_warnings(job, result),
            *registry.notes(result),
        ],
        "storage": documents.storage(job, result),
    }


def _spread(found: dict[str, float] | None) -> Spread | None:
    return None if found is None else Spread(**found)


def _pair(found: list[Any] | None) -> tuple[Any, ...] | None:
    return None if found is None else tuple(found)


def band(job: Job, ends: list[dict[str, Any] | None] | None) -> PlanBand | None:
    """``plan``'s runs at either end of the MTBF's 95 % interval, at the plan's schedule and seed; pairs
    are [at low M, at high M], None at an open end; None without an interval."""
    if ends is None or job.mtbf_band is None:
        return None
    low, high = job.mtbf_band

    def pair(key: str, made: Callable[[Any], Any] = lambda found: found) -> tuple[Any, ...]:
        return tuple(None if end is None else made(end[key]) for end in ends)

    deadline = ends[0] is not None and ends[0]["p_deadline"] is not None
    counted = job.mtbf_source
    source: BandSource = (
        "failures" if counted == "failures" else "failures_bound" if counted == "failures_bound" else "stated"
    )
    return PlanBand(
        source=source,
        mtbf_s=(low, high),
        completion_s=pair("completion_s", _spread),
        expected_s=pair("expected_s"),
        failures=pair("failures", _spread),
        p_deadline=pair("p_deadline") if deadline else None,
        p_deadline_ci95=pair("p_deadline_ci95", _pair) if deadline else None,
    )


def table(job: Job, document: dict[str, Any]) -> None:
    """``plan``: the distribution of a whole run's wall time, failures and cost."""
    from rich.text import Text

    from ckptcalc.output import tables

    out = tables.console()
    narrow = tables.narrow(out)
    out.print(Text(wording.plan_header(document), style="bold"))
    out.print(tables.inputs_table(job, narrow))
    out.print()
    out.print(wording.plan_schedule(document))
    out.print()
    table = tables.grid(wording.PLAN_TITLE, narrow)
    table.add_column("", no_wrap=True)
    columns = ("p10", "p50", "p90", "p95", "mean")
    for name in columns:
        table.add_column(name, justify="right", no_wrap=True)
    completion, failures = document["completion_s"], document["failures"]
    table.add_row("wall time", *(dur(completion[k]) for k in columns))
    # The same runs at either end of the MTBF's interval, under the wall time they bracket.
    for label, spread in wording.plan_band_rows(document.get("uncertainty")):
        table.add_row(label, *(dur(spread[k]) for k in columns))
    table.add_row("failures", *(f"{failures[k]:,.0f}" for k in columns[:-1]), units.sig(failures["mean"]))
    for key, label in (("gpu_hours", "GPU-hours"), ("cost", "cost")):
        if document[key] is not None:
            table.add_row(label, *(tables.amount(document[key][k]) for k in columns))
    out.print(table)
    for line in wording.plan_lines(document):
        out.print(line)
    for line in wording.storage_lines(document.get("storage")):
        out.print(line)
    tables.warn(document["warnings"])


def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas
    from ckptcalc.output.typed import properties_of

    return schemas.document(
        "plan",
        "ckptcalc plan --json",
        {
            "preset": {"type": ["string", "null"]},
            "inputs": schemas.INPUTS,
            "model": schemas.HEADLINE_MODEL,
            **properties_of(PlanRuns),
            **registry.class_schema(),
            "warnings": schemas.WARNINGS,
            "storage": schemas.MAYBE_STORAGE,
        },
    )
