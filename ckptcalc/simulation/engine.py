"""The one event engine: a training timeline stepped event by event, every mechanism the model accepts at once.

One timeline (docs/model.md §18.5) runs a schedule of L nested tiers (τ₁, the
multiples, the stalls, the top tier's persist lag and the slowdown it brings,
§17.1), failure classes given generically by their shares, restarts and
landings (a tier: back to its newest checkpoint, the tiers below reset to it;
the class that goes back nowhere, §13.2: its restart, nothing lost; in place,
§13: the one-step tier, whose checkpoints stall nothing), and beside it, each
when the plan holds it:

* elastic replica groups (§14.1, :class:`ckptcalc.mechanisms.elastic.engine.Groups`):
  G groups fail at ν = eλ/G each while up, rejoin T_j later (with a spare pool:
  T_j when a spare is free, the repair otherwise, §18.4), every drop pauses the
  groups up for q_p; kept work counts at the throughput it ran at; the last
  group up failing is a whole-job failure that rolls back;
* a spare pool (§15, an object with ``wait_at`` and ``group_out``): every
  failure sends a node to repair, and the job waits for one when none is free;
* a failure class noticed late (§16, silent events with retention): onsets per
  unit of clean work, noticed after a latency of work, back to the newest
  retained storage checkpoint before the onset;
* periods that slow every step (§21.6, stragglers: an object with ``process``):
  while one is on the job runs at its pace (work, stalls and restarts alike),
  the wall time it loses is a share of its own; one may end in a restart from
  the top tier's newest durable checkpoint (the slow node swapped).

Renewal, as the model: the failure clock starts afresh at every failure (a
failure during a restart draws its class afresh), and runs in restarts, work
and stalls, never while the job waits for a node. Draws come from one
``random.Random(seed)``: the same seed gives the same run.

The run is ``cycles`` failures long (whole-job ones with groups), in
:data:`~ckptcalc.model.statistics.BATCHES` batches of failures; every share of
the split has its 95 % half-width from the same batches.

>>> from ckptcalc.simulation.timeline import Schedule
>>> plan = Plan(Schedule.single(interval_s=600.0, stall_s=10.0, restart_s=300.0), mtbf_s=7200.0)
>>> found = run(plan, cycles=2000, seed=1)
>>> found.cycles, 0.85 < found.split.effective < 0.95
(2000, True)
>>> abs(sum(found.split.shares().values()) - 1.0) < 1e-12
True
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.model.statistics import BATCHES, T975_19

#: The shares of the split, in the order of :class:`Split`.
SHARES = (
    "effective", "write", "rework", "restart", "waiting", "down", "quorum", "overhead", "silent_rework",
    "silent_restart", "slowed",
)  # fmt: skip


@dataclass(frozen=True)
class Split:
    """Shares of elapsed time (they sum to 1): useful work; checkpoint stalls and the persist's slowdown;
    work redone after fail-stop failures; their restarts; waits for a spare node; kept work lost to groups
    down, to quorum pauses and to the groups' overhead; work thrown away at silent detections, and their
    restarts and skips; wall time lost to running slow (the pace below 1)."""

    effective: float
    write: float
    rework: float
    restart: float
    waiting: float = 0.0
    down: float = 0.0
    quorum: float = 0.0
    overhead: float = 0.0
    silent_rework: float = 0.0
    silent_restart: float = 0.0
    slowed: float = 0.0

    @property
    def elastic(self) -> float:
        """Kept work lost to the groups: down, paused and their overhead."""
        return self.down + self.quorum + self.overhead

    @property
    def silent(self) -> float:
        """Silent detections: the work thrown away, the restarts and skips."""
        return self.silent_rework + self.silent_restart

    def shares(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in SHARES}


@dataclass(frozen=True)
class Found:
    """What one run of the engine found: the split, each share's 95 % half-width, and the counts."""

    split: Split
    half: Split  # each share's batch-means 95 % half-width
    cycles: int  # failures (whole-job ones with groups)
    seed: int
    failures_in_restart: int = 0
    no_spare: int = 0  # failures that found no spare node
    waited_s: float = 0.0
    group_failures: int = 0  # group-local failures
    all_down: int = 0  # whole-job failures that were the last group up failing
    events: int = 0  # silent events noticed
    unrecoverable: int = 0  # of those, with no retained checkpoint before the onset
    erased: int = 0  # silent events a fail-stop rollback erased before they were noticed
    latency_s: float = 0.0  # mean work from onset to detection, measured
    slow_periods: int = 0  # slow periods begun
    slow_restarts: int = 0  # of those, ended by a restart at detection
    batch_effective: tuple[float, ...] = ()
    batches: tuple[Split, ...] = ()  # the split of each batch behind the half-widths

    def interval(self, *names: str) -> tuple[float, float]:
        """The sum of the shares ``names`` and its batch-means 95 % half-width (of the batches' sums)."""
        values = [sum(getattr(row, name) for name in names) for row in self.batches]
        return sum(getattr(self.split, name) for name in names), _half(values)

    @property
    def effective(self) -> float:
        return self.split.effective

    @property
    def silent(self) -> float:
        """The share of time silent detections took: the work thrown away, their restarts and skips."""
        return self.split.silent

    @property
    def p_unrecoverable(self) -> float | None:
        """The share of noticed silent events with no retained checkpoint before their onset (None: none)."""
        return self.unrecoverable / self.events if self.events else None

    @property
    def ci95(self) -> tuple[float, float]:
        return self.split.effective - self.half.effective, self.split.effective + self.half.effective


