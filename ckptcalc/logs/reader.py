"""The one reader of logs, for ``fit`` (incident logs) and ``analyze`` (a run's event log).

What the reader does, in order, for a path or ``"-"`` (standard input):

1. opens it: a regular file (FIFOs, devices and directories are refused before they are opened,
   see :mod:`ckptcalc.files`), or standard input, the only input capped at :data:`MAX_BYTES` (it
   might never end);
2. decompresses it, by the name's extension or the first bytes: ``.gz``, ``.xz``, ``.bz2`` with the
   standard library, ``.zst`` with the ``zstandard`` package (``pip install 'ckptcalc[logs]'``);
3. decodes it line by line as UTF-8 (a byte order mark is dropped), so records come as lines arrive
   and a large log is never held whole;
4. picks the format adapter: the one named, or the first in :data:`ADAPTERS` whose ``detect``
   accepts the first non-blank line;
5. hands each record (a dict) the adapter reads, with its line, to a *consumer* (fit's incidents,
   analyze's run events: they decide which fields and events matter), after the ``where`` filters;
6. reports a bad row as ``FILE:LINE: message``, or with ``skip_bad`` counts and skips it, and
   counts what was read, kept, ignored and filtered out.

Adding a format is one module and one registration: write ``ckptcalc/logs/<name>_format.py`` with
``NAME``, ``detect(first_line)`` and ``rows(lines)`` (the contract is in :mod:`ckptcalc.logs.adapter`),
and add it to :data:`ADAPTERS`. A table's adapter (``GIVES = "records"``) may also define
``records(lines, context)``: the same items with each row a plain ``(line, value)`` pair, which the
reader reads instead (building a :class:`~ckptcalc.logs.adapter.Row` per line costs about as much as
parsing the line). A line longer than :data:`MAX_LINE` is refused at its line number, whatever the source.

>>> class Times:
...     def fields(self, names, line): pass
...     def record(self, record, line): return record["kind"] != "heartbeat"
>>> counts = scan_text("time,kind\\n1,gpu\\n2,heartbeat\\n", Times(), name="x.csv")
>>> counts.format, counts.read, counts.kept, counts.ignored
('csv', 2, 1, 1)

Every problem raises :class:`~ckptcalc.errors.InputError` whose ``where`` is ``FILE:LINE`` for a bad
row, ``FILE`` for a whole-file problem, and the parameter's name (``time_unit``, ``where``...) for a
bad parameter.
"""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from types import ModuleType
from typing import IO, Any, Literal, Protocol, cast

from ckptcalc.errors import CkptError, InputError
from ckptcalc.inputs.units import DURATION_UNITS
from ckptcalc.logs import (
    absl_format,
    assembly,
    csv_format,
    fta_format,
    json_format,
    jsonl_format,
    megatron_format,
    patterns,
    patterns_format,
    sacct_format,
    torchelastic_format,
    torchtitan_format,
)
from ckptcalc.logs.adapter import HEAD_LINES, Bad, Broken, Columns, Context, Header, Row, Stamp
from ckptcalc.logs.patterns import linear_pattern

__all__ = ["linear_pattern"]  # its home is ckptcalc.logs.patterns; --where's conditions use it here

#: The format adapters, tried in this order on a log's first non-blank lines (csv, the fallback, last).
ADAPTERS: tuple[ModuleType, ...] = (
    torchtitan_format,  # before torchelastic: a torchtitan log holds the agent's lines too
    megatron_format,
    torchelastic_format,  # before absl: the agent's newer lines are in absl's form
    absl_format,
    json_format,
    jsonl_format,
    sacct_format,
    fta_format,
    patterns_format,  # any log a pattern of the library (or the user's) reads: before csv, the fallback
    csv_format,
)

#: Their names: what ``format`` takes.
FORMATS = tuple(sorted(adapter.NAME for adapter in ADAPTERS))

#: Largest input read from standard input, in bytes (characters for a text stream): it might never end.
#: Bigger inputs are refused, not truncated. Regular files are read whatever their size.
MAX_BYTES = 64 * 2**20

#: Longest line read, in bytes (characters for a text stream), newline included: a longer one is refused
#: at its line, so that input without line ends (``/dev/zero``) cannot take all memory.
MAX_LINE = 16 * 2**20

#: How many bad-row messages a reading keeps when ``skip_bad`` is on.
BAD_KEPT = 5

#: Name used for standard input in messages.
STDIN_NAME = "stdin"

TimeKind = Literal["timestamp", "number"]

_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_FINITE = float("inf")
_TIME_UNIT_HELP = "s, min, h or d"


# ---------------------------------------------------------------- values in records


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: Pass as :func:`get_path`'s default to tell an absent field from one holding null.
MISSING: Any = _Missing()
_RAISE: Any = _Missing()


def get_path(record: Mapping[str, Any], path: str, default: Any = _RAISE) -> Any:
    """The value at the dotted ``path`` of ``record`` (``"job.node.id"``).

    A key that itself contains dots (a CSV column called ``job.id``) wins over
    the nested reading. A numeric part indexes a JSON array (``"gpus.0"``); past
    the array's end it is absent. An absent field gives ``default``, and raises
    ``KeyError`` when no default is given.

    >>> get_path({"a": {"b": [10, 20]}}, "a.b.1")
    20
    >>> get_path({"a": {"b": [10, 20]}}, "a.b.2", None) is None
    True
    """
    if path in record:
        return record[path]
    value: Any = record
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isascii() and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            if default is _RAISE:
                raise KeyError(path)
            return default
    return value


def text_form(value: Any) -> str:
    """How a field's value is compared and grouped: strings as they are, anything else as JSON writes it.

    >>> text_form("gpu"), text_form(3), text_form(True), text_form(None)
    ('gpu', '3', 'true', 'null')
    """
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def number_form(value: Any) -> Any:
    """A field's value as a number where it is one: a number as it is, a numeric string as a float, any
    other string as NaN; anything else (a bool, null, a list) unchanged, for the caller to refuse.

    >>> number_form(" 2.5 "), number_form(3), number_form("x") != number_form("x"), number_form(True)
    (2.5, 3, True, True)
    """
    if not isinstance(value, str):
        return value
    try:
        return float(value.strip())
    except ValueError:
        return math.nan


