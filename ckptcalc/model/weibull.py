"""One checkpoint level under Weibull failures: the renewal series, summed exactly (docs/model.md §8.7).

The failure clock starts afresh at each failure, so the time X to the next
one is drawn from the same law each time, counted from the moment the
restart begins. With survival S(t) = exp(−(t/λ)^k), λ = M / Γ(1 + 1/k), a
restart r, a persist lag P (0 when synchronous), work τ and stall s per
period p = τ + s, the shares of elapsed time are::

    effective = (τ/M) · Σ_{n≥1} S(r + P + n·p)
    write     = (1/M) · Σ_{n≥0} ∫ S over the stall of period n+1
    restart   = (1/M) · ∫_0^r S(t) dt
    rework    = 1 − effective − write − restart

With k = 1 these are the closed forms of the exponential model (a test).
The series is summed term by term while the terms change fast, and its
smooth remainder by the Euler–Maclaurin formula, whose integrals are
incomplete gamma functions: ∫_x^∞ S = M·Q(1/k, (x/λ)^k). Plain floats only;
no numpy, no scipy.

>>> split = weibull_split(interval_s=300.0, stall_s=3.24, lag_s=0.0, restart_s=600.0,
...                       mtbf_s=11160.0, shape=1.0)
>>> exponential = 300.0 * math.exp(-600.0 / 11160.0) / (11160.0 * math.expm1(303.24 / 11160.0))
>>> round(split.effective, 9), abs(split.effective - exponential) < 1e-12
(0.92485129, True)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from ckptcalc.model.numeric import gamma_q, golden_max
from ckptcalc.model.one_level import Split

#: Shapes the planner accepts: beyond them Γ(1 + 1/k) or the series leave floating point.
SHAPES = (0.1, 20.0)

#: The series is summed term by term while p·h(t) (the hazard over one period) exceeds this;
#: beyond it the Euler–Maclaurin remainder is below 1e-11 of the sum (tested against direct sums).
_SMOOTH = 0.1

#: Terms always summed one by one before the smooth remainder.
_FIRST = 16


def scale(mtbf_s: float, shape: float) -> float:
    """λ = M / Γ(1 + 1/k): the scale whose Weibull law has mean M."""
    return mtbf_s * math.exp(-math.lgamma(1.0 + 1.0 / shape))


@functools.cache
def _legendre(nodes: int = 8) -> tuple[tuple[float, float], ...]:
    """Gauss–Legendre nodes and weights on [0, 1], by Newton's method on P_n."""
    found = []
    for i in range(1, nodes + 1):
        x = math.cos(math.pi * (i - 0.25) / (nodes + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for j in range(2, nodes + 1):
                p0, p1 = p1, ((2 * j - 1) * x * p1 - (j - 1) * p0) / j
            derivative = nodes * (x * p1 - p0) / (x * x - 1.0)
            step = p1 / derivative
            x -= step
            if abs(step) < 1e-16:
                break
        found.append(((1.0 - x) / 2.0, 1.0 / ((1.0 - x * x) * derivative * derivative)))
    return tuple(found)


def _integral(f: Callable[[float], float], low: float, high: float) -> float:
    width = high - low
    return float(width * sum(w * f(low + width * x) for x, w in _legendre()))


class _Law:
    """S and its derivatives for one Weibull law, and the tail integral T(x) = ∫_x^∞ S."""

    def __init__(self, mtbf_s: float, shape: float) -> None:
        self.k = shape
        self.mean = mtbf_s
        self.lam = scale(mtbf_s, shape)

    def s(self, t: float) -> float:
        return math.exp(-((t / self.lam) ** self.k))

    def hazard(self, t: float) -> float:
        return float(self.k / self.lam * (t / self.lam) ** (self.k - 1.0))

    def derivatives(self, t: float) -> tuple[float, float, float]:
        """S′, S″ and S‴ at t."""
        k = self.k
        u = (t / self.lam) ** k
        s = math.exp(-u)
        if s == 0.0:  # far in the tail, S and its derivatives are 0, and t³ may be past the largest float
            return 0.0, 0.0, 0.0
        u1 = k * u / t
        u2 = u1 * (k - 1.0) / t
        u3 = u2 * (k - 2.0) / t
        return -u1 * s, (u1 * u1 - u2) * s, (-(u1**3) + 3.0 * u1 * u2 - u3) * s

    def tail(self, x: float) -> float:
        return self.mean * gamma_q(1.0 / self.k, (x / self.lam) ** self.k)


def _euler_maclaurin(
    law: _Law, base: Callable[[int], float], p: float, tau: float, first: int, last: int | None, stalls: bool
) -> tuple[float, float]:
    """Σ over n in [first, last) (last None: to infinity) of f(n) = S(b_n + p) and g(n) = ∫_τ^p S(b_n + v) dv.

    Σφ = ∫φ + (φ(first) − φ(last))/2 − (φ′(first) − φ′(last))/12 + (φ‴(first) − φ‴(last))/720,
    where the derivatives of f are p^j·S⁽ʲ⁾(b + p) and those of g the same difference across the stall.
    """

    def at(n: int) -> tuple[float, float]:
        b = base(n)
        s1, _, s3 = law.derivatives(b + p)
        f = law.tail(b + p) / p + law.s(b + p) / 2.0 - p * s1 / 12.0 + p**3 * s3 / 720.0
        if not stalls:
            return f, 0.0
        _, s2_end, _ = law.derivatives(b + p)
        _, s2_start, _ = law.derivatives(b + tau)
        g = (
            _integral(lambda v: law.tail(b + v), tau, p) / p
            + _integral(lambda v: law.s(b + v), tau, p) / 2.0
            - p * (law.s(b + p) - law.s(b + tau)) / 12.0
            + p**3 * (s2_end - s2_start) / 720.0
        )
        return f, g

    f_sum, g_sum = at(first)
    if last is not None:
        f_end, g_end = at(last)
        f_sum, g_sum = f_sum - f_end, g_sum - g_end
    return f_sum, g_sum


def _sums(law: _Law, a: float, tau: float, s: float, *, stalls: bool) -> tuple[float, float]:
    """(Σ_{n≥0} S(a + (n+1)p), Σ_{n≥0} ∫ S over the stall of period n+1), p = τ + s.

    The second sum only when ``stalls`` (a search needs the first alone).
    """
    p = tau + s
    stalls = stalls and s > 0.0

    def base(n: int) -> float:
        return a + n * p

    def direct(n: int) -> tuple[float, float]:
        b = base(n)
        g = _integral(lambda v: law.s(b + v), tau, p) if stalls else 0.0
        return law.s(b + p), g

    f_total = g_total = 0.0
    n = 0
    if law.k <= 1.0:
        # The hazard falls with t: once it is small over a period, the rest of the series is smooth.
        while n < _FIRST or p * law.hazard(base(n) + p) > _SMOOTH:
            f, g = direct(n)
            f_total, g_total = f_total + f, g_total + g
            n += 1
            if f <= 1e-30 * f_total or f < 1e-300:
                return f_total, g_total
        f, g = _euler_maclaurin(law, base, p, tau, n, None, stalls)
        return f_total + f, g_total + g
    # Wear-out (k > 1): smooth while the hazard is small, steep after; the smooth stretch in closed form.
    try:
        steep_t = law.lam * (_SMOOTH * law.lam / (p * law.k)) ** (1.0 / (law.k - 1.0))
    except OverflowError:  # k just above 1: the hazard stays small past any time a float holds
        steep_t = math.inf
    switch = int(min((steep_t - a) / p, 1e300)) - 1 if steep_t > a else 0
    while True:
        if n == _FIRST and switch > 2 * _FIRST:
            f, g = _euler_maclaurin(law, base, p, tau, n, switch, stalls)
            f_total, g_total = f_total + f, g_total + g
            n = switch
        f, g = direct(n)
        f_total, g_total = f_total + f, g_total + g
        n += 1
        if n > _FIRST and (f <= 1e-30 * f_total or f < 1e-300):
            return f_total, g_total


def weibull_split(
    *, interval_s: float, stall_s: float, lag_s: float, restart_s: float, mtbf_s: float, shape: float
) -> Split:
    """Shares of elapsed time of one level (synchronous when ``lag_s`` is 0) under Weibull failures."""
    law = _Law(mtbf_s, shape)
    # Stalls follow the timeline (period n ends r + n·p after the restart began); a checkpoint
    # keeps its work only once durable, P later: the two sums start from different points.
    completed, stalled = _sums(law, restart_s + lag_s, interval_s, stall_s, stalls=lag_s == 0.0)
    if lag_s > 0.0:
        _, stalled = _sums(law, restart_s, interval_s, stall_s, stalls=True)
    effective = interval_s / mtbf_s * completed
    restart = 1.0 - law.tail(restart_s) / mtbf_s
    write = stalled / mtbf_s
    return Split(effective, write, max(1.0 - effective - write - restart, 0.0), restart)


def weibull_effective(
    *, interval_s: float, stall_s: float, lag_s: float, restart_s: float, mtbf_s: float, shape: float
) -> float:
    """The effective-time share alone: what a search evaluates."""
    law = _Law(mtbf_s, shape)
    completed, _ = _sums(law, restart_s + lag_s, interval_s, stall_s, stalls=False)
    return interval_s / mtbf_s * completed


def weibull_optimum(
    *, stall_s: float, lag_s: float, restart_s: float, mtbf_s: float, shape: float, start_s: float
) -> float:
    """The interval τ ≥ P that maximises effective time, by golden section on log τ.

    The search starts from a bracket of 30× either side of ``start_s`` (the
    exponential optimum is a good one) and moves it while the best point
    sits on an edge; it stops at a relative width of 1e-10.
    """

    def value(log_tau: float) -> float:
        tau = max(math.exp(log_tau), lag_s)
        return weibull_effective(
            interval_s=tau, stall_s=stall_s, lag_s=lag_s, restart_s=restart_s, mtbf_s=mtbf_s, shape=shape
        )

    floor = math.log(lag_s) if lag_s > 0.0 else -math.inf
    low, high = max(math.log(start_s) - math.log(30.0), floor), math.log(start_s) + math.log(30.0)
    for _ in range(40):
        best = golden_max(value, low, high, 1e-10)
        if high - best < 1e-6:
            low, high = high - 1.0, high + math.log(30.0)
        elif best - low < 1e-6 and low > floor:
            low, high = max(low - math.log(30.0), floor), low + 1.0
        else:
            break
    tau = max(math.exp(best), lag_s)
    # The lag bound is a hard floor: a search that ends against it ends on it.
    return lag_s if lag_s > 0.0 and value(floor) >= value(math.log(tau)) else tau
