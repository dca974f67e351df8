"""Monte Carlo ground truth: the training timeline itself, drawn with numpy.

Renewal assumption (as the analytic model): the failure clock starts afresh at
each failure, so the time X to the next failure counts from the moment the
restart begins, and a restart can itself be interrupted. One *cycle* is the
time between two failures: a restart, then the job runs its schedule (work,
checkpoint stalls) until the failure, and rolls back to the last checkpoint
of the level that serves the failure. ``--cycles N`` is exactly N cycles of
one timeline, which starts with a restart from storage.

A :class:`Schedule` is what runs: :func:`run_schedule` simulates one, and
:func:`run` maps a model :class:`~ckptcalc.model.evaluation.Config` to one
(:func:`schedule_for`) first.

* One level (synchronous or asynchronous): every cycle starts from a durable
  checkpoint, so cycles are independent, one draw each, and the whole run is
  array arithmetic on cache-sized pieces.
* Memory + storage: what a failure loses depends on earlier cycles (where the
  job stands in the storage period, whether a persist is in flight). But a
  failure served by storage always leaves the job in the same state, so the
  timeline splits there into independent epochs, which run side by side, one
  cycle per step, each step vectorised across the epochs.

Everything is driven by an explicit ``numpy.random.Generator``; the same seed
gives the same result bit for bit, and the same draws whatever the schedule
(common random numbers).

>>> schedule = Schedule(interval_s=300.0, stall_s=10.0, restart_s=900.0, storage_every=5,
...                     storage_stall_s=100.0, memory_restart_s=60.0, memory_share=0.7)
>>> schedule.storage_interval_s, schedule.memory_interval_s
(1500.0, 300.0)
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.model.evaluation import Config, Result, evaluate, first_order, optimal_interval
from ckptcalc.model.numeric import golden_max

#: The fixed default seed, printed with every result.
DEFAULT_SEED = 20240601

#: The most cycles one run accepts (about a minute for one level).
MAX_CYCLES = 1_000_000_000

#: Independent batches behind the confidence interval.
BATCHES = 20

#: Student's t at 97.5 % for BATCHES − 1 = 19 degrees of freedom.
T_975_19 = 2.093024054408263

#: Cycles whose sums are added one after the other (each summed pairwise, as numpy does).
BLOCK = 1 << 20

#: Cycles worked on at once: 4 float buffers of this size stay in a core's cache.
LEAF = 1 << 15

#: Two levels: cycles drawn at once, their epochs run side by side.
WINDOW = 1 << 20

#: Two levels: once this few epochs are still running, they finish cycle by cycle
#: in plain Python, cheaper than numpy's per-call cost on tiny arrays.
FEW_LANES = 8

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
    """The checkpoint schedule a simulation runs, in seconds.

    One level (``storage_every`` None): a checkpoint after every
    ``interval_s`` of useful work, stalling the job ``stall_s``, durable once
    the job has progressed ``lag_s`` past the end of that stall (0:
    synchronous); a failure restarts in ``restart_s`` from the last durable
    checkpoint. Needs ``interval_s ≥ lag_s``.

    Two levels (``storage_every`` = m): a memory checkpoint after every
    ``interval_s`` (τ₁) of useful work, stalling ``stall_s`` (s₁); every m-th
    one is also a storage checkpoint, stalling ``stall_s + storage_stall_s``
    (s₁ + s₂), durable once the job's position is ``lag_s`` (P₂) past the end
    of that stall. A failure is served by memory with probability
    ``memory_share`` (q): restart ``memory_restart_s`` (r₁), back to the last
    memory checkpoint; otherwise by storage: restart ``restart_s`` (r₂), back
    to the last durable storage checkpoint. The storage interval is exactly
    m·τ₁ of useful work, and must be at least P₂.

    Invalid values raise :class:`~ckptcalc.errors.InputError` naming the field.
    """

    interval_s: float
    stall_s: float
    restart_s: float
    lag_s: float = 0.0
    storage_every: int | None = None
    storage_stall_s: float = 0.0
    memory_restart_s: float = 0.0
    memory_share: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.interval_s) and self.interval_s > 0):
            raise InputError(f"must be a positive number of seconds, got {self.interval_s:g}", where="interval_s")
        for name in ("stall_s", "restart_s", "lag_s", "storage_stall_s", "memory_restart_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InputError(f"must be a non-negative number of seconds, got {value:g}", where=name)
        if not 0.0 <= self.memory_share <= 1.0:
            raise InputError(f"must be a share in [0, 1], got {self.memory_share:g}", where="memory_share")
        every = self.storage_every
        if every is None:
            if self.memory_share or self.memory_restart_s or self.storage_stall_s:
                raise InputError("a memory level needs storage_every", where="storage_every")
            if self.interval_s < self.lag_s:
                raise InputError(
                    f"interval {self.interval_s:g} s is shorter than the persist lag {self.lag_s:g} s:"
                    " a checkpoint cannot start before the last one is durable",
                    where="interval_s",
                )
            return
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise InputError(f"must be a positive whole number, got {every!r}", where="storage_every")
        if self.storage_interval_s < self.lag_s:
            raise InputError(
                f"storage interval {every} × {self.interval_s:g} s = {self.storage_interval_s:g} s is shorter"
                f" than the persist lag {self.lag_s:g} s: a storage checkpoint cannot start before the last"
                " one is durable",
                where="interval_s",
            )

    @property
    def storage_interval_s(self) -> float:
        """Useful work between two storage checkpoints: m·τ₁, or τ for one level."""
        if self.storage_every is None:
            return self.interval_s
        return self.storage_every * self.interval_s

    @property
    def memory_interval_s(self) -> float | None:
        return None if self.storage_every is None else self.interval_s


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


def analytic(config: Config, failures: Failures) -> tuple[float, float | None]:
    """First-order and exact effective time at the configuration's intervals.

    The exact value is the exact model for exponential failures (every
    strategy), or the renewal series for Weibull ones on a single level (an
    asynchronous lag joins the restart); None where no exact model exists
    (Weibull with two levels: the simulation is the answer).
    """
    plain = config.replace(shape=None)
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


def storage_every(result: Result) -> int:
    """Memory checkpoints per storage checkpoint for an evaluated two-level configuration,
    as the model's schedule has it (a whole number, at least 1)."""
    assert result.storage_every is not None
    return int(result.storage_every)


