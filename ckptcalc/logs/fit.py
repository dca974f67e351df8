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

>>> result = fit_events([0.0, 3600.0, 7200.0, 18000.0])
>>> result.mtbf.interruptions, result.mtbf.mtbf_s
(3, 6000.0)
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Literal

from ckptcalc.errors import InputError
from ckptcalc.logs import canonical, reader
from ckptcalc.logs.adapter import Columns, Stamp
from ckptcalc.logs.outages import Found, Outages
from ckptcalc.logs.reader import MISSING, BadRecord, Clock, FatalRecord, TimeKind, get_path, text_form
from ckptcalc.model.numeric import chi2_quantile, mtbf_interval
from ckptcalc.model.statistics import CONFIDENCE

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_ALPHA = round(1.0 - CONFIDENCE, 12)  # 0.05 exactly as written, not 1 - 0.95 in binary

#: Fewest gaps between interruptions a Weibull fit is attempted on.
MIN_WEIBULL_GAPS = 2

#: Shapes searched for the Weibull fit and its interval; beyond them the estimate or bound is "none".
SHAPE_RANGE = (1e-4, 1e4)

#: Below this a p-value is reported as "p < 1e-300" (it may have underflowed to 0), and as 0.0 in JSON.
P_FLOOR = 1e-300

#: A gap shorter than this is near zero (docs/fit.md §2): events of one incident counted apart.
NEAR_ZERO_S = 60.0

#: When at least this share of the gaps is near zero, the fit proposes coalescing and shows its effect.
NEAR_ZERO_SHARE = 0.10

#: The coalescing windows whose interruptions and Weibull shape are shown side by side (seconds).
COALESCING_WINDOWS = (0.0, 60.0, 300.0, 1800.0)

Verdict = Literal["clustered", "exponential", "wear_out"]
NoFitReason = Literal["too_few_gaps", "no_finite_estimate", "counts_only"]


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

    @property
    def p_underflow(self) -> bool:
        """Whether p is below :data:`P_FLOOR` (read it as p < 1e-300; the double may have underflowed to 0)."""
        return self.p_value < P_FLOOR


@dataclass(frozen=True)
class NoWeibull:
    """Why there is no Weibull fit: ``too_few_gaps`` (fewer than two), ``no_finite_estimate`` (the gaps
    are all equal: the likelihood grows without bound in k), or ``counts_only`` (a count, no gaps)."""

    reason: NoFitReason


def weibull_log_likelihood(shape: float, scale_s: float, gaps: Sequence[float], censored_s: float = 0.0) -> float:
    """ℓ(k, λ) = Σ [ln k − k ln λ + (k − 1) ln tᵢ − (tᵢ/λ)^k] − (c/λ)^k, times in seconds (docs/fit.md §7)."""
    total = 0.0
    for gap in gaps:
        total += math.log(shape) - shape * math.log(scale_s) + (shape - 1.0) * math.log(gap) - (gap / scale_s) ** shape
    if censored_s > 0:
        total -= (censored_s / scale_s) ** shape
    return total


#: Elements per block of the sums over gaps: small enough to stay in cache.
BLOCK = 1 << 16

#: Up to this many gaps, their logarithms are kept in one array; beyond, each sum recomputes them block by block
#: from the event times, so ten million gaps need no array of them at all.
CACHED_GAPS = 1 << 20

#: A source of blocks: a function giving, each time it is called, an iterator over fresh arrays.
Blocks = Callable[[], Iterator["npt.NDArray[np.float64]"]]


def _slices(values: npt.NDArray[np.float64]) -> Iterator[npt.NDArray[np.float64]]:
    for start in range(0, len(values), BLOCK):
        yield values[start : start + BLOCK]


class _Profile:
    """The profile log-likelihood in k, from the logarithms of the gaps (``log_blocks``: ``d`` of them), on
    times divided by the longest one so no power overflows. Sums run over blocks, so a fit of 10⁷ gaps
    holds no array of them beyond what ``log_blocks`` holds."""

    def __init__(self, log_blocks: Blocks, d: int, censored_s: float) -> None:
        self.log_blocks = log_blocks
        top, total = -math.inf, 0.0
        for block in log_blocks():
            top = max(top, float(block.max()))
            total += float(block.sum())
        log_censored = math.log(censored_s) if censored_s > 0 else None
        self.log_reference = top if log_censored is None else max(top, log_censored)
        self.reference = math.exp(self.log_reference)
        self.d = d
        # ln t − ln t_max rather than ln(t/t_max): the ratio can underflow to 0 for extreme gaps.
        self.log_censored = None if log_censored is None else log_censored - self.log_reference
        self.sum_log_observed = total - self.d * self.log_reference

    def _sums(self, k: float) -> tuple[float, float]:
        import numpy as np

        total = weighted = 0.0
        for block in self.log_blocks():
            part = block - self.log_reference
            powers = np.exp(k * part)  # x^k ≤ 1, and the largest is exactly 1
            total += float(powers.sum())
            # An elementwise product, not a BLAS dot: its threads cost more than they save here.
            weighted += float(np.multiply(powers, part, out=part).sum())
        if self.log_censored is not None:
            power = math.exp(k * self.log_censored)
            total += power
            weighted += power * self.log_censored
        return total, weighted

    def log_likelihood(self, k: float) -> float:
        """ℓ_p(k) = d ln k − d ln(Σ t^k / d) + (k − 1) Σ ln tᵢ − d, in seconds."""
        total, _ = self._sums(k)
        d = self.d
        scaled = d * math.log(k) - d * math.log(total / d) + (k - 1.0) * self.sum_log_observed - d
        return scaled - d * self.log_reference

    def score(self, k: float) -> float:
        """dℓ_p/dk = d/k − d Σ t^k ln t / Σ t^k + Σ ln tᵢ (decreasing in k)."""
        total, weighted = self._sums(k)
        return self.d / k - self.d * weighted / total + self.sum_log_observed

    def log_scale(self, k: float) -> float:
        """ln λ̂(k), from λ^k = Σ t^k / d."""
        total, _ = self._sums(k)
        return self.log_reference + math.log(total / self.d) / k


