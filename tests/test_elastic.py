"""Elastic replica groups (docs/model.md §14): inputs, the groups process, the output, the simulation,
the levers, what-ifs and sweeps."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc import api
from ckptcalc.inputs.fields import BY_PUBLIC
from ckptcalc.mechanisms.elastic import model as elastic
from ckptcalc.mechanisms.elastic.home import groups_of, periodic
from ckptcalc.model.evaluation import Config, evaluate

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: The elastic flags of the lever's assumption (docs/model.md §14.1).
GROUPS = ("--groups", "8", "--group-share", "0.95", "--rejoin", "30min", "--ft-overhead", "0.02")


# ------------------------------------------------------------------ inputs


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (("--groups", "1", "--group-share", "0.9", "--rejoin", "1h"), "--groups"),
        (("--groups", "2.5", "--group-share", "0.9", "--rejoin", "1h"), "--groups"),
        (("--groups", "eight", "--group-share", "0.9", "--rejoin", "1h"), "--groups"),
        (("--groups", "4", "--group-share", "1.2", "--rejoin", "1h"), "--group-share"),
        (("--groups", "4", "--group-share", "-0.1", "--rejoin", "1h"), "--group-share"),
        (("--groups", "4", "--group-share", "0.9", "--rejoin", "1h", "--ft-overhead", "2"), "--ft-overhead"),
        (("--groups", "4", "--group-share", "0.9", "--rejoin", "-5min"), "--rejoin"),
        (("--groups", "4", "--group-share", "0.9", "--rejoin", "1h", "--quorum-pause", "-1s"), "--quorum-pause"),
        (("--rejoin", "1h"), "--groups"),
        (("--groups", "4", "--group-share", "0.9", "--rejoin", "1h", "--shape", "0.7"), "--groups"),
        (("--groups", "4", "--rejoin", "1h", "--quorum-pause", "1e15s"), "--quorum-pause"),  # outlasts the rejoin
    ],
)
def test_bad_elastic_input_is_one_line_naming_the_option(run: Run, args: tuple[str, ...], culprit: str) -> None:
    assert_usage_error(run("optimize", *args), culprit)


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (("--rejoin", "10min", "--over", "quorum-pause", "--from", "0s", "--to", "1h"), "--to"),
        (("--quorum-pause", "5min", "--over", "rejoin", "--from", "1min", "--to", "1h"), "--from"),
    ],
)
def test_a_sweep_keeps_the_pause_within_the_rejoin(run: Run, args: tuple[str, ...], culprit: str) -> None:
    assert_usage_error(run("sweep", "--groups", "4", *args, "--points", "3"), culprit)


def test_a_pause_as_long_as_the_rejoin_keeps_first_order_in_range(run_json: RunJson) -> None:
    # M = 30 min, e = 0.9: group-local failures at eλ = 5e-4/s, A₀ = 1/(1 + eλT_j/4) = 0.6897, each pausing the
    # others an hour: first order's pause term eλ·A₀·q_p = 1.241 of the running time stops at all of it
    # (0 effective), never below.
    doc = run_json("optimize", "--groups", "4", "--group-share", "0.9", "--rejoin", "1h", "--quorum-pause", "1h",
                   "--mtbf", "30min")  # fmt: skip
    assert doc["first_order"]["effective"] == 0.0
    assert doc["effective"] > 0.0


@pytest.mark.parametrize("command", ["optimize", "sweep", "simulate", "plan"])
def test_every_model_command_takes_the_elastic_options(run: Run, command: str) -> None:
    """The options are declared once (FIELDS) for every command; each rejects a bad group count."""
    result = run(command, "--groups", "1", "--group-share", "0.9", "--rejoin", "1h")
    assert_usage_error(result, "--groups")
    assert "must be 2 or more" in result.stderr


def test_compare_and_check_take_them_from_what_ifs_and_presets(run: Run, tmp_path: Path) -> None:
    assert_usage_error(run("compare", "--what-if", "groups=1"), "groups")
    path = tmp_path / "e.toml"
    path.write_text('schema_version = 1\nbase = "llama3-405b"\n[elastic]\ngroups = 8\n', encoding="utf-8")
    result = run("check", str(path), "--min-effective", "0.95", "--json")
    assert result.exit_code == 0, result.stderr


def test_rejoin_longer_than_the_run_is_refused(run: Run) -> None:
    result = run("plan", "--work", "1h", "--groups", "4", "--group-share", "0.9", "--rejoin", "2h", "--runs", "200")
    assert_usage_error(result, "--rejoin")


def test_groups_alone_assume_what_the_lever_does(run_json: RunJson) -> None:
    alone, stated = run_json("optimize", "--groups", "8"), run_json("optimize", *GROUPS)
    assert alone["effective"] == stated["effective"]
    assert alone["inputs"]["group_share"] == 0.95 and alone["inputs"]["rejoin_s"] == 1800.0


def test_a_preset_states_the_groups_under_elastic(run_json: RunJson, tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(
        'schema_version = 1\nbase = "llama3-405b"\n[elastic]\ngroups = 8\ngroup_share = 0.95\nrejoin = "30min"\n'
        "ft_overhead = 0.02\n",
        encoding="utf-8",
    )
    by_file, by_flags = run_json("optimize", "--preset", str(path)), run_json("optimize", *GROUPS)
    assert by_file["effective"] == by_flags["effective"]
    assert by_file["inputs"]["groups"] == 8 and by_file["inputs"]["rejoin_s"] == 1800.0


def test_a_bad_preset_key_names_the_file_and_key(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "e.toml"
    path.write_text(
        'schema_version = 1\nbase = "llama3-405b"\n[elastic]\ngroups = 1\ngroup_share = 0.95\nrejoin = "30min"\n',
        encoding="utf-8",
    )
    assert_usage_error(run("optimize", "--preset", str(path)), "elastic.groups")


# ---------------------------------------------------------------- the model


def _series_up_share(rate: float, nu: float, rejoin: float, terms: int = 400) -> float:
    """E[up share] of one group over a running stretch ~ Exp(rate), by the alternating process's own
    law: up at t after k whole cycles with chance Poisson(ν(t − kT_j); k), summed term by term
    (an independent route to docs/model.md §14.2's closed form)."""
    total, ratio = 0.0, nu * math.exp(-rate * rejoin) / (rate + nu)
    term = rate / (rate + nu)
    for _ in range(terms):
        total += term
        term *= ratio
    return total


#: docs/model.md §14.5: (G, e, T_j s, q_p s, o, M s) -> (A, M_W s, all-down share, π, F), worked by hand
#: from §14.2–§14.3 (G = 2: the chain's closed form; G = 3: its equations; G ≥ 4: the fixed point).
REFERENCES = [
    ((8, 0.95, 1800.0, 0.0, 0.02, 11160.0), (0.9812809, 223200.0, 1.50156e-11, 0.0, 0.9616553)),
    ((8, 0.95, 1800.0, 30.0, 0.02, 11160.0), (0.9812809, 223200.0, 1.50156e-11, 0.002502822, 0.9595493)),
    ((2, 0.5, 1800.0, 10.0, 0.0, 3600.0), (0.9137450, 6628.278, 0.0794058, 0.001148095, 0.9131710)),
    ((2, 0.9, 3600.0, 0.0, 0.0, 3600.0), (0.7954622, 12672.31, 0.647991, 0.0, 0.7954622)),
    ((4, 0.8, 1200.0, 60.0, 0.05, 7200.0), (0.9682592, 35995.54, 0.000123837, 0.006434067, 0.9154074)),
    ((3, 0.9, 3600.0, 120.0, 0.0, 3600.0), (0.7944140, 27146.08, 0.245942, 0.0224885, 0.7819346)),
    ((5, 0.95, 3600.0, 0.0, 0.0, 1800.0), (0.7372512, 33746.97, 0.0625842, 0.0, 0.7372512)),
]


def _groups(case: tuple[float, ...]) -> elastic.Groups:
    g, e, rejoin, pause, overhead, mtbf = case
    return elastic.groups_process(
        groups=g, group_share=e, rejoin_s=rejoin, quorum_pause_s=pause, overhead=overhead, mtbf_s=mtbf
    )


@pytest.mark.parametrize(("case", "expected"), REFERENCES)
def test_groups_process_matches_the_hand_worked_references(
    case: tuple[float, ...], expected: tuple[float, float, float, float, float]
) -> None:
    g, e, rejoin, _, _, mtbf = case
    found = _groups(case)
    up, whole, down_share, paused, useful = expected
    assert found.up_share == pytest.approx(up, rel=1e-6)
    assert found.whole_job_mtbf_s == pytest.approx(whole, rel=1e-6)
    assert found.all_down_share == pytest.approx(down_share, rel=1e-5)
    assert found.pause_share == pytest.approx(paused, rel=1e-6, abs=1e-15)
    assert found.throughput == pytest.approx(useful, rel=1e-6)
    # Renewal-reward: a stretch ends at w with the chance w·M_W, at all down otherwise (§14.2).
    assert (1 - e) / mtbf * found.whole_job_mtbf_s == pytest.approx(1 - found.all_down_share, rel=1e-9)
    if g >= 4:
        # The up share between whole-job failures re-derived term by term, then raised by the all-down ones:
        # A = A_w·(1 + h·S/G), S the discounted down time cut off (the last group T_j, the others uniform).
        w = (1 - e) / mtbf
        alone = _series_up_share(w, e / mtbf / g, rejoin)
        rate = e / mtbf * up * (1 - up) ** (g - 1)
        x = w * rejoin
        cut = -math.expm1(-x) / w + (g - 1) * rejoin * (x + math.expm1(-x)) / x**2
        assert up == pytest.approx(alone * (1 + rate * cut / g), rel=2e-6)
        assert found.all_down_share == pytest.approx(rate * whole, rel=1e-5)
    # The losses and the useful share make up the whole.
    assert found.throughput + found.down + found.quorum + found.overhead == pytest.approx(1.0, abs=1e-12)


def test_two_groups_are_the_chain_in_closed_form() -> None:
    """docs/model.md §14.3, case 3 of §14.5 by hand: ν = 0.5λ/2, w = 0.5λ, λ = 1/3600 s."""
    nu, w, rejoin = 0.25 / 3600, 0.5 / 3600, 1800.0
    both = 1 / (2 * nu + w)  # 3600 s with both up
    drop = 2 * nu * both  # 0.5: a group drops before a whole-job failure
    one = (1 - math.exp(-(nu + w) * rejoin)) / (nu + w)  # 1501.011 s with one down
    ends = 1 - drop * math.exp(-(nu + w) * rejoin)  # 0.6563554
    assert both == pytest.approx(3600.0) and drop == pytest.approx(0.5)
    assert one == pytest.approx(1501.0115, rel=1e-7) and ends == pytest.approx(0.6563554, rel=1e-7)
    found = _groups((2, 0.5, rejoin, 0.0, 0.0, 3600.0))
    assert found.whole_job_mtbf_s == pytest.approx((both + drop * one) / ends, rel=1e-12)
    assert found.up_share == pytest.approx((2 * both + drop * one) / (2 * (both + drop * one)), rel=1e-12)
    assert found.all_down_share == pytest.approx(drop * (1 - math.exp(-(nu + w) * rejoin)) * nu / (nu + w) / ends)


def _three_groups_by_quadrature(e: float, rejoin: float, mtbf: float, points: int = 201) -> tuple[float, float, float]:
    """docs/model.md §14.3's three-group equations solved another way: V₁ on a grid of [0, T_j] from the
    integral equation V₁(r) = ∫₀^r e^{−βs}[ρ₁ + 2ν·V₂(r − s)] ds + e^{−βr}·V₀ by the trapezoidal rule, as
    one linear system with V₀ (the mean stretch, the group-time up and the all-down chance)."""
    import numpy

    nu, w = e / mtbf / 3, (1 - e) / mtbf
    one, two, three = nu + w, 2 * nu + w, 3 * nu + w
    n = points
    r = numpy.linspace(0.0, rejoin, n)
    step = r[1] - r[0]
    # Trapezoidal weights of ∫₀^{r_i} over the nodes y_j ≤ r_i.
    i, j = numpy.meshgrid(numpy.arange(n), numpy.arange(n), indexing="ij")
    weights = numpy.where(j <= i, step, 0.0) * numpy.where((j == 0) | (j == i), 0.5, 1.0) * (i > 0)
    kernel = 2 * nu * numpy.exp(-two * numpy.maximum(r[:, None] - r[None, :], 0.0)) * weights
    # Unknowns: V₁ at the nodes, then V₀; V₂(y) = pair·(1 − e^{−αy})/α + e^{−αy}·V₁(T_j − y). One matrix,
    # a right-hand side per value.
    matrix = numpy.eye(n + 1)
    matrix[:n, n - 1 :: -1] -= kernel * numpy.exp(-one * r)[None, :]
    matrix[:n, n] -= numpy.exp(-two * r)
    matrix[n, n - 1] -= 3 * nu / three
    rhs = numpy.zeros((n + 1, 3))
    for k, (up, down, pair) in enumerate(((1.0, 1.0, 1.0), (3.0, 2.0, 1.0), (0.0, 0.0, nu))):
        rhs[:n, k] = down * -numpy.expm1(-two * r) / two + kernel @ (pair * -numpy.expm1(-one * r) / one)
        rhs[n, k] = up / three
    answers = numpy.linalg.solve(matrix, rhs)[n].tolist()
    stretch, time_up, all_down = answers
    return time_up / (3 * stretch), stretch, all_down


@pytest.mark.parametrize("case", [(0.9, 3600.0, 3600.0), (0.95, 7200.0, 3600.0)])
def test_three_groups_solve_their_equations(case: tuple[float, float, float]) -> None:
    """docs/model.md §14.3: the RK4 solution against a trapezoidal solve of the integral equations
    (second order: 201 points leave about 1e-5)."""
    e, rejoin, mtbf = case
    up, stretch, all_down = _three_groups_by_quadrature(e, rejoin, mtbf)
    found = _groups((3, e, rejoin, 0.0, 0.0, mtbf))
    assert found.up_share == pytest.approx(up, rel=5e-5)
    assert found.whole_job_mtbf_s == pytest.approx(stretch, rel=5e-5)
    assert found.all_down_share == pytest.approx(all_down, rel=5e-5)


@pytest.mark.parametrize("rejoin", [1000 * 3600.0, 1e9])
def test_groups_that_never_rejoin_fall_one_by_one(rejoin: float) -> None:
    """A rejoin far longer than the stretches: all down comes when every group has failed before the job
    did, 3ν/(3ν + w)·2ν/(2ν + w)·ν/(ν + w) = 0.9·(6/7)·0.75 for three groups (ν = 0.3/h, w = 0.1/h) and
    0.9·(0.45/0.55) for two (ν = 0.45/h); the stretch is 1/(3ν + w) + 0.9/(2ν + w) + 0.9·(6/7)/(ν + w)."""
    three = _groups((3, 0.9, rejoin, 0.0, 0.0, 3600.0))
    assert three.all_down_share == pytest.approx(0.9 * 6 / 7 * 0.75, rel=1e-9)
    assert three.whole_job_mtbf_s == pytest.approx(3600.0 * (1 + 0.9 / 0.7 + 0.9 * 6 / 7 / 0.4), rel=1e-9)
    two = _groups((2, 0.9, rejoin, 0.0, 0.0, 3600.0))
    assert two.all_down_share == pytest.approx(0.9 * 0.45 / 0.55, rel=1e-9)


def test_the_periodic_process_is_corrected_for_what_the_groups_do() -> None:
    """docs/model.md §14.5, reference 14.5b: llama3-405b, G = 2, e = 0.9, T_j = M = 1 h, no pause or
    overhead. Restarts are struck at w only (f = 605.028/614.431), the work lost to all-down failures
    was done with one group up."""
    result = api.optimize("llama3-405b", groups=2, group_share=0.9, rejoin="1h", mtbf="1h", ft_overhead=0)
    assert result.job is not None
    config = result.job.config
    groups = groups_of(config)
    inner = evaluate(periodic(config, groups.whole_job_mtbf_s))
    assert float(inner.effective) == pytest.approx(0.932351, abs=1e-6)
    assert float(inner.rework) == pytest.approx(0.010782, abs=1e-6)
    assert float(inner.restart) == pytest.approx(0.046244, abs=1e-6)
    w, whole = 0.1 / 3600, 1 / 12672.31
    ratio = (math.expm1(w * 600) / w) / (math.expm1(whole * 600) / whole)
    assert ratio == pytest.approx(605.028 / 614.431, rel=1e-6)
    found = elastic.restart_ratio(groups, shares=(1.0,), restarts=(600.0,))
    assert found == pytest.approx(ratio, rel=1e-6)
    scale = 1 / (1 - 0.046244 * (1 - ratio))  # 1.000708
    kept, lost = 0.932351 * scale, 0.010782 * scale
    tail = 0.647991 * (0.7954622 - 0.5) * lost  # 0.0020658
    assert tail == pytest.approx(0.0020658, rel=1e-4)
    assert result.effective == pytest.approx(kept * 0.7954622 + tail, abs=2e-6)
    assert result.effective == pytest.approx(0.744241, abs=1e-6)
    block = result.document["elastic"]
    loss = result.document["loss"]
    assert block["periodic_effective"] + loss["write"] + loss["rework"] + loss["restart"] == pytest.approx(1.0)
    parts = block["groups_down_loss"] + block["quorum_loss"] + block["overhead_loss"]
    assert result.effective + parts == pytest.approx(block["periodic_effective"], rel=1e-12)


def test_without_rejoin_time_or_group_local_failures_nothing_is_lost() -> None:
    none_local = elastic.groups_process(
        groups=4, group_share=0.0, rejoin_s=3600.0, quorum_pause_s=60.0, overhead=0.0, mtbf_s=3600.0
    )
    assert none_local.up_share == 1.0 and none_local.pause_share == 0.0 and none_local.whole_job_mtbf_s == 3600.0
    instant = elastic.groups_process(groups=4, group_share=0.9, rejoin_s=0.0, quorum_pause_s=0.0, overhead=0.0,
                                     mtbf_s=3600.0)  # fmt: skip
    assert instant.throughput == 1.0 and instant.whole_job_mtbf_s == pytest.approx(36000.0)


def test_the_headline_is_the_useful_share_times_the_periodic_model_at_the_whole_job_rate() -> None:
    """docs/model.md §14.3: the interval is optimised for whole-job failures alone."""
    base = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
    stated: dict[str, Any] = {"groups": 8.0, "group_share": 0.95, "rejoin_s": 1800.0, "quorum_pause_s": 0.0,
                              "ft_overhead": 0.02}  # fmt: skip
    config = base.replace(**stated)
    result = evaluate(config)
    periodic = evaluate(base.replace(mtbf_s=223200.0))
    assert result.optimal_interval_s == pytest.approx(float(periodic.optimal_interval_s), rel=1e-6)
    assert result.effective == pytest.approx(0.9616553 * float(periodic.effective), rel=1e-6)
    assert result.elastic is not None
    parts = result.effective + result.elastic.down + result.elastic.quorum + result.elastic.overhead
    assert parts == pytest.approx(float(periodic.effective), rel=1e-9)
    assert parts + result.write + result.rework + result.restart == pytest.approx(1.0, abs=1e-12)


def test_arrays_and_floats_agree() -> None:
    import numpy

    shares = numpy.array([0.5, 0.9, 0.99])
    grid = elastic.groups_process(groups=4, group_share=shares, rejoin_s=1800.0, quorum_pause_s=20.0, overhead=0.01,
                                  mtbf_s=3600.0)  # fmt: skip
    for i, e in enumerate(shares.tolist()):
        one = elastic.groups_process(groups=4, group_share=e, rejoin_s=1800.0, quorum_pause_s=20.0, overhead=0.01,
                                     mtbf_s=3600.0)  # fmt: skip
        assert float(numpy.asarray(grid.throughput)[i]) == pytest.approx(one.throughput, rel=1e-12)
        assert float(numpy.asarray(grid.whole_job_mtbf_s)[i]) == pytest.approx(one.whole_job_mtbf_s, rel=1e-12)


def test_arrays_of_group_counts_take_each_counts_form() -> None:
    """A sweep over groups: 2 (the chain), 3 (RK4) and 8 (the fixed point) in one array, as floats give."""
    import numpy

    counts = numpy.array([2.0, 3.0, 8.0])
    grid = elastic.groups_process(groups=counts, group_share=0.9, rejoin_s=3600.0, quorum_pause_s=60.0,
                                  overhead=0.02, mtbf_s=3600.0)  # fmt: skip
    for i, g in enumerate(counts.tolist()):
        one = elastic.groups_process(groups=g, group_share=0.9, rejoin_s=3600.0, quorum_pause_s=60.0, overhead=0.02,
                                     mtbf_s=3600.0)  # fmt: skip
        for field in ("up_share", "whole_job_mtbf_s", "all_down_share", "pause_share", "throughput"):
            assert float(numpy.asarray(getattr(grid, field))[i]) == pytest.approx(getattr(one, field), rel=1e-9)
    assert numpy.asarray(elastic.all_down_warned(grid)).tolist() == [False, False, False]


def test_json_carries_the_elastic_block(run_json: RunJson) -> None:
    document = run_json("optimize", *GROUPS, "--quorum-pause", "30s")
    block = document["elastic"]
    assert block["groups_up_share"] == pytest.approx(0.9812809, rel=1e-6)
    assert block["whole_job_mtbf_s"] == pytest.approx(223200.0, rel=1e-6)
    assert block["model"] == "approximate" and "approximate" in block["note"]
    losses = block["groups_down_loss"] + block["quorum_loss"] + block["overhead_loss"]
    assert document["effective"] + losses == pytest.approx(block["periodic_effective"], rel=1e-12)
    loss = document["loss"]
    assert block["periodic_effective"] + loss["write"] + loss["rework"] + loss["restart"] == pytest.approx(1.0)
    assert document["inputs"]["groups"] == 8 and document["inputs"]["ft_overhead"] == 0.02
    assert run_json("optimize")["elastic"] is None


def test_the_table_shows_the_groups_and_their_losses(run: Run) -> None:
    result = run("optimize", *GROUPS)
    assert result.exit_code == 0, result.stderr
    for text in ("replica groups", "groups down", "FT overhead", "Approximate"):
        assert text in result.stdout


# ------------------------------------------------------------ the simulation

#: docs/model.md §14.6: (preset, elastic inputs, cycles): the analytic form against the simulation.
AGREEMENT = [
    ("llama3-405b", {"groups": 8, "group_share": 0.95, "rejoin": "30min", "quorum_pause": "30s",
                     "ft_overhead": 0.02}, 1500),
    ("llama3-405b", {"groups": 2, "group_share": 0.5, "rejoin": "30min", "quorum_pause": "10s", "mtbf": "1h"}, 3000),
    ("llama3-405b", {"groups": 2, "group_share": 0.8, "rejoin": "30min", "mtbf": "2h"}, 2000),
    ("llama3-405b", {"groups": 4, "group_share": 0.8, "rejoin": "20min", "quorum_pause": "1min",
                     "ft_overhead": 0.05, "mtbf": "2h"}, 2000),
    ("gemini-inmemory", {"groups": 4, "group_share": 0.9, "rejoin": "30min", "quorum_pause": "1min",
                         "ft_overhead": 0.03}, 2000),
    ("gemini-inmemory", {"groups": 2, "group_share": 0.7, "rejoin": "20min", "mtbf": "2h"}, 2000),
    ("llama3-405b", {"groups": 3, "group_share": 0.9, "rejoin": "1h", "quorum_pause": "2min", "mtbf": "1h"}, 2000),
    ("llama3-405b", {"groups": 2, "group_share": 0.9, "rejoin": "1h", "mtbf": "1h"}, 2000),
    ("gemini-inmemory", {"groups": 3, "group_share": 0.9, "rejoin": "1h", "mtbf": "1h"}, 2000),
]  # fmt: skip


@pytest.mark.parametrize(("preset", "inputs", "cycles"), AGREEMENT)
def test_the_analytic_form_lands_in_the_simulations_interval(preset: str, inputs: dict[str, Any], cycles: int) -> None:
    run = api.simulate(preset, cycles=cycles, seed=11, **inputs)
    low, high = run.effective_ci95
    analytic = run["analytic"]["exact"]
    assert low <= analytic <= high or abs(analytic - run.effective) <= 0.001, (analytic, low, high)
    assert not run["warnings"]
    # The interval is tight enough to mean something, and the groups' losses are measured.
    assert high - low < 0.012
    split, lost = run["split"], run["elastic"]["lost"]
    assert lost > 0.0
    total = split["useful"] + split["write"] + split["rework"] + split["restart"] + lost
    assert total == pytest.approx(1.0, abs=1e-9)


def test_two_and_three_groups_are_not_warned_where_four_or_more_are() -> None:
    """docs/model.md §14.6: the groups process is exact for G = 2 and 3 (65 % and 25 % of whole-job
    failures all down here), approximate for G ≥ 4 (warned above 5 %); long pauses are warned too."""
    for groups, rejoin in ((2, "1h"), (3, "1h")):
        found = api.optimize(groups=groups, group_share=0.9, rejoin=rejoin, mtbf="1h")
        assert found.document["elastic"]["all_down_share"] > 0.2 and not found.document["warnings"]
    many = api.optimize(groups=5, group_share=0.95, rejoin="1h", mtbf="30min")
    assert many.document["elastic"]["all_down_share"] == pytest.approx(0.0626, abs=1e-4)
    assert any("all elastic groups down" in w for w in many.document["warnings"])
    below = api.optimize(groups=6, group_share=0.95, rejoin="1h", mtbf="20min")
    assert 0.03 < below.document["elastic"]["all_down_share"] < 0.05 and not below.document["warnings"]
    paused = api.optimize(groups=3, group_share=0.9, rejoin="30min", mtbf="1h", quorum_pause="10min")
    assert paused.document["elastic"]["pause_share"] > 0.1
    assert any("quorum pauses" in w for w in paused.document["warnings"])


def test_the_simulated_groups_process_is_the_two_group_chain() -> None:
    """With G = 2, no checkpoint cost and no restart, the simulation's useful share is the groups' up share,
    which for two groups has a closed form (docs/model.md §14.6): up for Exp(2ν + w) with both up, then
    one down for min(T_j, Exp(ν + w)), back to both up when T_j comes first."""
    from ckptcalc.simulation.timeline import Failures, Groups, Schedule, run_elastic

    e, rejoin, mtbf = 0.9, 3600.0, 3600.0
    nu, w = e / mtbf / 2, (1 - e) / mtbf
    a, c = 2 * nu / (2 * nu + w), math.exp(-(nu + w) * rejoin)
    one_down = (1 - c) / (nu + w)
    stretch = (1 / (2 * nu + w) + a * one_down) / (1 - a * c)
    up = (2 / (2 * nu + w) + a * one_down) / (1 - a * c)
    expected = up / (2 * stretch)  # 0.795462
    # Checkpoints every 10 s at no cost and no restart: kept work is all but 5 s a stretch (0.04 %).
    schedule = Schedule.single(interval_s=10.0, stall_s=0.0, restart_s=0.0)
    groups = Groups(groups=2, group_share=e, rejoin_s=rejoin, quorum_pause_s=0.0, overhead=0.0)
    run = run_elastic(schedule, groups, Failures(mtbf), cycles=4000, seed=5)
    low, high = run.ci95
    assert expected == pytest.approx(0.795462, abs=1e-6)
    assert low <= expected <= high, (expected, low, high)
    assert high - low < 0.02


def test_simulate_refuses_what_it_does_not_run(run: Run) -> None:
    assert_usage_error(run("simulate", *GROUPS, "--optimize", "--cycles", "200"), "--optimize")
    assert_usage_error(run("simulate", "--groups", "4", "--group-share", "1", "--rejoin", "1h", "--cycles", "200"),
                       "--group-share")  # fmt: skip


def test_simulate_runs_groups_with_asynchronous_storage(run_json: RunJson) -> None:
    """docs/model.md §18.5: the one event engine runs the groups with the async persist; the model (§14.4)
    within 0.1 pp or the run's interval."""
    document = run_json("simulate", *GROUPS, "--preset", "llama3-405b-async", "--cycles", "3000", "--seed", "1")
    low, high = document["effective_ci95"]
    exact = document["analytic"]["exact"]
    assert document["elastic"]["lost"] > 0
    assert low - 1e-3 <= exact <= high + 1e-3, (exact, low, high)


def test_simulate_json_is_valid_and_shows_the_elastic_split(run_json: RunJson) -> None:
    document = run_json("simulate", *GROUPS, "--cycles", "200")
    assert document["elastic"]["lost"] > 0 and document["inputs"]["groups"] == 8
    assert run_json("simulate", "--cycles", "200")["elastic"] is None


# ------------------------------------------------------------------ levers


def test_the_levers_of_llama3_list_elastic_groups_with_their_gain(run_json: RunJson) -> None:
    """docs/model.md §14.5: 8 groups, 95 % group-local, rejoin 30 min, 2 % overhead: 0.95391, +2.89 pp."""
    document = run_json("optimize")
    lever = next(v for v in document["levers"] if v["key"] == "elastic")
    assert lever["name"] == "8 elastic groups (95.0 % group-local, rejoin 30.0 min, 2.00 % overhead)"
    assert lever["effective"] == pytest.approx(0.95391, abs=1e-5)
    assert lever["gain_pp"] == pytest.approx((lever["effective"] - document["optimal_effective"]) * 100, rel=1e-12)
    assert lever["gain_pp"] == pytest.approx(2.89, abs=0.01)


def test_the_elastic_lever_can_lose(run_json: RunJson) -> None:
    """With rare failures the 2 % overhead costs more than the restarts the groups save."""
    lever = next(v for v in run_json("optimize", "--mtbf", "300h")["levers"] if v["key"] == "elastic")
    assert lever["gain_pp"] < 0


def test_a_configured_job_shows_its_worth_without_it(run_json: RunJson) -> None:
    document = run_json("optimize", *GROUPS)
    keys = [v["key"] for v in document["levers"]]
    assert "elastic" not in keys
    without = next(v for v in document["levers"] if v["key"] == "without_elastic")
    assert without["effective"] == pytest.approx(run_json("optimize")["effective"], rel=1e-12)
    assert without["gain_pp"] == pytest.approx(-2.89, abs=0.01)


def test_a_preset_overrides_what_the_lever_assumes(run_json: RunJson, run: Run, tmp_path: Path) -> None:
    path = tmp_path / "l.toml"
    path.write_text(
        'schema_version = 1\nbase = "llama3-405b"\n[levers]\nelastic_groups = 4\nelastic_group_share = 0.9\n'
        'elastic_rejoin = "10min"\nelastic_ft_overhead = 0.05\n',
        encoding="utf-8",
    )
    lever = next(v for v in run_json("optimize", "--preset", str(path))["levers"] if v["key"] == "elastic")
    assert lever["name"] == "4 elastic groups (90.0 % group-local, rejoin 10.0 min, 5.00 % overhead)"
    by_flags = run_json("optimize", "--groups", "4", "--group-share", "0.9", "--rejoin", "10min",
                        "--ft-overhead", "0.05")  # fmt: skip
    assert lever["effective"] == pytest.approx(by_flags["effective"], rel=1e-12)
    bad = tmp_path / "bad.toml"
    bad.write_text('schema_version = 1\nbase = "llama3-405b"\n[levers]\nelastic_groups = 1\n', encoding="utf-8")
    assert_usage_error(run("optimize", "--preset", str(bad)), "levers.elastic_groups")
    saved = tmp_path / "saved.toml"
    assert run("optimize", "--preset", str(path), "--save-preset", str(saved), "--json").exit_code == 0
    assert 'elastic_rejoin = "10min"' in saved.read_text(encoding="utf-8")


# ------------------------------------------------------ what-ifs, sweeps, plans


def test_compare_takes_the_elastic_keys_as_what_ifs(run_json: RunJson, tmp_path: Path) -> None:
    document = run_json("compare", "--what-if", "groups=8", "--what-if", "groups=2")
    base, eight, two = document["scenarios"]
    assert base["elastic"] is None
    assert eight["effective"] == pytest.approx(run_json("optimize", "--groups", "8")["effective"], rel=1e-12)
    # Two groups lose: half the throughput for every 30-minute rejoin costs more than the restarts saved.
    assert two["effective"] < base["effective"] < eight["effective"]
    path = tmp_path / "e.toml"
    path.write_text('schema_version = 1\nbase = "llama3-405b"\n[elastic]\ngroups = 8\n', encoding="utf-8")
    shared = run_json("compare", str(path), "--what-if", "group-share=0.5", "--what-if", "ft-overhead=0")
    assert shared["scenarios"][1]["elastic"]["group_share"] == 0.5
    assert shared["scenarios"][2]["elastic"]["overhead_loss"] == 0.0


@pytest.mark.parametrize(
    ("over", "start", "stop", "field"),
    [
        ("group-share", "0.5", "0.99", "group_share"),
        ("groups", "2", "16", "groups"),
        ("rejoin", "0s", "2h", "rejoin"),
        ("quorum-pause", "0s", "5min", "quorum_pause"),
        ("ft-overhead", "0", "0.1", "ft_overhead"),
    ],
)
def test_sweep_over_each_elastic_input_matches_optimize(
    run_json: RunJson, over: str, start: str, stop: str, field: str
) -> None:
    document = run_json("sweep", "--over", over, "--from", start, "--to", stop, "--points", "3", "--groups", "8")
    values = document["values"]
    assert values[0] == pytest.approx(api.overrides({field: start})[BY_PUBLIC[field].name])
    if over == "groups":
        assert all(float(v).is_integer() for v in values)
    for value, effective in zip(values, document["effective"], strict=True):
        one = api.optimize(**{"groups": 8, field: value})
        assert effective == pytest.approx(one.effective, rel=1e-9)


def test_sweeping_an_elastic_input_needs_groups(run: Run) -> None:
    assert_usage_error(run("sweep", "--over", "group-share", "--from", "0.1", "--to", "0.9"), "--over")
    assert_usage_error(run("sweep", "--over", "groups", "--from", "1", "--to", "9", "--groups", "4"), "--from")
    assert_usage_error(run("sweep", "--over", "group-share", "--from", "0.5", "--to", "1.5", "--groups", "4"),
                       "--from")  # fmt: skip


def test_plan_runs_the_periodic_process_at_the_whole_job_rate(run_json: RunJson) -> None:
    document = run_json("plan", "--work", "30d", "--groups", "8", "--runs", "400")
    assert document["effective"] == pytest.approx(run_json("optimize", "--groups", "8")["effective"], rel=1e-12)
    assert abs(document["mean_vs_expected"]) < 0.01


def test_the_elastic_hsdp_preset_shows_where_the_groups_lose(run_json: RunJson, run: Run) -> None:
    """The shipped torchft-style preset: its 3 % overhead outweighs the restarts the groups save."""
    document = run_json("optimize", "--preset", "elastic-hsdp")
    assert document["inputs"]["groups"] == 16 and document["elastic"]["groups_up_share"] > 0.999
    without = next(v for v in document["levers"] if v["key"] == "without_elastic")
    assert without["gain_pp"] > 0
    text = " ".join(run("optimize", "--preset", "elastic-hsdp").stdout.split())
    assert "the elastic groups are the largest loss" in text


@pytest.mark.parametrize(
    "args",
    [
        ("--max-written-per-day", "1B"),  # the interval held at 6.48e12 days: nothing is kept
        ("--silent-mtbf", "1s", "--detect-latency", "1e15s", "--keep", "5"),  # a silent event every second
    ],
)
def test_the_elastic_lever_of_a_job_that_keeps_nothing_keeps_nothing(run_json: RunJson, args: tuple[str, ...]) -> None:
    doc = run_json("optimize", *args)
    assert doc["effective"] < 1e-9
    lever = next(lever for lever in doc["levers"] if lever["key"] == "elastic")
    assert 0.0 <= lever["effective"] < 1e-9


def test_the_break_even_overhead_is_where_the_groups_stop_paying() -> None:
    """docs/model.md §14.7, reference 14.7a: llama3-405b with the elastic lever's groups; E is (1 − o) times
    what does not depend on o, so at o* = 1 − E₀·(1 − o)/E(o) = 0.049702 the groups gain nothing."""
    from ckptcalc.mechanisms.elastic.home import MECHANISM

    result = api.optimize("llama3-405b", groups=8, group_share=0.95, rejoin="30min", ft_overhead=0.02)
    assert result.job is not None
    config = result.job.config
    found = MECHANISM.break_even("elastic", config, None)
    assert found is not None
    key, value, unit = found
    assert (key, unit) == ("ft_overhead", "fraction")
    assert value == pytest.approx(0.049702, abs=1e-6)
    without = float(evaluate(MECHANISM.without(config).optimal()).effective)
    at: dict[str, Any] = {key: value}
    assert float(evaluate(config.replace(**at).optimal()).effective) == pytest.approx(without, rel=1e-12)
    # Past it the groups lose; the lever of another mechanism, or no groups, has none here.
    above: dict[str, Any] = {key: value + 0.01}
    assert float(evaluate(config.replace(**above).optimal()).effective) < without
    assert MECHANISM.break_even("without_elastic", config, None) is None
    assert MECHANISM.break_even("elastic", MECHANISM.without(config), None) is None
