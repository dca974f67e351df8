"""Silent events and retention: failures noticed late, rolled back to a retained checkpoint (docs/model.md §16).

A silent event (silent data corruption, a loss spike) starts at a point of
the work, uniformly within a checkpoint interval τ, and is noticed after a
latency D ~ Exp(mean d) of further work. The job then rolls back to the
newest *retained* checkpoint written before the onset, restarts (r) and
discards a further s_k of work. With only the newest k checkpoints kept,
none predates the onset when at least k were written since it:

    P_u = (d/τ)·(1 − e^{−τ/d})·e^{−(k−1)τ/d}

Such an event goes back to the last checkpoint kept for good (one per K_p of
work), or to the start of the run. Over a run with n_s expected events the
chance of at least one is 1 − e^{−n_s·P_u}.

In the exact recursion (:mod:`ckptcalc.model.tiers`) a silent event is one more
failure class, noticed at rate λ_s, that goes back to the top tier's anchor
(the newest retained checkpoint), restarts and skips; the job then replays
the d of work done since the onset's checkpoint (:func:`replay_work`).

>>> round(p_unrecoverable(interval_s=600.0, latency_s=3600.0, keep=5.0), 4)
0.4729
>>> keep_for_risk(interval_s=600.0, latency_s=3600.0, events=54 / 14, risk=0.01)
37
"""

from __future__ import annotations

import math

from ckptcalc.model.arrays import Num, lib, scalar
from ckptcalc.model.statistics import DAY_S
from ckptcalc.records import Record

#: The run's risk ``keep_for_risk`` aims at when none is given.
DEFAULT_RISK = 0.01


def clean_share(interval_s: Num, latency_s: Num) -> Num:
    """(d/τ)·(1 − e^{−τ/d}): the chance that a checkpoint is written between an onset (uniform within
    its interval) and its detection; 0 at d = 0 (noticed at once)."""
    ns = lib(interval_s, latency_s)
    if scalar(interval_s, latency_s):
        if latency_s == 0:
            return 0.0
        return -latency_s / interval_s * math.expm1(-interval_s / latency_s)
    safe = ns.maximum(latency_s, 1e-300)
    found: Num = ns.where(latency_s > 0, -safe / interval_s * ns.expm1(-interval_s / safe), 0.0)
    return found


def p_unrecoverable(*, interval_s: Num, latency_s: Num, keep: Num | None) -> Num:
    """P_u: the chance that none of the ``keep`` newest checkpoints predates a silent event's onset
    (0 when every checkpoint is kept, ``keep`` None)."""
    if keep is None:
        return 0.0 * interval_s
    ns = lib(interval_s, latency_s, keep)
    first = clean_share(interval_s, latency_s)
    if scalar(interval_s, latency_s, keep):
        return first * math.exp(-(keep - 1.0) * interval_s / latency_s) if latency_s > 0 else 0.0
    safe = ns.maximum(latency_s, 1e-300)
    found: Num = first * ns.exp(-(keep - 1.0) * interval_s / safe)
    return found


def p_run(events: Num, p_u: Num) -> Num:
    """The chance that at least one of a run's silent events is unrecoverable: 1 − e^{−n_s·P_u}."""
    ns = lib(events, p_u)
    found: Num = -ns.expm1(-events * p_u)
    return found


def keep_for_risk(*, interval_s: float, latency_s: float, events: float, risk: float) -> int:
    """The fewest newest checkpoints to keep so that the run's risk 1 − e^{−n_s·P_u} is at most ``risk``:
    k = 1 + ⌈(d/τ)·ln(A/P*)⌉ with A the chance for k = 1 and P* = −ln(1 − risk)/n_s, checked both ways
    against rounding."""
    if events <= 0 or latency_s <= 0:
        return 1
    target = -math.log1p(-risk) / events
    first = float(clean_share(interval_s, latency_s))
    if first <= target:
        return 1
    k = max(1, 1 + math.ceil(latency_s / interval_s * math.log(first / target)))

    def risky(n: int) -> bool:
        return float(p_run(events, p_unrecoverable(interval_s=interval_s, latency_s=latency_s, keep=float(n)))) > risk

    while k > 1 and not risky(k - 1):
        k -= 1
    while risky(k):
        k += 1
    return k


def rework_per_event(
    *, interval_s: Num, latency_s: Num, restart_s: Num, skip_s: Num, p_u: Num, keep_every_s: Num | None
) -> Num:
    """Work and time one silent event costs, first order: τ/2 + d + r + s_k, plus P_u·(K_p − τ)/2 when a
    checkpoint is kept for good every K_p (without one an unrecoverable event loses the run so far,
    which is the risk reported, not a loss per event)."""
    found = interval_s / 2.0 + latency_s + restart_s + skip_s
    if keep_every_s is not None:
        found = found + p_u * (keep_every_s - interval_s) / 2.0
    return found


