"""Silent events in a run's event log: what ``silent_detected`` and ``rollback`` say (docs/model.md §16).

A ``silent_detected`` says when a silent event (a corruption, a loss spike) was noticed, and may say
when it began (``onset``, no later than the detection) and what it was (``cause``). A ``rollback``
answers the newest detection not yet answered: ``to`` is the time of the checkpoint it went back to
(the ``checkpoint_start`` of a checkpoint the log saw durable by then, or the run's start), never later
than the detection; ``skip`` is the work discarded beyond it (a duration in the log's time unit, seconds
for timestamps), 0 when not given.

>>> reading = Reading()
>>> reading.detected(50.0, 30.0, "spike", 4); reading.rollback(52.0, 0.0, 5.0, 0.0, lambda t, by: False)
>>> c = reading.columns()
>>> c.detect_s.tolist(), c.onset_s.tolist(), c.to_s.tolist(), c.skip_s.tolist(), c.causes
([50.0], [30.0], [0.0], [5.0], ('spike',))
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ckptcalc.logs.reader import MISSING, BadRecord, number_form, text_form
from ckptcalc.model.statistics import CONFIDENCE, DAY_S


@dataclass(frozen=True)
class SilentColumns:
    """The silent events read, as columns (numpy arrays) a detection a row: ``onset_s`` NaN where the log
    does not say; ``rollback_s``, ``to_s`` and ``skip_s`` NaN where no rollback answered it; ``cause`` the
    index of each one's cause in ``causes`` (-1: none given)."""

    detect_s: Any
    onset_s: Any
    cause: Any
    rollback_s: Any
    to_s: Any
    skip_s: Any
    causes: tuple[str, ...]


class Reading:
    """The silent events as the log is read. A line that breaks a rule raises :class:`BadRecord` before it
    changes anything (so ``--skip-bad`` skips it whole)."""

    def __init__(self) -> None:
        self.detect, self.onset, self.answered = array("d"), array("d"), array("d")
        self.to, self.skip = array("d"), array("d")
        self.cause = array("q")
        self.causes: dict[str, int] = {}
        self.pending: int | None = None  # the newest detection no rollback has answered yet
        self.pending_line = 0

    def __eq__(self, other: object) -> bool:
        """The same state: two readings of one log (a block at a time, or row by row) compare equal."""
        return isinstance(other, Reading) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def detected(self, t: float, onset: float | None, cause: Any, line: int) -> None:
        if onset is not None and onset > t:
            raise BadRecord(f"onset is later than the silent_detected (by {onset - t:g} s)")
        index = -1
        if cause is not MISSING:
            name = text_form(cause)
            index = self.causes.setdefault(name, len(self.causes))
        self.pending, self.pending_line = len(self.detect), line
        self.detect.append(t)
        self.onset.append(math.nan if onset is None else onset)
        self.cause.append(index)
        for column in (self.answered, self.to, self.skip):
            column.append(math.nan)

    def rollback(
        self, t: float, to: float | None, skip: float, run_start: float, durable: Callable[[float, float], bool]
    ) -> None:
        """A rollback at ``t`` to ``to``; ``durable(to, t)`` says whether a checkpoint started at ``to``
        was durable by ``t``."""
        if self.pending is None:
            raise BadRecord("rollback without a silent_detected before it")
        if to is None:
            raise BadRecord("a rollback names the checkpoint it went back to (to)")
        detection = self.detect[self.pending]
        if to > detection:
            raise BadRecord(
                f"rollback to a time after its silent_detected (line {self.pending_line}) by {to - detection:g} s"
            )
        if to != run_start and not durable(to, t):
            raise BadRecord(f"rollback to {to:g} s: no checkpoint durable by then started there, nor the run")
        if not (math.isfinite(skip) and skip >= 0):
            raise BadRecord(f"skip is a duration of at least 0, got {skip:g}")
        self.answered[self.pending] = t
        self.to[self.pending] = to
        self.skip[self.pending] = skip
        self.pending = None

    def columns(self) -> SilentColumns | None:
        """The silent events read (None when the log has no ``silent_detected``)."""
        import numpy

        if not self.detect:
            return None
        column = numpy.frombuffer
        return SilentColumns(column(self.detect, dtype=float), column(self.onset, dtype=float),
                             column(self.cause, dtype=numpy.int64), column(self.answered, dtype=float),
                             column(self.to, dtype=float), column(self.skip, dtype=float),
                             tuple(self.causes))  # fmt: skip


