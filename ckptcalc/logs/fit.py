"""Estimate the failure process from incident logs, with honest uncertainty.

Two halves. Reading (docs/fit.md §1): an incident log, read by :mod:`ckptcalc.logs.reader`, gives
events, each a time (the time field) and a cause; the events kept are sorted by time, in seconds,
with counts of what was read, kept, filtered out and skipped.

>>> log = parse_log("time,kind\\n2024-05-01T00:00:00Z,gpu\\n2024-05-01T01:00:00Z,nic\\n", name="x.csv", cause="kind")
>>> log.times, log.causes
((1714521600.0, 1714525200.0), ('gpu', 'nic'))

Estimating (docs/fit.md §2–§10): event times in seconds go in, frozen dataclasses come out, and
nothing else is touched. scipy is imported inside the functions that need it, so importing this
module costs nothing.

>>> result = fit([0.0, 3600.0, 7200.0, 18000.0])
>>> result.mtbf.interruptions, result.mtbf.mtbf_s
(3, 6000.0)
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal

from ckptcalc.errors import InputError
from ckptcalc.logs import reader
from ckptcalc.logs.adapter import Stamp
from ckptcalc.logs.reader import MISSING, BadRecord, Clock, FatalRecord, TimeKind, get_path, text_form
from ckptcalc.model.numeric import chi2_quantile, mtbf_interval

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Confidence level of every interval here.
CONFIDENCE = 0.95
_ALPHA = round(1.0 - CONFIDENCE, 12)  # 0.05 exactly as written, not 1 - 0.95 in binary

#: Fewest gaps between interruptions a Weibull fit is attempted on.
MIN_WEIBULL_GAPS = 2

#: Shapes searched for the Weibull fit and its interval; beyond them the estimate or bound is "none".
SHAPE_RANGE = (1e-4, 1e4)

Verdict = Literal["clustered", "exponential", "wear_out"]
NoFitReason = Literal["too_few_gaps", "no_finite_estimate"]


# ---------------------------------------------------------------- MTBF


@dataclass(frozen=True)
class MtbfEstimate:
    """The mean time between interruptions from ``interruptions`` counted in ``window_s`` (docs/fit.md §4).

    ``ci95`` is the exact two-sided 95 % interval; with no interruption there
    is no estimate, and ``ci95`` is ``(lower_bound_s, None)``: only a bound
    exists. ``lower_bound_s`` is the one-sided 95 % lower bound, for any count.
    """

    interruptions: int
    window_s: float
    mtbf_s: float | None
    ci95: tuple[float, float | None]
    lower_bound_s: float

    def scaled(self, factor: float) -> MtbfEstimate:
        """The same estimate with every time multiplied by ``factor`` (per-GPU scaling, §6)."""
        low, high = self.ci95
        return MtbfEstimate(
            interruptions=self.interruptions,
            window_s=self.window_s,
            mtbf_s=None if self.mtbf_s is None else self.mtbf_s * factor,
            ci95=(low * factor, None if high is None else high * factor),
            lower_bound_s=self.lower_bound_s * factor,
        )


def mtbf_estimate(interruptions: int, window_s: float) -> MtbfEstimate:
    """M̂ = T/n with [2T/χ²(0.975; 2n+2), 2T/χ²(0.025; 2n)]; for n = 0 only M > T/ln 20.

    >>> estimate = mtbf_estimate(5, 1000.0)
    >>> estimate.mtbf_s, [round(x, 2) for x in estimate.ci95]
    (200.0, [85.7, 615.96])
    """
    if interruptions < 0:
        raise InputError(f"a count of interruptions cannot be negative ({interruptions})", where="interruptions")
    if not (math.isfinite(window_s) and window_s > 0):
        raise InputError(f"the window must be a positive time, got {window_s} s", where="window_s")
    alpha = _ALPHA
    n, t = interruptions, window_s
    # One-sided: 2T/χ²(0.95; 2n+2); at n = 0 that is T/ln 20 exactly (χ²(p; 2) = −2 ln(1 − p)).
    bound = t / math.log(1.0 / alpha) if n == 0 else 2.0 * t / chi2_quantile(CONFIDENCE, 2 * n + 2)
    low, high = mtbf_interval(n, t)
    if n == 0:
        return MtbfEstimate(0, t, None, (bound, None), bound)
    return MtbfEstimate(n, t, t / n, (low, high), bound)


# ---------------------------------------------------------------- coalescing


@dataclass(frozen=True)
class Interruption:
    """Events merged into one interruption: when it began, its last event, how many, and the first one's cause."""

    time_s: float
    last_s: float
    events: int
    cause: str


