"""Whole runs (docs/model.md §10): ``ckptcalc plan`` against W / effective, hand-worked limits and an
independent event-by-event simulation."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_usage_error
from test_cli_optimize import _modules_loaded

from ckptcalc import api
from ckptcalc.simulation.plan import complete
from ckptcalc.simulation.timeline import Failures, Schedule

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
DAY = 86400.0


def test_llama3_54_days_finishes_at_w_over_effective(run_json: RunJson) -> None:
    # The case: W = 54 d on llama3-405b; expected wall time W / effective = 54 d / 0.925004.
    doc = run_json("plan", "--work", "54d")
    expected = 54 * DAY / 0.9250040299042854
    assert doc["expected_s"] == pytest.approx(expected, rel=1e-12)
    assert doc["completion_s"]["p50"] == pytest.approx(expected, rel=0.01)
    # Tighter: the mean of 1000 runs, whose spread is about 0.3 % of a run, within 5 standard errors.
    spread = (doc["completion_s"]["p90"] - doc["completion_s"]["p10"]) / (2 * 1.2816)
    assert abs(doc["completion_s"]["mean"] - expected) < 5 * spread / math.sqrt(1000)
    assert doc["mean_vs_expected"] == pytest.approx(doc["completion_s"]["mean"] / expected - 1, rel=1e-12)
    # About 54 d / 0.925 / 3.1 h failures, and no run escapes them all.
    assert doc["failures"]["mean"] == pytest.approx(expected / 11160.0, rel=0.02)
    assert doc["p_no_failure"] == 0.0 and doc["p_no_failure_ci95"][0] == 0.0
    assert doc["gpu_hours"]["p50"] == pytest.approx(doc["completion_s"]["p50"] * 16384 / 3600, rel=1e-12)
    assert doc["cost"] is None


def test_without_failures_a_run_is_work_plus_stalls(run_json: RunJson) -> None:
    # docs/model.md §10, by hand: M far beyond the run, τ = 1 h, W = 10.5 h, δ = 3.24 s: ten full
    # periods and a last half one, each ending with a checkpoint: 10.5 h + 11 × 3.24 s.
    doc = run_json("plan", "--work", "10.5h", "--interval", "1h", "--mtbf", "1e6d", "--runs", "50")
    assert doc["completion_s"]["p10"] == pytest.approx(10.5 * 3600 + 11 * 3.24, rel=1e-12)
    assert doc["completion_s"]["p90"] == doc["completion_s"]["p10"]
    assert doc["p_no_failure"] == 1.0 and doc["failures"]["mean"] == 0.0
    # Asynchronous: stalls of s = 6.48 TB / 400 TB/s, and the last persist (3.24 s) is waited for.
    doc = run_json(
        "plan", "--work", "10.5h", "--interval", "1h", "--mtbf", "1e6d", "--runs", "50", "--snapshot-bw", "400TB/s"
    )
    assert doc["completion_s"]["p50"] == pytest.approx(10.5 * 3600 + 11 * 6.48e12 / 400e12 + 3.24, rel=1e-12)


def _one_run(rng: np.random.Generator, tau: float, delta: float, restart: float, mtbf: float, work: float) -> float:
    """One run, checkpoint by checkpoint: renewal at each failure, restarts that can be interrupted."""
    elapsed, kept, restarting = 0.0, 0.0, False
    while True:
        x = float(rng.exponential(mtbf))
        clock = restart if restarting else 0.0
        while clock <= x:
            piece = min(tau, work - kept)
            end = clock + piece + delta
            if end > x:
                break
            clock, kept = end, kept + piece
            if kept >= work * (1 - 1e-12):
                return elapsed + clock
        elapsed, restarting = elapsed + x, True


def test_agrees_with_an_event_by_event_simulation() -> None:
    tau, delta, restart, mtbf, work = 900.0, 60.0, 600.0, 7200.0, 2 * DAY
    rng = np.random.default_rng(11)
    reference = np.array([_one_run(rng, tau, delta, restart, mtbf, work) for _ in range(3000)])
    ours = complete(
        Schedule.single(interval_s=tau, stall_s=delta, restart_s=restart),
        Failures(mtbf),
        work_s=work,
        runs=6000,
        seed=3,
    ).times_s
    error = math.sqrt(reference.var() / reference.size + ours.var() / ours.size)
    assert abs(ours.mean() - reference.mean()) < 4 * error
    for q in (10, 50, 90):
        assert np.percentile(ours, q) == pytest.approx(np.percentile(reference, q), rel=0.01)


@pytest.mark.parametrize(
    ("preset", "extra"),
    [("llama3-405b-async", []), ("gemini-inmemory", []), ("llama3-405b", ["--shape", "0.774"])],
)
def test_other_strategies_finish_at_w_over_effective(run_json: RunJson, preset: str, extra: list[str]) -> None:
    doc = run_json("plan", "--preset", preset, "--work", "30d", "--runs", "2000", *extra)
    spread = (doc["completion_s"]["p90"] - doc["completion_s"]["p10"]) / (2 * 1.2816)
    # With a memory level W rounds up by less than one memory interval and adds the last storage stall.
    slack = (doc["memory_interval_s"] or 0.0) + 90.0 if doc["memory_interval_s"] else 0.0
    assert abs(doc["completion_s"]["mean"] - doc["expected_s"]) < 5 * spread / math.sqrt(2000) + slack


def test_steps_and_step_time(run_json: RunJson) -> None:
    doc = run_json("plan", "--steps", "100000", "--step-time", "4s", "--runs", "100")
    assert doc["work_s"] == 400000.0 and doc["steps"] == 100000


def test_the_same_seed_gives_the_same_runs(run_json: RunJson) -> None:
    first = run_json("plan", "--work", "5d", "--runs", "200", "--seed", "4")
    again = run_json("plan", "--work", "5d", "--runs", "200", "--seed", "4")
    other = run_json("plan", "--work", "5d", "--runs", "200", "--seed", "5")
    assert first["completion_s"] == again["completion_s"]
    assert first["completion_s"] != other["completion_s"]
    assert first["seed"] == 4


def test_deadline_cost_and_gpu_hours(run_json: RunJson) -> None:
    doc = run_json("plan", "--work", "10d", "--runs", "400", "--deadline", "10.81d", "--gpu-hour-cost", "2.5")
    assert 0.0 < doc["p_deadline"] < 1.0
    low, high = doc["p_deadline_ci95"]
    assert low < doc["p_deadline"] < high
    assert doc["cost"]["mean"] == pytest.approx(doc["gpu_hours"]["mean"] * 2.5, rel=1e-12)
    assert run_json("plan", "--work", "10d", "--runs", "100", "--deadline", "30d")["p_deadline"] == 1.0
    assert run_json("plan", "--work", "10d", "--runs", "100", "--deadline", "10d")["p_deadline"] == 0.0


def test_table(run: Run) -> None:
    out = run("plan", "--work", "54d", "--deadline", "58.5d").stdout
    assert "Whole runs" in out and "wall time" in out
    assert "W / effective = 58.4 d" in out
    assert "P(finished within 58.5 d)" in out


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        ([], "--work"),
        (["--work", "5d", "--steps", "10"], "--work"),
        (["--work", "0s"], "--work"),
        (["--work", "5"], "--work"),
        (["--steps", "100"], "--steps"),
        (["--steps", "1.5", "--step-time", "1s"], "--steps"),
        (["--work", "5d", "--runs", "0"], "--runs"),
        (["--work", "5d", "--runs", "1.5"], "--runs"),
        (["--work", "5d", "--runs", "2e6"], "--runs"),
        (["--work", "5d", "--runs", "lots"], "--runs"),
        (["--work", "5d", "--deadline", "-1d"], "--deadline"),
        (["--work", "5d", "--seed", "-1"], "--seed"),
        (["--work", "1000d", "--mtbf", "1min", "--restart", "10min"], "--work"),
        (["--work", "5000d", "--runs", "1e6"], "--runs"),
    ],
)
def test_bad_input(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("plan", *args, "--json"), culprit)


def test_plan_json_loads_no_table_or_statistics_library() -> None:
    assert not _modules_loaded("plan", "--work", "1d", "--runs", "10", "--json") & {"rich", "scipy", "tomli_w"}


def test_api_plan_matches_the_command(run: Run) -> None:
    outcome = api.plan("llama3-405b", work=5 * DAY, runs=100, seed=9)
    doc = json.loads(run("plan", "-p", "llama3-405b", "--work", "5d", "--runs", "100", "--seed", "9", "--json").stdout)
    assert outcome.to_dict() == doc
    assert outcome.completion is not None and outcome.completion.times_s.size == 100


# ------------------------------------------------------------- the whole-run library, by hand

NO_FAILURE = Failures(1e15)  # P(a failure within a run of hours) ≈ 1e-11: every run is the no-failure one


@pytest.mark.parametrize(
    ("work", "expected"),
    [
        # 3 × 700.7 s is 2102.1000000000004 s in floating point, and W / τ = 3.0000000000000004: still exactly
        # three periods, three checkpoints of 60 s, no empty fourth one: W + 3 × 60 s.
        (3 * 700.7, 3 * 700.7 + 3 * 60.0),
        # W = 2.5 τ: two full periods and a half one, each ending with a checkpoint: W + 3 × 60 s.
        (2.5 * 700.7, 2.5 * 700.7 + 3 * 60.0),
    ],
)
def test_a_run_without_failures_has_one_checkpoint_per_period(work: float, expected: float) -> None:
    schedule = Schedule.single(interval_s=700.7, stall_s=60.0, restart_s=600.0)
    done = complete(schedule, NO_FAILURE, work_s=work, runs=20, seed=1)
    assert done.periods == 3
    assert done.times_s == pytest.approx(np.full(20, expected), rel=1e-15)
    assert (done.failures == 0).all()


@pytest.mark.parametrize(
    ("work", "periods", "expected"),
    [
        # Memory every τ₁ = 300 s (s₁ = 10 s), storage every m = 5 (s₂ = 5 s more), durable P = 1200 s after.
        # W = 15 τ₁ exactly: 3 storage periods of 5·(300 + 10) + 5 = 1555 s, then the last persist: 5865 s.
        (15 * 300.0, 3, 3 * 1555.0 + 1200.0),
        # W = 17 τ₁: 3 full periods, a last one of 2 memory intervals, 2·310 + 5 = 625 s, then P: 6490 s.
        (17 * 300.0, 4, 3 * 1555.0 + 625.0 + 1200.0),
        # W = 16.5 τ₁ rounds up to the same 17 whole memory intervals.
        (16.5 * 300.0, 4, 3 * 1555.0 + 625.0 + 1200.0),
    ],
)
def test_memory_and_async_storage_without_failures(work: float, periods: int, expected: float) -> None:
    schedule = Schedule(interval_s=300.0, every=(5,), stalls=(10.0, 5.0), restarts=(60.0, 900.0),
                        shares=(0.7, 0.3), lag_s=1200.0)  # fmt: skip
    done = complete(schedule, NO_FAILURE, work_s=work, runs=20, seed=1)
    assert done.periods == periods
    assert done.times_s == pytest.approx(np.full(20, expected), rel=1e-15)


def test_memory_and_async_storage_grow_at_w_over_the_exact_effective() -> None:
    # Memory + asynchronous storage where the lag matters: τ₁ 300 s, m 5, s₁ 10 s, s₂ 5 s, P 1200 s,
    # q 0.7, r₁ 60 s, r₂ 900 s, M 1 h. The exact effective time, by the independent linear solve over
    # states (tests/test_sim_independent.py), is 0.72647 (0.80621 were the copy durable at once). The
    # start and the end of a run add a constant, which cancels in the growth from W = 20 to 220 storage
    # periods: (E[T(220 P)] − E[T(20 P)]) / (200 P) must be 1 / effective within 4 standard errors
    # (about 0.15 %; ignoring the lag would be 90 standard errors away). Fixed seeds: deterministic.
    from test_sim_independent import markov, two_levels

    exact = markov(two_levels(300.0, 5, 10.0, 5.0, 0.7, 60.0, 900.0, lag=1200.0), 3600.0).effective
    assert exact == pytest.approx(0.726465, abs=1e-6)
    schedule = Schedule(interval_s=300.0, every=(5,), stalls=(10.0, 5.0), restarts=(60.0, 900.0),
                        shares=(0.7, 0.3), lag_s=1200.0)  # fmt: skip
    period, runs = 1500.0, 2000
    short = complete(schedule, Failures(3600.0), work_s=20 * period, runs=runs, seed=1).times_s
    long = complete(schedule, Failures(3600.0), work_s=220 * period, runs=runs, seed=2).times_s
    slope = (long.mean() - short.mean()) / (200 * period)
    error = math.sqrt(short.var() / runs + long.var() / runs) / (200 * period)
    assert error < 2e-3
    assert abs(slope - 1 / exact) < 4 * error


@dataclass(frozen=True)
class _Given(Failures):
    """Failures at the given times (one a cycle, the same in every run), then none."""

    times: list[float] = field(default_factory=list)

    def draw(self, rng: Any, size: int) -> Any:
        return np.full(size, self.times.pop(0) if self.times else 1e15)


@pytest.mark.parametrize(
    ("failures", "expected"),
    [
        ((), 2755.0),  # docs/model.md §10, Reference (by hand, a failure in the last persist): none
        ((2000.0,), 2000.0 + 60.0 + 1200.0),  # struck in the wait: r₁, then the whole persist again
        ((2000.0, 300.0), 2000.0 + 300.0 + 60.0 + 1200.0),  # struck again in the second wait
    ],
)
def test_a_failure_in_the_last_persist_restarts_it_after_the_restart(
    failures: tuple[float, ...], expected: float
) -> None:
    # Memory τ₁ 300 s (s₁ 10 s), storage every 5 (s₂ 5 s) persisting P = 1200 s, every failure served by
    # memory (q = 1, r₁ = 60 s), W = 5 τ₁: the last storage checkpoint is written at 5 × 310 + 5 = 1555 s and
    # waited for until 2755 s. A failure in that wait leaves it committed (§8.4: a memory-served failure does
    # not cancel a persist), but the wait made no progress, so the whole P is still ahead after the restart.
    schedule = Schedule(interval_s=300.0, every=(5,), stalls=(10.0, 5.0), restarts=(60.0, 900.0),
                        shares=(1.0, 0.0), lag_s=1200.0)  # fmt: skip
    done = complete(schedule, _Given(1e15, times=list(failures)), work_s=1500.0, runs=3, seed=1)
    assert done.times_s == pytest.approx(np.full(3, expected), rel=1e-15)
    assert (done.failures == len(failures)).all()
