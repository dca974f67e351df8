"""`ckptcalc events`: the canonical event log of a run, written as it is read (docs/commands/events.md)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc import api
from ckptcalc.logs import analyze, canonical
from ckptcalc.logs.adapter import NOTES

HAND = str(Path(__file__).parent / "data" / "hand-run.jsonl")

Run = Callable[..., Any]


def _hand_events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(HAND).read_text().splitlines() if line.strip()]


def test_stdout_gets_one_json_line_per_event_in_seconds(run: Run) -> None:
    result = run("events", HAND, "--time-unit", "min")
    assert result.exit_code == 0, result.stderr
    written = [json.loads(line) for line in result.stdout.splitlines()]
    given = [e for e in _hand_events() if e["event"] in canonical.EVENTS]
    assert [w["event"] for w in written] == [e["event"] for e in given]
    # minutes in, seconds out (hand-run.jsonl is in minutes)
    assert [w["time_s"] for w in written] == pytest.approx([60.0 * e["time"] for e in given], rel=1e-15)
    resumed = [
        (w["resumed_from"], 60.0 * e["resumed_from"])
        for w, e in zip(written, given, strict=True)
        if "resumed_from" in e
    ]
    assert resumed and all(a == pytest.approx(b, rel=1e-15) for a, b in resumed)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_the_file_form_follows_the_extension_and_reads_back_the_same(run: Run, tmp_path: Path, suffix: str) -> None:
    target = tmp_path / f"run{suffix}"
    result = run("events", HAND, "--time-unit", "min", "--output", str(target), "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["output"] == str(target) and document["form"] == suffix[1:]
    text = target.read_text()
    if suffix == ".csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert rows[0]["event"] == "run_start" and "time_s" in rows[0]
        assert len(rows) == document["events"]
    else:
        assert len(text.splitlines()) == document["events"]
    # The canonical log analyses as the original does.
    original = analyze.analyze_timeline(analyze.read(HAND, time_unit="min")).realised
    again = analyze.analyze_timeline(analyze.read(str(target), time_field="time_s", time_unit="s")).realised
    assert again.useful == pytest.approx(original.useful, rel=1e-12)
    assert again.rework == pytest.approx(original.rework, rel=1e-12)


def test_an_existing_file_is_kept_unless_forced(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "run.jsonl"
    target.write_text("keep me\n")
    result = run("events", HAND, "--time-unit", "min", "--output", str(target))
    assert_usage_error(result, "--force")
    assert target.read_text() == "keep me\n"
    assert run("events", HAND, "--time-unit", "min", "--output", str(target), "--force").exit_code == 0
    assert target.read_text().startswith('{"time_s": 0.0, "event": "run_start"}')
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]  # no temporary file left


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--output", "run.txt"], "--output"),
        (["--json"], "--json"),
        (["--format", "xml"], "--format"),
        (["--tz", "Mars/Olympus"], "--tz"),
        (["--year", "0"], "--year"),
    ],
)
def test_bad_options_are_usage_errors(run: Run, tmp_path: Path, args: list[str], culprit: str) -> None:
    result = run("events", HAND, "--time-unit", "min", *[str(tmp_path / a) if a == "run.txt" else a for a in args])
    assert_usage_error(result, culprit)
    assert list(tmp_path.iterdir()) == []


def test_a_bad_line_names_its_file_and_line_and_leaves_no_file(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"time": 0, "event": "run_start"}\n{"time": "soon", "event": "failure"}\n')
    target = tmp_path / "out.jsonl"
    result = run("events", str(log), "--time-unit", "s", "--output", str(target))
    assert_usage_error(result, f"{log}:2")
    assert not target.exists()
    skipped = run("events", str(log), "--time-unit", "s", "--output", str(target), "--skip-bad", "--json")
    assert skipped.exit_code == 0
    assert json.loads(skipped.stdout)["reading"]["skipped_bad"] == 1


def test_the_summary_counts_every_inference_key() -> None:
    out = io.BytesIO()
    written = api.events([HAND], stream=out, time_unit="min")
    reading = written["reading"]
    assert tuple(reading["inferred"]) == NOTES
    assert all(count == 0 for count in reading["inferred"].values())  # an event table infers nothing
    assert written.written == len(out.getvalue().splitlines()) == reading["used"]


def test_writing_events_loads_neither_numpy_nor_rich() -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom ckptcalc.cli import main\n"
        f"sys.argv = ['ckptcalc', 'events', {HAND!r}, '--time-unit', 'min']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(result.stderr.split())
    assert "typer" in loaded and result.stdout.count("\n") == 19
    assert not loaded & {"numpy", "scipy", "rich"}


def test_the_format_option_names_every_format_the_reader_knows(run: Run) -> None:
    from ckptcalc import cli
    from ckptcalc.logs import reader

    assert cli.LOG_FORMATS == reader.FORMATS
    for command in ("fit", "analyze", "events"):
        text = " ".join(run(command, "--help").stdout.split())
        assert all(name in text for name in reader.FORMATS), command


DATA = Path(__file__).parent / "data" / "logs"


def test_analyze_and_fit_report_what_reading_inferred(run: Run, run_json: Callable[..., dict[str, Any]]) -> None:
    # tests/data/logs/torchtitan/two-crashes.log: 7 lines of rank 1 (duplicates), 54 timestamps without a zone;
    # its CUDA error line (no time: the step line's before it) is the agent's "failed (exitcode: 1)", coalesced.
    titan = str(DATA / "torchtitan" / "two-crashes.log")
    reading = run_json("analyze", titan)["reading"]
    assert (reading["format"], reading["files"]) == ("torchtitan", 1)
    assert reading["inferred"] == {
        **dict.fromkeys(NOTES, 0),
        "duplicates": 7,
        "naive_timestamps": 54,
        "coalesced_failures": 1,
    }
    table = " ".join(run("analyze", titan).stdout.split())
    assert "duplicate lines (other ranks) 7" in table and "timestamps without a zone 54" in table
    # The untimestamped Megatron log: 23 times rebuilt from per-iteration times, one failure inferred.
    megatron = str(DATA / "megatron" / "untimestamped.log")
    fitted = run_json("fit", megatron)["reading"]
    assert (fitted["inferred"]["rebuilt_times"], fitted["inferred"]["inferred_failures"]) == (23, 1)
    assert "times rebuilt from per-iteration times 23" in " ".join(run("fit", megatron).stdout.split())
    # An event table infers nothing; counts from a paper read no log at all.
    assert set(run_json("analyze", HAND, "--time-unit", "min")["reading"]["inferred"].values()) == {0}
    assert run_json("fit", "--failures", "419", "--window", "54d")["reading"] is None


def test_analyze_of_a_run_in_two_files_is_the_analysis_of_the_whole(
    run_json: Callable[..., dict[str, Any]], tmp_path: Path
) -> None:
    whole = DATA / "torchtitan" / "two-crashes.log"
    text = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    first, second = tmp_path / "attempt-0.log", tmp_path / "attempt-1.log"
    first.write_text("".join(text[:29]), encoding="utf-8")  # up to the first crash's "Worker group FAILED"
    second.write_text("".join(text[29:]), encoding="utf-8")
    expected = run_json("analyze", str(whole))
    got = run_json("analyze", str(second), str(first))
    assert got["log"] == f"{second}, {first}" and got["reading"]["files"] == 2
    assert got["realised"] == expected["realised"] and got["measured"] == expected["measured"]
    assert got["model"] == expected["model"]