def replay_work(*, interval_s: Num, latency_s: Num, keep: Num | None, keep_every_s: Num | None) -> Num:
    """The work a silent event replays beyond the newest checkpoint: E[j]·τ = d for the j checkpoints
    written between its onset and its detection, plus P_u·(K_p − τ)/2 with a checkpoint kept for good
    every K_p (an unrecoverable event goes back to the last one before its onset's checkpoint, on
    average (K_p − τ)/2 before it). Without one, an unrecoverable event loses the run so far: that is
    the run's risk, not a loss per event."""
    found = latency_s + 0.0 * interval_s
    if keep_every_s is not None:
        p_u = p_unrecoverable(interval_s=interval_s, latency_s=latency_s, keep=keep)
        found = found + p_u * (keep_every_s - interval_s) / 2.0
    return found


def erased(*, interval_s: Num, latency_s: Num, mtbf_s: Num, share: Num = 1.0) -> Num:
    """The chance that a fail-stop failure of a class with ``share`` of them (rate q/M), going back to
    the newest checkpoint of a tier written every ``interval_s``, erases a silent event before it is
    noticed: it strikes before the detection and before that tier's next checkpoint, so it goes back to
    before the onset. With the onset uniform in the interval, a = q/M + 1/d:

        P_e = (q/M)/a · (1 − (1 − e^{−aτ})/(aτ))

    and 0 when the event is noticed at once (d = 0) or the class serves no failure (q = 0).

    >>> round(erased(interval_s=600.0, latency_s=1800.0, mtbf_s=7200.0), 5)
    0.03644
    """
    ns = lib(interval_s, latency_s, mtbf_s, share)
    if scalar(interval_s, latency_s, mtbf_s, share) and latency_s == 0:
        return 0.0
    rate = share / mtbf_s
    a = rate + 1.0 / ns.maximum(latency_s, 1e-300)
    x = a * interval_s
    found: Num = rate / a * (1.0 + ns.expm1(-x) / x)
    return found


def erased_on_tiers(*, intervals_s: tuple[Num, ...], shares: tuple[Num, ...], latency_s: Num, mtbf_s: Num) -> Num:
    """The chance that some fail-stop erases a silent event, on nested tiers: each class c (share q_c)
    goes back to the newest checkpoint of its own tier, written every τ_c, so it erases the event when
    it strikes before the detection and before that tier's next checkpoint, Σ_c P_e(τ_c, q_c) (the
    classes compete for the same event only to second order, (q_c·τ_c/M)·(q_c'·τ_c'/M), left out).
    Failures with notice go back nowhere and never erase (docs/model.md §16.3).

    >>> p = erased_on_tiers(intervals_s=(264.6, 2646.0), shares=(0.99, 0.01), latency_s=1800.0, mtbf_s=14400.0)
    >>> round(p, 5)
    0.00921
    """
    found: Num = 0.0
    for interval, share in zip(intervals_s, shares, strict=True):
        found = found + erased(interval_s=interval, latency_s=latency_s, mtbf_s=mtbf_s, share=share)
    return found


class Late(Record):
    """Where a silent event of the recursion lands (docs/model.md §16.3): the ``keep`` newest top-tier
    checkpoints retained (inf: all), one kept for good every ``keep_every_s`` of work (0: none). The
    recursion (:mod:`ckptcalc.model.tiers`) asks it the work an event replays beyond its latency and the
    chance a fail-stop erases it first."""

    keep: Num = math.inf
    keep_every_s: Num = 0.0

    def numbers(self) -> tuple[Num, ...]:
        """Its numbers, flat (to tell floats from arrays)."""
        return self.keep, self.keep_every_s

    def beyond(self, top_s: Num, latency_s: Num) -> Num:
        """The work an event replays beyond its latency at the top interval ``top_s`` (:func:`replay_work`)."""
        keep = None if scalar_inf(self.keep) else self.keep
        every = None if isinstance(self.keep_every_s, float | int) and self.keep_every_s == 0 else self.keep_every_s
        return replay_work(interval_s=top_s, latency_s=latency_s, keep=keep, keep_every_s=every) - latency_s

    def erased(self, intervals_s: tuple[Num, ...], shares: tuple[Num, ...], latency_s: Num, mtbf_s: Num) -> Num:
        """The chance that some fail-stop erases a pending event (:func:`erased_on_tiers`)."""
        return erased_on_tiers(intervals_s=intervals_s, shares=shares, latency_s=latency_s, mtbf_s=mtbf_s)


