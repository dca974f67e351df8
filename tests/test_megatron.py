"""Megatron-LM, Megatron-DeepSpeed and NeMo text logs read as a run (logs/megatron_format.py, docs/formats/megatron.md).

The fixtures tests/data/logs/megatron/*.log hold one run of three processes each: the first crashes
(a traceback: the failure is inferred), the second is ended by SIGTERM, the third finishes. Times in
the comments are seconds after 2024-05-01 12:00:00 (UTC: the log's naive timestamps, read with no
zone), worked by hand from the lines.

The fixture's run, worked by hand: docs/model.md §11.5.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc import api
from ckptcalc.logs import analyze, megatron_format, reader
from ckptcalc.logs.adapter import Bad, Context, Row

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
DATA = Path(__file__).parent / "data" / "logs" / "megatron"
STAMPED = str(DATA / "timestamped.log")
REBUILT = str(DATA / "untimestamped.log")
T0 = datetime(2024, 5, 1, 12, tzinfo=UTC).timestamp()


def _events(lines: list[str]) -> list[tuple[str, float, Any]]:
    """The raw events of ``lines`` (newlines added) as (event, seconds after T0, step)."""
    context = Context("x.log")
    out = []
    for item in megatron_format.rows([line + "\n" for line in lines], context):
        assert isinstance(item, Row), item
        out.append((item.value["event"], float(item.value["time"]) - T0, item.value.get("step")))
    return out


def _relative(timeline: analyze.Timeline) -> dict[str, Any]:
    t0 = timeline.start_s
    c, e = timeline.checkpoints, timeline.episodes
    return {
        "checkpoints": [(float(a - t0), float(b - t0)) for a, b in zip(c.start_s, c.end_s, strict=True)],
        "episodes": [
            (float(f - t0), timeline.causes[k], None if math.isnan(end) else float(end - t0), float(r - t0))
            for f, k, end, r in zip(e.failure_s, e.cause, e.end_s, e.resumed_from_s, strict=True)
        ],
        "wall": timeline.end_s - t0,
    }


# ------------------------------------------------------------------ the fixtures, by hand

# timestamped.log: every iteration and save line carries its time; banners and restores take the latest.
#   process 1: start 0; iterations 10, 20 at 160, 260; save 20 from 260.5 to 320.5 (its success line);
#              iteration 30 at 420, then a traceback: a failure inferred at 420.
#   process 2: restores iteration 20 at 600; iteration 30 at 760 (restart 760 − 420 = 340, resumed from
#              the save of 20, begun at 260.5); save 40 from 860 to 890; iteration 50 at 960; SIGTERM at 990.
#   process 3: restores 40; iteration 50 at 1360 (restart 370, from 860); save 60 from 1460 to 1500;
#              training done at 1510.
STAMPED_RUN = {
    "checkpoints": [(260.5, 320.5), (860.0, 890.0), (1460.0, 1500.0)],
    "episodes": [(420.0, "inferred", 760.0, 260.5), (990.0, "SIGTERM", 1360.0, 860.0)],
    "wall": 1510.0,
}

# untimestamped.log: only the setup milestones ("[after megatron is initialized] datetime: ...") carry a
# time; iterations are rebuilt as the previous time + (N − M) × the elapsed time per iteration + the saves
# between them (Megatron-LM stops its iteration timer while saving).
#   process 1: start 0; training step begins at 60; iteration 10 at 60 + 10 × 10 = 160; iteration 20 at
#              160 + 10 × 12 = 280; save 20 from 280 for its timer's 60 s, to 340; iteration 30 at
#              280 + 10 × 11 + 60 = 450; iteration 35 at 450 + 5 × 10 = 500; a traceback: failure at 500.
#   process 2: initialized at 900, restores 20; training step at 960; iteration 30 at 960 + 10 × 10 = 1060
#              (restart 1060 − 500 = 560, from 280); iteration 40 at 1160; save 40 for max(29, 30) s to 1190;
#              iteration 50 at 1160 + 100 + 30 = 1290; SIGTERM at 1320.
#   process 3: training step at 1860; iteration 50 from the restored 40: 1860 + 10 × 20 = 2060 (restart
#              2060 − 1320 = 740, from 1160); iteration 60 at 2160; save 60 for 40 s to 2200;
#              iteration 70 at 2160 + 100 + 40 = 2300; training done at 2400.
REBUILT_RUN = {
    "checkpoints": [(280.0, 340.0), (1160.0, 1190.0), (2160.0, 2200.0)],
    "episodes": [(500.0, "inferred", 1060.0, 280.0), (1320.0, "SIGTERM", 2060.0, 1160.0)],
    "wall": 2400.0,
}


@pytest.mark.parametrize(
    ("path", "run", "split", "rebuilt"),
    [
        # stall 60 + 30 + 40 = 130; restarts 340 + 370 = 710; rework (420 − 260.5 − 60) + (990 − 860 − 30)
        # = 99.5 + 100 = 199.5; useful 1510 − 130 − 710 − 199.5 = 470.5. Rebuilt: 3 banners, 4 restore lines.
        (STAMPED, STAMPED_RUN, (470.5, 130.0, 199.5, 710.0), 7),
        # stall 130; restarts 560 + 740 = 1300; rework (500 − 280 − 60) + (1320 − 1160 − 30) = 160 + 130;
        # useful 2400 − 130 − 1300 − 290 = 680. Rebuilt: per process a banner, the restores (2), each
        # iteration, save start and save end: 7 + 8 + 8.
        (REBUILT, REBUILT_RUN, (680.0, 130.0, 290.0, 1300.0), 23),
    ],
)
def test_a_run_of_three_processes(path: str, run: dict[str, Any], split: tuple[float, ...], rebuilt: int) -> None:
    timeline = analyze.read(path)
    assert timeline.start_s == T0
    assert _relative(timeline) == run
    assert timeline.notes["rebuilt_times"] == rebuilt
    assert timeline.notes["inferred_failures"] == 1
    result = analyze.analyze_timeline(timeline)
    realised = result.realised
    wall = realised.wall_s
    got = (realised.useful * wall, realised.write * wall, realised.rework * wall, realised.restart * wall)
    assert got == pytest.approx(split, abs=1e-9)
    (level,) = result.levels
    assert level.stall_s == pytest.approx(130.0 / 3, rel=1e-12)  # the mean of the three stalls
    restarts = [end - failure for failure, _, end, _ in run["episodes"]]
    assert result.restart_s == pytest.approx(sum(restarts) / 2, rel=1e-12)  # 355 s and 650 s
    assert timeline.last_step == 60.0 if path == STAMPED else 70.0


def test_the_rebuilt_clock_line_by_line() -> None:
    """The first process of untimestamped.log, event by event (the sums are in REBUILT_RUN's comment)."""
    lines = Path(REBUILT).read_text().splitlines()
    first = lines[: lines.index("Traceback (most recent call last):")]
    assert _events(first) == [
        ("attempt_start", 0.0, None),
        ("progress", 160.0, 10), ("progress", 280.0, 20),
        ("checkpoint_start", 280.0, 20), ("checkpoint_end", 340.0, 20),
        ("progress", 450.0, 30), ("progress", 500.0, 35),
    ]  # fmt: skip


def _iteration(n: int, ms: float | str, extra: str = "") -> str:
    samples = f" consumed samples: {n * 8:12d} |"
    return f" iteration {n:8d}/    1000 |{samples}{extra} elapsed time per iteration (ms): {ms} |"


def test_megatron_deepspeed_counts_saves_inside_its_iteration_time() -> None:
    # Megatron-DeepSpeed (its lines carry "consumed tokens:") does not stop the iteration timer for a
    # save: iteration 20 is 10 × 2 s after iteration 10, the 5 s save inside them.
    tokens = " consumed tokens:         4096 |"
    lines = ["> initializing torch distributed ...",
             "[before the start of training step] datetime: 2024-05-01 12:00:00",
             _iteration(10, 2000.0, tokens), "saving checkpoint at iteration      10 to /ckpt",
             "  successfully saved checkpoint at iteration      10 to /ckpt",
             "    save-checkpoint ................................: (4000.00, 5000.00)",
             _iteration(20, 2000.0, tokens)]  # fmt: skip
    assert _events(lines) == [
        ("attempt_start", 0.0, None), ("progress", 20.0, 10), ("checkpoint_start", 20.0, 10),
        ("checkpoint_end", 25.0, 10), ("progress", 40.0, 20),
    ]  # fmt: skip


def test_a_save_timed_before_its_success_was_asynchronous() -> None:
    # Megatron-LM --async-save: the timer ends the stall; "successfully saved" comes iterations later, when
    # the checkpoint is durable.
    lines = ["[before the start of training step] datetime: 2024-05-01 12:00:00",
             "[2024-05-01 12:00:20.000000] saving checkpoint at iteration      10 to /ckpt in torch_dist format",
             "    save-checkpoint ................................: (1500.00, 2000.00)",
             " [2024-05-01 12:00:40] iteration       20/    1000 | elapsed time per iteration (ms): 1800.0 |",
             "  [2024-05-01 12:00:50.000000] successfully saved checkpoint from iteration 10 to /ckpt"]  # fmt: skip
    assert _events(lines) == [("checkpoint_start", 20.0, 10), ("checkpoint_end", 22.0, 10), ("progress", 40.0, 20),
                              ("persist_end", 50.0, 10)]  # fmt: skip
    timeline = analyze.parse(lines, name="async.log")
    c = timeline.checkpoints
    assert len(c.start_s) == 1
    assert (float(c.end_s[0] - c.start_s[0]), float(c.durable_s[0] - c.end_s[0])) == (2.0, 28.0)


def test_a_log_with_no_timestamp_runs_from_zero() -> None:
    lines = ["> initializing torch distributed ...", _iteration(10, 1500.0), _iteration(30, 2500.0)]
    context = Context("x.log")
    rows = [row for row in megatron_format.rows(lines, context) if isinstance(row, Row)]
    times = [(row.value["event"], float(row.value["time"])) for row in rows]
    assert times == [("attempt_start", 0.0), ("progress", 15.0), ("progress", 65.0)]  # 10 × 1.5; + 20 × 2.5
    assert context.notes["rebuilt_times"] == 3


def test_nemo_progress_lines() -> None:
    # NeMo 2: one line a step, the global step and its time in seconds.
    line = (
        "[NeMo I 2024-05-01 12:00:00 nemo_logging:393] Training epoch 0, iteration 4/99 | lr: 1e-05 |"
        " global_batch_size: 8 | global_step: 104 | reduced_train_loss: 2.77 | train_step_timing in s: 0.5 |"
    )
    follow = "Training epoch 0, iteration 5/99 | lr: 1e-05 | global_step: 105 | train_step_timing in s: 0.75 |"
    assert _events([line, follow]) == [("progress", 0.0, 104), ("progress", 0.75, 105)]


# ------------------------------------------------------------------ bad lines


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (_iteration(40, "fast"), "cannot read the time per iteration 'fast': expected milliseconds"),
        ("    save-checkpoint ....: (12.0, soon)", "cannot read the save-checkpoint time '(12.0, soon)'"),
        (" [2024-13-01 12:00:00] iteration 40/ 1000 | elapsed time per iteration (ms): 1.0 |",
         "cannot read the timestamp"),
        (_iteration(5, 1000.0), "iteration 5 after iteration 35 with no restart between them"),
    ],
)  # fmt: skip
def test_a_bad_line_names_its_file_and_line(tmp_path: Path, run: Run, line: str, message: str) -> None:
    lines = Path(REBUILT).read_text().splitlines(keepends=True)
    at = lines.index("Traceback (most recent call last):\n")
    bad = tmp_path / "bad.log"
    bad.write_text("".join([*lines[:at], line + "\n", *lines[at:]]))
    result = run("analyze", str(bad))
    assert_usage_error(result, f"{bad}:{at + 1}: {message}")
    result = run("analyze", str(bad), "--skip-bad", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["lines"]["skipped_bad"] == 1
    assert _relative(analyze.read(str(bad), skip_bad=True)) == REBUILT_RUN  # the bad line changed nothing


# ------------------------------------------------------------------ detection and the command line


def test_analyze_detects_the_format_and_reports_the_run(run_json: RunJson) -> None:
    doc = run_json("analyze", REBUILT)
    assert doc == api.analyze(REBUILT).to_dict()
    assert doc["realised"]["effective"] == pytest.approx(680.0 / 2400.0, rel=1e-12)
    assert doc["measured"]["failures"] == 2
    assert api.analyze(REBUILT).year_from is None  # every timestamp here carries its year


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (Path(STAMPED).read_text().splitlines(keepends=True)[:64], "megatron"),
        # A torch warning in glog's form first: the Megatron lines after it decide.
        (["W0501 12:00:00.123456 1234 ProcessGroupNCCL.cpp:100] Warning: TORCH_NCCL_AVOID_RECORD_STREAMS\n",
          "> initializing torch distributed ...\n"], "megatron"),
        (["------------------------ arguments ------------------------\n"], "megatron"),
        ([_iteration(10, 1000.0) + "\n"], "megatron"),
        (['{"time": 1, "event": "run_start", "message": "saving checkpoint at iteration 5"}\n'], "jsonl"),
        (["time,event,message\n", "1,progress,successfully saved checkpoint from iteration 5\n"], "csv"),
        (['[{"time": 1, "event": "run_start"}]\n'], "json"),
        (["I0608 20:54:47.918725 140021 checkpoint_manager.py:1234] Saving checkpoint at step 19\n"], "absl"),
        (["epoch 1 done\n", "iteration 5 of 10\n"], "csv"),
    ],
)  # fmt: skip
def test_detection(head: list[str], expected: str) -> None:
    assert reader.detect_format(head) == expected


