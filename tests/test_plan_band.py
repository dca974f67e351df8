"""``plan`` on the calendar and across the MTBF's interval: a deadline given as an ISO date counted from
``--start``, the same runs at either end of the MTBF's 95 % interval, p95; and why ``fit`` counts one
interruption fewer than the events it keeps."""

from __future__ import annotations

import datetime
import doctest
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_usage_error
from conftest import validate

from ckptcalc import api
from ckptcalc.inputs import dates
from ckptcalc.simulation import plan as whole

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
DAY = 86400.0
HOUR = 3600.0

#: Llama 3's count (arXiv:2407.21783 §3.3): 419 interruptions in 54 days; 200 runs of 5 days of work.
COUNTED: dict[str, Any] = {"work": "5d", "failures": 419, "window": "54d", "runs": 200, "seed": 3}


def test_dates_doctests() -> None:
    failures, tried = doctest.testmod(dates)
    assert tried > 0 and failures == 0


# ------------------------------------------------------------------ the deadline on the calendar


@pytest.mark.parametrize(
    ("deadline", "start", "seconds", "iso_start", "iso_deadline"),
    [
        # A date is the start of its day, UTC: 1 July to 15 July is 14 days.
        ("2026-07-15", "2026-07-01", 14 * DAY, "2026-07-01T00:00:00+00:00", "2026-07-15T00:00:00+00:00"),
        # 12:00 at +02:00 is 10:00 UTC, 10 h after midnight UTC.
        ("2026-07-15T12:00+02:00", "2026-07-15T00:00Z", 10 * HOUR, "2026-07-15T00:00:00+00:00",
         "2026-07-15T12:00:00+02:00"),
        # No offset is UTC: 18:30 on the 14th to noon on the 15th is 17.5 h.
        ("2026-07-15T12:00Z", "2026-07-14T18:30", 17.5 * HOUR, "2026-07-14T18:30:00+00:00",
         "2026-07-15T12:00:00+00:00"),
        # Across the end of February 2028 (a leap year): 28 Feb to 1 Mar is 2 days.
        ("2028-03-01", "2028-02-28", 2 * DAY, "2028-02-28T00:00:00+00:00", "2028-03-01T00:00:00+00:00"),
        # A duration from a start: 10.5 d after 1 July is noon on 11 July.
        ("10.5d", "2026-07-01", 10.5 * DAY, "2026-07-01T00:00:00+00:00", "2026-07-11T12:00:00+00:00"),
    ],
)  # fmt: skip
def test_a_deadline_date_is_counted_from_the_start(
    run_json: RunJson, deadline: str, start: str, seconds: float, iso_start: str, iso_deadline: str
) -> None:
    doc = run_json("plan", "--work", "5h", "--runs", "20", "--deadline", deadline, "--start", start)
    assert doc["deadline_s"] == seconds
    assert (doc["start"], doc["deadline"]) == (iso_start, iso_deadline)


def test_a_date_gives_the_same_chance_as_the_duration_it_spans(run_json: RunJson) -> None:
    # 19:26:24 on 11 July from 1 July is 10.81 d (0.81 d = 19.44 h): the same runs, the same share
    # finished by then (W / effective is 10.81 d).
    by_date = run_json("plan", "--work", "10d", "--runs", "100", "--deadline", "2026-07-11T19:26:24Z",
                       "--start", "2026-07-01")  # fmt: skip
    by_duration = run_json("plan", "--work", "10d", "--runs", "100", "--deadline", "10.81d")
    assert by_date["deadline_s"] == by_duration["deadline_s"] == 10.81 * DAY
    assert 0.0 < by_date["p_deadline"] < 1.0
    assert by_date["p_deadline"] == by_duration["p_deadline"]
    assert by_duration["start"] is None and by_duration["deadline"] is None


def test_without_a_start_a_date_is_counted_from_now(run_json: RunJson) -> None:
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    doc = run_json("plan", "--work", "5h", "--runs", "20", "--deadline", "2099-01-01")
    after = datetime.datetime.now(datetime.UTC)
    start = datetime.datetime.fromisoformat(doc["start"])
    assert before <= start <= after
    end = datetime.datetime(2099, 1, 1, tzinfo=datetime.UTC)
    assert doc["deadline_s"] == (end - start).total_seconds()


def test_the_table_shows_the_dates(run: Run) -> None:
    out = run("plan", "--work", "5h", "--runs", "20", "--deadline", "2026-07-15T12:00+02:00", "--start",
              "2026-07-15").stdout  # fmt: skip
    assert "Deadline: 2026-07-15 12:00 +02:00, 10.0 h after the start at 2026-07-15 00:00 UTC." in out
    assert "P(finished within 10.0 h): " in out


