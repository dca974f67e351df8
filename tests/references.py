"""Hand-worked reference formulas of docs/model.md, written out independently of ckptcalc's code.

Tests compare the program against these; none of them calls into ckptcalc.
"""

from __future__ import annotations

import math


def daly(tau: float, delta: float, restart: float, mtbf: float) -> float:
    """docs/model.md §3: the exact effective time of one synchronous level, τ / (M·e^{r/M}·(e^{(τ+δ)/M} − 1)),
    in logarithms so that it underflows to 0 at extreme inputs instead of failing."""
    x = (tau + delta) / mtbf
    log_expm1 = x if x > 700 else math.log(math.expm1(x))
    return math.exp(math.log(tau / mtbf) - restart / mtbf - log_expm1)


def lambert(delta: float, mtbf: float) -> float:
    """docs/model.md §3: the exact optimum M·(1 + W₀(−e^{−(1+δ/M)})), as the root u of
    u + ln(1 − u) + δ/M = 0, by bisection."""
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if middle + math.log1p(-middle) + delta / mtbf > 0 else (low, middle)
    return mtbf * (low + high) / 2


def exact_best(delta: float, restart: float, mtbf: float, lag: float = 0.0) -> float:
    """docs/model.md §8.1–§8.2: one level's exact effective time at its optimum (r → r + P, τ ≥ P)."""
    tau = max(lambert(delta, mtbf), lag)
    return daly(tau, delta, restart + lag, mtbf)


def share_intervals(splits: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    """Each share's own 95 % interval from 20 independent runs: their mean ± t(0.975, 19) × its standard error.

    A share is compared with the width of its own interval, never with the effective time's: the shares of a
    split vary by different amounts (the restart share of a pool with spares far more than the useful one).
    """
    t975_19 = 2.093024054408263  # Student's t, 19 degrees of freedom (scipy.stats.t.ppf(0.975, 19))
    assert len(splits) == 20, "t(0.975, 19) is for 20 runs"
    found = {}
    for name in splits[0]:
        values = [split[name] for split in splits]
        mean = sum(values) / len(values)
        spread = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))
        found[name] = (mean - t975_19 * spread, mean + t975_19 * spread)
    return found