def scalar_inf(value: Num) -> bool:
    """Whether ``value`` is the float infinity (every checkpoint kept); an array never is."""
    return isinstance(value, float | int) and math.isinf(value)


class Band(Record):
    """The silent events' figures at both ends of their rate's 95 % interval (docs/model.md §16.2), from
    n events seen in a window: the mean work between events at each end (``high_s`` None with none seen,
    where only the lower bound exists), and with the run's length the events, the run's risk at each end
    and the keep that meets the risk at the pessimistic end (the most events)."""

    low_s: float
    high_s: float | None
    events_per_run: tuple[float, float] | None  # at the high and the low end of the mean work between them
    p_unrecoverable_run: tuple[float, float] | None
    keep_for_risk: int | None  # at the low end: enough however often the events come within the band


def band(found: Summary, low_s: float, high_s: float | None) -> Band:
    """``found`` (a :class:`Summary`) at both ends of the band ``low_s`` … ``high_s`` of its mean work between
    silent events; P_u does not depend on the rate.

    >>> s = summary(mtbf_s=18 * 86400.0, latency_s=3600.0, skip_s=0.0, keep=5.0, keep_every_s=None,
    ...             risk=None, interval_s=600.0, restart_s=600.0, work_s=54 * 86400.0)
    >>> b = band(s, 54 * 86400.0 / 8.767273, 54 * 86400.0 / 0.618672)
    >>> [round(p, 4) for p in b.p_unrecoverable_run], b.keep_for_risk
    ([0.2537, 0.9842], 42)
    """
    if found.work_s is None:
        return Band(low_s=low_s, high_s=high_s, events_per_run=None, p_unrecoverable_run=None, keep_for_risk=None)
    few = 0.0 if high_s is None else found.work_s / high_s
    many = found.work_s / low_s
    p_u = found.p_unrecoverable_per_event
    return Band(
        low_s=low_s,
        high_s=high_s,
        events_per_run=(few, many),
        p_unrecoverable_run=(float(p_run(few, p_u)), float(p_run(many, p_u))),
        keep_for_risk=keep_for_risk(
            interval_s=found.interval_s, latency_s=found.latency_s, events=many, risk=found.risk
        ),
    )


class Summary(Record):
    """What a job's silent events come to at the storage interval it runs (docs/model.md §16.2):
    per day of work and, with the run's length, over the run; the keep that meets the run's risk."""

    mtbf_s: float
    latency_s: float
    skip_s: float
    keep: float | None
    keep_every_s: float | None
    risk: float
    interval_s: float
    work_s: float | None
    per_day: float
    events_per_run: float | None
    p_unrecoverable_per_event: float
    p_unrecoverable_run: float | None
    rework_per_event_s: float
    keep_for_risk: int | None
    latency_over_interval: float  # d/τ: above 1 several checkpoints follow an onset before it is noticed


def summary(
    *,
    mtbf_s: float,
    latency_s: float,
    skip_s: float,
    keep: float | None,
    keep_every_s: float | None,
    risk: float | None,
    interval_s: float,
    restart_s: float,
    work_s: float | None,
) -> Summary:
    """The :class:`Summary` of silent events every ``mtbf_s`` of work at the storage interval ``interval_s``.

    >>> s = summary(mtbf_s=14 * 86400.0, latency_s=3600.0, skip_s=0.0, keep=5.0, keep_every_s=None,
    ...             risk=None, interval_s=600.0, restart_s=600.0, work_s=54 * 86400.0)
    >>> round(s.p_unrecoverable_per_event, 4), round(s.events_per_run or 0, 3), s.keep_for_risk
    (0.4729, 3.857, 37)
    """
    chosen = DEFAULT_RISK if risk is None else risk
    p_u = float(p_unrecoverable(interval_s=interval_s, latency_s=latency_s, keep=keep))
    events = None if work_s is None else work_s / mtbf_s
    return Summary(
        mtbf_s=mtbf_s,
        latency_s=latency_s,
        skip_s=skip_s,
        keep=keep,
        keep_every_s=keep_every_s,
        risk=chosen,
        interval_s=interval_s,
        work_s=work_s,
        per_day=DAY_S / mtbf_s,
        events_per_run=events,
        p_unrecoverable_per_event=p_u,
        p_unrecoverable_run=None if events is None else float(p_run(events, p_u)),
        rework_per_event_s=float(
            rework_per_event(
                interval_s=interval_s,
                latency_s=latency_s,
                restart_s=restart_s,
                skip_s=skip_s,
                p_u=p_u,
                keep_every_s=keep_every_s,
            )
        ),
        keep_for_risk=None
        if events is None
        else keep_for_risk(interval_s=interval_s, latency_s=latency_s, events=events, risk=chosen),
        latency_over_interval=latency_s / interval_s,
    )