@pytest.mark.parametrize(
    ("args", "culprit", "says"),
    [
        (["--deadline", "2026-13-01"], "--deadline", "not an ISO date"),
        (["--deadline", "2026-07-15T25:00"], "--deadline", "not an ISO date"),
        (["--deadline", "2026-07-15", "--start", "2026-07-20"], "--deadline", "is not after the start"),
        (["--deadline", "2026-07-15", "--start", "2026-07-15"], "--deadline", "is not after the start"),
        (["--deadline", "2026-07-15", "--start", "yesterday"], "--start", "not an ISO date"),
        (["--deadline", "2026-07-15", "--start", "2026-02-30"], "--start", "not an ISO date"),
        (["--start", "2026-07-01"], "--start", "needs --deadline"),
        (["--deadline", "1e20s", "--start", "2026-07-01"], "--deadline", "year 9999"),
        (["--deadline", "-1d", "--start", "2026-07-01"], "--deadline", "positive duration"),
    ],
)
def test_bad_dates(run: Run, args: list[str], culprit: str, says: str) -> None:
    result = run("plan", "--work", "5h", "--runs", "20", *args, "--json")
    assert_usage_error(result, culprit)
    assert says in result.stderr


# ------------------------------------------------------------------ across the MTBF's interval


@pytest.fixture(scope="module")
def counted() -> api.RunPlan:
    """The plan with its MTBF from 419 failures in 54 d, the deadline near W / effective (5.41 d)."""
    outcome = api.plan(**COUNTED, deadline="5.41d")
    validate(outcome.to_dict())
    return outcome


def _poisson_cdf(n: int, mean: float) -> float:
    """P(N ≤ n) for N ~ Poisson(mean), term by term in logs."""
    return sum(math.exp(k * math.log(mean) - mean - math.lgamma(k + 1)) for k in range(n + 1))


def test_the_band_is_the_exact_interval_of_the_count(counted: api.RunPlan) -> None:
    # docs/model.md §9.1, checked against its definition rather than the χ² quantiles: at M_lo, 419 or
    # fewer failures in T = 54 d have probability 0.025; at M_hi, 419 or more have 0.025.
    t = 54 * DAY
    low, high = counted["uncertainty"]["mtbf_s"]
    assert _poisson_cdf(419, t / low) == pytest.approx(0.025, rel=1e-6)
    assert 1.0 - _poisson_cdf(418, t / high) == pytest.approx(0.025, rel=1e-6)
    assert counted["uncertainty"]["source"] == "failures"


@pytest.mark.parametrize("end", [0, 1])
def test_each_end_is_a_plan_at_that_mtbf_with_the_same_schedule_and_seed(counted: api.RunPlan, end: int) -> None:
    band = counted["uncertainty"]
    mtbf = band["mtbf_s"][end]
    alone = api.plan(work="5d", mtbf=mtbf, interval=counted["interval_s"], runs=200, seed=3,
                     deadline=counted["deadline_s"])  # fmt: skip
    assert alone["uncertainty"] is None
    assert band["completion_s"][end] == alone.completion_s
    assert band["failures"][end] == alone["failures"]
    assert band["p_deadline"][end] == alone["p_deadline"]
    assert band["p_deadline_ci95"][end] == alone["p_deadline_ci95"]
    # W / effective at that MTBF and the plan's interval, by the model.
    effective = api.optimize(mtbf=mtbf, interval=counted["interval_s"])["effective"]
    assert band["expected_s"][end] == pytest.approx(5 * DAY / effective, rel=1e-12)


def test_p95_is_the_95th_percentile_of_the_runs(counted: api.RunPlan) -> None:
    assert counted.completion is not None
    times = np.sort(counted.completion.times_s)
    # Linear interpolation between order statistics: rank 0.95 × (200 − 1) = 189.05.
    by_hand = times[189] + 0.05 * (times[190] - times[189])
    assert counted.completion_s["p95"] == pytest.approx(by_hand, rel=1e-12)
    assert list(counted.completion_s) == ["p10", "p50", "p90", "p95", "mean"]
    for spread in [counted.completion_s, *counted["uncertainty"]["completion_s"]]:
        assert spread["p10"] <= spread["p50"] <= spread["p90"] <= spread["p95"]


