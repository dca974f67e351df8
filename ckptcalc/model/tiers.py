"""The exact model of every periodic checkpointing strategy: one recursion over nested tiers (docs/model.md §8, §12).

Every strategy is a schedule of L ≥ 1 tiers. Tier 1 (the fastest) is
written after every τ₁ of useful work; tier i after every m_i-th checkpoint
of tier i − 1, so each interval is a whole multiple of the one below and a
tier-i boundary is a boundary of every tier below it: the stall there is
s₁ + … + s_i. A failure is of class k with probability q_k (Σ q = 1). It
destroys the tiers below k, so the job goes back to the newest checkpoint on
a tier ≥ k: the last tier-k boundary (for the top tier L, the last *durable*
one when its writes are asynchronous, durable P of progress after its
snapshot), restarts in r_k, and the lower tiers start over from that point.
A failure during a restart draws its class afresh and goes back at least as
far. So one recursion covers

* one level, synchronous (Daly's exact model) or asynchronous (L = 1, in
  closed form: :mod:`ckptcalc.model.one_level`, tested equal to the recursion),
* memory + storage, synchronous or asynchronous (L = 2),
* any number of tiers (L ≥ 3).

Failures renew at each failure (the time X to the next one counts from the
start of the restart) and E[min(X, w)] = M·(1 − e^{−w/M}). The recursion
runs one period inside the next. Every piece of a period (a segment, or a
whole tier-k period) is an affine map from the expected time after it to the
expected time from its start,

    E_start = λ·E_after + μ,      μ = (α, β₂ … β_L),

where α holds the expected (time, stall, restart) and β_K the chance of
landing back at the start of the current tier-K period (its *anchor*). A
tier-k period is m_k sub-periods composed; its own anchor is then solved
for (E = λ·F + μ + β_k·E). Runs of identical pieces are summed in closed
form, so the cost grows with the number of tiers, not with the multiples.
Probability is conserved (λ + Σβ = 1), which gives every 1 − λ and 1 − β_k
as a sum of positive terms, free of cancellation.

>>> t = Tiers(tau1_s=295.4, every=(54.0,), stalls=(3.0, 90.0), lag_s=0.0,
...           shares=(0.99, 0.01), restarts=(60.0, 600.0))
>>> round(float(effective(t, 14400.0).effective), 5)
0.96438
"""

from __future__ import annotations

import math
from typing import Any

from ckptcalc.model.arrays import Lib, Num, Scalar, divide, lib, quiet
from ckptcalc.model.one_level import Split, single_split
from ckptcalc.records import Record


