"""The one log reader: each format adapter, each compression, bad lines with FILE:LINE, counting, streaming."""

from __future__ import annotations

import builtins
import bz2
import gzip
import io
import json
import lzma
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.errors import InputError
from ckptcalc.logs import csv_format, json_format, jsonl_format, reader
from ckptcalc.logs.adapter import Bad, Broken, Header, Row
from ckptcalc.logs.reader import FORMATS


class Collect:
    """A consumer that keeps every record it is given, and ignores those whose kind is "skip"."""

    def __init__(self) -> None:
        self.names: list[tuple[tuple[str, ...], int]] = []
        self.records: list[tuple[int, dict[str, Any]]] = []

    def fields(self, names: Sequence[str], line: int) -> None:
        self.names.append((tuple(names), line))

    def record(self, record: dict[str, Any], line: int) -> bool:
        if record.get("kind") == "bad":
            raise reader.BadRecord("a bad kind")
        self.records.append((line, record))
        return record.get("kind") != "skip"


# The same three records in each format, with a blank line; the lines each record starts on.
TEXTS = {
    "csv": ("time,kind\n1,gpu\n\n2,skip\n3,nic\n", [2, 4, 5]),
    "jsonl": ('{"time": 1, "kind": "gpu"}\n\n{"time": 2, "kind": "skip"}\n{"time": 3, "kind": "nic"}\n', [1, 3, 4]),
    "json": ('[\n  {"time": 1, "kind": "gpu"},\n\n  {"time": 2,\n   "kind": "skip"},\n {"time": 3, "kind": "nic"}]\n',
             [2, 4, 6]),
}  # fmt: skip
CSV_VALUES = [{"time": "1", "kind": "gpu"}, {"time": "2", "kind": "skip"}, {"time": "3", "kind": "nic"}]
JSON_VALUES = [{"time": 1, "kind": "gpu"}, {"time": 2, "kind": "skip"}, {"time": 3, "kind": "nic"}]


# ---------------------------------------------------------------- adapters


def test_the_csv_adapter_gives_its_header_then_stripped_rows() -> None:
    lines = ["time, kind\n", "\n", "1 , gpu\n", '2,"two\n', 'lines"\n', "3\n"]
    assert list(csv_format.rows(lines)) == [
        Header(1, ("time", "kind")),
        Row(3, {"time": "1", "kind": "gpu"}),
        Row(4, {"time": "2", "kind": "two\nlines"}),  # a quoted cell spans two lines; the row starts on the first
        Bad(6, "1 fields, but the header has 2"),
    ]


def test_the_csv_adapter_refuses_a_duplicate_column() -> None:
    with pytest.raises(Broken) as excinfo:
        list(csv_format.rows(["\n", "a,b,a\n"]))
    assert (excinfo.value.line, excinfo.value.message) == (2, "duplicate column 'a' in the header")


@pytest.mark.parametrize(
    ("lines", "fields", "cells"),
    [
        # Trace archives' tab-separated files: a "# " before the names, commas inside cells.
        (["# time\tnode\tkind\n", "1\tn1\tgpu, hbm\n"], ("time", "node", "kind"), ("1", "n1", "gpu, hbm")),
        (["\n", "#time\tnode\n", " 1 \t n1\n"], ("time", "node"), ("1", "n1")),
        (["time\tnode\n", "1\tn1\n"], ("time", "node"), ("1", "n1")),
        # More commas than tabs: a CSV header, whose "#" is still only a mark.
        (["# time,node\n", "1,n1\n"], ("time", "node"), ("1", "n1")),
    ],
)
def test_the_csv_adapter_reads_tabs_and_a_marked_header(
    lines: list[str], fields: tuple[str, ...], cells: tuple[str, ...]
) -> None:
    header, row = list(csv_format.rows(lines))
    assert header == Header(len(lines) - 1, fields)
    assert row == Row(len(lines), dict(zip(fields, cells, strict=True)))


def test_a_tab_separated_log_is_detected_from_its_marked_header() -> None:
    assert csv_format.plain_header("# time\tnode\tevent_type\n")
    consumer = Collect()
    counts = reader.scan_text("# time\tkind\n1\tgpu\n2\tskip\n", consumer, name="trace.tab")
    assert (counts.format, counts.read, counts.kept) == ("csv", 2, 1)
    assert consumer.names == [(("time", "kind"), 1)]


