"""The published JSON Schemas: valid draft 2020-12, and every document the suite produces obeys them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from jsonschema import Draft202012Validator, ValidationError

from ckptcalc import schema

Run = Callable[..., Any]


@pytest.mark.parametrize("command", list(schema.SCHEMAS))
def test_schema_command_prints_a_valid_schema(run: Run, command: str) -> None:
    result = run("schema", command)
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    Draft202012Validator.check_schema(document)
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["properties"]["schema_version"] == {"const": 1}


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


def test_schema_rejects_a_document_that_breaks_the_contract(run: Run) -> None:
    document = json.loads(run("optimize", "--json").stdout)
    validator = Draft202012Validator(schema.for_command("optimize"))
    broken = dict(document, effective=1.5)
    with pytest.raises(ValidationError):
        validator.validate(broken)
    missing = {k: v for k, v in document.items() if k != "dominant"}
    with pytest.raises(ValidationError):
        validator.validate(missing)


def test_unknown_schema_command(run: Run) -> None:
    assert_usage_error(run("schema", "nope"), "schema")
