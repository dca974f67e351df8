"""The pieces every JSON document shares (inputs, evaluation, levels, storage, reading): formatting only,
no Rich, no numpy at import. Each command's own document is built in its module of ckptcalc.commands.

Every number here was computed by the model, the decisions or the API; this
module only lays them out. The documents carry full precision in SI units
and :func:`dumps` refuses NaN and infinities. Sentences come from
:mod:`ckptcalc.output.wording`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ckptcalc.inputs.scenario import DEFAULT_BYTES_PER_PARAM, Job, Scenario, anatomy
from ckptcalc.mechanisms import registry
from ckptcalc.model.arrays import scalar
from ckptcalc.model.decisions import Steps
from ckptcalc.model.evaluation import TERMS, FirstOrder, Plan, Result, unneeded
from ckptcalc.output import wording

if TYPE_CHECKING:
    from ckptcalc.model.band import Band

#: Version of every JSON document ckptcalc prints. Keys are only ever added
#: within a version; a key that changes meaning or goes away bumps it.
SCHEMA_VERSION = 2


def warnings(result: Result) -> list[str]:
    return [wording.caveat(c) for c in result.caveats]


def input_warnings(job: Job) -> list[str]:
    """What the inputs state that is almost certainly not what was meant (a bare count or size)."""
    return [wording.bare_count(s.name, s.where, s.value) for s in job.suspects]


def number(value: Any) -> float | None:
    return None if value is None else float(value)


def interval(value: Any) -> float | None:
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
        "params": number(s.params) if s.checkpoint_bytes is None else None,
        "bytes_per_param": number(s.bytes_per_param or DEFAULT_BYTES_PER_PARAM) if s.checkpoint_bytes is None else None,
        "checkpoint_bytes": number(c.checkpoint_bytes),
        "bandwidth_bytes_per_s": number(c.bandwidth),
        "mtbf_s": number(c.mtbf_s),
        "mtbf_source": job.mtbf_source,
        "restart_s": number(c.storage_restart_s),
        "restart_components": restart_components(job),
        "gpus": number(job.gpus),
        "gpu_mtbf_s": number(job.gpu_mtbf_s),
        "snapshot_bandwidth_bytes_per_s": number(c.snapshot_bandwidth),
        "replica_survival": number(c.replica_survival),
        "memory_bandwidth_bytes_per_s": number(c.memory_bandwidth),
        # A rate stated per GPU: the value per GPU beside the aggregate above (null otherwise).
        "bandwidth_per_gpu_bytes_per_s": _per_gpu(s, "bandwidth"),
        "snapshot_bandwidth_per_gpu_bytes_per_s": _per_gpu(s, "snapshot_bandwidth"),
        "memory_bandwidth_per_gpu_bytes_per_s": _per_gpu(s, "memory_bandwidth"),
        "memory_restart_s": number(c.levels()[0].restart_s) if c.has_memory else None,
        "tiers": tiers(job),
        "failure_dist": "exponential" if c.shape is None else "weibull",
        "shape": number(c.shape),
        "mtbf_ci95": None if job.mtbf_band is None else [float(job.mtbf_band[0]), number(job.mtbf_band[1])],
        **registry.echo(c),
        "keep": None if c.keep is None else int(c.keep),
        "work_s": number(c.work_s),
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
    return number(getattr(scenario, name)) if name in scenario.per_gpu else None


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
            "bandwidth_bytes_per_s": number(bandwidth),
            "bandwidth_per_gpu_bytes_per_s": number(rate),
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
        "interval_s": interval(item.interval_s),
        "optimal_interval_s": interval(item.optimal_interval_s),
        "share_of_failures": float(lv.share),
        "restart_s": float(lv.restart_s),
        "optimal_interval_steps": steps,
    }


def first_order(result: Result) -> dict[str, Any]:
    """Young's first-order model of the same configuration: the explanation beside the exact answer."""
    fo = result.first_order
    return {
        "optimal_interval_s": interval(fo.optimal_interval_s),
        "interval_s": interval(fo.interval_s),
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
        "robust_storage_every": whole(band.robust_storage_every),
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
        "optimal_interval_s": interval(result.optimal_interval_s),
        "interval_s": interval(result.interval_s),
        "memory_interval_s": interval(result.memory_interval_s),
        "storage_every": whole(result.storage_every),
        "optimal_memory_interval_s": interval(result.optimal_memory_interval_s),
        "optimal_storage_every": whole(result.optimal_storage_every),
        "young_interval_s": interval(result.young_interval_s),
        "daly_interval_s": number(result.daly_interval_s),
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


def whole(value: Any) -> int | None:
    return None if value is None else int(value)


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
                "interval_s": interval(t.interval_s),
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
