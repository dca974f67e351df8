"""Elastic replica groups (docs/model.md §14): inputs, the groups process, the output, the simulation,
the levers, what-ifs and sweeps."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.model import elastic
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
        (("--groups", "4", "--group-share", "0.9"), "--rejoin"),
        (("--groups", "4", "--rejoin", "1h"), "--group-share"),
        (("--rejoin", "1h"), "--groups"),
        (("--groups", "4", "--group-share", "0.9", "--rejoin", "1h", "--shape", "0.7"), "--groups"),
    ],
)
def test_bad_elastic_input_is_one_line_naming_the_option(run: Run, args: tuple[str, ...], culprit: str) -> None:
    assert_usage_error(run("optimize", *args), culprit)


@pytest.mark.parametrize("command", ["optimize", "compare", "sweep", "simulate", "plan"])
def test_every_model_command_takes_the_elastic_options(run: Run, command: str) -> None:
    """The options are declared once (FIELDS) for every command; each rejects a bad group count."""
    assert_usage_error(run(command, "--groups", "1", "--group-share", "0.9", "--rejoin", "1h"), "--groups")


def test_rejoin_longer_than_the_run_is_refused(run: Run) -> None:
    result = run("plan", "--work", "1h", "--groups", "4", "--group-share", "0.9", "--rejoin", "2h", "--runs", "200")
    assert_usage_error(result, "--rejoin")


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


#: docs/model.md §14.5: (G, e, T_j s, q_p s, o, M s) -> (A, M_w s, π, F), worked by hand from §14.2–§14.4.
REFERENCES = [
    ((8, 0.95, 1800.0, 0.0, 0.02, 11160.0), (0.981281, 223200.0, 0.0, 0.961655)),
    ((8, 0.95, 1800.0, 30.0, 0.02, 11160.0), (0.981281, 223200.0, 0.00250282, 0.959549)),
    ((2, 0.5, 1800.0, 10.0, 0.0, 3600.0), (0.901364, 6612.13, 0.00125111, 0.900800)),
    ((2, 0.9, 3600.0, 0.0, 0.0, 3600.0), (0.718340, 12761.66, 0.0, 0.718340)),
    ((4, 0.8, 1200.0, 60.0, 0.05, 7200.0), (0.968257, 35995.54, 0.00643426, 0.915405)),
]


@pytest.mark.parametrize(("case", "expected"), REFERENCES)
def test_groups_process_matches_the_hand_worked_references(
    case: tuple[float, ...], expected: tuple[float, float, float, float]
) -> None:
    g, e, rejoin, pause, overhead, mtbf = case
    found = elastic.groups_process(
        groups=g, group_share=e, rejoin_s=rejoin, quorum_pause_s=pause, overhead=overhead, mtbf_s=mtbf
    )
    up, whole, paused, useful = expected
    assert found.up_share == pytest.approx(up, rel=2e-6)
    assert found.whole_job_mtbf_s == pytest.approx(whole, rel=2e-6)
    assert found.pause_share == pytest.approx(paused, rel=2e-5, abs=1e-15)
    assert found.throughput == pytest.approx(useful, rel=2e-6)
    # The up share is the alternating process's, re-derived term by term at the same whole-job rate.
    assert found.up_share == pytest.approx(_series_up_share(1.0 / whole, e / mtbf / g, rejoin), rel=1e-6)
    # The losses and the useful share make up the whole.
    assert found.throughput + found.down + found.quorum + found.overhead == pytest.approx(1.0, abs=1e-12)


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
    config = base.replace(groups=8.0, group_share=0.95, rejoin_s=1800.0, quorum_pause_s=0.0, ft_overhead=0.02)
    result = evaluate(config)
    periodic = evaluate(base.replace(mtbf_s=223200.0))
    assert result.optimal_interval_s == pytest.approx(float(periodic.optimal_interval_s), rel=1e-6)
    assert result.effective == pytest.approx(0.961655 * float(periodic.effective), rel=3e-6)
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


def test_json_carries_the_elastic_block(run_json: RunJson) -> None:
    document = run_json("optimize", *GROUPS, "--quorum-pause", "30s")
    block = document["elastic"]
    assert block["groups_up_share"] == pytest.approx(0.981281, rel=2e-6)
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
