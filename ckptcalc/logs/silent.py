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

from ckptcalc.logs.reader import MISSING, BadRecord, text_form


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
    number = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = math.nan
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not (math.isfinite(number) and number >= 0):
        raise BadRecord(f"skip is a duration of at least 0 in the log's time unit, got {text_form(value)[:20]!r}")
    return float(number) * (1.0 if factor is None else factor)
