"""Read failure and incident logs: CSV, a JSON array, or JSON Lines.

A log is a list of records (one per event). Each record has a time, and may
have fields to filter on (``where``) and a field naming its cause. The reader
returns the kept events sorted by time, in seconds, with counts of what it
read, kept, filtered out and skipped, so a caller can say what it did.

>>> log = parse_log("time,kind\\n2024-05-01T00:00:00Z,gpu\\n2024-05-01T01:00:00Z,nic\\n", name="x.csv", cause="kind")
>>> log.times, log.causes
((1714521600.0, 1714525200.0), ('gpu', 'nic'))

Formats, time forms, filters and the line numbers in messages are described
in docs/fit.md §1. Every problem raises :class:`~ckptcalc.errors.InputError`
whose ``where`` is ``FILE:LINE`` for a bad row, ``FILE`` for a whole-file
problem, and the parameter's name (``time_unit``, ``where``...) for a bad
parameter.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

from ckptcalc.errors import CkptError, InputError
from ckptcalc.files import read_regular
from ckptcalc.inputs.units import DURATION_UNITS

#: Largest log read, in bytes (characters for a text stream). Bigger inputs are refused, not truncated.
MAX_BYTES = 64 * 2**20

#: Formats the reader knows; ``None`` detects one from the first non-blank character.
FORMATS = ("csv", "json", "jsonl")

#: Fields tried, in order, when no time field is named.
TIME_FIELDS = ("time", "timestamp", "event_time", "start")

#: How many bad-row messages a log keeps when ``skip_bad`` is on.
BAD_KEPT = 5

#: The cause given to an event whose cause field is missing, null or empty.
UNKNOWN_CAUSE = "unknown"

#: Name used for standard input in messages.
STDIN_NAME = "stdin"

TimeKind = Literal["timestamp", "number"]

_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TIME_UNIT_HELP = "s, min, h or d"


@dataclass(frozen=True)
class Event:
    """One kept event: its time in seconds, its cause, and the line it was read from."""

    time_s: float
    cause: str
    line: int


@dataclass(frozen=True)
class EventLog:
    """The kept events of one or more logs, sorted by time, and what happened to the rest.

    ``time_kind`` says what the times count from: ``"timestamp"`` (ISO-8601,
    seconds since 1970-01-01 UTC) or ``"number"`` (the log's own zero).
    ``read = kept + filtered + skipped_bad``; ``bad`` holds the first few
    skipped rows' messages, each starting with ``FILE:LINE``.
    """

    source: str
    format: str
    time_field: str
    time_kind: TimeKind
    events: tuple[Event, ...]
    read: int
    kept: int
    filtered: int
    skipped_bad: int
    bad: tuple[str, ...]
    naive_timestamps: int = 0

    @property
    def times(self) -> tuple[float, ...]:
        """The event times in seconds, ascending."""
        return tuple(event.time_s for event in self.events)

    @property
    def causes(self) -> tuple[str, ...]:
        """The causes, in the order of :attr:`times`."""
        return tuple(event.cause for event in self.events)


# ---------------------------------------------------------------- small pieces


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: Pass as :func:`get_path`'s default to tell an absent field from one holding null.
MISSING: Any = _Missing()
_RAISE: Any = _Missing()


def get_path(record: Mapping[str, Any], path: str, default: Any = _RAISE) -> Any:
    """The value at the dotted ``path`` of ``record`` (``"job.node.id"``).

    A key that itself contains dots (a CSV column called ``job.id``) wins over
    the nested reading. A numeric part indexes a JSON array (``"gpus.0"``).
    An absent field gives ``default``, and raises ``KeyError`` when no default
    is given.

    >>> get_path({"a": {"b": [10, 20]}}, "a.b.1")
    20
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


def parse_where(conditions: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Split ``FIELD=VALUE`` conditions at their first ``=``; errors name ``where``."""
    pairs = []
    for condition in conditions:
        field, equals, value = condition.partition("=")
        field = field.strip()
        if not equals or not field:
            raise InputError(f"cannot read {condition!r}: expected FIELD=VALUE, e.g. kind=hardware", where="where")
        pairs.append((field, value))
    return tuple(pairs)


def time_unit_seconds(time_unit: str) -> float:
    """Seconds in a time unit for numeric times (``s``, ``min``, ``h``, ``d`` and their spellings in units.py)."""
    factor = DURATION_UNITS.get(time_unit.strip())
    if factor is None:
        raise InputError(f"unknown time unit {time_unit!r}: expected {_TIME_UNIT_HELP}", where="time_unit")
    return factor


def parse_time(value: Any, *, time_unit: str | None = None) -> tuple[float, TimeKind, bool]:
    """Read one time value: an ISO-8601 timestamp, or a number in ``time_unit``.

    Returns the time in seconds (since 1970-01-01 UTC for a timestamp, since
    the log's zero for a number), which form it was, and whether it was a
    timestamp without an offset (read as UTC). Raises ``ValueError`` with a
    short message for a value that is not a time, and :class:`InputError`
    (``where="time_unit"``) for a number when no unit is given.

    >>> parse_time("2024-05-01T14:00:00+02:00")
    (1714564800.0, 'timestamp', False)
    >>> parse_time("1.5", time_unit="h")
    (5400.0, 'number', False)
    """
    number: float | None = None
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
        if _NUMBER_RE.fullmatch(text):
            number = float(text)
        else:
            return _timestamp(text)
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


def _timestamp(text: str) -> tuple[float, TimeKind, bool]:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"cannot read time {text[:40]!r}: expected an ISO-8601 timestamp such as 2024-05-01T12:00:00Z or a number"
        ) from None
    naive = moment.tzinfo is None
    if naive:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH).total_seconds(), "timestamp", naive


# ---------------------------------------------------------------- reading files


def read_text(path: str | os.PathLike[str], *, name: str | None = None) -> str:
    """The UTF-8 text of a regular file of at most :data:`MAX_BYTES`.

    FIFOs, devices and directories are refused before they are opened (a FIFO
    would block). A UTF-8 byte order mark is dropped.
    """
    label = name if name is not None else os.fspath(path)
    hint = " (pipe data through stdin with -)"
    try:
        data = read_regular(path, label=label, limit=MAX_BYTES, noun="log file", hint=hint)
    except CkptError as error:
        raise InputError(error.template, where=error.where) from None
    return _decode(data, label)


def _too_big() -> str:
    return f"larger than the {MAX_BYTES // 2**20} MiB a log may be; split it or filter it first"


def _decode(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"not UTF-8 text (byte {error.start})", where=f"{label}:{line}") from None


def read_stream(stream: TextIO, *, name: str = STDIN_NAME) -> str:
    """The text of an open text stream (standard input), at most :data:`MAX_BYTES` characters."""
    try:
        text = stream.read(MAX_BYTES + 1)
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", where=name) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror}", where=name) from None
    if len(text) > MAX_BYTES:
        raise InputError(_too_big(), where=name)
    return text.removeprefix("\ufeff")


def read_log(
    source: str | os.PathLike[str],
    *,
    stdin: TextIO | None = None,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    where: Sequence[str] = (),
    cause: str | None = None,
    skip_bad: bool = False,
) -> EventLog:
    """Read one log from a path, or from ``stdin`` when ``source`` is ``"-"``.

    The keyword arguments are those of :func:`parse_log`.
    """
    _check_options(format, time, time_unit, where, cause)
    if os.fspath(source) == "-":
        if stdin is None:
            raise InputError("reading standard input needs a stream", where="-")
        text, name = read_stream(stdin), STDIN_NAME
    else:
        name = os.fspath(source)
        text = read_text(source, name=name)
    return parse_log(
        text,
        name=name,
        format=format,
        time=time,
        time_unit=time_unit,
        where=where,
        cause=cause,
        skip_bad=skip_bad,
    )


def _check_options(
    format: str | None, time: str | None, time_unit: str | None, where: Sequence[str], cause: str | None
) -> None:
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown format {format!r}: expected {', '.join(FORMATS)}", where="format")
    if time_unit is not None:
        time_unit_seconds(time_unit)
    if time is not None and not time.strip():
        raise InputError("empty field name", where="time")
    if cause is not None and not cause.strip():
        raise InputError("empty field name", where="cause")
    if isinstance(where, str):
        raise InputError("expected a list of FIELD=VALUE conditions, got one string", where="where")
    parse_where(where)


def detect_format(text: str) -> str:
    """``json`` when the first non-blank character is ``[``, ``jsonl`` when it is ``{``, otherwise ``csv``."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        return "jsonl"
    return "csv"


# ---------------------------------------------------------------- parsing


class _Header:
    """A CSV header: it names the fields before any record is seen."""

    def __init__(self, line: int, fields: list[str]) -> None:
        self.line = line
        self.fields = fields


class _BadRow(Exception):
    """A row that cannot be used; ``skip_bad`` turns it into a count."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def parse_log(
    text: str,
    *,
    name: str,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    where: Sequence[str] = (),
    cause: str | None = None,
    skip_bad: bool = False,
) -> EventLog:
    """Parse the text of one log; ``name`` labels it in messages (``name:line``).

    * ``format``: ``csv``, ``json`` or ``jsonl``; detected by :func:`detect_format` when ``None``.
    * ``time``: the dotted path of the time field; default, the first of
      :data:`TIME_FIELDS` present in the first record (CSV: the header).
    * ``time_unit``: the unit of numeric times (``s``, ``min``, ``h``, ``d``); required for them.
    * ``where``: ``FIELD=VALUE`` conditions, all of which a record must meet
      (compared as text, see :func:`text_form`); a record without the field fails.
    * ``cause``: dotted path of a field to group by; missing, null or empty is ``"unknown"``.
    * ``skip_bad``: skip and count bad rows instead of raising at the first.
    """
    _check_options(format, time, time_unit, where, cause)
    chosen = format or detect_format(text)
    if not text.strip():
        raise InputError("empty log: no events", where=name)
    conditions = parse_where(where)
    records = {"csv": _csv_records, "json": _json_records, "jsonl": _jsonl_records}[chosen](text, name)
    state = _Collector(name, chosen, time, time_unit, conditions, cause, skip_bad)
    for item in records:
        state.add(item)
    return state.result()


class _Collector:
    """Turns records into events one by one, applying the filters and the time rules."""

    def __init__(
        self,
        name: str,
        format: str,
        time: str | None,
        time_unit: str | None,
        conditions: tuple[tuple[str, str], ...],
        cause: str | None,
        skip_bad: bool,
    ) -> None:
        self.name = name
        self.format = format
        self.time_field = time.strip() if time else None
        self.time_unit = time_unit
        self.conditions = conditions
        self.cause = cause.strip() if cause else None
        self.skip_bad = skip_bad
        self.events: list[Event] = []
        self.read = 0
        self.filtered = 0
        self.skipped = 0
        self.bad: list[str] = []
        self.kind: TimeKind | None = None
        self.kind_line = 0
        self.naive = 0

    def add(self, item: tuple[int, Any] | _BadRow | _Header) -> None:
        if isinstance(item, _Header):
            where = f"{self.name}:{item.line}"
            if self.time_field is None:
                self.time_field = _default_time_field(item.fields, where)
            elif self.time_field not in item.fields:
                raise InputError(f"no column {self.time_field!r} in the header", where=where)
            return
        if isinstance(item, _BadRow):
            # Rows that failed to parse still count as read.
            self.read += 1
            self._bad(item)
            return
        line, record = item
        self.read += 1
        try:
            self._record(line, record)
        except _BadRow as bad:
            self._bad(bad)

    def _bad(self, bad: _BadRow) -> None:
        where = f"{self.name}:{bad.line}"
        if not self.skip_bad:
            raise InputError(bad.message, where=where)
        self.skipped += 1
        if len(self.bad) < BAD_KEPT:
            self.bad.append(f"{where}: {bad.message}")

    def _record(self, line: int, record: Any) -> None:
        if not isinstance(record, dict):
            shown = json.dumps(record, ensure_ascii=False)
            raise _BadRow(line, f"expected a JSON object, got {shown[:40]}")
        if self.time_field is None:
            self.time_field = _default_time_field(record.keys(), f"{self.name}:{line}")
        for field, wanted in self.conditions:
            value = get_path(record, field, MISSING)
            if value is MISSING or text_form(value) != wanted:
                self.filtered += 1
                return
        raw = get_path(record, self.time_field, MISSING)
        if raw is MISSING or raw is None or raw == "":
            raise _BadRow(line, f"no time: field {self.time_field!r} is missing or empty")
        try:
            seconds, kind, naive = parse_time(raw, time_unit=self.time_unit)
        except InputError as error:  # a number, and no unit to read it in (before ValueError: a subclass)
            if self.kind == "timestamp":
                raise _BadRow(line, self._mixed("number")) from None
            raise InputError(error.template, where=f"{self.name}:{line}") from None
        except ValueError as error:
            raise _BadRow(line, str(error)) from None
        if self.kind is None:
            self.kind, self.kind_line = kind, line
        elif kind != self.kind:
            raise _BadRow(line, self._mixed(kind))
        self.naive += naive
        label = UNKNOWN_CAUSE
        if self.cause is not None:
            value = get_path(record, self.cause, None)
            if value is not None and value != "":
                label = text_form(value)
        self.events.append(Event(seconds, label, line))

    def _mixed(self, kind: TimeKind) -> str:
        one = {"timestamp": "an ISO-8601 timestamp", "number": "a number"}
        many = {"timestamp": "ISO-8601 timestamps", "number": "numbers"}
        return f"{one[kind]}, but line {self.kind_line} has {many[self.kind or kind]}; a log uses one form"

    def result(self) -> EventLog:
        if not self.events:
            detail = f"read {self.read}"
            if self.filtered:
                detail += f", {self.filtered} filtered out by where"
            if self.skipped:
                detail += f", {self.skipped} bad rows skipped"
            raise InputError(f"no events kept ({detail})", where=self.name)
        assert self.time_field is not None and self.kind is not None
        events = tuple(sorted(self.events, key=lambda event: event.time_s))
        return EventLog(
            source=self.name,
            format=self.format,
            time_field=self.time_field,
            time_kind=self.kind,
            events=events,
            read=self.read,
            kept=len(events),
            filtered=self.filtered,
            skipped_bad=self.skipped,
            bad=tuple(self.bad),
            naive_timestamps=self.naive,
        )


def _default_time_field(fields: Iterable[str], where: str) -> str:
    present = list(fields)
    for candidate in TIME_FIELDS:
        if candidate in present:
            return candidate
    shown = ", ".join(repr(f) for f in present[:8]) or "none"
    raise InputError(
        f"no time field: none of {', '.join(TIME_FIELDS)} is present (fields: {shown}); name one with time",
        where=where,
    )


def _csv_records(text: str, name: str) -> Iterator[tuple[int, Any] | _BadRow | _Header]:
    import csv
    import io

    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    consumed = 0  # physical lines read so far, to know where the next row starts
    while True:
        start = consumed + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            consumed = reader.line_num
            if header is None:
                raise InputError(f"cannot read the CSV header: {error}", where=f"{name}:{start}") from None
            yield _BadRow(start, f"cannot read the CSV row: {error}")
            continue
        consumed = reader.line_num
        if not row or all(not cell.strip() for cell in row):
            continue  # blank lines are not rows
        if header is None:
            header = [cell.strip() for cell in row]
            duplicates = sorted({cell for cell in header if header.count(cell) > 1})
            if duplicates:
                raise InputError(f"duplicate column {duplicates[0]!r} in the header", where=f"{name}:{start}")
            yield _Header(start, header)
            continue
        if len(row) != len(header):
            yield _BadRow(start, f"{len(row)} fields, but the header has {len(header)}")
            continue
        # Cells are stripped: "time, kind" headers and ", gpu" cells are common.
        yield start, dict(zip(header, (cell.strip() for cell in row), strict=True))


def _jsonl_records(text: str, name: str) -> Iterator[tuple[int, Any] | _BadRow | _Header]:
    # Split on "\n" only: JSON strings may hold other line separators (U+2028) raw.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except RecursionError:
            yield _BadRow(number, "malformed JSON: nested too deeply")
        except ValueError as error:
            message = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
            yield _BadRow(number, f"malformed JSON: {message}")


def _json_records(text: str, name: str) -> Iterator[tuple[int, Any] | _BadRow | _Header]:
    """The elements of a JSON array, each with the line its value starts on.

    A syntax error inside the array is fatal even with ``skip_bad``: after it
    there is no telling where the next element starts.
    """
    decoder = json.JSONDecoder()
    position = _skip_space(text, 0)
    if not text.startswith("[", position):
        raise InputError("expected a JSON array of objects", where=f"{name}:{_line(text, position)}")
    position = _skip_space(text, position + 1)
    line, counted = 1, 0

    def line_at(offset: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, offset)
        counted = offset
        return line

    if text.startswith("]", position):
        position += 1
    else:
        while True:
            start_line = line_at(position)
            try:
                value, position = decoder.raw_decode(text, position)
            except json.JSONDecodeError as error:
                raise InputError(f"malformed JSON: {error.msg}", where=f"{name}:{error.lineno}") from None
            except RecursionError:
                raise InputError("malformed JSON: nested too deeply", where=f"{name}:{start_line}") from None
            except ValueError as error:  # e.g. an integer longer than Python converts
                raise InputError(f"malformed JSON: {error}", where=f"{name}:{start_line}") from None
            yield start_line, value
            position = _skip_space(text, position)
            if text.startswith(",", position):
                position = _skip_space(text, position + 1)
                continue
            if text.startswith("]", position):
                position += 1
                break
            raise InputError("malformed JSON: expected ',' or ']'", where=f"{name}:{_line(text, position)}")
    position = _skip_space(text, position)
    if position < len(text):
        raise InputError("unexpected text after the JSON array", where=f"{name}:{_line(text, position)}")


_SPACE_RE = re.compile(r"[ \t\n\r]*")


def _skip_space(text: str, position: int) -> int:
    match = _SPACE_RE.match(text, position)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _line(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


# ---------------------------------------------------------------- several logs


def combine(logs: Sequence[EventLog]) -> EventLog:
    """Merge logs read separately into one, keeping every event and adding the counts.

    All logs must use the same time form (timestamps, or numbers from the same zero).
    """
    if not logs:
        raise InputError("no logs to combine")
    first = logs[0]
    for log in logs[1:]:
        if log.time_kind != first.time_kind:
            raise InputError(
                f"{log.source} has {log.time_kind} times but {first.source} has {first.time_kind} times; "
                "logs read together must use one form",
                where=log.source,
            )
    if len(logs) == 1:
        return first

    def joined(values: Sequence[str]) -> str:
        return values[0] if len(set(values)) == 1 else ", ".join(values)

    events = tuple(sorted((e for log in logs for e in log.events), key=lambda event: event.time_s))
    return EventLog(
        source=", ".join(log.source for log in logs),
        format=joined([log.format for log in logs]),
        time_field=joined([log.time_field for log in logs]),
        time_kind=first.time_kind,
        events=events,
        read=sum(log.read for log in logs),
        kept=len(events),
        filtered=sum(log.filtered for log in logs),
        skipped_bad=sum(log.skipped_bad for log in logs),
        bad=tuple(message for log in logs for message in log.bad)[:BAD_KEPT],
        naive_timestamps=sum(log.naive_timestamps for log in logs),
    )