def coalesce(
    times: Sequence[float], causes: Sequence[str] | None = None, *, gap_s: float = 0.0
) -> tuple[Interruption, ...]:
    """Merge events into interruptions by the chain rule of docs/fit.md §2.

    An event at most ``gap_s`` after the last event of the interruption being
    built joins it; otherwise it starts a new one. With ``gap_s = 0`` only
    events at the same instant merge.

    >>> [(i.time_s, i.events) for i in coalesce([0, 5, 9, 30], gap_s=5)]
    [(0.0, 3), (30.0, 1)]
    """
    labels = list(causes) if causes is not None else ["unknown"] * len(times)
    if len(labels) != len(times):
        raise InputError(f"{len(labels)} causes for {len(times)} events", where="causes")
    order = sorted(range(len(times)), key=lambda i: times[i])
    merged: list[Interruption] = []
    for index in order:
        time = float(times[index])
        if merged and time - merged[-1].last_s <= gap_s:
            last = merged[-1]
            merged[-1] = Interruption(last.time_s, time, last.events + 1, last.cause)
        else:
            merged.append(Interruption(time, time, 1, labels[index]))
    return tuple(merged)


# ---------------------------------------------------------------- Weibull


@dataclass(frozen=True)
class WeibullFit:
    """Weibull shape k and scale λ by maximum likelihood on the gaps (docs/fit.md §7).

    ``shape_ci95`` is the profile-likelihood interval (a side is ``None``
    when it lies beyond :data:`SHAPE_RANGE`). ``lr_statistic`` and
    ``p_value`` test k = 1 (exponential). ``verdict``: ``"exponential"``
    when p ≥ 0.05, otherwise ``"clustered"`` (k < 1) or ``"wear_out"`` (k > 1).
    ``mean_s`` = λΓ(1 + 1/k), ``None`` if it overflows.
    """

    shape: float
    shape_ci95: tuple[float | None, float | None]
    scale_s: float
    mean_s: float | None
    log_likelihood: float
    lr_statistic: float
    p_value: float
    verdict: Verdict
    gaps: int
    censored_s: float

    def survival(self, time_s: float) -> float:
        """S(t) = exp(−(t/λ)^k)."""
        return math.exp(-((time_s / self.scale_s) ** self.shape))


@dataclass(frozen=True)
class NoWeibull:
    """Why there is no Weibull fit: ``too_few_gaps`` (fewer than two), or
    ``no_finite_estimate`` (the gaps are all equal: the likelihood grows without bound in k)."""

    reason: NoFitReason


def weibull_log_likelihood(shape: float, scale_s: float, gaps: Sequence[float], censored_s: float = 0.0) -> float:
    """ℓ(k, λ) = Σ [ln k − k ln λ + (k − 1) ln tᵢ − (tᵢ/λ)^k] − (c/λ)^k, times in seconds (docs/fit.md §7)."""
    total = 0.0
    for gap in gaps:
        total += math.log(shape) - shape * math.log(scale_s) + (shape - 1.0) * math.log(gap) - (gap / scale_s) ** shape
    if censored_s > 0:
        total -= (censored_s / scale_s) ** shape
    return total


