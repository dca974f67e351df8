"""The exact model of every strategy (docs/model.md §3 and §8), against hand-worked references,
an independent dense linear solve of the same equations, and the simulation."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from references import daly, share_intervals

from ckptcalc.model import one_level, search, tiers
from ckptcalc.model.evaluation import Config, evaluate
from ckptcalc.simulation import timeline as simulate

LLAMA = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)


# ----------------------------------------------------- an independent solver


def _dense(s: TwoLevel, mtbf: float) -> tuple[float, float, float, float]:
    """(effective, write, rework, restart) by writing every segment's equation of docs/model.md §8.3
    and §8.4 out and solving them together with numpy.linalg.solve: no closed-form sums, no recursion."""
    q, m, tau, s1, s2, lag = s.share, int(s.every), s.tau1_s, s.s1_s, s.s2_s, s.lag_s

    def emin(w: float) -> float:
        return mtbf * (1.0 - math.exp(-w / mtbf))

    # Segments (work, stall) from the last durable storage copy to the next commit.
    width = tau + s1
    k = min(math.floor(lag / width), m - 1)
    u = lag - k * width
    segments = [(tau, s1)] * (m - 1) + [(tau, s1 + s2)] + [(tau, s1)] * k
    if u > 0:
        segments.append((min(u, tau), max(u - tau, 0.0)))
    n = len(segments)

    def piece(work: float, stall: float, start: float) -> tuple[float, float, float]:
        """(time, stall time, survival) from offset ``start`` of a (work, stall) segment to its end."""
        length = work + stall - start
        stall_from = max(start, work)
        in_stall = math.exp(-(stall_from - start) / mtbf) * emin(work + stall - stall_from)
        return emin(length), in_stall, math.exp(-length / mtbf)

    a1, a2 = math.exp(-s.r1_s / mtbf), math.exp(-s.r2_s / mtbf)
    # Unknowns: E_1..E_n, V₂, V₁′, per cost component (time, stall, restart).
    size = n + 2
    matrix = np.zeros((size, size))
    rhs = np.zeros((size, 3))
    v2, v1 = n, n + 1
    retry = 1.0 - (1.0 - a1) * q
    g1, pi1 = emin(s.r1_s) / retry, a1 / retry
    for j, (work, stall) in enumerate(segments):
        time, in_stall, p = piece(work, stall, 0.0)
        # E_j = c_j + p·E_{j+1} + (1−p)·[q·(G₁ + π₁·E_j + (1−π₁)(V₂ + E₁)) + (1−q)·(V₂ + E₁)]
        matrix[j, j] += 1.0 - (1.0 - p) * q * pi1
        if j + 1 < n:
            matrix[j, j + 1] -= p
        back = (1.0 - p) * (q * (1.0 - pi1) + (1.0 - q))
        matrix[j, 0] -= back
        matrix[j, v2] -= back
        rhs[j] = (time + (1.0 - p) * q * g1, in_stall, (1.0 - p) * q * g1)
    # V₂ = e(r₂) + (1−a₂)(q·V₁′ + (1−q)·V₂);  V₁′ = e(r₁) + (1−a₁)(q·V₁′ + (1−q)·V₂)
    matrix[v2, v2] = 1.0 - (1.0 - a2) * (1.0 - q)
    matrix[v2, v1] = -(1.0 - a2) * q
    rhs[v2] = (emin(s.r2_s), 0.0, emin(s.r2_s))
    matrix[v1, v1] = 1.0 - (1.0 - a1) * q
    matrix[v1, v2] = -(1.0 - a1) * (1.0 - q)
    rhs[v1] = (emin(s.r1_s), 0.0, emin(s.r1_s))
    e = np.linalg.solve(matrix, rhs)

    # The cycle starts at the commit: offset u into segment k + 1.
    work, stall = segments[k]
    time, in_stall, p = piece(work, stall, u)
    after = e[k + 1] if k + 1 < n else np.zeros(3)
    rho = 1.0 - q * pi1
    failed = q * np.array([g1, 0.0, g1]) + q * pi1 * e[k] + rho * (e[v2] + e[0])
    cycle = np.array([time, in_stall, 0.0]) + p * after + (1.0 - p) * failed
    effective = m * tau / cycle[0]
    write, restart = cycle[1] / cycle[0], cycle[2] / cycle[0]
    return effective, write, 1.0 - effective - write - restart, restart


@dataclasses.dataclass(frozen=True)
class TwoLevel:
    """A memory + storage schedule in the terms of docs/model.md §8.3, for the dense solver above."""

    tau1_s: float
    every: int
    s1_s: float
    s2_s: float
    lag_s: float
    share: float
    r1_s: float
    r2_s: float

    def replace(self, **changes: float) -> TwoLevel:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    def tiers(self) -> tiers.Tiers:
        """The same schedule as the model takes it: two tiers."""
        return tiers.Tiers(
            tau1_s=self.tau1_s,
            every=(float(self.every),),
            stalls=(self.s1_s, self.s2_s),
            lag_s=self.lag_s,
            shares=(self.share, 1.0 - self.share),
            restarts=(self.r1_s, self.r2_s),
        )


def _schedule(tau: float, m: int, s1: float, s2: float, lag: float, q: float, r1: float, r2: float) -> TwoLevel:
    return TwoLevel(tau1_s=tau, every=m, s1_s=s1, s2_s=s2, lag_s=lag, share=q, r1_s=r1, r2_s=r2)


# ----------------------------------------------------------- single levels


def test_single_synchronous_level_is_dalys_exact_form() -> None:
    # docs/model.md §8.1, Llama 3 at Young's interval 268.9 s: 0.92500 (MODEL §3's 0.9250)
    split = tiers.effective(tiers.single(interval_s=268.9178313165566, stall_s=3.24, lag_s=0.0, restart_s=600.0),
                            11160.0)  # fmt: skip
    assert split.effective == pytest.approx(daly(268.9178313165566, 3.24, 600.0, 11160.0), rel=1e-12)
    assert split.effective == pytest.approx(0.925003314, abs=1e-9)


def test_single_synchronous_split_by_hand() -> None:
    # docs/model.md §8.1: restart share 1 − e^{−r/M}; write share (e^{δ/M} − 1)/(e^{r/M}(e^{(τ+δ)/M} − 1)).
    tau, delta, r, mtbf = 266.76218265727664, 3.24, 600.0, 11160.0
    split = tiers.effective(tiers.single(interval_s=tau, stall_s=delta, lag_s=0.0, restart_s=r), mtbf)
    assert split.restart == pytest.approx(1.0 - math.exp(-r / mtbf), rel=1e-12)
    assert split.restart == pytest.approx(0.0523437433, abs=1e-10)
    by_hand = math.expm1(delta / mtbf) / (math.exp(r / mtbf) * math.expm1((tau + delta) / mtbf))
    assert split.write == pytest.approx(by_hand, rel=1e-12)
    assert split.write == pytest.approx(0.0112364058, abs=1e-10)
    assert split.effective + split.write + split.rework + split.restart == pytest.approx(1.0, abs=1e-15)


def test_single_asynchronous_level_is_the_sync_form_with_the_lag_in_the_restart() -> None:
    # docs/model.md §8.2: δ → s, r → r + P. s = 6.48 TB / 409.6 TB/s, P = 3.24 s, τ 18.78 s → 0.945787
    s, lag = 6.48e12 / 409.6e12, 3.24
    split = tiers.effective(tiers.single(interval_s=18.780659330064076, stall_s=s, lag_s=lag, restart_s=600.0), 11160.0)
    assert split.effective == pytest.approx(daly(18.780659330064076, s, 600.0 + lag, 11160.0), rel=1e-12)
    assert split.effective == pytest.approx(0.9457868657, abs=1e-9)


def test_lambert_interval_matches_a_bisection() -> None:
    # docs/model.md §3: t − 1 + e^{−t} = δ/M, τ = M(1 − e^{−t}); Llama 3 → 266.762 s
    assert one_level.lambert_interval(3.24, 11160.0) == pytest.approx(266.76218265727664, rel=1e-12)


# ---------------------------------------------------------------- two levels


def test_memory_and_synchronous_storage_reference() -> None:
    # docs/model.md §8.3 (MODEL §4's case): M 4 h, s₁ 3 s, s₂ 90 s, q 0.99, r₁ 60 s, r₂ 600 s,
    # τ₁ 295.4 s, m 54 → 0.96438; joint optimum τ₁ 292.52 s, m 54 → 0.964380.
    s = _schedule(295.4, 54, 3.0, 90.0, 0.0, 0.99, 60.0, 600.0)
    assert tiers.effective(s.tiers(), 14400.0).effective == pytest.approx(0.964379, abs=5e-6)
    best = search.best(s.tiers(), 14400.0)
    assert best.every == (54.0,)
    assert best.tau1_s == pytest.approx(292.52, abs=0.05)
    assert tiers.effective(best, 14400.0).effective == pytest.approx(0.9643801, abs=5e-7)


def test_second_two_level_reference() -> None:
    # docs/model.md §8.3: τ₁ 300 s, m 5, s₁ 10, s₂ 100, q 0.7, r₁ 60, r₂ 900, M 3600 → 0.75473
    s = _schedule(300.0, 5, 10.0, 100.0, 0.0, 0.7, 60.0, 900.0)
    assert tiers.effective(s.tiers(), 3600.0).effective == pytest.approx(0.754727, abs=5e-6)


schedules = st.builds(
    _schedule,
    tau=st.floats(5.0, 5000.0),
    m=st.integers(1, 40),
    s1=st.floats(0.1, 60.0),
    s2=st.floats(1.0, 600.0),
    lag=st.floats(0.0, 1.0),  # a share of m·τ₁, scaled below
    q=st.floats(0.0, 0.999),
    r1=st.floats(1.0, 600.0),
    r2=st.floats(10.0, 3600.0),
)


@settings(max_examples=150, deadline=None)
@given(schedule=schedules, scale=st.floats(3.0, 300.0))
def test_closed_form_recursion_equals_a_dense_solve(schedule: TwoLevel, scale: float) -> None:
    # M a multiple of the longest thing that must run without a failure: mostly meaningful territory.
    s = schedule.replace(lag_s=schedule.lag_s * schedule.every * schedule.tau1_s)
    mtbf = scale * max(s.r2_s, s.every * (s.tau1_s + s.s1_s) + s.s2_s)
    ours = tiers.effective(s.tiers(), mtbf)
    effective, write, rework, restart = _dense(s, mtbf)
    event("lag" if s.lag_s > 0 else "no lag")
    event("meaningful" if 0.05 < effective < 0.999 else "degenerate")
    assert ours.effective == pytest.approx(effective, rel=1e-9, abs=1e-12)
    assert ours.write == pytest.approx(write, rel=1e-8, abs=1e-12)
    assert ours.restart == pytest.approx(restart, rel=1e-8, abs=1e-12)
    assert ours.rework == pytest.approx(rework, rel=1e-6, abs=1e-10)


def test_arrays_equal_floats() -> None:
    taus = np.array([100.0, 300.0, 900.0])
    s = _schedule(300.0, 7, 5.0, 80.0, 400.0, 0.9, 60.0, 900.0)
    vector = tiers.effective(s.tiers().replace(tau1_s=taus), 7200.0)
    for i, tau in enumerate(taus):
        one = tiers.effective(s.tiers().replace(tau1_s=float(tau)), 7200.0)
        assert np.asarray(vector.effective)[i] == pytest.approx(one.effective, rel=1e-13)
        assert np.asarray(vector.rework)[i] == pytest.approx(one.rework, rel=1e-10)


def test_memory_with_asynchronous_storage_agrees_with_the_simulation() -> None:
    # docs/model.md §8.4: the persist rule, checked against the timeline itself.
    config = Config(checkpoint_bytes=1e12, bandwidth=2e9, mtbf_s=3600.0, restart_s=900.0, snapshot_bandwidth=50e9,
                    replica_survival=0.7, memory_bandwidth=100e9, memory_restart_s=60.0, interval_s=1500.0,
                    memory_interval_s=300.0)  # fmt: skip
    result = evaluate(config)
    assert result.storage_every == 5
    run = simulate.run(config, simulate.Failures(3600.0), cycles=1_000_000, seed=3)
    low, high = run.ci95
    assert low <= float(result.effective) <= high
    # Each share inside its own 95 % interval, from 20 independent runs of the same total length.
    runs = [simulate.run(config, simulate.Failures(3600.0), cycles=50_000, seed=3 + i) for i in range(20)]
    shares = share_intervals(
        [{name: getattr(one.split, name) for name in ("write", "rework", "restart")} for one in runs]
    )
    for name, (share_low, share_high) in shares.items():
        assert share_low <= float(getattr(result, name)) <= share_high, (name, shares[name], getattr(result, name))


def test_degenerate_restart_counts_as_all_restart() -> None:
    # Restarts thousands of MTBFs long underflow e^{−r/M}: effective 0, the whole time restart.
    split = tiers.effective(_schedule(300.0, 5, 10.0, 100.0, 0.0, 0.7, 1e7, 1e7).tiers(), 1.0)
    assert (split.effective, split.write, split.rework, split.restart) == (0.0, 0.0, 0.0, 1.0)


ASYNC_TWO_LEVELS = {"preset": "gemini-inmemory", "snapshot_bw": "1TB/s"}


@pytest.mark.parametrize(
    "case",
    [
        {"preset": "llama3-405b"},  # one synchronous level
        {"preset": "llama3-405b", "size": "6.5TB", "bw": "20GB/s", "mtbf": "15min"},  # where first order breaks
        {"preset": "llama3-405b-async"},  # one asynchronous level
        {"preset": "gemini-inmemory"},  # memory and synchronous storage
        ASYNC_TWO_LEVELS,  # memory and asynchronous storage
        {"preset": "llama3-405b", "failure_dist": "weibull", "shape": 0.7},  # Weibull: the renewal series
    ],
)
def test_simulation_at_the_reported_optimum_agrees_with_the_exact_model(case: dict[str, Any]) -> None:
    # docs/model.md §8: simulate runs the schedule optimize reports; the exact value lies inside its CI.
    from ckptcalc import api

    inputs = dict(case)
    preset = inputs.pop("preset")
    run = api.simulate(preset, cycles=400_000, seed=5, **inputs).to_dict()
    reported = api.optimize(preset, **inputs)
    assert run["interval_s"] == pytest.approx(reported.interval_s, rel=1e-12)
    assert run["storage_every"] == reported["storage_every"]
    low, high = run["effective_ci95"]
    exact_value = run["analytic"]["exact"]
    assert low <= exact_value <= high
    assert run["agreement"]["exact"]["agrees"] is True
    assert exact_value == pytest.approx(reported.effective, rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    tau=st.floats(1.0, 5000.0),
    stall=st.floats(0.01, 600.0),
    lag=st.floats(0.0, 1.0),
    restart=st.floats(1.0, 3600.0),
    scale=st.floats(2.0, 300.0),
)
def test_single_level_closed_form_is_the_general_recursion(
    tau: float, stall: float, lag: float, restart: float, scale: float
) -> None:
    # docs/model.md §8.1–§8.2: one level's closed form and the general recursion (one level runs in
    # it as two, a free tier 1 serving no failure under the real one).
    s = tiers.single(interval_s=tau, stall_s=stall, lag_s=lag * tau, restart_s=restart)
    mtbf = scale * (tau + stall + restart)
    closed = tiers.effective(s, mtbf)
    general = tiers.by_recursion(s, mtbf)
    event("meaningful" if 0.05 < closed.effective < 0.999 else "degenerate")
    assert closed.effective == pytest.approx(general.effective, rel=1e-9)
    assert closed.write == pytest.approx(general.write, rel=1e-8)
    assert closed.restart == pytest.approx(general.restart, rel=1e-8)
