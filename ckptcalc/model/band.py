"""How sure the answer is: the MTBF's interval carried through the model, and the robust interval.

With the job MTBF known only to lie in [M_lo, M_hi] (docs/model.md §9), this
reports the effective-time band at the schedule run, the optimal interval at
either end, and the *robust* schedule: the one whose worst regret

    max over M in {M_lo, M_hi} of  effective*(M) − effective(schedule, M)

is smallest (effective* being the optimum at that M). For one level the
regrets are monotone between the two optima, so the robust interval is
where they are equal, found by bisection. For two levels the same is done
for each whole multiple m near the two optima, and the best m kept. With
only a lower bound (no failure seen) there is no upper end: the robust
schedule is the optimum at the bound.

Pure: floats in SI units, no I/O.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from ckptcalc.model import exact
from ckptcalc.model import tiers as nested
from ckptcalc.model.evaluation import Config, Result, effective_at, evaluate, schedule_of
from ckptcalc.records import Record


class Band(Record):
    """The answer across the MTBF's 95 % interval; pairs are (at M_lo, at M_hi), None at an open end.

    ``robust_*`` describe the minimax-regret schedule (``robust_interval_s`` between storage
    checkpoints; with a memory level also its memory interval and multiple). Regrets are in
    percentage points of effective time: ``point_regret_pp`` is the worst regret of the optimum
    at the point estimate, ``robust_regret_pp`` that of the robust schedule.
    """

    mtbf_s: tuple[float, float | None]
    effective: tuple[float, float | None]
    optimal_interval_s: tuple[float, float | None]
    optimal_effective: tuple[float, float | None]
    robust_interval_s: float
    robust_memory_interval_s: float | None
    robust_storage_every: float | None
    robust_effective: tuple[float, float | None]
    robust_regret_pp: float | None
    point_regret_pp: float | None


class _End(Record):
    """One end of the interval: its M, the optimum there and its effective time."""

    mtbf_s: float
    best: exact.Schedule | nested.Tiers
    effective: float


def _end(config: Config, mtbf: float) -> _End:
    at = config.replace(mtbf_s=mtbf).optimal()
    result = evaluate(at)
    return _End(mtbf, schedule_of(at, result, optimal=True), float(result.optimal_effective))


def band(config: Config, result: Result, low: float, high: float | None) -> Band:
    """``result`` (the model of ``config`` at its point MTBF) across [low, high]."""
    run = schedule_of(config, result)
    point = schedule_of(config, result, optimal=True)
    lo = _end(config, low)
    hi = _end(config, high) if high is not None else None
    two = config.has_memory
    if hi is None:
        robust = lo.best
    elif config.is_nested:
        robust = _robust_nested(config, lo, hi)
    elif two:
        robust = _robust_two(config, lo, hi)
    else:
        robust = _robust_one(config, lo, hi)

    def pair(schedule: exact.Schedule | nested.Tiers) -> tuple[float, float | None]:
        return effective_at(config, schedule, low), None if high is None else effective_at(config, schedule, high)

    def regret(schedule: exact.Schedule | nested.Tiers) -> float | None:
        if hi is None:
            return None
        return 100.0 * max(_regret(config, lo, schedule), _regret(config, hi, schedule))

    if hi is not None and regret(point) is not None and (regret(robust) or 0.0) > (regret(point) or 0.0):
        # The searches above cover the multiples near either end's optimum; where the point optimum's
        # schedule does better, it is the robust one found.
        robust = point
    at_high = None if hi is None else float(hi.best.storage_interval_s)
    return Band(
        mtbf_s=(low, high),
        effective=pair(run),
        optimal_interval_s=(float(lo.best.storage_interval_s), at_high),
        optimal_effective=(lo.effective, None if hi is None else hi.effective),
        robust_interval_s=float(robust.storage_interval_s),
        robust_memory_interval_s=float(robust.tau1_s) if two else None,
        robust_storage_every=float(_every(robust)) if two else None,
        robust_effective=pair(robust),
        robust_regret_pp=regret(robust),
        point_regret_pp=regret(point),
    )


def _every(schedule: exact.Schedule | nested.Tiers) -> float:
    return float(schedule.segments if isinstance(schedule, nested.Tiers) else schedule.every)


def _regret(config: Config, end: _End, schedule: exact.Schedule | nested.Tiers) -> float:
    return max(end.effective - effective_at(config, schedule, end.mtbf_s), 0.0)


def _with_tau1(schedule: exact.Schedule, tau: float) -> exact.Schedule:
    return schedule.replace(tau1_s=tau)


def _robust_one(config: Config, lo: _End, hi: _End) -> exact.Schedule:
    """One level: the interval between the two optima where the two regrets are equal."""
    best = lo.best
    assert isinstance(best, exact.Schedule)
    a, b = sorted((float(best.tau1_s), float(hi.best.tau1_s)))
    tau, _ = _minimax(config, lo, hi, lambda t: best.replace(tau1_s=t), a, b)
    return best.replace(tau1_s=tau)


def _robust_two(config: Config, lo: _End, hi: _End) -> exact.Schedule:
    """Two levels: for each whole m from just below the smaller optimal m to just above the larger,
    the memory interval with equal regrets between that m's two optima; the m with the least regret."""
    low_best, high_best = lo.best, hi.best
    assert isinstance(low_best, exact.Schedule) and isinstance(high_best, exact.Schedule)
    m_lo, m_hi = sorted((int(low_best.every), int(high_best.every)))
    found: list[tuple[float, float, exact.Schedule]] = []
    for m in range(max(1, m_lo - 2), m_hi + 3):
        base = low_best.replace(every=float(m))
        a, b = sorted((float(exact.best_tau1(base, lo.mtbf_s)), float(exact.best_tau1(base, hi.mtbf_s))))
        make: Callable[[float], exact.Schedule] = functools.partial(_with_tau1, base)
        tau, worst = _minimax(config, lo, hi, make, a, b)
        found.append((worst, m, base.replace(tau1_s=tau)))
    return min(found, key=lambda item: (item[0], item[1]))[2]