class Tiers(Record):
    """A schedule of L ≥ 1 nested tiers in SI units (fields may be numpy arrays).

    ``tau1_s`` useful work between tier-1 checkpoints; ``every`` the whole
    multiples m₂ … m_L (tier i every m_i-th checkpoint of tier i − 1; empty
    for one level); ``stalls`` s₁ … s_L; ``lag_s`` the top tier's persist
    time (0: synchronous); ``shares`` q₁ … q_L; ``restarts`` r₁ … r_L.
    """

    tau1_s: Num
    every: tuple[Num, ...]
    stalls: tuple[Num, ...]
    lag_s: Num
    shares: tuple[Num, ...]
    restarts: tuple[Num, ...]
    nowhere_share: Num = 0.0  # a failure class that goes back nowhere, as notice does (docs/model.md §13)
    nowhere_restart_s: Num = 0.0  # its restart (with notice: the checkpoint's write included)
    # A failure class noticed late (silent events, docs/model.md §16): noticed at this rate (per second;
    # 0: none), each going back to the top tier's newest retained checkpoint before its onset, then
    # restarting and skipping (``silent_extra_s``) and replaying the mean detection latency of work;
    # ``late`` (its home's) says where it lands: the work it replays beyond the latency with only the
    # retained checkpoints kept, and the chance a fail-stop erases it first.
    silent_rate: Num = 0.0
    silent_latency_s: Num = 0.0
    silent_extra_s: Num = 0.0
    late: Any = None
    # Failure classes beside the tiers' own (docs/model.md §20): (share, restart, anchor) each, the anchor a
    # tier's index (0 the fastest) whose newest checkpoint the class goes back to. Several may share a tier.
    extra: tuple[tuple[Num, Num, int], ...] = ()

    @property
    def has_extra(self) -> bool:
        """Whether failure classes of their own restart go back to some tier (docs/model.md §20)."""
        return bool(self.extra)

    @property
    def has_silent(self) -> bool:
        """Whether silent events are modelled (an array of rates counts, even if all 0)."""
        return not (isinstance(self.silent_rate, float | int) and self.silent_rate == 0)

    @property
    def has_nowhere(self) -> bool:
        """Whether some failures go back nowhere (an array of shares counts, even if all 0)."""
        return not (isinstance(self.nowhere_share, float | int) and self.nowhere_share == 0)

    @property
    def count(self) -> int:
        """L, the number of tiers."""
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
        """Tier-1 checkpoints per top-tier checkpoint: m₂·…·m_L (1 for one level)."""
        n: Num = 1.0
        for m in self.every:
            n = n * m
        return n

    def values(self) -> tuple[Num, ...]:
        """Every number of the schedule, flat (to tell floats from arrays)."""
        return (
            self.tau1_s,
            *self.every,
            *self.stalls,
            self.lag_s,
            *self.shares,
            *self.restarts,
            self.nowhere_share,
            self.nowhere_restart_s,
            self.silent_rate,
            self.silent_latency_s,
            self.silent_extra_s,
            *(() if self.late is None else self.late.numbers()),
            *(x for share, restart, _ in self.extra for x in (share, restart)),
        )


def single(*, interval_s: Num, stall_s: Num, lag_s: Num, restart_s: Num) -> Tiers:
    """The schedule of one level (asynchronous when ``lag_s`` > 0)."""
    return Tiers(tau1_s=interval_s, every=(), stalls=(stall_s,), lag_s=lag_s, shares=(1.0,), restarts=(restart_s,))


def _emin(w: Num, m: Num, ns: Lib) -> Num:
    """E[min(X, w)] for X exponential with mean ``m``."""
    return -m * ns.expm1(-w / m)


def _piece(start: Num, end: Num, work: Num, mtbf: Num, ns: Lib) -> tuple[Num, Num]:
    """Expected (time, stall time) spent in offsets [start, end] of a segment whose first
    ``work`` seconds are work and the rest a stall, entered at ``start``, until it ends or fails."""
    total = _emin(end - start, mtbf, ns)
    stall_from = ns.maximum(start, work)
    stall = ns.exp(-(stall_from - start) / mtbf) * _emin(ns.maximum(end - stall_from, 0.0), mtbf, ns)
    return total, stall


# ------------------------------------------------------------------ recovery


class _Recovery(Record):
    """What a failure costs before the job runs again: its expected restart time and where it lands."""

    restart: Num  # expected time in restarts, per failure
    lands: tuple[Num, ...]  # chance of resuming at the anchor of tier 1 … L
    here: Num = 0.0  # chance of resuming where the failure struck (every class drawn came with notice)


#: Recent recoveries of plain-float schedules, by shares, restarts and M: a search over the
#: intervals asks for the same one again and again.
_RECOVERIES: dict[tuple[object, ...], _Recovery] = {}


def _recovered(t: Tiers, mtbf: Num, ns: Lib, silent: tuple[Num, Num] | None = None) -> _Recovery:
    """:func:`_recovery`, remembered for plain floats (it depends on the shares, restarts and M only)."""
    if ns is not Scalar:
        return _recovery(t, mtbf, ns, silent)
    key = (*t.shares, *t.restarts, t.nowhere_share, t.nowhere_restart_s, mtbf, silent, t.extra)
    found = _RECOVERIES.get(key)
    if found is None:
        if len(_RECOVERIES) > 256:
            _RECOVERIES.clear()
        found = _RECOVERIES[key] = _recovery(t, mtbf, ns, silent)
    return found