def test_the_jsonl_adapter_reads_each_line_on_its_own() -> None:
    assert list(jsonl_format.rows(['{"a": 1}\n', "\n", "{oops\n", "[2]\n"])) == [
        Row(1, {"a": 1}),
        Bad(3, "malformed JSON: Expecting property name enclosed in double quotes"),
        Row(4, [2]),  # not an object: the reader, not the adapter, refuses it
    ]


def test_the_json_adapter_gives_each_element_with_the_line_it_starts_on() -> None:
    lines = ["[\n", '  {"a": 1}, {"a": 2},\n', '  {"a":\n', "     3},\n", '  "x"]\n']
    assert list(json_format.rows(lines)) == [Row(2, {"a": 1}), Row(2, {"a": 2}), Row(3, {"a": 3}), Row(5, "x")]
    assert list(json_format.rows(["[]"])) == []


@pytest.mark.parametrize(
    ("lines", "line", "message"),
    [
        (['"text"\n'], 1, "expected a JSON array of objects"),
        (["[\n", '{"a": 1}\n', '{"a": 2}]\n'], 3, "malformed JSON: expected ',' or ']'"),
        (["[\n", '{"a": tru\n', "e}]\n"], 2, "malformed JSON: Expecting value"),
        (["[\n", '{"a": "open\n', '"}]\n'], 2, "malformed JSON: Invalid control character at"),
        (["[\n", '{"a": 1},\n'], 3, "malformed JSON: Expecting value"),
        (["[]\n", "\n", "x\n"], 3, "unexpected text after the JSON array"),
    ],
)
def test_the_json_adapter_stops_at_a_syntax_error(lines: list[str], line: int, message: str) -> None:
    with pytest.raises(Broken) as excinfo:
        list(json_format.rows(lines))
    assert excinfo.value.line == line
    assert excinfo.value.message.startswith(message)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_each_format_reads_the_same_records_with_their_lines(fmt: str) -> None:
    text, lines = TEXTS[fmt]
    consumer = Collect()
    counts = reader.scan_text(text, consumer, name=f"x.{fmt}")
    assert counts == reader.Counts(f"x.{fmt}", fmt, read=3, kept=2, ignored=1, filtered=0, skipped_bad=0, bad=())
    assert [line for line, _ in consumer.records] == lines
    assert [record for _, record in consumer.records] == (CSV_VALUES if fmt == "csv" else JSON_VALUES)
    # The header (CSV) or the first record's keys (JSON) come first, once.
    assert consumer.names == [(("time", "kind"), lines[0] - 1 if fmt == "csv" else lines[0])]


# ---------------------------------------------------------------- bad lines, counting


# One bad line in each format: the line, and the message.
BAD = {
    "csv": ("time,kind\n1,gpu\n2\n3,bad\n4,nic\n", 3, "1 fields, but the header has 2"),
    "jsonl": ('{"time": 1}\n{"time": 2,\n{"time": 3, "kind": "bad"}\n{"time": 4}\n', 2, "malformed JSON"),
    "json": ('[{"time": 1},\n 2,\n {"time": 3, "kind": "bad"},\n {"time": 4}]\n', 2, "expected a JSON object, got 2"),
}  # fmt: skip


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_a_bad_line_is_an_error_naming_its_file_and_line(fmt: str) -> None:
    text, line, message = BAD[fmt]
    with pytest.raises(InputError) as excinfo:
        reader.scan_text(text, Collect(), name=f"bad.{fmt}")
    assert excinfo.value.where == f"bad.{fmt}:{line}"
    assert excinfo.value.message.startswith(message)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_skip_bad_counts_what_the_adapter_and_the_consumer_refused(fmt: str) -> None:
    text, line, message = BAD[fmt]
    counts = reader.scan_text(text, Collect(), name=f"bad.{fmt}", skip_bad=True)
    # Four records: one the adapter could not read, one the consumer refused (line 4 in CSV, 3 otherwise).
    assert (counts.read, counts.kept, counts.ignored, counts.filtered, counts.skipped_bad) == (4, 2, 0, 0, 2)
    refused = 4 if fmt == "csv" else 3
    assert len(counts.bad) == 2
    assert counts.bad[0].startswith(f"bad.{fmt}:{line}: {message}")
    assert counts.bad[1] == f"bad.{fmt}:{refused}: a bad kind"


