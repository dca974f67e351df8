"""A run's event log, read and split into where its time went (docs/model.md §11).

An event log is any format :mod:`ckptcalc.logs.reader` reads (JSON Lines, CSV, a JSON array;
compressed or not), one event a record, each with a ``time`` (or ``time_s``,
seconds) and an ``event``: ``run_start``, ``run_end``, ``checkpoint_start``,
``checkpoint_end`` (optional ``level``, and ``async_persist_end``: when its
persist became durable, or ``interrupted``: never), ``failure`` (optional
``cause``), ``recovery`` (after a failure, ``kind`` ``in_place``: recovered
from a healthy replica, back to the step boundary ``resumed_from``, or
``notice``: a checkpoint written first, nothing lost), ``restart_end``
(training resumes; optional ``resumed_from``: the time of the
``checkpoint_start`` whose state was loaded), ``progress`` (optional
``step``), the events a registered mechanism reads (``group_down`` and
``group_up``: an elastic replica group, ``group``, dropped out and rejoined while
the others trained on, optional ``quorum_end`` on a ``group_down``: when the
running groups resumed after the quorum change; :mod:`ckptcalc.mechanisms.elastic.log`),
and ``silent_detected`` (a silent
event noticed; optional ``onset`` and ``cause``) and ``rollback`` (back to the
checkpoint started at ``to``, with ``skip`` work discarded beyond it;
:mod:`ckptcalc.mechanisms.silent.log`). Unknown events are skipped and counted.

Every instant between ``run_start`` and ``run_end`` is one of: a *restart*
(from a failure to the next ``restart_end``), a checkpoint *stall* (from a
``checkpoint_start`` to its end, or to a failure that cuts it short), or
work. Work between the checkpoint a restart resumed from and the failure
before it was lost: *rework*. The rest is *useful*.

Logs are read line by line (a long run's log is large), and the consumer here keeps
only the times it needs, in typed arrays. Pure apart from reading the file; numpy is
imported once the log is read.

>>> text = "\\n".join([
...     '{"time": 0, "event": "run_start"}',
...     '{"time": 100, "event": "checkpoint_start"}', '{"time": 110, "event": "checkpoint_end"}',
...     '{"time": 160, "event": "failure"}', '{"time": 200, "event": "restart_end", "resumed_from": 100}',
...     '{"time": 300, "event": "run_end"}'])
>>> split = analyze_timeline(parse(text.splitlines(), name="run.jsonl", time_unit="s")).realised
>>> [round(v, 3) for v in (split.useful, split.write, split.rework, split.restart)]
[0.667, 0.033, 0.167, 0.133]
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from ckptcalc.errors import InputError
from ckptcalc.logs import canonical, reader
from ckptcalc.logs import outages as incidents
from ckptcalc.logs.adapter import MAX_STEP, Columns
from ckptcalc.logs.reader import MISSING, BadRecord, FatalRecord, get_path, text_form
from ckptcalc.mechanisms import registry
from ckptcalc.mechanisms.base import IN_PLACE
from ckptcalc.mechanisms.silent import log as quiet
from ckptcalc.model.statistics import BATCHES, T975_19, shares
from ckptcalc.simulation import timeline as montecarlo

if TYPE_CHECKING:
    from ckptcalc.logs.fit import FailureFit
    from ckptcalc.model.evaluation import Config

#: The events the analysis reads (the canonical log's); any other value of ``event`` is skipped and counted.
EVENTS = canonical.EVENTS

#: What a ``recovery`` event's ``kind`` says, by the failure classes of the registered mechanisms (recovered
#: in place from a healthy replica, or met with notice): kind -> where the class lands.
RECOVERY_KINDS = registry.log_kinds()

#: The level of a checkpoint whose line names none.
DEFAULT_LEVEL = "storage"

#: Checkpoint levels that serve a failure from memory (the in-memory level of the model).
MEMORY_LEVELS = ("memory",)

#: Largest time a log may hold, in seconds from its zero (a Unix timestamp is about 1.7e9): far beyond
#: any run, small enough that no sum or product of times overflows.
MAX_TIME = 1e13
PROGRESS = "progress"  # the event of most lines, taken a block at a time (:meth:`_Run.bulk`)
CHECKPOINT_EVENTS = ("checkpoint_start", "checkpoint_end")  # taken a run at a time too, where they are plain
DIRECT = frozenset(("failure", "restart_end"))  # taken one by one without the reader's loop (:meth:`_Run._direct`)

#: Values of one measured quantity (a level's stalls, the restarts, the clean gaps between checkpoints)
#: whose quantiles are exact: up to this many, every value is kept; beyond, a KLL sketch holds them.
EXACT_VALUES = 100_000

#: The KLL sketch's size parameter: a normalised rank error of about 0.3 % (Apache DataSketches).
SKETCH_K = 1000

#: Checkpoints taken at once when the analysis goes over them (a slice of each column, so that no
#: temporary array grows with the log).
CHUNK = 1 << 13

#: Completed checkpoints the reader holds one by one (a few columns): past this many, the oldest are
#: folded into summaries of bounded size (:class:`_Folded`), so that a log of at most this many
#: checkpoints gives the figures it always gave, and a longer one's memory stops growing with them.
HELD_CHECKPOINTS = EXACT_VALUES

#: The newest checkpoints a fold leaves as columns (those a restart resumes from, as a rule).
KEPT_CHECKPOINTS = 1 << 10

#: Checkpoints folded at a time once the first fold is done (so that no temporary array of a fold is
#: large): the held ones then stay between KEPT_CHECKPOINTS and this many more.
FOLD_STEP = 1 << 16

#: Blocks of the folded stall coverage past which neighbouring blocks are merged in pairs.
COVERAGE_BLOCKS = 1 << 16


@dataclass(frozen=True)
class Checkpoints:
    """The completed checkpoints of a log, in the order they ended, as columns (numpy arrays)."""

    start_s: Any
    end_s: Any
    persist_end_s: Any  # its persist's end: NaN synchronous (durable at its end), inf interrupted (never)
    level: Any  # the index of its level in Timeline.levels

    @property
    def durable_s(self) -> Any:
        """When each became durable: its end, or its persist's end (inf: never)."""
        import numpy

        return numpy.where(numpy.isnan(self.persist_end_s), self.end_s, self.persist_end_s)


class Quantiles:
    """The values of one quantity, for its mean and quantiles, in bounded memory: every value while there
    are at most :data:`EXACT_VALUES` (the quantiles exact, numpy's), beyond that a KLL sketch of them
    (Apache DataSketches; its quantiles approximate, within :attr:`rank_error` in rank) and their sum.

    >>> q = Quantiles()
    >>> q.extend([3.0, 1.0, 2.0])
    >>> q.quantile(0.5), q.mean, q.approximate
    (2.0, 2.0, False)
    """

    def __init__(self) -> None:
        self.values = array("d")
        self.sketch: Any = None
        self.count = 0
        self.total = 0.0

    def extend(self, values: Any) -> None:
        """Add values (an array, a list): kept while few enough, else given to the sketch."""
        import numpy

        chunk = numpy.asarray(values, dtype=float)
        if not chunk.size:
            return
        self.count += int(chunk.size)
        if self.sketch is None and len(self.values) + chunk.size <= EXACT_VALUES:
            self.values.frombytes(chunk.tobytes())
            return
        if self.sketch is None:
            from datasketches import kll_doubles_sketch  # type: ignore[import-untyped]

            self.sketch = kll_doubles_sketch(SKETCH_K)
            kept = numpy.frombuffer(self.values, dtype=float)
            self.total = float(kept.sum())
            self.sketch.update(kept)
            self.values = array("d")
        self.total += float(chunk.sum())
        self.sketch.update(numpy.ascontiguousarray(chunk))

    def copy(self) -> Quantiles:
        """An independent copy (the values, or the sketch, and the sums)."""
        other = Quantiles()
        other.values = array("d", self.values)
        other.count, other.total = self.count, self.total
        if self.sketch is not None:
            from datasketches import kll_doubles_sketch

            other.sketch = kll_doubles_sketch.deserialize(self.sketch.serialize())
        return other

    @property
    def approximate(self) -> bool:
        """Whether the quantiles come from the sketch."""
        return self.sketch is not None

    @property
    def rank_error(self) -> float:
        """The sketch's normalised rank error (0: exact)."""
        return 0.0 if self.sketch is None else float(self.sketch.normalized_rank_error(False))

    @property
    def mean(self) -> float:
        import numpy

        if self.sketch is None:
            return float(numpy.frombuffer(self.values, dtype=float).mean())
        return self.total / self.count

    def quantile(self, q: float) -> float:
        """numpy's percentile (linear) while exact; the sketch's quantile beyond."""
        import numpy

        if self.sketch is None:
            return float(numpy.percentile(numpy.frombuffer(self.values, dtype=float), 100.0 * q))
        return float(self.sketch.get_quantile(q))

    def median(self) -> float:
        import numpy

        if self.sketch is None:
            return float(numpy.median(numpy.frombuffer(self.values, dtype=float)))
        return float(self.sketch.get_quantile(0.5))


@dataclass(frozen=True)
class Episodes:
    """Each failure, any failures during its restart, and the restart that ended it, as columns."""

    failure_s: Any
    end_s: Any  # NaN: the run ended before training resumed
    resumed_from_s: Any
    failures: Any
    cause: Any  # the index of its cause in Timeline.causes
    resumed_level: Any  # the index of the level resumed from in Timeline.levels; -1: the run's start

    def __len__(self) -> int:
        return len(self.failure_s)