def schedule_for(config: Config) -> Schedule | TierSchedule:
    """The schedule ``config`` describes, at its intervals (optimal where unset)."""
    result = evaluate(config)
    if config.is_nested:
        return tier_schedule(result)
    return _schedule(result, storage_every(result) if config.has_memory else None)


def tier_schedule(result: Result) -> TierSchedule:
    """The nested schedule an evaluated configuration of three or more tiers runs."""
    intervals = [float(plan.interval_s) for plan in result.levels]
    every = tuple(max(1, round(b / a)) for a, b in itertools.pairwise(intervals))
    levels = [plan.level for plan in result.levels]
    return TierSchedule(
        interval_s=intervals[0],
        every=every,
        stalls=tuple(float(level.stall_s) for level in levels),
        restarts=tuple(float(level.restart_s) for level in levels),
        shares=tuple(float(level.share) for level in levels),
        lag_s=float(levels[-1].lag_s),
    )


def _schedule(result: Result, every: int | None) -> Schedule:
    if every is None:
        (level,) = result.levels
        return Schedule(
            interval_s=float(level.interval_s),
            stall_s=float(level.level.stall_s),
            restart_s=float(level.level.restart_s),
            lag_s=float(level.level.lag_s),
        )
    memory, storage = result.levels
    return Schedule(
        interval_s=float(memory.interval_s),
        stall_s=float(memory.level.stall_s),
        restart_s=float(storage.level.restart_s),
        lag_s=float(storage.level.lag_s),
        storage_every=every,
        storage_stall_s=float(storage.level.stall_s),
        memory_restart_s=float(memory.level.restart_s),
        memory_share=float(memory.level.share),
    )


def run(
    config: Config,
    failures: Failures,
    *,
    cycles: int,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
) -> Simulation:
    """Simulate ``cycles`` failure cycles of ``config`` at its intervals (optimal where unset)."""
    return run_schedule(schedule_for(config), failures, cycles=cycles, seed=seed, progress=progress)


def run_schedule(
    schedule: Schedule | TierSchedule,
    failures: Failures,
    *,
    cycles: int,
    seed: int = DEFAULT_SEED,
    progress: Progress | None = None,
) -> Simulation:
    """Simulate exactly ``cycles`` failure cycles of one timeline running ``schedule``.

    >>> schedule = Schedule(interval_s=600.0, stall_s=60.0, restart_s=300.0)
    >>> run_schedule(schedule, Failures(3600.0), cycles=200, seed=1).cycles
    200
    """
    cycles = check(cycles, failures.shape)  # enough cycles for the batches behind the CI, a valid shape
    if isinstance(schedule, TierSchedule):
        return _nested(schedule, failures, cycles, seed, progress)
    if schedule.storage_every is None:
        return _one_level(schedule, failures, cycles, seed, progress)
    return _two_levels(schedule, failures, cycles, seed, progress, FEW_LANES)


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
    half = T_975_19 * spread
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


def _one_level(schedule: Schedule, failures: Failures, cycles: int, seed: int, progress: Progress | None) -> Simulation:
    import numpy

    tau, stall, lag, restart = schedule.interval_s, schedule.stall_s, schedule.lag_s, schedule.restart_s
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
        return elapsed, kept, float(cv.sum()), restarting

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


