"""The exact model of any number of nested checkpoint tiers (docs/model.md §12).

Tier 1 (the fastest) is written after every τ₁ of useful work; tier i after
every m_i-th checkpoint of tier i − 1, so each interval is a whole multiple of
the one below and a tier-i boundary is a boundary of every tier below it: the
stall there is s₁ + … + s_i. A failure is of class k with probability q_k
(Σ q = 1). It destroys the tiers below k, so the job goes back to the newest
checkpoint on a tier ≥ k: the last tier-k boundary (for the top tier L, the
last *durable* one when its writes are asynchronous), restarts in r_k, and
the lower tiers start over from that point. A failure during a restart draws
its class afresh and goes back at least as far.

The recursion of :mod:`ckptcalc.model.exact` runs one period inside the next. Every
piece of a period (a segment, or a whole tier-k period) is an affine map
from the expected time after it to the expected time from its start,

    E_start = λ·E_after + μ,      μ = (α, β₂ … β_L),

where α holds the expected (time, stall, restart) and β_K the chance of
landing back at the start of the current tier-K period (its *anchor*). A
tier-k period is m_k sub-periods composed; its own anchor is then solved
for (E = λ·F + μ + β_k·E). Runs of identical pieces are summed in closed
form, so the cost grows with the number of tiers, not with the multiples.
Probability is conserved (λ + Σβ = 1), which gives every 1 − λ and 1 − β_k
as a sum of positive terms, free of cancellation.

>>> t = Tiers(tau1_s=295.4, every=(1, 54), stalls=(3.0, 0.0, 90.0), lag_s=0.0,
...           shares=(0.99, 0.0, 0.01), restarts=(60.0, 60.0, 600.0))
>>> round(float(effective(t, 14400.0).effective), 5)
0.96438
"""

from __future__ import annotations

import math
from typing import Any, TypeAlias

from ckptcalc.model.exact import SEARCH_ABOVE, SEARCH_BELOW, Split, _divide, _golden, _lib, _Math, _piece, _quiet
from ckptcalc.records import Record

Num: TypeAlias = Any

#: Steps each multiple may walk from its first-order start while effective time improves.
MAX_WALK = 64

#: Rounds of the walk over all multiples.
ROUNDS = 8


class Tiers(Record):
    """A nested schedule of L ≥ 2 tiers in SI units (fields may be numpy arrays).

    ``tau1_s`` useful work between tier-1 checkpoints; ``every`` the whole
    multiples m₂ … m_L (tier i every m_i-th checkpoint of tier i − 1);
    ``stalls`` s₁ … s_L; ``lag_s`` the top tier's persist time (0:
    synchronous); ``shares`` q₁ … q_L; ``restarts`` r₁ … r_L.
    """

    tau1_s: Num
    every: tuple[Num, ...]
    stalls: tuple[Num, ...]
    lag_s: Num
    shares: tuple[Num, ...]
    restarts: tuple[Num, ...]

    @property
    def count(self) -> int:
        return len(self.stalls)

    def intervals(self) -> tuple[Num, ...]:
        """Useful work between checkpoints of each tier: τ₁, m₂·τ₁, m₂·m₃·τ₁, …"""
        found = [self.tau1_s]
        for m in self.every:
            found.append(found[-1] * m)
        return tuple(found)

    @property
    def storage_interval_s(self) -> Num:
        """Useful work between top-tier checkpoints."""
        return self.segments * self.tau1_s

    @property
    def segments(self) -> Num:
        """Tier-1 checkpoints per top-tier checkpoint: m₂·…·m_L."""
        n: Num = 1.0
        for m in self.every:
            n = n * m
        return n


# ------------------------------------------------------------------ recovery


class _Recovery(Record):
    """What a failure costs before the job runs again: its expected restart time and where it lands."""

    restart: Num  # expected time in restarts, per failure
    lands: tuple[Num, ...]  # chance of resuming at the anchor of tier 1 … L


