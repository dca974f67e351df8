"""torchelastic (``torchrun``) agent logs: the worker group's starts, failures and restarts.

The agent (``torch.distributed.elastic.agent.server.api``) writes its lines in one of two forms, by
PyTorch version: ``[2025-06-25 13:20:46,458] torch.distributed.elastic.agent.server.api: [INFO] …``,
or glog's ``I0625 13:20:46.458000 4242 torch/distributed/elastic/agent/server/api.py:879] …``, whose
date has no year (the context's year, see :meth:`~ckptcalc.logs.adapter.Context.the_year`).

==========================================================  =====================================
what the agent says                                         raw event
==========================================================  =====================================
``[default] Starting worker group``                         ``attempt_start`` (``restart_count``
                                                            from the rendezvous before it)
``failed (exitcode: -9) local_rank: 0 (pid: …)``            ``failure``, cause ``SIGKILL``
                                                            (``exitcode 1`` for a positive code)
``[default] Worker group FAILED. 2/3 attempts left; …``     ``failure``, cause
                                                            ``worker_group_failed``
``Received SIGTERM death signal, shutting down workers``    ``failure``, cause ``SIGTERM``
``[default] Detected 1 new nodes …; will restart …``        ``failure``, cause ``membership_change``
``[default] worker group successfully finished. …``         ``run_end``
==========================================================  =====================================

An attempt fails once: the lines after its first failure that say it again (one per local rank, then
the group's) are counted as duplicates. The agent does not see training, so in a log of its lines
alone training is taken to resume when the restarted worker group starts (a ``progress`` event then):
the restart it measures is the agent's, and loading the checkpoint counts as work.

>>> from ckptcalc.logs.adapter import Context
>>> head = "[2025-06-25 13:00:00,000] torch.distributed.elastic.agent.server.api: [INFO] "
>>> lines = [head + "[default] Starting worker group\\n",
...          head + "[default] Worker group FAILED. 3/3 attempts left; will restart worker group\\n",
...          "  restart_count=1\\n", head.replace("00:00", "00:30") + "[default] Starting worker group\\n"]
>>> [(row.line, row.value["event"], row.value["time"] % 3600) for row in rows(lines, Context("x.log"))]
[(1, 'attempt_start', 0.0), (2, 'failure', 0.0), (4, 'attempt_start', 30.0), (4, 'progress', 30.0)]
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from ckptcalc.logs.adapter import Bad, Context, Header, Row, Stamp

NAME = "torchelastic"
GIVES = "events"
#: Its logs are a job's output, which holds other programs' lines too: the pattern library reads them.
MIXED = True

#: ``[2025-06-25 13:20:46,458] torch.distributed.elastic.agent.server.api: [INFO] message``
STAMPED = re.compile(
    r"\[(?P<stamp>\d[^\]]*)\] "
    r"(?P<logger>torch\.distributed\.[\w.]+): \[(?P<level>[A-Z]+)\] ?(?P<message>.*)"
)
#: ``I0625 13:20:46.458000 4242 torch/distributed/elastic/agent/server/api.py:879] message``
GLOG = re.compile(
    r"(?P<level>[IWEF])(?P<month>\d\d)(?P<day>\d\d) (?P<clock>\d\d:\d\d:\d\d(?:\.\d+)?) +\d+ "
    r"(?P<logger>torch/distributed/\S+?):\d+\] ?(?P<message>.*)"
)

_START = re.compile(r"\[[^\]]*\] Starting worker group\b")
_GROUP_FAILED = re.compile(r"\[[^\]]*\] Worker group (?P<state>FAILED|UNHEALTHY)\b")
_EXITED = re.compile(r"failed \(exitcode: (?P<code>-?\d+)\)")
_SIGNALLED = re.compile(r"Received (?:Signals\.)?(?P<signal>\w+) death signal, shutting down workers")
_MEMBERSHIP = re.compile(r"\[[^\]]*\] Detected \S+ new nodes from group_rank=\S+; will restart worker group")
_SUCCEEDED = re.compile(
    r"\[[^\]]*\] worker group successfully finished|Local worker group finished \((?:WorkerState\.)?SUCCEEDED\)"
)
# Each is matched at the message's start: a long line costs its length, not its square.
_RESTART_COUNT = re.compile(r"\brestart_count=(?P<count>\S+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def clean(line: str) -> str:
    """A physical line without its line ending and terminal colours.

    >>> clean("\\x1b[31mstep:  1\\x1b[39m\\r\\n")
    'step:  1'
    """
    text = line.rstrip("\r\n")
    return _ANSI.sub("", text) if "\x1b" in text else text


def detect(head: Sequence[str]) -> bool:
    """A line among the first that the agent (or ``torchrun`` itself) wrote."""
    return any(STAMPED.fullmatch(clean(line)) or GLOG.fullmatch(clean(line)) for line in head)


class Agent:
    """The agent's lines read one at a time: :meth:`take` gives each one's raw event, if it has one."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.restart_count: int | None = None  # from the rendezvous before the next start
        self.failed = False  # the current attempt's failure was said
        self.month = 0  # the last glog line's month, to carry the year over December
        self.year: int | None = None

    def take(self, text: str) -> tuple[Stamp, str, dict[str, Any]] | str | None:
        """The raw event ``(time, event, fields)`` of one cleaned line, a message if the line is the
        agent's and cannot be read, or None (not the agent's, or nothing to say)."""
        if text.startswith(" "):  # a multi-line record's continuation: the rendezvous' result
            return self._count(text)
        match = STAMPED.fullmatch(text)
        glog = None if match is not None else GLOG.fullmatch(text)
        if match is None and glog is None:
            return None
        message = (match or glog)["message"]  # type: ignore[index]
        found = self._event(message)
        if found is None:
            return self._count(message)
        try:
            t = self._stamp_of(match) if match is not None else self._glog_stamp(glog)
        except ValueError as error:
            return str(error)
        event, fields = found
        if event == "failure":
            if self.failed:
                self.context.notes["duplicates"] += 1
                return None
            self.failed = True
        elif event == "attempt_start":
            self.failed = False
            if self.restart_count is not None:
                fields["restart_count"] = self.restart_count
                self.restart_count = None
        return t, event, fields

    def _count(self, text: str) -> str | None:
        found = _RESTART_COUNT.search(text)
        if found is None:
            return None
        try:
            self.restart_count = int(found["count"])
        except ValueError:
            return f"restart_count {found['count'][:20]!r} is not a whole number"
        return None

    @staticmethod
    def _event(message: str) -> tuple[str, dict[str, Any]] | None:
        if _START.match(message):
            return "attempt_start", {}
        exited = _EXITED.match(message)
        if exited is not None:
            return "failure", {"cause": exit_cause(exited["code"])}
        failed = _GROUP_FAILED.match(message)
        if failed is not None:
            return "failure", {"cause": f"worker_group_{failed['state'].lower()}"}
        signalled = _SIGNALLED.match(message)
        if signalled is not None:
            return "failure", {"cause": signalled["signal"]}
        if _MEMBERSHIP.match(message):
            return "failure", {"cause": "membership_change"}
        if _SUCCEEDED.match(message):
            return "run_end", {}
        return None

    def _stamp_of(self, match: re.Match[str]) -> Stamp:
        return self.context.stamp(read_time(match["stamp"]))

    def _glog_stamp(self, match: re.Match[str] | None) -> Stamp:
        assert match is not None
        month, day, clock = int(match["month"]), int(match["day"]), match["clock"]
        if self.year is None:
            self.year = self.context.the_year()
        elif month < self.month:
            self.year += 1  # the log went on past New Year
        self.month = month
        try:
            moment = datetime.strptime(f"{self.year}-{month:02d}-{day:02d} {clock}", "%Y-%m-%d %H:%M:%S.%f")
        except ValueError:
            try:
                moment = datetime.strptime(f"{self.year}-{month:02d}-{day:02d} {clock}", "%Y-%m-%d %H:%M:%S")
            except ValueError:
                raise ValueError(f"cannot read time {match['month']}{match['day']} {clock!r}") from None
        return self.context.stamp(moment)