def test_several_files_are_one_run(tmp_path: Path) -> None:
    """The run of timestamped.log split at its process boundaries, one file per process, read together."""
    text = Path(STAMPED).read_text()
    parts = text.split("using world size")[1:]
    paths = []
    for index, part in enumerate(parts):
        path = tmp_path / f"attempt{index}.log"
        path.write_text("using world size" + part)
        paths.append(str(path))
    consumer = _Collect()
    counts = reader.scan(list(reversed(paths)), consumer)
    assert counts.format == "megatron" and counts.files == 3
    single = _Collect()
    reader.scan(STAMPED, single)
    assert [(e, t) for e, t, _ in consumer.records] == [(e, t) for e, t, _ in single.records]


class _Collect:
    def __init__(self) -> None:
        self.records: list[tuple[str, float, dict[str, Any]]] = []

    def fields(self, names: Any, line: int) -> None:
        pass

    def record(self, record: dict[str, Any], line: int) -> bool:
        self.records.append((record["event"], float(record["time"]), record))
        return True


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("iteration"), st.integers(1, 50), st.integers(1, 100_000)),
            st.tuples(st.just("save"), st.integers(0, 10**7), st.booleans()),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_the_rebuilt_clock_is_the_sum_of_its_parts(steps: list[tuple[str, int, Any]]) -> None:
    """Any run of iteration and save lines without timestamps, against the clock summed step by step:
    iteration N at the latest iteration's time (or the training start) + (N − M) × E + the stalls since."""
    lines = [
        "> initializing torch distributed ...",
        "[before the start of training step] datetime: 2024-05-01 12:00:00",
    ]
    expected: list[tuple[str, float, Any]] = [("attempt_start", 0.0, None)]
    iteration, last, now, stalls = 0, 0.0, 0.0, 0.0
    for kind, a, b in steps:
        if kind == "iteration":
            iteration += a
            lines.append(_iteration(iteration, f"{b / 10:.1f}"))
            last = now = last + a * b / 10_000 + stalls
            stalls = 0.0
            expected.append(("progress", now, iteration))
        else:
            lines += [f"saving checkpoint at iteration {iteration:7d} to /ckpt",
                      f"  successfully saved checkpoint from iteration {iteration:7d} to /ckpt"]  # fmt: skip
            if b:  # with its timer (in ms, two decimals), the stall it gives; without, none
                lines.append(f"    save-checkpoint ................................: {a / 100:.2f}")
            stall = a / 100_000 if b else 0.0
            expected += [("checkpoint_start", now, iteration), ("checkpoint_end", now + stall, iteration)]
            now += stall
            stalls += stall
    event("saves: " + ("some" if any(kind == "save" for kind, _, _ in steps) else "none"))
    event("iterations: " + ("some" if any(kind == "iteration" for kind, _, _ in steps) else "none"))
    got = _events(lines)
    assert [(e, s) for e, _, s in got] == [(e, s) for e, _, s in expected]
    assert [t for _, t, _ in got] == pytest.approx([t for _, t, _ in expected], abs=1e-6)


