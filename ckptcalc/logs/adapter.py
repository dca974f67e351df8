"""What a format adapter gives the reader: rows with the line they start on.

A format adapter is one module under ``ckptcalc/logs/`` with four names:

* ``NAME``: the format's name (what ``format=`` takes, e.g. ``"csv"``);
* ``GIVES``: ``"records"`` for a table of records whose fields the consumer interprets (CSV, JSON), or
  ``"events"`` for a framework's or scheduler's log turned into *raw run events* (below);
* ``detect(head) -> bool``: whether a log whose first non-blank lines are ``head`` (at most
  :data:`HEAD_LINES`, newlines kept) is in this format;
* ``rows(lines, context) -> Iterator[Row | Bad | Header]``: the log's rows, from its physical lines
  (the first is line 1, each ends with its newline, blank ones included). A row that cannot be read is
  a :class:`Bad` (the reader reports it, or counts and skips it); a problem after which nothing more
  can be read raises :class:`Broken`. ``context`` (:class:`Context`) carries what the lines do not say
  (the time zone of naive timestamps, the year) and counts what the adapter inferred.

Raw run events (``GIVES = "events"``) are dicts with a ``time`` (a :class:`Stamp`: already seconds since
1970-01-01 UTC, see :meth:`Context.stamp`), an ``event`` and its fields, in time order:

==================  ==========================================================================
``attempt_start``   a process (an attempt of the run) began: a start banner
``progress``        training reached ``step``
``checkpoint_start``  a save began (``step``, ``level``: ``storage`` unless said)
``checkpoint_end``  the save's stall ended (``step``, ``level``; ``async: True`` when a persist follows)
``persist_end``     an asynchronous save became durable (``step``)
``load_start``      a restore began (``step`` when known)
``load_end``        the restore ended (``step``: the checkpoint training resumes from)
``failure``         the log says the attempt failed (``cause``)
``run_end``         the log says the run finished
==================  ==========================================================================

:mod:`ckptcalc.logs.assembly` turns them into the canonical event log (``run_start`` ...
``run_end``, docs/commands/analyze.md): it starts the run, infers a failure where one attempt stops
and the next begins, ends the restart when training resumes, and counts what it inferred.

An adapter whose logs are a job's output (other programs' lines among its own) sets ``MIXED = True``:
the reader then also reads its lines with the pattern library (:func:`ckptcalc.logs.patterns.mixed`),
for the failures and saves its own patterns do not read.

The reader (:mod:`ckptcalc.logs.reader`) opens, decompresses and decodes the log, picks the adapter,
and does everything else: bad rows, filters, counts, ``FILE:LINE`` in messages.

A table's adapter may also give the reader, instead of a row a line, :class:`Columns`: a block of
plain rows split in C, which the reader's filters test a column at a time and a consumer with a
``bulk`` method takes a column at a time (a run's progress lines, an incident log's times). A row
a line would cost more than the ``csv.reader`` pass over the same file: this is how a 10⁷-line log
reads in less than twice that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

#: How many non-blank lines ``detect`` sees at most.
HEAD_LINES = 64

#: What ``Context.notes`` counts (the adapters' and the assembly's inferences); each is reported.
NOTES = (
    "inferred_failures",  # an attempt stopped and another began, with no failure in the log
    "rebuilt_times",  # lines whose time was rebuilt from per-iteration times
    "unmatched_starts",  # a save or restore began and the log never says it ended
    "unmatched_ends",  # a save ended that the log never says began
    "duplicates",  # the same event again (another rank's copy of a line)
    "naive_timestamps",  # timestamps without a zone, read in the given zone (UTC if none)
    "inferred_times",  # events whose line has no time: the nearest earlier stamp's (ckptcalc.logs.patterns)
    "coalesced_failures",  # reports of a failure already counted (other ranks, the launcher after the worker)
)


class Stamp(float):
    """A time already resolved to seconds since 1970-01-01 UTC (what framework adapters give).

    >>> Stamp(1.5) + 1
    2.5
    """

    __slots__ = ()


@dataclass
class Context:
    """What a log's lines do not say, and what the adapter inferred while reading them.

    ``tz``: the zone of naive timestamps (UTC when None); ``year``: the year of timestamps that carry
    none (absl's ``I0608 20:54:47``), given by the user; ``mtime``: the file's modification time
    (seconds since 1970), the year's fallback.
    ``patterns``: the user's line patterns (:class:`ckptcalc.logs.patterns.Pattern`), read before the
    library's in every framework log.
    ``notes`` counts inferences (keys from :data:`NOTES`); ``said`` records facts to report once, such
    as where the year came from.

    >>> from datetime import datetime
    >>> context = Context("x.log")
    >>> context.stamp(datetime(2025, 6, 25, 13, 20, 46)), context.notes["naive_timestamps"]
    (1750857646.0, 1)
    """

    name: str
    tz: tzinfo | None = None
    year: int | None = None
    mtime: float | None = None
    patterns: tuple[Any, ...] = ()
    notes: Counter[str] = field(default_factory=Counter)
    said: dict[str, str] = field(default_factory=dict)

    def stamp(self, moment: datetime) -> Stamp:
        """``moment`` as a :class:`Stamp`; a naive one is read in :attr:`tz` and counted."""
        if moment.tzinfo is None:
            self.notes["naive_timestamps"] += 1
            moment = moment.replace(tzinfo=self.tz or UTC)
        return Stamp(moment.timestamp())

    def the_year(self) -> int:
        """The year for timestamps without one: :attr:`year`, else the file's modification time's (said
        once in :attr:`said`), else the current year."""
        if self.year is not None:
            self.said.setdefault("year_from", "year")
            return self.year
        if self.mtime is not None:
            self.said.setdefault("year_from", "mtime")
            return datetime.fromtimestamp(self.mtime, self.tz or UTC).year
        self.said.setdefault("year_from", "today")
        return datetime.now(self.tz or UTC).year


@dataclass(frozen=True, slots=True)
class Row:
    """One record as the format gives it: a dict, or for JSON any value (the reader refuses non-objects)."""

    line: int
    value: Any
    source: str | None = field(default=None, repr=False)  # its file, when a reading spans several


@dataclass(frozen=True, slots=True)
class Bad:
    """A row that cannot be read, and why."""

    line: int
    message: str
    source: str | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class Header:
    """Field names a format declares before its rows (a CSV header)."""

    line: int
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Columns:
    """Consecutive rows of a table, one a line from ``line`` on, given by column: ``columns`` maps each
    field to its stripped cells, in row order. A consumer may take a whole column at once (a number a
    cell); :meth:`record` gives row ``index`` as the dict a :class:`Row` would hold."""

    line: int
    count: int
    columns: dict[str, list[str]]
    cells: list[str]  # every row's cells, row after row (unstripped)
    build: Callable[[list[str]], dict[str, str]] = field(repr=False)

    def record(self, index: int) -> dict[str, str]:
        width = len(self.columns)
        return self.build(self.cells[index * width : (index + 1) * width])


#: Largest step a log may number: a float holds every whole number up to 2^53 exactly.
MAX_STEP = 2**53


def step_number(digits: str) -> int:
    """The step a log writes as ``digits``; a step above :data:`MAX_STEP` (a row of 400 digits) raises
    ValueError, the adapters' bad row, rather than reaching arithmetic that cannot hold it.

    >>> step_number("0042")
    42
    >>> step_number("9" * 400)
    Traceback (most recent call last):
    ...
    ValueError: step 99999999999999999999... (400 digits) is above 2^53: not a step number
    """
    if len(digits.lstrip("0")) > 16 or int(digits) > MAX_STEP:
        raise ValueError(f"step {digits[:20]}{'...' if len(digits) > 20 else ''} ({len(digits)} digits) is above "
                         "2^53: not a step number")  # fmt: skip
    return int(digits)


class Broken(Exception):
    """A problem at ``line`` after which no more rows can be read (a broken JSON array, a bad CSV header)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
