"""compare and report on the user's own job: the job flags make the first scenario, and a what-if may
change several inputs at once under its own name (issue 35, item 1)."""

from __future__ import annotations

import doctest
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc import api
from ckptcalc.inputs import what_ifs

RunJson = Callable[..., dict[str, Any]]
Run = Callable[..., Any]
JOB = ("--params", "70B", "--gpus", "4096", "--bw", "400GB/s")


def test_what_ifs_doctests() -> None:
    failures, tried = doctest.testmod(what_ifs)
    assert tried > 0 and failures == 0


def test_compare_takes_the_job_flags_as_its_first_scenario(run_json: RunJson) -> None:
    compared = run_json("compare", *JOB)
    optimized = run_json("optimize", *JOB)
    (first,) = compared["scenarios"]
    assert first["name"] == "params=70B bw=400GB/s gpus=4096"
    assert first["effective"] == optimized["effective"]
    assert first["optimal_interval_s"] == optimized["optimal_interval_s"]
    assert first["inputs"]["checkpoint_bytes"] == 70e9 * 16


def test_the_job_flags_apply_to_every_preset_named(run_json: RunJson) -> None:
    compared = run_json("compare", "llama3-405b", "bloom-176b", "--gpus", "4096")
    assert [s["name"] for s in compared["scenarios"]] == ["llama3-405b gpus=4096", "bloom-176b gpus=4096"]
    assert all(s["inputs"]["gpus"] == 4096 for s in compared["scenarios"])


def test_a_multi_key_what_if_equals_the_same_preset(run_json: RunJson, tmp_path: Path, run: Run) -> None:
    preset = tmp_path / "elastic.toml"
    # llama3-405b's per-GPU rate (3.1 h × 16384 GPUs) held at 4096 GPUs, as the flags hold it.
    preset.write_text(
        'schema_version = 1\nname = "elastic"\n[checkpoint]\nparams = "70B"\nbytes_per_param = 16\n'
        '[storage]\nbandwidth = "400GB/s"\n[failures]\ngpu_mtbf = "50790.4h"\nrestart = "10min"\n'
        "[cluster]\ngpus = 4096\n[elastic]\ngroups = 8\nft_overhead = 0.005\n"
    )
    compared = run_json("compare", *JOB, "--what-if", "elastic: groups=8 ft_overhead=0.5%")
    from_preset = run_json("compare", str(preset))
    first, elastic = compared["scenarios"]
    (same,) = from_preset["scenarios"]
    assert elastic["name"] == "elastic"
    for key in ("effective", "optimal_interval_s", "loss", "elastic"):
        assert elastic[key] == same[key], key
    # At 0.5 % overhead the groups pay on this job (issue 35: +1.15 pp), at the default 2 % they cost.
    assert elastic["effective"] - first["effective"] == pytest.approx(0.0115, abs=5e-4)
    default = run_json("compare", *JOB, "--what-if", "groups=8")["scenarios"][1]
    assert default["name"] == "groups=8"
    assert default["effective"] < first["effective"]


def test_the_first_hour_question_is_one_command(run_json: RunJson) -> None:
    """Elastic groups at 0.5 % overhead, or 2 spares with a 4 h repair, on a 70B job (the README's tour)."""
    document = run_json(
        "compare", *JOB, "--what-if", "elastic: groups=8 ft_overhead=0.5%", "--what-if", "spares: spares=2 repair=4h"
    )
    names = [s["name"] for s in document["scenarios"]]
    assert names == ["params=70B bw=400GB/s gpus=4096", "elastic", "spares"]
    spares = document["scenarios"][2]
    assert spares["spares"]["spares"] == 2


def test_what_ifs_through_the_api_as_mappings_and_pairs() -> None:
    by_text = api.compare(params="70B", what_ifs=["groups=8 ft_overhead=0.5%"]).scenarios[1]
    by_mapping = api.compare(params="70B", what_ifs=[{"groups": 8, "ft_overhead": 0.005}]).scenarios[1]
    assert by_text["effective"] == by_mapping["effective"]
    assert by_mapping["name"] == "groups=8 ft_overhead=0.005"


@pytest.mark.parametrize(
    ("what_if", "culprit"),
    [
        ("elastic:", "'elastic' names no change"),
        ("groups=8 groups=4", "changes 'groups' twice"),
        ("groups=8 ft_overhead", "expected KEY=VALUE"),
        ("bandwidth=2TB/s", "did you mean 'bw'?"),
        ("spares: spares=2", "--what-if spares: spares need the repair time"),
    ],
)
def test_a_bad_what_if_is_one_line(run: Run, what_if: str, culprit: str) -> None:
    assert_usage_error(run("compare", *JOB, "--what-if", what_if), culprit)


def test_report_takes_the_job_and_its_what_ifs(tmp_path: Path, run: Run) -> None:
    pytest.importorskip("jinja2")
    out = tmp_path / "review.md"
    result = run("report", *JOB, "--what-if", "elastic: groups=8 ft_overhead=0.5%", "--markdown", str(out))
    assert result.exit_code == 0, result.stderr
    text = out.read_text()
    assert "## Scenario: params=70B bw=400GB/s gpus=4096" in text
    assert "## Scenario: elastic" in text
    assert "llama3-405b" not in text.split("## Scenario: elastic")[0].split("## Scenario:")[1].splitlines()[0]
    # The what-if assumes what the job it was derived from assumes: the default preset's values.
    elastic = text.split("## Scenario: elastic")[1]
    assert "restart 10.0 min (default, llama3-405b preset)" in elastic
    assert "rate held from llama3-405b at 16384 GPUs" in elastic
    assert "ft\\_overhead" not in elastic.split("| input |")[0]  # given by the what-if: not assumed


@pytest.mark.parametrize(
    ("word", "nearest"),
    [("bandwidth", "bw"), ("restart_s", "restart"), ("snapshot_bandwidth", "snapshot_bw"), ("rstart", "restart")],
)
def test_an_unknown_keyword_suggests_the_nearest_input(word: str, nearest: str) -> None:
    with pytest.raises(api.InputError if hasattr(api, "InputError") else ValueError) as raised:
        api.optimize(**{word: "2TB/s"})
    assert f"did you mean {nearest!r}?" in str(raised.value)
    assert "known:" not in str(raised.value)