def _recovery(t: Tiers, mtbf: Num, lib: Any) -> _Recovery:
    """Restarts of class c take r_c; one struck by a failure (chance 1 − a_c) continues with a fresh
    class, towards the anchor of the highest class drawn so far (K). With Z_K the expected time still
    to come from a struck restart at K, and D_K = 1 − Σ_{c≤K} q_c·(1 − a_c):

        Z_K = (Σ_{c≤K} q_c·e_c + Σ_{c>K} q_c·T_c) / D_K,   T_c = e_c + (1 − a_c)·Z_c,

    where T_c is the time from a failure of class c, solved from the top tier down; the landing
    chances follow the same pattern."""
    count = t.count
    q, r = t.shares, t.restarts
    lost = [-lib.expm1(-rc / mtbf) for rc in r]  # a failure strikes during the restart
    kept = [1.0 - x for x in lost]
    spent = [-mtbf * lib.expm1(-rc / mtbf) for rc in r]  # E[min(X, r_c)]
    total: list[Num] = [0.0] * count  # T_c
    land: list[list[Num]] = [[0.0] * count for _ in range(count)]  # land[c][K]: from a class-c failure
    for k in range(count - 1, -1, -1):
        # D_k as a sum of positive terms: Σ_{c≤k} q_c·a_c + Σ_{c>k} q_c.
        d: Num = 0.0
        low_cost: Num = 0.0
        for c in range(k + 1):
            d = d + q[c] * kept[c]
            low_cost = low_cost + q[c] * spent[c]
        high_cost: Num = 0.0
        for c in range(k + 1, count):
            d = d + q[c]
            high_cost = high_cost + q[c] * total[c]
        # D underflows to 0 when every restart is thousands of MTBFs long: then nothing finishes.
        z = _divide(low_cost + high_cost, d, lib)
        total[k] = spent[k] + lost[k] * z
        stay: Num = 0.0
        for c in range(k + 1):
            stay = stay + q[c] * kept[c]
        for target in range(count):
            w: Num = stay if target == k else 0.0
            for c in range(k + 1, count):
                w = w + q[c] * land[c][target]
            w = _divide(w, d, lib)
            land[k][target] = (kept[k] if target == k else 0.0) + lost[k] * w
    restart: Num = 0.0
    for c in range(count):
        restart = restart + q[c] * total[c]
    lands = []
    for target in range(count):
        w = 0.0
        for c in range(count):
            w = w + q[c] * land[c][target]
        lands.append(w)
    return _Recovery(restart, tuple(lands))


# --------------------------------------------------------------------- maps


class _Map(Record):
    """E_start = lam·E_after + (alpha, beta): alpha the expected (time, stall, restart), beta the
    chances of landing at the anchors of tiers 2 … L (index 0 is tier 2); ``rest`` is 1 − lam."""

    lam: Num
    rest: Num
    alpha: tuple[Num, Num, Num]
    beta: tuple[Num, ...]


def _segment(length: Num, work: Num, rec: _Recovery, mtbf: Num, lib: Any) -> _Map:
    """One tier-1 segment of ``length`` (its first ``work`` seconds work, the rest a stall):

    E = c + p·E_next + (1 − p)·[R + Σ_K w_K·A_K], with A₁ = E itself, solved for E."""
    time, stall = _piece(0.0, length, work, mtbf, lib)
    lost = -lib.expm1(-length / mtbf)
    d = 1.0 - lost * rec.lands[0]
    restart = lost * rec.restart
    beta = tuple(lost * w / d for w in rec.lands[1:])
    rest: Num = 0.0
    for b in beta:
        rest = rest + b
    return _Map((1.0 - lost) / d, rest, ((time + restart) / d, stall / d, restart / d), beta)


def _then(outer: _Map, inner: _Map) -> _Map:
    """``outer`` followed by ``inner`` (``inner`` is applied first, to what comes after both)."""
    lam = outer.lam * inner.lam
    alpha = tuple(outer.lam * a + b for a, b in zip(inner.alpha, outer.alpha, strict=True))
    beta = tuple(outer.lam * a + b for a, b in zip(inner.beta, outer.beta, strict=True))
    return _Map(lam, outer.rest + outer.lam * inner.rest, alpha, beta)


def _power(piece: _Map, times: Num, lib: Any) -> _Map:
    """``times`` identical pieces in a row: λⁿ and μ·(1 − λⁿ)/(1 − λ), in logs for λ near 1."""
    if lib is _Math:
        if piece.rest == 0.0 or times == 0:
            lam_n, series = 1.0, float(times)
        elif piece.rest >= 1.0:
            lam_n, series = 0.0, 1.0 / piece.rest
        else:
            scaled = times * math.log1p(-piece.rest)
            lam_n, series = math.exp(scaled), -math.expm1(scaled) / piece.rest
    else:
        flat = piece.rest == 0.0
        scaled = lib.where(flat, 0.0, times * lib.log1p(-lib.minimum(piece.rest, 1.0)))
        lam_n = lib.exp(scaled)
        series = lib.where(flat, times, -lib.expm1(scaled) / lib.where(flat, 1.0, piece.rest))
    alpha = tuple(a * series for a in piece.alpha)
    beta = tuple(b * series for b in piece.beta)
    return _Map(lam_n, piece.rest * series, alpha, beta)


