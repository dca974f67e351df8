"""The checkpoint model: pure arithmetic in SI units, on floats or numpy arrays.

Nothing here reads files, parses units or prints. Every function accepts plain
floats and numpy arrays alike (arrays broadcast), so a sweep of a million
points goes through the same code as a single ``optimize``; numpy is imported
only when an array is actually passed.

Decisions come from the exact model (:mod:`ckptcalc.model.exact`, docs/model.md
§8): failures strike during work, stalls and restarts, and losses are
shares of elapsed time. First order stays beside it as the explanation: one
or more checkpoint levels, each with a stall ``s``, a lag ``P``, an interval
``τ``, a restart ``r`` and a share ``q`` of the failures, at job failure
interval ``M``, lose per unit of useful time::

    Σ s/τ  +  Σ q·(τ/2 + P + r)/M

and a single synchronous level (``s = δ``, ``P = 0``, ``q = 1``) is Young's
δ/τ + τ/2M + r/M, smallest at τ* = √(2δM).

>>> result = evaluate(Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0))
>>> round(result.optimal_interval_s, 1), round(result.effective, 4), TERMS[result.dominant]
(266.8, 0.925, 'restart')
>>> round(result.young_interval_s, 1), round(result.first_order.effective, 4)
(268.9, 0.9221)
"""

from __future__ import annotations

import itertools
import math
import sys
from typing import Any, Literal, TypeAlias

from ckptcalc.errors import InputError
from ckptcalc.mechanisms import registry
from ckptcalc.mechanisms.base import IN_PLACE, FailureClass
from ckptcalc.model import arrays, recovery, search, storage
from ckptcalc.model.arrays import count, largest, lib, scalar
from ckptcalc.model.arrays import maximum as _maximum
from ckptcalc.model.arrays import share as _share
from ckptcalc.model.one_level import Split, lambert_interval, single_split
from ckptcalc.model.one_level import lambert_w0_plus_one as lambert_w0_plus_one
from ckptcalc.model.tiers import Tiers, effective
from ckptcalc.records import Record
from ckptcalc.records import replace as replace

#: What a configuration or a result holds: a float for one job, a numpy array for a grid of them. Typed
#: loosely at this boundary, so that the many callers holding one job use the values as floats; inside
#: the recursion and the search (:mod:`ckptcalc.model.arrays`) the union is spelt out.
Num: TypeAlias = Any

#: The three kinds of loss, in the order used for ``dominant`` indices.
TERMS: tuple[str, str, str] = ("write", "rework", "restart")

#: Terms whose relative difference is below this are tied; a tie goes to the earlier term.
TIE = 1e-9


# ---------------------------------------------------------------- first order


def write_time(checkpoint_bytes: Num, bandwidth: Num) -> Num:
    """Time to write a checkpoint, δ = S / B (seconds)."""
    return checkpoint_bytes / bandwidth


def young_interval(stall_s: Num, mtbf_s: Num, share: Num = 1.0) -> Num:
    """Young's first-order optimum √(2 s M / q); with ``share`` 1 this is √(2δM). A level that
    serves no failure (q = 0) is best never written: infinite."""
    if scalar(stall_s, mtbf_s, share):
        return (2.0 * stall_s * mtbf_s / share) ** 0.5 if share else math.inf
    import numpy

    with numpy.errstate(divide="ignore"):
        return (2.0 * stall_s * mtbf_s / numpy.asarray(share, dtype=float)) ** 0.5


def optimal_interval(stall_s: Num, lag_s: Num, mtbf_s: Num, share: Num = 1.0) -> Num:
    """Optimum of one level, bounded below by its lag: max(√(2 s M / q), P)."""
    return _maximum(young_interval(stall_s, mtbf_s, share), lag_s)


def level_loss(
    *, stall_s: Num, lag_s: Num, interval_s: Num, restart_s: Num, share: Num, mtbf_s: Num
) -> tuple[Num, Num, Num]:
    """The (write, rework, restart) shares of elapsed time lost to one level.

    write = s/τ, rework = q·(τ/2 + P)/M, restart = q·r/M.
    """
    write = _share(stall_s, interval_s)
    # Grouped so that scalar factors are combined before touching an array.
    if scalar(share):
        # A level that serves no failure loses no work to rework, however long its interval.
        rework = interval_s * (0.5 * share / mtbf_s) if share else 0.0
    else:
        import numpy

        with numpy.errstate(invalid="ignore"):
            rework = numpy.where(numpy.asarray(share) == 0, 0.0, interval_s * (0.5 * share / mtbf_s))
    if not (scalar(lag_s) and lag_s == 0):
        rework = rework + lag_s * (share / mtbf_s)
    restart = restart_s * (share / mtbf_s)
    return write, rework, restart


def first_order_loss(delta_s: Num, interval_s: Num, mtbf_s: Num, restart_s: Num) -> tuple[Num, Num, Num]:
    """The three terms of Young's model for a single synchronous level."""
    return level_loss(stall_s=delta_s, lag_s=0.0, interval_s=interval_s, restart_s=restart_s, share=1.0, mtbf_s=mtbf_s)


# ------------------------------------------------------- Daly and the exact model


def daly_interval(delta_s: Num, mtbf_s: Num) -> Num:
    """Daly's higher-order optimum (2006, eq. 37).

    τ_D = √(2δM)·(1 + √x/3 + x/9) − δ with x = δ/2M, while δ < 2M; M otherwise.
    """
    x = delta_s / (2.0 * mtbf_s)
    series = (2.0 * delta_s * mtbf_s) ** 0.5 * (1.0 + x**0.5 / 3.0 + x / 9.0) - delta_s
    if scalar(delta_s, mtbf_s):
        return series if x < 1.0 else mtbf_s
    import numpy

    return numpy.where(x < 1.0, series, mtbf_s + 0.0 * x)


