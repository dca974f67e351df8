"""Silent events and retention (docs/model.md §16): inputs, P(unrecoverable), the keep advised, the model."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.mechanisms.silent import home as silent_home
from ckptcalc.mechanisms.silent import model as silent
from ckptcalc.model.evaluation import Config, evaluate

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]


# ------------------------------------------------------------ P_u (docs/model.md §16.1)


@pytest.mark.parametrize(
    ("keep", "expected"),
    # docs/model.md §16.1: τ = 600 s, d = 1 h, worked by hand: 6·(1 − e^{−1/6}) = 0.92110965,
    # times e^{−(k−1)/6}.
    [(1, 0.92110965), (2, 0.77970249), (5, 0.47291346), (10, 0.20552734), (20, 0.03881910)],
)
def test_p_unrecoverable_reference_16_1(keep: int, expected: float) -> None:
    found = silent.p_unrecoverable(interval_s=600.0, latency_s=3600.0, keep=float(keep))
    assert found == pytest.approx(expected, abs=5e-9)


def test_p_unrecoverable_is_the_chance_that_k_checkpoints_follow_the_onset() -> None:
    # An independent form: the onset u uniform in (0, τ), N ≥ k checkpoints follow it when
    # D > (τ − u) + (k − 1)τ; integrate over u by the midpoint rule.
    tau, d, k = 600.0, 3600.0, 5
    steps = 20_000
    total = sum(math.exp(-((tau - (i + 0.5) * tau / steps) + (k - 1) * tau) / d) for i in range(steps)) / steps
    assert silent.p_unrecoverable(interval_s=tau, latency_s=d, keep=float(k)) == pytest.approx(total, rel=1e-8)


def test_every_checkpoint_kept_or_noticed_at_once_is_never_unrecoverable() -> None:
    assert silent.p_unrecoverable(interval_s=600.0, latency_s=3600.0, keep=None) == 0.0
    assert silent.p_unrecoverable(interval_s=600.0, latency_s=0.0, keep=1.0) == 0.0


def test_p_unrecoverable_on_arrays_matches_floats() -> None:
    numpy = pytest.importorskip("numpy")
    keeps = numpy.array([1.0, 5.0, 20.0])
    found = silent.p_unrecoverable(interval_s=600.0, latency_s=numpy.array([3600.0, 3600.0, 3600.0]), keep=keeps)
    for value, k in zip(numpy.asarray(found), keeps, strict=True):
        assert value == pytest.approx(silent.p_unrecoverable(interval_s=600.0, latency_s=3600.0, keep=float(k)))


def test_keep_for_risk_reference_16_2() -> None:
    # docs/model.md §16.2: 54 days at one event per 14 d (n_s = 3.857), τ = 10 min, d = 1 h, 1 %:
    # P* = −ln 0.99 / 3.857 = 0.0026057, k = 1 + ⌈6·ln(0.92111/0.0026057)⌉ = 1 + ⌈35.21⌉ = 37.
    events = 54.0 / 14.0
    k = silent.keep_for_risk(interval_s=600.0, latency_s=3600.0, events=events, risk=0.01)
    assert k == 37
    at = silent.p_run(events, silent.p_unrecoverable(interval_s=600.0, latency_s=3600.0, keep=float(k)))
    below = silent.p_run(events, silent.p_unrecoverable(interval_s=600.0, latency_s=3600.0, keep=float(k - 1)))
    assert at <= 0.01 < below


def test_p_run_is_at_least_one_of_poisson_many() -> None:
    assert silent.p_run(3.0, 0.1) == pytest.approx(1.0 - math.exp(-0.3), rel=1e-12)


def test_rework_per_event_first_order() -> None:
    # τ/2 + d + r + s_k (+ P_u·(K_p − τ)/2): 300 + 3600 + 600 + 120 (+ 0.5·(86400 − 600)/2).
    base = dict(interval_s=600.0, latency_s=3600.0, restart_s=600.0, skip_s=120.0, p_u=0.5)
    assert silent.rework_per_event(**base, keep_every_s=None) == 4620.0
    assert silent.rework_per_event(**base, keep_every_s=86400.0) == 4620.0 + 21450.0


# ------------------------------------------------------------ the command line: inputs


@pytest.mark.parametrize(
    ("inputs", "culprit"),
    [
        ({"keep": 0}, "keep"),
        ({"keep": 2.5}, "keep"),
        ({"silent_mtbf": "14d"}, "silent_mtbf"),  # no detection latency
        ({"detect_latency": "1h"}, "detect_latency"),  # no silent events
        ({"skip": "10min"}, "skip"),
        ({"silent_mtbf": "14d", "detect_latency": "60d", "work": "54d"}, "detect_latency"),
        ({"keep_every": "5min", "interval": "10min"}, "keep_every"),
        ({"silent_events": 6, "detect_latency": "1h"}, "silent_events"),  # no window
        ({"silent_events": 1.5, "window": "54d", "detect_latency": "1h"}, "silent_events"),
        ({"silent_mtbf": "14d", "silent_events": 6, "window": "54d", "detect_latency": "1h"}, "silent_events"),
        ({"silent_mtbf": "14d", "detect_latency": "1h", "silent_risk": 0}, "silent_risk"),
        ({"silent_mtbf": "14d", "detect_latency": "-1h"}, "detect_latency"),
        ({"silent_mtbf": "0s", "detect_latency": "1h"}, "silent_mtbf"),
        ({"silent_mtbf": "14d", "detect_latency": "1h", "shape": 0.7}, "silent_mtbf"),
    ],
)
def test_bad_silent_input_names_the_input(inputs: dict[str, Any], culprit: str) -> None:
    from ckptcalc import api
    from ckptcalc.errors import InputError

    with pytest.raises(InputError) as caught:
        api.job("llama3-405b", **inputs)
    assert caught.value.where == culprit


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--keep", "0"], "--keep"),
        (["--silent-mtbf", "14d", "--detect-latency", "60d", "--work", "54d"], "--detect-latency"),
        (["--keep-every", "5min", "--interval", "10min"], "--keep-every"),
    ],
)
def test_bad_silent_input(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("optimize", *args, "--json"), culprit)


def test_a_preset_states_silent_events_and_retention(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "late.toml"
    path.write_text(
        'schema_version = 1\nbase = "llama3-405b"\n[silent]\nmtbf = "14d"\ndetect_latency = "1h"\n'
        "[retention]\nkeep = 0\n",
        encoding="utf-8",
    )
    assert_usage_error(run("optimize", "--preset", str(path), "--json"), "retention.keep")


def test_silent_events_share_the_window_with_a_stated_mtbf() -> None:
    from ckptcalc import api

    job = api.job("llama3-405b", silent_events=6, window="54d", detect_latency="1h")
    assert silent_home.stepped(job.config)[0] == pytest.approx(54 * 86400 / 6)
    assert job.config.mtbf_s == pytest.approx(3.1 * 3600)
    low, high = dict(job.classes).get("silent") or (0.0, None)
    assert low < 54 * 86400 / 6 < (high or math.inf)


# ------------------------------------------------------------ the exact model with silent events


def _llama(**changes: Any) -> Config:
    return Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0).replace(**changes)


def test_silent_events_lower_the_optimum_and_the_effective_time() -> None:
    plain = evaluate(_llama())
    late = evaluate(_llama(silent_mtbf_s=86400.0, detect_latency_s=3600.0))
    assert late.effective < plain.effective
    assert late.optimal_interval_s < plain.optimal_interval_s
    # First order's interval √(2δ/(λ + λ_s)) = 253.07 s; the exact one lies a little below, as without.
    young = late.first_order.optimal_interval_s
    assert young == pytest.approx(253.07, abs=0.005)
    assert late.optimal_interval_s == pytest.approx(young, rel=0.03)


def test_a_vanishing_silent_rate_is_the_plain_model() -> None:
    plain = evaluate(_llama(interval_s=300.0))
    late = evaluate(_llama(interval_s=300.0, silent_mtbf_s=1e15, detect_latency_s=3600.0))
    assert late.effective == pytest.approx(plain.effective, abs=1e-9)


# ------------------------------------------------------------ the JSON document and the table


def test_optimize_json_reports_p_unrecoverable_and_the_keep(run_json: RunJson) -> None:
    # The check: τ = 10 min, d = 1 h, k = 5 → 0.4729 (docs/model.md §16.1); over 54 days
    # 1 − e^{−3.857·0.47291} = 0.83864 and keep 37 (§16.2).
    doc = run_json(
        "optimize", "--silent-mtbf", "14d", "--detect-latency", "1h", "--keep", "5", "--interval", "10min",
        "--work", "54d",
    )  # fmt: skip
    found = doc["silent"]
    assert found["p_unrecoverable_per_event"] == pytest.approx(0.4729, abs=1e-4)
    assert found["per_day"] == pytest.approx(1 / 14)
    assert found["events_per_run"] == pytest.approx(54 / 14)
    assert found["p_unrecoverable_run"] == pytest.approx(0.83864, abs=1e-5)
    assert found["keep_for_risk"] == 37
    # τ/2 + d + r = 300 + 3600 + 600 s.
    assert found["rework_per_event_s"] == pytest.approx(4500.0)
    assert doc["inputs"]["keep"] == 5 and doc["inputs"]["silent_mtbf_s"] == 14 * 86400.0
    assert any("retention too short" in w for w in doc["warnings"])


def test_the_keep_advised_meets_the_risk_and_no_run_no_risk() -> None:
    at_keep = evaluate(
        _llama(interval_s=600.0, silent_mtbf_s=14 * 86400.0, detect_latency_s=3600.0, keep=37.0, work_s=54 * 86400.0)
    ).silent
    assert at_keep.p_unrecoverable_run <= 0.01
    no_run = evaluate(_llama(interval_s=600.0, silent_mtbf_s=14 * 86400.0, detect_latency_s=3600.0, keep=5.0)).silent
    assert no_run.events_per_run is None and no_run.p_unrecoverable_run is None and no_run.keep_for_risk is None


def test_no_silent_events_no_silent_block() -> None:
    assert evaluate(_llama()).silent is None


def test_keep_every_shorter_than_the_optimum_run() -> None:
    from ckptcalc.errors import InputError

    with pytest.raises(InputError) as caught:
        evaluate(_llama(silent_mtbf_s=14 * 86400.0, detect_latency_s=3600.0, keep_every_s=60.0))
    assert caught.value.where == "keep_every_s"


def test_the_table_shows_the_silent_rows(run: Run) -> None:
    result = run("optimize", "--silent-mtbf", "14d", "--detect-latency", "1h", "--keep", "5", "--work", "54d")
    assert result.exit_code == 0, result.stderr
    assert "P(unrecoverable)" in result.stdout and "keep for" in result.stdout


# ------------------------------------------------------------ check --max-silent-risk

_RETAINED = (
    'schema_version = 1\nbase = "llama3-405b"\n[silent]\nmtbf = "14d"\ndetect_latency = "1h"\n'
    '[storage]\ninterval = "10min"\n[run]\nwork = "54d"\n[retention]\nkeep = {keep}\n'
)


def _retained(tmp_path: Path, keep: int) -> str:
    path = tmp_path / f"keep{keep}.toml"
    path.write_text(_RETAINED.format(keep=keep), encoding="utf-8")
    return str(path)


def test_check_fails_when_retention_is_too_short(run: Run, tmp_path: Path) -> None:
    import json

    result = run("check", _retained(tmp_path, 5), "--max-silent-risk", "1%", "--json")
    assert result.exit_code == 3, result.stderr
    row = json.loads(result.stdout)["results"][0]
    assert row["silent"]["p_unrecoverable_run"] == pytest.approx(0.83864, abs=1e-5)
    assert row["silent"]["keep_for_risk"] == 37 and not row["passed"]
    # At the keep it advises, the same preset passes (docs/model.md §16.2).
    assert run("check", _retained(tmp_path, 37), "--max-silent-risk", "1%").exit_code == 0


def test_check_without_a_run_length_names_it(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "norun.toml"
    path.write_text(_RETAINED.format(keep=5).replace('[run]\nwork = "54d"\n', ""), encoding="utf-8")
    result = run("check", str(path), "--max-silent-risk", "1%")
    assert result.exit_code == 2 and "[run] work" in result.stderr


def test_check_needs_a_floor_or_a_risk(run: Run) -> None:
    assert_usage_error(run("check", "llama3-405b"), "--min-effective")
    assert_usage_error(run("check", "llama3-405b", "--max-silent-risk", "0"), "--max-silent-risk")


# ------------------------------------------------------------ the simulation (docs/model.md §16.4)

#: (τ, δ, r, M, silent MTBF, d, skip, keep, every p-th kept for good): silent losses of 0.6 to 6.5 pp,
#: every checkpoint kept or a few, with and without some kept for good, with and without a skip.
_SIMULATED = [
    (600.0, 10.0, 300.0, 7200.0, 86400.0, 1800.0, 0.0, None, None),
    (300.0, 5.0, 600.0, 11160.0, 43200.0, 900.0, 0.0, 4, 12),
    (300.0, 5.0, 600.0, 20000.0, 21600.0, 600.0, 300.0, None, None),
    (600.0, 10.0, 300.0, 11160.0, 1209600.0 / 2, 3600.0, 0.0, 5, 24),
    (600.0, 10.0, 300.0, 30000.0, 30000.0, 300.0, 0.0, None, None),
    # A few kept, none for good: an unrecoverable event is the run's risk, not a loss of the steady state.
    (600.0, 10.0, 300.0, 20000.0, 86400.0, 1800.0, 0.0, 3, None),
    (300.0, 5.0, 600.0, 30000.0, 43200.0, 1200.0, 120.0, 2, None),
]


@pytest.mark.parametrize(("tau", "delta", "r", "mtbf", "every_s", "d", "skip", "keep", "forever"), _SIMULATED)
def test_the_simulation_agrees_with_the_model(
    tau: float,
    delta: float,
    r: float,
    mtbf: float,
    every_s: float,
    d: float,
    skip: float,
    keep: int | None,
    forever: int | None,
) -> None:
    from one_level_silent import simulate

    config = _llama(
        checkpoint_bytes=delta, bandwidth=1.0, mtbf_s=mtbf, restart_s=r, interval_s=tau, silent_mtbf_s=every_s,
        detect_latency_s=d, skip_s=skip, keep=None if keep is None else float(keep),
        keep_every_s=None if forever is None else forever * tau,
    )  # fmt: skip
    model = float(evaluate(config).effective)
    none: dict[str, Any] = {"silent_mtbf_s": None}
    plain = float(evaluate(config.replace(**none)).effective)
    run = simulate(interval_s=tau, stall_s=delta, restart_s=r, mtbf_s=mtbf, silent_mtbf_s=every_s, latency_s=d,
                   skip_s=skip, keep=keep, keep_every=forever, cycles=12_000, seed=1)  # fmt: skip
    low, high = run.ci95
    # Within the run's 95 % interval or 0.1 pp, while the silent events cost at least five times that.
    assert low - 0.001 <= model <= high + 0.001, (model, run.ci95)
    assert plain - model > 0.005
    assert run.events > 50


def test_the_simulated_share_unrecoverable_is_p_u() -> None:
    # No fail-stop to speak of: the share of events with no retained clean checkpoint is P_u
    # (keep 2, τ = 600 s, d = 1200 s: 2·(1 − e^{−1/2})·e^{−1/2} = 0.47730), within its binomial spread.
    from one_level_silent import simulate

    run = simulate(interval_s=600.0, stall_s=1.0, restart_s=60.0, mtbf_s=1e6, silent_mtbf_s=6000.0,
                   latency_s=1200.0, skip_s=0.0, keep=2, keep_every=4, cycles=20, seed=2)  # fmt: skip
    expected = float(silent.p_unrecoverable(interval_s=600.0, latency_s=1200.0, keep=2.0))
    assert expected == pytest.approx(0.47730, abs=1e-5)
    assert run.p_unrecoverable is not None and run.events > 1500
    spread = math.sqrt(expected * (1 - expected) / run.events)
    assert abs(run.p_unrecoverable - expected) < 4 * spread
    assert abs(run.latency_s - 1200.0) < 4 * 1200.0 / math.sqrt(run.events)


def test_simulate_runs_silent_events(run_json: RunJson) -> None:
    doc = run_json(
        "simulate", "--silent-mtbf", "1d", "--detect-latency", "30min", "--mtbf", "2h", "--size", "10GB",
        "--bw", "1GB/s", "--restart", "5min", "--interval", "10min", "--cycles", "12000", "--seed", "1",
    )  # fmt: skip
    assert doc["silent"]["events"] > 500
    assert doc["agreement"]["exact"]["agrees"]


@pytest.mark.parametrize(
    "extra",
    [
        ["--replica-survival", "0.9", "--memory-bw", "1TB/s", "--memory-restart", "1min"],
        ["--optimize"],
        ["--snapshot-bw", "100GB/s"],
    ],
)
def test_simulate_refuses_what_it_cannot_run_with_silent_events(run: Run, extra: list[str]) -> None:
    result = run("simulate", "--silent-mtbf", "1d", "--detect-latency", "30min", "--cycles", "100", *extra, "--json")
    assert result.exit_code == 2 and result.stderr.startswith("error: ")


def test_the_palm_spikes_preset() -> None:
    # presets/palm-spikes.toml: 20 spikes in 50 days of work (one per 2.5 d), noticed in 5 min on average.
    from ckptcalc import api

    job = api.job("palm-spikes")
    c = job.config
    mean = silent_home.stepped(c)[0]
    assert mean == pytest.approx(50 * 86400 / 20)
    stated = tuple(getattr(c, name) for name in ("detect_latency_s", "skip_s", "keep", "keep_every_s", "work_s"))
    assert stated == (300.0, 6000.0, 5.0, 86400.0, 4.32e6)
    assert c.mtbf_s == 12 * 3600.0  # the window belongs to the silent events here, not to the failures
    band = dict(job.classes)["silent"]
    assert band[0] < mean < (band[1] or 0.0)


def test_plan_counts_the_silent_events_over_its_run(run_json: RunJson) -> None:
    # 54 days at one event per 14 d, k = 5, τ = 10 min, d = 1 h: 3.857 events, P_run 0.83864 (§16.2);
    # the whole runs carry the events' average cost, so their mean is the expectation.
    doc = run_json(
        "plan", "--work", "54d", "--silent-mtbf", "14d", "--detect-latency", "1h", "--keep", "5",
        "--interval", "10min", "--runs", "100",
    )  # fmt: skip
    assert doc["silent"]["events_per_run"] == pytest.approx(54 / 14)
    assert doc["silent"]["p_unrecoverable_run"] == pytest.approx(0.83864, abs=1e-5)
    assert abs(doc["mean_vs_expected"]) < 0.01
    plain = run_json("plan", "--work", "54d", "--interval", "10min", "--runs", "100")
    # First order, each event costs τ/2 + d + r = 4500 s per 14 d of work: 0.372 % more wall time.
    assert 1.0030 < doc["expected_s"] / plain["expected_s"] < 1.0045


def test_simulate_says_what_the_silent_events_did(run: Run) -> None:
    """docs/model.md §16.4: keeping 3 with none kept for good, most events find no clean checkpoint; the
    table counts them as the run's risk, and the steady state still agrees with the model."""
    args = ["simulate", "--silent-mtbf", "1d", "--detect-latency", "1h", "--keep", "3", "--mtbf", "6h",
            "--size", "10GB", "--bw", "1GB/s", "--restart", "5min", "--interval", "10min", "--cycles", "12000",
            "--seed", "3"]  # fmt: skip
    doc = json.loads(run(*args, "--json").stdout)
    found = doc["silent"]
    assert found["unrecoverable"] > 0.5 * found["events"] > 50
    assert found["analytic_p_unrecoverable_per_event"] == pytest.approx(
        float(silent.p_unrecoverable(interval_s=600.0, latency_s=3600.0, keep=3.0)), rel=1e-12
    )
    assert doc["agreement"]["exact"]["agrees"]
    text = " ".join(run(*args).stdout.split())
    assert f"{found['unrecoverable']:,} with no clean checkpoint retained" in text
    assert "each would lose the run so far" in text