@dataclass(frozen=True)
class Timeline:
    """What the reader kept of one log."""

    source: str
    time_kind: str
    start_s: float
    end_s: float
    levels: tuple[str, ...]
    checkpoints: Checkpoints
    cut_short: Any  # (n, 2): stalls a failure (or the run's end) cut short
    episodes: Episodes
    failure_times_s: Any  # every failure, those during restarts too
    failure_causes: Any  # the index of each one's cause in causes
    causes: tuple[str, ...]
    lines: int
    used: int
    unknown: int
    skipped_bad: int
    bad: tuple[str, ...]
    progress: int
    last_step: float | None
    notes: Mapping[str, int] = field(default_factory=dict)  # the reader's inferences (rebuilt_times...)
    year_from: str | None = None  # where the year of year-less timestamps came from: year, mtime or today
    format: str = "jsonl"  # the format read (several, comma-separated)
    files: int = 1
    # What each registered mechanism's reader kept of its events (``log_reading``), by the mechanism's name;
    # absent: the log has none of its events.
    kept_by: Mapping[str, Any] = field(default_factory=dict)
    silent: quiet.SilentColumns | None = None  # silent events detected and rolled back; None: the log has none
    # What the checkpoints folded while reading left (past HELD_CHECKPOINTS); None: every one is in
    # ``checkpoints``, which then holds only those completed since the last fold.
    folded: _Folded | None = None
    outages: incidents.Found | None = None  # nodes' fault starts and ends paired (docs/model.md §22); None: none

    def checkpoint_rows(self) -> tuple[Checkpoint, ...]:
        """The checkpoints one by one (the columns are :attr:`checkpoints`; past :data:`HELD_CHECKPOINTS`,
        those not folded)."""
        return _checkpoint_rows(self)

    def episode_rows(self) -> tuple[Episode, ...]:
        """The episodes one by one (the columns are :attr:`episodes`)."""
        return _episode_rows(self)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One completed checkpoint, as :meth:`Timeline.checkpoint_rows` gives it."""

    start_s: float
    end_s: float
    level: str
    durable_s: float  # its end, or its persist's end (inf: interrupted, never durable)


@dataclass(frozen=True, slots=True)
class Episode:
    """One failure and its restart, as :meth:`Timeline.episode_rows` gives it."""

    failure_s: float
    cause: str
    failures: int
    end_s: float | None  # None: the run ended before training resumed
    resumed_from_s: float
    resumed_level: str | None  # None: the run's start


def _checkpoint_rows(timeline: Timeline) -> tuple[Checkpoint, ...]:
    c = timeline.checkpoints
    columns = zip(c.start_s.tolist(), c.end_s.tolist(), c.level.tolist(), c.durable_s.tolist(), strict=True)
    return tuple(Checkpoint(a, b, timeline.levels[k], d) for a, b, k, d in columns)


def _episode_rows(timeline: Timeline) -> tuple[Episode, ...]:
    e = timeline.episodes
    columns = zip(e.failure_s.tolist(), e.cause.tolist(), e.failures.tolist(), e.end_s.tolist(),
                  e.resumed_from_s.tolist(), e.resumed_level.tolist(), strict=True)  # fmt: skip
    return tuple(
        Episode(f, timeline.causes[k], n, None if math.isnan(end) else end, r, None if lv < 0 else timeline.levels[lv])
        for f, k, n, end, r, lv in columns
    )


# ------------------------------------------------------------------ reading

# The canonical event log's conventions (see ckptcalc.logs.canonical).
SECONDS_FIELD = canonical.SECONDS_FIELD
TIME_FIELD = canonical.TIME_FIELD
INTERRUPTED = canonical.INTERRUPTED


def read(
    path: str | Sequence[str],
    *,
    stdin: Any = None,
    format: str | None = None,
    time_field: str | None = None,
    time_unit: str | None = None,
    cause: str = "cause",
    skip_bad: bool = False,
    year: int | None = None,
    tz: tzinfo | None = None,
    patterns: Sequence[Any] = (),
    explain: Callable[[str], None] | None = None,
    **stated: Any,
) -> Timeline:
    """Read an event log from a file (``"-"``: ``stdin``) by :func:`ckptcalc.logs.reader.scan`: any format
    it reads (JSON Lines, CSV, a JSON array, framework logs), compressed or not. ``time_field`` None reads
    ``time``, or ``time_s`` in seconds in a log that has no ``time``. ``year`` completes timestamps that
    carry none (absl's); without it, the file's modification time gives it; ``tz`` places timestamps
    without a zone; ``stated`` is what the mechanisms' ``log_values`` gave, such as the run's number of replica
    groups (absent: the largest ``group`` + 1)."""
    run = _Run(time_field, time_unit, cause, tz, stated)
    counts = reader.scan(
        path,
        run,
        stdin=stdin,
        format=format,
        required=("event",),
        skip_bad=skip_bad,
        year=year,
        tz=tz,
        patterns=patterns,
        explain=explain,
    )
    return run.timeline(counts)


class _Run:
    """The reader's consumer for a run's event log: the state of the run, one event at a time.

    What it keeps grows only with the checkpoints and failures (a few numbers each, in typed arrays),
    never with progress lines or unknown events."""

    def __init__(
        self,
        time_field: str | None,
        time_unit: str | None,
        cause_field: str,
        tz: tzinfo | None = None,
        stated: dict[str, Any] | None = None,
    ) -> None:
        self.tz = tz
        self.time_field = TIME_FIELD if time_field is None else time_field
        self.named = time_field is not None
        self.time_unit = time_unit
        self.cause_field = cause_field
        self.clock = self._clock()
        self.start: float | None = None
        self.end: float | None = None
        self.last = -math.inf
        self.open: dict[str, float] = {}  # level -> start of its checkpoint in progress
        self.levels: dict[str, int] = {}
        self.causes: dict[str, int] = {}
        # Completed checkpoints, stalls cut short, episodes and failures: columns.
        self.ck_start, self.ck_end = array("d"), array("d")
        # Persists' ends and level indices, made only once a checkpoint has a persist or a second level.
        self.ck_persist: array[float] | None = None
        self.ck_level: array[int] | None = None
        self.cut = array("d")
        self.ep_failure, self.ep_end, self.ep_resumed = array("d"), array("d"), array("d")
        self.ep_cause = array("q")
        # Every failure's time and cause, and each episode's failures: made only once a failure strikes
        # during a restart (until then, the episodes' own columns, and 1 each).
        self.ep_failures: array[int] | None = None
        self.failure_times: array[float] | None = None
        self.failure_causes: array[int] | None = None
        self.pending = False  # the last episode's restart has not ended yet
        self.progress = 0
        self.last_step: float | None = None
        self.line = 0
        self.silent = quiet.Reading()
        # The registered mechanisms' readers of their own events, by the mechanism's name.
        self.readers = registry.log_readings(stated or {}, reader)
        own = {event: functools.partial(self._own, found, event) for found in self.readers.values()
               for event in found.events}  # fmt: skip
        self.handlers = {kind: own[kind] if kind in own else getattr(self, f"_{kind}") for kind in EVENTS}
        self.block_seconds: list[float] | None = None
        self.block_level: str | None = None  # the level every checkpoint of the block names (:meth:`_one_level`)
        self.folded: _Folded | None = None  # the checkpoints folded so far (:meth:`_fold`)
        self.fold_at = HELD_CHECKPOINTS
        self.outages: incidents.Outages | None = None  # nodes' fault starts and ends (:meth:`_outage`)

    def _clock(self) -> reader.Clock:
        seconds = self.time_field == SECONDS_FIELD and self.time_unit is None
        return reader.Clock("s" if seconds else self.time_unit, tz=self.tz)

    def time(self, record: dict[str, Any], key: str) -> float | None:
        value = _given(record, key)
        if value is MISSING:
            return None
        seconds = self.clock.seconds(value, line=self.line)
        if not -MAX_TIME <= seconds <= MAX_TIME:
            raise BadRecord(f"{key} {seconds:g} s is out of range (at most {MAX_TIME:g} s from the log's zero)")
        return seconds

    def fields(self, names: Sequence[str], line: int) -> None:
        """A log whose fields (its header, or its first record) hold ``time_s`` but no ``time`` is read
        from ``time_s``, in seconds, unless a time field was named."""
        if not self.named and TIME_FIELD not in names and SECONDS_FIELD in names:
            self.time_field = SECONDS_FIELD
            self.clock = self._clock()

    def record(self, record: dict[str, Any], line: int) -> bool:
        """Take one line's event: False for an event the analysis does not read."""
        self.line = line
        # A top-level field is looked up directly (what _given does first, without its call).
        kind = record["event"] if "event" in record else get_path(record, "event", MISSING)
        if kind is MISSING or kind is None or kind == "":
            raise BadRecord("no 'event' field")
        name = kind if type(kind) is str else text_form(kind)
        handler = self.handlers.get(name)
        if handler is None:
            if name == canonical.ERROR:  # what ``events`` writes last when its reading failed
                said = text_form(record.get("where", "?")), text_form(record.get("error", "?"))
                raise FatalRecord(f"a log cut short: the reading that wrote it failed at {said[0]}: {said[1]}")
            self._outage(name, record, line)
            return False
        key = self.time_field
        value = record[key] if key in record else get_path(record, key, MISSING)
        if value is MISSING or value is None or value == "":
            raise BadRecord(f"no {key!r} field")
        t = self.clock.seconds(value, line=line)
        if not -MAX_TIME <= t <= MAX_TIME:
            raise BadRecord(f"{key} {t:g} s is out of range (at most {MAX_TIME:g} s from the log's zero)")
        if t < self.last:
            raise BadRecord(f"time goes backwards (an earlier line is later by {self.last - t:g} s)")
        if self.start is None and name != "run_start":
            raise BadRecord(f"{name} before run_start")
        if self.end is not None:
            raise BadRecord(f"{name} after run_end")
        self.last = t
        handler(t, record)
        return True

    def _outage(self, name: str, record: dict[str, Any], line: int) -> None:
        """Keep a node's fault start or end (an event the run's split does not read, such as ``fault_start``
        with a ``node``): the repairs of docs/model.md §22. A row without a node or a time is left alone."""
        said = incidents.fault_kind(name)
        if said is None:
            return
        node = next((record[key] for key in record if key.casefold() in incidents.NODE_FIELDS), None)
        value = record.get(self.time_field)
        if node is None or node == "" or value is None or value == "":
            return
        try:
            t = self.clock.seconds(value, line=line)
            name = incidents.node_name(node)
        except (BadRecord, ValueError, OverflowError):
            return
        if self.outages is None:
            self.outages = incidents.Outages("node", None, "event")
        self.outages.marks.append((name, t, 0 if said == "start" else 1, line))

    def bulk(self, block: Columns, each: Callable[[int], None]) -> int:
        """Take a block of a table's rows: its runs of progress lines at once (their times and steps a
        column at a time), every other row by ``each`` (the reader's way, :meth:`record`). Returns the
        number of rows taken here."""
        events = block.columns.get("event")
        times = block.columns.get(self.time_field)
        steps = block.columns.get("step")
        if events is None or times is None:
            for index in range(block.count):
                each(index)
            return 0
        took, done = 0, 0
        self.block_seconds = None  # the block's times, read once for all its runs (:meth:`_times`)
        # The rows of other events, found a kind at a time by a search in C (a log holds few kinds of
        # events); between them, runs of progress and plain checkpoint lines are taken at once.
        kinds = set(events) - {PROGRESS, *CHECKPOINT_EVENTS}
        others = sorted(set().union(*(reader.positions(events, kind) for kind in kinds))) if kinds else []
        plain = PROGRESS not in events  # a checkpoint-dense block: its segments are checkpoints alone
        self.block_level = self._one_level(block) if plain else None
        for stop in itertools.chain(others, (block.count,)):
            if stop > done:
                if plain and self._checkpoint_run(block, events, times, done, stop):
                    took += stop - done
                else:
                    took += self._segment(block, events, times, steps, done, stop, each)
            if stop < block.count:
                took += self._direct(block, stop, events[stop], each)
            done = stop + 1
        self.block_seconds = self.block_level = None
        return took

    def _direct(self, block: Columns, index: int, kind: str, each: Callable[[int], None]) -> int:
        """Take a failure or a restart's end at once (no detour through the reader's loop): 1, or 0 after
        leaving it to ``each`` (any other event, or one with something to say: its line is read again
        there, and reported)."""
        if kind in DIRECT:
            try:
                self.record(block.record(index), block.line + index)
            except BadRecord:
                pass  # nothing was taken: the reader reads it again and says why
            else:
                return 1
        each(index)
        return 0

    def _segment(
        self,
        block: Columns,
        events: list[str],
        times: list[str],
        steps: list[str] | None,
        start: int,
        stop: int,
        each: Callable[[int], None],
    ) -> int:
        """Rows ``start`` to ``stop``, each a progress or a checkpoint line: their runs of one kind taken at
        once where they are plain, the rest by ``each``. Returns the rows taken here."""
        part = events[start:stop]
        if part.count(PROGRESS) == len(part):
            runs = [(start, stop, True)]
        elif PROGRESS not in part:
            runs = [(start, stop, False)]
        else:
            marks = sorted(set().union(*(reader.positions(part, kind) for kind in CHECKPOINT_EVENTS)))
            runs, done = [], start
            for offset in marks:
                at = start + offset
                if runs and not runs[-1][2] and runs[-1][1] == at:
                    runs[-1] = (runs[-1][0], at + 1, False)
                    done = at + 1
                    continue
                if at > done:
                    runs.append((done, at, True))
                runs.append((at, at + 1, False))
                done = at + 1
            if done < stop:
                runs.append((done, stop, True))
        took = 0
        for a, b, progress in runs:
            if progress:
                ok = self._progress_run(times, steps, a, b, block.line)
            else:
                ok = self._checkpoint_run(block, events, times, a, b)
            if ok:
                took += b - a
            else:
                for index in range(a, b):
                    each(index)
        return took

    def _one_level(self, block: Columns) -> str | None:
        """The one level of every checkpoint line a block may hold, when none has a persist and all name
        that level (or none): what each run of them need not check again. None otherwise."""
        persists = block.columns.get("async_persist_end")
        if persists is not None and any(persists):
            return None
        levels = block.columns.get("level")
        if levels is None:
            return DEFAULT_LEVEL
        # Other events leave the level empty, which a checkpoint line reads as the default level.
        named = set(levels) - {""}
        if not named:
            return DEFAULT_LEVEL
        (name,) = named if len(named) == 1 else (None,)
        return name if name == DEFAULT_LEVEL or (name is not None and "" not in levels) else None

    def _times(self, times: list[str], start: int, stop: int) -> list[float] | None:
        """The seconds of rows ``start`` to ``stop`` when they are plain numbers in order (else None): the
        block's whole column read at once the first time, if every cell is plain and in order."""
        if self.block_seconds is None:
            whole = self.clock.many(times)
            ordered = whole is not None and all(map(operator.le, whole, itertools.islice(whole, 1, None)))
            self.block_seconds = whole if ordered else []
        if self.block_seconds:
            return self.block_seconds[start:stop]
        seconds = self.clock.many(times[start:stop])
        if seconds is None or not all(map(operator.le, seconds, itertools.islice(seconds, 1, None))):
            return None
        return seconds

    def _checkpoint_run(self, block: Columns, events: list[str], times: list[str], start: int, stop: int) -> bool:
        """Take rows ``start`` to ``stop`` (checkpoint starts and ends) at once, if they are as :meth:`record`
        would take without a word: times in order inside the run, one level, no persist, each start
        followed by its end. False leaves all to it."""
        if self.start is None or self.end is not None or stop - start < 2:
            return False
        level = self.block_level
        if level is None:
            persists = block.columns.get("async_persist_end")
            if persists is not None and any(persists[start:stop]):
                return False
            levels = block.columns.get("level")
            level = DEFAULT_LEVEL
            if levels is not None:
                cells = levels[start:stop]
                first = cells[0]
                if cells.count(first) != len(cells):
                    return False
                level = first or DEFAULT_LEVEL
        seconds = self._times(times, start, stop)
        if seconds is None or not (self.last <= seconds[0] and seconds[0] >= -MAX_TIME and seconds[-1] <= MAX_TIME):
            return False
        kinds = events[start:stop]
        opening = level not in self.open
        lead, follow = CHECKPOINT_EVENTS if opening else CHECKPOINT_EVENTS[::-1]
        leads, follows = kinds[0::2], kinds[1::2]
        if leads.count(lead) != len(leads) or follows.count(follow) != len(follows):
            return False
        if opening:
            starts, ends = seconds[0::2], seconds[1::2]
        else:
            starts, ends = [self.open.pop(level), *seconds[1::2]], seconds[0::2]
        if len(starts) > len(ends):
            self.open[level] = starts.pop()
        if ends:
            self._completed(starts, ends, level, None)
        self.last = seconds[-1]
        self.line = block.line + stop - 1
        return True

    def _progress_run(self, times: list[str], steps: list[str] | None, start: int, stop: int, line: int) -> bool:
        """Take rows ``start`` to ``stop`` (all progress) at once, if they are as :meth:`record` would take
        without a word: numbers in order, inside the run, steps that are numbers. False leaves all to it."""
        if self.start is None or self.end is not None:
            return False
        seconds = self._times(times, start, stop)
        if seconds is None or not (self.last <= seconds[0] and seconds[0] >= -MAX_TIME and seconds[-1] <= MAX_TIME):
            return False
        last_step = self.last_step
        if steps is not None:
            try:
                numbers = list(map(float, filter(None, steps[start:stop])))
            except ValueError:
                return False
            if numbers and not (min(numbers) >= -MAX_STEP and max(numbers) <= MAX_STEP):
                return False  # each row read alone, the bad one said at its line
            if numbers:
                last_step = numbers[-1]
        self.progress += stop - start
        self.last = seconds[-1]
        self.last_step = last_step
        self.line = line + stop - 1
        return True

    def _run_start(self, t: float, record: dict[str, Any]) -> None:
        if self.start is not None:
            raise BadRecord("a second run_start")
        self.start = t

    def _run_end(self, t: float, record: dict[str, Any]) -> None:
        self.pending = False
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
        persist = math.nan
        value = _given(record, "async_persist_end")
        if value == INTERRUPTED:
            persist = math.inf
        elif value is not MISSING:
            given = self.time(record, "async_persist_end")
            assert given is not None
            persist = given
            if persist < t:
                raise BadRecord("async_persist_end before the checkpoint ended")
        self._completed([self.open.pop(level)], [t], level, None if math.isnan(persist) else [persist])

    def _completed(self, starts: list[float], ends: list[float], level: str, persists: list[float] | None) -> None:
        """Checkpoints completed: their starts, ends, level, and their persists' ends (None: synchronous)."""
        count = len(ends)
        index = self._index(self.levels, level)
        self.ck_start.extend(starts)
        self.ck_end.extend(ends)
        before = len(self.ck_end) - count
        if persists is not None or self.ck_persist is not None:
            if self.ck_persist is None:
                self.ck_persist = array("d", [math.nan]) * before
            self.ck_persist.extend([math.nan] * count if persists is None else persists)
        if index or self.ck_level is not None:
            if self.ck_level is None:
                self.ck_level = array("q", [0]) * before
            self.ck_level.extend([index] * count)
        if len(self.ck_end) > self.fold_at:
            while len(self.ck_end) > KEPT_CHECKPOINTS + FOLD_STEP // 2 and self._fold():
                pass
            # The next attempt: after a fold, once another step's worth has ended; else later.
            folded = len(self.ck_end) <= KEPT_CHECKPOINTS + FOLD_STEP // 2
            self.fold_at = KEPT_CHECKPOINTS + FOLD_STEP if folded else len(self.ck_end) + FOLD_STEP

    def _fold(self) -> bool:
        """Fold the oldest completed checkpoints, up to :data:`FOLD_STEP` of them and never the newest
        :data:`KEPT_CHECKPOINTS`, into :attr:`folded`: those that ended before any other (held, open, cut
        short or to come) started, so that what they leave is final. The stalls cut short by then go with
        them. False when none can go yet."""
        import numpy

        column = functools.partial(numpy.frombuffer, dtype=float)
        starts, ends = column(self.ck_start), column(self.ck_end)
        n = ends.size
        cut = column(self.cut).reshape(-1, 2)
        limit = min([self.last, *self.open.values()])
        later = numpy.minimum(numpy.minimum.accumulate(starts[::-1])[::-1], limit)  # the earliest start from each on
        reach = numpy.maximum.accumulate(ends)
        most = min(n - KEPT_CHECKPOINTS, FOLD_STEP)
        apart = numpy.flatnonzero(reach[:most] < later[1 : most + 1])
        if not apart.size:
            return False
        size = int(apart[-1]) + 1
        bound = float(later[size])
        cuts = int(numpy.searchsorted(cut[:, 1], bound, side="left"))  # cut short before the bound
        if cuts < len(cut) and float(cut[cuts:, 0].min()) <= max(
            float(reach[size - 1]), float(cut[:cuts, 1].max(initial=-math.inf))
        ):
            return False  # a stall cut short later began among them: wait
        if self.folded is None:
            self.folded = _Folded()
        folded = self.folded
        part = slice(0, size)
        f_starts, f_ends = starts[part], ends[part]
        persists = None if self.ck_persist is None else column(self.ck_persist)[part]
        levels = (numpy.zeros(size, dtype=numpy.int64) if self.ck_level is None
                  else numpy.frombuffer(self.ck_level, dtype=numpy.int64)[part])  # fmt: skip
        # Each level's stalls and persist lags, in the order they ended (as _levels takes them).
        lengths = f_ends - f_starts
        lags = None if persists is None else persists - f_ends
        for index in [0] if self.ck_level is None else numpy.unique(levels).tolist():
            mine = levels == index
            folded.stalls.setdefault(index, Quantiles()).extend(lengths[mine])
            persist = folded.persists.setdefault(index, Quantiles())
            if lags is not None:
                lag = lags[mine]
                persist.extend(lag[numpy.isfinite(lag)])
        # The gaps between consecutive ones (in the order they started) with no failure between.
        failures = column(self.ep_failure)
        order = None if _ascending(f_starts) else numpy.argsort(f_starts, kind="stable")
        by_start, by_end, by_level = (f_starts, f_ends, levels) if order is None else (
            f_starts[order], f_ends[order], levels[order])  # fmt: skip
        befores = by_end[:-1] if folded.last_end is None else numpy.concatenate(([folded.last_end], by_end[:-1]))
        afters = by_start[1:] if folded.last_end is None else by_start
        for at in _chunks(befores.size):
            before, after = befores[at : at + CHUNK], afters[at : at + CHUNK]
            clean = numpy.searchsorted(failures, after, side="left") <= numpy.searchsorted(
                failures, before, side="right"
            )
            folded.gaps.extend((after - before)[clean])
        folded.last_end = float(by_end[-1])
        memory = [i for name, i in self.levels.items() if name in MEMORY_LEVELS]
        where = numpy.flatnonzero(~numpy.isin(by_level, memory)) + folded.count
        if where.size:
            first = [where[0] - folded.last_stored] if folded.last_stored >= 0 else []
            folded.runs.extend(first + numpy.diff(where).tolist())
            folded.last_stored = int(where[-1])
            folded.stored += int(where.size)
        # Where each failure would resume among them, and the levels of those that restarts named.
        durable = f_ends if persists is None else numpy.where(numpy.isnan(persists), f_ends, persists)
        folded.resume(durable, f_starts, levels, failures, self.last)
        named = column(self.ep_resumed)
        folded.name(named, f_starts, levels, int(numpy.searchsorted(failures, f_starts.min())))
        folded.recent = (by_start, by_level, durable if order is None else durable[order])
        # Their coverage, exact at every failure, resume point and silent or group span.
        spans = _merge(numpy.concatenate((f_starts, cut[:cuts, 0])), numpy.concatenate((f_ends, cut[:cuts, 1])))
        resumed = numpy.frombuffer(folded.resume_start, dtype=float)
        low, high = float(spans[0][0]), float(spans[1][-1])
        # The failures and spans since the last fold's spans ended: among these spans, and in the gap before
        # them (a failure that cut nothing short, or a stall of no length), which a later merge of the
        # blocks either side would otherwise swallow.
        previous, folded.high = folded.high, high
        near = slice(int(numpy.searchsorted(failures, previous, side="right")),
                     int(numpy.searchsorted(failures, high, side="right")))  # fmt: skip
        # The episodes since the last fold's first span (an episode's resume point is no later than its
        # failure): their resume points may have been found since.
        since = int(numpy.searchsorted(failures, min(low, folded.low)))
        folded.low = low
        inferred = numpy.where(numpy.isnan(named[since:]), resumed[since:], math.nan)
        points = numpy.concatenate((failures[near], named[since:], inferred))
        ranges = self._pinned_ranges()
        meet = ranges[1] >= previous
        span_starts, span_ends = numpy.array(spans[0], dtype=float), numpy.array(spans[1], dtype=float)
        points = points[~numpy.isnan(points)]
        folded.coverage.add(span_starts, span_ends, points, (ranges[0][meet], ranges[1][meet]), folded.points())
        folded.count += size
        self.ck_start, self.ck_end = _rest(self.ck_start, size), _rest(self.ck_end, size)
        if self.ck_persist is not None:
            self.ck_persist = _rest(self.ck_persist, size)
        if self.ck_level is not None:
            self.ck_level = _rest(self.ck_level, size)
        self.cut = _rest(self.cut, 2 * cuts)
        return True

    def _pinned_ranges(self) -> tuple[Any, Any]:
        """The spans of the silent events and the mechanisms' own so far: what their losses take from the
        stalls needs the stalls within them exactly."""
        import numpy

        starts, ends = [numpy.empty(0)], [numpy.empty(0)]
        silent = self.silent.columns()
        if silent is not None:
            a, b = quiet.spans(silent)
            known = ~numpy.isnan(silent.onset_s)
            starts += [a, silent.onset_s[known]]
            ends += [b, silent.detect_s[known]]
        for found in self.readers.values():
            spans = found.pinned(self.last)
            if spans is not None:
                starts.append(spans[0])
                ends.append(spans[1])
        return numpy.concatenate(starts), numpy.concatenate(ends)

    def _failure(self, t: float, record: dict[str, Any]) -> None:
        for start in self.open.values():
            self.cut.extend((start, t))
        self.open.clear()
        cause = _given(record, self.cause_field)
        index = self._index(self.causes, "unknown" if cause is MISSING else text_form(cause))
        if self.pending:  # a failure during the restart
            if self.failure_times is None or self.failure_causes is None or self.ep_failures is None:
                self.failure_times, self.failure_causes = array("d", self.ep_failure), array("q", self.ep_cause)
                self.ep_failures = array("q", [1]) * len(self.ep_failure)
            self.failure_times.append(t)
            self.failure_causes.append(index)
            self.ep_failures[-1] += 1
            return
        if self.failure_times is not None and self.failure_causes is not None and self.ep_failures is not None:
            self.failure_times.append(t)
            self.failure_causes.append(index)
            self.ep_failures.append(1)
        self.pending = True
        self.ep_failure.append(t)
        self.ep_end.append(math.nan)
        self.ep_resumed.append(math.nan)  # unless the restart_end says: the newest durable checkpoint
        self.ep_cause.append(index)

    def _recovery(self, t: float, record: dict[str, Any]) -> None:
        """A failure recovered without a rollback (docs/model.md §13): ``in_place`` resumes from the step
        boundary ``resumed_from`` (the failure itself when not given), ``notice`` from where it struck."""
        if not self.pending:
            raise BadRecord("recovery without a failure before it")
        kind = _given(record, "kind")
        if not isinstance(kind, str) or kind not in RECOVERY_KINDS:
            got = "none" if kind is MISSING else repr(text_form(kind)[:20])
            raise BadRecord(f"a recovery's kind is {' or '.join(RECOVERY_KINDS)}, got {got}")
        resumed = self.time(record, "resumed_from") if RECOVERY_KINDS[kind] == IN_PLACE else None
        if resumed is not None and resumed > self.ep_failure[-1]:
            raise BadRecord("resumed_from is later than the failure")
        self.ep_resumed[-1] = self.ep_failure[-1] if resumed is None else resumed

    def _restart_end(self, t: float, record: dict[str, Any]) -> None:
        if not self.pending:
            raise BadRecord("restart_end without a failure before it")
        resumed = self.time(record, "resumed_from")
        if resumed is not None and resumed > self.ep_failure[-1]:
            raise BadRecord("resumed_from is later than the failure")
        self.ep_end[-1] = t
        if resumed is not None:
            self.ep_resumed[-1] = resumed
        self.pending = False

    def _own(self, found: Any, event: str, t: float, record: dict[str, Any]) -> None:
        """An event a registered mechanism's reader (``found``) takes."""
        found.take(event, t, functools.partial(_given, record), functools.partial(self.time, record), self.line)

    def _silent_detected(self, t: float, record: dict[str, Any]) -> None:
        self.silent.detected(t, self.time(record, "onset"), _given(record, self.cause_field), self.line)

    def _rollback(self, t: float, record: dict[str, Any]) -> None:
        assert self.start is not None
        skip = quiet.duration(_given(record, "skip"), self.clock.factor)
        self.silent.rollback(t, self.time(record, "to"), skip, self.start, self._durable)

    def _durable(self, start: float, by: float) -> bool:
        """Whether a checkpoint completed so far started at ``start`` and was durable by ``by`` (among those
        held, and those of the last fold)."""
        for k, begun in enumerate(self.ck_start):
            if begun == start:
                persist = math.nan if self.ck_persist is None else self.ck_persist[k]
                if (self.ck_end[k] if math.isnan(persist) else persist) <= by:
                    return True
        if self.folded is not None and self.folded.recent is not None:
            starts, _, durable = self.folded.recent
            return any(d <= by for d in durable[starts == start].tolist())
        return False

    def _progress(self, t: float, record: dict[str, Any]) -> None:
        self.progress += 1
        step = record["step"] if "step" in record else get_path(record, "step", MISSING)
        if step is not MISSING and step is not None and step != "":
            try:
                last_step = float(step)
            except (TypeError, ValueError):
                raise BadRecord(f"step {text_form(step)[:20]} is not a number") from None
            except OverflowError:  # a JSON integer of 400 digits
                last_step = math.inf
            if not -MAX_STEP <= last_step <= MAX_STEP:
                raise BadRecord(f"step {text_form(step)[:20]} is not a step number (a finite number up to 2^53)")
            self.last_step = last_step

    def _level(self, record: dict[str, Any]) -> str:
        level = _given(record, "level")
        return DEFAULT_LEVEL if level is MISSING else text_form(level)

    @staticmethod
    def _index(names: dict[str, int], name: str) -> int:
        found = names.get(name)
        if found is None:
            found = names[name] = len(names)
        return found

    def timeline(self, counts: reader.Counts) -> Timeline:
        """The run as read, once every line is in: where no restart said which checkpoint it resumed
        from, the newest one durable before the failure (the run's start if none)."""
        import numpy

        name = counts.source
        if self.start is None:
            raise InputError("no run_start event: the log must say when the run began", where=f"{name}:1")
        end = self.end if self.end is not None else self.last
        if not end > self.start:
            raise InputError("the run has no length: run_end is at run_start", where=name)
        for start in self.open.values():
            self.cut.extend((start, end))  # a checkpoint still open at the end stalled until then
        column = functools.partial(numpy.frombuffer, dtype=float)
        index = functools.partial(numpy.frombuffer, dtype=numpy.int64)
        count = len(self.ck_end)
        # Without persists or a second level, one value stands for every checkpoint (no memory).
        persists = numpy.broadcast_to(math.nan, count) if self.ck_persist is None else column(self.ck_persist)
        levels = numpy.broadcast_to(numpy.int64(0), count) if self.ck_level is None else index(self.ck_level)
        checkpoints = Checkpoints(column(self.ck_start), column(self.ck_end), persists, levels)
        failure = column(self.ep_failure)
        folded = self.folded
        if folded is not None:  # the failures since the last fold, and the restarts named since
            nothing = numpy.empty(0)
            folded.resume(nothing, nothing, nothing.astype(numpy.int64), failure, end)
            if folded.recent is not None:
                folded.name(column(self.ep_resumed), *folded.recent[:2])
            folded.episodes(failure.size)
        resumed, level, unnamed = _resume_points(checkpoints, failure, column(self.ep_resumed), self.start, folded)
        if unnamed.size:  # a checkpoint not in the log, or cut short: of the default level
            level[unnamed] = self._index(self.levels, DEFAULT_LEVEL)
        failures = (
            numpy.broadcast_to(numpy.int64(1), failure.size) if self.ep_failures is None else index(self.ep_failures)
        )
        episodes = Episodes(failure, column(self.ep_end), resumed, failures, index(self.ep_cause),
                            level)  # fmt: skip
        return Timeline(
            source=name,
            time_kind=self.clock.kind or "number",
            start_s=self.start,
            end_s=end,
            levels=tuple(self.levels),
            checkpoints=checkpoints,
            cut_short=column(self.cut).reshape(-1, 2),
            episodes=episodes,
            failure_times_s=failure if self.failure_times is None else column(self.failure_times),
            failure_causes=episodes.cause if self.failure_causes is None else index(self.failure_causes),
            causes=tuple(self.causes),
            lines=counts.read,
            used=counts.kept,
            unknown=counts.ignored,
            skipped_bad=counts.skipped_bad,
            bad=counts.bad,
            progress=self.progress,
            last_step=self.last_step,
            notes=dict(counts.notes),
            year_from=counts.said.get("year_from"),
            format=counts.format,
            files=counts.files,
            kept_by={name: kept for name, found in self.readers.items() if (kept := found.columns()) is not None},
            silent=self.silent.columns(),
            folded=folded,
            outages=None if self.outages is None else self.outages.found(name),
        )


def _resume_points(
    checkpoints: Checkpoints, failure: Any, named: Any, run_start: float, folded: _Folded | None = None
) -> tuple[Any, Any, Any]:
    """Where each episode resumed (``named``, or where NaN the newest checkpoint durable by its failure,
    the run's start if none), the index of that checkpoint's level (-1: the run's start), and the
    episodes that named a point no completed checkpoint started at other than the run's start. A
    checkpoint held beats a folded one (it started later); the folded ones' answers are ``folded``'s."""
    import numpy

    if folded is not None:  # the folded checkpoints' answers first; those held overwrite them
        resumed = numpy.where(numpy.isnan(named), numpy.frombuffer(folded.resume_start, dtype=float), named)
        level = numpy.frombuffer(folded.resume_level, dtype=numpy.int64).copy()
        level[~numpy.isnan(named)] = -1
        resume, given = _resume_points(checkpoints, failure, named, math.nan)[:2], ~numpy.isnan(named)
        held = ~numpy.isnan(resume[0]) & numpy.isnan(named)  # inferred among those held
        resumed[held], level[held] = resume[0][held], resume[1][held]
        level[given] = resume[1][given]
        named_level = numpy.frombuffer(folded.named_level, dtype=numpy.int64)
        among = given & (level < 0) & (named_level >= 0)
        level[among] = named_level[among]
        unnamed = numpy.flatnonzero(given & (level < 0))
        resumed[numpy.isnan(resumed)] = run_start
        return resumed, level, unnamed[named[unnamed] != run_start]
    resumed = named.copy()
    level = numpy.full(failure.size, -1, dtype=numpy.int64)
    inferred, given = numpy.flatnonzero(numpy.isnan(named)), numpy.flatnonzero(~numpy.isnan(named))
    unnamed = given
    starts_ascending = _ascending(checkpoints.start_s)
    synchronous = not any(bool(numpy.isfinite(checkpoints.persist_end_s[at : at + CHUNK]).any())
                          or bool(numpy.isinf(checkpoints.persist_end_s[at : at + CHUNK]).any())
                          for at in _chunks(checkpoints.persist_end_s.size))  # fmt: skip
    if (
        checkpoints.start_s.size
        and inferred.size
        and synchronous
        and starts_ascending
        and _ascending(checkpoints.end_s)
    ):
        # Durable at their ends, in the order they started (one level, say): the newest durable by a
        # failure is the last to end by then, found without sorting or copying any column.
        found = numpy.searchsorted(checkpoints.end_s, failure[inferred], side="right") - 1
        has = found >= 0
        resumed[inferred[has]] = checkpoints.start_s[found[has]]
        level[inferred[has]] = checkpoints.level[found[has]]
    elif checkpoints.start_s.size and inferred.size:
        # Checkpoints by when they became durable, and the one with the latest start so far.
        durable = checkpoints.durable_s
        order = numpy.argsort(durable, kind="stable")
        found = numpy.searchsorted(durable[order], failure[inferred], side="right") - 1
        del durable
        starts = checkpoints.start_s[order]
        newest = numpy.maximum.accumulate(starts)
        holder = numpy.maximum.accumulate(numpy.where(starts >= newest, numpy.arange(starts.size), 0))
        has = found >= 0
        resumed[inferred[has]] = newest[found[has]]
        level[inferred[has]] = checkpoints.level[order[holder[found[has]]]]
        del order, starts, newest, holder
    if checkpoints.start_s.size and given.size:
        if starts_ascending:  # already in order: no sort, no copy
            sorted_starts = checkpoints.start_s
            at = numpy.minimum(numpy.searchsorted(sorted_starts, named[given]), sorted_starts.size - 1)
            matched = sorted_starts[at] == named[given]
            level[given[matched]] = checkpoints.level[at[matched]]
        else:
            by_start = numpy.argsort(checkpoints.start_s, kind="stable")
            sorted_starts = checkpoints.start_s[by_start]
            at = numpy.minimum(numpy.searchsorted(sorted_starts, named[given]), sorted_starts.size - 1)
            matched = sorted_starts[at] == named[given]
            level[given[matched]] = checkpoints.level[by_start[at[matched]]]
        unnamed = given[~matched]
    resumed[numpy.isnan(resumed)] = run_start
    return resumed, level, unnamed[named[unnamed] != run_start]


def _rest(column: array[Any], start: int) -> array[Any]:
    """A typed array without its first ``start`` items (a new one: the old one's memory is let go)."""
    rest = array(column.typecode)
    rest.frombytes(memoryview(column)[start:].tobytes())
    return rest


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
    time_field: str | None = None,
    time_unit: str | None = None,
    cause: str = "cause",
    skip_bad: bool = False,
    year: int | None = None,
    **stated: Any,
) -> Timeline:
    """Read an event log's text or lines (see the module's description); ``year`` and ``stated`` as in
    :func:`read`."""
    run = _Run(time_field, time_unit, cause, stated=stated)
    counts = reader.scan_text(lines, run, name=name, format=format, required=("event",), skip_bad=skip_bad, year=year)
    return run.timeline(counts)