def _bracket(function: Any, start: float, factor: float, limit: float) -> float | None:
    """Step from ``start`` by ``factor`` until ``function`` turns negative; None if it is still not at ``limit``."""
    point = start
    while function(point) >= 0:
        if point == limit:
            return None
        point = min(point * factor, limit) if factor > 1 else max(point * factor, limit)
    return point


def fit_weibull(gaps: Sequence[float] | npt.NDArray[np.float64], *, censored_s: float = 0.0) -> WeibullFit | NoWeibull:
    """Maximum-likelihood Weibull fit of the gaps, ``censored_s`` a right-censored time (0: none).

    The scale has a closed form for each shape, so only the profile
    likelihood in k is maximised: its derivative decreases in k and has one
    root, found by Brent's method.
    """
    import numpy as np

    observed = np.asarray(gaps, dtype=float)
    if len(observed) >= MIN_WEIBULL_GAPS and (
        not bool(np.all(np.isfinite(observed) & (observed > 0))) or not (math.isfinite(censored_s) and censored_s >= 0)
    ):
        raise InputError("gaps must be positive finite times", where="gaps")
    logs = np.log(observed)
    return _fit_gaps(lambda: _slices(logs), len(logs), censored_s)


def _fit_gaps(log_blocks: Blocks, d: int, censored_s: float, *, interval: bool = True) -> WeibullFit | NoWeibull:
    """:func:`fit_weibull` on the logarithms of ``d`` checked gaps, given block by block; without ``interval``
    the shape's interval is not searched (both sides None)."""
    if d < MIN_WEIBULL_GAPS:
        return NoWeibull("too_few_gaps")
    profile = _Profile(log_blocks, d, censored_s)
    try:
        return _fit_profile(profile, censored_s, interval)
    finally:
        # brentq's wrappers leave reference cycles through the profile: let go of the gaps now, not at the next
        # collection (ten million gaps' events are 90 MB).
        profile.log_blocks = _no_blocks


def _no_blocks() -> Iterator[npt.NDArray[np.float64]]:
    return iter(())


def _fit_profile(profile: _Profile, censored_s: float, interval: bool) -> WeibullFit | NoWeibull:
    from scipy.optimize import brentq
    from scipy.special import chdtrc

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

    # Where the bounds about are: k̂ ± 1.96 standard errors, the error of k̂ with the scale profiled out
    # being k·√6/(π√d) (Cohen, 1965). Brent's method from a bracket that tight needs a third of the
    # likelihood passes it needs from [k̂/2, k̂] (each a pass over every gap); where the guess fails, the
    # wide bracket is searched as before. The bounds are the same roots to the same tolerance.
    error = shape * math.sqrt(6.0) / (math.pi * math.sqrt(profile.d))

    def side(limit: float, factor: float) -> float | None:
        sign = 1.0 if factor > 1 else -1.0
        inner, outer = shape + sign * 1.5 * error, shape + sign * 2.5 * error
        if low_k < outer < high_k and drop(outer) < 0:
            return float(brentq(drop, *sorted((outer, inner if drop(inner) > 0 else shape)), xtol=1e-14, rtol=1e-14))
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
        shape_ci95=(side(low_k, 0.5), side(high_k, 2.0)) if interval else (None, None),
        scale_s=math.exp(log_scale),
        mean_s=mean,
        log_likelihood=best,
        lr_statistic=statistic,
        p_value=p_value,
        verdict=verdict,
        gaps=profile.d,
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


def gap_histogram(gaps: Sequence[float] | npt.NDArray[np.float64], *, bins_per_decade: int = 4) -> Histogram:
    """Bins with edges at 10^(j/bins_per_decade) s, from the shortest gap's bin to the longest's.

    >>> gap_histogram([1.0, 2.0, 5.0, 50.0], bins_per_decade=1)
    Histogram(edges_s=(1.0, 10.0, 100.0), counts=(3, 1))
    """
    import numpy as np

    values = np.asarray(gaps, dtype=float)
    return _histogram(lambda: _slices(values), bins_per_decade)[0]


def _histogram(blocks: Blocks, bins_per_decade: int) -> tuple[Histogram, int]:
    """:func:`gap_histogram` of gaps given block by block, and how many are near zero (under :data:`NEAR_ZERO_S`)."""
    import numpy as np

    if bins_per_decade < 1:
        raise InputError(f"bins_per_decade must be at least 1, got {bins_per_decade}", where="bins_per_decade")
    low, high, near = math.inf, -math.inf, 0
    for block in blocks():
        if len(block):
            low, high = min(low, float(block.min())), max(high, float(block.max()))
            near += int(np.count_nonzero(block < NEAR_ZERO_S))
    if low == math.inf:
        return Histogram((), ()), 0
    first = math.floor(math.log10(low) * bins_per_decade)
    last = max(math.ceil(math.log10(high) * bins_per_decade), first + 1)
    counts = np.zeros(last - first, dtype=np.int64)
    for block in blocks():
        logs = np.log10(block) * bins_per_decade
        # Bin by the index computed from the logarithm, so a gap on an edge never falls outside through rounding.
        index = np.clip(np.floor(logs).astype(np.int64) - first, 0, last - first - 1)
        counts += np.bincount(index, minlength=last - first)
    edges = tuple(float(10.0 ** (j / bins_per_decade)) for j in range(first, last + 1))
    return Histogram(edges, tuple(int(c) for c in counts)), near


