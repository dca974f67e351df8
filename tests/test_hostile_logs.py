"""Hostile logs and filters: user expressions in linear time, giant numbers, blank lines, bombs and streams."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

import ckptcalc
from ckptcalc.errors import InputError
from ckptcalc.logs import reader

Run = Callable[..., Any]


class Keep:
    """A consumer that keeps every record's cause."""

    def __init__(self) -> None:
        self.causes: list[str] = []

    def fields(self, names: Sequence[str], line: int) -> None:
        pass

    def record(self, record: dict[str, Any], line: int) -> bool:
        self.causes.append(record["cause"])
        return True


def assert_stream_error(result: Any, message: str) -> list[dict[str, Any]]:
    """``events`` cut short after writing: exit 2, one ``error:`` line holding ``message`` on stderr, and
    stdout's events ending with one error record saying the same; the events before it are returned."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    line = result.stderr.strip()
    assert line.startswith("error: ") and "\n" not in line and message in line, line
    records = [json.loads(text) for text in result.stdout.splitlines()]
    assert records, "no event was written before the error"
    *events, last = records
    assert last["event"] == "error" and f"{last['where']}: {last['error']}" in line
    assert all(record["event"] != "error" for record in events) and events
    return events


# ---------------------------------------------------------------- regular expressions in linear time


@pytest.mark.parametrize("form", ["csv", "jsonl"])
def test_a_catastrophic_pattern_runs_in_linear_time(form: str) -> None:
    """(a+)+$ backtracks 2^30 times per cause under Python's re; RE2 answers at once on 10^5 lines."""
    causes = ["a" * 30 + ("!" if index % 4 else "") for index in range(100_000)]
    if form == "csv":
        text = "time,cause\n" + "".join(f"{index},{cause}\n" for index, cause in enumerate(causes))
    else:
        text = "".join(f'{{"time": {index}, "cause": "{cause}"}}\n' for index, cause in enumerate(causes))
    consumer = Keep()
    counts = reader.scan_text(text, consumer, name=f"x.{form}", where=["cause~(a+)+$"])
    assert (counts.read, counts.kept, counts.filtered) == (100_000, 25_000, 75_000)
    assert set(consumer.causes) == {"a" * 30}


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a{99999999999}", "a repetition above 1000: {99999999999}"),
        ("a{2,1000000}", "a repetition above 1000: {2,1000000}"),
        ("a{" + "9" * 5000 + "}", "a repetition above 1000"),
        ("a{1001}", "a repetition above 1000: {1001}"),
        ("(a{1000}){1000}", "invalid repetition size: {1000}"),
        ("(?<=a)b", "invalid perl operator: (?<="),
        (r"(a)\1", r"invalid escape sequence: \1"),
    ],
)
def test_a_pattern_re2_cannot_run_is_an_input_error(pattern: str, message: str) -> None:
    with pytest.raises(InputError) as excinfo:
        reader.parse_where([f"cause~{pattern}"])
    assert excinfo.value.where == "where"
    assert message in excinfo.value.message


@pytest.mark.parametrize("pattern", ["a{1000}", r"a\{99999999999}", "a{2,}", "a{0001000}"])
def test_a_repetition_within_bounds_or_escaped_compiles(pattern: str) -> None:
    (condition,) = reader.parse_where([f"cause~{pattern}"])
    assert condition.op == "~" and condition.value == pattern


def test_an_escaped_brace_matches_as_text() -> None:
    (condition,) = reader.parse_where([r"cause~^a\{99999999999}$"])
    assert condition.meets({"cause": "a{99999999999}"}) and not condition.meets({"cause": "a"})


def test_the_api_refuses_a_huge_repetition_naming_where(tmp_path: Path) -> None:
    log = tmp_path / "log.csv"
    log.write_text("time,cause\n1,a\n2,b\n3,a\n")
    with pytest.raises(ckptcalc.InputError) as excinfo:
        ckptcalc.fit([str(log)], time_unit="h", where=["cause~a{99999999999}"])
    assert excinfo.value.where == "where"


@pytest.mark.parametrize("option", ["--where", "--where-any"])
def test_the_cli_refuses_a_huge_repetition_naming_the_option(run: Run, tmp_path: Path, option: str) -> None:
    log = tmp_path / "log.csv"
    log.write_text("time,cause\n1,a\n2,b\n3,a\n")
    assert_usage_error(run("fit", str(log), "--time-unit", "h", option, "cause~a{99999999999}"), option)