# ------------------------------------------------------------------ analysis


@dataclass(frozen=True)
class Split(montecarlo.Split):
    """Shares of wall time (the simulation's split: they sum to 1), and the seconds behind them; with a
    mechanism's events, the kept work they lost beside useful (``own``, by the keys of its ``log_split_keys``:
    replica groups down, quorum pauses and the overhead)."""

    wall_s: float
    silent: float = 0.0  # kept work lost to silent events: rolled back past, or skipped (docs/model.md §11.7)
    own: Mapping[str, float] = field(default_factory=dict)  # absent: none lost

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
    # What each registered mechanism's events measured (``log_losses``), by the mechanism's name; absent: none.
    measured_by: Mapping[str, Any] = field(default_factory=dict)
    silent: quiet.Measured | None = None  # what the silent events measured; None: the log has none
    # The measured quantiles that come from a sketch (more values than EXACT_VALUES): "interval_s",
    # "restart_p90_s", "LEVEL.write_p90_s"; empty when every one is exact.
    approximate: tuple[str, ...] = ()

    @property
    def lost_shares(self) -> list[float]:
        """Each cause's lost time as a share of the run's wall time, in the order of :attr:`causes`.

        >>> analysis = analyze_timeline(read("tests/data/hand-run.jsonl", time_unit="min"))
        >>> [(c.cause, round(share, 6)) for c, share in zip(analysis.causes, analysis.lost_shares)]
        [('gpu', 0.283333), ('nic', 0.2)]
        """
        return list(shares({c.cause: c.lost_s for c in self.causes}, self.realised.wall_s).values())

    def below(self, floor: float | None) -> list[bool | None] | None:
        """Whether each window's effective time falls below ``floor`` (an SLO; None for each without one),
        or None where the run is not split into windows.

        >>> analysis = analyze_timeline(read("tests/data/hand-run.jsonl", time_unit="min"), window_s=3600.0)
        >>> [round(w.split.effective, 6) for w in analysis.windows], analysis.below(0.5), analysis.below(None)
        ([0.333333, 0.55], [True, False], [None, None])
        """
        if self.windows is None:
            return None
        return [None if floor is None else w.split.effective < floor for w in self.windows]


