"""The one optimiser: the schedule of L tiers with the highest exact effective time (docs/model.md §8.5).

A schedule is τ₁ and whole multiples m₂ … m_L (tier intervals T₁ = τ₁,
T_i = m_i·T_{i−1}), the top interval at least the persist time. The search
does not depend on where it starts, and its cost grows about linearly with
the number of tiers (a fixed number of exact evaluations per tier and round):

1. **Continuous.** Effective time is smooth in the tier intervals when the
   multiples are allowed to be real (the recursion sums runs of identical
   periods in closed form, so m need not be whole), and nearly separable in
   them (first order is exactly separable: Σ s_i/T_i + Σ q_i·T_i/2M). So a
   Newton step (a parabola through three points) on each free log T_i in
   turn, and on each run of tiers at one interval, from the tiers'
   first-order intervals or any other start, finds the continuous optimum
   in a few rounds of three evaluations per tier.
2. **Whole.** Each multiple is rounded against the whole multiples below
   it, then a hill climb over every neighbouring schedule (each m_i ± 1,
   alone, or with another multiple moved to keep an interval),
   τ₁ re-optimised for each by Newton steps from a first-order guess, moves
   while one is better. A neighbour is screened in two evaluations (its
   slope at the guessed τ₁ bounds its best value) and worked out only where
   it might win. The result is at least as good as each neighbour.

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
from typing import Any

from ckptcalc.model.arrays import Lib, Num, Scalar, any_of, lib
from ckptcalc.model.numeric import golden_max
from ckptcalc.model.one_level import best_interval
from ckptcalc.model.tiers import Tiers, effective

#: Golden-section steps of the τ₁ search (relative precision about 1e-8 in τ).
SEARCH_STEPS = 40

#: How far below and above the first-order interval the τ₁ search looks.
SEARCH_BELOW, SEARCH_ABOVE = 64.0, 2.0

#: How many times the τ₁ search goes on past an end of its bracket where it ended against one.
EXTENSIONS = 8

#: The continuous stage: coordinate Newton steps on each free log T_i (a parabola through three
#: points, the first FIRST_WIDTH apart in log), none longer than MAX_STEP, for at most ROUNDS rounds;
#: a round that moves no log interval by more than SETTLED ends it.
FIRST_WIDTH, MAX_STEP, ROUNDS, SETTLED = 0.05, 1.0, 40, 1e-4

#: τ₁ at whole multiples: Newton steps on log τ₁ from a first-order guess until one moves less than
#: TAU_SETTLED (at most TAU_STEPS), the first stencil TAU_WIDTH wide in log, none narrower than
#: NARROWEST (rounding noise stays below 1e-10).
TAU_STEPS, TAU_SETTLED, TAU_WIDTH, NARROWEST = 8, 1e-7, 0.05, 1e-5

#: The screen of a neighbouring schedule: its slope at the guessed τ₁ over this step in log τ₁.
SLOPE_STEP = 1e-4

#: A neighbour is passed over only when its bound lies below the current value by this (relative).
BETTER = 1e-13

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
        for share, _, anchor in t.extra:  # classes of their own restart on this tier serve it too (§20)
            if anchor == i:
                q = q + share
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
        for share, _, anchor in t.extra:  # classes of their own restart on this tier (§20)
            if anchor == i:
                weight = weight + share * n
    if t.has_silent:
        weight = weight + t.silent_rate * mtbf_s * n  # silent events go back to the top tier (§16)
    return ns.maximum(ns.sqrt(2.0 * cost * mtbf_s / weight), 1e-9 * mtbf_s)


def floor_tau1(t: Tiers) -> Num:
    """The shortest τ₁ whose top interval covers the persist time: lag / (m₂⋯m_L), nudged up past
    the rounding of the division."""
    return t.lag_s / t.segments * (1.0 + 1e-15)


def best_tau1(t: Tiers, mtbf_s: Num) -> Num:
    """The τ₁ that maximises effective time at the schedule's multiples (top interval ≥ persist time)."""
    if t.count == 1 and not t.has_nowhere and not t.has_silent:  # classes of their own restart too (§20.2)
        return best_interval(stall_s=t.stalls[0], lag_s=t.lag_s, mtbf_s=mtbf_s)
    ns = lib(*t.values(), mtbf_s)
    guess = first_order_tau1(t, mtbf_s)
    low = ns.maximum(guess / SEARCH_BELOW, floor_tau1(t))
    high = ns.maximum(guess * SEARCH_ABOVE, low * 2.0)
    if t.has_silent and ns is not Scalar:
        # A late class's latency or restart may be the array where first order's guess is a float: the
        # bracket takes the schedule's shape, so that the search runs on arrays throughout.
        low, high = ns.broadcast_arrays(low, high, *t.values(), mtbf_s)[:2]

    def value(tau: Num) -> Num:
        return effective(t.replace(tau1_s=tau), mtbf_s).effective

    tau = golden(value, low, high)
    # Far from first order (a stall much longer than the MTBF), the optimum can lie beyond the
    # bracket: a search that ends against an end that is not the lag bound goes on past it.
    floor = floor_tau1(t)
    for _ in range(EXTENSIONS):
        up = tau > high / (1.0 + 1e-6)
        down = (tau < low * (1.0 + 1e-6)) & (low > floor * (1.0 + 1e-9))
        if not any_of(up | down):
            break
        low, high = (
            ns.where(up, high / SEARCH_ABOVE, ns.where(down, ns.maximum(low / SEARCH_BELOW, floor), low)),
            ns.where(up, high * SEARCH_BELOW, ns.where(down, low * SEARCH_ABOVE, high)),
        )
        tau = ns.where(up | down, golden(value, low, high), tau)
    # The lag bound is a hard floor: a search that ends against it ends on it.
    return ns.where(value(low) >= value(tau), low, tau)