@dataclass(frozen=True)
class Plan:
    """What the engine runs.

    ``schedule`` has the fields of :class:`ckptcalc.simulation.timeline.Schedule` (interval_s, every,
    stalls, restarts, shares, lag_s, nowhere_share, nowhere_restart_s, slowdown); ``mtbf_s`` the mean
    time between failures, Weibull with ``shape`` (None: exponential); ``parts`` the parts of the job
    that fail and rejoin on their own, replica groups (``process(rng, mtbf_s, pool)``, as
    :meth:`ckptcalc.mechanisms.base.Mechanism.engine_group_process` describes); ``pool`` the spare
    pool (``wait_at(now)``: the wait of a failure at wall time ``now``, taking a node to repair;
    ``group_out(now, back_s)``: how long a group that fails at ``now`` stays out); ``late`` a class
    noticed late (mean_work between onsets, latency, skipped, newest kept, kept_every in storage
    checkpoints); ``slow`` the periods that slow every step (``process(rng)``: ``pace``, ``next_at``,
    ``event()``, ``begun``, ``detected``).
    """

    schedule: Any
    mtbf_s: float
    shape: float | None = None
    parts: Any = None
    pool: Any = None
    late: Any = None
    slow: Any = None

    def __post_init__(self) -> None:
        if self.parts is not None:
            self.parts.check_plan(self.shape)


#: An event log's row: [time, event name (``simulation.events.EVENT_KINDS``), the end of the checkpoint a
#: restart resumes from, a top-tier checkpoint's persist end (inf: lost), group, its quorum pause's end].
Row = list[Any]