class _Covered:
    """Time covered up to any moment (``upto``), and so within any span."""

    def upto(self, t: Any) -> Any:
        raise NotImplementedError

    def within(self, a: Any, b: Any) -> Any:
        import numpy

        if numpy.ndim(a) == 0 or len(a) <= CHUNK:
            return self.upto(b) - self.upto(a)
        # A slice at a time, so that no temporary grows with the number of spans asked about.
        found = numpy.empty(len(a))
        for at in _chunks(len(a)):
            found[at : at + CHUNK] = self.upto(b[at : at + CHUNK]) - self.upto(a[at : at + CHUNK])
        return found


class _Coverage(_Covered):
    """Time covered by a set of spans (``starts``, ``ends``), up to any moment: measure(spans ∩ [a, b])
    in O(log n). Spans already in order and apart (one level's stalls, say) are used as they are."""

    def __init__(self, starts: Any, ends: Any) -> None:
        import numpy

        self.starts, self.ends = _merge(starts, ends)
        # Covered before each span: the running sum of the lengths, made a slice at a time in place (the
        # same sums, one after the other, as numpy.cumsum of every length at once).
        self.before = numpy.empty(self.starts.size + 1)
        self.before[0] = 0.0
        for at in range(0, self.starts.size, CHUNK):
            part = self.before[at + 1 : at + 1 + CHUNK]
            numpy.subtract(self.ends[at : at + CHUNK], self.starts[at : at + CHUNK], out=part)
            part[0] += self.before[at]
            numpy.cumsum(part, out=part)

    def upto(self, t: Any) -> Any:
        import numpy

        k = numpy.searchsorted(self.starts, t, side="right") - 1  # the last span that starts by t
        at = numpy.maximum(k, 0)
        if not self.starts.size:
            return numpy.zeros_like(numpy.asarray(t, dtype=float))
        inside = numpy.minimum(numpy.asarray(t) - self.starts[at], self.ends[at] - self.starts[at])
        return numpy.where(k >= 0, self.before[at] + inside, 0.0)


