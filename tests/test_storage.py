"""What checkpoints cost the storage: the persist's slowdown, the storage load, compression and tier
subsets (docs/model.md §17)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st
from references import lambert

from ckptcalc.mechanisms.compression import coded_time
from ckptcalc.mechanisms.slowdown import result_share, slowed, slowed_by
from ckptcalc.model import storage
from ckptcalc.model.evaluation import Config, evaluate
from ckptcalc.simulation.timeline import Failures, Schedule, run, run_schedule

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: docs/model.md §17.1: s = 0.5 s, P = 300 s, f = 0.5, M = 3.1 h, r = 10 min (300 TB at 1 TB/s,
#: snapshots at 600 TB/s).
SLOWED = slowed_by(
    Config(checkpoint_bytes=300e12, bandwidth=1e12, snapshot_bandwidth=600e12, mtbf_s=11_160.0, restart_s=600.0),
    0.5,
)


def daly_async(tau: float, stall: float, lag: float, restart: float, mtbf: float) -> float:
    """docs/model.md §8.2, written out: τ·e^{−(r+P)/M} / (M·(e^{(τ+s)/M} − 1))."""
    return tau * math.exp(-(restart + lag) / mtbf) / (mtbf * math.expm1((tau + stall) / mtbf))


# ------------------------------------------------------------------ §17.1 interference


def test_slowed_level_is_a_longer_stall_and_a_shorter_lag() -> None:
    # docs/model.md §17.1: s + f·P = 150.5 s, (1 − f)·P = 150 s, f·P = 150 s.
    assert slowed(stall_s=0.5, persist_s=300.0, slowdown=0.5) == (150.5, 150.0, 150.0)
    assert slowed(stall_s=0.5, persist_s=300.0, slowdown=0.0) == (0.5, 300.0, 0.0)


def test_reference_optimum_moves_off_the_persist_bound() -> None:
    """docs/model.md §17.1: without the slowdown the optimum is the persist bound, 300 s (Young's
    105.6 s is below it); with f = 0.5 the first-order interval is √(2·150.5·11 160) = 1 832.8 s and
    the exact one 1 733.87 s (Lambert W with δ → 150.5 s), effective 0.78974."""
    plain = evaluate(slowed_by(SLOWED, None))
    assert plain.optimal_interval_s == pytest.approx(300.0, rel=1e-9)
    assert plain.effective == pytest.approx(0.90864, abs=1e-5)
    found = evaluate(SLOWED)
    assert found.young_interval_s == pytest.approx(1832.80, abs=0.01)
    assert found.optimal_interval_s == pytest.approx(1733.87, abs=0.01)
    assert found.optimal_interval_s == pytest.approx(lambert(150.5, 11_160.0), rel=1e-7)
    assert found.effective == pytest.approx(0.789737, abs=1e-6)
    assert found.effective == pytest.approx(daly_async(1733.8713, 150.5, 150.0, 600.0, 11_160.0), rel=1e-7)
    # The shortcut that kept the lag at P would charge f·P = 150 s more per failure: e^{−150/M} less.
    assert found.effective - 0.779194 == pytest.approx(0.010544, abs=2e-6)


def test_slowdown_share_is_the_slowed_part_of_the_write_share() -> None:
    found = evaluate(SLOWED)
    share = result_share(found)
    assert share == pytest.approx(found.write * 150.0 / 150.5, rel=1e-12)
    assert result_share(evaluate(slowed_by(SLOWED, None))) == 0.0


#: docs/model.md reference 17.1b: the job of §17.1 with an in-memory replica (300 TB at 100 TB/s: 3 s,
#: serving 0.9 of the failures, restart 1 min) written every 200 s and storage every 2 000 s (m = 10).
SLOWED_TWO = SLOWED.replace(
    replica_survival=0.9, memory_bandwidth=100e12, memory_restart_s=60.0, memory_interval_s=200.0, interval_s=2000.0
)


def test_slowdown_share_on_two_levels_weights_each_stall_by_its_writes() -> None:
    """docs/model.md reference 17.1b: a storage period of 2 000 s holds 10 memory writes of 3 s and one
    storage stall of 150.5 s, 180.5 s of stall of which f·P = 150 s is slowdown: 0.831025 of the write
    share (weighting the memory stall once, 150/153.5 = 0.977199, would be the mutant)."""
    found = evaluate(SLOWED_TWO)
    memory, top = found.levels
    assert (float(memory.level.stall_s), float(memory.interval_s)) == (3.0, 200.0)
    assert (float(top.level.stall_s), float(top.level.slowdown_s), float(top.interval_s)) == (150.5, 150.0, 2000.0)
    share = result_share(found)
    assert share / float(found.write) == pytest.approx(0.831025, abs=1e-6)
    assert share == pytest.approx(float(found.write) * 150.0 / 180.5, rel=1e-12)
    assert storage.load(SLOWED_TWO, found).slowdown_share == share


@pytest.mark.parametrize(
    ("interval", "slowdown"),
    [(None, 0.5), (400.0, 0.5), (3000.0, 0.3)],
)
def test_simulation_runs_the_slowdown_and_agrees(interval: float | None, slowdown: float) -> None:
    """The timeline slows training during each persist (no stall shortcut) and lands within its CI
    of the exact model (docs/model.md §17.1)."""
    config = slowed_by(SLOWED.replace(interval_s=interval), slowdown)
    exact = float(evaluate(config).effective)
    found = run(config, Failures(11_160.0), cycles=40_000, seed=11)
    assert found.schedule.slowdown == slowdown and found.schedule.stalls == pytest.approx((0.5,))
    assert found.schedule.lag_s == pytest.approx(300.0)
    low, high = found.ci95
    assert low <= exact <= high, (low, exact, high)
    assert high - low < 0.01
    if interval is None:
        # docs/model.md §17.1: the shortcut that kept the lag at P lies outside the interval.
        assert not low <= 0.779194 <= high


def test_simulation_without_slowdown_is_the_plain_timeline() -> None:
    """With f = 0 the slowed timeline is the plain one: same draws, same kept work."""
    from ckptcalc.simulation.interference import slowed_sums

    base = Schedule.single(interval_s=600.0, stall_s=2.0, restart_s=300.0, lag_s=100.0)
    plain = run_schedule(base, Failures(3600.0), cycles=2000, seed=5)
    totals, _, _ = slowed_sums(interval_s=600.0, stall_s=2.0, persist_s=100.0, slowdown=0.0, restart_s=300.0,
                               draw=Failures(3600.0).draw, batches=[100] * 20, seed=5, progress=None)  # fmt: skip
    assert totals[1] / totals[0] == pytest.approx(plain.effective, rel=1e-12)
    assert totals[2] / totals[0] == pytest.approx(plain.split.write, rel=1e-9)


def test_simulation_runs_slowdown_with_more_tiers(run_json: RunJson) -> None:
    """docs/model.md §17.1, §18.5: with three tiers the slowdown runs in the one event engine; the model's
    slowed top tier (not derived exactly there) within 0.1 pp or the run's interval."""
    document = run_json("simulate", "--preset", "llama3-405b-tiered", "--snapshot-bw", "409.6TB/s",
                        "--persist-slowdown", "0.5", "--cycles", "4000", "--seed", "1")  # fmt: skip
    low, high = document["effective_ci95"]
    exact = document["analytic"]["exact"]
    assert low - 1e-3 <= exact <= high + 1e-3, (exact, low, high)


