"""Spare nodes and repairs: Erlang's loss formula, the inputs, the output and the simulation
(docs/model.md §15)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st
from references import daly, lambert

from ckptcalc.mechanisms import spares
from ckptcalc.model.evaluation import Config, evaluate

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: The default preset, llama3-405b: M = 3.1 h, δ = 3.24 s, r = 10 min, 16 384 GPUs (2 048 nodes of 8).
LLAMA = {"mtbf": 11_160.0, "delta": 3.24, "restart": 600.0}


def _with_pool(config: Config, **pool: Any) -> Config:
    """``config`` with a spare pool's inputs (the home's fields: absent from the type checker's view)."""
    return config.replace(**pool)


def erlang_by_sums(servers: int, load: Fraction) -> Fraction:
    """B(S, a) = (a^S/S!) / Σ_{i≤S} a^i/i!, in exact rationals: the definition, not the recursion."""
    terms = [load**i / math.factorial(i) for i in range(servers + 1)]
    return terms[-1] / sum(terms)


# docs/model.md Reference 15.1 (worked by hand there).
@pytest.mark.parametrize(
    ("servers", "load", "expected"),
    [
        (0, 1.0, 1.0),
        (1, 1.0, 1 / 2),
        (2, 1.0, 1 / 5),
        (3, 1.0, 1 / 16),
        (4, 1.0, 1 / 65),
        (1, 2.0, 2 / 3),
        (2, 2.0, 2 / 5),
        (3, 2.0, 4 / 19),
        (3, 2 / 3, 0.02547771),
    ],
)
def test_erlang_b_by_hand(servers: int, load: float, expected: float) -> None:
    assert spares.erlang_b(servers, load) == pytest.approx(expected, rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(servers=st.integers(min_value=0, max_value=40), load=st.fractions(min_value=Fraction(1, 100), max_value=60))
def test_the_recursion_is_the_definition(servers: int, load: Fraction) -> None:
    event("B above 1e-6" if erlang_by_sums(servers, load) > 1e-6 else "B tiny")
    assert spares.erlang_b(servers, float(load)) == pytest.approx(float(erlang_by_sums(servers, load)), rel=1e-12)


def test_erlang_b_on_arrays_matches_floats() -> None:
    numpy = pytest.importorskip("numpy")
    servers = numpy.array([0.0, 1.0, 3.0, 7.0])
    loads = numpy.array([0.5, 1.0, 2.0, 6.0])
    got = spares.erlang_b(servers, loads)
    assert got.tolist() == [spares.erlang_b(int(s), float(a)) for s, a in zip(servers, loads, strict=True)]


def test_auto_is_the_fewest_below_the_risk() -> None:
    # docs/model.md Reference 15.3: B(4) = 0.0321 > 1 % ≥ B(5) = 0.00822 at a = 1.2903.
    load = 14_400 / 11_160
    assert spares.smallest_spares(load, 0.01) == 5
    assert spares.erlang_b(4, load) > 0.01 >= spares.erlang_b(5, load)
    # B(1) = 0.5634 > 0.5 ≥ B(2) = 0.2666: two are needed for a risk of one half.
    assert spares.smallest_spares(load, 0.5) == 2
    # With no spare every failure waits (B(0, a) = 1), however rare repairs are.
    assert spares.smallest_spares(1e-9, 0.01) == 1


@settings(max_examples=200, deadline=None)
@given(spares_=st.integers(min_value=0, max_value=30), load=st.floats(min_value=1e-3, max_value=30.0))
def test_the_wait_and_the_running_share_agree(spares_: int, load: float) -> None:
    # docs/model.md §15.1: λW = B(S+1, a) / (1 − B(S+1, a)), two routes to the same share.
    pool = spares.pool(nodes=10, spares=spares_, repair_s=load * 3600.0, mtbf_s=3600.0)
    event("waits matter" if pool.waiting > 1e-9 else "waits negligible")
    assert 1.0 / (1.0 + pool.wait_s / 3600.0) == pytest.approx(pool.running, rel=1e-12)
    assert pool.waiting == pytest.approx(1.0 - pool.running, abs=1e-15)


def _llama(**changes: Any) -> Config:
    return Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11_160.0, restart_s=600.0).replace(**changes)