class _Union:
    """The coverage of spans in parts that do not overlap one another: the sum of the parts'."""

    def __init__(self, *parts: _Coverage | _Union | _Blocks) -> None:
        self.parts = parts

    def within(self, a: Any, b: Any) -> Any:
        return sum(part.within(a, b) for part in self.parts)


class _Blocks(_Covered):
    """The coverage of the folded stalls, in bounded memory: sorted, disjoint blocks, each one span
    (exact) or several neighbouring ones merged (coarse: the time they cover, spread evenly over the
    block). Exact at every block's edges and between blocks, and so at every pinned point and within
    every pinned range, which always stay in blocks of one span; between, coarse blocks of ``grain``
    spans, the grain doubling each time the unpinned blocks outgrow :data:`COVERAGE_BLOCKS`."""

    def __init__(self) -> None:
        self.starts, self.ends = array("d"), array("d")
        self.before, self.after = array("d"), array("d")  # covered before each block, and by its end
        self.single, self.pinned = array("b"), array("b")
        self.total = 0.0
        self.grain = 1
        self.coarse = False  # whether any block is coarse

    def add(self, starts: Any, ends: Any, points: Any, ranges: tuple[Any, Any], provisional: Any) -> None:
        """Add sorted, disjoint spans later than every block. Pin for good the blocks holding ``points``
        (or the gap after them) and those meeting ``ranges`` (starts, ends), and until the next addition
        those holding the ``provisional`` points: the pins of the last addition's lapse."""
        import numpy

        if not starts.size:
            return
        n = starts.size
        old = numpy.frombuffer(self.pinned, dtype=numpy.int8)
        old[old == 1] = 0
        if old.size:  # points and ranges before the new spans: in the blocks there
            old_starts = numpy.frombuffer(self.starts, dtype=float)
            for values, level in ((points, 2), (provisional, 1)):
                k = numpy.searchsorted(old_starts, values[values < starts[0]], side="right") - 1
                k = k[k >= 0]
                old[k] = numpy.maximum(old[k], level)
            early = ranges[0] < starts[0]
            old[_stretches(old_starts, ranges[0][early], ranges[1][early])] = 2
            del old_starts
        del old  # no view may hold the columns while they grow
        lengths = ends - starts
        lengths[0] += self.total
        covered = numpy.cumsum(lengths)  # the running total, summed one span after the other
        before = numpy.concatenate(([self.total], covered[:-1]))
        self.total = float(covered[-1])
        strong = _stretches(starts, numpy.concatenate((points, ranges[0])), numpy.concatenate((points, ranges[1])))
        weak = _stretches(starts, provisional, provisional)
        pinned = numpy.where(strong, 2, numpy.where(weak, 1, 0)).astype(numpy.int8)
        held = pinned > 0
        first = held | numpy.concatenate(([True], held[:-1])) | (numpy.arange(n) % self.grain == 0)
        self._append(starts, ends, before, covered, pinned, first)
        while len(self.pinned) - numpy.count_nonzero(numpy.frombuffer(self.pinned, dtype=numpy.int8)) > COVERAGE_BLOCKS:
            if not self._coarsen():  # each run between pinned blocks is one block already
                break

    def _append(self, starts: Any, ends: Any, before: Any, after: Any, pinned: Any, first: Any) -> None:
        import numpy

        heads = numpy.flatnonzero(first)
        tails = numpy.concatenate((heads[1:] - 1, [starts.size - 1]))
        single = heads == tails
        self.coarse = self.coarse or not bool(single.all())
        for column, values in ((self.starts, starts[heads]), (self.ends, ends[tails]), (self.before, before[heads]),
                               (self.after, after[tails])):  # fmt: skip
            column.frombytes(numpy.ascontiguousarray(values, dtype=float).tobytes())
        self.single.frombytes(single.astype(numpy.int8).tobytes())
        self.pinned.frombytes(numpy.ascontiguousarray(pinned[heads], dtype=numpy.int8).tobytes())

    def _coarsen(self) -> bool:
        """Merge the unpinned blocks in pairs (within each run of them between pinned ones); False when
        no two were neighbours."""
        import numpy

        starts, ends, before, after, single, pinned = self._columns()
        held = pinned > 0
        index = numpy.arange(starts.size)
        since = index - numpy.maximum.accumulate(numpy.where(held, index, -1)) - 1  # place in its run
        first = held | (since % 2 == 0)
        if first.all():
            return False
        self.starts, self.ends, self.before, self.after = array("d"), array("d"), array("d"), array("d")
        self.single, self.pinned = array("b"), array("b")
        heads = numpy.flatnonzero(first)
        tails = numpy.concatenate((heads[1:] - 1, [starts.size - 1]))
        self._append(starts, ends, before, after, pinned, first)
        keep = numpy.frombuffer(self.single, dtype=numpy.int8).copy()
        keep &= single[heads].astype(numpy.int8) & (heads == tails).astype(numpy.int8)
        self.single = array("b", keep.tobytes())
        self.grain = min(2 * self.grain, 1 << 40)
        return True

    def _columns(self) -> tuple[Any, Any, Any, Any, Any, Any]:
        import numpy

        column = functools.partial(numpy.frombuffer, dtype=float)
        flag = functools.partial(numpy.frombuffer, dtype=numpy.int8)
        return (column(self.starts), column(self.ends), column(self.before), column(self.after),
                flag(self.single).astype(bool), flag(self.pinned))  # fmt: skip

    def upto(self, t: Any) -> Any:
        import numpy

        starts, ends, before, after, single, _ = self._columns()
        t = numpy.asarray(t, dtype=float)
        if not starts.size:
            return numpy.zeros_like(t)
        k = numpy.searchsorted(starts, t, side="right") - 1
        at = numpy.maximum(k, 0)
        s, e, b0, b1 = starts[at], ends[at], before[at], after[at]
        exact = b0 + numpy.minimum(t - s, e - s)
        spread = numpy.where(t >= e, b1, b0 + (b1 - b0) * numpy.clip((t - s) / (e - s), 0.0, 1.0))
        return numpy.where(k >= 0, numpy.where(single[at], exact, spread), 0.0)

    def inexact(self, points: Any) -> bool:
        """Whether any of the points falls inside a coarse block (where the coverage is spread)."""
        import numpy

        starts, ends, _, _, single, _ = self._columns()
        t = numpy.asarray(points, dtype=float)
        if not self.coarse or not starts.size:
            return False
        k = numpy.searchsorted(starts, t, side="right") - 1
        at = numpy.maximum(k, 0)
        return bool(numpy.any((k >= 0) & ~single[at] & (t > starts[at]) & (t < ends[at])))

    def spans(self) -> tuple[Any, Any]:
        """The blocks as spans (a coarse one whole: it meets no pinned range)."""
        starts, ends, *_ = self._columns()
        return starts, ends


