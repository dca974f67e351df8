"""Elastic replica groups as a run's event log measures them (docs/model.md §11.6): the group-local
failures and their share e of the failure rate, with the Wilson interval of the count's binomial split;
the rejoin time (the spans no whole-job failure interrupted) and the quorum pause (where the log marks
it); and the job of the measured groups.

A ``group_down`` names the replica ``group`` (a whole number from 0) that dropped out while the others
trained on, and may say when the running groups resumed after the quorum change (``quorum_end``); a
``group_up`` says when it was back. A whole-job ``failure`` stops every group; a group down across one is
down until its ``group_up`` (a restart's own time stays restart). A ``failure`` while every group is
down is the last group's failure: it counts once, as group-local.

Every instant of the run's kept work (not a restart, a stall or re-done work) is split by the groups
down at it, d of G: (G − d)/G of it is useful at (1 − o) of the speed (o, ``--ft-overhead``: what
the log cannot show), d/G is lost to the groups down, and during a quorum pause the running groups'
share is lost too. So the realised split gains three parts and still sums to 1.

The group-local failures arrive at eλ·(G − d)/G while training, whole-job ones at (1 − e)λ all the time
(the rates of the model, docs/model.md §14.1).

>>> from ckptcalc.logs import reader
>>> reading = Reading(reader, None)
>>> reading.down(10.0, "1", None, 3); reading.up(40.0, 1)
>>> c = reading.columns()
>>> c.groups, c.start_s.tolist(), c.end_s.tolist()
(2, [10.0], [40.0])
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass
from typing import Any

from ckptcalc.model.statistics import CONFIDENCE


@dataclass(frozen=True)
class GroupColumns:
    """Each group's spans down as columns (numpy arrays): ``end_s`` NaN while still down at the run's end,
    ``quorum_end_s`` NaN where the log marks no pause; ``groups`` G (given, or the largest id + 1)."""

    start_s: Any
    end_s: Any
    group: Any
    quorum_end_s: Any
    groups: int
    given: bool


class Reading:
    """The groups' state as the log is read: which are down, and since which line. A line that breaks a
    rule raises the reader's ``BadRecord`` before it changes anything (so ``--skip-bad`` skips it whole).
    ``reader`` is :mod:`ckptcalc.logs.reader`, handed down so that the home reads with its helpers without
    importing upward; ``groups`` G as given (None: the largest id + 1)."""

    #: The events it takes (docs/model.md §11.6).
    events = ("group_down", "group_up")

    def __init__(self, reader: Any, groups: int | None) -> None:
        self.reader = reader
        self.given = groups
        self.open: dict[int, tuple[int, int]] = {}  # group -> (its span's index, the line of its group_down)
        self.start, self.end, self.quorum = array("d"), array("d"), array("d")
        self.group = array("q")
        self.largest = -1

    def __eq__(self, other: object) -> bool:
        """The same state: two readings of one log (a block at a time, or row by row) compare equal."""
        return isinstance(other, Reading) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def take(self, event: str, t: float, value: Any, time: Any, line: int) -> None:
        """One of its :attr:`events` at ``t`` on ``line``: ``value(key)`` is the record's field (the reader's
        missing mark where absent, null or empty), ``time(key)`` a time field in seconds (None where absent)."""
        if event == "group_down":
            quorum = time("quorum_end")
            self.down(t, value("group"), quorum, line)
        else:
            self.up(t, value("group"))

    def pinned(self, last: float) -> tuple[Any, Any] | None:
        """The spans of the groups down so far (to ``last``, or their quorum's end where later): what their
        losses take from the stalls needs the stalls within them exactly; None with none."""
        import numpy

        found = self.columns()
        if found is None:
            return None
        return found.start_s, numpy.fmax(numpy.where(numpy.isnan(found.end_s), last, found.end_s), found.quorum_end_s)

    def _id(self, value: Any, event: str) -> int:
        reader = self.reader
        if value is reader.MISSING:
            raise reader.BadRecord(f"a {event} names its group (a whole number from 0)")
        number = reader.number_form(value)
        if (
            isinstance(number, bool)
            or not isinstance(number, (int, float))
            or not (math.isfinite(number) and number >= 0 and float(number).is_integer())
        ):
            raise reader.BadRecord(f"group is a whole number from 0, got {reader.text_form(value)[:20]!r}")
        group = int(number)
        if self.given is not None and group >= self.given:
            raise reader.BadRecord(f"group {group} is not below the run's {self.given} groups (--groups)")
        return group

    def down(self, t: float, value: Any, quorum_end: float | None, line: int) -> None:
        group = self._id(value, "group_down")
        if group in self.open:
            raise self.reader.BadRecord(
                f"group {group} is already down (group_down on line {self.open[group][1]}, no group_up since)"
            )
        if quorum_end is not None and quorum_end < t:
            raise self.reader.BadRecord("quorum_end is earlier than the group_down")
        self.open[group] = (len(self.start), line)
        self.start.append(t)
        self.end.append(math.nan)
        self.quorum.append(math.nan if quorum_end is None else quorum_end)
        self.group.append(group)
        self.largest = max(self.largest, group)

    def up(self, t: float, value: Any) -> None:
        group = self._id(value, "group_up")
        if group not in self.open:
            raise self.reader.BadRecord(f"group_up without a group_down for group {group}")
        self.end[self.open.pop(group)[0]] = t

    def columns(self) -> GroupColumns | None:
        """The spans read (None when the log has no group event)."""
        import numpy

        if not self.start:
            return None
        column = numpy.frombuffer
        count = self.given if self.given is not None else self.largest + 1
        return GroupColumns(column(self.start, dtype=float), column(self.end, dtype=float),
                            column(self.group, dtype=numpy.int64), column(self.quorum, dtype=float),
                            max(count, 1), self.given is not None)  # fmt: skip


def _inside(starts: Any, ends: Any, t: Any) -> Any:
    """Whether each ``t`` lies in one of the sorted, disjoint spans ``starts``–``ends``."""
    import numpy

    k = numpy.searchsorted(starts, t, side="right") - 1
    if not starts.size:
        return numpy.zeros(numpy.shape(t), dtype=bool)
    return (k >= 0) & (t < ends[numpy.maximum(k, 0)])


@dataclass(frozen=True)
class Losses:
    """The groups' losses over the run, as integrals that can be read between any two moments: ``down``
    (group-time down / G), ``quorum`` (the running groups' share in a pause) and ``overhead`` (o of the
    running groups' share outside pauses), all within the kept work; and ``exposure``, the share of the
    groups up over the time not restarting (what the group-local failure rate is measured against)."""

    points: Any
    down: Any
    quorum: Any
    overhead: Any
    exposure: Any

    def within(self, a: Any, b: Any) -> tuple[Any, Any, Any]:
        """Seconds lost to groups down, quorum pauses and the overhead between ``a`` and ``b``."""
        import numpy

        def part(cum: Any) -> Any:
            return numpy.interp(b, self.points, cum) - numpy.interp(a, self.points, cum)

        return part(self.down), part(self.quorum), part(self.overhead)


def losses(
    columns: GroupColumns,
    *,
    start_s: float,
    end_s: float,
    blocked: tuple[Any, Any],
    restarts: tuple[Any, Any],
    failures_s: Any,
    overhead: float,
) -> Losses:
    """The groups' losses in [``start_s``, ``end_s``]. ``blocked`` is the time that is not kept work (the
    restarts, stalls and re-done work) and ``restarts`` the restarts, each as sorted, disjoint spans;
    ``failures_s`` the whole-job failures, in order (a pause ends at the first one after its start)."""
    import numpy

    g = float(columns.groups)
    down_end = numpy.where(numpy.isnan(columns.end_s), end_s, columns.end_s)
    # A pause lasts to its quorum_end or the next whole-job failure, whichever comes first.
    marked = ~numpy.isnan(columns.quorum_end_s)
    p_start = columns.start_s[marked]
    after = numpy.searchsorted(failures_s, p_start, side="left")
    cut = numpy.append(failures_s, math.inf)[after]
    p_end = numpy.minimum(numpy.minimum(columns.quorum_end_s[marked], cut), end_s)
    pauses = _merged(p_start, p_end)
    points = numpy.unique(numpy.clip(numpy.concatenate((
        [start_s, end_s], blocked[0], blocked[1], restarts[0], restarts[1], columns.start_s, down_end,
        pauses[0], pauses[1])), start_s, end_s))  # fmt: skip
    mid = (points[:-1] + points[1:]) / 2.0
    length = numpy.diff(points)
    down = (numpy.searchsorted(numpy.sort(columns.start_s), mid, side="right")
            - numpy.searchsorted(numpy.sort(down_end), mid, side="right")).astype(float)  # fmt: skip
    up = numpy.maximum(g - down, 0.0) / g
    kept = length * ~_inside(*blocked, mid)
    paused = _inside(*pauses, mid)

    def cumulative(values: Any) -> Any:
        return numpy.concatenate(([0.0], numpy.cumsum(values)))

    return Losses(
        points=points,
        down=cumulative(kept * down / g),
        quorum=cumulative(kept * paused * up),
        overhead=cumulative(overhead * kept * ~paused * up),
        exposure=cumulative(length * ~_inside(*restarts, mid) * up),
    )


def _merged(starts: Any, ends: Any) -> tuple[Any, Any]:
    """Sorted, disjoint spans covering what the spans ``starts``–``ends`` cover."""
    import numpy

    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if not starts.size:
        return starts, ends
    order = numpy.argsort(starts, kind="stable")
    starts, reach = starts[order], numpy.maximum.accumulate(ends[order])
    first = numpy.flatnonzero(numpy.concatenate(([True], starts[1:] > reach[:-1])))
    last = numpy.concatenate((first[1:] - 1, [starts.size - 1]))
    return starts[first], reach[last]


@dataclass(frozen=True)
class Measured:
    """What a log's group events measured (docs/model.md §11.6). ``group_share`` e is None with no
    failure at all; ``rejoin_s`` None when no group came back before a whole-job failure; ``quorum_pause_s``
    None when the log marks no pause; ``mtbf_s`` is M, every failure with every group up (1/(λ_g + λ_w))."""

    groups: int
    given: bool
    group_failures: int
    whole_job_failures: int
    all_down_failures: int
    exposure_s: float  # running time weighted by the share of the groups up
    group_share: float | None
    group_share_ci95: tuple[float, float] | None
    rejoins: int
    rejoin_s: float | None
    rejoin_p90_s: float | None
    rejoin_ci95: tuple[float, float] | None
    quorum_pauses: int
    quorum_pause_s: float | None
    ft_overhead: float
    mtbf_s: float | None
    down_s: float  # group-time down over the run, divided by G


def measured_groups(
    columns: Any,
    found: Any,
    *,
    start_s: float,
    end_s: float,
    failures_s: Any,
    overhead: float,
    down_s: float,
) -> Measured:
    """The counts, the group-local share e with its interval, the rejoin time and the quorum pause, from a
    log's group columns (:class:`GroupColumns`) and losses (:class:`Losses`)."""
    import numpy

    from ckptcalc.model.statistics import spread, wilson_interval

    g = columns.groups
    inside = (columns.start_s >= start_s) & (columns.start_s <= end_s)
    n_group = int(inside.sum())
    down_end = numpy.where(numpy.isnan(columns.end_s), numpy.inf, columns.end_s)
    # A failure with every group down is the last group's: counted once, as group-local.
    count = (numpy.searchsorted(numpy.sort(columns.start_s), failures_s, side="right")
             - numpy.searchsorted(numpy.sort(down_end), failures_s, side="right"))  # fmt: skip
    all_down = int(numpy.count_nonzero(count >= g))
    n_whole = int(failures_s.size) - all_down
    wall = end_s - start_s
    exposure = float(
        numpy.interp(end_s, found.points, found.exposure) - numpy.interp(start_s, found.points, found.exposure)
    )
    share = ci = mtbf = None
    total = n_group + n_whole
    if total and exposure > 0:
        local, whole = n_group / exposure, n_whole / wall

        def of(p: float) -> float:  # the binomial split of the count, as a share of the rates
            return p * wall / (p * wall + (1.0 - p) * exposure)

        share = local / (local + whole)
        low, high = wilson_interval(n_group, total)
        ci = (of(low), of(high))
        mtbf = 1.0 / (local + whole)
    # Rejoin times: the spans that ended with no whole-job failure during them.
    ended = ~numpy.isnan(columns.end_s)
    clean = ended & (numpy.searchsorted(failures_s, columns.start_s, side="left")
                     == numpy.searchsorted(failures_s, down_end, side="right"))  # fmt: skip
    spans = (columns.end_s - columns.start_s)[clean]
    rejoin, p90, rejoin_ci = spread(spans, CONFIDENCE)
    marked = ~numpy.isnan(columns.quorum_end_s)
    pauses = (columns.quorum_end_s - columns.start_s)[marked]
    return Measured(
        groups=g,
        given=columns.given,
        group_failures=n_group,
        whole_job_failures=n_whole,
        all_down_failures=all_down,
        exposure_s=exposure,
        group_share=share,
        group_share_ci95=ci,
        rejoins=int(spans.size),
        rejoin_s=rejoin,
        rejoin_p90_s=p90,
        rejoin_ci95=rejoin_ci,
        quorum_pauses=int(pauses.size),
        quorum_pause_s=float(pauses.mean()) if pauses.size else None,
        ft_overhead=overhead,
        mtbf_s=mtbf,
        down_s=down_s,
    )


def elastic_config(config: Any, measured: Measured) -> tuple[Any, str | None]:
    """The measured periodic ``config`` (a :class:`ckptcalc.model.evaluation.Config`) as a job of the
    measured replica groups: G, e, T_j, q_p (0 where the log marks no pause), o, and M over every failure;
    or None and the reason it cannot be built."""
    if measured.groups < 2:
        return None, "one replica group in the log: elastic groups need two or more (--groups)"
    if measured.group_share is None or measured.mtbf_s is None:
        return None, "no failure: only a lower bound on the MTBF exists"
    if measured.rejoin_s is None:
        return None, "no group rejoined before a whole-job failure: no rejoin time to measure"
    return config.replace(
        mtbf_s=measured.mtbf_s,
        groups=float(measured.groups),
        group_share=measured.group_share,
        rejoin_s=measured.rejoin_s,
        quorum_pause_s=measured.quorum_pause_s or 0.0,
        ft_overhead=measured.ft_overhead,
    ), None


def measure(
    columns: GroupColumns,
    found: Losses,
    *,
    start_s: float,
    end_s: float,
    failures_s: Any,
    overhead: float,
) -> Measured:
    """What the group events between ``start_s`` and ``end_s`` measured."""
    return measured_groups(
        columns,
        found,
        start_s=start_s,
        end_s=end_s,
        failures_s=failures_s,
        overhead=overhead,
        down_s=_down_time(columns, start_s, end_s),
    )


def _down_time(columns: GroupColumns, start_s: float, end_s: float) -> float:
    """Group-time down within the run, divided by G (restarts and stalls included)."""
    import numpy

    ends = numpy.where(numpy.isnan(columns.end_s), end_s, columns.end_s)
    spans = numpy.clip(ends, start_s, end_s) - numpy.clip(columns.start_s, start_s, end_s)
    return float(spans.sum()) / columns.groups


class Lost:
    """What the groups down cost a log's run, for the core's split: :meth:`within` gives the seconds of each
    of the home's parts of the realised split between two moments, :meth:`measured` what the events measured."""

    def __init__(self, columns: GroupColumns, found: Losses, start_s: float, end_s: float, failures_s: Any,
                 overhead: float) -> None:  # fmt: skip
        self.columns, self.found = columns, found
        self.start_s, self.end_s, self.failures_s, self.overhead = start_s, end_s, failures_s, overhead

    def within(self, a: Any, b: Any) -> dict[str, float]:
        down, quorum, cost = (float(v) for v in self.found.within(a, b))
        return {"groups_down": down, "quorum": quorum, "overhead": cost}

    def measured(self) -> Measured:
        return measure(self.columns, self.found, start_s=self.start_s, end_s=self.end_s, failures_s=self.failures_s,
                       overhead=self.overhead)  # fmt: skip