def test_events_counted_in_a_window_carry_their_band(run_json: RunJson) -> None:
    """docs/model.md §16.2: 3 events in 54 d, a run of 54 d, τ = 10 min, d = 1 h, k = 5: 0.618672 to
    8.767273 events over the run, a risk of 0.25366 to 0.98417, and k = 42 at the band's highest rate."""
    doc = run_json("optimize", "--silent-events", "3", "--window", "54d", "--detect-latency", "1h", "--keep", "5",
                   "--work", "54d", "--interval", "10min")  # fmt: skip
    found = doc["silent"]
    run_s = 54 * 86400.0
    assert [run_s / x for x in found["mtbf_ci95"]] == pytest.approx([8.767273, 0.618672], abs=2e-6)
    assert found["events_per_run_ci95"] == pytest.approx([0.618672, 8.767273], abs=2e-6)
    assert found["p_unrecoverable_run_ci95"] == pytest.approx([0.25366, 0.98417], abs=2e-5)
    assert found["keep_for_risk_ci95"] == 42
    stated = run_json("optimize", "--silent-mtbf", "18d", "--detect-latency", "1h", "--keep", "5", "--work", "54d")
    assert stated["silent"]["mtbf_ci95"] is None and stated["silent"]["keep_for_risk_ci95"] is None
