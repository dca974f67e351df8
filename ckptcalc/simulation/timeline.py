"""Monte Carlo ground truth: the training timeline itself, drawn with numpy.

Renewal assumption (as the analytic model): the failure clock starts afresh at
each failure, so the time X to the next failure counts from the moment the
restart begins, and a restart can itself be interrupted. One *cycle* is the
time between two failures: a restart, then the job runs its schedule (work,
checkpoint stalls) until the failure, and rolls back to the last checkpoint
of the tier that serves the failure. ``--cycles N`` is exactly N cycles of
one timeline, which starts with a restart from the top tier.

A :class:`Schedule` is what runs, for every strategy: one level (synchronous
or asynchronous) is one tier, memory + storage two, and so on.
:func:`run_schedule` simulates one, and :func:`run` maps a model
:class:`~ckptcalc.model.evaluation.Config` to one (:func:`schedule_for`) first.

A failure served by the top tier always leaves the job in the same state (a
restart towards a durable top-tier checkpoint, nothing in flight), so the
timeline splits there into independent epochs, which run side by side, one
cycle per step (:func:`stepper`), each step vectorised across the epochs; the
last few of a window take the same cycle on plain floats. With one tier every
failure is such a one and every epoch one cycle long: that case has a faster
path, cache-sized array arithmetic over the cycles, which gives the same
timeline from the same draws.

Everything is driven by an explicit ``numpy.random.Generator``; the same seed
gives the same result bit for bit, and the same draws whatever the schedule
(common random numbers): the times to failure, then (with two or more tiers)
one uniform per cycle for the tier that serves it.

>>> schedule = Schedule(interval_s=300.0, every=(5,), stalls=(10.0, 100.0), restarts=(60.0, 900.0),
...                     shares=(0.7, 0.3))
>>> schedule.storage_interval_s, schedule.memory_interval_s, schedule.storage_every
(1500.0, 300.0, 5)
>>> Schedule.single(interval_s=600.0, stall_s=60.0, restart_s=300.0).intervals()
(600.0,)
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms import registry, slowdown
from ckptcalc.mechanisms.elastic.engine import Groups as Groups
from ckptcalc.model import storage
from ckptcalc.model.evaluation import Config, Result, evaluate, first_order
from ckptcalc.model.statistics import BATCHES, T975_19
from ckptcalc.simulation import engine

#: The fixed default seed, printed with every result.
DEFAULT_SEED = 20240601


def check_seed(seed: int | None) -> int | None:
    """A simulation's seed, checked (``seed``): a non-negative integer, or None for :data:`DEFAULT_SEED`.

    >>> check_seed(7), check_seed(None)
    (7, None)
    """
    if seed is not None and seed < 0:
        raise InputError(f"must be a non-negative integer, got {seed}", where="seed")
    return seed


#: The most cycles one run accepts (about a minute for one level).
MAX_CYCLES = 1_000_000_000


#: One tier: cycles whose sums are added one after the other (each summed pairwise, as numpy does).
BLOCK = 1 << 20

#: One tier: cycles worked on at once: 4 float buffers of this size stay in a core's cache.
LEAF = 1 << 15

#: Cycles drawn at once, their epochs run side by side.
WINDOW = 1 << 20

Progress = Callable[[float], None]


@dataclass(frozen=True)
class Failures:
    """The distribution of time between failures: exponential, or Weibull with ``shape``; mean ``mtbf_s``."""

    mtbf_s: float
    shape: float | None = None  # None: exponential

    @property
    def scale(self) -> float:
        assert self.shape is not None
        return self.mtbf_s / math.gamma(1.0 + 1.0 / self.shape)

    def draw(self, rng: Any, size: int) -> Any:
        if self.shape is None:
            return rng.exponential(self.mtbf_s, size)
        return rng.weibull(self.shape, size) * self.scale

    def fill(self, rng: Any, out: Any) -> None:
        """Draw into ``out`` in place: the same numbers as :meth:`draw`, without allocating."""
        import numpy

        if self.shape is None:
            rng.standard_exponential(out=out)  # exponential(M) is M times this, bit for bit
            numpy.multiply(out, self.mtbf_s, out=out)
        else:
            out[...] = rng.weibull(self.shape, out.size)
            numpy.multiply(out, self.scale, out=out)

    def survival(self, t: Any) -> Any:
        import numpy

        if self.shape is None:
            return numpy.exp(-t / self.mtbf_s)
        return numpy.exp(-((t / self.scale) ** self.shape))


@dataclass(frozen=True)
class Schedule:
    """The checkpoint schedule a simulation runs, in seconds: L ≥ 1 nested tiers, fastest first.

    A tier-1 checkpoint after every ``interval_s`` (τ₁) of useful work; tier i
    every ``every[i − 2]``-th checkpoint of tier i − 1, so a tier-i boundary
    stalls the job ``stalls[0] + … + stalls[i − 1]``; the top tier's copy is
    durable once the job's position is ``lag_s`` past the end of its stall (0:
    synchronous). A failure is of class k with probability ``shares[k − 1]``:
    restart ``restarts[k − 1]``, back to the last tier-k boundary (the top
    tier: the last durable one). The top interval must be at least the lag.

    One level is one tier (``every`` empty, ``shares`` (1,)): :meth:`single`.
    Memory + storage is two: τ₁ the memory interval, ``every`` (m,), a failure
    served by memory with probability ``shares[0]``.

    Invalid values raise :class:`~ckptcalc.errors.InputError` naming the field.
    """

    interval_s: float
    every: tuple[int, ...]
    stalls: tuple[float, ...]
    restarts: tuple[float, ...]
    shares: tuple[float, ...]
    lag_s: float = 0.0
    nowhere_share: float = 0.0  # a class that resumes where it struck, as notice does (docs/model.md §13)
    nowhere_restart_s: float = 0.0
    slowdown: float = 0.0  # training runs at 1 − this while the top tier's persist runs (docs/model.md §17.1)
    # Failure classes of their own restart (docs/model.md §20): (share, restart, the tier it goes back to).
    extra: tuple[tuple[float, float, int], ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.interval_s) and self.interval_s > 0):
            raise InputError(f"must be a positive number of seconds, got {self.interval_s:g}", where="interval_s")
        count = len(self.stalls)
        if count < 1 or len(self.restarts) != count or len(self.shares) != count or len(self.every) != count - 1:
            raise InputError("a schedule needs L ≥ 1 tiers and L − 1 multiples", where="levels")
        for value in (*self.stalls, *self.restarts, self.lag_s):
            if not (math.isfinite(value) and value >= 0):
                raise InputError(f"must be a non-negative number of seconds, got {value:g}", where="levels")
        if (
            any(not 0.0 <= q <= 1.0 for q in (*self.class_shares, self.nowhere_share))
            or abs(sum(self.class_shares) + self.nowhere_share - 1.0) > 1e-9
            or any(not 0 <= anchor < count for _, _, anchor in self.extra)
        ):
            raise InputError("the shares of failures each tier serves must sum to 1", where="levels")
        for m in self.every:
            if isinstance(m, bool) or not isinstance(m, int) or m < 1:
                raise InputError(f"must be a positive whole number, got {m!r}", where="storage_every")
        if self.storage_interval_s < self.lag_s * (1.0 - self.slowdown):
            raise InputError(
                f"storage interval {self.storage_interval_s:g} s is shorter than the persist lag {self.lag_s:g} s:"
                " a checkpoint cannot start before the last one is durable",
                where="interval_s",
            )

    @classmethod
    def single(cls, *, interval_s: float, stall_s: float, restart_s: float, lag_s: float = 0.0) -> Schedule:
        """One level: a checkpoint every ``interval_s``, each stalling ``stall_s``; restart ``restart_s``."""
        return cls(interval_s=interval_s, every=(), stalls=(stall_s,), restarts=(restart_s,), shares=(1.0,),
                   lag_s=lag_s)  # fmt: skip

    @property
    def tiers(self) -> int:
        return len(self.stalls)

    @property
    def class_shares(self) -> tuple[float, ...]:
        """Every class's share: each tier's own, then the classes of their own restart (docs/model.md §20)."""
        return (*self.shares, *(q for q, _, _ in self.extra))

    @property
    def class_restarts(self) -> tuple[float, ...]:
        return (*self.restarts, *(r for _, r, _ in self.extra))

    @property
    def class_anchors(self) -> tuple[int, ...]:
        """The tier each class goes back to."""
        return (*range(self.tiers), *(anchor for _, _, anchor in self.extra))

    @property
    def storage_every(self) -> int | None:
        """Tier-1 checkpoints per top-tier checkpoint (None with one tier)."""
        return math.prod(self.every) if self.every else None

    @property
    def storage_interval_s(self) -> float:
        """Useful work between two top-tier checkpoints: N·τ₁, or τ for one tier."""
        return math.prod(self.every) * self.interval_s

    @property
    def memory_interval_s(self) -> float | None:
        """τ₁ with two or more tiers."""
        return self.interval_s if self.every else None

    def intervals(self) -> tuple[float, ...]:
        """Each tier's interval, fastest first."""
        found = [self.interval_s]
        for m in self.every:
            found.append(found[-1] * m)
        return tuple(found)

    def with_intervals(self, interval_s: float, every: tuple[int, ...] | None = None) -> Schedule:
        """The same tiers at another τ₁ (and multiples)."""
        return Schedule(interval_s=interval_s, every=self.every if every is None else every, stalls=self.stalls,
                        restarts=self.restarts, shares=self.shares, lag_s=self.lag_s,
                        nowhere_share=self.nowhere_share, nowhere_restart_s=self.nowhere_restart_s,
                        slowdown=self.slowdown, extra=self.extra)  # fmt: skip