class _Folded:
    """What the checkpoints folded while reading leave (:meth:`_Run._fold`), in bounded memory: their stall
    coverage (:class:`_Blocks`), each level's stalls and persist lags, the clean gaps between consecutive
    ones and the runs of memory checkpoints between storage ones (in the order they started), and for
    each failure the newest of them durable by it. Every folded checkpoint started and ended before any
    checkpoint left as columns started."""

    def __init__(self) -> None:
        self.coverage = _Blocks()
        self.count = 0
        self.stalls: dict[int, Quantiles] = {}
        self.persists: dict[int, Quantiles] = {}
        self.gaps = Quantiles()
        self.last_end: float | None = None  # the end of the folded checkpoint that started last
        self.runs, self.last_stored, self.stored = Quantiles(), -1, 0
        # Folded checkpoints a later failure may still resume from: the newest durable by the last fold,
        # and those whose persist was still running (durable, start, level).
        self.carried: tuple[Any, Any, Any] | None = None
        # Per episode: the newest folded checkpoint durable by its failure (start, level index; NaN, -1:
        # none), and the level of the folded checkpoint its restart named (-1: none, -2: not looked up).
        self.resume_start = array("d")
        self.resume_level = array("q")
        self.named_level = array("q")
        self.recent: tuple[Any, Any, Any] | None = None  # the last fold's starts (sorted), levels, durables
        self.low = math.inf  # where the last fold's spans began
        self.high = -math.inf  # and where they ended

    def episodes(self, count: int) -> None:
        """Grow the per-episode columns to ``count`` episodes."""
        more = count - len(self.resume_start)
        if more > 0:
            self.resume_start.extend([math.nan] * more)
            self.resume_level.extend([-1] * more)
            self.named_level.extend([-2] * more)

    def resume(self, durable: Any, starts: Any, levels: Any, failures: Any, now: float) -> None:
        """Checkpoints folded now (durable, start, level, in the order they ended), with those carried: the
        newest durable by each failure, and what a later failure may still resume from."""
        import numpy

        if self.carried is not None:
            pairs = zip(self.carried, (durable, starts, levels), strict=True)
            durable, starts, levels = (numpy.concatenate((old, new)) for old, new in pairs)
        durable, starts, levels = (column[numpy.isfinite(durable)] for column in (durable, starts, levels))
        if not durable.size:
            return
        order = numpy.argsort(durable, kind="stable")
        durable, starts, levels = durable[order], starts[order], levels[order]
        newest = numpy.maximum.accumulate(starts)
        holder = numpy.maximum.accumulate(numpy.where(starts >= newest, numpy.arange(starts.size), 0))
        self.episodes(failures.size)
        first = int(numpy.searchsorted(failures, durable[0], side="left"))
        found = numpy.searchsorted(durable, failures[first:], side="right") - 1
        has = numpy.flatnonzero(found >= 0)
        resume_start = numpy.frombuffer(self.resume_start, dtype=float)
        resume_level = numpy.frombuffer(self.resume_level, dtype=numpy.int64)
        resume_start[first + has] = newest[found[has]]
        resume_level[first + has] = levels[holder[found[has]]]
        settled = int(numpy.searchsorted(durable, now, side="right")) - 1
        running = slice(settled + 1, None)
        keep = starts[running] >= (newest[settled] if settled >= 0 else -math.inf)
        carried = [(durable[running][keep], starts[running][keep], levels[running][keep])]
        if settled >= 0:
            h = holder[settled]
            carried.insert(0, (durable[h : h + 1], newest[settled : settled + 1], levels[h : h + 1]))
        self.carried = tuple(numpy.concatenate(parts) for parts in zip(*carried, strict=True))  # type: ignore[assignment]

    def name(self, named: Any, starts: Any, levels: Any, since: int = 0) -> None:
        """The level of the folded checkpoint each episode's restart named, where not looked up yet (from
        episode ``since`` on: the earlier ones failed before these checkpoints started)."""
        import numpy

        if not starts.size or not named.size:
            return
        self.episodes(named.size)
        order = numpy.argsort(starts, kind="stable")
        sorted_starts = starts[order]
        level = numpy.frombuffer(self.named_level, dtype=numpy.int64)
        ask = numpy.flatnonzero((level[since:] == -2) & ~numpy.isnan(named[since:])) + since
        at = numpy.minimum(numpy.searchsorted(sorted_starts, named[ask]), sorted_starts.size - 1)
        matched = sorted_starts[at] == named[ask]
        level[ask[matched]] = levels[order[at[matched]]]

    def points(self) -> Any:
        """The starts of the checkpoints a later failure may still resume from."""
        import numpy

        return numpy.empty(0) if self.carried is None else self.carried[1]


def _stretches(starts: Any, low: Any, high: Any) -> Any:
    """Which of the sorted spans starting at ``starts`` meet a stretch from ``low`` to ``high`` (or the gap
    after them): from the last span starting by ``low`` to the last starting by ``high``."""
    import numpy

    marks = numpy.zeros(starts.size + 1, dtype=numpy.int64)  # +1 where a stretch begins, -1 after it
    hi = numpy.searchsorted(starts, high, side="right") - 1
    lo = numpy.maximum(numpy.searchsorted(starts, low, side="right") - 1, 0)
    meet = hi >= lo
    numpy.add.at(marks, lo[meet], 1)
    numpy.add.at(marks, hi[meet] + 1, -1)
    return numpy.cumsum(marks[:-1]) > 0