def test_the_chance_of_the_deadline_grows_with_the_mtbf(counted: api.RunPlan) -> None:
    low, high = counted["uncertainty"]["p_deadline"]
    # The deadline is near the point's median: about half the runs make it, fewer at the low MTBF.
    assert low < counted["p_deadline"] < high
    slow, fast = counted["uncertainty"]["completion_s"]
    for key in ("p10", "p50", "p90", "p95", "mean"):
        assert slow[key] > counted.completion_s[key] > fast[key]


def test_no_failure_seen_plans_at_the_bound_and_has_no_upper_end() -> None:
    # 0 failures in 30 d: M > T / ln 20 at 95 % (docs/model.md §9.1); the plan is made at the bound,
    # so its low end is the point itself, run for run, and the upper end is open.
    outcome = api.plan(work="2d", failures=0, window="30d", runs=50, seed=2, deadline="2.5d")
    validate(outcome.to_dict())
    band = outcome["uncertainty"]
    assert band["source"] == "failures_bound"
    assert band["mtbf_s"] == [30 * DAY / math.log(20.0), None]
    assert band["completion_s"] == [outcome.completion_s, None]
    assert band["p_deadline"] == [outcome["p_deadline"], None]


def test_without_an_interval_there_is_no_band(run_json: RunJson) -> None:
    doc = run_json("plan", "--work", "5h", "--runs", "20")
    assert doc["uncertainty"] is None and doc["start"] is None


def test_a_stated_interval_is_run_at_its_ends(run_json: RunJson) -> None:
    # --mtbf-ci 2.5h:4h around the preset's 3.1 h: 9000 s and 14400 s, the longer runs at the lower end.
    band = run_json("plan", "--work", "2d", "--runs", "50", "--mtbf-ci", "2.5h:4h")["uncertainty"]
    assert band["source"] == "stated" and band["mtbf_s"] == [9000.0, 14400.0]
    assert band["expected_s"][0] > band["expected_s"][1]
    assert band["p_deadline"] is None and band["p_deadline_ci95"] is None


def test_the_table_shows_the_band_compactly(run: Run) -> None:
    out = run("plan", "--work", "5d", "--runs", "200", "--failures", "419", "--window", "54d",
              "--deadline", "5.4d").stdout  # fmt: skip
    assert "p95" in out
    assert "  MTBF 2.81 h " in out and "  MTBF 3.41 h " in out
    assert "MTBF rows: the ends of its 95 % interval" in out
    assert "P(finished within 5.40 d) at the MTBF's interval ends: " in out
    assert "% at 2.81 h, " in out and out.count("% at 3.41 h.") == 1


def test_progress_covers_the_three_simulations() -> None:
    seen: list[float] = []
    api.plan(**COUNTED, progress=seen.append)
    assert seen == sorted(seen) and seen[-1] == 1.0
    assert any(1 / 3 < x < 2 / 3 for x in seen)


def test_the_budget_counts_the_ends(run: Run) -> None:
    # 20 d of work at M = 3.09 h is about 168 failures a run: 1e6 runs alone are 1.7e8 (within 2e8),
    # with both ends about 5e8.
    assert 20 * DAY / 0.925 / (54 * DAY / 419) * 1e6 < whole.MAX_FAILURES
    result = run("plan", "--work", "20d", "--runs", "1e6", "--failures", "419", "--window", "54d", "--json")
    assert_usage_error(result, "--runs")
    assert "ends of its interval" in result.stderr


# ------------------------------------------------------------------ fit: why one interruption fewer


def test_fit_says_why_it_counts_fewer_interruptions(run: Run) -> None:
    args = ["fit", "tests/data/trace-54d.json", "--time-unit", "d", "--where", "planned=false"]
    doc = json.loads(run(*args, "--json").stdout)
    # 395 events kept, 10 coalesced into the one before: 385 interruptions, less the first (it opens the
    # window): 384 counted.
    assert (doc["events_kept"], doc["events_coalesced"], doc["interruptions"]) == (395, 10, 384)
    assert doc["interruptions_note"] == "10 coalesced; the window opens at the first, which is not counted"
    assert doc["warnings"] == []
    assert (
        "interruptions     384  10 coalesced; the window opens at the first, which is not counted" in run(*args).stdout
    )
    # A window opened before the first event counts it.
    earlier = json.loads(run(*args, "--window-start", "0", "--json").stdout)
    assert earlier["interruptions"] == 385
    assert "window opens" not in earlier["interruptions_note"]


def test_fit_from_counts_has_no_note(run_json: RunJson) -> None:
    assert run_json("fit", "--failures", "419", "--window", "54d")["interruptions_note"] is None