class _Profile:
    """The profile log-likelihood in k, on times divided by the longest one so no power overflows."""

    def __init__(self, gaps: Sequence[float], censored_s: float) -> None:
        import numpy as np

        observed = np.asarray(gaps, dtype=float)
        everything = np.append(observed, censored_s) if censored_s > 0 else observed
        self.reference = float(everything.max())
        self.d = len(observed)
        # ln t − ln t_max rather than ln(t/t_max): the ratio can underflow to 0 for extreme gaps.
        self.log_observed = np.log(observed) - math.log(self.reference)
        self.log_all = np.log(everything) - math.log(self.reference)
        self.sum_log_observed = float(self.log_observed.sum())

    def _sums(self, k: float) -> tuple[float, float]:
        import numpy as np

        powers = np.exp(k * self.log_all)  # x^k ≤ 1, and the largest is exactly 1
        return float(powers.sum()), float((powers * self.log_all).sum())

    def log_likelihood(self, k: float) -> float:
        """ℓ_p(k) = d ln k − d ln(Σ t^k / d) + (k − 1) Σ ln tᵢ − d, in seconds."""
        total, _ = self._sums(k)
        d = self.d
        scaled = d * math.log(k) - d * math.log(total / d) + (k - 1.0) * self.sum_log_observed - d
        return scaled - d * math.log(self.reference)

    def score(self, k: float) -> float:
        """dℓ_p/dk = d/k − d Σ t^k ln t / Σ t^k + Σ ln tᵢ (decreasing in k)."""
        total, weighted = self._sums(k)
        return self.d / k - self.d * weighted / total + self.sum_log_observed

    def log_scale(self, k: float) -> float:
        """ln λ̂(k), from λ^k = Σ t^k / d."""
        total, _ = self._sums(k)
        return math.log(self.reference) + math.log(total / self.d) / k


def _bracket(function: Any, start: float, factor: float, limit: float) -> float | None:
    """Step from ``start`` by ``factor`` until ``function`` turns negative; None if it is still not at ``limit``."""
    point = start
    while function(point) >= 0:
        if point == limit:
            return None
        point = min(point * factor, limit) if factor > 1 else max(point * factor, limit)
    return point


def fit_weibull(gaps: Sequence[float], *, censored_s: float = 0.0) -> WeibullFit | NoWeibull:
    """Maximum-likelihood Weibull fit of the gaps, ``censored_s`` a right-censored time (0: none).

    The scale has a closed form for each shape, so only the profile
    likelihood in k is maximised: its derivative decreases in k and has one
    root, found by Brent's method.
    """
    from scipy.optimize import brentq
    from scipy.special import chdtrc

    if len(gaps) < MIN_WEIBULL_GAPS:
        return NoWeibull("too_few_gaps")
    if any(not (math.isfinite(g) and g > 0) for g in gaps) or not (math.isfinite(censored_s) and censored_s >= 0):
        raise InputError("gaps must be positive finite times", where="gaps")
    profile = _Profile(gaps, censored_s)
    low_k, high_k = SHAPE_RANGE
    above = _bracket(profile.score, 1.0, 2.0, high_k)
    if above is None:
        return NoWeibull("no_finite_estimate")
    below = _bracket(lambda k: -profile.score(k), 1.0, 0.5, low_k)
    if below is None:  # pragma: no cover - k̂ < 1e-4 needs gaps spanning more decades than a float holds
        return NoWeibull("no_finite_estimate")
    shape = float(brentq(profile.score, below, above, xtol=1e-14, rtol=1e-14))
    best = profile.log_likelihood(shape)

    critical = chi2_quantile(CONFIDENCE, 1)

    def drop(k: float) -> float:
        return profile.log_likelihood(k) - best + critical / 2.0

    def side(limit: float, factor: float) -> float | None:
        outside = _bracket(drop, shape * factor, factor, limit)
        if outside is None:
            return None
        return float(brentq(drop, *sorted((outside, shape)), xtol=1e-14, rtol=1e-14))

    statistic = max(0.0, 2.0 * (best - profile.log_likelihood(1.0)))
    p_value = float(chdtrc(1, statistic))
    verdict: Verdict = "exponential" if p_value >= _ALPHA else "clustered" if shape < 1 else "wear_out"
    log_scale = profile.log_scale(shape)
    try:
        mean: float | None = math.exp(log_scale + math.lgamma(1.0 + 1.0 / shape))
    except OverflowError:
        mean = None
    return WeibullFit(
        shape=shape,
        shape_ci95=(side(low_k, 0.5), side(high_k, 2.0)),
        scale_s=math.exp(log_scale),
        mean_s=mean,
        log_likelihood=best,
        lr_statistic=statistic,
        p_value=p_value,
        verdict=verdict,
        gaps=len(gaps),
        censored_s=float(censored_s),
    )


