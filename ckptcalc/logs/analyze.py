"""A run's event log, read and split into where its time went (docs/model.md §11).

An event log is any format :mod:`ckptcalc.logs.reader` reads (JSON Lines, CSV, a JSON array;
compressed or not), one event a record, each with a ``time`` and
an ``event``: ``run_start``, ``run_end``, ``checkpoint_start``,
``checkpoint_end`` (optional ``level``, and ``async_persist_end``: when its
persist became durable), ``failure`` (optional ``cause``), ``restart_end``
(training resumes; optional ``resumed_from``: the time of the
``checkpoint_start`` whose state was loaded) and ``progress`` (optional
``step``). Unknown events are skipped and counted.

Every instant between ``run_start`` and ``run_end`` is one of: a *restart*
(from a failure to the next ``restart_end``), a checkpoint *stall* (from a
``checkpoint_start`` to its end, or to a failure that cuts it short), or
work. Work between the checkpoint a restart resumed from and the failure
before it was lost: *rework*. The rest is *useful*.

Logs are read line by line (a long run's log is large), and the consumer here keeps
only the times it needs. Pure apart from reading the file; numpy is
imported by the analysis.

>>> text = "\\n".join([
...     '{"time": 0, "event": "run_start"}',
...     '{"time": 100, "event": "checkpoint_start"}', '{"time": 110, "event": "checkpoint_end"}',
...     '{"time": 160, "event": "failure"}', '{"time": 200, "event": "restart_end", "resumed_from": 100}',
...     '{"time": 300, "event": "run_end"}'])
>>> split = analyze(parse(text.splitlines(), name="run.jsonl", time_unit="s")).realised
>>> [round(v, 3) for v in (split.useful, split.write, split.rework, split.restart)]
[0.667, 0.033, 0.167, 0.133]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.logs import reader
from ckptcalc.logs.reader import MISSING, BadRecord, get_path, text_form
from ckptcalc.simulation import timeline as montecarlo

#: The events the analysis reads; any other value of ``event`` is skipped and counted.
EVENTS = ("run_start", "run_end", "checkpoint_start", "checkpoint_end", "failure", "restart_end", "progress")

#: The level of a checkpoint whose line names none.
DEFAULT_LEVEL = "storage"

#: Checkpoint levels that serve a failure from memory (the in-memory level of the model).
MEMORY_LEVELS = ("memory",)

#: Equal-time batches behind the realised effective time's confidence interval.
BATCHES = 20

#: Student's t at 97.5 % for BATCHES − 1 degrees of freedom.
T_975 = 2.093024054408263

#: Largest time a log may hold, in seconds from its zero (a Unix timestamp is about 1.7e9): far beyond
#: any run, small enough that no sum or product of times overflows.
MAX_TIME = 1e13


@dataclass(frozen=True, slots=True)
class Checkpoint:
    start_s: float
    end_s: float
    level: str
    durable_s: float  # when it became durable: its end, or its persist's end


@dataclass(frozen=True)
class Episode:
    """A failure, any failures during its restart, and the restart that ended it."""

    failure_s: float
    cause: str
    failures: int
    end_s: float | None  # None: the run ended before training resumed
    resumed_from_s: float
    resumed_level: str | None  # the level of the checkpoint resumed from; None: the run's start


@dataclass(frozen=True)
class Timeline:
    """What the reader kept of one log."""

    source: str
    time_kind: str
    start_s: float
    end_s: float
    checkpoints: tuple[Checkpoint, ...]
    cut_short: tuple[tuple[float, float], ...]  # stalls a failure cut short
    episodes: tuple[Episode, ...]
    failure_times_s: tuple[float, ...]  # every failure, those during restarts too
    failure_causes: tuple[str, ...]
    lines: int
    used: int
    unknown: int
    skipped_bad: int
    bad: tuple[str, ...]
    progress: int
    last_step: float | None


# ------------------------------------------------------------------ reading


def read(
    path: str,
    *,
    stdin: Any = None,
    format: str | None = None,
    time_field: str = "time",
    time_unit: str | None = None,
    cause: str = "cause",
    skip_bad: bool = False,
    tz: tzinfo | None = None,
) -> Timeline:
    """Read an event log from a file (``"-"``: ``stdin``) by :func:`ckptcalc.logs.reader.scan`: any format
    it reads (JSON Lines, CSV, a JSON array), compressed or not; ``tz`` places timestamps without a zone."""
    run = _Run(time_field, time_unit, cause, tz)
    counts = reader.scan(path, run, stdin=stdin, format=format, required=("event",), skip_bad=skip_bad, tz=tz)
    return run.timeline(counts)


@dataclass
class _Run:
    """The reader's consumer for a run's event log: the state of the run, one event at a time."""

    time_field: str
    time_unit: str | None
    cause_field: str
    tz: tzinfo | None = None
    clock: reader.Clock = field(init=False)
    start: float | None = None
    end: float | None = None
    last: float = -math.inf
    open: dict[str, float] = field(default_factory=dict)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    cut_short: list[tuple[float, float]] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    failure_times: list[float] = field(default_factory=list)
    failure_causes: list[str] = field(default_factory=list)
    pending: dict[str, Any] | None = None  # the failure whose restart has not ended yet
    progress: int = 0
    last_step: float | None = None
    starts: dict[float, str] = field(default_factory=dict)  # checkpoint start time -> level
    line: int = 0

    def __post_init__(self) -> None:
        self.clock = reader.Clock(self.time_unit, tz=self.tz)

    def time(self, record: dict[str, Any], key: str, required: bool = True) -> float | None:
        value = _given(record, key)
        if value is MISSING:
            if required:
                raise BadRecord(f"no {key!r} field")
            return None
        seconds = self.clock.seconds(value, line=self.line)
        if abs(seconds) > MAX_TIME:
            raise BadRecord(f"{key} {seconds:g} s is out of range (at most {MAX_TIME:g} s from the log's zero)")
        return seconds

    def fields(self, names: Sequence[str], line: int) -> None:
        pass  # the fields are fixed: time_field, event and those of each event

    def record(self, record: dict[str, Any], line: int) -> bool:
        """Take one line's event: False for an event the analysis does not read."""
        self.line = line
        kind = _given(record, "event")
        if kind is MISSING:
            raise BadRecord("no 'event' field")
        kind = text_form(kind)
        if kind not in EVENTS:
            return False
        t = self.time(record, self.time_field)
        assert t is not None
        if t < self.last:
            raise BadRecord(f"time goes backwards (an earlier line is later by {self.last - t:g} s)")
        if self.start is None and kind != "run_start":
            raise BadRecord(f"{kind} before run_start")
        if self.end is not None:
            raise BadRecord(f"{kind} after run_end")
        self.last = t
        getattr(self, f"_{kind}")(t, record)
        return True

    def _run_start(self, t: float, record: dict[str, Any]) -> None:
        if self.start is not None:
            raise BadRecord("a second run_start")
        self.start = t

    def _run_end(self, t: float, record: dict[str, Any]) -> None:
        self._close_episode(None)
        self.end = t

    def _checkpoint_start(self, t: float, record: dict[str, Any]) -> None:
        level = self._level(record)
        if level in self.open:
            raise BadRecord(f"checkpoint_start while a {level} checkpoint is open")
        self.open[level] = t

    def _checkpoint_end(self, t: float, record: dict[str, Any]) -> None:
        level = self._level(record)
        if level not in self.open:
            raise BadRecord(f"checkpoint_end without a checkpoint_start ({level})")
        start = self.open.pop(level)
        persist = self.time(record, "async_persist_end", required=False)
        if persist is not None and persist < t:
            raise BadRecord("async_persist_end before the checkpoint ended")
        self.checkpoints.append(Checkpoint(start, t, level, t if persist is None else persist))
        self.starts[start] = level

    def _failure(self, t: float, record: dict[str, Any]) -> None:
        for start in self.open.values():
            self.cut_short.append((start, t))
        self.open.clear()
        cause = _given(record, self.cause_field)
        label = "unknown" if cause is MISSING else text_form(cause)
        self.failure_times.append(t)
        self.failure_causes.append(label)
        if self.pending is not None:
            self.pending["failures"] += 1  # a failure during the restart
            return
        self.pending = {"failure": t, "cause": label, "failures": 1}

    def _restart_end(self, t: float, record: dict[str, Any]) -> None:
        if self.pending is None:
            raise BadRecord("restart_end without a failure before it")
        resumed = self.time(record, "resumed_from", required=False)
        if resumed is not None and resumed > self.pending["failure"]:
            raise BadRecord("resumed_from is later than the failure")
        self._close_episode(t, resumed)

    def _progress(self, t: float, record: dict[str, Any]) -> None:
        self.progress += 1
        step = _given(record, "step")
        if step is not MISSING:
            try:
                self.last_step = float(step)
            except (TypeError, ValueError):
                raise BadRecord(f"step {text_form(step)[:20]} is not a number") from None

    def _level(self, record: dict[str, Any]) -> str:
        level = _given(record, "level")
        return DEFAULT_LEVEL if level is MISSING else text_form(level)

    def _close_episode(self, end: float | None, resumed: float | None = None) -> None:
        if self.pending is None:
            return
        failure = self.pending["failure"]
        if resumed is None:
            # Not said: the newest checkpoint durable before the failure (the run's start if none).
            durable = [c for c in self.checkpoints if c.durable_s <= failure]
            newest = max(durable, key=lambda c: c.start_s) if durable else None
            resumed = newest.start_s if newest is not None else (self.start or 0.0)
        level = self.starts.get(resumed)
        if level is None and resumed != self.start:
            level = DEFAULT_LEVEL
        self.episodes.append(Episode(failure, self.pending["cause"], self.pending["failures"], end, resumed, level))
        self.pending = None

    def timeline(self, counts: reader.Counts) -> Timeline:
        """The run as read, once every line is in."""
        name = counts.source
        if self.start is None:
            raise InputError("no run_start event: the log must say when the run began", where=f"{name}:1")
        end = self.end if self.end is not None else self.last
        self._close_episode(None)
        if not end > self.start:
            raise InputError("the run has no length: run_end is at run_start", where=name)
        for start in self.open.values():
            self.cut_short.append((start, end))  # a checkpoint still open at the end stalled until then
        return Timeline(
            source=name,
            time_kind=self.clock.kind or "number",
            start_s=self.start,
            end_s=end,
            checkpoints=tuple(self.checkpoints),
            cut_short=tuple(self.cut_short),
            episodes=tuple(self.episodes),
            failure_times_s=tuple(self.failure_times),
            failure_causes=tuple(self.failure_causes),
            lines=counts.read,
            used=counts.kept,
            unknown=counts.ignored,
            skipped_bad=counts.skipped_bad,
            bad=counts.bad,
            progress=self.progress,
            last_step=self.last_step,
        )