def exact_interval(delta_s: Num, mtbf_s: Num) -> Num:
    """Exact optimum for exponential failures: M·(1 + W₀(−e^{−(1 + δ/M)})).

    It does not depend on the restart time.
    """
    return lambert_interval(delta_s, mtbf_s)


def exact_effective(interval_s: Num, delta_s: Num, restart_s: Num, mtbf_s: Num) -> Num:
    """Share of time spent on kept work when failures are exponential and may
    strike during writes and restarts: τ / (M·e^{r/M}·(e^{(τ+δ)/M} − 1)), Daly's exact form
    (:func:`ckptcalc.model.one_level.single_split`, which tends to 0 instead of overflowing)."""
    return single_split(interval_s=interval_s, stall_s=delta_s, lag_s=0.0, restart_s=restart_s, mtbf_s=mtbf_s).effective


# ------------------------------------------------------------ configurations


class Level(Record):
    """One checkpoint level: where a checkpoint goes and which failures it serves."""

    name: str
    stall_s: Num
    lag_s: Num
    restart_s: Num
    share: Num
    interval_s: Num | None = None
    # The part of ``stall_s`` that is training slowed by the persist, f·P (docs/model.md §17.1): the
    # model's stall is s + f·P and its lag (1 − f)·P, so a level's own stall and persist are these.
    slowdown_s: Num = 0.0

    def optimal_interval(self, mtbf_s: Num) -> Num:
        return optimal_interval(self.stall_s, self.lag_s, mtbf_s, self.share)

    @property
    def snapshot_s(self) -> Num:
        """The stall itself, without the slowdown the model charges with it."""
        return self.stall_s - self.slowdown_s

    @property
    def persist_s(self) -> Num:
        """The persist's elapsed time P (the model's lag, the work done during it, plus its slowdown)."""
        return self.lag_s + self.slowdown_s

    @property
    def slows(self) -> bool:
        """Whether its persist slows training (a level of one configuration, not of a grid)."""
        return float(self.slowdown_s) > 0.0


class Tier(Record, extra=registry.tier_fields()):
    """A checkpoint tier between the memory level and storage (three or more tiers in all).

    ``restart_s`` is its whole restart, or, with ``read_bandwidth``, the part
    that does not depend on the checkpoint size (the reload, size / read
    bandwidth, is added). ``share`` is the share of failures it recovers.
    The mechanisms' tier costs (:mod:`ckptcalc.mechanisms.registry`) change its write and reload, as
    they change storage's; it holds their keys a middle tier states (``registry.tier_fields``).
    """

    name: str
    bandwidth: Num
    restart_s: Num
    share: Num
    read_bandwidth: Num | None = None
    interval_s: Num | None = None

    def stall(self, size_bytes: Num) -> Num:
        """The tier's write of one checkpoint: size / B, with the tier costs."""
        return moved(self, size_bytes, self.bandwidth)

    def restart(self, size_bytes: Num) -> Num:
        """The tier's restart: its fixed part plus, with a read bandwidth, the reload (with the tier costs)."""
        if self.read_bandwidth is None:
            return self.restart_s
        return self.restart_s + moved(self, size_bytes, self.read_bandwidth)


def moved(holder: Any, size_bytes: Num, bandwidth: Num) -> Num:
    """Time to move one checkpoint over ``bandwidth`` to or from the tier ``holder`` states (a :class:`Config`
    for storage, a :class:`Tier`, None for the memory tier): size / B, changed by every registered tier
    cost (docs/model.md §17)."""
    return registry.moved(holder, size_bytes, bandwidth)


def restart_time(restart_s: Num, checkpoint_bytes: Num, read_bandwidth: Num | None) -> Num:
    """A level's restart: the fixed part plus, when the read bandwidth is known, the reload S / B_read."""
    if read_bandwidth is None:
        return restart_s
    return restart_s + checkpoint_bytes / read_bandwidth


def _or_zero(value: Num | None) -> Num:
    """A share that may be unstated (None), as a number (a float or an array)."""
    return 0.0 if value is None else value