# ---------------------------------------------------------------- descriptions


@dataclass(frozen=True)
class CauseShare:
    """How many of the counted interruptions had this cause, and their share of them."""

    cause: str
    count: int
    share: float


def cause_shares(causes: Sequence[str]) -> tuple[CauseShare, ...]:
    """Counts and shares, most frequent first (ties by name)."""
    from collections import Counter

    counts = Counter(causes)
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return tuple(CauseShare(cause, count, count / total) for cause, count in ranked)


@dataclass(frozen=True)
class Histogram:
    """Counts of gaps in log-spaced bins: bin i holds edges_s[i] ≤ gap < edges_s[i + 1] (the last bin is closed)."""

    edges_s: tuple[float, ...]
    counts: tuple[int, ...]


def gap_histogram(gaps: Sequence[float], *, bins_per_decade: int = 4) -> Histogram:
    """Bins with edges at 10^(j/bins_per_decade) s, from the shortest gap's bin to the longest's.

    >>> gap_histogram([1.0, 2.0, 5.0, 50.0], bins_per_decade=1)
    Histogram(edges_s=(1.0, 10.0, 100.0), counts=(3, 1))
    """
    import numpy as np

    if bins_per_decade < 1:
        raise InputError(f"bins_per_decade must be at least 1, got {bins_per_decade}", where="bins_per_decade")
    if len(gaps) == 0:
        return Histogram((), ())
    logs = np.log10(np.asarray(gaps, dtype=float)) * bins_per_decade
    first, last = math.floor(logs.min()), math.ceil(logs.max())
    last = max(last, first + 1)
    # Bin by the index computed from the logarithm, so a gap on an edge never falls outside through rounding.
    index = np.clip(np.floor(logs).astype(int) - first, 0, last - first - 1)
    counts = np.bincount(index, minlength=last - first)
    edges = tuple(float(10.0 ** (j / bins_per_decade)) for j in range(first, last + 1))
    return Histogram(edges, tuple(int(c) for c in counts))


@dataclass(frozen=True)
class SurvivalCurve:
    """Kaplan–Meier survival of the gaps at each distinct gap, and the fitted curves at the same times (§9)."""

    times_s: tuple[float, ...]
    empirical: tuple[float, ...]
    exponential: tuple[float, ...] | None
    weibull: tuple[float, ...] | None


def survival_curve(
    gaps: Sequence[float], censored_s: float = 0.0, *, mtbf_s: float | None = None, weibull: WeibullFit | None = None
) -> SurvivalCurve:
    """Kaplan–Meier: S(t) = Π over gaps tⱼ ≤ t of (1 − dⱼ/nⱼ), nⱼ the gaps and censored time still ≥ tⱼ."""
    import numpy as np

    observed = np.sort(np.asarray(gaps, dtype=float))
    times, deaths = np.unique(observed, return_counts=True)
    # At risk at tⱼ: the gaps not shorter than tⱼ, and the censored time if it reaches tⱼ.
    at_risk = len(observed) - np.searchsorted(observed, times, side="left") + (censored_s >= times)
    empirical = np.cumprod(1.0 - deaths / at_risk)
    exponential = None if mtbf_s is None else tuple(float(v) for v in np.exp(-times / mtbf_s))
    fitted = None if weibull is None else tuple(weibull.survival(float(t)) for t in times)
    return SurvivalCurve(tuple(float(t) for t in times), tuple(float(v) for v in empirical), exponential, fitted)


# ---------------------------------------------------------------- the whole fit