def test_async_preset_optimum_moves_up(run_json: RunJson) -> None:
    """llama3-405b-async: s = 6.48 TB / 409.6 TB/s = 15.8 ms, P = 3.24 s; at f = 0.5 the stall is
    1.636 s and the optimum 189.99 s (Lambert W), above the persist bound 3.24 s."""
    plain = run_json("optimize", "--preset", "llama3-405b-async")
    found = run_json("optimize", "--preset", "llama3-405b-async", "--persist-slowdown", "0.5")
    assert plain["optimal_interval_s"] == pytest.approx(18.8, abs=0.05)
    assert found["optimal_interval_s"] == pytest.approx(189.99, abs=0.01)
    (level,) = found["levels"]
    assert level["stall_s"] == pytest.approx(6.48e12 / 409.6e12, rel=1e-9)
    assert level["lag_s"] == pytest.approx(3.24, rel=1e-12)
    assert level["slowdown_s"] == pytest.approx(1.62, rel=1e-12)
    assert found["inputs"]["persist_slowdown"] == 0.5
    assert 0 < found["storage"]["slowdown_share"] < found["loss"]["write"]


def test_table_shows_stall_and_slowdown_apart(run: Run) -> None:
    result = run("optimize", "--preset", "llama3-405b-async", "--persist-slowdown", "50%")
    assert result.exit_code == 0, result.stderr
    assert "slowdown" in result.stdout
    assert "1.62 s" in result.stdout  # f·P
    assert "3.24 s" in result.stdout  # the persist itself


