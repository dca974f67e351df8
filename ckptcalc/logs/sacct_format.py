"""Slurm accounting: what ``sacct --parsable2`` (``-P``) prints, for one job or for a whole cluster.

A header line names the fields, split by ``|``, in any order and any case; ``JobID``, ``Start``, ``End``
and ``State`` are needed, ``Elapsed`` stands in for an ``End`` that is ``Unknown``, and the others
(``JobName``, ``ExitCode``, ``NodeList``, ``Reason``...) are read past. ``--parsable``'s trailing ``|``
is accepted. Times are sacct's local clock readings (``2025-06-25T13:20:46``, naive: read in the
context's zone and counted), or ``Unknown``/``None``.

Each row is a *record*: a job's own (``4242``, an array task ``4242_7``, a heterogeneous component
``4242+1``) or one of its steps' (``4242.batch``, ``4242.extern``, ``4242.0``). A job is its ID before
``.`` and ``+``; each of its own records is one *attempt* (``sacct --duplicates`` lists every attempt
of a requeued job; components that start together are one attempt). An attempt gives

* ``attempt_start`` at its Start, and ``progress`` where work starts: at each numbered step's Start
  (an ``srun``), or at the attempt's Start if it ran none;
* at its End, a ``failure`` whose cause is the State (its first word) when the State is one of
  :data:`FAILURES`, else ``run_end``; nothing while it runs (End ``Unknown``);
* a ``failure`` at the End of a numbered step that failed and after which the attempt started another
  numbered step (a batch script that relaunched its step).

Records that never started (Start ``Unknown``: pending, or cancelled in the queue) are no events, and
neither are the steps of a job whose own record is not in the log.

One job or a cluster: while every record belongs to the first job (``sacct -j JOB --duplicates``), the
records are held, at most :data:`MAX_JOB_RECORDS` of them, and at the end the job's run comes out in
time order, for ``analyze``. Once a second job appears the log is a cluster's dump: sacct orders it by
job, not by time, so each job's records are held only while they follow each other and only the
failures come out, in the order of the jobs: ``fit`` counts them whatever their order, and the memory
never exceeds one job's records however long the dump.

>>> from ckptcalc.logs.adapter import Context
>>> lines = ["JobID|Start|End|State\\n",
...          "7|2025-06-25T10:00:00|2025-06-25T11:00:00|NODE_FAIL\\n",
...          "7|2025-06-25T11:05:00|2025-06-25T12:00:00|COMPLETED\\n"]
>>> [(row.value["event"], row.value["time"] - 1750845600) for row in rows(lines, Context("x"))]
... # doctest: +NORMALIZE_WHITESPACE
[('attempt_start', 0.0), ('progress', 0.0), ('failure', 3600.0), ('attempt_start', 3900.0),
 ('progress', 3900.0), ('run_end', 7200.0)]
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from ckptcalc.logs.adapter import Bad, Broken, Context, Header, Row, Stamp

NAME = "sacct"
GIVES = "events"

#: Fields a header must name (compared in lower case).
NEEDED = ("jobid", "start", "end", "state")

#: States that end an attempt with a failure, its cause: the job died or was stopped and requeued.
#: OUT_OF_MEMORY is one (the job crashed and must be restarted, like FAILED), and so is BOOT_FAIL (its
#: nodes failed to start). CANCELLED (by a person), DEADLINE and COMPLETED end the run.
FAILURES = frozenset(
    {"FAILED", "NODE_FAIL", "TIMEOUT", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "REQUEUED", "REQUEUE_FED",
     "REQUEUE_HOLD"}
)  # fmt: skip

#: States of a record still under way: its Elapsed is not its length.
UNDER_WAY = frozenset(
    {"RUNNING", "PENDING", "SUSPENDED", "CONFIGURING", "COMPLETING", "RESIZING", "SIGNALING", "STAGE_OUT",
     "STOPPED"}
)  # fmt: skip

#: Records of one job held before it is known to be alone in the log (and in a cluster's dump, records
#: of one job held together): about 300 bytes each, some 30 MB at most.
MAX_JOB_RECORDS = 100_000

#: Distinct time cells remembered (those of the records being read: a job's records share theirs).
TIMES_KEPT = 4096

_NO_TIME = ("", "unknown", "none")
_ELAPSED = re.compile(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+(?:\.\d*)?)")


def _names(line: str) -> list[str]:
    text = line.strip()
    if text.endswith("|"):
        text = text[:-1]
    return [name.strip().lower() for name in text.split("|")]


def detect(head: Sequence[str]) -> bool:
    """A first line of ``|``-separated names among which are JobID, Start, End and State.

    >>> detect(["JobID|JobName|Start|End|State|ExitCode\\n"]), detect(["JobID,Start,End,State\\n"])
    (True, False)
    """
    line = head[0]
    return "|" in line and set(NEEDED) <= set(_names(line))


class _Record(NamedTuple):
    line: int
    job: str  # the job: the ID before "." and "+"
    step: str | None  # None for the job's own record, else the step ("batch", "0")
    start: float
    end: float | None
    state: str  # the State's first word, upper case
    numbered: bool  # a numbered step (an srun)


class _Columns:
    """Where each field is in a row, from the header, and the reading of times."""

    def __init__(self, line: str, number: int, context: Context) -> None:
        self.trailing = line.strip().endswith("|")
        names = _names(line)
        missing = [name for name in NEEDED if name not in names]
        if missing:
            raise Broken(
                f"not a sacct header: no {missing[0]!r} field (sacct --parsable2 without --noheader, with "
                "--format naming JobID, Start, End and State)",
                number,
            )
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise Broken(f"field {repeated[0]!r} twice in the sacct header", number)
        self.count = len(names)
        self.jobid, self.start, self.end, self.state = (names.index(name) for name in NEEDED)
        self.elapsed = names.index("elapsed") if "elapsed" in names else None
        self.context = context
        # A job's records share their times: each is read once (the naive ones still counted every time).
        self.times: dict[str, tuple[float | None, bool]] = {}

    def time(self, cell: str) -> float | None:
        known = self.times.get(cell)
        if known is not None:
            if known[1]:
                self.context.notes["naive_timestamps"] += 1
            return known[0]
        text = cell.strip()
        value: float | None = None
        naive = False
        if text.lower() not in _NO_TIME:
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                raise ValueError(
                    f"cannot read time {text[:40]!r}: expected one like 2025-06-25T13:20:46, or Unknown"
                ) from None
            naive = moment.tzinfo is None
            value = float(self.context.stamp(moment))
        if len(self.times) >= TIMES_KEPT:
            self.times.clear()
        self.times[cell] = (value, naive)
        return value

    def record(self, line: str, number: int) -> _Record | Bad | None:
        """The row's record, a :class:`Bad` for a row that cannot be read, or None for one that never started."""
        text = line.rstrip("\r\n")
        if self.trailing and text.endswith("|"):
            text = text[:-1]
        cells = text.split("|")
        if len(cells) != self.count:
            return Bad(number, f"{len(cells)} fields, but the sacct header has {self.count}")
        job_id = cells[self.jobid].strip()
        base, dot, step = job_id.partition(".")
        job = base.partition("+")[0]
        if not job or (dot and not step):
            return Bad(number, f"cannot read JobID {job_id[:40]!r}: expected 1234, 1234.batch, 1234_5 or 1234+0")
        words = cells[self.state].split(None, 1)
        if not words:
            return Bad(number, "no State")
        state = words[0].rstrip("+").upper()
        try:
            start = self.time(cells[self.start])
            end = self.time(cells[self.end])
        except ValueError as error:
            return Bad(number, str(error))
        if start is None:
            return None
        if end is None and state not in UNDER_WAY and self.elapsed is not None:
            length = _elapsed(cells[self.elapsed])
            if length is False:
                return Bad(number, f"cannot read Elapsed {cells[self.elapsed].strip()[:40]!r}: "
                           "expected [days-]hours:minutes:seconds")  # fmt: skip
            end = None if length is None else start + length
        if end is not None and end < start:
            return Bad(number, "End is before Start")
        return _Record(number, job, step if dot else None, start, end, state, step.isdigit())


