"""Orbax checkpoint lines in absl's format read as a run (logs/absl_format.py, docs/formats/absl.md).

tests/data/logs/absl/train.log holds one run of three processes (each begins with "CheckpointManager
created"); the first two stop without a word, so both failures are inferred. Times in the comments are
seconds after 05-01 12:00:00 of the year given (the log's naive timestamps, read as UTC).

The fixture's run, worked by hand: docs/model.md §11.5.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc import api
from ckptcalc.logs import absl_format, analyze, fit, reader
from ckptcalc.logs.adapter import Bad, Context, Row

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
LOG = str(Path(__file__).parent / "data" / "logs" / "absl" / "train.log")


def _t0(year: int) -> float:
    return datetime(year, 5, 1, 12, tzinfo=UTC).timestamp()


# process 1: start 0; steps 10, 20 at 100, 200; save 20 from 200.5, its stall ends at 210.5 when the
#            finalize thread starts, durable at 310.5; steps 30, 40 at 300, 400; then silence: failure
#            inferred at 400.
# process 2: created at 600, restores /ckpt/20; step 30 at 710 (restart 710 − 400 = 310, resumed from the
#            save of 20 begun at 200.5); save 40 from 810.5 to 830.5; step 50 at 910; a preemption save of 50
#            from 930 to 940, then silence: failure inferred at 940.
# process 3: created at 1200, restores /ckpt/50; step 60 at 1260 (restart 320, from 930); save 70 from
#            1360.5 to 1375.5; step 80 at 1440, the end.
RUN = {
    "checkpoints": [(200.5, 210.5, 310.5), (810.5, 830.5, 830.5), (930.0, 940.0, 940.0), (1360.5, 1375.5, 1375.5)],
    "episodes": [(400.0, "inferred", 710.0, 200.5), (940.0, "inferred", 1260.0, 930.0)],
    "wall": 1440.0,
}


def _relative(timeline: analyze.Timeline) -> dict[str, Any]:
    t0 = timeline.start_s
    c, e = timeline.checkpoints, timeline.episodes
    return {
        "checkpoints": [
            (float(a - t0), float(b - t0), float(d - t0))
            for a, b, d in zip(c.start_s, c.end_s, c.durable_s, strict=True)
        ],
        "episodes": [
            (float(f - t0), timeline.causes[k], None if math.isnan(end) else float(end - t0), float(r - t0))
            for f, k, end, r in zip(e.failure_s, e.cause, e.end_s, e.resumed_from_s, strict=True)
        ],
        "wall": timeline.end_s - t0,
    }


def test_a_run_of_three_processes() -> None:
    timeline = analyze.read(LOG, year=2024)
    assert timeline.start_s == _t0(2024)
    assert _relative(timeline) == RUN
    assert timeline.year_from == "year"
    assert timeline.notes["inferred_failures"] == 2
    assert timeline.last_step == 80.0
    result = analyze.analyze_timeline(timeline)
    realised = result.realised
    wall = realised.wall_s
    # stalls 10 + 20 + 10 + 15 = 55; restarts 310 + 320 = 630; rework (400 − 200.5 − 10) + (940 − 930 − 10)
    # = 189.5; useful 1440 − 55 − 630 − 189.5 = 565.5.
    got = (realised.useful * wall, realised.write * wall, realised.rework * wall, realised.restart * wall)
    assert got == pytest.approx((565.5, 55.0, 189.5, 630.0), abs=1e-9)
    (level,) = result.levels
    assert level.stall_s == pytest.approx(55.0 / 4, rel=1e-12)
    assert level.persist_s == pytest.approx(100.0, rel=1e-12)  # the mean of completed persists: one, of 100 s
    assert result.restart_s == pytest.approx(315.0, rel=1e-12)


def test_the_year_comes_from_the_option_else_the_file(tmp_path: Path) -> None:
    assert analyze.read(LOG, year=2021).start_s == _t0(2021)
    copy = tmp_path / "train.log"
    shutil.copy(LOG, copy)
    moment = datetime(2022, 12, 31, 23, tzinfo=UTC).timestamp()
    os.utime(copy, (moment, moment))
    timeline = analyze.read(str(copy))
    assert (timeline.start_s, timeline.year_from) == (_t0(2022), "mtime")
    assert _relative(timeline) == RUN
    assert api.analyze(str(copy)).year_from == "mtime"
    assert api.analyze(str(copy), year=2023).year_from == "year"
    assert fit.read_log(str(copy), year=2020).year_from == "year"
    with_text = analyze.parse(copy.read_text().splitlines(), name="x.log")  # no file: this year
    assert with_text.year_from == "today"
    assert with_text.start_s == _t0(datetime.now(UTC).year)


def test_a_log_that_runs_into_the_next_year() -> None:
    lines = ["I1231 23:59:50.000000 1 train.py:1] step 1\n", "I0101 00:00:10.000000 1 train.py:1] step 2\n"]
    context = Context("x.log", year=2024)
    times = [float(row.value["time"]) for row in absl_format.rows(lines, context) if isinstance(row, Row)]
    assert times == [datetime(2024, 12, 31, 23, 59, 50, tzinfo=UTC).timestamp(),
                     datetime(2025, 1, 1, 0, 0, 10, tzinfo=UTC).timestamp()]  # fmt: skip


@pytest.mark.parametrize(
    ("message", "event", "step"),
    [
        ("[process=0] Saving checkpoint at step 19", "checkpoint_start", 19),
        ("[process=3] Saving checkpoint at step 19 due to preemption.", "checkpoint_start", 19),
        ("[process=0][thread=MainThread][step=19] Finished synchronous save.", "checkpoint_end", 19),
        ("[process=0][thread=main][step=19] Starting CheckpointManager Save Finalize thread=t", "checkpoint_end", 19),
        ("[process=0][thread=t][step=19] CheckpointManager Save Finalize is done on all hosts.", "persist_end", 19),
        ("Finished saving checkpoint at step 19", "checkpoint_end", 19),
        ("Finished saving checkpoint", "checkpoint_end", None),
        ("Finished restoring checkpoint at step 19.", "load_end", 19),
        ("Restoring checkpoint from gs://bucket/run/19/items.", "load_start", 19),
        ("Restoring checkpoint from /ckpt/latest.", "load_start", None),
        ("completed step: 7, seconds: 1.2, TFLOP/s/device: 100.0", "progress", 7),
        ("Step 12: loss=1.0", "progress", 12),
        ("train step=3 loss=1.0", "progress", 3),
        ("[process=0][thread=MainThread] CheckpointManager created,  primary_host=0", "attempt_start", None),
    ],
)  # fmt: skip
def test_the_messages_read(message: str, event: str, step: int | None) -> None:
    (row,) = absl_format.rows([f"I0608 20:54:47.918725 140021 file.py:1] {message}\n"], Context("x", year=2024))
    assert isinstance(row, Row)
    assert (row.value["event"], row.value.get("step")) == (event, step)
    assert row.value.get("async", False) == ("Finalize thread" in message)  # the stall ends, the persist goes on
    assert row.value["time"] == datetime(2024, 6, 8, 20, 54, 47, 918725, tzinfo=UTC).timestamp()


def test_a_bad_time_and_a_save_without_its_step_tag() -> None:
    lines = ["I0608 20:61:47.918725 1 file.py:1] step 5\n", "I0608 20:54:47 1 file.py:1] Finished synchronous save.\n"]
    bad, row = absl_format.rows(lines, Context("x", year=2024))
    assert bad == Bad(1, "cannot read the time '20:61:47': expected HH:MM:SS")
    assert isinstance(row, Row) and row.value["event"] == "checkpoint_end" and "step" not in row.value


def test_other_lines_are_not_events() -> None:
    lines = ["I0608 20:54:47.918725 140021 file.py:1] steps to go: 5\n", "plain text\n",
             "I0608 20:54:47.918725 140021 atomicity.py:845] [process=0][thread=MainThread] Finished saving"
             " checkpoint (finalized tmp dir) to `/ckpt/19`.\n",
             "I0608 20:54:47 140021 file.py:1] Loading dataset\n"]  # fmt: skip
    assert list(absl_format.rows(lines, Context("x", year=2024))) == []


def test_a_bad_date_names_its_line(tmp_path: Path, run: Run) -> None:
    lines = Path(LOG).read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.log"
    bad.write_text("".join([*lines[:5], "I0230 12:00:00.000000 1 train.py:88] completed step: 25\n", *lines[5:]]))
    result = run("analyze", str(bad), "--year", "2024")
    assert_usage_error(result, f"{bad}:6: cannot read the date '0230' of year 2024: expected MMDD")
    result = run("analyze", str(bad), "--year", "2024", "--skip-bad", "--json")
    assert result.exit_code == 0, result.stderr
    assert _relative(analyze.read(str(bad), year=2024, skip_bad=True)) == RUN


def test_the_command_line_takes_the_year(run_json: RunJson, run: Run) -> None:
    doc = run_json("analyze", LOG, "--year", "2024")
    assert doc == api.analyze(LOG, year=2024).to_dict()
    assert doc["realised"]["effective"] == pytest.approx(565.5 / 1440.0, rel=1e-12)
    assert doc["measured"]["failures"] == 2
    assert_usage_error(run("analyze", LOG, "--year", "0"), "year")
    assert_usage_error(run("analyze", LOG, "--year", "soon"), "--year")


def test_detection() -> None:
    head = Path(LOG).read_text().splitlines(keepends=True)
    assert reader.detect_format(head) == "absl"
    assert reader.detect_format(["time,event\n"]) == "csv"
    assert reader.detect_format(['{"time": 1}\n']) == "jsonl"
    assert reader.detect_format(["I have a question\n"]) == "csv"


@pytest.mark.parametrize(
    ("clock", "bad"), [("20:54:59", False), ("20:54:60", True), ("20:59:00", False), ("20:60:00", True)]
)
def test_a_second_or_a_minute_of_60_is_a_bad_time(clock: str, bad: bool) -> None:
    """Python's clock has no leap second: 60 is refused at its line, 59 is read (minutes alike)."""
    (item,) = absl_format.rows([f"I0608 {clock}.5 1 file.py:1] step 5\n"], Context("x", year=2024))
    if bad:
        assert item == Bad(1, f"cannot read the time {clock!r}: expected HH:MM:SS")
    else:
        hour, minute, second = map(int, clock.split(":"))
        expected = datetime(2024, 6, 8, hour, minute, second, tzinfo=UTC).timestamp() + 0.5
        assert isinstance(item, Row) and float(item.value["time"]) == expected
