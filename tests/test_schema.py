"""The published JSON Schemas: valid draft 2020-12, and every document the suite produces obeys them."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from jsonschema import Draft202012Validator, ValidationError

from ckptcalc.commands import catalogue as schema

Run = Callable[..., Any]


@pytest.mark.parametrize("command", list(schema.SCHEMAS))
def test_schema_command_prints_a_valid_schema(run: Run, command: str) -> None:
    result = run("schema", command)
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    if command == "event":  # an input format, not a --json document
        assert document["required"] == ["event"]  # and time, or time_s (seconds)
        return
    assert document["properties"]["schema_version"] == {"const": 2}


def test_every_line_of_the_hand_worked_log_obeys_the_event_schema() -> None:
    from pathlib import Path

    validator = Draft202012Validator(schema.for_command("event"))
    for line in (Path(__file__).parent / "data" / "hand-run.jsonl").read_text().splitlines():
        validator.validate(json.loads(line))


def test_schema_without_command_bundles_all(run: Run) -> None:
    document = json.loads(run("schema").stdout)
    Draft202012Validator.check_schema(document)
    assert set(document["$defs"]) == set(schema.SCHEMAS)


@pytest.mark.parametrize(
    "args",
    [
        ["optimize"],
        ["optimize", "--preset", "gemini-inmemory", "--step-time", "10s", "--target", "0.96", "--gpu-hour-cost", "3"],
        ["optimize", "--preset", "llama3-405b-async", "--discard", "0.1"],
        ["sweep", "--points", "5"],
        ["sweep", "--over", "gpus", "--points", "5"],
        ["sweep", "--preset", "gemini-inmemory", "--over", "mtbf", "--points", "4"],
        ["optimize", "--preset", "gemini-inmemory", "--interval", "30min", "--memory-interval", "7min"],
        ["optimize", "--mtbf", "5min"],
        ["compare", "llama3-405b", "gemini-inmemory", "--what-if", "bw=4TB/s"],
        ["simulate", "--cycles", "1e5", "--optimize"],
        ["simulate", "--preset", "gemini-inmemory", "--cycles", "1e5"],
        ["check", "llama3-405b", "rsc1-131k", "--min-effective", "0.9"],
        ["presets", "list"],
    ],
)
def test_documents_validate(run: Run, args: list[str]) -> None:
    result = run(*args, "--json")  # the run fixture validates every --json document
    assert result.exit_code in (0, 3)


def test_short_mtbf_document_validates_with_first_order_loss_above_one(run_json: Callable[..., Any]) -> None:
    # M = 5 min against a 10 min restart: first order charges r/M = 2 of useful time to restarts alone, while
    # the exact shares of elapsed time stay within [0, 1] (restart share 1 − e^{−r/M}). run_json validates.
    document = run_json("optimize", "--mtbf", "5min")
    assert document["schema_version"] == 2 and document["model"] == "exact"
    exact = document["loss"]
    assert all(0.0 <= exact[k] <= 1.0 for k in ("write", "rework", "restart", "total"))
    assert exact["total"] == pytest.approx(1.0 - document["effective"], abs=1e-12)
    assert exact["restart"] == pytest.approx(-math.expm1(-600.0 / 300.0), rel=1e-9)
    first = document["first_order"]
    assert first["loss"]["restart"] == pytest.approx(2.0, rel=1e-12)
    assert first["loss"]["total"] > 1.0
    assert first["effective"] == 0.0  # clamped
    assert 0.0 < document["effective"] < 1.0


def test_schema_rejects_a_document_that_breaks_the_contract(run: Run) -> None:
    document = json.loads(run("optimize", "--json").stdout)
    validator = Draft202012Validator(schema.for_command("optimize"))
    broken = dict(document, effective=1.5)
    with pytest.raises(ValidationError):
        validator.validate(broken)
    old = dict(document, schema_version=1)
    with pytest.raises(ValidationError):
        validator.validate(old)
    wrong_model = dict(document, model="first_order")
    with pytest.raises(ValidationError):
        validator.validate(wrong_model)
    above_one = dict(document, loss=dict(document["loss"], total=1.2))
    with pytest.raises(ValidationError):
        validator.validate(above_one)
    missing = {k: v for k, v in document.items() if k != "dominant"}
    with pytest.raises(ValidationError):
        validator.validate(missing)


def test_unknown_schema_command(run: Run) -> None:
    assert_usage_error(run("schema", "nope"), "schema")
