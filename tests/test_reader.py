"""Reading event logs: formats, time forms, filters, bad rows with FILE:LINE, and hostile files (docs/fit.md §1)."""

from __future__ import annotations

import csv
import io
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc.errors import InputError
from ckptcalc.logs import reader as eventlog
from ckptcalc.logs.fit import combine, parse_log, read_log
from ckptcalc.logs.reader import FORMATS, get_path, parse_time, text_form

# 2024-05-01T00:00:00Z in seconds since the epoch: 19 844 days (1970-01-01 .. 2024-05-01) × 86 400.
MAY_1 = 19_844 * 86_400.0


def _error(excinfo: pytest.ExceptionInfo[InputError]) -> tuple[str | None, str]:
    return excinfo.value.where, excinfo.value.message


# ---------------------------------------------------------------- formats


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[{}]", "json"),
        ("   [\n", "json"),
        ('{"time": 1}\n', "jsonl"),
        ("  \t{", "jsonl"),
        ("time,kind\n", "csv"),
        ('"time"\n', "csv"),
        ("", None),
        ("<html><body>502 Bad Gateway", None),  # a web page saved instead of the log
        ("\x00\x01binary", None),
    ],
)
def test_format_is_detected_from_the_first_non_blank_line(line: str, expected: str | None) -> None:
    assert eventlog.detect_format(line) == expected


def test_an_undetectable_format_names_the_line_and_the_parameter() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log("\n<html>\n<body>oops</body>\n", name="page.log")
    assert _error(excinfo) == (
        "page.log:2",
        f"cannot tell the format from '<html>': name it with format ({', '.join(eventlog.FORMATS)})",
    )
    # Named, the format is not detected: a header that looks like markup is read as CSV.
    assert parse_log("<t>\n5\n", name="odd.csv", format="csv", time="<t>", time_unit="s").times == (5.0,)


CSV = "time,kind\n2024-05-01T00:00:00Z,gpu\n2024-05-01T02:00:00Z,nic\n2024-05-01T01:00:00Z,gpu\n"
JSON = """[
  {"time": "2024-05-01T00:00:00Z", "kind": "gpu"},
  {"time": "2024-05-01T02:00:00Z", "kind": "nic"},
  {"time": "2024-05-01T01:00:00Z", "kind": "gpu"}
]"""
JSONL = "\n".join(json.dumps(record) for record in json.loads(JSON)) + "\n"


@pytest.mark.parametrize(("text", "fmt"), [(CSV, "csv"), (JSON, "json"), (JSONL, "jsonl")])
def test_every_format_gives_the_same_sorted_events(text: str, fmt: str) -> None:
    log = parse_log(text, name=f"log.{fmt}", cause="kind")
    assert log.format == fmt
    assert log.time_field == "time"
    assert log.time_kind == "timestamp"
    assert log.times == (MAY_1, MAY_1 + 3600, MAY_1 + 7200)
    assert log.causes == ("gpu", "gpu", "nic")
    assert (log.read, log.kept, log.filtered, log.skipped_bad, log.bad) == (3, 3, 0, 0, ())


@pytest.mark.parametrize("text", [CSV, JSON, JSONL])
def test_events_are_held_as_arrays_not_objects(text: str) -> None:
    # Ten million events must fit in memory: a float64 time and a two-byte cause code each, sorted together.
    log = parse_log(text, name="x", cause="kind")
    assert (log.times_s.dtype.itemsize, log.codes.dtype.itemsize) == (8, 2)
    assert [log.labels[c] for c in log.codes] == ["gpu", "gpu", "nic"]


def test_format_override_beats_detection() -> None:
    # A JSON Lines text read as CSV: its first line becomes the header, and no time field is found.
    with pytest.raises(InputError) as excinfo:
        parse_log(JSONL, name="x.log", format="csv")
    assert excinfo.value.where == "x.log:1"
    assert "no time field" in excinfo.value.message
    assert parse_log(JSONL, name="x.log", format="jsonl").kept == 3


def test_unknown_format_names_the_parameter() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log(CSV, name="x", format="xml")
    assert _error(excinfo) == ("format", "unknown format 'xml': expected auto or " + ", ".join(FORMATS))