class Config(Record, extra=registry.fields()):
    """A training job's checkpointing, in SI units (fields may be numpy arrays).

    ``snapshot_bandwidth`` makes storage checkpoints asynchronous (snapshot to
    host memory, persist in the background). ``replica_survival`` with
    ``memory_bandwidth`` and ``memory_restart_s`` adds an in-memory replica level
    that serves that share of failures; ``middle`` adds tiers between it and
    storage (docs/model.md §12). Intervals left ``None`` are optimised.
    ``read_bandwidth`` and ``memory_read_bandwidth`` make a level's restart
    its ``restart_s`` plus the reload, checkpoint size / read bandwidth.
    ``shape`` makes the time between failures Weibull with that shape (mean
    ``mtbf_s``) instead of exponential: one level only (docs/model.md §8.7).
    Every registered mechanism's inputs (:mod:`ckptcalc.mechanisms`) are fields too, None when unstated,
    read by their homes.
    """

    checkpoint_bytes: Num
    bandwidth: Num
    mtbf_s: Num
    restart_s: Num
    snapshot_bandwidth: Num | None = None
    replica_survival: Num | None = None
    memory_bandwidth: Num | None = None
    memory_restart_s: Num | None = None
    interval_s: Num | None = None
    memory_interval_s: Num | None = None
    shape: Num | None = None
    read_bandwidth: Num | None = None
    memory_read_bandwidth: Num | None = None
    middle: tuple[Tier, ...] = ()
    step_s: Num | None = None  # a training step: just-in-time recovery replays at most one (docs/model.md §13)

    @property
    def classes(self) -> tuple[FailureClass, ...]:
        """The failure classes the registered mechanisms give the job beside its periodic tiers (§13)."""
        return registry.classes(self)

    @property
    def has_jit(self) -> bool:
        """Whether some failures are recovered in place (a tier of one step under the periodic ones)."""
        return registry.in_place(self) is not None

    @property
    def has_recovery(self) -> bool:
        """Whether failure classes take a share of the failures from the periodic tiers."""
        return bool(self.classes)

    @property
    def step(self) -> Num:
        """The step time just-in-time recovery replays (1 s, unused, without it)."""
        return 1.0 if self.step_s is None else self.step_s

    @property
    def periodic_share(self) -> Num:
        """The share of failures the periodic tiers serve as the job's own class: 1 less every class's."""
        return recovery.periodic_share(*(c.share for c in self.classes))

    @property
    def rollback_share(self) -> Num:
        """The share of failures that roll back to a periodic checkpoint: the job's own class and every
        class that lands on a tier with a restart of its own (docs/model.md §20)."""
        classes = self.classes
        return recovery.periodic_share(*(c.share for c in classes if not isinstance(c.landing, int)))

    # Retention (docs/model.md §16): the newest storage checkpoints retained (None: all); the run's length.
    keep: Num | None = None
    work_s: Num | None = None

    @property
    def kept_for_good_s(self) -> Num | None:
        """The work between storage checkpoints kept for good (None: none), as a mechanism states it."""
        return registry.kept_for_good_s(self)

    @property
    def write_s(self) -> Num:
        """Time to make a checkpoint durable in storage, S / B, in every mode."""
        return moved(self, self.checkpoint_bytes, self.bandwidth)

    @property
    def is_async(self) -> bool:
        return self.snapshot_bandwidth is not None

    @property
    def has_memory(self) -> bool:
        return self.replica_survival is not None

    @property
    def is_nested(self) -> bool:
        """Three or more tiers: memory, the middle ones, storage."""
        return bool(self.middle)

    @property
    def is_single_sync(self) -> bool:
        return not (self.is_async or self.has_memory)

    @property
    def storage_restart_s(self) -> Num:
        """The restart from storage, reload included."""
        if self.read_bandwidth is None:
            return self.restart_s
        reload = moved(self, self.checkpoint_bytes, self.read_bandwidth)
        return self.restart_s + reload

    def levels(self) -> tuple[Level, ...]:
        """The levels of docs/model.md §4 and §12, fastest first: memory, the middle tiers, storage.
        With just-in-time recovery or notice (§13) their shares are of all failures: they serve
        1 − p_j − p_n of them."""
        levels = self._levels()
        if not self.has_recovery:
            return levels
        rest = self.periodic_share
        found = [level.replace(share=level.share * rest) for level in levels]
        for c in self.classes:  # a class with its own restart that rolls back to a tier (docs/model.md §20)
            if isinstance(c.landing, int):
                found[c.landing] = found[c.landing].replace(share=found[c.landing].share + c.share)
        return tuple(found)

    def _levels(self) -> tuple[Level, ...]:
        levels: list[Level] = []
        storage_share: Num = 1.0
        if self.replica_survival is not None:
            assert self.memory_bandwidth is not None and self.memory_restart_s is not None
            levels.append(
                Level(
                    name="memory",
                    stall_s=write_time(self.checkpoint_bytes, self.memory_bandwidth),
                    lag_s=0.0,
                    restart_s=restart_time(self.memory_restart_s, self.checkpoint_bytes, self.memory_read_bandwidth),
                    share=self.replica_survival,
                    interval_s=self.memory_interval_s,
                )
            )
            storage_share = 1.0 - self.replica_survival
        for tier in self.middle:
            levels.append(
                Level(
                    name=tier.name,
                    stall_s=tier.stall(self.checkpoint_bytes),
                    lag_s=0.0,
                    restart_s=tier.restart(self.checkpoint_bytes),
                    share=tier.share,
                    interval_s=tier.interval_s,
                )
            )
            storage_share = storage_share - tier.share
        if self.snapshot_bandwidth is not None:
            stall, lag = write_time(self.checkpoint_bytes, self.snapshot_bandwidth), self.write_s
        else:
            stall, lag = self.write_s, 0.0
        stall, lag, slowdown = registry.top_level(self, stall, lag)
        levels.append(
            Level(
                name="storage",
                stall_s=stall,
                lag_s=lag,
                restart_s=self.storage_restart_s,
                share=storage_share,
                interval_s=self.interval_s,
                slowdown_s=slowdown,
            )
        )
        return tuple(levels)

    def optimal(self) -> Config:
        """The same configuration with every interval left to the optimiser."""
        return self.replace(
            interval_s=None, memory_interval_s=None, middle=tuple(t.replace(interval_s=None) for t in self.middle)
        )

    def flat(self) -> Config:
        """The same configuration with each restart a whole (the reload folded in), for changing restarts."""
        if self.read_bandwidth is None and self.memory_read_bandwidth is None and not self.middle:
            return self
        levels = self.levels()
        memory_restart = levels[0].restart_s if self.has_memory else self.memory_restart_s
        middle = tuple(
            t.replace(restart_s=level.restart_s, read_bandwidth=None)
            for t, level in zip(self.middle, levels[1:-1], strict=True)
        )
        return self.replace(
            restart_s=levels[-1].restart_s,
            read_bandwidth=None,
            memory_restart_s=memory_restart,
            memory_read_bandwidth=None,
            middle=middle,
        )

    @property
    def pinned(self) -> bool:
        """Whether any interval is given."""
        return (
            self.interval_s is not None
            or self.memory_interval_s is not None
            or any(t.interval_s is not None for t in self.middle)
        )


