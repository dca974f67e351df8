"""Slurm ``sacct --parsable2`` logs (logs/sacct_format.py): one job's requeued attempts for analyze, a
cluster's dump for fit, bad rows, detection, and a dump read as it streams.

Times in the fixtures are naive (sacct's local clock), read as UTC unless a zone is given. The values
below are worked by hand from the fixtures' rows; MTBF = window / interruptions (docs/fit.md §3–§4).

The fixture's run, worked by hand: docs/model.md §11.5.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given
from hypothesis import strategies as st

from ckptcalc.errors import InputError
from ckptcalc.logs import analyze, reader, sacct_format
from ckptcalc.logs import fit as fitting
from ckptcalc.logs.adapter import Bad, Broken, Context, Row

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
DATA = Path(__file__).parent / "data" / "logs" / "sacct"
JOB = str(DATA / "requeued-job.txt")
CLUSTER = str(DATA / "cluster.txt")

T0 = 1750838400.0  # 2025-06-25T08:00:00Z, the requeued job's first Start
D0 = 1748736000.0  # 2025-06-01T00:00:00Z, the cluster dump's first day
H = 3600.0


def _events(path: str, tz: Any = None) -> list[tuple[int, str, float, str | None]]:
    context = Context(path, tz=tz)
    with open(path, encoding="utf-8") as lines:
        items = list(sacct_format.rows(lines, context))
    rows = [item for item in items if isinstance(item, Row)]
    assert len(rows) == len(items)
    return [(row.line, row.value["event"], row.value["time"], row.value.get("cause")) for row in rows]


# ---------------------------------------------------------------- one job, requeued


def test_a_requeued_job_gives_its_attempts_in_time_order() -> None:
    # Attempt 1 (line 2): 08:00:00, its python step at 08:00:40, NODE_FAIL at 11:20:00.
    # Attempt 2 (line 6): 11:32:00, step 0 at 11:32:50 FAILED at 12:40:00, step 1 relaunched at 12:41:10
    # (a failure inside the attempt), PREEMPTED at 14:02:30.
    # Attempt 3 (line 11): 14:20:00, its step at 14:20:45, COMPLETED at 17:00:00.
    assert [(line, kind, t - T0, cause) for line, kind, t, cause in _events(JOB)] == [
        (2, "attempt_start", 0.0, None),
        (5, "progress", 40.0, None),
        (2, "failure", 3 * H + 20 * 60, "NODE_FAIL"),
        (6, "attempt_start", 3 * H + 32 * 60, None),
        (9, "progress", 3 * H + 32 * 60 + 50, None),
        (9, "failure", 4 * H + 40 * 60, "FAILED"),
        (10, "progress", 4 * H + 41 * 60 + 10, None),
        (6, "failure", 6 * H + 2 * 60 + 30, "PREEMPTED"),
        (11, "attempt_start", 6 * H + 20 * 60, None),
        (14, "progress", 6 * H + 20 * 60 + 45, None),
        (11, "run_end", 9 * H, None),
    ]


def test_analyze_reads_the_requeues_as_episodes() -> None:
    timeline = analyze.read(JOB)
    # Each failure, and training resuming at the next step's start.
    e = timeline.episodes
    columns = zip(e.failure_s, e.cause, e.failures, e.end_s, strict=True)
    episodes = [(float(f - T0), timeline.causes[k], int(n), float(end - f)) for f, k, n, end in columns]
    assert episodes == [
        (12000.0, "NODE_FAIL", 1, 770.0),  # 11:20:00 → 11:32:50
        (16800.0, "FAILED", 1, 70.0),  # 12:40:00 → 12:41:10
        (21750.0, "PREEMPTED", 1, 1095.0),  # 14:02:30 → 14:20:45
    ]
    assert (timeline.start_s - T0, timeline.end_s - T0) == (0.0, 32400.0)
    result = analyze.analyze_timeline(timeline)
    assert result.restart_s == pytest.approx((770 + 70 + 1095) / 3, rel=1e-12)  # 645 s
    assert result.failures == 3
    split = result.realised
    assert split.wall_s == 32400.0
    assert split.restart == pytest.approx(1935 / 32400, rel=1e-12)
    # No checkpoint in a scheduler's log: only the work after the last restart (14:20:45 → 17:00:00) is kept.
    assert split.useful == pytest.approx(9555 / 32400, rel=1e-12)
    assert split.write == 0.0


def test_fit_counts_the_failures_of_one_job() -> None:
    log = fitting.read_log(JOB)
    assert [t - T0 for t in log.times] == [12000.0, 16800.0, 21750.0]
    assert log.causes == ("NODE_FAIL", "FAILED", "PREEMPTED")
    fitted = fitting.fit_log(log)
    # Window 11:20:00 → 14:02:30 = 9750 s; the two failures after the first: 9750 / 2.
    assert (fitted.mtbf.interruptions, fitted.window_s, fitted.mtbf.mtbf_s) == (2, 9750.0, 4875.0)


def test_a_time_zone_moves_every_naive_time() -> None:
    from datetime import timedelta, timezone

    shifted = _events(JOB, tz=timezone(timedelta(hours=2)))
    assert [t for _, _, t, _ in shifted] == [t - 2 * H for _, _, t, _ in _events(JOB)]
    counts = reader.scan(JOB, fitting._prepared(None, None, None, None, None, None)[0])
    assert counts.notes["naive_timestamps"] == 13 * 2  # Start and End of every row
    assert counts.format == "sacct"


# ---------------------------------------------------------------- a cluster's dump


CLUSTER_FAILURES = [  # in the dump's order (by job), as the jobs' records end
    (5, 9 * H + 30 * 60, "NODE_FAIL"),  # 5002, 06-01 09:30
    (8, 26 * H, "TIMEOUT"),  # 5003_1, an array task, 06-02 02:00 (not 5003_2, which completed)
    (12, 12 * H + 5 * 60, "FAILED"),  # 5005, 06-01 12:05
    (15, 23 * H + 15 * 60, "OUT_OF_MEMORY"),  # 5007, 06-01 23:15
    (18, 30 * H, "PREEMPTED"),  # 5009+0 and 5009+1 start together: one attempt, one failure, 06-02 06:00
    (21, 14 * H + 10 * 60, "FAILED"),  # 5010.0, relaunched as 5010.1 at 14:12
]


def test_a_cluster_dump_gives_every_failure_end() -> None:
    # 5001 and 5003_2 completed, 5004 was cancelled by a person, 5006 never started, 5008 still runs.
    assert [(line, t - D0, cause) for line, _, t, cause in _events(CLUSTER)] == CLUSTER_FAILURES
    assert {kind for _, kind, _, _ in _events(CLUSTER)} == {"failure"}


def test_fit_reads_a_cluster_dump_as_an_incident_log() -> None:
    log = fitting.read_log(CLUSTER)
    assert [t - D0 for t in log.times] == sorted(t for _, t, _ in CLUSTER_FAILURES)
    fitted = fitting.fit_log(log)
    # Window 06-01 09:30 → 06-02 06:00 = 20.5 h = 73800 s, five failures after the first: 14760 s.
    assert (fitted.mtbf.interruptions, fitted.window_s, fitted.mtbf.mtbf_s) == (5, 73800.0, 14760.0)
    assert [(c.cause, c.count) for c in fitted.causes] == [
        ("FAILED", 2), ("OUT_OF_MEMORY", 1), ("PREEMPTED", 1), ("TIMEOUT", 1)
    ]  # fmt: skip


@pytest.mark.parametrize(("path", "interruptions", "window_s", "mtbf_s"), [(JOB, 2, 9750.0, 4875.0),
                         (CLUSTER, 5, 73800.0, 14760.0)])  # fmt: skip
def test_the_fit_command_reads_sacct(
    run_json: RunJson, path: str, interruptions: int, window_s: float, mtbf_s: float
) -> None:
    doc = run_json("fit", path)
    assert (doc["interruptions"], doc["window_s"], doc["mtbf_s"]) == (interruptions, window_s, mtbf_s)
    assert doc == run_json("fit", path, "--format", "sacct")


def test_fit_filters_the_failures_by_cause() -> None:
    log = fitting.read_log(CLUSTER, where=["cause=FAILED"])
    assert [t - D0 for t in log.times] == [12 * H + 5 * 60, 14 * H + 10 * 60]


# ---------------------------------------------------------------- what a row may say


def _text(*rows: str, header: str = "JobID|Start|End|State") -> list[str]:
    return [header + "\n", *(row + "\n" for row in rows)]


def _read(lines: list[str]) -> list[tuple[str, float, str | None]]:
    out = [item for item in sacct_format.rows(lines, Context("x")) if isinstance(item, Row)]
    return [(row.value["event"], row.value["time"] - T0, row.value.get("cause")) for row in out]


def test_fields_in_any_order_and_case_and_a_trailing_bar() -> None:
    # sacct --parsable ends every line with "|"; sacct --format=state,end,start,jobid reorders the fields.
    lines = _text("NODE_FAIL|2025-06-25T09:00:00|2025-06-25T08:00:00|9|", header="state|END|Start|jobid|")
    assert _read(lines) == [("attempt_start", 0.0, None), ("progress", 0.0, None), ("failure", H, "NODE_FAIL")]


def test_elapsed_stands_in_for_an_unknown_end() -> None:
    header = "JobID|Start|End|Elapsed|State"
    ended = _text("9|2025-06-25T08:00:00|Unknown|1-02:03:04|TIMEOUT", header=header)
    assert _read(ended)[-1] == ("failure", 26 * H + 3 * 60 + 4, "TIMEOUT")
    running = _text("9|2025-06-25T08:00:00|Unknown|01:00:00|RUNNING", header=header)
    assert _read(running) == [("attempt_start", 0.0, None), ("progress", 0.0, None)]  # no end yet


def test_cancelled_by_a_user_ends_the_run() -> None:
    assert _read(_text("9|2025-06-25T08:00:00|2025-06-25T08:30:00|CANCELLED by 1001"))[-1] == ("run_end", 1800.0, None)


def test_a_step_failure_that_ends_its_attempt_is_one_failure() -> None:
    # The step failed, and with it the job: nothing was relaunched, so the attempt's own end is the failure.
    lines = _text(
        "9|2025-06-25T08:00:00|2025-06-25T09:00:00|FAILED",
        "9.batch|2025-06-25T08:00:00|2025-06-25T09:00:00|FAILED",
        "9.0|2025-06-25T08:00:10|2025-06-25T09:00:00|FAILED",
    )
    assert _read(lines) == [("attempt_start", 0.0, None), ("progress", 10.0, None), ("failure", H, "FAILED")]


def test_records_that_never_ran_and_steps_without_their_job_give_nothing() -> None:
    lines = _text("9|Unknown|Unknown|PENDING", "9|None|2025-06-25T08:00:00|CANCELLED by 7",
                  "9.0|2025-06-25T08:00:00|2025-06-25T09:00:00|FAILED")  # fmt: skip
    assert _read(lines) == []


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("9|2025-06-25T08:00:00|2025-06-25T09:00:00", "3 fields, but the sacct header has 4"),
        ("|2025-06-25T08:00:00|2025-06-25T09:00:00|FAILED", "cannot read JobID ''"),
        ("9.|2025-06-25T08:00:00|2025-06-25T09:00:00|FAILED", "cannot read JobID '9.'"),
        ("9|2025-06-25T08:00:00|2025-06-25T09:00:00| ", "no State"),
        ("9|25/06/2025 08:00|2025-06-25T09:00:00|FAILED", "cannot read time '25/06/2025 08:00'"),
        ("9|2025-06-25T09:00:00|2025-06-25T08:00:00|FAILED", "End is before Start"),
    ],
)
def test_a_bad_row_is_named_with_its_line(row: str, message: str) -> None:
    lines = _text("9|2025-06-25T07:00:00|2025-06-25T07:30:00|COMPLETED", row)
    items = list(sacct_format.rows(lines, Context("x")))
    bad = [item for item in items if isinstance(item, Bad)]
    assert [item.line for item in bad] == [3]
    assert bad[0].message.startswith(message)


def test_a_bad_elapsed_is_a_bad_row() -> None:
    lines = _text("9|2025-06-25T08:00:00|Unknown|soon|FAILED", header="JobID|Start|End|Elapsed|State")
    assert list(sacct_format.rows(lines, Context("x"))) == [
        Bad(2, "cannot read Elapsed 'soon': expected [days-]hours:minutes:seconds")
    ]


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("JobID|Start|State", "not a sacct header: no 'end' field"),
        ("4242|2025-06-25T08:00:00|2025-06-25T09:00:00|FAILED", "not a sacct header: no 'jobid' field"),
        ("JobID|Start|End|State|start", "field 'start' twice in the sacct header"),
    ],
)
def test_a_bad_header_stops_the_reading(header: str, message: str) -> None:
    with pytest.raises(Broken) as caught:
        list(sacct_format.rows(["\n", header + "\n"], Context("x")))
    assert (caught.value.line, caught.value.message.startswith(message)) == (2, True)


def test_the_command_names_a_bad_row_and_skip_bad_counts_it(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    rows = Path(CLUSTER).read_text().splitlines(keepends=True)
    rows.insert(5, "5099|2025-06-01T03:00:00|broken\n")  # becomes line 6
    path.write_text("".join(rows))
    result = run("fit", str(path), "--json")
    assert_usage_error(result, f"{path}:6: 3 fields, but the sacct header has 11")
    doc = run_json("fit", str(path), "--skip-bad")
    assert (doc["skipped_bad"], doc["interruptions"], doc["mtbf_s"]) == (1, 5, 14760.0)


def test_the_command_names_a_bad_header(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "noheader.txt"
    path.write_text("".join(Path(CLUSTER).read_text().splitlines(keepends=True)[1:]))
    assert_usage_error(run("fit", str(path), "--format", "sacct"), f"{path}:1: not a sacct header")


def test_analyze_of_a_requeued_job_with_the_command(run_json: RunJson) -> None:
    doc = run_json("analyze", JOB)
    assert (doc["measured"]["failures"], doc["measured"]["restarts"], doc["measured"]["restart_s"]) == (3, 3, 645.0)
    assert doc["wall_s"] == 32400.0


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize(
    ("first", "fmt"),
    [
        ("JobID|JobName|Start|End|State|ExitCode", "sacct"),
        ("jobid|start|end|state|", "sacct"),
        ("JobID,Start,End,State", "csv"),  # a CSV of the same fields is still CSV
        ("JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode", "csv"),  # sacct's default: no times
        ('{"JobID": 1, "Start": 2, "End": 3, "State": "x|y"}', "jsonl"),
        ('[{"JobID|Start|End|State": 1}]', "json"),
    ],
)
def test_detection_from_the_first_line(first: str, fmt: str) -> None:
    assert reader.detect_format([first + "\n"]) == fmt


def test_a_sacct_log_is_detected_after_blank_lines() -> None:
    text = "\n\n" + Path(JOB).read_text()
    counts = reader.scan_text(text, fitting._prepared(None, None, None, None, None, None)[0], name="x")
    assert counts.format == "sacct"


# ---------------------------------------------------------------- memory


def _dump(jobs: int, pulled: list[int]) -> Iterator[str]:
    """A cluster's dump of ``jobs`` jobs of three records each, every one a NODE_FAIL; counts lines pulled."""
    pulled.append(1)
    yield "JobID|Start|End|State\n"
    for job in range(jobs):
        for suffix in ("", ".batch", ".0"):
            pulled.append(1)
            yield f"{job}{suffix}|2025-06-01T00:00:00|2025-06-01T0{job % 10}:00:01|NODE_FAIL\n"