def test_where_filters_before_the_consumer_and_is_counted() -> None:
    consumer = Collect()
    counts = reader.scan_text(TEXTS["jsonl"][0], consumer, name="x", where=["kind=nic"])
    assert (counts.read, counts.kept, counts.filtered) == (3, 1, 2)
    assert consumer.records == [(4, {"time": 3, "kind": "nic"})]


WHERE_RECORDS = [
    {"time": 1, "kind": "gpu", "node": "n17"},
    {"time": 2, "kind": "nic", "node": "n2"},
    {"time": 3, "kind": "", "node": "m1"},
    {"time": 4, "node": "n3"},
    {"time": 5, "kind": 7, "node": "n170"},
]


@pytest.mark.parametrize(
    ("where", "where_any", "kept"),
    [
        (["kind=gpu"], [], [1]),
        (["kind!=gpu"], [], [2, 3, 5]),  # a record without the field meets no condition, != included
        (["kind!="], [], [1, 2, 5]),  # not empty: the "event!=" is a condition, not a field "event!"
        (["kind="], [], [3]),
        (["kind=7"], [], [5]),  # compared as text: the number 7 is "7"
        (["node~^n1"], [], [1, 5]),  # re.search: anywhere, so anchor with ^
        (["node~7"], [], [1, 5]),
        (["node~^n1$"], [], []),
        (["kind in gpu,nic"], [], [1, 2]),
        (["kind in gpu, 7 ,x"], [], [1, 5]),  # each listed value stripped
        (["kind in gpu", "node~7"], [], [1]),  # every --where must hold
        ([], ["kind=gpu", "kind=nic"], [1, 2]),  # one --where-any must hold
        (["node~^n"], ["kind=nic", "kind=7"], [2, 5]),
        ([], ["kind~x", "node=zz"], []),
        (["node = m1"], [], []),  # the field is stripped, the value kept as written: " m1" is not "m1"
        (["node =m1"], [], [3]),
    ],
)
def test_where_operators(where: list[str], where_any: list[str], kept: list[int]) -> None:
    text = "".join(json.dumps(record) + "\n" for record in WHERE_RECORDS)
    consumer = Collect()
    counts = reader.scan_text(text, consumer, name="x.jsonl", where=where, where_any=where_any)
    assert [record["time"] for _, record in consumer.records] == kept
    assert (counts.read, counts.kept, counts.filtered) == (5, len(kept), 5 - len(kept))


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("kind", "expected FIELD=VALUE, FIELD!=VALUE, FIELD~REGEX or FIELD in A,B"),
        ("=gpu", "no field before '='"),
        ("  != x", "no field before '!='"),
        ("kind==gpu", "unknown operator '=='"),
        ("time>5", "unknown operator '>'"),
        ("time<=5", "unknown operator '<='"),
        ("kind!gpu", "unknown operator '!'"),
        ("node~(", "bad regular expression (missing ): (); RE2"),
        ("kind in", "expected FIELD=VALUE"),
    ],
)
@pytest.mark.parametrize("parameter", ["where", "where_any"])
def test_a_malformed_filter_names_its_parameter(condition: str, message: str, parameter: str) -> None:
    with pytest.raises(InputError) as excinfo:
        if parameter == "where":
            reader.scan_text("time\n1\n", Collect(), name="x.csv", where=[condition])
        else:
            reader.scan_text("time\n1\n", Collect(), name="x.csv", where_any=[condition])
    assert excinfo.value.where == parameter
    assert message in excinfo.value.message and repr(condition) in excinfo.value.message


def test_only_the_first_messages_are_kept() -> None:
    text = "time,kind\n" + "".join(f"{i},bad\n" for i in range(12))
    counts = reader.scan_text(text, Collect(), name="x.csv", skip_bad=True)
    assert counts.skipped_bad == 12 and len(counts.bad) == reader.BAD_KEPT
    assert counts.bad[-1] == f"x.csv:{reader.BAD_KEPT + 1}: a bad kind"


