"""The one optimiser: the schedule of L tiers with the highest exact effective time (docs/model.md §8.5).

A schedule is τ₁ and whole multiples m₂ … m_L (tier intervals T₁ = τ₁,
T_i = m_i·T_{i−1}), the top interval at least the persist time. The search
does not depend on where it starts:

1. **Continuous.** Effective time is smooth in the tier intervals when the
   multiples are allowed to be real (the recursion sums runs of identical
   periods in closed form, so m need not be whole), and nearly separable in
   them (first order is exactly separable: Σ s_i/T_i + Σ q_i·T_i/2M). So a
   golden-section search over each free log T_i in turn, the others held,
   from the tiers' first-order intervals, finds the continuous optimum in a
   few rounds.
2. **Whole.** Each multiple is rounded to the nearest whole number, then a
   hill climb over every neighbouring schedule (each m_i ± 1, and m_i ± 1
   with m_{i+1} moved to keep T_{i+1}), τ₁ re-optimised for each, moves
   while one is better. The result is at least as good as each neighbour.

One level is the Lambert-W interval raised to the lag, in closed form.
Floats and numpy arrays take the same path (every loop has a fixed length
or ends when no point improves), so a sweep re-optimises every point.

>>> from ckptcalc.model.tiers import Tiers
>>> t = Tiers(tau1_s=1.0, every=(1.0,), stalls=(3.0, 90.0), lag_s=0.0, shares=(0.99, 0.01), restarts=(60.0, 600.0))
>>> found = best(t, 14400.0)
>>> round(found.tau1_s, 1), found.every
(292.5, (54.0,))
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from ckptcalc.model.arrays import Lib, Num, Scalar, any_of, lib
from ckptcalc.model.numeric import golden_max
from ckptcalc.model.one_level import best_interval
from ckptcalc.model.tiers import Tiers, effective

#: Golden-section steps of the τ₁ search (relative precision about 1e-8 in τ).
SEARCH_STEPS = 40

#: How far below and above the first-order interval the τ₁ search looks.
SEARCH_BELOW, SEARCH_ABOVE = 64.0, 2.0

#: The continuous stage: each log T_i is searched within this factor of where it stands, in
#: this many golden steps (relative precision about 1e-5), for at most this many rounds.
SPAN, SPAN_STEPS, ROUNDS = 8.0, 24, 4

#: A round that moves no interval by more than this (relative) ends the continuous stage.
SETTLED = 1e-3

#: The hill climb's cap on moves (each move improves effective time, so it ends far sooner).
MAX_MOVES = 10_000

#: The largest multiple tried: a free tier below one that costs something is written this often at most.
MAX_MULTIPLE = 1e15


def golden(value: Callable[[Num], Num], low: Num, high: Num, steps: int = SEARCH_STEPS) -> Num:
    """The maximiser of a unimodal ``value`` on [low, high], by golden section on a log scale in a
    fixed number of steps (:func:`ckptcalc.model.numeric.golden_max`), arrays and floats alike."""
    ns = lib(low, high)
    return ns.exp(golden_max(lambda u: value(ns.exp(u)), ns.log(low), ns.log(high), 0.0, steps))


def _first_order_intervals(t: Tiers, mtbf_s: Num, ns: Lib) -> list[Num]:
    """Each tier's first-order interval, made nested: its own Young interval √(2·s_i·M/q_i); a tier
    that serves no failure goes with the next one above that does (written only then), or with the
    one below when it costs nothing to write; none shorter than the one below."""
    count = t.count
    found: list[Num] = [0.0] * count
    for i in range(count - 1, -1, -1):
        s, q = t.stalls[i], t.shares[i]
        own = ns.sqrt(2.0 * s * mtbf_s / ns.maximum(q, 1e-300))
        above = found[i + 1] if i + 1 < count else own
        found[i] = ns.where(q > 0, own, ns.where(s > 0, above, 0.0))
    floor: Num = 1e-9 * mtbf_s
    for i in range(count):
        below = found[i - 1] if i else floor
        found[i] = ns.minimum(ns.maximum(found[i], below), 1e12 * mtbf_s)
    found[-1] = ns.maximum(found[-1], t.lag_s)
    return found


def first_order_tau1(t: Tiers, mtbf_s: Num) -> Num:
    """Young's τ₁ at the schedule's multiples: the minimiser of the first-order loss
    Σ s_i/(N_i·τ₁) + τ₁·Σ q_i·N_i/2M, N_i = m₂⋯m_i, that is √(2·Σ(s_i/N_i)·M / Σ q_i·N_i)."""
    ns = lib(*t.values(), mtbf_s)
    cost: Num = 0.0
    weight: Num = 0.0
    n: Num = 1.0
    for i in range(t.count):
        if i:
            n = n * t.every[i - 1]
        cost = cost + t.stalls[i] / n
        weight = weight + t.shares[i] * n
    if t.has_silent:
        weight = weight + t.silent_rate * mtbf_s * n  # silent events go back to the top tier (§16)
    return ns.maximum(ns.sqrt(2.0 * cost * mtbf_s / weight), 1e-9 * mtbf_s)


def floor_tau1(t: Tiers) -> Num:
    """The shortest τ₁ whose top interval covers the persist time: lag / (m₂⋯m_L), nudged up past
    the rounding of the division."""
    return t.lag_s / t.segments * (1.0 + 1e-15)


def best_tau1(t: Tiers, mtbf_s: Num) -> Num:
    """The τ₁ that maximises effective time at the schedule's multiples (top interval ≥ persist time)."""
    if t.count == 1 and not t.has_notice and not t.has_silent:
        return best_interval(stall_s=t.stalls[0], lag_s=t.lag_s, mtbf_s=mtbf_s)
    ns = lib(*t.values(), mtbf_s)
    guess = first_order_tau1(t, mtbf_s)
    low = ns.maximum(guess / SEARCH_BELOW, floor_tau1(t))
    high = ns.maximum(guess * SEARCH_ABOVE, low * 2.0)

    def value(tau: Num) -> Num:
        return effective(t.replace(tau1_s=tau), mtbf_s).effective

    tau = golden(value, low, high)
    # The lag bound is a hard floor: a search that ends against it ends on it.
    return ns.where(value(low) >= value(tau), low, tau)


