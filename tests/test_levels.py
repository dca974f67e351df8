"""Beyond first order: Daly, the exact model, asynchronous checkpoints, in-memory replicas.

References are worked by hand from the formulas of the specification
(MODEL.md §3 and §4); comments show the arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, getcontext
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_usage_error
from hypothesis import given, settings
from hypothesis import strategies as st

from ckptcalc import model, presets
from ckptcalc.model import Config, evaluate, replace
from ckptcalc.scenario import resolve

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

MIN, HOUR = 60.0, 3600.0


# ------------------------------------------------------------------ Daly


@pytest.mark.parametrize(
    ("mtbf", "minutes"),
    [
        # δ = 5 min: M = 24 h → √(2·300·86400) = 7200; x = 300/172800; 7200·(1 + √x/3 + x/9) − 300 = 7001 s
        (24 * HOUR, 116.7),
        # M = 6 h → √(2·300·21600) = 3600; x = 300/43200; 3600·(1 + √x/3 + x/9) − 300 = 3402.8 s
        (6 * HOUR, 56.7),
    ],
)
def test_daly_published_figures(mtbf: float, minutes: float) -> None:
    assert model.daly_interval(5 * MIN, mtbf) / MIN == pytest.approx(minutes, abs=0.05)


def test_daly_branch_when_write_exceeds_twice_mtbf() -> None:
    assert model.daly_interval(3000.0, 1000.0) == 1000.0  # δ ≥ 2M → τ_D = M
    assert model.daly_interval(2000.0, 1000.0) == 1000.0  # boundary δ = 2M
    grid = model.daly_interval(np.array([3000.0, 300.0]), np.array([1000.0, 86400.0]))
    assert grid[0] == 1000.0 and grid[1] / MIN == pytest.approx(116.7, abs=0.05)


def test_daly_for_llama3() -> None:
    # MODEL.md §3: τ_D = 266.8 s for δ = 3.24 s, M = 11160 s
    assert model.daly_interval(3.24, 11160.0) == pytest.approx(266.8, abs=0.05)


# ------------------------------------------------------------ exact model


def _exact_reference(eps: float) -> float:
    """1 + W0(−e^{−(1+ε)}) to 40 digits by bisection on u + ln(1 − u) + ε = 0 (independent of the code)."""
    getcontext().prec = 50
    e = Decimal(eps)
    low, high = Decimal(0), Decimal(1)
    for _ in range(200):
        mid = (low + high) / 2
        if mid + (1 - mid).ln() + e > 0:
            low = mid
        else:
            high = mid
    return float((low + high) / 2)


@pytest.mark.parametrize("eps", [1e-12, 1e-8, 2.9e-4, 1e-2, 0.3, 1.0, 5.0, 40.0])
def test_exact_interval_accurate_to_1e_9(eps: float) -> None:
    mtbf = 3600.0
    assert model.exact_interval(eps * mtbf, mtbf) == pytest.approx(mtbf * _exact_reference(eps), rel=1e-9)


def test_exact_interval_is_the_lambert_w_closed_form() -> None:
    # W e^W = x with x = −e^{−(1+δ/M)} and W = τ/M − 1.
    delta, mtbf = 300.0, 900.0
    w = model.exact_interval(delta, mtbf) / mtbf - 1
    assert w * math.exp(w) == pytest.approx(-math.exp(-(1 + delta / mtbf)), rel=1e-12)
    assert -1 < w < 0


def test_exact_for_llama3() -> None:
    # MODEL.md §3: effective_exact(τ*) = 0.9250 for the Llama 3 case
    result = evaluate(Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0))
    assert result.exact_effective == pytest.approx(0.9250, abs=5e-5)
    tau = result.optimal_interval_s
    by_hand = tau / (11160 * math.exp(600 / 11160) * (math.exp((tau + 3.24) / 11160) - 1))
    assert result.exact_effective == pytest.approx(by_hand, rel=1e-12)


def test_exact_optimum_is_a_maximum_of_exact_effective() -> None:
    delta, restart, mtbf = 300.0, 600.0, 900.0
    best = model.exact_interval(delta, mtbf)
    top = model.exact_effective(best, delta, restart, mtbf)
    for factor in (0.9, 0.99, 1.01, 1.1):
        assert model.exact_effective(best * factor, delta, restart, mtbf) < top


def test_drift_warning_when_first_order_is_far_from_exact() -> None:
    result = evaluate(Config(checkpoint_bytes=6.5e12, bandwidth=20e9, mtbf_s=HOUR, restart_s=600.0))
    drift = [c for c in result.caveats if c.kind == "exact_drift"]
    assert drift and drift[0].value == pytest.approx(
        abs(math.sqrt(2 * 325 * 3600) - model.exact_interval(325.0, 3600.0)) / model.exact_interval(325.0, 3600.0)
    )
    assert drift[0].value > 0.05


def test_optimize_shows_young_daly_exact(run: Run, run_json: RunJson) -> None:
    doc = run_json("optimize", "--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "1h")
    assert doc["daly_interval_s"] == pytest.approx(model.daly_interval(325.0, 3600.0))
    assert doc["exact_interval_s"] == pytest.approx(model.exact_interval(325.0, 3600.0))
    assert any("from the exact optimum" in w for w in doc["warnings"])
    table = run("optimize", "--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "1h").stdout
    for name in ("Young (first order)", "Daly (higher order)", "exact (Lambert W)"):
        assert name in table


# ------------------------------------------------------------------ levels


def test_two_level_reference() -> None:
    # MODEL.md §4: M = 4 h, storage δ = 90 s, r = 10 min; memory s = 3 s, r = 60 s, p = 0.99.
    storage_only = evaluate(Config(checkpoint_bytes=90.0, bandwidth=1.0, mtbf_s=4 * HOUR, restart_s=600.0))
    assert storage_only.effective == pytest.approx(0.8465, abs=5e-5)
    both = evaluate(
        Config(
            checkpoint_bytes=90.0,
            bandwidth=1.0,
            mtbf_s=4 * HOUR,
            restart_s=600.0,
            replica_survival=0.99,
            memory_bandwidth=30.0,
            memory_restart_s=60.0,
        )
    )
    memory, storage = both.levels
    assert memory.optimal_interval_s == pytest.approx(295.4, abs=0.05)  # √(2·3·14400/0.99)
    assert storage.optimal_interval_s == pytest.approx(16100, abs=1)  # √(2·90·14400/0.01)
    assert both.total == pytest.approx(0.0360, abs=5e-5)
    assert both.effective == pytest.approx(0.9640, abs=5e-5)
    assert both.daly_interval_s is None and both.exact_interval_s is None and both.exact_effective is None


def test_single_level_is_young() -> None:
    config = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
    (level,) = evaluate(config).levels
    assert (level.level.stall_s, level.level.lag_s, level.level.share) == (3.24, 0.0, 1.0)
    write, rework, restart = model.first_order_loss(3.24, level.interval_s, 11160.0, 600.0)
    assert (level.write, level.rework, level.restart) == (write, rework, restart)


def test_async_reference() -> None:
    # Llama 3 with --snapshot-bw 50TB/s: s = 6.48e12/50e12 = 0.1296 s, P = 3.24 s,
    # τ* = max(√(2·0.1296·11160), 3.24) = 53.78 s; write = 0.1296/53.78 = 0.002410,
    # rework = (53.78/2 + 3.24)/11160 = 0.002700, restart = 0.053763 → effective 0.94113.
    config = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0, snapshot_bandwidth=50e12)
    result = evaluate(config)
    (storage,) = result.levels
    assert (storage.level.stall_s, storage.level.lag_s) == pytest.approx((0.1296, 3.24))
    assert storage.optimal_interval_s == pytest.approx(53.78, abs=0.005)
    assert result.write == pytest.approx(0.002410, abs=5e-7)
    assert result.rework == pytest.approx(0.002700, abs=5e-7)
    assert result.effective == pytest.approx(0.94113, abs=5e-6)
    assert config.write_s == 3.24  # durable-in-storage time keeps its meaning
    assert "lag_bound" not in {c.kind for c in result.caveats}


def test_async_bound_by_persist_time() -> None:
    # bw 200 GB/s → P = 32.4 s; snapshot 6480 TB/s → s = 0.001 s; √(2·0.001·11160) = 4.72 s < P → τ* = 32.4 s.
    # write = 0.001/32.4, rework = (16.2 + 32.4)/11160, restart = 600/11160 → effective 0.941851
    config = Config(
        checkpoint_bytes=6.48e12, bandwidth=200e9, mtbf_s=11160.0, restart_s=600.0, snapshot_bandwidth=6480e12
    )
    result = evaluate(config)
    assert result.optimal_interval_s == pytest.approx(32.4)
    assert result.effective == pytest.approx(1 - (0.001 / 32.4 + 48.6 / 11160 + 600 / 11160), rel=1e-12)
    assert result.effective == pytest.approx(0.941851, abs=5e-7)
    assert "lag_bound" in {c.kind for c in result.caveats}


def test_gemini_presets() -> None:
    storage = evaluate(resolve(presets.load("gemini-storage-only")).config)
    memory = evaluate(resolve(presets.load("gemini-inmemory")).config)
    assert storage.effective == pytest.approx(0.85, abs=0.01)
    assert memory.effective == pytest.approx(0.97, abs=0.01)
    for name in ("gemini-storage-only", "gemini-inmemory"):
        scenario = presets.load(name)
        assert "assumption" in (scenario.description or "")
        assert "arXiv:2312.11805" in (scenario.source or "")


def test_llama3_async_preset() -> None:
    scenario = presets.load("llama3-405b-async")
    job = resolve(scenario)
    assert job.config.snapshot_bandwidth == pytest.approx(16384 * 25e9)
    assert "assum" in (scenario.source or "")
    assert evaluate(job.config).effective > evaluate(resolve(presets.load("llama3-405b")).config).effective


@settings(max_examples=300, deadline=None)
@given(
    size=st.floats(1e9, 1e14),
    bandwidth=st.floats(1e9, 1e13),
    mtbf=st.floats(600.0, 1e6),
    restart=st.floats(1.0, 7200.0),
    survival=st.floats(0.01, 0.999),
    restart_fraction=st.floats(0.0, 1.0),
)
def test_adding_a_free_level_never_hurts(
    size: float, bandwidth: float, mtbf: float, restart: float, survival: float, restart_fraction: float
) -> None:
    base = Config(checkpoint_bytes=size, bandwidth=bandwidth, mtbf_s=mtbf, restart_s=restart)
    with_memory = replace(
        base, replica_survival=survival, memory_bandwidth=math.inf, memory_restart_s=restart * restart_fraction
    )
    assert evaluate(with_memory).total <= evaluate(base).total * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(size=st.floats(1e9, 1e14), bandwidth=st.floats(1e9, 1e13), mtbf=st.floats(600.0, 1e6))
def test_each_level_optimum_is_a_minimum(size: float, bandwidth: float, mtbf: float) -> None:
    config = Config(
        checkpoint_bytes=size,
        bandwidth=bandwidth,
        mtbf_s=mtbf,
        restart_s=600.0,
        replica_survival=0.9,
        memory_bandwidth=bandwidth * 30,
        memory_restart_s=60.0,
    )
    best = evaluate(config)
    memory, storage = best.levels
    for factor in (0.9, 1.1):
        moved = evaluate(replace(config, memory_interval_s=memory.optimal_interval_s * factor))
        assert moved.total >= best.total * (1 - 1e-12)
        moved = evaluate(replace(config, interval_s=storage.optimal_interval_s * factor))
        assert moved.total >= best.total * (1 - 1e-12)


# -------------------------------------------------------------------- CLI


def test_cli_memory_level(run: Run, run_json: RunJson) -> None:
    args = ("--replica-survival", "0.99", "--memory-bw", "2TB/s", "--memory-restart", "1min")
    args += ("--mtbf", "4h", "--size", "6.48TB", "--bw", "72GB/s")
    doc = run_json("optimize", *args)
    memory, storage = doc["levels"]
    assert memory["name"] == "memory" and storage["name"] == "storage"
    assert memory["stall_s"] == pytest.approx(3.24)  # 6.48 TB / 2 TB/s
    assert memory["optimal_interval_s"] == pytest.approx(math.sqrt(2 * 3.24 * 14400 / 0.99))
    assert storage["share_of_failures"] == pytest.approx(0.01)
    assert storage["optimal_interval_s"] == pytest.approx(math.sqrt(2 * 90 * 14400 / 0.01))
    assert doc["optimal_interval_s"] == storage["optimal_interval_s"]
    assert doc["exact_interval_s"] is None and doc["daly_interval_s"] is None and doc["exact_effective"] is None
    assert any("simulation is the check" in w for w in doc["warnings"])
    total = sum(level["loss"][k] for level in doc["levels"] for k in ("write", "rework", "restart"))
    assert doc["loss"]["total"] == pytest.approx(total)
    table = run("optimize", *args).stdout
    assert "memory" in table and "storage" in table and "Levels" in table


def test_cli_given_intervals_per_level(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "gemini-inmemory", "--interval", "2h", "--memory-interval", "10min")
    memory, storage = doc["levels"]
    assert memory["interval_s"] == 600 and storage["interval_s"] == 7200
    assert doc["interval_s"] == 7200
    assert doc["effective"] < doc["optimal_effective"]


def test_cli_async(run: Run, run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b", "--snapshot-bw", "50TB/s")
    (storage,) = doc["levels"]
    assert storage["stall_s"] == pytest.approx(0.1296)
    assert storage["lag_s"] == pytest.approx(3.24)
    assert doc["write_s"] == pytest.approx(3.24)
    assert doc["effective"] == pytest.approx(0.94113, abs=5e-6)
    bound = run("optimize", "--bw", "200GB/s", "--snapshot-bw", "6480TB/s")
    assert "bound by the persist time" in bound.stderr
    assert "persist" in bound.stdout


def test_compare_gemini(run_json: RunJson) -> None:
    doc = run_json("compare", "gemini-storage-only", "gemini-inmemory")
    effective = [s["effective"] for s in doc["scenarios"]]
    assert effective[0] == pytest.approx(0.85, abs=0.01) and effective[1] == pytest.approx(0.97, abs=0.01)


def test_what_if_and_sweep_new_inputs(run_json: RunJson) -> None:
    doc = run_json("compare", "gemini-inmemory", "--what-if", "replica-survival=0.9", "--what-if", "snapshot-bw=1PB/s")
    assert len(doc["scenarios"]) == 3
    assert doc["scenarios"][1]["effective"] < doc["scenarios"][0]["effective"]
    for over, start, stop in (
        ("replica-survival", "0.5", "0.999"),
        ("memory-restart", "10s", "10min"),
        ("snapshot-bw", "100TB/s", "1PB/s"),
    ):
        sweep = run_json("sweep", "--preset", "gemini-inmemory", "--over", over, "--from", start, "--to", stop)
        assert len(sweep["values"]) == 21
        assert all(0 <= e <= 1 for e in sweep["effective"])
    survival = run_json("sweep", "--preset", "gemini-inmemory", "--over", "replica-survival", "--points", "5")
    assert survival["effective"] == sorted(survival["effective"])


LEVEL_BAD = [
    (["--replica-survival", "1.5", "--memory-bw", "2TB/s", "--memory-restart", "1min"], "--replica-survival"),
    (["--replica-survival", "0", "--memory-bw", "2TB/s", "--memory-restart", "1min"], "--replica-survival"),
    (["--replica-survival", "1", "--memory-bw", "2TB/s", "--memory-restart", "1min"], "--replica-survival"),
    (["--memory-bw", "2TB/s"], "--memory-bw"),
    (["--memory-restart", "1min"], "--memory-restart"),
    (["--memory-interval", "5min"], "--memory-interval"),
    (["--replica-survival", "0.99", "--memory-restart", "1min"], "--memory-bw"),
    (["--replica-survival", "0.99", "--memory-bw", "2TB/s"], "--memory-restart"),
    (["--snapshot-bw", "1TB/s"], "--snapshot-bw"),
    (["--snapshot-bw", "2TB/s"], "--snapshot-bw"),
    (["--snapshot-bw", "50TB/s", "--interval", "1s"], "--interval"),
]


@pytest.mark.parametrize(("args", "culprit"), LEVEL_BAD)
def test_level_bad_input(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("optimize", *args, "--json"), culprit)