def _two_levels(
    schedule: Schedule, failures: Failures, cycles: int, seed: int, progress: Progress | None, few_lanes: int
) -> Simulation:
    """Memory + storage: one timeline of exactly ``cycles`` cycles, drawn a window at a time.

    The state carried from one cycle to the next: the phase c (memory
    checkpoints from the start of the current storage period to the point the
    restart recovers to), whether that period's storage snapshot is still in
    flight, and the length of the restart.
    """
    state = (0.0, False, schedule.restart_s)  # the job starts as after a storage failure

    def window(x: Any, u: Any, state: Any) -> tuple[Any, Any, Any, Any]:
        return _window(schedule, x, u < schedule.memory_share, state, few_lanes)

    sums, in_restart = _timeline(failures, cycles, seed, progress, window, state)
    sums[1] *= schedule.interval_s
    return _summary(sums.sum(axis=1), sums[1] / sums[0], cycles, in_restart, seed, schedule)


def _timeline(
    failures: Failures,
    cycles: int,
    seed: int,
    progress: Progress | None,
    window: Callable[[Any, Any, Any], tuple[Any, Any, Any, Any]],
    state: Any,
) -> tuple[Any, int]:
    """Exactly ``cycles`` cycles of one timeline, drawn a window at a time: for each, the times to
    failure and one uniform draw per cycle (which level serves it), run by ``window`` from the state
    the last one left. Returns the per-batch sums of (time, kept in fastest intervals, stalls,
    restarts) and how many failures struck a restart."""
    import numpy

    rng = numpy.random.default_rng(seed)
    edges = numpy.cumsum([0, *_batch_sizes(cycles)])
    sums = numpy.zeros((4, BATCHES))
    in_restart = 0
    start = 0
    while start < cycles:
        n = min(WINDOW, cycles - start)
        x = failures.draw(rng, n)
        kept, stalls, restarts, state = window(x, rng.random(n), state)
        in_restart += int(numpy.count_nonzero(x < restarts))
        numpy.minimum(restarts, x, out=restarts)  # a restart cut short by a failure
        inside = edges[(edges > start) & (edges < start + n)] - start
        offsets = numpy.concatenate(([0], inside))
        first = int(numpy.searchsorted(edges, start, side="right")) - 1
        for row, values in enumerate((x, kept, stalls, restarts)):
            sums[row, first : first + offsets.size] += numpy.add.reduceat(values, offsets)
        start += n
        if progress is not None:
            progress(start / cycles)
    return sums, in_restart


def _window(
    schedule: Schedule, x: Any, by_memory: Any, state: tuple[float, bool, float], few_lanes: int
) -> tuple[Any, Any, Any, tuple[float, bool, float]]:
    """Run the cycles of one window: kept work (in memory intervals), stalls and restart length per cycle.

    A failure served by storage always leaves the job in the same state: a
    restart of r₂ towards a durable storage checkpoint, phase 0, nothing in
    flight. So the window splits after each such failure into epochs that
    depend on nothing before them; only the first continues ``state`` from the
    last window. The epochs run side by side, longest first, one cycle per step.
    """
    import numpy

    n = x.size
    starts, lengths, order, phase, pending, restart = _epochs(~by_memory, schedule.restart_s)
    lanes = starts.size
    first = int(numpy.flatnonzero(order == 0)[0])
    phase[first], pending[first], restart[first] = state
    kept, stalls, restarts = numpy.empty(n), numpy.empty(n), numpy.empty(n)
    step_lanes = vector_step(schedule)
    steps = int(lengths[0])
    # Epochs still running at each step (lengths are sorted longest first).
    running = numpy.searchsorted(-lengths, -numpy.arange(steps), side="left").tolist()
    for step, active in enumerate(running):
        if active <= few_lanes:
            for lane in range(active):
                begin, end = int(starts[lane]) + step, int(starts[lane] + lengths[lane])
                phase[lane], pending[lane], restart[lane] = _scalar_lane(
                    schedule, x, by_memory, begin, end, (phase[lane], pending[lane], restart[lane]),
                    kept, stalls, restarts,
                )  # fmt: skip
            break
        index = starts[:active] + step
        step_lanes(x[index], by_memory[index], phase[:active], pending[:active], restart[:active],
                   index, kept, stalls, restarts)  # fmt: skip
    last = int(numpy.flatnonzero(order == lanes - 1)[0])  # the epoch still open at the window's end
    return kept, stalls, restarts, (float(phase[last]), bool(pending[last]), float(restart[last]))


