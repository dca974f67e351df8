"""The exact model of every checkpointing strategy under exponential failures.

Pure arithmetic in SI units on floats or numpy arrays (docs/model.md §8).
Failures renew at each failure (the time X to the next one counts from the
start of the restart), strike during work, stalls and restarts alike, and
E[min(X, w)] = M·(1 − e^{−w/M}).

Every strategy is one *schedule*: a memory checkpoint after every τ₁ of
useful work (stall s₁), every m-th of them also a storage checkpoint (that
boundary stalls s₁ + s₂), the storage copy durable P of progress after its
stall; a failure is served by memory with probability q (restart r₁, back to
the last memory checkpoint), otherwise by storage (restart r₂, back to the
last durable storage checkpoint). A single level is the schedule with q = 0,
s₁ = 0 and m = 1, so one recursion covers

* one synchronous level (Daly's exact model),
* one asynchronous level (the same with δ → s and r → r + P),
* memory + synchronous storage, and memory + asynchronous storage.

The renewal cycle runs from one storage commit (the moment a storage copy
becomes durable) to the next. Its expected length and its split into
stalls, restarts and the rest come from a backward recursion over the
memory segments between the last durable storage copy and the next commit;
runs of identical segments are summed in closed form, so the cost does not
grow with m.

>>> round(effective(Schedule(tau1_s=268.9, every=1, s1_s=0.0, s2_s=3.24, lag_s=0.0,
...     share=0.0, r1_s=600.0, r2_s=600.0), 11160.0).effective, 4)
0.925
"""

from __future__ import annotations

import math
from typing import Any, TypeAlias

from ckptcalc.records import Record

Num: TypeAlias = Any

#: Golden-section steps of the numerical interval search (relative precision about 1e-8 in τ).
SEARCH_STEPS = 40

#: How far below and above the first-order interval the search looks.
SEARCH_BELOW, SEARCH_ABOVE = 64.0, 2.0

#: The storage-multiple candidates tried around the first-order one, as powers of √2.
MULTIPLE_SPREAD = 4

#: Terms whose relative difference is below this are tied; a tie goes to the earlier term.
TIE = 1e-9


def _lib(*values: object) -> Any:
    if all(isinstance(v, (int, float)) for v in values):
        return _Math
    import numpy

    return numpy


class _Math:
    """The few numpy functions used here, for plain floats."""

    exp = staticmethod(math.exp)
    expm1 = staticmethod(math.expm1)
    log1p = staticmethod(math.log1p)
    floor = staticmethod(math.floor)
    ceil = staticmethod(math.ceil)
    sqrt = staticmethod(math.sqrt)
    isfinite = staticmethod(math.isfinite)

    @staticmethod
    def maximum(a: float, b: float) -> float:
        return a if a >= b else b

    @staticmethod
    def minimum(a: float, b: float) -> float:
        return a if a <= b else b

    @staticmethod
    def where(condition: bool, a: float, b: float) -> float:
        return a if condition else b

    @staticmethod
    def rint(a: float) -> float:
        return float(round(a))


class Schedule(Record):
    """One checkpointing schedule in SI units (fields may be numpy arrays).

    ``tau1_s`` useful work between memory checkpoints, ``every`` memory
    checkpoints per storage checkpoint (a whole number), ``s1_s`` and
    ``s2_s`` the memory and storage stalls, ``lag_s`` the storage persist
    time, ``share`` the share q of failures memory serves, ``r1_s`` and
    ``r2_s`` the restarts from memory and from storage.
    """

    tau1_s: Num
    every: Num
    s1_s: Num
    s2_s: Num
    lag_s: Num
    share: Num
    r1_s: Num
    r2_s: Num

    @property
    def storage_interval_s(self) -> Num:
        """Useful work between storage checkpoints, m·τ₁."""
        return self.every * self.tau1_s


class Split(Record):
    """Shares of elapsed time: kept work, stalls, re-done work and restarts (they sum to 1)."""

    effective: Num
    write: Num
    rework: Num
    restart: Num