def _recovery(t: Tiers, mtbf: Num, ns: Lib, silent: tuple[Num, Num] | None = None) -> _Recovery:
    """Restarts of class c take r_c; one struck by a failure (chance 1 − a_c) continues with a fresh
    class, towards the anchor of the highest class drawn so far (K). With Z_K the expected time still
    to come from a struck restart at K, and D_K = 1 − Σ_{c≤K} q_c·(1 − a_c):

        Z_K = (Σ_{c≤K} q_c·e_c + Σ_{c>K} q_c·T_c) / D_K,   T_c = e_c + (1 − a_c)·Z_c,

    where T_c is the time from a failure of class c, solved from the top tier down; the landing
    chances follow the same pattern. Failures with notice are a class below tier 1 whose anchor is
    the point the failure struck (docs/model.md §13.2). A silent event, ``silent`` = (share, restart),
    is a class above the top tier with the top tier's anchor: its landings are the top tier's
    (docs/model.md §16.3)."""
    q, r = t.shares, t.restarts
    anchors: list[int] | None = None
    if t.extra:
        # Classes of their own restart (docs/model.md §20) sit beside their tier's class, in anchor order;
        # which one of a tier's classes was drawn changes only the restart, so their landings merge.
        rows = sorted(
            [(k, 0, q[k], r[k]) for k in range(len(q))] + [(a, 1, sq, sr) for sq, sr, a in t.extra],
            key=lambda row: (row[0], row[1]),
        )
        anchors = [row[0] for row in rows]
        q, r = tuple(row[2] for row in rows), tuple(row[3] for row in rows)
    if silent is not None:
        q, r = (*q, silent[0]), (*r, silent[1])
        if anchors is not None:
            anchors.append(t.count - 1)
    if t.has_nowhere:
        q, r = (t.nowhere_share, *q), (t.nowhere_restart_s, *r)
        if anchors is not None:
            anchors.insert(0, -1)
    count = len(q)
    lost = [-ns.expm1(-rc / mtbf) for rc in r]  # a failure strikes during the restart
    kept = [1.0 - x for x in lost]
    spent = [-mtbf * ns.expm1(-rc / mtbf) for rc in r]  # E[min(X, r_c)]
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
        z = divide(low_cost + high_cost, d, ns)
        total[k] = spent[k] + lost[k] * z
        stay: Num = 0.0
        for c in range(k + 1):
            stay = stay + q[c] * kept[c]
        for target in range(count):
            w: Num = stay if target == k else 0.0
            for c in range(k + 1, count):
                w = w + q[c] * land[c][target]
            w = divide(w, d, ns)
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
    if anchors is not None:
        merged: list[Num] = [0.0] * (t.count + 1)  # index 0: resumes where it struck
        for anchor, w in zip(anchors, lands, strict=True):
            merged[anchor + 1] = merged[anchor + 1] + w
        return _Recovery(restart, tuple(merged[1:]), merged[0])
    if silent is not None:
        lands = [*lands[:-2], lands[-2] + lands[-1]]
    if t.has_nowhere:
        return _Recovery(restart, tuple(lands[1:]), lands[0])
    return _Recovery(restart, tuple(lands))


# --------------------------------------------------------------------- maps


class _Map(Record):
    """E_start = lam·E_after + (alpha, beta): alpha the expected (time, stall, restart), beta the
    chances of landing at the anchors of tiers 2 … L (index 0 is tier 2); ``rest`` is 1 − lam."""

    lam: Num
    rest: Num
    alpha: tuple[Num, ...]  # (time, stall, restart)
    beta: tuple[Num, ...]