def best(
    t: Tiers,
    mtbf_s: Num,
    *,
    tau1_fixed: bool = False,
    top_s: Num | None = None,
    start: tuple[Num, ...] | None = None,
) -> Tiers:
    """The schedule with the best τ₁ and whole multiples (the stalls, lag, shares and restarts of ``t``).

    ``tau1_fixed`` keeps the schedule's τ₁ (only the multiples are chosen); ``top_s`` keeps the top
    interval (τ₁ = top / (m₂⋯m_L)). ``t``'s own τ₁ and multiples are not a starting point: the
    search starts from first order, or from ``start`` (the tier intervals T₁ … T_L), and lands on
    the same optimum from either.
    """
    if t.count == 1:
        if tau1_fixed:
            return t
        if top_s is not None:
            return t.replace(tau1_s=top_s)
        return t.replace(tau1_s=best_tau1(t, mtbf_s))
    return _Search(t, mtbf_s, tau1_fixed, top_s).run(start)


def _size(x: Num) -> Num:
    """|x|, for floats and arrays."""
    return abs(x)  # type: ignore[return-value]


def _vertex(low: Num, middle: Num, high: Num, width: Num, reach: Num, ns: Lib) -> Num:
    """Where the parabola through (−width, low), (0, middle), (width, high) peaks, from the middle
    point, within ±reach; where the three are not concave, ``reach`` toward the higher side."""
    bend = high + low - 2.0 * middle
    slope = 0.5 * (high - low)
    concave = bend < 0.0
    newton = -slope * width / ns.where(concave, bend, -1.0)
    return ns.minimum(ns.maximum(ns.where(concave, newton, ns.where(high >= low, reach, -reach)), -reach), reach)


#: A point of the whole stage: the multiples, their effective time, τ₁ and the bend in log τ₁ there.
_Point = tuple[tuple[Num, ...], Num, Num, Num]