class Caveat(Record):
    """Something the user should know about a result; the wording lives with the output.

    kinds: ``all_down`` (elastic replica groups: ``value`` of the whole-job failures are all groups
    down at once, beyond the range checked against the simulation), ``pauses`` (elastic replica
    groups: ``value`` of running time in quorum pauses, likewise), ``lag_bound`` (the optimum is held
    up by the persist time: a checkpoint must be durable before the next starts), ``storage_rounded``
    (a given storage interval that is not a whole number of memory intervals
    was rounded to one; ``value`` is the interval given).
    ``points`` is how many points of a sweep it affects.
    """

    kind: str
    level: str | None = None
    value: float | None = None
    points: int = 1
    below: str | None = None  # ``tier_rounded``: the tier whose interval it must be a multiple of


class LevelResult(Record):
    """One level under the first-order model: its interval and its three loss terms."""

    level: Level
    interval_s: Num
    optimal_interval_s: Num
    write: Num
    rework: Num
    restart: Num

    @property
    def loss(self) -> Num:
        return self.write + self.rework + self.restart


class FirstOrder(Record):
    """Young's first-order model of a configuration: the explanation, not the decision.

    Losses are charged per unit of useful time, so ``total`` may exceed 1
    (``effective`` is then clamped at 0).
    """

    config: Config
    levels: tuple[LevelResult, ...]
    write: Num
    rework: Num
    restart: Num
    total: Num
    effective: Num

    @property
    def storage(self) -> LevelResult:
        return self.levels[-1]

    @property
    def interval_s(self) -> Num:
        return self.storage.interval_s

    @property
    def optimal_interval_s(self) -> Num:
        """Young's interval of the storage level (bounded below by its lag)."""
        return self.storage.optimal_interval_s


def first_order(config: Config) -> FirstOrder:
    """Young's model of ``config`` at its given intervals (its own optimum where none is given)."""
    mtbf = config.mtbf_s
    results: list[LevelResult] = []
    for level in config.levels():
        best = level.optimal_interval(mtbf)
        interval = best if level.interval_s is None else level.interval_s
        write, rework, restart = level_loss(
            stall_s=level.stall_s,
            lag_s=level.lag_s,
            interval_s=interval,
            restart_s=level.restart_s,
            share=level.share,
            mtbf_s=mtbf,
        )
        results.append(LevelResult(level, interval, best, write, rework, restart))
    classes = registry.first_order_classes(config)
    if classes:
        results[-1] = _classes_first_order(config, results[-1], classes)
    write, rework, restart = results[0].write, results[0].rework, results[0].restart
    for extra in results[1:]:
        write, rework, restart = write + extra.write, rework + extra.rework, restart + extra.restart
    for in_place, recovered in registry.first_order(config, mtbf):  # each mechanism's failure classes
        rework, restart = rework + in_place, restart + recovered
    total = write + rework + restart
    return FirstOrder(config, tuple(results), write, rework, restart, total, _maximum(1.0 - total, 0.0))


def _classes_first_order(config: Config, storage: LevelResult, classes: list[tuple[Num, Num, Num]]) -> LevelResult:
    """The storage level with the failure classes that go back to it, first order (docs/model.md §16.3):
    each class (rate λ, work lost beyond half the interval d, restart s) costs τ/2 + d of work and
    r + s, at λ, so Young's interval is √(2s/(q/M + Σλ))."""
    rate: Num = 0.0
    for each, _, _ in classes:
        rate = rate + each
    level = storage.level
    best = _maximum((2.0 * level.stall_s / (level.share / config.mtbf_s + rate)) ** 0.5, level.lag_s)
    interval = best if level.interval_s is None else level.interval_s
    if level.interval_s is None:
        write, rework, restart = level_loss(
            stall_s=level.stall_s,
            lag_s=level.lag_s,
            interval_s=interval,
            restart_s=level.restart_s,
            share=level.share,
            mtbf_s=config.mtbf_s,
        )
    else:
        write, rework, restart = storage.write, storage.rework, storage.restart
    for each, lost, extra in classes:
        rework = rework + each * (interval / 2.0 + lost)
        restart = restart + each * (level.restart_s + extra)
    return LevelResult(level, interval, best, write, rework, restart)


# ------------------------------------------------------------- the exact model


class Plan(Record):
    """The schedule a level runs: its interval, and the optimum for comparison."""

    level: Level
    interval_s: Num
    optimal_interval_s: Num


class Result(Record):
    """The exact model of one configuration (or a grid of them), with first order beside it.

    ``effective`` and the split ``write``/``rework``/``restart`` are shares
    of elapsed time (they sum to 1 with ``effective``; ``total`` is the
    loss, 1 − effective) at the schedule actually run: ``interval_s``
    between storage checkpoints and, with a memory level, ``memory_interval_s``
    with storage every ``storage_every``-th memory checkpoint (so
    ``interval_s`` = ``storage_every`` × ``memory_interval_s`` exactly).
    The ``optimal_*`` fields describe the exact optimum. ``young_interval_s``
    is the first-order optimum of the storage level, ``daly_interval_s``
    Daly's higher-order one (a single synchronous level only).
    """

    config: Config
    interval_s: Num
    memory_interval_s: Num | None
    storage_every: Num | None
    optimal_interval_s: Num
    optimal_memory_interval_s: Num | None
    optimal_storage_every: Num | None
    effective: Num
    optimal_effective: Num
    write: Num
    rework: Num
    restart: Num
    dominant: Any
    young_interval_s: Num
    daly_interval_s: Num | None
    levels: tuple[Plan, ...]
    first_order: FirstOrder
    caveats: tuple[Caveat, ...]
    pool: Any = None  # the running share's figures (the spare pool's Pool, docs/model.md §15), if any
    elastic: Any = None  # the groups process and its losses, with elastic replica groups (mechanisms.elastic)
    silent: Any = None  # the silent events (ckptcalc.mechanisms.silent.model.Summary) when the job has them (§16)

    @property
    def total(self) -> Num:
        return 1.0 - self.effective

    @property
    def storage(self) -> Plan:
        return self.levels[-1]

    @property
    def tiered(self) -> bool:
        """More than one level: a faster tier below storage."""
        return len(self.levels) > 1

    @property
    def model(self) -> Literal["exact", "approximate"]:
        """``approximate`` where any part of the headline comes from a form that is not exact: a registered
        mechanism's (elastic replica groups, docs/model.md §14.4), silent events (§16.3), a spare pool under
        Weibull failures (§15.5); ``exact`` otherwise (docs/model.md §18.2)."""
        config = self.config
        rough = registry.approximate(config)
        return "approximate" if rough else "exact"