def _segment(length: Num, work: Num, rec: _Recovery, mtbf: Num, ns: Lib) -> _Map:
    """One tier-1 segment of ``length`` (its first ``work`` seconds work, the rest a stall):

    E = c + p·E_next + (1 − p)·[R + Σ_K w_K·A_K], with A₁ = E itself, solved for E.

    A failure that resumes where it struck (notice) loses no progress: only the others end the
    segment, at rate (1 − h)/M, and each failure on the way costs R (docs/model.md §13.2)."""
    if isinstance(rec.here, float | int) and rec.here == 0:
        return _plain_segment(length, work, rec, mtbf, ns)
    escape: Num = 0.0  # 1 − h, as a sum of positive terms
    for w in rec.lands:
        escape = escape + w
    # The mean time, in segment progress, to a failure that ends it; kept above 0 where the shares of the
    # failures that end it overflow (a job that fails far more often than it restarts: effective 0).
    slow = ns.maximum(mtbf / ns.maximum(escape, 1e-300), 1e-300)
    time, stall = _piece(0.0, length, work, slow, ns)
    lost = -ns.expm1(-length / slow)
    restart = time / mtbf * rec.restart
    share = [lost * w / ns.maximum(escape, 1e-300) for w in rec.lands]
    d = 1.0 - share[0]
    beta = tuple(x / d for x in share[1:])
    rest: Num = 0.0
    for b in beta:
        rest = rest + b
    return _Map((1.0 - lost) / d, rest, ((time + restart) / d, stall / d, restart / d), beta)


def _plain_segment(length: Num, work: Num, rec: _Recovery, mtbf: Num, ns: Lib) -> _Map:
    """:func:`_segment` when no failure comes with notice."""
    time, stall = _piece(0.0, length, work, mtbf, ns)
    lost = -ns.expm1(-length / mtbf)
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


#: The largest x whose e^x a float holds.
_LARGEST_EXP = 709.0


def _power(piece: _Map, times: Num, ns: Lib) -> _Map:
    """``times`` identical pieces in a row: λⁿ and μ·(1 − λⁿ)/(1 − λ), in logs for λ near 1."""
    lam_n: Num
    series: Num
    if ns is Scalar:
        if piece.rest == 0.0 or times == 0:
            lam_n, series = 1.0, float(times)
        elif piece.rest >= 1.0:
            lam_n, series = 0.0, 1.0 / piece.rest
        else:
            scaled = times * math.log1p(-piece.rest)
            if scaled > _LARGEST_EXP:
                # λ > 1 over very many pieces (silent events far faster than their detection, §16.5): the
                # cycle never closes; infinite, as numpy's branch gives, and read downstream as effective 0.
                lam_n, series = math.inf, math.inf
            else:
                lam_n, series = math.exp(scaled), -math.expm1(scaled) / piece.rest
    else:
        flat = piece.rest == 0.0
        scaled = ns.where(flat, 0.0, times * ns.log1p(-ns.minimum(piece.rest, 1.0)))
        lam_n = ns.exp(scaled)
        series = ns.where(flat, times, -ns.expm1(scaled) / ns.where(flat, 1.0, piece.rest))
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
    ns = lib(keep)
    beta = tuple(0.0 if i == j else divide(b, keep, ns) for i, b in enumerate(piece.beta))
    lam = divide(piece.lam, keep, ns)
    rest: Num = 0.0
    for b in beta:
        rest = rest + b
    return _Map(lam, rest, tuple(divide(a, keep, ns) for a in piece.alpha), beta)


class _Periods:
    """P(k, e): a whole tier-k period whose last boundary has level e (its stall s₁ + … + s_e),
    with its own anchor solved (k ≥ 2); built on demand and remembered."""

    def __init__(self, t: Tiers, rec: _Recovery, mtbf: Num, ns: Lib) -> None:
        self.t, self.rec, self.mtbf, self.ns = t, rec, mtbf, ns
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
                found = _segment(tau + self.stall(e), tau, self.rec, self.mtbf, self.ns)
            else:
                m = self.t.every[k - 2]
                body = _then(_power(self.get(k - 1, k - 1), m - 1.0, self.ns), self.get(k - 1, e))
                found = body if k == self.t.count else _anchor(body, k)
            self.cache[key] = found
        return self.cache[key]


