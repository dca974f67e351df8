"""torchtitan's logger read as a run (logs/torchtitan_format.py), with the torchrun agent's lines in it.

The fixture tests/data/logs/torchtitan/two-crashes.log is a run under torchrun, written by hand: 200
steps, a save every 50 (4 s each), a SIGKILL at 13:01:30 and a CUDA error (exit code 1) at 13:03:10,
each followed by a restart from the last save. Times below are seconds after 2025-06-25 13:00:00,
read off the fixture's lines.

The fixture's run, worked by hand: docs/model.md §11.5.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc.logs import analyze, reader, torchtitan_format
from ckptcalc.logs.adapter import Bad, Context, Row
from ckptcalc.logs.torchelastic_format import clean

FIXTURE = Path(__file__).parent / "data" / "logs" / "torchtitan" / "two-crashes.log"
ZERO = datetime(2025, 6, 25, 13, 0, tzinfo=UTC).timestamp()


def _titan(clock: str, message: str, rank: int | None = 0) -> str:
    prefix = "" if rank is None else f"[rank{rank}]:"
    return f"{prefix}[titan] 2025-06-25 {clock} - root - INFO - {message}\n"


def _raw(lines: list[str]) -> tuple[list[tuple[int, str, float, dict[str, Any]]], Context]:
    context = Context("x.log")
    out = []
    for item in torchtitan_format.rows(lines, context):
        assert isinstance(item, Row), item
        value = dict(item.value)
        t = float(value.pop("time")) - ZERO
        out.append((item.line, value.pop("event"), round(t, 3), value))
    return out, context


# ---------------------------------------------------------------- the raw events


def test_the_fixture_gives_the_events_read_off_its_lines() -> None:
    events, context = _raw(FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True))
    steps = [(line, t, fields["step"]) for line, kind, t, fields in events if kind == "progress"]
    others = [(line, kind, t, fields) for line, kind, t, fields in events if kind != "progress"]
    assert others == [
        (12, "attempt_start", 0.0, {"restart_count": 0}),  # the agent's "Starting worker group"
        (22, "checkpoint_start", 53.5, {"step": 50}),  # the latest step line said 50
        (23, "checkpoint_end", 57.5, {"step": 50}),
        (28, "failure", 90.0, {"cause": "SIGKILL"}),  # exitcode -9
        (38, "attempt_start", 100.5, {"restart_count": 1}),
        (41, "load_start", 105.0, {"step": 50}),
        (42, "load_end", 110.0, {"step": 50}),
        (49, "checkpoint_start", 161.0, {"step": 100}),
        (50, "checkpoint_end", 165.0, {"step": 100}),
        (56, "failure", 190.0, {"cause": "exitcode 1"}),
        (66, "attempt_start", 200.5, {"restart_count": 2}),
        (69, "load_start", 205.0, {"step": 100}),
        (70, "load_end", 212.0, {"step": 100}),
        (77, "checkpoint_start", 263.0, {"step": 150}),
        (78, "checkpoint_end", 267.0, {"step": 150}),
        (84, "checkpoint_start", 317.5, {"step": 200}),  # "Saving a full checkpoint at last step, step 200."
        (86, "checkpoint_end", 321.5, {"step": 200}),  # the wording without a space before "in"
        (88, "run_end", 324.0, {}),  # "Training completed"
        (90, "run_end", 326.0, {}),  # the agent: "worker group successfully finished"
        (91, "run_end", 326.0, {}),  # the agent: "Local worker group finished (WorkerState.SUCCEEDED)"
    ]
    # "Training starts at step 51." is step 50 reached; line 18 is coloured.
    assert steps[:7] == [(16, 3.0, 0), (17, 13.0, 10), (18, 23.0, 20), (19, 33.0, 30), (20, 43.0, 40),
                         (21, 53.0, 50), (24, 67.5, 60)]  # fmt: skip
    assert [(line, t, step) for line, t, step in steps if line in (43, 71)] == [(43, 110.5, 50), (71, 212.5, 100)]
    assert len(steps) == 28 and steps[-1] == (83, 317.0, 200)
    # rank 1's banner (line 14) and step 80 (27), the trainer's banners after the agent's (13, 39, 67),
    # and the agent's "Worker group FAILED" after the exit it already reported (29, 57).
    assert context.notes["duplicates"] == 7
    # 48 events, the 5 duplicates above that carry a time, and line 85 (the last save's step).
    assert context.notes["naive_timestamps"] == 54


def test_the_assembled_run_has_two_crashes_each_resumed_from_the_save_it_loaded() -> None:
    timeline = analyze.read(str(FIXTURE))
    assert (timeline.start_s - ZERO, timeline.end_s - ZERO) == (0.0, 326.0)
    assert [(c.start_s - ZERO, c.end_s - ZERO, c.level) for c in timeline.checkpoint_rows()] == [
        (53.5, 57.5, "storage"), (161.0, 165.0, "storage"), (263.0, 267.0, "storage"), (317.5, 321.5, "storage"),
    ]  # fmt: skip
    assert all(c.durable_s == c.end_s for c in timeline.checkpoint_rows())  # synchronous saves
    episodes = [(e.failure_s - ZERO, e.end_s and e.end_s - ZERO, e.resumed_from_s - ZERO, e.cause, e.failures)
                for e in timeline.episode_rows()]  # fmt: skip
    # The restart ends when training starts again ("Training starts at step 51."), not at the load.
    assert episodes == [(90.0, 110.5, 53.5, "SIGKILL", 1), (190.0, 212.5, 161.0, "exitcode 1", 1)]
    assert timeline.last_step == 200.0 and timeline.progress == 28 and timeline.time_kind == "timestamp"


def test_analyze_reports_the_realised_split_the_stall_the_restart_and_the_advice(run: Any) -> None:
    result = run("analyze", str(FIXTURE), "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    wall = 326.0
    # By hand: stalls 4 x 4 s = 16 s; restarts (110.5 - 90) + (212.5 - 190) = 43 s; rework: the work
    # from each resumed save's start to its crash, less the stall in it: (90 - 53.5 - 4) + (190 - 161 - 4)
    # = 57.5 s; useful: 326 - 16 - 43 - 57.5 = 209.5 s.
    realised = document["realised"]
    assert realised["useful"] == pytest.approx(209.5 / wall, rel=1e-12)
    assert realised["write"] == pytest.approx(16 / wall, rel=1e-12)
    assert realised["restart"] == pytest.approx(43 / wall, rel=1e-12)
    assert realised["rework"] == pytest.approx(57.5 / wall, rel=1e-12)
    measured = document["measured"]
    assert measured["write_s"] == pytest.approx(4.0)
    assert measured["restart_s"] == pytest.approx((20.5 + 22.5) / 2)
    assert measured["restarts"] == 2 and measured["failures"] == 2
    assert measured["interval_s"] == pytest.approx(317.5 - 267.0)  # the one gap with no crash in it
    assert measured["mtbf_s"] == pytest.approx(wall / 2)
    model = document["model"]
    # The advice: near Young's first-order optimum √(2δM) = √(2 · 4 s · 163 s) = 36.1 s (docs/model.md §2),
    # and a little shorter in the exact model.
    assert model["optimal_interval_s"] == pytest.approx(math.sqrt(2 * 4.0 * 163.0), rel=0.15)
    assert model["optimal_interval_s"] < math.sqrt(2 * 4.0 * 163.0)
    assert isinstance(model["gain_pp"], float) and model["robust_interval_s"] > 0
    assert model["effective_at_interval"] > 0 and isinstance(model["agrees"], bool)
    assert document["wall_s"] == wall


# ---------------------------------------------------------------- saves: synchronous or not


def test_a_staged_save_is_asynchronous_and_its_write_is_its_persist() -> None:
    lines = [
        _titan("13:00:00,000", "Starting job: 8B"),
        _titan("13:00:10,000", "step: 50  loss: 7.1"),
        _titan("13:00:10,500", "Staging the checkpoint."),
        _titan("13:00:11,500", "Finished staging the checkpoint in 1.00 seconds."),
        _titan("13:00:20,000", "step: 60  loss: 7.0"),
        _titan("13:00:30,500", "Finished writing the checkpoint for step 50 in 20.00 seconds (async total)."),
        _titan("13:00:40,000", "step: 70  loss: 6.9"),
    ]
    events, _ = _raw(lines)
    assert [(kind, t) for _, kind, t, _ in events if kind != "progress"] == [
        ("attempt_start", 0.0), ("checkpoint_start", 10.5), ("checkpoint_end", 11.5), ("persist_end", 30.5),
    ]  # fmt: skip
    assert events[3][3] == {"step": 50, "async": True}
    timeline = analyze.parse(lines, name="x.log")
    [save] = timeline.checkpoint_rows()
    assert (save.start_s - ZERO, save.end_s - ZERO, save.durable_s - ZERO) == (10.5, 11.5, 30.5)


def test_a_save_of_unknown_mode_is_asynchronous_when_a_background_persist_follows() -> None:
    said = "Saving the checkpoint (or staging if async is enabled)."
    done = "Finished saving the checkpoint (or staging if async is enabled) in 1.00 seconds."
    lines = [
        _titan("13:00:00,000", "Starting job: 8B"),
        _titan("13:00:10,000", said), _titan("13:00:11,000", done),
        _titan("13:00:20,000", "step: 60  loss: 7.0"),
        _titan("13:00:25,000", "Finish saving the checkpoint in the background process in 14.00 seconds."),
        _titan("13:00:30,000", said), _titan("13:00:31,000", done),  # known to be asynchronous now
        _titan("13:00:40,000", "step: 70  loss: 6.9"),
        _titan("13:00:45,000", "Finish saving the checkpoint in the background process in 14.00 seconds."),
    ]  # fmt: skip
    events, _ = _raw(lines)
    ends = [(t, fields) for _, kind, t, fields in events if kind == "checkpoint_end"]
    assert ends == [(11.0, {"async": True}), (31.0, {"step": 60, "async": True})]
    assert [(kind, t) for _, kind, t, _ in events if kind == "persist_end"] == [
        ("persist_end", 25.0),
        ("persist_end", 45.0),
    ]
    assert [t for _, _, t, _ in events] == sorted(t for _, _, t, _ in events)  # what waited comes out in order
    timeline = analyze.parse(lines, name="x.log")
    assert [c.durable_s - ZERO for c in timeline.checkpoint_rows()] == [25.0, 45.0]


def test_a_save_of_unknown_mode_with_no_persist_is_synchronous() -> None:
    lines = [
        _titan("13:00:00,000", "Starting job: 8B"),
        _titan("13:00:10,000", "step: 50  loss: 7.1"),
        _titan("13:00:10,500", "Saving the checkpoint (or staging if async is enabled)."),
        _titan("13:00:14,500", "Finished saving the checkpoint (or staging if async is enabled) in 4.00 seconds."),
        _titan("13:00:20,000", "step: 60  loss: 7.0"),
    ]
    events, _ = _raw(lines)
    assert [(kind, t, fields) for _, kind, t, fields in events] == [
        ("attempt_start", 0.0, {}), ("progress", 10.0, {"step": 50}), ("checkpoint_start", 10.5, {"step": 50}),
        ("checkpoint_end", 14.5, {"step": 50}), ("progress", 20.0, {"step": 60}),
    ]  # fmt: skip


def test_the_oldest_wording_names_the_step_in_its_start_line() -> None:
    lines = [
        _titan("13:00:00,000", "Starting job: 8B", rank=None),
        _titan("13:00:10,000", "Saving a full checkpoint at step 500", rank=None),
        _titan("13:00:12,000", "Finished saving the checkpoint in 2.00 seconds", rank=None),
        _titan("13:00:20,000", "Loading resume checkpoint from ./outputs/checkpoint/step-500.", rank=None),
        _titan("13:00:22,000", "Finished loading resume checkpoint in 2.00 seconds.", rank=None),
    ]
    events, _ = _raw(lines)
    assert [(kind, t, fields) for _, kind, t, fields in events] == [
        ("attempt_start", 0.0, {}), ("checkpoint_start", 10.0, {"step": 500}), ("checkpoint_end", 12.0, {"step": 500}),
        ("load_start", 20.0, {"step": 500}), ("load_end", 22.0, {"step": 500}),
    ]  # fmt: skip


# ---------------------------------------------------------------- attempts, ranks, times


def test_a_second_banner_without_the_agent_is_an_inferred_crash() -> None:
    lines = [
        _titan("13:00:00,000", "Starting job: 8B"),
        _titan("13:00:10,000", "step: 10  loss: 7.9"),
        _titan("13:00:30,000", "Starting job: 8B"),
        _titan("13:00:40,000", "Training starts at step 1."),
        _titan("13:00:50,000", "step: 10  loss: 7.9"),
    ]
    timeline = analyze.parse(lines, name="x.log")
    [episode] = timeline.episode_rows()
    assert (episode.failure_s - ZERO, episode.end_s and episode.end_s - ZERO, episode.cause) == (10.0, 40.0, "inferred")


def test_lines_of_a_higher_rank_are_duplicates_and_a_lower_rank_takes_over() -> None:
    lines = [
        _titan("13:00:00,000", "Starting job: 8B", rank=2),
        _titan("13:00:00,000", "Starting job: 8B", rank=3),
        _titan("13:00:10,000", "step: 10  loss: 7.9", rank=0),
        _titan("13:00:10,000", "step: 10  loss: 7.9", rank=2),
    ]
    events, context = _raw(lines)
    assert [(line, kind) for line, kind, _, _ in events] == [(1, "attempt_start"), (3, "progress")]
    assert context.notes["duplicates"] == 2


def test_an_agent_line_that_reaches_the_log_late_is_read_at_the_time_before_it() -> None:
    lines = [
        "[2025-06-25 13:00:00,000] torch.distributed.elastic.agent.server.api: [INFO] "
        "[default] Starting worker group\n",
        _titan("13:00:20,000", "step: 10  loss: 7.9"),
        "[2025-06-25 13:00:19,500] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
        "local_rank: 0 (pid: 7) of binary: /usr/bin/python3\n",
    ]
    events, _ = _raw(lines)
    assert [(kind, t) for _, kind, t, _ in events] == [("attempt_start", 0.0), ("progress", 20.0), ("failure", 20.0)]


def test_the_zone_of_naive_timestamps_comes_from_the_context() -> None:
    from ckptcalc.logs.reader import parse_tz

    context = Context("x.log", tz=parse_tz("+02:00"))
    [row] = list(torchtitan_format.rows([_titan("13:00:00,000", "Starting job: 8B")], context))
    assert isinstance(row, Row) and float(row.value["time"]) == ZERO - 7200


# ---------------------------------------------------------------- bad lines and detection


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (_titan("13:00:61,000", "step: 20  loss: 7.9"), "cannot read time '2025-06-25 13:00:61,000'"),
        ("[titan] 2025-02-30 13:00:00,000 - root - INFO - Training completed\n", "cannot read time"),
        (_titan("13:00:20,000", "step: twenty  loss: 7.9"), "step 'twenty' is not a whole number"),
        (_titan("13:00:20,000", "Loading the checkpoint at step last."), "step 'last' is not a whole number"),
    ],
)
def test_a_known_line_that_cannot_be_read_is_a_bad_row(line: str, message: str) -> None:
    good = _titan("13:00:00,000", "Starting job: 8B")
    items = list(torchtitan_format.rows([good, "some other output\n", line], Context("x.log")))
    assert isinstance(items[0], Row) and len(items) == 2
    assert isinstance(items[1], Bad) and items[1].line == 3 and message in items[1].message


def test_an_unknown_line_is_passed_over_even_with_a_bad_time() -> None:
    lines = [_titan("13:00:00,000", "Starting job: 8B"), _titan("13:00:61,000", "Building llama3 8B with ...")]
    assert [item.line for item in torchtitan_format.rows(lines, Context("x.log"))] == [1]


def test_a_bad_line_stops_analyze_with_its_place_or_is_counted(run: Any, tmp_path: Path) -> None:
    text = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    text[44] = text[44].replace("13:02:10,500", "13:02:10,5x0")  # line 45, a step line
    path = tmp_path / "bad.log"
    path.write_text("".join(text), encoding="utf-8")
    result = run("analyze", str(path), "--json")
    assert_usage_error(result, f"{path}:45: cannot read time '2025-06-25 13:02:10,5x0'")
    result = run("analyze", str(path), "--json", "--skip-bad")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["lines"]["skipped_bad"] == 1 and document["lines"]["progress"] == 27


def test_the_format_is_detected_from_the_first_lines_and_can_be_named(tmp_path: Path, run: Any) -> None:
    head = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)[:64]
    assert reader.detect_format(head) == "torchtitan"
    assert reader.detect_format([_titan("13:00:00,000", "Starting job: 8B", rank=None)]) == "torchtitan"
    assert reader.detect_format(["2025-04-01 00:25:47,084 - root - INFO - step: 640  loss:  6.2\n"]) == "torchtitan"
    # Python logging's format alone, saying nothing torchtitan says, is not torchtitan's.
    assert not torchtitan_format.detect(["2025-04-01 00:25:47,084 - root - INFO - Building the model\n"])
    counts = reader.scan(str(FIXTURE), _Keep(), format="torchtitan")
    assert counts.format == "torchtitan" and counts.notes["duplicates"] == 7


@pytest.mark.parametrize(
    "text",
    [
        "time,event\n2025-06-25T13:00:00Z,run_start\n",
        '{"time": "2025-06-25T13:00:00Z", "event": "run_start"}\n',
        '[{"time": "2025-06-25T13:00:00Z", "event": "run_start"}]\n',
        "[\n  [1, 2]\n]\n",
        "timestamp,message\n2025-06-25 13:00:00,step: 10\n",
    ],
)
def test_event_tables_are_not_taken_for_torchtitan(text: str) -> None:
    lines = text.splitlines(keepends=True)
    assert not torchtitan_format.detect(lines)
    assert reader.detect_format(lines) in ("csv", "json", "jsonl")


class _Keep:
    def fields(self, names: Any, line: int) -> None:
        pass

    def record(self, record: dict[str, Any], line: int) -> bool:
        return True


def test_after_a_banner_the_agent_may_say_a_new_crash() -> None:
    # The agent's restart lines are missing (the log was cut), but the trainer's banner says an attempt began.
    exit_line = (
        "[2025-06-25 {}] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: 1) "
        "local_rank: 0 (pid: 7) of binary: /usr/bin/python3\n"
    )
    lines = [
        _titan("13:00:00,000", "Starting job: 8B"),
        _titan("13:00:10,000", "step: 10  loss: 7.9"),
        exit_line.format("13:00:20,000"),
        _titan("13:00:30,000", "Starting job: 8B"),
        _titan("13:00:40,000", "step: 10  loss: 7.9"),
        exit_line.format("13:00:50,000"),
    ]
    events, context = _raw(lines)
    assert [(kind, t) for _, kind, t, _ in events if kind == "failure"] == [("failure", 20.0), ("failure", 50.0)]
    assert context.notes["duplicates"] == 0


def test_a_run_split_into_one_file_per_attempt_reads_as_the_whole(tmp_path: Path) -> None:
    text = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = 29  # after the first crash's "Worker group FAILED" (line 29): the second file holds the restart on
    first, second = tmp_path / "attempt-0.log", tmp_path / "attempt-1.log"
    first.write_text("".join(text[:cut]), encoding="utf-8")
    second.write_text("".join(text[cut:]), encoding="utf-8")
    whole = analyze.read(str(FIXTURE))
    consumer = analyze._Run("time", None, "cause")
    counts = reader.scan([str(second), str(first)], consumer)
    split = consumer.timeline(counts)
    assert split.episode_rows() == whole.episode_rows() and split.checkpoint_rows() == whole.checkpoint_rows()
    assert (split.start_s, split.end_s) == (whole.start_s, whole.end_s)
    assert counts.files == 2 and counts.notes["duplicates"] == 7


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=13, max_value=91), st.integers(min_value=1, max_value=7)), max_size=12))
def test_copies_from_higher_ranks_change_nothing_but_the_duplicates(copies: list[tuple[int, int]]) -> None:
    text = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    alone, _ = _raw(text)
    mixed = list(text)
    known = 0
    for at, rank in sorted(copies, reverse=True):  # insert from the end, so the line numbers before hold
        line = text[at - 1]
        if not line.startswith("[rank0]:"):
            continue
        copy = line.replace("[rank0]:", f"[rank{rank}]:", 1)
        mixed.insert(at, copy)
        found = torchtitan_format.LINE.fullmatch(clean(line))
        known += found is not None and torchtitan_format._said(found["message"]) is not None
    event(f"copies of event lines: {min(known, 3)}{'+' if known >= 3 else ''}")
    events, context = _raw(mixed)
    assert [(kind, t, fields) for _, kind, t, fields in events] == [(kind, t, fields) for _, kind, t, fields in alone]
    assert context.notes["duplicates"] == 7 + known


def test_a_log_opening_with_a_bracketed_agent_line_is_read_whole_when_named(tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    opening = "[2025-06-25 12:59:58,000] torch.distributed.run: [WARNING] \n"
    path.write_text(opening + FIXTURE.read_text(encoding="utf-8"), encoding="utf-8")
    timeline = analyze.read(str(path), format="torchtitan")
    assert len(timeline.checkpoint_rows()) == 4 and len(timeline.episode_rows()) == 2
    assert timeline.lines == analyze.read(str(FIXTURE)).lines


def test_once_a_save_proved_synchronous_the_next_ones_are_not_held() -> None:
    said = "Saving the checkpoint (or staging if async is enabled)."
    done = "Finished saving the checkpoint (or staging if async is enabled) in 1.00 seconds."
    lines = [_titan("13:00:00,000", "Starting job: 8B")]
    for minute in range(3):
        lines += [_titan(f"13:0{minute}:10,000", said), _titan(f"13:0{minute}:11,000", done),
                  _titan(f"13:0{minute}:20,000", "step: 60  loss: 7.0")]  # fmt: skip
    read: list[int] = []

    def feed() -> Any:
        for number, line in enumerate(lines, start=1):
            read.append(number)
            yield line

    given_at = {}  # each row's line, and how many lines had been read when it came out
    for row in torchtitan_format.rows(feed(), Context("x.log")):
        assert isinstance(row, Row)
        given_at[row.line] = len(read)
    # The first save (ending on line 3) waits for the second to end (line 6) to be known synchronous;
    # the third (lines 8, 9) comes out as it is read.
    assert given_at == {1: 1, 2: 2, 3: 6, 4: 6, 5: 6, 6: 6, 7: 7, 8: 8, 9: 9, 10: 10}


@pytest.mark.parametrize(
    "line",
    [
        "[titan] 2025-06-25 13:00:00,000 - root - INFO - Saving a "
        + "a " * 100_000
        + "checkpoint "
        + "step " * 100_000,
        "[2025-06-25 13:00:00,000] torch.distributed.elastic.agent.server.api: [INFO] " + "[" * 500_000,
        "I0625 13:00:00.000000 1 torch/distributed/" + "a:1]" * 100_000,
        "[titan] 2" + " 2" * 100_000 + " - a - A - " * 50_000,
    ],
    ids=["saving", "brackets", "glog", "fields"],
)
def test_a_long_hostile_line_costs_its_length_not_its_square(line: str) -> None:
    import time

    start = time.perf_counter()
    items = list(torchtitan_format.rows([line + "\n"], Context("x.log")))
    assert time.perf_counter() - start < 5.0  # linear: well under 0.1 s; quadratic: minutes
    assert all(isinstance(item, Bad) for item in items)