def test_preset_states_the_slowdown_on_the_last_tier(tmp_path: Path, run_json: RunJson, run: Run) -> None:
    text = """schema_version = 1
[checkpoint]
size = "300TB"
[failures]
mtbf = "3.1h"
[[levels]]
name = "memory"
bandwidth = "10TB/s"
restart = "1min"
serves = 0.9
[[levels]]
name = "storage"
bandwidth = "1TB/s"
snapshot_bandwidth = "600TB/s"
persist_slowdown = 0.5
restart = "10min"
serves = 0.1
"""
    path = tmp_path / "slowed.toml"
    path.write_text(text)
    found = run_json("optimize", "--preset", str(path))
    assert found["inputs"]["persist_slowdown"] == 0.5
    assert found["levels"][-1]["slowdown_s"] == pytest.approx(150.0)
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("serves = 0.9\n", "serves = 0.9\npersist_slowdown = 0.2\n"))
    assert_usage_error(run("optimize", "--preset", str(bad)), "levels[0].persist_slowdown")


@pytest.mark.parametrize("value", ["1", "-0.1", "1.5", "100%", "nan"])
def test_slowdown_outside_its_range_is_refused(run: Run, value: str) -> None:
    result = run("optimize", "--preset", "llama3-405b-async", "--persist-slowdown", value)
    assert_usage_error(result, "--persist-slowdown")


def test_slowdown_needs_a_background_persist(run: Run) -> None:
    assert_usage_error(run("optimize", "--persist-slowdown", "0.5"), "--snapshot-bw")


# ------------------------------------------------------------------ §17.2 storage load


def llama_exact(tau: float) -> float:
    """docs/model.md §3: Daly's exact form for llama3-405b (δ = 3.24 s, r = 600 s, M = 11 160 s)."""
    return tau / (11_160.0 * math.exp(600.0 / 11_160.0) * math.expm1((tau + 3.24) / 11_160.0))


def test_llama3_load_at_its_optimum(run_json: RunJson) -> None:
    """docs/model.md §17.2: τ* = 266.762 s, busy 3.24/(266.762 + 3.24) = 1.2000 %, 6.48 TB × 86 400 /
    266.762 = 323.9 checkpoints a day = 2.0988 PB a day."""
    found = run_json("optimize", "--preset", "llama3-405b")["storage"]
    (tier,) = found["tiers"]
    assert tier["name"] == "storage" and tier["write_s"] == pytest.approx(3.24)
    assert tier["storage_busy_share"] == pytest.approx(0.0120000, abs=1e-7)
    assert tier["bytes_written_per_day"] == pytest.approx(2.09877e15, rel=1e-5)
    assert found["bytes_written_per_day"] == tier["bytes_written_per_day"]
    assert found["max_busy"] == 0.5 and found["limit_cost_pp"] is None


def test_async_preset_busy_share(run_json: RunJson) -> None:
    """llama3-405b-async: the persist P = 3.24 s every 18.8 s (+ 15.8 ms stall): 17.2 % busy; at
    f = 0.5, P/(τ + s + f·P) = 3.24/(189.991 + 1.636) = 1.6908 %."""
    document = run_json("optimize", "--preset", "llama3-405b-async")
    (tier,) = document["storage"]["tiers"]
    assert tier["write_s"] == pytest.approx(3.24)
    stall = 6.48e12 / 409.6e12
    assert tier["storage_busy_share"] == pytest.approx(3.24 / (document["interval_s"] + stall), rel=1e-12)
    assert 0.172 < tier["storage_busy_share"] < 0.173
    slowed = run_json("optimize", "--preset", "llama3-405b-async", "--persist-slowdown", "0.5")
    assert slowed["storage"]["tiers"][0]["storage_busy_share"] == pytest.approx(0.016908, abs=1e-6)


def test_every_tier_has_its_load(run_json: RunJson) -> None:
    document = run_json("optimize", "--preset", "llama3-405b-tiered")
    tiers = document["storage"]["tiers"]
    assert [t["name"] for t in tiers] == [lv["name"] for lv in document["levels"]]
    for tier, level in zip(tiers, document["levels"], strict=True):
        stall = level["stall_s"]
        assert tier["storage_busy_share"] == pytest.approx(stall / (level["interval_s"] + stall), rel=1e-12)
        assert tier["bytes_written_per_day"] == pytest.approx(6.48e12 * 86_400 / level["interval_s"], rel=1e-12)
    total = sum(t["bytes_written_per_day"] for t in tiers)
    assert document["storage"]["bytes_written_per_day"] == pytest.approx(total, rel=1e-12)


