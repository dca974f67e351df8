"""Whole runs: how long a job needing W of useful work takes, failures and all (docs/model.md §10).

The timeline is the simulation's (:mod:`ckptcalc.simulation.timeline`, its
:func:`~ckptcalc.simulation.timeline.stepper`): renewal at each failure,
restarts that can themselves be interrupted, a failure served by memory or by
storage. A run starts fresh (no restart), and ends when the storage checkpoint
that covers W is durable: one level ends with a shorter period holding the
rest of W; with a memory level the last storage period holds the whole memory
intervals that cover the rest (W rounds up by less than one memory interval).
An asynchronous persist is waited for.

Runs are simulated side by side, one failure cycle per step: each step draws
the next time to failure for every run still going (and, with a memory level,
the level that serves it), finishes the runs that reach their end before it,
and moves the others on as the simulation does.

>>> from ckptcalc.simulation.timeline import Failures, Schedule
>>> done = complete(Schedule.single(interval_s=600.0, stall_s=60.0, restart_s=300.0), Failures(3600.0),
...                 work_s=36_000.0, runs=200, seed=1)
>>> done.times_s.size, bool(done.times_s.min() >= 36_000.0 + 60 * 60.0)
(200, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms import registry
from ckptcalc.model.evaluation import Config, Result, evaluate
from ckptcalc.model.statistics import quantiles, wilson_interval
from ckptcalc.records import Record
from ckptcalc.simulation.timeline import Failures, Schedule, stepper

#: Most runs one plan simulates.
MAX_RUNS = 1_000_000

#: Most failures one run may expect: the steps run in Python, one per failure.
MAX_FAILURES_PER_RUN = 100_000

#: Most failures all runs together may expect (the MTBF's interval ends included): the steps run about
#: 10 million failures a second on one core, so the largest plan allowed finishes in about 20 s
#: (docs/commands/plan.md).
MAX_FAILURES = 200_000_000


@dataclass(frozen=True)
class Completion:
    """Each run's wall time to W (``times_s``) and its failures (``failures``), numpy arrays; ``periods``
    is the number of storage intervals W was rounded up to."""

    times_s: Any
    failures: Any
    periods: int
    seed: int


#: The longest run, in seconds of useful work (some 3,000 years).
MAX_WORK_S = 1e11


def work_of(seconds: float | None, steps: float | None, step_time_s: float | None) -> float:
    """W in seconds of useful work: ``seconds`` itself (``work``), or ``steps`` (a positive whole number)
    × the job's step time; at most :data:`MAX_WORK_S`. Errors name the input W came from.

    >>> work_of(None, 1000.0, 2.5), work_of(86400.0, None, None)
    (2500.0, 86400.0)
    """
    if seconds is not None:
        where = "work"
    else:
        assert steps is not None
        if not (math.isfinite(steps) and steps >= 1 and float(steps).is_integer()):
            raise InputError(f"must be a positive whole number, got {steps:g}", where="steps")
        if step_time_s is None:
            raise InputError("{steps} needs the job's step time ({step_time})", where="steps")
        seconds, where = steps * step_time_s, "steps"
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_WORK_S):
        raise InputError(f"must be a positive duration of at most 1e11 s, got {seconds:g} s", where=where)
    return seconds


class RunInputs(Record):
    """What whole runs of a schedule simulate (docs/model.md §10): the model's result there, W / effective,
    the MTBF the runs meet and the work they do (more than W where a failure class is averaged in)."""

    result: Result
    expected_s: float
    mtbf_s: float
    work_s: float

    @property
    def expected_failures(self) -> float:
        """The failures a run meets on average: W / effective over the MTBF the runs meet."""
        return self.expected_s / self.mtbf_s

    @property
    def failures_budget(self) -> float:
        """The failures :func:`check` weighs a run at: :attr:`expected_failures` and one more."""
        return self.expected_failures + 1.0


def run_inputs(run_config: Config, work_s: float, check: Callable[[Result], None] | None = None) -> RunInputs:
    """The model at ``run_config`` and what its whole runs to W = ``work_s`` simulate; ``check`` sees the
    result before the effective time is (a run that never finishes is refused).

    >>> found = run_inputs(Config(checkpoint_bytes=1.0, bandwidth=1.0 / 60.0, mtbf_s=3600.0, restart_s=300.0), 36_000.0)
    >>> round(found.expected_s / 36_000.0 * float(found.result.effective), 12), found.mtbf_s, found.work_s
    (1.0, 3600.0, 36000.0)
    """
    result = evaluate(run_config)
    if check is not None:
        check(result)
    effective = float(result.effective)
    if not effective > 0.0:
        raise InputError("effective time is 0 at this schedule: the run would never finish", where="work")
    expected = work_s / effective
    # Elastic replica groups: whole runs of the periodic process at the whole-job MTBF, the work
    # stretched by the groups' useful share (docs/model.md §14.4; approximate, as the model is).
    mtbf, run_work = float(run_config.mtbf_s), work_s

    averaged = registry.averaged_in_plan(run_config)
    if averaged:
        # Failure classes the whole runs leave out (silent events, docs/model.md §16.2): counted by the
        # model, and their average cost stretches the work the whole runs (fail-stop failures only) must do.
        result = evaluate(run_config.replace(work_s=work_s))
        plain_config = run_config
        for mechanism in averaged:
            plain_config = mechanism.without(plain_config)
        plain = evaluate(plain_config)
        run_work = work_s * float(plain.effective) / effective
        expected = work_s / effective
    if result.elastic is not None:
        mtbf = float(result.elastic.whole_job_mtbf_s)
        run_work = work_s / float(result.elastic.throughput)
    return RunInputs(result, expected, mtbf, run_work)


def progress_part(progress: Callable[[float], None], part: int, parts: int) -> Callable[[float], None]:
    """``progress`` for the ``part``-th of ``parts`` equal simulations run one after the other: each done
    share of it reported as a share of all.

    >>> seen = []
    >>> progress_part(seen.append, 1, 4)(0.5)
    >>> seen
    [0.375]
    """
    return lambda done: progress((part + done) / parts)


def check(runs: float, expected_failures: float, *, ends: Sequence[float] = ()) -> int:
    """``runs`` as a whole number, and the whole plan within what can be simulated in reasonable time;
    ``ends``: the failures a run expects at each end of the MTBF's interval, simulated as well."""
    if not math.isfinite(runs) or runs < 1 or not float(runs).is_integer():
        raise InputError(f"must be a positive whole number, got {runs:g}", where="runs")
    if runs > MAX_RUNS:
        raise InputError(f"at most {MAX_RUNS:.0e} runs", where="runs")
    for expected, at in ((expected_failures, ""), *((e, " at an end of the MTBF's interval") for e in ends)):
        if not math.isfinite(expected) or expected > MAX_FAILURES_PER_RUN:
            raise InputError(
                f"a run would meet about {expected:.3g} failures{at} (at most {MAX_FAILURES_PER_RUN:.0e} are"
                " simulated): the job barely progresses; plan less work or fix the failure interval",
                where="work",
            )
    total = (expected_failures + sum(ends)) * runs
    if total > MAX_FAILURES:
        both = " (at the MTBF and at the ends of its interval)" if ends else ""
        raise InputError(
            f"{runs:g} runs would simulate about {total:.3g} failures{both} (at most"
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
    waits: Callable[[int], Any] | None = None,
) -> Completion:
    """Simulate ``runs`` runs of ``schedule`` until W = ``work_s`` of useful work is durable; with
    ``waits`` (a running share's, made for the runs: a spare pool, docs/model.md §15.4), each run waits
    after a failure as long as it says."""
    import numpy

    if schedule.tiers > 2:
        raise InputError("whole runs are simulated for one or two levels", where="levels")
    rng = numpy.random.default_rng(seed)
    periods = max(1, math.ceil(work_s / schedule.storage_interval_s * (1.0 - 1e-12)))
    times = numpy.empty(runs)
    counts = numpy.zeros(runs, dtype=numpy.int64)
    lanes = numpy.arange(runs)
    elapsed = numpy.zeros(runs)
    advance = _advance(schedule, work_s, periods, runs)
    pool = None if waits is None else waits(runs)
    step = 0
    while lanes.size:
        x = failures.draw(rng, lanes.size)
        noticed = None
        tier: Any
        if schedule.extra:
            # Classes of their own restart (docs/model.md §20): a class each failure, its tier the stepper's.
            u = rng.random(lanes.size)
            noticed = u < schedule.nowhere_share if schedule.nowhere_share > 0 else None
            bounds = numpy.cumsum(schedule.class_shares)[:-1] / (1.0 - schedule.nowhere_share)
            rest = (u - schedule.nowhere_share) / (1.0 - schedule.nowhere_share)
            tier = numpy.searchsorted(bounds, rest, side="right")
        elif schedule.nowhere_share > 0:
            # A failure with notice resumes where it struck (docs/model.md §13); the others, a tier.
            u = rng.random(lanes.size)
            noticed = u < schedule.nowhere_share
            tier = (u >= schedule.nowhere_share + schedule.shares[0]).astype(numpy.intp) if schedule.tiers > 1 else None
        else:
            tier = (rng.random(lanes.size) >= schedule.shares[0]).astype(numpy.intp) if schedule.tiers > 1 else None
        finished, need = advance(x, tier, noticed)
        times[lanes[finished]] = elapsed[finished] + need[finished]
        going = ~finished
        elapsed = elapsed[going] + x[going]
        if pool is not None:
            elapsed = elapsed + pool.waits(going, elapsed)
        lanes = lanes[going]
        counts[lanes] += 1
        step += 1
        if progress is not None and expected_failures:
            progress(min(0.99, max(1.0 - lanes.size / runs, step / (1.2 * expected_failures + 1.0))))
    if progress is not None:
        progress(1.0)
    return Completion(times, counts, periods, seed)


