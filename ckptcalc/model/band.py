"""How sure the answer is: the MTBF's interval carried through the model, and the robust interval.

With the job MTBF known only to lie in [M_lo, M_hi] (docs/model.md §9), this
reports the effective-time band at the schedule run, the optimal interval at
either end, and the *robust* schedule: the one whose worst regret

    max over M in {M_lo, M_hi} of  effective*(M) − effective(schedule, M)

is smallest (effective* being the optimum at that M). At whole multiples
held, the regrets are monotone in τ₁ between the two optima, so the robust
τ₁ is where they are equal, found by bisection. The multiples tried are
every combination between the two ends' optima, one beyond on either side
(each tier's multiples from the smaller optimum's less 2 to the larger's
plus 2; the ends' own multiples and their neighbours where that would be
too many), and the one with the least worst regret is kept. One level has
no multiples: it is the same search with none. With only a lower bound (no
failure seen) there is no upper end: the robust schedule is the optimum at
the bound.

Pure: floats in SI units, no I/O.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable

from ckptcalc.model import search
from ckptcalc.model.evaluation import Config, Result, effective_at, evaluate, schedule_of
from ckptcalc.model.tiers import Tiers
from ckptcalc.records import Record

#: The most combinations of multiples the robust search tries one by one.
MAX_CANDIDATES = 64


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
    best: Tiers
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
    robust = lo.best if hi is None else _robust(config, lo, hi)

    def pair(schedule: Tiers) -> tuple[float, float | None]:
        return effective_at(config, schedule, low), None if high is None else effective_at(config, schedule, high)

    def regret(schedule: Tiers) -> float | None:
        if hi is None:
            return None
        return 100.0 * max(_regret(config, lo, schedule), _regret(config, hi, schedule))

    if hi is not None and regret(point) is not None and (regret(robust) or 0.0) > (regret(point) or 0.0):
        # The search above covers the multiples near either end's optimum; where the point optimum's
        # schedule does better, it is the robust one found.
        robust = point
    two = config.has_memory
    at_high = None if hi is None else float(hi.best.storage_interval_s)
    return Band(
        mtbf_s=(low, high),
        effective=pair(run),
        optimal_interval_s=(float(lo.best.storage_interval_s), at_high),
        optimal_effective=(lo.effective, None if hi is None else hi.effective),
        robust_interval_s=float(robust.storage_interval_s),
        robust_memory_interval_s=float(robust.tau1_s) if two else None,
        robust_storage_every=float(robust.segments) if two else None,
        robust_effective=pair(robust),
        robust_regret_pp=regret(robust),
        point_regret_pp=regret(point),
    )


def _regret(config: Config, end: _End, schedule: Tiers) -> float:
    return max(end.effective - effective_at(config, schedule, end.mtbf_s), 0.0)


def _with_tau1(schedule: Tiers, tau: float) -> Tiers:
    return schedule.replace(tau1_s=tau)


def candidates(lo: Tiers, hi: Tiers) -> list[tuple[float, ...]]:
    """The multiples the robust search tries: every combination of each tier's multiples from the two
    optima's smaller less 2 to their larger plus 2, or, where that makes more than
    :data:`MAX_CANDIDATES`, the two optima's own multiples and each one's neighbours (m ± 1 per tier)."""
    ranges = []
    for a, b in zip(lo.every, hi.every, strict=True):
        small, large = sorted((int(a), int(b)))
        ranges.append(range(max(1, small - 2), large + 3))
    if math.prod(len(r) for r in ranges) <= MAX_CANDIDATES:
        return [tuple(float(m) for m in combo) for combo in itertools.product(*ranges)]
    found: list[tuple[float, ...]] = []
    for end in (lo.every, hi.every):
        for j in range(len(end)):
            for step in (-1.0, 0.0, 1.0):
                moved = (*end[:j], max(float(end[j]) + step, 1.0), *end[j + 1 :])
                if moved not in found:
                    found.append(tuple(float(m) for m in moved))
    return found


def _robust(config: Config, lo: _End, hi: _End) -> Tiers:
    """The schedule of least worst regret: for each candidate set of multiples, the τ₁ of equal
    regrets between that schedule's two optima; the candidate with the least regret (the fewer
    checkpoints on a tie)."""
    found: list[tuple[float, float, Tiers]] = []
    for every in candidates(lo.best, hi.best):
        base = lo.best.replace(every=every)
        # An end's own multiples take its own optimum (which is Weibull's under Weibull failures).
        ends = tuple(
            float(end.best.tau1_s) if end.best.every == every else float(search.best_tau1(base, end.mtbf_s))
            for end in (lo, hi)
        )
        a, b = sorted(ends)
        make: Callable[[float], Tiers] = functools.partial(_with_tau1, base)
        tau, worst = _minimax(config, lo, hi, make, a, b)
        found.append((worst, float(base.segments), base.replace(tau1_s=tau)))
    return min(found, key=lambda item: (item[0], item[1]))[2]


def _minimax(
    config: Config,
    lo: _End,
    hi: _End,
    at: Callable[[float], Tiers],
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
