"""The MTBF's 95 % interval carried through the model, and the robust interval (docs/model.md §9)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st
from references import daly, lambert
from test_cli_optimize import _modules_loaded

from ckptcalc import api
from ckptcalc.errors import InputError
from ckptcalc.model import band as robust
from ckptcalc.model.evaluation import Config, evaluate

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
HOUR = 3600.0

#: A whole preset (Llama 3's checkpoint and storage) whose [failures] table the tests fill in.
JOB = '[checkpoint]\nsize = "6.48TB"\n[storage]\nbandwidth = "2TB/s"\n[cluster]\ngpus = 16384\n'


def _preset(tmp_path: Any, failures: str, name: str = "band") -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(f'{JOB}[failures]\nrestart = "10min"\n{failures}\n', encoding="utf-8")
    return str(path)


# ------------------------------------------------------- the χ² interval


def test_failures_in_a_window_give_the_exact_interval() -> None:
    # docs/model.md §9.1 (and docs/fit.md §4): 3 failures in 12 h, with the tabled quantiles
    # χ²(0.975; 8) = 17.53455 and χ²(0.025; 6) = 1.237344.
    doc = api.optimize("llama3-405b", failures=3, window="12h").to_dict()
    low, high = doc["inputs"]["mtbf_ci95"]
    assert doc["inputs"]["mtbf_s"] == 4 * HOUR
    assert low == pytest.approx(2 * 12 * HOUR / 17.53455, rel=1e-6)
    assert high == pytest.approx(2 * 12 * HOUR / 1.237344, rel=1e-6)
    assert doc["uncertainty"]["source"] == "failures"
    assert doc["uncertainty"]["mtbf_s"] == [low, high]


def test_no_failure_plans_at_the_lower_bound() -> None:
    # docs/model.md §9.1: n = 0 in T gives only M > T/ln 20 at 95 %; the plan is made at that bound.
    outcome = api.optimize("llama3-405b", failures=0, window="30d")
    doc = outcome.to_dict()
    bound = 30 * 24 * HOUR / math.log(20.0)
    assert doc["inputs"]["mtbf_s"] == pytest.approx(bound, rel=1e-15)
    assert doc["inputs"]["mtbf_source"] == "failures_bound"
    assert doc["inputs"]["mtbf_ci95"] == [pytest.approx(bound, rel=1e-15), None]
    u = doc["uncertainty"]
    assert u["source"] == "failures_bound"
    assert u["effective"][1] is None and u["robust_regret_pp"] is None
    assert u["robust_interval_s"] == pytest.approx(outcome.optimal_interval_s, rel=1e-12)
    assert any("lower bound" in w for w in outcome.warnings)


# --------------------------------------------------- the robust interval


def _robust_by_hand(delta: float, restart: float, low: float, high: float) -> tuple[float, float]:
    """The τ between the two Lambert optima where the two regrets are equal, and that regret: bisection
    on the regret difference, with the references' closed forms only."""
    best_low, best_high = lambert(delta, low), lambert(delta, high)
    top_low, top_high = daly(best_low, delta, restart, low), daly(best_high, delta, restart, high)

    def gap(tau: float) -> float:
        return (top_low - daly(tau, delta, restart, low)) - (top_high - daly(tau, delta, restart, high))

    a, b = best_low, best_high
    for _ in range(200):
        middle = (a + b) / 2
        a, b = (middle, b) if gap(middle) < 0 else (a, middle)
    tau = (a + b) / 2
    return tau, top_low - daly(tau, delta, restart, low)


