"""Just-in-time recovery and failures with notice (docs/model.md §13)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.mechanisms import recovery
from ckptcalc.mechanisms.recovery import with_shares
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
    c = with_shares(LLAMA, 1.0, None).replace(step_s=10.0, **{recovery.BANDWIDTH: 0.5e12})
    assert recovery.jit_restart_s(c) == pytest.approx(612.96, abs=1e-9)
    closed = 10.0 * math.exp(-612.96 / MTBF) / (MTBF * math.expm1(10.0 / MTBF))
    assert evaluate(c).effective == pytest.approx(closed, rel=1e-12)


def test_notice_single_level_matches_its_closed_form() -> None:
    # docs/model.md §13.2: one synchronous level, p_n = 0.1: τ* = 280.56 s, effective 0.926074,
    # by the closed form τ·ā / (M′·(e^{(τ+δ)/M′} − 1)) and its Lambert-W optimum.
    result = evaluate(with_shares(LLAMA, None, 0.1))
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
        assert float(evaluate(with_shares(LLAMA, None, 0.1).replace(interval_s=tau)).effective) == pytest.approx(
            closed(tau), rel=1e-12
        )


def test_two_tiers_with_jit_and_notice() -> None:
    # Memory + asynchronous storage under the one-step tier: the periodic intervals are whole steps,
    # and the value is the recursion's on the schedule reported (docs/model.md §13.4).
    config = with_shares(
        LLAMA.replace(
            snapshot_bandwidth=409.6e12,
            replica_survival=0.5,
            memory_bandwidth=100e12,
            memory_restart_s=60.0,
            step_s=10.0,
        ),
        0.8,
        0.1,
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
        nowhere_share=0.1,
        nowhere_restart_s=RESTART + DELTA,
    )
    assert float(result.effective) == pytest.approx(float(effective(direct, MTBF).effective), rel=1e-12)


def test_first_order_terms() -> None:
    # docs/model.md §13.1: rework p_j·t_step/2M = 4.0323e-4, restart (0.9·603.24)/M = 0.048648.
    rework, restart = recovery.first_order_terms(
        step_s=10.0, jit_share=0.9, jit_restart_s=603.24, notice_share=0.0, notice_restart_s=603.24, mtbf_s=MTBF
    )
    assert rework == pytest.approx(4.0323e-4, rel=1e-4)
    assert restart == pytest.approx(0.048648, rel=1e-4)
    # §13.5: each share takes its own restart; with an in-place restart of 900 s beside notice's 603.24 s,
    # (0.8·900 + 0.1·603.24)/M = 780.324/11 160 = 0.0699215.
    _, both = recovery.first_order_terms(
        step_s=10.0, jit_share=0.8, jit_restart_s=900.0, notice_share=0.1, notice_restart_s=603.24, mtbf_s=MTBF
    )
    assert both == pytest.approx(0.0699215, rel=1e-6)
    # The periodic interval first order reports, √(2δM/(1 − p_j − p_n)) = √(2·3.24·11160/0.1) = 850.39 s.
    config = with_shares(
        Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=MTBF, restart_s=RESTART, step_s=10.0), 0.9, None
    )
    assert evaluate(config).first_order.optimal_interval_s == pytest.approx(850.39, abs=0.01)


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


def test_levers_list_just_in_time_recovery(run_json: RunJson) -> None:
    # llama3-405b has none: the lever assumes 90 % in place at the storage bandwidth and 10 s steps, which
    # is the job of docs/model.md §13.4: 0.93965 against 0.92500, +1.4647 pp.
    doc = run_json("optimize", "--preset", "llama3-405b")
    lever = next(v for v in doc["levers"] if v["key"] == "jit_recovery")
    assert "90.0 % of failures in place, save at storage bandwidth, 10.0 s steps assumed" in lever["name"]
    with_it = run_json("optimize", "--preset", "llama3-405b", "--jit-share", "0.9", "--step-time", "10s")
    assert lever["effective"] == pytest.approx(with_it["effective"], rel=1e-12)
    assert lever["gain_pp"] == pytest.approx((with_it["effective"] - doc["effective"]) * 100, abs=1e-9)
    assert lever["gain_pp"] == pytest.approx(1.4647, abs=1e-3)
    # Configured, it shows its worth as "without it" (a loss), and notice as well.
    doc = run_json("optimize", "--preset", "llama3-405b", "--jit-share", "0.9", "--notice-share", "0.05",
                   "--step-time", "10s")  # fmt: skip
    keys = {v["key"]: v for v in doc["levers"]}
    assert "jit_recovery" not in keys
    without = run_json("optimize", "--preset", "llama3-405b", "--notice-share", "0.05")
    assert keys["without_jit"]["effective"] == pytest.approx(without["effective"], rel=1e-12)
    assert keys["without_jit"]["gain_pp"] < 0 and keys["without_notice"]["gain_pp"] < 0


def test_preset_levers_override_the_assumption(run_json: RunJson, run: Run, tmp_path: Any) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('base = "llama3-405b"\n[levers]\njit_share = 0.5\njit_bandwidth = "1TB/s"\njit_step_time = "20s"\n')
    doc = run_json("optimize", "--preset", str(path))
    lever = next(v for v in doc["levers"] if v["key"] == "jit_recovery")
    assert "50.0 % of failures in place, save at 1.00 TB/s, 20.0 s steps assumed" in lever["name"]
    same = run_json("optimize", "--jit-share", "0.5", "--jit-bw", "1TB/s", "--step-time", "20s")
    assert lever["effective"] == pytest.approx(same["effective"], rel=1e-12)
    path.write_text('base = "llama3-405b"\n[levers]\njit_share = 1.5\n')
    assert_usage_error(run("optimize", "--preset", str(path)), "levers.jit_share")
    path.write_text('base = "llama3-405b"\n[levers]\njit = 1\n')
    assert_usage_error(run("optimize", "--preset", str(path)), "levers.jit")


def test_shipped_jit_preset(run_json: RunJson) -> None:
    # presets/llama3-405b-jit.toml: M = 54 d / 466 = 2.78 h, 70 % in place, 10 % with notice, 6 s steps.
    doc = run_json("optimize", "--preset", "llama3-405b-jit")
    assert doc["inputs"]["jit_share"] == 0.7 and doc["inputs"]["notice_share"] == 0.1
    assert doc["recovery"]["periodic_share"] == pytest.approx(0.2)
    assert doc["interval_s"] / 6.0 == doc["optimal_interval_steps"]
    direct = Tiers(
        tau1_s=6.0,
        every=(float(doc["optimal_interval_steps"]),),
        stalls=(0.0, DELTA),
        lag_s=0.0,
        shares=(0.7, 0.2),
        restarts=(RESTART + DELTA, RESTART),
        nowhere_share=0.1,
        nowhere_restart_s=RESTART + DELTA,
    )
    assert doc["effective"] == pytest.approx(float(effective(direct, 2.78 * 3600).effective), rel=1e-12)


def test_compare_and_sweep_over_the_shares(run_json: RunJson) -> None:
    doc = run_json("compare", "llama3-405b-jit", "--what-if", "jit_share=0.9", "--what-if", "notice_share=0.2")
    _, jit, notice = doc["scenarios"]
    assert jit["interval_s"] is None and jit["recovery"]["periodic_needed"] is False  # 0.9 + 0.1: none needed
    assert notice["recovery"]["notice_share"] == 0.2
    alone = run_json("optimize", "--preset", "llama3-405b-jit", "--notice-share", "0.2")
    assert notice["effective"] == pytest.approx(alone["effective"], rel=1e-12)
    # The sweep evaluates the grid as arrays; each point is the scalar optimum.
    sweep = run_json("sweep", "--preset", "llama3-405b-jit", "--over", "jit_share", "--from", "0", "--to", "0.8",
                     "--points", "3")  # fmt: skip
    assert sweep["values"] == pytest.approx([0.0, 0.4, 0.8])
    for value, eff, interval in zip(sweep["values"], sweep["effective"], sweep["interval_s"], strict=True):
        point = run_json("optimize", "--preset", "llama3-405b-jit", "--jit-share", f"{value:g}")
        assert eff == pytest.approx(point["effective"], rel=1e-9)
        assert interval == point["interval_s"]
    notice = run_json("sweep", "--preset", "llama3-405b-jit", "--over", "notice-share", "--points", "2")
    assert max(notice["values"]) < 0.3


def test_a_what_if_on_a_job_without_steps_assumes_the_levers_step(run_json: RunJson, tmp_path: Any) -> None:
    """docs/model.md §13.4: llama3-405b states no step time; the column replays the lever's 10 s step, and says so."""
    doc = run_json("compare", "llama3-405b", "--what-if", "jit_share=0.9")
    column = doc["scenarios"][1]
    assert column["name"] == "jit_share=0.9 (10.0 s steps assumed)"
    assert column["effective"] == pytest.approx(0.939651, abs=5e-7)
    stated = run_json("optimize", "--preset", "llama3-405b", "--jit-share", "0.9", "--step-time", "10s")
    assert column["effective"] == pytest.approx(stated["effective"], rel=1e-12)
    # A preset's own lever assumption is the one used.
    preset = tmp_path / "slow.toml"
    preset.write_text('base = "llama3-405b"\n[levers]\njit_step_time = "1min"\n')
    slow = run_json("compare", str(preset), "--what-if", "jit_share=0.9")["scenarios"][1]
    assert slow["name"] == "jit_share=0.9 (1.00 min steps assumed)"
    by_flags = run_json("optimize", "--preset", "llama3-405b", "--jit-share", "0.9", "--step-time", "1min")
    assert slow["effective"] == pytest.approx(by_flags["effective"], rel=1e-12)


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--over", "jit-share", "--from", "0", "--to", "0.95"], "--to"),
        (["--over", "jit-share", "--from", "-0.1", "--to", "0.5"], "--from"),
    ],
)
def test_bad_share_sweeps(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("sweep", "--preset", "llama3-405b-jit", *args), culprit)
    assert_usage_error(run("sweep", "--over", "jit-share", "--from", "0", "--to", "0.5"), "--step-time")