def single(*, interval_s: Num, stall_s: Num, lag_s: Num, restart_s: Num) -> Schedule:
    """The schedule of one storage level (asynchronous when ``lag_s`` > 0)."""
    return Schedule(
        tau1_s=interval_s, every=1, s1_s=0.0, s2_s=stall_s, lag_s=lag_s, share=0.0, r1_s=restart_s, r2_s=restart_s
    )


# ----------------------------------------------------------------- the cycle


def _emin(w: Num, m: Num, lib: Any) -> Num:
    """E[min(X, w)] for X exponential with mean ``m``."""
    return -m * lib.expm1(-w / m)


def _piece(start: Num, end: Num, work: Num, mtbf: Num, lib: Any) -> tuple[Num, Num]:
    """Expected (time, stall time) spent in offsets [start, end] of a segment whose first
    ``work`` seconds are work and the rest a stall, entered at ``start``, until it ends or fails."""
    total = _emin(end - start, mtbf, lib)
    stall_from = lib.maximum(start, work)
    stall = lib.exp(-(stall_from - start) / mtbf) * _emin(lib.maximum(end - stall_from, 0.0), mtbf, lib)
    return total, stall


class _Recovery(Record):
    """What a failure costs before the job runs again (restart phases, MODEL §8)."""

    share: Num  # q
    g1: Num  # time in memory restarts until one succeeds or storage takes over
    pi1: Num  # the chance that memory restarts end in success
    rho: Num  # the chance a failure ends with a storage restart: 1 − q·π₁
    v2: Num  # time from a storage-served failure until running again from the storage copy


def _recovery(s: Schedule, mtbf: Num, lib: Any) -> _Recovery:
    q = s.share
    lost1 = -lib.expm1(-s.r1_s / mtbf)  # 1 − a₁: a failure strikes during the memory restart
    lost2 = -lib.expm1(-s.r2_s / mtbf)
    a1, a2 = 1.0 - lost1, 1.0 - lost2
    e1, e2 = _emin(s.r1_s, mtbf, lib), _emin(s.r2_s, mtbf, lib)
    retry = 1.0 - lost1 * q
    g1 = e1 / retry
    pi1 = a1 / retry
    # V₂ = e₂ + (1−a₂)(q·V₁′ + (1−q)·V₂) and V₁′ = e₁ + (1−a₁)(q·V₁′ + (1−q)·V₂):
    # the determinant of that pair simplifies to q·a₁ + (1−q)·a₂.
    v2 = _divide(retry * e2 + q * lost2 * e1, q * a1 + (1.0 - q) * a2, lib)
    return _Recovery(q, g1, pi1, 1.0 - q * pi1, v2)


def _divide(a: Num, b: Num, lib: Any) -> Num:
    """a / b, infinite where b underflowed to 0 (restarts thousands of MTBFs long)."""
    if lib is _Math:
        return a / b if b else math.inf
    return a / b


class _State(Record):
    """E_j = α_j + β_j·E₁ for the time from segment j to the commit; α as (time, stall, restart);
    ``log_gamma`` is log(1 − β_j), kept in logs so long paths neither underflow nor cancel."""

    alpha: tuple[Num, Num, Num]
    log_gamma: Num


class _Segment(Record):
    """One memory segment (or piece of one) as the recursion sees it."""

    cost: tuple[Num, Num, Num]  # per visit, including what a failure in it costs before re-entry
    lost: Num  # 1 − p: the chance a failure strikes in it
    log_b: Num  # log(p / D)
    rate: Num  # 1 / D


def _segment(length: Num, time: Num, stall: Num, rec: _Recovery, mtbf: Num, lib: Any) -> _Segment:
    """E = c + p·E_next + (1−p)·[q·(G₁ + π₁·E) + ρ·(V₂ + E₁)], solved for E = α + β·E₁."""
    lost = -lib.expm1(-length / mtbf)
    held = lost * rec.share * rec.pi1
    rate = 1.0 / (1.0 - held)
    restart = lost * (rec.share * rec.g1 + rec.rho * rec.v2)
    cost = ((time + restart) * rate, stall * rate, restart * rate)
    return _Segment(cost, lost, -length / mtbf - lib.log1p(-held), rate)