def _given(record: dict[str, Any], key: str) -> Any:
    """The value at ``key``, or MISSING when absent, null or empty: a CSV row leaves the fields its event
    does not use empty."""
    value = get_path(record, key, MISSING)
    return MISSING if value is None or value == "" else value


def parse(
    lines: str | Iterable[str],
    *,
    name: str,
    format: str | None = None,
    time_field: str = "time",
    time_unit: str | None = None,
    cause: str = "cause",
    skip_bad: bool = False,
) -> Timeline:
    """Read an event log's text or lines (see the module's description)."""
    run = _Run(time_field, time_unit, cause)
    counts = reader.scan_text(lines, run, name=name, format=format, required=("event",), skip_bad=skip_bad)
    return run.timeline(counts)


# ------------------------------------------------------------------ analysis


@dataclass(frozen=True)
class Split(montecarlo.Split):
    """Shares of wall time (the simulation's split: they sum to 1), and the seconds behind them."""

    wall_s: float

    @property
    def effective(self) -> float:
        return self.useful


@dataclass(frozen=True)
class Level:
    """What one checkpoint level measured: its stalls, persists and the restarts it served."""

    name: str
    checkpoints: int
    stall_s: float
    stall_p90_s: float
    persist_s: float | None  # mean time from a checkpoint's end to its durable persist; None when synchronous
    restarts: int
    restart_s: float | None


