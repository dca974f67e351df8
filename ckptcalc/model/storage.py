"""What checkpoints cost the storage (docs/model.md §17).

Pure arithmetic on floats (numpy arrays where a caller passes them), no words. A tier written every
τ of work with a persist P is busy P/(τ + its stall) of the time and takes size × 86 400/τ bytes a
day, the size each checkpoint takes on that tier after the registered tier costs
(:func:`ckptcalc.mechanisms.registry.stored`); daily write and retention limits bound the schedule.
The tier costs themselves (the persist slowdown, compressed checkpoints) live in their homes under
:mod:`ckptcalc.mechanisms`.

>>> round(written_per_day(6.48e12, 266.8) / 1e15, 3)
2.098
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ckptcalc.mechanisms import registry
from ckptcalc.model.statistics import DAY_S
from ckptcalc.records import Record

#: The busy share above which a warning says the storage is loaded (``--max-busy``).
DEFAULT_MAX_BUSY = 0.5

Num = Any  # a float, or a numpy array of them


def busy_share(write_s: Num, interval_s: Num, stall_s: Num = 0.0) -> Num:
    """The share of elapsed time a tier's storage is busy writing: its write time (the persist P of an
    asynchronous tier, the write δ of a synchronous one) over the elapsed time from one of its
    checkpoints to the next, the interval τ of work plus the stall training waits (δ; s + f·P):
    δ/(τ + δ), or P/(τ + s + f·P). At 1 or more a write would start before the last ends."""
    return write_s / (interval_s + stall_s)


def written_per_day(size_bytes: Num, interval_s: Num) -> Num:
    """Bytes a tier takes per day: one checkpoint of ``size_bytes`` every ``interval_s`` (86 400/τ a day)."""
    return size_bytes * (DAY_S / interval_s)


def stored_bytes(config: Any) -> Num:
    """The bytes one storage checkpoint of a :class:`ckptcalc.model.evaluation.Config` takes, after the
    tier costs (size / c compressed)."""
    return registry.stored(config, config.checkpoint_bytes)


def tier_bytes(config: Any, name: str) -> Num:
    """The bytes one checkpoint of the tier ``name`` takes: after the tier costs on a middle tier
    (docs/model.md §17.3), the checkpoint size on any other below storage."""
    tier = next((t for t in config.middle if t.name == name), None)
    return registry.stored(tier, config.checkpoint_bytes)


def within_floor(base: Any, mtbf_s: Num, floor_s: Num, *, tau1_fixed: bool = False) -> tuple[Any, int]:
    """The best schedule (a :class:`ckptcalc.model.tiers.Tiers` like ``base``) whose top interval is at
    least ``floor_s`` (a daily write limit's size × 86 400 / limit), and at how many points the floor
    binds. Effective time rises towards the free optimum of the top interval and falls past it, so a
    floor that binds holds the top interval there, the tiers below re-optimised under it (docs/model.md
    §17.2).

    ``tau1_fixed`` keeps ``base``'s τ₁ (a step, with just-in-time recovery; a given fastest interval):
    the top interval is then a whole number of τ₁, so a floor that binds holds it at the smallest
    whole multiple of τ₁ at or above the floor."""
    from ckptcalc.model import search
    from ckptcalc.model.arrays import count, lib

    found = search.best(base, mtbf_s, tau1_fixed=tau1_fixed)
    top = found.storage_interval_s
    floor = floor_s
    hits = count(top < floor * (1.0 - 1e-12))
    if not hits:
        return found, 0
    ns = lib(top, floor, base.tau1_s)
    if not tau1_fixed:
        return search.best(base, mtbf_s, top_s=ns.maximum(top, floor)), hits
    return _held_whole(base, found, mtbf_s, ns.maximum(top, floor)), hits


def _held_whole(base: Any, free: Any, mtbf_s: Num, floor_s: Num) -> Any:
    """The schedule like ``free`` (τ₁ held) whose top interval is the smallest whole multiple of the
    multiples below at or above ``floor_s``: with two tiers, ⌈floor/τ₁⌉ of τ₁; with more, the
    multiples between start where the free optimum's intervals are under a top held at the floor and
    climb one at a time (floats; arrays keep that start), the top multiple recomputed after each."""
    from ckptcalc.model import search
    from ckptcalc.model.arrays import lib, scalar
    from ckptcalc.model.tiers import effective

    ns = lib(floor_s, base.tau1_s)
    tau1 = base.tau1_s

    def topped(middle: tuple[Num, ...]) -> Any:
        below: Num = tau1
        for m in middle:
            below = below * m
        last = ns.maximum(ns.ceil(floor_s / below * (1.0 - 1e-12)), 1.0)
        return base.replace(every=(*middle, last))

    if base.count == 2:
        return topped(())
    # Where the intervals would be with τ₁ free and the top at the floor, in whole multiples of τ₁.
    shape = search.best(base, mtbf_s, top_s=floor_s).intervals()
    middle: list[Num] = []
    below = tau1
    for interval in shape[1:-1]:
        m = ns.maximum(ns.rint(interval / below), 1.0)
        middle.append(m)
        below = below * m
    best = topped(tuple(middle))
    if not scalar(floor_s, tau1):
        return best
    value = float(effective(best, mtbf_s).effective)
    improved = True
    while improved:
        improved = False
        for j in range(len(middle)):
            for sign in (1.0, -1.0):
                trial = list(middle)
                trial[j] = max(1.0, trial[j] + sign)
                candidate = topped(tuple(trial))
                v = float(effective(candidate, mtbf_s).effective)
                if v > value * (1.0 + 1e-13):
                    middle, best, value, improved = trial, candidate, v, True
    return best


def kept(config: Any) -> Any:
    """The newest storage checkpoints a :class:`ckptcalc.model.evaluation.Config` keeps (None: all): its
    ``keep``, cut by the registered retention limits (docs/model.md §17.2)."""
    from ckptcalc.model import arrays

    return registry.kept(config, stored_bytes(config), arrays)


def retained_bytes(size_bytes: float, keep: float | None, every_s: float | None, work_s: float | None) -> float | None:
    """The bytes the storage tier holds with retention (docs/model.md §17.2): the ``keep`` newest
    checkpoints, plus one kept for good per ``every_s`` of work over a run of ``work_s``:
    size × (k + W/K_p). Without a run, the newest k only (the steady state; the ones kept for good grow
    by size per K_p). None without retention (every checkpoint kept)."""
    if keep is None:
        return None
    permanent = work_s / every_s if every_s is not None and work_s is not None else 0.0
    return size_bytes * (keep + permanent)


class TierLoad(Record):
    """One tier's load on its storage at the schedule run: its write time per checkpoint (the persist,
    or the stall of a synchronous write), interval, busy share and bytes per checkpoint and per day."""

    name: str
    write_s: float
    interval_s: float
    busy_share: float
    checkpoint_bytes: float
    bytes_written_per_day: float


class Load(Record):
    """What a result's schedule costs the storage (docs/model.md §17.2): every tier's load, fastest first,
    the share of time lost to the persist's slowdown, retention's bytes, and the registered mechanisms'
    parts (``registry.load_parts``: a limit and what honouring it costs), each after the key it names."""

    tiers: tuple[TierLoad, ...]
    slowdown_share: float
    max_busy: float
    bytes_retained: float | None = None  # with retention: the storage tier's checkpoints kept
    kept_for_good_per_day: float | None = None  # without a run: bytes a day of work the ones kept for good add
    retained_over_run: bool = False  # bytes_retained at the run's end (--work), not the newest k alone
    parts: tuple[tuple[str, dict[str, Any]], ...] = ()  # the mechanisms' parts, each after the key it names

    @property
    def bytes_written_per_day(self) -> float:
        return math.fsum(t.bytes_written_per_day for t in self.tiers)

    @property
    def busy(self) -> tuple[TierLoad, ...]:
        """The tiers busy more than :attr:`max_busy` of the time."""
        return tuple(t for t in self.tiers if t.busy_share > self.max_busy)

    @property
    def overloaded(self) -> TierLoad | None:
        """The first tier whose storage would be busy all the time or more (the schedule cannot run)."""
        return next((t for t in self.tiers if t.busy_share >= 1.0), None)


def load(config: Any, result: Any, max_busy: float | None = None, evaluate: Callable[[Any], Any] | None = None) -> Load:
    """The storage load of ``result`` (one job's :class:`ckptcalc.model.evaluation.Result` of ``config``);
    ``evaluate`` (:func:`ckptcalc.model.evaluation.evaluate`) gives the optimum without a mechanism, for
    what a limit costs."""
    tiers = []
    for plan in result.levels:
        level = plan.level
        interval = float(plan.interval_s)
        write = float(level.persist_s) if float(level.persist_s) > 0 else float(level.snapshot_s)
        top = plan is result.levels[-1]
        size = float(stored_bytes(config) if top else tier_bytes(config, str(level.name)))
        finite = math.isfinite(interval) and interval > 0
        tiers.append(
            TierLoad(
                name=str(level.name),
                write_s=write,
                interval_s=interval,
                busy_share=busy_share(write, interval, float(level.stall_s)) if finite else 0.0,
                checkpoint_bytes=size,
                bytes_written_per_day=written_per_day(size, interval) if finite else 0.0,
            )
        )
    stored = tiers[-1].checkpoint_bytes if tiers else float(stored_bytes(config))
    newest = kept(config)
    keep = None if newest is None else float(newest)
    for_good = config.kept_for_good_s
    every = None if for_good is None else float(for_good)
    work = None if config.work_s is None else float(config.work_s)
    return Load(
        tiers=tuple(tiers),
        slowdown_share=registry.slowed_share(result),
        max_busy=DEFAULT_MAX_BUSY if max_busy is None else max_busy,
        bytes_retained=retained_bytes(stored, keep, every, work),
        kept_for_good_per_day=None if every is None or keep is None or work is not None else stored * DAY_S / every,
        retained_over_run=keep is not None and work is not None,
        parts=registry.load_parts(config, result, evaluate, keep),
    )


def top_load(result: Any) -> tuple[Num, Num]:
    """(busy share, bytes a day) of a result's top tier, floats or arrays (a sweep's columns)."""
    from ckptcalc.model.arrays import lib

    level = result.levels[-1].level
    interval = result.interval_s
    ns = lib(interval, level.persist_s, level.snapshot_s)
    write = ns.where(level.persist_s > 0, level.persist_s, level.snapshot_s)
    size = stored_bytes(result.config)
    return busy_share(write, interval, level.stall_s), written_per_day(size, interval)


#: Subsets of tiers are evaluated for at most this many tiers (2^(L−1) schedules, each searched).
MAX_SUBSET_TIERS = 5


def subsets(config: Any) -> list[tuple[tuple[str, ...], Any]]:
    """Every schedule of three or more tiers with some of the tiers below storage dropped (storage stays:
    it recovers the failures no other tier survives), as (the names dropped, the configuration); a
    dropped tier's failures recover from the next tier above that is kept (docs/model.md §17.4)."""
    import itertools

    levels = config.levels()
    if not config.middle or len(levels) > MAX_SUBSET_TIERS or config.has_recovery or registry.takes_over(config):
        return []
    below = list(range(len(levels) - 1))  # the tiers that may go, fastest first
    found = []
    for size in range(1, len(below) + 1):
        for dropped in itertools.combinations(below, size):
            found.append((tuple(str(levels[i].name) for i in dropped), _without(config, set(dropped))))
    return found


def _without(config: Any, dropped: set[int]) -> Any:
    """``config`` with the tiers at ``dropped`` (indices of :meth:`levels`, storage never) left out, every
    interval left to the optimiser."""
    has_memory = config.has_memory
    shares = [float(level.share) for level in config.levels()]
    count = len(shares)
    # A dropped tier's share goes to the next kept tier above it (storage's is what the rest leave).
    carried = list(shares)
    for i in range(count - 1):
        if i in dropped:
            carried[i + 1] += carried[i]
            carried[i] = 0.0
    middle = []
    offset = 1 if has_memory else 0
    for j, tier in enumerate(config.middle):
        if j + offset not in dropped:
            middle.append(tier.replace(share=carried[j + offset], interval_s=None))
    changed = config.optimal().replace(middle=tuple(middle))
    if has_memory and 0 in dropped:
        changed = changed.replace(
            replica_survival=None, memory_bandwidth=None, memory_restart_s=None, memory_read_bandwidth=None
        )
    elif has_memory:
        changed = changed.replace(replica_survival=carried[0])
    return changed
