"""``plan``: its JSON document, its table and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ckptcalc.inputs import units
from ckptcalc.inputs.scenario import Job
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import Result
from ckptcalc.output import documents, wording

if TYPE_CHECKING:
    from ckptcalc.output import schema as schemas
    from ckptcalc.simulation.plan import Completion

dur = units.format_duration


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
    c = job.config
    return {
        "schema_version": documents.SCHEMA_VERSION,
        "command": "plan",
        "preset": preset,
        "inputs": documents.inputs(job),
        "model": result.model,
        "work_s": work_s,
        "steps": steps,
        "failure_dist": "exponential" if c.shape is None else "weibull",
        "shape": documents.number(c.shape),
        "interval_s": documents.interval(result.interval_s),
        "memory_interval_s": documents.interval(result.memory_interval_s),
        "storage_every": documents.whole(result.storage_every),
        "effective": float(result.effective),
        "runs": figures["runs"],
        "seed": done.seed,
        "completion_s": figures["completion_s"],
        "expected_s": expected_s,
        "mean_vs_expected": figures["mean_vs_expected"],
        "failures": figures["failures"],
        "p_no_failure": figures["p_no_failure"],
        "p_no_failure_ci95": figures["p_no_failure_ci95"],
        "gpu_hours": figures["gpu_hours"],
        "cost": figures["cost"],
        "deadline_s": deadline_s,
        "p_deadline": figures["p_deadline"],
        "p_deadline_ci95": figures["p_deadline_ci95"],
        "start": figures.get("start"),
        "deadline": figures.get("deadline"),
        "uncertainty": band(job, figures.get("band")),
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


def band(job: Job, ends: list[dict[str, Any] | None] | None) -> dict[str, Any] | None:
    """``plan``'s runs at either end of the MTBF's 95 % interval, at the plan's schedule and seed; pairs
    are [at low M, at high M], None at an open end; None without an interval."""
    if ends is None or job.mtbf_band is None:
        return None
    low, high = job.mtbf_band

    def pair(key: str) -> list[Any]:
        return [None if end is None else end[key] for end in ends]

    return {
        "source": {"failures": "failures", "failures_bound": "failures_bound"}.get(job.mtbf_source, "stated"),
        "mtbf_s": [low, high],
        "completion_s": pair("completion_s"),
        "expected_s": pair("expected_s"),
        "failures": pair("failures"),
        "p_deadline": None if ends[0] is None or ends[0]["p_deadline"] is None else pair("p_deadline"),
        "p_deadline_ci95": None if ends[0] is None or ends[0]["p_deadline"] is None else pair("p_deadline_ci95"),
    }


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


#: Schema builders by command name, as ``ckptcalc schema COMMAND`` takes them.
def schema() -> schemas.Schema:
    from ckptcalc.output import schema as schemas

    def spread(item: schemas.Schema) -> schemas.Schema:
        return schemas.object_schema({"p10": item, "p50": item, "p90": item, "p95": item, "mean": item})

    maybe_spread = {"oneOf": [{"type": "null"}, spread({"type": "number", "minimum": 0})]}
    interval = {"type": "array", "prefixItems": [schemas.FRACTION, schemas.FRACTION], "minItems": 2, "maxItems": 2}

    def ends(item: schemas.Schema) -> schemas.Schema:
        return {"type": "array", "items": {"oneOf": [{"type": "null"}, item]}, "minItems": 2, "maxItems": 2}

    iso = {"type": ["string", "null"], "format": "date-time"}
    band = schemas.object_schema(
        {
            "source": {"enum": ["failures", "failures_bound", "stated"]},
            "mtbf_s": ends(schemas.SECONDS),
            "completion_s": ends(spread(schemas.SECONDS)),
            "expected_s": ends(schemas.SECONDS),
            "failures": ends(spread({"type": "number", "minimum": 0})),
            "p_deadline": {"oneOf": [{"type": "null"}, ends(schemas.FRACTION)]},
            "p_deadline_ci95": {"oneOf": [{"type": "null"}, ends(interval)]},
        },
        "the same runs (schedule, runs, seed) at either end of the job MTBF's 95 % interval; pairs are [at low"
        " M, at high M], null at an open end; null without an interval",
    )
    return schemas.document(
        "plan",
        "ckptcalc plan --json",
        {
            "preset": {"type": ["string", "null"]},
            "inputs": schemas.INPUTS,
            "model": schemas.HEADLINE_MODEL,
            "work_s": schemas.SECONDS,
            "steps": {"type": ["integer", "null"], "minimum": 1},
            "failure_dist": {"enum": ["exponential", "weibull"]},
            "shape": schemas.MAYBE_NUMBER,
            "interval_s": schemas.INTERVAL,
            "memory_interval_s": schemas.MAYBE_SECONDS,
            "storage_every": {"type": ["integer", "null"], "minimum": 1},
            "effective": schemas.FRACTION,
            "runs": {"type": "integer", "minimum": 1},
            "seed": {"type": "integer", "minimum": 0},
            "completion_s": spread(schemas.SECONDS),
            "expected_s": {
                **schemas.MAYBE_SECONDS,
                "description": "W / effective by the exact model; null without one",
            },
            "mean_vs_expected": schemas.MAYBE_NUMBER,
            "failures": spread({"type": "number", "minimum": 0}),
            "p_no_failure": schemas.FRACTION,
            "p_no_failure_ci95": interval,
            "gpu_hours": maybe_spread,
            "cost": maybe_spread,
            "deadline_s": schemas.MAYBE_SECONDS,
            "p_deadline": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
            "p_deadline_ci95": {"oneOf": [{"type": "null"}, interval]},
            "start": {**iso, "description": "with a --deadline date or --start: when the run starts (ISO 8601)"},
            "deadline": {**iso, "description": "with a --deadline date or --start: the deadline (ISO 8601)"},
            "uncertainty": {"oneOf": [{"type": "null"}, band]},
            **registry.class_schema(),
            "warnings": schemas.WARNINGS,
            "storage": schemas.MAYBE_STORAGE,
        },
    )
