"""Wall-clock dates for ``plan``: a deadline given as an ISO date or date and time, and the run's start.

A date alone (``2026-07-15``) is the start of that day; a time without an
offset is UTC; ``Z`` and ``+02:00`` are read as written. The deadline as a
duration is then the time from the start to it.

>>> span = deadline_span("2026-07-15", "2026-07-01T12:00Z")
>>> span.seconds, span.start, span.deadline
(1166400.0, '2026-07-01T12:00:00+00:00', '2026-07-15T00:00:00+00:00')
>>> deadline_span("58.5d", None) is None
True
"""

from __future__ import annotations

import datetime
import math
import re

from ckptcalc.errors import InputError
from ckptcalc.records import Record

#: What tells a date from a duration: four digits or more, a dash and two more digits or an ISO week
#: (``2026-W52``; a duration never starts so); a year past 9999 is then refused as a date, not misread
#: as a duration.
_DATE = re.compile(r"\s*\d{4,}-(?:\d{2}|W\d)")

#: Examples quoted by the errors.
_EXAMPLES = "e.g. 2026-07-15, 2026-07-15T12:00 (UTC) or 2026-07-15T12:00+02:00"


class Span(Record):
    """A deadline on the calendar: the start and the deadline as ISO strings, and the seconds between."""

    start: str
    deadline: str
    seconds: float


#: The years a timestamp may be given in (``--year``), as :mod:`datetime` takes them.
YEARS = (datetime.MINYEAR, datetime.MAXYEAR)


def check_year(year: int | None) -> int | None:
    """The year of timestamps that carry none, checked (``year``): a whole year from 1 to 9999, or None.

    >>> check_year(2026), check_year(None)
    (2026, None)
    """
    first, last = YEARS
    if year is not None and not (isinstance(year, int) and not isinstance(year, bool) and first <= year <= last):
        raise InputError(f"must be a year from {first} to {last}, got {year!r}", where="year")
    return year


def is_date(value: object) -> bool:
    """Whether ``value`` is written as a date (and so is not a duration)."""
    return isinstance(value, datetime.datetime) or (isinstance(value, str) and _DATE.match(value) is not None)


def instant(value: str | datetime.datetime, where: str) -> datetime.datetime:
    """``value`` as an aware moment (UTC when it carries no offset); errors name ``where``."""
    if isinstance(value, datetime.datetime):
        moment = value
    else:
        text = value.strip()
        try:
            if not _DATE.match(text):
                raise ValueError(text)
            moment = datetime.datetime.fromisoformat(text)
        except ValueError:
            raise InputError(f"{value!r} is not an ISO date or date and time ({_EXAMPLES})", where=where) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.UTC)


def now() -> datetime.datetime:
    """This moment in UTC, to the second (a start nobody gave)."""
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


def deadline_seconds(limit: float) -> float:
    """A deadline given as a duration, checked (``deadline``): a positive, finite number of seconds.

    >>> deadline_seconds(5_054_400.0)
    5054400.0
    """
    if not (math.isfinite(limit) and limit > 0):
        raise InputError(f"must be a positive duration, got {limit:g} s", where="deadline")
    return limit


def deadline_span(
    deadline: str | datetime.datetime | float,
    start: str | datetime.datetime | None,
    *,
    seconds: float | None = None,
) -> Span | None:
    """The deadline on the calendar: for a date, from ``start`` (now when None) to it; for a duration
    (``seconds``, already read) with a ``start``, from the start to the start plus it; None for a
    duration alone. ``where`` in the errors: ``deadline`` or ``start_at``."""
    if is_date(deadline):
        assert isinstance(deadline, str | datetime.datetime)
        end = instant(deadline, "deadline")
        begin = now() if start is None else instant(start, "start_at")
        span = (end - begin).total_seconds()
        if not span > 0:
            raise InputError(f"{end.isoformat()} is not after the start {begin.isoformat()}", where="deadline")
        return Span(start=begin.isoformat(), deadline=end.isoformat(), seconds=span)
    if start is None or seconds is None:
        return None
    begin = instant(start, "start_at")
    try:
        end = begin + datetime.timedelta(seconds=seconds)
    except OverflowError:
        raise InputError(f"{seconds:g} s after the start is past the year 9999", where="deadline") from None
    return Span(start=begin.isoformat(), deadline=end.isoformat(), seconds=seconds)