def test_robust_interval_of_one_level_by_hand() -> None:
    # docs/model.md §9.2: Llama 3 (δ 3.24 s, r 10 min) after 3 failures in 12 h: M 4 h in [1.369 h, 19.40 h].
    doc = api.optimize("llama3-405b", failures=3, window="12h").to_dict()
    u = doc["uncertainty"]
    low, high = u["mtbf_s"]
    tau, regret = _robust_by_hand(3.24, 600.0, low, high)
    assert u["robust_interval_s"] == pytest.approx(tau, rel=1e-9)
    assert u["robust_regret_pp"] == pytest.approx(100 * regret, rel=1e-7)
    assert u["optimal_interval_s"] == [pytest.approx(lambert(3.24, low)), pytest.approx(lambert(3.24, high))]
    assert u["optimal_effective"] == [
        pytest.approx(daly(lambert(3.24, low), 3.24, 600.0, low), rel=1e-10),
        pytest.approx(daly(lambert(3.24, high), 3.24, 600.0, high), rel=1e-10),
    ]
    assert u["optimal_effective"] == [pytest.approx(0.853634, abs=5e-7), pytest.approx(0.981924, abs=5e-7)]
    assert u["robust_interval_s"] == pytest.approx(285.70, abs=0.01)
    assert u["robust_regret_pp"] == pytest.approx(0.3624, abs=1e-4)
    # The optimum at the point estimate does worse at its worst end.
    point = doc["optimal_interval_s"]
    worst = max(daly(lambert(3.24, m), 3.24, 600.0, m) - daly(point, 3.24, 600.0, m) for m in (low, high))
    assert u["point_regret_pp"] == pytest.approx(100 * worst, rel=1e-7)
    assert u["point_regret_pp"] == pytest.approx(0.4605, abs=1e-4)
    assert u["effective"] == [
        pytest.approx(daly(point, 3.24, 600.0, low), rel=1e-12),
        pytest.approx(daly(point, 3.24, 600.0, high), rel=1e-12),
    ]


def test_robust_schedule_of_two_levels_beats_the_point_optimum() -> None:
    # docs/model.md §9.2: gemini-inmemory (M 4 h) with M in [3 h, 5 h].
    u = api.optimize("gemini-inmemory", mtbf_ci="3h:5h")["uncertainty"]
    assert u["robust_storage_every"] == 54
    assert u["robust_memory_interval_s"] == pytest.approx(285.456, abs=1e-3)
    assert u["robust_interval_s"] == pytest.approx(54 * u["robust_memory_interval_s"], rel=1e-12)
    assert u["robust_regret_pp"] == pytest.approx(0.02565, abs=1e-5)
    assert u["point_regret_pp"] == pytest.approx(0.03705, abs=1e-5)


@settings(max_examples=120, deadline=None)
@given(
    log_delta=st.floats(-1.0, 3.0),
    log_restart=st.floats(0.0, 3.5),
    log_mtbf=st.floats(3.0, 6.0),
    log_low=st.floats(0.02, 1.0),
    log_high=st.floats(0.02, 1.0),
    lag=st.sampled_from([None, 0.5]),
    shape=st.sampled_from([None, None, 0.7]),
)
def test_band_invariants(
    log_delta: float,
    log_restart: float,
    log_mtbf: float,
    log_low: float,
    log_high: float,
    lag: float | None,
    shape: float | None,
) -> None:
    delta, mtbf = 10**log_delta, 10**log_mtbf
    config = Config(checkpoint_bytes=delta, bandwidth=1.0, mtbf_s=mtbf, restart_s=10**log_restart, shape=shape)
    if lag is not None:
        config = config.replace(snapshot_bandwidth=1.0 / (lag * delta))
    low, high = mtbf / 10**log_low, mtbf * 10**log_high
    result = evaluate(config)
    band = robust.band(config, result, low, high)
    event("meaningful" if 0.05 < float(result.effective) < 0.999 else "degenerate")
    assert band.robust_regret_pp is not None and band.point_regret_pp is not None
    # Minimax: never worse than the point optimum; between the optima; the band is ordered.
    assert band.robust_regret_pp <= band.point_regret_pp * (1 + 1e-9) + 1e-12
    opt_low, opt_high = band.optimal_interval_s
    assert opt_high is not None
    assert min(opt_low, opt_high) * (1 - 1e-9) <= band.robust_interval_s <= max(opt_low, opt_high) * (1 + 1e-9)
    eff_low, eff_high = band.effective
    assert eff_high is not None and eff_low <= eff_high + 1e-15
    # Where the robust interval is interior, its two regrets are equal.
    r_low, r_high = band.robust_effective
    assert r_high is not None
    regrets = (band.optimal_effective[0] - r_low, (band.optimal_effective[1] or 0.0) - r_high)
    interior = min(opt_low, opt_high) * 1.001 < band.robust_interval_s < max(opt_low, opt_high) * 0.999
    if interior:
        assert regrets[0] == pytest.approx(regrets[1], rel=1e-5, abs=1e-12)


