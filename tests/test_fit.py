"""Estimating the failure process: the MTBF interval, coalescing, windows, the Weibull fit (docs/fit.md).

Reference values come from docs/fit.md, whose χ² quantiles are the inputs
here; every expected value is computed from them or by an independent
method (Poisson sums, brute-force likelihood maximisation), never pasted.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc.errors import InputError
from ckptcalc.logs import fit as eventlog
from ckptcalc.logs import reader
from ckptcalc.logs.fit import (
    CauseShare,
    Histogram,
    NoWeibull,
    WeibullFit,
    coalesce,
    fit_events,
    fit_log,
    fit_weibull,
    gap_histogram,
    mtbf_estimate,
    survival_curve,
    weibull_log_likelihood,
)
from ckptcalc.model.numeric import chi2_quantile

DATA = Path(__file__).parent / "data"
HOUR = 3600.0
DAY = 86400.0

# docs/fit.md §4: χ²(p; ν) to 12 significant figures.
Q = {
    (0.025, 2): 0.0506356159686,
    (0.975, 4): 11.1432867819,
    (0.025, 4): 0.484418557088,
    (0.975, 6): 14.4493753354,
    (0.025, 10): 3.24697278024,
    (0.975, 12): 23.3366641586,
    (0.95, 2): 5.99146454711,
    (0.95, 4): 9.48772903678,
    (0.95, 6): 12.5915872437,
    (0.95, 12): 21.0260698175,
}


# ---------------------------------------------------------------- §4 MTBF interval


@pytest.mark.parametrize(("p", "dof"), sorted(Q))
def test_chi2_quantiles_match_the_table(p: float, dof: int) -> None:
    assert chi2_quantile(p, dof) == pytest.approx(Q[(p, dof)], rel=1e-11)


def test_chi2_quantile_closed_forms() -> None:
    # §4: χ²(p; 2) = −2 ln(1 − p); χ²(0.95; 1) = 1.959963984540054² (the normal 97.5 % point squared).
    assert chi2_quantile(0.025, 2) == pytest.approx(-2 * math.log(0.975), rel=1e-14)
    assert chi2_quantile(0.95, 2) == pytest.approx(2 * math.log(20), rel=1e-14)
    assert chi2_quantile(0.95, 1) == pytest.approx(1.959963984540054**2, rel=1e-13)


@pytest.mark.parametrize(
    ("n", "mtbf_h", "low", "high", "bound"),
    [
        # docs/fit.md §4 reference, T = 1000 h: [2T/χ²(0.975; 2n+2), 2T/χ²(0.025; 2n)], bound 2T/χ²(0.95; 2n+2).
        (1, 1000.0, (0.975, 4), (0.025, 2), (0.95, 4)),
        (2, 500.0, (0.975, 6), (0.025, 4), (0.95, 6)),
        (5, 200.0, (0.975, 12), (0.025, 10), (0.95, 12)),
    ],
)
def test_mtbf_hand_worked(
    n: int, mtbf_h: float, low: tuple[float, int], high: tuple[float, int], bound: tuple[float, int]
) -> None:
    window = 1000 * HOUR
    estimate = mtbf_estimate(n, window)
    assert estimate.interruptions == n
    assert estimate.mtbf_s == pytest.approx(mtbf_h * HOUR, rel=1e-15)
    lo, hi = estimate.ci95
    assert hi is not None
    assert lo == pytest.approx(2 * window / Q[low], rel=1e-9)
    assert hi == pytest.approx(2 * window / Q[high], rel=1e-9)
    assert estimate.lower_bound_s == pytest.approx(2 * window / Q[bound], rel=1e-9)


def test_no_interruption_gives_only_a_bound() -> None:
    # §4: M > T/ln 20 at 95 %; 2T/χ²(0.95; 2) is the same number.
    window = 1000 * HOUR
    estimate = mtbf_estimate(0, window)
    assert estimate.mtbf_s is None
    assert estimate.ci95 == (estimate.lower_bound_s, None)
    assert estimate.lower_bound_s == pytest.approx(window / math.log(20), rel=1e-15)
    assert estimate.lower_bound_s == pytest.approx(2 * window / Q[(0.95, 2)], rel=1e-9)


# ---------------------------------------------------------------- §5 the Poisson sums


def _poisson_cdf(n: int, mean: float) -> float:
    """P(N ≤ n) for N ~ Poisson(mean), summed term by term."""
    term = math.exp(-mean)
    total = term
    for j in range(1, n + 1):
        term *= mean / j
        total += term
    return total


def _solve_mtbf(window: float, condition: Callable[[float], float]) -> float:
    """The M at which ``condition(T/M)`` crosses zero, by bisection on log M."""
    lo, hi = math.log(window) - 20, math.log(window) + 20
    f_lo = condition(window / math.exp(lo))
    for _ in range(200):
        mid = (lo + hi) / 2
        f_mid = condition(window / math.exp(mid))
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


@pytest.mark.parametrize("n", [1, 2, 5, 17, 60, 150])
@pytest.mark.parametrize("window", [1000 * HOUR, 54 * DAY, 1.0])
def test_interval_solves_the_poisson_sums(n: int, window: float) -> None:
    estimate = mtbf_estimate(n, window)
    lo, hi = estimate.ci95
    assert hi is not None
    # M_lo: P(N ≤ n) = 0.025; M_hi: P(N ≥ n) = 1 − P(N ≤ n − 1) = 0.025; bound: P(N ≤ n) = 0.05.
    assert lo == pytest.approx(_solve_mtbf(window, lambda mu: _poisson_cdf(n, mu) - 0.025), rel=1e-9)
    assert hi == pytest.approx(_solve_mtbf(window, lambda mu: 1 - _poisson_cdf(n - 1, mu) - 0.025), rel=1e-9)
    assert estimate.lower_bound_s == pytest.approx(_solve_mtbf(window, lambda mu: _poisson_cdf(n, mu) - 0.05), rel=1e-9)


def test_zero_bound_solves_the_poisson_sum() -> None:
    window = 54 * DAY
    assert mtbf_estimate(0, window).lower_bound_s == pytest.approx(
        _solve_mtbf(window, lambda mu: _poisson_cdf(0, mu) - 0.05), rel=1e-9
    )


@pytest.mark.parametrize(("n", "window"), [(-1, 10.0), (1, 0.0), (1, -5.0), (1, math.inf), (1, math.nan)])
def test_mtbf_estimate_rejects_bad_counts_and_windows(n: int, window: float) -> None:
    with pytest.raises(InputError):
        mtbf_estimate(n, window)


def test_interval_covers_the_true_mtbf_in_about_95_percent_of_logs() -> None:
    # §5: 400 synthetic time-truncated logs, M = 1 day over 30 days (about 30 interruptions each).
    # The exact coverage of this interval at a Poisson mean of 30 is 95.6 %.
    mtbf, window, seeds = DAY, 30 * DAY, 400
    covered = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        times = np.cumsum(rng.exponential(mtbf, 120))
        times = times[times <= window]
        result = fit_events(times, start_s=0.0, end_s=window)
        lo, hi = result.mtbf.ci95
        assert hi is not None
        covered += lo <= mtbf <= hi
    assert 0.93 <= covered / seeds <= 0.97, covered / seeds


# ---------------------------------------------------------------- §6 per GPU


def test_per_gpu_scaling() -> None:
    # Llama 3 (docs/model.md §2, §5): 419 interruptions in 54 days on 16 384 GPUs; the clock starts at day 0.
    times = np.linspace(54 * DAY / 419, 54 * DAY, 419)
    result = fit_events(times, start_s=0.0, end_s=54 * DAY, observed_gpus=16384)
    assert result.mtbf.mtbf_s is not None
    assert result.mtbf.mtbf_s == pytest.approx(54 * DAY / 419, rel=1e-12)
    assert result.mtbf.mtbf_s / HOUR == pytest.approx(3.093, abs=5e-4)
    gpu = result.gpu_mtbf
    assert gpu is not None and gpu.mtbf_s is not None
    assert gpu.mtbf_s / HOUR == pytest.approx(50_677, rel=1e-4)
    low, high = result.mtbf.ci95
    gpu_high = gpu.ci95[1]
    assert high is not None and gpu_high is not None
    assert gpu.ci95[0] == pytest.approx(low * 16384, rel=1e-15)
    assert gpu_high == pytest.approx(high * 16384, rel=1e-15)
    assert gpu.lower_bound_s == pytest.approx(result.mtbf.lower_bound_s * 16384, rel=1e-15)
    document = result.to_dict()
    assert document["gpu_mtbf_ci95"] == [gpu.ci95[0], gpu_high]
    assert document["observed_gpus"] == 16384.0


def test_per_gpu_bound_when_nothing_failed() -> None:
    result = fit_events([], start_s=0.0, end_s=100 * DAY, observed_gpus=8)
    assert result.gpu_mtbf is not None
    assert result.gpu_mtbf.ci95 == (100 * DAY / math.log(20) * 8, None)
    assert result.to_dict()["gpu_mtbf_ci95"] == [100 * DAY / math.log(20) * 8, None]


# ---------------------------------------------------------------- §2 coalescing, §3 window


def test_coalescing_chains_from_the_last_event() -> None:
    # §2: 0, 5, 9, 30 with 5 s: {0, 5, 9} (each step ≤ 5 s, the chain 9 s long) and {30}.
    merged = coalesce([30.0, 9.0, 0.0, 5.0], ["d", "c", "a", "b"], gap_s=5.0)
    assert [(i.time_s, i.last_s, i.events, i.cause) for i in merged] == [(0.0, 9.0, 3, "a"), (30.0, 30.0, 1, "d")]
    assert len(coalesce([0.0, 5.0, 10.0], gap_s=4.999)) == 3


def test_default_coalescing_merges_identical_times_only() -> None:
    result = fit_events([0.0, 10.0, 10.0, 10.0, 20.0, 20.000001], causes=["a", "b", "c", "d", "e", "f"])
    assert [i.events for i in result.interruptions] == [1, 3, 1, 1]
    assert result.events_coalesced == 2
    assert result.mtbf.interruptions == 3  # the first event starts the clock
    assert [(c.cause, c.count) for c in result.causes] == [("b", 1), ("e", 1), ("f", 1)]


def test_coalescing_changes_the_count() -> None:
    times = [0.0, 100.0, 130.0, 150.0, 1000.0, 1010.0, 5000.0]
    assert fit_events(times).mtbf.interruptions == 6
    wide = fit_events(times, coalesce_s=30.0)
    assert [i.time_s for i in wide.interruptions] == [0.0, 100.0, 1000.0, 5000.0]
    assert wide.mtbf.interruptions == 3
    assert wide.mtbf.mtbf_s == 5000.0 / 3
    assert wide.events_coalesced == 3
    assert wide.to_dict()["coalesce_s"] == 30.0


def test_the_default_window_runs_from_the_first_to_the_last_event() -> None:
    result = fit_events([100.0, 400.0, 1300.0])
    assert (result.window_start_s, result.window_end_s, result.window_s) == (100.0, 1300.0, 1200.0)
    assert result.mtbf.interruptions == 2
    assert result.mtbf.mtbf_s == 600.0
    assert result.gaps_s.tolist() == [300.0, 900.0]
    assert result.censored_s == 0.0


def test_an_explicit_window_counts_every_interruption_after_its_start() -> None:
    result = fit_events([100.0, 400.0, 1300.0], start_s=0.0, end_s=2000.0)
    assert result.mtbf.interruptions == 3
    assert result.mtbf.mtbf_s == 2000.0 / 3
    # The time from the start to the first interruption is not a gap; the tail is censored.
    assert result.gaps_s.tolist() == [300.0, 900.0]
    assert result.censored_s == 700.0
    assert result.weibull is not None and result.weibull.censored_s == 700.0


def test_an_interruption_at_the_start_only_starts_the_clock() -> None:
    result = fit_events([100.0, 400.0, 1300.0], start_s=100.0, end_s=1500.0)
    assert result.mtbf.interruptions == 2
    assert result.mtbf.window_s == 1400.0


def test_events_outside_the_window_are_dropped_and_counted() -> None:
    result = fit_events([0.0, 50.0, 100.0, 200.0, 300.0], start_s=40.0, end_s=250.0, events_read=9, skipped_bad=4)
    assert result.events_outside_window == 2
    assert [i.time_s for i in result.interruptions] == [50.0, 100.0, 200.0]
    assert result.mtbf.interruptions == 3
    document = result.to_dict()
    assert (document["events_read"], document["events_kept"], document["skipped_bad"]) == (9, 5, 4)
    assert document["events_outside_window"] == 2


def test_a_window_with_no_interruption_gives_the_bound() -> None:
    result = fit_events([0.0, 10.0], start_s=20.0, end_s=1000.0)
    assert result.mtbf.interruptions == 0
    assert result.mtbf.mtbf_s is None
    assert result.weibull is None and result.weibull_reason == "too_few_gaps"
    document = result.to_dict()
    assert document["mtbf_s"] is None
    assert document["mtbf_ci95"] == [980.0 / math.log(20), None]
    assert document["mtbf_lower_bound_s"] == 980.0 / math.log(20)
    assert document["histogram"] == {"edges_s": [], "counts": []}
    json.dumps(document, allow_nan=False)


@pytest.mark.parametrize(
    ("kwargs", "where", "message"),
    [
        ({"start_s": 50.0, "end_s": 40.0}, "end_s", "the window must end after it starts"),
        ({"start_s": 50.0, "end_s": 50.0}, "end_s", "the window must end after it starts"),
        ({"start_s": 500.0}, "end_s", "the window must end after it starts"),
        ({"coalesce_s": -1.0}, "coalesce_s", "cannot be negative"),
        ({"coalesce_s": math.inf}, "coalesce_s", "must be finite"),
        ({"observed_gpus": 0}, "observed_gpus", "must be positive"),
        ({"observed_gpus": math.nan}, "observed_gpus", "must be finite"),
        ({"start_s": "soon"}, "start_s", "expected a number"),
        ({"causes": ["a"]}, "causes", "1 causes for 3 events"),
    ],
)
def test_bad_fit_arguments_name_the_field(kwargs: dict[str, object], where: str, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        fit_events([0.0, 10.0, 100.0], **kwargs)  # type: ignore[arg-type]
    assert excinfo.value.where == where
    assert message in excinfo.value.message


@pytest.mark.parametrize(
    ("times", "message"),
    [
        ([], "no events to fit"),
        ([5.0], "spans no time"),
        ([5.0, 5.0, 5.0], "spans no time"),
        ([1.0, math.nan], "must be finite"),
        ([-1.7e308, 1.7e308], "too long"),
    ],
)
def test_times_that_cannot_be_fitted(times: list[float], message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        fit_events(times)
    assert excinfo.value.where == "times"
    assert message in excinfo.value.message


def test_coalesce_needs_one_cause_per_event() -> None:
    with pytest.raises(InputError, match="2 causes for 1 events"):
        coalesce([1.0], ["a", "b"])


# ---------------------------------------------------------------- §7–§8 Weibull


def _u_tanh_u() -> float:
    """The root of u·tanh(u) = 1 (docs/fit.md §8), by bisection."""
    lo, hi = 0.5, 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if mid * math.tanh(mid) < 1 else (lo, mid)
    return (lo + hi) / 2


def test_u_tanh_u_reference() -> None:
    assert _u_tanh_u() == pytest.approx(1.19967864026, rel=1e-11)


@pytest.mark.parametrize(("first", "second"), [(1.0, 3.0), (3.0, 1.0), (60.0, 6000.0), (2.0, 2.5)])
def test_two_gaps_have_a_closed_form_shape(first: float, second: float) -> None:
    # §8: k̂ = 2u*/ln r, λ̂^k = (t₁^k + t₂^k)/2, LR statistic 2(ℓ(k̂, λ̂) − ℓ(1, mean)).
    ratio = max(first, second) / min(first, second)
    shape = 2 * _u_tanh_u() / math.log(ratio)
    scale = ((first**shape + second**shape) / 2) ** (1 / shape)
    result = fit_weibull([first * HOUR, second * HOUR])
    assert isinstance(result, WeibullFit)
    assert result.shape == pytest.approx(shape, rel=1e-9)
    assert result.scale_s == pytest.approx(scale * HOUR, rel=1e-9)
    assert result.mean_s == pytest.approx(scale * HOUR * math.gamma(1 + 1 / shape), rel=1e-9)
    mean = (first + second) / 2 * HOUR
    gaps = [first * HOUR, second * HOUR]
    best = weibull_log_likelihood(shape, scale * HOUR, gaps)
    statistic = 2 * (best - weibull_log_likelihood(1.0, mean, gaps))
    assert result.log_likelihood == pytest.approx(best, rel=1e-10)
    assert result.lr_statistic == pytest.approx(statistic, rel=1e-8, abs=1e-12)
    assert result.p_value == pytest.approx(math.erfc(math.sqrt(statistic / 2)), rel=1e-8)
    assert (result.gaps, result.censored_s) == (2, 0.0)


def test_two_gap_reference_numbers() -> None:
    # §8, gaps 1 h and 3 h: k̂ = 2.18398911542, λ̂ = 2.27281794982 h, mean 2.01282857974 h, statistic 1.32629210398.
    result = fit_weibull([HOUR, 3 * HOUR])
    assert isinstance(result, WeibullFit)
    assert result.shape == pytest.approx(2 * 1.19967864026 / math.log(3), rel=1e-10)
    assert result.scale_s / HOUR == pytest.approx(((1 + 3**result.shape) / 2) ** (1 / result.shape), rel=1e-12)
    # ℓ_p(1) in hours is −2 ln 2 − 2; the statistic does not depend on the unit.
    best_hours = weibull_log_likelihood(result.shape, result.scale_s / HOUR, [1.0, 3.0])
    assert result.lr_statistic == pytest.approx(2 * (best_hours - (-2 * math.log(2) - 2)), rel=1e-9)
    assert result.verdict == "exponential"


def _grid_maximum(gaps: Sequence[float], censored: float) -> tuple[float, float]:
    """(k, λ) maximising the full log-likelihood by brute force: a coarse grid, then finer grids around the best."""
    data = np.asarray(gaps, dtype=float)
    unit = float(data.mean())
    x = data / unit
    c = censored / unit

    def loglik(k: np.ndarray, lam: np.ndarray) -> np.ndarray:
        total = np.zeros_like(k)
        for value in x:
            total += np.log(k) - k * np.log(lam) + (k - 1) * math.log(value) - (value / lam) ** k
        if c > 0:
            total -= (c / lam) ** k
        return total

    log_k, log_l = 0.0, 0.0
    width_k, width_l = 4.0, 6.0
    for _ in range(14):
        ks = np.exp(np.linspace(log_k - width_k, log_k + width_k, 81))
        ls = np.exp(np.linspace(log_l - width_l, log_l + width_l, 81))
        grid_k, grid_l = np.meshgrid(ks, ls, indexing="ij")
        values = loglik(grid_k, grid_l)
        i, j = np.unravel_index(int(np.argmax(values)), values.shape)
        log_k, log_l = math.log(ks[i]), math.log(ls[j])
        width_k, width_l = width_k / 4, width_l / 4
    return math.exp(log_k), math.exp(log_l) * unit


@pytest.mark.parametrize(
    ("shape", "count", "censored_factor", "seed"),
    [(0.7, 60, 0.0, 1), (0.7, 60, 3.0, 2), (1.0, 25, 0.5, 3), (2.5, 40, 1.0, 4), (0.4, 15, 10.0, 5)],
)
def test_mle_agrees_with_brute_force_and_nelder_mead(
    shape: float, count: int, censored_factor: float, seed: int
) -> None:
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    gaps = list(rng.weibull(shape, count) * 5000.0)
    censored = censored_factor * 5000.0
    result = fit_weibull(gaps, censored_s=censored)
    assert isinstance(result, WeibullFit)
    grid_k, grid_l = _grid_maximum(gaps, censored)
    assert result.shape == pytest.approx(grid_k, rel=1e-6)
    assert result.scale_s == pytest.approx(grid_l, rel=1e-6)

    def negative(point: np.ndarray) -> float:
        return -weibull_log_likelihood(math.exp(point[0]), math.exp(point[1]), gaps, censored)

    start = np.array([0.0, math.log(float(np.mean(gaps)))])
    found = minimize(negative, start, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 4000})
    assert result.shape == pytest.approx(math.exp(found.x[0]), rel=1e-6)
    assert result.scale_s == pytest.approx(math.exp(found.x[1]), rel=1e-6)
    assert result.log_likelihood == pytest.approx(-found.fun, rel=1e-10)
    assert result.log_likelihood == pytest.approx(weibull_log_likelihood(result.shape, result.scale_s, gaps, censored))


def _profile_by_brute_force(gaps: Sequence[float], censored: float, shape: float) -> float:
    """max over λ of ℓ(shape, λ), by a bounded scalar search on ln λ (not the closed form)."""
    from scipy.optimize import minimize_scalar

    centre = math.log(float(np.mean(gaps)))
    found = minimize_scalar(
        lambda log_scale: -weibull_log_likelihood(shape, math.exp(log_scale), gaps, censored),
        bounds=(centre - 30, centre + 30),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return -float(found.fun)


def test_shape_interval_and_test_from_the_likelihood_directly() -> None:
    rng = np.random.default_rng(11)
    gaps = list(rng.weibull(0.8, 80) * 3 * HOUR)
    result = fit_weibull(gaps, censored_s=HOUR)
    assert isinstance(result, WeibullFit)
    lo, hi = result.shape_ci95
    assert lo is not None and hi is not None
    assert lo < result.shape < hi
    best = _profile_by_brute_force(gaps, HOUR, result.shape)
    # At each end the likelihood has dropped by χ²(0.95; 1)/2 from its maximum.
    for end in (lo, hi):
        assert 2 * (best - _profile_by_brute_force(gaps, HOUR, end)) == pytest.approx(3.84145882069, rel=1e-6)
    assert result.lr_statistic == pytest.approx(2 * (best - _profile_by_brute_force(gaps, HOUR, 1.0)), rel=1e-6)
    # The interval and the test agree: 1 is outside exactly when p < 0.05.
    assert (lo <= 1 <= hi) == (result.p_value >= 0.05)


@pytest.mark.parametrize(
    ("shape", "verdict"),
    [(0.5, "clustered"), (1.0, "exponential"), (3.0, "wear_out")],
)
def test_verdicts(shape: float, verdict: str) -> None:
    rng = np.random.default_rng(7)
    result = fit_weibull(list(rng.weibull(shape, 400) * 1000.0))
    assert isinstance(result, WeibullFit)
    assert result.verdict == verdict
    lo, hi = result.shape_ci95
    assert lo is not None and hi is not None
    if verdict == "clustered":
        assert hi < 1 and result.p_value < 0.05
    elif verdict == "wear_out":
        assert lo > 1 and result.p_value < 0.05
    else:
        assert lo <= 1 <= hi and result.p_value >= 0.05


def test_weibull_recovers_a_clustered_shape() -> None:
    # §8: a 5000-gap log with k = 0.7.
    rng = np.random.default_rng(2024)
    result = fit_weibull(list(rng.weibull(0.7, 5000) * 2 * HOUR))
    assert isinstance(result, WeibullFit)
    assert result.shape == pytest.approx(0.7, rel=0.03)
    assert result.scale_s == pytest.approx(2 * HOUR, rel=0.05)
    assert result.mean_s == pytest.approx(2 * HOUR * math.gamma(1 + 1 / 0.7), rel=0.05)
    assert result.verdict == "clustered"


def test_weibull_interval_covers_the_shape_in_about_95_percent_of_logs() -> None:
    # §8: 200 logs of 300 gaps with k = 0.7, the last one censored at a random point of a further gap.
    seeds, covered, shapes = 200, 0, []
    for seed in range(seeds):
        rng = np.random.default_rng(10_000 + seed)
        draws = rng.weibull(0.7, 301) * HOUR
        gaps, censored = list(draws[:300]), float(draws[300] * rng.random())
        result = fit_weibull(gaps, censored_s=censored)
        assert isinstance(result, WeibullFit)
        lo, hi = result.shape_ci95
        assert lo is not None and hi is not None
        covered += lo <= 0.7 <= hi
        shapes.append(result.shape)
    assert 0.90 <= covered / seeds <= 0.99, covered / seeds
    assert float(np.mean(shapes)) == pytest.approx(0.7, rel=0.02)


def test_too_few_gaps_and_equal_gaps() -> None:
    assert fit_weibull([]) == NoWeibull("too_few_gaps")
    assert fit_weibull([10.0], censored_s=30.0) == NoWeibull("too_few_gaps")
    assert fit_weibull([10.0, 10.0, 10.0]) == NoWeibull("no_finite_estimate")
    # A censored time longer than the equal gaps makes the likelihood bounded again.
    assert isinstance(fit_weibull([10.0, 10.0, 10.0], censored_s=25.0), WeibullFit)
    result = fit_events([0.0, 10.0, 20.0, 30.0])
    assert result.weibull is None and result.weibull_reason == "no_finite_estimate"
    assert result.to_dict()["weibull"] is None
    assert result.to_dict()["weibull_reason"] == "no_finite_estimate"


def test_an_open_interval_side_is_none() -> None:
    # Two gaps 0.048 % apart: k̂ = 2u*/ln r ≈ 5000 (§8), and the upper end of its interval lies beyond 10⁴.
    result = fit_weibull([100.0, 100.048])
    assert isinstance(result, WeibullFit)
    assert result.shape == pytest.approx(2 * _u_tanh_u() / math.log(1.00048), rel=1e-6)
    assert result.shape_ci95[0] is not None and result.shape_ci95[1] is None
    document = fit_events([0.0, 100.0, 200.048]).to_dict()
    assert document["weibull"]["shape_ci95"][1] is None
    json.dumps(document, allow_nan=False)


def test_a_mean_too_large_for_a_float_is_none() -> None:
    # Gaps spanning 600 orders of magnitude: k̂ ≈ 0.0015, and Γ(1 + 1/k̂) overflows.
    result = fit_events([0.0, 1e-300, 3e-300, 1e300])
    assert result.weibull is not None and result.weibull.shape < 0.01
    assert result.weibull.mean_s is None
    assert result.to_dict()["weibull"]["mean_s"] is None
    json.dumps(result.to_dict(), allow_nan=False)


@pytest.mark.parametrize(("gaps", "censored"), [([1.0, -2.0], 0.0), ([1.0, math.inf], 0.0), ([1.0, 2.0], -1.0)])
def test_fit_weibull_rejects_bad_gaps(gaps: list[float], censored: float) -> None:
    with pytest.raises(InputError):
        fit_weibull(gaps, censored_s=censored)


# ---------------------------------------------------------------- §9 causes, histogram, survival


def test_cause_shares_rank_by_count_then_name() -> None:
    result = fit_events([0, 1, 2, 3, 4, 5, 6], causes=["first", "gpu", "nic", "gpu", "cpu", "nic", "gpu"])
    assert result.causes == (
        CauseShare("gpu", 3, 0.5),
        CauseShare("nic", 2, 2 / 6),
        CauseShare("cpu", 1, 1 / 6),
    )
    assert sum(c.count for c in result.causes) == result.mtbf.interruptions
    assert fit_events([0, 1, 2]).causes == ()


@pytest.mark.parametrize(
    ("gaps", "per_decade", "edges", "counts"),
    [
        ([1.0, 2.0, 5.0, 50.0], 1, (1.0, 10.0, 100.0), (3, 1)),
        ([10.0], 1, (10.0, 100.0), (1,)),  # one gap on an edge: its own bin, closed above
        ([5.0, 10.0, 50.0], 1, (1.0, 10.0, 100.0), (1, 2)),  # a gap on an edge goes to the bin above
        ([10.0, 100.0], 1, (10.0, 100.0), (2,)),  # ... except on the last edge: the last bin is closed
        ([0.5, 0.5], 2, (10**-0.5, 1.0), (2,)),
        ([3600.0, 7200.0, 86400.0], 4, None, None),
    ],
)
def test_gap_histogram(
    gaps: list[float], per_decade: int, edges: tuple[float, ...] | None, counts: tuple[int, ...] | None
) -> None:
    histogram = gap_histogram(gaps, bins_per_decade=per_decade)
    assert len(histogram.edges_s) == len(histogram.counts) + 1
    assert sum(histogram.counts) == len(gaps)
    assert list(histogram.edges_s) == sorted(histogram.edges_s)
    assert histogram.edges_s[0] <= min(gaps) and max(gaps) <= histogram.edges_s[-1] * (1 + 1e-12)
    ratios = np.diff(np.log10(histogram.edges_s)) * per_decade
    assert np.allclose(ratios, 1.0)
    if edges is not None:
        assert histogram.edges_s == pytest.approx(edges, rel=1e-12)
        assert histogram.counts == counts
    assert gap_histogram([]) == Histogram((), ())
    with pytest.raises(InputError):
        gap_histogram(gaps, bins_per_decade=0)


@given(st.lists(st.floats(min_value=1e-3, max_value=1e9), min_size=1, max_size=50), st.integers(1, 8))
@settings(max_examples=100, deadline=None)
def test_every_gap_lands_in_the_bin_around_it(gaps: list[float], per_decade: int) -> None:
    histogram = gap_histogram(gaps, bins_per_decade=per_decade)
    event("reached the assertions")
    assert sum(histogram.counts) == len(gaps)
    for gap in gaps:
        index = min(
            max(math.floor(math.log10(gap) * per_decade) - round(math.log10(histogram.edges_s[0]) * per_decade), 0),
            len(histogram.counts) - 1,
        )
        assert histogram.edges_s[index] * (1 - 1e-9) <= gap <= histogram.edges_s[index + 1] * (1 + 1e-9)


def test_kaplan_meier_without_censoring_is_the_empirical_survival() -> None:
    curve = survival_curve([5.0, 1.0, 3.0, 3.0], mtbf_s=3.0)
    assert curve.times_s == (1.0, 3.0, 5.0)
    assert curve.empirical == pytest.approx((0.75, 0.25, 0.0))
    assert curve.exponential == pytest.approx(tuple(math.exp(-t / 3.0) for t in (1.0, 3.0, 5.0)))
    assert curve.weibull is None


def test_kaplan_meier_with_a_censored_time() -> None:
    # Gaps 1, 2, 4 and a censored 3: at 1, 4 at risk -> 3/4; at 2, 3 at risk -> 3/4·2/3; at 4, 1 at risk -> 0.
    weibull = fit_weibull([1.0, 2.0, 4.0], censored_s=3.0)
    assert isinstance(weibull, WeibullFit)
    curve = survival_curve([1.0, 2.0, 4.0], 3.0, weibull=weibull)
    assert curve.empirical == pytest.approx((0.75, 0.5, 0.0))
    assert curve.weibull == pytest.approx(
        tuple(math.exp(-((t / weibull.scale_s) ** weibull.shape)) for t in curve.times_s)
    )
    # A censored time equal to a gap is still at risk at that gap.
    assert survival_curve([1.0, 2.0], 2.0).empirical == pytest.approx((2 / 3, 1 / 3))


def test_fit_carries_the_survival_curve() -> None:
    result = fit_events([0.0, 1.0, 3.0, 7.0], end_s=10.0)
    assert result.survival.times_s == (1.0, 2.0, 4.0)
    assert result.survival.empirical == pytest.approx((0.75, 0.5, 0.0))
    assert result.survival.exponential is not None and result.survival.weibull is not None


# ---------------------------------------------------------------- §10 the document

KEYS = {
    "events_read",
    "events_kept",
    "skipped_bad",
    "events_outside_window",
    "events_coalesced",
    "coalesce_s",
    "interruptions",
    "window_start_s",
    "window_end_s",
    "window_s",
    "mtbf_s",
    "mtbf_ci95",
    "mtbf_lower_bound_s",
    "observed_gpus",
    "gpu_mtbf_s",
    "gpu_mtbf_ci95",
    "weibull",
    "weibull_reason",
    "causes",
    "histogram",
    "near_zero_gaps",
    "coalescing",
}


def test_document_keys_and_values() -> None:
    result = fit_events([0.0, 100.0, 250.0, 990.0, 1000.0], causes=list("abcab"), observed_gpus=4)
    document = result.to_dict()
    assert set(document) == KEYS
    assert document["interruptions"] == 4
    assert document["mtbf_s"] == 250.0
    assert document["mtbf_ci95"] == list(result.mtbf.ci95)
    assert document["gpu_mtbf_s"] == 1000.0
    assert set(document["weibull"]) == {
        "shape",
        "shape_ci95",
        "scale_s",
        "mean_s",
        "lr_statistic",
        "p_value",
        "p_value_underflow",
        "verdict",
        "gaps",
        "censored_s",
    }
    assert document["causes"] == [
        {"cause": "b", "count": 2, "share": 0.5},
        {"cause": "a", "count": 1, "share": 0.25},
        {"cause": "c", "count": 1, "share": 0.25},
    ]
    assert sum(document["histogram"]["counts"]) == 4
    assert json.loads(json.dumps(document, allow_nan=False)) == document


@given(
    st.lists(st.floats(min_value=0, max_value=1e7, allow_nan=False), min_size=2, max_size=40),
    st.floats(min_value=0, max_value=1e4),
    st.one_of(st.none(), st.floats(min_value=1e-3, max_value=1e6)),
)
@settings(max_examples=150, deadline=None)
def test_any_fit_gives_a_json_document_without_nan(times: list[float], gap: float, gpus: float | None) -> None:
    event("reached the assertions")
    try:
        result = fit_events(times, coalesce_s=gap, observed_gpus=gpus)
    except InputError as error:
        assert error.where == "times"  # all the events at one instant
        return
    json.dumps(result.to_dict(), allow_nan=False)
    lo, hi = result.mtbf.ci95
    if result.mtbf.mtbf_s is not None:
        assert hi is not None
        assert lo <= result.mtbf.lower_bound_s <= result.mtbf.mtbf_s <= hi
    assert len(result.interruptions) <= len(times)


# ---------------------------------------------------------------- invariances


@given(
    st.lists(st.integers(min_value=0, max_value=10**6), min_size=4, max_size=40, unique=True),
    st.integers(min_value=-10, max_value=10),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.randoms(use_true_random=False),
)
@settings(max_examples=80, deadline=None)
def test_unit_origin_and_order_do_not_matter(times: list[int], power: int, shift: int, rng: object) -> None:
    # Integer times, a power-of-two unit and an integer shift keep every moved time exact.
    factor = 2.0**power
    base = fit_events([float(t) for t in times])
    shuffled = list(times)
    rng.shuffle(shuffled)  # type: ignore[attr-defined]
    moved = fit_events([t * factor + shift for t in shuffled])
    event("reached the assertions")
    assert moved.mtbf.interruptions == base.mtbf.interruptions
    assert base.mtbf.mtbf_s is not None and moved.mtbf.mtbf_s is not None
    assert moved.mtbf.mtbf_s == pytest.approx(base.mtbf.mtbf_s * factor, rel=1e-6)
    assert moved.mtbf.ci95[0] == pytest.approx(base.mtbf.ci95[0] * factor, rel=1e-6)
    if base.weibull is not None and moved.weibull is not None:
        assert moved.weibull.shape == pytest.approx(base.weibull.shape, rel=1e-5)
        assert moved.weibull.scale_s == pytest.approx(base.weibull.scale_s * factor, rel=1e-5)
        assert moved.weibull.lr_statistic == pytest.approx(base.weibull.lr_statistic, rel=1e-5, abs=1e-6)


@given(
    st.lists(st.floats(min_value=0, max_value=1e4, allow_nan=False), min_size=2, max_size=40),
    st.floats(min_value=0, max_value=100),
    st.floats(min_value=0, max_value=100),
)
@settings(max_examples=100, deadline=None)
def test_a_wider_coalescing_gap_never_adds_interruptions(times: list[float], a: float, b: float) -> None:
    narrow, wide = sorted((a, b))
    event("reached the assertions")
    assert len(coalesce(times, gap_s=wide)) <= len(coalesce(times, gap_s=narrow))
    merged = coalesce(times, gap_s=wide)
    assert sum(i.events for i in merged) == len(times)
    starts = [i.time_s for i in merged]
    # Each interruption starts more than the gap after the last event of the one before.
    assert all(later.time_s - earlier.last_s > wide for earlier, later in pairwise(merged))
    assert starts == sorted(starts)


# ---------------------------------------------------------------- the sample trace (§11)


def test_sample_trace() -> None:
    path = DATA / "trace-54d.json"
    log = eventlog.read_log(path, time_unit="d", where=["planned=false"], cause="cause.component")
    window = 54 * DAY
    result = fit_log(log, start_s=0.0, end_s=window)

    # Independent: the distinct unplanned times straight from the JSON, in days.
    records = json.loads(path.read_text(encoding="utf-8"))
    days = sorted({r["time"] for r in records if r["planned"] is False})
    assert (log.read, log.kept, log.filtered) == (len(records), sum(not r["planned"] for r in records), 12)
    assert result.events_coalesced == 10
    n = len(days)
    assert result.mtbf.interruptions == n
    assert result.mtbf.mtbf_s == pytest.approx(window / n, rel=1e-12)
    lo, hi = result.mtbf.ci95
    assert hi is not None and result.mtbf.mtbf_s is not None
    assert lo == pytest.approx(_solve_mtbf(window, lambda mu: _poisson_cdf(n, mu) - 0.025), rel=1e-9)
    assert hi == pytest.approx(_solve_mtbf(window, lambda mu: 1 - _poisson_cdf(n - 1, mu) - 0.025), rel=1e-9)
    # About 400 interruptions in 54 days: M near 3.24 h, the interval a few tenths of an hour either side.
    assert 2.9 * HOUR < lo < result.mtbf.mtbf_s < hi < 3.9 * HOUR

    gaps = [(b - a) * DAY for a, b in pairwise(days)]
    censored = window - days[-1] * DAY
    weibull = result.weibull
    assert weibull is not None
    assert weibull.gaps == len(gaps) and weibull.censored_s == pytest.approx(censored, rel=1e-9)
    grid_k, grid_l = _grid_maximum(gaps, censored)
    assert weibull.shape == pytest.approx(grid_k, rel=1e-6)
    assert weibull.scale_s == pytest.approx(grid_l, rel=1e-6)
    k_lo, k_hi = weibull.shape_ci95
    assert k_lo is not None and k_hi is not None
    best = _profile_by_brute_force(gaps, censored, weibull.shape)
    for end in (k_lo, k_hi):
        assert 2 * (best - _profile_by_brute_force(gaps, censored, end)) == pytest.approx(3.84145882069, rel=1e-6)
    # Generated with k = 0.75: the interval holds it, and excludes 1.
    assert k_lo < 0.75 < k_hi < 1
    assert weibull.verdict == "clustered"
    assert result.causes[0].cause == "gpu"
    assert sum(c.count for c in result.causes) == n
    # The table of docs/fit.md §11 quotes this fit to its printed digits.
    assert n == 385
    assert [round(v / HOUR, 3) for v in (result.mtbf.mtbf_s, lo, hi)] == [3.366, 3.046, 3.730]
    assert [round(v, 3) for v in (weibull.shape, k_lo, k_hi)] == [0.775, 0.715, 0.836]


def test_sample_trace_is_what_its_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location("make_trace", DATA / "make_trace.py")
    assert spec is not None and spec.loader is not None
    make_trace = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_trace)
    assert make_trace.build() == (DATA / "trace-54d.json").read_text(encoding="utf-8")


# ---------------------------------------------------------------- imports


def test_fit_log_carries_the_reader_counts() -> None:
    log = eventlog.parse_log("time\n0\n1\nbad\n3\n", name="x.csv", time_unit="h", skip_bad=True)
    result = fit_log(log, coalesce_s=0.0)
    assert (result.events_read, result.events_kept, result.skipped_bad) == (4, 3, 1)
    assert result.mtbf.mtbf_s == 1.5 * HOUR


def test_importing_the_library_loads_neither_scipy_nor_numpy() -> None:
    code = (
        "import sys, ckptcalc.logs.fit, ckptcalc.logs.reader\n"
        "print(' '.join(sorted(m for m in ('scipy', 'numpy') if m in sys.modules)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert loaded.stdout.strip() == ""


# ---------------------------------------------------------------- counts from a paper (§4, §6)


def test_counts_from_a_paper() -> None:
    # §6: Llama 3's 419 interruptions in 54 days on 16 384 GPUs. T = 1296 h, M̂ = T/n = 3.0931 h, per GPU ≈ 50 677 h.
    window = 54 * DAY
    result = eventlog.fit_counts(419, window, observed_gpus=16384)
    assert result.mtbf.mtbf_s is not None
    assert result.mtbf.mtbf_s == pytest.approx(1296 * HOUR / 419, rel=1e-12)
    assert result.mtbf.mtbf_s / HOUR == pytest.approx(3.0931, abs=5e-5)
    assert result.gpu_mtbf is not None and result.gpu_mtbf.mtbf_s == pytest.approx(16384 * 1296 * HOUR / 419)
    # §5: the interval's ends by the Poisson sums, without any χ² function.
    lo, hi = result.mtbf.ci95
    assert lo == pytest.approx(_solve_mtbf(window, lambda mu: _poisson_cdf(419, mu) - 0.025), rel=1e-9)
    assert hi == pytest.approx(_solve_mtbf(window, lambda mu: 1 - _poisson_cdf(418, mu) - 0.025), rel=1e-9)
    document = result.to_dict()
    assert (document["interruptions"], document["window_s"], document["weibull"]) == (419, window, None)
    assert document["weibull_reason"] == "counts_only" and document["causes"] == []
    assert result.interruptions == () and len(result.gaps_s) == 0


def test_no_interruption_counted_gives_the_bound_only() -> None:
    # §4: n = 0 gives M > T/ln 20 and no estimate; 1296 h / 2.995732 = 432.615 h.
    result = eventlog.fit_counts(0, 54 * DAY)
    assert result.mtbf.mtbf_s is None
    assert result.mtbf.ci95 == (54 * DAY / math.log(20), None)
    assert result.mtbf.lower_bound_s / HOUR == pytest.approx(432.615, abs=0.0005)


@pytest.mark.parametrize(
    ("count", "window", "where", "message"),
    [
        (2.5, DAY, "failures", "must be a whole number"),
        (-1, DAY, "failures", "cannot be negative"),
        (math.inf, DAY, "failures", "must be finite"),
        (3, 0.0, "window", "must be positive"),
        (3, math.nan, "window", "must be finite"),
    ],
)
def test_bad_counts_name_their_field(count: float, window: float, where: str, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        eventlog.fit_counts(count, window)
    assert excinfo.value.where == where and message in excinfo.value.message


# ---------------------------------------------------------------- a p-value below what a double holds (§7)


def test_a_p_value_below_the_smallest_double_is_flagged_not_zero() -> None:
    # §8 extended: m gaps of 1 s and m of R s have the score equation of two gaps 1 and R, so k̂ = 2u*/ln R,
    # and the likelihood-ratio statistic is m times the two-gap one.
    ratio, m = 1e6, 600
    result = fit_weibull([1.0, ratio] * m)
    assert isinstance(result, WeibullFit)
    assert result.shape == pytest.approx(2 * _u_tanh_u() / math.log(ratio), rel=1e-9)

    def profile(k: float) -> float:  # §7's ℓ_p for the two gaps 1 and R, written out
        return 2 * math.log(k) - 2 * math.log((1 + ratio**k) / 2) + (k - 1) * math.log(ratio) - 2

    statistic = m * 2 * (profile(result.shape) - profile(1.0))
    assert result.lr_statistic == pytest.approx(statistic, rel=1e-9)
    # p = P(χ²₁ > s) = erfc(√(s/2)): about 10^−2019 (docs/fit.md §8), far below any double.
    assert math.erfc(math.sqrt(statistic / 2)) == 0.0
    assert result.p_underflow and result.verdict == "clustered"
    times = np.cumsum([0.0] + [1.0, ratio] * m)
    document = fit_events(times).to_dict()["weibull"]
    assert (document["p_value"], document["p_value_underflow"]) == (0.0, True)


def test_an_ordinary_p_value_is_not_flagged() -> None:
    result = fit_weibull([HOUR, 3 * HOUR])  # §8: p = 0.249
    assert isinstance(result, WeibullFit) and not result.p_underflow
    assert fit_events([0.0, HOUR, 4 * HOUR]).to_dict()["weibull"]["p_value_underflow"] is False


# ---------------------------------------------------------------- near-zero gaps and coalescing windows (§2)

NEAR = [0.0, 30.0, 3600.0, 3640.0, 7200.0, 7500.0, 14400.0]


def test_many_gaps_near_zero_show_the_fit_at_each_coalescing_window() -> None:
    # Gaps 30, 3570, 40, 3560, 300, 6900 s: two of six (33 % ≥ 10 %) under 1 min.
    result = fit_events(NEAR)
    assert result.near_zero_gaps == 2
    assert result.coalescing is not None
    rows = {row.coalesce_s: row for row in result.coalescing}
    assert sorted(rows) == [0.0, 60.0, 300.0, 1800.0]
    # By the chain rule: 1 min merges 30 into 0 and 3640 into 3600; 5 min also 7500 into 7200 (300 ≤ 300);
    # 30 min merges nothing more. The first interruption starts the clock; T = 14 400 s.
    expected = {0.0: (6, [30, 3570, 40, 3560, 300, 6900]), 60.0: (4, [3600, 3600, 300, 6900]),
                300.0: (3, [3600, 3600, 7200]), 1800.0: (3, [3600, 3600, 7200])}  # fmt: skip
    for window, (count, gaps) in expected.items():
        row = rows[window]
        assert (row.interruptions, row.mtbf_s) == (count, 14400.0 / count)
        assert row.shape == pytest.approx(_grid_maximum([float(g) for g in gaps], 0.0)[0], rel=1e-6)
    assert rows[0.0].shape == result.weibull.shape  # type: ignore[union-attr]
    document = result.to_dict()
    assert document["near_zero_gaps"] == 2
    assert [row["interruptions"] for row in document["coalescing"]] == [6, 4, 3, 3]


def test_the_window_used_joins_the_coalescing_rows() -> None:
    result = fit_events(NEAR, coalesce_s=35.0)  # merges 30 into 0 only: 40 s is still near zero, 1 of 5 gaps
    assert result.near_zero_gaps == 1 and result.coalescing is not None
    assert [row.coalesce_s for row in result.coalescing] == [0.0, 35.0, 60.0, 300.0, 1800.0]
    assert [row.interruptions for row in result.coalescing] == [6, 5, 4, 3, 3]


def test_few_gaps_near_zero_show_no_coalescing() -> None:
    # One gap in 11 under a minute: 9 % < 10 %.
    times = [0.0, 30.0, *(i * HOUR for i in range(1, 11))]
    result = fit_events(times)
    assert (result.near_zero_gaps, result.coalescing) == (1, None)
    assert result.to_dict()["coalescing"] is None


@given(st.lists(st.floats(min_value=0, max_value=1e4, allow_nan=False), min_size=2, max_size=40),
       st.floats(min_value=0, max_value=100))  # fmt: skip
@settings(max_examples=100, deadline=None)
def test_the_vector_chain_rule_is_coalesce(times: list[float], gap: float) -> None:
    ordered = np.sort(np.asarray(times))
    first = eventlog.chain_first(ordered, gap)
    reference = coalesce(times, gap_s=gap)
    event("merged" if first is not None else "nothing merged")
    found = ordered.tolist() if first is None else ordered[first].tolist()
    assert found == [i.time_s for i in reference]
    assert [
        (i.time_s, i.last_s, i.events) for i in fit_events(times, coalesce_s=gap, start_s=min(times) - 1).interruptions
    ] == [(i.time_s, i.last_s, i.events) for i in reference]


# ---------------------------------------------------------------- reading what people have (§1)


@pytest.mark.parametrize(
    ("header", "time_field", "cause_field"),
    [
        ("Timestamp,Cause", "Timestamp", "Cause"),
        ("TIME,node,Category", "TIME", "Category"),
        ("event_time,kind,type", "event_time", "kind"),  # the first of CAUSE_FIELDS present
        ("Time,time,TYPE", "time", "TYPE"),  # the same name wins over one differing in case
        ("start,node", "start", None),
    ],
)
def test_default_fields_are_found_whatever_their_case(header: str, time_field: str, cause_field: str | None) -> None:
    names = header.split(",")
    rows = [",".join(["2024-05-01T00:00:00Z", *(f"{n}-a" for n in names[1:])]),
            ",".join(["2024-05-01T01:00:00Z", *(f"{n}-b" for n in names[1:])])]  # fmt: skip
    if "Time" in names and "time" in names:
        rows = ["x,2024-05-01T00:00:00Z,gpu", "y,2024-05-01T01:00:00Z,nic"]
    log = eventlog.parse_log("\n".join([header, *rows]) + "\n", name="x.csv")
    assert (log.time_field, log.cause_field) == (time_field, cause_field)
    assert log.times == (1714521600.0, 1714525200.0)
    if cause_field is None:
        assert log.causes == ("unknown", "unknown")
    else:
        assert log.causes[0] != "unknown"


def test_a_default_cause_holding_objects_is_passed_over() -> None:
    text = '{"time": 1, "cause": {"component": "gpu"}}\n{"time": 2, "cause": {"component": "nic"}}\n'
    log = eventlog.parse_log(text, name="x.jsonl", time_unit="s")
    assert (log.cause_field, log.causes) == (None, ("unknown", "unknown"))
    named = eventlog.parse_log(text, name="x.jsonl", time_unit="s", cause="cause.component")
    assert named.causes == ("gpu", "nic")


@pytest.mark.parametrize(
    ("stamp", "tz", "utc"),
    [
        # Hand-worked: a naive time in zone Z is that time minus Z's offset in UTC.
        ("2024-05-01T12:00:00", None, "2024-05-01T12:00:00+00:00"),
        ("2024-05-01T12:00:00", "+02:00", "2024-05-01T10:00:00+00:00"),
        ("2024-05-01T12:00:00", "-0530", "2024-05-01T17:30:00+00:00"),
        ("2024-01-15T12:00:00", "Europe/Paris", "2024-01-15T11:00:00+00:00"),  # CET, +1
        ("2024-07-15T12:00:00", "Europe/Paris", "2024-07-15T10:00:00+00:00"),  # CEST, +2
        ("2024-07-15T12:00:00+09:00", "Europe/Paris", "2024-07-15T03:00:00+00:00"),  # its own offset wins
    ],
)
def test_naive_timestamps_are_read_in_the_zone_given_and_counted(stamp: str, tz: str | None, utc: str) -> None:
    from datetime import datetime

    log = eventlog.parse_log(f"time\n{stamp}\n", name="x.csv", tz=tz)
    assert log.times == (datetime.fromisoformat(utc).timestamp(),)
    assert log.naive_timestamps == (0 if "+09:00" in stamp else 1)
    assert log.tz == tz


def test_us_order_local_timestamps_by_time_format() -> None:
    # The HPC failure logs' "6/21/2005 10:54", local time at UTC−6: 16:54 UTC on 21 June 2005.
    from datetime import UTC, datetime

    text = "Date,Type\n6/21/2005 10:54,GPU\n6/22/2005 0:04,NIC\n"
    log = eventlog.parse_log(text, name="x.csv", time="Date", time_format="%m/%d/%Y %H:%M", tz="-06:00")
    assert log.times == (
        datetime(2005, 6, 21, 16, 54, tzinfo=UTC).timestamp(),
        datetime(2005, 6, 22, 6, 4, tzinfo=UTC).timestamp(),
    )
    assert (log.causes, log.naive_timestamps, log.time_kind) == (("GPU", "NIC"), 2, "timestamp")


def test_a_time_not_in_the_format_is_a_bad_row_naming_the_format() -> None:
    text = "time\n6/21/2005 10:54\n2005-06-22 00:04\n6/23/2005 10:54\n"
    with pytest.raises(InputError) as excinfo:
        eventlog.parse_log(text, name="x.csv", time_format="%m/%d/%Y %H:%M")
    assert excinfo.value.where == "x.csv:3"
    assert "expected a time in the format '%m/%d/%Y %H:%M'" in excinfo.value.message
    log = eventlog.parse_log(text, name="x.csv", time_format="%m/%d/%Y %H:%M", skip_bad=True)
    assert (log.kept, log.skipped_bad) == (2, 1)


@pytest.mark.parametrize(
    ("time_format", "message"), [("%Q", "'Q' is a bad directive"), ("m/d/Y", "has no % directive"), ("", "has no %")]
)
def test_a_time_format_that_cannot_read_a_time(time_format: str, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        eventlog.parse_log("time\n1\n", name="x.csv", time_format=time_format)
    assert excinfo.value.where == "time_format" and message in excinfo.value.message


def test_a_bad_zone_names_tz() -> None:
    with pytest.raises(InputError) as excinfo:
        eventlog.parse_log("time\n2024-05-01T00:00:00\n", name="x.csv", tz="Mars/Olympus")
    assert excinfo.value.where == "tz"


def test_combined_logs_keep_their_causes_and_counts() -> None:
    one = eventlog.parse_log("time,cause\n3,gpu\n1,nic\n", name="a.csv", time_unit="s")
    two = eventlog.parse_log("time,kind\n2,nic\n4,hbm\n", name="b.csv", time_unit="s")
    bare = eventlog.parse_log("time\n5\n", name="c.csv", time_unit="s")
    log = eventlog.combine([one, two, bare])
    assert log.times == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert log.causes == ("nic", "nic", "gpu", "hbm", "unknown")
    assert (log.read, log.kept, log.cause_field) == (5, 5, "cause, kind")


def test_the_working_state_is_two_arrays_whatever_the_length(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Reading keeps 8 bytes of time and 2 of cause code per event, and nothing per event besides;
    # the fit adds arrays of the same length, not objects.
    import tracemalloc

    def peak(n: int) -> tuple[int, int]:
        path = tmp_path / f"{n}.csv"
        path.write_text("time,cause\n" + "".join(f"{i * 7 % n}.5,c{i % 3}\n" for i in range(n)))
        tracemalloc.start()
        log = eventlog.read_log(path, time_unit="s")
        read_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        fit_log(log)
        fit_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert (log.times_s.nbytes, log.codes.nbytes) == (8 * n, 2 * n)
        return read_peak, fit_peak

    # The reader's blocks made small (their cells are transient, and a 64 KiB block holds 6000 rows here).
    monkeypatch.setattr(reader, "BLOCK", 4096)
    small, large = peak(5_000), peak(50_000)
    per_event_read = (large[0] - small[0]) / 45_000
    per_event_fit = (large[1] - small[1]) / 45_000
    assert per_event_read < 30  # the arrays (10 B) and their growth; a Python object per event would be 100+
    assert per_event_fit < 60  # a few float arrays of the same length at once


def test_gaps_recomputed_block_by_block_fit_as_the_kept_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    # Above CACHED_GAPS the gaps' logarithms are recomputed from the events in blocks, each sum: the same fit.
    rng = np.random.default_rng(7)
    times = np.asarray(np.round(np.cumsum(rng.weibull(0.7, 3000) * 600.0), 0), dtype=np.float64)  # equal times
    kept = fit_events(times, coalesce_s=20.0)
    monkeypatch.setattr(eventlog, "BLOCK", 64)
    monkeypatch.setattr(eventlog, "CACHED_GAPS", 100)
    blocked = fit_events(times, coalesce_s=20.0)
    assert kept.weibull is not None and blocked.weibull is not None
    assert blocked.events_coalesced == kept.events_coalesced > 0
    assert blocked.mtbf == kept.mtbf and blocked.histogram == kept.histogram
    assert blocked.near_zero_gaps == kept.near_zero_gaps and blocked.coalescing == kept.coalescing
    assert blocked.weibull.shape == pytest.approx(kept.weibull.shape, rel=1e-12)
    assert blocked.weibull.shape_ci95 == pytest.approx(kept.weibull.shape_ci95, rel=1e-12)
    assert blocked.weibull.lr_statistic == pytest.approx(kept.weibull.lr_statistic, rel=1e-9)
    assert blocked.gaps_s.tolist() == kept.gaps_s.tolist()
    assert [i.events for i in blocked.interruptions] == [i.events for i in kept.interruptions]