def _epochs(ends: Any, restart_s: float) -> tuple[Any, Any, Any, Any, Any, Any]:
    """A window split into epochs after each cycle that ``ends`` one (a failure served from the top
    level): their starts and lengths, longest first, the order that sorted them, and a fresh state
    for each (phase 0, nothing in flight, a restart from the top level)."""
    import numpy

    starts = numpy.concatenate(([0], numpy.flatnonzero(ends[:-1]) + 1))
    lengths = numpy.diff(numpy.append(starts, ends.size))
    order = numpy.argsort(-lengths, kind="stable")
    lanes = starts.size
    state = numpy.zeros(lanes), numpy.zeros(lanes, dtype=bool), numpy.full(lanes, restart_s)
    return starts[order], lengths[order], order, *state


def vector_step(schedule: Schedule) -> Callable[..., None]:
    """One cycle of every running epoch, as array arithmetic; updates the state in place.

    From phase c the job resumes at the end of memory checkpoint c of the
    current storage period; the next storage checkpoint ends D = (m − c)·(τ₁+s₁) + s₂
    of progress later. Progress w = max(X − r, 0) (0: the failure struck the
    restart, which then resumes towards the same point or, served by storage,
    goes back to the last durable storage checkpoint).
    """
    import numpy

    tau, s1, s2, lag = schedule.interval_s, schedule.stall_s, schedule.storage_stall_s, schedule.lag_s
    r1, r2 = schedule.memory_restart_s, schedule.restart_s
    every = schedule.storage_every
    assert every is not None
    segment = tau + s1
    period = every * segment + s2
    m = float(every)

    def step(x: Any, memory: Any, c: Any, pending: Any, r: Any, index: Any, kept: Any, stalls: Any,
             restarts: Any) -> None:  # fmt: skip
        w = x - r
        numpy.maximum(w, 0.0, out=w)
        e = (every - c) * segment
        e += s2
        numpy.subtract(w, e, out=e)
        passed = e >= 0.0  # at least one storage checkpoint completed
        numpy.maximum(e, 0.0, out=e)
        extra = numpy.floor(e / period)  # storage checkpoints completed after the first
        e -= extra * period
        numpy.maximum(e, 0.0, out=e)  # progress since the last one (rounding kept it ≥ 0)
        base = numpy.where(passed, e, w)  # progress since the point the memory count starts from
        done = numpy.floor(base / segment)
        numpy.minimum(done, numpy.where(passed, m - 1.0, (m - 1.0) - c), out=done)
        rounds = numpy.where(passed, extra + 1.0, 0.0)
        new_phase = numpy.where(passed, done, c + done)
        reached = rounds * m + new_phase  # last memory checkpoint, counted from the old period's start
        partial = base - done * segment - tau
        numpy.maximum(partial, 0.0, out=partial)  # the stall cut short by the failure
        stalls[index] = (reached - c) * s1 + rounds * s2 + partial
        back = rounds * m  # the last storage checkpoint
        if lag > 0:
            position = numpy.where(passed, e, c * segment + w)  # past the end of the last storage stall
            durable = (position >= lag) | ~(passed | pending)
            back -= numpy.where(durable, 0.0, m)  # not durable yet: the one before
            pending[...] = memory & ~durable
        kept[index] = numpy.where(memory, reached, back) - c
        restarts[index] = r
        c[...] = numpy.where(memory, new_phase, 0.0)
        r[...] = numpy.where(memory, r1, r2)

    return step


def _scalar_lane(
    schedule: Schedule,
    x: Any,
    by_memory: Any,
    begin: int,
    end: int,
    state: tuple[float, bool, float],
    kept: Any,
    stalls: Any,
    restarts: Any,
) -> tuple[float, bool, float]:
    """Cycles ``begin:end`` of one epoch in plain Python: the same operations as :func:`vector_step`."""
    tau, s1, s2, lag = schedule.interval_s, schedule.stall_s, schedule.storage_stall_s, schedule.lag_s
    r1, r2 = schedule.memory_restart_s, schedule.restart_s
    every = schedule.storage_every
    assert every is not None
    segment = tau + s1
    period = every * segment + s2
    m = float(every)
    c, pending, r = float(state[0]), bool(state[1]), float(state[2])
    out_kept, out_stalls, out_restarts = [], [], []
    for failure, memory in zip(x[begin:end].tolist(), by_memory[begin:end].tolist(), strict=True):
        w = max(failure - r, 0.0)
        e = (every - c) * segment
        e += s2
        e = w - e
        passed = e >= 0.0
        e = max(e, 0.0)
        extra = float(math.floor(e / period))
        e -= extra * period
        e = max(e, 0.0)
        base = e if passed else w
        done = min(float(math.floor(base / segment)), m - 1.0 if passed else (m - 1.0) - c)
        rounds = extra + 1.0 if passed else 0.0
        new_phase = done if passed else c + done
        reached = rounds * m + new_phase
        partial = max(base - done * segment - tau, 0.0)
        out_stalls.append((reached - c) * s1 + rounds * s2 + partial)
        back = rounds * m
        if lag > 0:
            position = e if passed else c * segment + w
            durable = position >= lag or not (passed or pending)
            back -= 0.0 if durable else m
            pending = memory and not durable
        out_kept.append((reached if memory else back) - c)
        out_restarts.append(r)
        c = new_phase if memory else 0.0
        r = r1 if memory else r2
    kept[begin:end], stalls[begin:end], restarts[begin:end] = out_kept, out_stalls, out_restarts
    return c, pending, r


