"""Just-in-time recovery and failures with notice (docs/model.md §13)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.model import recovery
from ckptcalc.model.evaluation import Config, evaluate
from ckptcalc.model.tiers import Tiers, effective

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

# Llama 3 405B (docs/model.md §2.1): δ = 3.24 s, r = 600 s, M = 3.1 h.
LLAMA = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
DELTA, RESTART, MTBF = 3.24, 600.0, 11160.0


def test_jit_share_09_is_the_one_step_tier_of_the_recursion(run_json: RunJson) -> None:
    # docs/model.md §13.4: p_j = 0.9, t_step = 10 s; 83 steps between storage checkpoints, 0.93965.
    doc = run_json("optimize", "--preset", "llama3-405b", "--jit-share", "0.9", "--step-time", "10s")
    steps = doc["interval_s"] / 10.0
    assert steps == round(steps) == 83
    direct = Tiers(
        tau1_s=10.0,
        every=(83.0,),
        stalls=(0.0, DELTA),
        lag_s=0.0,
        shares=(0.9, 0.1),
        restarts=(RESTART + DELTA, RESTART),
    )
    assert doc["effective"] == pytest.approx(float(effective(direct, MTBF).effective), rel=1e-12, abs=1e-12)
    assert doc["effective"] == pytest.approx(0.93965, abs=5e-6)
    assert doc["effective"] > 0.925  # the periodic baseline, docs/model.md §3
    # Its neighbours in whole steps are no better: the periodic interval is re-optimised.
    for m in (82.0, 84.0):
        assert float(effective(direct.replace(every=(m,)), MTBF).effective) < doc["effective"]
    # First order beside it: √(2δM/(1 − p_j)) = 850.39 s, effective 0.93795 (docs/model.md §13.1).
    assert doc["first_order"]["optimal_interval_s"] == pytest.approx(850.39, abs=0.01)
    assert doc["first_order"]["effective"] == pytest.approx(0.93795, abs=5e-6)
    assert doc["inputs"]["jit_share"] == 0.9
    assert doc["inputs"]["jit_bandwidth_bytes_per_s"] == 2e12
    assert doc["recovery"] == {
        "jit_share": 0.9,
        "notice_share": 0.0,
        "periodic_share": pytest.approx(0.1, abs=1e-15),
        "step_time_s": 10.0,
        "jit_save_s": pytest.approx(DELTA, abs=1e-12),
        "jit_restart_s": pytest.approx(RESTART + DELTA, abs=1e-12),
        "notice_restart_s": None,
        "periodic_needed": True,
    }


def test_every_failure_in_place_is_daly_at_one_step(run_json: RunJson) -> None:
    # docs/model.md §13.3: t_step·e^{−c/M}/(M(e^{t_step/M} − 1)), c = 603.24 s: 0.946957.
    doc = run_json("optimize", "--preset", "llama3-405b", "--jit-share", "1", "--step-time", "10s")
    c = RESTART + DELTA
    closed = 10.0 * math.exp(-c / MTBF) / (MTBF * math.expm1(10.0 / MTBF))
    assert doc["effective"] == pytest.approx(closed, rel=1e-12)
    assert doc["effective"] == pytest.approx(0.946957, abs=5e-7)
    assert doc["interval_s"] is None and doc["optimal_interval_s"] is None
    assert doc["recovery"]["periodic_needed"] is False
    assert any("no periodic checkpoint is needed" in w for w in doc["warnings"])


def test_jit_bandwidth_sets_the_save() -> None:
    # δ_j = 6.48 TB / 0.5 TB/s = 12.96 s, so c_j = 612.96 s (docs/model.md §13.3).
    c = LLAMA.replace(step_s=10.0, jit_share=1.0, jit_bandwidth=0.5e12)
    assert c.jit_restart_s == pytest.approx(612.96, abs=1e-9)
    closed = 10.0 * math.exp(-612.96 / MTBF) / (MTBF * math.expm1(10.0 / MTBF))
    assert evaluate(c).effective == pytest.approx(closed, rel=1e-12)


def test_notice_single_level_matches_its_closed_form() -> None:
    # docs/model.md §13.2: one synchronous level, p_n = 0.1: τ* = 280.56 s, effective 0.926074,
    # by the closed form τ·ā / (M′·(e^{(τ+δ)/M′} − 1)) and its Lambert-W optimum.
    result = evaluate(LLAMA.replace(notice_share=0.1))
    p = 0.1
    a_n, a_r = math.exp(-(RESTART + DELTA) / MTBF), math.exp(-RESTART / MTBF)
    a_bar = p * a_n + (1 - p) * a_r
    h = p * a_n / (1 - p + p * a_n)
    slow = MTBF / (1 - h)

    def closed(tau: float) -> float:
        return tau * a_bar / (slow * math.expm1((tau + DELTA) / slow))

    assert result.optimal_interval_s == pytest.approx(280.56, abs=0.01)
    assert result.effective == pytest.approx(closed(float(result.optimal_interval_s)), rel=1e-12)
    assert result.effective == pytest.approx(0.926074, abs=5e-7)
    for tau in (150.0, 400.0):
        assert float(evaluate(LLAMA.replace(notice_share=0.1, interval_s=tau)).effective) == pytest.approx(
            closed(tau), rel=1e-12
        )


def test_two_tiers_with_jit_and_notice() -> None:
    # Memory + asynchronous storage under the one-step tier: the periodic intervals are whole steps,
    # and the value is the recursion's on the schedule reported (docs/model.md §13.4).
    config = LLAMA.replace(
        snapshot_bandwidth=409.6e12,
        replica_survival=0.5,
        memory_bandwidth=100e12,
        memory_restart_s=60.0,
        step_s=10.0,
        jit_share=0.8,
        notice_share=0.1,
    )
    result = evaluate(config)
    memory = float(result.memory_interval_s or 0.0)
    assert memory / 10.0 == round(memory / 10.0)
    levels = config.levels()
    assert [float(v.share) for v in levels] == pytest.approx([0.05, 0.05])
    direct = Tiers(
        tau1_s=10.0,
        every=(round(memory / 10.0), float(result.storage_every or 0.0)),
        stalls=(0.0, 6.48e12 / 100e12, 6.48e12 / 409.6e12),
        lag_s=DELTA,
        shares=(0.8, 0.05, 0.05),
        restarts=(RESTART + DELTA, 60.0, RESTART),
        notice_share=0.1,
        notice_restart_s=RESTART + DELTA,
    )
    assert float(result.effective) == pytest.approx(float(effective(direct, MTBF).effective), rel=1e-12)


def test_first_order_terms() -> None:
    # docs/model.md §13.1: rework p_j·t_step/2M = 4.0323e-4, restart (0.9·603.24)/M = 0.048648.
    rework, restart = recovery.first_order_terms(
        step_s=10.0, jit_share=0.9, jit_restart_s=603.24, notice_share=0.0, notice_restart_s=603.24, mtbf_s=MTBF
    )
    assert rework == pytest.approx(4.0323e-4, rel=1e-4)
    assert restart == pytest.approx(0.048648, rel=1e-4)
    assert recovery.young_periodic(DELTA, MTBF, 0.9, 0.0) == pytest.approx(850.39, abs=0.01)


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--jit-share", "1.2", "--step-time", "10s"], "--jit-share"),
        (["--jit-share", "-0.1", "--step-time", "10s"], "--jit-share"),
        (["--notice-share", "1.5"], "--notice-share"),
        (["--jit-share", "0.6", "--notice-share", "0.5", "--step-time", "10s"], "--notice-share"),
        (["--jit-share", "0.9"], "--step-time"),
        (["--jit-share", "0.9", "--step-time", "10s", "--jit-bw", "0TB/s"], "--jit-bw"),
        (["--jit-share", "0.9", "--step-time", "10s", "--jit-bw", "-1TB/s"], "--jit-bw"),
        (["--jit-bw", "1TB/s"], "--jit-share"),
    ],
)
def test_bad_recovery_inputs(run: Run, args: list[str], culprit: str) -> None:
    for command in ("optimize", "sweep", "plan"):
        extra = {"sweep": ["--over", "mtbf"], "plan": ["--work", "1d"]}
        assert_usage_error(run(command, *args, *extra.get(command, [])), culprit)


TWO_TIERS = [
    "--snapshot-bw",
    "409.6TB/s",
    "--replica-survival",
    "0.5",
    "--memory-bw",
    "100TB/s",
    "--memory-restart",
    "1min",
]


@pytest.mark.parametrize(
    "args",
    [
        ["--jit-share", "0.9", "--step-time", "10s"],
        ["--notice-share", "0.3"],
        ["--jit-share", "1", "--step-time", "10s"],
        ["--jit-share", "0.5", "--notice-share", "0.3", "--step-time", "10s", *TWO_TIERS],
        ["--notice-share", "0.3", *TWO_TIERS],
    ],
)
def test_simulation_lands_in_its_ci_of_the_exact_value(run_json: RunJson, args: list[str]) -> None:
    # At the optimum optimize reports, the timeline (in-place recovery replaying the step in progress,
    # notice resuming where the failure struck) agrees with the exact model (docs/model.md §13).
    best = run_json("optimize", *args)
    sim = run_json("simulate", *args, "--cycles", "40000")
    low, high = sim["effective_ci95"]
    assert high - low < 0.01  # a comparison that can fail: the interval is under a point wide
    assert low <= best["effective"] <= high
    assert sim["analytic"]["exact"] == pytest.approx(best["effective"], rel=1e-12)
    assert sim["interval_s"] == best["interval_s"]
    assert sim["recovery"] == best["recovery"]


def test_plan_runs_recovery(run_json: RunJson) -> None:
    # Whole runs follow the same semantics: the mean wall time is W / effective within a few 0.1 %.
    for args in (["--jit-share", "0.6", "--notice-share", "0.3", "--step-time", "10s"], ["--notice-share", "0.3"]):
        doc = run_json("plan", *args, "--work", "10d", "--runs", "400")
        assert abs(doc["mean_vs_expected"]) < 3e-3
        assert doc["effective"] == run_json("optimize", *args)["effective"]