def test_busy_warning_above_the_limit(run_json: RunJson) -> None:
    """--interval 2s: 3.24/(2 + 3.24) = 61.8 % busy, above 50 % (a warning), below 70 % (none)."""
    document = run_json("optimize", "--interval", "2s")
    assert document["storage"]["tiers"][0]["storage_busy_share"] == pytest.approx(3.24 / 5.24)
    assert any("61.8 %" in w and "--max-busy" in w for w in document["warnings"])
    quiet = run_json("optimize", "--interval", "2s", "--max-busy", "0.7")
    assert not any("--max-busy" in w for w in quiet["warnings"])
    assert quiet["storage"]["max_busy"] == 0.7


def test_a_persist_busy_all_the_time_is_refused(run: Run) -> None:
    """A persist of 3.24 s every 3 s would be busy 108 % of the time: refused, naming the interval."""
    async_job = ("--preset", "llama3-405b-async", "--interval", "3s")
    assert_usage_error(run("optimize", *async_job), "--interval")
    assert_usage_error(run("simulate", *async_job, "--cycles", "2000"), "--interval")
    assert_usage_error(run("plan", *async_job, "--work", "1d"), "--interval")


def test_load_check_names_the_tier() -> None:
    """The load record flags a share ≥ 1 (the refusal's test, by hand: 3.24 s written per 3 s)."""
    found = storage.Load(
        tiers=(storage.TierLoad("storage", 3.24, 3.0, storage.busy_share(3.24, 3.0), 1.0, 1.0),),
        slowdown_share=0.0,
        max_busy=0.5,
    )
    assert found.overloaded is not None and found.overloaded.busy_share == pytest.approx(1.08)
    assert found.busy == found.tiers


@pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.2"])
def test_max_busy_out_of_range(run: Run, value: str) -> None:
    assert_usage_error(run("optimize", "--max-busy", value), "--max-busy")


def test_written_limit_holds_the_interval_and_costs_points(run_json: RunJson) -> None:
    """docs/model.md §17.2: at most 1 PB a day of 6.48 TB checkpoints is one every 6.48e12 × 86 400 /
    1e15 = 559.872 s; exact effective 0.918633 there against 0.925004 at 266.762 s: 0.6371 pp."""
    document = run_json("optimize", "--max-written-per-day", "1PB")
    assert document["optimal_interval_s"] == pytest.approx(559.872, rel=1e-9)
    assert document["effective"] == pytest.approx(llama_exact(559.872), rel=1e-9)
    found = document["storage"]
    assert found["bytes_written_per_day"] == pytest.approx(1e15, rel=1e-9)
    assert found["max_written_per_day"] == 1e15
    assert found["limit_cost_pp"] == pytest.approx(0.63713, abs=1e-5)
    assert found["limit_cost_pp"] == pytest.approx(100 * (llama_exact(266.7622) - llama_exact(559.872)), abs=1e-6)
    assert any("1.00 PB a day" in w for w in document["warnings"])
    loose = run_json("optimize", "--max-written-per-day", "3PB")
    assert loose["optimal_interval_s"] == pytest.approx(266.762, abs=1e-3)
    assert loose["storage"]["limit_cost_pp"] == 0.0


def test_written_limit_with_tiers_holds_the_top_interval(run_json: RunJson) -> None:
    """Three tiers: the limit binds the storage tier (1 PB a day of 6.48 TB: every 559.872 s at least)."""
    free = run_json("optimize", "--preset", "llama3-405b-tiered")
    assert free["interval_s"] < 2000.0
    held = run_json("optimize", "--preset", "llama3-405b-tiered", "--max-written-per-day", "0.1PB")
    top = held["storage"]["tiers"][-1]
    assert top["bytes_written_per_day"] == pytest.approx(0.1e15, rel=1e-6)
    assert held["interval_s"] == pytest.approx(5598.72, rel=1e-6)
    assert held["storage"]["limit_cost_pp"] > 0


def test_load_in_simulate_plan_compare_and_sweep(run_json: RunJson) -> None:
    per_day = 2.09877e15
    simulated = run_json("simulate", "--cycles", "2000")
    assert simulated["storage"]["bytes_written_per_day"] == pytest.approx(per_day, rel=1e-5)
    planned = run_json("plan", "--work", "1d", "--runs", "20")
    assert planned["storage"]["tiers"][0]["storage_busy_share"] == pytest.approx(0.0120000, abs=1e-7)
    compared = run_json("compare", "--what-if", "bw=1TB/s")
    assert compared["scenarios"][0]["storage"]["bytes_written_per_day"] == pytest.approx(per_day, rel=1e-5)
    swept = run_json("sweep", "--over", "interval", "--from", "100s", "--to", "1000s", "--points", "2")
    assert swept["storage_busy_share"] == pytest.approx([3.24 / 103.24, 3.24 / 1003.24])
    assert swept["bytes_written_per_day"] == pytest.approx([6.48e12 * 864, 6.48e12 * 86.4])