# ------------------------------------------------------------ nested tiers


@dataclass(frozen=True)
class TierSchedule:
    """A nested schedule of L ≥ 2 tiers (docs/model.md §12), as the simulation runs it.

    A tier-1 checkpoint after every ``interval_s`` (τ₁) of useful work; tier i
    every ``every[i − 2]``-th checkpoint of tier i − 1, so a tier-i boundary
    stalls ``stalls[0] + … + stalls[i − 1]``; the top tier's copy is durable
    once the job's position is ``lag_s`` past the end of its stall. A failure
    is of class k with probability ``shares[k − 1]``: restart ``restarts[k − 1]``,
    back to the last tier-k boundary (the top tier: the last durable one).
    """

    interval_s: float
    every: tuple[int, ...]
    stalls: tuple[float, ...]
    restarts: tuple[float, ...]
    shares: tuple[float, ...]
    lag_s: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.interval_s) and self.interval_s > 0):
            raise InputError(f"must be a positive number of seconds, got {self.interval_s:g}", where="interval_s")
        count = len(self.stalls)
        if count < 2 or len(self.restarts) != count or len(self.shares) != count or len(self.every) != count - 1:
            raise InputError("a nested schedule needs L ≥ 2 tiers and L − 1 multiples", where="levels")
        for value in (*self.stalls, *self.restarts, self.lag_s):
            if not (math.isfinite(value) and value >= 0):
                raise InputError(f"must be a non-negative number of seconds, got {value:g}", where="levels")
        if any(not 0.0 <= q <= 1.0 for q in self.shares) or abs(sum(self.shares) - 1.0) > 1e-9:
            raise InputError("the shares of failures each tier serves must sum to 1", where="levels")
        for m in self.every:
            if isinstance(m, bool) or not isinstance(m, int) or m < 1:
                raise InputError(f"must be a positive whole number, got {m!r}", where="storage_every")
        if self.storage_interval_s < self.lag_s:
            raise InputError(
                f"storage interval {self.storage_interval_s:g} s is shorter than the persist lag {self.lag_s:g} s:"
                " a storage checkpoint cannot start before the last one is durable",
                where="interval_s",
            )

    @property
    def storage_every(self) -> int:
        """Tier-1 checkpoints per top-tier checkpoint."""
        return math.prod(self.every)

    @property
    def storage_interval_s(self) -> float:
        return self.storage_every * self.interval_s

    @property
    def memory_interval_s(self) -> float:
        return self.interval_s

    def intervals(self) -> tuple[float, ...]:
        found = [self.interval_s]
        for m in self.every:
            found.append(found[-1] * m)
        return tuple(found)


def _nested(
    schedule: TierSchedule, failures: Failures, cycles: int, seed: int, progress: Progress | None
) -> Simulation:
    """Any number of tiers: one timeline of exactly ``cycles`` cycles, as :func:`_two_levels` runs two
    (the same draws: with two tiers, a class-1 failure is a memory-served one)."""
    import numpy

    top = len(schedule.stalls) - 1
    bounds = numpy.cumsum(schedule.shares)[:-1]
    step = _tier_step(schedule)

    def window(x: Any, u: Any, state: Any) -> tuple[Any, Any, Any, Any]:
        tier = numpy.searchsorted(bounds, u, side="right")
        return _tier_window(step, x, tier, top, state, schedule.restarts[top])

    sums, in_restart = _timeline(failures, cycles, seed, progress, window, (0.0, False, schedule.restarts[top]))
    sums[1] *= schedule.interval_s
    return _summary(sums.sum(axis=1), sums[1] / sums[0], cycles, in_restart, seed, schedule)  # type: ignore[arg-type]


def _tier_window(
    step: Callable[..., None], x: Any, tier: Any, top: int, state: tuple[float, bool, float], top_restart: float
) -> tuple[Any, Any, Any, tuple[float, bool, float]]:
    """The cycles of one window, split into epochs after each top-class failure (which always leaves
    the job in the same state), run side by side, longest first."""
    import numpy

    n = x.size
    starts, lengths, order, phase, pending, restart = _epochs(tier == top, top_restart)
    lanes = starts.size
    first = int(numpy.flatnonzero(order == 0)[0])
    phase[first], pending[first], restart[first] = state
    kept, stalls, restarts = numpy.empty(n), numpy.empty(n), numpy.empty(n)
    running = numpy.searchsorted(-lengths, -numpy.arange(int(lengths[0])), side="left").tolist()
    for at, active in enumerate(running):
        index = starts[:active] + at
        step(x[index], tier[index], phase[:active], pending[:active], restart[:active], index, kept, stalls, restarts)
    last = int(numpy.flatnonzero(order == lanes - 1)[0])
    return kept, stalls, restarts, (float(phase[last]), bool(pending[last]), float(restart[last]))


