"""Failure Trace Archive event traces (logs/fta_format.py): unavailabilities as failures for fit, bad
rows, detection, and a trace read as it streams.

The fixture is three nodes' availability intervals, ordered by node as the archive orders them. The
values below are worked by hand from its rows; MTBF = window / interruptions (docs/fit.md §3–§4).

The fixture's run, worked by hand: docs/model.md §11.5.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.logs import fit as fitting
from ckptcalc.logs import fta_format, reader
from ckptcalc.logs.adapter import Bad, Broken, Row

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
TRACE = str(Path(__file__).parent / "data" / "logs" / "fta" / "event_trace.tab")
HEADER = "# event_id\tcomponent_id\tnode_id\tplatform_id\tnode_name\tevent_type\tevent_start_time\tevent_stop_time\tevent_end_reason\n"  # noqa: E501

# The unavailabilities (event_type 0), in the file's order: line, start, event_end_reason.
FAILURES = [
    (3, 1117620000.0, "1"),  # node1, event 2
    (5, 1117710000.0, "3"),  # node1, event 4
    (8, 1117650000.0, "1"),  # node2, event 7
    (11, 1117590000.0, None),  # node3, event 10: reason \N, none
]


def _rows(lines: list[str] | Iterator[str]) -> list[Row | Bad]:
    items = list(fta_format.rows(lines))
    assert all(isinstance(item, (Row, Bad)) for item in items)
    return [item for item in items if isinstance(item, (Row, Bad))]


def test_each_unavailability_is_a_failure_at_its_start() -> None:
    with open(TRACE, encoding="utf-8") as lines:
        rows = _rows(lines)
    assert [(r.line, r.value["time"], r.value.get("cause")) for r in rows if isinstance(r, Row)] == FAILURES
    assert {r.value["event"] for r in rows if isinstance(r, Row)} == {"failure"}
    assert len(rows) == len(FAILURES)  # the availability rows are no events


def test_fit_reads_the_trace() -> None:
    log = fitting.read_log(TRACE)
    assert log.times == (1117590000.0, 1117620000.0, 1117650000.0, 1117710000.0)
    assert log.format == "fta"
    fitted = fitting.fit_log(log)
    # Window 1117590000 → 1117710000 = 120000 s; three unavailabilities after the first: 40000 s.
    assert (fitted.mtbf.interruptions, fitted.window_s, fitted.mtbf.mtbf_s) == (3, 120000.0, 40000.0)
    # The counted three: reasons 1, 1 and 3 (the first, reason \N, starts the clock).
    assert [(c.cause, c.count) for c in fitted.causes] == [("1", 2), ("3", 1)]


def test_the_fit_command_reads_the_trace(run_json: RunJson) -> None:
    doc = run_json("fit", TRACE)
    assert (doc["interruptions"], doc["window_s"], doc["mtbf_s"]) == (3, 120000.0, 40000.0)
    assert doc == run_json("fit", TRACE, "--format", "fta")
    coalesced = run_json("fit", TRACE, "--coalesce", "9h")  # 30000 s apart chain; the 60000 s gap does not
    assert (coalesced["interruptions"], coalesced["events_coalesced"]) == (1, 2)


# ---------------------------------------------------------------- what a row may say


def test_comments_crlf_and_a_header_without_its_hash() -> None:
    lines = ["event_type\tevent_start_time\r\n", "# a note\r\n", "0\t100.5\r\n", "1\t200\r\n", "\r\n"]
    assert _rows(lines) == [Row(3, {"time": 100.5, "event": "failure"})]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("0\t100", "2 fields, but the header has 3"),
        ("2\t100\tx", "event_type '2': expected 0 (unavailable) or 1 (available)"),
        ("0\tNULL\tx", "cannot read event_start_time 'NULL': expected seconds since 1970"),
        ("0\tinf\tx", "cannot read event_start_time 'inf'"),
        ("0\t1e300\tx", "cannot read event_start_time '1e300'"),
    ],
)
def test_a_bad_row_is_named_with_its_line(row: str, message: str) -> None:
    lines = ["# event_type\tevent_start_time\tevent_end_reason\n", "1\t50\tx\n", row + "\n", "0\t300\tx\n"]
    rows = _rows(lines)
    assert [type(r).__name__ for r in rows] == ["Bad", "Row"]
    bad = rows[0]
    assert isinstance(bad, Bad) and bad.line == 3 and bad.message.startswith(message)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("# event_id\tevent_type\tevent_stop_time", "not a Failure Trace Archive header: no 'event_start_time' column"),
        ("time,kind", "not a Failure Trace Archive header: no 'event_type' column"),
        ("# event_type\tevent_start_time\tevent_type", "column 'event_type' twice in the header"),
    ],
)
def test_a_bad_header_stops_the_reading(header: str, message: str) -> None:
    with pytest.raises(Broken) as caught:
        list(fta_format.rows([header + "\n", "0\t1\t2\n"]))
    assert (caught.value.line, caught.value.message) == (1, message)


def test_the_command_names_a_bad_row_and_skip_bad_counts_it(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    rows = Path(TRACE).read_text().splitlines(keepends=True)
    rows.insert(4, "99\t0\t4\t1\tnode4\t0\tlater\tNULL\tNULL\n")  # becomes line 5
    path = tmp_path / "event_trace.tab"
    path.write_text("".join(rows))
    assert_usage_error(run("fit", str(path)), f"{path}:5: cannot read event_start_time 'later'")
    doc = run_json("fit", str(path), "--skip-bad")
    assert (doc["skipped_bad"], doc["interruptions"], doc["mtbf_s"]) == (1, 3, 40000.0)


def test_a_csv_log_named_fta_is_refused_at_its_header(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "x.csv"
    path.write_text("time,kind\n1,gpu\n")
    assert_usage_error(run("fit", str(path), "--format", "fta"), f"{path}:1: not a Failure Trace Archive header")


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("first", "fmt"),
    [
        (HEADER.strip("\n"), "fta"),
        ("# event_id event_type event_start_time", "fta"),  # a header split by spaces after its "#"
        ("event_id\tevent_type\tevent_start_time", "fta"),
        ("event_type,event_start_time,node_id", "csv"),  # a CSV of the same columns is still CSV
        ("# time\tkind", "csv"),  # a tab-separated table that is no event trace
        ('{"event_type": 0, "event_start_time": 1}', "jsonl"),
    ],
)
def test_detection_from_the_first_line(first: str, fmt: str) -> None:
    assert reader.detect_format([first + "\n"]) == fmt


# ---------------------------------------------------------------- memory


def test_a_trace_streams_one_row_at_a_time() -> None:
    pulled = 0

    def lines() -> Iterator[str]:
        nonlocal pulled
        yield "# event_type\tevent_start_time\n"
        for n in range(50_000):
            pulled = n + 1
            yield f"{n % 2}\t{n}\n"

    seen = 0
    for row in fta_format.rows(lines()):
        assert isinstance(row, Row)
        assert row.value["time"] == 2 * seen == pulled - 1  # each failure out as soon as its line is read
        seen += 1
    assert seen == 25_000
