"""What checkpoints cost the storage, and what the storage costs training (docs/model.md §17).

Pure arithmetic on floats (numpy arrays where a caller passes them), no words:

* **Interference.** While a persist of elapsed time P runs, training runs at
  1 − f of its speed. Over a whole checkpoint period that costs f·P, like a
  stall of that length; the persist still takes P of elapsed time, of which
  (1 − f)·P is work. So the exact model of one asynchronous level takes the
  stall s + f·P and the lag (1 − f)·P (the work re-run after a failure to get
  back to where the lost checkpoint was durable, at full speed): exact for
  one level, first order the same for more (:func:`slowed`).
* **Storage load.** A tier written every τ with a persist P is busy P/τ of
  the time and takes size × 86 400/τ bytes a day.
* **Compression** by c at a codec throughput B_c: a write of size/B_c +
  size/(c·B), a reload read the same way (:func:`coded_time`).

>>> stall, lag, cost = slowed(stall_s=0.5, persist_s=300.0, slowdown=0.5)
>>> stall, lag, cost
(150.5, 150.0, 150.0)
>>> round(written_per_day(6.48e12, 266.8) / 1e15, 3)
2.098
"""

from __future__ import annotations

from typing import Any

#: Seconds in a day, for the bytes written per day.
DAY_S = 86_400.0

#: The busy share above which a warning says the storage is loaded (``--max-busy``).
DEFAULT_MAX_BUSY = 0.5

Num = Any  # a float, or a numpy array of them


def slowed(*, stall_s: Num, persist_s: Num, slowdown: Num) -> tuple[Num, Num, Num]:
    """(stall, lag, slowdown cost) of an asynchronous level whose persist ``persist_s`` slows training by
    ``slowdown``: s + f·P, (1 − f)·P and f·P. With f = 0 it is (s, P, 0).

    Over a period the job loses f·P to the slower steps, which the exact model charges as stall; the
    persist's elapsed time P is unchanged, and (1 − f)·P of it is the work done while it runs, which
    is both what a failure re-runs at full speed to get back to the point the lost snapshot was
    durable and the shortest interval that lets each persist end before the next snapshot."""
    cost = slowdown * persist_s
    return stall_s + cost, persist_s - cost, cost


def busy_share(persist_s: Num, interval_s: Num) -> Num:
    """The share of elapsed time a tier's storage is busy writing: its write (or persist) time over its
    interval, P/τ. At 1 or more the schedule cannot run (a write would start before the last ends)."""
    return persist_s / interval_s


def written_per_day(size_bytes: Num, interval_s: Num) -> Num:
    """Bytes a tier takes per day: one checkpoint of ``size_bytes`` every ``interval_s`` (86 400/τ a day)."""
    return size_bytes * (DAY_S / interval_s)


def coded_time(size_bytes: Num, bandwidth: Num, ratio: Num, codec_bandwidth: Num | None) -> Num:
    """Time to move a checkpoint compressed ``ratio``× through a codec of ``codec_bandwidth`` over a link of
    ``bandwidth``: size/B_c + size/(c·B); without a codec bandwidth the codec is free (size/(c·B))."""
    moved = size_bytes / (ratio * bandwidth)
    if codec_bandwidth is None:
        return moved
    return size_bytes / codec_bandwidth + moved


def slowdown_share(write: Num, levels: list[tuple[Num, Num, Num]]) -> Num:
    """The part of the exact write share ``write`` that is the persist's slowdown, for ``levels`` given as
    (stall s + f·P, slowdown f·P, interval) fastest first: the stall time of one top-tier period is
    Σ_i s_i·(T_L/T_i), of which f·P is slowdown, and the write share is split in that proportion.

    >>> round(slowdown_share(0.07, [(150.5, 150.0, 1733.9)]), 6)
    0.069767
    """
    top = levels[-1][2]
    stalls: Num = 0.0
    slowed: Num = 0.0
    for stall, slowdown, interval in levels:
        stalls = stalls + stall * (top / interval)
        slowed = slowed + slowdown * (top / interval)
    return write * slowed / stalls if stalls else 0.0 * write


def result_slowdown(result: Any) -> float:
    """The share of elapsed time an evaluated result (:class:`ckptcalc.model.evaluation.Result`, one job)
    loses to the persist's slowdown: part of its write share (:func:`slowdown_share`); 0 without one."""
    plans = result.levels
    if not any(float(p.level.slowdown_s) > 0 for p in plans):
        return 0.0
    rows = [(float(p.level.stall_s), float(p.level.slowdown_s), float(p.interval_s)) for p in plans]
    return float(slowdown_share(float(result.write), rows))