@dataclass(frozen=True)
class Window:
    start_s: float
    end_s: float
    split: Split


@dataclass(frozen=True)
class Cause:
    cause: str
    failures: int
    lost_s: float


@dataclass(frozen=True)
class Analysis:
    """A timeline's realised split, what it measured, per-cause losses and, optionally, per-window splits."""

    timeline: Timeline
    realised: Split
    effective_ci95: tuple[float, float]
    levels: tuple[Level, ...]
    interval_s: float | None  # median work between two checkpoints (the memory interval with two levels)
    storage_every: int | None  # with two levels: checkpoints per storage checkpoint
    restart_s: float | None
    restart_p90_s: float | None
    restarts_measured: int
    failures: int
    memory_share: float | None
    causes: tuple[Cause, ...]
    windows: tuple[Window, ...] | None


class _Coverage:
    """Time covered by a set of spans, up to any moment: measure(spans ∩ [a, b]) in O(log n)."""

    def __init__(self, spans: Any) -> None:
        import numpy

        merged = _merge(spans)
        self.x = merged.reshape(-1)
        lengths = merged[:, 1] - merged[:, 0]
        covered = numpy.concatenate(([0.0], numpy.cumsum(lengths)))
        # At a span's start the coverage so far; at its end that plus its length.
        self.y = numpy.empty(self.x.size)
        self.y[0::2] = covered[:-1]
        self.y[1::2] = covered[1:]
        self.spans = merged

    def upto(self, t: Any) -> Any:
        import numpy

        if self.x.size == 0:
            return numpy.zeros_like(numpy.asarray(t, dtype=float))
        return numpy.interp(t, self.x, self.y, left=0.0, right=float(self.y[-1]))

    def within(self, a: Any, b: Any) -> Any:
        return self.upto(b) - self.upto(a)