@dataclass(frozen=True)
class Split:
    useful: float
    write: float
    rework: float
    restart: float


@dataclass(frozen=True)
class Simulation:
    effective: float
    ci95: tuple[float, float]
    split: Split
    failures: int
    failures_in_restart: int
    cycles: int
    seed: int
    interval_s: float  # storage interval: m·τ₁ with two levels
    memory_interval_s: float | None
    storage_every: int | None  # memory checkpoints per storage checkpoint
    schedule: Schedule
    batch_effective: tuple[float, ...]  # effective time of each batch behind ci95
    no_spare: int = 0  # failures that found no spare node (with a spare pool)
    waited_s: float = 0.0  # time spent waiting for a node back from repair (in the restart share)

    @property
    def p_no_spare(self) -> float:
        """The share of failures that found no spare node."""
        return self.no_spare / self.failures

    @property
    def wait_per_failure_s(self) -> float:
        return self.waited_s / self.failures

    elastic: float = 0.0  # share of time: kept work lost to groups down, quorum pauses and overhead
    late: Any = None  # what a class noticed late or slow periods found (its stepper's, or the engine's Found)


def analytic(config: Config, failures: Failures) -> tuple[float, float | None]:
    """First-order and exact effective time at the configuration's intervals.

    The exact value is the exact model for exponential failures (every
    strategy), or the renewal series for Weibull ones on a single level (an
    asynchronous lag joins the restart); None where no exact model exists
    (Weibull with two levels: the simulation is the answer).
    """
    plain = config.replace(shape=None)
    if registry.takes_over(config):  # a mechanism's own evaluation (elastic groups): its first order beside it
        found = evaluate(plain)
        return float(found.first_order.effective), float(found.effective)
    first = float(first_order(plain).effective)
    if failures.shape is None:
        return first, float(evaluate(plain).effective)
    if config.has_memory:
        return first, None
    return first, float(evaluate(plain.replace(shape=failures.shape, mtbf_s=failures.mtbf_s)).effective)


def check(cycles: float, shape: float | None) -> int:
    if not math.isfinite(cycles) or cycles <= 0 or not float(cycles).is_integer():
        raise InputError(f"must be a positive whole number, got {cycles:g}", where="cycles")
    if cycles < BATCHES * 10:
        raise InputError(f"at least {BATCHES * 10} cycles are needed for a confidence interval", where="cycles")
    if cycles > MAX_CYCLES:
        raise InputError(f"at most {MAX_CYCLES:.0e} cycles", where="cycles")
    if shape is not None and not (math.isfinite(shape) and shape > 0):
        raise InputError(f"must be positive, got {shape:g}", where="shape")
    return int(cycles)


def schedule_for(config: Config) -> Schedule:
    """The schedule ``config`` describes, at its intervals (optimal where unset)."""
    return schedule_of(evaluate(config))


def _recovery_schedule(result: Result) -> Schedule:
    """With just-in-time recovery or notice (docs/model.md §13): the model's own schedule, the one-step
    tier first; the one-step tier alone when no periodic checkpoint is needed."""
    from ckptcalc.model.evaluation import one_step, unneeded
    from ckptcalc.model.evaluation import schedule_of as model_schedule

    c = result.config
    if unneeded(c):
        t = one_step(c)  # the one-step tier alone, with the class that goes back nowhere (§13.3)
        return Schedule(interval_s=float(c.step), every=(), stalls=(0.0,), restarts=(float(t.restarts[0]),),
                        shares=(float(t.shares[0]),), nowhere_share=float(t.nowhere_share),
                        nowhere_restart_s=float(t.nowhere_restart_s), extra=_extra(t))  # fmt: skip
    t = model_schedule(c, result)
    return Schedule(
        interval_s=float(t.tau1_s),
        every=tuple(int(m) for m in t.every),
        stalls=tuple(float(v) for v in t.stalls),
        restarts=tuple(float(v) for v in t.restarts),
        shares=tuple(float(v) for v in t.shares),
        lag_s=float(t.lag_s),
        nowhere_share=float(t.nowhere_share),
        nowhere_restart_s=float(t.nowhere_restart_s),
        extra=_extra(t),
    )