def test_the_cli_filters_five_hostile_causes_at_once(run_json: Callable[..., dict[str, Any]], tmp_path: Path) -> None:
    """The red team's hang: five causes of thirty a's and a "!", and (a+)+$; two plain causes pass."""
    rows = [f"{index},{'a' * 30}!" for index in range(1, 6)] + ["6,aa", "7,aaa", "8,aaaa"]
    log = tmp_path / "log.csv"
    log.write_text("time,cause\n" + "\n".join(rows) + "\n")
    doc = run_json("fit", str(log), "--time-unit", "h", "--where", "cause~(a+)+$")
    assert (doc["reading"]["read"], doc["reading"]["filtered"], doc["events_kept"]) == (8, 5, 3)


# ---------------------------------------------------------------- a step of 400 digits

BIG = "9" * 400


def _with_big_step(fixture: str, pattern: str, replacement: str) -> tuple[str, int]:
    """The fixture's text with its first match of ``pattern`` given a 400-digit step, and that line's number."""
    import re

    lines = (Path(__file__).parent / "data" / "logs" / fixture).read_text().splitlines(keepends=True)
    index = next(index for index, line in enumerate(lines) if re.search(pattern, line))
    lines[index] = re.sub(pattern, replacement, lines[index], count=1)
    return "".join(lines), index + 1


BIG_STEPS = {
    "absl-progress": ("absl/train.log", r"completed step: \d+", f"completed step: {BIG}"),
    "absl-save": ("absl/train.log", r"Saving checkpoint at step \d+", f"Saving checkpoint at step {BIG}"),
    "torchtitan": ("torchtitan/two-crashes.log", r"step:(\s*)\d+", rf"step:\g<1>{BIG}"),
    "megatron": ("megatron/timestamped.log", r"iteration(\s+)\d+", rf"iteration\g<1>{BIG}"),
    "megatron-untimed": ("megatron/untimestamped.log", r"iteration(\s+)\d+", rf"iteration\g<1>{BIG}"),
}


@pytest.mark.parametrize("case", sorted(BIG_STEPS))
@pytest.mark.parametrize("command", ["fit", "analyze", "events"])
def test_a_step_of_400_digits_is_a_bad_row_at_its_line(run: Run, tmp_path: Path, case: str, command: str) -> None:
    fixture, pattern, replacement = BIG_STEPS[case]
    text, line = _with_big_step(fixture, pattern, replacement)
    log = tmp_path / "run.log"
    log.write_text(text)
    message = f"{log}:{line}: step 99999999999999999999... (400 digits) is above 2^53"
    if command == "events":
        assert_stream_error(run(command, str(log)), message)
    else:
        assert_usage_error(run(command, str(log)), message)
    skipped = run(command, str(log), "--skip-bad")
    assert skipped.exit_code == 0, skipped.stderr
    assert "Traceback" not in skipped.stderr


@pytest.mark.parametrize("form", ["jsonl", "csv"])
def test_an_event_table_step_of_400_digits_is_a_bad_row(run: Run, tmp_path: Path, form: str) -> None:
    rows = [("0", "run_start", ""), ("5", "progress", "1"), ("10", "progress", BIG), ("30", "run_end", "")]
    log = tmp_path / f"run.{form}"
    if form == "csv":
        log.write_text("time,event,step\n" + "".join(",".join(row) + "\n" for row in rows))
        line = 4
    else:
        log.write_text("".join(f'{{"time": {t}, "event": "{e}"{f", {chr(34)}step{chr(34)}: {s}" if s else ""}}}\n'
                               for t, e, s in rows))  # fmt: skip
        line = 3
    assert_usage_error(run("analyze", str(log), "--time-unit", "s"), f"{log}:{line}: step 99999999999999999999 is not")
    skipped = run("analyze", str(log), "--time-unit", "s", "--skip-bad", "--json")
    assert skipped.exit_code == 0, skipped.stderr
    assert json.loads(skipped.stdout)["reading"]["skipped_bad"] == 1


def test_step_number_takes_the_largest_step_a_float_holds() -> None:
    from ckptcalc.logs.adapter import MAX_STEP, step_number

    assert step_number(str(MAX_STEP)) == 2**53 and step_number("0" * 30 + "7") == 7
    with pytest.raises(ValueError, match="above 2"):
        step_number(str(MAX_STEP + 1))


# ---------------------------------------------------------------- events cut short


