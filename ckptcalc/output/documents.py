"""Results as JSON documents and CSV: formatting only, no Rich, no numpy at import.

Every number here was computed by the model, the decisions or the API; this
module only lays them out. The documents carry full precision in SI units
and :func:`dumps` refuses NaN and infinities. Sentences come from
:mod:`ckptcalc.output.wording`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ckptcalc.inputs.scenario import DEFAULT_BYTES_PER_PARAM, Job, Scenario, anatomy
from ckptcalc.mechanisms import registry
from ckptcalc.model.arrays import scalar
from ckptcalc.model.decisions import Cost, Lever, LeverAssumptions, Steps, Targets
from ckptcalc.model.evaluation import TERMS, FirstOrder, Plan, Result, unneeded
from ckptcalc.output import wording

if TYPE_CHECKING:
    from ckptcalc.inputs.grid import Sweep
    from ckptcalc.logs.analyze import Analysis
    from ckptcalc.logs.fit import EventLog, FailureFit
    from ckptcalc.model.band import Band
    from ckptcalc.simulation.events import Events
    from ckptcalc.simulation.plan import Completion
    from ckptcalc.simulation.search import Search
    from ckptcalc.simulation.timeline import Failures, Simulation

#: Version of every JSON document ckptcalc prints. Keys are only ever added
#: within a version; a key that changes meaning or goes away bumps it.
SCHEMA_VERSION = 2


def warnings(result: Result) -> list[str]:
    return [wording.caveat(c) for c in result.caveats]


def input_warnings(job: Job) -> list[str]:
    """What the inputs state that is almost certainly not what was meant (a bare count or size)."""
    return [wording.bare_count(s.name, s.where, s.value) for s in job.suspects]


def _f(value: Any) -> float | None:
    return None if value is None else float(value)


def _interval(value: Any) -> float | None:
    """An interval, null when infinite: no periodic checkpoint is needed (docs/model.md §13.3)."""
    return None if value is None or math.isinf(float(value)) else float(value)


def recovery(job: Job) -> dict[str, Any]:
    """The failure classes' records (docs/model.md §13): each mechanism's by its key, null where the job
    has none of its classes."""
    return registry.records(job.config, not unneeded(job.config))


def inputs(job: Job) -> dict[str, Any]:
    """The normalised inputs, SI units, as echoed in every JSON document."""
    s, c = job.scenario, job.config
    found = {
        "params": _f(s.params) if s.checkpoint_bytes is None else None,
        "bytes_per_param": _f(s.bytes_per_param or DEFAULT_BYTES_PER_PARAM) if s.checkpoint_bytes is None else None,
        "checkpoint_bytes": _f(c.checkpoint_bytes),
        "bandwidth_bytes_per_s": _f(c.bandwidth),
        "mtbf_s": _f(c.mtbf_s),
        "mtbf_source": job.mtbf_source,
        "restart_s": _f(c.storage_restart_s),
        "restart_components": restart_components(job),
        "gpus": _f(job.gpus),
        "gpu_mtbf_s": _f(job.gpu_mtbf_s),
        "snapshot_bandwidth_bytes_per_s": _f(c.snapshot_bandwidth),
        "replica_survival": _f(c.replica_survival),
        "memory_bandwidth_bytes_per_s": _f(c.memory_bandwidth),
        # A rate stated per GPU: the value per GPU beside the aggregate above (null otherwise).
        "bandwidth_per_gpu_bytes_per_s": _per_gpu(s, "bandwidth"),
        "snapshot_bandwidth_per_gpu_bytes_per_s": _per_gpu(s, "snapshot_bandwidth"),
        "memory_bandwidth_per_gpu_bytes_per_s": _per_gpu(s, "memory_bandwidth"),
        "memory_restart_s": _f(c.levels()[0].restart_s) if c.has_memory else None,
        "tiers": tiers(job),
        "failure_dist": "exponential" if c.shape is None else "weibull",
        "shape": _f(c.shape),
        "mtbf_ci95": None if job.mtbf_band is None else [float(job.mtbf_band[0]), _f(job.mtbf_band[1])],
        **registry.echo(c),
        "keep": None if c.keep is None else int(c.keep),
        "work_s": _f(c.work_s),
        "sources": {**assumed_sources(job), **sources(s)},
        "assumed": wording.assumed(job.assumed, job.gpus),
    }
    return registry.placed_before(found, registry.echo_parts(c))


def assumed_sources(job: Job) -> dict[str, str]:
    """How each value the job assumes came, by preset key (``{"failures.restart": "default, llama3-405b
    preset"}``)."""
    from ckptcalc.inputs.fields import BY_NAME

    return {BY_NAME[item.name].path: wording.assumed_how(item) for item in job.assumed}


def sources(scenario: Scenario) -> dict[str, str]:
    """How the values a preset records as not given came, by preset key (``{"failures.mtbf": "fitted from
    incidents.jsonl"}``); a value not listed was given."""
    from ckptcalc.inputs.fields import BY_NAME

    return {BY_NAME[name].path: text for name, text in scenario.sources}


def _per_gpu(scenario: Scenario, name: str) -> float | None:
    return _f(getattr(scenario, name)) if name in scenario.per_gpu else None


def restart_components(job: Job) -> dict[str, Any] | None:
    """Each level's restart taken apart (levels whose restart is given as parts), or None."""
    parts = anatomy(job)
    if not parts:
        return None
    return {
        name: {
            "detect_s": p.detect_s,
            "reschedule_s": p.reschedule_s,
            "reload_s": p.reload_s,
            "read_bandwidth_bytes_per_s": p.read_bandwidth,
            "warmup_s": p.warmup_s,
            "total_s": p.total_s,
        }
        for name, p in parts
    }


def tiers(job: Job) -> list[dict[str, Any]] | None:
    """Every tier of a configuration of three or more, fastest first, or None."""
    c = job.config
    if not c.is_nested:
        return None
    s = job.scenario
    bandwidths = [c.memory_bandwidth, *(t.bandwidth for t in c.middle), c.bandwidth]
    per_gpu = [
        s.memory_bandwidth if "memory_bandwidth" in s.per_gpu else None,
        *(t.bandwidth if "bandwidth" in t.per_gpu else None for t in s.middle),
        s.bandwidth if "bandwidth" in s.per_gpu else None,
    ]
    holders = [None, *c.middle, c]  # what states each tier's costs: none on the memory tier
    return [
        {
            "name": level.name,
            "bandwidth_bytes_per_s": _f(bandwidth),
            "bandwidth_per_gpu_bytes_per_s": _f(rate),
            "stall_s": float(level.stall_s),
            "share_of_failures": float(level.share),
            "restart_s": float(level.restart_s),
            **registry.tier_echo(holder),
        }
        for level, bandwidth, rate, holder in zip(c.levels(), bandwidths, per_gpu, holders, strict=True)
    ]


def loss(result: Result | FirstOrder) -> dict[str, float]:
    """The loss split; exact shares of elapsed time for a :class:`Result`."""
    parts = {"write": result.write, "rework": result.rework, "restart": result.restart, "total": result.total}
    return {k: float(v) for k, v in parts.items()}


def level(item: Plan, steps: int | None = None) -> dict[str, Any]:
    lv = item.level
    return {
        "name": lv.name,
        "stall_s": float(lv.snapshot_s),
        "lag_s": float(lv.persist_s),
        "slowdown_s": float(lv.slowdown_s),
        "interval_s": _interval(item.interval_s),
        "optimal_interval_s": _interval(item.optimal_interval_s),
        "share_of_failures": float(lv.share),
        "restart_s": float(lv.restart_s),
        "optimal_interval_steps": steps,
    }


def first_order(result: Result) -> dict[str, Any]:
    """Young's first-order model of the same configuration: the explanation beside the exact answer."""
    fo = result.first_order
    return {
        "optimal_interval_s": _interval(fo.optimal_interval_s),
        "interval_s": _interval(fo.interval_s),
        "loss": loss(fo),
        "effective": float(fo.effective),
    }


def uncertainty(job: Job, band: Band | None) -> dict[str, Any] | None:
    """The answer across the MTBF's 95 % interval (docs/model.md §9); pairs are [at low M, at high M]."""
    if band is None:
        return None
    low, high = band.mtbf_s
    return {
        "source": {"failures": "failures", "failures_bound": "failures_bound"}.get(job.mtbf_source, "stated"),
        "mtbf_s": [low, high],
        "effective": list(band.effective),
        "optimal_interval_s": list(band.optimal_interval_s),
        "optimal_effective": list(band.optimal_effective),
        "robust_interval_s": band.robust_interval_s,
        "robust_memory_interval_s": band.robust_memory_interval_s,
        "robust_storage_every": _whole(band.robust_storage_every),
        "robust_effective": list(band.robust_effective),
        "robust_regret_pp": band.robust_regret_pp,
        "point_regret_pp": band.point_regret_pp,
    }


def evaluation(
    job: Job, result: Result, steps: Steps | None = None, band: Band | None = None, *, penalty_pp: float
) -> dict[str, Any]:
    """The fields shared by ``optimize`` and each ``compare`` scenario; ``penalty_pp`` is what the interval
    used costs against the optimum, in points of effective time."""
    found = {
        "inputs": inputs(job),
        "model": result.model,
        "write_s": float(job.config.write_s),
        "optimal_interval_s": _interval(result.optimal_interval_s),
        "interval_s": _interval(result.interval_s),
        "memory_interval_s": _interval(result.memory_interval_s),
        "storage_every": _whole(result.storage_every),
        "optimal_memory_interval_s": _interval(result.optimal_memory_interval_s),
        "optimal_storage_every": _whole(result.optimal_storage_every),
        "young_interval_s": _interval(result.young_interval_s),
        "daly_interval_s": _f(result.daly_interval_s),
        "loss": loss(result),
        "effective": float(result.effective),
        "optimal_effective": float(result.optimal_effective),
        "interval_penalty_pp": penalty_pp,
        "dominant": TERMS[int(result.dominant)],
        "first_order": first_order(result),
        "levels": levels(result, steps),
        "uncertainty": uncertainty(job, band),
        **recovery(job),
        "warnings": [
            *input_warnings(job),
            *warnings(result),
            *_bound_warning(job),
            *_recovery_note(job),
            *storage_warnings(job, result),
        ],
        **registry.own_parts(result),
        "storage": storage(job, result),
        **registry.class_parts(job, result),
    }
    return registry.placed(found, registry.result_parts(job, result))


def _recovery_note(job: Job) -> list[str]:
    """With every failure recovered in place or met with notice: no periodic checkpoint is needed."""
    return [wording.no_periodic_needed()] if unneeded(job.config) else []


def _bound_warning(job: Job) -> list[str]:
    """What the inputs leave to assumption: M a bound only, restart parts not given (they count 0)."""
    notes = []
    if job.mtbf_source == "failures_bound":
        notes.append(wording.no_failures(float(job.config.mtbf_s), float(job.scenario.window_s or 0.0)))
    if anatomy(job):
        s = job.scenario
        missing = [name for name in ("detect", "reschedule", "warmup") if getattr(s, f"{name}_s") is None]
        if missing:
            notes.append(wording.parts_missing(missing))
    return notes


def levels(result: Result, steps: Steps | None) -> list[dict[str, Any]]:
    if steps is None:
        return [level(item) for item in result.levels]
    counts = [steps.storage] if steps.memory is None else [steps.memory, steps.storage]
    if steps.tiers is not None:
        counts = list(steps.tiers)
    return [level(item, count) for item, count in zip(result.levels, counts, strict=True)]


def _whole(value: Any) -> int | None:
    return None if value is None else int(value)


def optimize(
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
    s = job.scenario
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "command": "optimize", "preset": preset}
    document.update(evaluation(job, result, steps, band, penalty_pp=penalty_pp))
    document.update(
        {
            "levers": [
                {"key": v.key, "name": wording.lever_name(v.key, v.changed, assume, job.gpus, v.value, job.config),
                 "effective": v.effective, "gain_pp": v.gain_pp, "break_even": _break_even(v),
                 **({} if v.cluster_gain_pp is None else {"cluster_gain_pp": v.cluster_gain_pp})}
                for v in levers
            ],
            "discard": discard,
            "goodput": goodput,
            "target": target,
            "targets": None,
            "lost_gpu_hours_per_day": cost.lost_gpu_hours_per_day if cost is not None else None,
            "lost_cost_per_day": cost.lost_cost_per_day if cost is not None else None,
            "lost_cost_per_30_days": cost.lost_cost_per_30_days if cost is not None else None,
            "step_time_s": s.step_time_s,
            "optimal_interval_steps": steps.storage if steps is not None else None,
        }
    )  # fmt: skip
    # What the job as evaluated assumes of the mechanisms it lacks (a replacement node always free).
    document["inputs"]["assumed"] = [*document["inputs"]["assumed"], *registry.baseline_notes(levers, wording.SHOW)]
    if targets is not None:
        document["targets"] = {
            "bandwidth_bytes_per_s": targets.bandwidth,
            "restart_s": targets.restart_s,
            "mtbf_s": targets.mtbf_s,
            "gpus": targets.gpus,
            "unbounded": list(targets.unbounded),
        }
    if steps is not None:
        document["settings"] = settings(result, steps)
    return document


def _break_even(lever: Lever) -> dict[str, Any] | None:
    """A lever's break-even in JSON (SI units), None for a lever without a cost."""
    found = lever.break_even
    if found is None:
        return None
    return {"key": found.key, "value": found.value, "unit": found.unit, "pays": found.pays}


def settings(result: Result, steps: Steps) -> dict[str, str]:
    """Lines to paste into common training frameworks, for the optimal intervals."""
    lines = {
        "megatron": f"--save-interval {steps.storage}",
        "torchtitan": f"[checkpoint] interval = {steps.storage}",
        "scr": f"SCR_CHECKPOINT_SECONDS={float(result.optimal_interval_s):.0f}",
    }
    if steps.memory is not None:
        lines["megatron_memory"] = f"--non-persistent-save-interval {steps.memory}"
    return lines


def dumps(document: dict[str, Any]) -> str:
    """One JSON document, no NaN or infinity."""
    import json

    return json.dumps(document, indent=2, allow_nan=False)


def value_at(document: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (``loss.restart``, ``levels.0.interval_s``); KeyError if none."""
    node: Any = document
    parts = path.split(".")
    while parts:
        part = parts.pop(0)
        if isinstance(node, dict) and part not in node:
            # A key that holds a dot itself (``inputs.sources`` is keyed by ``failures.mtbf``): the
            # shortest run of the parts left that names one.
            for end, _ in enumerate(parts, start=1):
                if (joined := ".".join([part, *parts[:end]])) in node:
                    part, parts = joined, parts[end:]
                    break
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isascii() and part.isdigit():
            try:
                node = node[int(part)]
            except IndexError:
                raise KeyError(path) from None
        else:
            raise KeyError(path)
    return node


def scalar_paths(document: Any, prefix: str = "") -> list[str]:
    """Every dotted path in ``document`` that leads to a single value (number, string or null)."""
    paths: list[str] = []
    if isinstance(document, dict):
        items = list(document.items())
    elif isinstance(document, list):
        items = list(enumerate(document))
    else:
        items = []
    for key, value in items:
        path = f"{prefix}{key}"
        if isinstance(value, (dict, list)):
            paths.extend(scalar_paths(value, path + "."))
        elif not isinstance(value, bool):
            paths.append(path)
    return paths


def _column(values: Any) -> list[float]:
    return [float(v) for v in values]


def _broadcast(value: Any, like: Any) -> Any:
    import numpy

    return numpy.broadcast_to(numpy.asarray(value, dtype=float), numpy.shape(like))


def _columns(run: Sweep) -> dict[str, Any]:
    """Every per-point column of a sweep, broadcast to the swept values (numpy arrays)."""
    import numpy

    result = run.result
    values = run.values
    columns: dict[str, Any] = {
        "interval_s": result.interval_s,
        "optimal_interval_s": result.optimal_interval_s,
        "write_s": result.config.write_s,
        "loss_write": result.write,
        "loss_rework": result.rework,
        "loss_restart": result.restart,
        "loss_total": result.total,
        "effective": result.effective,
        "first_order_effective": result.first_order.effective,
    }
    if result.memory_interval_s is not None:
        columns["memory_interval_s"] = result.memory_interval_s
        columns["storage_every"] = result.storage_every
    columns.update(registry.sweep_columns(result))
    columns.update(registry.sweep_parts(run.over, values, result))
    from ckptcalc.model.storage import top_load

    columns["storage_busy_share"], columns["bytes_written_per_day"] = top_load(result)
    shaped = {name: _broadcast(value, values) for name, value in columns.items()}
    shaped["dominant"] = numpy.broadcast_to(result.dominant, numpy.shape(values))
    return shaped


def sweep(job: Job, run: Sweep, preset: str | None) -> dict[str, Any]:
    """Columns of equal length, one entry per swept point."""
    from ckptcalc.inputs.grid import SI_NAME

    columns = _columns(run)
    two = "storage_every" in columns
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "sweep",
        "preset": preset,
        "model": run.result.model,
        "inputs": inputs(job),
        "over": run.over,
        "values_name": SI_NAME[run.over],
        "log": run.log,
        "base_optimal_interval_s": float(run.base.optimal_interval_s),
        "base_effective": float(run.base.effective),
        "values": _column(run.values),
        "interval_s": _column(columns["interval_s"]),
        "optimal_interval_s": _column(columns["optimal_interval_s"]),
        "memory_interval_s": _column(columns["memory_interval_s"]) if two else None,
        "storage_every": [int(v) for v in columns["storage_every"]] if two else None,
        "write_s": _column(columns["write_s"]),
        "loss": {k: _column(columns[f"loss_{k}"]) for k in ("write", "rework", "restart", "total")},
        "effective": _column(columns["effective"]),
        "first_order_effective": _column(columns["first_order_effective"]),
        "p_no_spare": _column(columns["p_no_spare"]) if "p_no_spare" in columns else None,
        "cluster_effective": _column(columns["cluster_effective"]) if "cluster_effective" in columns else None,
        "dominant": [TERMS[int(i)] for i in columns["dominant"]],
        "storage_busy_share": _column(columns["storage_busy_share"]),
        "bytes_written_per_day": _column(columns["bytes_written_per_day"]),
        "warnings": [*input_warnings(job), *warnings(run.result)],
        **{name: _column(columns[name]) for name in registry.sweep_part_schema() if name in columns},
        **registry.sweep_peak(run.values, columns, (0, 0), {}),
    }


def sweep_csv(run: Sweep, *, header: bool = True) -> str:
    """Header row (unless ``header`` is false: a later slice) and one row per point; SI units in the
    column names."""
    import io

    import numpy

    from ckptcalc.inputs.grid import SI_NAME

    shaped = _columns(run)
    dominant = shaped.pop("dominant")
    columns: dict[str, Any] = {SI_NAME[run.over]: run.values}
    for name, value in shaped.items():
        columns.setdefault(name, value)
    names = numpy.asarray(TERMS)[dominant]
    buffer = io.StringIO()
    if header:
        buffer.write(",".join([*columns, "dominant"]) + "\n")
    table = numpy.column_stack(list(columns.values()))
    for row, name in zip(table.tolist(), names.tolist(), strict=True):
        buffer.write(",".join(repr(x) for x in row) + f",{name}\n")
    return buffer.getvalue()


def _tier_intervals(result: Result) -> list[dict[str, Any]]:
    """Each tier's name and interval, fastest first."""
    return [{"name": str(plan.level.name), "interval_s": float(plan.interval_s)} for plan in result.levels]


def simulation(
    job: Job,
    outcome: Simulation,
    failures: Failures,
    preset: str | None,
    search: Search | None,
    *,
    analytic: tuple[float, float | None],
    agreement: dict[str, dict[str, Any] | None],
    result: Result,
    base: Result | None,
    given: Result | None = None,
) -> dict[str, Any]:
    """Everything ``simulate --json`` prints: the run, and the models at the schedule it ran
    (``result``; ``base`` is the job at its optimum, with ``search``; ``given`` the job as stated,
    whose intervals may have been rounded to run); ``agreement`` is each model's verdict on the run."""
    first, exact = analytic
    low, high = outcome.ci95
    notes = [*([] if given is None else warnings(given)), *warnings(result)]
    notes = [*dict.fromkeys(notes), *([wording.NO_EXACT] if exact is None else [])]
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "command": "simulate",
        "preset": preset,
        "inputs": inputs(job),
        "failure_dist": "exponential" if failures.shape is None else "weibull",
        "shape": failures.shape,
        "seed": outcome.seed,
        "cycles": outcome.cycles,
        "interval_s": outcome.interval_s,
        "memory_interval_s": outcome.memory_interval_s,
        "storage_every": outcome.storage_every,
        "tier_intervals": _tier_intervals(result) if job.config.is_nested else None,
        **recovery(job),
        "effective": outcome.effective,
        "effective_ci95": [low, high],
        "split": {
            "useful": outcome.split.useful,
            "write": outcome.split.write,
            "rework": outcome.split.rework,
            "restart": outcome.split.restart,
        },
        "elastic": None if not registry.takes_over(job.config) else {"lost": outcome.elastic},
        **registry.class_simulated_parts(outcome.late, result),
        "failures": outcome.failures,
        "failures_in_restart": outcome.failures_in_restart,
        "analytic": {"first_order": first, "exact": exact},
        "agreement": {"first_order": agreement["first_order"], "exact": agreement["exact"]},
        "optimize": None,
        "warnings": [*input_warnings(job), *notes, *storage_warnings(job, result)],
        "storage": storage(job, result),
    }
    document = registry.placed(document, registry.simulated_parts(outcome, result))
    if job.config.has_recovery:
        # The periodic schedule run, not the one-step tier under it (docs/model.md §13).
        document["interval_s"] = _interval(result.interval_s)
        document["memory_interval_s"] = _interval(result.memory_interval_s)
        document["storage_every"] = _whole(result.storage_every)
    if search is not None and base is not None:
        document["optimize"] = {
            "interval_s": search.interval_s,
            "memory_interval_s": search.memory_interval_s,
            "storage_every": search.storage_every,
            "effective": search.effective,
            "evaluations": search.evaluations,
            "young_interval_s": float(base.young_interval_s),
            # The exact optimum under exponential failures, whatever the simulated distribution.
            "exponential_exact_interval_s": float(base.optimal_interval_s),
        }
    return document


def fit(
    fitted: FailureFit,
    logs: list[str],
    *,
    log: EventLog | None = None,
    where: list[str] | None = None,
    where_any: list[str] | None = None,
    source: str = "log",
    at_start: int = 0,
) -> dict[str, Any]:
    """Everything ``fit --json`` prints: what was read and what was estimated, in SI units; ``at_start``
    counts the interruptions at the window's start (0 or 1), which only start the clock.

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
        "schema_version": SCHEMA_VERSION,
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
        else reading(
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
        **fitted.to_dict(),
        "interruptions_note": None if log is None else _interruptions_note(fitted, at_start),
        "warnings": notes,
    }


def _interruptions_note(fitted: FailureFit, at_start: int) -> str | None:
    """Why the interruptions counted are fewer than the events kept: those outside the window, those
    coalesced, and an interruption at the window's start (``at_start``: it only starts the clock)."""
    return wording.interruptions_counted(
        fitted.events_kept, fitted.events_outside_window, fitted.events_coalesced, at_start, fitted.mtbf.interruptions
    )


def plan(
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
        "schema_version": SCHEMA_VERSION,
        "command": "plan",
        "preset": preset,
        "inputs": inputs(job),
        "work_s": work_s,
        "steps": steps,
        "failure_dist": "exponential" if c.shape is None else "weibull",
        "shape": _f(c.shape),
        "interval_s": _interval(result.interval_s),
        "memory_interval_s": _interval(result.memory_interval_s),
        "storage_every": _whole(result.storage_every),
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
        "uncertainty": plan_band(job, figures.get("band")),
        **registry.class_parts(job, result),
        "warnings": [
            *input_warnings(job),
            *warnings(result),
            *([] if expected_s is not None else [wording.NO_EXACT]),
            *storage_warnings(job, result),
            *registry.notes(result),
        ],
        "storage": storage(job, result),
    }


def plan_band(job: Job, ends: list[dict[str, Any] | None] | None) -> dict[str, Any] | None:
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


def analyze(
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
) -> dict[str, Any]:
    """Everything ``analyze --json`` prints (SI units; shares of the run's wall time). ``goodput`` is the
    realised effective time less the ``discard``ed share, ``cause_shares`` each cause's lost time as a
    share of wall time, ``below_slo`` each window's verdict against ``slo`` (None without one)."""
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
        "schema_version": SCHEMA_VERSION,
        "command": "analyze",
        "log": log,
        "time_kind": tl.time_kind,
        "lines": {"read": tl.lines, "used": tl.used, "unknown_events": tl.unknown, "skipped_bad": tl.skipped_bad,
                  "progress": tl.progress},
        "reading": reading(
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
            "groups_down": split.groups_down,
            "quorum": split.quorum,
            "overhead": split.overhead,
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
            "mtbf_s": _f(fitted.mtbf.mtbf_s),
            "mtbf_ci95": [_f(low), _f(high)],
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
        else {**{k: v for k, v in model.items() if k != "result"}, **registry.own_parts(model["result"])},
        "gpus": gpus,
        "causes": [
            {"cause": c.cause, "failures": c.failures, "lost_s": c.lost_s, "share_of_wall": share}
            for c, share in zip(analysis.causes, cause_shares, strict=True)
        ],
        "slo": slo,
        "windows": None
        if analysis.windows is None
        else [
            {"start_s": w.start_s, "end_s": w.end_s, "effective": w.split.effective, "write": w.split.write,
             "rework": w.split.rework, "restart": w.split.restart, "groups_down": w.split.groups_down,
             "quorum": w.split.quorum, "overhead": w.split.overhead, "silent": w.split.silent,
             "below_slo": below}
            for w, below in zip(analysis.windows, below_slo or (), strict=True)
        ],
        "warnings": notes,
    }  # fmt: skip


#: The forms ``simulate --events`` writes, by the file's extension.
EVENT_LOG_FORMS = ("csv", "jsonl", "json")

_CSV_HEADER = "time_s,event,level,resumed_from,async_persist_end\n"

#: With replica groups, two columns more: the group of a group_down or group_up, and a pause's end.
_CSV_GROUPS = ",group,quorum_end"


def event_log(pieces: Iterable[Events], form: str, *, groups: bool = False) -> Iterator[str]:
    """A simulated timeline (:class:`ckptcalc.simulation.events.Events`, piece by piece) as an event log
    in ``form`` (csv, jsonl or json), a piece of text at a time: times in seconds in ``time_s``, the
    other times in seconds too, and ``async_persist_end`` ``interrupted`` where a failure cut the persist
    short; with ``groups``, each group event's ``group`` and ``quorum_end`` (CSV: two columns more)."""
    import operator

    import numpy

    from ckptcalc.logs.analyze import INTERRUPTED
    from ckptcalc.simulation.events import EVENT_KINDS

    csv = form == "csv"
    end = "" if form == "json" else "\n"  # a JSON array's elements are joined by commas instead
    level = {name: name.startswith("checkpoint") for name in EVENT_KINDS}
    more = ",," if groups else ""
    if csv:
        tails = [f",{name},{'storage' if level[name] else ''},,{more}\n" for name in EVENT_KINDS]
        restarted = (",restart_end,,{!r}," + more + "\n").format
        persisted = ",checkpoint_end,storage,,{}\n".format
        interrupted = INTERRUPTED
        heads: Any = repr
    else:
        storage = ', "level": "storage"'
        tails = [f', "event": "{name}"{storage if level[name] else ""}}}{end}' for name in EVENT_KINDS]
        restarted = (', "event": "restart_end", "resumed_from": {!r}}}' + end).format
        persisted = (', "event": "checkpoint_end", "level": "storage", "async_persist_end": {}}}' + end).format
        interrupted = f'"{INTERRUPTED}"'
        heads = '{{"time_s": {!r}'.format
    endings = numpy.array(tails, dtype=object)
    header = _CSV_HEADER.replace("\n", _CSV_GROUPS + "\n") if groups else _CSV_HEADER
    yield header if csv else "[\n" if form == "json" else ""
    first = True
    for piece in pieces:
        if not piece.time_s.size:
            continue
        times = list(map(heads, piece.time_s.tolist()))
        rest = endings[piece.kind].tolist()
        # The few rows with a second time: restarts (what they resumed from) and persists.
        for i in numpy.flatnonzero(~numpy.isnan(piece.resumed_from_s)).tolist():
            rest[i] = restarted(float(piece.resumed_from_s[i]))
        persists = numpy.flatnonzero(~numpy.isnan(piece.persist_end_s))
        values = piece.persist_end_s[persists].tolist()
        for i, value in zip(persists.tolist(), values, strict=True):
            rest[i] = persisted(interrupted if value == _INF else repr(value))
        _group_rows(rest, piece, csv, end)
        rows = map(operator.add, times, rest)
        if form == "json":
            if not first:
                yield ",\n"
            yield ",\n".join(rows)
        else:
            yield "".join(rows)
        first = False
    if form == "json":
        yield "\n]\n"


_INF = float("inf")


def _group_rows(rest: list[str], piece: Events, csv: bool, end: str) -> None:
    """The group events of ``piece`` written with their group and pause end, in place in ``rest``."""
    for i, name, group, quorum in piece.group_events():
        if csv:
            rest[i] = f",{name},,,,{group},{'' if quorum is None else repr(quorum)}\n"
        else:
            pause = "" if quorum is None else f', "quorum_end": {quorum!r}'
            rest[i] = f', "event": "{name}", "group": {group}{pause}}}{end}'


_SLOT = "\x00column\x00"

#: Characters of a spooled column copied at a time.
_BLOCK = 1 << 20


def stream_sweep_json(job: Job, plan: Any, preset: str | None, out: TextIO) -> None:
    """``sweep --json`` written slice by slice: each column is spooled to a temporary file as its slices
    are evaluated, then the document is written around them. The same document as :func:`sweep`."""
    import tempfile

    from ckptcalc.inputs.grid import SI_NAME
    from ckptcalc.model.evaluation import Caveat
    from ckptcalc.model.statistics import tally

    spools: dict[str, Any] = {}
    caveats: list[tuple[tuple[str, str | None], int]] = []
    first: Any = None
    peak: dict[str, Any] = {}
    try:
        for number, run in enumerate(plan.runs()):
            if first is None:
                first = run
            columns = _columns(run)
            peak = registry.sweep_peak(run.values, columns, (number, plan.CHUNK), peak)
            texts: dict[str, str] = {"values": _numbers(run.values)}
            for name, values in columns.items():
                if name == "dominant":
                    names = [f'"{term}"' for term in TERMS]
                    texts[name] = "\n".join(names[i] for i in values.tolist())
                elif name == "storage_every":
                    texts[name] = "\n".join(str(int(v)) for v in values.tolist())
                else:
                    texts[name] = _numbers(values)
            for name, text in texts.items():
                spool = spools.get(name)
                if spool is None:
                    spool = spools[name] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed below
                elif text:
                    spool.write("\n")
                spool.write(text)
            caveats.extend(((caveat.kind, caveat.level), caveat.points) for caveat in run.result.caveats)
        assert first is not None
        counts = tally(caveats)
        two = "storage_every" in spools
        slot = {name: f"{_SLOT}{name}" for name in spools}
        document = {
            "schema_version": SCHEMA_VERSION,
            "command": "sweep",
            "preset": preset,
            "model": first.result.model,
            "inputs": inputs(job),
            "over": plan.over,
            "values_name": SI_NAME[plan.over],
            "log": plan.log,
            "base_optimal_interval_s": float(first.base.optimal_interval_s),
            "base_effective": float(first.base.effective),
            "values": slot["values"],
            "interval_s": slot["interval_s"],
            "optimal_interval_s": slot["optimal_interval_s"],
            "memory_interval_s": slot["memory_interval_s"] if two else None,
            "storage_every": slot["storage_every"] if two else None,
            "write_s": slot["write_s"],
            "loss": {k: slot[f"loss_{k}"] for k in ("write", "rework", "restart", "total")},
            "effective": slot["effective"],
            "first_order_effective": slot["first_order_effective"],
            "p_no_spare": slot.get("p_no_spare"),
            "cluster_effective": slot.get("cluster_effective"),
            "dominant": slot["dominant"],
            "storage_busy_share": slot["storage_busy_share"],
            "bytes_written_per_day": slot["bytes_written_per_day"],
            "warnings": [
                *input_warnings(job),
                *(wording.caveat(Caveat(kind, level, None, points)) for (kind, level), points in counts.items()),
            ],
            **{name: slot[name] for name in registry.sweep_part_schema() if name in slot},
            **peak,
        }
        text = dumps(document)
        for line in text.split("\n"):
            marker = line.find('"\\u0000column\\u0000')
            if marker == -1:
                out.write(line + "\n")
                continue
            name = line[marker:].split("\\u0000")[2].rstrip('",')
            indent = line.removesuffix(line.lstrip(" "))
            comma = "," if line.rstrip().endswith(",") else ""
            out.write(line[:marker] + "[\n")
            spool = spools[name]
            spool.seek(0)
            pad = indent + "  "
            out.write(pad)
            while block := spool.read(_BLOCK):
                out.write(block.replace("\n", ",\n" + pad))
            out.write("\n" + indent + "]" + comma + "\n")
    finally:
        for spool in spools.values():
            spool.close()


def _numbers(values: Any) -> str:
    """A slice of a column as JSON numbers, one a line (JSON has no NaN or infinity: refused)."""
    import numpy

    array = numpy.asarray(values, dtype=float).reshape(-1)
    if not bool(numpy.isfinite(array).all()):
        raise ValueError("a sweep value is not finite")
    return "\n".join(map(repr, array.tolist()))


def reading(
    *,
    files: int,
    format: str,
    read: int,
    used: int,
    ignored: int,
    filtered: int,
    skipped_bad: int,
    bad: Sequence[str],
    notes: Mapping[str, int],
    year_from: str | None,
) -> dict[str, Any]:
    """What reading a log did: lines, bad rows, and every inference (all keys of
    :data:`ckptcalc.logs.adapter.NOTES`, zero when none)."""
    from ckptcalc.logs.adapter import NOTES

    return {
        "files": files,
        "format": format,
        "read": read,
        "used": used,
        "ignored": ignored,
        "filtered": filtered,
        "skipped_bad": skipped_bad,
        "bad": list(bad),
        "inferred": {key: int(notes.get(key, 0)) for key in NOTES},
        "year_from": year_from,
    }


def events(counts: Any, logs: list[str], written: int, output: str | None, form: str) -> dict[str, Any]:
    """``events``' summary: what was read, what was inferred, how many events were written where."""
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "events",
        "logs": logs,
        "output": output,
        "form": form,
        "events": written,
        "reading": reading(
            files=counts.files,
            format=counts.format,
            read=counts.read,
            used=counts.kept,
            ignored=counts.ignored,
            filtered=counts.filtered,
            skipped_bad=counts.skipped_bad,
            bad=counts.bad,
            notes=counts.notes,
            year_from=counts.said.get("year_from"),
        ),
    }


def storage(job: Job, result: Result) -> dict[str, Any] | None:
    """What the checkpoints cost the storage, and the storage training (docs/model.md §17): null for a
    sweep's grid (its columns hold the load)."""
    found = storage_load(job, result)
    if found is None:
        return None
    block = {
        "tiers": [
            {
                "name": t.name,
                "write_s": t.write_s,
                "interval_s": _interval(t.interval_s),
                "storage_busy_share": t.busy_share,
                "checkpoint_bytes": t.checkpoint_bytes,
                "bytes_written_per_day": t.bytes_written_per_day,
            }
            for t in found.tiers
        ],
        "bytes_written_per_day": found.bytes_written_per_day,
        "max_busy": found.max_busy,
        "slowdown_share": found.slowdown_share,
        "bytes_retained": found.bytes_retained,
        "kept_for_good_bytes_per_day": found.kept_for_good_per_day,
        "retained_over_run": found.retained_over_run,
    }
    return registry.placed(block, found.parts)


def storage_load(job: Job, result: Result) -> Any:
    """The storage load of one job's result (:class:`ckptcalc.model.storage.Load`), or None for a grid."""
    from ckptcalc.model import storage as model

    if not scalar(result.effective):
        return None
    from ckptcalc.model.evaluation import evaluate

    return model.load(job.config, result, job.scenario.max_busy, evaluate)


def storage_warnings(job: Job, result: Result) -> list[str]:
    """A warning for each tier whose storage is busy more than ``--max-busy`` of the time."""
    found = storage_load(job, result)
    if found is None:
        return []
    return [wording.busy_storage(t.name, t.busy_share, found.max_busy) for t in found.busy]
