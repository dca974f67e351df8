"""torchtitan's logger: ``[rank0]:[titan] 2025-06-25 13:20:46,458 - root - INFO - message``.

``[rank0]:`` is there when ``torchrun`` tags each worker's output; ``[titan]`` marks the logger (older
versions leave it out). The timestamps are naive local time (read in the context's zone). Lines of
ranks other than the lowest seen are another copy of the same events: skipped and counted as
duplicates. The ``torchrun`` agent's lines in the same log are read as in
:mod:`ckptcalc.logs.torchelastic_format` (the worker group's starts and failures).

============================================================  ==============================
what torchtitan says                                          raw event
============================================================  ==============================
``Starting job: …``                                           ``attempt_start``
``step: 10  loss: …``                                         ``progress`` (``step``)
``Training starts at step 51.``                               ``progress`` (``step`` 50)
``Saving the checkpoint (or staging if async is enabled).``   ``checkpoint_start`` (the step
(``Saving the checkpoint.``, ``Staging the checkpoint.``)      of the latest ``step:`` line, or
                                                              the one a ``Saving a full
                                                              checkpoint … step N`` line names)
``Finished saving the checkpoint … in 4.00 seconds.``         ``checkpoint_end``
(``Finished staging …``, ``Last step checkpoint completed``)
``Finish saving the checkpoint in the background process …``  ``persist_end``
(``Finished writing the checkpoint for step N … (async        (the save was asynchronous)
total).``)
``Loading the checkpoint at step 50.``                        ``load_start`` (``step``)
(``Loading resume checkpoint from …/step-50.``)
``Finished loading the checkpoint in 5.00 seconds.``          ``load_end`` (``step``)
``Training completed``                                        ``run_end``
============================================================  ==============================

Whether a save was asynchronous: ``Staging the checkpoint`` says so, ``Saving the checkpoint.`` says
not; the ``(or staging if async is enabled)`` wording does not, and the save is asynchronous when its
persist shows (a background-process line) before the next save ends or the attempt stops. The
events after such a save wait for that answer; once a save proved synchronous, the job's later saves
are too. The versions with that wording log no persist in their plain ``async`` mode, so its saves
read as synchronous. The agent's and the trainer's banners both start an attempt; the second is
counted as a duplicate.

>>> from ckptcalc.logs.adapter import Context
>>> lines = ["[rank0]:[titan] 2025-06-25 13:00:00,000 - root - INFO - Starting job: 8B\\n",
...          "[rank0]:[titan] 2025-06-25 13:00:10,000 - root - INFO - step: 10  loss:  7.9\\n",
...          "[rank1]:[titan] 2025-06-25 13:00:10,000 - root - INFO - step: 10  loss:  7.9\\n",
...          "[rank0]:[titan] 2025-06-25 13:00:11,000 - root - INFO - Saving the checkpoint.\\n"]
>>> context = Context("x.log")
>>> [(row.value["event"], row.value.get("step")) for row in rows(lines, context)]
[('attempt_start', None), ('progress', 10), ('checkpoint_start', 10)]
>>> context.notes["duplicates"]
1
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ckptcalc.logs import torchelastic_format
from ckptcalc.logs.adapter import Bad, Context, Header, Row, Stamp, step_number
from ckptcalc.logs.torchelastic_format import clean, read_time

NAME = "torchtitan"
GIVES = "events"
#: Its logs are a job's output, which holds other programs' lines too: the pattern library reads them.
MIXED = True

#: ``[rank0]:[titan] 2025-06-25 13:20:46,458 - root - INFO - message``
LINE = re.compile(
    r"(?:\[rank(?P<rank>\d+)\]:)?(?P<titan>\[titan\] )?"
    r"(?P<stamp>\d\S* \d\S*) - (?P<logger>\S+) - (?P<level>[A-Z]+) - (?P<message>.*)"
)

#: Rows held at most while a save's mode is unknown (then it is read as synchronous).
HELD = 10_000

#: A line this many seconds earlier than the one before it is read at that one's time: the agent's and
#: the workers' lines reach one log through different pipes. A larger step back is left for the
#: reading to report.
SLACK_S = 60.0

# Each message torchtitan writes that says something, by what it says.
_MESSAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Starting job: "), "job"),
    (re.compile(r"step:\s*(?P<step>\S+)"), "step"),
    (re.compile(r"Training starts at step (?P<step>\S+?)\.?\s*$"), "starts"),
    (re.compile(r"Saving the checkpoint \(or staging if async is enabled\)\."), "save"),
    (re.compile(r"Saving the checkpoint\."), "save sync"),
    (re.compile(r"Staging the checkpoint\."), "save async"),
    (re.compile(r"Saving a (?:\S+ ){1,6}?checkpoint .*\bstep (?P<step>[^\s.]+)"), "save step"),
    (re.compile(r"Finished saving the checkpoint \(or staging if async is enabled\) ?in "), "saved"),
    (re.compile(r"Finished saving the checkpoint in "), "saved sync"),
    (re.compile(r"Last step checkpoint completed in "), "saved sync"),
    (re.compile(r"Finished staging the checkpoint in "), "saved async"),
    (re.compile(r"Finish saving the checkpoint in the background process in "), "persisted"),
    (re.compile(r"Finished writing the checkpoint for step (?P<step>\S+) in .*\(async total\)"), "persisted"),
    (re.compile(r"Loading the checkpoint at step (?P<step>\S+?)\.?\s*$"), "load"),
    (re.compile(r"Loading (?:the|resume) checkpoint from (?P<path>.*)"), "load"),
    (re.compile(r"Finished loading (?:the|resume) checkpoint in "), "loaded"),
    (re.compile(r"Training completed"), "done"),
)
_MODES = {"sync": False, "async": True}
_FAST_STAMP = re.compile(r"(\d{4}-\d\d-\d\d \d\d:\d\d):(\d\d),(\d{3})")
#: A step line whose time is plainly written, for the reading's fast path.
_STEP_LINE = re.compile(
    r"(?:\[rank(\d+)\]:)?(?:\[titan\] )?(\d{4}-\d\d-\d\d \d\d:\d\d):([0-5]\d),(\d{3}) - \S+ - [A-Z]+ - "
    r"step:\s*(\d+)(?:/\d+)?(?:\s|$)"
)
_STEP = re.compile(r"(\d+)(?:/\d+)?[.,:;]?")
_PATH_STEP = re.compile(r"step-(\d+)")


# The messages by their first word: most lines are passed over after one dictionary look-up.
_BY_WORD: dict[str, list[tuple[re.Pattern[str], str]]] = {}
for _pattern, _kind in _MESSAGES:
    _BY_WORD.setdefault(_pattern.pattern.partition(" ")[0].split("\\s")[0], []).append((_pattern, _kind))


def _said(message: str) -> tuple[str, re.Match[str]] | None:
    word = message.partition(" ")[0]
    for pattern, kind in _BY_WORD.get("step:" if word.startswith("step:") else word, ()):
        found = pattern.match(message)
        if found is not None:
            return kind, found
    return None


def detect(head: Sequence[str]) -> bool:
    """A torchtitan line among the first: marked ``[titan]``, or a message only torchtitan writes."""
    for line in head:
        found = LINE.fullmatch(clean(line))
        if found is not None and (found["titan"] is not None or _said(found["message"]) is not None):
            return True
    return False


def _step(text: str) -> int:
    found = _STEP.fullmatch(text)
    if found is None:
        raise ValueError(f"step {text[:20]!r} is not a whole number")
    return step_number(found[1])


class _Reader:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.agent = torchelastic_format.Agent(context)
        self.rank: int | None = None  # the lowest rank seen
        self.step: int | None = None  # the latest step reached
        self.open: dict[str, Any] | None = None  # the save under way: its step and whether it is async
        self.async_mode: bool | None = None  # learnt from the log
        self.loading: int | None = None  # the step of the restore under way
        self.fresh = False  # an attempt began and nothing happened since
        self.last = -math.inf
        self.pending: tuple[int, dict[str, Any]] | None = None  # a save's end whose mode is unknown
        self.held: list[Row] = []
        self.early: list[tuple[int, str]] = []  # the agent's glog lines before the first dated line
        self.minute, self.minute_s = "", 0.0  # the latest line's minute, and its time
        self.out: list[Row | Bad] = []  # what the latest line gave

    # -- output

    def emit(self, line: int, t: float, event: str, fields: dict[str, Any]) -> None:
        if event == "attempt_start":
            if self.fresh:
                self.context.notes["duplicates"] += 1
                return
            self.settle()
            self.fresh, self.open, self.loading = True, None, None
            self.agent.failed = False  # a new attempt may fail again, whoever said it began
        elif event not in ("load_start", "load_end"):
            self.fresh = False
        if event in ("failure", "run_end"):
            self.settle()
        if self.last - SLACK_S <= t < self.last:
            t = self.last
        self.last = max(self.last, t)
        row = Row(line, {"time": Stamp(t), "event": event, **fields})
        if self.pending is None:
            self.out.append(row)
            return
        self.held.append(row)
        if len(self.held) > HELD:
            self.settle()

    def settle(self, durable_later: bool = False) -> None:
        """Write the save whose mode was unknown: asynchronous if its persist showed, else synchronous."""
        if self.pending is None:
            return
        line, record = self.pending
        if durable_later:
            record["async"] = True
        held, self.pending, self.held = self.held, None, []
        self.out.append(Row(line, record))
        self.out.extend(held)

    # -- input

    def take(self, number: int, text: str) -> None:
        fast = _STEP_LINE.match(text)
        if fast is not None and not self.early and fast[2] == self.minute and len(fast[5]) <= 16:
            self.progress(number, fast)
            return
        found = LINE.fullmatch(text)
        if found is None:
            if self.agent.year is None and torchelastic_format.GLOG.fullmatch(text):
                self.early.append((number, text))  # its year comes from torchtitan's first date
                if len(self.early) > HELD:
                    self.flush()
                return
            self.from_agent(number, text)
            return
        said = _said(found["message"])
        if said is None:
            return
        if found["rank"] is not None:
            rank = int(found["rank"])
            if self.rank is None or rank < self.rank:
                self.rank = rank
            elif rank > self.rank:
                self.context.notes["duplicates"] += 1
                return
        kind, message = said
        try:
            t = self.time(found["stamp"])
            if self.early:
                self.flush()
            if kind == "step":  # the commonest line, without the general path
                self.step = _step(message["step"])
                self.emit(number, t, "progress", {"step": self.step})
            else:
                self.said(number, t, kind, message)
        except ValueError as error:
            self.out.append(Bad(number, str(error)))

    def progress(self, number: int, fast: re.Match[str]) -> None:
        """A step line in the minute of the line before: most of a log, read with one match."""
        rank, _, second, milli, step = fast.group(1, 2, 3, 4, 5)
        if rank is not None:
            rank_n = int(rank)
            if self.rank is None or rank_n < self.rank:
                self.rank = rank_n
            elif rank_n > self.rank:
                self.context.notes["duplicates"] += 1
                return
        self.context.notes["naive_timestamps"] += 1  # as Context.stamp counts each
        self.step = int(step)
        self.emit(number, self.minute_s + int(second) + int(milli) / 1000, "progress", {"step": self.step})

    def time(self, stamp: str) -> Stamp:
        """A line's time. Lines come many a minute: the minute's start is worked out once."""
        fast = _FAST_STAMP.fullmatch(stamp)
        if fast is None or fast[2] >= "60":
            moment = read_time(stamp)
            if self.agent.year is None:
                self.agent.year = moment.year
            return self.context.stamp(moment)
        if fast[1] != self.minute:
            moment = read_time(fast[1] + ":00")
            if self.agent.year is None:
                self.agent.year = moment.year
            self.minute, self.minute_s = fast[1], float(self.context.stamp(moment))
        else:
            self.context.notes["naive_timestamps"] += 1  # as Context.stamp counts each
        return Stamp(self.minute_s + int(fast[2]) + int(fast[3]) / 1000)

    def from_agent(self, number: int, text: str) -> None:
        agent = self.agent.take(text)
        if isinstance(agent, str):
            self.out.append(Bad(number, agent))
        elif agent is not None:
            t, event, fields = agent
            self.emit(number, t, event, fields)

    def flush(self) -> None:
        """The agent's lines read before their year was known."""
        early, self.early = self.early, []
        for number, text in early:
            self.from_agent(number, text)

    def said(self, number: int, t: float, kind: str, message: re.Match[str]) -> None:
        what, _, mode_word = kind.partition(" ")
        mode = _MODES.get(mode_word)
        if what == "job":
            self.emit(number, t, "attempt_start", {})
        elif what in ("step", "starts"):
            step = _step(message["step"]) - (what == "starts")
            self.step = step
            self.emit(number, t, "progress", {"step": step})
        elif what == "save":
            if mode_word == "step":
                named = _step(message["step"])
                if self.open is not None:  # the step of the save just begun
                    self.open["step"] = named
                    return
                self.open = {"step": named, "async": self.async_mode}
            else:
                self.open = {"step": self.step, "async": self.async_mode if mode is None else mode}
            self.emit(number, t, "checkpoint_start", self._step_field(self.open["step"]))
        elif what == "saved":
            self.saved(number, t, mode)
        elif what == "persisted":
            self.async_mode = True
            written = _step(message["step"]) if "step" in message.re.groupindex else None
            if self.pending is not None:
                self.settle(durable_later=True)
            self.emit(number, t, "persist_end", self._step_field(written))
        elif what == "load":
            if "step" in message.re.groupindex:
                self.loading = _step(message["step"])
            else:
                steps = _PATH_STEP.findall(message["path"])
                self.loading = step_number(steps[-1]) if steps else None
            self.emit(number, t, "load_start", self._step_field(self.loading))
        elif what == "loaded":
            self.emit(number, t, "load_end", self._step_field(self.loading))
            self.loading = None
        elif what == "done":
            self.emit(number, t, "run_end", {})

    def saved(self, number: int, t: float, mode: bool | None) -> None:
        if self.pending is not None:  # a save's persist shows before the next save ends, if at all
            self.async_mode = False  # it did not: this job's saves are synchronous
        self.settle()
        opened, self.open = self.open, None
        if mode is None:
            mode = opened["async"] if opened is not None and opened["async"] is not None else self.async_mode
        step = None if opened is None else opened["step"]
        record: dict[str, Any] = {"event": "checkpoint_end", **self._step_field(step)}
        if mode:
            record["async"] = True
        if mode is not None:
            self.emit(number, t, record.pop("event"), record)
            return
        self.emit(number, t, "checkpoint_end", record)
        row = self.out.pop()  # nothing was pending (settled above), so the row was written: take it back
        assert isinstance(row, Row)
        self.pending = (number, row.value)

    @staticmethod
    def _step_field(step: int | None) -> dict[str, Any]:
        return {} if step is None else {"step": step}


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """The raw events of a torchtitan log (and of the ``torchrun`` agent's lines in it)."""
    reader = _Reader(context or Context("log"))
    out = reader.out
    for number, line in enumerate(lines, start=1):
        text = clean(line)
        if text:
            reader.take(number, text)
            if out:
                yield from out
                out.clear()
    reader.flush()
    reader.settle()
    yield from out