def _extra(t: Any) -> tuple[tuple[float, float, int], ...]:
    """The model's classes of their own restart as the simulation runs them (docs/model.md §20)."""
    return tuple((float(q), float(r), int(anchor)) for q, r, anchor in t.extra)


def schedule_of(result: Result, every: tuple[int, ...] | None = None) -> Schedule:
    """The schedule an evaluated configuration runs: its tiers, each multiple the ratio of two
    neighbouring intervals (a whole number, at least 1), or ``every`` instead."""
    if result.config.has_recovery and every is None:
        return _recovery_schedule(result)
    intervals = [float(plan.interval_s) for plan in result.levels]
    if every is None:
        every = tuple(max(1, round(b / a)) for a, b in itertools.pairwise(intervals))
    levels = [plan.level for plan in result.levels]
    # The stalls and the persist themselves: the simulation runs the persist's slowdown (docs/model.md §17.1).
    persist = float(levels[-1].persist_s)
    return Schedule(
        interval_s=intervals[0],
        every=every,
        stalls=tuple(float(level.snapshot_s) for level in levels),
        restarts=tuple(float(level.restart_s) for level in levels),
        shares=tuple(float(level.share) for level in levels),
        lag_s=persist,
        slowdown=float(levels[-1].slowdown_s) / persist if persist > 0 else 0.0,
    )


# ------------------------------------------------------------- what the simulation runs

#: Each mechanism a scenario may combine, as the simulation tells them apart: its name, the input that
#: turns it on (the field an error points at, the public name its message shows) and whether a
#: configuration (or the failures) has it.
_CORE: tuple[tuple[str, str, str], ...] = (
    ("memory", "replica_survival", "replica_survival"),
    ("tiers", "tiers", "tiers"),
    ("async", "snapshot_bandwidth", "snapshot_bw"),
    *((name, field, field) for name, field in registry.class_inputs()),  # failure classes: jit, notice
    ("slowdown", slowdown.KEY, slowdown.KEY),
    *((m.name, m.engine_switch[0], m.engine_switch[1]) for m in registry.REGISTRY if m.engine_switch),
    ("weibull", "shape", "shape"),
    ("events", "events", "events"),
    ("search", "search", "search"),
)


def _with_mechanisms(core: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str, str], ...]:
    """The core's mechanisms with each registered one the simulations tell apart, after the one it names (those
    that name the same one in the registry's order)."""
    found = list(core)
    after: dict[str, int] = {}  # how many are placed after each named one so far
    for m in registry.simulated():
        at = next(i for i, (name, _, _) in enumerate(found) if name == m.simulated_after) + 1
        at += after.get(m.simulated_after, 0)
        after[m.simulated_after] = after.get(m.simulated_after, 0) + 1
        found.insert(at, (m.simulated_name, *m.simulated_input))
    return tuple(found)


MECHANISMS = _with_mechanisms(_CORE)

#: The pairs only the one event engine runs (docs/model.md §18.5, :mod:`ckptcalc.simulation.engine`): a
#: scenario that holds one is simulated there; every other stays on its own stepper.
ENGINE_PAIRS: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        *(("slowdown", other) for other in ("memory", "tiers", "jit", "notice")),
        *((m.simulated_name or m.name, other) for m in registry.REGISTRY for other in m.one_engine_with),
    )
)

#: The mechanisms with no stepper of their own (stragglers): the one event engine runs them, alone and with
#: every mechanism it runs (docs/model.md §18.5, §21.6).
ENGINE_ONLY: frozenset[str] = frozenset(
    m.name for m in registry.REGISTRY if m.engine_switch and not registry.steps_itself(m)
)

#: The pairs no simulation runs together (each unordered): those the steppers refuse that the one event
#: engine does not run either. Every other pair of :data:`MECHANISMS` is run as stated (docs/model.md
#: §7.1): nothing a scenario holds is left out of what is simulated.
NOT_TOGETHER: frozenset[frozenset[str]] = (
    frozenset(
        frozenset(pair)
        for pair in (
            *((m.name, other) for m in registry.REGISTRY for other in m.engine_refuses),
            *(("slowdown", other) for other in ("memory", "tiers", "jit", "notice")),
            *(("events", other) for other in ("memory", "tiers", "jit", "notice", "slowdown")),
            *(("search", other) for other in ("tiers", "jit")),
            *((m.simulated_name, other) for m in registry.simulated() for other in m.not_simulated_with),
        )
    )
    - ENGINE_PAIRS
)


def mechanisms(config: Config, failures: Failures, *, events: bool = False, search: bool = False) -> list[str]:
    """The names of :data:`MECHANISMS` that ``config`` (with ``failures``) and the run's outputs hold."""
    held = {
        "memory": config.has_memory,
        "tiers": config.is_nested,
        "async": config.is_async,
        **{name: name in {c.name for c in config.classes} for name, _ in registry.class_inputs()},
        "slowdown": bool(getattr(config, slowdown.KEY)),
        **{m.simulated_name: m.simulated_held(config) for m in registry.simulated()},
        **{m.name: m.present(config) for m in registry.REGISTRY if m.engine_switch},
        "weibull": failures.shape is not None,
        "events": events,
        "search": search,
    }
    return [name for name, _, _ in MECHANISMS if held[name]]


def refuse(config: Config, failures: Failures, *, events: bool = False, search: bool = False) -> None:
    """Raise :class:`~ckptcalc.errors.InputError` naming both inputs of the first pair of mechanisms in
    ``config`` that no simulation runs together (:data:`NOT_TOGETHER`); return when every one is run."""
    held = mechanisms(config, failures, events=events, search=search)
    inputs = {name: (field, public) for name, field, public in MECHANISMS}
    for first, second in itertools.combinations(held, 2):
        if frozenset((first, second)) in NOT_TOGETHER:
            (field, one), (_, other) = inputs[first], inputs[second]
            raise InputError(f"simulate does not run {{{one}}} together with {{{other}}}: drop one of them",
                             where=field)  # fmt: skip


def run(
    config: Config,
    failures: Failures,
    *,
    cycles: int,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
) -> Simulation:
    """Simulate ``cycles`` failure cycles of ``config`` at its intervals (optimal where unset), with its
    spare pool when it has one; with elastic replica groups, ``cycles`` whole-job failure cycles of the
    groups process (:func:`run_elastic`). A pair of mechanisms no simulation runs together is refused
    (:func:`refuse`), never left out."""
    refuse(config, failures)
    held = mechanisms(config, failures)
    if ENGINE_ONLY.intersection(held) or any(
        frozenset(pair) in ENGINE_PAIRS for pair in itertools.combinations(held, 2)
    ):
        return run_engine(config, failures, cycles=cycles, seed=seed, progress=progress)
    process = groups_of(config)
    if process is not None:
        return run_elastic(schedule_for(config), process, failures, cycles=cycles, seed=seed, progress=progress)
    late = next((m for m in registry.REGISTRY if m.engine_switch and m.present(config)), None)
    if late is not None:
        return run_late(config, failures, late, cycles=cycles, seed=seed)
    pool = registry.simulated_pool(config)
    return run_schedule(schedule_for(config), failures, cycles=cycles, seed=seed, progress=progress, pool=pool)


