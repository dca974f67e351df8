"""Monte Carlo ground truth: the training timeline itself, drawn with numpy.

Renewal assumption (as the analytic model): the failure clock starts afresh at
each failure, so the time X to the next failure counts from the moment the
restart begins, and a restart can itself be interrupted. One *cycle* is the
time between two failures: a restart, then segments of τ useful work each
followed by a checkpoint stall, until the failure; the work since the last
durable checkpoint of the level that serves the failure is lost.

* One level (synchronous or asynchronous): cycles are independent, so every
  cycle is one draw and the whole run is array arithmetic, in chunks.
* Memory + storage: what a storage failure loses depends on earlier cycles,
  so independent timelines advance in lockstep, one cycle per step, each step
  vectorised across the timelines. Storage checkpoints are taken at every
  k-th memory checkpoint (k = storage interval / memory interval, rounded).

Everything is driven by an explicit ``numpy.random.Generator``; the same seed
gives the same result bit for bit, and the same draws whatever the interval
(common random numbers).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import InputError
from .model import Config, evaluate, exact_effective, replace

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
    interval_s: float
    memory_interval_s: float | None
    storage_every: int | None  # memory checkpoints per storage checkpoint


def renewal_effective(interval_s: float, delta_s: float, restart_s: float, failures: Failures) -> float:
    """(τ/M)·Σ_{n≥1} S(r + n(τ+δ)): kept work per unit time for one synchronous level."""
    import numpy

    period = interval_s + delta_s
    total = 0.0
    start = 1
    while True:
        n = numpy.arange(start, start + 65536, dtype=float)
        terms = failures.survival(restart_s + n * period)
        total += float(terms.sum())
        if terms[-1] < 1e-18 * max(total, 1e-300):
            break
        start += 65536
        if start > 10**9:  # pragma: no cover - only for absurd inputs
            break
    return interval_s / failures.mtbf_s * total


def analytic(config: Config, failures: Failures) -> tuple[float, float | None]:
    """First-order and exact effective time at the configuration's intervals.

    The exact value is Daly's formula for exponential failures or the renewal
    series for Weibull ones, for a single synchronous level; None otherwise.
    """
    result = evaluate(config)
    first = float(result.effective)
    if not config.is_single_sync:
        return first, None
    tau = float(result.interval_s)
    delta, restart = float(config.write_s), float(config.restart_s)
    if failures.shape is None:
        return first, float(exact_effective(tau, delta, restart, float(config.mtbf_s)))
    return first, renewal_effective(tau, delta, restart, failures)


def check(cycles: float, shape: float | None) -> int:
    if not math.isfinite(cycles) or cycles <= 0 or not float(cycles).is_integer():
        raise InputError(f"must be a positive whole number, got {cycles:g}", where="--cycles")
    if cycles < BATCHES * 10:
        raise InputError(f"at least {BATCHES * 10} cycles are needed for a confidence interval", where="--cycles")
    if cycles > MAX_CYCLES:
        raise InputError(f"at most {MAX_CYCLES:.0e} cycles", where="--cycles")
    if shape is not None and not (math.isfinite(shape) and shape > 0):
        raise InputError(f"must be positive, got {shape:g}", where="--shape")
    return int(cycles)


def run(
    config: Config,
    failures: Failures,
    *,
    cycles: int,
    seed: int = DEFAULT_SEED,
    progress: Callable[[float], None] | None = None,
) -> Simulation:
    """Simulate ``cycles`` failure cycles of ``config`` at its intervals (optimal where unset)."""
    result = evaluate(config)
    if config.has_memory:
        return _run_levels(config, result, failures, cycles, seed, progress)
    return _run_single(config, result, failures, cycles, seed, progress)


def _summary(sums: Any, batch_effective: Any, cycles: int, in_restart: int, seed: int, **intervals: Any) -> Simulation:
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
        **intervals,
    )


def _run_single(
    config: Config, result: Any, failures: Failures, cycles: int, seed: int, progress: Callable[[float], None] | None
) -> Simulation:
    import numpy

    (level,) = result.levels
    tau = float(level.interval_s)
    stall, lag, restart = float(level.level.stall_s), float(level.level.lag_s), float(level.level.restart_s)
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
        numpy.minimum(xv, restart, out=xv)
        restarting = float(xv.sum())
        numpy.maximum(wv, 0.0, out=wv)
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
        numpy.maximum(tv, 0.0, out=tv)  # the stall cut short by the failure
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

    per_batch = cycles // BATCHES
    sizes = [per_batch + (1 if i < cycles % BATCHES else 0) for i in range(BATCHES)]
    totals = numpy.zeros(4)  # time, useful, write, restart
    batch_effective = numpy.empty(BATCHES)
    done = 0
    for b, size in enumerate(sizes):
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
    return _summary(totals, batch_effective, cycles, in_restart, seed, interval_s=tau, memory_interval_s=None,
                    storage_every=None)  # fmt: skip


def _run_levels(
    config: Config, result: Any, failures: Failures, cycles: int, seed: int, progress: Callable[[float], None] | None
) -> Simulation:
    import numpy

    memory, storage = result.levels
    tau = float(memory.interval_s)
    every = max(1, round(float(storage.interval_s) / tau))
    s1, s2 = float(memory.level.stall_s), float(storage.level.stall_s)
    lag = float(storage.level.lag_s)
    r1, r2 = float(memory.level.restart_s), float(storage.level.restart_s)
    survival = float(memory.level.share)
    segment = tau + s1
    period = every * segment + s2  # one storage checkpoint's worth of memory segments

    rng = numpy.random.default_rng(seed)
    streams = BATCHES * 64
    steps = -(-cycles // streams)
    burn_in = min(2000, int(5.0 / max(1.0 - survival, 1e-3)))
    phase = numpy.zeros(streams, dtype=numpy.int64)  # memory checkpoints since the last storage one
    from_memory = numpy.zeros(streams, dtype=bool)  # how the restart at the start of the cycle recovers
    sums = numpy.zeros((4, streams))  # time, useful, write, restart
    in_restart = 0
    counted = 0
    for step in range(burn_in + steps):
        live = step >= burn_in
        x = failures.draw(rng, streams)
        served_by_memory = rng.random(streams) < survival
        restart = numpy.where(from_memory, r1, r2)
        work = x - restart
        interrupted = work < 0
        numpy.maximum(work, 0.0, out=work)
        # Completed memory checkpoints j from phase c: checkpoint u = c + j ends at
        # (u − c)·segment + s2·⌊u/k⌋; the largest u within the work time:
        shifted = work + phase * segment
        rounds = numpy.floor(shifted / period)
        rest = numpy.minimum(every - 1, numpy.floor((shifted - rounds * period) / segment))
        done_u = (rounds * every + rest).astype(numpy.int64)
        done = done_u - phase
        used = done * segment + rounds * s2
        tail = work - used
        stalls = done * s1 + rounds * s2 + numpy.clip(tail - tau, 0.0, s1 + s2)
        # Memory failure: back to the last memory checkpoint. Storage failure: back
        # to the last durable storage checkpoint, possibly from earlier cycles.
        last_storage = rounds * every  # in u; durable unless within ``lag`` of the failure
        since_storage = work - ((last_storage - phase) * segment + rounds * s2)
        durable = rounds - ((since_storage < lag) & (rounds > 0))
        kept_storage = numpy.where(durable > 0, (durable * every - phase) * tau, -phase * tau)
        kept = numpy.where(served_by_memory, done * tau, kept_storage)
        kept = numpy.where(interrupted, numpy.where(served_by_memory, 0.0, -phase * tau), kept)
        stalls = numpy.where(interrupted, 0.0, stalls)
        new_phase = numpy.where(served_by_memory, done_u % every, 0)
        phase = numpy.where(interrupted, numpy.where(served_by_memory, phase, 0), new_phase)
        from_memory = served_by_memory
        if live:
            sums[0] += x
            sums[1] += kept
            sums[2] += stalls
            sums[3] += numpy.minimum(x, restart)
            in_restart += int(numpy.count_nonzero(interrupted))
            counted += streams
            if progress is not None:
                progress(counted / (steps * streams))
    by_batch = sums.reshape(4, BATCHES, -1).sum(axis=2)
    return _summary(sums.sum(axis=1), by_batch[1] / by_batch[0], counted, in_restart, seed,
                    interval_s=float(storage.interval_s), memory_interval_s=tau, storage_every=every)  # fmt: skip


@dataclass(frozen=True)
class Search:
    interval_s: float
    effective: float
    evaluations: int


def optimize(
    config: Config, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED, iterations: int = 40
) -> Search:
    """Golden-section search of the storage interval on a log scale, common random numbers throughout."""
    base = evaluate(config.optimal())
    young = float(base.optimal_interval_s)
    lag = float(base.storage.level.lag_s)
    memory = float(base.levels[0].optimal_interval_s) if config.has_memory else None
    low = max(young / 20.0, lag, memory or 0.0)
    high = max(young * 20.0, low * 4.0)
    if failures.shape is not None:
        high = max(high, failures.mtbf_s)

    def value(tau: float) -> float:
        changed = replace(config, interval_s=tau, memory_interval_s=memory)
        return run(changed, failures, cycles=cycles, seed=seed).effective

    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = math.log(low), math.log(high)
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = value(math.exp(c)), value(math.exp(d))
    evaluations = 2
    for _ in range(iterations):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = value(math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = value(math.exp(d))
        evaluations += 1
        if b - a < 1e-3:
            break
    best = math.exp((a + b) / 2.0)
    return Search(best, value(best), evaluations + 1)