def _nemo(when: str, message: str) -> str:
    return f"[NeMo I 2024-05-01 {when} nemo_logging:393] {message}"


NEMO_STEP = "Training epoch 0, iteration {0}/99 | lr: 1e-05 | global_step: {0} | train_step_timing in s: 2.0 |"


def test_nemo_saves_sync_and_async() -> None:
    # The first save, of step 10, began at 12:00:20 UTC (Unix 1714564820) and stalled 4 s; "Scheduled async"
    # follows: it went on in the background, durable at 12:00:40. The second, of step 11, is synchronous.
    # Steps are rebuilt from 2 s a step, plus the saves between them (NeMo's step timing leaves them out).
    lines = [
        _nemo("12:00:00", "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/8"),
        _nemo("12:00:00", "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/8"),  # the same process start
        NEMO_STEP.format(10),
        _nemo("12:00:24", "Global Checkpoint Save : Rank: 0 : Iteration: 10 : Start time: 1714564820.000s : "
                          "Save duration: 4.000s"),
        _nemo("12:00:24", "Scheduled async checkpoint save for /ckpt/step=10.ckpt"),
        NEMO_STEP.format(11),
        _nemo("12:00:40", "Successfully saved checkpoint from iteration      10 to /ckpt/step=10.ckpt"),
        _nemo("12:00:50", "Global Checkpoint Save : Rank: 0 : Iteration: 11 : Start time: 1714564846.000s : "
                          "Save duration: 4.000s"),
        NEMO_STEP.format(23),
    ]  # fmt: skip
    assert _events(lines) == [
        ("attempt_start", 0.0, None),
        ("progress", 20.0, 10),  # 10 steps of 2 s from the process start (this line has no timestamp)
        ("checkpoint_start", 20.0, 10), ("checkpoint_end", 24.0, 10),
        ("progress", 26.0, 11),  # 20 + 2 s + the 4 s stall
        ("persist_end", 40.0, 10),
        ("checkpoint_start", 46.0, 11), ("checkpoint_end", 50.0, 11),
        ("progress", 54.0, 23),  # 26 + 12 × 2 s + 4 s
    ]  # fmt: skip


def test_a_bad_line_leaves_the_clock_as_it_was() -> None:
    # The bad iteration line's timestamp (an hour on) is not taken: iteration 20 is rebuilt from iteration 10.
    start = "[before the start of training step] datetime: 2024-05-01 12:00:00"
    bad = " [2024-05-01 13:00:00]" + _iteration(15, "n/a")
    lines = ["> initializing torch distributed ...", start, _iteration(10, 1000.0), bad, _iteration(20, 1000.0)]
    items = list(megatron_format.rows([line + "\n" for line in lines], Context("x.log")))
    assert [item.line for item in items if isinstance(item, Bad)] == [4]
    times = [float(item.value["time"]) - T0 for item in items if isinstance(item, Row)]
    assert times == [0.0, 10.0, 20.0]