def duration(value: Any, factor: float | None) -> float:
    """A ``skip`` as given (a number in the log's unit, ``factor`` seconds each; seconds without one) in
    seconds; :class:`BadRecord` for anything else.

    >>> duration("2", 60.0), duration(MISSING, None)
    (120.0, 0.0)
    """
    if value is MISSING:
        return 0.0
    number = number_form(value)
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not (math.isfinite(number) and number >= 0):
        raise BadRecord(f"skip is a duration of at least 0 in the log's time unit, got {text_form(value)[:20]!r}")
    return float(number) * (1.0 if factor is None else factor)


def spans(columns: SilentColumns) -> tuple[Any, Any]:
    """The work each answered event lost, as spans: from the checkpoint rolled back to up to the
    detection, and the ``skip`` of work after the rollback (what the run discarded beyond it)."""
    import numpy

    answered = ~numpy.isnan(columns.rollback_s)
    to, detect = columns.to_s[answered], columns.detect_s[answered]
    back, skip = columns.rollback_s[answered], columns.skip_s[answered]
    return numpy.concatenate((to, back)), numpy.concatenate((detect, back + skip))


@dataclass(frozen=True)
class Measured:
    """What a log's silent events measured (docs/model.md §11.7): their count and rate per day of wall
    time (the exact χ² interval), the detection latency where the onset is known (None without one; its
    interval from Student's t with two or more), and the work each rollback lost (to the detection, plus
    its skip)."""

    events: int
    rollbacks: int
    per_day: float
    per_day_ci95: tuple[float, float]
    mtbf_s: float
    onsets: int
    detect_latency_s: float | None
    detect_latency_p90_s: float | None
    detect_latency_ci95: tuple[float, float] | None
    skip_s: float | None  # mean skip of the rollbacks; None without one
    lost_s: float  # the work the rollbacks lost, to the detection plus skip, summed
    lost_per_event_s: float | None


def measure(columns: SilentColumns, *, wall_s: float) -> Measured:
    """The counts, the rate with its interval, the detection latency and the work lost."""
    import numpy

    from ckptcalc.model.numeric import mtbf_interval
    from ckptcalc.model.statistics import spread

    n = int(columns.detect_s.size)
    low_m, high_m = mtbf_interval(n, wall_s)
    assert high_m is not None  # n ≥ 1: a log with no detection has no silent columns
    known = ~numpy.isnan(columns.onset_s)
    latency = (columns.detect_s - columns.onset_s)[known]
    mean, p90, interval = spread(latency, CONFIDENCE)
    answered = ~numpy.isnan(columns.rollback_s)
    rollbacks = int(answered.sum())
    lost = (columns.detect_s - columns.to_s + columns.skip_s)[answered]
    return Measured(
        events=n,
        rollbacks=rollbacks,
        per_day=n * DAY_S / wall_s,
        per_day_ci95=(DAY_S / high_m, DAY_S / low_m),
        mtbf_s=wall_s / n,
        onsets=int(latency.size),
        detect_latency_s=mean,
        detect_latency_p90_s=p90,
        detect_latency_ci95=interval,
        skip_s=float(columns.skip_s[answered].mean()) if rollbacks else None,
        lost_s=float(lost.sum()),
        lost_per_event_s=float(lost.mean()) if rollbacks else None,
    )


def kept_pieces(starts: Any, ends: Any, blocked: tuple[Any, Any]) -> tuple[Any, Any]:
    """The parts of the spans ``starts``–``ends`` outside ``blocked`` (sorted, disjoint spans: the
    stalls, restarts and work a failure already lost), as sorted, disjoint spans: what is lost to the
    silent events and counted nowhere else."""
    import numpy

    points = numpy.unique(numpy.concatenate((starts, ends, blocked[0], blocked[1])))
    if points.size < 2:
        return points[:0], points[:0]
    mid = (points[:-1] + points[1:]) / 2.0
    covered = (numpy.searchsorted(numpy.sort(starts), mid, side="right")
               - numpy.searchsorted(numpy.sort(ends), mid, side="right")) > 0  # fmt: skip
    k = numpy.searchsorted(blocked[0], mid, side="right") - 1
    inside = (k >= 0) & (mid < blocked[1][numpy.maximum(k, 0)]) if blocked[0].size else numpy.zeros_like(covered)
    keep = covered & ~inside
    return points[:-1][keep], points[1:][keep]