def _merge(spans: Any) -> Any:
    """Sorted, disjoint spans covering the same time as ``spans`` (an (n, 2) array)."""
    import numpy

    spans = numpy.asarray(spans, dtype=float).reshape(-1, 2)
    spans = spans[spans[:, 1] > spans[:, 0]]
    if spans.size == 0:
        return spans
    spans = spans[numpy.argsort(spans[:, 0], kind="stable")]
    ends = numpy.maximum.accumulate(spans[:, 1])
    starts_new = numpy.concatenate(([True], spans[1:, 0] > ends[:-1]))
    first = numpy.flatnonzero(starts_new)
    last = numpy.concatenate((first[1:] - 1, [len(spans) - 1]))
    return numpy.column_stack((spans[first, 0], ends[last]))


def analyze(timeline: Timeline, *, window_s: float | None = None) -> Analysis:
    """Split the timeline's wall time, and measure its stalls, restarts, interval and failures."""
    import numpy

    t0, t1 = timeline.start_s, timeline.end_s
    stalls = [(c.start_s, c.end_s) for c in timeline.checkpoints] + list(timeline.cut_short)
    restarts = [(e.failure_s, t1 if e.end_s is None else e.end_s) for e in timeline.episodes]
    lost = [(e.resumed_from_s, e.failure_s) for e in timeline.episodes]
    stall, restart = _Coverage(stalls), _Coverage(restarts)
    lost_spans = _merge(lost)

    def split(a: float, b: float) -> Split:
        wall = b - a
        write = float(stall.within(a, b))
        down = float(restart.within(a, b))
        if lost_spans.size:
            lo = numpy.clip(lost_spans[:, 0], a, b)
            hi = numpy.clip(lost_spans[:, 1], a, b)
            rework_s = float(numpy.sum(hi - lo - stall.within(lo, hi) - restart.within(lo, hi)))
        else:
            rework_s = 0.0
        rework_s = max(rework_s, 0.0)
        useful = max(wall - write - down - rework_s, 0.0)
        return Split(useful / wall, write / wall, rework_s / wall, down / wall, wall)

    realised = split(t0, t1)
    edges = numpy.linspace(t0, t1, BATCHES + 1)
    batch = numpy.array([split(float(a), float(b)).effective for a, b in itertools.pairwise(edges)])
    half = T_975 * float(numpy.std(batch, ddof=1)) / math.sqrt(BATCHES)
    windows = None
    if window_s is not None:
        count = max(1, math.ceil((t1 - t0) / window_s - 1e-9))
        bounds = [t0 + i * window_s for i in range(count)] + [t1]
        windows = tuple(Window(a, b, split(a, b)) for a, b in itertools.pairwise(bounds))

    completed = [e for e in timeline.episodes if e.failures == 1 and e.end_s is not None]
    durations = numpy.array([e.end_s - e.failure_s for e in completed if e.end_s is not None])
    levels = _levels(timeline, completed)
    interval, every = _interval(timeline)
    causes: dict[str, list[float]] = {}
    for e, lost_s in zip(timeline.episodes, _lost_per_episode(timeline, stall, restart), strict=True):
        end = t1 if e.end_s is None else e.end_s
        entry = causes.setdefault(e.cause, [0.0, 0.0])
        entry[0] += e.failures
        entry[1] += lost_s + (end - e.failure_s)
    failures = sum(e.failures for e in timeline.episodes)
    served = [e for e in timeline.episodes if e.resumed_level is not None]
    two = any(level.name in MEMORY_LEVELS for level in levels) and len(levels) > 1
    memory = sum(e.resumed_level in MEMORY_LEVELS for e in served) / len(served) if two and served else None
    return Analysis(
        timeline=timeline,
        realised=realised,
        effective_ci95=(max(realised.effective - half, 0.0), min(realised.effective + half, 1.0)),
        levels=levels,
        interval_s=interval,
        storage_every=every if two else None,
        restart_s=float(durations.mean()) if durations.size else None,
        restart_p90_s=float(numpy.percentile(durations, 90)) if durations.size else None,
        restarts_measured=int(durations.size),
        failures=failures,
        memory_share=memory,
        causes=tuple(
            Cause(name, int(n), lost_s) for name, (n, lost_s) in sorted(causes.items(), key=lambda kv: -kv[1][1])
        ),
        windows=windows,
    )