# ------------------------------------------------------------------ §17.3 compression

#: docs/model.md §17.3: llama3-405b compressed 4× through a 50 GB/s/gpu codec on 16 384 GPUs.
CODEC = 50e9 * 16_384


def test_coded_write_time() -> None:
    """δ′ = size/B_c + size/(c·B) = 6.48e12/8.192e14 + 6.48e12/8e12 = 0.0079102 + 0.81 s."""
    assert coded_time(6.48e12, 2e12, 4.0, CODEC) == pytest.approx(0.81791016, rel=1e-8)
    assert coded_time(6.48e12, 2e12, 4.0, None) == pytest.approx(0.81, rel=1e-12)
    assert coded_time(6.48e12, 2e12, 1.0, None) == pytest.approx(3.24, rel=1e-12)


def test_compressed_job(run_json: RunJson) -> None:
    """δ′ = 0.8179 s: the Lambert-W optimum 134.569 s, effective 0.936229; storage takes 1.62 TB a
    checkpoint, 1.62e12 × 86 400 / 134.569 = 1.0401 PB a day."""
    document = run_json("optimize", "--compression", "4", "--codec-bw", "50GB/s/gpu")
    assert document["write_s"] == pytest.approx(0.81791016, rel=1e-8)
    assert document["optimal_interval_s"] == pytest.approx(lambert(0.81791016, 11_160.0), rel=1e-7)
    assert document["optimal_interval_s"] == pytest.approx(134.569, abs=1e-3)
    assert document["effective"] == pytest.approx(llama_exact_at(134.5691, 0.81791016), rel=1e-7)
    assert document["effective"] == pytest.approx(0.936229, abs=1e-6)
    (tier,) = document["storage"]["tiers"]
    assert tier["checkpoint_bytes"] == pytest.approx(1.62e12)
    assert tier["bytes_written_per_day"] == pytest.approx(1.62e12 * 86_400 / 134.5691, rel=1e-6)
    assert document["inputs"]["compression"] == 4.0
    assert document["inputs"]["codec_bandwidth_bytes_per_s"] == pytest.approx(CODEC)


def llama_exact_at(tau: float, delta: float, restart: float = 600.0) -> float:
    return tau / (11_160.0 * math.exp(restart / 11_160.0) * math.expm1((tau + delta) / 11_160.0))


def test_compressed_reload(run_json: RunJson) -> None:
    """The reload is read the same way: 10 min of parts + 6.48e12/8.192e14 + 6.48e12/(4 × 2e12)."""
    parts = ("--detect", "5min", "--reschedule", "3min", "--warmup", "2min", "--read-bw", "2TB/s")
    plain = run_json("optimize", *parts)
    coded = run_json("optimize", *parts, "--compression", "4", "--codec-bw", "50GB/s/gpu")
    assert plain["levels"][0]["restart_s"] == pytest.approx(603.24)
    assert coded["levels"][0]["restart_s"] == pytest.approx(600.81791016, rel=1e-10)


def test_compression_lever_beside_bandwidth(run_json: RunJson) -> None:
    """llama3-405b: compressing 4× at 50 GB/s/gpu (δ′ = 0.8179 s) gains 0.936229 − 0.925004 = 1.1225 pp,
    more than doubling the bandwidth (δ = 1.62 s: 0.931601, 0.6597 pp)."""
    levers = {lv["key"]: lv for lv in run_json("optimize")["levers"]}
    assert levers["compression"]["gain_pp"] == pytest.approx(1.1225, abs=1e-4)
    assert levers["compression"]["name"] == "compress 4× at 50.0 GB/s per GPU × 16384 GPUs = 819 TB/s"
    assert levers["bandwidth_x2"]["gain_pp"] == pytest.approx(0.6597, abs=1e-4)
    compressed = run_json("optimize", "--compression", "2")
    assert "compression" not in {lv["key"] for lv in compressed["levers"]}


