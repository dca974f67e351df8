"""Results as JSON documents and as words: no Rich, no numpy at import.

The JSON documents carry full precision in SI units; :func:`dumps` refuses
NaN and infinities. :func:`caveat_text` words a :class:`ckptcalc.model.Caveat`
for both the JSON ``warnings`` list and the tables.
"""

from __future__ import annotations

from typing import Any

from . import decide, units
from .decide import Lever, Targets
from .model import FIRST_ORDER_LIMIT, TERMS, Caveat, LevelResult, Result
from .scenario import Job

#: Version of every JSON document ckptcalc prints. Keys are only ever added
#: within a version; a key that changes meaning or goes away bumps it.
SCHEMA_VERSION = 1


def caveat_text(caveat: Caveat) -> str:
    """One sentence for a caveat."""
    level = f"{caveat.level} level: " if caveat.level else ""
    where = f" at {caveat.points} points" if caveat.points > 1 else ""
    ratio = f"{units.sig(caveat.value or 0.0)}" if caveat.value is not None else ""
    limit = units.sig(FIRST_ORDER_LIMIT, 2)
    if caveat.kind == "first_order_stall":
        return (
            f"{level}checkpoint stall / MTBF = {ratio} exceeds {limit}{where}: the first-order model is"
            " unreliable; see the exact model (or simulate)"
        )
    if caveat.kind == "first_order_interval":
        return (
            f"{level}interval / MTBF = {ratio} exceeds {limit}{where}: the first-order model is"
            " unreliable; see the exact model (or simulate)"
        )
    if caveat.kind == "loss_clamped":
        return f"loss {ratio} is at least 1{where}: no useful work gets done; effective time clamped at 0"
    if caveat.kind == "exact_drift":
        return (
            f"Young's interval is {units.sig((caveat.value or 0.0) * 100)} % from the exact optimum{where}:"
            " prefer the exact interval"
        )
    if caveat.kind == "lag_bound":
        return (
            f"{level}the optimal interval is bound by the persist time"
            f" (a checkpoint must be durable before the next){where}"
        )
    if caveat.kind == "no_closed_form":
        return "Daly's and the exact model cover a single synchronous level only: simulation is the check here"
    return caveat.kind  # pragma: no cover - every kind is worded above


def warnings(result: Result) -> list[str]:
    return [caveat_text(c) for c in result.caveats]


def _f(value: Any) -> float | None:
    return None if value is None else float(value)


def inputs(job: Job) -> dict[str, Any]:
    """The normalised inputs, SI units, as echoed in every JSON document."""
    s, c = job.scenario, job.config
    return {
        "params": _f(s.params) if s.checkpoint_bytes is None else None,
        "bytes_per_param": _f(s.bytes_per_param or 16.0) if s.checkpoint_bytes is None else None,
        "checkpoint_bytes": _f(c.checkpoint_bytes),
        "bandwidth_bytes_per_s": _f(c.bandwidth),
        "mtbf_s": _f(c.mtbf_s),
        "mtbf_source": job.mtbf_source,
        "restart_s": _f(c.restart_s),
        "gpus": _f(job.gpus),
        "gpu_mtbf_s": _f(job.gpu_mtbf_s),
        "snapshot_bandwidth_bytes_per_s": _f(c.snapshot_bandwidth),
        "replica_survival": _f(c.replica_survival),
        "memory_bandwidth_bytes_per_s": _f(c.memory_bandwidth),
        "memory_restart_s": _f(c.memory_restart_s),
    }


def loss(result: Result | LevelResult) -> dict[str, float]:
    parts = {"write": result.write, "rework": result.rework, "restart": result.restart}
    if isinstance(result, Result):
        parts["total"] = result.total
    return {k: float(v) for k, v in parts.items()}


def level(item: LevelResult, step_time_s: float | None = None) -> dict[str, Any]:
    lv = item.level
    steps = decide.steps(float(item.optimal_interval_s), step_time_s) if step_time_s is not None else None
    return {
        "name": lv.name,
        "stall_s": float(lv.stall_s),
        "lag_s": float(lv.lag_s),
        "interval_s": float(item.interval_s),
        "optimal_interval_s": float(item.optimal_interval_s),
        "share_of_failures": float(lv.share),
        "restart_s": float(lv.restart_s),
        "loss": loss(item),
        "optimal_interval_steps": steps,
    }