def headline_model(labels: Any) -> str:
    """The ``model`` of a headline made of several results' (``compare``'s scenarios, ``check``'s presets):
    ``approximate`` where any of their ``labels`` is (None: a result that failed), ``exact`` otherwise
    (docs/model.md §18.2).

    >>> headline_model(["exact", None, "approximate"]), headline_model(["exact"])
    ('approximate', 'exact')
    """
    return "approximate" if "approximate" in list(labels) else "exact"


def _base(config: Config) -> Tiers:
    """The schedule of ``config``'s levels, fastest first, with τ₁ = 1 and every multiple 1 (placeholders);
    with just-in-time recovery, its one-step tier first (τ₁ the step), and the failures with notice."""
    levels = config.levels()
    periodic = Tiers(
        tau1_s=1.0,
        every=tuple(1.0 for _ in levels[1:]),
        stalls=tuple(level.stall_s for level in levels),
        lag_s=levels[-1].lag_s,
        shares=tuple(level.share for level in levels),
        restarts=tuple(level.restart_s for level in levels),
    )
    if not config.has_recovery:
        return _with_classes(config, periodic)
    classes = config.classes
    recovery.check_modelled(classes, len(levels))
    in_place, nowhere, others = recovery.split_classes(classes)
    periodic = periodic.replace(shares=recovery.own_shares(periodic.shares, others))
    return _with_classes(
        config,
        recovery.with_classes(periodic, step_s=config.step, in_place=in_place, nowhere=nowhere, others=others),
    )


def _with_classes(config: Config, schedule: Tiers) -> Tiers:
    """``schedule`` with the failure classes of ``config`` in the recursion (silent events, docs/model.md §16.3)."""
    found: Tiers = registry.with_classes(config, schedule, lambda: storage.kept(config))
    return found


def _given(config: Config, base: Tiers, given: list[Num]) -> tuple[Tiers, list[Caveat]]:
    """Every level's interval as given, each rounded to a whole multiple of the one below (with a caveat)."""
    caveats: list[Caveat] = []
    ns = lib(*given)
    levels = config.levels()
    every: list[Num] = []
    below: Num = given[0]
    for lower, level, interval in zip(levels, levels[1:], given[1:], strict=False):
        m = ns.maximum(ns.rint(interval / below), 1.0)
        off = abs(m * below - interval) > 1e-9 * interval
        hits = count(off)
        if hits:
            # The largest given interval among the points that were rounded.
            worst = largest(interval if scalar(interval, below) else ns.where(off, interval, 0.0))
            if len(levels) == 2:
                caveats.append(Caveat("storage_rounded", level.name, worst, hits))
            else:
                caveats.append(Caveat("tier_rounded", level.name, worst, hits, lower.name))
        every.append(m)
        below = below * m
    return base.replace(tau1_s=given[0], every=tuple(every)), caveats


def _plan(config: Config) -> tuple[Tiers, list[Caveat]]:
    """The schedule ``config`` runs: the joint exact optimum; the fastest interval or storage's held
    where only that one is given; every interval as given when all are."""
    base = _base(config)
    mtbf = config.mtbf_s
    given = [level.interval_s for level in config.levels()]
    if config.has_jit:
        return _plan_jit(config, base, given)
    if all(g is None for g in given):
        return _searched(config, base)
    if all(g is not None for g in given):
        return _within(config, *_given(config, base, given))
    if given[0] is not None and all(g is None for g in given[1:]):
        return _searched(config, base.replace(tau1_s=given[0]), tau1_fixed=True)
    if given[-1] is not None and all(g is None for g in given[:-1]):
        return _within(config, search.best(base, mtbf, top_s=given[-1]), [])
    raise InputError(
        "with three or more tiers, give every tier's interval, only the fastest's, or only storage's",
        where="interval",
    )


def _plan_jit(config: Config, base: Tiers, given: list[Num]) -> tuple[Tiers, list[Caveat]]:
    """:func:`_plan` with just-in-time recovery: τ₁ is the step, and the periodic intervals are whole
    steps, searched for the failures that remain, or every one given (rounded to whole steps)."""
    if all(g is None for g in given):
        return _searched(config, base, tau1_fixed=True)
    if any(g is None for g in given):
        raise InputError("with just-in-time recovery, give every checkpoint interval or none", where="memory_interval")
    ns = lib(*given, config.step)
    periodic, caveats = _given(config, recovery.without_in_place(base.replace(every=(1.0, *base.every[1:]))), given)
    steps = ns.maximum(ns.rint(periodic.tau1_s / config.step), 1.0)
    every = (steps, *periodic.every)
    return _within(config, base.replace(every=every), caveats)


def _searched(config: Config, base: Tiers, *, tau1_fixed: bool = False) -> tuple[Tiers, list[Caveat]]:
    """The best schedule like ``base`` (its τ₁ kept with ``tau1_fixed``: a step, a given fastest
    interval), its top interval held long enough to honour every registered bound on it, such as a daily
    write limit (docs/model.md §17.2)."""
    bounds = registry.top_bounds(config, storage.stored_bytes(config))
    if not bounds:
        own = None if tau1_fixed else registry.best(config, base, config.mtbf_s, search, effective)
        if own is not None:
            return own, []
        return search.best(base, config.mtbf_s, tau1_fixed=tau1_fixed), []
    floor = bounds[0][0]
    for other, _, _ in bounds[1:]:
        floor = lib(floor, other).maximum(floor, other)
    found, bound = storage.within_floor(base, config.mtbf_s, floor, tau1_fixed=tau1_fixed)
    return found, [Caveat(kind, "storage", largest(value), bound) for _, kind, value in bounds] if bound else []


