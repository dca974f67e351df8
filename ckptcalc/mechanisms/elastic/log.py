"""Elastic replica groups as a run's event log measures them (docs/model.md §11.6): the group-local
failures and their share e of the failure rate, with the Wilson interval of the count's binomial split;
the rejoin time (the spans no whole-job failure interrupted) and the quorum pause (where the log marks
it); and the job of the measured groups. ``logs.groups`` reads the events; this is what they come to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ckptcalc.model.statistics import CONFIDENCE


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
    log's group columns (``logs.groups.GroupColumns``) and losses (``logs.groups.Losses``)."""
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