def test_compression_in_a_preset(tmp_path: Path, run_json: RunJson, run: Run) -> None:
    path = tmp_path / "coded.toml"
    path.write_text('base = "llama3-405b"\n[storage]\ncompression = 4\ncodec_bandwidth = "50GB/s/gpu"\n')
    assert run_json("optimize", "--preset", str(path))["write_s"] == pytest.approx(0.81791016, rel=1e-8)
    tiers = tmp_path / "tiers.toml"
    text = (
        'schema_version = 1\n[checkpoint]\nsize = "6.48TB"\n[failures]\nmtbf = "3.1h"\n'
        '[[levels]]\nname = "memory"\nbandwidth = "100TB/s"\nrestart = "1min"\nserves = 0.9\n{extra}'
        '[[levels]]\nname = "storage"\nbandwidth = "2TB/s"\nrestart = "10min"\nserves = 0.1\ncompression = 4\n'
    )
    tiers.write_text(text.format(extra=""))
    assert run_json("optimize", "--preset", str(tiers))["levels"][-1]["stall_s"] == pytest.approx(0.81)
    tiers.write_text(text.format(extra="compression = 2\n"))
    assert_usage_error(run("optimize", "--preset", str(tiers)), "levels[0].compression")


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (("--compression", "0.5"), "--compression"),
        (("--compression", "0.99"), "--compression"),
        (("--compression", "4", "--codec-bw", "0GB/s"), "--codec-bw"),
        (("--codec-bw", "1TB/s"), "--codec-bw"),
    ],
)
def test_bad_compression(run: Run, args: tuple[str, ...], culprit: str) -> None:
    assert_usage_error(run("optimize", *args), culprit)


# ------------------------------------------------------------------ §17.4 tier subsets

SLOW_DISK = """schema_version = 1
[checkpoint]
size = "6.48TB"
[failures]
mtbf = "3.1h"
[cluster]
gpus = 16384
[[levels]]
name = "host memory"
bandwidth = "6.25GB/s/gpu"
restart = "1min"
serves = 0.85
[[levels]]
name = "slow disk"
bandwidth = "0.01GB/s/gpu"
restart = "10min"
serves = 0.02
[[levels]]
name = "storage"
bandwidth = "2TB/s"
restart = "10min"
serves = 0.13
"""


def test_subsets_keep_storage_and_carry_shares_up() -> None:
    from ckptcalc import api

    found = dict(storage.subsets(api.job("llama3-405b-tiered").config))
    assert sorted(found) == [("local nvme",), ("memory",), ("memory", "local nvme")]
    shares = {names: [round(float(lv.share), 12) for lv in c.levels()] for names, c in found.items()}
    assert shares[("memory",)] == [0.97, 0.03]  # memory's 0.85 goes to the NVMe tier
    assert shares[("local nvme",)] == [0.85, 0.15]  # the NVMe tier's 0.12 goes to storage
    assert shares[("memory", "local nvme")] == [1.0]


def test_dropping_a_tier_that_costs_is_a_lever(tmp_path: Path, run_json: RunJson) -> None:
    """A slow middle tier (0.01 GB/s/gpu: a 39.6 s stall for 2 % of failures) costs more than it saves:
    "without slow disk" is a lever, and its effective time is that of the two-level job stated
    directly (memory 0.85, storage 0.15), by the exact model's own path for two levels."""
    path = tmp_path / "slow.toml"
    path.write_text(SLOW_DISK)
    document = run_json("optimize", "--preset", str(path))
    subsets = [lv for lv in document["levers"] if lv["key"] == "without_tier"]
    assert [lv["name"].split(" (")[0] for lv in subsets] == ["without slow disk"]
    two = run_json("optimize", "--size", "6.48TB", "--mtbf", "3.1h", "--gpus", "16384", "--bw", "2TB/s",
                   "--restart", "10min", "--replica-survival", "0.85", "--memory-bw", "6.25GB/s/gpu",
                   "--memory-restart", "1min")  # fmt: skip
    assert subsets[0]["effective"] == pytest.approx(two["effective"], rel=1e-12)
    assert subsets[0]["gain_pp"] == pytest.approx(100 * (two["effective"] - document["effective"]), abs=1e-9)
    assert subsets[0]["gain_pp"] > 2.0


def test_no_subset_lever_where_every_tier_pays(run_json: RunJson) -> None:
    """llama3-405b-tiered: every subset is worse (0.93720, 0.93568, 0.92474 against 0.93837)."""
    levers = run_json("optimize", "--preset", "llama3-405b-tiered")["levers"]
    assert not [lv for lv in levers if lv["key"] == "without_tier"]