@dataclass(frozen=True)
class Condition:
    """One filter on a record: ``path`` compared by ``op`` (``=``, ``!=``, ``~``, ``in``) with ``value``
    (the text, the regular expression, or the comma-separated list as written), and its test."""

    path: str
    op: Literal["=", "!=", "~", "in"]
    value: str
    test: Any = field(compare=False, repr=False)

    def meets(self, record: Mapping[str, Any]) -> bool:
        """Whether ``record`` passes: a record without the field meets no condition, ``!=`` included."""
        found = get_path(record, self.path, MISSING)
        return found is not MISSING and bool(self.test(text_form(found)))

    def rows(self, block: Columns) -> set[int]:
        """The rows of ``block`` (a table's, whose cells are text) that meet the condition."""
        column = block.columns.get(self.path)
        if column is None:
            return set()
        if self.op == "=" or self.op == "!=":
            equal = positions(column, self.value)
            return equal if self.op == "=" else set(range(block.count)) - equal
        if self.op == "in":
            return set().union(*(positions(column, value) for value in set(column) if self.test(value)))
        return {index for index, value in enumerate(column) if self.test(value)}


def positions(column: list[str], value: str) -> set[int]:
    """Where ``value`` is in ``column``: each found by ``list.index`` (a search in C), so a rare value costs
    little more than one pass over the column."""
    found: set[int] = set()
    if value not in column:
        return found
    index = -1
    try:
        while True:
            index = column.index(value, index + 1)
            found.add(index)
    except ValueError:
        return found


_WHERE_FORMS = "FIELD=VALUE, FIELD!=VALUE, FIELD~REGEX or FIELD in A,B"
_IN_RE = re.compile(r"(?P<path>[^=!~<>]+?)\s+in\s+(?P<values>.*)", re.DOTALL)
_OPERATOR_RE = re.compile(r"[=!~<>]+")


def parse_where(conditions: Sequence[str], *, where: str = "where") -> tuple[Condition, ...]:
    """Read filter conditions, each ``FIELD=VALUE``, ``FIELD!=VALUE``, ``FIELD~REGEX`` (a match
    anywhere in the value, by RE2 in linear time: :func:`linear_pattern`) or ``FIELD in A,B`` (one of the
    listed values, each stripped); errors name ``where`` (the parameter).

    >>> [(c.path, c.op, c.value) for c in parse_where(["kind=gpu", "event!=", "node~^n1", "kind in a, b"])]
    [('kind', '=', 'gpu'), ('event', '!=', ''), ('node', '~', '^n1'), ('kind', 'in', 'a, b')]
    """
    if isinstance(conditions, str):
        raise InputError(f"expected a list of conditions ({_WHERE_FORMS}), got one string", where=where)
    return tuple(_condition(text, where) for text in conditions)


def _condition(text: str, where: str) -> Condition:
    listed = _IN_RE.fullmatch(text.strip())
    if listed is not None:
        path = listed["path"].strip()
        values = frozenset(part.strip() for part in listed["values"].split(","))
        return Condition(path, "in", listed["values"].strip(), values.__contains__)
    operator = _OPERATOR_RE.search(text)
    if operator is None:
        raise InputError(f"cannot read {text!r}: expected {_WHERE_FORMS}, e.g. kind=hardware", where=where)
    path, rest = text[: operator.start()].strip(), text[operator.start() :]
    if not path:
        raise InputError(
            f"cannot read {text!r}: no field before {operator.group()!r}; expected {_WHERE_FORMS}", where=where
        )
    # The operator is what follows the field; the value may itself begin with a mark (kind=<none>).
    op = next((mark for mark in ("!=", "=", "~") if rest.startswith(mark)), None)
    if op is None or rest.startswith("=="):
        raise InputError(
            f"cannot read {text!r}: unknown operator {operator.group()!r}; expected {_WHERE_FORMS}", where=where
        )
    value = rest[len(op) :]
    if op == "~":
        return Condition(path, "~", value, linear_pattern(value, text, where).search)
    return Condition(path, "!=" if op == "!=" else "=", value, value.__ne__ if op == "!=" else value.__eq__)


def time_unit_seconds(time_unit: str) -> float:
    """Seconds in a time unit for numeric times (``s``, ``min``, ``h``, ``d`` and their spellings in units.py)."""
    factor = DURATION_UNITS.get(time_unit.strip())
    if factor is None:
        raise InputError(f"unknown time unit {time_unit!r}: expected {_TIME_UNIT_HELP}", where="time_unit")
    return factor


