"""Stragglers (fail-slow, docs/model.md §21): the references worked by hand, the break-even and the policy it picks,
the running share in the headline alone and with other mechanisms, its levers, plan and report, bad input, and
``simulate`` against the model (the one event engine with every other mechanism: tests/test_stragglers_engine.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc import api
from ckptcalc.mechanisms import stragglers
from ckptcalc.model.evaluation import evaluate

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: The references' slow periods (docs/model.md §21.4): f 0.1, D 2 h, detection 10 min, one a day.
SLOW = ("--slow-mtbf", "1d", "--slow-factor", "0.1", "--slow-duration", "2h", "--slow-detect", "10min")
#: The job of docs/model.md §18 (specification) and §2: llama3-405b, 3.24 s writes, M 3.1 h, a 10 min restart.
JOB = ("--size", "6.48TB", "--bw", "2TB/s", "--mtbf", "3.1h", "--restart", "10min")
TAU = 266.76218265727414  # its exact optimum (docs/model.md §21.4: 266.762 s)


def _with(duration: str) -> tuple[str, ...]:
    return (*SLOW[:4], "--slow-duration", duration, *SLOW[6:])


# ------------------------------------------------------------------ the references (docs/model.md §21.4)


def test_the_references_of_section_21() -> None:
    """docs/model.md §21.4: tolerate 654.5455 s, restart 727.0777 s, break-even 8 067.192 s."""
    assert stragglers.tolerated(0.1, 7200.0) == pytest.approx(654.5455, abs=5e-5)
    assert stragglers.restarted(0.1, 7200.0, 600.0, 600.0, TAU) == pytest.approx(727.0777, abs=5e-5)
    assert stragglers.break_even_duration(0.1, 600.0, TAU) == pytest.approx(8067.192, abs=5e-4)
    # docs/model.md §21.4, at D = 4 h: restarting loses less.
    assert stragglers.tolerated(0.1, 14400.0) == pytest.approx(1309.0909, abs=5e-5)
    assert stragglers.restarted(0.1, 14400.0, 600.0, 600.0, TAU) == pytest.approx(756.8761, abs=5e-5)


def test_the_restart_policy_is_its_integral_over_the_duration() -> None:
    """docs/model.md §21.2, another way: E[min(X, t_d)·f/(1 + f) + 1[X > t_d]·(R + τ/2)], X ~ Exp(D), by quadrature."""
    from scipy.integrate import quad

    f, d, td, r = 0.1, 7200.0, 600.0, 600.0
    slowed, _ = quad(lambda x: min(x, td) * f / (1 + f) * math.exp(-x / d) / d, 0.0, td)
    slowed += td * f / (1 + f) * math.exp(-td / d)  # every period longer than t_d ran slow t_d
    swapped = math.exp(-td / d) * (r + TAU / 2)
    assert stragglers.restarted(f, d, td, r, TAU) == pytest.approx(slowed + swapped, rel=1e-10)


def test_the_job_counts_the_share_lost(run_json: RunJson) -> None:
    """docs/model.md §21.4: one slow period a day costs 654.5455 / 86 400 of the time, 0.92500403 → 0.9179964."""
    found = run_json("optimize", *JOB, *SLOW)
    part = found["stragglers"]
    assert found["model"] == "approximate"
    assert part["policy"] == "tolerate"
    assert part["interval_s"] == pytest.approx(266.762, abs=5e-4)
    assert part["restart_s"] == 600.0
    assert part["tolerate_loss_s"] == pytest.approx(654.5455, abs=5e-5)
    assert part["restart_loss_s"] == pytest.approx(727.0777, abs=5e-5)
    assert part["break_even_duration_s"] == pytest.approx(8067.192, abs=5e-4)
    assert part["share"] == pytest.approx(654.5455 / 86400, rel=1e-7)
    assert part["periodic_effective"] == pytest.approx(0.92500403, abs=1e-8)
    assert found["effective"] == pytest.approx(0.9179964, abs=1e-7)
    # The split still sums to the loss: the slowed running joins the restart term.
    loss = found["loss"]
    assert loss["write"] + loss["rework"] + loss["restart"] == pytest.approx(1 - found["effective"], rel=1e-12)


def test_the_better_policy_is_applied_on_either_side_of_the_break_even(run_json: RunJson) -> None:
    """docs/model.md §21.2: below D* tolerating loses less, above it restarting; at D* the two are equal."""
    even = stragglers.break_even_duration(0.1, 600.0, TAU)
    assert stragglers.restarted(0.1, even, 600.0, 600.0, TAU) == pytest.approx(
        stragglers.tolerated(0.1, even), rel=1e-12
    )
    assert even * 0.1 / 1.1 == pytest.approx(600.0 + TAU / 2, rel=1e-12)  # what is left of a period found, tolerated
    below = run_json("optimize", *JOB, *_with(f"{even * 0.99}s"))["stragglers"]
    above = run_json("optimize", *JOB, *_with(f"{even * 1.01}s"))["stragglers"]
    assert below["policy"] == "tolerate" and above["policy"] == "restart"
    at_4h = run_json("optimize", *JOB, *_with("4h"))
    assert at_4h["stragglers"]["policy"] == "restart"
    assert at_4h["stragglers"]["loss_per_period_s"] == pytest.approx(756.8761, abs=5e-5)
    assert at_4h["stragglers"]["share"] == pytest.approx(0.0087601, abs=5e-8)


@settings(max_examples=60, deadline=None)
@given(
    factor=st.floats(0.01, 3.0),
    duration=st.floats(60.0, 1e6),
    detect=st.floats(0.0, 1e5),
    restart=st.floats(1.0, 1e4),
    interval=st.floats(10.0, 1e5),
)
def test_the_policy_applied_loses_no_more_than_either(
    factor: float, duration: float, detect: float, restart: float, interval: float
) -> None:
    """docs/model.md §21.2: restarting loses less exactly when D > D* (memoryless), whatever the detection."""
    tolerate = stragglers.tolerated(factor, duration)
    restarted = stragglers.restarted(factor, duration, detect, restart, interval)
    even = stragglers.break_even_duration(factor, restart, interval)
    if abs(duration - even) < 1e-9 * even or math.exp(-detect / duration) < 1e-12:
        event("at the break-even, or every period ends before detection")
        return
    event("restart loses less" if restarted < tolerate else "tolerate loses less")
    assert (restarted < tolerate) == (duration > even)


# ------------------------------------------------------------------ without slow periods, and with others


@pytest.mark.parametrize(
    "others",
    [
        (),
        ("--snapshot-bw", "20TB/s"),
        ("--replica-survival", "0.9", "--memory-bw", "10TB/s", "--memory-restart", "1min"),
        ("--spares", "2", "--repair", "4h", "--nodes", "2048"),
        ("--groups", "8", "--group-share", "0.9", "--rejoin", "30min"),
    ],
    ids=["one level", "async", "two tiers", "spares", "elastic groups"],
)
def test_it_is_a_factor_on_the_effective_time(run_json: RunJson, others: tuple[str, ...]) -> None:
    """docs/model.md §21.3: with any other mechanism the effective time is the job's without slow periods times
    the running share 1 − s, s worked out at the top interval run; without them every number is unchanged."""
    plain = run_json("optimize", *JOB, *others)
    slow = run_json("optimize", *JOB, *others, *SLOW)
    part = slow["stragglers"]
    assert plain["stragglers"] is None
    assert slow["model"] == "approximate"
    assert slow["interval_s"] == plain["interval_s"]
    assert part["periodic_effective"] == pytest.approx(plain["effective"], rel=1e-12)
    assert slow["effective"] == pytest.approx(plain["effective"] * part["running_share"], rel=1e-12)
    tolerate = stragglers.tolerated(0.1, 7200.0)
    assert part["share"] == pytest.approx(min(tolerate, part["restart_loss_s"]) / 86400.0, rel=1e-12)


def test_without_slow_periods_every_number_is_the_jobs(run_json: RunJson) -> None:
    """With no slow periods the model is today's to the last digit (1e-12 and better); its baseline is the job."""
    job = api.job(size="6.48TB", bw="2TB/s", mtbf="3.1h", restart="10min")
    slow = api.job(size="6.48TB", bw="2TB/s", mtbf="3.1h", restart="10min", slow_mtbf="1d", slow_factor="0.1",
                   slow_duration="2h", slow_detect="10min")  # fmt: skip
    assert evaluate(stragglers.MECHANISM.without(slow.config)) == evaluate(job.config)
    # Slow periods ever rarer tend to the job without them.
    rare = api.job(size="6.48TB", bw="2TB/s", mtbf="3.1h", restart="10min", slow_mtbf="1e20s", slow_factor="0.1",
                   slow_duration="2h", slow_detect="10min")  # fmt: skip
    assert float(evaluate(rare.config).effective) == pytest.approx(float(evaluate(job.config).effective), rel=1e-12)


