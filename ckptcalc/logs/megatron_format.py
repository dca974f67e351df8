"""Megatron-LM, Megatron-DeepSpeed and NeMo text logs: iteration, save, load and timer lines.

The lines read (anywhere in a line, so rank labels such as ``0: `` may precede them):

* iteration lines, ``iteration 100/ 500000 | consumed samples: ... | elapsed time per iteration (ms):
  5123.4 | ...`` (NeMo 2: ``Training epoch 0, iteration 28/99 | ... | global_step: 28 | ... |
  train_step_timing in s: 0.19``): progress at that iteration;
* ``saving checkpoint at iteration N`` and ``successfully saved checkpoint from iteration N``
  (Megatron-DeepSpeed: ``... at iteration N``): a save of step N begins and ends;
* the save timer, ``save-checkpoint: 57514.53`` or ``save-checkpoint ....: (57000.10, 57514.53)``
  (milliseconds; the larger, the slowest rank): how long the save stalled training;
* NeMo's ``Global Checkpoint Save : Rank: 0 : Iteration: N : Start time: 1744408121.151s : Save duration:
  4.389s``: a save of step N, from that Unix time for that long; asynchronous when ``Scheduled async
  checkpoint save`` follows it (then ``Successfully saved checkpoint from iteration N`` is when it became
  durable);
* ``loading checkpoint from DIR at iteration N`` and ``successfully loaded checkpoint from DIR ... at
  iteration N``: a restore of step N;
* a new process: the argument dump (``------------------------ arguments ------------------------``),
  ``> initializing torch distributed ...`` or Lightning's ``Initializing distributed: GLOBAL_RANK: 0``;
* ``[after training is done] datetime: ...``: the run ended; ``[exiting program after receiving
  SIGTERM.] ...``: the attempt failed (cause ``SIGTERM``).

Times come from the line when it carries one: a ``[YYYY-MM-DD HH:MM:SS]`` (Megatron-LM iteration and
save lines), ``datetime: YYYY-MM-DD HH:MM:SS`` (Megatron's setup milestones) or NeMo's ``[NeMo I
YYYY-MM-DD HH:MM:SS ...]`` prefix; they are naive (read in ``tz``). Other lines' times are *rebuilt*:

* an iteration line N after iteration M of the same process is ``N − M`` iterations of its
  ``elapsed time per iteration`` after M, plus the saves logged between them (Megatron-LM stops its
  iteration timer while saving, and NeMo's step timing leaves saves out; Megatron-DeepSpeed, whose lines
  carry ``consumed tokens:``, does not); the first iteration of a process counts from the iteration it
  loaded (0 when it loaded none), from the latest time read;
* a save begins at the latest time read and stalls for its timer's duration; a restore, a new
  process, a save's end without a timer are at the latest time read;
* the lines before the log's first timestamp are placed back from it; a log with no timestamp in its
  first :data:`HELD` events runs on a clock from 0 (1970-01-01 00:00:00 UTC), and any later timestamp
  is then ignored. With no timestamps at all, a restart's length cannot be known: the next process
  continues where the last one stopped.

Each rebuilt time is counted (``rebuilt_times``). A save whose timer ends it before the log says it
succeeded was asynchronous: its success line is when it became durable.

A line that matches one of these forms but cannot be read (an elapsed time that is not a number, an
impossible date, iterations that go backwards on a rebuilt clock) is a bad row; other lines are not
events and are passed over.

>>> from ckptcalc.logs.adapter import Context
>>> lines = ["> initializing torch distributed ...\\n",
...          "[before the start of training step] datetime: 2024-05-01 12:00:00 \\n",
...          " iteration       10/     100 | elapsed time per iteration (ms): 2000.0 |\\n",
...          "saving checkpoint at iteration      10 to /ckpt\\n",
...          "  successfully saved checkpoint from iteration      10 to /ckpt\\n",
...          "    save-checkpoint ................................: (4100.00, 5000.00)\\n",
...          " iteration       20/     100 | elapsed time per iteration (ms): 2000.0 |\\n"]
>>> context = Context("train.log")
>>> [(row.value["event"], row.value["time"] - 1714564800) for row in rows(lines, context)]
... # doctest: +NORMALIZE_WHITESPACE
[('attempt_start', 0.0), ('progress', 20.0), ('checkpoint_start', 20.0), ('checkpoint_end', 25.0),
 ('progress', 45.0)]
>>> context.notes["rebuilt_times"]
5
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from ckptcalc.logs import csv_format
from ckptcalc.logs.adapter import Bad, Context, Header, Row, Stamp, step_number

NAME = "megatron"
GIVES = "events"
#: Its logs are a job's output, which holds other programs' lines too: the pattern library reads them.
MIXED = True

#: Events held while no line has said what time it is (they are placed back from the first that does).
HELD = 100_000

_DATE = r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?"
_BRACKETED = re.compile(rf"\[({_DATE})\]")
_MILESTONE = re.compile(rf"\] datetime: ({_DATE})")
_NEMO_PREFIX = re.compile(rf"\[NeMo [A-Z] ({_DATE}) ")
_ITERATION = re.compile(r"iteration\s+(\d+)\s*/\s*(?:\d+|infinity)\s*\|")
_ELAPSED = re.compile(r"elapsed time per iteration \(ms\):\s*([^\s|]*)")
_STEP_TIMING = re.compile(r"train_step_timing in s:\s*([^\s|]*)")
_GLOBAL_STEP = re.compile(r"global_step:\s*(\d+)")
_SAVE_START = re.compile(r"\bsaving checkpoint at iteration\s+(\d+)")
_SAVE_END = re.compile(r"successfully saved checkpoint (?:from|at) iteration\s+(\d+)", re.IGNORECASE)
_LOAD_START = re.compile(r"\bloading (?:distributed )?checkpoint from .* at iteration\s+(\d+)")
_LOAD_END = re.compile(r"successfully loaded checkpoint from .* at iteration\s+(\d+)")
_TIMER = re.compile(r"(?<![\w-])save-checkpoint(?![\w-])[ .]*:\s*(\([^)]*\)?|[^\s|]*)")
_BANNER = re.compile(
    r"-{8,} arguments -{8,}|> initializing torch distributed \.\.\.|Initializing distributed: GLOBAL_RANK: \d"
)
_NEMO_SAVE = re.compile(
    r"Global Checkpoint Save : Rank: \d+ : Iteration: (\d+) : Start time: ([^\s:]*?)s? : Save duration: ([^\s:]*?)s?\s*$"  # noqa: E501
)
_NEMO_ASYNC = "Scheduled async checkpoint save"
_DONE = "[after training is done]"
_SIGTERM = "exiting program after receiving SIGTERM"
_TOKENS = "consumed tokens:"

#: What a log's first lines must hold for it to be read as Megatron's.
_MARKS = (_SAVE_START, _SAVE_END, _LOAD_END, _BANNER, re.compile(r"\] datetime: \d{4}-"), re.compile(r"\[NeMo [A-Z] "))


def detect(head: Sequence[str]) -> bool:
    """A Megatron or NeMo line among the first: an iteration line, a save, a restore, the argument dump,
    a setup milestone or NeMo's prefix (a JSON log or a table under a CSV header never is one)."""
    first = head[0]
    if first.lstrip().startswith("{") or ("," in first and csv_format.plain_header(first)):
        return False
    for line in head:
        if _ITERATION.search(line) and (_ELAPSED.search(line) or _STEP_TIMING.search(line)):
            return True
        if any(mark.search(line) for mark in _MARKS):
            return True
    return False


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