def _repeat(seg: _Segment, times: Num, after: _State, lib: Any) -> _State:
    """The state ``times`` identical segments before ``after`` (closed-form geometric sum)."""
    power = lib.exp(times * seg.log_b)
    # (1 − B^n)/(1 − B), accurate when B is close to 1; n when B is 1 (an empty segment).
    if lib is _Math:
        series = math.expm1(times * seg.log_b) / math.expm1(seg.log_b) if seg.log_b else times
    else:
        flat = seg.log_b == 0.0
        series = lib.where(flat, times, lib.expm1(times * seg.log_b) / lib.where(flat, 1.0, lib.expm1(seg.log_b)))
    alpha = tuple(c * series + power * a for c, a in zip(seg.cost, after.alpha, strict=True))
    return _State(alpha, times * seg.log_b + after.log_gamma)


def _cycle(s: Schedule, mtbf: Num, lib: Any) -> tuple[Num, Num, Num, Num]:
    """Expected (time, stall, restart) per cycle scaled by γ₁, and γ₁ (see :func:`effective`)."""
    rec = _recovery(s, mtbf, lib)
    tau, m, s1, s2, lag = s.tau1_s, s.every, s.s1_s, s.s2_s, s.lag_s
    width = tau + s1
    # The commit lies ``lag`` of progress past the snapshot: in memory segment k + 1 of the next
    # period, at offset u (the lag never reaches the next snapshot, since m·τ₁ ≥ P).
    k = lib.minimum(lib.floor(lag / width), m - 1.0)
    u = lag - k * width

    normal = _segment(width, *_piece(0.0, width, tau, mtbf, lib), rec, mtbf, lib)
    big_len = width + s2
    big = _segment(big_len, *_piece(0.0, big_len, tau, mtbf, lib), rec, mtbf, lib)
    tail = _segment(u, *_piece(0.0, u, tau, mtbf, lib), rec, mtbf, lib)

    end = _State((0.0, 0.0, 0.0), 0.0)
    # Backwards: the partial tail segment, k whole ones, then the period's m segments.
    after_tail = _repeat(tail, 1.0, end, lib)
    after_m = _repeat(normal, k, after_tail, lib)  # E_{m+1}
    at_m = _repeat(big, 1.0, after_m, lib)  # E_m
    # E_{k+2} and E_{k+1}: the segment the cycle starts in is k + 1 (≤ m).
    last = k + 1.0 >= m
    next_ = _repeat(normal, lib.maximum(m - k - 2.0, 0.0), at_m, lib)
    start_next = _select(last, after_m, next_, lib)
    start_here = _select(last, at_m, _repeat(normal, 1.0, next_, lib), lib)
    first = _repeat(normal, k, start_here, lib)  # E_1

    # The cycle starts at offset u of segment k + 1 and runs to its end, then on from E_{k+2}.
    start_len = lib.where(last, big_len, width) - u
    time, stall = _piece(u, u + start_len, tau, mtbf, lib)
    lost = -lib.expm1(-start_len / mtbf)
    held = rec.share * rec.pi1
    restart = lost * (rec.share * rec.g1 + rec.rho * rec.v2)
    a = (time + restart, stall, restart)
    alpha_c = tuple(
        x + (1.0 - lost) * an + lost * held * ah
        for x, an, ah in zip(a, start_next.alpha, start_here.alpha, strict=True)
    )
    beta_next = -lib.expm1(start_next.log_gamma)
    beta_here = -lib.expm1(start_here.log_gamma)
    b = (1.0 - lost) * beta_next + lost * (held * beta_here + rec.rho)
    gamma1 = lib.exp(first.log_gamma)
    # C = a + b·E₁ with E₁ = α₁/γ₁; returned multiplied by γ₁ so that γ₁ → 0 stays finite.
    scaled = tuple(ac * gamma1 + b * a1 for ac, a1 in zip(alpha_c, first.alpha, strict=True))
    return scaled[0], scaled[1], scaled[2], gamma1