def test_stdin_is_read_from_the_stream_given(tmp_path: Path) -> None:
    log = read_log("-", stdin=io.StringIO(JSONL), cause="kind")
    assert log.source == "stdin"
    assert log.causes == ("gpu", "gpu", "nic")
    with pytest.raises(InputError) as excinfo:
        read_log("-", stdin=io.StringIO('{"time": "yesterday"}\n'))
    assert excinfo.value.where == "stdin:1"
    with pytest.raises(InputError, match="needs a stream"):
        read_log("-")


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_files_are_read_by_path(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"log.{fmt}"
    path.write_text({"csv": CSV, "json": JSON, "jsonl": JSONL}[fmt], encoding="utf-8")
    log = read_log(path)
    assert log.source == str(path)
    assert log.kept == 3


def test_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbf" + CSV.encode())
    assert read_log(path).time_field == "time"


# ---------------------------------------------------------------- time forms


@pytest.mark.parametrize(
    ("raw", "seconds", "naive"),
    [
        ("2024-05-01T00:00:00Z", MAY_1, False),
        ("2024-05-01T02:00:00+02:00", MAY_1, False),
        ("2024-04-30T19:30:00-04:30", MAY_1, False),
        ("2024-05-01T00:00:00.25Z", MAY_1 + 0.25, False),
        ("2024-05-01T00:00:00.123456789+00:00", MAY_1 + 0.123456, False),  # beyond microseconds is dropped
        ("2024-05-01T00:00:00", MAY_1, True),  # naive: read as UTC
        ("2024-05-01 00:00", MAY_1, True),
        ("2024-05-01", MAY_1, True),
        ("  2024-05-01T00:00:00Z  ", MAY_1, False),
        ("1970-01-01T00:00:00Z", 0.0, False),
    ],
)
def test_iso_timestamps(raw: str, seconds: float, naive: bool) -> None:
    value, kind, was_naive = parse_time(raw)
    assert value == pytest.approx(seconds, abs=1e-6)
    assert (kind, was_naive) == ("timestamp", naive)


@pytest.mark.parametrize(
    ("raw", "unit", "seconds"),
    [
        (90, "s", 90.0),
        (1.5, "min", 90.0),
        ("2", "h", 7200.0),
        (" 0.5 ", "d", 43200.0),
        ("-1e1", "s", -10.0),
        ("3", "hours", 10800.0),  # the spellings of units.py are accepted too
        ("20240501", "s", 20240501.0),  # a string of digits is a number, not a basic-format date
    ],
)
def test_numeric_times_in_a_unit(raw: Any, unit: str, seconds: float) -> None:
    assert parse_time(raw, time_unit=unit) == (seconds, "number", False)


def test_a_number_without_a_unit_says_to_pass_one() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log("t,k\n1,a\n", name="x.csv", time="t")
    assert excinfo.value.where == "x.csv:2"
    assert "pass time_unit (s, min, h or d)" in excinfo.value.message
    # Even skip_bad does not hide it: every row would be skipped.
    with pytest.raises(InputError, match="pass time_unit"):
        parse_log("t,k\n1,a\n", name="x.csv", time="t", skip_bad=True)


def test_unknown_time_unit_names_the_parameter() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log(CSV, name="x", time_unit="fortnight")
    assert _error(excinfo) == ("time_unit", "unknown time unit 'fortnight': expected s, min, h or d")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("yesterday", "cannot read time 'yesterday'"),
        (True, "true is not a time"),
        ([1], "time must be a timestamp or a number"),
        (1e308, "is too large"),
        (float("nan"), "not a finite number"),
        (10**400, "is too large"),
        ("", "empty time"),
    ],
)
def test_values_that_are_not_times(raw: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_time(raw, time_unit="d")


def test_a_log_uses_one_time_form() -> None:
    text = "time\n2024-05-01T00:00:00Z\n5\n"
    with pytest.raises(InputError) as excinfo:
        parse_log(text, name="x.csv", time_unit="s")
    assert _error(excinfo) == ("x.csv:3", "a number, but line 2 has ISO-8601 timestamps; a log uses one form")
    # Without a unit the number is still reported as a mixed form, not as a missing unit.
    with pytest.raises(InputError, match="line 2 has ISO-8601 timestamps"):
        parse_log(text, name="x.csv")
    text = "time\n5\n2024-05-01T00:00:00Z\n"
    with pytest.raises(InputError, match="an ISO-8601 timestamp, but line 2 has numbers"):
        parse_log(text, name="x.csv", time_unit="s")
    log = parse_log(text, name="x.csv", time_unit="s", skip_bad=True)
    assert (log.kept, log.skipped_bad, log.time_kind) == (1, 1, "number")


def test_naive_timestamps_are_counted() -> None:
    log = parse_log("time\n2024-05-01T00:00:00\n2024-05-01T01:00:00Z\n", name="x")
    assert log.naive_timestamps == 1
    assert log.times == (MAY_1, MAY_1 + 3600)


# ---------------------------------------------------------------- fields


@pytest.mark.parametrize("field", ["timestamp", "event_time", "start"])
def test_default_time_field(field: str) -> None:
    log = parse_log(f"other,{field}\n2024-05-01,3\n", name="x", time_unit="h")
    assert log.time_field == field
    assert log.times == (10800.0,)


def test_the_first_default_time_field_present_wins() -> None:
    log = parse_log("start,time\n1,2\n", name="x", time_unit="s")
    assert (log.time_field, log.times) == ("time", (2.0,))


def test_no_time_field_lists_the_fields() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log('[{"when": 1, "what": "x"}]', name="x.json", time_unit="s")
    assert excinfo.value.where == "x.json:1"
    assert "none of time, timestamp, event_time, start" in excinfo.value.message
    assert "'when', 'what'" in excinfo.value.message


def test_a_csv_header_without_the_named_time_column() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log("\nwhen,kind\n1,a\n", name="x.csv", time="time", skip_bad=True)
    assert _error(excinfo) == ("x.csv:2", "no column 'time' in the header")


def test_a_nested_time_field() -> None:
    text = '{"event": {"at": "2024-05-01T00:00:00Z"}}\n{"event": {"at": "2024-05-01T00:00:01Z"}}\n'
    log = parse_log(text, name="x", time="event.at")
    assert log.times == (MAY_1, MAY_1 + 1)


@pytest.mark.parametrize(
    ("record", "path", "expected"),
    [
        ({"a": {"b": {"c": 1}}}, "a.b.c", 1),
        ({"a": {"b": 2}}, "a", {"b": 2}),
        ({"a.b": 3, "a": {"b": 4}}, "a.b", 3),  # a literal dotted key (CSV column) wins
        ({"a": [{"b": 5}, {"b": 6}]}, "a.1.b", 6),
        ({"a": None}, "a", None),
    ],
)
def test_get_path(record: dict[str, Any], path: str, expected: Any) -> None:
    assert get_path(record, path) == expected


def test_get_path_missing() -> None:
    assert get_path({"a": {"b": 1}}, "a.c", "default") == "default"
    assert get_path({"a": [1]}, "a.3", None) is None
    assert get_path({"a": 1}, "a.b", None) is None
    with pytest.raises(KeyError):
        get_path({"a": {}}, "a.b")


@pytest.mark.parametrize(
    ("value", "text"), [("x", "x"), (3, "3"), (1.5, "1.5"), (False, "false"), (None, "null"), ({"b": 1}, '{"b":1}')]
)
def test_text_form(value: Any, text: str) -> None:
    assert text_form(value) == text


NESTED = """[
  {"time": 0, "job": {"id": 7, "queue": "train"}, "cause": {"kind": "gpu"}, "planned": false},
  {"time": 1, "job": {"id": 8, "queue": "train"}, "cause": {"kind": "nic"}, "planned": true},
  {"time": 2, "job": {"id": 7, "queue": "eval"}, "cause": {"kind": "gpu"}, "planned": false},
  {"time": 3, "job": {"id": 7, "queue": "train"}, "planned": false},
  {"time": 4, "job": {"id": 7, "queue": "train"}, "cause": {"kind": null}, "planned": false},
  {"time": 5, "cause": {"kind": "gpu"}, "planned": false}
]"""


@pytest.mark.parametrize(
    ("where", "times"),
    [
        ([], [0, 1, 2, 3, 4, 5]),
        (["job.id=7"], [0, 2, 3, 4]),
        (["job.id=7", "job.queue=train"], [0, 3, 4]),
        (["planned=false"], [0, 2, 3, 4, 5]),
        (["cause.kind=gpu"], [0, 2, 5]),
        (["cause.kind=null"], [4]),
        (["job.queue="], []),
        (["job.id=7.0"], []),  # text comparison: 7 is written "7"
    ],
)
def test_where_filters_on_dotted_paths(where: list[str], times: list[float]) -> None:
    if not times:
        with pytest.raises(InputError) as excinfo:
            parse_log(NESTED, name="n.json", time_unit="s", where=where)
        assert _error(excinfo) == ("n.json", "no events kept (read 6, 6 filtered out by where)")
        return
    log = parse_log(NESTED, name="n.json", time_unit="s", where=where)
    assert list(log.times) == times
    assert log.filtered == 6 - len(times)
    assert log.read == 6


def test_where_value_may_contain_equals_signs() -> None:
    log = parse_log("time,note\n1,a=b\n2,a\n", name="x", time_unit="s", where=["note=a=b"])
    assert log.times == (1.0,)


@pytest.mark.parametrize("condition", ["job.id", "=7", " =7"])
def test_malformed_where_names_the_parameter(condition: str) -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log(NESTED, name="x", time_unit="s", where=[condition])
    assert excinfo.value.where == "where"
    assert "expected FIELD=VALUE" in excinfo.value.message


def test_where_must_be_a_list() -> None:
    with pytest.raises(InputError, match="one string"):
        parse_log(NESTED, name="x", time_unit="s", where="job.id=7")


def test_cause_groups_on_a_dotted_field_and_missing_is_unknown() -> None:
    log = parse_log(NESTED, name="x", time_unit="s", cause="cause.kind")
    assert log.causes == ("gpu", "nic", "gpu", "unknown", "unknown", "gpu")
    assert parse_log(NESTED, name="x", time_unit="s", cause="job.id").causes == ("7", "8", "7", "7", "7", "unknown")
    assert set(parse_log(NESTED, name="x", time_unit="s").causes) == {"unknown"}


@pytest.mark.parametrize(("parameter", "value"), [("time", " "), ("cause", "")])
def test_empty_field_names_are_refused(parameter: str, value: str) -> None:
    with pytest.raises(InputError) as excinfo:
        if parameter == "time":
            parse_log(CSV, name="x", time=value)
        else:
            parse_log(CSV, name="x", cause=value)
    assert _error(excinfo) == (parameter, "empty field name")


# ---------------------------------------------------------------- bad rows


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        ("a.csv", "time,kind\n2024-05-01,gpu\n2024-13-01,gpu\n", 3, "cannot read time '2024-13-01'"),
        ("a.csv", "time,kind\n2024-05-01,gpu\n,gpu\n", 3, "no time: field 'time' is missing or empty"),
        ("a.csv", "time,kind\n2024-05-01,gpu,extra\n2024-05-02,gpu\n", 2, "3 fields, but the header has 2"),
        ("a.csv", "time,kind\n\n2024-05-02,a\n\n2024-05-01\n", 5, "1 fields, but the header has 2"),
        ("a.csv", 'time,note\n2024-05-01,"two\nlines"\nnope,x\n', 4, "cannot read time 'nope'"),
        ("a.jsonl", '{"time": "2024-05-01"}\n{"time": \n', 2, "malformed JSON: Expecting value"),
        ("a.jsonl", '{"time": "2024-05-01"}\n\n[1, 2]\n', 3, "expected a JSON object, got [1, 2]"),
        ("a.jsonl", '{"time": "2024-05-01"}\n{"when": 3}\n', 2, "no time: field 'time' is missing or empty"),
        ("a.jsonl", '{"time": "2024-05-01"}\n{"time": null}\n', 2, "no time: field 'time' is missing or empty"),
        ("a.json", '[\n{"time": "2024-05-01"},\n\n  "text"\n]', 4, 'expected a JSON object, got "text"'),
        ("a.json", '[{"time": "2024-05-01"},\n {"kind": "gpu",\n  "time": "later"}]', 2, "cannot read time 'later'"),
        ("a.json", '[{"time": "2024-05-01"},\n {"time": false}]', 2, "false is not a time"),
    ],
)
def test_each_bad_row_is_reported_with_its_file_and_line(name: str, text: str, line: int, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log(text, name=name)
    assert excinfo.value.where == f"{name}:{line}"
    assert message in excinfo.value.message
    assert str(excinfo.value).startswith(f"{name}:{line}: ")
    log = parse_log(text, name=name, skip_bad=True)
    assert (log.read, log.kept, log.skipped_bad) == (2, 1, 1)
    assert log.bad[0].startswith(f"{name}:{line}: ")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[\n{"time": "2024-05-01"},\n{"time": ]\n', 3, "malformed JSON: Expecting value"),
        ('[{"time": "2024-05-01"}\n{"time": 1}]', 2, "malformed JSON: expected ',' or ']'"),
        ('[{"time": "2024-05-01"}]\n\n[]', 3, "unexpected text after the JSON array"),
        ('[{"time": "2024-05-01"},\n', 2, "malformed JSON: Expecting value"),
        ("[" * 100_000, 1, "nested too deeply"),
        ('[{"time": "2024-05-01"},\n {"time": ' + "9" * 5000 + "}]", 2, "malformed JSON: Exceeds the limit"),
    ],
)
def test_a_broken_json_array_is_fatal_even_when_skipping(text: str, line: int, message: str) -> None:
    for skip in (False, True):
        with pytest.raises(InputError) as excinfo:
            parse_log(text, name="a.json", skip_bad=skip)
        assert excinfo.value.where == f"a.json:{line}"
        assert message in excinfo.value.message


