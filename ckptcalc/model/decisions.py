"""From numbers to decisions: levers, targets, cost, steps. Pure, SI units.

* :func:`levers` re-optimises the job with one change at a time and reports
  what each buys in percentage points of effective time.
* :func:`targets` solves, for one input at a time, the value that reaches a
  target effective time; closed forms where the model has them, bisection on
  a log scale otherwise.
* :func:`cost` and :func:`steps` turn a result into GPU-hours and training
  steps.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Sequence
from typing import Any

from ckptcalc.mechanisms import registry
from ckptcalc.mechanisms.elastic import model as elastic
from ckptcalc.model.evaluation import Config, Result, evaluate, replace
from ckptcalc.records import Record

#: Beyond this (SI units) no input is physical: a target that needs more is "not reachable".
LARGEST = 1e21


class LeverAssumptions(Record, extra=registry.lever_fields()):
    """What the asynchronous and in-memory levers assume, per GPU where it scales; what a mechanism's
    levers assume, from a preset's ``[levers]``, are fields too (its home's ``lever_presets``), None
    unless stated."""

    snapshot_bandwidth_per_gpu: float
    replica_survival: float
    memory_bandwidth_per_gpu: float
    memory_restart_s: float
    job_step_s: float | None = None  # the job's own step time, where it states one

    # What the running shares' levers assume, by mechanism (``registry.assumed``, e.g. the spare pool's repair
    # time, risk and nodes, docs/model.md §15.5); None: none of those levers is offered to a job without them.
    running: Any = None
    # The elastic replica groups lever (docs/model.md §14): torchft-style groups as the example states.
    elastic_groups: float = 8.0
    elastic_group_share: float = elastic.DEFAULT_GROUP_SHARE
    elastic_rejoin_s: float = elastic.DEFAULT_REJOIN_S
    elastic_quorum_pause_s: float = elastic.DEFAULT_QUORUM_PAUSE_S
    elastic_ft_overhead: float = elastic.DEFAULT_FT_OVERHEAD


class BreakEven(Record):
    """Where a lever with a cost starts to pay: the input ``key`` it turns on, at ``value`` (SI units of
    the unit kind ``unit``) the lever's gain is zero (docs/model.md, each mechanism's section), and on
    which side of it the lever pays (``pays``: ``above`` or ``below``)."""

    key: str
    value: float
    unit: str
    pays: str = ""


class Lever(Record):
    """One change re-optimised: ``changed`` is the configuration with it (its name is worded elsewhere)."""

    key: str
    effective: float
    gain_pp: float
    changed: Config
    value: float | None = None  # what some levers change to, where the configuration does not show it
    cluster_gain_pp: float | None = None  # a running share's gain over job and idle capacity (spare nodes)
    break_even: BreakEven | None = None  # a lever with a cost: where it starts to pay

    @property
    def gains(self) -> bool:
        """Whether the change gains effective time at all (a tier subset is a lever only then,
        docs/model.md §17.4)."""
        return self.gain_pp > 0


def detection_halved(detect_s: float) -> float:
    """The detection the lever "detection ÷2" assumes (docs/model.md §12.1): half the stated one.

    >>> detection_halved(300.0)
    150.0
    """
    return detect_s / 2


def reads_doubled(config: Config) -> Config:
    """``config`` with every read bandwidth it states doubled, storage's, the replica's and each tier's: the
    lever "read bandwidth ×2" (docs/model.md §12.1, Reference 12.1: a reload of 3.24 s becomes 1.62 s).

    >>> c = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11_160.0, restart_s=603.24, read_bandwidth=2e12)
    >>> reads_doubled(c).read_bandwidth, reads_doubled(c).memory_read_bandwidth
    (4000000000000.0, None)
    """
    return config.replace(
        read_bandwidth=None if config.read_bandwidth is None else config.read_bandwidth * 2,
        memory_read_bandwidth=None if config.memory_read_bandwidth is None else config.memory_read_bandwidth * 2,
        middle=tuple(
            t if t.read_bandwidth is None else t.replace(read_bandwidth=t.read_bandwidth * 2) for t in config.middle
        ),
    )


#: The optimal effective times of the last configurations levers asked for, by value: a notebook or a
#: compare of several scenarios asks for the same changed jobs again (configurations are immutable).
_REMEMBERED: collections.OrderedDict[tuple[Any, ...], float] = collections.OrderedDict()
REMEMBER = 512


def _value_key(value: Any) -> Any:
    """A hashable stand-in for a field's value; TypeError for arrays (never remembered)."""
    if isinstance(value, Record):
        return (type(value).__name__, *(_value_key(getattr(value, name)) for name in value._fields))
    if isinstance(value, tuple):
        return tuple(_value_key(item) for item in value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(type(value).__name__)


def _effective(config: Config) -> float:
    """The optimal effective time of ``config`` (remembered for the last :data:`REMEMBER` jobs)."""
    try:
        key = _value_key(config)
    except TypeError:
        return float(evaluate(config.optimal()).effective)
    found = _REMEMBERED.get(key)
    if found is None:
        found = float(evaluate(config.optimal()).effective)
        _REMEMBERED[key] = found
        if len(_REMEMBERED) > REMEMBER:
            _REMEMBERED.popitem(last=False)
    else:
        _REMEMBERED.move_to_end(key)
    return found


def levers(
    config: Config,
    gpus: float | None,
    assume: LeverAssumptions | None,
    *,
    base: float | None = None,
    more: Sequence[tuple[str, Config, float | None]] = (),
) -> list[Lever]:
    """Each single change, re-optimised, sorted by gain (largest first).

    The asynchronous and in-memory levers appear only where the configuration
    does not already use them and the GPU count is known (their bandwidths
    scale with it). A running share's levers built from the assumptions follow
    (:func:`ckptcalc.mechanisms.registry.assumed_levers`): elastic replica groups
    where the job has none (their gain may be negative: the overhead and the
    groups down can cost more than the restarts they save), and
    ``without_elastic`` where it has.
    ``base``, the configuration's optimal effective time,
    saves a re-optimisation when the caller has it. ``more`` adds levers the
    caller built (key, changed configuration, the value changed to), such as
    the restart's parts (detection ÷2, read bandwidth ×2).
    """
    base = _effective(config) if base is None else base
    whole = config.flat()
    options: list[tuple[str, Config]] = [
        ("bandwidth_x2", replace(config, bandwidth=config.bandwidth * 2)),
        ("restart_half", replace(whole, restart_s=whole.restart_s / 2)),
        ("mtbf_x2", replace(config, mtbf_s=config.mtbf_s * 2)),
    ]
    if assume is not None and gpus is not None:
        snapshot = assume.snapshot_bandwidth_per_gpu * gpus
        if not config.is_async and snapshot > config.bandwidth:
            options.append(("async", replace(config, snapshot_bandwidth=snapshot)))
        if not config.has_memory and config.shape is None:
            # (Two levels under Weibull failures have no exact model to re-optimise.)
            memory = replace(
                config,
                replica_survival=assume.replica_survival,
                memory_bandwidth=assume.memory_bandwidth_per_gpu * gpus,
                memory_restart_s=assume.memory_restart_s,
            )
            options.append(("memory_replica", memory))
    options.extend(registry.assumed_levers(config, assume))
    found = []
    for key, changed, value in [(k, c, None) for k, c in options] + list(more):
        effective = _effective(changed)
        gain_pp = (effective - base) * 100.0
        found.append(Lever(key, effective, gain_pp, changed, value, break_even=_break_even(key, changed, gpus, base)))
    found += _running_levers(config, gpus, assume, base)
    return sorted(found, key=lambda lever: -lever.gain_pp)


#: How close to zero (percentage points) a lever's gain at its break-even must be: a mechanism's first-order
#: value further off is refined against the exact model (:func:`_refined`).
EVEN_PP = 0.01


def _break_even(key: str, changed: Config, gpus: float | None, base: float) -> BreakEven | None:
    """Where the lever ``key`` (``changed`` the job with it) starts to pay, as its mechanism says, refined
    against the exact model where the gain there is more than :data:`EVEN_PP` off zero; None for none."""
    found = registry.break_even(key, changed, gpus)
    if found is None:
        return None
    name, value, unit = found

    def gain_pp(x: float) -> float:
        at: dict[str, Any] = {name: x}
        return (_effective(changed.replace(**at)) - base) * 100.0

    here = gain_pp(value)
    if abs(here) > EVEN_PP:
        refined = _refined(gain_pp, value, here, unit)
        if refined is None:
            return None
        value = refined
    return BreakEven(name, value, unit, _side(float(getattr(changed, name)), value, gain_pp(getattr(changed, name))))


def _side(at: float, value: float, gain_pp: float) -> str:
    """On which side of the break-even ``value`` a lever pays, from its gain at its own value ``at``."""
    return "above" if (at > value) == (gain_pp > 0.0) else "below"


def _refined(gain_pp: Callable[[float], float], start: float, at_start: float, unit: str) -> float | None:
    """The root of ``gain_pp`` nearest ``start`` (the gain there ``at_start``): bracketed by steps of ×2 and
    ÷2 (a share: halfway towards 0 and towards 1), then closed by Brent's method; None without a bracket."""
    from scipy.optimize import brentq

    low = high = start
    for _ in range(60):
        if unit == "fraction":
            low, high = low / 2.0, (high + 1.0) / 2.0
        else:
            low, high = low / 2.0, high * 2.0
        for end in (low, high):
            if (gain_pp(end) > 0.0) != (at_start > 0.0):
                a, b = sorted((start, end))
                return float(brentq(gain_pp, a, b, xtol=1e-12 * max(abs(b), 1e-300), rtol=1e-12))
    return None


def _running_levers(config: Config, gpus: float | None, assume: LeverAssumptions | None, base: float) -> list[Lever]:
    """The running shares' levers (the spare pool's, docs/model.md §15.5), each over the periodic optimum
    ``base`` with its gain over job and idle capacity too, and where a lever with a cost starts to pay."""
    assumed = None if assume is None else assume.running
    found = []
    for key, effective, changed, value, cluster_gain in registry.running_levers(config, gpus, base, evaluate, assumed):
        even = registry.break_even(key, changed, gpus)
        found.append(
            Lever(key, effective, (effective - base) * 100.0, changed, value, cluster_gain,
                  None if even is None else _running_side(BreakEven(*even), changed, effective, value, cluster_gain,
                                                          base))
        )  # fmt: skip
    return found


def _running_side(
    even: BreakEven, changed: Config, effective: float, value: float | None, cluster_gain: float | None, base: float
) -> BreakEven:
    """A running share's break-even with the side it pays on: its gain is over job and idle capacity
    against the job without it (``value``, docs/model.md §15.5) where it has those, else its own."""
    if cluster_gain is not None and value is not None:
        gain_pp = cluster_gain - (value - base) * 100.0
    else:
        gain_pp = (effective - base) * 100.0
    return even.replace(pays=_side(float(getattr(changed, even.key)), even.value, gain_pp))


# ------------------------------------------------------------------ targets


class Targets(Record):
    """The value of each input that alone reaches the target (None: no value does, unless the
    input is in ``unbounded``: every value does)."""

    bandwidth: float | None
    restart_s: float | None
    mtbf_s: float | None
    gpus: float | None
    unbounded: tuple[str, ...] = ()


def _root(gap: Callable[[float], float], low: float, high: float, at_low: float, at_high: float) -> float:
    """The boundary between ``low`` (gap < 0: not reaching) and ``high`` (gap ≥ 0: reaching), on a
    log scale, to a relative :data:`_PRECISION`: regula falsi with the Illinois rule (the end kept
    twice in a row has its gap halved, so that both ends converge). A step lands at least half the
    precision inside the bracket, so that a root found next to one end is closed from the other side
    at once; after four steps on the same side, or between equal gaps (effective time flat at 0),
    it bisects."""
    a, b = math.log(low), math.log(high)
    fa, fb = at_low, at_high
    side, streak = 0, 0
    for _ in range(200):
        width = b - a
        if width < _PRECISION:
            break
        if fb == fa or streak >= 4:
            u = a + width / 2.0
        else:
            u = b - fb * width / (fb - fa)
            u = min(max(u, a + _PRECISION / 2.0), b - _PRECISION / 2.0)
        value = gap(math.exp(u))
        here = 1 if value >= 0.0 else -1
        streak = streak + 1 if here == side else 1
        if here == 1:
            b, fb = u, value
            if side == 1:
                fa /= 2.0
        else:
            a, fa = u, value
            if side == -1:
                fb /= 2.0
        side = here
        if streak >= 5:
            streak = 0
    return math.exp(b)


#: The relative precision of a target's value.
_PRECISION = 1e-11

#: How far the brackets reach either side of the start: 80 factors of 4 (48 decades).
_REACH = 4.0**80


def _solve(make: Callable[[float], Config], target: float, start: float) -> float | None:
    """The smallest x with effective(make(x)) ≥ ``target``, for an input effective time grows with.

    Brackets from ``start`` by factors of 4 (up to 48 decades), then finds the boundary
    (:func:`_root`); None when no value in that range reaches the target.
    """

    def gap(x: float) -> float:
        return _effective(make(x)) - target

    low = high = start
    at_low = at_high = gap(start)
    # Short of the target, the far end first: one evaluation says whether any value in range reaches it.
    if at_high < 0.0 and gap(start * _REACH) < 0.0:
        return None
    if at_high >= 0.0:
        for _ in range(80):
            high, at_high = low, at_low
            low /= 4.0
            at_low = gap(low)
            if at_low < 0.0:
                break
        else:
            return low
    else:
        for _ in range(80):
            low, at_low = high, at_high
            high *= 4.0
            at_high = gap(high)
            if at_high >= 0.0:
                break
        else:
            return None
    return _root(gap, low, high, at_low, at_high)


def targets(
    config: Config,
    target: float,
    gpu_mtbf_s: float | None,
    at_gpus: Callable[[float], Config] | None = None,
) -> Targets:
    """Solve for bandwidth, restart, MTBF and GPU count, one at a time, on the exact model at its optimum.

    ``at_gpus`` builds the job at another GPU count when some of its rates are per GPU (they scale
    with the count too); without it the count changes the failure interval only.
    """
    config = config.optimal().flat()
    mtbf, restart = float(config.mtbf_s), float(config.restart_s)
    unbounded: list[str] = []

    limit = float(config.snapshot_bandwidth) if config.snapshot_bandwidth is not None else LARGEST
    bandwidth = _solve(lambda b: replace(config, bandwidth=b), target, float(config.bandwidth))
    if bandwidth is not None and bandwidth >= limit:
        bandwidth = None
    mtbf_target = _solve(lambda m: replace(config, mtbf_s=m), target, mtbf)
    if mtbf_target is not None and mtbf_target > LARGEST:
        mtbf_target = None

    if config.is_single_sync:
        # The exact optimum does not depend on r and effective time scales with e^{−r/M}:
        # r = M·ln(effective at r = 0 / target).
        at_zero = _effective(replace(config, restart_s=0.0))
        restart_target = mtbf * math.log(at_zero / target) if at_zero > target else None
    else:
        # Effective time falls as the restart grows: solve on its reciprocal. With a memory level it
        # has a floor (a failure during a storage restart may be served from memory): above it,
        # every restart reaches the target.
        if _effective(replace(config, restart_s=LARGEST)) >= target:
            # Every restart reaches it: there is no boundary to find.
            unbounded.append("restart_s")
            restart_target = None
        else:
            found = _solve(lambda x: replace(config, restart_s=1.0 / x), target, 1.0 / restart)
            restart_target = 1.0 / found if found is not None and found > 1.0 / LARGEST else None

    gpus = None
    if gpu_mtbf_s is not None and mtbf_target is not None:
        count = math.floor(gpu_mtbf_s / mtbf_target)
        gpus = float(count) if count >= 1 else None
    if at_gpus is not None and gpus is not None:
        gpus = _most_gpus(at_gpus, target, gpus)
    return Targets(bandwidth, restart_target, mtbf_target, gpus, tuple(unbounded))


def _most_gpus(at_gpus: Callable[[float], Config], target: float, start: float) -> float | None:
    """The largest whole GPU count that still reaches ``target`` when rates per GPU scale with the count
    (``at_gpus`` builds the job at a count): bracketed from ``start`` by factors of 2, then bisected.
    Effective time falls with the count while the failure rate, which grows with it, dominates."""

    def reach(n: float) -> bool:
        return _effective(at_gpus(n)) >= target

    if not reach(1.0):
        return None
    low, high = 1.0, max(start, 2.0)
    for _ in range(64):
        if not reach(high):
            break
        low, high = high, high * 2.0
    else:
        return None
    while high - low > 1.0:
        middle = math.floor((low + high) / 2.0)
        if reach(middle):
            low = middle
        else:
            high = middle
    return low


# ------------------------------------------------------------- cost and steps


class Cost(Record):
    lost_gpu_hours_per_day: float
    lost_cost_per_day: float | None
    lost_cost_per_30_days: float | None


def cost(result: Result, gpus: float, gpu_hour_cost: float | None) -> Cost:
    """GPU-hours lost per day ((1 − effective) × GPUs × 24, never more than exist) and, with a price,
    what they cost."""
    hours = float(result.total) * gpus * 24.0
    per_day = hours * gpu_hour_cost if gpu_hour_cost is not None else None
    return Cost(hours, per_day, per_day * 30.0 if per_day is not None else None)


def steps(interval_s: float, step_time_s: float) -> int:
    """An interval as a whole number of training steps, at least one."""
    return max(1, round(interval_s / step_time_s))


class Steps(Record):
    """The optimal intervals in whole training steps; storage a whole multiple of memory's."""

    storage: int
    memory: int | None = None
    tiers: tuple[int, ...] | None = None  # every tier's, fastest first, with three or more


def interval_steps(result: Result, step_time_s: float) -> Steps:
    """The optimal schedule in steps: with a memory level, storage every m-th memory checkpoint."""
    if result.optimal_storage_every is None:
        return Steps(steps(float(result.optimal_interval_s), step_time_s))
    memory = steps(float(result.levels[0].optimal_interval_s), step_time_s)
    # Each tier a whole multiple of the one below, in steps, nearest its optimal interval: a fastest
    # interval rounded up to a whole step does not stretch the tiers above it.
    counts = [memory]
    for level in result.levels[1:]:
        counts.append(counts[-1] * max(1, round(float(level.optimal_interval_s) / (counts[-1] * step_time_s))))
    return Steps(counts[-1], memory, tuple(counts) if len(counts) > 2 else None)