@settings(max_examples=60, deadline=None)
@given(
    slowdown=st.floats(0.0, 0.95),
    stall=st.floats(0.01, 100.0),
    persist=st.floats(1.0, 3000.0),
    mtbf=st.floats(600.0, 1e6),
    restart=st.floats(0.0, 3600.0),
    stretch=st.floats(1.0, 20.0),
)
def test_slowed_level_is_the_async_level_with_shifted_stall_and_lag(
    slowdown: float, stall: float, persist: float, mtbf: float, restart: float, stretch: float
) -> None:
    """docs/model.md §17.1 at any given interval τ ≥ P: the exact model equals §8.2's closed form with
    the stall s + f·P and the lag (1 − f)·P, and the first order charges (s + f·P)/τ."""
    tau = persist * stretch
    config = slowed_by(
        Config(
            checkpoint_bytes=persist * 1e12,
            bandwidth=1e12,
            snapshot_bandwidth=persist * 1e12 / stall,
            mtbf_s=mtbf,
            restart_s=max(restart, 1e-3),
            interval_s=tau,
        ),
        slowdown,
    )
    found = evaluate(config)
    expected = daly_async(tau, stall + slowdown * persist, (1 - slowdown) * persist, max(restart, 1e-3), mtbf)
    event("effective above 1e-6" if expected > 1e-6 else "effective near 0")
    assert float(found.effective) == pytest.approx(expected, rel=1e-8, abs=1e-12)
    assert float(found.first_order.levels[-1].write) == pytest.approx((stall + slowdown * persist) / tau, rel=1e-12)


@pytest.mark.parametrize(
    ("args", "retained", "growth", "over_run"),
    [
        # docs/model.md Reference 17.2b: 6.48 TB × (5 + 54) at the end of a 54-day run.
        (["--keep", "5", "--keep-every", "1d", "--work", "54d"], 6.48e12 * 59, None, True),
        # Without a run: the newest five, and a checkpoint a day of work kept for good.
        (["--keep", "5", "--keep-every", "1d"], 6.48e12 * 5, 6.48e12, False),
        # Compressed 4x: the stored size is a quarter.
        (["--keep", "5", "--compression", "4", "--codec-bw", "50GB/s/gpu"], 1.62e12 * 5, None, False),
        ([], None, None, False),  # no retention: every checkpoint kept, nothing to report
    ],
)
def test_bytes_retained(
    run_json: RunJson, run: Run, args: list[str], retained: float | None, growth: float | None, over_run: bool
) -> None:
    block = run_json("optimize", *args)["storage"]
    if retained is None:
        assert block["bytes_retained"] is None
    else:
        assert block["bytes_retained"] == pytest.approx(retained, rel=1e-12)
    assert block["kept_for_good_bytes_per_day"] == (None if growth is None else pytest.approx(growth, rel=1e-12))
    assert block["retained_over_run"] is over_run
    table = run("optimize", *args).stdout
    assert ("Retained in storage:" in table) is (retained is not None)


def test_max_retained_keeps_fewer_and_says_what_it_costs(run_json: RunJson, run: Run) -> None:
    """docs/model.md Reference 17.2b: 400 TB over a 54-day run with one checkpoint a day kept for good
    leaves ⌊400/6.48 − 54⌋ = 7 newest of the 20 asked for; the cost is the effective time at 20 less at 7."""
    silent = ["--silent-mtbf", "2d", "--detect-latency", "1h", "--work", "54d", "--keep-every", "1d"]
    doc = run_json("optimize", "--keep", "20", "--max-retained", "400TB", *silent)
    block = doc["storage"]
    assert block["retained_keep"] == 7 and doc["silent"]["keep"] == 7
    assert block["bytes_retained"] == pytest.approx(6.48e12 * 61, rel=1e-12)
    stated = run_json("optimize", "--keep", "20", *silent)
    seven = run_json("optimize", "--keep", "7", *silent)
    assert doc["effective"] == pytest.approx(seven["effective"], rel=1e-12)
    assert block["retained_cost_pp"] == pytest.approx(100 * (stated["effective"] - seven["effective"]), rel=1e-9)
    assert block["retained_cost_pp"] > 1.0
    table = run("optimize", "--keep", "20", "--max-retained", "400TB", *silent).stdout
    assert "keeps the 7 newest checkpoints" in table
    # A limit that holds every checkpoint asked for changes nothing and costs nothing.
    roomy = run_json("optimize", "--keep", "5", "--max-retained", "1PB", *silent)["storage"]
    assert (roomy["retained_keep"], roomy["retained_cost_pp"]) == (5, 0.0)


@pytest.mark.parametrize(
    "args",
    [
        ["--max-retained", "1TB"],  # less than one 6.48 TB checkpoint
        ["--max-retained", "100TB", "--keep-every", "1d", "--work", "54d"],  # the 54 kept for good alone overflow
        ["--max-retained", "0B"],
    ],
)
def test_a_retention_limit_below_one_checkpoint_is_refused(run: Run, args: list[str]) -> None:
    assert_usage_error(run("optimize", *args), "--max-retained")


def test_a_presets_retention_limit_is_named_by_its_key(run: Run, tmp_path: Any) -> None:
    preset = tmp_path / "small.toml"
    preset.write_text('base = "llama3-405b"\n[retention]\nmax_retained = "1TB"\n')
    assert_usage_error(run("optimize", "--preset", str(preset)), "small.toml: retention.max_retained")