def evaluation(job: Job, result: Result) -> dict[str, Any]:
    """The fields shared by ``optimize`` and each ``compare`` scenario."""
    return {
        "inputs": inputs(job),
        "write_s": float(job.config.write_s),
        "optimal_interval_s": float(result.optimal_interval_s),
        "interval_s": float(result.interval_s),
        "loss": loss(result),
        "effective": float(result.effective),
        "dominant": TERMS[int(result.dominant)],
        "daly_interval_s": _f(result.daly_interval_s),
        "exact_interval_s": _f(result.exact_interval_s),
        "exact_effective": _f(result.exact_effective),
        "levels": [level(item, job.scenario.step_time_s) for item in result.levels],
        "warnings": warnings(result),
    }


def optimize(
    job: Job,
    result: Result,
    optimum: Result,
    preset: str | None,
    *,
    levers: list[Lever],
    target: float | None = None,
    targets: Targets | None = None,
) -> dict[str, Any]:
    """Everything ``optimize --json`` prints."""
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "command": "optimize", "preset": preset}
    document.update(evaluation(job, result))
    document["optimal_effective"] = float(optimum.effective)
    document["interval_penalty_pp"] = float((optimum.effective - result.effective) * 100.0)
    document.update(decisions(job, result, levers=levers, target=target, targets=targets))
    return document


def decisions(
    job: Job, result: Result, *, levers: list[Lever], target: float | None, targets: Targets | None
) -> dict[str, Any]:
    """Levers, targets, cost, steps and goodput for one evaluated job."""
    s = job.scenario
    discard = s.discard or 0.0
    document: dict[str, Any] = {
        "levers": [{"key": v.key, "name": v.name, "effective": v.effective, "gain_pp": v.gain_pp} for v in levers],
        "discard": discard,
        "goodput": float(result.effective) * (1.0 - discard),
        "target": target,
        "targets": None,
        "lost_gpu_hours_per_day": None,
        "lost_cost_per_day": None,
        "lost_cost_per_30_days": None,
        "step_time_s": s.step_time_s,
        "optimal_interval_steps": None,
    }
    if targets is not None:
        document["targets"] = {
            "bandwidth_bytes_per_s": targets.bandwidth,
            "restart_s": targets.restart_s,
            "mtbf_s": targets.mtbf_s,
            "gpus": targets.gpus,
        }
    if job.gpus is not None:
        lost = decide.cost(result, job.gpus, s.gpu_hour_cost)
        document["lost_gpu_hours_per_day"] = lost.lost_gpu_hours_per_day
        document["lost_cost_per_day"] = lost.lost_cost_per_day
        document["lost_cost_per_30_days"] = lost.lost_cost_per_30_days
    if s.step_time_s is not None:
        document["optimal_interval_steps"] = decide.steps(float(result.optimal_interval_s), s.step_time_s)
        document["settings"] = settings(result, s.step_time_s)
    return document


def settings(result: Result, step_time_s: float) -> dict[str, str]:
    """Lines to paste into common training frameworks, for the optimal intervals."""
    storage = result.storage
    steps = decide.steps(float(storage.optimal_interval_s), step_time_s)
    lines = {
        "megatron": f"--save-interval {steps}",
        "torchtitan": f"[checkpoint] interval = {steps}",
        "scr": f"SCR_CHECKPOINT_SECONDS={round(float(storage.optimal_interval_s))}",
    }
    if len(result.levels) > 1:
        memory_steps = decide.steps(float(result.levels[0].optimal_interval_s), step_time_s)
        lines["megatron_memory"] = f"--non-persistent-save-interval {memory_steps}"
    return lines


def dumps(document: dict[str, Any]) -> str:
    """One JSON document, no NaN or infinity."""
    import json

    return json.dumps(document, indent=2, allow_nan=False)