RECOVERED_LOG = """\
{"time": 0, "event": "run_start"}
{"time": 100, "event": "checkpoint_start"}
{"time": 110, "event": "checkpoint_end"}
{"time": 160, "event": "failure"}
{"time": 165, "event": "recovery", "kind": "in_place", "resumed_from": 150}
{"time": 200, "event": "restart_end"}
{"time": 250, "event": "failure"}
{"time": 251, "event": "recovery", "kind": "notice"}
{"time": 280, "event": "restart_end"}
{"time": 300, "event": "run_end"}
"""


def test_analyze_reads_in_place_and_notice_recoveries(run_json: RunJson, run: Run, tmp_path: Any) -> None:
    # By hand: 300 s; restarts 40 + 30 s; a 10 s stall; the in-place recovery loses 160 − 150 = 10 s
    # (without it, back to the checkpoint at 100: 60 s), the one with notice nothing (else 150 s).
    path = tmp_path / "run.jsonl"
    path.write_text(RECOVERED_LOG)
    doc = run_json("analyze", str(path), "--time-unit", "s")
    realised = doc["realised"]
    assert realised["restart"] == pytest.approx(70 / 300)
    assert realised["write"] == pytest.approx(10 / 300)
    assert realised["rework"] == pytest.approx(10 / 300)
    assert realised["useful"] == pytest.approx(210 / 300)
    # The canonical log keeps them, and reads back the same.
    events = run("events", str(path), "--time-unit", "s")
    assert '"event": "recovery", "resumed_from": 150.0, "kind": "in_place"' in events.stdout
    again = tmp_path / "again.jsonl"
    again.write_text(events.stdout)
    assert run_json("analyze", str(again))["realised"] == realised
    for bad, culprit in (
        ('"kind": "elsewhere"', "in_place or notice"),
        ('"kind": "in_place", "resumed_from": 170', "resumed_from is later than the failure"),
    ):
        path.write_text(RECOVERED_LOG.replace('"kind": "in_place", "resumed_from": 150', bad))
        assert_usage_error(run("analyze", str(path), "--time-unit", "s"), culprit)
    path.write_text(RECOVERED_LOG.replace('{"time": 160, "event": "failure"}\n', ""))
    assert_usage_error(run("analyze", str(path), "--time-unit", "s"), "recovery without a failure")


