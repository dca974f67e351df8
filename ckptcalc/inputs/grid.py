"""Sweeps: one input varied over a grid, the whole grid in one numpy evaluation.

:func:`grid` builds the values, :func:`run` evaluates them. Sweeping the
interval evaluates the loss curve of one configuration; sweeping any other
input re-optimises the interval at every point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.inputs.fields import BY_FLAG, BY_NAME, OVER_FIELDS, SWEEPABLE, Field
from ckptcalc.inputs.scenario import DEFAULT_BYTES_PER_PARAM, LARGEST, SMALLEST, Job
from ckptcalc.inputs.units import format_rate
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import Config, Result, Tier, evaluate, replace

#: What ``over`` accepts: the flag name of every input (``--what-if`` takes the same keys).
OVER = tuple(f.flag for f in OVER_FIELDS)

#: The inputs set as one array of the configuration; the others are resolved point by point.
VECTORISED = frozenset(f.flag for f in SWEEPABLE)

#: The largest grid a sweep evaluates (memory stays below about 2 GB).
MAX_POINTS = 10_000_000

#: JSON and CSV name of the swept column, by ``over``.
SI_NAME = {f.flag: str(f.sweep) for f in OVER_FIELDS}


@dataclass(frozen=True)
class Sweep:
    over: str
    values: Any  # numpy array, SI units
    log: bool
    result: Result
    base: Result  # the configuration the sweep starts from, evaluated at its optimum

    @property
    def nearest_optimum(self) -> int:
        """Index of the row nearest the base optimum (interval sweeps) or the base value."""
        import numpy

        target = self.base.optimal_interval_s if self.over == "interval" else base_value(self.over, self.base, None)
        if target is None:
            return -1
        distance = numpy.abs(numpy.log(self.values / target)) if self.log else numpy.abs(self.values - target)
        return int(numpy.argmin(distance))


def base_value(over: str, base: Result, job: Job | None) -> float | None:
    """The value the base configuration has for the swept input."""
    if over == "interval":
        return float(base.optimal_interval_s)
    if over not in VECTORISED:
        from ckptcalc.inputs import resolved_sweep

        name = BY_FLAG[over].name
        if job is not None:
            return resolved_sweep.stated(job, BY_FLAG[over])
        found = getattr(base.config, name, None) if name in Config._fields else None
        return None if found is None else float(found)
    if over in ("params", "gpus"):
        value = None if job is None else (job.scenario.params if over == "params" else job.gpus)
    else:
        name = BY_FLAG[over].name
        stated = registry.sweep_stated(name, base.config)  # as stated, where a mechanism changed it
        value = getattr(base.config.flat(), name) if stated is None else stated
        if value is None:
            value = registry.sweep_start(name, base.config)  # a mechanism's default
    return None if value is None else float(value)


#: The default range of the elastic groups' shares (a tenth to ten times would leave [0, 1]).
_SHARE_RANGES = {"group-share": (0.5, 0.99), "ft-overhead": (0.001, 0.1)}


def default_range(over: str, job: Job, base: Result) -> tuple[float, float]:
    """A tenth to ten times the base value (survival: from 0.5 to 0.999); an asynchronous interval starts
    no lower than the persist time."""
    if over == "replica-survival":
        # Up to what the middle tiers leave (storage always serves some).
        rest = 1.0 - sum(float(t.share) for t in job.config.middle)
        high = min(0.999, rest * 0.999)
        return min(0.5, high / 2.0), high
    owned = registry.sweep_range(over, base)  # a mechanism's own default range (the spare pool's, a share's)
    if owned is not None:
        return owned
    if over in _SHARE_RANGES:
        return _SHARE_RANGES[over]
    value = base_value(over, base, job)
    if over not in VECTORISED and value is not None and BY_FLAG[over].kind == "fraction":
        return value / 10.0, min(value * 10.0, (1.0 + value) / 2.0)  # a share stays below 1
    if over == "quorum-pause" and not value:
        return 1.0, 300.0  # none in the base: a second to five minutes (a log grid by default)
    if value is None:
        raise InputError(f"the configuration has no {over} to sweep around; give {{start}} and {{stop}}", where="over")
    low, high = value / 10.0, value * 10.0
    if over == "interval" and job.config.is_async:
        # No interval below the persist time can run: a checkpoint must be durable before the next.
        lag = float(job.config.write_s)
        low, high = max(low, lag), max(high, lag * 10.0)
    return low, high


def whole(values: Any, least: float = 1.0) -> Any:
    """A grid of counts (GPUs, nodes, replica groups) as whole numbers, each once: a log grid over
    1,638 to 163,840 GPUs is 1,638, 5,181, 16,384, … (fewer points when rounding makes neighbours equal);
    none below ``least``."""
    import numpy

    return numpy.unique(numpy.maximum(numpy.rint(values), least))


def grid(start: float, stop: float, points: int, log: bool) -> Any:
    """``points`` values from ``start`` to ``stop``, evenly or log-spaced."""
    import numpy

    if points < 2:
        raise InputError(f"must be at least 2, got {points}", where="points")
    if points > MAX_POINTS:
        raise InputError(f"at most {MAX_POINTS:.0e} points, got {points}", where="points")
    if not start < stop:
        raise InputError(f"must be below {{stop}} ({start:g} ≥ {stop:g} in SI units)", where="start")
    if log:
        if start <= 0:
            raise InputError("a log sweep needs positive bounds", where="start")
        return numpy.geomspace(start, stop, points)
    return numpy.linspace(start, stop, points)


def slices(values: Any, size: int) -> list[Any]:
    """A grid in consecutive slices of at most ``size`` points (views, not copies), to evaluate and write a
    slice at a time.

    >>> slices([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    return [values[first : first + size] for first in range(0, len(values), size)]


def spread_picks(n: int, rows: int) -> Any:
    """The indices of at most ``rows`` points spread evenly over a grid of ``n`` (the first and the last
    kept), or None when all ``n`` fit.

    >>> [int(i) for i in spread_picks(101, 5)], spread_picks(5, 5)
    ([0, 25, 50, 75, 100], None)
    """
    if n <= rows:
        return None
    import numpy

    return numpy.unique(numpy.rint(numpy.linspace(0, n - 1, rows)).astype(int))


def check_values(job: Job, over: str, values: Any) -> None:
    """Refuse a grid the model cannot evaluate (before any of it is), naming the bound at fault."""
    _check(over, values, job)


def _check(over: str, values: Any, job: Job) -> None:
    low, high = float(values.min()), float(values.max())
    where = "start"
    if not (math.isfinite(low) and math.isfinite(high)):
        raise InputError("bounds must be finite", where=where)
    if over not in VECTORISED:
        return  # each point is resolved, and checked, as the job itself is
    owned = registry.check_sweep(over, job.config, low, high, where)  # a mechanism's own checks
    registry.refuse_sweep(over, low, high, job.config, job.scenario.shown)
    if owned:
        pass
    elif over == "replica-survival":
        if low < 0 or high >= 1:
            raise InputError("replica survival must lie in [0, 1)", where=where)
    elif over in ("group-share", "ft-overhead"):
        if low < 0 or high > 1:
            raise InputError(f"{over} must lie in [0, 1]", where=where)
    elif over in ("rejoin", "quorum-pause"):
        if low < 0 or high > LARGEST:
            raise InputError(f"{over} must be 0 or a duration up to {LARGEST:g} s", where=where)
    elif low <= 0:
        raise InputError(f"{over} must be positive over the whole sweep", where=where)
    elif low < SMALLEST or high > LARGEST:
        raise InputError(f"the sweep must stay within {SMALLEST:g} to {LARGEST:g} in SI units", where=where)
    if over in ("gpus",) and job.gpus is None and job.gpu_mtbf_s is None:
        raise InputError("sweeping GPUs needs a GPU count in the base configuration ({gpus})", where="over")
    c = job.config
    if over == "interval" and c.is_async and low < float(c.write_s):
        raise InputError("the sweep starts below the persist time of the asynchronous checkpoint", where=where)
    if over == "interval" and c.middle:
        lower = [c.memory_interval_s, *(t.interval_s for t in c.middle)]
        if any(v is not None for v in lower) and not all(v is not None for v in lower):
            raise InputError(
                "sweeping storage's interval with three or more tiers needs every faster tier's interval"
                " pinned, or none",
                where=job.scenario.where("memory_interval_s" if c.memory_interval_s is not None else "interval_s"),
            )
    if over == "interval" and c.is_async:
        shortest = float(_rounded(c, values).min())
        if shortest < float(c.write_s) * (1.0 - 1e-12):
            raise InputError(
                f"storage intervals round to whole multiples of the pinned ones below, down to"
                f" {shortest:g} s, under the persist time {float(c.write_s):g} s: start the sweep higher",
                where=where,
            )
    if over == "snapshot-bw" and low <= float(c.bandwidth):
        raise InputError(
            f"snapshot bandwidth must stay above the storage bandwidth {format_rate(float(c.bandwidth))}"
            " (the aggregate over all GPUs; write 25GB/s/gpu for a per-GPU rate)",
            where=where,
        )
    if over == "gpus" and c.snapshot_bandwidth is not None:
        # Per-GPU rates scale with the count, linearly: checking both ends checks the whole sweep.
        for count in (low, high):
            at = {"bandwidth": c.bandwidth, "snapshot_bandwidth": c.snapshot_bandwidth, **per_gpu_rates(job, count)}
            if at["snapshot_bandwidth"] <= at["bandwidth"]:
                raise InputError(
                    f"snapshot bandwidth must stay above the storage bandwidth: at {count:g} GPUs it is"
                    f" {format_rate(at['snapshot_bandwidth'])}, storage {format_rate(at['bandwidth'])}",
                    where=where,
                )
    if over == "gpus":
        for name, rates in per_gpu_rates(job, values).items():
            if float(rates.max()) > LARGEST:
                raise InputError(
                    f"{{{BY_NAME[name].public}}} per GPU times the GPU count goes beyond {LARGEST:g} B/s", where=where
                )
    if over == "replica-survival" and c.middle:
        rest = 1.0 - sum(float(t.share) for t in c.middle)
        if high >= rest:
            raise InputError(
                f"replica survival must stay below {rest:g}: the middle tiers serve the rest but storage's share",
                where="stop",
            )
    if over in ("replica-survival", "memory-bw", "memory-restart") and not c.has_memory:
        raise InputError(f"sweeping {over} needs an in-memory level ({{replica_survival}})", where="over")


def _rounded(c: Config, values: Any) -> Any:
    """Storage intervals ``values`` as the model runs them: whole multiples of the pinned interval of
    the tier below (each pinned tier a whole multiple of the one below it); as given when any is free."""
    import numpy

    stated = [c.memory_interval_s, *(t.interval_s for t in c.middle)] if c.has_memory else []
    pinned = [float(v) for v in stated if v is not None]
    if not pinned or len(pinned) < len(stated):
        return numpy.asarray(values, dtype=float)
    below = pinned[0]
    for interval in pinned[1:]:
        below *= max(1.0, float(round(interval / below)))
    return numpy.maximum(numpy.rint(numpy.asarray(values, dtype=float) / below), 1.0) * below


def vary(job: Job, over: str, values: Any) -> Config:
    """The job's configuration with ``over`` set to the array ``values``; the intervals are
    re-optimised at every point unless the interval itself is swept."""
    c = job.config
    if over not in OVER:
        raise InputError(f"cannot sweep {over!r}; choose one of {', '.join(OVER)}", where="over")
    if over == "interval":
        return replace(c, interval_s=values)
    if over not in VECTORISED:
        from ckptcalc.inputs import resolved_sweep

        return resolved_sweep.config(job, BY_FLAG[over], values)
    # Every interval re-optimised; a swept restart is the whole restart (the reload folded in).
    free = c.optimal().flat() if over in ("restart", "memory-restart") else c.optimal()
    if over == "params":
        bytes_per_param = job.scenario.bytes_per_param or DEFAULT_BYTES_PER_PARAM
        return replace(free, checkpoint_bytes=values * bytes_per_param)
    if over == "gpus":
        assert job.gpu_mtbf_s is not None
        return replace(free, mtbf_s=job.gpu_mtbf_s / values, middle=_middle_at(job, free, values),
                       **per_gpu_rates(job, values), **registry.at_gpus(job, free, values))  # fmt: skip
    owned = registry.varied(BY_FLAG[over].name, free, values, job.scenario)  # with what a mechanism's input needs
    return owned if owned is not None else replace(free, **{BY_FLAG[over].name: values})


def _middle_at(job: Job, config: Config, gpus: Any) -> tuple[Tier, ...]:
    """The middle tiers with their per-GPU rates at the GPU counts ``gpus``."""
    found = []
    for stated, tier in zip(job.scenario.middle, config.middle, strict=True):
        rates = {name: getattr(stated, name) * gpus for name in sorted(stated.per_gpu)}
        found.append(tier.replace(**rates))
    return tuple(found)


def per_gpu_rates(job: Job, gpus: Any) -> dict[str, Any]:
    """The rates the job states per GPU, at the GPU counts ``gpus`` (by field name, SI units)."""
    s = job.scenario
    return {name: getattr(s, name) * gpus for name in sorted(s.per_gpu) if name in Config._fields}


def run(job: Job, over: str, values: Any, log: bool) -> Sweep:
    """Evaluate the job at every value of ``over``, in one vectorised pass."""
    if over not in OVER:
        raise InputError(f"cannot sweep {over!r}; choose one of {', '.join(OVER)}", where="over")
    _check(over, values, job)
    base = evaluate(job.config.optimal())
    return Sweep(over=over, values=values, log=log, result=evaluate(vary(job, over, values)), base=base)


def spec(over: str) -> Field:
    """The input a sweep varies, by its ``over`` name."""
    return BY_FLAG[over]


def kind(over: str) -> str:
    """The unit kind of a swept input (for parsing the bounds and printing)."""
    return BY_FLAG[over].kind