def run_engine(
    config: Config, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED, progress: Progress | None = None
) -> Simulation:
    """Simulate ``cycles`` failure cycles (whole-job ones with groups) of ``config`` at its schedule in the one
    event engine (docs/model.md §18.5), every mechanism it holds at once. The split counts the waits for a
    node in the restart share, the silent detections' work in rework and their restarts in restart, and the
    time lost to running slow in restart, as the model's does; ``elastic`` is the kept work the groups lost;
    ``late`` what the engine found (its counts) where a class noticed late or slow periods ran."""
    cycles = check(cycles, failures.shape)
    schedule = schedule_for(config)
    plan = engine.plan_of(config, schedule, mtbf_s=failures.mtbf_s, shape=failures.shape)
    found = engine.run(plan, cycles=cycles, seed=seed, progress=progress)
    s = found.split
    restart = s.restart + s.waiting + s.silent_restart + s.slowed
    split = Split(s.effective, s.write, s.rework + s.silent_rework, restart)
    counted = plan.late is not None or plan.slow is not None
    return _stepped(found, split, schedule, seed, no_spare=found.no_spare, waited_s=found.waited_s,
                    elastic=s.elastic, late=found if counted else None)  # fmt: skip


def _stepped(found: Any, split: Split, schedule: Schedule, seed: int, **more: Any) -> Simulation:
    """What an event-by-event run ``found`` (its effective time, interval, cycles and batches) comes to."""
    return Simulation(
        effective=found.effective,
        ci95=found.ci95,
        split=split,
        failures=found.cycles,
        failures_in_restart=found.failures_in_restart,
        cycles=found.cycles,
        seed=seed,
        interval_s=schedule.storage_interval_s,
        memory_interval_s=schedule.memory_interval_s,
        storage_every=schedule.storage_every,
        schedule=schedule,
        batch_effective=found.batch_effective,
        **more,
    )


def run_late(config: Config, failures: Failures, late: Any, *, cycles: int, seed: int = DEFAULT_SEED) -> Simulation:
    """Simulate ``cycles`` fail-stop cycles of the configuration's schedule (its tiers, asynchronous
    storage, just-in-time recovery and notice; its exact optimum where unset) with the failure class
    ``late`` (a registered mechanism noticed late: silent events and their retention, docs/model.md §7.2,
    §16.4), event by event in its home's stepper (:meth:`ckptcalc.mechanisms.base.Mechanism.engine`)."""
    refuse(config, failures)
    schedule = schedule_for(config)
    if schedule.slowdown > 0:
        raise InputError(
            f"simulate does not run {{{slowdown.KEY}}} together with {{{late.engine_switch[1]}}}: drop one of them",
            where=slowdown.KEY,
        )
    found = late.engine(config, schedule, failures.mtbf_s, storage.kept(config), check(cycles, None), seed)
    return _stepped(found, Split(found.effective, found.write, found.rework, found.restart), schedule, seed,
                    late=found)  # fmt: skip


def run_schedule(
    schedule: Schedule,
    failures: Failures,
    *,
    cycles: int,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
    pool: Any = None,
) -> Simulation:
    """Simulate exactly ``cycles`` failure cycles of one timeline running ``schedule``; with ``pool``,
    each failure also takes a node to repair, and the job waits when no spare is free.

    >>> schedule = Schedule.single(interval_s=600.0, stall_s=60.0, restart_s=300.0)
    >>> run_schedule(schedule, Failures(3600.0), cycles=200, seed=1).cycles
    200
    """
    cycles = check(cycles, failures.shape)  # enough cycles for the batches behind the CI, a valid shape
    if schedule.slowdown > 0:
        from ckptcalc.simulation.interference import slowed_sums

        if schedule.tiers > 1 or schedule.nowhere_share > 0 or pool is not None:
            raise InputError(
                "simulate runs the persist slowdown on one asynchronous level only"
                " (no other tier, notice or spare pool)",
                where=slowdown.KEY,
            )
        totals, batch_effective, in_restart = slowed_sums(
            interval_s=schedule.interval_s, stall_s=schedule.stalls[0], persist_s=schedule.lag_s,
            slowdown=schedule.slowdown, restart_s=schedule.restarts[0], draw=failures.draw,
            batches=_batch_sizes(cycles), seed=seed, progress=progress,
        )  # fmt: skip
        return _summary(totals, batch_effective, cycles, in_restart, seed, schedule)
    if schedule.tiers == 1 and schedule.nowhere_share == 0 and not schedule.extra:
        found = _one_tier(schedule, failures, cycles, seed, progress, pool)
    else:
        found = _epochs_side_by_side(schedule, failures, cycles, seed, progress, pool)
    if pool is None:
        return found
    return dataclasses.replace(found, no_spare=pool.none_free, waited_s=pool.waited_s)


def _batch_sizes(cycles: int) -> list[int]:
    per_batch = cycles // BATCHES
    return [per_batch + (1 if i < cycles % BATCHES else 0) for i in range(BATCHES)]


def _summary(
    sums: Any, batch_effective: Any, cycles: int, in_restart: int, seed: int, schedule: Schedule
) -> Simulation:
    import numpy

    time = float(sums[0])
    useful, write, restart = float(sums[1]), float(sums[2]), float(sums[3])
    effective = useful / time
    spread = float(numpy.std(batch_effective, ddof=1)) / math.sqrt(len(batch_effective))
    half = T975_19 * spread
    split = Split(useful / time, write / time, (time - useful - write - restart) / time, restart / time)
    return Simulation(
        effective=effective,
        ci95=(effective - half, effective + half),
        split=split,
        failures=cycles,
        failures_in_restart=in_restart,
        cycles=cycles,
        seed=seed,
        interval_s=schedule.storage_interval_s,
        memory_interval_s=schedule.memory_interval_s,
        storage_every=schedule.storage_every,
        schedule=schedule,
        batch_effective=tuple(float(v) for v in batch_effective),
    )