def test_reference_15_2_llama_with_two_spares() -> None:
    # docs/model.md Reference 15.2, from the periodic optimum of §3 (references.py) times the running share.
    tau = lambert(LLAMA["delta"], LLAMA["mtbf"])
    periodic = daly(tau, LLAMA["delta"], LLAMA["restart"], LLAMA["mtbf"])
    result = evaluate(_llama(nodes=2048.0, spares=2.0, repair_s=14_400.0, spare_risk=0.01))
    pool = result.pool
    assert pool.p_no_spare == pytest.approx(800 / 3001, rel=1e-12)
    assert pool.running == pytest.approx(0.8971369, rel=1e-7)
    assert pool.wait_s == pytest.approx(1279.573, rel=1e-6)
    assert pool.wait_when_none_s == 4800.0
    assert result.optimal_interval_s == pytest.approx(tau, rel=1e-6)  # spares do not move the optimum
    assert result.effective == pytest.approx(0.8298552, rel=1e-6)
    assert result.effective == pytest.approx(periodic * (1 - float(erlang_by_sums(3, Fraction(40, 31)))), rel=1e-9)
    assert pool.cluster_effective == pytest.approx(0.8290456, rel=1e-6)
    assert pool.spares_for_target == 5
    # The split still sums to one, with the waits in the restart term.
    assert result.write + result.rework + result.restart + result.effective == pytest.approx(1.0, abs=1e-12)
    assert result.restart == pytest.approx(evaluate(_llama()).restart * pool.running + pool.waiting, rel=1e-12)


def test_reference_15_2_restart_form_is_lower() -> None:
    # docs/model.md §15.2: the wait as extra restart time lets failures strike it; 0.8248000 against 0.8298552.
    exact = evaluate(_llama(nodes=2048.0, spares=2.0, repair_s=14_400.0))
    wait = float(exact.pool.wait_s)
    restart_form = evaluate(_llama(restart_s=600.0 + wait))
    assert float(restart_form.effective) == pytest.approx(0.8248000, rel=1e-6)
    gap = float(exact.effective) - float(restart_form.effective)
    ratio = wait / LLAMA["mtbf"]
    # Lower by a relative (W/M)²/2 to first order.
    assert gap / float(exact.effective) == pytest.approx(ratio**2 / 2, rel=0.1)


def test_reference_15_4_two_tiers_half_the_failures_wait() -> None:
    # docs/model.md Reference 15.4: §8.3's two-level job, one spare, repair = M: P(no spare) = 1/2, running 4/5.
    two = Config(
        checkpoint_bytes=9e11, bandwidth=1e10, mtbf_s=14_400.0, restart_s=600.0,
        replica_survival=0.99, memory_bandwidth=3e11, memory_restart_s=60.0,
    )  # fmt: skip
    plain, pooled = evaluate(two), evaluate(_with_pool(two, nodes=48.0, spares=1.0, repair_s=14_400.0))
    assert pooled.pool.p_no_spare == pytest.approx(0.5, rel=1e-12)
    assert pooled.pool.running == pytest.approx(0.8, rel=1e-12)
    assert pooled.pool.wait_s == pytest.approx(3600.0, rel=1e-12)
    assert float(pooled.effective) == pytest.approx(0.77150, abs=5e-6)
    assert (pooled.memory_interval_s, pooled.storage_every) == (plain.memory_interval_s, plain.storage_every)
    assert pooled.pool.cluster_effective == pytest.approx(float(pooled.effective) * 48 / 49, rel=1e-12)


def test_a_sweep_over_spares_matches_each_point() -> None:
    numpy = pytest.importorskip("numpy")
    counts = numpy.array([0.0, 1.0, 2.0, 5.0])
    grid = evaluate(_llama(nodes=2048.0, spares=counts, repair_s=14_400.0))
    for i, count in enumerate(counts):
        one = evaluate(_llama(nodes=2048.0, spares=float(count), repair_s=14_400.0))
        assert float(grid.effective[i]) == pytest.approx(float(one.effective), rel=1e-12)
        assert float(grid.pool.cluster_effective[i]) == pytest.approx(float(one.pool.cluster_effective), rel=1e-12)


