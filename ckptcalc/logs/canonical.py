"""The canonical event log written out, one event as it is read: what ``ckptcalc events`` gives.

Whatever a log was (a framework's text log, a scheduler's accounting, an event table), the canonical
log has one event a line with the fields ``analyze`` reads (docs/commands/events.md):

* ``time``: an ISO-8601 timestamp in UTC (``2025-06-25T13:20:46.458Z``), or ``time_s``, seconds from
  the log's zero, when the log's times were numbers;
* ``event``: ``run_start``, ``checkpoint_start``, ``checkpoint_end``, ``failure``, ``recovery``,
  ``restart_end``, ``progress``, ``group_down``, ``group_up``, ``silent_detected``, ``rollback`` or
  ``run_end``;
* where they apply: ``level``, ``step``, ``cause``, ``resumed_from``, ``async_persist_end`` (times in
  the form of ``time``; ``async_persist_end`` is ``interrupted`` for a persist that never completed) and
  ``kind`` (a ``recovery``'s: ``in_place`` or ``notice``, docs/model.md §13), ``group`` (the replica
  group a ``group_down`` or ``group_up`` names) and ``quorum_end`` (a ``group_down``'s: when the running
  groups resumed after the quorum change, docs/model.md §11.6), ``onset`` (a ``silent_detected``'s: when
  the silent event began), ``to`` and ``skip`` (a ``rollback``'s: the checkpoint it went back to, and the
  work discarded beyond it, in seconds; docs/model.md §11.7).

It is written as it is read, in JSON Lines or CSV, so a log of any length takes no more memory.

>>> import io
>>> out = io.BytesIO()
>>> writer = Writer(out, "jsonl")
>>> from ckptcalc.logs.adapter import Stamp
>>> writer.record({"time": Stamp(1750857646.458), "event": "failure", "cause": "xid79"}, line=1)
True
>>> out.getvalue().decode()
'{"time": "2025-06-25T13:20:46.458Z", "event": "failure", "cause": "xid79"}\\n'
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import IO, Any, Literal

from ckptcalc.errors import CkptError
from ckptcalc.logs import assembly, reader
from ckptcalc.logs.reader import MISSING, BadRecord, get_path, text_form
from ckptcalc.mechanisms.silent import log as silent

#: The events of the canonical log, in the order a run meets them.
EVENTS = (
    "run_start",
    "checkpoint_start",
    "checkpoint_end",
    "failure",
    "recovery",
    "restart_end",
    "progress",
    "group_down",
    "group_up",
    "silent_detected",
    "rollback",
    "run_end",
)

#: The event of the record that ends a stream cut short by an error (:meth:`Writer.error`).
ERROR = "error"

#: Fields written after ``time`` and ``event`` when an event has them (the CSV columns, in order).
FIELDS = ("level", "step", "cause", "resumed_from", "async_persist_end", "kind", "group", "quorum_end", "onset", "to",
          "skip")  # fmt: skip

#: Of them, the ones that hold times.
TIME_FIELDS = ("resumed_from", "async_persist_end", "quorum_end", "onset", "to")

#: What ``async_persist_end`` says of a persist that never completed.
INTERRUPTED = assembly.INTERRUPTED

#: The time field read when none is named, unless the log has only :data:`SECONDS_FIELD`.
TIME_FIELD = "time"

#: The time field of an event log that says its unit in its name: seconds from the log's zero.
SECONDS_FIELD = "time_s"

#: The forms the log is written in, by the output's extension.
Form = Literal["jsonl", "csv"]

FORMS: dict[str, Form] = {".jsonl": "jsonl", ".csv": "csv"}


def iso(seconds: float) -> str:
    """A time in seconds since 1970 as ISO-8601 UTC, to the millisecond when it has a fraction.

    >>> iso(0.0), iso(1750857646.5)
    ('1970-01-01T00:00:00Z', '2025-06-25T13:20:46.500Z')
    """
    moment = datetime.fromtimestamp(seconds, UTC)
    spec = "seconds" if seconds == math.floor(seconds) else "milliseconds"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


class Writer:
    """The reader's consumer that writes each event of the run to ``stream`` as it comes."""

    def __init__(
        self, stream: IO[bytes], form: Form, *, time_field: str | None = None, clock: reader.Clock | None = None
    ) -> None:
        self.stream, self.form = stream, form
        self.named = time_field is not None
        self.time_field = time_field or TIME_FIELD
        self.clock = clock or reader.Clock(None)
        self.last = -math.inf
        self.written = 0
        self.csv: Any = None  # the CSV writer and its buffer, made with the first row

    def fields(self, names: Sequence[str], line: int) -> None:
        """A log with ``time_s`` and no ``time`` is read from ``time_s``, in seconds (unless a field was named)."""
        if not self.named and TIME_FIELD not in names and SECONDS_FIELD in names:
            self.time_field = SECONDS_FIELD
            if self.clock.time_unit is None:
                self.clock = reader.Clock("s", tz=self.clock.tz, time_format=self.clock.time_format)

    def _time(self, seconds: float) -> str | float:
        if self.clock.kind == "timestamp":
            try:
                return iso(seconds)
            except (OverflowError, ValueError, OSError):
                raise BadRecord(f"time {seconds:g} s is out of range") from None
        return seconds

    def record(self, record: dict[str, Any], line: int) -> bool:
        kind = text_form(get_path(record, "event", ""))
        if kind not in EVENTS:
            return False
        value = get_path(record, self.time_field, MISSING)
        if value is MISSING or value is None or value == "":
            raise BadRecord(f"no {self.time_field!r} field")
        seconds = self.clock.seconds(value, line=line)
        if seconds < self.last:
            raise BadRecord(f"time goes backwards (an earlier line is later by {self.last - seconds:g} s)")
        self.last = seconds
        time_key = "time" if self.clock.kind == "timestamp" else "time_s"
        out: dict[str, Any] = {time_key: self._time(seconds), "event": kind}
        for key in FIELDS:
            given = get_path(record, key, None)
            if given is None or given == "":
                continue
            if key in TIME_FIELDS and given != INTERRUPTED:
                given = self._time(self.clock.seconds(given, line=line))
            elif key == "skip":  # a duration in the log's unit, written in seconds
                given = silent.duration(given, self.clock.factor)
            out[key] = given
        self._write(time_key, out)
        self.written += 1
        return True

    def error(self, error: CkptError) -> None:
        """End a stream already under way with the error that stopped the reading: one record
        ``{"event": "error", "where": ..., "error": ...}`` (:data:`ERROR`), which ``analyze`` refuses,
        so that a log cut short is never read as a whole run."""
        self._write_line({"event": ERROR, "where": error.where, "error": error.message})

    def _write_line(self, out: dict[str, Any]) -> None:
        self.stream.write((json.dumps(out, ensure_ascii=False) + "\n").encode("utf-8"))

    def _write(self, time_key: str, out: dict[str, Any]) -> None:
        if self.form == "jsonl":
            self._write_line(out)
            return
        if self.csv is None:
            import csv
            import io

            text = io.StringIO()
            self.csv = (csv.writer(text, lineterminator="\n"), text)
            self.csv[0].writerow((time_key, "event", *FIELDS))
        writer, text = self.csv
        writer.writerow((out[time_key], out["event"], *(text_form(out[key]) if key in out else "" for key in FIELDS)))
        self.stream.write(text.getvalue().encode("utf-8"))
        text.seek(0)
        text.truncate()