@pytest.mark.parametrize(
    ("line", "message"),
    [("[" * 100_000, "malformed JSON: nested too deeply"), ('{"time": ' + "9" * 5000 + "}", "Exceeds the limit")],
)
def test_json_lines_too_deep_or_too_long_are_bad_rows(line: str, message: str) -> None:
    text = '{"time": 1}\n' + line + "\n"
    with pytest.raises(InputError) as excinfo:
        parse_log(text, name="a.jsonl", time_unit="s")
    assert excinfo.value.where == "a.jsonl:2"
    assert message in excinfo.value.message
    assert parse_log(text, name="a.jsonl", time_unit="s", skip_bad=True).skipped_bad == 1


def test_a_json_text_that_is_not_an_array() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log('\n"time"', name="a.json", format="json")
    assert _error(excinfo) == ("a.json:2", "expected a JSON array of objects")


def test_skip_bad_counts_every_bad_row_and_keeps_the_first_messages() -> None:
    rows = ["time"] + [f"{i}" if i % 3 else "bad" for i in range(30)]
    log = parse_log("\n".join(rows) + "\n", name="x.csv", time_unit="s", skip_bad=True)
    assert log.skipped_bad == 10
    assert log.kept == 20
    assert log.read == 30
    assert len(log.bad) == eventlog.BAD_KEPT
    assert log.bad[0] == "x.csv:2: cannot read time 'bad': expected an ISO-8601 timestamp such as " + (
        "2024-05-01T12:00:00Z or a number"
    )
    assert log.bad[1].startswith("x.csv:5: ")


