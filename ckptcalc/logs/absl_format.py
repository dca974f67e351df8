"""Orbax checkpoint lines in absl's log format (JAX, MaxText and other absl-logged training loops).

An absl line is ``I0608 20:54:47.918725 140021 checkpoint_manager.py:1234] message``: the severity
(``D I W E F``), month and day, the time, the thread, and the file and line that logged it. The
messages read:

* ``CheckpointManager created``: a new process (an attempt of the run);
* ``Saving checkpoint at step N``: a save of step N begins;
* ``[step=N] Finished synchronous save.``, or ``Finished saving checkpoint [at step N]``: its stall ends
  (not ``Finished saving checkpoint (finalized tmp dir)``, the commit inside a save);
* ``[step=N] Starting CheckpointManager Save Finalize thread``: its stall ends and it goes on in the
  background, until ``[step=N] CheckpointManager Save Finalize is done on all hosts.`` (durable);
* ``Restoring checkpoint from DIR`` (the step is DIR's last all-digit part, when it has one) and
  ``Finished restoring checkpoint [at step N]``: a restore;
* progress: MaxText's ``completed step: N, ...``, or any message that starts with ``step N``
  (``Step N``, ``step: N``, ``step=N``, ``train step N``).

absl lines carry no year: it is ``year`` when given, else the year of the file's modification time
(:meth:`~ckptcalc.logs.adapter.Context.the_year`, which records which); a log that runs past
31 December moves on to the next year when a January line follows a December one. The times are naive (read in ``tz``).

A line in absl's form whose date cannot be (``I0230 ...``) is a bad row; other lines, and absl lines
with other messages, are not events.

>>> from ckptcalc.logs.adapter import Context
>>> context = Context("train.log", year=2024)
>>> lines = ["I0608 20:54:40.000000 1 checkpoint_manager.py:700] CheckpointManager created,  ...\\n",
...          "I0608 20:54:47.500000 1 checkpoint_manager.py:1526] [process=0] Saving checkpoint at step 19\\n",
...          "I0608 20:54:50.000000 1 checkpoint_manager.py:1601] [process=0][thread=MainThread][step=19] "
...          "Finished synchronous save.\\n"]
>>> [(row.value["event"], row.value["time"] - 1717880080, row.value.get("step")) for row in rows(lines, context)]
[('attempt_start', 0.0, None), ('checkpoint_start', 7.5, 19), ('checkpoint_end', 10.0, 19)]
>>> context.said
{'year_from': 'year'}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from ckptcalc.logs.adapter import Bad, Context, Header, Row, Stamp, step_number

NAME = "absl"
GIVES = "events"
#: Its logs are a job's output, which holds other programs' lines too: the pattern library reads them.
MIXED = True

_LINE = re.compile(r"[\s`]*([DIWEF])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?\s+(\d+)\s+[^\s:\]]+:\d+\] ?(.*)")
_STEP_TAG = re.compile(r"\[step=(\d+)\]")
_MESSAGES: tuple[tuple[re.Pattern[str], str, dict[str, Any]], ...] = (
    # Progress first: the most frequent line, and anchored at the message's start.
    (re.compile(r"^(?:completed step:|(?:train(?:ing)? )?step\b[\s:=]*)\s*(\d+)\b", re.IGNORECASE), "progress", {}),
    (re.compile(r"CheckpointManager created"), "attempt_start", {}),
    (re.compile(r"Saving checkpoint at step (\d+)"), "checkpoint_start", {}),
    # Not "Finished saving checkpoint (finalized tmp dir)": that is the commit, inside the save (or its finalize).
    (
        re.compile(r"Finished synchronous save|Finished saving checkpoint(?! \(finalized)(?: at step (\d+))?"),
        "checkpoint_end",
        {},
    ),
    (re.compile(r"Starting CheckpointManager Save Finalize thread"), "checkpoint_end", {"async": True}),
    (re.compile(r"CheckpointManager Save Finalize is done on all hosts"), "persist_end", {}),
    (re.compile(r"Restoring checkpoint from (\S*?)\.?$"), "load_start", {}),
    (re.compile(r"Finished restoring checkpoint(?: at step (\d+))?"), "load_end", {}),
)


def detect(head: Sequence[str]) -> bool:
    """A first line in absl's form (other formats' lines never start with a severity letter and MMDD),
    after a Markdown fence (```) if the log was pasted from one; a stray backtick before it is no matter."""
    first = next((line for line in head if not line.strip().startswith("```")), "")
    return _LINE.match(first) is not None


def _step(event: str, message: str, match: re.Match[str]) -> int | None:
    if event == "load_start":
        digits = [part for part in match[1].replace("\\", "/").split("/") if part.isdigit()]
        return step_number(digits[-1]) if digits else None
    if match.lastindex is not None and match[1] is not None:  # the first capture, where it has one
        return step_number(match[1])
    tag = _STEP_TAG.search(message)
    return step_number(tag[1]) if tag else None


def _message(message: str) -> tuple[re.Match[str], str, dict[str, Any]] | None:
    # Every message read holds one of these words: most lines are passed over without a pattern.
    if "heckpoint" not in message and "tep" not in message and "ave" not in message:
        return None
    for pattern, event, extra in _MESSAGES:
        match = pattern.search(message)
        if match is not None:
            return match, event, extra
    return None


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """The raw run events of an absl log, in the order logged."""
    context = context or Context("log")
    year: int | None = None
    month = 0
    hours: dict[tuple[int, str, str], float] = {}  # (year, MMDD, HH) -> the hour's start: one zone lookup an hour
    for number, line in enumerate(lines, start=1):
        parsed = _LINE.match(line)
        if parsed is None:
            continue
        message = parsed[9].rstrip().rstrip("`")
        found = _message(message)
        if found is None:
            continue
        match, event, extra = found
        if year is None:
            year = context.the_year()
        this = year + 1 if month == 12 and parsed[2] == "01" else year  # the log ran into the next year
        key = (this, parsed[2] + parsed[3], parsed[4])
        hour = hours.get(key)
        if hour is None:
            try:
                moment = datetime(this, int(parsed[2]), int(parsed[3]), int(parsed[4]))
            except ValueError:
                yield Bad(number, f"cannot read the date {line.strip()[1:5]!r} of year {this}: expected MMDD")
                continue
            if len(hours) > 1000:
                hours.clear()
            hour = hours[key] = float(context.stamp(moment))
        else:
            context.notes["naive_timestamps"] += 1  # counted as the stamp of the hour's start would count it
        minute, second = int(parsed[5]), int(parsed[6])
        if minute > 59 or second > 59:
            yield Bad(number, f"cannot read the time {line.strip()[6:14]!r}: expected HH:MM:SS")
            continue
        year, month = this, int(parsed[2])
        fraction = int((parsed[7] or "0").ljust(6, "0")) / 1e6
        record: dict[str, Any] = {"time": Stamp(hour + minute * 60 + second + fraction), "event": event, **extra}
        try:
            step = _step(event, message, match)
        except ValueError as error:
            yield Bad(number, str(error))
            continue
        if step is not None:
            record["step"] = step
        yield Row(number, record)