def _lost_per_episode(timeline: Timeline, stall: _Coverage, restart: _Coverage) -> list[float]:
    """The work each failure lost that no earlier failure had already lost (they sum to the rework).

    Episodes come in time order and each lost span ends at its failure, so a new span can only overlap
    the end of the union of the earlier ones: a stack of disjoint spans, each pushed and popped once.
    """

    def work(a: float, b: float) -> float:
        return max(b - a - float(stall.within(a, b)) - float(restart.within(a, b)), 0.0)

    union: list[tuple[float, float]] = []
    lost = []
    for e in timeline.episodes:
        a, b = e.resumed_from_s, e.failure_s
        new = work(a, b)
        start = a
        while union and union[-1][1] >= a:
            s0, e0 = union.pop()
            new -= work(max(s0, a), min(e0, b))
            start = min(start, s0)
        union.append((start, b))
        lost.append(max(new, 0.0))
    return lost


def _levels(timeline: Timeline, completed: list[Episode]) -> tuple[Level, ...]:
    import numpy

    found = []
    names = sorted({c.level for c in timeline.checkpoints}, key=lambda n: (n not in MEMORY_LEVELS, n))
    for name in names:
        mine = [c for c in timeline.checkpoints if c.level == name]
        stalls = numpy.array([c.end_s - c.start_s for c in mine])
        persists = numpy.array([c.durable_s - c.end_s for c in mine])
        served = numpy.array([e.end_s - e.failure_s for e in completed if e.resumed_level == name and e.end_s])
        found.append(
            Level(
                name=name,
                checkpoints=len(mine),
                stall_s=float(stalls.mean()),
                stall_p90_s=float(numpy.percentile(stalls, 90)),
                persist_s=float(persists.mean()) if bool(numpy.any(persists > 0)) else None,
                restarts=int(served.size),
                restart_s=float(served.mean()) if served.size else None,
            )
        )
    return tuple(found)


def _interval(timeline: Timeline) -> tuple[float | None, int | None]:
    """The median work between consecutive checkpoints with no failure between them, and with two
    levels the median number of checkpoints from one storage checkpoint to the next."""
    import numpy

    if len(timeline.checkpoints) < 2:
        return None, None
    starts = numpy.array([c.start_s for c in timeline.checkpoints])
    ends = numpy.array([c.end_s for c in timeline.checkpoints])
    storage = numpy.array([c.level not in MEMORY_LEVELS for c in timeline.checkpoints])
    order = numpy.argsort(starts, kind="stable")
    starts, ends, storage = starts[order], ends[order], storage[order]
    failures = numpy.sort(numpy.array([e.failure_s for e in timeline.episodes], dtype=float))

    def clean(a: Any, b: Any) -> Any:
        """No failure strictly between a and b."""
        return numpy.searchsorted(failures, b, side="left") <= numpy.searchsorted(failures, a, side="right")

    ok = clean(ends[:-1], starts[1:])
    gaps = (starts[1:] - ends[:-1])[ok]
    interval = float(numpy.median(gaps)) if gaps.size else None
    # Checkpoints from one storage checkpoint to the next. A failure served by memory redoes none of
    # them; one served by storage redoes a few, which the median shrugs off.
    where = numpy.flatnonzero(storage)
    every = None
    if where.size >= 2 and not storage.all():
        every = round(float(numpy.median(numpy.diff(where))))
    return interval, every