def test_simulate_keeps_what_the_retention_limit_leaves(run_json: RunJson) -> None:
    # 50 TB holds ⌊50/6.48⌋ = 7 of the 20 asked for: the simulation runs 7, as the model does (with one
    # kept for good a day, so that an event with no clean checkpoint left costs the steady state).
    silent = ["--silent-mtbf", "2d", "--detect-latency", "1h", "--keep-every", "1d", "--cycles", "500", "--seed", "3"]
    limited = run_json("simulate", "--keep", "20", "--max-retained", "50TB", *silent)
    assert limited["effective"] == run_json("simulate", "--keep", "7", *silent)["effective"]
    assert limited["effective"] != run_json("simulate", "--keep", "20", *silent)["effective"]


def _tiered(tmp_path: Path, nvme: str) -> Path:
    path = tmp_path / "nvme.toml"
    path.write_text(
        'base = "llama3-405b-tiered"\n[[levels]]\nname = "host memory"\nbandwidth = "6.25GB/s/gpu"\n'
        'read_bandwidth = "6.25GB/s/gpu"\nserves = 0.85\n[[levels]]\nname = "local nvme"\n'
        f'{nvme}serves = 0.12\n[[levels]]\nname = "remote storage"\nbandwidth = "2TB/s"\n'
        'read_bandwidth = "2TB/s"\nserves = 0.03\n'
    )
    return path


def test_a_middle_tier_compresses_its_own_checkpoints(tmp_path: Path, run_json: RunJson) -> None:
    """docs/model.md §17.3, on a middle tier of llama3-405b-tiered: 2× through a free codec is the tier at twice
    its write and read bandwidth, exactly; through a codec of 50 GB/s per GPU its write is 6.48 TB /
    819.2 TB/s + 3.24 TB / 24.576 TB/s = 0.0079102 + 0.1318359 = 0.1397461 s, and it takes half the bytes."""
    plain = 'bandwidth = "1.5GB/s/gpu"\nread_bandwidth = "3GB/s/gpu"\n'
    free = run_json("optimize", "--preset", str(_tiered(tmp_path, plain + "compression = 2\n")))
    doubled = run_json(
        "optimize", "--preset", str(_tiered(tmp_path, 'bandwidth = "3GB/s/gpu"\nread_bandwidth = "6GB/s/gpu"\n'))
    )
    assert free["effective"] == pytest.approx(doubled["effective"], rel=1e-12)
    assert free["levels"][1]["stall_s"] == pytest.approx(6.48e12 / (3e9 * 16384), rel=1e-12)
    coded = run_json(
        "optimize", "--preset", str(_tiered(tmp_path, plain + 'compression = 2\ncodec_bandwidth = "50GB/s/gpu"\n'))
    )
    assert coded["levels"][1]["stall_s"] == pytest.approx(0.13974609, rel=1e-7)
    assert coded["levels"][1]["restart_s"] == pytest.approx(600 + 6.48e12 / 8.192e14 + 3.24e12 / 4.9152e13, rel=1e-12)
    parts = coded["inputs"]["restart_components"]["local nvme"]
    assert parts["reload_s"] == pytest.approx(0.07382813, rel=1e-7)
    assert parts["total_s"] == pytest.approx(coded["levels"][1]["restart_s"], rel=1e-12)
    assert coded["inputs"]["tiers"][1]["compression"] == 2.0
    nvme = coded["storage"]["tiers"][1]
    assert nvme["checkpoint_bytes"] == pytest.approx(3.24e12)
    assert nvme["bytes_written_per_day"] == pytest.approx(3.24e12 * 86400 / coded["levels"][1]["optimal_interval_s"])
    assert coded["effective"] < free["effective"]  # the codec's time costs


@pytest.mark.parametrize(
    ("extra", "culprit"),
    [
        ("compression = 0.5\n", "levels[1].compression"),
        ('codec_bandwidth = "50GB/s/gpu"\n', "levels[1].codec_bandwidth"),
        ('compression = 2\ncodec_bandwidth = "0GB/s"\n', "levels[1].codec_bandwidth"),
    ],
)
def test_bad_compression_on_a_middle_tier(tmp_path: Path, run: Run, extra: str, culprit: str) -> None:
    path = _tiered(tmp_path, 'bandwidth = "1.5GB/s/gpu"\nread_bandwidth = "3GB/s/gpu"\n' + extra)
    assert_usage_error(run("optimize", "--preset", str(path)), culprit)