# ------------------------------------------------------------ inputs


def test_a_stated_interval_scales_with_the_gpu_count() -> None:
    base = api.scenario("llama3-405b", mtbf_ci="3h:3.2h")
    assert base.mtbf_ci95 == (3 * HOUR, 3.2 * HOUR)
    doubled = api.job(base, gpus=32768)
    assert doubled.mtbf_band == (1.5 * HOUR, 1.6 * HOUR)
    # A new failure interval drops the old band.
    assert api.job(base, mtbf="5h").mtbf_band is None


def test_a_counted_interval_scales_with_the_gpu_count_too() -> None:
    counted = api.scenario("llama3-405b", failures=419, window="54d")
    at_twice = api.job(counted, gpus=32768)
    alone = api.job(counted)
    assert at_twice.mtbf_band is not None and alone.mtbf_band is not None
    assert at_twice.mtbf_band[0] == pytest.approx(alone.mtbf_band[0] / 2, rel=1e-12)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("3h", "LOW:HIGH"),
        ("3h:", "LOW:HIGH"),
        ("3.5h:3h", "must lie below"),
        ("1h:2h", "does not contain"),
        ("3h:lots", "lots"),
        ("3:4", "unit"),
    ],
)
def test_bad_intervals_name_the_option(run: Run, value: str, message: str) -> None:
    result = run("optimize", "--mtbf-ci", value, "--json")
    assert_usage_error(result, "--mtbf-ci")
    assert message in result.stderr


def test_counted_failures_and_a_stated_interval_conflict(run: Run) -> None:
    result = run("optimize", "--failures", "3", "--window", "12h", "--mtbf-ci", "1h:20h")
    assert_usage_error(result, "--mtbf-ci")


def test_api_takes_the_interval_as_a_pair() -> None:
    assert api.job("llama3-405b", mtbf_ci=(3 * HOUR, "3.2h")).mtbf_band == (3 * HOUR, 3.2 * HOUR)
    with pytest.raises(InputError, match=r"^mtbf_ci: must be a string, a pair \(a number or a string; "):
        api.job("llama3-405b", mtbf_ci=(1.0,))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="not a number"):
        api.job("llama3-405b", mtbf_ci=(math.nan, 4.0))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("mtbf_ci95 = 3", "array of two durations"),
        ('mtbf_ci95 = ["3h"]', "array of two durations"),
        ("mtbf_ci95 = [3, 4]", "needs its unit"),
        ('mtbf_ci95 = ["4h", "3h"]', "must lie below"),
    ],
)
def test_bad_preset_intervals_name_the_key(run: Run, tmp_path: Any, line: str, message: str) -> None:
    path = _preset(tmp_path, f'mtbf = "3.5h"\n{line}')
    result = run("optimize", "--preset", path, "--json")
    assert_usage_error(result, "failures.mtbf_ci95")
    assert message in result.stderr


def test_preset_interval_round_trips(run: Run, tmp_path: Any) -> None:
    path = _preset(tmp_path, 'mtbf = "3.36h"\nmtbf_ci95 = ["3.04h", "3.73h"]')
    saved = tmp_path / "saved.toml"
    assert run("optimize", "--preset", path, "--save-preset", str(saved), "--json").exit_code == 0
    assert 'mtbf_ci95 = [\n    "3.04h",\n    "3.73h",\n]' in saved.read_text(encoding="utf-8")
    assert api.job(str(saved)).mtbf_band == (3.04 * HOUR, 3.73 * HOUR)