def test_a_cluster_dump_streams_one_job_at_a_time() -> None:
    pulled: list[int] = []
    seen = 0
    for row in sacct_format.rows(_dump(20_000, pulled), Context("x")):
        assert isinstance(row, Row)
        seen += 1
        # The failure of job k comes out once the first record of job k + 1 is read: never more held.
        assert len(pulled) == 1 + 3 * seen + 1 or (seen == 20_000 and len(pulled) == 1 + 3 * seen)
    assert seen == 20_000


def test_one_job_is_held_only_up_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sacct_format, "MAX_JOB_RECORDS", 4)
    lines = _text(*[f"9.{n}|2025-06-25T08:00:0{n}|2025-06-25T09:00:00|COMPLETED" for n in range(5)])
    with pytest.raises(Broken) as caught:
        list(sacct_format.rows(lines, Context("x")))
    assert caught.value.line == 6
    assert "more than 4 records" in caught.value.message
    with pytest.raises(InputError) as error:
        reader.scan_text(lines, fitting._prepared(None, None, None, None, None, None)[0], name="x.txt")
    assert error.value.where == "x.txt:6"


# ---------------------------------------------------------------- any cluster's dump

_STATES = ["COMPLETED", "CANCELLED by 7", "RUNNING", *sorted(sacct_format.FAILURES)]