def _prefix(periods: _Periods, offset: Num, t: Tiers, ns: Lib) -> _Map:
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
        d = ns.minimum(ns.maximum(ns.floor(left / size), 0.0), limit)
        counts[k - 1] = d
        left = ns.maximum(left - d * size, 0.0)
    form = _segment(left, tau, periods.rec, periods.mtbf, ns)  # the partial segment up to the offset
    for k in range(1, t.count):
        form = _then(_power(periods.get(k, k), counts[k - 1], ns), form)
        if k + 1 < t.count:
            form = _anchor(form, k + 1)
    return form


def _cycle(t: Tiers, mtbf: Num, ns: Lib, silent: tuple[Num, Num] | None = None) -> tuple[Num, Num, Num, Num]:
    """Expected (time, stall, restart) from one top-tier commit to the next, each times λ, and λ.

    The commit of the snapshot taken at a period's start lies ``lag`` into the period (positions
    count stalls, as the simulation does). E₁, the time from a period's start to the next commit, is
    that period followed by the next one's prefix up to the lag, a top-class failure anywhere in it
    going back to E₁; the cycle is E₁ less the prefix run on its own (top-class failures returning
    to its start), which is what precedes the cycle's start."""
    rec = _recovered(t, mtbf, ns, silent)
    periods = _Periods(t, rec, mtbf, ns)
    top = t.count
    whole = periods.get(top, top)
    if ns is Scalar and t.lag_s == 0:
        # Synchronous: the commit is the snapshot itself, so there is no prefix (an identity).
        tail = _Map(1.0, 0.0, (0.0, 0.0, 0.0), tuple(0.0 for _ in t.every))
    else:
        tail = _prefix(periods, t.lag_s, t, ns)
    both = _then(whole, tail)
    # E₁ = α + β_L·E₁ with 1 − β_L = λ (the chance of reaching the commit without landing back), so
    # E₁ = α/λ. Returned times λ, so that a λ that underflows (periods thousands of MTBFs long)
    # leaves the shares of the cycle finite.
    lam = both.lam
    head = tuple(divide(a, tail.lam, ns) for a in tail.alpha)
    return both.alpha[0] - lam * head[0], both.alpha[1] - lam * head[1], both.alpha[2] - lam * head[2], lam


def effective(t: Tiers, mtbf_s: Num) -> Split:
    """The exact split of elapsed time for the schedule ``t`` at job failure interval ``mtbf_s``.

    effective = (m₂·…·m_L)·τ₁ / E[cycle]; stalls and restarts are their shares of it, rework the rest.
    One level takes its closed form (:func:`ckptcalc.model.one_level.single_split`, the same numbers
    as :func:`by_recursion` to rounding, and about twenty times faster).
    """
    if t.count == 1 and not t.has_nowhere and not t.has_silent:
        restart = t.restarts[0] if not t.has_extra else merged_restart(t, mtbf_s)
        return single_split(interval_s=t.tau1_s, stall_s=t.stalls[0], lag_s=t.lag_s, restart_s=restart, mtbf_s=mtbf_s)
    return by_recursion(t, mtbf_s)


def merged_restart(t: Tiers, mtbf_s: Num) -> Num:
    """The one restart that stands for every class of a one-level schedule (docs/model.md §20.2): each class
    lands on the one tier, so which was drawn changes only the time spent restarting, and the restarts
    r_c of shares q_c act as one of r = −M·ln Σ q_c·e^{−r_c/M} (so that 1/λ + ρ = M·e^{r/M}). With one
    class of share 1 that is its own restart."""
    ns = lib(*t.values(), mtbf_s)
    kept: Num = t.shares[0] * ns.exp(-t.restarts[0] / mtbf_s)
    for share, restart, _ in t.extra:
        kept = kept + share * ns.exp(-restart / mtbf_s)
    return -mtbf_s * ns.log(kept)