def test_a_fatal_record_names_its_line_even_when_skipping() -> None:
    class Fatal(Collect):
        def record(self, record: dict[str, Any], line: int) -> bool:
            raise reader.FatalRecord("stop: pass {time_unit}")

    with pytest.raises(InputError) as excinfo:
        reader.scan_text("time\n\n1\n", Fatal(), name="x.csv", skip_bad=True)
    assert (excinfo.value.where, excinfo.value.template) == ("x.csv:3", "stop: pass {time_unit}")


def test_a_required_column_missing_from_the_header() -> None:
    with pytest.raises(InputError) as excinfo:
        reader.scan_text("\ntime,kind\n1,a\n", Collect(), name="x.csv", required=("event",), skip_bad=True)
    assert (excinfo.value.where, excinfo.value.message) == ("x.csv:2", "no column 'event' in the header")


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("", "x", "empty log: no events"),
        ("\n \n", "x", "empty log: no events"),
        ("\n<!DOCTYPE html>\n", "x:2", "cannot tell the format from '<!DOCTYPE html>'"),
        ("\x1b[31mred\n", "x:1", "cannot tell the format"),
    ],
)
def test_an_empty_or_undetectable_log(text: str, where: str, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        reader.scan_text(text, Collect(), name="x")
    assert excinfo.value.where == where
    assert excinfo.value.message.startswith(message)
    if message.startswith("cannot tell"):
        assert excinfo.value.message.endswith(f"name it with format ({', '.join(reader.FORMATS)})")


def test_an_unknown_format_names_the_parameter() -> None:
    with pytest.raises(InputError) as excinfo:
        reader.scan_text("a\n", Collect(), name="x", format="xml")
    assert (excinfo.value.where, excinfo.value.message) == (
        "format",
        "unknown format 'xml': expected auto or " + ", ".join(FORMATS),
    )


def test_records_come_as_lines_arrive() -> None:
    # A source that fails after its third line: the records before it have already been handed over.
    def lines() -> Iterator[str]:
        yield from ['{"time": 1}\n', '{"time": 2}\n', '{"time": 3}\n']
        raise RuntimeError("the rest never arrives")

    consumer = Collect()
    with pytest.raises(RuntimeError):
        reader.scan_text(lines(), consumer, name="x")
    assert [line for line, _ in consumer.records] == [1, 2, 3]


# ---------------------------------------------------------------- compression


def _zstd(data: bytes) -> bytes:
    zstandard = pytest.importorskip("zstandard")
    compressed: bytes = zstandard.ZstdCompressor().compress(data)
    return compressed


COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": gzip.compress,
    ".xz": lzma.compress,
    ".bz2": bz2.compress,
    ".zst": _zstd,
}


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_compressed_logs_are_read_by_suffix_and_by_their_first_bytes(tmp_path: Path, suffix: str, fmt: str) -> None:
    text, lines = TEXTS[fmt]
    data = COMPRESSORS[suffix](text.encode())
    for name in (f"log.{fmt}{suffix}", "log.bin"):  # the second has no telling suffix: the magic bytes tell
        path = tmp_path / name
        path.write_bytes(data)
        consumer = Collect()
        counts = reader.scan(path, consumer)
        assert (counts.source, counts.format, counts.read, counts.kept) == (str(path), fmt, 3, 2)
        assert [line for line, _ in consumer.records] == lines


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_a_bad_line_in_a_compressed_log_names_its_line(tmp_path: Path, suffix: str, fmt: str) -> None:
    text, line, message = BAD[fmt]
    path = tmp_path / f"bad.{fmt}{suffix}"
    path.write_bytes(COMPRESSORS[suffix](text.encode()))
    with pytest.raises(InputError) as excinfo:
        reader.scan(path, Collect())
    assert excinfo.value.where == f"{path}:{line}"
    assert excinfo.value.message.startswith(message)


def test_compressed_standard_input() -> None:
    stdin = io.TextIOWrapper(io.BytesIO(gzip.compress(TEXTS["jsonl"][0].encode())))
    counts = reader.scan("-", Collect(), stdin=stdin)
    assert (counts.source, counts.format, counts.kept) == ("stdin", "jsonl", 2)


