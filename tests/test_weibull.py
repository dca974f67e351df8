"""One level under Weibull failures (docs/model.md §8.7): the renewal series, its split and its optimum."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc.errors import InputError
from ckptcalc.model import tiers
from ckptcalc.model import weibull as renewal
from ckptcalc.model.evaluation import Config, evaluate
from ckptcalc.model.one_level import Split

LLAMA = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)


def _split(tau: float, stall: float, lag: float, restart: float, mtbf: float, shape: float) -> Split:
    return renewal.weibull_split(interval_s=tau, stall_s=stall, lag_s=lag, restart_s=restart, mtbf_s=mtbf, shape=shape)


def test_hand_worked_rayleigh_case() -> None:
    # docs/model.md §8.7: k = 2, λ = 1000 s (M = 1000·Γ(3/2) = 886.23 s), τ = 900 s, s = 100 s, r = 0.
    # effective = (τ/M)·Σ e^{−n²}; the n-th stall is ∫ e^{−(t/λ)²} over [1000n + 900, 1000(n + 1)], which
    # over M is erf(n + 1) − erf(n + 0.9) because M = λ·√π/2.
    mtbf = 1000.0 * math.gamma(1.5)
    split = _split(900.0, 100.0, 0.0, 0.0, mtbf, 2.0)
    assert split.effective == pytest.approx(900.0 / mtbf * sum(math.exp(-n * n) for n in range(1, 8)), rel=1e-12)
    assert split.effective == pytest.approx(0.392322, abs=5e-7)
    assert split.write == pytest.approx(sum(math.erf(n + 1) - math.erf(n + 0.9) for n in range(8)), rel=1e-10)
    assert split.write == pytest.approx(0.048343, abs=5e-7)
    assert split.restart == 0.0


@settings(max_examples=150, deadline=None)
@given(
    log_tau=st.floats(0.0, 4.5),
    log_stall=st.floats(-2.0, 3.0),
    lag_ratio=st.sampled_from([0.0, 0.0, 0.3, 1.0]),
    log_restart=st.floats(0.0, 3.5),
    log_mtbf=st.floats(2.5, 5.5),
)
def test_shape_one_is_the_exponential_closed_form(
    log_tau: float, log_stall: float, lag_ratio: float, log_restart: float, log_mtbf: float
) -> None:
    tau, stall, restart, mtbf = 10**log_tau, 10**log_stall, 10**log_restart, 10**log_mtbf
    lag = lag_ratio * tau
    weibull = _split(tau, stall, lag, restart, mtbf, 1.0)
    closed = tiers.effective(tiers.single(interval_s=tau, stall_s=stall, lag_s=lag, restart_s=restart), mtbf)
    event("meaningful" if 0.05 < closed.effective < 0.999 else "degenerate")
    for part in ("effective", "write", "rework", "restart"):
        assert getattr(weibull, part) == pytest.approx(getattr(closed, part), rel=1e-9, abs=1e-11), part


def _direct(tau: float, stall: float, lag: float, restart: float, mtbf: float, shape: float) -> float:
    """(τ/M)·Σ S(r + P + n(τ + s)), every term summed with numpy until they vanish."""
    lam = mtbf / math.gamma(1.0 + 1.0 / shape)
    total, start, chunk = 0.0, 1, 4_000_000
    while True:
        n = np.arange(start, start + chunk, dtype=float)
        terms = np.exp(-(((restart + lag + n * (tau + stall)) / lam) ** shape))
        total += float(terms.sum())
        if terms[-1] < 1e-20:
            return tau / mtbf * total
        start += chunk


@pytest.mark.parametrize("shape", [0.5, 0.774, 0.95, 1.05, 1.5, 3.0])
@pytest.mark.parametrize(
    ("tau", "stall", "lag", "restart", "mtbf"),
    [(300.0, 3.24, 0.0, 600.0, 11160.0), (20.0, 16.0, 3.24, 600.0, 11160.0), (30.0, 1.0, 0.0, 60.0, 1e5)],
)
def test_series_matches_the_direct_sum(
    shape: float, tau: float, stall: float, lag: float, restart: float, mtbf: float
) -> None:
    got = renewal.weibull_effective(
        interval_s=tau, stall_s=stall, lag_s=lag, restart_s=restart, mtbf_s=mtbf, shape=shape
    )
    assert got == pytest.approx(_direct(tau, stall, lag, restart, mtbf, shape), rel=1e-10)
    assert _split(tau, stall, lag, restart, mtbf, shape).effective == pytest.approx(got, rel=1e-14)


@pytest.mark.parametrize("shape", [0.5, 0.774, 2.0])
def test_stalls_match_a_fine_quadrature(shape: float) -> None:
    # Σ ∫ S over each stall window, integrated with the trapezoid rule on a fine grid.
    tau, stall, restart, mtbf = 600.0, 60.0, 300.0, 7200.0
    lam = mtbf / math.gamma(1.0 + 1.0 / shape)
    total = 0.0
    for n in range(20_000):
        low = restart + n * (tau + stall) + tau
        t = np.linspace(low, low + stall, 201)
        values = np.exp(-((t / lam) ** shape))
        total += float(np.sum((values[1:] + values[:-1]) / 2.0) * (t[1] - t[0]))
        if values[-1] < 1e-18:
            break
    assert _split(tau, stall, 0.0, restart, mtbf, shape).write == pytest.approx(total / mtbf, rel=1e-6)


@pytest.mark.parametrize("shape", [0.5, 0.774, 1.0, 2.0])
def test_optimum_beats_every_point_of_a_grid(shape: float) -> None:
    config = LLAMA.replace(shape=shape)
    result = evaluate(config)
    best = float(result.optimal_interval_s)
    grid = best * np.exp(np.linspace(-2.0, 2.0, 81))
    values = [float(evaluate(config.replace(interval_s=float(t))).effective) for t in grid]
    assert float(result.optimal_effective) >= max(values) - 1e-15
    near = [float(evaluate(config.replace(interval_s=best * f)).effective) for f in (0.999, 1.001)]
    assert float(result.optimal_effective) > max(near)


def test_shape_one_reproduces_the_exponential_optimum() -> None:
    exponential, weibull = evaluate(LLAMA), evaluate(LLAMA.replace(shape=1.0))
    assert float(weibull.optimal_interval_s) == pytest.approx(float(exponential.optimal_interval_s), rel=1e-6)
    assert float(weibull.effective) == pytest.approx(float(exponential.effective), rel=1e-12)


def test_clustered_failures_move_the_optimum_and_the_loss() -> None:
    # docs/model.md §8.7: k = 0.774 (the fit of the sample trace) on Llama 3.
    result = evaluate(LLAMA.replace(shape=0.774))
    assert float(result.optimal_interval_s) == pytest.approx(276.5425, rel=1e-6)
    assert float(result.effective) == pytest.approx(0.9276945, rel=1e-6)
    assert result.daly_interval_s is None


def test_arrays_give_the_same_numbers_as_single_points() -> None:
    grid = np.array([100.0, 300.0, 1000.0])
    batch = evaluate(LLAMA.replace(shape=0.774, interval_s=grid))
    for i, tau in enumerate(grid):
        one = evaluate(LLAMA.replace(shape=0.774, interval_s=float(tau)))
        assert batch.effective[i] == pytest.approx(float(one.effective), rel=1e-14)
        assert batch.write[i] == pytest.approx(float(one.write), rel=1e-14)


def test_asynchronous_optimum_held_at_the_lag() -> None:
    config = LLAMA.replace(snapshot_bandwidth=409.6e12, bandwidth=2e10, shape=0.774)
    result = evaluate(config)
    assert float(result.optimal_interval_s) >= float(config.write_s)
    assert any(c.kind == "lag_bound" for c in result.caveats) == (
        float(result.optimal_interval_s) <= float(config.write_s) * (1 + 1e-9)
    )


def test_two_levels_under_weibull_failures_point_to_the_simulation() -> None:
    config = LLAMA.replace(replica_survival=0.9, memory_bandwidth=4e14, memory_restart_s=60.0, shape=0.7)
    with pytest.raises(InputError, match="simulate") as caught:
        evaluate(config)
    assert caught.value.where == "shape"


# ------------------------------------------------------------ the commands


def test_optimize_with_a_weibull_shape(run_json: Any, run: Any) -> None:
    doc = run_json("optimize", "--failure-dist", "weibull", "--shape", "0.774")
    assert doc["inputs"]["failure_dist"] == "weibull" and doc["inputs"]["shape"] == 0.774
    assert doc["optimal_interval_s"] == pytest.approx(276.5425, rel=1e-6)
    assert doc["effective"] == pytest.approx(0.9276945, rel=1e-6)
    assert doc["daly_interval_s"] is None
    assert {lever["key"] for lever in doc["levers"]} == {
        "bandwidth_x2",
        "restart_half",
        "mtbf_x2",
        "async",
        "compression",
    }
    assert "Weibull failures k = 0.774" in run("optimize", "--shape", "0.774").stdout
    # A shape alone means Weibull.
    assert run_json("optimize", "--shape", "0.774")["effective"] == doc["effective"]


def test_exponential_drops_a_preset_shape(run_json: Any, tmp_path: Any) -> None:
    path = tmp_path / "fitted.toml"
    path.write_text(
        '[checkpoint]\nsize = "6.48TB"\n[storage]\nbandwidth = "2TB/s"\n'
        '[failures]\nmtbf = "3.1h"\nrestart = "10min"\nshape = 0.774\n',
        encoding="utf-8",
    )
    weibull = run_json("optimize", "--preset", str(path))
    exponential = run_json("optimize", "--preset", str(path), "--failure-dist", "exponential")
    assert weibull["inputs"]["failure_dist"] == "weibull"
    assert exponential["inputs"]["failure_dist"] == "exponential" and exponential["inputs"]["shape"] is None
    assert exponential["effective"] == pytest.approx(0.9250040, rel=1e-6)


@pytest.mark.parametrize(
    ("args", "culprit", "message"),
    [
        (["--failure-dist", "weibull"], "--shape", "needs"),
        (["--failure-dist", "gamma"], "--failure-dist", "gamma"),
        (["--failure-dist", "exponential", "--shape", "0.7"], "--shape", "Weibull"),
        (["--shape", "0.05"], "--shape", "between 0.1 and 20"),
        (["--shape", "nan"], "--shape", ""),
        (["--preset", "gemini-inmemory", "--shape", "0.7"], "--shape", "simulate"),
    ],
)
def test_bad_failure_laws(run: Any, args: list[str], culprit: str, message: str) -> None:
    result = run("optimize", *args, "--json")
    assert_usage_error(result, culprit)
    assert message in result.stderr


def test_sweep_and_compare_take_the_shape(run_json: Any) -> None:
    sweep = run_json("sweep", "--shape", "0.774", "--points", "5")
    assert len(sweep["effective"]) == 5 and max(sweep["effective"]) == pytest.approx(0.9276945, rel=1e-6)
    by_mtbf = run_json("sweep", "--shape", "0.774", "--over", "mtbf", "--from", "1h", "--to", "24h", "--points", "3")
    single = evaluate(LLAMA.replace(shape=0.774, mtbf_s=3600.0))
    assert by_mtbf["effective"][0] == pytest.approx(float(single.effective), rel=1e-12)
    compare = run_json("compare", "llama3-405b", "bloom-176b", "--shape", "0.774")
    assert [s["inputs"]["shape"] for s in compare["scenarios"]] == [0.774, 0.774]
    assert compare["scenarios"][0]["effective"] == pytest.approx(0.9276945, rel=1e-6)


def test_simulate_runs_the_weibull_optimum(run_json: Any) -> None:
    doc = run_json("simulate", "--shape", "0.774", "--cycles", "2e5", "--seed", "3")
    assert doc["failure_dist"] == "weibull"
    assert doc["interval_s"] == pytest.approx(276.5425, rel=1e-6)
    assert doc["analytic"]["exact"] == pytest.approx(0.9276945, rel=1e-6)


def test_weibull_sweeps_are_capped(run: Any) -> None:
    result = run("sweep", "--shape", "0.5", "--points", "20001", "--json")
    assert_usage_error(result, "--points")
    assert "point by point" in result.stderr


def test_an_interval_sweep_searches_the_optimum_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    original = renewal.weibull_optimum

    def counted(**kwargs: float) -> float:
        calls.append(kwargs["mtbf_s"])
        return original(**kwargs)

    monkeypatch.setattr(renewal, "weibull_optimum", counted)
    evaluate(LLAMA.replace(shape=0.774, interval_s=np.linspace(100.0, 1000.0, 50)))
    assert calls == [11160.0]


def test_far_in_the_tail_the_derivatives_are_zero_not_an_overflow() -> None:
    # t³ past the largest float, where S and its derivatives have long underflowed to 0.
    from ckptcalc.model.weibull import _Law

    assert _Law(1.0, 1.03125).derivatives(8.085226454964471e113) == (0.0, 0.0, 0.0)


def test_a_shape_just_above_1_answers(run_json: Any, run: Any) -> None:
    # The hazard of k = 1.03125 turns steep only past any time a float holds: the smooth stretch is all of it.
    doc = run_json("optimize", "--size", "1TB", "--bw", "1TB/s", "--gpu-mtbf", "300d", "--restart", "1s",
                   "--shape", "1.03125", "--gpus", "1")  # fmt: skip
    assert doc["effective"] == pytest.approx(0.99972221, rel=1e-6)  # about 1 − √(2δ/M) = 1 − √(2/300 d), k ≈ 1
    # A 1 s MTBF with a 1 h restart: an ordinary refusal, no traceback.
    result = run("optimize", "--params", "1", "--bw", "1TB/s", "--mtbf", "1s", "--restart", "1h", "--shape", "1.03125")
    assert_usage_error(result, "--bw")