def by_recursion(t: Tiers, mtbf_s: Num) -> Split:
    """:func:`effective` by the recursion, for any L (one level included).

    One level runs as two: a free tier 1 that serves no failure, written at every checkpoint of
    the real one (the recursion's top tier is the one whose failures go back to the last durable
    checkpoint). Where floating point gives out (periods thousands of MTBFs long) effective time is
    0 and the restarts take their share of :func:`restart_share`.
    """
    if t.count == 1:
        t = t.replace(
            every=(1.0,),
            stalls=(0.0, t.stalls[0]),
            shares=(0.0, t.shares[0]),
            restarts=(t.restarts[0], t.restarts[0]),
            extra=tuple((share, restart, anchor + 1) for share, restart, anchor in t.extra),
        )
    ns = lib(*t.values(), mtbf_s)
    with quiet(ns):
        if t.has_silent:
            return _with_silent(t, mtbf_s, ns)
        time, stall, restart, lam = _cycle(t, mtbf_s, ns)
        eff = divide(t.segments * t.tau1_s * lam, time, ns)
        write = divide(stall, time, ns)
        back = divide(restart, time, ns)
    if ns is Scalar:
        ok = all(math.isfinite(v) for v in (eff, write, back)) and time > 0
    else:
        ok = ns.isfinite(eff) & ns.isfinite(write) & ns.isfinite(back) & (time > 0)
    if ns is Scalar and ok:
        return Split(eff, write, max(1.0 - eff - write - back, 0.0), back)
    eff = ns.where(ok, eff, 0.0)
    write = ns.where(ok, write, 0.0)
    back = ns.where(ok, back, restart_share(t, mtbf_s))
    rework = ns.maximum(1.0 - eff - write - back, 0.0)
    return Split(eff, write, rework, back)


def restart_share(t: Tiers, mtbf_s: Num) -> Num:
    """The share of elapsed time in restarts, for any schedule: every time X between failures spends
    min(X, r_c) restarting, r_c the restart of the class drawn, so it is Σ q_c·(1 − e^{−r_c/M}).
    Where the cycle leaves floating point (periods thousands of MTBFs long, effective time 0), this
    is the restart share reported and the rest counts as re-done work."""
    extra = tuple((q, r) for q, r, _ in t.extra)
    ns = lib(*t.shares, *t.restarts, t.nowhere_share, t.nowhere_restart_s, mtbf_s, *(x for row in extra for x in row))
    total: Num = t.nowhere_share * -ns.expm1(-t.nowhere_restart_s / mtbf_s)
    for q, r in (*zip(t.shares, t.restarts, strict=True), *extra):
        total = total + q * -ns.expm1(-r / mtbf_s)
    return total


