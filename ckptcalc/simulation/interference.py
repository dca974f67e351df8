"""The timeline of one asynchronous level whose persist slows training (docs/model.md §17.1).

The exact model charges the slowdown as a longer stall; this runs the slowdown
itself, so that the two check each other. After its stall each snapshot
persists for P of elapsed time, during which training runs at 1 − f of its
speed; the snapshot is durable when the persist ends. A restart resumes from a
durable checkpoint with nothing in flight, so the first period after it runs
at full speed (τ + s) and every later one takes τ + s + f·P. Failures renew at
each failure, as in :mod:`ckptcalc.simulation.timeline`, which draws the times
to failure from the same seed, and turns these sums into its result.

>>> totals, batches, _ = slowed_sums(interval_s=1800.0, stall_s=0.5, persist_s=300.0, slowdown=0.5,
...     restart_s=600.0, draw=lambda rng, n: rng.exponential(11160.0, n), batches=[100] * 20, seed=7,
...     progress=None)
>>> bool(0.7 < totals[1] / totals[0] < 0.9), len(batches)
(True, 20)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

#: Cycles drawn at once.
CHUNK = 1 << 18


def _cycles(x: Any, tau: float, stall: float, persist: float, slow: float, restart: float) -> Any:
    """Per cycle of times to failure ``x``: (kept work, stall and slowdown time, restart time)."""
    import numpy

    restarting = numpy.minimum(x, restart)
    w = numpy.maximum(x - restart, 0.0)  # time run since the restart ended
    first = tau + stall  # the first period: no persist in flight
    period = first + slow * persist  # every later one: its persist slows the first P of it
    past = w >= first
    # Checkpoints whose stall ended before the failure, and the time since the last one's stall ended.
    done = numpy.where(past, 1.0 + numpy.floor(numpy.maximum(w - first, 0.0) / period), 0.0)
    since = numpy.where(past, w - first - (done - 1.0) * period, w)
    durable = past & (since >= persist)
    kept = tau * numpy.where(durable, done, numpy.maximum(done - 1.0, 0.0))
    # The stall cut short by the failure: it comes after the period's work (in the first period τ, later τ + f·P).
    work = numpy.where(past, tau + slow * persist, tau)
    partial = numpy.maximum(since - work, 0.0)
    # Slowed time: every persist that ended, and the one running when the failure struck.
    slowed = numpy.where(past, (done - 1.0) * persist + numpy.minimum(since, persist), 0.0)
    lost = done * stall + partial + slow * slowed
    return kept, lost, restarting


def slowed_sums(
    *,
    interval_s: float,
    stall_s: float,
    persist_s: float,
    slowdown: float,
    restart_s: float,
    draw: Callable[[Any, int], Any],
    batches: list[int],
    seed: int,
    progress: Callable[[float], None] | None,
) -> tuple[Any, Any, int]:
    """Failure cycles of one asynchronous level whose persist ``persist_s`` slows training by
    ``slowdown``, in batches of the sizes ``batches``, times to failure from ``draw(rng, n)``: the sums
    of (time, kept work, stalls and slowdown, restarts), each batch's effective time, and how many
    failures struck a restart."""
    import numpy

    rng = numpy.random.default_rng(seed)
    cycles = sum(batches)
    totals = numpy.zeros(4)
    batch_effective = numpy.empty(len(batches))
    in_restart = 0
    done = 0
    for b, size in enumerate(batches):
        batch = numpy.zeros(4)
        left = size
        while left:
            n = min(left, CHUNK)
            x = draw(rng, n)
            kept, lost, restarting = _cycles(x, interval_s, stall_s, persist_s, slowdown, restart_s)
            in_restart += int(numpy.count_nonzero(x < restart_s))
            batch += (math.fsum(x), math.fsum(kept), math.fsum(lost), math.fsum(restarting))
            left -= n
            done += n
            if progress is not None:
                progress(done / cycles)
        totals += batch
        batch_effective[b] = batch[1] / batch[0]
    return totals, batch_effective, in_restart
