"""simulate: the Monte Carlo timeline against the analytic model (MODEL.md §7). Fixed seeds: not flaky."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_usage_error

from ckptcalc import simulate as sim
from ckptcalc.model import Config, evaluate, exact_effective, replace

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

LLAMA = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
# Daly's case where first order is badly off: δ = 5 min, M = 15 min, r = 10 min (δ/M ≈ 0.33)
DALY = Config(checkpoint_bytes=300.0, bandwidth=1.0, mtbf_s=900.0, restart_s=600.0)


def _inside(value: float, run: sim.Simulation) -> bool:
    low, high = run.ci95
    return low <= value <= high


def test_llama3_agrees_with_exact() -> None:
    run = sim.run(LLAMA, sim.Failures(11160.0), cycles=2_000_000, seed=11)
    # MODEL.md §3: effective_exact(τ*) = 0.9250
    exact = exact_effective(math.sqrt(2 * 3.24 * 11160), 3.24, 600.0, 11160.0)
    assert exact == pytest.approx(0.9250, abs=5e-5)
    assert _inside(exact, run)
    assert not _inside(float(evaluate(LLAMA).effective), run)  # first order is 0.28 pp off


def test_daly_case_agrees_with_exact_not_first_order() -> None:
    config = replace(DALY, interval_s=300.0)
    run = sim.run(config, sim.Failures(900.0), cycles=2_000_000, seed=11)
    exact = exact_effective(300.0, 300.0, 600.0, 900.0)
    assert _inside(exact, run)
    assert evaluate(config).effective == 0.0  # first order: loss ≥ 1, clamped
    assert run.effective > 0.15


def test_async_case_agrees_with_first_order_when_small() -> None:
    # Async Llama 3 (snapshot 50 TB/s): first order 0.94113; failures during restarts make the
    # simulated value higher by about r²/2M² ≈ 0.15 %: the simulation also checks that.
    config = replace(LLAMA, snapshot_bandwidth=50e12)
    run = sim.run(config, sim.Failures(11160.0), cycles=2_000_000, seed=11)
    first = float(evaluate(config).effective)
    assert first == pytest.approx(0.94113, abs=5e-6)
    assert run.effective == pytest.approx(first, abs=0.003)
    # Cross-check: the same async run with lag 0 equals a synchronous run with the snapshot stall.
    no_lag = sim.run(
        Config(checkpoint_bytes=6.48e12, bandwidth=50e12, mtbf_s=11160.0, restart_s=600.0),
        sim.Failures(11160.0),
        cycles=2_000_000,
        seed=11,
    )
    assert no_lag.effective > run.effective  # a durable lag only loses work


def test_async_agrees_with_the_exact_formula() -> None:
    # For one asynchronous level, checkpoint k is durable once k(τ+s) + P of work time has passed,
    # so the renewal series is (τ/M)·Σ S(r + P + k(τ+s)): MODEL.md's exact formula with δ → s, r → r + P.
    config = replace(LLAMA, snapshot_bandwidth=50e12, bandwidth=200e9, interval_s=120.0)
    stall, lag = 6.48e12 / 50e12, 6.48e12 / 200e9  # 0.1296 s, 32.4 s
    exact = exact_effective(120.0, stall, 600.0 + lag, 11160.0)
    run = sim.run(config, sim.Failures(11160.0), cycles=2_000_000, seed=11)
    assert _inside(exact, run)
    assert not _inside(float(evaluate(config).effective), run)


def test_async_lag_by_hand() -> None:
    # One deterministic check of the lag rule, on a tiny instance: with failures far apart relative to
    # the interval, rework per failure ≈ τ/2 + P, so the simulated rework share ≈ (τ/2 + P)/M.
    config = Config(
        checkpoint_bytes=1.0, bandwidth=0.01, mtbf_s=1e5, restart_s=1.0, snapshot_bandwidth=1e6, interval_s=400.0
    )
    run = sim.run(config, sim.Failures(1e5), cycles=400_000, seed=3)
    assert run.split.rework == pytest.approx((200 + 100) / 1e5, rel=0.02)  # P = 1/0.01 = 100 s


def test_two_levels_agree_with_first_order() -> None:
    # MODEL.md §4 reference: first order 0.9640. δ ≪ M here, so the simulation should agree within 0.1 pp.
    config = Config(
        checkpoint_bytes=90.0,
        bandwidth=1.0,
        mtbf_s=14400.0,
        restart_s=600.0,
        replica_survival=0.99,
        memory_bandwidth=30.0,
        memory_restart_s=60.0,
    )
    run = sim.run(config, sim.Failures(14400.0), cycles=1_000_000, seed=5)
    assert run.effective == pytest.approx(0.9640, abs=0.001)
    assert run.storage_every == round(16099.69 / 295.42)
    assert run.split.restart == pytest.approx((0.99 * 60 + 0.01 * 600) / 14400, rel=0.05)


def test_weibull_shape_one_is_exponential() -> None:
    exponential = sim.run(LLAMA, sim.Failures(11160.0), cycles=300_000, seed=9)
    weibull = sim.run(LLAMA, sim.Failures(11160.0, 1.0), cycles=300_000, seed=9)
    assert weibull.effective == pytest.approx(exponential.effective, rel=1e-12)
    tau = math.sqrt(2 * 3.24 * 11160)
    series = sim.renewal_effective(tau, 3.24, 600.0, sim.Failures(11160.0, 1.0))
    assert series == pytest.approx(exact_effective(tau, 3.24, 600.0, 11160.0), rel=1e-12)


def test_weibull_agrees_with_renewal_series() -> None:
    failures = sim.Failures(11160.0, 0.7)
    run = sim.run(LLAMA, failures, cycles=2_000_000, seed=2)
    _, series = sim.analytic(LLAMA, failures)
    assert series is not None and _inside(series, run)


def test_weibull_mean_is_the_mtbf() -> None:
    draws = sim.Failures(6 * 3600.0, 0.5).draw(np.random.default_rng(0), 2_000_000)
    assert draws.mean() == pytest.approx(6 * 3600.0, rel=0.01)


def test_decreasing_hazard_moves_the_optimum_longer() -> None:
    config = Config(checkpoint_bytes=300.0, bandwidth=1.0, mtbf_s=6 * 3600.0, restart_s=600.0)
    exponential = sim.optimize(config, sim.Failures(6 * 3600.0), cycles=200_000, seed=4)
    weibull = sim.optimize(config, sim.Failures(6 * 3600.0, 0.5), cycles=200_000, seed=4)
    assert weibull.interval_s > exponential.interval_s * 1.1
    # the exponential search lands near Daly's exact optimum (M = 6 h, δ = 5 min)
    from ckptcalc.model import exact_interval

    assert exponential.interval_s == pytest.approx(exact_interval(300.0, 21600.0), rel=0.15)


def test_seed_reproducible_bit_for_bit() -> None:
    first = sim.run(LLAMA, sim.Failures(11160.0, 0.7), cycles=100_000, seed=42)
    again = sim.run(LLAMA, sim.Failures(11160.0, 0.7), cycles=100_000, seed=42)
    other = sim.run(LLAMA, sim.Failures(11160.0, 0.7), cycles=100_000, seed=43)
    assert first == again
    assert first.effective != other.effective


def test_split_adds_up() -> None:
    run = sim.run(LLAMA, sim.Failures(11160.0), cycles=100_000, seed=1)
    split = run.split
    assert split.useful + split.write + split.rework + split.restart == pytest.approx(1.0)
    assert min(split.useful, split.write, split.rework, split.restart) > 0
    assert split.useful == run.effective


def test_cli_json(run_json: RunJson) -> None:
    doc = run_json("simulate", "--cycles", "2e5", "--seed", "7")
    assert doc["command"] == "simulate" and doc["seed"] == 7 and doc["cycles"] == 200_000
    assert doc["failures"] == 200_000
    low, high = doc["effective_ci95"]
    assert low < doc["effective"] < high
    assert set(doc["split"]) == {"useful", "write", "rework", "restart"}
    assert doc["analytic"]["first_order"] == pytest.approx(0.9221, abs=5e-5)
    assert doc["analytic"]["exact"] == pytest.approx(0.9250, abs=5e-5)
    again = run_json("simulate", "--cycles", "2e5", "--seed", "7")
    assert again == doc


def test_cli_default_seed_is_fixed_and_printed(run: Run, run_json: RunJson) -> None:
    doc = run_json("simulate", "--cycles", "1e5")
    assert doc["seed"] == sim.DEFAULT_SEED
    assert f"seed {sim.DEFAULT_SEED}" in run("simulate", "--cycles", "1e5").stdout


def test_cli_levels_have_no_exact(run: Run, run_json: RunJson) -> None:
    doc = run_json("simulate", "--preset", "gemini-inmemory", "--cycles", "2e5", "--seed", "7")
    assert doc["analytic"]["exact"] is None and doc["agreement"]["exact"] is None
    assert doc["memory_interval_s"] == pytest.approx(math.sqrt(2 * 3 * 14400 / 0.99))
    assert "no closed form" in run("simulate", "--preset", "gemini-inmemory", "--cycles", "2e5").stdout


def test_cli_optimize(run: Run, run_json: RunJson) -> None:
    doc = run_json("simulate", "--failure-dist", "weibull", "--shape", "0.7", "--optimize", "--cycles", "2e5")
    found = doc["optimize"]
    assert found["young_interval_s"] == pytest.approx(math.sqrt(2 * 3.24 * 11160))
    assert found["exact_interval_s"] is not None
    assert found["evaluations"] < 100
    assert doc["analytic"]["exact"] is not None  # the renewal series for Weibull
    table = run("simulate", "--failure-dist", "weibull", "--shape", "0.7", "--optimize", "--cycles", "2e5").stdout
    assert "simulation (golden section)" in table


def test_cli_interval(run_json: RunJson) -> None:
    doc = run_json("simulate", "--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "15min", "--interval", "5min")
    assert doc["interval_s"] == 300
    assert doc["agreement"]["first_order"]["agrees"] is False


SIMULATE_BAD = [
    (["--cycles", "0"], "--cycles"),
    (["--cycles", "-5"], "--cycles"),
    (["--cycles", "2e9"], "--cycles"),
    (["--cycles", "1.5"], "--cycles"),
    (["--cycles", "lots"], "--cycles"),
    (["--failure-dist", "weibull", "--shape", "0"], "--shape"),
    (["--failure-dist", "weibull", "--shape", "-1"], "--shape"),
    (["--failure-dist", "weibull"], "--shape"),
    (["--shape", "0.7"], "--shape"),
    (["--failure-dist", "lognormal"], "--failure-dist"),
    (["--seed", "-1"], "--seed"),
    (["--snapshot-bw", "50TB/s", "--interval", "1s"], "--interval"),
]


@pytest.mark.parametrize(("args", "culprit"), SIMULATE_BAD)
def test_simulate_bad_input(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("simulate", *args, "--json"), culprit)
