"""The torchrun agent's lines read as a run's attempts and crashes (logs/torchelastic_format.py).

The fixture tests/data/logs/torchelastic/requeued.log is an agent's log written by hand: a worker
aborts (exit code -6) at 14:05:06 and the agent restarts the group; at 15:10:00 the job is preempted
(SIGTERM), a new torchrun starts, and the run finishes at 16:00:00. Times below are seconds after
2025-06-25 13:20:00, read off the fixture's lines.

The fixture's run, worked by hand: docs/model.md §11.5.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.logs import analyze, reader, torchelastic_format
from ckptcalc.logs.adapter import Bad, Context, Row

FIXTURE = Path(__file__).parent / "data" / "logs" / "torchelastic" / "requeued.log"
ZERO = datetime(2025, 6, 25, 13, 20, tzinfo=UTC).timestamp()
API = "torch.distributed.elastic.agent.server.api"


def _agent(clock: str, message: str, logger: str = API, level: str = "INFO", day: str = "2025-06-25") -> str:
    return f"[{day} {clock}] {logger}: [{level}] {message}\n"


def _raw(lines: list[str], context: Context | None = None) -> list[tuple[int, str, float, dict[str, Any]]]:
    out = []
    for item in torchelastic_format.rows(lines, context or Context("x.log")):
        assert isinstance(item, Row), item
        value = dict(item.value)
        out.append((item.line, value.pop("event"), round(float(value.pop("time")) - ZERO, 3), value))
    return out


def test_the_fixture_gives_the_events_read_off_its_lines() -> None:
    context = Context("x.log")
    events = _raw(FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True), context)
    assert events == [
        (19, "attempt_start", 5.5, {"restart_count": 0}),
        (26, "failure", 2706.0, {"cause": "SIGABRT"}),  # exitcode -6
        (42, "attempt_start", 2770.5, {"restart_count": 1}),  # restart_count from lines 30-31
        (42, "progress", 2770.5, {}),  # the workers run again
        (44, "failure", 6600.0, {"cause": "SIGTERM"}),  # "Received Signals.SIGTERM death signal"
        (65, "attempt_start", 6750.5, {"restart_count": 0}),  # a new torchrun: its count starts again
        (65, "progress", 6750.5, {}),
        (67, "run_end", 9600.0, {}),  # "worker group successfully finished"
        (68, "run_end", 9600.0, {}),  # "Local worker group finished (WorkerState.SUCCEEDED)"
    ]
    assert context.notes["duplicates"] == 1  # line 27: "Worker group FAILED" after the exit of line 26
    assert context.notes["naive_timestamps"] == 8  # the 7 distinct times of events, and line 27


def test_the_assembled_run_has_two_crashes_each_restarted() -> None:
    timeline = analyze.read(str(FIXTURE))
    assert (timeline.start_s - ZERO, timeline.end_s - ZERO) == (5.5, 9600.0)
    episodes = [(e.failure_s - ZERO, e.end_s and e.end_s - ZERO, e.cause, e.failures) for e in timeline.episode_rows()]
    assert episodes == [(2706.0, 2770.5, "SIGABRT", 1), (6600.0, 6750.5, "SIGTERM", 1)]
    assert timeline.checkpoint_rows() == ()  # the agent does not see saves: each crash loses everything since the start
    assert all(e.resumed_from_s == timeline.start_s for e in timeline.episode_rows())


def test_analyze_measures_the_restarts_the_agent_saw(run: Any) -> None:
    result = run("analyze", str(FIXTURE), "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["measured"]["restart_s"] == pytest.approx((64.5 + 150.5) / 2)
    assert document["measured"]["failures"] == 2
    assert document["realised"]["restart"] == pytest.approx(215.0 / (9600.0 - 5.5))


@pytest.mark.parametrize(
    ("message", "cause"),
    [
        ("failed (exitcode: 1) local_rank: 3 (pid: 77) of binary: /usr/bin/python3", "exitcode 1"),
        ("failed (exitcode: -9) local_rank: 0 (pid: 77) of binary: /usr/bin/python3", "SIGKILL"),
        ("[default] Worker group FAILED. 2/3 attempts left; will restart worker group", "worker_group_failed"),
        ("[trainer] Worker group UNHEALTHY. 1/3 attempts left; will restart worker group", "worker_group_unhealthy"),
        ("Received SIGHUP death signal, shutting down workers", "SIGHUP"),
        ("[default] Detected 2 new nodes from group_rank=0; will restart worker group", "membership_change"),
    ],
)
def test_each_way_the_agent_says_a_group_stopped_is_a_failure(message: str, cause: str) -> None:
    lines = [_agent("13:20:00,000", "[default] Starting worker group"), _agent("13:21:00,000", message)]
    assert _raw(lines)[1] == (2, "failure", 60.0, {"cause": cause})


def test_the_glog_form_takes_its_year_from_the_context_and_carries_it_over_new_year() -> None:
    path = "torch/distributed/elastic/agent/server/api.py"
    lines = [
        f"I1231 23:59:00.000000 4100 {path}:699] [default] Starting worker group\n",
        "E0101 00:01:00.250000 4100 torch/distributed/elastic/multiprocessing/api.py:874] failed (exitcode: 1) "
        "local_rank: 0 (pid: 4242) of binary: /usr/bin/python3\n",
    ]
    context = Context("x.log", year=2024)
    items = list(torchelastic_format.rows(lines, context))
    times = [float(item.value["time"]) for item in items if isinstance(item, Row)]
    new_year = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
    assert times == [new_year - 60, new_year + 60.25]
    assert context.said == {"year_from": "year"}
    mtime = datetime(2023, 3, 1, tzinfo=UTC).timestamp()
    context = Context("x.log", mtime=mtime)
    [first, _] = [item for item in torchelastic_format.rows(lines, context) if isinstance(item, Row)]
    assert float(first.value["time"]) == datetime(2023, 12, 31, 23, 59, tzinfo=UTC).timestamp()
    assert context.said == {"year_from": "mtime"}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (_agent("13:20:61,000", "[default] Starting worker group"), "cannot read time '2025-06-25 13:20:61,000'"),
        (_agent("13:20:00,000", "[default] Worker group FAILED.", day="2025-02-30"), "cannot read time"),
        ("I0230 13:20:00.000000 4100 torch/distributed/elastic/agent/server/api.py:699] [default] Starting worker "
         "group\n", "cannot read time 0230 '13:20:00.000000'"),
        ("  restart_count=one\n", "restart_count 'one' is not a whole number"),
    ],
)  # fmt: skip
def test_an_agent_line_that_cannot_be_read_is_a_bad_row(line: str, message: str) -> None:
    items = list(torchelastic_format.rows(["[default0]:some worker output\n", line], Context("x.log", year=2025)))
    assert len(items) == 1 and isinstance(items[0], Bad)
    assert items[0].line == 2 and message in items[0].message


def test_a_bad_line_stops_analyze_with_its_place_or_is_counted(run: Any, tmp_path: Path) -> None:
    text = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    text[41] = text[41].replace("14:06:10,500", "14:06:1O,500")  # line 42: the second start
    path = tmp_path / "bad.log"
    path.write_text("".join(text), encoding="utf-8")
    result = run("analyze", str(path), "--json")
    assert_usage_error(result, f"{path}:42: cannot read time '2025-06-25 14:06:1O,500'")
    result = run("analyze", str(path), "--json", "--skip-bad")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    # Without the second start, the SIGTERM is the same attempt stopping again (a duplicate): one crash,
    # restarted when the third group starts.
    assert document["lines"]["skipped_bad"] == 1 and document["measured"]["failures"] == 1
    assert document["measured"]["restart_s"] == pytest.approx(6750.5 - 2706.0)


def test_the_format_is_detected_from_the_first_line_and_can_be_named() -> None:
    head = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    assert reader.detect_format(head[:1]) == "torchelastic"
    glog = "W0625 09:53:43.528000 1384 torch/distributed/run.py:792] *****\n"
    assert reader.detect_format([glog]) == "torchelastic"
    counts = reader.scan(str(FIXTURE), _Keep(), format="torchelastic")
    assert counts.format == "torchelastic" and counts.notes["duplicates"] == 1


@pytest.mark.parametrize(
    "text",
    [
        "time,event\n2025-06-25T13:00:00Z,failure\n",
        '{"time": "2025-06-25T13:00:00Z", "event": "failure"}\n',
        '[{"time": "2025-06-25T13:00:00Z", "event": "failure"}]\n',
        "[2025-06-25 13:20:00,000] myapp.server: [INFO] Starting worker group\n",
    ],
)
def test_other_logs_are_not_taken_for_the_agents(text: str) -> None:
    lines = text.splitlines(keepends=True)
    assert not torchelastic_format.detect(lines)
    assert reader.detect_format(lines) != "torchelastic"


class _Keep:
    def fields(self, names: Any, line: int) -> None:
        pass

    def record(self, record: dict[str, Any], line: int) -> bool:
        return True


def test_the_year_rolls_once_at_new_year_and_not_within_a_month() -> None:
    """Lines of one month keep its year (a roll at ``<=`` would add a year a line); January after
    December adds one, once."""
    path = "torch/distributed/elastic/agent/server/api.py"
    lines = [
        f"I1231 23:58:00.000000 4100 {path}:699] [default] Starting worker group\n",
        f"I1231 23:59:00.000000 4100 {path}:699] [default] Starting worker group\n",
        f"I0101 00:01:00.000000 4100 {path}:699] [default] Starting worker group\n",
        f"I0102 00:01:00.000000 4100 {path}:699] [default] Starting worker group\n",
    ]
    items = list(torchelastic_format.rows(lines, Context("x.log", year=2024)))
    times = [float(item.value["time"]) for item in items if isinstance(item, Row)]
    new_year = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
    assert times == [new_year - 120, new_year - 60, new_year + 60, new_year + 86_400 + 60]