def _advance(schedule: Schedule, work_s: float, periods: int, runs: int) -> Callable[[Any, Any, Any], tuple[Any, Any]]:
    """The state of a run is the simulation's (phase, persist in flight, restart) plus the tier-1
    intervals up to the last storage checkpoint.

    The storage periods before the last are the schedule's; the last is its own: one level, a period
    holding the rest of W, W − (K − 1)·τ, ending with a checkpoint like the others; with memory, the
    whole memory intervals that cover the rest (W rounded up by less than one memory interval), the
    last of them going to storage.
    """
    import numpy

    tau, s1, s_top, lag = schedule.interval_s, schedule.stalls[0], schedule.stalls[-1], schedule.lag_s
    every = schedule.storage_every or 1
    before = (periods - 1) * every  # tier-1 intervals up to the start of the last storage period
    rest = work_s - before * tau
    segment = tau + s1
    regular = stepper(schedule)
    if schedule.tiers == 1:
        final, closing = 1, stepper(schedule, interval_s=rest)
        period, closing_length = segment, rest + s1
    else:
        final = max(1, math.ceil(rest / tau * (1.0 - 1e-12)))  # ≤ every
        closing = stepper(schedule, every=(final,))
        period, closing_length = every * segment + s_top, final * segment + s_top
    target = before + final
    state = {
        "stored": numpy.zeros(runs),  # tier-1 intervals up to the last storage checkpoint
        "phase": numpy.zeros(runs),
        "pending": numpy.zeros(runs, dtype=bool),
        "restart": numpy.zeros(runs),  # the first cycle starts without one
        "ahead": numpy.zeros(runs),  # progress past the phase, made before failures with notice
    }

    def advance(x: Any, tier: Any, noticed: Any = None) -> tuple[Any, Any]:
        stored, phase, pending, r = state["stored"], state["phase"], state["pending"], state["restart"]
        ahead = state["ahead"]
        if tier is None:
            tier = numpy.zeros(x.size, dtype=numpy.intp)
        last = stored >= before
        full_left = (before - stored) / every  # whole storage periods before the last, the current one included
        need = numpy.where(last, closing_length - phase * segment,
                           period - phase * segment + (full_left - 1.0) * period + closing_length)  # fmt: skip
        need = r + need + lag - ahead  # the last persist is waited for
        need = numpy.where(stored >= target, r + lag - ahead, need)  # committed, its persist cut short by a restart
        finished = x >= need
        kept = numpy.zeros(x.size)
        old_phase = phase.copy()
        moved = numpy.ones(x.size, dtype=bool) if noticed is None else ~noticed
        for mask, step in ((~last & moved, regular), (last & moved, closing)):
            if mask.any():
                sub = numpy.flatnonzero(mask)
                p, q, rr, k = phase[sub], pending[sub], r[sub], numpy.empty(sub.size)
                scratch = numpy.empty((2, sub.size))
                more = None if noticed is None else ahead[sub]
                step(x[sub], tier[sub], p, q, rr, numpy.arange(sub.size), k, scratch[0], scratch[1], more)
                phase[sub], pending[sub], r[sub], kept[sub] = p, q, rr, k
        if noticed is not None:
            # Notice: the progress made stays, and the next restart writes the checkpoint first.
            ahead = numpy.where(noticed, ahead + numpy.maximum(x - r, 0.0), 0.0)
            r = numpy.where(noticed, schedule.nowhere_restart_s, r)
        stored = stored + kept + old_phase - phase
        # In the last storage period memory checkpoints stop at the one that goes to storage.
        phase = numpy.where(stored >= before, numpy.minimum(phase, final - 1.0), phase)
        going = ~finished
        state.update(stored=stored[going], phase=phase[going], pending=pending[going], restart=r[going],
                     ahead=ahead[going])  # fmt: skip
        return finished, need

    return advance


