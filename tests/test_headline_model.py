"""Every document whose headline comes from the model says at its top whether it is exact (docs/model.md §18.2):
``"model": "approximate"`` where any part of it is (elastic groups, silent events, a spare pool under Weibull
failures, stragglers), ``"exact"`` otherwise."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import validate

from ckptcalc.model.evaluation import headline_model

RunJson = Callable[..., dict[str, Any]]

SILENT = ["--silent-mtbf", "1d", "--detect-latency", "30min"]
SPARES_WEIBULL = ["--spares", "2", "--repair", "4h", "--shape", "0.7"]
STRAGGLERS = ["--slow-mtbf", "6h", "--slow-factor", "0.1", "--slow-duration", "2h", "--slow-detect", "10min"]

#: Each command on an exact job, and on approximate ones.
CASES: list[tuple[list[str], str]] = [
    (["optimize", "-p", "llama3-405b"], "exact"),
    (["optimize", "-p", "elastic-hsdp"], "approximate"),
    (["optimize", "-p", "llama3-405b", *SPARES_WEIBULL], "approximate"),
    (["optimize", "-p", "llama3-405b", "--spares", "2", "--repair", "4h"], "exact"),
    (["sweep", "-p", "llama3-405b"], "exact"),
    (["sweep", "-p", "llama3-405b", *SILENT], "approximate"),
    (["compare", "llama3-405b", "llama3-405b-async"], "exact"),
    (["compare", "llama3-405b", "elastic-hsdp"], "approximate"),
    (["plan", "-p", "llama3-405b", "--work", "30d", "--runs", "200"], "exact"),
    (["plan", "-p", "llama3-405b", "--work", "30d", "--runs", "200", *SILENT], "approximate"),
    (["plan", "-p", "llama3-405b", "--work", "30d", "--runs", "200", *STRAGGLERS], "approximate"),
    (["simulate", "-p", "llama3-405b", "--cycles", "400"], "exact"),
    (["simulate", "-p", "elastic-hsdp", "--cycles", "400"], "approximate"),
    (["simulate", "-p", "llama3-405b", "--cycles", "400", *STRAGGLERS], "approximate"),
    # Two tiers under Weibull failures: no exact model stands beside the run, only first order.
    (["simulate", "-p", "llama3-405b-tiered", "--cycles", "400", "--shape", "0.7"], "approximate"),
    (["check", "llama3-405b", "llama3-405b-async", "--min-effective", "0.5"], "exact"),
    (["check", "llama3-405b", "elastic-hsdp", "--min-effective", "0.5"], "approximate"),
]


@pytest.mark.parametrize(("args", "expected"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_the_document_says_which_model(run_json: RunJson, args: list[str], expected: str) -> None:
    document = run_json(*args)
    assert document["model"] == expected


def test_each_preset_of_check_says_its_own(run: Callable[..., Any], tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text('[failures]\nmtbf = "-1h"\n', encoding="utf-8")
    result = run("check", "llama3-405b", "elastic-hsdp", str(broken), "--min-effective", "0.5", "--json")
    assert result.exit_code == 2, result.stderr  # a broken preset: exit 2, after the verdict on every preset
    document = json.loads(result.stdout)
    validate(document)
    assert [row["model"] for row in document["results"]] == ["exact", "approximate", None]
    assert document["model"] == "approximate"


@pytest.mark.parametrize(("log", "expected"), [("hand-run.jsonl", "exact"), ("group-run.jsonl", "approximate")])
def test_analyze_says_which_model_stands_at_the_measured_inputs(run_json: RunJson, log: str, expected: str) -> None:
    """analyze's headline is the run as it happened; the model at its measured inputs says which it is."""
    document = run_json("analyze", f"tests/data/{log}", "--time-unit", "s")
    assert document["model"]["model"] == expected


def test_a_headline_of_several_is_approximate_where_any_part_is() -> None:
    assert headline_model(["exact", "exact"]) == "exact"
    assert headline_model(["exact", None, "approximate"]) == "approximate"
    assert headline_model([]) == "exact"