def _stalls(checkpoints: Checkpoints, cut: Any) -> _Coverage | _Union:
    """The coverage of every stall: the completed checkpoints' and those cut short. They seldom overlap
    (never with one level), and then the checkpoints' own arrays serve, unsorted and uncopied."""
    import numpy

    done = _Coverage(checkpoints.start_s, checkpoints.end_s)
    if not cut.size:
        return done
    short = _Coverage(numpy.ascontiguousarray(cut[:, 0]), numpy.ascontiguousarray(cut[:, 1]))
    if not numpy.any(done.within(short.starts, short.ends) > 0):
        return _Union(done, short)
    starts = numpy.concatenate((checkpoints.start_s, cut[:, 0]))
    return _Coverage(starts, numpy.concatenate((checkpoints.end_s, cut[:, 1])))


def _all(test: Any, a: Any, b: Any) -> bool:
    """Whether ``test(a, b)`` holds everywhere, a slice at a time (no temporary the size of the arrays)."""
    return all(bool(test(a[at : at + CHUNK], b[at : at + CHUNK]).all()) for at in range(0, len(a), CHUNK))


def _ascending(values: Any) -> bool:
    import numpy

    return values.size < 2 or _all(numpy.greater_equal, values[1:], values[:-1])


def _merge(starts: Any, ends: Any) -> tuple[Any, Any]:
    """Sorted, disjoint spans covering the same time as the spans ``starts``–``ends``: the arrays
    themselves when they already are."""
    import numpy

    if not _all(numpy.greater, ends, starts):
        keep = ends > starts
        starts, ends = starts[keep], ends[keep]
    if starts.size < 2 or _all(numpy.greater_equal, starts[1:], ends[:-1]):
        return starts, ends
    order = numpy.argsort(starts, kind="stable")
    starts, reach = starts[order], numpy.maximum.accumulate(ends[order])
    del order
    first = numpy.flatnonzero(numpy.concatenate(([True], starts[1:] > reach[:-1])))
    last = numpy.concatenate((first[1:] - 1, [starts.size - 1]))
    return starts[first], reach[last]


#: The most windows ``window_s`` may split a run into.
MOST_WINDOWS = 10_000


def check_windows(timeline: Timeline, window_s: float | None) -> None:
    """Refuse a window (``window``) that splits the run into more than :data:`MOST_WINDOWS` windows.

    >>> run = read("tests/data/hand-run.jsonl", time_unit="min")
    >>> check_windows(run, 60.0), check_windows(run, None)
    (None, None)
    >>> check_windows(run, 0.5)
    Traceback (most recent call last):
    ...
    ckptcalc.errors.InputError: window: more than 10,000 windows: choose a longer one
    """
    if window_s is not None and (timeline.end_s - timeline.start_s) / window_s > MOST_WINDOWS:
        raise InputError(f"more than {MOST_WINDOWS:,} windows: choose a longer one", where="window")


def analyze_timeline(timeline: Timeline, *, window_s: float | None = None, **stated: Any) -> Analysis:
    """Split the timeline's wall time, and measure its stalls, restarts, interval and failures; with a
    mechanism's events, their losses (``stated``: what the mechanisms' ``log_values`` gave, such as the
    per-step cost of the groups' fault tolerance, which the log cannot show)."""
    import numpy

    t0, t1 = timeline.start_s, timeline.end_s
    ck, ep = timeline.checkpoints, timeline.episodes
    ended = numpy.where(numpy.isnan(ep.end_s), t1, ep.end_s)
    stall: _Coverage | _Union = _stalls(ck, timeline.cut_short)
    folded = timeline.folded
    if folded is not None:  # the folded stalls ended before any held one began
        stall = _Union(folded.coverage, stall)
    restart = _Coverage(ep.failure_s, ended)
    lost_from, lost_to = _merge(ep.resumed_from_s, ep.failure_s)
    silent_lost = None
    own: dict[str, Any] = {}
    cut = timeline.cut_short
    if timeline.silent is not None or timeline.kept_by:  # what none may count again
        early = (numpy.empty(0), numpy.empty(0)) if folded is None else folded.coverage.spans()
        blocked = _merge(numpy.concatenate((early[0], ck.start_s, cut[:, 0], restart.starts, lost_from)),
                         numpy.concatenate((early[1], ck.end_s, cut[:, 1], restart.ends, lost_to)))  # fmt: skip
    if timeline.silent is not None:
        # The silent events' lost work, less what is counted already (a stall, a restart, rework).
        pieces = quiet.kept_pieces(*quiet.spans(timeline.silent), blocked)
        silent_lost = _Coverage(*pieces)
        blocked = _merge(numpy.concatenate((blocked[0], pieces[0])), numpy.concatenate((blocked[1], pieces[1])))
    if timeline.kept_by:
        own = registry.log_losses(dict(timeline.kept_by), start_s=t0, end_s=t1, blocked=blocked,
                                  restarts=(restart.starts, restart.ends), failures_s=timeline.failure_times_s,
                                  stated=stated)  # fmt: skip

    def split(a: float, b: float) -> Split:
        wall = b - a
        write = float(stall.within(a, b))
        down = float(restart.within(a, b))
        if lost_from.size:
            lo = numpy.clip(lost_from, a, b)
            hi = numpy.clip(lost_to, a, b)
            rework_s = float(numpy.sum(hi - lo - stall.within(lo, hi) - restart.within(lo, hi)))
        else:
            rework_s = 0.0
        rework_s = max(rework_s, 0.0)
        useful = max(wall - write - down - rework_s, 0.0)
        silent = 0.0 if silent_lost is None else float(silent_lost.within(a, b))
        useful = max(useful - silent, 0.0)
        if not own:
            return Split(useful / wall, write / wall, rework_s / wall, down / wall, wall, silent=silent / wall)
        parts: dict[str, float] = {}
        for found in own.values():
            parts.update(found.within(a, b))
        for seconds in parts.values():
            useful -= seconds
        useful = max(useful, 0.0)
        return Split(useful / wall, write / wall, rework_s / wall, down / wall, wall, silent=silent / wall,
                     own={key: seconds / wall for key, seconds in parts.items()})  # fmt: skip

    realised = split(t0, t1)
    edges = numpy.linspace(t0, t1, BATCHES + 1)
    batch = numpy.array([split(float(a), float(b)).effective for a, b in itertools.pairwise(edges)])
    half = T975_19 * float(numpy.std(batch, ddof=1)) / math.sqrt(BATCHES)
    windows = None
    if window_s is not None:
        count = max(1, math.ceil((t1 - t0) / window_s - 1e-9))
        bounds = [t0 + i * window_s for i in range(count)] + [t1]
        windows = tuple(Window(a, b, split(a, b)) for a, b in itertools.pairwise(bounds))

    # Restart times: the restarts that ended with no second failure during them.
    completed = (ep.failures == 1) & ~numpy.isnan(ep.end_s)
    durations = Quantiles()
    durations.extend((ep.end_s - ep.failure_s)[completed])
    levels, approximate = _levels(timeline, completed)
    interval, every, sketched = _interval(timeline)
    sketches = [*approximate, *(["restart_p90_s"] if durations.approximate else []),
                *(["interval_s"] if sketched else [])]  # fmt: skip
    if folded is not None:  # a batch's or a window's edge inside a coarse block of folded stalls
        # The model agrees where it falls inside the batch interval: the verdict is as approximate.
        sketches += ["effective_ci95", "agrees"] if folded.coverage.inexact(edges) else []
        sketches += ["windows"] if windows is not None and folded.coverage.inexact(bounds) else []
    lost = _lost_per_episode(timeline, stall, restart) + (ended - ep.failure_s)
    causes = []
    for index, name in enumerate(timeline.causes):
        mine = ep.cause == index
        if mine.any():
            causes.append(Cause(name, int(ep.failures[mine].sum()), float(lost[mine].sum())))
    causes.sort(key=lambda c: -c.lost_s)
    served = ep.resumed_level[ep.resumed_level >= 0]
    memory_levels = [i for i, name in enumerate(timeline.levels) if name in MEMORY_LEVELS]
    two = any(level.name in MEMORY_LEVELS for level in levels) and len(levels) > 1
    memory = float(numpy.isin(served, memory_levels).mean()) if two and served.size else None
    return Analysis(
        timeline=timeline,
        realised=realised,
        effective_ci95=(max(realised.effective - half, 0.0), min(realised.effective + half, 1.0)),
        levels=levels,
        interval_s=interval,
        storage_every=every if two else None,
        restart_s=durations.mean if durations.count else None,
        restart_p90_s=durations.quantile(0.9) if durations.count else None,
        restarts_measured=durations.count,
        failures=int(ep.failures.sum()),
        memory_share=memory,
        causes=tuple(causes),
        windows=windows,
        measured_by={name: found.measured() for name, found in own.items()},
        silent=None if timeline.silent is None else quiet.measure(timeline.silent, wall_s=t1 - t0),
        approximate=tuple(sketches),
    )  # fmt: skip


def by_cause(timeline: Timeline) -> tuple[dict[str, int], dict[str, list[float]]]:
    """Every failure counted by its own cause (those during a restart too), and the restarts measured, by the
    cause of the failure each followed: those that ended with no second failure during them (docs/model.md
    §20.6)."""
    import numpy

    names = timeline.causes
    tally = numpy.bincount(numpy.asarray(timeline.failure_causes, dtype=numpy.int64), minlength=len(names))
    counts = {name: int(tally[i]) for i, name in enumerate(names) if tally[i]}
    ep = timeline.episodes
    completed = (ep.failures == 1) & ~numpy.isnan(ep.end_s)
    restarts: dict[str, list[float]] = {}
    for index, duration in zip(
        ep.cause[completed].tolist(), (ep.end_s - ep.failure_s)[completed].tolist(), strict=True
    ):
        restarts.setdefault(names[index], []).append(duration)
    return counts, restarts