class _Search:
    """The two stages of :func:`best` for L ≥ 2."""

    def __init__(self, t: Tiers, mtbf_s: Num, tau1_fixed: bool, top_s: Num | None) -> None:
        self.t, self.mtbf = t, mtbf_s
        self.tau1_fixed, self.top_s = tau1_fixed, top_s
        self.ns = lib(*t.values(), mtbf_s, *([] if top_s is None else [top_s]))
        #: Whole multiples → (effective time, τ₁, bend of the value in log τ₁) where worked exactly.
        self.exact: dict[tuple[float, ...], tuple[Num, Num, Num]] = {}
        #: Whole multiples → (bound on the effective time, best value seen, its τ₁) where only screened.
        self.screened: dict[tuple[float, ...], tuple[Num, Num, Num]] = {}
        #: Whole multiples → effective time at the τ₁ first order predicts, where only that was worked.
        self.lower: dict[tuple[float, ...], Num] = {}

    def _value(self, schedule: Tiers) -> Num:
        return effective(schedule, self.mtbf).effective

    # ------------------------------------------------------------ continuous

    def _at_logs(self, logs: list[Num]) -> Num:
        ns = self.ns
        intervals = [ns.exp(x) for x in logs]
        every = tuple(b / a for a, b in itertools.pairwise(intervals))
        return self._value(self.t.replace(tau1_s=intervals[0], every=every))

    def _start(self, start: tuple[Num, ...] | None) -> list[Num]:
        """The continuous stage's start: first order (or ``start``), held intervals put in, nested,
        the top at least the persist time."""
        ns, count = self.ns, self.t.count
        found = list(start) if start is not None else _first_order_intervals(self.t, self.mtbf, ns)
        if self.tau1_fixed:
            found[0] = self.t.tau1_s + 0.0 * found[0]
        for i in range(count):
            below = found[i - 1] if i else 1e-12 * self.mtbf
            found[i] = ns.minimum(ns.maximum(found[i], below), 1e12 * self.mtbf)
        if self.top_s is not None:
            found[-1] = self.top_s + 0.0 * found[-1]
            for i in range(count - 2, -1, -1):
                found[i] = ns.minimum(found[i], found[i + 1])
        else:
            found[-1] = ns.maximum(found[-1], self.t.lag_s)
        return found

    def _bounds(self, logs: list[Num], first: int, last: int) -> tuple[Num, Num]:
        """The range of a block of log intervals T_first … T_last moved together: between the
        intervals next to it, the top at least the persist time."""
        ns, count = self.ns, self.t.count
        low = logs[first - 1] if first else ns.log(1e-12 * self.mtbf)
        if last == count - 1:
            low = ns.maximum(low, ns.log(ns.maximum(self.t.lag_s, 1e-300)))
        high = logs[last + 1] if last + 1 < count else ns.log(1e12 * self.mtbf)
        return low, ns.maximum(high, low)

    def _coordinate(self, logs: list[Num], value: Num, first: int, last: int, width: Num) -> tuple[Num, Num]:
        """One Newton step on log T_first … log T_last moved together (where they are equal: tiers
        written at the same interval), the others held, within the intervals next to them: the best
        of the three stencil points and the parabola's peak. Returns the value there and the move."""
        ns = self.ns
        here = logs[first]
        together: Any = True
        for k in range(first + 1, last + 1):
            together = together & (logs[k] == here)
        low, high = self._bounds(logs, first, last)
        half = ns.minimum(width, 0.5 * (high - low))
        open_ = (half > 1e-12) & together
        if ns is Scalar and not open_:
            return value, 0.0
        half = ns.where(open_, half, 0.0)
        centre = ns.minimum(ns.maximum(here, low + half), high - half)
        centre = ns.where(open_, centre, here)

        def put(x: Num, into: list[Num]) -> list[Num]:
            for k in range(first, last + 1):
                into[k] = ns.where(open_, x, into[k])
            return into

        def at(x: Num) -> Num:
            return self._at_logs(put(x, list(logs)))

        below, above = at(centre - half), at(centre + half)
        middle = value if ns is Scalar and centre == here else ns.where(centre == here, value, at(centre))
        reach = ns.where(open_, MAX_STEP, 0.0)
        peak = ns.minimum(ns.maximum(centre + _vertex(below, middle, above, half, reach, ns), low), high)
        top = at(peak)
        best_x, best_v = here, value
        for x, v in ((centre - half, below), (centre, middle), (centre + half, above), (peak, top)):
            better = v > best_v
            best_x, best_v = ns.where(better, x, best_x), ns.where(better, v, best_v)
        put(best_x, logs)
        return best_v, _size(best_x - here)

    def _blocks(self, logs: list[Num], free: list[int]) -> list[tuple[int, int]]:
        """Runs of two or more free tiers written at the same interval, each moved as one (a
        coordinate step cannot move one past the other). Arrays: every run of free tiers, each
        point moving only where its run is at one interval."""
        runs: list[tuple[int, int]] = []
        for first in free:
            for last in free:
                if last > first and all(k in free for k in range(first, last + 1)):
                    runs.append((first, last))
        if self.ns is not Scalar:
            return runs
        equal = [(a, b) for a, b in runs if all(logs[k] == logs[a] for k in range(a, b + 1))]
        return [(a, b) for a, b in equal if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in equal)]

    def continuous(self, start: tuple[Num, ...] | None) -> list[Num]:
        """The tier intervals of the continuous optimum (real multiples): a Newton step on each free
        log T_i in turn, top down, and on each run of tiers at one interval, until a round moves
        none by more than SETTLED."""
        ns, count = self.ns, self.t.count
        logs = [ns.log(x) for x in self._start(start)]
        held = {0} if self.tau1_fixed else set()
        if self.top_s is not None:
            held.add(count - 1)
        free = [i for i in reversed(range(count)) if i not in held]
        value = self._at_logs(logs)
        widths: dict[tuple[int, int], Num] = {}
        for _ in range(ROUNDS):
            moved = False
            blocks = self._blocks(logs, free)
            for first, last in [(i, i) for i in free] + blocks:
                width = widths.get((first, last), FIRST_WIDTH)
                value, move = self._coordinate(logs, value, first, last, width)
                widths[first, last] = ns.minimum(ns.maximum(move, SETTLED), FIRST_WIDTH)
                moved = moved or any_of(move > SETTLED)
            # Settled once a round moves nothing, every run of tiers at one interval tried in it.
            if not moved and self._blocks(logs, free) == blocks:
                break
        return [ns.exp(x) for x in logs]

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

    def rounded(self, intervals: list[Num]) -> tuple[Num, ...]:
        """Whole multiples near the continuous intervals, each tier's rounded against the whole
        multiples below it (so that rounding errors do not pile up towards the top)."""
        ns = self.ns
        tau = self.t.tau1_s if self.tau1_fixed else intervals[0]
        every: list[Num] = []
        n: Num = 1.0
        for x in intervals[1:]:
            m = ns.maximum(ns.rint(x / (tau * n)), 1.0)
            every.append(m)
            n = n * m
        return self._valid(tuple(every))

    def _guess(self, every: tuple[Num, ...], ref: tuple[tuple[Num, ...], Num, Num]) -> Num:
        """τ₁ at ``every``, from the best τ₁ of a schedule near it scaled by their first-order ratio."""
        ref_every, ref_tau = ref[0], ref[1]
        return (
            ref_tau
            * first_order_tau1(self.t.replace(every=every), self.mtbf)
            / first_order_tau1(self.t.replace(every=ref_every), self.mtbf)
        )

    def _tau_logs(self, trial: Tiers) -> tuple[Callable[[Num], Num], Num]:
        ns = self.ns
        low = ns.log(ns.maximum(floor_tau1(trial), 1e-12 * self.mtbf))

        def value(u: Num) -> Num:
            return self._value(trial.replace(tau1_s=ns.exp(u)))

        return value, low

    def refine(self, trial: Tiers, guess: Num) -> tuple[Num, Num, Num]:
        """(effective time, τ₁, bend) at ``trial``'s multiples: Newton steps on log τ₁ from ``guess``
        (the best point seen kept), the golden-section search where they have not settled."""
        ns = self.ns
        value, low = self._tau_logs(trial)
        best_u = ns.maximum(ns.log(guess), low)
        best_v = value(best_u)
        width: Any = TAU_WIDTH
        bend: Any = 0.0
        step: Any = 0.0
        for _ in range(TAU_STEPS):
            centre = ns.maximum(best_u, low + width)
            below, above = value(centre - width), value(centre + width)
            same = centre == best_u
            middle = best_v if ns is Scalar and same else ns.where(same, best_v, value(centre))
            step = _vertex(below, middle, above, width, 4.0 * width, ns)
            peak = ns.maximum(centre + step, low)
            top = value(peak)
            bend = (above + below - 2.0 * middle) / (width * width)
            for x, v in ((centre - width, below), (centre, middle), (centre + width, above), (peak, top)):
                better = v > best_v
                best_u, best_v = ns.where(better, x, best_u), ns.where(better, v, best_v)
            width = ns.maximum(ns.minimum(width, abs(step)), NARROWEST)
            if not any_of(abs(step) > TAU_SETTLED):
                break
        if any_of(abs(step) > 0.5 * TAU_WIDTH):
            # Far from where the guess put it: the search over the whole bracket.
            tau = best_tau1(trial, self.mtbf)
            v = self._value(trial.replace(tau1_s=tau))
            better = v > best_v
            best_u, best_v = ns.where(better, ns.log(tau), best_u), ns.where(better, v, best_v)
        return best_v, ns.exp(best_u), bend

    def screen(self, trial: Tiers, guess: Num, bend: Num) -> tuple[Num, Num, Num]:
        """(a bound on the best effective time at ``trial``'s multiples, the better of the two values
        seen, its τ₁): the slope at ``guess`` over SLOPE_STEP in log τ₁, and ``bend``, the curvature
        of a schedule near by at its optimum, give the rise to the peak; the bound adds four times
        that rise and four times the slope step's own error. No bound (∞) where ``bend`` is not
        negative."""
        ns = self.ns
        value, low = self._tau_logs(trial)
        h = SLOPE_STEP
        here = ns.maximum(ns.log(guess), low)
        at_here, ahead = value(here), value(here + h)
        curve = ns.where(bend < 0.0, -bend, 1.0)
        slope = (ahead - at_here) / h
        rise = slope * slope / (2.0 * curve)
        margin = 4.0 * (rise + 0.5 * h * _size(slope)) + 1e-15 * _size(at_here)
        seen = ns.maximum(at_here, ahead)
        bound = ns.where(bend < 0.0, seen + rise + margin, float("inf"))
        return bound, seen, ns.exp(ns.where(ahead > at_here, here + h, here))

    def at(
        self,
        every: tuple[Num, ...],
        ref: tuple[tuple[Num, ...], Num, Num],
        beat: Num | None = None,
        quick: bool = False,
    ) -> tuple[Num, Num, Num]:
        """(effective time, τ₁, bend in log τ₁) at whole multiples, τ₁ re-optimised unless held (from
        ``ref``, a schedule near by, its τ₁ and bend). With ``beat``, a schedule whose screen shows
        it cannot beat that value is not worked out: its best value seen stands for it; with
        ``quick``, one that does not beat it at the guessed τ₁ is not."""
        ns = self.ns
        key = tuple(float(m) for m in every) if ns is Scalar else None
        if key is not None and key in self.exact:
            return self.exact[key]
        trial = self.t.replace(every=every)
        if self.top_s is not None or self.tau1_fixed:
            tau = self.top_s / trial.segments if self.top_s is not None else self.t.tau1_s
            found: tuple[Num, Num, Num] = (self._value(trial.replace(tau1_s=tau)), tau, 0.0)
            if key is not None:
                self.exact[key] = found
            return found
        guess = self._guess(every, ref)
        passed: Any = False
        if beat is not None and quick:
            if key is not None and key in self.lower:
                seen = self.lower[key]
            else:
                seen = self._value(trial.replace(tau1_s=ns.maximum(guess, floor_tau1(trial))))
                if key is not None:
                    self.lower[key] = seen
            passed = seen <= beat * (1.0 + BETTER)
            if ns is Scalar and passed:
                return seen, guess, ref[2]
            tau = guess
        elif beat is not None:
            if key is not None and key in self.screened:
                bound, seen, tau = self.screened[key]
            else:
                bound, seen, tau = self.screen(trial, guess, ref[2])
                if key is not None:
                    self.screened[key] = (bound, seen, tau)
            passed = bound <= beat * (1.0 + BETTER)
            if ns is Scalar and passed:
                return seen, tau, ref[2]
        found = self.refine(trial, guess)
        if key is not None:
            self.exact[key] = found
        if beat is not None and ns is not Scalar:
            return ns.where(passed, seen, found[0]), found[1], found[2]
        return found

    def moved(self, every: tuple[Num, ...], j: int, step: Num, partner: tuple[int, bool], tau: Num) -> tuple[Num, ...]:
        """m_{j+2} moved by ``step``: alone (``partner`` (−1, …)), or with another multiple,
        ``partner[0]``, moved to keep the interval of the upper of the two tiers where it was, in
        seconds at the τ₁ first order predicts for the move (with τ₁ or the top interval held: in
        segments), rounded up where ``partner[1]``, else down."""
        ns = self.ns
        m = ns.maximum(every[j] + step, 1.0)
        trial = (*every[:j], m, *every[j + 1 :])
        k, up = partner
        if k < 0:
            return self._valid(trial)
        top = max(j, k)
        kept: Num = 1.0
        rest: Num = 1.0
        for i in range(top + 1):
            kept = kept * every[i]
            if i != k:
                rest = rest * trial[i]
        held = self.tau1_fixed or self.top_s is not None
        scale = 1.0 if held else tau / self._guess(trial, (every, tau, 0.0))
        ideal = kept * scale / rest
        other = ns.maximum(ns.ceil(ideal) if up else ns.floor(ideal), 1.0) + 0.0
        return self._valid((*trial[:k], other, *trial[k + 1 :]))

    def directions(self, count: int) -> list[tuple[int, float, tuple[int, bool]]]:
        """Every move of the climb: each multiple up or down, alone, or with any other multiple
        moved (rounded down, or up) to keep the upper one's interval: O(L²) moves of one
        evaluation each."""
        pairs = [(j, (-1, False)) for j in range(count)]
        pairs += [(j, (k, up)) for j in range(count) for k in range(count) if k != j for up in (False, True)]
        return [(j, sign, partner) for j, partner in pairs for sign in (1.0, -1.0)]

    def walk(self, at: _Point, j: int, sign: float, partner: tuple[int, bool]) -> tuple[_Point, bool]:
        """One direction of the climb from ``at``: m_{j+2} moved by ``sign`` (see :meth:`moved`), the
        step doubled while it pays and back to a single one where a doubled step overshoots, so
        that a start far from the optimum is left in a few moves, not thousands. A move alone is
        screened against the current value (:meth:`screen`); a coupled one is taken only where its
        value at the τ₁ first order predicts for it already beats the current one. Returns the
        point reached and whether any move paid."""
        ns = self.ns
        every, value, tau, bend = at
        step, moved = sign, False
        for _ in range(256):
            trial = self.moved(every, j, step, partner, tau)
            v, t, b = self.at(trial, (every, tau, bend), beat=value, quick=partner[0] >= 0)
            better = v > value * (1.0 + BETTER)
            if not any_of(better):
                if step == sign:
                    break
                step = sign
                continue
            moved = True
            every = tuple(ns.where(better, x, y) for x, y in zip(trial, every, strict=True))
            value, tau, bend = ns.where(better, v, value), ns.where(better, t, tau), ns.where(better, b, bend)
            step = step * 2.0
        return (every, value, tau, bend), moved

    def _better(self, a: _Point, b: _Point) -> tuple[_Point, bool]:
        """The better of two points, pointwise (``b`` where it beats ``a``), and whether ``b`` won anywhere."""
        ns = self.ns
        better = b[1] > a[1] * (1.0 + BETTER)
        every = tuple(ns.where(better, x, y) for x, y in zip(b[0], a[0], strict=True))
        return (every, *(ns.where(better, x, y) for x, y in zip(b[1:], a[1:], strict=True))), any_of(better)

    def run(self, start: tuple[Num, ...] | None) -> Tiers:
        ns = self.ns
        intervals = self.continuous(start)
        every = self.rounded(intervals)
        real = tuple(b / a for a, b in itertools.pairwise(intervals))
        point: _Point = (every, *self.at(every, (real, intervals[0], 0.0)))
        for _ in range(MAX_MOVES):
            improved = False
            for j, sign, partner in self.directions(len(every)):
                point, moved = self.walk(point, j, sign, partner)
                improved = improved or moved
            if not improved and (self.tau1_fixed or self.top_s is not None):
                # Whole multiples need not nest where the intervals want them (with τ₁ held, 94 × 5
                # segments against 85 × 6): an upper multiple one step away with the one below it
                # climbed afresh, the top tier's interval kept where it was.
                every = point[0]
                for j in range(1, len(every)):
                    for sign in (1.0, -1.0):
                        m = ns.maximum(every[j] + sign, 1.0)
                        below = ns.maximum(ns.rint(every[j - 1] * every[j] / m), 1.0)
                        start_ = self._valid((*every[: j - 1], below, m, *every[j + 1 :]))
                        trial: _Point = (start_, *self.at(start_, (every, point[2], point[3])))
                        for sign_ in (1.0, -1.0):
                            trial, _ = self.walk(trial, j - 1, sign_, (-1, False))
                        point, won = self._better(point, trial)
                        improved = improved or won
            if not improved:
                break
        found = self.t.replace(every=point[0], tau1_s=point[2])
        if self.tau1_fixed or self.top_s is not None:
            return found
        # The optimum's τ₁ is the τ₁ search's at its multiples (where the Newton steps did no better).
        tau = best_tau1(found, self.mtbf)
        better = self._value(found.replace(tau1_s=tau)) >= point[1] * (1.0 - BETTER)
        return found.replace(tau1_s=ns.where(better, tau, point[2]))