def _anchor(piece: _Map, tier: int) -> _Map:
    """Solve a tier's own anchor: the piece is the whole tier-``tier`` period from its start, and a
    landing at that anchor starts it again (E = λ·F + μ + β_k·E)."""
    j = tier - 2
    # 1 − β_k = λ + Σ_{K≠k} β_K: positive terms only.
    keep = piece.lam
    for i, b in enumerate(piece.beta):
        if i != j:
            keep = keep + b
    lib = _lib(keep)
    beta = tuple(0.0 if i == j else _divide(b, keep, lib) for i, b in enumerate(piece.beta))
    lam = _divide(piece.lam, keep, lib)
    rest: Num = 0.0
    for b in beta:
        rest = rest + b
    return _Map(lam, rest, tuple(_divide(a, keep, lib) for a in piece.alpha), beta)


class _Periods:
    """P(k, e): a whole tier-k period whose last boundary has level e (its stall s₁ + … + s_e),
    with its own anchor solved (k ≥ 2); built on demand and remembered."""

    def __init__(self, t: Tiers, rec: _Recovery, mtbf: Num, lib: Any) -> None:
        self.t, self.rec, self.mtbf, self.lib = t, rec, mtbf, lib
        self.cache: dict[tuple[int, int], _Map] = {}

    def stall(self, level: int) -> Num:
        total: Num = 0.0
        for s in self.t.stalls[:level]:
            total = total + s
        return total

    def get(self, k: int, e: int) -> _Map:
        key = (k, e)
        if key not in self.cache:
            tau = self.t.tau1_s
            if k == 1:
                found = _segment(tau + self.stall(e), tau, self.rec, self.mtbf, self.lib)
            else:
                m = self.t.every[k - 2]
                body = _then(_power(self.get(k - 1, k - 1), m - 1.0, self.lib), self.get(k - 1, e))
                found = body if k == self.t.count else _anchor(body, k)
            self.cache[key] = found
        return self.cache[key]


def _prefix(periods: _Periods, offset: Num, t: Tiers, lib: Any) -> _Map:
    """The first ``offset`` of a top-tier period (offset below its length), as a map to the point
    ``offset``: whole sub-periods of each tier, then whole segments, then a partial segment; the
    anchors of the partial sub-periods are solved, the top tier's is left open."""
    tau = t.tau1_s
    lengths = [tau + t.stalls[0]]  # a tier-1 segment not ending a higher period
    for k in range(2, t.count):
        lengths.append(lengths[-1] * t.every[k - 2] + t.stalls[k - 1])
    # Counts of whole pieces from the top down: d_{L−1} tier-(L−1) periods, …, d_1 segments, then u.
    counts: list[Num] = [0.0] * (t.count - 1)
    left = offset
    for k in range(t.count - 1, 0, -1):
        size = lengths[k - 1]
        limit = t.every[k - 1] - 1.0
        d = lib.minimum(lib.maximum(lib.floor(left / size), 0.0), limit)
        counts[k - 1] = d
        left = lib.maximum(left - d * size, 0.0)
    form = _segment(left, tau, periods.rec, periods.mtbf, lib)  # the partial segment up to the offset
    for k in range(1, t.count):
        form = _then(_power(periods.get(k, k), counts[k - 1], lib), form)
        if k + 1 < t.count:
            form = _anchor(form, k + 1)
    return form


def _cycle(t: Tiers, mtbf: Num, lib: Any) -> tuple[Num, Num, Num]:
    """Expected (time, stall, restart) from one top-tier commit to the next.

    The commit of the snapshot taken at a period's start lies ``lag`` into the period (positions
    count stalls, as the simulation does). E₁, the time from a period's start to the next commit, is
    that period followed by the next one's prefix up to the lag, a top-class failure anywhere in it
    going back to E₁; the cycle is E₁ less the prefix run on its own (top-class failures returning
    to its start), which is what precedes the cycle's start."""
    rec = _recovery(t, mtbf, lib)
    periods = _Periods(t, rec, mtbf, lib)
    top = t.count
    whole = periods.get(top, top)
    if lib is _Math and t.lag_s == 0:
        # Synchronous: the commit is the snapshot itself, so there is no prefix (an identity).
        tail = _Map(1.0, 0.0, (0.0, 0.0, 0.0), tuple(0.0 for _ in t.every))
    else:
        tail = _prefix(periods, t.lag_s, t, lib)
    both = _then(whole, tail)
    # E₁ = α + β_L·E₁ with 1 − β_L = λ (the chance of reaching the commit without landing back).
    start = tuple(_divide(a, both.lam, lib) for a in both.alpha)
    head = tuple(_divide(a, tail.lam, lib) for a in tail.alpha)
    return start[0] - head[0], start[1] - head[1], start[2] - head[2]