def test_a_filtered_row_is_not_checked() -> None:
    # The broken time is in a row the filter drops: it is neither bad nor kept.
    log = parse_log("time,job\n1,a\nnope,b\n", name="x", time_unit="s", where=["job=a"])
    assert (log.read, log.kept, log.filtered, log.skipped_bad) == (2, 1, 1, 0)


def test_csv_header_problems_are_fatal() -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log("\ntime,kind,time\n1,2,3\n", name="x.csv", time_unit="s")
    assert _error(excinfo) == ("x.csv:2", "duplicate column 'time' in the header")
    with pytest.raises(InputError) as excinfo:
        parse_log(f"time,{'x' * 200_000}\n1\n", name="x.csv", time_unit="s")
    assert excinfo.value.where == "x.csv:1"
    assert "field larger than field limit" in excinfo.value.message


def test_csv_error_in_a_row_is_a_bad_row() -> None:
    text = f"time,note\n1,a\n2,{'x' * 200_000}\n3,d\n"
    with pytest.raises(InputError) as excinfo:
        parse_log(text, name="x.csv", time_unit="s")
    assert excinfo.value.where == "x.csv:3"
    log = parse_log(text, name="x.csv", time_unit="s", skip_bad=True)
    assert log.times == (1.0, 3.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty log: no events"),
        ("  \n\n", "empty log: no events"),
        ("time,kind\n", "no events kept (read 0)"),
        ("[]", "no events kept (read 0)"),
        ("[ \n ]\n", "no events kept (read 0)"),
        ("time\nbad\n", "no events kept (read 1, 1 bad rows skipped)"),
    ],
)
def test_an_empty_result_names_the_file(text: str, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        parse_log(text, name="empty.log", skip_bad=True)
    assert _error(excinfo) == ("empty.log", message)


# ---------------------------------------------------------------- hostile files


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    outcome: list[BaseException] = []

    def attempt() -> None:
        try:
            read_log(fifo)
        except BaseException as error:
            outcome.append(error)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():  # unblock the reader so no thread is left behind, then fail
        with open(fifo, "w"):
            pass
        worker.join(timeout=5)
        pytest.fail("reading a FIFO blocked")
    assert len(outcome) == 1 and isinstance(outcome[0], InputError)
    assert outcome[0].where == str(fifo)
    assert outcome[0].message.startswith("is a FIFO; only regular files are read")


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as excinfo:
        read_log(tmp_path)
    assert _error(excinfo) == (str(tmp_path), "is a directory, not a log file")


def test_a_device_is_refused() -> None:
    with pytest.raises(InputError, match="is a device"):
        read_log("/dev/null")


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as excinfo:
        read_log(tmp_path / "nope.csv")
    assert _error(excinfo) == (str(tmp_path / "nope.csv"), "no such file")


def test_errors_while_opening_or_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "log.csv"
    path.write_text(CSV)

    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    with monkeypatch.context() as patch:
        patch.setattr(os, "open", refuse)  # the module the reader opens files with
        with pytest.raises(InputError) as excinfo:
            read_log(path)
    assert excinfo.value.message == "cannot read: Permission denied"

    class Broken(io.StringIO):
        def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
            raise OSError(5, "Input/output error")

    with pytest.raises(InputError) as excinfo:
        read_log("-", stdin=Broken())
    assert (excinfo.value.where, excinfo.value.message) == ("stdin", "cannot read: Input/output error")


def test_only_standard_input_has_a_size_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A pipe might never end; a regular file does, and is read line by line whatever its size.
    path = tmp_path / "big.csv"
    path.write_text(CSV)
    monkeypatch.setattr(eventlog, "MAX_BYTES", len(CSV.encode()) - 1)
    assert read_log(path).kept == 3
    for stdin in (io.StringIO(CSV), io.TextIOWrapper(io.BytesIO(CSV.encode()))):
        with pytest.raises(InputError) as excinfo:
            read_log("-", stdin=stdin)
        assert excinfo.value.where == "stdin"
        assert excinfo.value.message.startswith("larger than the")
    monkeypatch.setattr(eventlog, "MAX_BYTES", len(CSV.encode()))
    assert read_log("-", stdin=io.StringIO(CSV)).kept == 3
    assert read_log("-", stdin=io.TextIOWrapper(io.BytesIO(CSV.encode()))).kept == 3


def test_a_file_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.csv"
    path.write_bytes(b"time,who\n2024-05-01,Jos\xe9\n")
    with pytest.raises(InputError) as excinfo:
        read_log(path)
    assert _error(excinfo) == (f"{path}:2", "not UTF-8 text (byte 23)")


def test_a_stream_that_is_not_utf8() -> None:
    stream = io.TextIOWrapper(io.BytesIO(b"time\n\xff\n"), encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        read_log("-", stdin=stream)
    assert _error(excinfo) == ("stdin:2", "not UTF-8 text (byte 5)")


# ---------------------------------------------------------------- several logs


def test_combine_merges_events_and_adds_counts() -> None:
    a = parse_log("time\n3\n1\nbad\n", name="a.csv", time_unit="s", skip_bad=True)
    b = parse_log('{"time": 2}\n', name="b.jsonl", time_unit="s")
    both = combine([a, b])
    assert both.times == (1.0, 2.0, 3.0)
    assert (both.read, both.kept, both.skipped_bad) == (4, 3, 1)
    assert both.source == "a.csv, b.jsonl"
    assert both.format == "csv, jsonl"
    assert both.time_field == "time"
    assert combine([a]) is a


def test_combine_refuses_mixed_time_forms() -> None:
    a = parse_log("time\n3\n", name="a.csv", time_unit="s")
    b = parse_log("time\n2024-05-01\n", name="b.csv")
    with pytest.raises(InputError) as excinfo:
        combine([a, b])
    assert excinfo.value.where == "b.csv"
    with pytest.raises(InputError):
        combine([])


# ---------------------------------------------------------------- properties


finite_times = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


@given(st.lists(st.tuples(finite_times, st.sampled_from(["gpu", "nic", "", "a,b", 'q"uote'])), min_size=1))
@settings(max_examples=60, deadline=None)
def test_csv_and_jsonl_round_trip(rows: list[tuple[float, str]]) -> None:
    import csv

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["time", "kind"])
    writer.writerows([(repr(t), kind) for t, kind in rows])
    from_csv = parse_log(buffer.getvalue(), name="x.csv", time_unit="s", cause="kind")
    lines = "\n".join(json.dumps({"time": t, "kind": kind}) for t, kind in rows)
    from_jsonl = parse_log(lines, name="x.jsonl", time_unit="s", cause="kind")
    as_array = parse_log(json.dumps([{"time": t, "kind": k} for t, k in rows], indent=1), name="x", time_unit="s")
    expected = sorted(t for t, _ in rows)
    event("reached the assertions")
    assert list(from_csv.times) == list(from_jsonl.times) == list(as_array.times) == expected
    assert sorted(from_csv.causes) == sorted(k.strip() or "unknown" for _, k in rows)
    assert from_jsonl.causes == from_csv.causes


one_line = st.text(st.characters(blacklist_characters="\n\r"), max_size=30)


@st.composite
def fuzzed_logs(draw: st.DrawFn) -> tuple[str, str, int | None]:
    """A log's text, its format and, when no row is junk, how many rows it has: mostly well-formed rows
    (so that most draws parse and reach the checks) with junk lines among them, or now and then any text."""
    fmt = draw(st.sampled_from(["csv", "json", "jsonl"]))
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=300)), fmt, None
    good = st.tuples(finite_times, one_line)
    # The first row is well-formed (so the format can be told from it); one in four of the others is junk.
    rows = [draw(good), *draw(st.lists(st.one_of(good, good, good, one_line), max_size=8))]
    clean = all(isinstance(row, tuple) for row in rows)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["time", "kind"])
        for row in rows:
            if isinstance(row, tuple):
                writer.writerow([repr(row[0]), row[1]])
            else:
                buffer.write(row + "\n")
        text = buffer.getvalue()
    else:
        # Junk in a JSON array is a value that is not an object (junk text would break the whole array).
        junk = (lambda row: json.dumps(row)) if fmt == "json" else (lambda row: row)
        values = [json.dumps({"time": r[0], "kind": r[1]}) if isinstance(r, tuple) else junk(r) for r in rows]
        text = "[\n" + ",\n".join(values) + "\n]\n" if fmt == "json" else "\n".join(values) + "\n"
    return text, fmt, len(rows) if clean else None