_OFFSET_RE = re.compile(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?")


def parse_tz(text: str) -> tzinfo:
    """A time zone: ``UTC``, an offset (``+02:00``, ``-0500``, ``UTC+1``) or an IANA name
    (``Europe/Paris``); errors name ``tz``.

    >>> parse_tz("+05:30").utcoffset(None), parse_tz("UTC").utcoffset(None)
    (datetime.timedelta(seconds=19800), datetime.timedelta(0))
    """
    name = text.strip()
    if name.upper() in ("UTC", "Z", "GMT"):
        return UTC
    offset = _OFFSET_RE.fullmatch(name)
    if offset is not None:
        sign, hours, minutes = offset.group(1, 2, 3)
        delta = timedelta(hours=int(hours), minutes=int(minutes or 0))
        if delta >= timedelta(hours=24):
            raise InputError(f"offset {text!r} is not under 24 hours", where="tz")
        return timezone(-delta if sign == "-" else delta)
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InputError(
            f"unknown time zone {text!r}: expected UTC, an offset such as +02:00, or a name such as Europe/Paris",
            where="tz",
        ) from None


def parse_time(
    value: Any, *, time_unit: str | None = None, tz: tzinfo | None = None, time_format: str | None = None
) -> tuple[float, TimeKind, bool]:
    """Read one time value: an ISO-8601 timestamp (or one in the ``strptime`` ``time_format``), or a
    number in ``time_unit``.

    Returns the time in seconds (since 1970-01-01 UTC for a timestamp, since
    the log's zero for a number), which form it was, and whether it was a
    timestamp without an offset (read in ``tz``, UTC when None). Raises ``ValueError`` with a
    short message for a value that is not a time, and :class:`InputError`
    (``where="time_unit"``) for a number when no unit is given.

    >>> parse_time("2024-05-01T14:00:00+02:00")
    (1714564800.0, 'timestamp', False)
    >>> parse_time("1.5", time_unit="h")
    (5400.0, 'number', False)
    >>> parse_time("6/21/2005 10:54", time_format="%m/%d/%Y %H:%M", tz=parse_tz("-06:00"))
    (1119372840.0, 'timestamp', True)
    """
    number: float | None = None
    if type(value) is Stamp:
        return float(value), "timestamp", False
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{text_form(value)} is not a time")
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            raise ValueError(f"time {value} is too large") from None
    elif isinstance(value, str):
        text = value.strip()
        if not text:
            raise ValueError("empty time")
        if time_format is not None:
            return _timestamp(text, tz, time_format)
        if _NUMBER_RE.fullmatch(text):
            number = float(text)
        else:
            return _timestamp(text, tz, None)
    else:
        raise ValueError(f"time must be a timestamp or a number, not {text_form(value)[:40]}")
    if not math.isfinite(number):
        raise ValueError(f"time {text_form(value)[:40]} is not a finite number")
    if time_unit is None:
        raise InputError(
            f"numeric time {text_form(value)[:40]} needs a unit: pass {{time_unit}} ({_TIME_UNIT_HELP})",
            where="time_unit",
        )
    seconds = number * time_unit_seconds(time_unit)
    if not math.isfinite(seconds):
        raise ValueError(f"time {text_form(value)[:40]} is too large")
    return seconds, "number", False


def _timestamp(text: str, tz: tzinfo | None, time_format: str | None) -> tuple[float, TimeKind, bool]:
    try:
        moment = datetime.strptime(text, time_format) if time_format else datetime.fromisoformat(text)
    except ValueError:
        expected = (
            f"a time in the format {time_format!r}"
            if time_format
            else "an ISO-8601 timestamp such as 2024-05-01T12:00:00Z or a number"
        )
        raise ValueError(f"cannot read time {text[:40]!r}: expected {expected}") from None
    naive = moment.tzinfo is None
    if naive:
        moment = moment.replace(tzinfo=tz or UTC)
    try:
        return (moment - _EPOCH).total_seconds(), "timestamp", naive
    except OverflowError:  # a year 1 timestamp read in a zone east of UTC
        raise ValueError(f"time {text[:40]!r} is out of range") from None


# ---------------------------------------------------------------- what a consumer says


class BadRecord(Exception):
    """Raised by a consumer for a record it cannot use: an error at its line, or with ``skip_bad`` a count."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class FatalRecord(Exception):
    """Raised by a consumer for a record that stops the reading even with ``skip_bad``; the message
    may hold ``{name}`` placeholders (see :class:`~ckptcalc.errors.CkptError`)."""

    def __init__(self, template: str) -> None:
        super().__init__(template)
        self.template = template


class Consumer(Protocol):
    """What fit and analyze give the reader: they decide what a record means.

    A consumer may also have ``bulk(block: Columns, each: Callable[[int], None]) -> int``: it takes
    a block of a table's rows (when no filter is set) a column at a time, hands each row it does not
    take itself to ``each`` (which reads it as :meth:`record` would be given it, bad rows included),
    and returns how many it took, all kept. Taking a row in bulk must leave the consumer as
    :meth:`record` would have (tests/test_columns.py reads logs both ways).
    """

    def fields(self, names: Sequence[str], line: int) -> None:
        """The field names known before the records: a CSV header, or the first record's keys."""

    def record(self, record: dict[str, Any], line: int) -> bool:
        """Take one record that passed the filters: True if kept, False if ignored (an event of no interest).
        Raises :class:`BadRecord` or :class:`FatalRecord`."""


class Clock:
    """Reads a log's times one by one and holds them to one form: all timestamps, or all numbers in
    ``time_unit`` (seconds from the log's own zero).

    >>> clock = Clock("min")
    >>> clock.seconds("2", line=3), clock.kind
    (120.0, 'number')
    """

    def __init__(self, time_unit: str | None, *, tz: tzinfo | None = None, time_format: str | None = None) -> None:
        self.time_unit = time_unit
        self.tz, self.time_format = tz, time_format
        self.factor = None if time_unit is None else time_unit_seconds(time_unit)
        self.kind: TimeKind | None = None
        self.first_line = 0
        self.naive = 0  # timestamps without an offset, read as UTC
        self._fast: float | None = None  # the factor, once the log's times are known to be numbers

    def seconds(self, value: Any, *, line: int) -> float:
        """``value`` in seconds; raises :class:`BadRecord` (or :class:`FatalRecord` for a number without a
        unit) for a value that is not a time of the log's form."""
        factor = self._fast
        if factor is not None:
            # The common case, a number like the ones before it, without parse_time's generality:
            # float() reads what parse_time's pattern does, but for "1_000" and non-finite values.
            given = type(value)
            if (given is str and "_" not in value) or given is float or given is int:
                try:
                    seconds = float(value) * factor
                except (ValueError, OverflowError):
                    pass
                else:
                    if -_FINITE < seconds < _FINITE:
                        return seconds
        try:
            seconds, kind, naive = parse_time(value, time_unit=self.time_unit, tz=self.tz, time_format=self.time_format)
        except InputError as error:  # a number, and no unit to read it in (before ValueError: a subclass)
            if self.kind == "timestamp":
                raise BadRecord(self._mixed("number")) from None
            raise FatalRecord(error.template) from None
        except ValueError as error:
            raise BadRecord(str(error)) from None
        if self.kind is None:
            self.kind, self.first_line = kind, line
            if kind == "number":
                self._fast = self.factor
        elif kind != self.kind:
            raise BadRecord(self._mixed(kind))
        self.naive += naive
        return seconds

    def many(self, values: list[str]) -> list[float] | None:
        """The seconds of ``values`` at once, when the log's times are known to be numbers and every one
        of these is a plain finite number (what :meth:`seconds` reads without ``parse_time``); None
        when any must be read one by one."""
        factor = self._fast
        if factor is None or "_" in "".join(values):
            return None
        try:
            seconds = list(map(float, values))
        except ValueError:
            return None
        if factor != 1.0:
            seconds = [value * factor for value in seconds]
        total = sum(seconds)  # not finite when any is inf or nan (or the sum overflows: then one by one)
        return seconds if -_FINITE < total < _FINITE else None

    def _mixed(self, kind: TimeKind) -> str:
        one = {"timestamp": "an ISO-8601 timestamp", "number": "a number"}
        many = {"timestamp": "ISO-8601 timestamps", "number": "numbers"}
        return f"{one[kind]}, but line {self.first_line} has {many[self.kind or kind]}; a log uses one form"


@dataclass(frozen=True)
class Counts:
    """What one reading did: ``read = kept + ignored + filtered + skipped_bad``; ``bad`` holds the first
    few skipped rows' messages, each starting with ``FILE:LINE``."""

    source: str
    format: str
    read: int
    kept: int
    ignored: int
    filtered: int
    skipped_bad: int
    bad: tuple[str, ...]
    notes: Mapping[str, int] = field(default_factory=dict)  # inferences, keys from adapter.NOTES (non-zero)
    said: Mapping[str, str] = field(default_factory=dict)  # facts about the reading (where the year came from)
    files: int = 1


@dataclass
class _Tally:
    name: str
    skip_bad: bool
    read: int = 0
    kept: int = 0
    ignored: int = 0
    filtered: int = 0
    skipped: int = 0
    bad: list[str] = field(default_factory=list)

    def reject(self, line: int, message: str, source: str | None = None) -> None:
        where = f"{source or self.name}:{line}"
        if not self.skip_bad:
            raise InputError(message, where=where)
        self.skipped += 1
        if len(self.bad) < BAD_KEPT:
            self.bad.append(f"{where}: {message}")


# ---------------------------------------------------------------- reading


#: What ``format`` takes to detect the format (the same as None).
AUTO = "auto"


def check_format(format: str | None) -> str | None:
    """The adapter's name ``format`` asks for (None: detect it, as ``"auto"`` does); the error for a
    format no adapter reads names ``format``."""
    if format is None or format == AUTO:
        return None
    if format not in FORMATS:
        raise InputError(f"unknown format {format!r}: expected {AUTO} or {', '.join(FORMATS)}", where="format")
    return format


# A line that can only open JSON: an object, or an array whose first element starts (not "[2025-06-25 ...").
_JSON_OPENING = re.compile(r"\s*(?:\{|\[\s*(?:[{\[\]\"]|$))")


def detect_format(head: str | Sequence[str], user: Sequence[Any] = ()) -> str | None:
    """The name of the first adapter that recognises a log's first non-blank lines (or line), or None.

    >>> detect_format('  {"time": 1}'), detect_format("[{"), detect_format("time,kind"), detect_format("<html>")
    ('jsonl', 'json', 'csv', None)
    """
    lines = [head] if isinstance(head, str) else list(head)
    return next((name for name, accepted in considered(lines, user) if accepted), None)


def considered(lines: Sequence[str], user: Sequence[Any] = ()) -> Iterator[tuple[str, bool]]:
    """Each adapter's name and whether it recognises ``lines``, in the order tried, up to the first that
    does (``user``: the user's patterns, which the pattern library's format reads too)."""
    for adapter in ADAPTERS:
        if adapter is patterns_format:
            # With the user's patterns, they read what no framework's adapter does, whether or not the
            # first lines hold one of their lines (but a JSON document or a CSV header).
            accepted = patterns_format.detect(lines, user) or (bool(user) and not patterns_format.table(lines))
        else:
            accepted = adapter.detect(lines)
        yield adapter.NAME, bool(accepted)
        if accepted:
            return


def scan(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    consumer: Consumer,
    *,
    stdin: Any = None,
    format: str | None = None,
    where: Sequence[str] = (),
    where_any: Sequence[str] = (),
    required: Sequence[str] = (),
    skip_bad: bool = False,
    tz: tzinfo | None = None,
    year: int | None = None,
    patterns: Sequence[Any] = (),
    explain: Callable[[str], None] | None = None,
) -> Counts:
    """Read the log at ``source`` (``"-"``: ``stdin``), or the logs of one run at several paths, into
    ``consumer``.

    ``format`` names the adapter (detected per file when None); ``where`` holds conditions (see
    :func:`parse_where`) all of which a record must meet to reach the consumer, and ``where_any``
    conditions at least one of which it must meet when there are any (values compared as text, see
    :func:`text_form`; a record without the field fails); ``required`` are fields a header must
    declare; ``skip_bad`` counts and skips bad rows instead of raising at the first. ``tz`` and ``year``
    complete the timestamps of framework logs (see :class:`~ckptcalc.logs.adapter.Context`).
    ``patterns`` are the user's line patterns (:func:`ckptcalc.logs.patterns.load`), read in every
    framework log before the library's; ``explain`` is given a line saying which formats detection
    considered, for each file.

    A log in which nothing is recognised is an error that says what was tried (:func:`_silent`).

    Several framework logs are one run read in time order (:func:`merged`); several tables are read
    one after the other.
    """
    format = check_format(format)
    conditions = _Filters(parse_where(where), parse_where(where_any, where="where_any"))
    sources = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if not sources:
        raise InputError("no log to read", where="logs")
    paths = [os.fspath(one) for one in sources]
    if paths.count("-") > 1:
        raise InputError("standard input can be read once", where="-")
    with ExitStack() as stack:
        files = []
        for path in paths:
            name, lines = stack.enter_context(open_lines(path, stdin=stdin))
            context = Context(name, tz=tz, year=year, mtime=_mtime(path), patterns=tuple(patterns))
            files.append(_File(name, lines, context))
        return _scan(files, consumer, format=format, conditions=conditions, required=required, skip_bad=skip_bad,
                     explain=explain)  # fmt: skip


def scan_text(
    text: str | Iterable[str],
    consumer: Consumer,
    *,
    name: str,
    format: str | None = None,
    where: Sequence[str] = (),
    where_any: Sequence[str] = (),
    required: Sequence[str] = (),
    skip_bad: bool = False,
    tz: tzinfo | None = None,
    year: int | None = None,
    patterns: Sequence[Any] = (),
    explain: Callable[[str], None] | None = None,
) -> Counts:
    """:func:`scan` on a log's text, or its lines (with or without their newlines); ``name`` labels it."""
    format = check_format(format)
    conditions = _Filters(parse_where(where), parse_where(where_any, where="where_any"))
    texts = iter([text]) if isinstance(text, str) else (line if line.endswith("\n") else line + "\n" for line in text)
    files = [_File(name, Lines(texts), Context(name, tz=tz, year=year, patterns=tuple(patterns)))]
    return _scan(files, consumer, format=format, conditions=conditions, required=required, skip_bad=skip_bad,
                 explain=explain)  # fmt: skip


def _mtime(path: str) -> float | None:
    if path == "-":
        return None
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


#: Lines given again joined into one block at most (blank runs read again stay in bounded memory).
_AGAIN = 2**16


class Lines:
    """A text input's lines (each with its newline; an input's last line may lack it), read one by one,
    or from wherever that reading stopped, a block of whole lines at a time (:meth:`blocks`, what a
    table's adapter splits fastest).

    ``texts`` gives the text in pieces of whole lines. Iterating goes through the lines in C, with no
    Python step per line (a generator step per line cost as much as a ``csv.reader`` pass).

    >>> lines = Lines(iter(["a\\nb\\n", "c\\nd"]))
    >>> next(lines), list(lines.blocks())
    ('a\\n', ['b\\n', 'c\\nd'])
    """

    def __init__(self, texts: Iterator[str]) -> None:
        self.count = 0  # the lines given so far (counted a block at a time)
        self._texts = self._counted(texts)
        self._current = io.StringIO()
        self._head: Iterator[str] = iter(())
        self._lines: Iterator[str] = itertools.chain.from_iterable(self._streams())
        self._all = self._lines

    def _counted(self, texts: Iterator[str]) -> Iterator[str]:
        for text in texts:
            self.count += text.count("\n") + (not text.endswith("\n"))
            yield text

    def _streams(self) -> Iterator[io.StringIO]:
        for text in self._texts:
            # Split on "\n" only, as a file is read: JSON strings may hold other line separators (U+2028) raw.
            self._current = io.StringIO(text, newline="\n")
            yield self._current

    def __iter__(self) -> Iterator[str]:
        return self._all

    def __next__(self) -> str:
        return next(self._all)

    def after_blanks(self) -> tuple[int, str | None]:
        """Read past the lines that are only a newline, counting them, and the next line (None at the
        end). The run is skipped a block at a time in C: a line at a time took 0.3 µs a line."""
        count = 0
        while True:
            start = self._current.tell()
            rest = self._current.read()
            kept = rest.lstrip("\n")
            count += len(rest) - len(kept)
            self._current.seek(start + len(rest) - len(kept))
            line = next(self._all, None)
            if line != "\n":
                return count, line
            count += 1

    def unread(self, lines: Iterable[str]) -> None:
        """Give ``lines`` (the ones last read) again before the rest."""
        self._head = iter(lines)
        self._all = itertools.chain(self._head, self._lines)

    def blocks(self) -> Iterator[str]:
        """The text not read yet, a block of whole lines at a time; reading by lines ends here."""
        while True:  # the lines given again, a bounded number at a time (they may be a long run of blanks)
            again = "".join(itertools.islice(self._head, _AGAIN))
            if not again:
                break
            yield again
        rest = self._current.read()
        if rest:
            yield rest
        yield from self._texts


@dataclass
class _File:
    """One log being read: its name, its lines, what its lines do not say, and its adapter once known."""

    name: str
    lines: Lines
    context: Context
    adapter: ModuleType | None = None
    head: list[str] = field(default_factory=list)  # the first non-blank lines, looked at to choose the format
    first: int = 0  # the first one's number
    tried: list[tuple[str, bool]] = field(default_factory=list)  # what detection considered (empty: named)

    def items(self) -> Iterator[Row | Bad | Header]:
        """The adapter's raw events, and, in a framework's log, those the pattern library (and the user's
        patterns) find in lines the adapter does not read (:func:`ckptcalc.logs.patterns.mixed`)."""
        assert self.adapter is not None
        if not getattr(self.adapter, "MIXED", False):
            return cast(Iterator[Row | Bad | Header], self.adapter.rows(self.lines, self.context))
        matcher = patterns.Matcher(self.context, host=self.adapter.NAME)
        found = self.adapter.rows(patterns.tapped(self.lines, matcher), self.context)
        return patterns.mixed(found, matcher)

    def records(self) -> Iterator[Row | Bad | Header | tuple[int, Any]]:
        """The rows of a table: each a ``(line, value)`` pair where the adapter gives them so (its
        ``records``: a Row per line costs as much as reading the line), else its :class:`Row`."""
        assert self.adapter is not None
        fast = getattr(self.adapter, "records", None)
        if fast is None:
            return self.items()
        return cast(Iterator[Row | Bad | Header | tuple[int, Any]], fast(self.lines, self.context))


def _choose(file: _File, format: str | None, explain: Callable[[str], None] | None = None) -> None:
    """Detect (or take) the file's adapter, keeping the lines looked at to be read again.

    A run of empty lines is kept as one line and its count (and skipped a block at a time, see
    :meth:`Lines.after_blanks`), so that a log of 10^9 newlines takes no more memory than one of ten."""
    head: list[tuple[str, int]] = []  # the lines looked at, each with how many times it came in a row
    shown: list[str] = []
    number = first = 0  # lines looked at; the first non-blank one's number
    while True:
        blanks, line = file.lines.after_blanks()
        if blanks:
            head.append(("\n", blanks))
            number += blanks
        if line is None:
            break
        head.append((line, 1))
        number += 1
        if not line.strip():
            continue
        shown.append(line)
        first = first or number
        # A named format, a JSON opening or a plain CSV header is enough: a stream flows at once.
        # (A header of one column is not: a text log's first line may be one word, and the pattern library's
        # lines come after it; nor is anything when the user's patterns may read the log.)
        decisive = (
            len(shown) == 1
            and not file.context.patterns
            and (
                _JSON_OPENING.match(line) is not None
                or (csv_format.plain_header(line) and ("," in line or "\t" in line))
            )
        )
        if format is not None or decisive or len(shown) >= HEAD_LINES:
            break
    if not shown:
        raise InputError("empty log: no events", where=file.name)
    file.head, file.first = shown, first
    chosen = format
    if chosen is None:
        file.tried = list(considered(shown, file.context.patterns))
        chosen = next((name for name, accepted in file.tried if accepted), None)
    if explain is not None:
        explain(_explained(file, chosen))
    if chosen is None:
        raise InputError(
            f"cannot tell the format from {shown[0].strip()[:20]!r}: name it with {{format}} ({', '.join(FORMATS)})",
            where=f"{file.name}:{first}",
        )
    file.adapter = next(adapter for adapter in ADAPTERS if chosen == adapter.NAME)
    file.lines.unread(itertools.chain.from_iterable(itertools.repeat(line, count) for line, count in head))


_SEPARATED = re.compile(r"[,\t;|]")


def _explained(file: _File, chosen: str | None) -> str:
    """What detection considered for ``file``, in one line (``--verbose``)."""
    head = f"{file.name}: {len(file.head)} first lines looked at"
    if not file.tried:
        return f"{head}; format {chosen} as named"
    verdicts = ", ".join(f"{name} {'yes' if accepted else 'no'}" for name, accepted in file.tried)
    found = patterns.head_matches(file.head, file.context.patterns)
    matched = (
        "; patterns matched there: " + ", ".join(f"{name} {count}" for name, count in found.items()) if found else ""
    )
    return f"{head}; format auto tried {verdicts}: {chosen or 'none'}{matched}"


def _silent(files: Sequence[_File], problem: str | None = None) -> InputError:
    """The error for logs in which nothing is recognised: the lines read, the formats tried, the nearest
    candidate, and the way out (``--patterns``)."""
    file = files[0]
    assert file.adapter is not None
    for one in files:  # the rest of the lines, counted
        try:
            for _ in one.lines.blocks():
                pass
        except CkptError:
            pass
    lines = sum(one.lines.count for one in files)
    name = file.adapter.NAME
    if file.tried:
        others = [tried for tried, accepted in file.tried if not accepted]
        how = (
            f"read as {name}, the first format that took its first lines (not {', '.join(others)})"
            if others
            else (f"read as {name}, which took its first lines")
        )
    else:
        how = f"read as {name}, as named"
    near = patterns.nearest(file.head, file.first, file.context.patterns)
    known = f"as a table: {problem}" if problem else "no line is an event it knows"
    return InputError(
        f"nothing recognised in {lines:,} line{'s' * (lines != 1)}: {how}, but {known}; "
        f"nearest: {near}; describe the log's lines with {{patterns}} FILE.toml (docs/formats/patterns.md)",
        where=", ".join(one.name for one in files),
    )


def merged(files: Sequence[_File]) -> Iterator[Row | Bad | Header]:
    """The raw events of several logs of one run, in time order, each row naming its file.

    A file whose first event comes after every other file read so far has ended begins a new attempt;
    one that begins while another is still going is a parallel rank: of its events only failures are
    kept (the first file's copies of the rest stand for it) and the rest are counted as duplicates.
    Bad rows come out as they are met.
    """
    import heapq

    queue: list[tuple[float, int, int, Row]] = []
    iterators = [file.items() for file in files]
    seen = [False] * len(files)
    parallel = [False] * len(files)
    order = itertools.count()
    pending_bad: list[Row | Bad | Header] = []

    def advance(index: int) -> None:
        for item in iterators[index]:
            if isinstance(item, Row):
                queue_row = Row(item.line, item.value, files[index].name)
                heapq.heappush(queue, (float(item.value["time"]), next(order), index, queue_row))
                return
            pending_bad.append(Bad(item.line, item.message, files[index].name) if isinstance(item, Bad) else item)

    for index in range(len(files)):
        advance(index)
    started = False
    while queue or pending_bad:
        yield from pending_bad
        pending_bad.clear()
        if not queue:
            break
        _, _, index, row = heapq.heappop(queue)
        if not seen[index]:
            seen[index] = True
            others = any(seen[other] for _, _, other, _ in queue if other != index)
            if others:
                parallel[index] = True
            elif started and row.value["event"] != assembly.NEW_ATTEMPT:
                yield Row(row.line, {"time": row.value["time"], "event": assembly.NEW_ATTEMPT}, row.source)
            started = True
        if parallel[index] and row.value["event"] != "failure":
            files[index].context.notes["duplicates"] += 1
        else:
            yield row
        advance(index)


def _scan(
    files: Sequence[_File],
    consumer: Consumer,
    *,
    format: str | None,
    conditions: _Filters,
    required: Sequence[str],
    skip_bad: bool,
    explain: Callable[[str], None] | None = None,
) -> Counts:
    for file in files:
        _choose(file, format, explain)
    gives = {file.adapter.GIVES for file in files if file.adapter is not None}
    if len(gives) > 1:
        raise InputError("framework logs and event tables cannot be read together", where=files[-1].name)
    name = ", ".join(file.name for file in files)
    tally = _Tally(files[0].name, skip_bad)
    if gives == {"events"}:
        context = files[0].context
        raw = merged(files) if len(files) > 1 else files[0].items()
        _read(assembly.assemble(raw, context), consumer, tally, conditions, required)
    else:
        for file in files:
            tally.name = file.name
            try:
                _read(file.records(), consumer, tally, conditions, required)
            except InputError as error:
                # Text taken for a CSV of one column (a log no adapter and no pattern reads), refused at its
                # "header": say what was tried, with the header's problem.
                header = tally.read == 0 and not _SEPARATED.search(file.head[0])
                if file.adapter is csv_format and file.tried and header:
                    raise _silent(files, error.template) from None
                raise
    # Nothing recognised: no event in a framework's log, or a table's rows read and every one ignored
    # (none filtered out or skipped as bad, which would say why; a table of no rows is its consumer's to word).
    if gives == {"events"}:
        nothing = tally.read == 0
    else:
        nothing = tally.read > 0 and tally.kept == tally.filtered == tally.skipped == 0
    if nothing:
        raise _silent(files)
    notes: dict[str, int] = {}
    said: dict[str, str] = {}
    for file in files:
        for key, count in file.context.notes.items():
            if count:
                notes[key] = notes.get(key, 0) + count
        said.update(file.context.said)
    formats = sorted({file.adapter.NAME for file in files if file.adapter is not None})
    return Counts(name, ", ".join(formats), tally.read, tally.kept, tally.ignored, tally.filtered, tally.skipped,
                  tuple(tally.bad), notes, said, len(files))  # fmt: skip


def _read(
    items: Iterable[Row | Bad | Header | Columns | tuple[int, Any]],
    consumer: Consumer,
    tally: _Tally,
    conditions: _Filters,
    required: Sequence[str],
    named: bool = False,
) -> None:
    """Hand each record to ``consumer``, counting into ``tally``. This is the loop every line of every
    log goes through: the counts live in locals until the end, and a ``(line, value)`` pair (what a
    table's adapter gives) is taken apart without any attribute lookup. :class:`Columns` go to the
    consumer's ``bulk`` when it has one (and no filter is set), else their rows that pass the filters
    (tested a column at a time) come through this same loop."""
    line, source = 0, None
    take = consumer.record
    bulk = getattr(consumer, "bulk", None)
    read = kept = ignored = filtered = 0
    filtering = bool(conditions.every or conditions.some)
    try:
        for item in items:
            if type(item) is tuple:
                line, record = item
            elif type(item) is Columns:
                if not named:
                    named = True
                    consumer.fields(tuple(item.columns), item.line)
                block = item
                if filtering:
                    passing = conditions.rows(block)
                    read += block.count - len(passing)
                    filtered += block.count - len(passing)
                    rows = ((block.line + index, block.record(index)) for index in passing)
                    _read(rows, consumer, tally, _NO_FILTERS, required, named=True)
                elif bulk is not None:

                    def each(index: int, block: Columns = block) -> None:
                        _read([(block.line + index, block.record(index))], consumer, tally, _NO_FILTERS, required, True)

                    took = bulk(block, each)
                    read += took
                    kept += took
                else:
                    rows = ((block.line + index, block.record(index)) for index in range(block.count))
                    _read(rows, consumer, tally, _NO_FILTERS, required, named=True)
                continue
            elif type(item) is Row:
                line, record, source = item.line, item.value, item.source
            elif isinstance(item, Header):
                line, source = item.line, None
                missing = [wanted for wanted in required if wanted not in item.fields]
                if missing:
                    raise InputError(f"no column {missing[0]!r} in the header", where=f"{tally.name}:{line}")
                named = True
                consumer.fields(item.fields, line)
                continue
            else:
                bad = cast(Bad, item)
                line, source = bad.line, bad.source
                read += 1
                tally.reject(line, bad.message, source)
                continue
            read += 1
            if type(record) is not dict and not isinstance(record, dict):
                shown = json.dumps(record, ensure_ascii=False)
                tally.reject(line, f"expected a JSON object, got {shown[:40]}", source)
                continue
            try:
                if not named:
                    named = True
                    consumer.fields(tuple(record), line)
                if filtering and not conditions.passes(record):
                    filtered += 1
                elif take(record, line):
                    kept += 1
                else:
                    ignored += 1
            except BadRecord as bad_record:
                tally.reject(line, bad_record.message, source)
    except Broken as broken:
        raise InputError(broken.message, where=f"{tally.name}:{broken.line}") from None
    except FatalRecord as fatal:
        raise InputError(fatal.template, where=f"{source or tally.name}:{line}") from None
    finally:
        tally.read += read
        tally.kept += kept
        tally.ignored += ignored
        tally.filtered += filtered


@dataclass(frozen=True)
class _Filters:
    """The ``where`` conditions (all must hold) and the ``where_any`` ones (one must, when any are given)."""

    every: tuple[Condition, ...]
    some: tuple[Condition, ...]

    def passes(self, record: Mapping[str, Any]) -> bool:
        if not all(condition.meets(record) for condition in self.every):
            return False
        return not self.some or any(condition.meets(record) for condition in self.some)

    def rows(self, block: Columns) -> list[int]:
        """The rows of ``block`` that pass, in order: each condition tested on its whole column (a
        table's record is flat text, so a field that is not a column is absent and fails)."""
        every: set[int] | None = None
        for condition in self.every:
            found = condition.rows(block)
            every = found if every is None else every & found
        if every is None:
            every = set(range(block.count))
        if self.some:
            every &= set().union(*(condition.rows(block) for condition in self.some))
        return sorted(every)


_NO_FILTERS = _Filters((), ())


# ---------------------------------------------------------------- opening, decompressing, decoding


def _too_long() -> str:
    return f"a line longer than {MAX_LINE // 2**20} MiB: not a log of one record a line"


def _too_big() -> str:
    return f"larger than the {MAX_BYTES // 2**20} MiB standard input may hold; split it or filter it first"


@contextmanager
def open_lines(source: str | os.PathLike[str], *, stdin: Any = None) -> Iterator[tuple[str, Lines]]:
    """The name of ``source`` in messages and its decoded lines, read as they are asked for."""
    from ckptcalc.files import open_regular

    path = os.fspath(source)
    if path == "-":
        if stdin is None:
            raise InputError("reading standard input needs a stream", where="-")
        binary = stdin if isinstance(stdin, io.RawIOBase | io.BufferedIOBase) else getattr(stdin, "buffer", None)
        if binary is None:  # a text stream (a StringIO): already decoded, so neither compressed nor bytes
            yield STDIN_NAME, Lines(_text_lines(stdin, STDIN_NAME))
            return
        yield STDIN_NAME, _decoded(_Source(binary, STDIN_NAME, MAX_BYTES), STDIN_NAME, "")
        return
    try:
        stream = open_regular(path, label=path, noun="log file", hint=" (pipe data through stdin with -)")
    except CkptError as error:
        raise InputError(error.template, where=error.where) from None
    with stream:
        yield path, _decoded(_Source(stream, path, None), path, path)


class _Source(io.RawIOBase):
    """A binary input read as it comes: read errors as :class:`InputError`, an optional cap, and the
    first bytes kept to be read again after they are looked at."""

    def __init__(self, stream: Any, name: str, limit: int | None) -> None:
        super().__init__()
        self.stream, self.name, self.limit = stream, name, limit
        self.count = 0
        self.pending = b""

    def readable(self) -> bool:
        return True

    def first(self, size: int) -> bytes:
        """The first ``size`` bytes (fewer at the end), read again by the next reads."""
        while len(self.pending) < size:
            data = self._read(size - len(self.pending))
            if not data:
                break
            self.pending += data
        return self.pending[:size]

    def readinto(self, buffer: Any) -> int:
        wanted = len(buffer)
        if self.pending:
            data, self.pending = self.pending[:wanted], self.pending[wanted:]
        else:
            data = self._read(wanted)
        buffer[: len(data)] = data
        return len(data)

    def _read(self, size: int) -> bytes:
        read = getattr(self.stream, "read1", None) or self.stream.read
        try:
            data = bytes(read(size))
        except OSError as error:
            raise InputError(f"cannot read: {error.strerror}", where=self.name) from None
        self.count += len(data)
        if self.limit is not None and self.count > self.limit:
            raise InputError(_too_big(), where=self.name)
        return data


#: First bytes of the compressed forms, and what the ones read by suffix are called.
_MAGIC = (
    (re.compile(re.escape(b"\x1f\x8b")), "gzip"),
    (re.compile(re.escape(b"\xfd7zXZ\x00")), "xz"),
    (re.compile(b"BZh[1-9](1AY&SY|\x17rE8P\x90)"), "bz2"),
    (re.compile(re.escape(b"\x28\xb5\x2f\xfd")), "zstd"),
)
_SUFFIXES = {".gz": "gzip", ".xz": "xz", ".bz2": "bz2", ".zst": "zstd"}


def _decompressing(raw: _Source, name: str, path: str) -> tuple[Any, str | None, tuple[type[BaseException], ...]]:
    """A stream of the log's bytes, what they were compressed with, and the errors that say they are corrupt."""
    head = raw.first(10)
    kind = next((kind for magic, kind in _MAGIC if magic.match(head)), None)
    if kind is None:
        kind = _SUFFIXES.get(os.path.splitext(path)[1].lower())
    if kind is None:
        return io.BufferedReader(raw), None, ()
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb"), kind, (OSError, EOFError)
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(cast(IO[bytes], raw)), kind, (lzma.LZMAError, EOFError, OSError)
    if kind == "bz2":
        import bz2

        return bz2.BZ2File(raw), kind, (OSError, EOFError)
    try:
        import zstandard
    except ImportError:
        raise InputError(
            "compressed with zstd, which needs the zstandard package: pip install 'ckptcalc[logs]'", where=name
        ) from None
    return io.BufferedReader(_Zstd(raw, zstandard)), kind, (zstandard.ZstdError, OSError, EOFError)


class _Zstd(io.RawIOBase):
    """zstd frames decompressed as they are read, one after another, in bounded memory (a kibibyte of
    input at a time gives at most a few tens of MiB); data that ends inside a frame raises EOFError,
    as gzip, xz and bz2 do (zstandard's stream reader took a cut frame for the end)."""

    STEP = 2**10

    def __init__(self, raw: _Source, zstandard: Any) -> None:
        super().__init__()
        self.raw, self.zstandard = raw, zstandard
        self.frame = zstandard.ZstdDecompressor().decompressobj()
        self.started = False  # a frame has begun and not ended
        self.out = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.out:
            data = self.raw.read(self.STEP)
            if not data:
                if self.started:
                    raise EOFError("compressed data ended before the end of its frame")
                return 0
            self._feed(data)
        size = min(len(buffer), len(self.out))
        buffer[:size], self.out = self.out[:size], self.out[size:]
        return size

    def _feed(self, data: bytes) -> None:
        while data:
            self.started = True
            self.out += self.frame.decompress(data)
            if not self.frame.eof:
                return
            data = self.frame.unused_data  # the next frame begins in this input
            self.frame = self.zstandard.ZstdDecompressor().decompressobj()
            self.started = False


#: Bytes asked of the input at a time: decoded and split into lines in one pass each.
BLOCK = 64 * 2**10


def _decoded(raw: _Source, name: str, path: str) -> Lines:
    """The lines of a binary input, decompressed and decoded; errors name the line being read.

    The input is read a block at a time (what is there, up to :data:`BLOCK`: a pipe's lines flow as
    they arrive), cut after its last newline, decoded and split in C: a generator step per line cost
    as much as a ``csv.reader`` pass. The lines before a problem are handed over before it is raised.
    """
    stream, kind, corrupt = _decompressing(raw, name, path)
    return Lines(_blocks(stream, kind, corrupt, name, raw))


#: A compressed log is refused once it has given more than :data:`BOMB_FLOOR` bytes and more than
#: :data:`MAX_RATIO` times the compressed bytes read: logs compress 5 to 50 times (ckptcalc's own event
#: logs about 10), so past that it is a decompression bomb (10^9 newlines in 722 bytes of bz2), not a log.
MAX_RATIO = 200
BOMB_FLOOR = 64 * 2**20


def _bomb(kind: str | None) -> str:
    return (f"the {kind} data decompresses to over {MAX_RATIO} times its size: a decompression bomb, not a log "
            f"(docs/fit.md, Reading)")  # fmt: skip


def _blocks(
    stream: Any, kind: str | None, corrupt: tuple[type[BaseException], ...], name: str, raw: _Source | None = None
) -> Iterator[str]:
    """The decoded text of ``stream``, whole lines at a time (``raw``: the compressed input, whose bytes
    read bound what it may give, see :data:`MAX_RATIO`)."""
    read = getattr(stream, "read1", None) or stream.read
    offset, lines = 0, 0  # bytes and lines before ``pending``
    pending: list[bytes] = []  # the start of a line whose end has not been read yet
    waiting = 0  # its length
    first = True
    given = 0  # bytes decompressed so far
    watched = kind is not None and raw is not None
    with stream:
        while True:
            try:
                data = read(BLOCK)
            except corrupt as error:
                raise InputError(f"cannot decompress the {kind} data: {error}", where=f"{name}:{lines + 1}") from None
            if watched:
                given += len(data)
                if given > BOMB_FLOOR and given > MAX_RATIO * cast(_Source, raw).count:
                    raise InputError(_bomb(kind), where=f"{name}:{lines + 1}")
            cut = data.rfind(b"\n") + 1
            if data and not cut:
                pending.append(data)
                waiting += len(data)
                if waiting > MAX_LINE:
                    raise InputError(_too_long(), where=f"{name}:{lines + 1}")
                continue
            block = b"".join([*pending, data[:cut]]) if pending else data[:cut]
            rest = data[cut:]
            if not data:  # the end: the last line has no newline
                block, rest = block + rest, b""
                if not block:
                    return
            pending, waiting = ([rest], len(rest)) if rest else ([], 0)
            if len(block) > MAX_LINE:
                _check_lengths(block, name, lines)
            try:
                text = block.decode("utf-8")
            except UnicodeDecodeError as error:
                good = block[: block.rfind(b"\n", 0, error.start) + 1]
                yield good.decode("utf-8").removeprefix("\ufeff" if first else "")
                line = lines + good.count(b"\n") + 1
                raise InputError(f"not UTF-8 text (byte {offset + error.start})", where=f"{name}:{line}") from None
            if first:
                text, first = text.removeprefix("\ufeff"), False
            yield text
            if not data:
                return
            offset += len(block)
            lines += block.count(b"\n")


def _check_lengths(block: bytes, name: str, lines: int) -> None:
    """Refuse the first line of ``block`` (after ``lines`` lines) longer than :data:`MAX_LINE`, newline included."""
    pieces = block.split(b"\n")
    for index, piece in enumerate(pieces):
        if len(piece) + (index < len(pieces) - 1) > MAX_LINE:
            raise InputError(_too_long(), where=f"{name}:{lines + 1 + index}")


def _text_lines(stream: Any, name: str) -> Iterator[str]:
    total, number = 0, 0
    while True:
        try:
            line = stream.readline(min(MAX_LINE, MAX_BYTES - total) + 1)
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text", where=f"{name}:{number + 1}") from None
        except OSError as error:
            raise InputError(f"cannot read: {error.strerror}", where=name) from None
        if not line:
            return
        total += len(line)
        number += 1
        if len(line) > MAX_LINE:
            raise InputError(_too_long(), where=f"{name}:{number}")
        if total > MAX_BYTES:
            raise InputError(_too_big(), where=name)
        yield line.removeprefix("\ufeff") if number == 1 else line