# ------------------------------------------------------------------ the command line


def test_optimize_json_reference_15_3(run_json: RunJson) -> None:
    doc = run_json("optimize", "--spares", "auto", "--repair", "4h")
    pool = doc["spares"]
    assert (pool["nodes"], pool["spares"], pool["spares_auto"], pool["spares_for_target"]) == (2048, 5, True, 5)
    assert pool["p_no_spare"] == pytest.approx(0.008219872, rel=1e-6)
    assert pool["wait_s"] == pytest.approx(19.7277, rel=1e-5)
    assert pool["running_share"] == pytest.approx(0.9982354, rel=1e-7)
    assert doc["effective"] == pytest.approx(0.9233718, rel=1e-6)
    assert pool["cluster_effective"] == pytest.approx(0.9211229, rel=1e-6)
    assert pool["repair_s"] == 14_400.0 and pool["spare_risk"] == 0.01


def test_no_spares_no_pool(run_json: RunJson) -> None:
    assert run_json("optimize")["spares"] is None


def test_nodes_from_gpus_per_node_and_given(run_json: RunJson) -> None:
    by_node = run_json("optimize", "--spares", "2", "--repair", "4h", "--gpus-per-node", "4")["spares"]
    assert by_node["nodes"] == 4096
    given_ = run_json("optimize", "--spares", "2", "--repair", "4h", "--nodes", "1000")["spares"]
    assert given_["nodes"] == 1000
    assert given_["cluster_effective"] == pytest.approx(0.8298552 * 1000 / 1002, rel=1e-6)


def test_a_preset_states_spares(run_json: RunJson, tmp_path: Path) -> None:
    path = tmp_path / "pool.toml"
    path.write_text(
        'schema_version = 1\nbase = "llama3-405b"\n[spares]\nnodes = 2048\nspares = 2\nrepair = "4h"\n'
        "spare_risk = 0.05\n",
        encoding="utf-8",
    )
    pool = run_json("optimize", "--preset", str(path))["spares"]
    assert pool["p_no_spare"] == pytest.approx(800 / 3001, rel=1e-9)
    assert pool["spares_for_target"] == 4  # B(3) = 0.103 > 5 % ≥ B(4) = 0.032


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--spares", "2"], "--spares"),
        (["--spares", "2", "--repair", "-4h"], "--repair"),
        (["--spares", "1.5", "--repair", "4h"], "--spares"),
        (["--spares", "-1", "--repair", "4h"], "--spares"),
        (["--spares", "many", "--repair", "4h"], "--spares"),
        (["--spares", "2", "--repair", "4h", "--spare-risk", "0"], "--spare-risk"),
        (["--spares", "2", "--repair", "4h", "--spare-risk", "100%"], "--spare-risk"),
        (["--spares", "2", "--repair", "4h", "--nodes", "2.5"], "--nodes"),
        (["--spares", "2", "--repair", "4h", "--gpus-per-node", "0"], "--gpus-per-node"),
        (["--spares", "1e9", "--repair", "1s"], "--spares"),  # Erlang's recursion would take 10^9 steps
    ],
)
def test_bad_spares_input(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("optimize", *args, "--json"), culprit)


def test_erlang_b_is_zero_far_beyond_the_load() -> None:
    # B(S, a) for S far beyond a is below the smallest float long before S: 0, at once.
    assert spares.erlang_b(100_000, 1.0) == 0.0
    assert spares.erlang_b(200, 1.0) == 0.0 < spares.erlang_b(150, 1.0)