def _elapsed(cell: str) -> float | bool | None:
    """Seconds in ``[days-]hours:minutes:seconds``; None when empty or unknown; False when unreadable."""
    text = cell.strip()
    if text.lower() in _NO_TIME:
        return None
    match = _ELAPSED.fullmatch(text)
    if match is None:
        return False
    days, hours, minutes, seconds = match.group(1, 2, 3, 4)
    return ((int(days or 0) * 24 + int(hours or 0)) * 60 + int(minutes)) * 60 + float(seconds)


def _events(records: Sequence[_Record]) -> list[tuple[float, int, int, int, dict[str, Any]]]:
    """One job's raw events as (time, attempt, order within the attempt, line, event), in time order."""
    own = sorted((r for r in records if r.step is None), key=lambda r: (r.start, r.line))
    attempts: list[list[_Record]] = []  # components that start together are one attempt
    for record in own:
        if attempts and attempts[-1][0].start == record.start:
            attempts[-1].append(record)
        else:
            attempts.append([record])
    if not attempts:
        return []
    starts = [attempt[0].start for attempt in attempts]
    steps: list[list[_Record]] = [[] for _ in attempts]
    for record in records:
        if record.numbered:
            steps[max(0, bisect.bisect_right(starts, record.start) - 1)].append(record)
    events: list[tuple[float, int, int, int, dict[str, Any]]] = []
    for index, (attempt, numbered) in enumerate(zip(attempts, steps, strict=True)):
        first = attempt[0]
        events.append((first.start, index, 0, first.line, {"event": "attempt_start"}))
        numbered.sort(key=lambda r: (r.start, r.line))
        for record in numbered or [first]:
            events.append((record.start, index, 2, record.line, {"event": "progress"}))
        latest = -float("inf")  # the latest start among the steps after this one
        for record in reversed(numbered):
            if record.state in FAILURES and record.end is not None and latest >= record.end:
                events.append((record.end, index, 1, record.line, {"event": "failure", "cause": record.state}))
            latest = max(latest, record.start)
        if any(part.end is None for part in attempt):
            continue  # still running
        failed = [part for part in attempt if part.state in FAILURES]
        last = max(failed or attempt, key=lambda part: (part.end or 0.0, part.line))
        end = max(part.end or 0.0 for part in attempt)
        kind = {"event": "failure", "cause": last.state} if failed else {"event": "run_end"}
        events.append((end, index, 3, last.line, kind))
    events.sort(key=lambda event: event[:4])
    return events