def _one_tier(
    schedule: Schedule,
    failures: Failures,
    cycles: int,
    seed: int,
    progress: Progress | None,
    pool: Any = None,
) -> Simulation:
    """One tier: every cycle starts from a durable checkpoint, so cycles are independent, and the
    whole run is array arithmetic on cache-sized pieces; what :func:`stepper` does for one tier."""
    import numpy

    tau, stall, lag, restart = schedule.interval_s, schedule.stalls[0], schedule.lag_s, schedule.restarts[0]
    segment = tau + stall
    rng = numpy.random.default_rng(seed)
    # Four reusable leaf buffers, small enough to stay in cache while a leaf is worked on.
    x, work, count, tail = (numpy.empty(LEAF) for _ in range(4))
    flags = numpy.empty(LEAF, dtype=bool)
    in_restart = 0

    def leaf(n: int) -> tuple[float, float, float, float]:
        """One cache-sized piece of cycles: (time, kept work, stalls, restarts)."""
        nonlocal in_restart
        xv, wv, cv, tv, fv = x[:n], work[:n], count[:n], tail[:n], flags[:n]
        failures.fill(rng, xv)
        elapsed = float(xv.sum())
        waited = 0.0 if pool is None else math.fsum(pool.waits(xv.tolist()))
        numpy.subtract(xv, restart, out=wv)
        numpy.less(wv, 0.0, out=fv)  # the failure struck during the restart
        in_restart += int(numpy.count_nonzero(fv))
        numpy.clip(xv, -math.inf, restart, out=xv)  # clip: no NaN checks, faster than minimum
        restarting = float(xv.sum())
        numpy.clip(wv, 0.0, math.inf, out=wv)
        numpy.divide(wv, segment, out=cv)
        numpy.floor(cv, out=cv)  # completed checkpoints
        numpy.multiply(cv, segment, out=tv)
        numpy.subtract(wv, tv, out=tv)  # time since the last completed stall
        numpy.multiply(cv, tau, out=wv)  # kept work
        if lag > 0:
            # The last checkpoint is durable only ``lag`` after its stall ends.
            numpy.less(tv, lag, out=fv)
            fv &= cv > 0
            numpy.subtract(wv, tau, out=wv, where=fv)
        kept = float(wv.sum())
        numpy.multiply(cv, stall, out=cv)
        numpy.subtract(tv, tau, out=tv)
        numpy.clip(tv, 0.0, math.inf, out=tv)  # the stall cut short by the failure
        numpy.add(cv, tv, out=cv)
        return elapsed + waited, kept, float(cv.sum()), restarting + waited

    def block(n: int) -> tuple[float, float, float, float]:
        # numpy sums an array pairwise, halving it (to a multiple of 8) down to 128 elements.
        # Summing cache-sized leaves and adding them up along the same tree gives the very
        # sums of one pass over the block, so results do not depend on LEAF.
        if n <= LEAF:
            return leaf(n)
        half = n // 2
        half -= half % 8
        a, b = block(half), block(n - half)
        return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]

    totals = numpy.zeros(4)  # time, useful, write, restart
    batch_effective = numpy.empty(BATCHES)
    done = 0
    for b, size in enumerate(_batch_sizes(cycles)):
        batch = numpy.zeros(4)
        left = size
        while left:
            n = min(left, BLOCK)
            batch += block(n)
            left -= n
            done += n
            if progress is not None:
                progress(done / cycles)
        totals += batch
        batch_effective[b] = batch[1] / batch[0]
    return _summary(totals, batch_effective, cycles, in_restart, seed, schedule)


def _epochs_side_by_side(
    schedule: Schedule,
    failures: Failures,
    cycles: int,
    seed: int,
    progress: Progress | None,
    pool: Any = None,
) -> Simulation:
    """Any number of tiers: one timeline of exactly ``cycles`` cycles, a window at a time, split into
    epochs after each top-class failure, the epochs run side by side, longest first.

    The state carried from one cycle to the next: the phase c (tier-1 checkpoints from the start of
    the current top-tier period to the point the restart recovers to), whether that period's top-tier
    copy is still in flight, and the length of the restart.
    """
    import numpy

    top = schedule.tiers - 1
    # The class of a failure without notice: the tiers' shares of those failures.
    # A class of its own restart is drawn beside the tiers' (docs/model.md §20): its tier from ``anchors``.
    bounds = numpy.cumsum(schedule.class_shares)[:-1] / (1.0 - schedule.nowhere_share)
    step = stepper(schedule)
    anchors = numpy.asarray(schedule.class_anchors, dtype=numpy.intp) if schedule.extra else None
    after = numpy.asarray(schedule.class_restarts, dtype=float) if schedule.extra else None

    def window(x: Any, u: Any, state: Any, more: Any = None) -> tuple[Any, Any, Any, Any]:
        tier = numpy.zeros(x.size, dtype=numpy.intp) if u is None else numpy.searchsorted(bounds, u, side="right")
        if anchors is None:
            return _window(step, x, tier, top, state, schedule.restarts[top], more)
        return _window(step, x, tier, top, state, schedule.restarts[top], more, anchors, after)

    start = (0.0, False, schedule.restarts[top])  # the job starts as after a top-class failure
    drawn = schedule.tiers > 1 or bool(schedule.extra)
    if schedule.nowhere_share > 0:
        sums, in_restart = _notice_timeline(schedule, failures, cycles, seed, progress, window, start, pool)
    else:
        sums, in_restart = _timeline(failures, cycles, seed, progress, window, start, drawn, pool)
    sums[1] *= schedule.interval_s
    return _summary(sums.sum(axis=1), sums[1] / sums[0], cycles, in_restart, seed, schedule)


def _timeline(
    failures: Failures,
    cycles: int,
    seed: int,
    progress: Progress | None,
    window: Callable[[Any, Any, Any], tuple[Any, Any, Any, Any]],
    state: Any,
    draw_tiers: bool,
    pool: Any = None,
) -> tuple[Any, int]:
    """Exactly ``cycles`` cycles of one timeline, drawn a window at a time: for each, the times to
    failure and (``draw_tiers``) one uniform draw per cycle (which tier serves it), run by ``window``
    from the state the last one left. Returns the per-batch sums of (time, kept in tier-1 intervals,
    stalls, restarts) and how many failures struck a restart."""
    import numpy

    rng = numpy.random.default_rng(seed)
    edges = numpy.cumsum([0, *_batch_sizes(cycles)])
    sums = numpy.zeros((4, BATCHES))
    in_restart = 0
    start = 0
    while start < cycles:
        n = min(WINDOW, cycles - start)
        x = failures.draw(rng, n)
        kept, stalls, restarts, state = window(x, rng.random(n) if draw_tiers else None, state)
        in_restart += int(numpy.count_nonzero(x < restarts))
        numpy.minimum(restarts, x, out=restarts)  # a restart cut short by a failure
        if pool is not None:
            waits = numpy.asarray(pool.waits(x.tolist()))
            x = x + waits  # the job's time includes the waits for a node, counted as restart
            restarts += waits
        inside = edges[(edges > start) & (edges < start + n)] - start
        offsets = numpy.concatenate(([0], inside))
        first = int(numpy.searchsorted(edges, start, side="right")) - 1
        for row, values in enumerate((x, kept, stalls, restarts)):
            sums[row, first : first + offsets.size] += numpy.add.reduceat(values, offsets)
        start += n
        if progress is not None:
            progress(start / cycles)
    return sums, in_restart


