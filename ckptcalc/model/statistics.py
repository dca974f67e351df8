"""Descriptive figures of results: shares, differences in points, quantiles, a proportion's interval.

Pure functions on floats (numpy only in :func:`quantiles`, imported there), so
that the output layer lays these figures out instead of working them out.

>>> wilson_interval(0, 10)[0], round(wilson_interval(5, 10)[1], 6)
(0.0, 0.763407)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, TypeVar

#: The standard normal quantile at 97.5 %: a two-sided 95 % interval.
Z95 = 1.959963984540054

#: The confidence of every interval the tool reports (the χ² band of a rate, a spread's mean).
CONFIDENCE = 0.95

#: Batches of a batch-means interval (a simulation's, a log's time split).
BATCHES = 20

#: Student's t quantile at 97.5 % with BATCHES − 1 = 19 degrees of freedom: the batch-means 95 % interval.
T975_19 = 2.093024054408263

#: Seconds in a day.
DAY_S = 86_400.0

#: GPUs per node where a job does not say.
DEFAULT_GPUS_PER_NODE = 8.0


def no_failure_bound(window_s: float) -> float:
    """The 95 % lower bound on the MTBF when a window of ``window_s`` saw no failure: T / ln 20.

    >>> round(no_failure_bound(54 * 86400.0) / 86400.0, 4)
    18.0256
    """
    return window_s / math.log(1.0 / round(1.0 - CONFIDENCE, 12))


def node_count(gpus: float, per_node: float | None = None) -> float:
    """The nodes a job of ``gpus`` occupies, ⌈GPUs / GPUs per node⌉ (8 per node unless given).

    >>> node_count(16384), node_count(20, 4), node_count(9)
    (2048.0, 5.0, 2.0)
    """
    return float(math.ceil(gpus / (per_node or DEFAULT_GPUS_PER_NODE)))


_K = TypeVar("_K", bound=Hashable)


def points(value: float, reference: float) -> float:
    """``value - reference`` in percentage points (both fractions).

    >>> round(points(0.95, 0.9), 12)
    5.0
    """
    return (value - reference) * 100.0


def shares(parts: Mapping[str, float], total: float) -> dict[str, float]:
    """Each part as a share of ``total``; every share is 0 when the total is 0 (nothing to share).

    >>> shares({"write": 0.01, "rework": 0.03}, 0.04)
    {'write': 0.25, 'rework': 0.75}
    """
    return {name: value / total if total else 0.0 for name, value in parts.items()}


def share_of(value: float, total: float) -> float | None:
    """``value`` as a share of ``total``; None when the total is not positive (no share to show).

    >>> share_of(0.01, 0.04), share_of(0.01, 0.0)
    (0.25, None)
    """
    return value / total if total > 0 else None


def part_of(share: float, total: float) -> float:
    """What a ``share`` of ``total`` comes to, share × total (:func:`share_of` the other way): a part of a run's
    split in seconds of its wall time.

    >>> part_of(0.25, 7200.0)
    1800.0
    """
    return share * total


def within(value: float, interval: tuple[float, float]) -> bool:
    """Whether ``value`` lies in ``interval`` (its ends included): a model's effective time in a run's 95 %
    interval is a model that agrees with it (docs/model.md §7, §11.2).

    >>> within(0.93, (0.92, 0.94)), within(0.95, (0.92, 0.94)), within(0.94, (0.92, 0.94))
    (True, False, True)
    """
    low, high = interval
    return bool(low <= value <= high)


def at_least(value: float, floor: float | None) -> bool | None:
    """Whether ``value`` reaches ``floor`` (an effective time against the floor ``check`` sets,
    docs/model.md §9.3); None where there is no floor.

    >>> at_least(0.925, 0.9), at_least(0.925, 0.95), at_least(0.925, None)
    (True, False, None)
    """
    return None if floor is None else bool(value >= floor)


def gpu_hours_gained(effective: float, reference: float, wall_s: float, gpus: float | None) -> float | None:
    """The GPU-hours a run of ``wall_s`` on ``gpus`` GPUs gains at an ``effective`` time over a ``reference`` one:
    (effective − reference) × wall × GPUs / 3600, the gain of the optimal interval over the one a run used
    (docs/model.md §11.2); None without a GPU count.

    >>> gpu_hours_gained(0.75, 0.5, 7200.0, 1000), gpu_hours_gained(0.75, 0.5, 7200.0, None)
    (500.0, None)
    """
    return None if gpus is None else (effective - reference) * wall_s * gpus / 3600.0


#: The smallest change in points a lever's effect is said to have (it is shown to two decimals).
SHOWN_POINTS = 0.005


def direction(points: float, resolution: float = SHOWN_POINTS) -> int:
    """A change in points as +1 (a gain), −1 (a cost) or 0 (none that shows at ``resolution``).

    >>> direction(1.22), direction(-1.7), direction(0.001), direction(0.001, 0.0)
    (1, -1, 0, 1)
    """
    if abs(points) < resolution or points == 0.0:
        return 0
    return 1 if points > 0 else -1


def change(points: float, resolution: float = SHOWN_POINTS) -> tuple[int, float]:
    """A change in points as its :func:`direction` and its size.

    >>> change(-1.7)
    (-1, 1.7)
    """
    return direction(points, resolution), abs(points)


def largest(values: Iterable[float]) -> int:
    """The index of the largest of ``values``, the first of equals.

    >>> largest([0.91, 0.93, 0.93])
    1
    """
    found = list(values)
    return max(range(len(found)), key=found.__getitem__)


def per_day(mean_s: float | None) -> float:
    """Events a day at a mean time ``mean_s`` between them; None, as the no-event end of a band: 0.

    >>> per_day(21_600.0), per_day(None)
    (4.0, 0.0)
    """
    return 0.0 if mean_s is None else DAY_S / mean_s


def goodput(effective: float, discard: float) -> float:
    """The share of wall time that is useful work kept (docs/model.md §6): effective time less the share of
    the work thrown away, effective × (1 − discard).

    >>> goodput(0.9, 0.25), goodput(0.9, 0.0)
    (0.675, 0.9)
    """
    return effective * (1.0 - discard)


def every_nth(intervals: Iterable[float]) -> list[int]:
    """For nested tiers' intervals, fastest first: how many of the tier below each one's checkpoint is
    (every 9th memory checkpoint), at least 1; the first tier, below nothing, 1.

    >>> every_nth([292.8, 2635.2, 15811.2])
    [1, 9, 6]
    """
    return [1] + [max(1, round(high / low)) for low, high in itertools.pairwise(intervals)]


def over_gpus(value: float, gpus: float) -> float:
    """``value`` shared over ``gpus`` GPUs: a job's whole rate per GPU, or a per-GPU MTBF as the job's (each
    of N GPUs failing at its own rate: the job fails N times as often)."""
    return value / gpus


def total_of(values: Iterable[float]) -> float:
    """The sum of ``values`` (a log's checkpoints over its levels)."""
    return math.fsum(values)


def quantiles(values: Any) -> dict[str, float]:
    """The 10th, 50th and 90th percentiles (linear interpolation) and the mean of a sample."""
    import numpy

    p10, p50, p90 = (float(v) for v in numpy.percentile(values, [10, 50, 90]))
    return {"p10": p10, "p50": p50, "p90": p90, "mean": float(numpy.mean(values))}


def wilson_interval(hits: int, total: int) -> tuple[float, float]:
    """The Wilson score 95 % interval of the proportion ``hits / total``."""
    z = Z95
    p = hits / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * (p * (1 - p) / total + z * z / (4 * total * total)) ** 0.5 / (1 + z * z / total)
    # At 0 or all hits one end is exactly 0 or 1 (the formula leaves rounding noise there).
    return 0.0 if hits == 0 else max(centre - half, 0.0), 1.0 if hits == total else min(centre + half, 1.0)


def tally(counts: Iterable[tuple[_K, int]]) -> dict[_K, int]:
    """The counts of each key summed, keys in the order first seen.

    >>> tally([("a", 2), ("b", 1), ("a", 3)])
    {'a': 5, 'b': 1}
    """
    summed: dict[_K, int] = {}
    for key, count in counts:
        summed[key] = summed.get(key, 0) + count
    return summed


def spread(values: Any, confidence: float = 0.95) -> tuple[float | None, float | None, tuple[float, float] | None]:
    """Mean, 90th percentile and Student's t interval of the mean of measured durations (a numpy array):
    None for what too few values leave (no value: all three; one value: the interval), the interval's
    low end kept at 0 or above."""
    import math

    import numpy

    if not values.size:
        return None, None, None
    mean = float(values.mean())
    p90 = float(numpy.percentile(values, 90))
    if values.size < 2:
        return mean, p90, None
    from scipy.special import stdtrit  # Student's t quantile, without scipy.stats' import

    half = float(stdtrit(values.size - 1, 0.5 + confidence / 2)) * float(values.std(ddof=1)) / math.sqrt(values.size)
    return mean, p90, (max(mean - half, 0.0), mean + half)