def test_jit_bandwidth_per_gpu(run_json: RunJson) -> None:
    # 100 GB/s per GPU × 16 384 GPUs = 1.6384 PB/s: δ_j = 6.48 TB / 1.6384 PB/s = 3.955 ms.
    doc = run_json("optimize", "--jit-share", "0.9", "--step-time", "10s", "--jit-bw", "100GB/s/gpu")
    assert doc["inputs"]["jit_bandwidth_bytes_per_s"] == pytest.approx(1.6384e15)
    assert doc["recovery"]["jit_save_s"] == pytest.approx(6.48e12 / 1.6384e15, rel=1e-12)
    assert doc["recovery"]["jit_restart_s"] == pytest.approx(600.0 + 6.48e12 / 1.6384e15, rel=1e-12)


def test_a_nanosecond_step_is_not_capped_by_the_search(run_json: RunJson) -> None:
    """A storage interval of 10^11 steps is searched like any other: at 1 ns steps the value is the limit
    the short steps approach (1 µs steps give it to 1e-9), not a schedule cut at a billion steps (22 %)."""
    tiny = run_json("optimize", "--jit-share", "0.9", "--step-time", "1e-9s")
    short = run_json("optimize", "--jit-share", "0.9", "--step-time", "1e-6s")
    assert tiny["effective"] == pytest.approx(short["effective"], abs=1e-9)
    assert tiny["interval_s"] == pytest.approx(short["interval_s"], rel=1e-3)