def effective(t: Tiers, mtbf_s: Num) -> Split:
    """The exact split of elapsed time for the nested schedule ``t`` at job failure interval ``mtbf_s``.

    effective = (m₂·…·m_L)·τ₁ / E[cycle]; stalls and restarts are their shares of it, rework the rest.
    Where floating point gives out (periods thousands of MTBFs long) the whole time counts as restart.
    """
    lib = _lib(t.tau1_s, *t.every, *t.stalls, t.lag_s, *t.shares, *t.restarts, mtbf_s)
    with _quiet(lib):
        time, stall, restart = _cycle(t, mtbf_s, lib)
        eff = _divide(t.segments * t.tau1_s, time, lib)
        write = _divide(stall, time, lib)
        back = _divide(restart, time, lib)
    if lib is _Math:
        ok = all(math.isfinite(v) for v in (eff, write, back)) and time > 0
    else:
        ok = lib.isfinite(eff) & lib.isfinite(write) & lib.isfinite(back) & (time > 0)
    eff = lib.where(ok, eff, 0.0)
    write = lib.where(ok, write, 0.0)
    back = lib.where(ok, back, 1.0)
    rework = lib.maximum(1.0 - eff - write - back, 0.0)
    return Split(eff, write, rework, back)


# ------------------------------------------------------------------ optimum


def _targets(t: Tiers, mtbf_s: Num, lib: Any) -> list[Num]:
    """Each tier's first-order interval, made nested: its own Young interval √(2·s_i·M/q_i); a tier
    that serves no failure goes with the next one above that does (written only then), or with the
    one below when it costs nothing to write; none shorter than the one below."""
    count = t.count
    found: list[Num] = [None] * count
    for i in range(count - 1, -1, -1):
        s, q = t.stalls[i], t.shares[i]
        own = lib.sqrt(2.0 * s * mtbf_s / lib.maximum(q, 1e-300))
        above = found[i + 1] if i + 1 < count else own
        found[i] = lib.where(q > 0, own, lib.where(s > 0, above, 0.0))
    floor = 1e-9 * mtbf_s
    for i in range(count):
        below = found[i - 1] if i else floor
        found[i] = lib.minimum(lib.maximum(found[i], below), 1e12 * mtbf_s)
    return found


def first_order(t: Tiers, mtbf_s: Num, lib: Any) -> tuple[Num, tuple[Num, ...]]:
    """The first-order start: τ₁ and whole multiples (each at least 1) near the tiers' first-order
    intervals (:func:`_targets`), the top one covering the persist time."""
    wanted = _targets(t, mtbf_s, lib)
    tau1 = wanted[0]
    return tau1, _multiples(t, wanted, tau1, lib)


def _multiples(t: Tiers, wanted: list[Num], tau1: Num, lib: Any) -> tuple[Num, ...]:
    below = tau1
    every: list[Num] = []
    for i in range(1, t.count):
        m = lib.maximum(lib.rint(wanted[i] / below), 1.0)
        every.append(m)
        below = below * m
    n: Num = 1.0
    for m in every[:-1]:
        n = n * m
    every[-1] = lib.maximum(every[-1], lib.ceil(t.lag_s / (n * tau1) - 1e-12))
    return tuple(every)


def _floor_tau1(t: Tiers) -> Num:
    """The shortest τ₁ whose top interval covers the persist time."""
    return t.lag_s / t.segments * (1.0 + 1e-15)


def best_tau1(t: Tiers, mtbf_s: Num) -> Num:
    """The τ₁ that maximises effective time at the schedule's multiples (top interval ≥ persist time)."""
    lib = _lib(t.tau1_s, *t.every, *t.stalls, t.lag_s, *t.shares, *t.restarts, mtbf_s)
    # First order at these multiples: loss Σ S_i/(N_i·τ₁) + τ₁·Σ q_i·N_i/2M, N_i = m₂…m_i.
    cost: Num = 0.0
    weight: Num = 0.0
    n: Num = 1.0
    for i in range(t.count):
        if i:
            n = n * t.every[i - 1]
        cost = cost + t.stalls[i] / n
        weight = weight + t.shares[i] * n
    guess = lib.sqrt(2.0 * cost * mtbf_s / weight)
    guess = lib.maximum(guess, 1e-9 * mtbf_s)
    low = lib.maximum(guess / SEARCH_BELOW, _floor_tau1(t))
    high = lib.maximum(guess * SEARCH_ABOVE, low * 2.0)

    def value(tau: Num) -> Num:
        return effective(t.replace(tau1_s=tau), mtbf_s).effective

    tau = _golden(value, low, high, lib)
    return lib.where(value(low) >= value(tau), low, tau)


