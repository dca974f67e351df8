"""Mechanisms that combine (docs/model.md §18): every limit honoured with every mechanism, the headline's
``model`` label, effective time 0 as an answer, and elastic groups with just-in-time recovery, notice and
spares checked against an independent event simulation."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.model import weibull
from ckptcalc.model.evaluation import Config, evaluate
from ckptcalc.model.tiers import Tiers, effective

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: llama3-405b (docs/model.md §1): 6.48 TB at 2 TB/s, M = 3.1 h, r = 10 min.
SIZE, BW, MTBF, RESTART = 6.48e12, 2e12, 11_160.0, 600.0
LIMIT = 5e14  # --max-written-per-day 0.5PB


# ------------------------------------------------------------------ §18.1 limits


def jit_schedule(steps: float) -> Tiers:
    """§13.4's two tiers: the one-step tier (10 s, no stall, 90 % of failures, restart r + δ) under
    storage every ``steps`` steps (stall δ = 3.24 s, 10 %, restart r)."""
    return Tiers(
        tau1_s=10.0,
        every=(steps,),
        stalls=(0.0, SIZE / BW),
        lag_s=0.0,
        shares=(0.9, 0.1),
        restarts=(RESTART + SIZE / BW, RESTART),
    )


def test_written_limit_holds_with_just_in_time_recovery(run_json: RunJson) -> None:
    """docs/model.md Reference 18.1: the bound 6.48e12 × 86 400 / 5e14 = 1 119.744 s is 111.97 steps, so
    storage every 112 steps (1 120 s), 0.9393141, against 0.9396511 at the free 83 steps."""
    bound = SIZE * 86_400 / LIMIT
    assert bound == pytest.approx(1119.744, rel=1e-12)
    document = run_json("optimize", "--jit-share", "0.9", "--step-time", "10s", "--max-written-per-day", "0.5PB")
    assert document["interval_s"] == pytest.approx(1120.0, rel=1e-12)
    assert document["levels"][-1]["optimal_interval_steps"] == 112
    assert document["effective"] == pytest.approx(0.9393141, abs=5e-8)
    assert document["effective"] == pytest.approx(effective(jit_schedule(112.0), MTBF).effective, rel=1e-12)
    free = effective(jit_schedule(83.0), MTBF).effective
    assert free == pytest.approx(0.9396511, abs=5e-8)
    load = document["storage"]
    assert load["bytes_written_per_day"] == pytest.approx(SIZE * 86_400 / 1120.0, rel=1e-12)
    assert load["bytes_written_per_day"] <= LIMIT
    assert load["limit_cost_pp"] == pytest.approx(100 * (free - document["effective"]), abs=1e-9)
    assert load["limit_cost_pp"] == pytest.approx(0.03369, abs=1e-5)
    assert any("500 TB a day" in w for w in document["warnings"])
    # 111 steps would write more than the limit, 112 is the first that does not.
    assert SIZE * 86_400 / 1110.0 > LIMIT


def test_written_limit_holds_with_just_in_time_recovery_on_three_tiers(run_json: RunJson) -> None:
    """With a memory replica under storage, the top interval is still whole steps and within the limit."""
    document = run_json(
        "optimize", "--preset", "gemini-inmemory", "--jit-share", "0.5", "--step-time", "10s",
        "--max-written-per-day", "0.01PB",
    )  # fmt: skip
    top = document["storage"]["tiers"][-1]
    assert top["bytes_written_per_day"] <= 1e13
    assert document["interval_s"] / 10.0 == pytest.approx(round(document["interval_s"] / 10.0), abs=1e-9)
    memory = document["levels"][0]["interval_s"]
    assert memory / 10.0 == pytest.approx(round(memory / 10.0), abs=1e-9)
    # The smallest whole multiple of the memory interval at or above the bound.
    bound = top["checkpoint_bytes"] * 86_400 / 1e13
    assert bound <= document["interval_s"] < bound + memory
    assert document["storage"]["limit_cost_pp"] > 0


def test_written_limit_holds_under_weibull_failures(run_json: RunJson) -> None:
    """docs/model.md Reference 18.1: under --shape 0.7 the one interval is held at 1 119.744 s."""
    document = run_json("optimize", "--shape", "0.7", "--max-written-per-day", "0.5PB")
    assert document["interval_s"] == pytest.approx(1119.744, rel=1e-12)
    expected = weibull.weibull_effective(
        interval_s=1119.744, stall_s=SIZE / BW, lag_s=0.0, restart_s=RESTART, mtbf_s=MTBF, shape=0.7
    )
    assert document["effective"] == pytest.approx(expected, rel=1e-12)
    assert document["effective"] == pytest.approx(0.9063903, abs=5e-8)
    assert document["storage"]["limit_cost_pp"] == pytest.approx(2.2859, abs=1e-4)
    assert any("500 TB a day" in w for w in document["warnings"])
    loose = run_json("optimize", "--shape", "0.7", "--max-written-per-day", "5PB")
    assert loose["interval_s"] == pytest.approx(282.144, abs=1e-3)
    assert loose["warnings"] == []


@pytest.mark.parametrize(
    "extra",
    [
        (),
        ("--jit-share", "0.5", "--step-time", "10s"),
        ("--shape", "0.7"),
        ("--groups", "4"),
        ("--notice-share", "0.2"),
    ],
)
def test_a_given_interval_over_the_written_limit_is_refused(run: Run, extra: tuple[str, ...]) -> None:
    """docs/model.md §18.1: 300 s writes 6.48e12 × 86 400 / 300 = 1.866e15 bytes a day, over 5e14."""
    result = run("optimize", "--interval", "300s", "--max-written-per-day", "0.5PB", *extra)
    assert_usage_error(result, "--interval")
    assert "--max-written-per-day" in result.stderr
    assert "1.866e+15" in result.stderr


def test_a_given_interval_within_the_written_limit_runs(run_json: RunJson) -> None:
    document = run_json("optimize", "--interval", "1200s", "--max-written-per-day", "0.5PB")
    assert document["interval_s"] == 1200.0
    assert document["storage"]["bytes_written_per_day"] == pytest.approx(SIZE * 86_400 / 1200.0, rel=1e-12)


def test_written_limit_holds_with_every_mechanism(run_json: RunJson) -> None:
    """No combination of mechanisms writes more than the limit at its optimum (docs/model.md §18.1)."""
    cases = [
        ("--notice-share", "0.3"),
        ("--spares", "auto", "--repair", "4h"),
        ("--silent-mtbf", "7d", "--detect-latency", "1h"),
        ("--groups", "4"),
        ("--jit-share", "0.9", "--step-time", "10s"),
        ("--shape", "0.7"),
        ("--preset", "gemini-inmemory", "--memory-interval", "60s"),
    ]
    for extra in cases:
        document = run_json("optimize", *extra, "--max-written-per-day", "0.5PB")
        top = document["storage"]["tiers"][-1]
        assert top["bytes_written_per_day"] <= LIMIT * (1 + 1e-12), extra
        assert document["storage"]["limit_cost_pp"] >= 0.0


# ------------------------------------------------------------------ §18.2 the headline's label


@pytest.mark.parametrize(
    ("extra", "label"),
    [
        ((), "exact"),
        (("--jit-share", "0.5", "--step-time", "10s", "--notice-share", "0.2"), "exact"),
        (("--spares", "2", "--repair", "4h"), "exact"),
        (("--shape", "0.7"), "exact"),
        (("--preset", "gemini-inmemory"), "exact"),
        (("--groups", "4"), "approximate"),
        (("--silent-mtbf", "7d", "--detect-latency", "1h"), "approximate"),
        (("--spares", "2", "--repair", "4h", "--shape", "0.7"), "approximate"),
    ],
)
def test_model_label_says_approximate_where_the_headline_is(
    run_json: RunJson, extra: tuple[str, ...], label: str
) -> None:
    """docs/model.md §18.2: elastic groups, silent events and spares under Weibull failures are approximate."""
    assert run_json("optimize", *extra)["model"] == label
    swept = run_json("sweep", "--over", "interval", "--from", "300s", "--to", "900s", "--points", "2", *extra)
    assert swept["model"] == label


def test_model_label_of_a_comparison_is_per_scenario(run_json: RunJson) -> None:
    compared = run_json("compare", "--what-if", "groups=4")
    assert [s["model"] for s in compared["scenarios"]] == ["exact", "approximate"]
    compared = run_json("compare", "--what-if", "shape=0.7", "--what-if", "groups=2")
    assert [s["model"] for s in compared["scenarios"]] == ["exact", "exact", "approximate"]


# ------------------------------------------------------------------ §18.3 effective time 0


def _finite_levers(document: dict[str, Any]) -> None:
    for lever in document["levers"]:
        assert math.isfinite(lever["effective"]) and 0.0 <= lever["effective"] <= 1.0, lever
        assert lever["gain_pp"] == pytest.approx(100 * (lever["effective"] - document["effective"]), abs=1e-9)


@pytest.mark.parametrize(
    "args",
    [
        ("--restart", "3000d"),
        ("--read-bw", "1B/s"),
        ("--gpus", "1e9", "--spares", "auto", "--repair", "4h"),
        ("--mtbf", "1e-9s", "--spares", "auto", "--repair", "4h"),
    ],
)
def test_effective_time_zero_is_an_answer(run_json: RunJson, args: tuple[str, ...]) -> None:
    """docs/model.md §18.3: the effective time underflows to 0; every lever is computed from it (these
    raised ZeroDivisionError in the elastic lever's restart ratio)."""
    document = run_json("optimize", *args)
    assert document["effective"] == 0.0
    assert document["loss"]["restart"] == 1.0
    _finite_levers(document)


@pytest.mark.parametrize(
    "args",
    [("--groups", "4", "--target", "0.99"), ("--mtbf", "1s", "--groups", "4"), ("--restart", "3000d", "--groups", "4")],
)
def test_elastic_extremes_give_numbers(run_json: RunJson, args: tuple[str, ...]) -> None:
    """docs/model.md §18.3: the elastic restart ratio with restarts of 0 (a target solved for the restart)
    or restarts that never end in double precision."""
    document = run_json("optimize", *args)
    assert 0.0 <= document["effective"] < 1.0
    found = document["elastic"]
    shares = document["effective"] + found["groups_down_loss"] + found["quorum_loss"] + found["overhead_loss"]
    assert shares == pytest.approx(found["periodic_effective"], abs=1e-12)
    loss = document["loss"]
    assert found["periodic_effective"] + loss["write"] + loss["rework"] + loss["restart"] == pytest.approx(1.0)
    _finite_levers(document)


def test_restart_ratio_limits() -> None:
    """docs/model.md §18.3: the ratio is 0 where only the periodic model's restarts never end, 1 with no
    restart time, and the effective time 0 where nothing is kept."""
    from ckptcalc.model import elastic

    groups = elastic.groups_process(
        groups=4, group_share=0.95, rejoin_s=1800.0, quorum_pause_s=0.0, overhead=0.02, mtbf_s=1.0
    )
    # 10⁴ s: e^{−w·r} = e^{−500} is a double, e^{−r/M_W} = e^{−1253} is not.
    assert elastic.restart_ratio(groups, shares=(1.0,), restarts=(1e4,)) == 0.0
    assert 0.0 < elastic.restart_ratio(groups, shares=(1.0,), restarts=(600.0,)) < 1e-15
    assert elastic.restart_ratio(groups, shares=(1.0,), restarts=(0.0,)) == 1.0
    never = elastic.restart_ratio(groups, shares=(1.0,), restarts=(1e300,))
    assert never == 1.0
    found = elastic.losses(groups, 0.0, write=0.0, rework=0.0, restart=1.0, ratio=0.0)
    assert (found.effective, found.restart, found.write) == (0.0, 1.0, 0.0)
    plain = evaluate(Config(checkpoint_bytes=SIZE, bandwidth=BW, mtbf_s=MTBF, restart_s=3000 * 86_400.0))
    assert plain.effective == 0.0
