"""Silent events simulated event by event: onset, latency, rollback to a retained checkpoint (docs/model.md §16).

Any schedule of tiers, as :class:`ckptcalc.simulation.timeline.Schedule` (docs/model.md §7.2): a
tier-1 checkpoint after every τ₁ of work, tier i every m_i-th of tier i − 1,
the top tier (storage) durable once the job's position is its lag past the
boundary (0: synchronous). Fail-stop failures come at 1/M from the start of
each restart (renewal, as :mod:`ckptcalc.simulation.timeline`) and strike
work, stalls and restarts; each is of class k with the tiers' shares (or met
with notice, resuming in place) and goes back to the newest tier-k
checkpoint (the top tier: the newest durable retained one), the tiers below
reset to it; a failure during a restart draws its class afresh.

Silent events start at λ_s per unit of work while the state is clean (every
unit, kept or later lost to a crash); each is noticed after D ~ Exp(d) of
further work (re-done work counts). On detection the job goes back to the
newest retained storage checkpoint written before the onset, or, with none
left (the event is *unrecoverable*), to the newest checkpoint kept for good
before it (the start of the run when there is none), restarts in the top
tier's restart and skips s_k (both a restart here). Without ``keep_every`` an
unrecoverable event loses the run so far: as in the model (docs/model.md
§16.2), that is the run's risk, counted in ``unrecoverable``, not a loss of
the steady state, so the run goes on from the onset's own storage checkpoint,
as if it had been kept. Any rollback to a checkpoint at or before the onset's
position erases the corruption (an onset in work a crash throws away is
erased so); one to a later checkpoint keeps it.

Only the ``keep`` newest durable storage checkpoints are retained (all when
None); with ``keep_every`` = p, every p-th storage checkpoint is also kept for
good. A silent rollback deletes the checkpoints written after its target
(they are corrupt), on every tier.

>>> one = Tiers(interval_s=600.0, every=(), stalls=(10.0,), restarts=(300.0,), shares=(1.0,))
>>> s = run(one, mtbf_s=7200.0, silent_mtbf_s=86400.0, latency_s=1800.0, skip_s=0.0, keep=None, keep_every=None,
...         cycles=2000, seed=1)
>>> s.cycles, 0.7 < s.effective < 0.95, s.unrecoverable
(2000, True, 0)
"""

from __future__ import annotations

import bisect
import math
import random
from collections import deque
from dataclasses import dataclass

from ckptcalc.errors import InputError
from ckptcalc.model.statistics import BATCHES, T975_19


@dataclass(frozen=True)
class Silent:
    """A simulated run with silent events: effective time with its 95 % interval, the split, the counts."""

    effective: float
    ci95: tuple[float, float]
    write: float
    rework: float
    restart: float
    cycles: int  # fail-stop failures
    events: int  # silent events noticed
    unrecoverable: int  # of those, with no retained checkpoint before the onset
    erased: int  # silent events a fail-stop rollback erased before they were noticed
    latency_s: float  # mean work from onset to detection, measured
    batch_effective: tuple[float, ...] = ()  # effective time of each batch behind ci95
    failures_in_restart: int = 0  # fail-stop failures that struck a restart
    silent: float = 0.0  # share of time: work thrown away at detections, their restarts and skips

    @property
    def p_unrecoverable(self) -> float | None:
        """The share of noticed events with no retained checkpoint before their onset (None with none)."""
        return self.unrecoverable / self.events if self.events else None


@dataclass(frozen=True)
class Late:
    """Silent events as an event engine steps them: the mean work between onsets (inf: none), the mean
    detection latency, the work skipped after each; the newest storage checkpoints retained (None: all)
    and one kept for good every ``keep_every`` storage checkpoints (None: none)."""

    mean_work: float
    latency: float
    skipped: float
    newest: int | None
    kept_every: int | None


@dataclass(frozen=True)
class Tiers:
    """The schedule :func:`run` steps, as :class:`ckptcalc.simulation.timeline.Schedule` has it (seconds)."""

    interval_s: float
    every: tuple[int, ...]
    stalls: tuple[float, ...]
    restarts: tuple[float, ...]
    shares: tuple[float, ...]
    lag_s: float = 0.0
    nowhere_share: float = 0.0
    nowhere_restart_s: float = 0.0