def best(t: Tiers, mtbf_s: Num, *, tau1_fixed: bool = False, top_s: Num | None = None) -> Tiers:
    """The nested schedule with the best whole multiples and τ₁, from the first-order start.

    Each multiple in turn walks up or down one step at a time while effective time improves (τ₁
    re-optimised at every step), for a few rounds over all of them. ``tau1_fixed`` keeps the
    schedule's τ₁; ``top_s`` keeps the top interval (τ₁ = top / (m₂·…·m_L)).
    """
    given = [] if top_s is None else [top_s]
    lib = _lib(t.tau1_s, *t.every, *t.stalls, t.lag_s, *t.shares, *t.restarts, mtbf_s, *given)
    tau1, every = first_order(t, mtbf_s, lib)
    if tau1_fixed:
        tau1 = t.tau1_s
        every = _rescaled(t, tau1, mtbf_s, lib)
    elif top_s is not None:
        n: Num = 1.0
        for m in every[:-1]:
            n = n * m
        every = (*every[:-1], lib.maximum(lib.rint(top_s / (tau1 * n)), 1.0))
    memo: dict[tuple[Any, ...], tuple[Num, Num]] = {}

    def at(multiples: tuple[Num, ...]) -> tuple[Num, Num]:
        key = tuple(float(m) for m in multiples) if lib is _Math else None
        if key is not None and key in memo:
            return memo[key]
        trial = t.replace(every=multiples)
        if top_s is not None:
            tau = top_s / trial.segments
        elif tau1_fixed:
            tau = tau1
        else:
            tau = best_tau1(trial.replace(tau1_s=tau1), mtbf_s)
        found = effective(trial.replace(tau1_s=tau), mtbf_s).effective, tau
        if key is not None:
            memo[key] = found
        return found

    def floor_of(i: int, multiples: tuple[Num, ...]) -> Num:
        """The smallest m_i keeping the top interval at or above the persist time (τ₁ fixed)."""
        if not tau1_fixed or i != len(multiples) - 1:
            return 1.0
        n: Num = 1.0
        for m in multiples[:-1]:
            n = n * m
        return lib.maximum(1.0, lib.ceil(t.lag_s / (n * tau1) - 1e-12))

    def moves(i: int, step: float, multiples: tuple[Num, ...]) -> tuple[Num, ...]:
        """m_i one step up or down; for a tier below the top, a second kind of move keeps the next
        tier's interval (m_{i+1} rescaled), coded as i + len."""
        count = len(multiples)
        j = i % count
        m = lib.maximum(multiples[j] + step, floor_of(j, multiples))
        if i < count or j + 1 >= count:
            moved = (*multiples[:j], m, *multiples[j + 1 :])
        else:
            above = lib.maximum(lib.rint(multiples[j] * multiples[j + 1] / m), floor_of(j + 1, multiples))
            moved = (*multiples[:j], m, above, *multiples[j + 2 :])
        # With τ₁ held, fewer checkpoints below may need more above for storage to cover its persist time.
        return (*moved[:-1], lib.maximum(moved[-1], floor_of(count - 1, moved)))

    current = every
    best_v, best_tau = at(current)
    for _ in range(ROUNDS):
        moved = False
        for i in range(2 * len(current) - 1):
            for step in (1.0, -1.0):
                for _ in range(MAX_WALK):
                    trial = moves(i, step, current)
                    v, tau = at(trial)
                    better = v > best_v * (1.0 + 1e-13)
                    if not (better if lib is _Math else bool(better.any())):
                        break
                    moved = True
                    current = tuple(lib.where(better, a, b) for a, b in zip(trial, current, strict=True))
                    best_v = lib.where(better, v, best_v)
                    best_tau = lib.where(better, tau, best_tau)
        if not moved:
            break
    return t.replace(every=current, tau1_s=best_tau)


def _rescaled(t: Tiers, tau1: Num, mtbf_s: Num, lib: Any) -> tuple[Num, ...]:
    """First-order multiples when τ₁ is given."""
    return _multiples(t, _targets(t, mtbf_s, lib), tau1, lib)