def _with_silent(t: Tiers, mtbf_s: Num, ns: Lib) -> Split:
    """:func:`by_recursion` with silent events (docs/model.md §16.3). A silent event is one more class of
    the recursion that goes back to the top tier's newest checkpoint and restarts and skips (r + s_k);
    its replay of the work since the onset's checkpoint (d, and P_u·K_p/2 with a checkpoint kept for
    good every K_p) is run by the same process, at its own effective time e₀. Events come at λ_s per unit
    of work, less those a fail-stop rollback erases first (``t.late.erased``); per unit
    of elapsed time that is λ_s·w with w the share of it spent working, from a first pass. With x the
    replay time each unit of the process brings, effective = e₀·(1 − x) and the replays count as rework."""
    top = t.storage_interval_s
    latency = t.silent_latency_s
    beyond = t.late.beyond(top, latency)
    # Each fail-stop class erases a pending event from its own tier's interval and share (§16.3).
    gone = t.late.erased(t.intervals(), tier_shares(t), latency, mtbf_s)
    onsets = t.silent_rate * (1.0 - gone)
    plain = t.replace(silent_rate=0.0)
    rate: Num = onsets
    replay: Num = latency + beyond
    found = Split(0.0, 0.0, 0.0, 0.0)
    for _ in range(3):
        total = 1.0 / mtbf_s + rate
        scale = (1.0 / mtbf_s) / total
        share = rate / total
        scaled = plain.replace(
            shares=tuple(q * scale for q in t.shares),
            nowhere_share=t.nowhere_share * scale,
            extra=tuple((q * scale, r, anchor) for q, r, anchor in t.extra),
        )
        time, stall, back, lam = _cycle(scaled, 1.0 / total, ns, (share, t.silent_extra_s))
        eff = divide(t.segments * t.tau1_s * lam, time, ns)
        write = divide(stall, time, ns)
        back = divide(back, time, ns)
        work = ns.maximum(1.0 - write - back, 0.0)
        more = ns.minimum(divide(rate * replay, eff, ns), 1.0)
        found = Split(eff * (1.0 - more), write, ns.maximum(1.0 - eff * (1.0 - more) - write - back, 0.0), back)
        # The detection comes d of work after the onset, but work a fail-stop throws away moves the job
        # no further: the replay is the latency's kept share, e₀/(e₀ + the fail-stops' rework), that
        # rework being the fail-stops' part of the rework by their rate.
        rework = ns.maximum(work - eff, 0.0) * _fail_stop_part(t, scale, share)
        replay = latency * divide(eff, eff + rework, ns) + beyond
        # Onsets come in clean work only: per unit of elapsed time, λ_s·(w − rate·d) of it.
        rate = onsets * work / (1.0 + onsets * latency)
    # Where the cycle leaves floating point (events or failures thousands of times more often than a
    # period ends), nothing is kept: effective time 0, the restarts their share of the failures drawn.
    if ns is Scalar:
        ok = all(math.isfinite(v) for v in (found.effective, found.write, found.restart))
    else:
        ok = ns.isfinite(found.effective) & ns.isfinite(found.write) & ns.isfinite(found.restart)
    if ns is Scalar and ok:
        return found
    every_class = scaled.replace(shares=(*scaled.shares, share), restarts=(*scaled.restarts, t.silent_extra_s))
    back = restart_share(every_class, 1.0 / total)
    eff = ns.where(ok, found.effective, 0.0)
    write = ns.where(ok, found.write, 0.0)
    back = ns.where(ok, found.restart, back)
    return Split(eff, write, ns.maximum(1.0 - eff - write - back, 0.0), back)


def _fail_stop_part(t: Tiers, scale: Num, share: Num) -> Num:
    """The fail-stops' part of the process's rework (docs/model.md §16.3): each class loses, on
    average, half its own tier's interval (the top tier also its persist lag), so class c weighs
    (its share of the failures)·τ_c/2 and the silent class, which goes back to the top tier, τ_L/2 + P;
    failures with notice lose nothing. On one level every class weighs the same, and the part is the
    fail-stops' share of the rate."""
    intervals = t.intervals()
    top = intervals[-1] / 2.0 + t.lag_s
    fail: Num = 0.0
    for c, (q, tau) in enumerate(zip(tier_shares(t), intervals, strict=True)):
        fail = fail + q * scale * (top if c == len(intervals) - 1 else tau / 2.0)
    return divide(fail, fail + share * top, lib(fail, share))


def tier_shares(t: Tiers) -> tuple[Num, ...]:
    """The share of failures that go back to each tier: its own class's and those of the classes with
    restarts of their own that land on it (docs/model.md §20)."""
    if not t.extra:
        return t.shares
    found = list(t.shares)
    for share, _, anchor in t.extra:
        found[anchor] = found[anchor] + share
    return tuple(found)


def sum_stalls(t: Tiers) -> Num:
    """s₁ + … + s_L: the stall at a top-tier checkpoint."""
    total: Num = 0.0
    for s in t.stalls:
        total = total + s
    return total
