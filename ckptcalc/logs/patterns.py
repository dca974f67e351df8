"""The pattern library: the failure and save lines frameworks, launchers, drivers and schedulers print,
recognised in any log; and the patterns a user adds in a TOML file (``--patterns``, docs/formats/patterns.md).

A :class:`Pattern` says which raw event (:mod:`ckptcalc.logs.adapter`) a line gives, by a regular
expression whose named groups ``time``, ``step``, ``duration``, ``cause`` and ``rank`` fill it in. The
library's own (:data:`LIBRARY`) are read by :mod:`ckptcalc.logs.patterns_format`, the format of a log
that no framework adapter recognises, and in a framework's log by :func:`mixed`: there they add what
its adapter does not read (each pattern names the adapters that read its lines, ``read_by``).

A line's time is its own stamp, in any of the forms :class:`LineClock` knows (ISO-8601 with a space,
``T`` or ``_``; glog's and absl's ``E0430 05:09:48.828088908`` and syslog's ``Apr 30 05:09:48`` without
a year, which take the context's; RFC 2822; a time of day alone), found anywhere in the line, behind
``[rank3]:`` or ``[default3]:`` prefixes too. A line without one takes the nearest earlier stamp, and
is counted (``inferred_times``), unless a failure said before the next line that gives a time has a
time of its own: then it is that failure (below, rank 3's line takes rank 4's time). The reports of one
failure by many ranks, within :data:`COALESCE_S` of the first, are one failure, and the others are
counted (``coalesced_failures``).

>>> from ckptcalc.logs.adapter import Context
>>> lines = ["2025-06-25 13:00:00,000 - trainer - INFO - step 10\\n",
...          "[rank3]:[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout: "
...          "WorkNCCL(SeqNum=33, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 607565 milliseconds\\n",
...          "[rank4]:[E625 13:00:02.500000000 ProcessGroupNCCL.cpp:632] [Rank 4] Watchdog caught "
...          "collective operation timeout: WorkNCCL(SeqNum=33, OpType=ALLREDUCE)\\n"]
>>> context = Context("x.log")
>>> matcher = Matcher(context)
>>> for number, line in enumerate(lines, start=1):
...     matcher.take(number, line)
>>> matcher.finish()
>>> [(row.line, row.value["event"], row.value["cause"], row.value["time"] % 3600) for row in matcher.out]
[(3, 'failure', 'nccl_timeout', 2.5)]
>>> context.notes["inferred_times"], context.notes["coalesced_failures"]
(0, 1)
"""

from __future__ import annotations

import math
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ckptcalc.errors import CkptError, InputError
from ckptcalc.logs.adapter import Bad, Broken, Context, Header, Row, Stamp, step_number

#: The raw events a pattern may give: those of the framework adapters (ckptcalc.logs.adapter).
EVENTS = ("attempt_start", "progress", "checkpoint_start", "checkpoint_end", "persist_end", "load_start", "load_end",
          "failure", "run_end")  # fmt: skip

#: The named groups a pattern may hold.
GROUPS = ("time", "step", "duration", "cause", "rank")

#: Failures within this many seconds of the first are reports of the same failure (by other ranks,
#: or by the launcher after the worker): one failure, the others counted.
COALESCE_S = 60.0

#: Lines kept to find the nearest earlier stamp of a line without one.
LOOKBACK = 256

#: Events held while no line has given a time (then placed at the first time given).
HELD = 10_000

#: The largest pattern file read: a few kilobytes.
MAX_BYTES = 2**20


@dataclass(frozen=True)
class Pattern:
    """One kind of line and the raw event it gives.

    ``name`` labels it in messages (``nccl_timeout``; ``pattern 3`` for a user's); ``search`` finds it
    in a line (a compiled expression's ``search``); ``named`` are its named captures; ``words``: one of
    them is in every line it matches (the library's quick test; empty: always tried); ``fields`` are
    fixed fields of its event (a cause, ``async``); ``read_by``: the adapters that read these lines
    themselves; ``instant``: a save the log says once (its start and end at that line); ``part``: a
    part of the save under way, whose duration adds to the save's.
    """

    name: str
    event: str
    search: Callable[[str], Any]
    named: frozenset[str] = frozenset()
    words: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    read_by: frozenset[str] = frozenset()
    time_format: str | None = None
    instant: bool = False
    part: bool = False
    last_stamp: bool = False  # the line's time is its last stamp (an accounting row's end)


def _builtin(name: str, event: str, regex: str, words: Sequence[str], read_by: Iterable[str] = (),
             **options: Any) -> Pattern:  # fmt: skip
    compiled = re.compile(regex)
    fields = dict(options.pop("fields", {}))
    return Pattern(name, event, compiled.search, frozenset(compiled.groupindex), tuple(words), fields,
                   frozenset(read_by), **options)  # fmt: skip


_AGENT = ("torchelastic", "torchtitan")
_STEP_PATH = r"(?:checkpoint-|global_step|step=|step_|step-)(?P<step>\d+)"