def _out(events: Iterable[tuple[float, int, int, int, dict[str, Any]]]) -> Iterator[Row]:
    for time, _, _, line, event in events:
        yield Row(line, {"time": Stamp(time), **event})


def _failures(records: Sequence[_Record]) -> Iterator[Row]:
    """The failure events of one job's records: :func:`_events`' failures, found at once in the common
    case of one attempt whose steps did not fail."""
    own = [record for record in records if record.step is None]
    if len(own) == 1 and not any(record.numbered and record.state in FAILURES for record in records):
        attempt = own[0]
        if attempt.state in FAILURES and attempt.end is not None:
            yield Row(attempt.line, {"time": Stamp(attempt.end), "event": "failure", "cause": attempt.state})
        return
    yield from _out(event for event in _events(records) if event[4]["event"] == "failure")


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """The raw run events of one job's records, or the failures of a cluster's jobs (see the module)."""
    context = context or Context(NAME)
    columns: _Columns | None = None
    held: list[_Record] = []  # the first job's records; in a cluster's dump, the current job's
    failing = False  # whether one of them ended in a failure state
    cluster = False
    for number, line in enumerate(lines, start=1):
        if columns is None:
            if line.strip():
                columns = _Columns(line, number, context)
            continue
        if not line.strip():
            continue
        record = columns.record(line, number)
        if record is None:
            continue
        if isinstance(record, Bad):
            yield record
            continue
        if held and record.job != held[0].job:
            cluster = True
        if cluster and held and (record.job != held[0].job or len(held) >= MAX_JOB_RECORDS):
            if failing:  # most jobs of a dump end well: nothing to sort out
                yield from _failures(held)
            held, failing = [], False
        elif not cluster and len(held) >= MAX_JOB_RECORDS:
            raise Broken(
                f"job {record.job} has more than {MAX_JOB_RECORDS} records, more than are held to put its "
                "run in time order; read fewer (sacct without --duplicates, or one --starttime at a time)",
                number,
            )
        held.append(record)
        failing = failing or record.state in FAILURES
    if cluster:
        if failing:
            yield from _failures(held)
    else:
        yield from _out(_events(held))
