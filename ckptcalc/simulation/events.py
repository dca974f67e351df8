"""The event log of a simulated one-level timeline: what ``simulate --events`` writes.

The same draws as :func:`ckptcalc.simulation.timeline.run_schedule`, so the log
is the very timeline whose effective time the simulation reports.

>>> from ckptcalc.simulation.timeline import Failures, Schedule
>>> log = events(Schedule.single(interval_s=600.0, stall_s=60.0, restart_s=300.0), Failures(3600.0),
...              cycles=200, seed=1)
>>> EVENT_KINDS[int(log.kind[0])], EVENT_KINDS[int(log.kind[-1])]
('run_start', 'run_end')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.simulation.timeline import DEFAULT_SEED, Failures, Schedule, check


@dataclass(frozen=True)
class Events:
    """The event log of a simulated one-level timeline, as arrays in time order.

    ``kind`` indexes :data:`EVENT_KINDS`; ``resumed_from_s`` (restart ends) and
    ``persist_end_s`` (asynchronous checkpoint ends) are NaN where they do not apply.
    """

    time_s: Any
    kind: Any
    resumed_from_s: Any
    persist_end_s: Any


#: The event names of :class:`Events`, by their codes.
EVENT_KINDS = ("run_start", "restart_end", "checkpoint_start", "checkpoint_end", "failure", "run_end")


def events(schedule: Schedule, failures: Failures, *, cycles: int, seed: int = DEFAULT_SEED) -> Events:
    """The timeline :func:`run_schedule` simulates for one level (the same draws), as an event log.

    The log starts when training first starts (the end of the timeline's first complete restart) and
    ends at its last failure; each restart names the checkpoint it resumes from.
    """
    import numpy

    if schedule.tiers != 1:
        raise InputError("an event log is written for one checkpoint level", where="events")
    cycles = check(cycles, failures.shape)
    rng = numpy.random.default_rng(seed)
    x = failures.draw(rng, cycles)
    tau, stall, lag, r = schedule.interval_s, schedule.stalls[0], schedule.lag_s, schedule.restarts[0]
    period = tau + stall
    begin = numpy.concatenate(([0.0], numpy.cumsum(x)[:-1]))
    w = numpy.maximum(x - r, 0.0)
    trained = numpy.flatnonzero(x > r)
    if trained.size == 0:
        raise InputError("every failure struck a restart: there is no training to log", where="events")
    first = int(trained[0])
    start_s = begin[first] + r
    started = numpy.where(w > tau, numpy.ceil((w - tau) / period), 0.0).astype(numpy.int64)
    completed = numpy.floor(w / period).astype(numpy.int64)
    durable = numpy.where(w >= lag, numpy.floor((w - lag) / period), 0.0).astype(numpy.int64)
    if lag == 0:
        durable = completed
    started[:first] = completed[:first] = durable[:first] = 0
    # One row per checkpoint started: its cycle and its index n in the cycle.
    owner = numpy.repeat(numpy.arange(cycles), started)
    offsets = numpy.cumsum(started) - started
    n = numpy.arange(owner.size) - numpy.repeat(offsets, started)
    ck_start = begin[owner] + r + n * period + tau
    ends = n < completed[owner]
    ck_end = ck_start[ends] + stall
    persist = numpy.full(ck_end.size, numpy.nan)
    if lag > 0:
        persist = numpy.where(n[ends] < durable[owner[ends]], ck_end + lag, numpy.nan)
    # The checkpoint each restart resumes from: the newest durable one of the cycles before it.
    last_durable = numpy.where(durable > 0, begin + r + (durable - 1) * period + tau, numpy.nan)
    last_durable[:first] = numpy.nan
    carried = _carry_forward(last_durable, start_s)
    resumed = numpy.concatenate(([start_s], carried[:-1]))
    restarts = numpy.arange(first + 1, cycles)
    restarts = restarts[x[restarts] > r]
    fail = numpy.arange(first, cycles)
    times = numpy.concatenate(
        ([start_s], begin[restarts] + r, ck_start, ck_end, begin[fail] + x[fail], [begin[-1] + x[-1]])
    )
    kinds = numpy.concatenate(
        ([0], numpy.full(restarts.size, 1), numpy.full(ck_start.size, 2), numpy.full(ck_end.size, 3),
         numpy.full(fail.size, 4), [5])
    )  # fmt: skip
    resumed_col = numpy.concatenate(
        ([numpy.nan], resumed[restarts], numpy.full(times.size - 1 - restarts.size, numpy.nan))
    )
    persist_col = numpy.concatenate(
        (numpy.full(1 + restarts.size + ck_start.size, numpy.nan), persist, numpy.full(fail.size + 1, numpy.nan))
    )
    # Failures before restarts at the same instant; starts before ends; the run's end last.
    order = numpy.lexsort((_TIE[kinds], times))
    return Events(times[order], kinds[order], resumed_col[order], persist_col[order])


def _carry_forward(values: Any, initial: float) -> Any:
    """Each position's newest non-NaN value so far (``initial`` before the first)."""
    import numpy

    valid = ~numpy.isnan(values)
    index = numpy.where(valid, numpy.arange(values.size), -1)
    numpy.maximum.accumulate(index, out=index)
    return numpy.where(index >= 0, values[numpy.maximum(index, 0)], initial)


class _TieOrder:
    def __getitem__(self, kinds: Any) -> Any:
        import numpy

        # run_start, failure, restart_end, checkpoint_start, checkpoint_end, run_end at one instant
        return numpy.array([0, 2, 3, 4, 1, 5])[kinds]


_TIE = _TieOrder()