def _tier_step(schedule: TierSchedule) -> Callable[..., None]:
    """One cycle of every running epoch of a nested schedule; updates the state in place.

    From phase c (tier-1 checkpoints from the start of the current top-tier period to the point the
    restart recovers to) the job makes progress w = max(X − r, 0). Offsets within a period count
    stalls: checkpoint i ends at pos(i) = i·τ₁ + Σ_j ⌊i/N_j⌋·s_j, N_j = m₂·…·m_j.
    """
    import numpy

    tau = schedule.interval_s
    stalls = schedule.stalls
    count = len(stalls)
    sizes = [1]  # N_1 … N_L: tier-1 checkpoints per tier-j period
    for m in schedule.every:
        sizes.append(sizes[-1] * m)
    total = float(sizes[-1])
    lengths = []  # a tier-j period that does not end a higher one: N_j·τ₁ + Σ_{i≤j} (N_j/N_i)·s_i
    for j in range(count):
        lengths.append(sizes[j] * tau + sum(sizes[j] // sizes[i] * stalls[i] for i in range(j + 1)))
    period = total * tau + sum(sizes[-1] // sizes[i] * stalls[i] for i in range(count))
    lag = schedule.lag_s
    restarts = numpy.asarray(schedule.restarts, dtype=float)
    top = count - 1

    def stall_sum(i: Any) -> Any:
        found = numpy.zeros_like(i)
        for j in range(count):
            found += numpy.floor(i / sizes[j]) * stalls[j]
        return found

    def position(i: Any) -> Any:
        return i * tau + stall_sum(i)

    def step(x: Any, tier: Any, c: Any, pending: Any, r: Any, index: Any, kept: Any, stall_out: Any,
             restart_out: Any) -> None:  # fmt: skip
        w = numpy.maximum(x - r, 0.0)
        start = position(c)
        e = w - (period - start)
        passed = e >= 0.0
        e = numpy.maximum(e, 0.0)
        extra = numpy.floor(e / period)
        e = numpy.maximum(e - extra * period, 0.0)
        offset = numpy.where(passed, e, start + w)  # where the failure strikes, from its period's start
        done = numpy.zeros_like(offset)
        left = offset
        for j in range(count - 2, -1, -1):  # whole tier-(j+1) periods, top down, then segments
            whole = numpy.minimum(numpy.floor(left / lengths[j]), schedule.every[j] - 1.0)
            whole = numpy.maximum(whole, 0.0)
            left = numpy.maximum(left - whole * lengths[j], 0.0)
            done += whole * sizes[j]
        partial = numpy.maximum(left - tau, 0.0)  # the stall cut short by the failure
        # The job never stands before the point it resumed from: where rounding put the failure
        # in the segment before (a failure during the restart strikes exactly there), it is not.
        behind = ~passed & (done < c)
        done = numpy.where(behind, c, done)
        partial = numpy.where(behind, numpy.maximum(w - tau, 0.0), partial)
        rounds = numpy.where(passed, extra + 1.0, 0.0)
        reached = rounds * total + done
        stall_out[index] = stall_sum(reached) - stall_sum(c) + partial
        base = rounds * total
        back = base.copy()
        if lag > 0:
            durable = (offset >= lag) | ~(passed | pending)
            back -= numpy.where(durable, 0.0, total)
            pending[...] = (tier < top) & ~durable
        sizes_of = numpy.asarray(sizes, dtype=float)[tier]
        lower = numpy.floor(reached / sizes_of) * sizes_of
        restore = numpy.where(tier == top, back, lower)
        kept[index] = restore - c
        restart_out[index] = r
        c[...] = numpy.where(tier == top, 0.0, lower - base)
        r[...] = restarts[tier]

    return step


# ---------------------------------------------------------------- search


@dataclass(frozen=True)
class Search:
    """The schedule a search found, its simulated effective time, and how many simulations it took."""

    schedule: Schedule
    effective: float
    evaluations: int

    @property
    def interval_s(self) -> float:
        """The storage interval found (m·τ₁ with two levels)."""
        return self.schedule.storage_interval_s

    @property
    def memory_interval_s(self) -> float | None:
        return self.schedule.memory_interval_s

    @property
    def storage_every(self) -> int | None:
        return self.schedule.storage_every


#: The search tries no more memory checkpoints per storage checkpoint than this.
MAX_STORAGE_EVERY = 1 << 16

#: Golden section on log τ₁ for each m stops at this relative width.
MEMORY_TOLERANCE = 0.02

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def optimize(
    config: Config, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED, iterations: int = 40
) -> Search:
    """Search the schedule that maximises simulated effective time, common random numbers throughout.

    One level: the interval τ, by golden section on a log scale, no shorter
    than the persist lag. Two levels: the memory interval τ₁ and the whole
    number m of memory checkpoints per storage checkpoint jointly (for each m
    the best τ₁, then the best m), with m·τ₁ no shorter than the lag.
    """
    if config.is_nested:
        raise InputError(
            "the simulated search covers one or two levels; with more tiers, simulate the exact optimum"
            " (without the search)",
            where="search",
        )
    result = evaluate(config.optimal())
    every = None
    if config.has_memory:
        # Only a starting point: the first-order m, raised if needed so that m·τ₁ covers the lag.
        memory, storage = result.levels
        lag, tau = float(storage.level.lag_s), float(memory.interval_s)
        every = max(storage_every(result), math.ceil(lag / tau))
        while every * tau < lag:
            every += 1
    return optimize_schedule(_schedule(result, every), failures, cycles=cycles, seed=seed, iterations=iterations)


def optimize_schedule(
    schedule: Schedule, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED, iterations: int = 40
) -> Search:
    """:func:`optimize` starting from ``schedule``'s stalls, restarts and shares (its intervals are ignored)."""
    runs: dict[tuple[float, int | None], float] = {}

    def value(tau: float, every: int | None) -> float:
        key = (tau, every)
        if key not in runs:
            trial = dataclasses.replace(schedule, interval_s=tau, storage_every=every)
            runs[key] = run_schedule(trial, failures, cycles=cycles, seed=seed).effective
        return runs[key]

    mtbf = failures.mtbf_s
    if schedule.storage_every is None:
        young = float(optimal_interval(schedule.stall_s, schedule.lag_s, mtbf))
        low = max(young / 20.0, schedule.lag_s)
        high = max(young * 20.0, low * 4.0)
        if failures.shape is not None:
            high = max(high, mtbf)
        best = max(math.exp(_golden(lambda log_tau: value(max(math.exp(log_tau), low), None), low, high, 1e-3,
                                    iterations)), low)  # fmt: skip
        effective = value(best, None)
        return Search(dataclasses.replace(schedule, interval_s=best), effective, len(runs))

    s1, s2, q, lag = schedule.stall_s, schedule.storage_stall_s, schedule.memory_share, schedule.lag_s
    spread = 8.0 if failures.shape is None else 20.0
    memory_best: dict[int, tuple[float, float]] = {}

    def best_memory_interval(every: int) -> float:
        """The best τ₁ for this m (memoised); returns its effective time."""
        if every not in memory_best:
            # First order with m fixed: loss (s₁ + s₂/m)/τ₁ + (q + (1−q)·m)·τ₁/2M + constants.
            guess = math.sqrt(2.0 * mtbf * (s1 + s2 / every) / (q + (1.0 - q) * every)) or 1.0
            low = max(guess / spread, _at_least(lag, every))
            high = max(guess * spread, low * 4.0)
            tried: list[tuple[float, float]] = []

            def at(log_tau: float) -> float:
                tau = max(math.exp(log_tau), low)
                tried.append((value(tau, every), tau))
                return tried[-1][0]

            _golden(at, low, high, MEMORY_TOLERANCE, iterations)
            effective, tau = max(tried)
            memory_best[every] = (effective, tau)
        return memory_best[every][0]

    first = schedule.storage_every or 1
    every = _integer_peak(best_memory_interval, 1, max(8, 4 * first), MAX_STORAGE_EVERY)
    effective, tau = memory_best[every]
    return Search(dataclasses.replace(schedule, interval_s=tau, storage_every=every), effective, len(runs))


def _at_least(lag: float, every: int) -> float:
    """The shortest τ₁ with every·τ₁ ≥ lag in floating point."""
    tau = lag / every
    while every * tau < lag:
        tau = math.nextafter(tau, math.inf)
    return tau


def _golden(value: Callable[[float], float], low: float, high: float, tolerance: float, iterations: int) -> float:
    """Golden-section search for the maximum of ``value(log τ)`` over [ln low, ln high]; the midpoint found."""
    return golden_max(value, math.log(low), math.log(high), tolerance, iterations)


def _integer_peak(value: Callable[[int], float], low: int, high: int, cap: int) -> int:
    """The whole number in [low, high] maximising a unimodal ``value``.

    While the peak is at the top of the range, the range moves up and doubles, up to ``cap``.
    """
    while True:
        a, b = low, high
        while b - a > 3:
            left = a + round((b - a) * (1.0 - _GOLDEN))
            right = max(left + 1, a + round((b - a) * _GOLDEN))
            if value(left) >= value(right):
                b = right
            else:
                a = left
        best = max(range(a, b + 1), key=lambda k: (value(k), -k))
        if best < high or high >= cap:
            return best
        low, high = high, min(2 * high, cap)


# ---------------------------------------------------------------- event log


@dataclass(frozen=True)
class Events:
    """The event log of a simulated one-level timeline, as arrays in time order.

    ``kind`` indexes :data:`EVENT_KINDS`; ``resumed_from_s`` (restart ends) and
    ``persist_end_s`` (asynchronous checkpoint ends) are NaN where they do not apply.
    """

    time_s: Any
    kind: Any
    resumed_from_s: Any
    persist_end_s: Any


#: The event names of :class:`Events`, by their codes.
EVENT_KINDS = ("run_start", "restart_end", "checkpoint_start", "checkpoint_end", "failure", "run_end")


def events(schedule: Schedule, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED) -> Events:
    """The timeline :func:`run_schedule` simulates for one level (the same draws), as an event log.

    The log starts when training first starts (the end of the timeline's first complete restart) and
    ends at its last failure; each restart names the checkpoint it resumes from.
    """
    import numpy

    if schedule.storage_every is not None:
        raise InputError("an event log is written for one checkpoint level", where="events")
    cycles = check(cycles, failures.shape)
    rng = numpy.random.default_rng(seed)
    x = failures.draw(rng, cycles)
    tau, stall, lag, r = schedule.interval_s, schedule.stall_s, schedule.lag_s, schedule.restart_s
    period = tau + stall
    begin = numpy.concatenate(([0.0], numpy.cumsum(x)[:-1]))
    w = numpy.maximum(x - r, 0.0)
    trained = numpy.flatnonzero(x > r)
    if trained.size == 0:
        raise InputError("every failure struck a restart: there is no training to log", where="events")
    first = int(trained[0])
    start_s = begin[first] + r
    started = numpy.where(w > tau, numpy.ceil((w - tau) / period), 0.0).astype(numpy.int64)
    completed = numpy.floor(w / period).astype(numpy.int64)
    durable = numpy.where(w >= lag, numpy.floor((w - lag) / period), 0.0).astype(numpy.int64)
    if lag == 0:
        durable = completed
    started[:first] = completed[:first] = durable[:first] = 0
    # One row per checkpoint started: its cycle and its index n in the cycle.
    owner = numpy.repeat(numpy.arange(cycles), started)
    offsets = numpy.cumsum(started) - started
    n = numpy.arange(owner.size) - numpy.repeat(offsets, started)
    ck_start = begin[owner] + r + n * period + tau
    ends = n < completed[owner]
    ck_end = ck_start[ends] + stall
    persist = numpy.full(ck_end.size, numpy.nan)
    if lag > 0:
        persist = numpy.where(n[ends] < durable[owner[ends]], ck_end + lag, numpy.nan)
    # The checkpoint each restart resumes from: the newest durable one of the cycles before it.
    last_durable = numpy.where(durable > 0, begin + r + (durable - 1) * period + tau, numpy.nan)
    last_durable[:first] = numpy.nan
    carried = _carry_forward(last_durable, start_s)
    resumed = numpy.concatenate(([start_s], carried[:-1]))
    restarts = numpy.arange(first + 1, cycles)
    restarts = restarts[x[restarts] > r]
    fail = numpy.arange(first, cycles)
    times = numpy.concatenate(
        ([start_s], begin[restarts] + r, ck_start, ck_end, begin[fail] + x[fail], [begin[-1] + x[-1]])
    )
    kinds = numpy.concatenate(
        ([0], numpy.full(restarts.size, 1), numpy.full(ck_start.size, 2), numpy.full(ck_end.size, 3),
         numpy.full(fail.size, 4), [5])
    )  # fmt: skip
    resumed_col = numpy.concatenate(
        ([numpy.nan], resumed[restarts], numpy.full(times.size - 1 - restarts.size, numpy.nan))
    )
    persist_col = numpy.concatenate(
        (numpy.full(1 + restarts.size + ck_start.size, numpy.nan), persist, numpy.full(fail.size + 1, numpy.nan))
    )
    # Failures before restarts at the same instant; starts before ends; the run's end last.
    order = numpy.lexsort((_TIE[kinds], times))
    return Events(times[order], kinds[order], resumed_col[order], persist_col[order])


def _carry_forward(values: Any, initial: float) -> Any:
    """Each position's newest non-NaN value so far (``initial`` before the first)."""
    import numpy

    valid = ~numpy.isnan(values)
    index = numpy.where(valid, numpy.arange(values.size), -1)
    numpy.maximum.accumulate(index, out=index)
    return numpy.where(index >= 0, values[numpy.maximum(index, 0)], initial)


class _TieOrder:
    def __getitem__(self, kinds: Any) -> Any:
        import numpy

        # run_start, failure, restart_end, checkpoint_start, checkpoint_end, run_end at one instant
        return numpy.array([0, 2, 3, 4, 1, 5])[kinds]


_TIE = _TieOrder()