#: The library, in the order tried on a line (the first that matches gives its event).
LIBRARY: tuple[Pattern, ...] = (
    # -- failures
    _builtin(
        "nccl_timeout",
        "failure",
        r"Watchdog caught collective operation timeout",
        ["Watchdog caught"],
        fields={"cause": "nccl_timeout"},
    ),
    _builtin(
        "nccl_abort",
        "failure",
        r"ProcessGroupNCCL.*?(?:taking the entire process down|[Aa]borting|watchdog got stuck)"
        r"|(?:NCCL|[Pp]rocess group) watchdog thread terminated with exception",
        ["ProcessGroupNCCL", "watchdog thread terminated"],
        fields={"cause": "nccl_abort"},
    ),
    _builtin(
        "cuda_oom",
        "failure",
        r"(?:torch\.cuda\.)?OutOfMemoryError: CUDA out of memory|CUDA out of memory\.",
        ["CUDA out of memory"],
        fields={"cause": "cuda_oom"},
    ),
    _builtin("cuda_error", "failure", r"CUDA error: (?!out of memory)", ["CUDA error"], fields={"cause": "cuda_error"}),
    _builtin("xid", "failure", r"NVRM: Xid \([^)]*\): (?P<cause>\d+)", ["NVRM: Xid"], fields={"prefix": "xid"}),
    _builtin(
        "oom_kill",
        "failure",
        r"(?:Out of memory|Memory cgroup out of memory): Killed process|\boom-kill:|oom_reaper: reaped process",
        ["Out of memory", "out of memory", "oom-kill", "oom_reaper"],
        fields={"cause": "oom_kill"},
    ),
    _builtin(
        "agent_exit",
        "failure",
        r"failed \(exitcode: (?P<cause>-?\d+)\) local_rank",
        ["exitcode"],
        _AGENT,
        fields={"exit": True},
    ),
    _builtin(
        "agent_signal", "failure", r"Received (?:Signals\.)?(?P<cause>SIG[A-Z]+) death signal", ["death signal"], _AGENT
    ),
    _builtin("signal", "failure", r"Signal \d+ \((?P<cause>SIG[A-Z]+)\) received by PID", ["received by PID"]),
    _builtin(
        "srun_killed",
        "failure",
        r"srun: error: \S+: tasks? [\d,\-]+: (?P<cause>Killed|Terminated)\b",
        ["srun: error"],
        fields={"signal": True},
    ),
    _builtin(
        "slurm_cancelled",
        "failure",
        r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT (?P<time>\S+)(?: DUE TO (?P<cause>TIME LIMIT|PREEMPTION|"
        r"NODE FAILURE))?",
        ["CANCELLED AT"],
        fields={"slurm": True},
    ),
    _builtin(
        "slurm_node_fail",
        "failure",
        r"srun: error: Node failure on \S+|slurmstepd: error: .*NODE_FAIL",
        ["Node failure", "NODE_FAIL"],
        fields={"cause": "NODE_FAIL"},
    ),
    _builtin(
        "slurm_state",
        "failure",
        r"^\s*\d+(?:[_.+]\S*)?\s+(?:\S+\s+)*?(?P<cause>NODE_FAIL|CANCELLED|TIMEOUT|OUT_OF_MEMORY|PREEMPTED|FAILED)"
        r"(?:\+|\s|$)",
        ["NODE_FAIL", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "PREEMPTED", "FAILED"],
        last_stamp=True,
    ),
    _builtin(
        "pod_restart",
        "failure",
        r"Back-off restarting failed container|\b(?P<cause>OOMKilled|CrashLoopBackOff)\b",
        ["Back-off restarting", "OOMKilled", "CrashLoopBackOff"],
        fields={"pod": True},
    ),
    _builtin(
        "megatron_sigterm",
        "failure",
        r"\[exiting program after receiving SIGTERM\.?\] datetime:",
        ["receiving SIGTERM"],
        ["megatron"],
        fields={"cause": "SIGTERM"},
    ),
    # -- saves and restores
    _builtin(
        "megatron_save",
        "checkpoint_start",
        r"\bsaving checkpoint at iteration\s+(?P<step>\d+)",
        ["saving checkpoint at"],
        ["megatron"],
    ),
    _builtin(
        "megatron_saved",
        "checkpoint_end",
        r"(?i:successfully saved checkpoint) (?:from|at) iteration\s+"
        r"(?P<step>\d+)",
        ["saved checkpoint"],
        ["megatron"],
    ),
    _builtin(
        "megatron_load",
        "load_start",
        r"\bloading (?:distributed )?checkpoint from .* at iteration\s+"
        r"(?P<step>\d+)",
        ["loading"],
        ["megatron"],
    ),
    _builtin(
        "megatron_loaded",
        "load_end",
        r"successfully loaded checkpoint from .* at iteration\s+(?P<step>\d+)",
        ["loaded checkpoint"],
        ["megatron"],
    ),
    _builtin(
        "megatron_start", "attempt_start", r"\[after megatron is initialized\] datetime:", ["megatron is"], ["megatron"]
    ),
    _builtin("megatron_done", "run_end", r"\[after training is done\] datetime:", ["training is done"], ["megatron"]),
    _builtin(
        "megatron_exit",
        "run_end",
        r"\[exiting program (?:at iteration \d+|after [\d.]+ minutes)\] datetime:",
        ["exiting program"],
    ),
    _builtin("nemo_save", "checkpoint_start", r"Checkpoint save for step (?P<step>\d+) started", ["Checkpoint save"]),
    # Megatron's adapter reads this line after NeMo's "Global Checkpoint Save" line; here it ends the stall
    # of a save the line above began (another is passed over as a duplicate).
    _builtin(
        "nemo_scheduled",
        "checkpoint_end",
        r"Scheduled async checkpoint save for ",
        ["Scheduled async"],
        fields={"async": True},
    ),
    _builtin(
        "nemo_persisted",
        "persist_end",
        r"Async checkpoint save for step (?P<step>\d+) .*finalized successfully",
        ["finalized successfully"],
    ),
    _builtin(
        "deepspeed_save",
        "checkpoint_start",
        rf"Saving model checkpoint: \S*?{_STEP_PATH}",
        ["Saving model checkpoint:"],
    ),
    _builtin(
        "deepspeed_saved",
        "checkpoint_end",
        r"\[Torch\] Checkpoint (?:\S*?global_step(?P<step>\d+)|\S+) is "
        r"ready now",
        ["is ready now"],
    ),
    _builtin(
        "hf_save", "checkpoint_start", rf"Saving model checkpoint to \S*?{_STEP_PATH}", ["Saving model checkpoint to"]
    ),
    _builtin(
        "hf_saved", "checkpoint_end", r"Model weights saved in \S*?checkpoint-(?P<step>\d+)", ["Model weights saved"]
    ),
    _builtin("accelerate_save", "checkpoint_start", rf"Saving current state to \S*?{_STEP_PATH}", ["Saving current"]),
    _builtin("accelerate_saved", "checkpoint_end", r"Random states saved in", ["Random states saved"]),
    _builtin(
        "hf_load",
        "load_start",
        rf"Loading (?:model|states) from \S*?{_STEP_PATH}",
        ["Loading model from", "Loading states from"],
    ),
    _builtin(
        "hf_loaded",
        "load_end",
        r"Continuing training from global step (?P<step>\d+)|All random states loaded "
        r"successfully",
        ["Continuing training from", "states loaded successfully"],
    ),
    _builtin(
        "lightning_save",
        "checkpoint_end",
        r"global step (?P<step>\d+): .* saving model to ",
        ["saving model to"],
        instant=True,
    ),
    _builtin(
        "lightning_load",
        "load_start",
        rf"Restoring states from the checkpoint path at \S*?(?:{_STEP_PATH})?",
        ["Restoring states"],
    ),
    _builtin("lightning_loaded", "load_end", r"Restored all states from the checkpoint", ["Restored all states"]),
    _builtin(
        "torchtune_save",
        "checkpoint_start",
        r"Saving checkpoint\. This may take some time\.",
        ["This may take some time"],
    ),
    _builtin(
        "torchtune_part",
        "checkpoint_start",
        r"Getting (?:full )?(?:model|optimizer) state dict(?:\.\.\.)? "
        r"took (?P<duration>\d+(?:\.\d+)?) secs",
        ["state dict"],
        part=True,
    ),
    # A shard written: part of the save, which ends at "Saving checkpoint took" (or, in versions that do
    # not say it, at the last shard, see Matcher._close).
    _builtin(
        "torchtune_shard",
        "checkpoint_start",
        r"(?:Model|Adapter|Recipe) checkpoint of size .* saved to ",
        ["saved to"],
        part=True,
    ),
    _builtin(
        "torchtune_saved",
        "checkpoint_end",
        r"Saving checkpoint took (?P<duration>\d+(?:\.\d+)?) secs",
        ["Saving checkpoint took"],
    ),
    _builtin(
        "orbax_save", "checkpoint_start", r"Saving checkpoint at step (?P<step>\d+)", ["Saving checkpoint at"], ["absl"]
    ),
    _builtin(
        "orbax_blocking",
        "checkpoint_end",
        r"Finished blocking save(?:\. Time taken:| in) (?P<duration>\d+(?:\.\d+)?)",
        ["Finished blocking save"],
        ["absl"],
        fields={"async": True},
    ),
    _builtin(
        "orbax_future",
        "persist_end",
        r"ChainedFuture completed \d+/\d+ futures in (?P<duration>\d+(?:\.\d+)?) seconds",
        ["ChainedFuture completed"],
        ["absl"],
    ),
    _builtin(
        "orbax_async",
        "persist_end",
        r"Finished async_?save|\[async\] Finished save in",
        ["Finished async", "Finished save in"],
        ["absl"],
    ),
    _builtin(
        "orbax_synchronous",
        "checkpoint_end",
        r"Finished synchronous save|\[sync\] Finished save in "
        r"(?P<duration>\d+(?:\.\d+)?) seconds",
        ["Finished synchronous", "Finished save in"],
        ["absl"],
    ),
    _builtin(
        "torchtitan_save",
        "checkpoint_start",
        r"Saving the checkpoint(?: \(or staging if async is enabled\))?\.",
        ["Saving the checkpoint"],
        ["torchtitan"],
    ),
    _builtin(
        "torchtitan_saved",
        "checkpoint_end",
        r"Finished saving the checkpoint .*?in (?P<duration>\d+(?:\.\d+)?) "
        r"seconds",
        ["Finished saving the checkpoint"],
        ["torchtitan"],
    ),
    _builtin(
        "torchtitan_load",
        "load_start",
        r"Loading the checkpoint at step (?P<step>\d+)",
        ["Loading the checkpoint"],
        ["torchtitan"],
    ),
    _builtin(
        "torchtitan_loaded",
        "load_end",
        r"Finished loading the checkpoint in (?P<duration>\d+(?:\.\d+)?) "
        r"seconds",
        ["Finished loading the checkpoint"],
        ["torchtitan"],
    ),
)

#: The blocks of several lines the library reads: their first line's words.
_CHILD_FAILED = "errors.ChildFailedError:"
_POD_TERMINATED = re.compile(r"^\s*Last State:\s+Terminated\b")


def _any_of(words: Iterable[str]) -> re.Pattern[str]:
    """An expression that finds any of ``words``, factored as a tree of their letters: at each position of
    a line the search tries the few letters words start with, not every word (twice as fast).

    >>> [bool(_any_of(["Saving the", "Saved", "Watchdog"]).search(text)) for text in ("a Saved b", "Sav")]
    [True, False]
    """
    tree: dict[str, Any] = {}
    for word in words:
        node = tree
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def branch(node: dict[str, Any]) -> str:
        if "" in node:
            return ""  # a word ends here: a longer one adds nothing to the search
        parts = [re.escape(char) + branch(node[char]) for char in sorted(node)]
        return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"

    return re.compile(branch(tree))


#: Every word of the library: a line with none of them holds no library line (one search a line).
_WORDS = _any_of({word for pattern in LIBRARY for word in pattern.words} | {_CHILD_FAILED, "Last State:"})


def library_for(host: str | None) -> tuple[Pattern, ...]:
    """The library's patterns that add to a log read by ``host`` (None: all of them)."""
    return tuple(pattern for pattern in LIBRARY if host is None or host not in pattern.read_by)


# ---------------------------------------------------------------- a line's time

_MONTHS = {name: number for number, name in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}  # fmt: skip
_MONTH = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_ISO = re.compile(
    r"(?<!\d)(\d{4})-(\d\d)-(\d\d)[ T_](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(?: ?(Z|UTC|[+-]\d\d:?\d\d)(?![\d:]))?"
)
_RFC2822 = re.compile(rf"(?<!\d)(\d{{1,2}}) {_MONTH} (\d{{4}}) (\d\d):(\d\d):(\d\d) ?([+-]\d{{4}}|GMT|UTC)?")
_US_DATE = re.compile(r"(?<!\d)(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d)")
_DMESG = re.compile(rf"{_MONTH} +(\d{{1,2}}) (\d\d):(\d\d):(\d\d) (\d{{4}})(?!\d)")
_PREFIX = re.compile(r"^[\s`]*(?:(?:\[(?:rank|default)\d+\]:|\d+: )\s*)*")
_SYSLOG = re.compile(rf"{_MONTH} +(\d{{1,2}}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?\b")
# glog's month is two digits (I0625), PyTorch's C++ logging's one or two (E430 for 30 April).
_GLOG = re.compile(r"(?:^|(?<=[\s\[\]:`|]))[DIWEF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?=[\s\]])")
_DAYTIME = re.compile(r"(\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(?=[\s\]|])")


def _fraction(digits: str | None) -> float:
    return int(digits[:6].ljust(6, "0")) / 1e6 if digits else 0.0


def _zone(text: str | None) -> Any:
    from datetime import timezone

    if text is None:
        return None
    if text in ("Z", "UTC", "GMT"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))


class LineClock:
    """The time a line says, in any of the forms the library knows (see the module's docstring); stamps
    without a year take the context's (and move on to the next year when the months go back), a time of
    day alone takes the date of the file's modification time (or today)."""

    def __init__(self, context: Context, *, counted: bool = True) -> None:
        self.context, self.counted = context, counted  # counted: naive stamps counted in the context's notes
        self.year: int | None = None
        self.dated: int | None = None  # the year of the first line read with a full date
        self.month = 0
        self.day: datetime | None = None  # the date of times of day, once needed
        self.last_day_s = -1.0

    def stamp(self, text: str, *, last: bool = False) -> float | None:
        """The time ``text`` holds, as seconds since 1970, or None; raises ValueError for an impossible date.
        ``last``: the last ISO stamp of the line rather than the first (an accounting row's end)."""
        if "-" in text:
            if last:
                every = list(_ISO.finditer(text))
                found = every[-1] if every else None
            else:
                found = _ISO.search(text)
            if found is not None:
                year, month, day, hour, minute, second = (int(part) for part in found.group(1, 2, 3, 4, 5, 6))
                moment = datetime(year, month, day, hour, minute, second)
                self.dated = self.dated or year
                return self._seconds(moment, _fraction(found[7]), _zone(found[8]))
        if ":" not in text:
            return None
        us = _US_DATE.search(text) if "/" in text else None
        if us is not None:
            month, day, year, hour, minute, second = (int(part) for part in us.group(1, 2, 3, 4, 5, 6))
            self.dated = self.dated or year
            return self._seconds(datetime(year, month, day, hour, minute, second), 0.0, None)
        rfc = _RFC2822.search(text)
        if rfc is not None:
            day, month, year = int(rfc[1]), _MONTHS[rfc[2]], int(rfc[3])
            moment = datetime(year, month, day, int(rfc[4]), int(rfc[5]), int(rfc[6]))
            return self._seconds(moment, 0.0, _zone(rfc[7] if rfc[7] is None or rfc[7][0] in "+-" else "UTC"))
        dmesg = _DMESG.search(text)
        if dmesg is not None:
            moment = datetime(int(dmesg[6]), _MONTHS[dmesg[1]], int(dmesg[2]), int(dmesg[3]), int(dmesg[4]),
                              int(dmesg[5]))  # fmt: skip
            return self._seconds(moment, 0.0, None)
        start = _PREFIX.match(text)
        rest = text[start.end() :] if start is not None else text
        syslog = _SYSLOG.match(rest)
        if syslog is not None:
            month = _MONTHS[syslog[1]]
            return self._yearless(month, int(syslog[2]), syslog.group(3, 4, 5), syslog[6])
        glog = _GLOG.search(text)
        if glog is not None:
            return self._yearless(int(glog[1]), int(glog[2]), glog.group(3, 4, 5), glog[6])
        daytime = _DAYTIME.match(rest)
        if daytime is not None:
            return self._daytime(daytime)
        return None

    def _seconds(self, moment: datetime, fraction: float, zone: Any) -> float:
        if zone is not None:
            return moment.replace(tzinfo=zone).timestamp() + fraction
        if not self.counted:  # another adapter reads (and counts) the same lines' stamps
            return moment.replace(tzinfo=self.context.tz or UTC).timestamp() + fraction
        return float(self.context.stamp(moment)) + fraction

    def _yearless(self, month: int, day: int, clock: Sequence[str], fraction: str | None) -> float:
        if self.year is None:
            # --year, else the year of the log's own dated lines, else the file's
            self.year = self.dated if self.context.year is None and self.dated is not None else self.context.the_year()
        elif month < self.month:
            self.year += 1  # the log went on past New Year
        self.month = month
        hour, minute, second = (int(part) for part in clock)
        moment = datetime(self.year, month, day, hour, minute, second)
        return self._seconds(moment, _fraction(fraction), None)

    def _daytime(self, found: re.Match[str]) -> float:
        if self.day is None:
            year = self.context.the_year()  # says where the date comes from
            if self.context.mtime is not None:
                day = datetime.fromtimestamp(self.context.mtime, self.context.tz or UTC)
            else:
                day = datetime.now(self.context.tz or UTC)
            self.day = datetime(year, day.month, day.day)
        hour, minute, second = int(found[1]), int(found[2]), int(found[3])
        seconds = self._seconds(self.day + timedelta(hours=hour, minutes=minute, seconds=second), _fraction(found[4]),
                                None)  # fmt: skip
        if seconds < self.last_day_s - 43_200:  # past midnight
            self.day += timedelta(days=1)
            seconds += 86_400
        self.last_day_s = seconds
        return seconds


# ---------------------------------------------------------------- reading lines


def _duration(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        from ckptcalc.inputs.units import parse_duration

        try:
            value = parse_duration(text)
        except CkptError:
            raise ValueError(
                f"cannot read the duration {text[:30]!r}: expected seconds, or a number and a unit"
            ) from None
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"duration {text[:30]!r} is not a finite duration")
    return value


def _cause(pattern: Pattern, found: Any) -> str | None:
    from ckptcalc.logs.torchelastic_format import exit_cause

    fields = pattern.fields
    given = found.group("cause") if "cause" in pattern.named else None
    if given is None:
        if fields.get("slurm"):
            return "CANCELLED"
        if fields.get("pod"):
            return "pod_restart"
        return fields.get("cause")
    if fields.get("exit"):
        return exit_cause(given)
    if fields.get("prefix"):
        return f"{fields['prefix']}{given}"
    if fields.get("signal"):
        return {"Killed": "SIGKILL", "Terminated": "SIGTERM"}[given]
    if fields.get("slurm"):
        return {"TIME LIMIT": "TIMEOUT", "PREEMPTION": "PREEMPTED", "NODE FAILURE": "NODE_FAIL"}[given]
    return str(given)


class _Block:
    """A failure said over several lines: torchrun's ``ChildFailedError`` summary (the root cause's time,
    rank and exit code; the other ranks' failures are coalesced into it), or a pod's terminated state
    in ``kubectl describe`` (its reason, exit code and when it finished)."""

    LINES = 80

    def __init__(self, kind: str, line: int) -> None:
        self.kind, self.line = kind, line
        self.seen = 0
        self.entries: list[dict[str, str]] = []
        self.root: dict[str, str] | None = None
        self.in_root = False
        self.done = False

    def take(self, text: str) -> None:
        self.seen += 1
        body = _PREFIX.sub("", text).strip()
        if self.kind == "pod":
            key, _, value = body.partition(":")
            key = key.strip()
            if key in ("Reason", "Exit Code", "Finished", "Started"):
                (self.root or self._new())[key] = value.strip()
            elif key in ("Ready", "Restart Count", "Environment", "Mounts") or self.seen > 8:
                self.done = True
            return
        if body.startswith("Root Cause"):
            self.in_root = True
        elif re.fullmatch(r"\[\d+\]:", body):
            entry = self._new()
            if self.in_root and self.root is None:
                self.root = entry
        elif set(body) == {"="} and self.root is not None and len(self.root) > 1:
            self.done = True
        elif ":" in body and self.entries:
            key, _, value = body.partition(":")
            self.entries[-1].setdefault(key.strip(), value.strip())
        if self.seen > self.LINES:
            self.done = True

    def _new(self) -> dict[str, str]:
        entry: dict[str, str] = {}
        self.entries.append(entry)
        if self.kind == "pod":
            self.root = entry
        return entry

    def failure(self) -> tuple[str | None, str, int]:
        """The failure's time as written (None: not said), its cause, and how many other reports it stands for."""
        from ckptcalc.logs.torchelastic_format import exit_cause

        if self.kind == "pod":
            entry = self.root or {}
            reason = entry.get("Reason", "")
            code = entry.get("Exit Code", "")
            cause = reason if reason and reason != "Error" else (exit_cause(code) if code else "pod_restart")
            return entry.get("Finished"), cause, 0
        entry = self.root or (self.entries[0] if self.entries else {})
        code = entry.get("exitcode", "").split(" ")[0]
        others = sum(1 for one in self.entries if one is not entry and "time" in one)
        return entry.get("time"), exit_cause(code) if code else "child_failed", others


class Matcher:
    """Reads lines one at a time with the user's patterns (``context.patterns``) and the library's (those
    not read by ``host``), and gives their raw events in :attr:`out` (rows, and bad rows), in order."""

    def __init__(self, context: Context, host: str | None = None) -> None:
        self.context, self.host = context, host
        self.dating = context.year is None  # the year of the log's dated lines is still to be read
        self.user: tuple[Pattern, ...] = tuple(context.patterns)
        self.library = library_for(host)
        self.clock = LineClock(context, counted=host is None)
        self.recent: deque[str] = deque(maxlen=LOOKBACK)
        self.known: float | None = None  # the latest stamp read
        self.block: _Block | None = None
        self.out: list[Row | Bad] = []
        self.floor = -math.inf  # the latest event's time
        self.failure: float | None = None  # the latest failure kept
        self.save: dict[str, Any] | None = None  # the save under way: start, inferred, parts, step
        self.closed: Any = None  # the step of the latest save ended
        # A failure timed by an earlier line waits for the next line that gives a time: a failure said before
        # it is the same failure (its time, if it has one, stands for both); any other, and it is settled.
        self.pending: tuple[int, float, dict[str, Any]] | None = None
        self.persisting = False  # an asynchronous save ended its stall and is not durable yet
        self.untimed: list[tuple[int, dict[str, Any]]] = []  # events before any time was given
        self.first_untimed: tuple[int, str] | None = None
        self.matched: dict[str, int] = {}  # lines each pattern matched

    # -- time

    def time_of(self, text: str, *, last: bool = False) -> tuple[float | None, bool]:
        """A line's time and whether it was inferred (the nearest earlier stamp); None when no line gave one."""
        own = self.clock.stamp(text, last=last)
        if own is not None:
            self.known = own
            self.recent.clear()
            return own, False
        for earlier in reversed(self.recent):
            try:
                found = self.clock.stamp(earlier)
            except ValueError:
                continue
            if found is not None:
                self.known = found
                break
        self.recent.clear()
        return self.known, True

    # -- input

    def take(self, number: int, line: str) -> None:
        text = line.rstrip("\r\n")
        if self.block is not None:
            self.block.take(text)
            if self.block.done:
                self._end_block()
            return
        for pattern in self.user:
            found = pattern.search(text)
            if found is not None:
                self._found(number, text, pattern, found)
                return
        if self.dating and "-" in text:
            found = _ISO.search(text)  # until the log's year is known: its glog stamps take it
            if found is not None:
                self.clock.dated, self.dating = int(found[1]), False
        if _WORDS.search(text) is None:
            self._passed(text)
            return
        if _CHILD_FAILED in text:
            self._start_block("child", number, text)
            return
        if _POD_TERMINATED.match(text):
            self._start_block("pod", number, text)
            return
        for pattern in self.library:
            if pattern.words and not any(word in text for word in pattern.words):
                continue
            found = pattern.search(text)
            if found is not None:
                self._found(number, text, pattern, found)
                return
        self._passed(text)

    def _passed(self, text: str) -> None:
        """A line that is no event: kept to time the next line without a time; and the failure waiting
        for a time is settled when this line gives one."""
        self.recent.append(text)
        if self.pending is not None:
            try:
                stamped = self.clock.stamp(text) is not None
            except ValueError:
                stamped = False
            if stamped:
                self._settle()

    def _start_block(self, kind: str, number: int, text: str) -> None:
        self.matched["child_failed" if kind == "child" else "pod_terminated"] = (
            self.matched.get("child_failed" if kind == "child" else "pod_terminated", 0) + 1
        )
        self.recent.append(text)
        self.block = _Block(kind, number)

    def _end_block(self) -> None:
        block, self.block = self.block, None
        assert block is not None
        written, cause, others = block.failure()
        try:
            if written is not None:
                t: float | None
                if block.kind == "pod":
                    from email.utils import parsedate_to_datetime

                    try:
                        t = parsedate_to_datetime(written).timestamp()
                    except (TypeError, ValueError):
                        t = self.clock.stamp(written)
                else:
                    t = self.clock.stamp(written)
                inferred = t is None
                if t is None:
                    t, _ = self.time_of("")
                else:
                    self.known = t
                    self.recent.clear()
            else:
                t, inferred = self.time_of("")
        except ValueError as error:
            self.out.append(Bad(block.line, str(error)))
            return
        self.context.notes["coalesced_failures"] += others
        self._event(block.line, t, inferred, {"event": "failure", "cause": cause}, f"line {block.line}")

    def _found(self, number: int, text: str, pattern: Pattern, found: Any) -> None:
        self.matched[pattern.name] = self.matched.get(pattern.name, 0) + 1
        named = pattern.named
        try:
            t: float | None
            if "time" in named and found.group("time") is not None:
                t, inferred = self._group_time(pattern, found.group("time")), False
                self.known = t  # the nearest stamp is now this line's
                self.recent.clear()
            else:
                t, inferred = self.time_of(text, last=pattern.last_stamp)
            record: dict[str, Any] = {"event": pattern.event}
            if "step" in named and found.group("step") is not None:
                record["step"] = step_number(found.group("step"))
            if "duration" in named and found.group("duration") is not None:
                record["duration"] = _duration(found.group("duration"))
            if pattern.event == "failure":
                cause = _cause(pattern, found)
                if cause is not None:
                    record["cause"] = cause
            elif "cause" in named and found.group("cause") is not None:
                record["cause"] = found.group("cause")
            for key in ("async", "level"):
                if key in pattern.fields:
                    record[key] = pattern.fields[key]
        except ValueError as error:
            self.out.append(Bad(number, str(error)))
            return
        self._event(number, t, inferred, record, text, pattern)

    def _group_time(self, pattern: Pattern, text: str) -> float:
        if pattern.time_format is not None:
            try:
                moment = datetime.strptime(text.strip(), pattern.time_format)
            except ValueError:
                raise ValueError(
                    f"cannot read the time {text[:40]!r}: expected the format {pattern.time_format!r}"
                ) from None
            if moment.tzinfo is not None:
                return moment.timestamp()
            if "%Y" not in pattern.time_format and "%y" not in pattern.time_format:
                moment = moment.replace(year=self.context.the_year())
            return float(self.context.stamp(moment))
        seconds = self.clock.stamp(text)
        if seconds is None:
            raise ValueError(f"cannot read the time {text[:40]!r}: give the pattern a time_format")
        return seconds

    # -- output

    def _event(self, number: int, t: float | None, inferred: bool, record: dict[str, Any], text: str,
               pattern: Pattern | None = None) -> None:  # fmt: skip
        if t is None:
            if self.first_untimed is None:
                self.first_untimed = (number, text)
            if len(self.untimed) < HELD:
                self.untimed.append((number, {**record, "_pattern": pattern}))
            return
        if self.untimed:
            held, self.untimed = self.untimed, []
            for line, early in held:
                self._place(line, t, True, early, early.pop("_pattern"))
        self._place(number, t, inferred, record, pattern)

    def _place(self, number: int, t: float, inferred: bool, record: dict[str, Any], pattern: Pattern | None) -> None:
        event = record["event"]
        duration = record.pop("duration", None)
        if pattern is not None and pattern.part:
            if self.save is not None:
                self.save["parts"] += duration or 0.0
                self.save["last"] = (number, t)
            return
        if self.save is not None and "last" in self.save and event not in ("checkpoint_end", "checkpoint_start"):
            self._close()
        if self.pending is not None:
            if event == "failure" and inferred:
                self.context.notes["coalesced_failures"] += 1  # timed by the same earlier line
                return
            if event == "failure":
                self.pending = None  # this line's time stands for both
                self.context.notes["coalesced_failures"] += 1
            else:
                self._settle()
        if event == "failure" and inferred and not (self.failure is not None and 0 <= t - self.failure <= COALESCE_S):
            self.pending = (number, t, record)
            return
        if event == "failure":
            if self.failure is not None and t - self.failure <= COALESCE_S:
                self.context.notes["coalesced_failures"] += 1
                return
            self.failure = t
            self.save = None
        if inferred and self.host is None:  # in another adapter's log, mixed() counts the ones it keeps
            self.context.notes["inferred_times"] += 1
        if event == "checkpoint_start":
            if self.save is not None and self.save.get("step") == record.get("step"):
                return  # another rank's, or another line's, start of the same save
            self.save = {"start": max(t, self.floor), "inferred": inferred, "parts": 0.0, "step": record.get("step")}
        elif event == "checkpoint_end":
            if pattern is not None and pattern.instant:
                self._emit(number, t, {"event": "checkpoint_start", **{k: v for k, v in record.items() if k == "step"}})
            elif self.save is None:
                if duration is None or record.get("step", self.closed) == self.closed:
                    # another line's end of the save just ended (a shard, a commit), or one whose start is unknown
                    self.context.notes["duplicates" if record.get("step", self.closed) == self.closed
                                       else "unmatched_ends"] += 1  # fmt: skip
                    return
                self._emit(number, t - duration, {"event": "checkpoint_start",
                                                  **{k: v for k, v in record.items() if k == "step"}})  # fmt: skip
            else:
                elapsed = duration if duration is not None else self.save["parts"]
                if inferred or self.save["inferred"]:
                    t = max(t, self.save["start"] + elapsed)
                if "step" not in record and self.save.get("step") is not None:
                    record["step"] = self.save["step"]
            self.closed, self.save = record.get("step"), None
            self.persisting = bool(record.get("async"))
        elif event == "persist_end":
            if not self.persisting:
                self.context.notes["duplicates"] += 1  # another line saying the same save is durable
                return
            self.persisting = False
        elif event == "load_end" and duration is not None and inferred:
            t = max(t, self.floor + duration)
        self._emit(number, t, record, inferred)

    def _close(self) -> None:
        """End the save under way at its last part, for logs that never say it ended (older torchtune)."""
        assert self.save is not None
        number, t = self.save["last"]
        if self.save["inferred"]:
            t = max(t, self.save["start"] + self.save["parts"])
        step = self.save.get("step")
        self.closed, self.save = step, None
        self._emit(number, t, {"event": "checkpoint_end", **({} if step is None else {"step": step})})

    def _settle(self) -> None:
        """The failure waiting for its time, at the earlier line's time."""
        assert self.pending is not None
        number, t, record = self.pending
        self.pending = None
        if self.host is None:
            self.context.notes["inferred_times"] += 1
        self.failure, self.save = max(t, self.floor), None
        self._emit(number, t, record, True)

    def _emit(self, number: int, t: float, record: dict[str, Any], inferred: bool = False) -> None:
        t = max(t, self.floor)
        self.floor = t
        row = Row(number, {"time": Stamp(t), **record})
        if inferred and self.host is not None:
            row.value["inferred"] = True  # for mixed(), which takes it out
        self.out.append(row)

    def finish(self) -> None:
        """The end of the lines: a block under way is ended; events no line gave a time for are an error."""
        if self.block is not None:
            self._end_block()
        if self.pending is not None:
            self._settle()
        if self.save is not None and "last" in self.save:
            self._close()
        if self.untimed and self.first_untimed is not None:
            failures = sum(1 for _, record in self.untimed if record["event"] == "failure")
            others = len(self.untimed) - failures
            what = f"{failures} failure{'s' * (failures != 1)}" if failures else ""
            if others:
                what += f"{' and ' if what else ''}{others} other event{'s' * (others != 1)}"
            line, text = self.first_untimed
            raise Broken(
                f"{what} recognised (first: {text.strip()[:60]!r}) but no line gives a time: a log with its times "
                "(sacct --format=JobID,Start,End,State; kubectl get events) is needed, or a time group in "
                "{patterns}",
                line,
            )


def mixed(rows: Iterable[Row | Bad | Header], matcher: Matcher) -> Iterator[Row | Bad | Header]:
    """A framework adapter's ``rows`` with the events :class:`Matcher` finds in the same lines (those the
    adapter does not read), merged in time order. A failure within :data:`COALESCE_S` of the one before,
    one of the two found by the matcher, is the same failure (counted). A failure the matcher timed by an
    earlier line waits for the adapter's next rows: when the adapter reports a failure of its own within
    :data:`COALESCE_S`, that one, with its own time, stands for both."""
    found = matcher.out
    last = -math.inf
    failure: tuple[float, bool] | None = None  # the latest failure kept, and whether the matcher found it
    waiting: Row | None = None  # the matcher's failure with an inferred time
    held: list[tuple[Row | Bad, bool, bool]] = []  # what came after it: whether the matcher found it, and timed it

    def emit(row: Row | Bad, ours: bool) -> Iterator[Row | Bad]:
        nonlocal last, failure
        if isinstance(row, Bad):
            yield row
            return
        t = float(row.value["time"])
        if ours and t < last:
            row.value["time"] = Stamp(last)
            t = last
        if row.value["event"] == "failure":
            if failure is not None and 0 <= t - failure[0] <= COALESCE_S and (ours or failure[1]):
                matcher.context.notes["coalesced_failures"] += 1
                return
            failure = (t, ours)
        last = max(last, t)
        yield row

    def flush() -> Iterator[Row | Bad]:
        nonlocal waiting
        if waiting is not None:
            first, waiting = waiting, None
            matcher.context.notes["inferred_times"] += 1
            yield from emit(first, True)
        rest = held[:]
        held.clear()
        for row, ours, inferred in rest:
            matcher.context.notes["inferred_times"] += inferred
            yield from emit(row, ours)

    def take(row: Row | Bad, ours: bool) -> Iterator[Row | Bad]:
        nonlocal waiting
        inferred = ours and isinstance(row, Row) and bool(row.value.pop("inferred", False))
        if waiting is not None and isinstance(row, Row):
            t, since = float(row.value["time"]), float(waiting.value["time"])
            if not ours and row.value["event"] == "failure" and t - since <= COALESCE_S:
                matcher.context.notes["coalesced_failures"] += 1
                waiting = None  # the adapter's own report, with its own time, stands for both
                yield from flush()
                yield from emit(row, ours)
                return
            if t > since + COALESCE_S:
                yield from flush()
            else:
                held.append((row, ours, inferred))
                return
        if inferred and isinstance(row, Row):
            if row.value["event"] == "failure" and not (
                failure is not None and 0 <= float(row.value["time"]) - failure[0] <= COALESCE_S
            ):
                yield from flush()
                waiting = row
                return
            matcher.context.notes["inferred_times"] += 1
        yield from emit(row, ours)

    def release(until: float) -> Iterator[Row | Bad]:
        while found:
            first = found[0]
            if isinstance(first, Row) and float(first.value["time"]) >= until:
                return
            found.pop(0)
            yield from take(first, True)

    for item in rows:
        if type(item) is Row:
            value = item.value
            if not found and waiting is None and value["event"] != "failure":  # most rows: as they are
                if value["time"] > last:
                    last = float(value["time"])
                yield item
                continue
            yield from release(float(value["time"]))
            yield from take(item, False)
        elif isinstance(item, Bad):
            yield from take(item, False)
        else:
            yield item
    matcher.finish()
    yield from release(math.inf)
    yield from flush()


def tapped(lines: Iterable[str], matcher: Matcher) -> Iterator[str]:
    """``lines`` as they are, each first read by ``matcher``."""
    take, words, recent = matcher.take, _WORDS.search, matcher.recent
    for number, line in enumerate(lines, start=1):
        # Most lines hold no word of the library and nothing waits on them: kept as they are, in one search.
        if matcher.user or matcher.dating or matcher.block is not None or matcher.pending is not None:
            take(number, line)
        elif words(line) is None:
            recent.append(line)
        else:
            take(number, line)
        yield line


# ---------------------------------------------------------------- what a log's first lines hold


def head_matches(head: Sequence[str], patterns: Sequence[Pattern]) -> dict[str, int]:
    """How many of ``head``'s lines each pattern (the user's, then the library's) matches; blocks count
    by their first line."""
    counts: dict[str, int] = {}
    for line in head:
        text = line.rstrip("\r\n")
        for pattern in (*patterns, *LIBRARY):
            if pattern.words and not any(word in text for word in pattern.words):
                continue
            if pattern.search(text) is not None:
                counts[pattern.name] = counts.get(pattern.name, 0) + 1
                break
        else:
            if _CHILD_FAILED in text:
                counts["child_failed"] = counts.get("child_failed", 0) + 1
            elif _POD_TERMINATED.match(text):
                counts["pod_terminated"] = counts.get("pod_terminated", 0) + 1
    return counts


def nearest(head: Sequence[str], first: int, patterns: Sequence[Pattern]) -> str:
    """The pattern that came closest to a line of ``head`` (whose first line is line ``first``): the
    first line holding a word the library looks for (which no pattern matched), else the first line."""
    for index, line in enumerate(head):
        text = line.strip()
        found = _WORDS.search(text)
        if found is not None:
            word = found.group()
            names = [pattern.name for pattern in LIBRARY if word in pattern.words] or ["child_failed"]
            return (
                f"line {first + index} holds {word!r}, which {names[0]} looks for, but not in its form: {text[:60]!r}"
            )
    if head:
        return f"no line holds a word the library looks for; the first is {head[0].strip()[:60]!r}"
    return "no line"


# ---------------------------------------------------------------- the user's patterns


#: Largest count of a repetition (``a{1000}``) a regular expression may hold, RE2's own limit.
MAX_REPEAT = 1000
# A repetition's counts, after an even number of backslashes (an escaped brace is text).
_REPEAT_RE = re.compile(r"(?<!\\)(?:\\\\)*(?P<repeat>\{(?P<low>\d+)(?:,(?P<high>\d*))?\})")


def linear_pattern(pattern: str, text: str, where: str) -> Any:
    """``pattern`` compiled by RE2 (the ``google-re2`` package), whose matching takes time linear in the
    text whatever the pattern: a user's expression on a log's text can never hang the reading. RE2 reads
    Python's syntax but for backreferences and lookaround; a pattern it cannot compile (one of those, or
    a repetition above 1000) is an error naming ``where``, quoting ``text``."""
    import re2

    # RE2 takes a count it cannot hold as literal text (a{99999999999} would match "a{99999999999}"):
    # refuse it as it refuses a{1001}.
    for repeat in _REPEAT_RE.finditer(pattern):
        if any(
            len(count.lstrip("0")) > 4 or int(count) > MAX_REPEAT for count in (repeat["low"], repeat["high"] or "0")
        ):
            raise InputError(
                f"cannot read {text!r}: bad regular expression (a repetition above {MAX_REPEAT}: {repeat['repeat']})",
                where=where,
            )
    options = re2.Options()
    options.log_errors = False  # the error is raised, not also printed on stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        reason = error.args[0].decode("utf-8", "replace") if error.args and isinstance(error.args[0], bytes) else error
        raise InputError(
            f"cannot read {text!r}: bad regular expression ({reason}); RE2's syntax, without backreferences "
            "or lookaround",
            where=where,
        ) from None


def load(path: str | os.PathLike[str]) -> tuple[Pattern, ...]:
    """The patterns of a TOML file of ``[[pattern]]`` tables (``event``, ``regex``, optional
    ``time_format``, ``cause``, ``level``), each compiled by RE2 (linear time whatever the expression);
    errors name ``patterns FILE`` and the pattern's number."""
    import tomllib

    from ckptcalc.files import read_regular

    label = os.fspath(path)
    where = f"patterns {label}"
    try:
        data = read_regular(path, label=where, limit=MAX_BYTES, noun="pattern file")
    except CkptError as error:
        raise InputError(error.template, where=error.where) from None
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text (byte {error.start})", where=where) from None
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as error:
        raise InputError(f"invalid TOML: {error}", where=where) from None
    return parse(document, where)


_KEYS = ("event", "regex", "time_format", "cause", "level")


def parse(document: Mapping[str, Any], where: str) -> tuple[Pattern, ...]:
    """The patterns of a parsed pattern file (see :func:`load`).

    >>> [p.event for p in parse({"pattern": [{"event": "failure", "regex": "died at (?P<time>\\\\S+)"}]}, "x")]
    ['failure']
    """
    extra = sorted(set(document) - {"pattern"})
    if extra:
        raise InputError(f"unknown key {extra[0]!r}: expected [[pattern]] tables", where=where)
    tables = document.get("pattern")
    if not isinstance(tables, list) or not tables:
        raise InputError("no [[pattern]] table: each gives an event and a regex", where=where)
    patterns = []
    for number, table in enumerate(tables, start=1):

        def fail(message: str, number: int = number) -> InputError:
            return InputError(f"pattern {number}: {message}", where=where)

        if not isinstance(table, dict):
            raise fail("expected a table")
        unknown = sorted(set(table) - set(_KEYS))
        if unknown:
            raise fail(f"unknown key {unknown[0]!r}: expected {', '.join(_KEYS)}")
        for key in _KEYS:
            if key in table and not isinstance(table[key], str):
                raise fail(f"{key} must be a string")
        event, regex = table.get("event"), table.get("regex")
        if event is None or regex is None:
            raise fail(f"needs {'event' if event is None else 'regex'}")
        if event not in EVENTS:
            raise fail(f"unknown event {event!r}: expected {', '.join(EVENTS)}")
        try:
            compiled = linear_pattern(regex, regex, where)
        except InputError as error:
            raise fail(error.message.replace(f"cannot read {regex!r}: ", "")) from None
        named = frozenset(compiled.groupindex)
        unknown_groups = sorted(named - set(GROUPS))
        if unknown_groups:
            raise fail(f"unknown group {unknown_groups[0]!r}: expected {', '.join(GROUPS)}")
        time_format = table.get("time_format")
        if time_format is not None and "%" not in time_format:
            raise fail(f"time_format {time_format!r} has no % directive: write a strptime format such as "
                       "'%Y-%m-%d %H:%M:%S'")  # fmt: skip
        fields = {key: table[key] for key in ("cause", "level") if key in table}
        patterns.append(Pattern(f"pattern {number}", event, compiled.search, named, (), fields,
                                time_format=time_format))  # fmt: skip
    return tuple(patterns)