def _within(config: Config, schedule: Tiers, caveats: list[Caveat]) -> tuple[Tiers, list[Caveat]]:
    """A schedule whose every interval is given, refused where a registered mechanism does not allow its
    top interval (a daily write limit's is never ignored, docs/model.md §17.2)."""
    registry.check_schedule(config, storage.stored_bytes(config), schedule.storage_interval_s, arrays)
    return schedule, caveats


def _periodic(config: Config, schedule: Tiers) -> Tiers:
    """The periodic tiers of a schedule (without the just-in-time tier, when there is one)."""
    return recovery.without_in_place(schedule) if config.has_jit else schedule


def dominant(write: Num, rework: Num, restart: Num) -> Any:
    """Index into :data:`TERMS` of the largest term (an int, or an int array).

    Terms within a relative :data:`TIE` of the largest are tied, and a tie goes to the earlier
    term (write, then rework, then restart), identically for floats and arrays.
    """
    if scalar(write, rework, restart):
        top = max(write, rework, restart)
        floor = top * (1.0 - TIE)
        return 0 if write >= floor else (1 if rework >= floor else 2)
    import numpy

    top = numpy.maximum(numpy.maximum(write, rework), restart)
    floor = top * (1.0 - TIE)
    return numpy.where(write >= floor, 0, numpy.where(rework >= floor, 1, 2))


def evaluate(config: Config) -> Result:
    """The exact model of ``config`` at its given intervals (the exact optimum where none is given),
    the exact optimum itself, and first order beside them."""
    return _with_summaries(config, _evaluate(config))


def _with_summaries(config: Config, result: Result) -> Result:
    """``result`` with what each failure class comes to at the schedule run (silent events: docs/model.md §16.2)."""
    found: Result = registry.summarized(config, result, lambda: storage.kept(config), Caveat)
    return found


def _evaluate(config: Config) -> Result:
    """:func:`evaluate` before the failure classes' summaries."""
    if config.shape is not None:
        return _evaluate_weibull(config)
    taken: Result | None = registry.evaluated(config, sys.modules[__name__])
    if taken is not None:
        return taken  # a running share that evaluates the job itself (elastic replica groups)
    if config.has_recovery and scalar(config.rollback_share) and config.rollback_share <= 0:
        return _with_spares(config, _evaluate_unneeded(config))
    mtbf = config.mtbf_s
    chosen, caveats = _plan(config)
    best = _plan(config.optimal())[0] if config.pinned else chosen
    split = effective(chosen, mtbf)
    at_best = split if best is chosen else effective(best, mtbf)
    if best is not chosen:
        # The search is numeric: where it lands short of the schedule given (degenerate corners,
        # effective time near 0), that schedule is the better one found, and the optimum reported.
        best, at_best = _better(chosen, split, best, at_best)
    daly = daly_interval(config.write_s, mtbf) if config.is_single_sync else None
    return _with_spares(config, _result(config, (chosen, split), (best, at_best), caveats, daly))


def spare_pool(config: Config, mtbf_s: Num | None = None) -> Any:
    """The running share of ``config`` (at ``mtbf_s``, default its own): its spare pool (docs/model.md §15),
    or None when it has none."""
    return registry.running(config, config.mtbf_s if mtbf_s is None else mtbf_s)


def scaled_classes(config: Config, factor: Num) -> Config:
    """``config`` with every failure class's share scaled by ``factor`` (the share of failures a class can
    still serve, such as those that leave a healthy replica, docs/model.md §18.4)."""
    found: Config = registry.scaled_classes(config, factor)
    return found


def without_running(config: Config) -> Config:
    """``config`` without its running shares (their waits and groups counted after the periodic model,
    docs/model.md §18.4)."""
    found: Config = registry.without_running(config)
    return found


def _with_spares(config: Config, result: Result, found: Any = None) -> Result:
    """``result`` with its running share, the waits for a spare node, counted (docs/model.md §15): waiting
    freezes the job, so every share of the periodic model shrinks by the running share and the wait joins the restart
    term; the schedule, and so the optimum, stay those of the periodic model. ``found`` is the pool
    when the caller has worked out its running share (elastic groups, §18.4)."""
    found = spare_pool(config) if found is None else found
    if found is None:
        return result
    run = found.running
    write, rework, restart = result.write * run, result.rework * run, result.restart * run + (1.0 - run)
    return result.replace(
        effective=result.effective * run,
        optimal_effective=result.optimal_effective * run,
        write=write,
        rework=rework,
        restart=restart,
        dominant=dominant(write, rework, restart),
        pool=found.with_effective(result.effective),
    )


def unneeded(config: Config) -> bool:
    """Whether no failure rolls back to a periodic checkpoint (every one recovered in place or met
    with notice): then none is needed, and its interval is infinite. With elastic groups, all groups
    down at once rolls back whatever the shares (docs/model.md §18.4): needed unless that never happens."""
    if not (config.has_recovery and scalar(config.rollback_share) and config.rollback_share <= 0):
        return False
    found = registry.unneeded(config, sys.modules[__name__])
    return True if found is None else found