def _select(condition: Num, a: _State, b: _State, lib: Any) -> _State:
    alpha = tuple(lib.where(condition, x, y) for x, y in zip(a.alpha, b.alpha, strict=True))
    return _State(alpha, lib.where(condition, a.log_gamma, b.log_gamma))


def effective(schedule: Schedule, mtbf_s: Num) -> Split:
    """The exact split of elapsed time for ``schedule`` at job failure interval ``mtbf_s``.

    effective = m·τ₁ / E[cycle]; stalls and restarts are their expected
    times per cycle over the same; rework is the rest. Beyond the range of
    floating point (restarts thousands of MTBFs long) the whole time counts
    as restart.
    """
    lib = _lib(*(getattr(schedule, name) for name in Schedule._fields), mtbf_s)
    if _is_single(schedule):
        with _quiet(lib):
            return _single_split(schedule, mtbf_s, lib)
    with _quiet(lib):
        time, stall, restart, gamma1 = _cycle(schedule, mtbf_s, lib)
        useful = schedule.every * schedule.tau1_s * gamma1
        eff = useful / time
        write = stall / time
        back = restart / time
    ok = (
        lib.isfinite(eff) & lib.isfinite(write) & lib.isfinite(back)
        if lib is not _Math
        else (math.isfinite(eff) and math.isfinite(write) and math.isfinite(back))
    )
    eff = lib.where(ok, eff, 0.0)
    write = lib.where(ok, write, 0.0)
    back = lib.where(ok, back, 1.0)
    rework = lib.maximum(1.0 - eff - write - back, 0.0)
    return Split(eff, write, rework, back)


def _is_single(s: Schedule) -> bool:
    """One level, as :func:`single` builds it: no memory share, no memory stall, m = 1 (plain floats)."""
    return all(isinstance(v, (int, float)) for v in (s.share, s.s1_s, s.every)) and (
        s.share == 0.0 and s.s1_s == 0.0 and s.every == 1
    )


def _single_split(s: Schedule, mtbf: Num, lib: Any) -> Split:
    """One level in closed form (docs/model.md §8.1–§8.2); failure cycles have mean M, so

    effective = τ·e^{−(r+P)/M} / (M·(e^{(τ+s)/M} − 1)),
    write = e^{−r/M}·(e^{s/M} − 1) / (e^{(τ+s)/M} − 1),   restart = 1 − e^{−r/M},

    written with expm1 and, once e^{(τ+s)/M} would overflow, in logs, so both tend to 0.
    """
    tau, stall, lag, restart = s.tau1_s, s.s2_s, s.lag_s, s.r2_s
    x = (tau + stall) / mtbf
    safe = lib.minimum(x, 700.0)
    grow = lib.expm1(safe)
    kept = tau / mtbf * lib.exp(-(restart + lag) / mtbf)
    eff = lib.where(x > 700.0, tau / mtbf * lib.exp(-(restart + lag) / mtbf - x), kept / grow)
    stall_part = lib.expm1(lib.minimum(stall / mtbf, 700.0))
    write = lib.where(
        x > 700.0,
        lib.exp(-restart / mtbf + lib.minimum(stall / mtbf, 700.0) - x),
        lib.exp(-restart / mtbf) * stall_part / grow,
    )
    back = -lib.expm1(-restart / mtbf)
    rework = lib.maximum(1.0 - eff - write - back, 0.0)
    return Split(eff, write, rework, back)


