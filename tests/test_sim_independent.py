"""simulate against an independent, deliberately simple simulator written from the semantics alone.

The reference below walks the timeline event by event in plain Python: one
failure at a time, one piece of work or stall at a time, keeping the last
memory checkpoint, the last durable storage checkpoint and the snapshot in
flight as (position, useful work) pairs. It shares no code with
``ckptcalc.simulation.timeline`` (which works on phases and whole arrays), so the two
agreeing is evidence that both follow the semantics:

* renewal: the failure clock restarts at each failure, the time to the next
  one counts from the start of the restart, and restarts can be interrupted;
* a memory checkpoint after every τ₁ of useful work (stall s₁); every m-th is
  also a storage checkpoint (stall s₁ + s₂); one level is m = 1, s₁ = 0,
  every failure served by storage;
* a storage snapshot is durable once the job's position (work and stalls,
  restarts excluded) has reached P past the end of its stall; positions roll
  back with failures, so repeated work must be regained first;
* a failure is served by memory with probability q (restart r₁, back to the
  last memory checkpoint), else by storage (restart r₂, back to the last
  durable storage checkpoint, the memory copy reset to it); a failure during
  a restart draws its level afresh, and memory resumes towards wherever the
  interrupted restart was going;
* split: useful = kept work, write = stalls (also those cut short),
  restart = restarts (also those cut short), rework = the rest.

The same rules, for exponential failures, also give the exact split by a
linear solve over the states of one renewal cycle (:func:`markov`): it agrees
with the walk within its confidence interval, with Daly's closed form for one
synchronous level, and with ``ckptcalc.model.tiers`` to rounding, so the exact
model the decisions come from is checked against code that shares nothing
with it.

Fixed seeds throughout: not flaky.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from references import daly

from ckptcalc.simulation import timeline as sim

BATCHES = 20


@dataclass(frozen=True)
class Strategy:
    work: float  # τ₁: useful work between checkpoints
    stall: float  # s₁: stall of every checkpoint
    storage_stall: float  # s₂: added at every storage checkpoint
    every: int  # m: checkpoints per storage checkpoint
    lag: float  # P: position past the storage stall's end before the snapshot is durable
    restart_memory: float  # r₁
    restart_storage: float  # r₂
    share: float  # q: probability that memory serves a failure


def one_level(tau: float, stall: float, restart: float, lag: float = 0.0) -> Strategy:
    return Strategy(tau, 0.0, stall, 1, lag, restart, restart, 0.0)


def t_975(df: int) -> float:
    """Student's t quantile at 0.975, from its density by Simpson's rule and bisection (no shared table)."""
    norm = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))

    def cdf(t: float) -> float:
        steps = 2000
        h = t / steps
        total = 0.0
        for i in range(steps + 1):
            weight = 1 if i in (0, steps) else (4 if i % 2 else 2)
            total += weight * (1 + (i * h) ** 2 / df) ** (-(df + 1) / 2)
        return 0.5 + norm * total * h / 3

    low, high = 1.0, 5.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if cdf(mid) < 0.975 else (low, mid)
    return (low + high) / 2


T_19 = t_975(BATCHES - 1)


@dataclass(frozen=True)
class Outcome:
    effective: float
    half_width: float
    split: dict[str, float]
    split_half_width: dict[str, float]
    in_restart: int


def reference(strategy: Strategy, draws: Iterator[tuple[float, bool]], cycles: int) -> Outcome:
    """Walk ``cycles`` failures of the timeline; ``draws`` gives (time to failure, served by memory) per failure."""
    s = strategy
    start = (0.0, 0.0, 0)  # checkpoints: (position, useful work, checkpoints taken up to it)
    durable = memory = target = start
    in_flight: tuple[tuple[float, float, int], float] | None = None  # snapshot, position at which it is durable
    restart = s.restart_storage  # the timeline opens with a restart from storage
    sizes = [cycles // BATCHES + (1 if i < cycles % BATCHES else 0) for i in range(BATCHES)]
    rows = []
    in_restart = 0
    for size in sizes:
        kept_before = target[1]
        time = write = restarting = 0.0
        for _ in range(size):
            x, by_memory = next(draws)
            time += x
            if x < restart:  # the restart itself fails
                restarting += x
                in_restart += 1
            else:
                restarting += restart
                left = x - restart
                position, done, count = target
                while True:
                    if left < s.work:  # fails during work
                        position += left
                        break
                    left -= s.work
                    position += s.work
                    done += s.work
                    if in_flight is not None and position >= in_flight[1]:
                        durable, in_flight = in_flight[0], None
                    stall = s.stall + (s.storage_stall if (count + 1) % s.every == 0 else 0.0)
                    if left < stall:  # fails during the stall
                        position += left
                        write += left
                        break
                    left -= stall
                    position += stall
                    write += stall
                    count += 1
                    memory = (position, done, count)
                    if in_flight is not None and position >= in_flight[1]:
                        durable, in_flight = in_flight[0], None
                    if count % s.every == 0:
                        if s.lag == 0:
                            durable = memory
                        else:
                            assert in_flight is None, "a persist still in flight when the next starts"
                            in_flight = (memory, position + s.lag)
                if in_flight is not None and position >= in_flight[1]:
                    durable, in_flight = in_flight[0], None
            if by_memory:
                target = memory  # a failed restart keeps going where it was going: memory is that point
                restart = s.restart_memory
            else:
                target = memory = durable
                in_flight = None
                restart = s.restart_storage
        rows.append((time, target[1] - kept_before, write, restarting))
    return _outcome(rows, in_restart)


def _outcome(rows: list[tuple[float, float, float, float]], in_restart: int) -> Outcome:
    time = sum(r[0] for r in rows)
    useful, write, restart = (sum(r[i] for r in rows) for i in (1, 2, 3))
    split = {"useful": useful / time, "write": write / time, "restart": restart / time}
    split["rework"] = 1.0 - split["useful"] - split["write"] - split["restart"]
    half: dict[str, float] = {}
    for key, column in (("useful", 1), ("write", 2), ("restart", 3), ("rework", None)):
        shares = [(r[column] if column is not None else r[0] - r[1] - r[2] - r[3]) / r[0] for r in rows]
        mean = sum(shares) / len(shares)
        sd = math.sqrt(sum((v - mean) ** 2 for v in shares) / (len(shares) - 1))
        half[key] = T_19 * sd / math.sqrt(len(shares))
    return Outcome(split["useful"], half["useful"], split, half, in_restart)


def python_draws(strategy: Strategy, mtbf: float, shape: float | None, seed: int) -> Iterator[tuple[float, bool]]:
    """Failure times and service levels from Python's own generator, independent of numpy's."""
    rng = random.Random(seed)
    scale = mtbf / math.gamma(1 + 1 / shape) if shape is not None else 0.0
    while True:
        x = rng.expovariate(1 / mtbf) if shape is None else rng.weibullvariate(scale, shape)
        yield x, rng.random() < strategy.share


def to_schedule(s: Strategy) -> sim.Schedule:
    if s.share == 0.0 and s.every == 1 and s.stall == 0.0 and s.restart_memory == s.restart_storage:
        return sim.Schedule.single(interval_s=s.work, stall_s=s.storage_stall, restart_s=s.restart_storage, lag_s=s.lag)
    return sim.Schedule(
        interval_s=s.work,
        every=(s.every,),
        stalls=(s.stall, s.storage_stall),
        restarts=(s.restart_memory, s.restart_storage),
        shares=(s.share, 1.0 - s.share),
        lag_s=s.lag,
    )


def two_levels(
    tau: float, every: int, s1: float, s2: float, q: float, r1: float, r2: float, lag: float = 0.0
) -> Strategy:
    return Strategy(tau, s1, s2, every, lag, r1, r2, q)


# (id, strategy, MTBF, Weibull shape or None). Few checkpoints per failure, so the walk stays quick.
CASES = [
    ("sync", one_level(600.0, 60.0, 300.0), 3600.0, None),
    ("sync-weibull", one_level(600.0, 60.0, 300.0), 3600.0, 0.7),
    ("async", one_level(600.0, 5.0, 300.0, lag=400.0), 3600.0, None),
    ("async-lag-equals-interval", one_level(500.0, 20.0, 900.0, lag=500.0), 2400.0, 0.8),
    # docs/model.md §8: τ₁ 300 s, m 5, s₁ 10, s₂ 100, q 0.7, r₁ 60, r₂ 900, M 3600
    ("memory+sync", two_levels(300.0, 5, 10.0, 100.0, 0.7, 60.0, 900.0), 3600.0, None),
    ("memory+sync-m1", two_levels(400.0, 1, 10.0, 60.0, 0.5, 60.0, 600.0), 3000.0, None),
    ("memory+sync-weibull", two_levels(250.0, 3, 10.0, 60.0, 0.8, 60.0, 600.0), 3000.0, 0.6),
    ("memory+async", two_levels(200.0, 4, 5.0, 20.0, 0.8, 60.0, 600.0, lag=500.0), 3000.0, None),
    ("memory+async-long-lag", two_levels(250.0, 2, 10.0, 40.0, 0.6, 30.0, 300.0, lag=500.0), 2500.0, None),
    ("memory+async-weibull", two_levels(150.0, 6, 5.0, 30.0, 0.9, 40.0, 500.0, lag=700.0), 2000.0, 0.7),
]


@pytest.mark.parametrize(("strategy", "mtbf", "shape"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_agrees_with_the_event_by_event_reference(strategy: Strategy, mtbf: float, shape: float | None) -> None:
    walked = reference(strategy, python_draws(strategy, mtbf, shape, seed=17), 100_000)
    run = sim.run_schedule(to_schedule(strategy), sim.Failures(mtbf, shape), cycles=1_000_000, seed=17)
    half = (run.ci95[1] - run.ci95[0]) / 2
    combined = math.hypot(half, walked.half_width)
    assert abs(run.effective - walked.effective) <= combined, (run.effective, walked.effective, combined)
    for key in ("write", "rework", "restart"):
        # The vectorised run has 10x the cycles, so its own spread is about a third of the walk's.
        tolerance = 2.0 * math.hypot(walked.split_half_width[key], walked.split_half_width[key] / math.sqrt(10))
        assert abs(getattr(run.split, key) - walked.split[key]) <= tolerance, key


def numpy_draws(strategy: Strategy, mtbf: float, seed: int, cycles: int) -> Iterator[tuple[float, bool]]:
    """The very draws ``simulate`` makes, in its documented order (one window of failure times, then its levels)."""
    rng = np.random.default_rng(seed)
    x = rng.exponential(mtbf, cycles)
    by_memory = rng.random(cycles) < strategy.share if to_schedule(strategy).storage_every is not None else None
    for i in range(cycles):
        yield float(x[i]), bool(by_memory[i]) if by_memory is not None else False


@pytest.mark.parametrize(
    ("strategy", "mtbf"), [c[1:3] for c in CASES if c[3] is None], ids=[c[0] for c in CASES if c[3] is None]
)
def test_same_draws_same_timeline(strategy: Strategy, mtbf: float) -> None:
    # Fed the same failure times and levels, the walk and the vectorised phases must tell the same story,
    # up to rounding: every rollback, stall and interrupted restart of 20 000 cycles.
    cycles = 20_000
    walked = reference(strategy, numpy_draws(strategy, mtbf, 5, cycles), cycles)
    run = sim.run_schedule(to_schedule(strategy), sim.Failures(mtbf), cycles=cycles, seed=5)
    assert run.failures_in_restart == walked.in_restart
    assert run.effective == pytest.approx(walked.effective, rel=1e-9)
    for key in ("write", "rework", "restart"):
        assert getattr(run.split, key) == pytest.approx(walked.split[key], rel=1e-9, abs=1e-12)


def test_reference_walk_matches_daly_exactly_enough() -> None:
    # The reference itself against docs/model.md §3's exact formula, so that agreement above means something:
    # τ/(M·e^{r/M}·(e^{(τ+δ)/M} − 1)) at τ 600, δ 60, r 300, M 3600.
    strategy = one_level(600.0, 60.0, 300.0)
    exact = 600.0 / (3600.0 * math.exp(300.0 / 3600.0) * math.expm1(660.0 / 3600.0))
    walked = reference(strategy, python_draws(strategy, 3600.0, None, seed=3), 100_000)
    assert abs(walked.effective - exact) <= walked.half_width


# ------------------------------------------------------------- an independent analytic reference


@dataclass(frozen=True)
class Shares:
    effective: float
    write: float
    rework: float
    restart: float


def markov(strategy: Strategy, mtbf: float) -> Shares:
    """The exact split of elapsed time for exponential failures, from the semantics above, by a linear solve.

    One renewal cycle runs from one storage commit to the next. The states are: ``S_j`` at memory
    checkpoint j (counted from the storage copy made durable at the cycle's start, j = 0 … m + k),
    ``C`` the commit point itself (offset u into segment k + 1, where the lag P ends: P = k·(τ₁ + s₁) + u),
    ``R1_j`` a memory restart heading for checkpoint j and ``R2`` a storage restart (heading for j = 0,
    the memory copy reset to it). From ``S_{m+k}`` only the u up to the next commit remain, which
    absorbs. A piece of w work then d stall takes M·(1 − e^{−(w+d)/M}) expected time, of which
    e^{−w/M}·M·(1 − e^{−d/M}) is stall; it fails with probability 1 − e^{−(w+d)/M}, and a failure
    goes to ``R1`` with probability q, else to ``R2``. Solving (I − P)·x = c for time, stall and
    restart from ``C`` gives the shares; the useful work of a cycle is m·τ₁. Nothing here is shared
    with ckptcalc: it is numpy.linalg.solve on a matrix built from those rules.
    """
    s = strategy
    tau, m, q = s.work, s.every, s.share
    width = tau + s.stall

    def length(j: int) -> float:  # segment j runs from checkpoint j − 1 to checkpoint j
        return width + (s.storage_stall if j % m == 0 else 0.0)

    k = min(int(s.lag // width), m - 1)
    u = s.lag - k * width
    last = m + k  # S_0 … S_last
    index_s = list(range(last + 1))
    index_r1 = [last + 1 + j for j in range(last + 1)]
    r2 = 2 * (last + 1)
    c_state = r2 + 1
    n = c_state + 1
    p = np.zeros((n, n))
    reward = np.zeros((n, 3))  # time, stall, restart per visit

    def piece(state: int, work: float, stall: float, success: int | None, back: int) -> None:
        total = work + stall
        fail = -math.expm1(-total / mtbf)
        reward[state, 0] = mtbf * fail
        reward[state, 1] = math.exp(-work / mtbf) * -mtbf * math.expm1(-stall / mtbf)
        if success is not None:
            p[state, success] += 1.0 - fail
        p[state, index_r1[back]] += fail * q
        p[state, r2] += fail * (1.0 - q)

    def restart(state: int, duration: float, target: int) -> None:
        fail = -math.expm1(-duration / mtbf)
        reward[state, 0] = reward[state, 2] = mtbf * fail
        p[state, target] += 1.0 - fail
        p[state, index_r1[0] if state == r2 else state] += fail * q
        p[state, r2] += fail * (1.0 - q)

    for j in range(last):
        piece(index_s[j], tau, length(j + 1) - tau, index_s[j + 1], j)
    piece(index_s[last], min(u, tau), max(u - tau, 0.0), None, last)  # success: the commit, absorbing
    rest = length(k + 1) - u
    piece(c_state, max(tau - u, 0.0), rest - max(tau - u, 0.0), index_s[k + 1], k)
    for j in range(last + 1):
        restart(index_r1[j], s.restart_memory, index_s[j])
    restart(r2, s.restart_storage, index_s[0])
    solved = np.linalg.solve(np.eye(n) - p, reward)
    time, stall, restarting = solved[c_state]
    effective = m * tau / time
    return Shares(effective, stall / time, 1.0 - effective - stall / time - restarting / time, restarting / time)


@pytest.mark.parametrize(
    ("tau", "delta", "restart", "mtbf"),
    [(600.0, 60.0, 300.0, 3600.0), (266.8, 3.24, 600.0, 11160.0), (300.0, 300.0, 600.0, 900.0)],
)
def test_markov_reference_is_daly_for_one_synchronous_level(
    tau: float, delta: float, restart: float, mtbf: float
) -> None:
    # For one synchronous level the split has a closed form: per segment of τ + δ, e^{(τ+δ)/M} attempts
    # each stalling e^{−τ/M}·M·(1 − e^{−δ/M}); every inter-failure time X spends min(X, r) restarting.
    got = markov(one_level(tau, delta, restart), mtbf)
    assert got.effective == pytest.approx(daly(tau, delta, restart, mtbf), rel=1e-11)
    stall = math.expm1(delta / mtbf) * math.exp(-restart / mtbf) / math.expm1((tau + delta) / mtbf)
    assert got.write == pytest.approx(stall, rel=1e-11)
    assert got.restart == pytest.approx(-math.expm1(-restart / mtbf), rel=1e-11)


@pytest.mark.parametrize(
    ("strategy", "mtbf"), [c[1:3] for c in CASES if c[3] is None], ids=[c[0] for c in CASES if c[3] is None]
)
def test_markov_reference_agrees_with_the_walk(strategy: Strategy, mtbf: float) -> None:
    # The linear solve and the event-by-event walk follow the same rules in two unrelated ways.
    walked = reference(strategy, python_draws(strategy, mtbf, None, seed=23), 100_000)
    exact = markov(strategy, mtbf)
    assert abs(walked.effective - exact.effective) <= walked.half_width
    for key in ("write", "rework", "restart"):
        assert abs(walked.split[key] - getattr(exact, key)) <= 1.5 * walked.split_half_width[key], key


# Beyond CASES: the commit inside a stall, at a storage boundary, many segments, and long restarts.
EXACT_CASES = [
    *[(c[0], c[1], c[2]) for c in CASES if c[3] is None],
    ("async-lag-equals-interval", one_level(500.0, 20.0, 900.0, lag=500.0), 2400.0),
    ("memory+async-commit-in-a-stall", two_levels(200.0, 3, 5.0, 50.0, 0.8, 60.0, 600.0, lag=406.0), 3000.0),
    ("memory+async-lag-m-tau", two_levels(200.0, 3, 5.0, 50.0, 0.8, 60.0, 600.0, lag=600.0), 3000.0),
    ("memory+sync-many", two_levels(292.5, 54, 3.0, 90.0, 0.99, 60.0, 600.0), 14400.0),
    ("memory+async-restarts-beyond-M", two_levels(100.0, 7, 2.0, 30.0, 0.5, 900.0, 5000.0, lag=350.0), 1500.0),
]


@pytest.mark.parametrize(("strategy", "mtbf"), [c[1:] for c in EXACT_CASES], ids=[c[0] for c in EXACT_CASES])
def test_exact_model_is_the_markov_reference(strategy: Strategy, mtbf: float) -> None:
    # ckptcalc.model.tiers's recursion against the linear solve: the same numbers, to rounding. One level
    # is its closed form, the rest the recursion over two tiers.
    from ckptcalc.model import tiers

    if strategy.share == 0.0 and strategy.stall == 0.0 and strategy.every == 1:
        schedule = tiers.single(
            interval_s=strategy.work, stall_s=strategy.storage_stall, lag_s=strategy.lag,
            restart_s=strategy.restart_storage,
        )  # fmt: skip
    else:
        schedule = tiers.Tiers(
            tau1_s=strategy.work,
            every=(float(strategy.every),),
            stalls=(strategy.stall, strategy.storage_stall),
            lag_s=strategy.lag,
            shares=(strategy.share, 1.0 - strategy.share),
            restarts=(strategy.restart_memory, strategy.restart_storage),
        )
    got = tiers.effective(schedule, mtbf)
    want = markov(strategy, mtbf)
    for key in ("effective", "write", "rework", "restart"):
        assert getattr(got, key) == pytest.approx(getattr(want, key), rel=1e-11), key


def test_t_quantile_is_the_textbook_value() -> None:
    assert abs(T_19 - 2.093) < 5e-4  # tables of Student's t, 19 degrees of freedom, 97.5 %


# ------------------------------------------------------------- silent events on tiers (docs/model.md §7.2)


@dataclass(frozen=True)
class SilentCase:
    tau: float  # τ₁
    every: int  # m: memory checkpoints per storage checkpoint (1 with one level)
    stall: float  # s₁ (the whole stall with one level)
    storage_stall: float  # s₂, added at a storage checkpoint
    memory_restart: float  # r₁
    storage_restart: float  # r₂, also the restart after a detection
    memory_share: float  # q
    mtbf: float
    silent_mtbf: float
    latency: float  # d
    skip: float
    keep: int | None  # storage checkpoints retained (None: all)


def _mark(marks: list[tuple[float, float]], failures: int, cycles: int, t: float, kept: float) -> None:
    """The elapsed time and kept work at the end of each batch of failures."""
    if failures and failures % (cycles // BATCHES) == 0 and len(marks) < failures // (cycles // BATCHES):
        marks.append((t, kept))


def silent_walk(case: SilentCase, cycles: int, seed: int) -> tuple[float, float, int, int]:
    """The timeline of §7.2 on absolute clocks: failures at elapsed times, onsets and detections at totals
    of work done (kept or not), positions as whole checkpoints counted from the start. Returns the
    effective time, its 95 % half-width over 20 batches of failures, the events noticed and erased."""
    rng = random.Random(seed)
    t = 0.0  # elapsed
    worked = 0.0  # every unit of work ever done
    index, into = 0, 0.0  # position: the last boundary passed, work since
    memory = 0  # the memory copy's boundary
    storage = [0]  # retained storage boundaries, newest last
    onset: int | None = None  # the boundary before the onset while corrupt
    onset_at = rng.expovariate(1.0 / case.silent_mtbf)  # on the clock ``worked``
    detect_at = math.inf
    noticed = erased = failures = 0
    marks: list[tuple[float, float]] = []

    def roll(target: int) -> None:
        nonlocal index, into, onset, onset_at, detect_at, erased
        if onset is not None and target <= onset:
            onset, detect_at, erased = None, math.inf, erased + 1
            onset_at = worked + rng.expovariate(1.0 / case.silent_mtbf)
        index, into = target, 0.0

    def crash_and_restart() -> float:
        """A fail-stop now: its level (drawn afresh at each interrupted restart), rollbacks, restarts;
        returns the elapsed time of the next failure."""
        nonlocal t, memory
        while True:
            if rng.random() < case.memory_share:
                roll(memory)
                r = case.memory_restart
            else:
                roll(storage[-1])
                memory = storage[-1]
                r = case.storage_restart
            x = rng.expovariate(1.0 / case.mtbf)
            if x >= r:
                t += r
                return t + x - r
            t += x

    fail_at = crash_and_restart()
    while failures < cycles:
        to_boundary = case.tau - into
        to_signal = (onset_at if onset is None else detect_at) - worked
        to_fail = fail_at - t
        if to_fail < min(to_boundary, to_signal):
            t, worked, into = fail_at, worked + to_fail, into + to_fail
            failures += 1
            fail_at = crash_and_restart()
            _mark(marks, failures, cycles, t, index * case.tau + into)
            continue
        dt = min(to_boundary, to_signal)
        t, worked, into = t + dt, worked + dt, into + dt
        if onset is None and worked >= onset_at:
            onset, detect_at = index, worked + rng.expovariate(1.0 / case.latency)
        elif onset is not None and worked >= detect_at:
            noticed += 1
            # ``storage`` rises (each boundary written is past every one retained), so the boundaries up to a
            # point are the list up to its place.
            clean = bisect.bisect_right(storage, onset)
            target = storage[clean - 1] if clean else onset // case.every * case.every
            storage = storage[: bisect.bisect_right(storage, target)] or [target]
            memory = target
            onset, detect_at = None, math.inf
            onset_at = worked + rng.expovariate(1.0 / case.silent_mtbf)
            index, into = target, 0.0
            pause = case.storage_restart + case.skip
            if fail_at - t < pause:
                t = fail_at
                failures += 1
                fail_at = crash_and_restart()
            else:
                t += pause
        elif into >= case.tau:
            stall = case.stall + (case.storage_stall if (index + 1) % case.every == 0 else 0.0)
            if fail_at - t < stall:
                t = fail_at
                failures += 1
                fail_at = crash_and_restart()
            else:
                t += stall
                index, into = index + 1, 0.0
                memory = index
                if index % case.every == 0:
                    storage.append(index)
                    if case.keep is not None:
                        storage = storage[-case.keep :]
        _mark(marks, failures, cycles, t, index * case.tau + into)
    effective = (index * case.tau + into) / t
    edges = [(0.0, 0.0), *marks[:BATCHES]]
    shares = [(w1 - w0) / (t1 - t0) for (t0, w0), (t1, w1) in itertools.pairwise(edges)]
    half = t_975(len(shares) - 1) * float(np.std(shares, ddof=1)) / math.sqrt(len(shares))
    return effective, half, noticed, erased


SILENT_CASES = [
    # memory + storage, keep 3: rollbacks of either tier meet the corruption
    SilentCase(300.0, 4, 2.0, 30.0, 60.0, 600.0, 0.8, 10800.0, 28800.0, 1800.0, 0.0, 3),
    # one level, every checkpoint kept, a skip after each detection
    SilentCase(600.0, 1, 10.0, 0.0, 0.0, 300.0, 0.0, 7200.0, 86400.0, 1800.0, 300.0, None),
]


@pytest.mark.parametrize("case", SILENT_CASES)
def test_silent_events_on_tiers_agree_with_the_independent_walk(case: SilentCase) -> None:
    """The engine's silent events (tiers, retention, erasure) against the walk above, two independent runs:
    their difference within the two 95 % half-widths combined."""
    from ckptcalc.mechanisms.silent import stepper as silent

    tiers = silent.Tiers(
        interval_s=case.tau,
        every=(case.every,) if case.every > 1 else (),
        stalls=(case.stall, case.storage_stall) if case.every > 1 else (case.stall,),
        restarts=(case.memory_restart, case.storage_restart) if case.every > 1 else (case.storage_restart,),
        shares=(case.memory_share, 1.0 - case.memory_share) if case.every > 1 else (1.0,),
    )
    engine = silent.run(tiers, mtbf_s=case.mtbf, silent_mtbf_s=case.silent_mtbf, latency_s=case.latency,
                        skip_s=case.skip, keep=case.keep, keep_every=None, cycles=10_000, seed=11)  # fmt: skip
    walked, half, noticed, erased = silent_walk(case, 10_000, seed=12)
    engine_half = (engine.ci95[1] - engine.ci95[0]) / 2
    assert abs(engine.effective - walked) <= math.hypot(half, engine_half), (engine.effective, walked)
    assert engine.events > 300 and noticed > 300
    # The share of onsets a fail-stop erased, a binomial count in each.
    p = erased / (erased + noticed)
    assert abs(engine.erased / (engine.erased + engine.events) - p) < 4 * math.sqrt(p * (1 - p) / noticed)