def run(
    plan: Plan,
    *,
    cycles: int,
    seed: int,
    log: list[Row] | None = None,
    progress: Callable[[float], None] | None = None,
) -> Found:
    """Step ``plan`` for ``cycles`` failures (whole-job ones with groups), event by event (the module's
    docstring); ``log`` gets each event's row, in time order, from the end of the first restart;
    ``progress`` the share done, at each batch."""
    if cycles < BATCHES:
        raise InputError(f"needs at least {BATCHES} cycles, got {cycles}", where="cycles")
    s = plan.schedule
    rng = random.Random(seed)
    expo, uniform = rng.expovariate, rng.random
    tau = float(s.interval_s)
    stalls = tuple(float(v) for v in s.stalls)
    restarts = tuple(float(v) for v in s.restarts)
    top = len(stalls) - 1
    sizes = [1]
    for m in s.every:
        sizes.append(sizes[-1] * int(m))
    period = sizes[top]
    # Where the job stops: the boundaries of the fastest tier whose checkpoint stalls (the others are passed
    # in one glide, their checkpoints taken as it stops), and every top-tier boundary.
    stop = next((sizes[k] for k in range(top + 1) if stalls[k] > 0.0), period)
    slow = float(getattr(s, "slowdown", 0.0) or 0.0)
    lag = float(s.lag_s) * (1.0 - slow)  # work done while the persist runs
    nowhere = float(s.nowhere_share)
    nowhere_restart = float(s.nowhere_restart_s)
    # Every class: each tier's own, then the classes of their own restart (docs/model.md §20), each going
    # back to its tier.
    class_shares = tuple(float(q) for q in s.class_shares)
    class_restarts = tuple(float(r) for r in s.class_restarts)
    anchors = tuple(int(k) for k in s.class_anchors)
    bounds = []
    acc = 0.0
    for share in class_shares[:-1]:
        acc += share
        bounds.append(acc)
    periodic = 1.0 - nowhere
    # The last group up failing rolls back: never nowhere, nor in place (a tier whose checkpoint is free).
    rolling = [c for c, k in enumerate(anchors) if stalls[k] > 0.0 or k == top]
    roll_bounds = []
    acc = 0.0
    weight = sum(class_shares[c] for c in rolling)
    for c in rolling[:-1]:
        acc += class_shares[c] / weight
        roll_bounds.append(acc)

    pool, late = plan.pool, plan.late
    # The parts that fail and rejoin on their own (replica groups): whole-job failures come at their own rate.
    parts = None if plan.parts is None else plan.parts.process(rng, plan.mtbf_s, pool)
    whole_mean = plan.mtbf_s if parts is None else parts.whole_mean
    if plan.slow is not None:  # refused where the run would step too many of them
        plan.slow.check_count(cycles * whole_mean)
    # Periods that slow every step: the job's pace, and when it next changes.
    slowing = None if plan.slow is None else plan.slow.process(rng)
    pace, slow_next = (1.0, math.inf) if slowing is None else (slowing.pace, slowing.next_at)
    if plan.shape is None:
        rate = 1.0 / whole_mean

        def draw() -> float:
            return expo(rate)
    else:
        shape = float(plan.shape)
        scale = plan.mtbf_s / math.gamma(1.0 + 1.0 / shape)

        def draw() -> float:
            return rng.weibullvariate(scale, shape)

    def stall_at(index: int) -> float:
        found = stalls[0]
        for k in range(1, top + 1):
            if index % sizes[k] == 0:
                found += stalls[k]
        return found

    # One whole top period from a top-tier boundary with its persist in flight: its work, every stall in
    # it and the persist's slowdown.
    span = period * tau + sum(stalls[k] * (period // sizes[k]) for k in range(top + 1)) + lag * slow / (1.0 - slow)

    # The job: the last tier-1 boundary passed n and the work since it; the kept value at the current
    # position (useful, down, quorum, overhead: work weighted by what the parts did with it).
    n, into = 0, 0.0
    vu = vd = vq = vo = 0.0
    start_mark = (0, 0.0, 0.0, 0.0, 0.0)
    marks = [start_mark] * top  # each lower tier's newest checkpoint
    pending: tuple[int, float, float, float, float] | None = None  # a top-tier checkpoint not yet durable
    keep = None if late is None else late.newest
    keep_every = None if late is None else late.kept_every
    everything = keep is None
    retained: deque[tuple[int, float, float, float, float]] = deque([start_mark], maxlen=1 if keep is None else keep)
    forever = [start_mark]  # kept for good (the start always is)
    forever_n = [0]
    # Throughput of the moment: per unit of work, (useful, down, quorum, overhead).
    tu, td, tq, to = 1.0, 0.0, 0.0, 0.0
    part_event = -1  # the parts' event next, by its place in their ``upcoming``
    # Silent events: the onset clock runs on clean work, the detection clock on work after the onset.
    onset_rate = 0.0 if late is None or not math.isfinite(late.mean_work) else 1.0 / late.mean_work
    to_onset = expo(onset_rate) if onset_rate > 0 else math.inf
    to_detect = math.inf
    onset: tuple[int, float] | None = None
    last_top = start_mark  # the newest top-tier boundary at or before the position (the onset's, at one)
    onset_top = start_mark
    worked_corrupt = 0.0
    # Time: elapsed, write, restart, waiting, silent work thrown, silent restarts, lost to running slow.
    elapsed = write = restarting = waiting = thrown = silent_back = slowed = 0.0
    failures = in_restart = no_spare = events = unrecoverable = erased = 0
    waited = latency_sum = 0.0
    per_batch = [cycles // BATCHES + (1 if i < cycles % BATCHES else 0) for i in range(BATCHES)]
    ends = [sum(per_batch[: i + 1]) for i in range(BATCHES)]
    snapshots = [(0.0,) * 11]
    # The phase: a restart (or a detection's pause) with this much left, else (-1) running, in a stall or not.
    restart_left, detecting, to_fail = restarts[top], False, math.inf
    stall_left: float | None = None
    # The log: each checkpoint's end by its boundary (the start's: the end of the first restart), the row of
    # the top-tier checkpoint in flight, the last failure and the checkpoint the next restart resumes from.
    ended: dict[int, float] = {}
    persist_row: int | None = None
    last_failure = resume_at = math.nan
    batch = 0

    def theta() -> None:
        nonlocal tu, td, tq, to
        if parts is not None:
            tu, td, tq, to = parts.throughput(elapsed)

    def mark_here(index: int) -> tuple[int, float, float, float, float]:
        """The kept value at boundary ``index`` (at or before the position; throughput constant since it)."""
        if parts is None:
            return index, index * tau, 0.0, 0.0, 0.0
        gone = n * tau + into - index * tau
        return index, vu - gone * tu, vd - gone * td, vq - gone * tq, vo - gone * to

    def settle() -> None:
        """The boundaries glided over since the last stop become checkpoints (on the tiers that stall nothing)."""
        nonlocal n, into
        if stop > 1 and into >= tau:
            passed = min(int(into // tau), (n // stop + 1) * stop - n - 1)
            if passed > 0:
                reached = n + passed
                for k in range(min(top, len(sizes))):
                    if sizes[k] >= stop:
                        break
                    last = reached // sizes[k] * sizes[k]
                    if last > n:
                        marks[k] = mark_here(last)
                n, into = reached, into - passed * tau

    def back_to(target: tuple[int, float, float, float, float]) -> None:
        nonlocal n, into, vu, vd, vq, vo, onset, to_onset, to_detect, erased, last_top
        if target[0] % period == 0:
            last_top = target
        if onset is not None and target[0] * tau <= onset[1]:
            onset, to_detect, erased = None, math.inf, erased + 1
            to_onset = expo(onset_rate)
        n, into = target[0], 0.0
        _, vu, vd, vq, vo = target

    def durable(mark: tuple[int, float, float, float, float]) -> None:
        retained.append(mark)
        if keep_every is not None and (mark[0] // period) % keep_every == 0:
            forever.append(mark)
            forever_n.append(mark[0])

    def emit(kind: str, resumed: float = math.nan, group: int = -1, quorum: float = math.nan) -> None:
        if log is not None and ended:
            log.append([elapsed, kind, resumed, math.nan, group, quorum])

    def persisted(at: float) -> None:
        """The log's pending top-tier checkpoint: durable at ``at`` (inf: lost)."""
        nonlocal persist_row
        if log is not None and persist_row is not None:
            log[persist_row][3] = at
        persist_row = None

    def fail() -> None:
        """A fail-stop failure at ``elapsed``: its class, the landing, the wait for a node, its restart, and the
        time to the next failure (drawn afresh: renewal)."""
        nonlocal pending, waiting, waited, no_spare, elapsed, failures, restart_left, detecting, to_fail
        nonlocal last_failure, resume_at
        failures += 1
        emit("failure")
        last_failure = elapsed
        forced = parts is not None and parts.down_all
        u = uniform()
        if not forced and u >= periodic:
            restart = nowhere_restart
            resume_at = math.nan
        else:
            if forced:
                c = rolling[sum(1 for edge in roll_bounds if u >= edge)]
            else:
                c = sum(1 for edge in bounds if u >= edge)
            target = land(anchors[c])
            resume_at = ended.get(target[0], math.nan)
            restart = class_restarts[c]
        if pool is not None:
            wait = pool.wait_at(elapsed)
            if wait > 0:
                no_spare += 1
                elapsed += wait
                waiting += wait
                waited += wait
                if slowing is not None and slow_events():  # the slow node found while the job waited
                    land(top)
                    restart = restarts[top]
        restart_left, detecting, to_fail = restart, False, draw()
        close_batches()

    def land(k: int) -> tuple[int, float, float, float, float]:
        """Back to tier ``k``'s newest checkpoint (the top tier's newest durable one, the persist in flight
        lost), the tiers below reset to it: the checkpoint gone back to."""
        nonlocal pending
        if k < top:
            target = marks[k]
        else:
            if pending is not None:
                persisted(math.inf)
            pending = None
            target = retained[-1]
        for j in range(min(k, top)):
            marks[j] = target
        back_to(target)
        return target

    def slow_events() -> bool:
        """Step the slow periods' events up to ``elapsed``: whether one ended in a restart (its node swapped)."""
        nonlocal pace, slow_next
        assert slowing is not None
        swapped = False
        while slow_next <= elapsed:
            swapped = slowing.event() or swapped
            pace, slow_next = slowing.pace, slowing.next_at
        return swapped

    def swap() -> None:
        """A slow node found: swapped as a failed one would be, back to the newest durable top-tier checkpoint
        and the top tier's restart (not a failure: the failure clock runs on)."""
        nonlocal restart_left, detecting, stall_left
        land(top)
        restart_left, detecting, stall_left = restarts[top], False, None

    def reset_parts() -> None:
        if parts is not None:
            parts.restarted(elapsed, emit)  # every part is up again after a whole-job restart
            theta()

    def advance(time: float, work: float) -> None:
        """``time`` passes, ``work`` of it done (at the throughput of the moment); the rest writes or is slowed
        (by the persist, or by running at a pace below 1)."""
        nonlocal elapsed, to_fail, write, vu, vd, vq, vo, to_onset, to_detect, worked_corrupt, slowed
        elapsed += time
        to_fail -= time
        if pace == 1.0:
            write += time - work
        else:
            paced = time * pace
            write += paced - work
            slowed += time - paced
        vu += work * tu
        vd += work * td
        vq += work * tq
        vo += work * to
        if onset is None:
            to_onset -= work
        else:
            to_detect -= work
            worked_corrupt += work

    def close_batches() -> None:
        nonlocal batch
        while batch < BATCHES and failures >= ends[batch]:
            snapshots.append((elapsed, vu, vd, vq, vo, write, restarting, waiting, thrown, silent_back, slowed))
            batch += 1
            if progress is not None:
                progress(failures / cycles)

    to_fail = draw()
    while failures < cycles:
        if restart_left >= 0.0:  # in a restart (or a detection's pause), at the pace of the moment
            need = restart_left / pace
            if slow_next - elapsed < min(to_fail, need):
                dt = max(slow_next - elapsed, 0.0)
                elapsed += dt
                to_fail -= dt
                part = dt * pace
                if detecting:
                    silent_back += part
                else:
                    restarting += part
                slowed += dt - part
                restart_left = max(restart_left - part, 0.0)
                if slow_events():
                    swap()
                continue
            if to_fail < need:
                elapsed += to_fail
                part = to_fail * pace
                if detecting:
                    silent_back += part
                else:
                    restarting += part
                slowed += to_fail - part
                in_restart += 1
                fail()
                continue
            elapsed += need
            if detecting:
                silent_back += restart_left
            else:
                restarting += restart_left
            slowed += need - restart_left
            to_fail -= need
            restart_left, detecting = -1.0, False
            stall_left = None
            reset_parts()
            if log is not None:
                if not ended:
                    ended[0] = elapsed
                    emit("run_start")
                else:
                    emit("restart_end", resumed=resume_at)
            continue
        if (
            into == 0.0 and stall_left is None and n % period == 0 and log is None
            and (lag == 0.0 or (pending is not None and pending[0] == n))
        ):  # fmt: skip
            # At a top-tier boundary, its stall done: whole top periods that nothing interrupts at once.
            coming = parts.upcoming(elapsed) if parts is not None else ()
            room = min(to_fail, slow_next - elapsed, *(at - elapsed for at in coming))
            paced_span = span / pace
            whole = int(room // paced_span)
            if whole * paced_span >= room:
                whole -= 1
            signal = to_onset if onset is None else to_detect
            if signal < whole * period * tau:
                whole = int(signal // (period * tau))
                if whole * period * tau >= signal:
                    whole -= 1
            if whole > 0:
                advance(whole * paced_span, whole * period * tau)
                first = n
                n += whole * period
                here = mark_here(n)
                for k in range(top):
                    marks[k] = here
                # Durable now: every top boundary passed but the newest when a persist is in flight.
                passed = range(first if lag > 0.0 else first + period, n + (0 if lag > 0.0 else 1), period)
                for index in passed[-(retained.maxlen or 1) :]:
                    retained.append(mark_here(index))
                if keep_every is not None:
                    every = keep_every * period
                    for index in range(-(-passed.start // every) * every, passed.stop, every):
                        forever.append(mark_here(index))
                        forever_n.append(index)
                if lag > 0.0:
                    pending = here
                last_top = here
                continue
        position = n * tau + into
        persisting = pending is not None
        speed = 1.0 - slow if persisting else 1.0
        # The next event: 0 failure, 1 the segment's or stall's end, 2 the persist durable, 3 a silent
        # signal, 4 one of the parts' (``part_event``: a group failure, a group back, a pause's end), 7 a slow period's.
        if stall_left is not None:
            dt, which = stall_left / pace, 1
        else:
            ahead = ((n // stop + 1) * stop) * tau - position
            which = 1
            if persisting:
                assert pending is not None
                left = pending[0] * tau + lag - position
                if left < ahead:
                    ahead, which = max(left, 0.0), 2
            signal = to_onset if onset is None else to_detect
            if signal < ahead:
                ahead, which = signal, 3
            dt = ahead / (speed * pace) if speed > 0 else math.inf
        if to_fail <= dt:
            dt, which = to_fail, 0
        if parts is not None:
            for kind, at in enumerate(parts.upcoming(elapsed)):
                if at < elapsed + dt:
                    dt, which, part_event = at - elapsed, 4, kind
        if slow_next - elapsed < dt:
            dt, which = slow_next - elapsed, 7
        dt = max(dt, 0.0)
        if stall_left is not None:
            stall_left -= dt * pace
            advance(dt, 0.0)
        else:
            done = dt * pace * speed
            into += done
            advance(dt, done)
        settle()
        if which == 0:
            if stall_left is not None:
                stall_left = None  # the stall in flight is lost; after a notice it is taken again in full
            fail()
        elif which == 1:
            if stall_left is None:  # the work of the segment is done: its checkpoint stalls the job
                n, into = (n // stop + 1) * stop - 1, tau
                stall_left = stall_at(n + 1)
                emit("checkpoint_start")
                if stall_left > 0.0:
                    continue
            stall_left = None
            n, into = n + 1, 0.0
            here = mark_here(n)
            for k in range(top):
                if n % sizes[k] == 0:
                    marks[k] = here
            if n % period == 0:
                last_top = here
                if lag > 0.0:
                    pending = here
                    emit("checkpoint_end")
                    if log is not None and ended:
                        persist_row = len(log) - 1
                else:
                    durable(here)
                    emit("checkpoint_end")
            else:
                emit("checkpoint_end")
            if log is not None:
                ended[n] = elapsed
        elif which == 2:
            assert pending is not None
            durable(pending)
            persisted(elapsed)
            pending = None
        elif which == 3:
            if onset is None:
                detect = expo(1.0 / late.latency) if late.latency > 0 else 0.0
                onset, to_detect, worked_corrupt, onset_top = (n, n * tau + into), detect, 0.0, last_top
                to_onset = math.inf
                continue
            # Noticed: back to the newest retained storage checkpoint before the onset.
            events += 1
            latency_sum += worked_corrupt
            before = onset[0] // period * period
            if everything:
                target = onset_top if before <= retained[-1][0] else retained[-1]
            else:
                clean = [mark for mark in retained if mark[0] <= onset[0]]
                if clean:
                    target = clean[-1]
                else:
                    unrecoverable += 1
                    # Kept for good: the newest before the onset; without, the run is lost (its risk) and the
                    # steady state goes on from the onset's storage checkpoint.
                    target = (
                        onset_top if keep_every is None
                        else forever[bisect.bisect_right(forever_n, before) - 1]
                    )  # fmt: skip
            thrown += n * tau + into - target[0] * tau
            while retained and retained[-1][0] > target[0]:
                retained.pop()
            if not retained or everything:
                retained.clear()
                retained.append(target)
            cut = bisect.bisect_right(forever_n, target[0])
            del forever[cut:], forever_n[cut:]
            pending = None
            for j in range(top):
                marks[j] = target
            n, into, onset, last_top = target[0], 0.0, None, target
            _, vu, vd, vq, vo = target
            to_onset, to_detect = expo(onset_rate), math.inf
            restart_left, detecting = restarts[top] + late.skipped, True
            stall_left = None
        elif which == 4:
            assert parts is not None
            if parts.event(part_event, elapsed, emit):  # the last group up: a whole-job failure
                fail()
                continue
            theta()
        elif which == 7 and slow_events():
            swap()
    if log is not None and ended:
        log.append([last_failure, "run_end", math.nan, math.nan, -1, math.nan])
    return _found(snapshots, plan, cycles, seed, dict(
        failures_in_restart=in_restart, no_spare=no_spare, waited_s=waited,
        group_failures=0 if parts is None else parts.failures, all_down=0 if parts is None else parts.all_down,
        events=events, unrecoverable=unrecoverable, erased=erased,
        latency_s=latency_sum / events if events else 0.0,
        slow_periods=0 if slowing is None else slowing.begun, slow_restarts=0 if slowing is None else slowing.detected,
    ))  # fmt: skip


def _found(snapshots: Sequence[tuple[float, ...]], plan: Plan, cycles: int, seed: int, counts: dict[str, Any]) -> Found:
    """The split over the whole run and each share's batch-means 95 % half-width."""

    def split_of(a: tuple[float, ...], b: tuple[float, ...]) -> list[float]:
        d = [y - x for x, y in zip(a, b, strict=True)]
        time = d[0]
        useful, down, quorum, over, write, restart, waiting, thrown, back, slowed = d[1:]
        rework = time - useful - down - quorum - over - write - restart - waiting - thrown - back - slowed
        return [v / time for v in (useful, write, rework, restart, waiting, down, quorum, over, thrown, back, slowed)]

    total = split_of(snapshots[0], snapshots[-1])
    batches = [split_of(a, b) for a, b in itertools.pairwise(snapshots)]
    half = [_half([row[i] for row in batches]) for i in range(len(SHARES))]
    return Found(
        split=Split(*total), half=Split(*half), cycles=cycles, seed=seed,
        batch_effective=tuple(row[0] for row in batches), batches=tuple(Split(*row) for row in batches), **counts,
    )  # fmt: skip


def _half(values: Sequence[float]) -> float:
    """The 95 % half-width of the mean of batch values (Student's t, BATCHES − 1 degrees of freedom)."""
    mean = sum(values) / len(values)
    return T975_19 * math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))


def plan_of(config: Any, schedule: Any, *, mtbf_s: float | None = None, shape: float | None = None) -> Plan:
    """The plan ``config`` describes at ``schedule``: its parts that fail on their own, its spare pool, its class
    noticed late, its periods that slow every step, each from its home's declaration (registry folds)."""
    from ckptcalc.mechanisms import registry
    from ckptcalc.model import storage

    late = registry.engine_late_class(config, schedule, storage.kept(config))
    return Plan(
        schedule=schedule,
        mtbf_s=float(config.mtbf_s if mtbf_s is None else mtbf_s),
        shape=shape,
        parts=registry.engine_group_process(config),
        pool=registry.simulated_pool(config),
        late=late,
        slow=registry.engine_slow_periods(config, schedule),
    )


def with_schedule(plan: Plan, schedule: Any) -> Plan:
    return dataclasses.replace(plan, schedule=schedule)