@given(fuzzed_logs(), st.booleans(), st.booleans())
@settings(max_examples=300, deadline=None)
def test_any_text_gives_a_log_or_an_input_error(drawn: tuple[str, str, int | None], named: bool, skip: bool) -> None:
    text, fmt, rows = drawn
    try:
        log = parse_log(text, name="fuzz", format=fmt if named else None, time_unit="s", skip_bad=skip)
    except InputError as error:
        event("input error")
        assert error.where is not None and error.where.startswith("fuzz")
        assert rows is None  # a log of well-formed rows only always parses
        return
    event("parsed, with bad rows skipped" if log.skipped_bad else "parsed")
    assert log.kept == len(log.times) > 0
    assert log.read == log.kept + log.filtered + log.skipped_bad
    assert list(log.times) == sorted(log.times)
    if rows is not None:
        assert (log.read, log.kept, log.skipped_bad) == (rows, rows, 0)


@pytest.mark.parametrize("path", ["a.2", "a.5", "a.2.b"])
def test_get_path_past_the_end_of_a_list_is_absent(path: str) -> None:
    record = {"a": [{"b": 1}, {"b": 2}]}
    assert get_path(record, path, eventlog.MISSING) is eventlog.MISSING
    with pytest.raises(KeyError):  # not an IndexError
        get_path(record, path)
    assert get_path(record, "a.1.b") == 2


@pytest.mark.parametrize(("option", "message"), [("time", "no time: field 'gpus.2'"), ("where", "no events kept")])
def test_a_path_past_the_end_of_a_list_is_an_input_error(tmp_path: Path, option: str, message: str) -> None:
    from ckptcalc import api

    path = tmp_path / "gpus.jsonl"
    path.write_text('{"time": 1, "gpus": [5, 6]}\n{"time": 2, "gpus": [5, 6]}\n')
    chosen: dict[str, Any] = {"time": "gpus.2"} if option == "time" else {"where": ["gpus.2=6"]}
    with pytest.raises(InputError, match=message):
        api.fit([path], time_unit="s", **chosen)