def run(
    tiers: Tiers,
    *,
    mtbf_s: float,
    silent_mtbf_s: float,
    latency_s: float,
    skip_s: float,
    keep: int | None,
    keep_every: int | None,
    cycles: int,
    seed: int,
    glide: bool = True,
) -> Silent:
    """Simulate ``cycles`` fail-stop failure cycles of ``tiers`` with silent events, event by event (see
    the module's docstring); ``keep_every`` counts storage checkpoints (every p-th is kept for good).

    Where tier-1 checkpoints stall nothing (just-in-time recovery's one-step tier), the job glides over
    them to the next tier-2 boundary, taking the tier-1 checkpoints passed as it stops (``glide``; the
    same timeline from the same draws as stopping at each, which ``glide=False`` does)."""
    if cycles < BATCHES:
        raise InputError(f"needs at least {BATCHES} cycles, got {cycles}", where="cycles")
    rng = random.Random(seed)
    tau = tiers.interval_s
    top = len(tiers.stalls) - 1
    sizes = [1]
    for m in tiers.every:
        sizes.append(sizes[-1] * m)
    period = sizes[top]  # tier-1 boundaries per storage checkpoint
    lag = tiers.lag_s
    periodic = 1.0 - tiers.nowhere_share
    bounds = [sum(tiers.shares[: k + 1]) for k in range(top)]  # cumulative (notice takes the rest)
    onset_rate, detect_mean = 1.0 / silent_mtbf_s, latency_s
    everything = keep is None
    # Durable storage boundaries; with every one kept, the newest is all a rollback needs.
    retained: deque[int] = deque([0], maxlen=1 if keep is None else keep)
    forever = [0]  # storage boundaries kept for good (the start of the run always is)
    marks = [0] * top  # each lower tier's newest checkpoint (a tier-1 boundary index)
    pending: int | None = None  # a storage boundary written, not yet durable
    n, into = 0, 0.0  # the last tier-1 boundary passed and the work since it
    onset: tuple[int, float] | None = None  # (its boundary, its position) while the state is corrupt
    to_onset = rng.expovariate(onset_rate)
    to_detect = math.inf
    worked_corrupt = 0.0
    elapsed = stalled = restarting = thrown = 0.0
    events = unrecoverable = erased = 0
    latency_sum = 0.0
    per_batch = cycles // BATCHES
    batch_time = [0.0] * BATCHES
    batch_work = [0.0] * BATCHES
    failures = in_restart = 0

    first_stall = tiers.stalls[0]
    upper = tuple(zip(sizes[1 : top + 1], tiers.stalls[1:], strict=True))  # each higher tier's size and stall

    def stall_at(index: int) -> float:
        return first_stall + sum(stall for size, stall in upper if index % size == 0)

    gliding = glide and top >= 1 and tiers.stalls[0] == 0.0

    def settle() -> None:
        """Gliding: the tier-1 boundaries passed, short of the next tier-2 one, become checkpoints."""
        nonlocal n, into
        if gliding and into >= tau:
            passed = min(int(into // tau), (n // sizes[1] + 1) * sizes[1] - n - 1)
            if passed > 0:
                n, into = n + passed, into - passed * tau
                marks[0] = n

    def promote() -> None:
        """The pending storage checkpoint, durable once the position is its lag past it."""
        nonlocal pending
        if pending is not None and n * tau + into >= pending * tau + lag:
            retained.append(pending)
            if keep_every is not None and (pending // period) % keep_every == 0:
                forever.append(pending)
            pending = None

    def back_to(target: int) -> None:
        """Roll back to tier-1 boundary ``target``; a corruption after it is erased."""
        nonlocal n, into, onset, to_onset, to_detect, erased
        if onset is not None and target * tau <= onset[1]:
            onset, to_detect, erased = None, math.inf, erased + 1
            to_onset = rng.expovariate(onset_rate)
        n, into = target, 0.0

    def fail_stop() -> float:
        """A fail-stop: its class, the rollback, the restarts (each struck again, its class afresh); the
        time to the next failure."""
        nonlocal elapsed, restarting, in_restart, pending
        while True:
            u = rng.random()
            if u >= periodic:
                restart = tiers.nowhere_restart_s  # met with notice: resumes where it struck
            else:
                k = sum(1 for edge in bounds if u >= edge)
                if k < top:
                    target = marks[k]
                else:
                    pending = None  # the persist in flight is lost
                    target = retained[-1]
                for j in range(min(k, top)):
                    marks[j] = target
                back_to(target)
                restart = tiers.restarts[k]
            x = rng.expovariate(1.0 / mtbf_s)
            if x >= restart:
                elapsed += restart
                restarting += restart
                return x - restart
            elapsed += x
            restarting += x
            in_restart += 1

    to_fail = fail_stop()  # the run starts with a restart
    batch, start_time, start_work = 0, elapsed, 0.0
    while failures < cycles:
        position = n * tau + into
        signal = to_onset if onset is None else to_detect
        ahead = (n // sizes[1] + 1) * sizes[1] - n if gliding else 1  # tier-1 segments to the next stop
        step = min(ahead * tau - into, signal)
        if pending is not None:
            step = min(step, max(pending * tau + lag - position, 0.0))
        failed = False
        if to_fail < step:
            elapsed += to_fail
            into += to_fail
            if onset is None:
                to_onset -= to_fail  # clean work lost to the crash ran the onset clock too (step ≤ to_onset)
            else:
                to_detect -= to_fail
                worked_corrupt += to_fail
            failed = True
            settle()
        else:
            elapsed += step
            to_fail -= step
            into += step
            if onset is None:
                to_onset -= step
            else:
                to_detect -= step
                worked_corrupt += step
            settle()
            if pending is not None:
                promote()
            if onset is None and to_onset <= 0.0:
                onset, to_detect, worked_corrupt = (n, n * tau + into), rng.expovariate(1.0 / detect_mean), 0.0
                to_onset = math.inf
                continue
            if onset is not None and to_detect <= 0.0:
                # Noticed: back to the newest retained storage checkpoint before the onset.
                events += 1
                latency_sum += worked_corrupt
                before = onset[0] // period * period
                if everything:
                    target = min(before, retained[-1])
                else:
                    clean = [i for i in retained if i <= onset[0]]
                    if clean:
                        target = clean[-1]
                    else:
                        unrecoverable += 1
                        # Kept for good: the newest before the onset; without, the run is lost (its risk)
                        # and the steady state goes on from the onset's storage checkpoint.
                        target = before if keep_every is None else forever[bisect.bisect_right(forever, before) - 1]
                thrown += n * tau + into - target * tau
                while retained and retained[-1] > target:
                    retained.pop()
                if not retained or everything:
                    retained.clear()
                    retained.append(target)
                del forever[bisect.bisect_right(forever, target) :]
                pending = None
                for j in range(top):
                    marks[j] = target
                n, into, onset = target, 0.0, None
                to_onset, to_detect = rng.expovariate(onset_rate), math.inf
                pause = tiers.restarts[top] + skip_s
                if to_fail < pause:
                    elapsed += to_fail
                    restarting += to_fail
                    thrown += to_fail
                    failed = True
                else:
                    elapsed += pause
                    restarting += pause
                    thrown += pause
                    to_fail -= pause
                    continue
            elif into >= tau:
                # At a boundary: the stall, then the checkpoint exists.
                stall = stall_at(n + 1)
                if to_fail < stall:
                    elapsed += to_fail
                    stalled += to_fail
                    failed = True
                else:
                    elapsed += stall
                    stalled += stall
                    to_fail -= stall
                    n, into = n + 1, 0.0
                    for k in range(top):
                        if n % sizes[k] == 0:
                            marks[k] = n
                    if n % period == 0:
                        pending = n
                        promote()
                    continue
            else:
                continue
        if failed:
            failures += 1
            promote()
            to_fail = fail_stop()
            if failures % per_batch == 0 and batch < BATCHES:
                work = n * tau + into
                batch_time[batch] = elapsed - start_time
                batch_work[batch] = work - start_work
                batch, start_time, start_work = batch + 1, elapsed, work
    progress = n * tau + into
    effective = progress / elapsed
    shares = [w / t for w, t in zip(batch_work, batch_time, strict=True) if t > 0]
    mean = sum(shares) / len(shares)
    spread = math.sqrt(sum((s - mean) ** 2 for s in shares) / (len(shares) - 1) / len(shares))
    half = T975_19 * spread
    write, back = stalled / elapsed, restarting / elapsed
    return Silent(
        effective=effective,
        ci95=(effective - half, effective + half),
        write=write,
        rework=max(1.0 - effective - write - back, 0.0),
        restart=back,
        cycles=failures,
        events=events,
        unrecoverable=unrecoverable,
        erased=erased,
        latency_s=latency_sum / events if events else 0.0,
        batch_effective=tuple(shares),
        failures_in_restart=in_restart,
        silent=thrown / elapsed,
    )