def _notice_timeline(
    schedule: Schedule,
    failures: Failures,
    cycles: int,
    seed: int,
    progress: Progress | None,
    window: Callable[..., tuple[Any, Any, Any, Any]],
    state: Any,
    pool: Any = None,
) -> tuple[Any, int]:
    """:func:`_timeline` when some failures come with notice (docs/model.md §13): such a failure costs
    its restart (the checkpoint written first, then the restart; a failure during it draws its class
    afresh) and the job resumes where it struck. So a run of failures with notice and the failure
    that ends it are one cycle of the schedule: its progress the first one's, past the restart it
    started with, plus each later one's past the notice restart; its time and restarts their sums.
    A run that a window's end cuts goes on in the next window; the last is drawn until it ends, so
    the timeline may hold a few more than ``cycles`` failures. With ``pool``, every failure, with notice
    or not, takes a node to repair, and its wait for one counts in its cycle's time and restarts."""
    import numpy

    share, restart = schedule.nowhere_share, schedule.nowhere_restart_s
    rng = numpy.random.default_rng(seed)
    edges = numpy.cumsum([0, *_batch_sizes(cycles)])
    sums = numpy.zeros((4, BATCHES))
    in_restart = 0
    carry_x, carry_u = numpy.empty(0), numpy.empty(0)
    start = 0  # index, in the whole timeline, of the first failure of this window (carry included)
    drawn = 0
    while drawn < cycles or carry_x.size:
        n = min(WINDOW, cycles - drawn) if drawn < cycles else 64
        x = numpy.concatenate((carry_x, failures.draw(rng, n)))
        u = numpy.concatenate((carry_u, rng.random(n)))
        drawn += n
        noticed = u < share
        ends = numpy.flatnonzero(~noticed)
        if ends.size == 0:
            carry_x, carry_u = x, u
            continue
        cut = int(ends[-1]) + 1
        carry_x, carry_u = x[cut:], u[cut:]
        x, u, noticed = x[:cut], u[:cut], noticed[:cut]
        firsts = numpy.concatenate(([0], ends[:-1] + 1))  # each cycle's first failure
        later = numpy.ones(cut, dtype=bool)
        later[firsts] = False  # failures after the first of their cycle: each after a notice restart
        group = numpy.cumsum(numpy.concatenate(([0], (~noticed[:-1]).astype(numpy.intp))))
        size = firsts.size
        more = numpy.bincount(group, weights=numpy.where(later, numpy.maximum(x - restart, 0.0), 0.0), minlength=size)
        spent = numpy.bincount(group, weights=numpy.where(later, numpy.minimum(x, restart), 0.0), minlength=size)
        in_restart += int(numpy.count_nonzero(later & (x < restart)))
        elapsed = x
        if pool is not None:
            waits = numpy.asarray(pool.waits(x.tolist()))
            spent = spent + numpy.bincount(group, weights=waits, minlength=size)
            elapsed = x + waits
        time = numpy.bincount(group, weights=elapsed, minlength=size)
        first_x = x[firsts]
        tiers_u = (u[ends] - share) / (1.0 - share)  # the class of the failure that ends each cycle
        classed = schedule.tiers > 1 or bool(schedule.extra)
        kept, stalls, restarts, state = window(first_x, tiers_u if classed else None, state, more)
        in_restart += int(numpy.count_nonzero(first_x < restarts))
        restarts = numpy.minimum(restarts, first_x) + spent
        batch = numpy.minimum(numpy.searchsorted(edges, start + firsts, side="right") - 1, BATCHES - 1)
        for row, values in enumerate((time, kept, stalls, restarts)):
            sums[row] += numpy.bincount(batch, weights=values, minlength=BATCHES)
        start += cut
        if progress is not None:
            progress(min(drawn, cycles) / cycles)
    return sums, in_restart


def _window(
    step: Callable[..., None],
    x: Any,
    tier: Any,
    top: int,
    state: tuple[float, bool, float],
    top_restart: float,
    more: Any = None,
    anchors: Any = None,
    after: Any = None,
) -> tuple[Any, Any, Any, tuple[float, bool, float]]:
    """Run the cycles of one window: kept work (in tier-1 intervals), stalls and restart length per cycle.

    A failure served by the top tier always leaves the job in the same state, so the window splits
    after each such failure into epochs that depend on nothing before them; only the first continues
    ``state`` from the last window. The epochs run side by side, longest first, one cycle per step.
    """
    import numpy

    n = x.size
    if anchors is None:
        starts, lengths, order, phase, pending, restart = _epochs(tier == top, top_restart)
    else:  # classes of their own restart (docs/model.md §20): an epoch restarts as its class says
        starts, lengths, order, phase, pending, restart = _epochs(anchors[tier] == top, top_restart, after[tier])
    lanes = starts.size
    first = int(numpy.flatnonzero(order == 0)[0])
    phase[first], pending[first], restart[first] = state
    kept, stalls, restarts = numpy.empty(n), numpy.empty(n), numpy.empty(n)
    # Epochs still running at each step (lengths are sorted longest first).
    running = numpy.searchsorted(-lengths, -numpy.arange(int(lengths[0])), side="left").tolist()
    for at, active in enumerate(running):
        if active <= FEW_LANES:
            for k in range(active):  # the last few epochs, cycle by cycle on plain floats
                begin, end = int(starts[k]) + at, int(starts[k] + lengths[k])
                phase[k], pending[k], restart[k] = _lane(step, x, tier, begin, end, (phase[k], pending[k], restart[k]),
                                                         kept, stalls, restarts, more)  # fmt: skip
            break
        index = starts[:active] + at
        step(x[index], tier[index], phase[:active], pending[:active], restart[:active], index, kept, stalls, restarts,
             None if more is None else more[index])  # fmt: skip
    last = int(numpy.flatnonzero(order == lanes - 1)[0])  # the epoch still open at the window's end
    return kept, stalls, restarts, (float(phase[last]), bool(pending[last]), float(restart[last]))


def _lane(
    step: Any,
    x: Any,
    tier: Any,
    begin: int,
    end: int,
    state: tuple[Any, Any, Any],
    kept: Any,
    stalls: Any,
    restarts: Any,
    more: Any = None,
) -> tuple[float, bool, float]:
    """Cycles ``begin:end`` of one epoch through ``step``'s cycle on plain floats."""
    lane = step.lane
    c, pending, r = float(state[0]), bool(state[1]), float(state[2])
    out_kept, out_stalls, out_restarts = [], [], []
    extra = [0.0] * (end - begin) if more is None else more[begin:end].tolist()
    for failure, k, ahead in zip(x[begin:end].tolist(), tier[begin:end].tolist(), extra, strict=True):
        out_restarts.append(r)
        kept_here, stall, c, pending, r = lane(failure, k, c, pending, r, ahead)
        out_kept.append(kept_here)
        out_stalls.append(stall)
    kept[begin:end], stalls[begin:end], restarts[begin:end] = out_kept, out_stalls, out_restarts
    return c, pending, r