class _Save:
    """A save the log said began, until its timer or the next event says how it ended."""

    def __init__(self, step: int, start: float, line: int) -> None:
        self.step, self.start, self.line = step, start, line
        self.end: tuple[float, int, bool] | None = None  # (time, line, read from the line) of its success


class _Log:
    """The state of one Megatron log: its clock, the save under way, and the events not yet given."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.now = 0.0  # the latest time, on the log's own clock (seconds from its first event)
        self.emitted = 0.0  # the time of the latest event given
        self.offset: float | None = None  # a timestamp minus the log's clock, once a line says the time
        self.relative = False  # no timestamp came in time: the clock stays from 0
        self.queue: list[Row] = []
        self.reference: tuple[int, float] | None = None  # (iteration, time) of the latest iteration line
        self.paused = 0.0  # save stalls since then (Megatron-LM's iteration timer stops for them)
        self.first_iteration: int | None = None  # where a process's iterations count from (None: unknown)
        self.save: _Save | None = None
        self.persisting: int | None = None  # the step of an asynchronous save not yet durable
        self.since_start = True  # events since the latest new process (True: none began yet)

    # -- time

    def stamp(self, line: str) -> float | None:
        """The line's own time on the log's clock, or None; raises ValueError for an impossible date."""
        if self.relative or "[" not in line:
            return None
        if "] datetime: " in line:
            match = _MILESTONE.search(line)
        elif "[NeMo " in line:
            match = _NEMO_PREFIX.search(line)
        else:
            at = line.find("[2")  # a bracketed timestamp of this millennium
            match = None if at < 0 else _BRACKETED.match(line, at)
        if match is None:
            return None
        seconds = float(self.context.stamp(datetime.fromisoformat(match[1])))
        if self.offset is None:
            self.offset = seconds - self.now
        return max(seconds - self.offset, self.now)

    def at(self, stamped: float | None) -> tuple[float, bool]:
        """The time of an event: its line's, else the latest (rebuilt, counted)."""
        if stamped is not None:
            return stamped, True
        self.context.notes["rebuilt_times"] += 1
        return self.now, False

    # -- output

    def emit(self, line: int, t: float, event: str, **fields: Any) -> None:
        self.now = max(self.now, t)
        self.emitted = t
        if event != "attempt_start":
            self.since_start = True
        self.queue.append(Row(line, {"time": t, "event": event, **fields}))

    def flush(self, end: bool = False) -> Iterator[Row]:
        if self.offset is None:
            if not end and len(self.queue) <= HELD:
                return
            self.offset, self.relative = 0.0, True
        for row in self.queue:
            value = row.value
            value["time"] = Stamp(value["time"] + self.offset)
            yield row
        self.queue.clear()

    def close_save(self, iterating: bool = False) -> None:
        """End the save under way before another event: at its success, or (when iterations go on
        without one) as an asynchronous save whose stall the log did not time."""
        save, self.save = self.save, None
        if save is None:
            return
        self.emit(save.line, save.start, "checkpoint_start", step=save.step)
        if save.end is not None:
            t, line, _ = save.end
            self.emit(line, max(t, save.start), "checkpoint_end", step=save.step)
        elif iterating:
            self.context.notes["rebuilt_times"] += 1
            self.emit(save.line, save.start, "checkpoint_end", step=save.step, **{"async": True})
            self.persisting = save.step

    # -- lines

    def take(self, number: int, line: str) -> Bad | None:
        """Read one line; a bad one leaves the clock as it was."""
        now, offset = self.now, self.offset
        try:
            bad = self.read(number, line)
        except ValueError as error:  # a step too large to be one (adapter.step_number)
            bad = Bad(number, str(error))
        if bad is not None:
            self.now, self.offset = now, offset
        return bad

    def read(self, number: int, line: str) -> Bad | None:
        try:
            stamped = self.stamp(line)
        except ValueError:
            return Bad(number, f"cannot read the timestamp in {line.strip()[:60]!r}")
        if stamped is not None:
            self.now = stamped
        # Words every event line holds, tested before any pattern: most lines of a log are none of these.
        if "iteration" in line and (iteration := _ITERATION.search(line)) is not None:
            return self.iteration(number, line, iteration, stamped)
        if "save-checkpoint" in line and (timer := _TIMER.search(line)) is not None:
            return self.timer(number, timer[1])
        if "heckpoint" in line:
            return self.checkpoint(number, line, stamped)
        if ("rguments" in line or "nitializing" in line) and _BANNER.search(line) is not None:
            self.close_save()
            if self.since_start:
                self.emit(number, self.at(stamped)[0], "attempt_start")
                self.since_start = False
            self.first_iteration, self.reference, self.persisting = 0, None, None
        elif _DONE in line:
            self.close_save()
            self.emit(number, self.at(stamped)[0], "run_end")
        elif _SIGTERM in line:
            self.close_save()
            self.emit(number, self.at(stamped)[0], "failure", cause="SIGTERM")
        return None

    def checkpoint(self, number: int, line: str, stamped: float | None) -> Bad | None:
        """A line about a checkpoint: a save or a restore beginning or ending."""
        if (match := _SAVE_START.search(line)) is not None:
            self.close_save()
            t, _ = self.at(stamped)
            self.save = _Save(step_number(match[1]), t, number)
            self.since_start = True
        elif (match := _NEMO_SAVE.search(line)) is not None:
            return self.nemo_save(number, line, match)
        elif _NEMO_ASYNC in line and self.save is not None and self.save.end is not None:
            save, end, self.save = self.save, self.save.end, None  # the save just timed goes on in the background
            self.emit(save.line, save.start, "checkpoint_start", step=save.step)
            self.emit(end[1], end[0], "checkpoint_end", step=save.step, **{"async": True})
            self.persisting = save.step
        elif (match := _SAVE_END.search(line)) is not None:
            self.saved(number, step_number(match[1]), stamped)
        elif (match := _LOAD_START.search(line)) is not None:
            self.close_save()
            self.emit(number, self.at(stamped)[0], "load_start", step=step_number(match[1]))
        elif (match := _LOAD_END.search(line)) is not None:
            self.close_save()
            self.emit(number, self.at(stamped)[0], "load_end", step=step_number(match[1]))
            self.first_iteration, self.reference = step_number(match[1]), None
        return None

    def iteration(self, number: int, line: str, match: re.Match[str], stamped: float | None) -> Bad | None:
        elapsed = _ELAPSED.search(line)
        timing = _STEP_TIMING.search(line) if elapsed is None else None
        if elapsed is None and timing is None:
            return None  # an iteration line of another kind (validation, a summary): not progress
        text = elapsed[1] if elapsed is not None else timing[1] if timing is not None else ""
        per = _number(text)
        if per is None:
            unit = "milliseconds" if elapsed is not None else "seconds"
            return Bad(number, f"cannot read the time per iteration {text!r}: expected {unit}")
        per_s = per / 1000.0 if elapsed is not None else per
        step_match = _GLOBAL_STEP.search(line) if timing is not None else None
        step = step_number(step_match[1]) if step_match is not None else step_number(match[1])
        if stamped is not None:
            t = stamped
        else:
            since: int | None
            if self.reference is not None:
                since, base = self.reference
                pause = 0.0 if _TOKENS in line else self.paused
            else:
                since, base, pause = self.first_iteration, self.now, 0.0
            if since is not None and step < since:
                return Bad(number, f"iteration {step} after iteration {since} with no restart between them:"
                                   " the clock cannot be rebuilt")  # fmt: skip
            t = max(base + (step - (step if since is None else since)) * per_s + pause, self.now)
            self.context.notes["rebuilt_times"] += 1
        self.close_save(iterating=True)
        self.emit(number, t, "progress", step=step)
        self.reference, self.paused, self.first_iteration = (step, t), 0.0, step
        return None

    def timer(self, number: int, text: str) -> Bad | None:
        values = [_number(part) for part in text.strip("()").split(",")] if text else [None]
        if not values or any(value is None for value in values) or len(values) > 2:
            return Bad(number, f"cannot read the save-checkpoint time {text!r}: expected milliseconds")
        stall = max(value for value in values if value is not None) / 1000.0
        save = self.save
        if save is None:
            return None  # a timer for a save already ended (or never begun): nothing to time
        self.paused += stall
        if save.end is None:  # the stall is over and the save has not succeeded: it goes on in the background
            self.save = None
            self.emit(save.line, save.start, "checkpoint_start", step=save.step)
            self.context.notes["rebuilt_times"] += 1
            self.emit(number, save.start + stall, "checkpoint_end", step=save.step, **{"async": True})
            self.persisting = save.step
            return None
        _, line, read = save.end
        if not read:
            save.end = (save.start + stall, line, False)
        self.close_save()
        return None

    def nemo_save(self, number: int, line: str, match: re.Match[str]) -> Bad | None:
        """NeMo's save, begun at a Unix time and stalling for a duration: held, in case the next line says it
        goes on in the background."""
        start, stall = _number(match[2]), _number(match[3])
        if start is None or stall is None:
            return Bad(number, f"cannot read the save's start time and duration in {line.strip()[-80:]!r}")
        self.close_save()
        if self.relative:
            at = self.now
        else:
            if self.offset is None:
                self.offset = start - self.now
            at = max(start - self.offset, self.emitted)
        self.save = _Save(step_number(match[1]), at, number)
        self.save.end = (at + stall, number, True)
        self.paused += stall  # NeMo's step timing leaves the save out
        self.since_start = True
        return None

    def saved(self, number: int, step: int, stamped: float | None) -> None:
        if self.save is not None and self.save.step == step:
            t, read = (stamped, True) if stamped is not None else (self.save.start, False)
            if not read:
                self.context.notes["rebuilt_times"] += 1
            self.save.end = (t, number, read)
            return
        self.close_save()
        t, _ = self.at(stamped)
        if self.persisting == step:
            self.persisting = None
            self.emit(number, t, "persist_end", step=step)
        else:
            self.emit(number, t, "checkpoint_end", step=step)  # the assembly counts it as unmatched


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """The raw run events of a Megatron log, in time order; bad lines as they come."""
    log = _Log(context or Context("log"))
    for number, line in enumerate(lines, start=1):
        if line.isspace():
            continue
        bad = log.take(number, line)
        if bad is not None:
            yield bad
        if log.queue:
            yield from log.flush()
    log.close_save()
    yield from log.flush(end=True)