@dataclass(frozen=True)
class SurvivalCurve:
    """Kaplan–Meier survival of the gaps at each distinct gap, and the fitted curves at the same times (§9)."""

    times_s: tuple[float, ...]
    empirical: tuple[float, ...]
    exponential: tuple[float, ...] | None
    weibull: tuple[float, ...] | None


def survival_curve(
    gaps: Sequence[float] | npt.NDArray[np.float64],
    censored_s: float = 0.0,
    *,
    mtbf_s: float | None = None,
    weibull: WeibullFit | None = None,
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
class CoalescingRow:
    """The fit at one coalescing window (docs/fit.md §2): interruptions counted, MTBF, Weibull shape and verdict."""

    coalesce_s: float
    interruptions: int
    mtbf_s: float | None
    shape: float | None
    verdict: Verdict | None


@dataclass(frozen=True, eq=False)
class FailureFit:
    """Everything estimated from one set of event times (docs/fit.md §3).

    :attr:`interruptions` are those in the window, after coalescing, including
    one at the window's start if any; ``mtbf.interruptions`` counts those
    after the start (an interruption at the start only starts the clock).
    :attr:`gaps_s` are the times between successive interruptions and
    ``censored_s`` the time from the last one to the window's end.
    ``interruptions_at_start`` is 1 where an interruption stands at the window's start (the events kept,
    less those outside the window and those coalesced, are one more than ``mtbf.interruptions``), else 0.
    ``near_zero_gaps`` counts gaps under :data:`NEAR_ZERO_S`; when they are at
    least :data:`NEAR_ZERO_SHARE` of the gaps, ``coalescing`` holds the fit at
    each of :data:`COALESCING_WINDOWS` (and the window used), else it is None.

    The event times are held as arrays, not objects: the interruptions, gaps
    and survival curve are built when asked for.
    """

    events_read: int
    events_kept: int
    skipped_bad: int
    events_outside_window: int
    events_coalesced: int
    coalesce_s: float
    window_start_s: float
    window_end_s: float
    mtbf: MtbfEstimate
    observed_gpus: float | None
    gpu_mtbf: MtbfEstimate | None
    censored_s: float
    weibull: WeibullFit | None
    weibull_reason: NoFitReason | None
    causes: tuple[CauseShare, ...]
    histogram: Histogram
    near_zero_gaps: int = 0
    coalescing: tuple[CoalescingRow, ...] | None = None
    interruptions_at_start: int = 0
    # The events in the window (sorted), which of them begin an interruption (None: each one),
    # their cause codes and the names the codes stand for.
    inside_s: Any = field(default=None, repr=False)
    first: Any = field(default=None, repr=False)
    codes: Any = field(default=None, repr=False)
    labels: tuple[str, ...] = field(default=(), repr=False)

    @property
    def window_s(self) -> float:
        return self.window_end_s - self.window_start_s

    @property
    def moments_s(self) -> npt.NDArray[np.float64]:
        """When each interruption began, ascending."""
        import numpy as np

        if self.inside_s is None:
            return np.zeros(0)
        moments: npt.NDArray[np.float64] = self.inside_s if self.first is None else self.inside_s[self.first]
        return moments

    @property
    def gaps_s(self) -> npt.NDArray[np.float64]:
        """The times between successive interruptions."""
        import numpy as np

        return np.diff(self.moments_s)

    @property
    def interruptions(self) -> tuple[Interruption, ...]:
        """Each interruption: its start, its last event, its events and its first event's cause."""
        import numpy as np

        inside = self.moments_s if self.inside_s is None else self.inside_s
        count = len(inside)
        starts = np.arange(count) if self.first is None else np.flatnonzero(self.first)
        ends = np.append(starts[1:], count) if count else starts
        names = [self.labels[int(self.codes[i])] if self.codes is not None else UNKNOWN_CAUSE for i in starts]
        return tuple(
            Interruption(float(inside[a]), float(inside[b - 1]), int(b - a), name)
            for a, b, name in zip(starts, ends, names, strict=True)
        )

    @property
    def survival(self) -> SurvivalCurve:
        """The Kaplan–Meier curve of the gaps beside the fitted ones (§9)."""
        return survival_curve(self.gaps_s, self.censored_s, mtbf_s=self.mtbf.mtbf_s, weibull=self.weibull)

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
                "p_value": 0.0 if w.p_underflow else _num(w.p_value),
                "p_value_underflow": w.p_underflow,
                "verdict": w.verdict,
                "gaps": w.gaps,
                "censored_s": _num(w.censored_s),
            }
        gpu = self.gpu_mtbf
        rows = None
        if self.coalescing is not None:
            rows = [
                {"coalesce_s": _num(r.coalesce_s), "interruptions": r.interruptions, "mtbf_s": _num(r.mtbf_s),
                 "shape": _num(r.shape), "verdict": r.verdict}
                for r in self.coalescing
            ]  # fmt: skip
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
            "near_zero_gaps": self.near_zero_gaps,
            "coalescing": rows,
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


