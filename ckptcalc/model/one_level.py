"""One checkpoint level in closed form: its exact split and its exact optimum (docs/model.md §3, §8.1–§8.2).

Failures renew at each failure (the time X to the next one counts from the
start of the restart) and strike during work, stalls and restarts alike. One
level with stall ``s``, persist lag ``P`` (0: synchronous) and restart ``r``
at job failure interval ``M`` spends on kept work

    effective(τ) = τ·e^{−(r+P)/M} / (M·(e^{(τ+s)/M} − 1)),

Daly's exact form with δ → s and r → r + P, and its optimum is
M·(1 + W₀(−e^{−(1 + s/M)})) raised to P. This is the fast path of the one
recursion of :mod:`ckptcalc.model.tiers` for L = 1, tested equal to it.

>>> split = single_split(interval_s=268.9, stall_s=3.24, lag_s=0.0, restart_s=600.0, mtbf_s=11160.0)
>>> round(split.effective, 4)
0.925
>>> round(lambert_interval(3.24, 11160.0), 1)
266.8
"""

from __future__ import annotations

from ckptcalc.model.arrays import Num, Scalar, lib
from ckptcalc.records import Record

#: Beyond e^{700} a float overflows: past it the forms are written in logs.
_LARGEST_EXPONENT = 700.0


class Split(Record):
    """Shares of elapsed time: kept work, stalls, re-done work and restarts (they sum to 1)."""

    effective: Num
    write: Num
    rework: Num
    restart: Num


def single_split(*, interval_s: Num, stall_s: Num, lag_s: Num, restart_s: Num, mtbf_s: Num) -> Split:
    """The exact split of one level. Failure cycles have mean M, so

    effective = τ·e^{−(r+P)/M} / (M·(e^{(τ+s)/M} − 1)),
    write = e^{−r/M}·(e^{s/M} − 1) / (e^{(τ+s)/M} − 1),   restart = 1 − e^{−r/M},

    written with expm1 and, once e^{(τ+s)/M} would overflow, in logs, so both tend to 0.
    """
    ns = lib(interval_s, stall_s, lag_s, restart_s, mtbf_s)
    tau, stall, lag, restart, mtbf = interval_s, stall_s, lag_s, restart_s, mtbf_s
    x = (tau + stall) / mtbf
    big = x > _LARGEST_EXPONENT
    grow = ns.expm1(ns.minimum(x, _LARGEST_EXPONENT))
    kept = tau / mtbf * ns.exp(-(restart + lag) / mtbf)
    eff = ns.where(big, tau / mtbf * ns.exp(-(restart + lag) / mtbf - x), kept / grow)
    stall_x = ns.minimum(stall / mtbf, _LARGEST_EXPONENT)
    write = ns.where(big, ns.exp(-restart / mtbf + stall_x - x), ns.exp(-restart / mtbf) * ns.expm1(stall_x) / grow)
    back = -ns.expm1(-restart / mtbf)
    rework = ns.maximum(1.0 - eff - write - back, 0.0)
    return Split(eff, write, rework, back)


def _excess(t: Num) -> Num:
    """t − 1 + e^{−t}, to full relative precision even for tiny t (a series below 0.1)."""
    ns = lib(t)
    horner: Num = 1.0 - t / 12.0
    for k in range(11, 2, -1):
        horner = 1.0 - t / k * horner
    series = t * t / 2.0 * horner
    direct = t + ns.expm1(-t)
    return ns.where(t < 0.1, series, direct)


def lambert_w0_plus_one(eps: Num) -> Num:
    """1 + W₀(−e^{−(1+ε)}) for ε > 0, to full relative precision.

    Writing 1 + W = 1 − e^{−t}, the defining equation W·e^W = −e^{−1−ε} becomes
    t − 1 + e^{−t} = ε: increasing and convex in t, so Newton's method started
    above the root converges to it monotonically. The start √(3ε) is above the
    root while ε < 0.3 (there t²/3 ≤ t − 1 + e^{−t}); 1 + ε always is.
    """
    ns = lib(eps)
    if ns is Scalar and eps <= 0:
        return 0.0
    t = ns.where(eps < 0.3, ns.sqrt(3.0 * eps), 1.0 + eps)
    for _ in range(100):
        step = (_excess(t) - eps) / -ns.expm1(-t)
        t = t - step
        if not ns.any(abs(step) > 1e-16 * t):
            break
    return -ns.expm1(-t)


def lambert_interval(stall_s: Num, mtbf_s: Num) -> Num:
    """The exact optimum of one synchronous level: M·(1 + W₀(−e^{−(1 + δ/M)})), independent of r."""
    return mtbf_s * lambert_w0_plus_one(stall_s / mtbf_s)


def best_interval(*, stall_s: Num, lag_s: Num, mtbf_s: Num) -> Num:
    """The exact optimum of one level: the Lambert-W interval with δ → s, raised to the lag."""
    return lib(stall_s, lag_s, mtbf_s).maximum(lambert_interval(stall_s, mtbf_s), lag_s)