def best(t: Tiers, mtbf_s: Num, *, tau1_fixed: bool = False, top_s: Num | None = None) -> Tiers:
    """The schedule with the best τ₁ and whole multiples (the stalls, lag, shares and restarts of ``t``).

    ``tau1_fixed`` keeps the schedule's τ₁ (only the multiples are chosen); ``top_s`` keeps the top
    interval (τ₁ = top / (m₂⋯m_L)). ``t``'s own τ₁ and multiples are not a starting point: the
    search starts from first order.
    """
    if t.count == 1:
        if tau1_fixed:
            return t
        if top_s is not None:
            return t.replace(tau1_s=top_s)
        return t.replace(tau1_s=best_tau1(t, mtbf_s))
    return _Search(t, mtbf_s, tau1_fixed, top_s).run()


class _Search:
    """The two stages of :func:`best` for L ≥ 2."""

    def __init__(self, t: Tiers, mtbf_s: Num, tau1_fixed: bool, top_s: Num | None) -> None:
        self.t, self.mtbf = t, mtbf_s
        self.tau1_fixed, self.top_s = tau1_fixed, top_s
        self.ns = lib(*t.values(), mtbf_s, *([] if top_s is None else [top_s]))
        self.memo: dict[tuple[float, ...], tuple[Num, Num]] = {}

    # ------------------------------------------------------------ continuous

    def _at_intervals(self, intervals: list[Num]) -> Num:
        every = tuple(b / a for a, b in itertools.pairwise(intervals))
        return effective(self.t.replace(tau1_s=intervals[0], every=every), self.mtbf).effective

    def continuous(self) -> list[Num]:
        """The tier intervals of the continuous optimum (real multiples)."""
        ns, count = self.ns, self.t.count
        found = _first_order_intervals(self.t, self.mtbf, ns)
        if self.tau1_fixed:
            found[0] = self.t.tau1_s + 0.0 * found[0]
            for i in range(1, count):
                found[i] = ns.maximum(found[i], found[i - 1])
        if self.top_s is not None:
            found[-1] = self.top_s + 0.0 * found[-1]
            for i in range(count - 2, -1, -1):
                found[i] = ns.minimum(found[i], found[i + 1])
        held = {0} if self.tau1_fixed else set()
        if self.top_s is not None:
            held.add(count - 1)
        free = [i for i in range(count) if i not in held]
        for _ in range(ROUNDS):
            moved = False
            # Top down: a tier's interval is bounded by its neighbours', and the upper ones move most.
            for i in reversed(free):
                low = found[i] / SPAN
                high = found[i] * SPAN
                if i:
                    low = ns.maximum(low, found[i - 1])
                if i + 1 < count:
                    high = ns.minimum(high, found[i + 1])
                if i == count - 1:
                    low = ns.maximum(low, self.t.lag_s)
                low = ns.maximum(low, 1e-12 * self.mtbf)
                high = ns.maximum(high, low)

                def value(x: Num, i: int = i) -> Num:
                    trial = list(found)
                    trial[i] = x
                    return self._at_intervals(trial)

                open_ = high > low * (1.0 + 1e-12)
                x = ns.where(open_, golden(value, low, ns.where(open_, high, low * 2.0), SPAN_STEPS), low)
                # Keep the old value where the search found nothing better (a flat or bounded value).
                keep = value(found[i]) >= value(x)
                x = ns.where(keep, found[i], x)
                if any_of(abs(x - found[i]) > SETTLED * found[i]):
                    moved = True
                found[i] = x
            if not moved:
                break
        return found

    # ----------------------------------------------------------------- whole

    def _floor(self, j: int, every: tuple[Num, ...]) -> Num:
        """The smallest m_{j+2} allowed: 1, or, with τ₁ held, what keeps the top at the persist time."""
        if not self.tau1_fixed or j != len(every) - 1:
            return 1.0
        n: Num = 1.0
        for m in every[:-1]:
            n = n * m
        return self.ns.maximum(1.0, self.ns.ceil(self.t.lag_s / (n * self.t.tau1_s) - 1e-12))

    def _valid(self, every: tuple[Num, ...]) -> tuple[Num, ...]:
        ns = self.ns
        every = tuple(ns.minimum(ns.maximum(m, 1.0), MAX_MULTIPLE) for m in every)
        return (*every[:-1], ns.maximum(every[-1], self._floor(len(every) - 1, every)))

    def at(self, every: tuple[Num, ...]) -> tuple[Num, Num]:
        """(effective time, τ₁) at whole multiples, τ₁ re-optimised unless held."""
        key = tuple(float(m) for m in every) if self.ns is Scalar else None
        if key is not None and key in self.memo:
            return self.memo[key]
        trial = self.t.replace(every=every)
        if self.top_s is not None:
            tau = self.top_s / trial.segments
        elif self.tau1_fixed:
            tau = self.t.tau1_s
        else:
            tau = best_tau1(trial, self.mtbf)
        found = effective(trial.replace(tau1_s=tau), self.mtbf).effective, tau
        if key is not None:
            self.memo[key] = found
        return found

    def moved(self, every: tuple[Num, ...], j: int, step: Num, keep_next: bool) -> tuple[Num, ...]:
        """m_{j+2} moved by ``step``; with ``keep_next``, the next multiple moved to keep its tier's interval."""
        ns = self.ns
        m = ns.maximum(every[j] + step, 1.0)
        if keep_next and j + 1 < len(every):
            above = ns.rint(every[j] * every[j + 1] / m)
            return self._valid((*every[:j], m, above, *every[j + 2 :]))
        return self._valid((*every[:j], m, *every[j + 1 :]))

    def directions(self, count: int) -> list[tuple[int, float, bool]]:
        """Every neighbouring move: each multiple up or down, alone or keeping the next tier's interval."""
        return [
            (j, sign, keep)
            for j in range(count)
            for sign in (1.0, -1.0)
            for keep in ((False, True) if j + 1 < count else (False,))
        ]

    def walk(
        self, every: tuple[Num, ...], value: Num, tau: Num, j: int, sign: float, keep: bool
    ) -> tuple[tuple[Num, ...], Num, Num, bool]:
        """One direction of the climb from ``every``: m_{j+2} moved by ``sign`` (with the next multiple
        keeping its tier's interval when ``keep``), the step doubled while it pays, so that a start far
        from the optimum (effective time near 0, where the tiers' intervals pull on each other) is left
        in a few moves, not thousands. Returns the schedule reached, its value and τ₁, and whether any
        move paid."""
        ns = self.ns
        step, moved = sign, False
        for _ in range(64):
            trial = self.moved(every, j, step, keep)
            v, t = self.at(trial)
            better = v > value * (1.0 + 1e-13)
            if not any_of(better):
                break
            moved = True
            every = tuple(ns.where(better, x, y) for x, y in zip(trial, every, strict=True))
            value, tau = ns.where(better, v, value), ns.where(better, t, tau)
            step = step * 2.0
        return every, value, tau, moved

    def climb(self, every: tuple[Num, ...], value: Num, tau: Num, j: int) -> tuple[tuple[Num, ...], Num, Num]:
        """From ``every``, the best m_{j+2} alone: steps up or down, doubled while they pay."""
        for sign in (1.0, -1.0):
            every, value, tau, _ = self.walk(every, value, tau, j, sign, False)
        return every, value, tau

    def run(self) -> Tiers:
        ns = self.ns
        intervals = self.continuous()
        every = self._valid(tuple(ns.rint(b / a) for a, b in itertools.pairwise(intervals)))
        value, tau = self.at(every)
        for _ in range(MAX_MOVES):
            improved = False
            for j, sign, keep in self.directions(len(every)):
                every, value, tau, moved = self.walk(every, value, tau, j, sign, keep)
                improved = improved or moved
            if not improved:
                # Whole multiples need not nest where the intervals want them (with τ₁ held, 94 × 5
                # segments against 85 × 6): an upper multiple one step away with the one below it
                # climbed afresh, the top tier's interval kept where it was.
                for j in range(1, len(every)):
                    for sign in (1.0, -1.0):
                        m = ns.maximum(every[j] + sign, 1.0)
                        below = ns.maximum(ns.rint(every[j - 1] * every[j] / m), 1.0)
                        start = self._valid((*every[: j - 1], below, m, *every[j + 1 :]))
                        v, t = self.at(start)
                        trial, v, t = self.climb(start, v, t, j - 1)
                        better = v > value * (1.0 + 1e-13)
                        if any_of(better):
                            improved = True
                            every = tuple(ns.where(better, x, y) for x, y in zip(trial, every, strict=True))
                            value, tau = ns.where(better, v, value), ns.where(better, t, tau)
            if not improved:
                break
        return self.t.replace(every=every, tau1_s=tau)