def test_a_remembered_recovery_knows_its_notice_restart() -> None:
    """docs/model.md §13.5b: the recoveries of plain-float schedules are remembered by their shares,
    restarts and M. Two jobs alike but for the write (δ 3.24 s and 324 s) share those, and differ in
    the notice restart r + δ: the second must not take the first's. One level, τ = 600 s, p_n = 0.1:
    0.919679 and 0.590844 by the closed form of §13.2."""
    found = []
    for delta in (3.24, 324.0):
        t = Tiers(
            tau1_s=600.0,
            every=(),
            stalls=(delta,),
            lag_s=0.0,
            shares=(0.9,),
            restarts=(RESTART,),
            nowhere_share=0.1,
            nowhere_restart_s=RESTART + delta,
        )
        found.append(float(effective(t, MTBF).effective))
    assert found == pytest.approx([0.919679, 0.590844], abs=2e-6)


def test_first_order_charges_notice_its_write_and_restart() -> None:
    """docs/model.md §13.5a: first order's restart term with notice p_n = 0.1 on Llama 3 adds
    p_n·(δ + r)/M = 0.1·603.24/11 160 = 0.0054054 to the periodic part's 0.9·600/11 160 = 0.0483871."""
    from ckptcalc.model.evaluation import first_order

    fo = first_order(with_shares(LLAMA, None, 0.1))
    assert float(fo.restart) == pytest.approx(0.0483871 + 0.0054054, abs=2e-7)
    plain = first_order(with_shares(LLAMA, None, 0.1).replace(interval_s=float(fo.interval_s)))
    assert float(plain.restart) == pytest.approx(float(fo.restart), rel=1e-12)


def test_break_even_share_of_a_costly_save() -> None:
    """docs/model.md §13.6: with the save from the replica at 32.4 GB/s (δ_j = 200 s), just-in-time
    recovery pays only above p* = 0.902784 at first order; the exact model crosses at 0.90943."""
    found = recovery.break_even_share(stall_s=DELTA, mtbf_s=MTBF, step_s=10.0, save_s=200.0, rest=1.0)
    assert found == pytest.approx(0.902784, abs=1e-6)
    # A save as fast as storage's pays at every share; one as slow as 400 s pays at none.
    assert recovery.break_even_share(stall_s=DELTA, mtbf_s=MTBF, step_s=10.0, save_s=DELTA, rest=1.0) is None
    assert recovery.break_even_share(stall_s=DELTA, mtbf_s=MTBF, step_s=10.0, save_s=400.0, rest=1.0) is None
    slow = with_shares(LLAMA.replace(step_s=10.0), 0.9, None).replace(**{recovery.BANDWIDTH: 6.48e12 / 200.0})

    def gain(share: float) -> float:
        return float(evaluate(slow.replace(**{recovery.JIT: share})).effective) - float(evaluate(LLAMA).effective)

    assert gain(0.905) < 0 < gain(0.915)
    # The lever reports it: the share at which its gain is zero, first order.
    key, value, unit = recovery.MECHANISM.break_even("jit_recovery", slow, None) or ("", 0.0, "")
    assert (key, unit) == (recovery.JIT, "fraction") and value == pytest.approx(0.902784, abs=1e-6)
    assert recovery.MECHANISM.break_even("without_jit", slow, None) is None