# ---------------------------------------------------------- the commands


def test_optimize_table_shows_the_band_and_the_robust_interval(run: Run) -> None:
    out = run("optimize", "--failures", "3", "--window", "12h").stdout
    assert "MTBF 95 % interval" in out
    assert "1.37 h to 19.4 h" in out
    assert "robust interval" in out and "4.76 min" in out


def test_compare_carries_each_band(run_json: RunJson, tmp_path: Any) -> None:
    path = _preset(tmp_path, 'mtbf = "3.36h"\nmtbf_ci95 = ["3.04h", "3.73h"]')
    doc = run_json("compare", "llama3-405b", path)
    first, second = doc["scenarios"]
    assert first["uncertainty"] is None
    assert second["uncertainty"]["mtbf_s"] == [3.04 * HOUR, 3.73 * HOUR]


def test_check_at_the_low_end(run: Run, tmp_path: Any) -> None:
    # 93.2 % at the point MTBF, 92.7 % at the low end of its interval: a 93 % floor passes only at the point.
    path = _preset(tmp_path, 'mtbf = "3.36h"\nmtbf_ci95 = ["3.04h", "3.73h"]\nshape = 0.774')
    point = run("check", path, "--min-effective", "0.93", "--json")
    low = run("check", path, "--min-effective", "0.93", "--at", "low", "--json")
    assert point.exit_code == 0 and low.exit_code == 3
    import json

    row = json.loads(low.stdout)["results"][0]
    assert row["tested"] == "low" and row["effective_ci95"][0] < 0.93 < row["effective"]
    assert row["min_effective_passed"] is False and json.loads(point.stdout)["results"][0]["min_effective_passed"]
    # The line says which bound fails: the low end's, though the point is above the floor.
    said = run("check", path, "--min-effective", "0.93", "--at", "low").stdout
    assert "tested at the low end" in said and "below --min-effective 93.0 %" in said
    assert_usage_error(run("check", path, "--min-effective", "0.9", "--at", "middle"), "--at")


def test_the_band_costs_no_scipy() -> None:
    loaded = _modules_loaded("optimize", "--failures", "419", "--window", "54d", "--json")
    assert not loaded & {"scipy", "numpy", "rich"}


def _every(*every: float) -> Any:
    from ckptcalc.model.tiers import Tiers

    stalls = (1.0,) * (len(every) + 1)
    return Tiers(tau1_s=60.0, every=every, stalls=stalls, lag_s=0.0, shares=(1.0,) + (0.0,) * len(every),
                 restarts=stalls)  # fmt: skip


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        # docs/model.md §9.2: every whole m from two below the smaller optimal m to two above the larger.
        ((54.0,), (50.0,), [(float(m),) for m in range(48, 57)]),
        ((2.0,), (3.0,), [(float(m),) for m in range(1, 6)]),  # never below 1
        # Two multiples, each 8 wide: 64 combinations, all of them.
        ((10.0, 10.0), (13.0, 13.0), [(float(a), float(b)) for a in range(8, 16) for b in range(8, 16)]),
        # 9 × 8 = 72: more than 64, so each optimum's own multiples and each one's neighbours (each m ± 1
        # alone, never below 1), in that order, each once.
        (
            (1.0, 10.0),
            (7.0, 13.0),
            [
                (1.0, 10.0),
                (2.0, 10.0),
                (1.0, 9.0),
                (1.0, 11.0),
                (6.0, 13.0),
                (7.0, 13.0),
                (8.0, 13.0),
                (7.0, 12.0),
                (7.0, 14.0),
            ],
        ),
    ],
)
def test_the_robust_search_tries_these_multiples(
    lo: tuple[float, ...], hi: tuple[float, ...], expected: list[tuple[float, ...]]
) -> None:
    from ckptcalc.model.band import MAX_CANDIDATES, candidates

    assert MAX_CANDIDATES == 64
    assert candidates(_every(*lo), _every(*hi)) == expected