def read_time(text: str) -> datetime:
    """A logging module's ``asctime`` (``2025-06-25 13:20:46,458``) as a naive datetime.

    >>> read_time("2025-06-25 13:20:46,458")
    datetime.datetime(2025, 6, 25, 13, 20, 46, 458000)
    """
    try:
        return datetime.fromisoformat(text.replace(",", "."))
    except ValueError:
        raise ValueError(f"cannot read time {text[:30]!r}: expected e.g. 2025-06-25 13:20:46,458") from None


def exit_cause(code: str) -> str:
    """A worker's exit as a failure's cause: the signal that killed it, or its exit code.

    >>> exit_cause("-9"), exit_cause("1"), exit_cause("-99")
    ('SIGKILL', 'exitcode 1', 'signal 99')
    """
    try:
        number = int(code)
    except ValueError:
        return f"exitcode {code[:20]}"
    if number >= 0:
        return f"exitcode {number}"
    try:
        return signal.Signals(-number).name
    except ValueError:
        return f"signal {-number}"


def rows(lines: Iterable[str], context: Context | None = None) -> Iterator[Row | Bad | Header]:
    """The agent's raw events; the other lines are not its and are passed over."""
    agent = Agent(context or Context("log"))
    down = False
    for number, line in enumerate(lines, start=1):
        found = agent.take(clean(line))
        if found is None:
            continue
        if isinstance(found, str):
            yield Bad(number, found)
            continue
        t, event, fields = found
        yield Row(number, {"time": t, "event": event, **fields})
        if event == "failure":
            down = True
        elif event == "attempt_start" and down:
            down = False
            yield Row(number, {"time": t, "event": "progress"})  # the agent's view: the workers run again