def measured_config(analysis: Analysis, fitted: FailureFit) -> tuple[Config | None, str | None]:
    """The model configuration of the inputs a run's log measured, with the MTBF ``fitted`` over its failures
    (SI seconds: a checkpoint of 1 byte written at 1/δ bytes per second; docs/model.md §11.2), or None and the
    reason none can be built.

    >>> from ckptcalc.logs.fit import fit_events
    >>> run = read("tests/data/hand-run.jsonl", time_unit="min")
    >>> fitted = fit_events(run.failure_times_s, start_s=run.start_s, end_s=run.end_s)
    >>> config, _ = measured_config(analyze_timeline(run), fitted)
    >>> [float(x) for x in (1.0 / config.bandwidth, config.restart_s, config.mtbf_s, config.interval_s)]
    [120.0, 600.0, 1800.0, 600.0]
    >>> measured_config(analyze_timeline(run), fit_events([], start_s=run.start_s, end_s=run.end_s))
    (None, 'no failure: only a lower bound on the MTBF exists')
    """
    from ckptcalc.model.evaluation import Config

    levels = {level.name: level for level in analysis.levels}
    if not levels:
        return None, "no completed checkpoint to measure"
    if fitted.mtbf.mtbf_s is None:
        return None, "no failure: only a lower bound on the MTBF exists"
    if analysis.restart_s is None:
        return None, "no completed restart to measure"
    if analysis.interval_s is None:
        return None, "fewer than two checkpoints without a failure between them"
    memory = levels.get("memory")
    others = [level for name, level in levels.items() if name != "memory"]
    if len(others) > 1:
        return None, f"more than one storage level ({', '.join(sorted(level.name for level in others))})"
    mtbf = float(fitted.mtbf.mtbf_s)
    if memory is None or not others:
        (level,) = list(levels.values())
        config = Config(checkpoint_bytes=1.0, bandwidth=1.0 / level.stall_s, mtbf_s=mtbf,
                        restart_s=analysis.restart_s, interval_s=analysis.interval_s)  # fmt: skip
        if level.persist_s is not None:
            config = config.replace(snapshot_bandwidth=1.0 / level.stall_s, bandwidth=1.0 / level.persist_s)
        return config, None
    storage = others[0]
    share = analysis.memory_share
    if share is None or not 0.0 < share < 1.0 or analysis.storage_every is None:
        return None, "the failures do not show which level serves them (resumed_from)"
    extra = max(storage.stall_s - memory.stall_s, 1e-9)
    config = Config(
        checkpoint_bytes=1.0,
        bandwidth=1.0 / extra,
        mtbf_s=mtbf,
        restart_s=storage.restart_s or analysis.restart_s,
        replica_survival=share,
        memory_bandwidth=1.0 / memory.stall_s,
        memory_restart_s=memory.restart_s or analysis.restart_s,
        memory_interval_s=analysis.interval_s,
        interval_s=analysis.interval_s * analysis.storage_every,
    )
    if storage.persist_s is not None:
        config = config.replace(snapshot_bandwidth=1.0 / extra, bandwidth=1.0 / storage.persist_s)
    return config, None


def measured_inputs(config: Any, checkpoint_bytes: float) -> dict[str, float]:
    """The inputs of a :func:`measured_config` (a :class:`ckptcalc.model.evaluation.Config` of a checkpoint of 1
    byte, its interval measured) as a preset states them for a checkpoint of ``checkpoint_bytes``: each bandwidth
    scaled to it, the times as measured.

    >>> from ckptcalc.logs.fit import fit_events
    >>> run = read("tests/data/hand-run.jsonl", time_unit="min")
    >>> config, _ = measured_config(analyze_timeline(run), fit_events(run.failure_times_s, start_s=0.0, end_s=7200.0))
    >>> values = measured_inputs(config, 1.2e12)
    >>> values["bandwidth"], values["restart_s"], values["interval_s"], "memory_bandwidth" in values
    (10000000000.0, 600.0, 600.0, False)
    """
    values: dict[str, float] = {
        "checkpoint_bytes": checkpoint_bytes,
        "bandwidth": checkpoint_bytes * float(config.bandwidth),
        "restart_s": float(config.restart_s),
        "mtbf_s": float(config.mtbf_s),
        "interval_s": float(config.interval_s),
    }
    if config.snapshot_bandwidth is not None:
        values["snapshot_bandwidth"] = checkpoint_bytes * float(config.snapshot_bandwidth)
    if config.replica_survival is not None:
        values.update(
            replica_survival=float(config.replica_survival),
            memory_bandwidth=checkpoint_bytes * float(config.memory_bandwidth),
            memory_restart_s=float(config.memory_restart_s),
            memory_interval_s=float(config.memory_interval_s),
        )
    return values


def _lost_per_episode(timeline: Timeline, stall: _Coverage | _Union, restart: _Coverage) -> Any:
    """The work each failure lost that no earlier failure had already lost (they sum to the rework).

    Episodes come in time order and each lost span ends at its failure, so a new span can only overlap
    the end of the union of the earlier ones: a stack of disjoint spans, each pushed and popped once.
    """
    import numpy

    ep = timeline.episodes
    lost = numpy.empty(len(ep))
    for at in _chunks(len(ep)):  # a slice at a time: no temporary the size of the episodes
        a, b = ep.resumed_from_s[at : at + CHUNK], ep.failure_s[at : at + CHUNK]
        lost[at : at + CHUNK] = numpy.maximum(b - a - stall.within(a, b) - restart.within(a, b), 0.0)
    # The spans popped: each one's overlap with the new span was already lost. In typed arrays rather
    # than a tuple each, and taken off a slice at a time: a long run's episodes overlap by the million.
    popped, low, high = array("q"), array("d"), array("d")

    def take_off() -> None:
        which, lo, hi = numpy.frombuffer(popped, dtype=numpy.int64), numpy.frombuffer(low), numpy.frombuffer(high)
        overlap = numpy.maximum(hi - lo - stall.within(lo, hi) - restart.within(lo, hi), 0.0)
        numpy.subtract.at(lost, which, overlap)
        del which, lo, hi  # no view may hold the columns while they are emptied
        for column in (popped, low, high):
            del column[:]

    union_start, union_end = array("d"), array("d")
    for at in _chunks(len(ep)):
        part = slice(at, at + CHUNK)
        pairs = zip(ep.resumed_from_s[part].tolist(), ep.failure_s[part].tolist(), strict=True)
        for i, (a, b) in enumerate(pairs, start=at):
            start = a
            while union_end and union_end[-1] >= a:
                s0, e0 = union_start.pop(), union_end.pop()
                popped.append(i)
                low.append(max(s0, a))
                high.append(min(e0, b))
                start = min(start, s0)
            union_start.append(start)
            union_end.append(b)
        if len(popped) >= CHUNK:
            take_off()
    if popped:
        take_off()
    return numpy.maximum(lost, 0.0)


def _chunks(count: int) -> range:
    return range(0, count, CHUNK)


def _present(levels: Any) -> list[int]:
    """The level indices that occur, a slice at a time."""
    import numpy

    found: set[int] = set()
    for at in _chunks(len(levels)):
        found.update(numpy.unique(levels[at : at + CHUNK]).tolist())
    return sorted(found)


def _levels(timeline: Timeline, completed: Any) -> tuple[tuple[Level, ...], tuple[str, ...]]:
    """What each level measured, and the quantities whose quantiles are approximate (a sketch's)."""
    import numpy

    ck, ep = timeline.checkpoints, timeline.episodes
    found = []
    folded = timeline.folded
    present = set(_present(ck.level)) | (set() if folded is None else set(folded.stalls))
    order = sorted(present, key=lambda i: (timeline.levels[i] not in MEMORY_LEVELS, timeline.levels[i]))
    stalls = {index: Quantiles() for index in order}
    persists = {index: Quantiles() for index in order}
    if folded is not None:  # what the folded checkpoints left, then those held
        stalls.update((index, values.copy()) for index, values in folded.stalls.items())
        persists.update((index, values.copy()) for index, values in folded.persists.items())
    for at in _chunks(ck.end_s.size):
        part = slice(at, at + CHUNK)
        ends, levels = ck.end_s[part], ck.level[part]
        lengths = ends - ck.start_s[part]
        # The persist lag from the persists that completed: NaN is synchronous, inf never became durable.
        lags = ck.persist_end_s[part] - ends
        for index in order:
            mine = levels == index if len(order) > 1 else slice(None)  # one level: no copies
            stalls[index].extend(lengths[mine])
            lag = lags[mine]
            persists[index].extend(lag[numpy.isfinite(lag)])
    restarts = ep.end_s - ep.failure_s
    approximate = []
    for index in order:
        served = restarts[completed & (ep.resumed_level == index)]
        lag = persists[index].mean if persists[index].count else 0.0
        name = timeline.levels[index]
        if stalls[index].approximate:
            approximate.append(f"{name}.write_p90_s")
        found.append(
            Level(
                name=name,
                checkpoints=stalls[index].count,
                stall_s=stalls[index].mean,
                stall_p90_s=stalls[index].quantile(0.9),
                persist_s=lag if lag > 0 else None,
                restarts=int(served.size),
                restart_s=float(served.mean()) if served.size else None,
            )
        )
    return tuple(found), tuple(approximate)


def _interval(timeline: Timeline) -> tuple[float | None, int | None, bool]:
    """The median work between consecutive checkpoints with no failure between them, and with two
    levels the median number of checkpoints from one storage checkpoint to the next; and whether the
    first median is approximate (a sketch's)."""
    import numpy

    ck, folded = timeline.checkpoints, timeline.folded
    offset = 0 if folded is None else folded.count  # the folded ones started before those held
    if offset + ck.start_s.size < 2:
        return None, None, False
    memory = [i for i, name in enumerate(timeline.levels) if name in MEMORY_LEVELS]
    starts, ends, levels = ck.start_s, ck.end_s, ck.level
    if not _ascending(starts):  # in order already with one level
        order = numpy.argsort(starts, kind="stable")
        starts, ends, levels = starts[order], ends[order], levels[order]
    failures = numpy.sort(timeline.episodes.failure_s)

    def clean(a: Any, b: Any) -> Any:
        """No failure strictly between a and b."""
        return numpy.searchsorted(failures, b, side="left") <= numpy.searchsorted(failures, a, side="right")

    gaps = Quantiles() if folded is None else folded.gaps.copy()
    befores, afters = ends[:-1], starts[1:]
    if folded is not None and folded.last_end is not None and starts.size:
        befores, afters = numpy.concatenate(([folded.last_end], befores)), starts
    for at in _chunks(afters.size):
        before, after = befores[at : at + CHUNK], afters[at : at + CHUNK]
        gaps.extend((after - before)[clean(before, after)])
    interval = gaps.median() if gaps.count else None
    # Checkpoints from one storage checkpoint to the next. A failure served by memory redoes none of
    # them; one served by storage redoes a few, which the median shrugs off.
    every = None
    if memory:
        runs, last, stored = Quantiles(), -1, 0
        if folded is not None:
            runs, last, stored = folded.runs.copy(), folded.last_stored, folded.stored
        for at in _chunks(levels.size):
            where = numpy.flatnonzero(~numpy.isin(levels[at : at + CHUNK], memory)) + at + offset
            stored += where.size
            if where.size:
                runs.extend(([where[0] - last] if last >= 0 else []) + numpy.diff(where).tolist())
                last = int(where[-1])
        if 2 <= stored < offset + levels.size:
            every = round(runs.median())
    return interval, every, gaps.approximate