@pytest.mark.parametrize(
    ("suffix", "data"),
    [
        (".gz", gzip.compress(b"time\n1\n2\n", mtime=0)[:-12]),  # cut short
        (".gz", b"time\n1\n"),  # the suffix says gzip, the bytes do not
        (".xz", lzma.compress(b"time\n1\n")[:-8]),
        (".bz2", bz2.compress(b"time\n1\n")[:-4]),
    ],
    ids=["gzip-cut-short", "not-gzip", "xz-cut-short", "bz2-cut-short"],
)
def test_corrupt_compressed_data_is_one_clean_error(tmp_path: Path, suffix: str, data: bytes) -> None:
    path = tmp_path / f"log.csv{suffix}"
    path.write_bytes(data)
    with pytest.raises(InputError) as excinfo:
        reader.scan(path, Collect())
    assert excinfo.value.where is not None and excinfo.value.where.startswith(f"{path}:")
    assert excinfo.value.message.startswith("cannot decompress the")


def test_decompressed_text_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "log.csv.gz"
    path.write_bytes(gzip.compress(b"time,who\n1,Jos\xe9\n"))
    with pytest.raises(InputError) as excinfo:
        reader.scan(path, Collect())
    assert (excinfo.value.where, excinfo.value.message) == (f"{path}:2", "not UTF-8 text (byte 14)")


def test_zstd_without_the_package_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Any]
) -> None:
    path = tmp_path / "log.jsonl.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 8)
    real_import = builtins.__import__

    def no_zstandard(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "zstandard":
            raise ImportError("No module named 'zstandard'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "zstandard", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_zstandard)
    with pytest.raises(InputError) as excinfo:
        reader.scan(path, Collect())
    assert excinfo.value.where == str(path)
    assert excinfo.value.message == (
        "compressed with zstd, which needs the zstandard package: pip install 'ckptcalc[logs]'"
    )
    result = run("fit", str(path), "--time-unit", "s", "--json")
    assert_usage_error(result, "pip install 'ckptcalc[logs]'")
    assert_usage_error(run("analyze", str(path), "--time-unit", "s", "--json"), str(path))


def test_compressed_logs_through_fit_and_analyze(tmp_path: Path, run: Callable[..., Any]) -> None:
    from ckptcalc import api

    hand = Path(__file__).parent / "data" / "hand-run.jsonl"
    packed = tmp_path / "hand-run.jsonl.xz"
    packed.write_bytes(lzma.compress(hand.read_bytes()))
    assert api.analyze(packed, time_unit="min").document == {
        **api.analyze(hand, time_unit="min").document,
        "log": str(packed),
    }
    incidents = tmp_path / "incidents.csv.bz2"
    incidents.write_bytes(bz2.compress(b"time,kind\n0,gpu\n1,nic\n3,gpu\n"))
    # Three events 0, 1 and 3 h: two interruptions after the window's start in 3 h.
    assert api.fit([incidents], time_unit="h").mtbf_s == 1.5 * 3600


@pytest.mark.parametrize(
    ("where", "where_any", "kept"),
    [
        (["node~^n"], [], [1, 2, 4, 5]),
        (["node~^n"], ["kind=nic", "kind=7"], [2, 5]),  # both: an intersection, not a union
        (["kind=gpu"], ["node=n2"], []),
        ([], ["kind=gpu", "node=m1"], [1, 3]),
    ],
)
def test_filters_on_a_table_count_read_and_filtered_rows(
    where: list[str], where_any: list[str], kept: list[int]
) -> None:
    """A CSV's rows are filtered a column at a time (a block of rows): the same rows pass as from JSON
    Lines, every row is read once, and those dropped are counted as filtered."""
    rows = "".join(f"{r['time']},{r.get('kind', '')},{r['node']}\n" for r in WHERE_RECORDS)
    consumer = Collect()
    counts = reader.scan_text("time,kind,node\n" + rows, consumer, name="x.csv", where=where, where_any=where_any)
    assert [int(record["time"]) for _, record in consumer.records] == kept
    assert [line for line, _ in consumer.records] == [time + 1 for time in kept]
    assert (counts.read, counts.kept, counts.filtered) == (5, len(kept), 5 - len(kept))