def test_events_cut_short_ends_with_an_error_record_that_analyze_refuses(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "run.csv"
    log.write_text("time,event\n0,run_start\n5,progress\n4,progress\n30,run_end\n")
    result = run("events", str(log), "--time-unit", "s")
    events = assert_stream_error(result, f"{log}:4: time goes backwards")
    assert [event["event"] for event in events] == ["run_start", "progress"]
    written = tmp_path / "cut.jsonl"
    written.write_text(result.stdout)
    cut = f"{written}:3: a log cut short: the reading that wrote it failed at {log}:4"
    assert_usage_error(run("analyze", str(written)), cut)


def test_events_failing_before_any_event_leaves_stdout_empty(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "run.csv"
    log.write_text("time,event\nx,run_start\n5,progress\n")
    assert_usage_error(run("events", str(log), "--time-unit", "s"), f"{log}:2")


def test_events_to_a_file_writes_nothing_on_a_bad_line(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "run.csv"
    log.write_text("time,event\n0,run_start\n5,progress\n4,progress\n")
    out = tmp_path / "out.jsonl"
    assert_usage_error(run("events", str(log), "--time-unit", "s", "-o", str(out)), f"{log}:4")
    assert not out.exists()


# ---------------------------------------------------------------- blank lines, bombs and cut data

_PEAK = """
import sys, tracemalloc
from ckptcalc.errors import InputError
from ckptcalc.logs import reader

class Count:
    kept = 0
    def fields(self, names, line): pass
    def record(self, record, line):
        Count.kept += 1
        return True

tracemalloc.start()
try:
    counts = reader.scan(sys.argv[1], Count())
    said = f"read {counts.read}"
except InputError as error:
    said = str(error)
print(tracemalloc.get_traced_memory()[1])
print(said)
"""


def _peak(path: Path) -> tuple[int, str]:
    """The peak of memory Python allocated reading ``path`` in a fresh process, and what the reading said."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, check=True)
    peak, said = done.stdout.splitlines()
    return int(peak), said


@pytest.mark.parametrize("compress", ["bz2", "gzip", "none"])
def test_ten_million_newlines_take_bounded_memory(tmp_path: Path, compress: str) -> None:
    """Each blank line was kept (8 bytes a line: 80 MB here); now a run of them is one line and a count."""
    import bz2
    import gzip

    blank = b"\n" * 10**7
    path = tmp_path / {"bz2": "blank.log.bz2", "gzip": "blank.log.gz", "none": "blank.log"}[compress]
    path.write_bytes(
        bz2.compress(blank) if compress == "bz2" else gzip.compress(blank) if compress == "gzip" else blank
    )
    peak, said = _peak(path)
    assert said.endswith("empty log: no events")
    assert peak < 8 * 2**20, peak


def test_a_table_after_a_million_blank_lines_is_read_at_its_lines(tmp_path: Path) -> None:
    path = tmp_path / "late.csv"
    path.write_bytes(b"\n" * 10**6 + b"time,kind\n1,gpu\n\n2,nic\n")
    peak, said = _peak(path)
    assert said == "read 2"
    assert peak < 4 * 2**20, peak  # the blank lines before the CSV header were kept, 8 MB
    with pytest.raises(InputError) as excinfo:
        reader.scan_text("\n" * 1000 + "time,kind\n\nx\n", Keep(), name="late.csv", skip_bad=False)
    assert excinfo.value.where == "late.csv:1003"


def test_a_log_after_blank_lines_keeps_its_line_numbers() -> None:
    text = "\n" * 5 + "  \n" + "\n" * 3 + '{"time": 1, "cause": "a"}\n' + "\n" * 2 + '{"time": "x", "cause": "b"}\n'
    consumer = Keep()
    counts = reader.scan_text(text, consumer, name="x.jsonl", skip_bad=True)
    assert consumer.causes == ["a", "b"] and counts.read == 2
    with pytest.raises(InputError) as excinfo:
        reader.scan_text("\n" * 70 + "<html>\n", Keep(), name="x.log")
    assert excinfo.value.where == "x.log:71"


def test_a_decompression_bomb_is_refused_past_its_bound(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """10^7 newlines are 722 bytes of bz2 for 10^9: past BOMB_FLOOR, over MAX_RATIO times the input is a bomb."""
    import bz2

    path = tmp_path / "bomb.log.bz2"
    path.write_bytes(bz2.compress(b"\n" * 10**7))
    monkeypatch.setattr(reader, "BOMB_FLOOR", 2**20)
    with pytest.raises(InputError) as excinfo:
        reader.scan(str(path), Keep())
    assert "decompresses to over 200 times its size: a decompression bomb" in excinfo.value.message
    line = int(str(excinfo.value.where).rpartition(":")[2])
    assert 2**20 < line <= 2**20 + reader.BLOCK + 1  # refused within a block of the floor, not at the end


def test_a_compressed_log_of_a_sane_ratio_is_read_whole(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import gzip
    import random

    generator = random.Random(5)
    rows = "".join(
        f"{index},{generator.choice(['gpu', 'nic', 'nvlink'])}{generator.random()}\n" for index in range(50_000)
    )
    path = tmp_path / "log.csv.gz"
    path.write_bytes(gzip.compress(("time,cause\n" + rows).encode()))
    monkeypatch.setattr(reader, "BOMB_FLOOR", 2**10)
    assert reader.scan(str(path), Keep()).read == 50_000


@pytest.mark.parametrize("suffix", [".gz", ".xz", ".bz2", ".zst"])
def test_a_truncated_compressed_log_is_a_decompression_error(run: Run, tmp_path: Path, suffix: str) -> None:
    import bz2
    import gzip
    import lzma

    import zstandard

    data = (Path(__file__).parent / "data" / "logs" / "absl" / "train.log").read_bytes()
    compress: dict[str, Callable[[bytes], bytes]] = {".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress,
                                                     ".zst": zstandard.ZstdCompressor().compress}  # fmt: skip
    packed = compress[suffix](data)
    for cut in (len(packed) // 2, 8):
        path = tmp_path / f"cut{cut}.log{suffix}"
        path.write_bytes(packed[:cut])
        result = run("events", str(path))
        assert result.exit_code == 2 and "cannot decompress the" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_zstd_frames_one_after_another_read_as_one_log(tmp_path: Path) -> None:
    import zstandard

    text = "".join(f'{{"time": {index}, "cause": "c{index}"}}\n' for index in range(3000))
    compressor = zstandard.ZstdCompressor()
    path = tmp_path / "log.jsonl.zst"
    path.write_bytes(compressor.compress(text[:5000].encode()) + compressor.compress(text[5000:].encode()))
    consumer = Keep()
    assert reader.scan(str(path), consumer).read == 3000
    assert consumer.causes == [f"c{index}" for index in range(3000)]


# ---------------------------------------------------------------- a saved fit reads back

# The formats' own logs; the pattern library's fixtures (tests/test_patterns.py) hold saves alone, one failure,
# or failures without times, by design; a preset kept beside the logs it reads (classes/classes.toml) is none.
LOGS = sorted(
    path
    for path in (Path(__file__).parent / "data" / "logs").rglob("*")
    if path.is_file() and path.parent.name != "patterns" and path.suffix != ".toml"
)


@pytest.mark.parametrize("log", LOGS, ids=[path.parent.name + "/" + path.name for path in LOGS])
def test_a_saved_fit_is_a_preset_optimize_reads(run: Run, tmp_path: Path, log: Path) -> None:
    saved = tmp_path / "fitted.toml"
    made = run("fit", str(log), "--save-preset", str(saved))
    assert made.exit_code == 0, made.stderr
    used = run("optimize", "--preset", str(saved), "--json")
    assert used.exit_code == 0, used.stderr


def test_a_shape_optimize_refuses_is_left_out_with_a_warning(run: Run, tmp_path: Path) -> None:
    """Two gaps of a requeued job fit k = 77.97, beyond the 0.1 to 20 a preset takes."""
    import tomllib

    saved = tmp_path / "fitted.toml"
    made = run("fit", str(Path(__file__).parent / "data/logs/sacct/requeued-job.txt"), "--save-preset", str(saved))
    assert made.exit_code == 0, made.stderr
    assert "warning: the fitted Weibull shape k = 77.97 is left out of the preset (must lie between 0.1 and 20" in (
        made.stderr
    )
    document = tomllib.loads(saved.read_text())
    assert "shape" not in document["failures"] and document["failures"]["mtbf"] == "81.25min"
    assert run("optimize", "--preset", str(saved)).exit_code == 0


def test_a_fit_of_a_burst_is_saved_and_read_back(run: Run, tmp_path: Path) -> None:
    # Three failures in 0.12 s: the job keeps nothing (effective 0), which optimize answers as it is, so the
    # preset is written and reads back.
    log = tmp_path / "burst.csv"
    log.write_text("time\n0\n0.001\n0.002\n")
    saved = tmp_path / "fitted.toml"
    result = run("fit", str(log), "--time-unit", "min", "--save-preset", str(saved))
    assert result.exit_code == 0, result.stderr
    again = run("optimize", "--preset", str(saved), "--json")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["effective"] < 1e-9


def test_the_api_says_what_a_saved_fit_leaves_out() -> None:
    from ckptcalc import api

    outcome = api.fit([str(Path(__file__).parent / "data/logs/sacct/requeued-job.txt")])
    preset, left_out = api.saved_fit(outcome)
    assert preset.shape is None and preset.mtbf_s == pytest.approx(81.25 * 60, rel=1e-3)
    assert len(left_out) == 1 and "k = 77.97" in left_out[0]
    assert api.fitted_preset(outcome) == preset
