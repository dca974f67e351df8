"""Typed documents (ckptcalc.output.typed): a document part and its schema made from one record type."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from jsonschema import Draft202012Validator

from ckptcalc.commands import catalogue
from ckptcalc.commands.analyze import (
    AnalyzedLog,
    AnalyzedModel,
    AnalyzedOutcome,
    AnalyzedSpan,
    CauseRow,
    MeasuredFigures,
    MeasuredLevel,
    RealisedLosses,
    RealisedOutcome,
    WindowLosses,
    WindowOutcome,
)
from ckptcalc.commands.compare import ComparedScenario
from ckptcalc.commands.events import EventsWritten
from ckptcalc.commands.fit import FitEstimate, FitGaps, FitRead
from ckptcalc.commands.optimize import BreakEvenPart, LeverRow, OptimizeDecisions, TargetsPart
from ckptcalc.commands.plan import PlanRuns
from ckptcalc.commands.presets import PresetRow
from ckptcalc.commands.simulate import SimulatedCounts, SimulatedMeasure, SimulatedSchedule
from ckptcalc.commands.sweep import SweepCurve, SweepTail
from ckptcalc.output.typed import Bounds, Format, document_of, properties_of, record_of, schema_of
from ckptcalc.records import Record

#: The break-even's schema as it was written by hand before it was made from BreakEvenPart.
HAND_WRITTEN = {
    "type": "object",
    "properties": {
        "key": {"type": "string", "description": "the input the lever turns on"},
        "value": {"type": "number", "description": "that input's value where the lever's gain is zero, in SI units"},
        "unit": {
            "enum": ["fraction", "duration", "rate"],
            "description": "the value's unit kind: fraction (0 to 1), duration (seconds), rate (bytes per second)",
        },
        "pays": {"enum": ["above", "below"], "description": "on which side of the value the lever pays"},
    },
    "required": ["key", "value", "unit", "pays"],
    "description": "where a lever with a cost starts to pay; null for a lever without one",
}


def test_the_generated_schema_is_the_hand_written_one() -> None:
    generated = schema_of(BreakEvenPart, HAND_WRITTEN["description"])  # type: ignore[arg-type]
    assert generated == HAND_WRITTEN
    assert list(generated) == list(HAND_WRITTEN)  # the same key order, so `ckptcalc schema` prints the same


def test_the_part_validates_against_its_schema() -> None:
    part = document_of(BreakEvenPart("restart", 300.0, "duration", "below"))
    assert part == {"key": "restart", "value": 300.0, "unit": "duration", "pays": "below"}
    Draft202012Validator(schema_of(BreakEvenPart)).validate(part)
    with pytest.raises(Exception, match="is not one of"):
        Draft202012Validator(schema_of(BreakEvenPart)).validate({**part, "pays": "sideways"})


class _Inner(Record):
    n: Annotated[int, "a count"]


class _Outer(Record):
    flag: bool
    kind: Literal["a", "b"] | None
    inner: Annotated[_Inner | None, "nested"]


def test_each_type_maps_to_its_json_type() -> None:
    properties = schema_of(_Outer)["properties"]
    assert properties == {
        "flag": {"type": "boolean"},
        "kind": {"oneOf": [{"type": "null"}, {"enum": ["a", "b"]}]},
        "inner": {  # an object or null, as the project's other optional objects (MAYBE_STORAGE)
            "type": ["object", "null"],
            "properties": {"n": {"type": "integer", "description": "a count"}},
            "required": ["n"],
            "description": "nested",
        },
    }
    assert document_of(_Outer(True, None, _Inner(3))) == {"flag": True, "kind": None, "inner": {"n": 3}}


class _Unpublishable(Record):
    items: list[int]


def test_a_type_without_a_json_form_is_refused() -> None:
    with pytest.raises(TypeError, match="no JSON type"):
        schema_of(_Unpublishable)


class _Window(Record):
    label: Annotated[str, "a name"]
    ends: Annotated[tuple[float | None, ...], "an interval", Bounds(items=2)]
    inner: Annotated[tuple[_Inner, ...] | None, "counts"]


def test_record_of_reads_back_what_document_of_wrote() -> None:
    part = {"label": "w", "ends": [1.0, None], "inner": [{"n": 1}, {"n": 2}]}
    found = record_of(_Window, part)
    assert found == _Window("w", (1.0, None), (_Inner(1), _Inner(2)))
    assert document_of(found) == part
    assert list(document_of(found)) == list(part)  # the record's order, the document's order
    assert record_of(_Window, {**part, "inner": None}).inner is None


def test_record_of_refuses_a_part_that_is_not_the_records() -> None:
    # A key the record lacks would be left out of the published schema; one it has would be missing.
    with pytest.raises(ValueError, match="_Window has no field extra"):
        record_of(_Window, {"label": "w", "ends": [1.0, 2.0], "inner": None, "extra": 1})
    with pytest.raises(ValueError, match="_Window needs inner"):
        record_of(_Window, {"label": "w", "ends": [1.0, 2.0]})


class _Marked(Record):
    at: Annotated[str | None, "when", Format("date-time")]
    shape: Annotated[float, "above zero", Bounds(above=0)]


def test_a_format_and_an_exclusive_minimum_reach_the_schema() -> None:
    properties = properties_of(_Marked)
    assert properties == {
        "at": {"type": ["string", "null"], "description": "when", "format": "date-time"},
        "shape": {"type": "number", "description": "above zero", "exclusiveMinimum": 0},
    }
    assert schema_of(_Marked)["properties"] == properties
    validator = Draft202012Validator(schema_of(_Marked))
    validator.validate(document_of(_Marked(None, 0.5)))
    with pytest.raises(Exception, match="less than or equal to the minimum"):
        validator.validate(document_of(_Marked(None, 0.0)))


class _Aimed(Record):
    target: Annotated[Annotated[float, Bounds(above=0, below=1)] | None, "strictly between 0 and 1"]


def test_an_exclusive_maximum_reaches_the_schema() -> None:
    assert properties_of(_Aimed)["target"] == {
        "type": ["number", "null"],
        "exclusiveMinimum": 0,
        "exclusiveMaximum": 1,
        "description": "strictly between 0 and 1",
    }
    validator = Draft202012Validator(schema_of(_Aimed))
    validator.validate(document_of(_Aimed(0.95)))
    validator.validate(document_of(_Aimed(None)))
    with pytest.raises(Exception, match="greater than or equal to the maximum"):
        validator.validate(document_of(_Aimed(1.0)))


#: Each typed command's records whose fields stand at the top of its document, beside the shared envelope.
TYPED_PARTS: dict[str, list[type[Record]]] = {
    "plan": [PlanRuns],
    "compare": [],
    "sweep": [SweepCurve, SweepTail],
    "fit": [FitRead, FitEstimate, FitGaps],
    "optimize": [OptimizeDecisions],
    "simulate": [SimulatedSchedule, SimulatedMeasure, SimulatedCounts],
    "events": [EventsWritten],
    "analyze": [AnalyzedLog, AnalyzedSpan, AnalyzedOutcome],
}

#: Keys of a typed part whose schema the registry widens at run time (the levers' keys, a running share's gain).
WIDENED = {"optimize": {"levers"}}


@pytest.mark.parametrize("command", list(TYPED_PARTS))
def test_the_commands_schemas_are_made_from_their_records(command: str) -> None:
    schema: dict[str, Any] = catalogue.for_command(command)
    for record in TYPED_PARTS[command]:
        made = properties_of(record)
        fixed = {key: value for key, value in made.items() if key not in WIDENED.get(command, set())}
        assert {key: schema["properties"][key] for key in fixed} == fixed
        assert set(made) <= set(schema["required"])
    if command == "compare":
        scenario = schema["properties"]["scenarios"]["items"]
        assert scenario["properties"]["name"] == properties_of(ComparedScenario)["name"]


def test_optimize_publishes_its_levers_and_targets_fields_as_required() -> None:
    schema: dict[str, Any] = catalogue.for_command("optimize")
    lever = schema["properties"]["levers"]["items"]
    assert lever["required"] == list(LeverRow._fields)
    assert set(lever["properties"]) == {*LeverRow._fields, "cluster_gain_pp"}  # the gain only with a spare pool
    assert "without_jit" in lever["properties"]["key"]["enum"]
    targets = schema["properties"]["targets"]
    assert targets["required"] == list(TargetsPart._fields)
    assert targets["properties"] == properties_of(TargetsPart)


@pytest.mark.parametrize(
    "args",
    [
        [
            "optimize",
            "--preset",
            "llama3-405b",
            "--target",
            "0.95",
            "--spares",
            "4",
            "--repair",
            "4h",
            "--step-time",
            "5s",
        ],
        ["simulate", "--preset", "llama3-405b-async", "--cycles", "300", "--seed", "1", "--optimize"],
        ["plan", "--work", "20d", "--runs", "100", "--mtbf-ci", "3h:3.8h", "--deadline", "25d"],
        ["sweep", "--over", "bw", "--points", "4"],
        ["fit", str(Path(__file__).parent / "data" / "logs" / "classes" / "incidents.csv"), "--observed-gpus", "16384"],
        ["fit", "--failures", "419", "--window", "54d"],
    ],
)
def test_every_key_of_a_typed_document_is_published(run_json: Callable[..., dict[str, Any]], args: list[str]) -> None:
    # Made from the records, a document holds no key its schema leaves out (fit's did: weibull_reason,
    # observed_gpus and more), at the top or in a nested record.
    document = run_json(*args)
    schema = catalogue.for_command(args[0])
    properties: dict[str, Any] = schema["properties"]  # type: ignore[assignment]
    assert set(document) <= set(properties)
    for key in ("split", "whole_split", "analytic", "agreement", "optimize"):
        if isinstance(document.get(key), dict):  # simulate's nested records
            assert set(document[key]) == set(properties[key]["properties"])
    weibull = document.get("weibull")
    if weibull is not None:
        nested = properties["weibull"]
        assert set(weibull) == set(nested["properties"])


def test_presets_list_publishes_its_rows_fields_as_required(run_json: Callable[..., dict[str, Any]]) -> None:
    # The rows are built where the presets are found; each reads back as a PresetRow, so none holds a key
    # its schema leaves out, and the schema's row is the record's.
    row = catalogue.for_command("presets list")["properties"]["presets"]["items"]  # type: ignore[index]
    assert row["required"] == list(PresetRow._fields)
    assert row["properties"] == properties_of(PresetRow)
    rows = run_json("presets", "list")["presets"]
    assert rows
    for found in rows:
        assert document_of(record_of(PresetRow, found)) == found


def test_events_summary_holds_its_records_keys_beside_the_reading(run: Callable[..., Any], tmp_path: Path) -> None:
    log = Path(__file__).parent / "data" / "logs" / "megatron" / "timestamped.log"
    result = run("events", str(log), "--output", str(tmp_path / "events.csv"), "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert list(document) == ["schema_version", "command", *EventsWritten._fields, "reading"]
    written = record_of(EventsWritten, {key: document[key] for key in EventsWritten._fields})
    assert written.form == "csv"
    assert written.events > 0


def _holds(schema: dict[str, Any], records: list[type[Record]], widened: frozenset[str] = frozenset()) -> None:
    """``schema`` (an object's) publishes each record's fields as made from it, all required."""
    for record in records:
        made = {key: value for key, value in properties_of(record).items() if key not in widened}
        assert {key: schema["properties"][key] for key in made} == made
        assert set(record._fields) <= set(schema["required"])


def test_analyze_publishes_its_nested_records_fields_as_required() -> None:
    schema: dict[str, Any] = catalogue.for_command("analyze")
    properties = schema["properties"]
    _holds(properties["realised"], [RealisedLosses, RealisedOutcome])
    # The MTBF's interval keeps its pair: a number, then a number or null.
    _holds(properties["measured"], [MeasuredFigures], frozenset({"mtbf_ci95"}))
    assert properties["measured"]["properties"]["mtbf_ci95"]["prefixItems"][0]["type"] == "number"
    levels = properties["measured"]["properties"]["levels"]["items"]
    assert levels == schema_of(MeasuredLevel)
    _holds(properties["model"]["oneOf"][1], [AnalyzedModel])
    _holds(properties["windows"]["oneOf"][1]["items"], [WindowLosses, WindowOutcome])
    assert properties["causes"]["items"] == schema_of(CauseRow)


def test_every_key_of_analyzes_document_is_its_records_or_the_registrys(
    run_json: Callable[..., dict[str, Any]],
) -> None:
    # docs/model.md §11.3: the hand-worked run, with the model at its inputs and two windows.
    log = Path(__file__).parent / "data" / "hand-run.jsonl"
    document = run_json("analyze", str(log), "--time-unit", "min", "--window", "1h")
    properties: dict[str, Any] = catalogue.for_command("analyze")["properties"]  # type: ignore[assignment]
    assert set(document) <= set(properties)
    for key in ("realised", "measured", "model"):
        nested = properties[key].get("oneOf", [None, properties[key]])[-1]
        assert set(document[key]) == set(nested["properties"])
    assert set(document["windows"][0]) == set(properties["windows"]["oneOf"][1]["items"]["properties"])
    fixed = {key: document["model"][key] for key in AnalyzedModel._fields}
    assert document_of(record_of(AnalyzedModel, fixed)) == fixed
    for level in document["measured"]["levels"]:
        assert document_of(record_of(MeasuredLevel, level)) == level