def test_spares_need_a_node_count(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "nogpus.toml"
    path.write_text(
        'schema_version = 1\n[checkpoint]\nsize = "1TB"\n[storage]\nbandwidth = "1TB/s"\n'
        '[failures]\nmtbf = "3h"\nrestart = "5min"\n',
        encoding="utf-8",
    )
    result = run("optimize", "--preset", str(path), "--spares", "2", "--repair", "4h")
    assert_usage_error(result, "--spares")
    assert "--nodes" in result.stderr


@pytest.mark.parametrize("command", ["optimize", "sweep", "simulate", "plan"])
def test_every_scenario_command_takes_the_options(run: Run, command: str) -> None:
    # (compare and check take presets: a preset's [spares] table, and compare's --what-if keys.)
    result = run(command, "--help")
    assert result.exit_code == 0
    for flag in ("--nodes", "--gpus-per-node", "--spares", "--repair", "--spare-risk"):
        assert flag in result.stdout, (command, flag)


# ------------------------------------------------------------------ the simulation (docs/model.md §15.4)

_TWO = Config(
    checkpoint_bytes=9e11, bandwidth=1e10, mtbf_s=14_400.0, restart_s=600.0,
    replica_survival=0.99, memory_bandwidth=3e11, memory_restart_s=60.0,
)  # fmt: skip


@pytest.mark.parametrize(
    ("config", "cycles"),
    [
        (_llama(nodes=2048.0, spares=1.0, repair_s=11_160.0), 40_000),  # a = 1: P(no spare) = 1/2
        (_llama(nodes=2048.0, spares=2.0, repair_s=14_400.0), 40_000),  # Reference 15.2
        (_llama(nodes=2048.0, spares=5.0, repair_s=14_400.0), 40_000),  # Reference 15.3: 0.8 %
        (_llama(nodes=64.0, spares=0.0, repair_s=3_600.0), 40_000),  # no spare: every failure waits
        (_with_pool(_TWO, nodes=48.0, spares=1.0, repair_s=14_400.0), 20_000),  # Reference 15.4: two tiers, 1/2
        (_with_pool(_TWO, nodes=48.0, spares=3.0, repair_s=28_800.0), 20_000),  # two tiers, a = 2: 21 %
        # Every interruption takes a node, those with notice (§13.2) and those recovered in place too.
        (_llama(nodes=2048.0, spares=1.0, repair_s=14_400.0, notice_share=0.3), 20_000),
        (_with_pool(_TWO, nodes=48.0, spares=2.0, repair_s=28_800.0, notice_share=0.2), 20_000),
        (_llama(nodes=2048.0, spares=1.0, repair_s=7_200.0, jit_share=0.9, step_s=10.0), 20_000),
    ],
)
def test_the_simulated_pool_agrees(config: Config, cycles: int) -> None:
    from ckptcalc.simulation import timeline

    exact = evaluate(config)
    run = timeline.run(config, timeline.Failures(float(config.mtbf_s)), cycles=cycles, seed=11)
    low, high = run.ci95
    assert low <= float(exact.effective) <= high, (run.effective, float(exact.effective))
    # The pool alone: the share of failures that found no spare, against Erlang B (5 standard errors).
    p = float(exact.pool.p_no_spare)
    assert abs(run.p_no_spare - p) <= 5 * math.sqrt(p * (1 - p) / cycles) + 1e-12
    assert run.wait_per_failure_s == pytest.approx(float(exact.pool.wait_s), rel=0.1)
    # The waits count in the restart share, as the model's split has them.
    assert run.split.restart == pytest.approx(float(exact.restart), abs=5 * (high - low))


def test_simulate_json_reports_the_pool(run_json: RunJson) -> None:
    doc = run_json("simulate", "--spares", "1", "--repair", "3.1h", "--cycles", "2e4", "--seed", "3")
    assert doc["analytic"]["exact"] == pytest.approx(0.9250040 * 0.8, rel=1e-6)  # a = 1: running 4/5
    assert doc["agreement"]["exact"]["agrees"]
    assert doc["spares"]["analytic_p_no_spare"] == pytest.approx(0.5, rel=1e-12)
    assert doc["spares"]["p_no_spare"] == pytest.approx(0.5, abs=0.02)


# ------------------------------------------------------------------ levers


def _levers(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {lever["key"]: lever for lever in doc["levers"]}


def test_the_spares_lever_when_none_are_configured(run_json: RunJson) -> None:
    # docs/model.md Reference 15.3 at the lever's stated 4 h repair and 1 % risk: 5 spares.
    doc = run_json("optimize")
    lever = _levers(doc)["spares"]
    base = doc["effective"]
    assert lever["effective"] == pytest.approx(0.9233718, rel=1e-6)
    assert lever["gain_pp"] == pytest.approx((lever["effective"] - base) * 100, rel=1e-9)
    assert lever["cluster_gain_pp"] == pytest.approx((0.9211229 - base) * 100, rel=1e-5)
    # With no spare at all each failure waits its repair: running share 1 − B(1, a) = 1/(1 + a).
    assert "5 spares beside 2048 nodes" in lever["name"] and "4.00 h assumed" in lever["name"]
    assert "40.4 %" in lever["name"]  # 0.9250040 × 31/71 = 0.403875


def test_the_stated_repair_is_the_levers_assumption(run_json: RunJson) -> None:
    lever = _levers(run_json("optimize", "--repair", "1h", "--spare-risk", "5%"))["spares"]
    load = 3600 / 11_160
    count = spares.smallest_spares(load, 0.05)
    assert f"{count} spares" in lever["name"] and "1.00 h" in lever["name"]
    assert lever["effective"] == pytest.approx(0.9250040 * (1 - spares.erlang_b(count + 1, load)), rel=1e-6)


def test_without_it_and_the_target_when_configured(run_json: RunJson) -> None:
    doc = run_json("optimize", "--spares", "2", "--repair", "4h")
    found = _levers(doc)
    assert "spares" not in found
    none = found["spares_none"]
    assert none["effective"] == pytest.approx(0.9250040 * 31 / 71, rel=1e-6)  # 1 − B(1, 40/31)
    assert none["gain_pp"] == pytest.approx((none["effective"] - 0.8298552) * 100, rel=1e-5)
    assert none["cluster_gain_pp"] == pytest.approx((none["effective"] - 0.8290456) * 100, rel=1e-5)
    target = found["spares_target"]
    assert target["effective"] == pytest.approx(0.9233718, rel=1e-6)  # Reference 15.3
    assert "5 spares" in target["name"]
    auto = _levers(run_json("optimize", "--spares", "auto", "--repair", "4h"))
    assert "spares_target" not in auto and "spares_none" in auto


def test_the_break_even_repair_time_of_the_spares_lever() -> None:
    # docs/model.md Reference 15.5: the 5 spares of Reference 15.3 beside 2 048 nodes pay over job and spare
    # nodes from a repair time of M·5/2048 = 27.246 s; there their cluster figure equals no spare's.
    from ckptcalc.inputs import presets
    from ckptcalc.inputs.scenario import resolve
    from ckptcalc.mechanisms import registry
    from ckptcalc.model import decisions as decide

    job = resolve(presets.load("llama3-405b"))
    assume = decide.LeverAssumptions(**presets.lever_assumptions(), running=registry.assumed(job.scenario))
    found = {lever.key: lever for lever in decide.levers(job.config, job.gpus, assume)}
    even = found["spares"].break_even
    assert even is not None and (even.key, even.unit) == ("repair_s", "duration")
    assert even.value == pytest.approx(11_160.0 * 5 / 2048, rel=1e-9)
    load = even.value / 11_160.0
    with_pool = (1.0 - spares.erlang_b(6, load)) * spares.cluster_share(2048.0, 5.0)
    assert with_pool == pytest.approx(1.0 / (1.0 + load), rel=1e-12)
    # Shorter repairs: the idle spares cost more than the waits they save; longer ones, the pool pays.
    for factor, pays in ((0.5, False), (2.0, True)):
        a = load * factor
        assert ((1.0 - spares.erlang_b(6, a)) * 2048 / 2053 > 1.0 / (1.0 + a)) is pays
    assert found["restart_half"].break_even is None  # a lever without a cost
    # With spares: taking the pool away has no cost to weigh.
    pool: dict[str, Any] = {"spares": 2.0, "repair_s": 14_400.0}
    pooled = resolve(presets.load("llama3-405b").replace(**pool))
    kept = {lever.key: lever for lever in decide.levers(pooled.config, pooled.gpus, assume)}
    assert kept["spares_none"].break_even is None


# ------------------------------------------------------------------ sweep, compare, plan

_POOL = 'schema_version = 1\nbase = "llama3-405b"\n[spares]\nspares = 2\nrepair = "4h"\n'


def test_sweep_over_spares_is_whole_and_linear(run_json: RunJson) -> None:
    doc = run_json("sweep", "--over", "spares", "--spares", "2", "--repair", "4h")
    assert doc["values"] == [float(n) for n in range(11)]  # 0 to twice the 5 the risk needs
    load = 14_400 / 11_160
    for count, effective, blocked in zip(doc["values"], doc["effective"], doc["p_no_spare"], strict=True):
        assert effective == pytest.approx(0.9250040 * (1 - spares.erlang_b(int(count) + 1, load)), rel=1e-6)
        assert blocked == pytest.approx(spares.erlang_b(int(count), load), rel=1e-12)
    assert doc["cluster_effective"][2] == pytest.approx(0.8290456, rel=1e-6)  # Reference 15.2


def test_sweep_over_repair_and_nodes(run_json: RunJson) -> None:
    repair = run_json("sweep", "--over", "repair", "--spares", "2", "--repair", "4h")
    assert repair["effective"] == sorted(repair["effective"], reverse=True)  # longer repairs, more waiting
    nodes = run_json("sweep", "--over", "nodes", "--spares", "2", "--repair", "4h", "--from", "10", "--to", "40")
    assert all(v.is_integer() for v in nodes["values"])
    assert len(set(nodes["effective"])) == 1  # the job's effective time does not depend on N
    for n, cluster in zip(nodes["values"], nodes["cluster_effective"], strict=True):
        assert cluster == pytest.approx(0.8298552 * n / (n + 2), rel=1e-6)


def test_sweep_needs_a_pool(run: Run) -> None:
    assert_usage_error(run("sweep", "--over", "repair", "--repair", "4h", "--json"), "--over")


def test_compare_what_if_spares(run_json: RunJson, tmp_path: Path) -> None:
    path = tmp_path / "pool.toml"
    path.write_text(_POOL, encoding="utf-8")
    doc = run_json("compare", str(path), "--what-if", "spares=5", "--what-if", "repair=8h", "--what-if", "nodes=100")
    first, five, slow, small = doc["scenarios"]
    assert first["effective"] == pytest.approx(0.8298552, rel=1e-6)
    assert five["effective"] == pytest.approx(0.9233718, rel=1e-6)  # Reference 15.3
    assert slow["spares"]["offered_load"] == pytest.approx(28_800 / 11_160, rel=1e-12)
    assert small["spares"]["cluster_effective"] == pytest.approx(0.8298552 * 100 / 102, rel=1e-6)


def test_plan_waits_for_repaired_nodes(run_json: RunJson) -> None:
    doc = run_json("plan", "--spares", "0", "--repair", "1h", "--work", "7d", "--runs", "400")
    # No spare: each failure waits its 1 h repair; running share 1/(1 + 1 h/3.1 h).
    assert doc["effective"] == pytest.approx(0.9250040 / (1 + 3600 / 11_160), rel=1e-6)
    assert abs(doc["mean_vs_expected"]) < 0.01


def test_optimize_json_with_spares_stays_free_of_numpy() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom ckptcalc import api\n"
        "api.optimize(preset='gemini-inmemory', spares='auto', repair='4h').to_dict()\n"
        "print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"


def test_a_preset_states_the_levers_repair(run_json: RunJson, tmp_path: Path) -> None:
    # [spares] repair (and spare_risk) without spares: the assumption of the spares lever, nothing modelled.
    path = tmp_path / "assume.toml"
    path.write_text('schema_version = 1\nbase = "llama3-405b"\n[spares]\nrepair = "1h"\nspare_risk = 0.05\n', "utf-8")
    doc = run_json("optimize", "--preset", str(path))
    assert doc["spares"] is None and doc["effective"] == pytest.approx(0.9250040, rel=1e-6)
    lever = _levers(doc)["spares"]
    count = spares.smallest_spares(3600 / 11_160, 0.05)
    assert f"{count} spares" in lever["name"] and "repair 1.00 h assumed" in lever["name"]