def _tiers_at(schedule: nested.Tiers, tau: float) -> nested.Tiers:
    return schedule.replace(tau1_s=tau)


def _robust_nested(config: Config, lo: _End, hi: _End) -> nested.Tiers:
    """Three or more tiers: the multiples of either end's optimum, each with the fastest interval of
    equal regrets between its optima at the two ends; the one with the least regret."""
    found: list[tuple[float, int, nested.Tiers]] = []
    for rank, end in enumerate((lo, hi)):
        base = end.best
        assert isinstance(base, nested.Tiers)
        a, b = sorted((float(nested.best_tau1(base, lo.mtbf_s)), float(nested.best_tau1(base, hi.mtbf_s))))
        make: Callable[[float], nested.Tiers] = functools.partial(_tiers_at, base)
        tau, worst = _minimax(config, lo, hi, make, a, b)
        found.append((worst, rank, base.replace(tau1_s=tau)))
    return min(found, key=lambda item: (item[0], item[1]))[2]


def _minimax(
    config: Config,
    lo: _End,
    hi: _End,
    at: Callable[[float], exact.Schedule | nested.Tiers],
    a: float,
    b: float,
) -> tuple[float, float]:
    """The τ in [a, b] (a ≤ b) minimising the larger regret, and that regret, for regrets that are
    monotone between the two optima (lo's rising, hi's falling)."""

    def gap(tau: float) -> float:
        schedule = at(tau)
        return _regret(config, lo, schedule) - _regret(config, hi, schedule)

    def worst(tau: float) -> float:
        schedule = at(tau)
        return max(_regret(config, lo, schedule), _regret(config, hi, schedule))

    if a == b or gap(a) >= 0.0:
        return a, worst(a)
    if gap(b) <= 0.0:
        return b, worst(b)
    left, right = math.log(a), math.log(b)
    for _ in range(200):
        middle = 0.5 * (left + right)
        if middle in (left, right):
            break
        if gap(math.exp(middle)) < 0.0:
            left = middle
        else:
            right = middle
    tau = math.exp(0.5 * (left + right))
    return tau, worst(tau)