def figures(
    done: Any, gpus: float | None, price: float | None, expected_s: float | None, deadline_s: float | None
) -> dict[str, Any]:
    """What ``plan`` reports of its runs: wall time and failure quantiles, GPU-hours and cost at each,
    the mean against the expectation, and the shares (with Wilson intervals) of runs with no failure
    and of runs done by the deadline."""
    import numpy

    times, failures = done.times_s, done.failures
    runs = int(times.size)
    completion = with_p95(quantiles(times), times)
    hours = None if gpus is None else {k: v * gpus / 3600.0 for k, v in completion.items()}
    cost = None if hours is None or price is None else {k: v * price for k, v in hours.items()}
    within = None if deadline_s is None else int(numpy.count_nonzero(times <= deadline_s))
    none = int(numpy.count_nonzero(failures == 0))
    return {
        "runs": runs,
        "completion_s": completion,
        "mean_vs_expected": None if expected_s is None else completion["mean"] / expected_s - 1.0,
        "failures": with_p95(quantiles(failures), failures),
        "p_no_failure": none / runs,
        "p_no_failure_ci95": list(wilson_interval(none, runs)),
        "gpu_hours": hours,
        "cost": cost,
        "p_deadline": None if within is None else within / runs,
        "p_deadline_ci95": None if within is None else list(wilson_interval(within, runs)),
    }


def with_p95(spread: dict[str, float], values: Any) -> dict[str, float]:
    """``spread`` (p10, p50, p90, mean) with the 95th percentile of ``values`` before the mean."""
    import numpy

    *ranked, mean = spread.items()
    return {**dict(ranked), "p95": float(numpy.percentile(values, 95)), mean[0]: mean[1]}
