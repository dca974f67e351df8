"""Silent events simulated event by event: onset, latency, rollback to a retained checkpoint (docs/model.md §16).

One synchronous level: a checkpoint after every τ of work, each stalling δ.
Fail-stop failures come at 1/M from the start of each restart (renewal, as
:mod:`ckptcalc.simulation.timeline`) and strike work, stalls and restarts;
each goes back to the newest retained checkpoint and restarts in r. Silent
events start at λ_s per unit of work while the state is clean; each is noticed
after D ~ Exp(d) of further work (re-done work counts). On detection the job
goes back to the newest retained checkpoint written before the onset, or, with
none left (the event is *unrecoverable*), to the newest checkpoint kept for good
before it (the start of the run when there is none), restarts in r and skips
s_k (both a restart here). Without ``keep_every`` an unrecoverable event loses
the run so far: as in the model (docs/model.md §16.2), that is the run's risk,
counted in ``unrecoverable``, not a loss of the steady state, so the run goes on
from the onset's own checkpoint, as if it had been kept. A fail-stop rollback to a checkpoint written before
the onset erases the corruption; one to a later checkpoint keeps it.

Only the ``keep`` newest checkpoints are retained (all when None); with
``keep_every`` = p, every p-th checkpoint is also kept for good. A silent
rollback deletes the checkpoints written after its target (they are corrupt).

Whole runs of checkpoints with no event in them are passed in one step, so the
cost is per event, not per checkpoint.

>>> s = simulate(interval_s=600.0, stall_s=10.0, restart_s=300.0, mtbf_s=7200.0, silent_mtbf_s=86400.0,
...              latency_s=1800.0, skip_s=0.0, keep=None, keep_every=None, cycles=2000, seed=1)
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

    @property
    def p_unrecoverable(self) -> float | None:
        """The share of noticed events with no retained checkpoint before their onset (None with none)."""
        return self.unrecoverable / self.events if self.events else None


def simulate(
    *,
    interval_s: float,
    stall_s: float,
    restart_s: float,
    mtbf_s: float,
    silent_mtbf_s: float,
    latency_s: float,
    skip_s: float,
    keep: int | None,
    keep_every: int | None,
    cycles: int,
    seed: int,
) -> Silent:
    """Simulate ``cycles`` fail-stop failure cycles with silent events (see the module's docstring);
    ``keep_every`` counts checkpoints (every p-th is kept for good)."""
    if cycles < BATCHES:
        raise InputError(f"needs at least {BATCHES} cycles, got {cycles}", where="cycles")
    rng = random.Random(seed)
    tau, delta, r = interval_s, stall_s, restart_s
    segment = tau + delta
    onset_rate, detect_mean = 1.0 / silent_mtbf_s, latency_s
    # With every checkpoint kept, the newest before an onset is the onset's own boundary: only the
    # newest needs remembering.
    everything = keep is None
    retained: deque[int] = deque([0], maxlen=1 if keep is None else keep)
    forever = [0]  # checkpoints kept for good (the start of the run always is)
    idx, into = 0, 0.0  # the last boundary passed and the work since it
    corrupt_at: int | None = None  # the last boundary before the onset, while the state is corrupt
    to_onset = rng.expovariate(onset_rate)
    to_detect = math.inf
    worked_corrupt = 0.0
    elapsed = stalled = restarting = 0.0
    events = unrecoverable = erased = 0
    latency_sum = 0.0
    per_batch = cycles // BATCHES
    batch_time = [0.0] * BATCHES
    batch_work = [0.0] * BATCHES
    failures = in_restart = 0

    def restart_after_failure() -> float:
        """Restarts from a fail-stop, each struck again with probability 1 − e^{−r/M}; the time to the next."""
        nonlocal elapsed, restarting, in_restart
        while True:
            x = rng.expovariate(1.0 / mtbf_s)
            if x >= r:
                elapsed += r
                restarting += r
                return x - r
            elapsed += x
            restarting += x
            in_restart += 1

    def keep_for_good(first: int, last: int) -> None:
        """Checkpoints ``first`` … ``last`` just written: every ``keep_every``-th is kept for good."""
        if keep_every is None:
            return
        start = -(-first // keep_every) * keep_every
        forever.extend(range(start, last + 1, keep_every))

    to_fail = restart_after_failure()
    batch, start_time, start_work = 0, elapsed, 0.0
    while failures < cycles:
        signal = to_onset if corrupt_at is None else to_detect
        if into == 0.0:
            # Whole checkpoints with no event in them, in one step.
            n = int(min(to_fail // segment, signal // tau))
            if n > 1:
                n -= 1
                elapsed += n * segment
                stalled += n * delta
                to_fail -= n * segment
                if corrupt_at is None:
                    to_onset -= n * tau
                else:
                    to_detect -= n * tau
                    worked_corrupt += n * tau
                retained.extend(range(max(idx + 1, idx + n - (retained.maxlen or n) + 1), idx + n + 1))
                keep_for_good(idx + 1, idx + n)
                idx += n
                continue
        step = min(tau - into, signal)
        failed = False
        if to_fail < step:
            elapsed += to_fail
            if corrupt_at is not None:
                to_detect -= to_fail
                worked_corrupt += to_fail
            failed = True
        else:
            elapsed += step
            to_fail -= step
            into += step
            if corrupt_at is None:
                to_onset -= step
            else:
                to_detect -= step
                worked_corrupt += step
            if corrupt_at is None and to_onset <= 0.0:
                corrupt_at, to_detect, worked_corrupt = idx, rng.expovariate(1.0 / detect_mean), 0.0
                to_onset = math.inf
                continue
            if corrupt_at is not None and to_detect <= 0.0:
                # Noticed: back to the newest retained checkpoint before the onset.
                events += 1
                latency_sum += worked_corrupt
                clean = [corrupt_at] if everything else [i for i in retained if i <= corrupt_at]
                if clean:
                    target = clean[-1]
                else:
                    unrecoverable += 1
                    # With checkpoints kept for good, back to the newest before the onset; without, the
                    # run is lost (its risk): the steady state goes on from the onset's checkpoint.
                    target = corrupt_at if keep_every is None else forever[bisect.bisect_right(forever, corrupt_at) - 1]
                while retained and retained[-1] > target:
                    retained.pop()
                if not retained or everything:
                    retained.clear()
                    retained.append(target)
                del forever[bisect.bisect_right(forever, target) :]
                idx, into, corrupt_at = target, 0.0, None
                to_onset, to_detect = rng.expovariate(onset_rate), math.inf
                pause = r + skip_s
                if to_fail < pause:
                    elapsed += to_fail
                    restarting += to_fail
                    failed = True
                else:
                    elapsed += pause
                    restarting += pause
                    to_fail -= pause
                    continue
            else:
                if into < tau:
                    continue
                # At a boundary: the stall, then the checkpoint exists.
                if to_fail < delta:
                    elapsed += to_fail
                    stalled += to_fail
                    failed = True
                else:
                    elapsed += delta
                    stalled += delta
                    to_fail -= delta
                    idx, into = idx + 1, 0.0
                    retained.append(idx)
                    keep_for_good(idx, idx)
                    continue
        if failed:
            failures += 1
            newest = retained[-1]
            if corrupt_at is not None and newest <= corrupt_at:
                corrupt_at, to_detect = None, math.inf
                to_onset = rng.expovariate(onset_rate)
                erased += 1
            idx, into = newest, 0.0
            to_fail = restart_after_failure()
            if failures % per_batch == 0 and batch < BATCHES:
                work = idx * tau
                batch_time[batch] = elapsed - start_time
                batch_work[batch] = work - start_work
                batch, start_time, start_work = batch + 1, elapsed, work
    progress = idx * tau + into
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
    )