def _times_array(times: Sequence[float] | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    import numpy as np

    try:
        values = np.asarray(times, dtype=float)
    except (TypeError, ValueError, OverflowError):
        bad = next((t for t in times if not _is_number(t)), None)
        raise InputError(f"expected a number, got {bad!r}", where="times") from None
    if values.ndim != 1:
        raise InputError("expected a list of times", where="times")
    finite = np.isfinite(values)
    if not bool(finite.all()):
        raise InputError(f"must be finite, got {float(values[~finite][0])!r}", where="times")
    return values


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def chain_first(times: npt.NDArray[np.float64], gap_s: float) -> npt.NDArray[np.bool_] | None:
    """Which of the sorted ``times`` begin an interruption by the chain rule of §2 (the vector form of
    :func:`coalesce`: an event joins the interruption before it when it is at most ``gap_s`` after the previous
    event); None when every one does. One byte per event, worked out block by block.

    >>> import numpy as np
    >>> chain_first(np.array([0.0, 5.0, 9.0, 30.0]), 5.0).tolist(), chain_first(np.array([0.0, 1.0]), 0.0)
    ([True, False, False, True], None)
    """
    import numpy as np

    count = len(times)
    if count < 2:
        return None
    first = np.empty(count, dtype=bool)
    first[0] = True
    for start in range(0, count - 1, BLOCK):
        stop = min(start + BLOCK, count - 1)
        np.greater(times[start + 1 : stop + 1] - times[start:stop], gap_s, out=first[start + 1 : stop + 1])
    return None if bool(first.all()) else first


class _Gaps:
    """The gaps between successive interruptions, from the sorted event ``times`` and which of them begin one
    (``first``, None: each): given block by block, so that no array of them need exist."""

    def __init__(self, times: npt.NDArray[np.float64], first: npt.NDArray[np.bool_] | None) -> None:
        import numpy as np

        self.times, self.first = times, first
        starts = len(times) if first is None else int(np.count_nonzero(first))
        self.count = max(starts - 1, 0)

    def blocks(self) -> Iterator[npt.NDArray[np.float64]]:
        """Fresh arrays of gaps, in order."""
        import numpy as np

        times, first = self.times, self.first
        if first is None:
            for start in range(0, len(times) - 1, BLOCK):
                stop = min(start + BLOCK, len(times) - 1)
                yield times[start + 1 : stop + 1] - times[start:stop]
            return
        previous: float | None = None
        for start in range(0, len(times), BLOCK):
            moments = times[start : start + BLOCK][first[start : start + BLOCK]]
            if not len(moments):
                continue
            if previous is not None:
                moments = np.concatenate(([previous], moments))
            if len(moments) > 1:
                yield np.diff(moments)
            previous = float(moments[-1])

    def log_blocks(self) -> Blocks:
        """A source of the gaps' logarithms: kept in one array up to :data:`CACHED_GAPS`, else recomputed."""
        import numpy as np

        if self.count <= CACHED_GAPS:
            logs = np.log(np.concatenate([np.zeros(0), *self.blocks()]))
            return lambda: _slices(logs)
        return lambda: (np.log(block, out=block) for block in self.blocks())


def fit_events(
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

    An interruption at the window's start only starts the clock: four events from 0 s give three gaps.

    >>> fitted = fit_events([0.0, 5.0, 10.0, 30.0], end_s=40.0)
    >>> fitted.interruptions_at_start, fitted.mtbf.interruptions, fitted.mtbf.mtbf_s
    (1, 3, 13.333333333333334)
    """
    import numpy as np

    values = _times_array(times)
    codes = None
    labels: tuple[str, ...] | None = None
    if causes is not None:
        if len(causes) != len(values):
            raise InputError(f"{len(causes)} causes for {len(values)} events", where="causes")
        known: dict[str, int] = {}
        codes = np.fromiter((known.setdefault(c, len(known)) for c in causes), dtype=np.int64, count=len(causes))
        labels = tuple(known)
    return _fit(values, codes, labels, coalesce_s=coalesce_s, start_s=start_s, end_s=end_s,
                observed_gpus=observed_gpus, events_read=events_read, skipped_bad=skipped_bad,
                bins_per_decade=bins_per_decade)  # fmt: skip


def _fit(
    values: npt.NDArray[np.float64],
    codes: npt.NDArray[np.integer[Any]] | None,
    labels: tuple[str, ...] | None,
    *,
    coalesce_s: float,
    start_s: float | None,
    end_s: float | None,
    observed_gpus: float | None,
    events_read: int | None,
    skipped_bad: int,
    bins_per_decade: int,
) -> FailureFit:
    """:func:`fit` on an array of times; ``codes`` index ``labels`` (None with labels: every event has the first)."""
    import numpy as np

    if not len(values) and (start_s is None or end_s is None):
        raise InputError("no events to fit: without events, give both ends of the window", where="times")
    gap = _finite(coalesce_s, "coalesce_s", non_negative=True)
    gpus = None if observed_gpus is None else _finite(observed_gpus, "observed_gpus", positive=True)
    if not _ascending(values):
        order = np.argsort(values, kind="stable")  # stable: of events at one instant, the first listed leads
        values = values[order]
        codes = None if codes is None else codes[order]
        del order
    start = _finite(start_s, "start_s") if start_s is not None else float(values[0])
    end = _finite(end_s, "end_s") if end_s is not None else float(values[-1])
    if end <= start:
        if start_s is None and end_s is None:
            raise InputError(
                "all events are at one instant, which spans no time: give a window start or end", where="times"
            )
        raise InputError(f"the window must end after it starts ({end} s is not after {start} s)", where="end_s")
    if not math.isfinite(end - start):
        raise InputError("the window is too long to count in seconds", where="end_s" if end_s is not None else "times")

    low, high = int(np.searchsorted(values, start, "left")), int(np.searchsorted(values, end, "right"))
    inside = values[low:high]  # a view: the events are not copied
    inside_codes = None if codes is None else codes[low:high]
    first = chain_first(inside, gap)
    gaps = _Gaps(inside, first)
    interruptions = gaps.count + 1 if len(inside) else 0
    # An interruption at the window's start only starts the clock (it can only be the first one).
    first_counted = 1 if interruptions and float(inside[0]) <= start else 0
    estimate = mtbf_estimate(interruptions - first_counted, end - start)

    causes: tuple[CauseShare, ...] = ()
    if labels is not None:
        causes = _shares(inside_codes, first, first_counted, labels, interruptions)

    censored = end - _last_start(inside, first) if interruptions else 0.0
    histogram, near_zero = _histogram(gaps.blocks, bins_per_decade)
    outcome = _fit_gaps(gaps.log_blocks(), gaps.count, censored)
    weibull = None if isinstance(outcome, NoWeibull) else outcome
    reason = outcome.reason if isinstance(outcome, NoWeibull) else None
    coalescing = None
    if interruptions > MIN_WEIBULL_GAPS and near_zero >= NEAR_ZERO_SHARE * (interruptions - 1):
        coalescing = coalescing_rows(inside, start, end, sorted({*COALESCING_WINDOWS, gap}))
    return FailureFit(
        events_read=len(values) if events_read is None else events_read,
        events_kept=len(values),
        skipped_bad=skipped_bad,
        events_outside_window=len(values) - len(inside),
        events_coalesced=len(inside) - interruptions,
        coalesce_s=gap,
        window_start_s=start,
        window_end_s=end,
        mtbf=estimate,
        observed_gpus=gpus,
        gpu_mtbf=None if gpus is None else estimate.scaled(gpus),
        censored_s=censored,
        weibull=weibull,
        weibull_reason=reason,
        causes=causes,
        histogram=histogram,
        near_zero_gaps=near_zero,
        coalescing=coalescing,
        interruptions_at_start=first_counted,
        inside_s=inside,
        first=first,
        codes=inside_codes,
        labels=labels or (),
    )


def _shares(
    codes: npt.NDArray[np.integer[Any]] | None,
    first: npt.NDArray[np.bool_] | None,
    skip: int,
    labels: Sequence[str],
    interruptions: int,
) -> tuple[CauseShare, ...]:
    """:func:`cause_shares` of the interruptions counted: the codes (None: all the first label) of the events that
    begin one (``first``, None: each), less the first ``skip``; a block at a time (bincount widens to 8 bytes)."""
    import numpy as np

    counts = np.zeros(len(labels), dtype=np.int64)
    if codes is None:
        counts[0] = interruptions - skip
    else:
        for start in range(0, len(codes), BLOCK):
            block = codes[start : start + BLOCK]
            if first is not None:
                block = block[first[start : start + BLOCK]]
            counts += np.bincount(block, minlength=len(labels))
        if skip:
            counts[int(codes[0])] -= 1  # the interruption at the window's start only starts the clock
    total = int(counts.sum())
    ranked = sorted(((labels[i], int(c)) for i, c in enumerate(counts) if c), key=lambda item: (-item[1], item[0]))
    return tuple(CauseShare(cause, count, count / total) for cause, count in ranked)


def _ascending(values: npt.NDArray[np.float64]) -> bool:
    """Whether ``values`` never decrease, checked a block at a time."""
    import numpy as np

    for start in range(0, len(values) - 1, BLOCK):
        stop = min(start + BLOCK, len(values) - 1)
        if bool(np.any(values[start + 1 : stop + 1] < values[start:stop])):
            return False
    return True


def coalescing_rows(
    times: npt.NDArray[np.float64], start_s: float, end_s: float, windows: Sequence[float]
) -> tuple[CoalescingRow, ...]:
    """The fit of sorted event ``times`` in the window [``start_s``, ``end_s``] at each coalescing window (§2):
    how the count and the Weibull shape move as events closer than the window merge."""

    rows = []
    for window in windows:
        first = chain_first(times, window)
        gaps = _Gaps(times, first)
        moments = gaps.count + 1 if len(times) else 0
        counted = moments - (1 if moments and float(times[0]) <= start_s else 0)
        estimate = mtbf_estimate(counted, end_s - start_s)
        censored = end_s - _last_start(times, first) if moments else 0.0
        outcome = _fit_gaps(gaps.log_blocks(), gaps.count, censored, interval=False)
        shape = None if isinstance(outcome, NoWeibull) else outcome.shape
        verdict = None if isinstance(outcome, NoWeibull) else outcome.verdict
        rows.append(CoalescingRow(float(window), counted, estimate.mtbf_s, shape, verdict))
    return tuple(rows)


def _last_start(times: npt.NDArray[np.float64], first: npt.NDArray[np.bool_] | None) -> float:
    """When the last interruption began (found without an array of indices: ten million would be 80 MB)."""
    return float(times[-1] if first is None else times[len(first) - 1 - int(first[::-1].argmax())])


def fit_counts(interruptions: float, window_s: float, *, observed_gpus: float | None = None) -> FailureFit:
    """The MTBF from a count alone, ``interruptions`` in ``window_s`` (a paper's "419 interruptions in 54 days"):
    §4's estimate and exact interval (only the bound for 0), no gaps, so no Weibull fit.

    >>> result = fit_counts(419, 54 * 86400.0, observed_gpus=16384)
    >>> round(result.mtbf.mtbf_s / 3600, 3), round(result.gpu_mtbf.mtbf_s / 3600)
    (3.093, 50677)
    """
    count = _finite(interruptions, "failures", non_negative=True)
    if not count.is_integer():
        raise InputError(f"must be a whole number, got {interruptions!r}", where="failures")
    window = _finite(window_s, "window", positive=True)
    gpus = None if observed_gpus is None else _finite(observed_gpus, "observed_gpus", positive=True)
    estimate = mtbf_estimate(int(count), window)
    return FailureFit(
        events_read=0,
        events_kept=0,
        skipped_bad=0,
        events_outside_window=0,
        events_coalesced=0,
        coalesce_s=0.0,
        window_start_s=0.0,
        window_end_s=window,
        mtbf=estimate,
        observed_gpus=gpus,
        gpu_mtbf=None if gpus is None else estimate.scaled(gpus),
        censored_s=0.0,
        weibull=None,
        weibull_reason="counts_only",
        causes=(),
        histogram=Histogram((), ()),
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
    return _fit(log.times_s, log.codes, log.labels or (UNKNOWN_CAUSE,), coalesce_s=coalesce_s, start_s=start_s,
                end_s=end_s, observed_gpus=observed_gpus, events_read=log.read, skipped_bad=log.skipped_bad,
                bins_per_decade=bins_per_decade)  # fmt: skip


# ---------------------------------------------------------------- reading incident logs

#: Fields tried, in order, when no time field is named; matched whatever their case (``Timestamp``).
TIME_FIELDS = ("time", "timestamp", "event_time", "start", "start_time", "event_start_time", "timestart", "time_start")

#: Fields tried, in order, for the cause when none is named; matched whatever their case (``Cause``).
CAUSE_FIELDS = ("cause", "category", "kind", "type")

#: The cause given to an event whose cause field is missing, null or empty.
UNKNOWN_CAUSE = "unknown"


@dataclass(frozen=True, eq=False)
class EventLog:
    """The kept events of one or more logs, sorted by time, and what happened to the rest.

    ``times_s`` holds the times in seconds (ascending) and ``codes`` each one's cause as an index into
    ``labels`` (``codes`` None: no cause field, every cause ``"unknown"``), so ten million events take
    about 100 MB. ``time_kind`` says what the times count from: ``"timestamp"`` (seconds since
    1970-01-01 UTC) or ``"number"`` (the log's own zero). ``read = kept + filtered + skipped_bad``;
    ``bad`` holds the first few skipped rows' messages, each starting with ``FILE:LINE``.
    ``naive_timestamps`` counts timestamps without a zone, read in ``tz`` (``None``: UTC, not asked for).
    """

    source: str
    format: str
    time_field: str
    time_kind: TimeKind
    times_s: Any
    codes: Any
    labels: tuple[str, ...]
    read: int
    kept: int
    filtered: int
    skipped_bad: int
    bad: tuple[str, ...]
    naive_timestamps: int = 0
    tz: str | None = None
    cause_field: str | None = None
    year_from: str | None = None  # where the year of year-less timestamps came from: year, mtime or today
    notes: Mapping[str, int] = field(default_factory=dict)  # what reading inferred (keys: adapter.NOTES)
    files: int = 1
    ignored: int = 0  # events of a framework log that are not failures (and incidents' end rows)
    outages: Found | None = None  # each node's incidents with their ends, where the log gives ends

    @property
    def times(self) -> tuple[float, ...]:
        """The event times in seconds, ascending."""
        return tuple(self.times_s.tolist())

    @property
    def causes(self) -> tuple[str, ...]:
        """The causes, in the order of :attr:`times`."""
        if self.codes is None:
            return (UNKNOWN_CAUSE,) * len(self.times_s)
        return tuple(self.labels[code] for code in self.codes.tolist())


def _find(names: Sequence[str], candidates: Sequence[str]) -> str | None:
    """The first candidate among ``names``: the same name, or else one differing only in case."""
    folded: dict[str, str] = {}
    for name in names:
        folded.setdefault(name.casefold(), name)
    for candidate in candidates:
        if candidate in names:
            return candidate
        if candidate.casefold() in folded:
            return folded[candidate.casefold()]
    return None


class _Incidents:
    """The reader's consumer for incident logs: every record is an event with a time and a cause, kept as a
    number in an array and a small integer code (no object per event)."""

    def __init__(
        self, time: str | None, time_unit: str | None, cause: str | None, tz: tzinfo | None, time_format: str | None
    ) -> None:
        from array import array

        self.time_field = time.strip() if time else None
        self.clock = Clock(time_unit, tz=tz, time_format=time_format)
        self.cause = cause.strip() if cause else None
        self.default_cause = False  # the cause field was found among CAUSE_FIELDS, not named
        self.times = array("d")
        self.codes = array("H")
        self.known: dict[str, int] = {}
        self.by_cell: dict[str, int] = {}  # a table's cell to its code: the labels, and "" for the unknown cause
        self.failures_only = False  # a run's event log in seconds (what simulate --events writes): its failures
        self.outages: Outages | None = None  # incidents with an end per node (docs/model.md §22)

    def fields(self, names: Sequence[str], line: int) -> None:
        if self.cause is None:
            self.cause = _find(names, CAUSE_FIELDS)
            self.default_cause = self.cause is not None
        if self.time_field is None:
            self._time_field(names)
        if not self.failures_only:
            self.outages = Outages.layout(names, self.time_field)

    def _time_field(self, names: Sequence[str]) -> None:
        self.time_field = _find(names, TIME_FIELDS)
        if self.time_field is None and canonical.SECONDS_FIELD in names:
            # A run's event log with times in seconds (simulate --events, or events of a log whose times
            # were numbers), as analyze reads it: its failures are the incidents, in seconds unless a unit
            # is given.
            self.time_field = canonical.SECONDS_FIELD
            self.failures_only = "event" in names
            if self.clock.time_unit is None:
                self.clock = Clock("s", tz=self.clock.tz, time_format=self.clock.time_format)
        if self.time_field is None:
            shown = ", ".join(repr(name) for name in list(names)[:8]) or "none"
            raise FatalRecord(
                f"no time field: none of {', '.join(TIME_FIELDS)} is present (fields: {shown}); name one with {{time}}"
            )

    def record(self, record: dict[str, Any], line: int) -> bool:
        if type(record.get("time")) is Stamp and "event" in record:
            # A run assembled from a framework's or scheduler's log: its failures are the incidents.
            if record["event"] != "failure":
                return False
            if "node" in record:  # an adapter's incident with its node and end (FTA's two columns)
                self._assembled_outage(record, line)
            if self.cause is None:
                self.cause = "cause"  # the assembled log's own field (every record of such a log is assembled)
            self.default_cause = False
            value = record.get(self.cause)
            label = UNKNOWN_CAUSE if value is None or value == "" else text_form(value)
            code = self.known.get(label)
            self.codes.append(self._code(label) if code is None else code)
            self.times.append(self.clock.seconds(record["time"], line=line))
            return True
        assert self.time_field is not None  # fields() came first
        if self.failures_only and record.get("event") != "failure":
            return False
        raw = record[self.time_field] if self.time_field in record else get_path(record, self.time_field, MISSING)
        if raw is MISSING or raw is None or raw == "":
            raise BadRecord(f"no time: field {self.time_field!r} is missing or empty")
        seconds = self.clock.seconds(raw, line=line)
        if self.outages is not None and not self.outages.take(
            record, line, seconds, lambda value: self.clock.seconds(value, line=line)
        ):
            return False  # an incident's end: no interruption
        if self.cause is not None:
            value = record[self.cause] if self.cause in record else get_path(record, self.cause, None)
            if self.default_cause:
                # The first record decides: a default cause field holding objects (cause.component) is not a
                # cause, and a path inside it must be named.
                self.default_cause = False
                if type(value) in (dict, list):
                    self.cause = None
                    self.times.append(seconds)
                    return True
            label = UNKNOWN_CAUSE if value is None or value == "" else value if type(value) is str else text_form(value)
            code = self.known.get(label)
            if code is None:
                code = self._code(label)
            self.codes.append(code)
        self.times.append(seconds)
        return True

    def bulk(self, block: Columns, each: Callable[[int], None]) -> int:
        """Take a block of a table's rows at once (times and causes a column at a time) when each is what
        :meth:`record` would take without a word; else each row by ``each``. Returns the rows taken here."""
        if self.failures_only or self.outages is not None:
            for index in range(block.count):  # the other events (or ends) are ignored and counted, row by row
                each(index)
            return 0
        start = 0
        if self.clock.kind is None or self.default_cause:
            each(0)  # the first row decides the clock's form (and whether a default cause field is one)
            start = 1
        times = block.columns.get(self.time_field or "")
        seconds = None if times is None else self.clock.many(times[start:] if start else times)
        if seconds is None:
            for index in range(start, block.count):
                each(index)
            return 0
        if self.cause is not None:
            causes = block.columns.get(self.cause)
            cells = [""] * len(seconds) if causes is None else causes[start:] if start else causes
            for value in dict.fromkeys(cells):  # new labels in the order they come, as record() codes them
                if self.by_cell.get(value) is None:
                    self._code(value or UNKNOWN_CAUSE)
            codes = list(map(self.by_cell.__getitem__, cells))
            self.codes.extend(codes)
        self.times.extend(seconds)
        return len(seconds)

    def _assembled_outage(self, record: dict[str, Any], line: int) -> None:
        if self.outages is None:
            self.outages = Outages("node", "end", None)
        end = record.get("end")
        self.outages.take({"node": record["node"], "end": end}, line, self.clock.seconds(record["time"], line=line),
                          lambda value: self.clock.seconds(value, line=line))  # fmt: skip

    def _code(self, label: str) -> int:
        from array import array

        code = self.known[label] = self.by_cell[label] = len(self.known)
        if label == UNKNOWN_CAUSE:
            self.by_cell[""] = code  # an empty cell is of unknown cause
        if code == 2**16 and self.codes.typecode == "H":
            self.codes = array("l", self.codes)
        return code

    def log(self, counts: reader.Counts, tz: str | None) -> EventLog:
        import numpy as np

        if not self.times:
            detail = f"read {counts.read}"
            if counts.filtered:
                detail += f", {counts.filtered} filtered out by where"
            if counts.skipped_bad:
                detail += f", {counts.skipped_bad} bad rows skipped"
            raise InputError(f"no events kept ({detail})", where=counts.source)
        assert self.time_field is not None and self.clock.kind is not None
        times = np.frombuffer(self.times, dtype=np.float64)
        labels = tuple(self.known)
        codes = None if self.cause is None else np.frombuffer(self.codes, dtype=np.dtype(self.codes.typecode))
        assert codes is None or len(codes) == len(times)
        if not _ascending(times):
            order = np.argsort(times, kind="stable")
            times = times[order]
            codes = None if codes is None else codes[order]
        return EventLog(
            source=counts.source,
            format=counts.format,
            time_field=self.time_field,
            time_kind=self.clock.kind,
            times_s=times,
            codes=codes,
            labels=labels if codes is not None else (),
            read=counts.read,
            kept=len(times),
            filtered=counts.filtered,
            skipped_bad=counts.skipped_bad,
            bad=counts.bad,
            naive_timestamps=self.clock.naive + counts.notes.get("naive_timestamps", 0),
            tz=tz,
            cause_field=self.cause,
            year_from=counts.said.get("year_from"),
            notes=dict(counts.notes),
            files=counts.files,
            ignored=counts.ignored,
            outages=None if self.outages is None else self.outages.found(counts.source),
        )


def check_time_format(time_format: str | None) -> None:
    """Refuse a ``strptime`` format that cannot read a time: empty, without a ``%`` directive, or with one
    Python does not know; errors name ``time_format``.

    >>> check_time_format("%m/%d/%Y %H:%M")
    """
    if time_format is None:
        return
    if "%" not in time_format:
        raise InputError(
            f"{time_format!r} has no % directive: write a strptime format such as '%m/%d/%Y %H:%M'", where="time_format"
        )
    from datetime import datetime

    try:
        datetime.strptime("", time_format)
    except ValueError as error:
        if "directive" in str(error) or "stray %" in str(error):
            raise InputError(f"{time_format!r} is not a strptime format: {error}", where="time_format") from None


def _tz(tz: str | tzinfo | None) -> tuple[tzinfo | None, str | None]:
    if tz is None or isinstance(tz, tzinfo):
        return tz, None if tz is None else str(tz)
    return reader.parse_tz(tz), tz.strip()


def _prepared(
    format: str | None,
    time: str | None,
    time_unit: str | None,
    cause: str | None,
    tz: str | tzinfo | None,
    time_format: str | None,
) -> tuple[_Incidents, tuple[str, ...], tzinfo | None, str | None]:
    """The format checked, the consumer of incidents, the fields every record must have, and the zone."""
    reader.check_format(format)
    if time_unit is not None:
        reader.time_unit_seconds(time_unit)
    if time is not None and not time.strip():
        raise InputError("empty field name", where="time")
    if cause is not None and not cause.strip():
        raise InputError("empty field name", where="cause")
    check_time_format(time_format)
    zone, label = _tz(tz)
    incidents = _Incidents(time, time_unit, cause, zone, time_format)
    return incidents, (() if incidents.time_field is None else (incidents.time_field,)), zone, label


def read_log(
    source: str | os.PathLike[str],
    *,
    stdin: Any = None,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    where: Sequence[str] = (),
    where_any: Sequence[str] = (),
    cause: str | None = None,
    tz: str | tzinfo | None = None,
    time_format: str | None = None,
    skip_bad: bool = False,
    year: int | None = None,
    patterns: Sequence[Any] = (),
    explain: Callable[[str], None] | None = None,
) -> EventLog:
    """Read one incident log from a path, or from ``stdin`` when ``source`` is ``"-"``, by
    :func:`ckptcalc.logs.reader.scan` (compressed logs too). The keyword arguments are those of :func:`parse_log`."""
    incidents, required, zone, label = _prepared(format, time, time_unit, cause, tz, time_format)
    counts = reader.scan(source, incidents, stdin=stdin, format=format, where=where, where_any=where_any,
                         required=required, skip_bad=skip_bad, tz=zone, year=year, patterns=patterns,
                         explain=explain)  # fmt: skip
    return incidents.log(counts, label)


def parse_log(
    text: str,
    *,
    name: str,
    format: str | None = None,
    time: str | None = None,
    time_unit: str | None = None,
    where: Sequence[str] = (),
    where_any: Sequence[str] = (),
    cause: str | None = None,
    tz: str | tzinfo | None = None,
    time_format: str | None = None,
    skip_bad: bool = False,
    year: int | None = None,
) -> EventLog:
    """Read the text of one incident log; ``name`` labels it in messages (``name:line``).

    * ``format``: an adapter's name (``csv``, ``json``, ``jsonl`` ...); detected from the first lines when ``None``.
    * ``time``: the dotted path of the time field; default, the first of
      :data:`TIME_FIELDS` present in the first record (CSV: the header), whatever its case.
    * ``time_unit``: the unit of numeric times (``s``, ``min``, ``h``, ``d``); required for them.
    * ``where``: conditions all of which a record must meet, ``where_any``: conditions one of which it must
      meet (see :func:`~ckptcalc.logs.reader.parse_where`); a record without the field fails.
    * ``cause``: dotted path of a field to group by; default, the first of :data:`CAUSE_FIELDS` present,
      whatever its case (unless it holds objects); missing, null or empty is ``"unknown"``.
    * ``tz``: the zone of timestamps without one (``UTC``, ``+02:00``, ``Europe/Paris``); default UTC.
    * ``time_format``: a ``strptime`` format for timestamps that are not ISO-8601 (``%m/%d/%Y %H:%M``).
    * ``skip_bad``: skip and count bad rows instead of raising at the first.
    * ``year``: the year of timestamps that carry none (absl's); default, the file's modification time's.
    """
    incidents, required, zone, label = _prepared(format, time, time_unit, cause, tz, time_format)
    counts = reader.scan_text(text, incidents, name=name, format=format, where=where, where_any=where_any,
                              required=required, skip_bad=skip_bad, tz=zone, year=year)  # fmt: skip
    return incidents.log(counts, label)


def combine(logs: Sequence[EventLog]) -> EventLog:
    """Merge logs read separately into one, keeping every event and adding the counts.

    All logs must use the same time form (timestamps, or numbers from the same zero).
    """
    import numpy as np

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

    known: dict[str, int] = {}
    parts = []
    for log in logs:
        names = log.labels if log.codes is not None else (UNKNOWN_CAUSE,)
        mapping = np.array([known.setdefault(name, len(known)) for name in names], dtype=np.int64)
        parts.append(mapping[log.codes] if log.codes is not None else np.full(len(log.times_s), mapping[0]))
    times = np.concatenate([log.times_s for log in logs])
    codes = np.concatenate(parts)
    order = np.argsort(times, kind="stable")
    with_causes = any(log.codes is not None for log in logs)
    causes = {log.cause_field for log in logs if log.cause_field is not None}
    return EventLog(
        source=", ".join(log.source for log in logs),
        format=joined([log.format for log in logs]),
        time_field=joined([log.time_field for log in logs]),
        time_kind=first.time_kind,
        times_s=times[order],
        codes=codes[order] if with_causes else None,
        labels=tuple(known) if with_causes else (),
        read=sum(log.read for log in logs),
        kept=len(times),
        filtered=sum(log.filtered for log in logs),
        skipped_bad=sum(log.skipped_bad for log in logs),
        bad=tuple(message for log in logs for message in log.bad)[: reader.BAD_KEPT],
        naive_timestamps=sum(log.naive_timestamps for log in logs),
        tz=first.tz,
        cause_field=", ".join(sorted(causes)) if causes else None,
        year_from=next((log.year_from for log in logs if log.year_from is not None), None),
        notes={key: sum(log.notes.get(key, 0) for log in logs) for key in {k for log in logs for k in log.notes}},
        files=sum(log.files for log in logs),
        ignored=sum(log.ignored for log in logs),
        outages=Found.joined([log.outages for log in logs]),
    )