class _quiet:
    """numpy's floating-point warnings off for a block (overflow to inf is handled above)."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self.saved: Any = None

    def __enter__(self) -> None:
        if self.lib is not _Math:
            self.saved = self.lib.seterr(all="ignore")

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            self.lib.seterr(**self.saved)


# ------------------------------------------------------------------ optimum


def _excess(t: Num, lib: Any) -> Num:
    """t − 1 + e^{−t}, to full relative precision even for tiny t (a series below 0.1)."""
    horner = 1.0 - t / 12.0
    for k in range(11, 2, -1):
        horner = 1.0 - t / k * horner
    series = t * t / 2.0 * horner
    direct = t + lib.expm1(-t)
    return lib.where(t < 0.1, series, direct)


def lambert_w0_plus_one(eps: Num) -> Num:
    """1 + W₀(−e^{−(1+ε)}) for ε > 0, to full relative precision.

    Writing 1 + W = 1 − e^{−t}, the defining equation W·e^W = −e^{−1−ε} becomes
    t − 1 + e^{−t} = ε: increasing and convex in t, so Newton's method started
    above the root converges to it monotonically. The start √(3ε) is above the
    root while ε < 0.3 (there t²/3 ≤ t − 1 + e^{−t}); 1 + ε always is.
    """
    lib = _lib(eps)
    if lib is _Math and eps <= 0:
        return 0.0
    t = lib.where(eps < 0.3, lib.sqrt(3.0 * eps), 1.0 + eps)
    for _ in range(100):
        step = (_excess(t, lib) - eps) / -lib.expm1(-t)
        t = t - step
        done = abs(step) <= 1e-16 * t
        if done if lib is _Math else bool(done.all()):
            break
    return -lib.expm1(-t)


def lambert_interval(stall_s: Num, mtbf_s: Num) -> Num:
    """The exact optimum of one synchronous level: M·(1 + W₀(−e^{−(1 + δ/M)})), independent of r."""
    return mtbf_s * lambert_w0_plus_one(stall_s / mtbf_s)


def first_order_tau1(s: Schedule, mtbf_s: Num, lib: Any) -> Num:
    """Young's interval for the memory level when storage comes every m-th time:
    √(2·(s₁ + s₂/m)·M / (q + (1 − q)·m)), the minimiser of the first-order loss at that m."""
    m = s.every
    return lib.sqrt(2.0 * (s.s1_s + s.s2_s / m) * mtbf_s / (s.share + (1.0 - s.share) * m))


def _golden(value: Any, low: Num, high: Num, lib: Any) -> Num:
    """The maximiser of a unimodal ``value`` on [low, high], searched on a log scale, a fixed
    number of steps so that arrays and floats take the same path."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lib_log(low, lib), lib_log(high, lib)
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = value(lib.exp(c)), value(lib.exp(d))
    for _ in range(SEARCH_STEPS):
        left = fc >= fd  # the maximum lies in [a, d]
        a, b = lib.where(left, a, c), lib.where(left, d, b)
        c_new = lib.where(left, b - ratio * (b - a), d)
        d_new = lib.where(left, c, a + ratio * (b - a))
        fresh = lib.exp(lib.where(left, c_new, d_new))
        f_new = value(fresh)
        fc, fd = lib.where(left, f_new, fd), lib.where(left, fc, f_new)
        c, d = c_new, d_new
    return lib.exp((a + b) / 2.0)


def lib_log(x: Num, lib: Any) -> Num:
    return math.log(x) if lib is _Math else lib.log(x)


def _per_multiple(lag: Num, every: Num) -> Num:
    """The shortest τ₁ whose m·τ₁ is at least the lag: lag/m, nudged up past the rounding of the division."""
    return lag / every * (1.0 + 1e-15)


def best_tau1(s: Schedule, mtbf_s: Num) -> Num:
    """The memory interval that maximises effective time at the schedule's m (τ₁ ≥ P/m)."""
    lib = _lib(*(getattr(s, name) for name in Schedule._fields), mtbf_s)
    guess = first_order_tau1(s, mtbf_s, lib)
    low = lib.maximum(guess / SEARCH_BELOW, _per_multiple(s.lag_s, s.every))
    high = lib.maximum(guess * SEARCH_ABOVE, low * 2.0)

    def value(tau: Num) -> Num:
        return effective(s.replace(tau1_s=tau), mtbf_s).effective

    tau = _golden(value, low, high, lib)
    # The lag bound is a hard floor: a search that ends against it ends on it.
    return lib.where(value(low) >= value(tau), low, tau)