def test_a_costly_lever_carries_its_break_even() -> None:
    from ckptcalc.model.decisions import LeverAssumptions, levers

    assume = LeverAssumptions(
        snapshot_bandwidth_per_gpu=25e9, replica_survival=0.99, memory_bandwidth_per_gpu=25e9, memory_restart_s=60.0
    ).replace(**{recovery.LEVER_BANDWIDTH: 6.48e12 / 200.0})
    found = {lever.key: lever for lever in levers(LLAMA, None, assume)}
    jit = found["jit_recovery"]
    assert jit.gain_pp < 0  # at the assumed 90 %, below the break-even share
    # The first order's 90.28 % is 0.02 pp off zero: refined against the exact model, between 90.5 % and 91.5 %.
    assert jit.break_even is not None and 0.905 < jit.break_even.value < 0.915
    assert jit.break_even.pays == "above"
    assert found["mtbf_x2"].break_even is None


def test_the_classes_are_one_recursion() -> None:
    """docs/model.md §13: the home's two classes, in place and nowhere, build the schedule the
    recursion runs; the periodic tiers serve what they leave."""
    from ckptcalc.mechanisms import registry
    from ckptcalc.mechanisms.base import IN_PLACE, NOWHERE
    from ckptcalc.model import recovery as classes

    config = with_shares(LLAMA.replace(step_s=10.0), 0.6, 0.3)
    assert [(c.name, c.landing) for c in config.classes] == [("jit", IN_PLACE), ("notice", NOWHERE)]
    assert config.periodic_share == pytest.approx(0.1, abs=1e-15)
    jit, notice = registry.in_place(config), registry.nowhere(config)
    assert jit is not None and notice is not None
    assert jit.restart_s == pytest.approx(RESTART + DELTA) and notice.restart_s == pytest.approx(RESTART + DELTA)
    periodic = Tiers(tau1_s=830.0, every=(), stalls=(DELTA,), lag_s=0.0, shares=(0.1,), restarts=(RESTART,))
    built = classes.with_classes(periodic, step_s=10.0, in_place=jit, nowhere=notice)
    assert (built.tau1_s, built.shares, built.nowhere_share) == (10.0, (0.6, 0.1), 0.3)
    assert classes.without_in_place(built.replace(every=(83.0,))).tau1_s == 830.0
    # Scaled (the part of the failures served while elastic groups are up, §18.4): every class's share.
    half = registry.scaled_classes(config, 0.5)
    assert [float(c.share) for c in half.classes] == [0.3, 0.15]


def test_a_class_the_recursion_does_not_hold_is_refused() -> None:
    """A failure class landing on a tier the job lacks, or taking its share from another class, is refused,
    naming the class, never dropped (docs/model.md §20)."""
    from ckptcalc.errors import InputError
    from ckptcalc.mechanisms.base import IN_PLACE, FailureClass
    from ckptcalc.model import recovery as classes

    classes.check_modelled((FailureClass("jit", 0.9, 603.24, IN_PLACE),))
    classes.check_modelled((FailureClass("process", 0.15, 60.0, 0),), tiers=1)
    with pytest.raises(InputError) as rollback:
        classes.check_modelled((FailureClass("process", 0.15, 60.0, 1),), tiers=1)
    assert rollback.value.where == "process"
    with pytest.raises(InputError, match="taken from"):
        classes.check_modelled((FailureClass("peer", 0.1, 60.0, IN_PLACE, taken_from="node"),))


def test_its_flags_keep_their_place() -> None:
    """The home's rows follow the discard share, and the persist slowdown, anchored on the same field and
    registered after it, still follows them: flags, --help and preset keys keep their order."""
    from ckptcalc.inputs.fields import FIELDS

    order = [f.name for f in FIELDS]
    at = order.index("discard")
    assert order[at : at + 11] == [
        "discard",
        "jit_share",
        "jit_bandwidth",
        "notice_share",
        "class_share",
        "class_restart_s",
        "class_recovery",
        "class_fallback",
        "class_tier",
        "persist_slowdown",
        "max_busy",
    ]