@dataclass(frozen=True)
class FailureFit:
    """Everything estimated from one set of event times (docs/fit.md §3).

    ``interruptions`` are those in the window, after coalescing, including
    one at the window's start if any; ``mtbf.interruptions`` counts those
    after the start (an interruption at the start only starts the clock).
    ``gaps_s`` are the times between successive interruptions and
    ``censored_s`` the time from the last one to the window's end.
    """

    events_read: int
    events_kept: int
    skipped_bad: int
    events_outside_window: int
    events_coalesced: int
    coalesce_s: float
    window_start_s: float
    window_end_s: float
    interruptions: tuple[Interruption, ...]
    mtbf: MtbfEstimate
    observed_gpus: float | None
    gpu_mtbf: MtbfEstimate | None
    gaps_s: tuple[float, ...]
    censored_s: float
    weibull: WeibullFit | None
    weibull_reason: NoFitReason | None
    causes: tuple[CauseShare, ...]
    histogram: Histogram
    survival: SurvivalCurve

    @property
    def window_s(self) -> float:
        return self.window_end_s - self.window_start_s

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able document in SI units; absent or non-finite values are ``None``."""
        weibull = None
        if self.weibull is not None:
            w = self.weibull
            weibull = {
                "shape": _num(w.shape),
                "shape_ci95": [_num(w.shape_ci95[0]), _num(w.shape_ci95[1])],
                "scale_s": _num(w.scale_s),
                "mean_s": _num(w.mean_s),
                "lr_statistic": _num(w.lr_statistic),
                "p_value": _num(w.p_value),
                "verdict": w.verdict,
                "gaps": w.gaps,
                "censored_s": _num(w.censored_s),
            }
        gpu = self.gpu_mtbf
        return {
            "events_read": self.events_read,
            "events_kept": self.events_kept,
            "skipped_bad": self.skipped_bad,
            "events_outside_window": self.events_outside_window,
            "events_coalesced": self.events_coalesced,
            "coalesce_s": _num(self.coalesce_s),
            "interruptions": self.mtbf.interruptions,
            "window_start_s": _num(self.window_start_s),
            "window_end_s": _num(self.window_end_s),
            "window_s": _num(self.window_s),
            "mtbf_s": _num(self.mtbf.mtbf_s),
            "mtbf_ci95": [_num(self.mtbf.ci95[0]), _num(self.mtbf.ci95[1])],
            "mtbf_lower_bound_s": _num(self.mtbf.lower_bound_s),
            "observed_gpus": _num(self.observed_gpus),
            "gpu_mtbf_s": None if gpu is None else _num(gpu.mtbf_s),
            "gpu_mtbf_ci95": None if gpu is None else [_num(gpu.ci95[0]), _num(gpu.ci95[1])],
            "weibull": weibull,
            "weibull_reason": self.weibull_reason,
            "causes": [{"cause": c.cause, "count": c.count, "share": _num(c.share)} for c in self.causes],
            "histogram": {"edges_s": [_num(e) for e in self.histogram.edges_s], "counts": list(self.histogram.counts)},
        }


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _finite(value: float, name: str, *, positive: bool = False, non_negative: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"expected a number, got {value!r}", where=name) from None
    if not math.isfinite(number):
        raise InputError(f"must be finite, got {value!r}", where=name)
    if positive and number <= 0:
        raise InputError(f"must be positive, got {value!r}", where=name)
    if non_negative and number < 0:
        raise InputError(f"cannot be negative, got {value!r}", where=name)
    return number


def fit(
    times: Sequence[float] | npt.NDArray[np.float64],
    *,
    causes: Sequence[str] | None = None,
    coalesce_s: float = 0.0,
    start_s: float | None = None,
    end_s: float | None = None,
    observed_gpus: float | None = None,
    events_read: int | None = None,
    skipped_bad: int = 0,
    bins_per_decade: int = 4,
) -> FailureFit:
    """Fit the failure process to event ``times`` (seconds, any order).

    * ``causes``: one per event; counted per interruption (its first event's cause).
    * ``coalesce_s``: events this close chain into one interruption (§2).
    * ``start_s``/``end_s``: the observation window; default, the first and the last event (§3).
    * ``observed_gpus``: GPUs the log was observed on; gives the per-GPU MTBF (§6).
    * ``events_read``/``skipped_bad``: the reader's counts, echoed in :meth:`FailureFit.to_dict`.
    """
    values = [_finite(t, "times") for t in times]
    if not values and (start_s is None or end_s is None):
        raise InputError("no events to fit: without events, give both ends of the window", where="times")
    if causes is not None and len(causes) != len(values):
        raise InputError(f"{len(causes)} causes for {len(values)} events", where="causes")
    gap = _finite(coalesce_s, "coalesce_s", non_negative=True)
    gpus = None if observed_gpus is None else _finite(observed_gpus, "observed_gpus", positive=True)
    start = _finite(start_s, "start_s") if start_s is not None else min(values)
    end = _finite(end_s, "end_s") if end_s is not None else max(values)
    if end <= start:
        if start_s is None and end_s is None:
            raise InputError(
                "all events are at one instant, which spans no time: give a window start or end", where="times"
            )
        raise InputError(f"the window must end after it starts ({end} s is not after {start} s)", where="end_s")
    if not math.isfinite(end - start):
        raise InputError("the window is too long to count in seconds", where="end_s" if end_s is not None else "times")

    inside = [i for i, t in enumerate(values) if start <= t <= end]
    labels = list(causes) if causes is not None else None
    interruptions = coalesce(
        [values[i] for i in inside], None if labels is None else [labels[i] for i in inside], gap_s=gap
    )
    counted = [i for i in interruptions if i.time_s > start]
    estimate = mtbf_estimate(len(counted), end - start)

    moments = [i.time_s for i in interruptions]
    gaps = tuple(b - a for a, b in pairwise(moments))
    censored = end - moments[-1] if moments else 0.0
    weibull: WeibullFit | None = None
    reason: NoFitReason | None = None
    outcome = fit_weibull(gaps, censored_s=censored)
    if isinstance(outcome, NoWeibull):
        reason = outcome.reason
    else:
        weibull = outcome
    return FailureFit(
        events_read=len(values) if events_read is None else events_read,
        events_kept=len(values),
        skipped_bad=skipped_bad,
        events_outside_window=len(values) - len(inside),
        events_coalesced=len(inside) - len(interruptions),
        coalesce_s=gap,
        window_start_s=start,
        window_end_s=end,
        interruptions=interruptions,
        mtbf=estimate,
        observed_gpus=gpus,
        gpu_mtbf=None if gpus is None else estimate.scaled(gpus),
        gaps_s=gaps,
        censored_s=censored,
        weibull=weibull,
        weibull_reason=reason,
        causes=cause_shares([i.cause for i in counted]) if labels is not None else (),
        histogram=gap_histogram(gaps, bins_per_decade=bins_per_decade),
        survival=survival_curve(gaps, censored, mtbf_s=estimate.mtbf_s, weibull=weibull),
    )


def fit_log(
    log: EventLog,
    *,
    coalesce_s: float = 0.0,
    start_s: float | None = None,
    end_s: float | None = None,
    observed_gpus: float | None = None,
    bins_per_decade: int = 4,
) -> FailureFit:
    """:func:`fit` on the events of a log read by :func:`read_log`, carrying its counts."""
    return fit(
        log.times,
        causes=log.causes,
        coalesce_s=coalesce_s,
        start_s=start_s,
        end_s=end_s,
        observed_gpus=observed_gpus,
        events_read=log.read,
        skipped_bad=log.skipped_bad,
        bins_per_decade=bins_per_decade,
    )


# ---------------------------------------------------------------- reading incident logs

#: Fields tried, in order, when no time field is named.
TIME_FIELDS = ("time", "timestamp", "event_time", "start")

#: The cause given to an event whose cause field is missing, null or empty.
UNKNOWN_CAUSE = "unknown"


@dataclass(frozen=True)
class Event:
    """One kept event: its time in seconds, its cause, and the line it was read from."""

    time_s: float
    cause: str
    line: int


@dataclass(frozen=True)
class EventLog:
    """The kept events of one or more logs, sorted by time, and what happened to the rest.

    ``time_kind`` says what the times count from: ``"timestamp"`` (ISO-8601,
    seconds since 1970-01-01 UTC) or ``"number"`` (the log's own zero).
    ``read = kept + filtered + skipped_bad``; ``bad`` holds the first few
    skipped rows' messages, each starting with ``FILE:LINE``.
    """

    source: str
    format: str
    time_field: str
    time_kind: TimeKind
    events: tuple[Event, ...]
    read: int
    kept: int
    filtered: int
    skipped_bad: int
    bad: tuple[str, ...]
    naive_timestamps: int = 0
    year_from: str | None = None  # where the year of year-less timestamps came from: year, mtime or today

    @property
    def times(self) -> tuple[float, ...]:
        """The event times in seconds, ascending."""
        return tuple(event.time_s for event in self.events)

    @property
    def causes(self) -> tuple[str, ...]:
        """The causes, in the order of :attr:`times`."""
        return tuple(event.cause for event in self.events)


class _Incidents:
    """The reader's consumer for incident logs: every record is an event with a time and a cause."""

    def __init__(self, time: str | None, time_unit: str | None, cause: str | None) -> None:
        self.time_field = time.strip() if time else None
        self.clock = Clock(time_unit)
        self.cause = cause.strip() if cause else None
        self.events: list[Event] = []

    def fields(self, names: Sequence[str], line: int) -> None:
        if self.time_field is not None:
            return
        for candidate in TIME_FIELDS:
            if candidate in names:
                self.time_field = candidate
                return
        shown = ", ".join(repr(name) for name in list(names)[:8]) or "none"
        raise FatalRecord(
            f"no time field: none of {', '.join(TIME_FIELDS)} is present (fields: {shown}); name one with {{time}}"
        )

    def record(self, record: dict[str, Any], line: int) -> bool:
        if type(record.get("time")) is Stamp and "event" in record:
            # A run assembled from a framework's or scheduler's log: its failures are the incidents.
            if record["event"] != "failure":
                return False
            cause = record.get(self.cause or "cause")
            label = UNKNOWN_CAUSE if cause is None or cause == "" else text_form(cause)
            self.events.append(Event(self.clock.seconds(record["time"], line=line), label, line))
            return True
        assert self.time_field is not None  # fields() came first
        raw = get_path(record, self.time_field, MISSING)
        if raw is MISSING or raw is None or raw == "":
            raise BadRecord(f"no time: field {self.time_field!r} is missing or empty")
        seconds = self.clock.seconds(raw, line=line)
        label = UNKNOWN_CAUSE
        if self.cause is not None:
            value = get_path(record, self.cause, None)
            if value is not None and value != "":
                label = text_form(value)
        self.events.append(Event(seconds, label, line))
        return True

    def log(self, counts: reader.Counts) -> EventLog:
        if not self.events:
            detail = f"read {counts.read}"
            if counts.filtered:
                detail += f", {counts.filtered} filtered out by where"
            if counts.skipped_bad:
                detail += f", {counts.skipped_bad} bad rows skipped"
            raise InputError(f"no events kept ({detail})", where=counts.source)
        assert self.time_field is not None and self.clock.kind is not None
        events = tuple(sorted(self.events, key=lambda event: event.time_s))
        return EventLog(
            source=counts.source,
            format=counts.format,
            time_field=self.time_field,
            time_kind=self.clock.kind,
            events=events,
            read=counts.read,
            kept=len(events),
            filtered=counts.filtered,
            skipped_bad=counts.skipped_bad,
            bad=counts.bad,
            naive_timestamps=self.clock.naive,
            year_from=counts.said.get("year_from"),
        )


def _incidents(time: str | None, time_unit: str | None, cause: str | None) -> _Incidents:
    if time_unit is not None:
        reader.time_unit_seconds(time_unit)
    if time is not None and not time.strip():
        raise InputError("empty field name", where="time")
    if cause is not None and not cause.strip():
        raise InputError("empty field name", where="cause")
    return _Incidents(time, time_unit, cause)


def _prepared(
    format: str | None, time: str | None, time_unit: str | None, cause: str | None
) -> tuple[_Incidents, tuple[str, ...]]:
    """The format checked, the consumer of incidents, and the fields every record must have."""
    reader.check_format(format)
    incidents = _incidents(time, time_unit, cause)
    return incidents, (() if incidents.time_field is None else (incidents.time_field,))


def read_log(
    source: str | os.PathLike[str],
    *,
    stdin: Any = None,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    where: Sequence[str] = (),
    cause: str | None = None,
    skip_bad: bool = False,
    year: int | None = None,
) -> EventLog:
    """Read one incident log from a path, or from ``stdin`` when ``source`` is ``"-"``, by
    :func:`ckptcalc.logs.reader.scan` (compressed logs too). The keyword arguments are those of :func:`parse_log`."""
    incidents, required = _prepared(format, time, time_unit, cause)
    counts = reader.scan(
        source, incidents, stdin=stdin, format=format, where=where, required=required, skip_bad=skip_bad, year=year
    )
    return incidents.log(counts)


def parse_log(
    text: str,
    *,
    name: str,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    where: Sequence[str] = (),
    cause: str | None = None,
    skip_bad: bool = False,
    year: int | None = None,
) -> EventLog:
    """Read the text of one incident log; ``name`` labels it in messages (``name:line``).

    * ``format``: ``csv``, ``json`` or ``jsonl``; detected from the first non-blank line when ``None``.
    * ``time``: the dotted path of the time field; default, the first of
      :data:`TIME_FIELDS` present in the first record (CSV: the header).
    * ``time_unit``: the unit of numeric times (``s``, ``min``, ``h``, ``d``); required for them.
    * ``where``: ``FIELD=VALUE`` conditions, all of which a record must meet
      (compared as text, see :func:`~ckptcalc.logs.reader.text_form`); a record without the field fails.
    * ``cause``: dotted path of a field to group by; missing, null or empty is ``"unknown"``.
    * ``skip_bad``: skip and count bad rows instead of raising at the first.
    * ``year``: the year of timestamps that carry none (absl's); default, the file's modification time's.
    """
    incidents, required = _prepared(format, time, time_unit, cause)
    counts = reader.scan_text(
        text, incidents, name=name, format=format, where=where, required=required, skip_bad=skip_bad, year=year
    )
    return incidents.log(counts)


def combine(logs: Sequence[EventLog]) -> EventLog:
    """Merge logs read separately into one, keeping every event and adding the counts.

    All logs must use the same time form (timestamps, or numbers from the same zero).
    """
    if not logs:
        raise InputError("no logs to combine")
    first = logs[0]
    for log in logs[1:]:
        if log.time_kind != first.time_kind:
            raise InputError(
                f"{log.source} has {log.time_kind} times but {first.source} has {first.time_kind} times; "
                "logs read together must use one form",
                where=log.source,
            )
    if len(logs) == 1:
        return first

    def joined(values: Sequence[str]) -> str:
        return values[0] if len(set(values)) == 1 else ", ".join(values)

    events = tuple(sorted((e for log in logs for e in log.events), key=lambda event: event.time_s))
    return EventLog(
        source=", ".join(log.source for log in logs),
        format=joined([log.format for log in logs]),
        time_field=joined([log.time_field for log in logs]),
        time_kind=first.time_kind,
        events=events,
        read=sum(log.read for log in logs),
        kept=len(events),
        filtered=sum(log.filtered for log in logs),
        skipped_bad=sum(log.skipped_bad for log in logs),
        bad=tuple(message for log in logs for message in log.bad)[: reader.BAD_KEPT],
        naive_timestamps=sum(log.naive_timestamps for log in logs),
        year_from=next((log.year_from for log in logs if log.year_from is not None), None),
    )