def _clock(seconds: float) -> str:
    """A time as sacct prints it: a local clock reading (here UTC)."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")


@st.composite
def _dumps(draw: st.DrawFn) -> tuple[str, list[float]]:
    """A dump of two or more jobs, each with its attempts and their steps, and its failure ends."""
    rows, failures = ["JobID|JobName|Start|End|State"], []
    for job in range(draw(st.integers(2, 4))):
        for start in sorted(draw(st.sets(st.integers(0, 10**6), min_size=1, max_size=3))):
            state = draw(st.sampled_from(_STATES))
            end = T0 + start + draw(st.integers(0, 10**5))
            shown = "Unknown" if state == "RUNNING" else _clock(end)
            rows += [f"{job}|train|{_clock(T0 + start)}|{shown}|{state}",
                     f"{job}.0|python|{_clock(T0 + start)}|{shown}|CANCELLED"]  # fmt: skip
            if state in sacct_format.FAILURES:
                failures.append(end)
    return "\n".join(rows) + "\n", sorted(failures)


@given(_dumps())
def test_fit_counts_every_failure_end_of_any_dump(dump: tuple[str, list[float]]) -> None:
    text, failures = dump
    event("failures" if failures else "none")
    if not failures:
        with pytest.raises(InputError, match=r"no events kept|nothing recognised"):
            fitting.parse_log(text, name="dump.txt")
        return
    log = fitting.parse_log(text, name="dump.txt")
    assert list(log.times) == failures  # each failure end once, whatever the order of the jobs


@pytest.mark.parametrize(("next_start", "failed"), [("12:41:10", True), ("12:41:09", False), ("12:41:11", True)])
def test_a_step_failing_as_the_next_step_starts_is_a_failure(next_start: str, failed: bool) -> None:
    """A step that fails while the job goes on is a failure when a later step starts at or after its end
    (the job restarted the work); one overlapping the next step's start is not."""
    lines = [
        "JobID|JobName|Start|End|Elapsed|State|ExitCode|NodeList\n",
        "4242|pretrain|2025-06-25T11:32:00|2025-06-25T14:02:30|02:30:30|COMPLETED|0:0|gpu[005-008]\n",
        "4242.0|python|2025-06-25T11:32:50|2025-06-25T12:41:10|01:08:20|FAILED|1:0|gpu[005-008]\n",
        f"4242.1|python|2025-06-25T{next_start}|2025-06-25T14:02:30|01:21:20|COMPLETED|0:0|gpu[005-008]\n",
    ]
    rows = [item.value for item in sacct_format.rows(lines, Context("x.txt")) if isinstance(item, Row)]
    failures = [row for row in rows if row["event"] == "failure"]
    step_end = datetime(2025, 6, 25, 12, 41, 10, tzinfo=UTC).timestamp()
    assert failures == ([{"time": step_end, "event": "failure", "cause": "FAILED"}] if failed else [])
    assert rows[-1]["event"] == "run_end"