def _epochs(ends: Any, restart_s: float, restarts: Any = None) -> tuple[Any, Any, Any, Any, Any, Any]:
    """A window split into epochs after each cycle that ``ends`` one (a failure served from the top
    level): their starts and lengths, longest first, the order that sorted them, and a fresh state
    for each (phase 0, nothing in flight, a restart from the top level: with ``restarts``, each cycle's
    class's, that of the failure before the epoch)."""
    import numpy

    starts = numpy.concatenate(([0], numpy.flatnonzero(ends[:-1]) + 1))
    lengths = numpy.diff(numpy.append(starts, ends.size))
    order = numpy.argsort(-lengths, kind="stable")
    lanes = starts.size
    fresh = numpy.full(lanes, restart_s)
    if restarts is not None:
        fresh[1:] = restarts[starts[1:] - 1]
    state = numpy.zeros(lanes), numpy.zeros(lanes, dtype=bool), fresh[order]
    return starts[order], lengths[order], order, *state


class _Ops:
    """The few operations a cycle needs beyond arithmetic, on numpy arrays or on plain floats: the one
    body of :func:`stepper` runs on both, so a handful of epochs can finish without numpy's per-call
    cost, with the same IEEE arithmetic, bit for bit."""

    def __init__(self, *, arrays: bool) -> None:
        import operator

        if arrays:
            import numpy

            self.max, self.min, self.floor, self.where = numpy.maximum, numpy.minimum, numpy.floor, numpy.where
            self.not_, self.any = numpy.logical_not, numpy.any
            self.take: Callable[[tuple[Any, Any], Any], Any] = lambda table, i: table[0].take(i)
        else:
            self.max, self.min, self.where = max, min, lambda c, a, b: a if c else b  # type: ignore[assignment]
            self.floor = lambda v: float(math.floor(v))  # type: ignore[assignment]
            self.not_, self.any = operator.not_, bool  # type: ignore[assignment]
            self.take = lambda table, i: table[1][i]
        self.and_, self.or_ = operator.and_, operator.or_


#: Once this few epochs are still running in a window, they finish cycle by cycle on plain floats.
FEW_LANES = 12


