"""Plain-Python numerics: the incomplete gamma function, χ² quantiles and a golden-section search.

``optimize --failures N --window T`` gives the MTBF its exact χ² interval
and a Weibull planner integrates the survival function's tail; both need the
regularised incomplete gamma function. scipy has it, but importing scipy
costs more than the whole ``optimize --json`` run, so it is computed here
(series below the mean, continued fraction above) and checked against scipy
in the tests.

>>> round(chi2_quantile(0.975, 12), 4)
23.3367
>>> round(gamma_q(2.0, 1.0), 12) == round(2.0 / math.e, 12)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ckptcalc.model.arrays import Scalar, lib
from ckptcalc.model.statistics import no_failure_bound

_EPS = 1e-16
_TINY = 1e-300
_MAX_TERMS = 10_000_000

#: Degrees of freedom above which χ² quantiles come from the Wilson–Hilferty approximation.
_WILSON_HILFERTY = 2e6


def _prefix(a: float, x: float) -> float:
    """x^a e^{-x} / Γ(a), in logarithms so that neither factor overflows."""
    return math.exp(a * math.log(x) - x - math.lgamma(a))


def _series(a: float, x: float) -> float:
    """P(a, x) by its power series; converges fast for x < a + 1."""
    term = total = 1.0 / a
    n = a
    for _ in range(_MAX_TERMS):
        n += 1.0
        term *= x / n
        total += term
        if term < total * _EPS:
            break
    return total * _prefix(a, x)


def _fraction(a: float, x: float) -> float:
    """Q(a, x) by its continued fraction (modified Lentz); converges fast for x ≥ a + 1.

    Where the prefix x^a e^{-x}/Γ(a) underflows, Q (the prefix times a fraction below 1) is 0 in
    double precision: returned at once. The fraction itself would not converge there (past 2^53,
    ``b += 2`` no longer moves ``b``) and would run all of :data:`_MAX_TERMS`.
    """
    prefix = _prefix(a, x)
    if prefix == 0.0:
        return 0.0
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = d if abs(d) > _TINY else _TINY
        c = b + an / c
        c = c if abs(c) > _TINY else _TINY
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1.0) < _EPS:
            break
    return h * prefix


def gamma_p(a: float, x: float) -> float:
    """The regularised lower incomplete gamma function P(a, x) = γ(a, x)/Γ(a), for a > 0, x ≥ 0."""
    if x <= 0.0:
        return 0.0
    if math.isinf(x):
        return 1.0
    return _series(a, x) if x < a + 1.0 else 1.0 - _fraction(a, x)


def gamma_q(a: float, x: float) -> float:
    """The regularised upper incomplete gamma function Q(a, x) = 1 − P(a, x), accurate in its tail."""
    if x <= 0.0:
        return 1.0
    if math.isinf(x):
        return 0.0
    return 1.0 - _series(a, x) if x < a + 1.0 else _fraction(a, x)


def chi2_quantile(probability: float, dof: float) -> float:
    """χ²(p; ν): the value a chi-squared variable with ν degrees of freedom stays below with probability p.

    Solved by bisection on P(ν/2, x/2) = p (on Q for p above ½, where P would
    lose digits), from a bracket grown around the Wilson–Hilferty guess.
    """
    if not (0.0 < probability < 1.0) or not dof > 0.0:
        raise ValueError(f"need 0 < p < 1 and ν > 0, got p={probability}, ν={dof}")
    z = _normal_quantile(probability)
    if dof > _WILSON_HILFERTY:
        # Beyond this the bisection's series grow long; the cube-root normal approximation is then
        # within 2e-11 (its error falls as 1/ν; tested against scipy).
        return dof * (1.0 - 2.0 / (9.0 * dof) + z * math.sqrt(2.0 / (9.0 * dof))) ** 3
    a = dof / 2.0
    upper = probability > 0.5

    def below(x: float) -> bool:
        """Whether x lies below the quantile."""
        if upper:
            return gamma_q(a, x / 2.0) > 1.0 - probability
        return gamma_p(a, x / 2.0) < probability

    guess = dof * max(1.0 - 2.0 / (9.0 * dof) + z * math.sqrt(2.0 / (9.0 * dof)), 0.05) ** 3
    low = high = max(guess, 1e-300)
    while below(high):
        high *= 2.0
    while not below(low) and low > 1e-300:
        low /= 2.0
    for _ in range(2000):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if below(middle):
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def mtbf_interval(interruptions: int, window_s: float) -> tuple[float, float | None]:
    """The exact 95 % interval of M = T/n from n interruptions in a window T (time-truncated):
    [2T/χ²(0.975; 2n+2), 2T/χ²(0.025; 2n)]; with none, only the bound T/ln 20 and no upper end.

    >>> [round(x, 2) for x in mtbf_interval(5, 1000.0)]
    [85.7, 615.96]
    """
    if interruptions == 0:
        return no_failure_bound(window_s), None
    n, t = interruptions, window_s
    return 2.0 * t / chi2_quantile(0.975, 2 * n + 2), 2.0 * t / chi2_quantile(0.025, 2 * n)


def mtbf_interval_over(failures: Iterable[int], mtbf_s: float) -> tuple[float, float | None]:
    """:func:`mtbf_interval` of an MTBF ``mtbf_s`` measured over ``failures`` counted in parts (a log's
    group-local and whole-job failures, every one with every group up): n failures in n·M.

    >>> [round(x, 2) for x in mtbf_interval_over((3, 2), 200.0)]
    [85.7, 615.96]
    """
    n = sum(failures)
    return mtbf_interval(n, n * mtbf_s)


def _normal_quantile(p: float) -> float:
    """The standard-normal quantile: a rational first guess, then Newton steps on Φ(z) = p."""
    t = math.sqrt(-2.0 * math.log(min(p, 1.0 - p)))
    z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t**3)
    z = z if p > 0.5 else -z
    for _ in range(8):
        phi = 0.5 * math.erfc(-z / math.sqrt(2.0))
        step = (phi - p) / (math.exp(-z * z / 2.0) / math.sqrt(2.0 * math.pi))
        z -= step
        if abs(step) < 1e-15 * max(1.0, abs(z)):
            break
    return z


_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def golden_max(value: Callable[[Any], Any], a: Any, b: Any, tolerance: float, iterations: int = 200) -> Any:
    """The midpoint of the last bracket of a golden-section search for the maximum of a unimodal
    ``value`` on [a, b], once narrower than ``tolerance`` or after ``iterations`` steps: the one
    golden section of the model, its optimiser and the simulation's search. ``a`` and ``b`` may be
    numpy arrays (each point its own bracket): then every point takes all ``iterations`` steps, so
    that arrays and floats take the same path.

    >>> round(golden_max(lambda x: -(x - 2.0) ** 2, 0.0, 5.0, 1e-9), 6)
    2.0
    """
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = value(c), value(d)
    # Arrays where the bracket or the values are (a float bracket over a grid of jobs is a grid of searches).
    ns = lib(a, b, fc, fd)
    for _ in range(iterations):
        left = fc >= fd  # the maximum lies in [a, d]
        a, b = ns.where(left, a, c), ns.where(left, d, b)
        c_new = ns.where(left, b - _GOLDEN * (b - a), d)
        d_new = ns.where(left, c, a + _GOLDEN * (b - a))
        f_new = value(ns.where(left, c_new, d_new))
        fc, fd = ns.where(left, f_new, fd), ns.where(left, fc, f_new)
        c, d = c_new, d_new
        if ns is Scalar and b - a < tolerance:
            break
    return (a + b) / 2.0