def _evaluate_unneeded(config: Config) -> Result:
    """No periodic checkpoint: the one-step tier alone (with the failures with notice), which with
    every failure in place is Daly's exact form at τ = t_step, δ = 0, r = c_j (docs/model.md §13.3)."""
    split = effective(one_step(config), config.mtbf_s)
    fo = first_order(config)
    plans = tuple(Plan(level, math.inf, math.inf) for level in config.levels())
    return Result(
        config=config,
        interval_s=math.inf,
        memory_interval_s=math.inf if config.has_memory else None,
        storage_every=None,
        optimal_interval_s=math.inf,
        optimal_memory_interval_s=math.inf if config.has_memory else None,
        optimal_storage_every=None,
        effective=split.effective,
        optimal_effective=split.effective,
        write=split.write,
        rework=split.rework,
        restart=split.restart,
        dominant=dominant(split.write, split.rework, split.restart),
        young_interval_s=math.inf,
        daly_interval_s=None,
        levels=plans,
        first_order=fo,
        caveats=(),
    )


def one_step(config: Config) -> Tiers:
    """The schedule of a job that needs no periodic checkpoint: the one-step tier of its in-place class
    alone (share 0, restart storage's and a save at the storage bandwidth, where it has none), with the
    class that goes back nowhere (docs/model.md §13.3)."""
    classes = config.classes
    recovery.check_modelled(classes)
    in_place, nowhere, others = recovery.split_classes(classes)
    alone = Tiers(
        tau1_s=config.step,
        every=(),
        stalls=(0.0,),
        lag_s=0.0,
        shares=(in_place.share if in_place is not None else 0.0,),
        restarts=(
            in_place.restart_s
            if in_place is not None
            else config.storage_restart_s + write_time(config.checkpoint_bytes, config.bandwidth),
        ),
    )
    return recovery.with_classes(
        alone,
        step_s=alone.tau1_s,
        in_place=None,
        nowhere=nowhere,
        others=tuple(c for c in others if c.landing == IN_PLACE),  # none rolls back here
    )


def _classes(config: Config) -> tuple[tuple[Num, ...], tuple[Num, ...]]:
    """The shares of failures and the restarts of every class of a periodic ``config``: each tier's, then
    just-in-time recovery's (r + δ_j) and notice's (r + δ)."""
    levels = config.levels()
    shares, restarts = [v.share for v in levels], [v.restart_s for v in levels]
    for found in config.classes:
        shares.append(found.share)
        restarts.append(found.restart_s)
    return tuple(shares), tuple(restarts)


def _better(a: Tiers, a_split: Split, b: Tiers, b_split: Split) -> tuple[Tiers, Split]:
    """Per point, the schedule with the higher effective time, with its split: ``b`` unless ``a`` is
    better by more than rounding (a relative 1e-12)."""
    take_a = a_split.effective > b_split.effective * (1.0 + 1e-12)
    if scalar(a_split.effective, b_split.effective):
        return (a, a_split) if take_a else (b, b_split)
    import numpy

    def pick(x: Any, y: Any) -> Any:
        if isinstance(x, tuple) and x and isinstance(x[0], tuple):  # classes of their own restart (§20)
            return tuple((pick(u[0], v[0]), pick(u[1], v[1]), u[2]) for u, v in zip(x, y, strict=True))
        if isinstance(x, tuple):
            return tuple(numpy.where(take_a, u, v) for u, v in zip(x, y, strict=True))
        return numpy.where(take_a, x, y)

    schedule = Tiers(**{f: pick(getattr(a, f), getattr(b, f)) for f in Tiers._fields})
    split = Split(**{f: pick(getattr(a_split, f), getattr(b_split, f)) for f in Split._fields})
    return schedule, split


def _result(
    config: Config,
    run: tuple[Tiers, Split],
    optimum: tuple[Tiers, Split],
    caveats: list[Caveat],
    daly: Num | None,
) -> Result:
    """The :class:`Result` of the schedule run and the optimal one, each with its split."""
    (chosen, split), (best, at_best) = run, optimum
    fo = first_order(config)
    levels = config.levels()
    two = config.has_memory
    ran, ideal = _periodic(config, chosen).intervals(), _periodic(config, best).intervals()
    plans = [Plan(level, ran[i], ideal[i]) for i, level in enumerate(levels)]
    storage = levels[-1]
    if not config.pinned or config.interval_s is None or config.memory_interval_s is None:
        bound = count((storage.lag_s > 0) & (ideal[-1] <= storage.lag_s * (1.0 + 1e-9)))
        if bound:
            caveats.append(Caveat("lag_bound", storage.name, None, bound))
    return Result(
        config=config,
        interval_s=ran[-1],
        memory_interval_s=ran[0] if two else None,
        storage_every=_periodic(config, chosen).segments if two else None,
        optimal_interval_s=ideal[-1],
        optimal_memory_interval_s=ideal[0] if two else None,
        optimal_storage_every=_periodic(config, best).segments if two else None,
        effective=split.effective,
        optimal_effective=at_best.effective,
        write=split.write,
        rework=split.rework,
        restart=split.restart,
        dominant=dominant(split.write, split.rework, split.restart),
        young_interval_s=fo.optimal_interval_s,
        daly_interval_s=daly,
        levels=tuple(plans),
        first_order=fo,
        caveats=tuple(caveats),
    )


def schedule_of(config: Config, result: Result, *, optimal: bool = False) -> Tiers:
    """The exact model's schedule that ``result`` (of ``config``) runs, or its optimal one."""
    intervals = [p.optimal_interval_s if optimal else p.interval_s for p in result.levels]
    ns = lib(*intervals)
    multiples = tuple(ns.rint(b / a) for a, b in itertools.pairwise(intervals))
    if config.has_jit:
        steps = ns.maximum(ns.rint(intervals[0] / config.step), 1.0)
        return _base(config).replace(every=(steps, *multiples))
    return _base(config).replace(tau1_s=intervals[0], every=multiples)