def stepper(
    schedule: Schedule, *, interval_s: float | None = None, every: tuple[int, ...] | None = None
) -> Callable[..., None]:
    """One cycle of every running epoch of ``schedule``, as array arithmetic; updates the state in place.
    Its ``lane`` attribute runs the same cycle on plain floats: (x, tier, c, pending, r) to (kept,
    stall, c, pending, r).

    ``interval_s`` or ``every`` replace the schedule's own without checking them against the lag: a
    whole run's last top-tier period may be shorter (:mod:`ckptcalc.simulation.plan`).

    From phase c (tier-1 checkpoints from the start of the current top-tier period to the point the
    restart recovers to) the job makes progress w = max(X − r, 0). Offsets within a period count
    stalls: checkpoint i ends at pos(i) = i·τ₁ + Σ_j ⌊i/N_j⌋·s_j, N_j = m₂·…·m_j.
    """
    import numpy

    tau = schedule.interval_s if interval_s is None else interval_s
    multiples = schedule.every if every is None else every
    stalls = schedule.stalls
    count = len(stalls)
    sizes = [1]  # N_1 … N_L: tier-1 checkpoints per tier-j period
    for m in multiples:
        sizes.append(sizes[-1] * m)
    total = float(sizes[-1])
    lengths = []  # a tier-j period that does not end a higher one: N_j·τ₁ + Σ_{i≤j} (N_j/N_i)·s_i
    for j in range(count):
        lengths.append(sizes[j] * tau + sum(sizes[j] // sizes[i] * stalls[i] for i in range(j + 1)))
    period = total * tau + sum(sizes[-1] // sizes[i] * stalls[i] for i in range(count))
    lag = schedule.lag_s
    top = count - 1
    # Each class's restart, and the tier it goes back to (the tiers' own classes first, docs/model.md §20).
    restarts = (numpy.asarray(schedule.class_restarts, dtype=float), tuple(schedule.class_restarts))
    anchors = (
        (numpy.asarray(schedule.class_anchors, dtype=numpy.intp), schedule.class_anchors) if schedule.extra else None
    )
    below = (numpy.asarray(sizes[:-1], dtype=float), tuple(float(n) for n in sizes[:-1]))  # N_k below the top

    def stall_sum(o: _Ops, i: Any, rounds: Any) -> Any:
        """Σ_j ⌊i/N_j⌋·s_j for whole numbers i with ⌊i/N_L⌋ = ``rounds`` (None: i is a phase, below N_L)."""
        found = i * stalls[0]
        for j in range(1, top):
            found = found + o.floor(i / sizes[j]) * stalls[j]
        if top and rounds is not None:
            found = found + rounds * stalls[top]
        return found

    def cycle(
        o: _Ops, x: Any, tier: Any, c: Any, pending: Any, r: Any, more: Any = None
    ) -> tuple[Any, Any, Any, Any, Any]:
        mx, mn, fl, wh = o.max, o.min, o.floor, o.where
        drawn = tier
        if anchors is not None:
            tier = o.take(anchors, tier)
        w = mx(x - r, 0.0)
        if more is not None:
            w = w + more  # progress after failures with notice, which resume where they struck
        stalled = stall_sum(o, c, None)
        start = c * tau + stalled  # pos(c)
        e = w - (period - start)
        passed = e >= 0.0
        e = mx(e, 0.0)
        extra = fl(e / period)
        e = mx(e - extra * period, 0.0)
        offset = wh(passed, e, start + w)  # where the failure strikes, from its period's start
        left, done = offset, None
        for j in range(count - 2, -1, -1):  # whole tier-(j+1) periods, top down, then segments
            whole = mx(mn(fl(left / lengths[j]), multiples[j] - 1.0), 0.0)
            left = mx(left - whole * lengths[j], 0.0)
            whole = whole * sizes[j] if j else whole
            done = whole if done is None else done + whole
        if done is None:  # one tier: no checkpoint below the top
            done = 0.0 * offset
        partial = mx(left - tau, 0.0)  # the stall cut short by the failure
        # The job never stands before the point it resumed from: where rounding put the failure
        # in the segment before (a failure during the restart strikes exactly there), it is not.
        behind = o.and_(done < c, o.not_(passed))
        if o.any(behind):
            done = wh(behind, c, done)
            partial = wh(behind, mx(w - tau, 0.0), partial)
        rounds = extra + passed  # extra is 0 where no top-tier checkpoint passed
        base = rounds * total
        reached = base + done
        stall = stall_sum(o, reached, rounds) - stalled + partial
        is_top = tier == top
        back = base
        if lag > 0:
            durable = o.or_(offset >= lag, o.not_(o.or_(passed, pending)))
            back = base - wh(durable, 0.0, total)
            pending = o.and_(o.not_(is_top), o.not_(durable))
        if count > 2:
            size = o.take(below, mn(tier, top - 1))
            lower = fl(reached / size) * size
        else:
            lower = reached  # the tier below the top restores to its own last checkpoint: N₁ = 1
        kept = wh(is_top, back, lower) - c
        return kept, stall, wh(is_top, 0.0, lower - base), pending, o.take(restarts, drawn)

    arrays, floats = _Ops(arrays=True), _Ops(arrays=False)

    def step(x: Any, tier: Any, c: Any, pending: Any, r: Any, index: Any, kept: Any, stall_out: Any,
             restart_out: Any, more: Any = None) -> None:  # fmt: skip
        kept[index], stall_out[index], new_c, new_pending, new_r = cycle(arrays, x, tier, c, pending, r, more)
        restart_out[index] = r
        c[...], pending[...], r[...] = new_c, new_pending, new_r

    def lane(
        x: float, tier: int, c: float, pending: bool, r: float, more: float = 0.0
    ) -> tuple[float, float, float, bool, float]:
        return cycle(floats, x, tier, c, pending, r, more if more else None)

    step.lane = lane  # type: ignore[attr-defined]
    return step


# ------------------------------------------------------------- elastic replica groups


def groups_of(config: Config) -> Any:
    """The parts of ``config`` that fail and rejoin on their own (elastic replica groups) as the simulation
    runs them (None without)."""
    return registry.engine_group_process(config)


class _Draws:
    """Standard exponentials and uniforms from one generator, drawn in blocks and handed out one by one."""

    SIZE = 1 << 14

    def __init__(self, rng: Any) -> None:
        self.rng = rng
        self.exp: list[float] = []
        self.uni: list[float] = []

    def exponential(self) -> float:
        if not self.exp:
            self.exp = self.rng.standard_exponential(self.SIZE).tolist()
        return self.exp.pop()

    def uniform(self) -> float:
        if not self.uni:
            self.uni = self.rng.random(self.SIZE).tolist()
        return self.uni.pop()


def run_elastic(
    schedule: Schedule,
    process: Groups,
    failures: Failures,
    *,
    cycles: int,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
) -> Simulation:
    """Simulate ``cycles`` whole-job failure cycles of a job of elastic replica groups running the
    synchronous ``schedule`` (docs/model.md §14.1), event by event.

    Whole-job failures come at (1 − e)/M from the start of each restart (renewal, as :func:`run_schedule`);
    between them the groups drop out at e/(M·G) each while up and rejoin after T_j; each drop pauses the
    running groups for q_p; all groups down is a whole-job failure. Kept work counts the throughput it was
    done at: (1 − o)·(groups up)/G, 0 while paused. A whole-job failure of class k (drawn with the tiers'
    shares) goes back to the last tier-k checkpoint and its progress.

    >>> s = Schedule.single(interval_s=600.0, stall_s=10.0, restart_s=300.0)
    >>> g = Groups(4, 0.9, 600.0, 0.0, 0.0)  # G, e, T_j, q_p, o
    >>> run = run_elastic(s, g, Failures(3600.0), cycles=200, seed=1)
    >>> run.cycles, 0.8 < run.effective < 1.0
    (200, True)
    """
    import numpy

    cycles = check(cycles, failures.shape)
    if failures.shape is not None:
        raise InputError("elastic replica groups are simulated under exponential failures", where="shape")
    if schedule.lag_s > 0:
        raise InputError(
            "elastic replica groups are simulated with synchronous checkpoints (no snapshot bandwidth)",
            where="snapshot_bandwidth",
        )
    process.check_cycles()
    rng = numpy.random.default_rng(seed)
    draws = _Draws(rng)
    whole_mean, nu = process.rates(failures.mtbf_s)
    tau = schedule.interval_s
    sizes = [1]
    for m in schedule.every:
        sizes.append(sizes[-1] * m)
    tiers = schedule.tiers
    bounds = list(itertools.accumulate(schedule.class_shares))[:-1]
    anchors = schedule.class_anchors
    stalls = schedule.stalls
    top = tiers - 1
    # The job at boundary n (tier-1 checkpoints since the start) with progress p; marks[k] the last
    # tier-k boundary and its progress.
    n, p = 0, 0.0
    marks = [(0, 0.0)] * tiers
    restart = schedule.restarts[top]
    sums = numpy.zeros((5, BATCHES))  # time, progress kept, stalls, restarts, work time kept
    in_restart = 0
    edges = _batch_sizes(cycles)
    done = 0
    for b, size in enumerate(edges):
        for _ in range(size):
            x = draws.exponential() * whole_mean
            if x < restart:
                in_restart += 1
                time, stall, spent, running = x, 0.0, x, 0.0
            else:
                limit = x - restart
                times, thetas, down = process.stretch(nu, limit, draws)
                running = limit if down is None else down
                spent, time = restart, restart + running
                # Boundaries n+1 … n+K: each a τ₁ of work then its stall (every tier whose multiple it is).
                count = int(running // (tau + stalls[0])) + 2
                index = numpy.arange(n + 1, n + count + 1)
                stall_at = numpy.full(count, stalls[0])
                for k in range(1, tiers):
                    stall_at += numpy.where(index % sizes[k] == 0, stalls[k], 0.0)
                ends = numpy.cumsum(tau + stall_at)
                completed = int(numpy.searchsorted(ends, running, side="right"))
                reached = n + completed

                def work(t: Any, ends: Any = ends) -> Any:
                    j = numpy.searchsorted(ends, t, side="right")
                    start = numpy.where(j > 0, ends[numpy.maximum(j - 1, 0)], 0.0)
                    return j * tau + numpy.minimum(t - start, tau)

                at_work = work(numpy.asarray(times))
                worked = float(at_work[-1])
                stall = running - worked
                cum = numpy.concatenate(([0.0], numpy.cumsum(numpy.asarray(thetas) * numpy.diff(at_work))))
                for k in range(tiers):
                    last = reached // sizes[k] * sizes[k]
                    if last > n:
                        marks[k] = (last, p + float(numpy.interp((last - n) * tau, at_work, cum)))
            cls = _class(bounds, draws)
            tier = anchors[cls]
            target = marks[tier]
            for k in range(tier):
                marks[k] = target
            kept_work = (target[0] - n) * tau
            sums[:, b] += (time, target[1] - p, stall, spent, kept_work)
            n, p = target
            restart = schedule.class_restarts[cls]
            done += 1
        if progress is not None:
            progress(done / cycles)
    totals = sums.sum(axis=1)
    elapsed, useful, written, restarting, kept = (float(v) for v in totals)
    found = _summary(totals, sums[1] / sums[0], cycles, in_restart, seed, schedule)
    # Rework is work redone: what the kept work (at full throughput) lacks, not what the useful work lacks.
    split = dataclasses.replace(found.split, rework=(elapsed - kept - written - restarting) / elapsed)
    return dataclasses.replace(found, split=split, elastic=(kept - useful) / elapsed)


def _class(bounds: list[float], draws: _Draws) -> int:
    """The tier that serves a whole-job failure: one uniform against the cumulative shares."""
    if not bounds:
        return 0
    u = draws.uniform()
    return sum(1 for edge in bounds if u >= edge)