# ------------------------------------------------------------------ levers, plan, report


def test_the_other_policy_is_a_lever_with_its_break_even(run_json: RunJson, run: Run) -> None:
    """docs/model.md §21.5: the policy not applied, its gain the difference of the two losses, paying above D*."""
    found = run_json("optimize", *JOB, *SLOW)
    lever = next(v for v in found["levers"] if v["key"] == "slow_replace")
    gain = (654.5455 - 727.0777) / 86400 * 0.92500403 * 100
    assert lever["gain_pp"] == pytest.approx(gain, abs=1e-6)
    assert lever["break_even"] == {
        "key": "slow_duration_s",
        "value": pytest.approx(8067.192, abs=5e-4),
        "unit": "duration",
        "pays": "above",
    }
    assert "slow_detect_half" not in {v["key"] for v in found["levers"]}  # a tolerating job gains nothing
    table = run("optimize", *JOB, *SLOW).stdout
    assert "replace slow nodes at detection (a restart); pays above 2.24 h mean slow period" in table
    restarting = run_json("optimize", *JOB, *_with("4h"))
    keys = {v["key"]: v for v in restarting["levers"]}
    assert keys["slow_tolerate"]["break_even"]["pays"] == "below" and keys["slow_tolerate"]["gain_pp"] < 0
    assert keys["slow_detect_half"]["gain_pp"] > 0