def effective_at(config: Config, schedule: Tiers, mtbf_s: float) -> float:
    """Effective time of ``config`` running ``schedule`` when the job MTBF is ``mtbf_s`` (floats);
    Weibull failures (one level) when ``config.shape`` is set."""
    taken = registry.effective_at(config, schedule, mtbf_s, sys.modules[__name__])
    if taken is not None:
        return taken
    found = spare_pool(config, mtbf_s)
    running = 1.0 if found is None else float(found.running)
    if config.shape is None:
        return float(effective(schedule, mtbf_s).effective) * running
    from ckptcalc.model import weibull

    return running * weibull.weibull_effective(
        interval_s=float(schedule.tau1_s),
        stall_s=float(schedule.stalls[0]),
        lag_s=float(schedule.lag_s),
        restart_s=float(schedule.restarts[0]),
        mtbf_s=mtbf_s,
        shape=float(config.shape),
    )


def interval_comparison(config: Config) -> list[tuple[str, float, float]] | None:
    """(name, interval, exact effective time) for Young's, Daly's and the exact
    optimum of a single synchronous level; ``None`` when no closed form exists."""
    if not config.is_single_sync or config.shape is not None or config.has_recovery or registry.takes_over(config):
        return None
    if registry.present(config):
        return None  # the closed forms know one kind of failure
    delta, mtbf, restart = config.write_s, config.mtbf_s, config.storage_restart_s
    rows = [
        ("young", young_interval(delta, mtbf)),
        ("daly", daly_interval(delta, mtbf)),
        ("exact", exact_interval(delta, mtbf)),
    ]
    found = spare_pool(config)
    running = 1.0 if found is None else float(found.running)
    return [(name, tau, exact_effective(tau, delta, restart, mtbf) * running) for name, tau in rows]


# ------------------------------------------------------------ Weibull failures


_Optima = dict[tuple[float, ...], tuple[float, Split]]


def _weibull_point(config: Config, optima: _Optima) -> tuple[float, float, Split, Split]:
    """(interval run, optimal interval, split at each) of one level under Weibull failures, floats.

    ``optima`` remembers each optimum by the level and law, so a sweep over the interval searches once.
    """
    from ckptcalc.model import weibull as renewal

    (level,) = config.levels()
    assert config.shape is not None
    mtbf, shape = float(config.mtbf_s), float(config.shape)
    stall, lag, restart = float(level.stall_s), float(level.lag_s), float(level.restart_s)

    def split(tau: float) -> Split:
        return renewal.weibull_split(
            interval_s=tau, stall_s=stall, lag_s=lag, restart_s=restart, mtbf_s=mtbf, shape=shape
        )

    key = (stall, lag, restart, mtbf, shape)
    if key not in optima:
        start = float(search.best_tau1(_base(config), mtbf))
        best = renewal.weibull_optimum(
            stall_s=stall, lag_s=lag, restart_s=restart, mtbf_s=mtbf, shape=shape, start_s=max(start, 1e-9)
        )
        for floor, _, _ in registry.top_bounds(config, storage.stored_bytes(config)):
            # Effective time rises to the free optimum and falls past it: a bound that binds holds it.
            best = max(best, float(floor))
        optima[key] = (best, split(best))
    best, at_best = optima[key]
    if config.interval_s is None:
        return best, best, at_best, at_best
    chosen = float(config.interval_s)
    return chosen, best, split(chosen), at_best


#: The most points a sweep under Weibull failures evaluates (each sums its own series).
WEIBULL_POINTS = 20_000


def _evaluate_weibull(config: Config) -> Result:
    """One level under Weibull failures: the renewal series at the interval run and at its optimum."""
    if config.has_memory:
        raise InputError(
            "more than one checkpoint level under Weibull failures has no exact model; `ckptcalc simulate` answers it",
            where="shape",
        )
    if config.has_recovery:
        raise InputError(
            "just-in-time recovery and failures with notice have no exact model under Weibull failures", where="shape"
        )
    fields = ("checkpoint_bytes", "bandwidth", "mtbf_s", "restart_s", "snapshot_bandwidth", "interval_s", "shape")
    present = {name: getattr(config, name) for name in fields if getattr(config, name) is not None}
    if scalar(*present.values()):
        chosen, best, split, at_best = _weibull_point(config, {})
    else:
        import numpy

        grids = numpy.broadcast_arrays(*(numpy.asarray(v, dtype=float) for v in present.values()))
        if grids[0].size > WEIBULL_POINTS:
            raise InputError(
                f"Weibull failures are evaluated point by point: at most {WEIBULL_POINTS:,} points,"
                f" got {grids[0].size:,}",
                where="points",
            )
        optima: _Optima = {}
        points = [
            _weibull_point(config.replace(**{k: float(g.flat[i]) for k, g in zip(present, grids, strict=True)}), optima)  # type: ignore[arg-type]
            for i in range(grids[0].size)
        ]
        shape = grids[0].shape

        def column(pick: Any) -> Any:
            return numpy.array([pick(p) for p in points], dtype=float).reshape(shape)

        chosen, best = column(lambda p: p[0]), column(lambda p: p[1])
        parts = Split._fields
        split = Split(**{f: column(lambda p, f=f: getattr(p[2], f)) for f in parts})
        at_best = Split(**{f: column(lambda p, f=f: getattr(p[3], f)) for f in parts})
    (_storage,) = config.levels()

    def schedule(tau: Num) -> Tiers:
        return _base(config).replace(tau1_s=tau)

    caveats: list[Caveat] = []
    bounds = registry.top_bounds(config, storage.stored_bytes(config))
    if bounds:
        _within(config, schedule(chosen), caveats)
    for floor, kind, value in bounds:
        bound = count(best <= floor * (1.0 + 1e-12))
        if bound:
            caveats.append(Caveat(kind, "storage", largest(value), bound))
    return _with_spares(config, _result(config, (schedule(chosen), split), (schedule(best), at_best), caveats, None))