def best_multiple(s: Schedule, mtbf_s: Num, *, tau1_fixed: bool, storage_s: Num | None = None) -> Schedule:
    """The schedule with the best whole m (and τ₁ with it), m ≥ 1 and m·τ₁ ≥ P.

    ``tau1_fixed`` keeps the schedule's τ₁; ``storage_s`` keeps the storage
    interval m·τ₁ instead (τ₁ = storage / m); otherwise τ₁ is re-optimised
    for every m. The first-order m and √2 steps around it are screened
    (with τ₁ at the first-order interval, scaled to the exact one at the
    first-order m), then single steps are taken while effective time improves.
    """
    lib = _lib(*(getattr(s, name) for name in Schedule._fields), mtbf_s, *([] if storage_s is None else [storage_s]))
    q = s.share
    joint = storage_s is None and not tau1_fixed
    if storage_s is not None:
        fo = first_order_tau1(s.replace(every=1.0), mtbf_s, lib)
        start = storage_s / lib.maximum(lib.minimum(fo, storage_s), storage_s / 1e6)
    elif tau1_fixed:
        start = lib.sqrt(2.0 * s.s2_s * mtbf_s / (1.0 - q)) / s.tau1_s
    else:
        # A free memory copy (stall 0) would want storage never: start far out, the steps walk back.
        start = lib.sqrt(q * s.s2_s / ((1.0 - q) * lib.maximum(s.s1_s, 1e-12 * s.s2_s)))
    floor_m = lib.maximum(1.0, lib.ceil(s.lag_s / s.tau1_s - 1e-12)) if tau1_fixed else 1.0
    start = lib.maximum(lib.rint(lib.minimum(start, 1e9)), floor_m)

    def tau_at(m: Num, full: bool) -> Num:
        if storage_s is not None:
            return storage_s / m
        if tau1_fixed:
            return s.tau1_s
        if full:
            return best_tau1(s.replace(every=m), mtbf_s)
        return lib.maximum(scale * first_order_tau1(s.replace(every=m), mtbf_s, lib), _per_multiple(s.lag_s, m))

    memo: dict[tuple[float, bool], tuple[Num, Num]] = {}

    def at(m: Num, full: bool) -> tuple[Num, Num]:
        # Floats revisit the same m (the screen's best, then its neighbours): compute each once.
        key = (m, full) if lib is _Math else None
        if key is not None and key in memo:
            return memo[key]
        tau = tau_at(m, full)
        found = effective(s.replace(every=m, tau1_s=tau), mtbf_s).effective, tau
        if key is not None:
            memo[key] = found
        return found

    scale = 1.0
    if joint:
        # The exact τ₁ at the first-order m, as a ratio to first order, scales the screen's τ₁.
        scale = at(start, True)[1] / first_order_tau1(s.replace(every=start), mtbf_s, lib)
    best_m = start
    best_v, _ = at(best_m, False)
    for j in range(-MULTIPLE_SPREAD, MULTIPLE_SPREAD + 1):
        m = lib.maximum(lib.rint(start * 2.0 ** (j / 2.0)), floor_m)
        v, _ = at(m, False)
        better = v > best_v
        best_m, best_v = lib.where(better, m, best_m), lib.where(better, v, best_v)
    best_v, best_tau = at(best_m, True)
    for step in (1.0, -1.0):
        for _ in range(64):
            m = lib.maximum(best_m + step, floor_m)
            v, tau = at(m, True)
            better = v > best_v
            if not (better if lib is _Math else bool(better.any())):
                break
            best_m, best_v = lib.where(better, m, best_m), lib.where(better, v, best_v)
            best_tau = lib.where(better, tau, best_tau)
    return s.replace(every=best_m, tau1_s=best_tau)
