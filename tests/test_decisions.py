"""Cluster scale, levers, targets, cost, steps, goodput and scripting (docs/model.md §5, §6, §8).

Expected values are worked by hand from the formulas; comments show how. Decisions
use the exact model: for one synchronous level, §3's closed form at the Lambert-W
interval, which the helpers below write out independently.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st
from references import exact_best, lambert

from ckptcalc.inputs import preset_search, presets
from ckptcalc.inputs.scenario import resolve
from ckptcalc.model import decisions as decide
from ckptcalc.model.evaluation import Config, evaluate, replace

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

LLAMA = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
PER_GPU = 11160.0 * 16384  # the Llama 3 per-GPU failure interval held by --gpus


# ------------------------------------------------------------ failure interval


def test_gpus_hold_per_gpu_rate(run_json: RunJson) -> None:
    doc = run_json("optimize", "--gpus", "100000")
    mtbf = 11160 * 16384 / 100000  # ≈ 30.5 min
    assert doc["inputs"]["mtbf_s"] == pytest.approx(mtbf)
    assert mtbf / 60 == pytest.approx(30.5, abs=0.05)
    assert doc["inputs"]["mtbf_source"] == "scaled"
    assert doc["inputs"]["gpus"] == 100000
    assert doc["inputs"]["gpu_mtbf_s"] == pytest.approx(PER_GPU)
    # the 10-minute restart alone costs about a third of the run by first order (r/M),
    # 1 − e^{−r/M} = 28.0 % of elapsed time exactly (docs/model.md §8.1)
    assert doc["first_order"]["loss"]["restart"] == pytest.approx(600 / mtbf)
    assert doc["first_order"]["loss"]["restart"] == pytest.approx(1 / 3, abs=0.02)
    assert doc["loss"]["restart"] == pytest.approx(-math.expm1(-600 / mtbf), rel=1e-12)
    # docs/model.md §5.1
    assert doc["effective"] == pytest.approx(0.678227, abs=5e-7)
    assert doc["optimal_interval_s"] == pytest.approx(106.701, abs=5e-4)
    assert doc["first_order"]["effective"] == pytest.approx(0.612323, abs=5e-7)
    assert doc["schema_version"] == 2


def test_gpu_mtbf(run_json: RunJson) -> None:
    doc = run_json("optimize", "--gpus", "16384", "--gpu-mtbf", "50700h")
    assert doc["inputs"]["mtbf_s"] == pytest.approx(50700 * 3600 / 16384)  # 3.09 h
    assert doc["inputs"]["mtbf_source"] == "gpu_mtbf"


def test_failures_in_window(run: Run, run_json: RunJson) -> None:
    doc = run_json("optimize", "--failures", "419", "--window", "54d", "--gpus", "16384")
    assert doc["inputs"]["mtbf_s"] == pytest.approx(54 * 86400 / 419)  # docs/model.md §2: ≈ 3.09 h
    assert doc["inputs"]["mtbf_source"] == "failures"
    assert doc["inputs"]["gpu_mtbf_s"] == pytest.approx(54 * 86400 / 419 * 16384)
    table = run("optimize", "--failures", "419", "--window", "54d").stdout
    assert "54.0 d / 419 failures" in table


def test_rsc_presets_match_the_paper_projection() -> None:
    # arXiv:2410.21680: 6.50 failures per 1000 node-days, 8 GPUs a node → MTTF 1.8 h at 16k, 0.23 h at 131k.
    for name, gpus, hours in (("rsc1-16k", 16384, 1.8), ("rsc1-131k", 131072, 0.23)):
        job = resolve(presets.load(name))
        assert job.config.mtbf_s / 3600 == pytest.approx(hours, abs=0.01)
        assert job.config.mtbf_s == pytest.approx(8 * 1000 / 6.5 * 86400 / gpus, rel=1e-6)
        assert job.config.restart_s == 300


# ------------------------------------------------------------------ levers


def test_levers_by_hand() -> None:
    assume = decide.LeverAssumptions(**presets.lever_assumptions())
    assert assume.snapshot_bandwidth_per_gpu == pytest.approx(25e9)
    assert assume.memory_bandwidth_per_gpu == pytest.approx(2.16e12 / 16384)
    found = {lever.key: lever for lever in decide.levers(LLAMA, 16384, assume)}
    assert set(found) == {
        "bandwidth_x2",
        "restart_half",
        "mtbf_x2",
        "async",
        "memory_replica",
        "jit_recovery",
        "elastic",
    }
    base = exact_best(3.24, 600.0, 11160.0)
    # bandwidth ×2: δ = 1.62 s
    assert found["bandwidth_x2"].effective == pytest.approx(exact_best(1.62, 600.0, 11160.0), rel=1e-12)
    # restart ÷2: the optimum does not move and effective time scales with e^{−r/M}
    assert found["restart_half"].gain_pp == pytest.approx(base * math.expm1(300 / 11160) * 100, rel=1e-9)
    # MTBF ×2: M = 22320 s
    assert found["mtbf_x2"].effective == pytest.approx(exact_best(3.24, 600.0, 22320.0), rel=1e-12)
    # async at 25 GB/s × 16384: s = 6.48e12/409.6e12, P = 3.24 s
    s = 6.48e12 / 409.6e12
    assert found["async"].effective == pytest.approx(exact_best(s, 600.0, 11160.0, lag=3.24), rel=1e-12)
    for lever in found.values():
        assert lever.gain_pp == pytest.approx((lever.effective - base) * 100)
    gains = [lever.gain_pp for lever in decide.levers(LLAMA, 16384, assume)]
    assert gains == sorted(gains, reverse=True)


def test_levers_skip_what_is_already_used() -> None:
    assume = decide.LeverAssumptions(**presets.lever_assumptions())
    job = resolve(presets.load("gemini-inmemory"))
    keys = {lever.key for lever in decide.levers(job.config, job.gpus, assume)}
    assert "memory_replica" not in keys and "async" in keys
    asynchronous = resolve(presets.load("llama3-405b-async"))
    keys = {lever.key for lever in decide.levers(asynchronous.config, asynchronous.gpus, assume)}
    assert "async" not in keys
    keys = {lever.key for lever in decide.levers(LLAMA, None, assume)}
    assert keys == {"bandwidth_x2", "restart_half", "mtbf_x2", "jit_recovery", "elastic"}


def test_levers_in_json_and_verdict(run: Run, run_json: RunJson) -> None:
    doc = run_json("optimize")
    plain = [lever for lever in doc["levers"] if not lever["key"].startswith("spares")]  # tests/test_spares.py
    assert [set(lever) for lever in plain] == [{"key", "name", "effective", "gain_pp", "break_even"}] * 8
    best = doc["levers"][0]
    table = run("optimize").stdout
    assert f"Largest single gain: {best['name']}" in " ".join(table.split())
    assert "25.0 GB/s per GPU" in table


# ------------------------------------------------------------------ targets


def test_targets_llama() -> None:
    found = decide.targets(LLAMA, 0.95, PER_GPU)
    # No bandwidth reaches 95 %: even free checkpoints leave e^{−r/M} = 94.77 % (docs/model.md §8.1).
    assert math.exp(-600 / 11160) < 0.95
    assert found.bandwidth is None
    # restart: effective time scales with e^{−r/M} at a fixed optimum → r = M·ln(effective at r = 0 / 0.95)
    assert found.restart_s == pytest.approx(11160 * math.log(exact_best(3.24, 0.0, 11160.0) / 0.95), rel=1e-12)
    assert found.mtbf_s is not None
    assert exact_best(3.24, 600.0, found.mtbf_s) == pytest.approx(0.95, abs=1e-9)
    assert found.gpus == math.floor(PER_GPU / found.mtbf_s)
    for value, change in (
        (found.restart_s, {"restart_s": found.restart_s}),
        (found.mtbf_s, {"mtbf_s": found.mtbf_s}),
    ):
        assert value is not None
        assert evaluate(replace(LLAMA, **change)).effective == pytest.approx(0.95, abs=1e-9)


def test_targets_bandwidth_when_reachable() -> None:
    found = decide.targets(LLAMA, 0.92, None)
    assert found.bandwidth is not None
    assert exact_best(6.48e12 / found.bandwidth, 600.0, 11160.0) == pytest.approx(0.92, abs=1e-9)
    assert exact_best(6.48e12 / (found.bandwidth * 0.999), 600.0, 11160.0) < 0.92
    assert found.gpus is None  # no per-GPU rate without a GPU count


def test_targets_restart_for_levels() -> None:
    job = resolve(presets.load("gemini-inmemory"))
    found = decide.targets(job.config, 0.9642, None)
    assert found.restart_s is not None and found.restart_s > 600
    assert evaluate(replace(job.config, restart_s=found.restart_s)).effective == pytest.approx(0.9642, abs=1e-9)


def test_targets_bisection_for_levels() -> None:
    job = resolve(presets.load("gemini-inmemory"))
    found = decide.targets(job.config, 0.965, job.gpu_mtbf_s)
    assert found.bandwidth is not None and found.mtbf_s is not None
    # Storage serves 1 % of failures: even a zero storage restart leaves the loss above 3.5 %.
    assert found.restart_s is None
    assert evaluate(replace(job.config, restart_s=1e-9)).total > 0.035
    changes: list[dict[str, Any]] = [{"bandwidth": found.bandwidth}, {"mtbf_s": found.mtbf_s}]
    for change in changes:
        assert evaluate(replace(job.config, **change)).effective == pytest.approx(0.965, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(
    delta=st.floats(0.1, 300.0), mtbf=st.floats(3600.0, 1e6), restart=st.floats(1.0, 3600.0), goal=st.floats(0.5, 0.99)
)
def test_restart_closed_form_agrees_with_bisection(delta: float, mtbf: float, restart: float, goal: float) -> None:
    config = Config(checkpoint_bytes=delta * 1e9, bandwidth=1e9, mtbf_s=mtbf, restart_s=restart)
    closed = decide.targets(config, goal, None)
    solved = decide._solve(lambda x: replace(config, restart_s=1.0 / x), goal, 1.0 / restart)
    event("reachable" if closed.restart_s is not None else "unreachable")
    if closed.restart_s is None:
        assert solved is None or 1.0 / solved <= 1e-9
    else:
        assert solved is not None
        assert 1.0 / solved == pytest.approx(closed.restart_s, rel=1e-9)


def test_targets_cli(run: Run, run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b", "--target", "0.95")
    assert doc["target"] == 0.95
    assert set(doc["targets"]) == {"bandwidth_bytes_per_s", "restart_s", "mtbf_s", "gpus", "unbounded"}
    assert doc["targets"]["bandwidth_bytes_per_s"] is None
    assert doc["targets"]["restart_s"] == pytest.approx(11160 * math.log(exact_best(3.24, 0.0, 11160.0) / 0.95))
    table = run("optimize", "--target", "95%").stdout
    assert "not reachable" in table


# ------------------------------------------------------------ cost and steps


def test_cost(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b", "--gpu-hour-cost", "2.5")
    hours = (1 - exact_best(3.24, 600.0, 11160.0)) * 16384 * 24  # 0.074996 × 393 216 ≈ 29 490 GPU-hours a day
    assert doc["lost_gpu_hours_per_day"] == pytest.approx(hours, rel=1e-12)
    assert hours == pytest.approx(29490, abs=1)
    assert doc["lost_cost_per_day"] == pytest.approx(hours * 2.5)
    assert doc["lost_cost_per_30_days"] == pytest.approx(hours * 2.5 * 30)


def test_no_cost_without_gpus(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "gemini-storage-only", "--gpus", "16384")
    assert doc["lost_gpu_hours_per_day"] is not None
    assert doc["lost_cost_per_day"] is None


def test_steps_and_settings(run: Run, run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b", "--step-time", "12s")
    assert doc["optimal_interval_steps"] == round(lambert(3.24, 11160) / 12)  # 266.8 s / 12 s → 22
    assert doc["levels"][0]["optimal_interval_steps"] == 22
    assert doc["settings"]["megatron"] == "--save-interval 22"
    assert doc["settings"]["torchtitan"] == "[checkpoint] interval = 22"
    assert doc["settings"]["scr"] == "SCR_CHECKPOINT_SECONDS=267"
    table = run("optimize", "--step-time", "12s").stdout
    assert "--save-interval 22" in table and "[checkpoint] interval = 22" in table
    assert run_json("optimize", "--step-time", "1h")["optimal_interval_steps"] == 1  # at least one step


def test_steps_per_level(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "gemini-inmemory", "--step-time", "10s")
    memory, storage = doc["levels"]
    assert memory["optimal_interval_steps"] == round(memory["optimal_interval_s"] / 10)
    # Storage comes with every m-th memory checkpoint, so its steps are m × memory's.
    assert doc["optimal_interval_steps"] == memory["optimal_interval_steps"] * doc["optimal_storage_every"]
    assert storage["optimal_interval_steps"] == doc["optimal_interval_steps"]
    assert storage["optimal_interval_s"] == pytest.approx(memory["optimal_interval_s"] * doc["optimal_storage_every"])
    assert doc["settings"]["megatron_memory"] == f"--non-persistent-save-interval {memory['optimal_interval_steps']}"


def test_goodput(run: Run, run_json: RunJson) -> None:
    doc = run_json("optimize", "--discard", "0.05")
    assert doc["goodput"] == pytest.approx(doc["effective"] * 0.95)
    assert "Goodput: 87.9 %" in run("optimize", "--discard", "5%").stdout  # 0.925004 × 0.95 = 0.87875


# ---------------------------------------------------------------- scripting


def test_value(run: Run) -> None:
    result = run("optimize", "--preset", "llama3-405b", "--value", "optimal_interval_s")
    assert result.exit_code == 0
    assert float(result.stdout) == pytest.approx(lambert(3.24, 11160), rel=1e-12)
    assert result.stdout.count("\n") == 1
    assert float(run("optimize", "--value", "loss.restart").stdout) == pytest.approx(-math.expm1(-600 / 11160))
    assert float(run("optimize", "--value", "first_order.loss.restart").stdout) == pytest.approx(600 / 11160)
    assert run("optimize", "--value", "dominant").stdout.strip() == "restart"
    assert run("optimize", "--value", "inputs.gpus").stdout.strip() == "16384"


def test_check(run: Run, tmp_path: Path) -> None:
    shipped = sorted(str(p) for p in preset_search.shipped_dir().glob("*.toml"))
    result = run("check", *shipped, "--min-effective", "0.9")
    assert result.exit_code == 3
    failing = {line.split()[1].rstrip(":") for line in result.stdout.splitlines() if line.startswith("FAIL")}
    expected = {p for p in shipped if float(evaluate(resolve(presets.load(p)).config).effective) < 0.9}
    assert failing == expected and failing
    passing = run("check", "llama3-405b", "bloom-176b", "--min-effective", "0.9")
    assert passing.exit_code == 0
    assert "all pass" in passing.stdout
    doc = json.loads(run("check", "llama3-405b", "rsc1-131k", "--min-effective", "90%", "--json").stdout)
    assert doc["passed"] is False
    assert [r["passed"] for r in doc["results"]] == [True, False]
    assert [r["interval_pinned"] for r in doc["results"]] == [False, False]


def test_check_uses_the_interval_a_preset_pins(run: Run, tmp_path: Path) -> None:
    pinned = tmp_path / "pinned.toml"
    pinned.write_text(
        '[checkpoint]\nsize = "6.5TB"\n[storage]\nbandwidth = "20GB/s"\ninterval = "5min"\n'
        '[failures]\nmtbf = "15min"\nrestart = "10min"\n'
    )
    doc = json.loads(run("check", str(pinned), "--min-effective", "0.18", "--json").stdout)
    (row,) = doc["results"]
    # docs/model.md §8.2: 17.07 % at the pinned 5 min, though the optimum would pass with 19.09 %
    assert row["interval_pinned"] is True
    assert row["interval_s"] == 300.0
    assert row["effective"] == pytest.approx(0.170696, abs=5e-7)
    assert row["passed"] is False


DECIDE_BAD = [
    (["optimize", "--gpus", "1.5"], "--gpus"),
    (["optimize", "--gpus", "-3"], "--gpus"),
    (["optimize", "--gpus", "0"], "--gpus"),
    (["optimize", "--failures", "-1", "--window", "54d"], "--failures"),
    (["optimize", "--failures", "2.5", "--window", "54d"], "--failures"),
    (["optimize", "--failures", "10"], "--failures"),
    (["optimize", "--window", "54d"], "--window"),
    (["optimize", "--mtbf", "3h", "--gpu-mtbf", "50700h"], "--gpu-mtbf"),
    (["optimize", "--mtbf", "3h", "--failures", "4", "--window", "1d"], "--failures"),
    (["optimize", "--target", "1.2"], "--target"),
    (["optimize", "--target", "0"], "--target"),
    (["optimize", "--target", "abc"], "--target"),
    (["optimize", "--value", "nope"], "--value"),
    (["optimize", "--value", "loss"], "--value"),
    (["optimize", "--value", "targets.mtbf_s"], "--value"),
    (["optimize", "--size", "1TB", "--preset", "{tmp}/nogpus.toml", "--gpu-hour-cost", "2"], "--gpu-hour-cost"),
    (["optimize", "--gpu-hour-cost", "two"], "--gpu-hour-cost"),
    (["optimize", "--step-time", "12"], "--step-time"),
    (["optimize", "--discard", "1"], "--discard"),
    (["check", "llama3-405b", "--min-effective", "2"], "--min-effective"),
    (["check", "llama3-405b"], "--min-effective"),
]


@pytest.mark.parametrize(("args", "culprit"), DECIDE_BAD)
def test_decide_bad_input(run: Run, tmp_path: Path, args: list[str], culprit: str) -> None:
    (tmp_path / "nogpus.toml").write_text('[storage]\nbandwidth = "1TB/s"\n[failures]\nmtbf = "3h"\nrestart = "5min"\n')
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert_usage_error(run(*args, "--json"), culprit)


def test_targets_say_when_every_value_reaches() -> None:
    # With a memory level effective time has a floor as the storage restart grows (a failure during
    # it may be served from memory): a target below that floor needs no restart limit at all.
    job = resolve(presets.load("gemini-inmemory"))
    found = decide.targets(job.config, 0.5, None)
    assert found.restart_s is None
    assert found.unbounded == ("restart_s",)
    assert evaluate(replace(job.config, restart_s=1e12)).effective >= 0.5
    assert decide.targets(job.config, 0.965, None).unbounded == ()


def test_remembered_lever_values_are_the_computed_ones() -> None:
    """The levers' optimal effective times are remembered by value: asking again gives the same numbers,
    a changed job is computed afresh, and the memory holds at most REMEMBER jobs."""
    from ckptcalc.model import decisions as decide
    from ckptcalc.model.evaluation import Config, evaluate

    decide._REMEMBERED.clear()
    job = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
    fresh = decide.levers(job, None, None)
    assert len(decide._REMEMBERED) == len(fresh) + 1  # the job itself, the base of the gains
    again = decide.levers(job, None, None)
    assert [(lever.key, lever.effective) for lever in again] == [(lever.key, lever.effective) for lever in fresh]
    for lever in fresh:  # each is the optimum of its changed job, computed directly
        assert lever.effective == float(evaluate(lever.changed.optimal()).effective)
    other = decide.levers(job.replace(restart_s=300.0), None, None)
    assert other[0].effective != fresh[0].effective
    for i in range(decide.REMEMBER + 5):
        decide._effective(job.replace(mtbf_s=10_000.0 + i))
    assert len(decide._REMEMBERED) == decide.REMEMBER
