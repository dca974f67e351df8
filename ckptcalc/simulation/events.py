"""The event log of a simulated one-level timeline: what ``simulate --events`` writes.

The same draws as :func:`ckptcalc.simulation.timeline.run_schedule`, so the log
is the very timeline whose effective time the simulation reports. It comes in
pieces of at most :data:`ROWS` events (:func:`pieces`), so a log of any length
is written with bounded memory. With elastic replica groups, :func:`elastic_pieces`
follows :func:`ckptcalc.simulation.timeline.run_elastic` (the same draws) and adds
each group's ``group_down`` and ``group_up``.

>>> from ckptcalc.simulation.timeline import Failures, Schedule
>>> log = events(Schedule.single(interval_s=600.0, stall_s=60.0, restart_s=300.0), Failures(3600.0),
...              cycles=200, seed=1)
>>> EVENT_KINDS[int(log.kind[0])], EVENT_KINDS[int(log.kind[-1])]
('run_start', 'run_end')
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.simulation.timeline import DEFAULT_SEED, Failures, Groups, Schedule, check

#: Cycles drawn at once.
BLOCK = 1 << 14

#: Events in one piece at most (a piece of a cycle longer than this holds part of it).
ROWS = 1 << 16


@dataclass(frozen=True)
class Events:
    """Part of the event log of a simulated one-level timeline, as arrays in time order.

    ``kind`` indexes :data:`EVENT_KINDS`; ``resumed_from_s`` (restart ends) is NaN where it does not
    apply; ``persist_end_s`` (ends of asynchronous checkpoints) is when the persist became durable,
    infinite where a failure cut it short, and NaN where it does not apply (synchronous checkpoints,
    other events). With replica groups, ``group`` (−1 where it does not apply) and ``quorum_end_s`` (a
    ``group_down``'s pause end; NaN: none); None without.
    """

    time_s: Any
    kind: Any
    resumed_from_s: Any
    persist_end_s: Any
    group: Any = None
    quorum_end_s: Any = None

    def group_events(self) -> list[tuple[int, str, int, float | None]]:
        """Each group event: its row, name, group and pause end (None: no pause); none without groups."""
        import numpy

        if self.group is None:
            return []
        rows = numpy.flatnonzero(self.group >= 0).tolist()
        return [(i, EVENT_KINDS[int(self.kind[i])], int(self.group[i]),
                 None if math.isnan(q := float(self.quorum_end_s[i])) else q) for i in rows]  # fmt: skip


#: The event names of :class:`Events`, by their codes.
EVENT_KINDS = (
    "run_start",
    "restart_end",
    "checkpoint_start",
    "checkpoint_end",
    "failure",
    "run_end",
    "group_down",
    "group_up",
)

_RUN_START, _RESTART_END, _START, _END, _FAILURE, _RUN_END, _GROUP_DOWN, _GROUP_UP = range(8)


def check_event_cycles(cycles: int, most: int) -> None:
    """Refuse an event log of more than ``most`` cycles (the input ``cycles``). The time and sizes the refusal
    quotes are those of the cap ``simulate --events`` sets, 2·10⁵ cycles.

    >>> check_event_cycles(200_000, 200_000)
    >>> check_event_cycles(200_001, 200_000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ckptcalc.errors.InputError: cycles: an event log is written for at most 200,000 cycles (...), got 200,001
    """
    if cycles > most:
        raise InputError(
            f"an event log is written for at most {most:,} cycles (for Llama 3 some 20 s, and 0.7 GB of"
            f" CSV or 1.3 GB of JSON Lines), got {cycles:,}",
            where="cycles",
        )


def events(schedule: Schedule, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED) -> Events:
    """The whole log of :func:`pieces` in one :class:`Events` (for short runs)."""

    found = list(pieces(schedule, failures, cycles=cycles, seed=seed))
    return _joined(found)


def _joined(found: list[Events]) -> Events:
    import numpy

    return Events(
        *(
            None if getattr(found[0], name) is None else numpy.concatenate([getattr(p, name) for p in found])
            for name in Events.__dataclass_fields__
        )
    )


def pieces(schedule: Schedule, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED) -> Iterator[Events]:
    """The timeline :func:`run_schedule` simulates for one level (the same draws), as an event log in
    pieces of at most :data:`ROWS` events.

    The log starts when training first starts (the end of the timeline's first complete restart) and
    ends at its last failure; each restart names the checkpoint it resumes from: the newest one whose
    persist was durable before the failure. Within a cycle the events come in the order they happen
    (a restart's end, each checkpoint's start and end, the failure), and cycles one after the other,
    so no sorting is needed.
    """
    import numpy

    if schedule.tiers != 1:
        raise InputError("an event log is written for one checkpoint level", where="events")
    if schedule.nowhere_share > 0:
        raise InputError("an event log is written without failures with notice (--notice-share)", where="events")
    cycles = check(cycles, failures.shape)
    rng = numpy.random.default_rng(seed)
    run = _Run(schedule)
    clock = 0.0  # the simulation's time at the start of the next block
    for first in range(0, cycles, BLOCK):
        x = failures.draw(rng, min(BLOCK, cycles - first))  # the same numbers as one draw of them all
        begin = numpy.cumsum(numpy.concatenate(([clock], x)))  # the same sums as one cumsum, in order
        clock = float(begin[-1])
        yield from run.block(x, begin[:-1], last=first + x.size == cycles)
    if run.resume is None:
        raise InputError("every failure struck a restart: there is no training to log", where="events")


class _Run:
    """The timeline's state from one block of cycles to the next: whether training has started, and
    the checkpoint the next restart resumes from."""

    def __init__(self, schedule: Schedule) -> None:
        self.tau, self.stall = schedule.interval_s, schedule.stalls[0]
        self.lag, self.r = schedule.lag_s, schedule.restarts[0]
        self.period = self.tau + self.stall
        self.resume: float | None = None  # None: training has not started yet

    def block(self, x: Any, begin: Any, *, last: bool) -> Iterator[Events]:
        import numpy

        tau, period, lag, r = self.tau, self.period, self.lag, self.r
        trained = x > r
        skip = 0
        if self.resume is None:
            if not trained.any():
                return  # every failure so far struck the first restart: nothing to log yet
            skip = int(numpy.argmax(trained))
        w = numpy.maximum(x - r, 0.0)
        completed = numpy.floor(w / period).astype(numpy.int64)
        started = numpy.where(w > tau, numpy.ceil((w - tau) / period), 0.0).astype(numpy.int64)
        # One start more than ends at most (the stall a failure cut short), whatever the rounding.
        started = numpy.clip(started, completed, completed + 1)
        durable = completed if lag == 0 else numpy.where(w >= lag, numpy.floor((w - lag) / period), 0.0)
        durable = numpy.minimum(durable, completed).astype(numpy.int64)
        head = numpy.where(trained, _RESTART_END, -1)
        if self.resume is None:
            head[skip] = _RUN_START
            self.resume = float(begin[skip] + r)
        newest = numpy.where(durable > 0, begin + r + (durable - 1) * period + tau, numpy.nan)
        carried = _carry_forward(newest, self.resume)
        resumed = numpy.concatenate(([self.resume], carried[:-1]))
        self.resume = float(carried[-1])
        cycle = _Cycles(begin, x, started, completed, durable, head, resumed)
        if skip:
            cycle = cycle.part(slice(skip, None))
        rows = (cycle.head >= 0) + cycle.started + cycle.completed + 1
        ends = numpy.cumsum(rows)
        i, n = 0, rows.size
        while i < n:
            before = int(ends[i - 1]) if i else 0
            j = max(int(numpy.searchsorted(ends, before + ROWS, side="right")), i + 1)
            if rows[i] > ROWS:  # one long cycle, in parts
                one = cycle.part(slice(i, i + 1))
                step = ROWS // 2
                total = int(one.started[0])
                for low in range(0, max(total, 1), step):
                    high = min(low + step, total)
                    yield self.rows(one, numpy.array([low]), numpy.array([high]), last=last and j == n)
            else:
                part = cycle.part(slice(i, j))
                yield self.rows(part, numpy.zeros(j - i, numpy.int64), part.started, last=last and j == n)
            i = j

    def rows(self, c: _Cycles, low: Any, high: Any, *, last: bool) -> Events:
        """The events of cycles ``c`` whose checkpoints are ``low`` ≤ n < ``high``: the restart's end
        (or the run's start) with the first of them, the failure with the last, and after the log's last
        failure (``last``, when ``high`` reaches it) the run's end."""
        import numpy

        head = (c.head >= 0) & (low == 0)
        tail = high == c.started
        starts = high - low
        ends = numpy.clip(numpy.minimum(high, c.completed) - low, 0, None)
        count = head + starts + ends + tail
        offset = numpy.cumsum(count) - count
        closing = bool(last and tail[-1])
        size = int(count.sum()) + closing
        time = numpy.empty(size)
        kind = numpy.empty(size, dtype=numpy.int8)
        resumed = numpy.full(size, numpy.nan)
        persist = numpy.full(size, numpy.nan)
        failure = c.begin + c.x
        at = offset[head]
        time[at] = c.begin[head] + self.r
        kind[at] = c.head[head]
        resumed[at] = numpy.where(c.head[head] == _RESTART_END, c.resumed[head], numpy.nan)
        owner = numpy.repeat(numpy.arange(starts.size), starts)
        n = low[owner] + numpy.arange(owner.size) - numpy.repeat(numpy.cumsum(starts) - starts, starts)
        at = offset[owner] + head[owner] + 2 * (n - low[owner])
        # Never after the failure that ends the cycle, whatever the rounding.
        start = numpy.minimum(c.begin[owner] + self.r + n * self.period + self.tau, failure[owner])
        time[at], kind[at] = start, _START
        done = n < c.completed[owner]
        at, start, owner, n = at[done] + 1, start[done], owner[done], n[done]
        end = numpy.minimum(start + self.stall, failure[owner])
        time[at], kind[at] = end, _END
        if self.lag > 0:
            persist[at] = numpy.where(n < c.durable[owner], numpy.minimum(end + self.lag, failure[owner]), math.inf)
        at = (offset + count - 1)[tail]
        time[at], kind[at] = failure[tail], _FAILURE
        if closing:
            time[-1], kind[-1] = failure[-1], _RUN_END
        return Events(time, kind, resumed, persist)


@dataclass(frozen=True)
class _Cycles:
    """Cycles of the timeline: start, time to failure, checkpoints started, completed and made durable,
    the first event (run_start, restart_end or −1: none, the failure struck the restart) and the
    checkpoint a restart at its start resumes from."""

    begin: Any
    x: Any
    started: Any
    completed: Any
    durable: Any
    head: Any
    resumed: Any

    def part(self, which: slice) -> _Cycles:
        return _Cycles(*(getattr(self, name)[which] for name in _Cycles.__dataclass_fields__))


def _carry_forward(values: Any, initial: float) -> Any:
    """Each position's newest non-NaN value so far (``initial`` before the first)."""
    import numpy

    valid = ~numpy.isnan(values)
    index = numpy.where(valid, numpy.arange(values.size), -1)
    numpy.maximum.accumulate(index, out=index)
    return numpy.where(index >= 0, values[numpy.maximum(index, 0)], initial)


# ------------------------------------------------------------- elastic replica groups


def elastic_events(
    schedule: Schedule, process: Groups, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED
) -> Events:
    """The whole log of :func:`elastic_pieces` in one :class:`Events` (for short runs)."""
    return _joined(list(elastic_pieces(schedule, process, failures, cycles=cycles, seed=seed)))


def elastic_pieces(
    schedule: Schedule, process: Groups, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED
) -> Iterator[Events]:
    """The timeline :func:`ckptcalc.simulation.timeline.run_elastic` simulates for one synchronous level
    (the same draws), as an event log in pieces of about :data:`ROWS` events.

    As :func:`pieces`: from the first start of training to the last whole-job failure, each restart naming
    the checkpoint it resumes from. Between whole-job failures each group's drop is a ``group_down``
    (with ``quorum_end`` q_p later when there is a pause) and its rejoin T_j later a ``group_up``; the
    groups down at a whole-job failure are back (``group_up``) when its restart ends. All groups down
    is the last ``group_down`` and a ``failure`` at the same time. Which group drops is drawn uniformly
    from the groups up, from a generator of its own, so the simulation's draws are untouched.

    >>> from ckptcalc.simulation.timeline import Failures, Groups, Schedule
    >>> g = Groups(4, 0.9, 600.0, 0.0, 0.0)  # G, e, T_j, q_p, o
    >>> log = elastic_events(Schedule.single(interval_s=600.0, stall_s=10.0, restart_s=300.0), g,
    ...                      Failures(3600.0), cycles=200, seed=1)
    >>> sorted({EVENT_KINDS[int(k)] for k in log.kind})[:3]
    ['checkpoint_end', 'checkpoint_start', 'failure']
    """
    import collections
    import random

    import numpy

    from ckptcalc.simulation.timeline import _Draws

    if schedule.tiers != 1:
        raise InputError("an event log is written for one checkpoint level", where="events")
    if schedule.lag_s > 0 or failures.shape is not None or not process.ends:
        raise InputError("an elastic event log is written for what simulate runs", where="events")
    cycles = check(cycles, failures.shape)
    draws = _Draws(numpy.random.default_rng(seed))
    pick = random.Random(seed)
    whole_mean, nu = process.rates(failures.mtbf_s)
    tau, stall, restart = schedule.interval_s, schedule.stalls[0], schedule.restarts[0]
    period, pause = tau + stall, process.pause_s
    clock, resume = 0.0, math.nan  # NaN: training has not started yet
    down: collections.deque[int] = collections.deque()  # groups down, in the order they rejoin
    rows = _Rows()
    for _ in range(cycles):
        x = draws.exponential() * whole_mean
        if x < restart:
            if not math.isnan(resume):
                rows.add(clock + x, _FAILURE)
            clock += x
            continue
        changes: list[tuple[float, int]] = []
        _, _, all_down = process.stretch(nu, x - restart, draws, changes)
        running = x - restart if all_down is None else all_down
        start = clock + restart
        if math.isnan(resume):
            rows.add(start, _RUN_START)
            resume = start
        else:
            rows.add(start, _RESTART_END, resumed=resume)
        for group in sorted(down):  # the restart brought every group back
            rows.add(start, _GROUP_UP, group=group)
        down.clear()
        up = list(range(process.count))
        # The checkpoints as run_elastic counts them: boundary i ends at the i-th cumulative period.
        count = int(running // period) + 2
        ends = numpy.cumsum(numpy.full(count, period))
        begins = numpy.concatenate(([0.0], ends[:-1])) + tau
        started = int(numpy.count_nonzero(begins < running))
        completed = int(numpy.searchsorted(ends, running, side="right"))
        times = [start + float(t) for t in begins[:started]] + [start + float(t) for t in ends[:completed]]
        kinds = [_START] * started + [_END] * completed
        order = [0] * (started + completed)
        extra: list[tuple[int, float]] = [(-1, math.nan)] * (started + completed)
        for at, change in changes:
            if change < 0:
                group = up.pop(pick.randrange(len(up)))
                down.append(group)
                kinds.append(_GROUP_DOWN)
                extra.append((group, start + at + pause if pause > 0 else math.nan))
            else:
                group = down.popleft()
                up.append(group)
                kinds.append(_GROUP_UP)
                extra.append((group, math.nan))
            times.append(start + at)
            order.append(0)
        times.append(start + running)
        kinds.append(_FAILURE)
        order.append(1)  # after anything at the same time (the last group_down when all went down)
        extra.append((-1, math.nan))
        for i in sorted(range(len(times)), key=lambda i: (times[i], order[i])):
            rows.add(times[i], kinds[i], group=extra[i][0], quorum=extra[i][1])
        if completed:
            resume = start + float(begins[completed - 1])
        clock += restart + running
        if len(rows) >= ROWS:
            yield rows.take()
    if math.isnan(resume):
        raise InputError("every failure struck a restart: there is no training to log", where="events")
    rows.add(clock, _RUN_END)  # at the last failure
    yield rows.take()


class _Rows:
    """Events gathered one by one, handed out as :class:`Events`."""

    def __init__(self) -> None:
        self.time: list[float] = []
        self.kind: list[int] = []
        self.resumed: list[float] = []
        self.group: list[int] = []
        self.quorum: list[float] = []

    def __len__(self) -> int:
        return len(self.time)

    def add(
        self, time: float, kind: int, *, resumed: float = math.nan, group: int = -1, quorum: float = math.nan
    ) -> None:
        self.time.append(time)
        self.kind.append(kind)
        self.resumed.append(resumed)
        self.group.append(group)
        self.quorum.append(quorum)

    def take(self) -> Events:
        """The events gathered so far, and a fresh start."""
        import numpy

        found = Events(
            numpy.array(self.time, dtype=float),
            numpy.array(self.kind, dtype=numpy.int8),
            numpy.array(self.resumed, dtype=float),
            numpy.full(len(self.time), numpy.nan),
            numpy.array(self.group, dtype=numpy.int64),
            numpy.array(self.quorum, dtype=float),
        )
        self.time, self.kind, self.resumed, self.group, self.quorum = [], [], [], [], []
        return found


def engine_events(plan: Any, *, cycles: int, seed: int = DEFAULT_SEED) -> Events:
    """The timeline the one event engine (:mod:`ckptcalc.simulation.engine`) steps for ``plan``, as an event
    log with the same event names (whole, for short runs): checkpoints of every tier (the log does not
    name the tier), the failures of every class, and with groups each group's ``group_down`` and
    ``group_up``."""
    import numpy

    from ckptcalc.simulation import engine

    rows: list[engine.Row] = []
    engine.run(plan, cycles=cycles, seed=seed, log=rows)
    if not rows:
        raise InputError("every failure struck a restart: there is no training to log", where="events")
    codes = {name: code for code, name in enumerate(EVENT_KINDS)}
    columns = list(zip(*rows, strict=True))
    found = Events(
        numpy.array(columns[0], dtype=float),
        numpy.array([codes[name] for name in columns[1]], dtype=numpy.int8),
        numpy.array(columns[2], dtype=float),
        numpy.array(columns[3], dtype=float),
    )
    if plan.parts is None:
        return found
    return Events(found.time_s, found.kind, found.resumed_from_s, found.persist_end_s,
                  numpy.array(columns[4], dtype=numpy.int64), numpy.array(columns[5], dtype=float))  # fmt: skip
