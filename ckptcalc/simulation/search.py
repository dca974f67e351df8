"""The search over simulated schedules: the intervals that maximise simulated effective time.

Every trial runs the same draws (common random numbers), so the differences
between trials are the schedules', not the noise's. One tier: the interval τ
by golden section on a log scale; two tiers: τ₁ for each whole multiple m
(golden section), then the best m (a search over whole numbers).

>>> from ckptcalc.simulation.timeline import Failures, Schedule
>>> start = Schedule.single(interval_s=600.0, stall_s=60.0, restart_s=300.0)
>>> found = optimize_schedule(start, Failures(3600.0), cycles=2_000, seed=1)
>>> 300.0 < found.interval_s < 1300.0  # Young's interval √(2·60·3600) ≈ 657 s
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ckptcalc.errors import InputError
from ckptcalc.model.evaluation import Config, evaluate, optimal_interval
from ckptcalc.model.numeric import golden_max
from ckptcalc.simulation.timeline import DEFAULT_SEED, Failures, Schedule, run_schedule, schedule_of


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


def search_schedule(
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
        assert result.storage_every is not None
        m = max(int(result.storage_every), math.ceil(lag / tau))
        while m * tau < lag:
            m += 1
        every = (m,)
    start = schedule_of(result, every)
    return optimize_schedule(start, failures, cycles=cycles, seed=seed, iterations=iterations)


def optimize_schedule(
    schedule: Schedule, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED, iterations: int = 40
) -> Search:
    """:func:`search_schedule` starting from ``schedule``'s stalls, restarts and shares (its intervals are ignored)."""
    if schedule.tiers > 2:
        raise InputError("the simulated search covers one or two levels", where="search")
    runs: dict[tuple[float, tuple[int, ...]], float] = {}

    def value(tau: float, every: tuple[int, ...]) -> float:
        key = (tau, every)
        if key not in runs:
            runs[key] = run_schedule(schedule.with_intervals(tau, every), failures, cycles=cycles, seed=seed).effective
        return runs[key]

    mtbf = failures.mtbf_s
    lag = schedule.lag_s
    if schedule.tiers == 1:
        young = float(optimal_interval(schedule.stalls[0], lag, mtbf))
        low = max(young / 20.0, lag)
        high = max(young * 20.0, low * 4.0)
        if failures.shape is not None:
            high = max(high, mtbf)
        best = max(math.exp(_golden(lambda log_tau: value(max(math.exp(log_tau), low), ()), low, high, 1e-3,
                                    iterations)), low)  # fmt: skip
        effective = value(best, ())
        return Search(schedule.with_intervals(best), effective, len(runs))

    (s1, s2), q = schedule.stalls, schedule.shares[0]
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
                tried.append((value(tau, (every,)), tau))
                return tried[-1][0]

            _golden(at, low, high, MEMORY_TOLERANCE, iterations)
            effective, tau = max(tried)
            memory_best[every] = (effective, tau)
        return memory_best[every][0]

    (first,) = schedule.every
    every = _integer_peak(best_memory_interval, 1, max(8, 4 * first), MAX_STORAGE_EVERY)
    effective, tau = memory_best[every]
    return Search(schedule.with_intervals(tau, (every,)), effective, len(runs))


def _at_least(lag: float, every: int) -> float:
    """The shortest τ₁ with every·τ₁ ≥ lag in floating point."""
    tau = lag / every
    while every * tau < lag:
        tau = math.nextafter(tau, math.inf)
    return tau


def _golden(value: Callable[[float], float], low: float, high: float, tolerance: float, iterations: int) -> float:
    """Golden-section search for the maximum of ``value(log τ)`` over [ln low, ln high]; the midpoint found."""
    return float(golden_max(value, math.log(low), math.log(high), tolerance, iterations))


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