def value_at(document: dict[str, Any], path: str) -> Any:
    """The value at a dotted path (``loss.restart``, ``levels.0.interval_s``); KeyError if none."""
    node: Any = document
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
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


def sweep(job: Job, run: Any, preset: str | None) -> dict[str, Any]:
    """Columns of equal length, one entry per swept point."""
    import numpy

    from .sweep import SI_NAME

    result = run.result
    values = run.values
    dominant = numpy.broadcast_to(result.dominant, numpy.shape(values))
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "sweep",
        "preset": preset,
        "inputs": inputs(job),
        "over": run.over,
        "values_name": SI_NAME[run.over],
        "log": run.log,
        "base_optimal_interval_s": float(run.base.optimal_interval_s),
        "base_effective": float(run.base.effective),
        "values": _column(values),
        "interval_s": _column(_broadcast(result.interval_s, values)),
        "optimal_interval_s": _column(_broadcast(result.optimal_interval_s, values)),
        "write_s": _column(_broadcast(result.config.write_s, values)),
        "loss": {k: _column(_broadcast(getattr(result, k), values)) for k in ("write", "rework", "restart", "total")},
        "effective": _column(_broadcast(result.effective, values)),
        "dominant": [TERMS[int(i)] for i in dominant],
        "warnings": warnings(result),
    }


def sweep_csv(run: Any) -> str:
    """Header row and one row per point; SI units in the column names."""
    import io

    import numpy

    from .sweep import SI_NAME

    result = run.result
    values = run.values
    columns: dict[str, Any] = {SI_NAME[run.over]: values}
    for name, value in (
        ("interval_s", result.interval_s),
        ("write_s", result.config.write_s),
        ("loss_write", result.write),
        ("loss_rework", result.rework),
        ("loss_restart", result.restart),
        ("loss_total", result.total),
        ("effective", result.effective),
    ):
        columns.setdefault(name, _broadcast(value, values))
    names = numpy.asarray(TERMS)[numpy.broadcast_to(result.dominant, numpy.shape(values))]
    buffer = io.StringIO()
    buffer.write(",".join([*columns, "dominant"]) + "\n")
    table = numpy.column_stack(list(columns.values()))
    for row, name in zip(table.tolist(), names.tolist(), strict=True):
        buffer.write(",".join(repr(x) for x in row) + f",{name}\n")
    return buffer.getvalue()


def _agreement(value: float | None, low: float, high: float, simulated: float) -> dict[str, Any] | None:
    if value is None:
        return None
    return {"agrees": low <= value <= high, "difference_pp": (value - simulated) * 100.0}


def simulation(job: Job, outcome: Any, failures: Any, preset: str | None, search: Any) -> dict[str, Any]:
    """Everything ``simulate --json`` prints."""
    from . import simulate
    from .model import evaluate, exact_interval, replace

    config = replace(job.config, interval_s=outcome.interval_s, memory_interval_s=outcome.memory_interval_s)
    first, exact = simulate.analytic(config, failures)
    low, high = outcome.ci95
    result = evaluate(config)
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
        "effective": outcome.effective,
        "effective_ci95": [low, high],
        "split": {
            "useful": outcome.split.useful,
            "write": outcome.split.write,
            "rework": outcome.split.rework,
            "restart": outcome.split.restart,
        },
        "failures": outcome.failures,
        "failures_in_restart": outcome.failures_in_restart,
        "analytic": {"first_order": first, "exact": exact},
        "agreement": {
            "first_order": _agreement(first, low, high, outcome.effective),
            "exact": _agreement(exact, low, high, outcome.effective),
        },
        "optimize": None,
        "warnings": warnings(result),
    }
    if search is not None:
        young = float(evaluate(job.config.optimal()).optimal_interval_s)
        exact_tau = float(exact_interval(job.config.write_s, job.config.mtbf_s)) if job.config.is_single_sync else None
        document["optimize"] = {
            "interval_s": search.interval_s,
            "memory_interval_s": search.memory_interval_s,
            "storage_every": search.storage_every,
            "effective": search.effective,
            "evaluations": search.evaluations,
            "young_interval_s": young,
            "exact_interval_s": exact_tau,
        }
    return document
