"""Whole runs: how long a job needing W of useful work takes, failures and all (docs/model.md §10).

The timeline is the simulation's (:mod:`ckptcalc.simulation.timeline`): renewal at
each failure, restarts that can themselves be interrupted, a failure served
by memory or by storage. A run starts fresh (no restart), and ends when the
storage checkpoint that covers W is durable: one level ends with a shorter
period holding the rest of W; with a memory level the last storage period
holds the whole memory intervals that cover the rest (W rounds up by less
than one memory interval). An asynchronous persist is waited for.

Runs are simulated side by side, one failure cycle per step: each step draws
the next time to failure for every run still going, finishes the runs that
reach their end before it, and moves the others on as the simulation does.

>>> from ckptcalc.simulation.timeline import Failures, Schedule
>>> done = complete(Schedule(interval_s=600.0, stall_s=60.0, restart_s=300.0), Failures(3600.0),
...                 work_s=36_000.0, runs=200, seed=1)
>>> done.times_s.size, bool(done.times_s.min() >= 36_000.0 + 60 * 60.0)
(200, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.simulation.timeline import Failures, Schedule, vector_step

#: Most runs one plan simulates.
MAX_RUNS = 1_000_000

#: Most failures one run may expect: the steps run in Python, one per failure.
MAX_FAILURES_PER_RUN = 100_000

#: Most failures all runs together may expect.
MAX_FAILURES = 1_000_000_000


@dataclass(frozen=True)
class Completion:
    """Each run's wall time to W (``times_s``) and its failures (``failures``), numpy arrays; ``periods``
    is the number of storage intervals W was rounded up to."""

    times_s: Any
    failures: Any
    periods: int
    seed: int


def check(runs: float, expected_failures: float) -> int:
    """``runs`` as a whole number, and the whole plan within what can be simulated in reasonable time."""
    if not math.isfinite(runs) or runs < 1 or not float(runs).is_integer():
        raise InputError(f"must be a positive whole number, got {runs:g}", where="runs")
    if runs > MAX_RUNS:
        raise InputError(f"at most {MAX_RUNS:.0e} runs", where="runs")
    if not math.isfinite(expected_failures) or expected_failures > MAX_FAILURES_PER_RUN:
        raise InputError(
            f"a run would meet about {expected_failures:.3g} failures (at most {MAX_FAILURES_PER_RUN:.0e} are"
            " simulated): the job barely progresses; plan less work or fix the failure interval",
            where="work",
        )
    if expected_failures * runs > MAX_FAILURES:
        raise InputError(
            f"{runs:g} runs would simulate about {expected_failures * runs:.3g} failures (at most"
            f" {MAX_FAILURES:.0e}); use fewer runs",
            where="runs",
        )
    return int(runs)


def complete(
    schedule: Schedule,
    failures: Failures,
    *,
    work_s: float,
    runs: int,
    seed: int,
    expected_failures: float | None = None,
    progress: Callable[[float], None] | None = None,
) -> Completion:
    """Simulate ``runs`` runs of ``schedule`` until W = ``work_s`` of useful work is durable."""
    import numpy

    rng = numpy.random.default_rng(seed)
    periods = max(1, math.ceil(work_s / schedule.storage_interval_s * (1.0 - 1e-12)))
    times = numpy.empty(runs)
    counts = numpy.zeros(runs, dtype=numpy.int64)
    lanes = numpy.arange(runs)
    elapsed = numpy.zeros(runs)
    if schedule.storage_every is None:
        advance = _one_level(schedule, work_s, periods, runs)
    else:
        advance = _two_levels(schedule, work_s, periods, runs)
    step = 0
    while lanes.size:
        x = failures.draw(rng, lanes.size)
        served = rng.random(lanes.size) < schedule.memory_share if schedule.storage_every is not None else None
        finished, need = advance(x, served)
        times[lanes[finished]] = elapsed[finished] + need[finished]
        going = ~finished
        elapsed = elapsed[going] + x[going]
        lanes = lanes[going]
        counts[lanes] += 1
        step += 1
        if progress is not None and expected_failures:
            progress(min(0.99, max(1.0 - lanes.size / runs, step / (1.2 * expected_failures + 1.0))))
    if progress is not None:
        progress(1.0)
    return Completion(times, counts, periods, seed)


def _one_level(schedule: Schedule, work_s: float, periods: int, runs: int) -> Callable[[Any, Any], tuple[Any, Any]]:
    """One level: the state of a run is its durable checkpoints and the restart its cycle begins with.

    The last period holds what is left of W, W − (K − 1)·τ, and ends with a checkpoint like the others.
    """
    import numpy

    tau, stall, lag, restart = schedule.interval_s, schedule.stall_s, schedule.lag_s, schedule.restart_s
    period = tau + stall
    last = work_s - (periods - 1) * tau + stall  # the final period: the rest of W and its checkpoint
    state = {"done": numpy.zeros(runs), "restart": numpy.zeros(runs)}  # the first cycle starts without one

    def advance(x: Any, _: Any) -> tuple[Any, Any]:
        done, r = state["done"], state["restart"]
        need = r + (periods - 1 - done) * period + last + lag  # the last persist is waited for
        finished = x >= need
        w = numpy.maximum(x - r, 0.0)
        count = numpy.floor(w / period)
        if lag > 0:
            # A checkpoint is durable only ``lag`` after its stall ends.
            count -= (count > 0) & (w - count * period < lag)
        # A failure before the end never has the final checkpoint durable.
        count = numpy.minimum(count, periods - 1 - done)
        going = ~finished
        state["done"] = (done + count)[going]
        state["restart"] = numpy.full(int(going.sum()), restart)
        return finished, need

    return advance


def _two_levels(schedule: Schedule, work_s: float, periods: int, runs: int) -> Callable[[Any, Any], tuple[Any, Any]]:
    """Memory + storage: the state is the simulation's (phase, persist in flight, restart) plus the
    memory checkpoints up to the last storage one.

    The last storage period holds the whole memory intervals that cover what is left of W (so W is
    rounded up by less than one memory interval); the last of them goes to storage.
    """
    import dataclasses

    import numpy

    every = schedule.storage_every
    assert every is not None
    tau, s1, s2, lag = schedule.interval_s, schedule.stall_s, schedule.storage_stall_s, schedule.lag_s
    segment = tau + s1
    period = every * segment + s2
    final = max(1, math.ceil((work_s - (periods - 1) * every * tau) / tau * (1.0 - 1e-12)))  # ≤ every
    before = (periods - 1) * every  # memory intervals up to the start of the last storage period
    target = before + final
    regular = vector_step(schedule)
    closing = vector_step(dataclasses.replace(schedule, storage_every=final))
    state = {
        "stored": numpy.zeros(runs),  # memory intervals up to the last storage checkpoint
        "phase": numpy.zeros(runs),
        "pending": numpy.zeros(runs, dtype=bool),
        "restart": numpy.zeros(runs),
    }

    def advance(x: Any, by_memory: Any) -> tuple[Any, Any]:
        stored, phase, pending, r = state["stored"], state["phase"], state["pending"], state["restart"]
        last = stored >= before
        full_left = (before - stored) / every  # whole storage periods before the last, the current one included
        need = numpy.where(
            last,
            (final - phase) * segment + s2,
            (every - phase) * segment + s2 + (full_left - 1.0) * period + final * segment + s2,
        )
        need = r + need + lag  # the last persist is waited for
        need = numpy.where(stored >= target, r + lag, need)  # committed, its persist cut short by a restart
        finished = x >= need
        kept = numpy.empty(x.size)
        old_phase = phase.copy()
        for mask, step in ((~last, regular), (last, closing)):
            if mask.any():
                sub = numpy.flatnonzero(mask)
                p, q, rr, k = phase[sub], pending[sub], r[sub], numpy.empty(sub.size)
                scratch = numpy.empty((2, sub.size))
                step(x[sub], by_memory[sub], p, q, rr, numpy.arange(sub.size), k, scratch[0], scratch[1])
                phase[sub], pending[sub], r[sub], kept[sub] = p, q, rr, k
        stored = stored + kept + old_phase - phase
        # In the last storage period memory checkpoints stop at the one that goes to storage.
        phase = numpy.where(stored >= before, numpy.minimum(phase, final - 1.0), phase)
        going = ~finished
        state.update(stored=stored[going], phase=phase[going], pending=pending[going], restart=r[going])
        return finished, need

    return advance