def test_plan_stretches_its_runs_by_the_share(run_json: RunJson) -> None:
    """``plan``'s whole runs step the failures; the slow periods' average loss stretches the work they do."""
    found = run_json("plan", *JOB, *SLOW, "--work", "10d", "--runs", "200")
    assert found["stragglers"]["share"] == pytest.approx(654.5455 / 86400, rel=1e-7)
    assert found["effective"] == pytest.approx(0.9179964, abs=1e-7)
    assert found["expected_s"] == pytest.approx(10 * 86400 / found["effective"], rel=1e-12)
    assert any("slow periods" in w for w in found["warnings"])


def test_the_report_says_what_they_cost(run: Run, tmp_path: Any) -> None:
    out = tmp_path / "report.md"
    result = run("report", *JOB, *SLOW, "--markdown", str(out))
    assert result.exit_code == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    assert "Stragglers: slow periods cost 0.758 % of the time, tolerating them" in text
    assert "restarting pays above a mean period of 2.24 h" in text
    assert "| break-even duration | 2.24 h |" in text


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("--slow-mtbf", "1d"), "--slow-factor"),
        (("--slow-mtbf", "1d", "--slow-factor", "0.1", "--slow-duration", "2h"), "--slow-detect"),
        (("--slow-factor", "0.1"), "--slow-factor"),
        (("--slow-detect", "10min"), "--slow-detect"),
        ((*SLOW[:2], "--slow-factor", "-0.1", *SLOW[4:]), "--slow-factor"),
        ((*SLOW[:2], "--slow-factor", "0", *SLOW[4:]), "--slow-factor"),
        ((*SLOW[:6], "--slow-detect", "-1s"), "--slow-detect"),
        ((*SLOW[:4], "--slow-duration", "0s", *SLOW[6:]), "--slow-duration"),
        (("--slow-mtbf", "nan", *SLOW[2:]), "--slow-mtbf"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(run: Run, args: tuple[str, ...], flag: str) -> None:
    result = run("optimize", *args)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {flag}"), result.stderr


def test_a_detection_at_once_is_allowed(run_json: RunJson) -> None:
    """t_d = 0: every period is found at once; restarting loses R + τ/2 a period."""
    found = run_json("optimize", *JOB, *SLOW[:6], "--slow-detect", "0s")
    assert found["stragglers"]["restart_loss_s"] == pytest.approx(600.0 + TAU / 2, rel=1e-9)


# ------------------------------------------------------------------ the simulation (docs/model.md §21.6)


@pytest.mark.parametrize(
    "others",
    [
        _with("2h"),
        _with("4h"),
        (*_with("4h"), "--snapshot-bw", "20TB/s"),
        (*_with("4h"), "--replica-survival", "0.9", "--memory-bw", "10TB/s", "--memory-restart", "1min"),
    ],
    ids=["tolerate", "restart", "restart, async", "restart, two tiers"],
)
def test_the_simulation_agrees_with_the_model(run_json: RunJson, others: tuple[str, ...]) -> None:
    """docs/model.md §21.6: the model inside the simulation's 95 % interval, or within 0.1 pp (first order)."""
    found = run_json("simulate", *JOB, *others, "--cycles", "40000")
    model = found["analytic"]["exact"]
    low, high = found["effective_ci95"]
    assert low <= model <= high or abs(found["effective"] - model) <= 0.001, (found["effective"], model)
    part = found["stragglers"]
    assert part["periods"] > 0
    assert (part["restarts_at_detection"] > 0) == ("4h" in others)


def test_without_a_periodic_checkpoint_only_tolerating_is_open(run_json: RunJson) -> None:
    """Every failure recovered in place or met with notice: no checkpoint to restart from, so no restart policy,
    no break-even and no lever for it; the share is the tolerated one."""
    found = run_json("optimize", *JOB, *SLOW, "--jit-share", "0.5", "--notice-share", "0.5", "--step-time", "10s")
    part = found["stragglers"]
    assert part["policy"] == "tolerate" and part["restart_loss_s"] is None and part["break_even_duration_s"] is None
    assert part["share"] == pytest.approx(654.5455 / 86400, rel=1e-7)
    assert found["effective"] == pytest.approx(part["periodic_effective"] * part["running_share"], rel=1e-12)
    assert not {"slow_replace", "slow_tolerate"} & {v["key"] for v in found["levers"]}


# ------------------------------------------------------------------ overlapping periods (docs/model.md §21.3)

BASELINE = 0.9250040299042854  # the job without slow periods (docs/model.md §2)


def test_periods_that_overlap_run_slow_no_more_than_all_the_time(run_json: RunJson, run: Run) -> None:
    """docs/model.md §21.3 (0.83802): a period of 1 000 d a day is always on; first order would lose D·f/(1 + f)/M_s =
    90.9 of the time (the effective time went to −52). The slowed share is held to f/(1 + f) = 1/11, the
    restart at detection after t_d = 1 000 d keeps e^{−1} of the periods: restart e^{−1}·600/86 400, rework
    e^{−1}·(τ/2)/86 400. The documents keep their schemas, and the table warns."""
    args = (*JOB, "--slow-mtbf", "1d", "--slow-factor", "0.1", "--slow-duration", "1000d", "--slow-detect", "1000d")
    found = run_json("optimize", *args)
    still = math.exp(-1.0)
    slowed, restart, rework = 0.1 / 1.1, still * 600.0 / 86400.0, still * TAU / 2.0 / 86400.0
    assert found["effective"] == pytest.approx(BASELINE * (1.0 - slowed - restart - rework), rel=1e-9)
    part = found["stragglers"]
    assert part["share"] == pytest.approx(slowed + restart + rework, rel=1e-9)
    assert part["periodic_effective"] == pytest.approx(BASELINE, rel=1e-12)
    assert all(0.0 <= found["loss"][k] <= 1.0 for k in ("write", "rework", "restart"))
    warned = [w for w in found["warnings"] if w.startswith("slow periods overlap")]
    assert len(warned) == 1 and "their losses 5.75e+03 % of the time" in warned[0]
    assert f"{1000.0 * (1.0 - still):.3g} on at once" in warned[0]  # D(1 − e^{−t_d/D})/M_s
    assert "(running slow held to all of the time, the losses held to the whole time)" in warned[0]
    table = run("optimize", *args)
    assert table.exit_code == 0 and "slow periods overlap: 632 on at once" in " ".join(table.stderr.split())


def test_losses_past_the_whole_time_are_held_to_it(run_json: RunJson) -> None:
    """A slow period every 5 min restarting at once (t_d 0) loses R + τ/2 = 733.4 s each: 2.44 of the time at
    first order (the effective time was −1.34). The losses are held to the whole time: nothing is kept."""
    args = (*JOB, "--slow-mtbf", "5min", "--slow-factor", "0.1", "--slow-duration", "4h", "--slow-detect", "0s")
    found = run_json("optimize", *args)
    assert found["effective"] == 0.0
    part = found["stragglers"]
    assert part["share"] == pytest.approx(1.0, rel=1e-12) and part["running_share"] == pytest.approx(0.0, abs=1e-12)
    assert part["periodic_effective"] == pytest.approx(BASELINE, rel=1e-12)
    assert any("their losses 244 % of the time" in w for w in found["warnings"])


@pytest.mark.parametrize(("mtbf", "warned"), [("1d", False), ("12h", False), ("6h", True), ("1h", True)])
def test_the_warning_starts_where_periods_overlap(run_json: RunJson, mtbf: str, warned: bool) -> None:
    """At D = 2 h tolerated (§21.4) the periods on at once are D/M_s: 0.083 a day, 0.17 at 12 h, then 0.33 at
    6 h and 2 at 1 h, past the quarter where first order is said to be rough."""
    found = run_json("optimize", *JOB, "--slow-mtbf", mtbf, *SLOW[2:])
    assert found["stragglers"]["policy"] == "tolerate"
    says = [w for w in found["warnings"] if w.startswith("slow periods overlap")]
    assert bool(says) == warned
    if warned:
        on = 7200.0 / {"6h": 21600.0, "1h": 3600.0}[mtbf]
        assert f"{on:.3g} on at once on average" in says[0]
        assert ("(running slow held to all of the time)" in says[0]) == (on > 1.0)  # 2 at 1 h, 1/3 at 6 h


def test_a_preset_missing_one_of_them_is_named_by_its_key(run: Run, tmp_path: Any) -> None:
    """A preset's [stragglers] without slow_detect names the file and the key, as every preset error does (it
    named the flag, --slow-detect, which the user never gave)."""
    path = tmp_path / "slow.toml"
    path.write_text(
        'schema_version = 1\nbase = "llama3-405b"\n[stragglers]\nslow_mtbf = "1d"\nslow_factor = 0.1\n'
        'slow_duration = "4h"\n',
        encoding="utf-8",
    )
    result = run("optimize", "--preset", str(path))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: stragglers.slow_detect: slow periods need ")
    assert len(result.stderr.strip().splitlines()) == 1
