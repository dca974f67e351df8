"""The event log of a simulated one-level timeline: what ``simulate --events`` writes.

The same draws as :func:`ckptcalc.simulation.timeline.run_schedule`, so the log
is the very timeline whose effective time the simulation reports. It comes in
pieces of at most :data:`ROWS` events (:func:`pieces`), so a log of any length
is written with bounded memory.

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
from ckptcalc.simulation.timeline import DEFAULT_SEED, Failures, Schedule, check

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
    other events).
    """

    time_s: Any
    kind: Any
    resumed_from_s: Any
    persist_end_s: Any


#: The event names of :class:`Events`, by their codes.
EVENT_KINDS = ("run_start", "restart_end", "checkpoint_start", "checkpoint_end", "failure", "run_end")

_RUN_START, _RESTART_END, _START, _END, _FAILURE, _RUN_END = range(6)


def events(schedule: Schedule, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED) -> Events:
    """The whole log of :func:`pieces` in one :class:`Events` (for short runs)."""
    import numpy

    found = list(pieces(schedule, failures, cycles=cycles, seed=seed))
    return Events(*(numpy.concatenate([getattr(p, name) for p in found]) for name in Events.__dataclass_fields__))


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
    if schedule.notice_share > 0:
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
