"""The pattern library and the user's patterns (ckptcalc.logs.patterns, docs/formats/patterns.md).

The fixtures in tests/data/logs/patterns are written for these tests in the shapes the programs print
(NCCL's watchdog, torchrun's summary, the kernel, Slurm, kubectl, DeepSpeed, Hugging Face, accelerate,
Lightning, torchtune, Orbax in openpi's format, Megatron, torchtitan): behind rank prefixes, interleaved
across ranks, mixed into another format's lines, with stamps that carry no year. Each test counts the
events and checks their times and durations against the lines, worked by hand in the comments.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc import api
from ckptcalc.errors import InputError
from ckptcalc.logs import patterns, reader

Run = Callable[..., Any]

DATA = Path(__file__).parent / "data"
HERE = DATA / "logs" / "patterns"


def _events(name: str | Path, **options: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The canonical events of a log and what reading it inferred."""
    out = io.BytesIO()
    written = api.events([str(HERE / name if isinstance(name, str) else name)], stream=out, **options)
    events = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    return events, written.to_dict()["reading"]


def _failures(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(event["time"], event["cause"]) for event in events if event["event"] == "failure"]


def _saves(events: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    starts = [event for event in events if event["event"] == "checkpoint_start"]
    ends = [event for event in events if event["event"] == "checkpoint_end"]
    assert len(starts) == len(ends)
    return [(start["time"], end["time"], end.get("step")) for start, end in zip(starts, ends, strict=True)]


# ---------------------------------------------------------------- failures


FAILURES = [
    # Rank 3's watchdog line has no time; rank 4's glog stamp E430 05:09:48.828088908 (no year: --year) is
    # the first a line gives, so it stands for both; ranks 5, 3's abort and 4's abort are the same failure
    # (within 60 s): 4 more. At 06:41:02.117 ranks 6 and 1 time out again (and 6 aborts): a second failure,
    # 2 more. 6 reports coalesced in all.
    ("nccl-watchdog.log", {"year": 2024}, "patterns",
     [("2024-04-30T05:09:48.828Z", "nccl_timeout"), ("2024-04-30T06:41:02.117Z", "nccl_timeout")],
     {"coalesced_failures": 6, "inferred_times": 0}),
    # torchrun's agent lines make it a torchelastic log; the summary's root cause is rank 2, exit code -6
    # (SIGABRT) at 2023-05-19_16:39:58. Rank 2's CUDA error before it has no time of its own and no line
    # gives one before the summary: the same failure. The two other ranks of "Failures:" are counted: 3.
    ("child-failed.log", {"year": 2023}, "torchelastic", [("2023-05-19T16:39:58Z", "SIGABRT")],
     {"coalesced_failures": 3, "inferred_times": 0}),
    # Xid 79 twice within a second; the OOM killer's two lines; CUDA OOM behind [rank2]:; rank 7's ECC
    # error has no time: 17:45:10, the line before (inferred); srun's Killed (SIGKILL) and Terminated
    # after the 19:00:00 line (inferred, then the same failure). The dmesg stamps carry their year.
    ("node-failures.log", {"year": 2024}, "patterns",
     [("2024-06-25T13:20:46Z", "xid79"), ("2024-06-25T15:02:11Z", "oom_kill"), ("2024-06-25T16:30:00Z", "cuda_oom"),
      ("2024-06-25T17:45:10Z", "cuda_error"), ("2024-06-25T19:00:00Z", "SIGKILL")],
     {"coalesced_failures": 3, "inferred_times": 2}),
    # Slurm: the job and its step cancelled at the time limit (one failure, TIMEOUT, at the time the line
    # states); a node failure (the step's line, then srun's, which has none: the same); a plain cancel.
    ("slurm-job.out", {}, "patterns",
     [("2025-01-10T20:00:07Z", "TIMEOUT"), ("2025-01-11T09:12:40Z", "NODE_FAIL"),
      ("2025-01-11T11:30:00Z", "CANCELLED")],
     {"coalesced_failures": 2}),
    # kubectl describe: the last state terminated, OOMKilled, finished at 08:58:12 +0000; the BackOff
    # event (no time of its own) is the same restart.
    ("kubectl-describe.txt", {}, "patterns", [("2024-05-14T08:58:12Z", "OOMKilled")], {"coalesced_failures": 1}),
    # Megatron's own lines, and NCCL's behind [rank4]: and [rank5]: with glog stamps E913 (year: the log's
    # own dated lines); "[exiting program at iteration 1000] datetime:" ends the run at 07:04:42.
    ("megatron-milestones.log", {}, "megatron", [("2024-09-13T07:03:14.500Z", "nccl_timeout")],
     {"coalesced_failures": 1}),
    # torchtitan's lines (rank 1's copy a duplicate) and NCCL's from ranks 3 and 0 (E625, the year from
    # torchtitan's dates), then rank 1's abort without a time: one failure at rank 3's 13:10:38.120.
    ("torchtitan-nccl.log", {}, "torchtitan", [("2025-06-25T13:10:38.120Z", "nccl_timeout")],
     {"coalesced_failures": 2, "duplicates": 1}),
]  # fmt: skip


@pytest.mark.parametrize(("name", "options", "format", "failures", "notes"), FAILURES, ids=[row[0] for row in FAILURES])
def test_failures_are_counted_once_at_the_time_a_line_gives(
    name: str, options: dict[str, Any], format: str, failures: list[tuple[str, str]], notes: dict[str, int]
) -> None:
    events, reading = _events(name, **options)
    assert reading["format"] == format
    assert _failures(events) == failures
    for key, count in notes.items():
        assert reading["inferred"][key] == count, key


def test_megatron_milestone_ends_the_run_at_its_datetime() -> None:
    events, _ = _events("megatron-milestones.log")
    assert events[-1] == {"time": "2024-09-13T07:04:42Z", "event": "run_end"}
    # Megatron's own save of iteration 1000, read by its adapter, beside the library's failure.
    assert [(start, step) for start, _, step in _saves(events)] == [("2024-09-13T07:00:00Z", 1000)]


def test_torchtitan_saves_stay_its_adapters_beside_the_library_failures() -> None:
    events, _ = _events("torchtitan-nccl.log")
    assert _saves(events) == [("2025-06-25T13:00:23Z", "2025-06-25T13:00:27Z", 10)]


def test_the_year_of_a_glog_stamp_is_the_given_one_else_the_files() -> None:
    _, reading = _events("nccl-watchdog.log", year=2024)
    assert reading["year_from"] == "year"
    # Without --year, the log's own dated lines (2024-04-30 05:00:00) give it, before the file's time.
    events, _ = _events("nccl-watchdog.log")
    assert _failures(events)[0][0] == "2024-04-30T05:09:48.828Z"


@pytest.mark.parametrize(
    ("name", "said"),
    [("sacct-no-times.txt", "3 failures recognised"), ("kubectl-get-pods.txt", "2 failures recognised")],
)
def test_failures_without_any_time_say_so(run: Run, name: str, said: str) -> None:
    for command in ("events", "analyze", "fit"):
        result = run(command, str(HERE / name))
        assert_usage_error(result, str(HERE / name))
        assert said in result.stderr and "no line gives a time" in result.stderr, command


# ---------------------------------------------------------------- saves and restores


SAVES = [
    # DeepSpeed: "Saving model checkpoint: .../global_step1000/..." (rank 1's copy of the same save is
    # passed over) to "[Torch] Checkpoint global_step1000 is ready now!": 36.24 s; then 40 s.
    ("deepspeed.log", {}, [("2024-05-01T12:40:00.010Z", "2024-05-01T12:40:36.250Z", 1000),
                           ("2024-05-01T13:20:00Z", "2024-05-01T13:20:40Z", 2000)]),
    # Hugging Face Trainer: "Saving model checkpoint to out/checkpoint-500" to "Model weights saved in".
    ("hf-trainer.log", {}, [("2024-05-01T12:30:00Z", "2024-05-01T12:30:42.500Z", 500),
                            ("2024-05-01T13:00:00Z", "2024-05-01T13:00:40Z", 1000)]),
    # accelerate: "Saving current state to ckpt/step_2000" to "Random states saved in" (its last line).
    ("accelerate.log", {}, [("2024-05-01T12:20:00Z", "2024-05-01T12:20:16Z", 2000)]),
    # Lightning's ModelCheckpoint says a save once: its start and end at that line.
    ("lightning.log", {}, [("2024-05-01T12:45:10Z", "2024-05-01T12:45:10Z", 2000),
                           ("2024-05-01T13:30:20Z", "2024-05-01T13:30:20Z", 4000)]),
    # torchtune's lines have no time: the save starts at the agent's W1102 10:15:31.204 (inferred) and
    # lasts the 131.22 s "Saving checkpoint took" states: 10:17:42.424.
    ("torchtune.log", {"year": 2024}, [("2024-11-02T10:15:31.204Z", "2024-11-02T10:17:42.424Z", None)]),
    # NeMo's "[NeMo I ...]" prefix makes it a Megatron log; its "Checkpoint save for step N started" to
    # "Scheduled async checkpoint save" (4 s, 5 s) are the library's, durable at "finalized successfully".
    ("nemo.log", {}, [("2024-06-01T10:00:00Z", "2024-06-01T10:00:04Z", 1000),
                      ("2024-06-01T10:33:20Z", "2024-06-01T10:33:25Z", 1200)]),
    # absl lines pasted from Markdown: a fence, and a backtick before each line.
    ("absl-backtick.log", {"year": 2024}, [("2024-05-01T12:03:20.500Z", "2024-05-01T12:03:30.500Z", 20)]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "options", "saves"), SAVES, ids=[row[0] for row in SAVES])
def test_saves_are_read_with_their_times_and_steps(
    name: str, options: dict[str, Any], saves: list[tuple[str, str, Any]]
) -> None:
    events, reading = _events(name, **options)
    assert _saves(events) == saves
    assert reading["inferred"]["unmatched_starts"] == reading["inferred"]["unmatched_ends"] == 0


def test_nemo_async_saves_become_durable_when_finalized() -> None:
    events, reading = _events("nemo.log")
    assert reading["format"] == "megatron"
    assert [event["async_persist_end"] for event in events if event["event"] == "checkpoint_end"] == [
        "2024-06-01T10:01:30Z",
        "2024-06-01T10:35:00Z",
    ]


def test_a_save_without_times_takes_the_duration_its_lines_state() -> None:
    _, reading = _events("torchtune.log", year=2024)
    assert reading["inferred"]["inferred_times"] == 2  # its start and its end


def test_orbax_async_saves_in_openpis_format(tmp_path: Path) -> None:
    # openpi logs the time of day alone (14:01:58.100 [I] ...): the date is the file's modification time's.
    log = tmp_path / "train.log"
    log.write_bytes((HERE / "orbax-openpi.log").read_bytes())
    noon = datetime(2025, 4, 5, 12, 0, tzinfo=UTC).timestamp()
    os.utime(log, (noon, noon))
    events, reading = _events(log)
    # "Saving checkpoint at step 1000" to "Finished blocking save in 1.33 seconds" (the stall), durable at
    # "ChainedFuture completed 1/1 futures in 13.37 seconds" (14:02:11.470).
    assert _saves(events) == [("2025-04-05T14:01:58.100Z", "2025-04-05T14:01:59.430Z", 1000),
                              ("2025-04-05T14:21:58Z", "2025-04-05T14:21:59.500Z", 2000)]  # fmt: skip
    assert [event["async_persist_end"] for event in events if event["event"] == "checkpoint_end"] == [
        "2025-04-05T14:02:11.470Z",
        "2025-04-05T14:22:12Z",
    ]
    assert reading["year_from"] == "mtime"


def test_analyze_measures_a_library_log(run_json: Callable[..., dict[str, Any]]) -> None:
    document = run_json("analyze", str(HERE / "deepspeed.log"))
    # Two saves, 36.24 s and 40 s: their mean is the write time (the stamps to the millisecond).
    assert document["measured"]["write_s"] == pytest.approx((36.24 + 40.0) / 2, abs=1e-3)


# ---------------------------------------------------------------- the user's patterns

CUSTOM_LOG = """job 17 up
2025-03-01 10:00:00 shard-writer: saved shard set 100 in 12.5s
2025-03-01 10:30:00 shard-writer: saved shard set 200 in 13.0s
2025-03-01 10:41:07 supervisor: trainer died (cause=ecc)
2025-03-01 10:45:00 shard-writer: saved shard set 210 in 12s
"""

CUSTOM = """
[[pattern]]
event = "checkpoint_end"
regex = '^(?P<time>\\S+ \\S+) shard-writer: saved shard set (?P<step>\\d+) in (?P<duration>[\\d.]+)s'
time_format = "%Y-%m-%d %H:%M:%S"

[[pattern]]
event = "failure"
regex = 'trainer died \\(cause=(?P<cause>\\w+)\\)'
"""


def _write(tmp_path: Path, text: str, name: str = "lines.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_pattern_file_reads_a_custom_format(run: Run, tmp_path: Path) -> None:
    log, rules = _write(tmp_path, CUSTOM_LOG, "custom.log"), _write(tmp_path, CUSTOM)
    result = run("events", str(log), "--patterns", str(rules))
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    # Each save ends at its line and began its stated duration before: 12.5 s, 13 s, 12 s.
    assert _saves(events) == [("2025-03-01T09:59:47.500Z", "2025-03-01T10:00:00Z", 100),
                              ("2025-03-01T10:29:47Z", "2025-03-01T10:30:00Z", 200),
                              ("2025-03-01T10:44:48Z", "2025-03-01T10:45:00Z", 210)]  # fmt: skip
    assert _failures(events) == [("2025-03-01T10:41:07Z", "ecc")]
    # Without the file, the same log is not understood, and the error says how to describe it.
    bare = run("events", str(log))
    assert_usage_error(bare, str(log))
    assert "nothing recognised in 5 lines" in bare.stderr and "--patterns FILE.toml" in bare.stderr


def test_fit_and_analyze_take_patterns_too(run_json: Callable[..., dict[str, Any]], tmp_path: Path) -> None:
    log, rules = _write(tmp_path, CUSTOM_LOG, "custom.log"), _write(tmp_path, CUSTOM)
    assert run_json("analyze", str(log), "--patterns", str(rules))["measured"]["failures"] == 1
    fitted = run_json("fit", str(log), "--patterns", str(rules), "--window-start", "2025-03-01T09:00:00")
    assert fitted["reading"]["used"] == 1


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[[pattern]]\nevent = 'failure'\nregex = '(a)\\1'\n", "pattern 1: bad regular expression"),
        ("[[pattern]]\nevent = 'failure'\nregex = 'x'\n[[pattern]]\nevent = 'failure'\nregex = '(?<=a)b'\n",
         "pattern 2: bad regular expression"),
        ("[[pattern]]\nevent = 'crash'\nregex = 'x'\n", "pattern 1: unknown event 'crash'"),
        ("[[pattern]]\nevent = 'failure'\nregex = '(?P<when>x)'\n", "pattern 1: unknown group 'when'"),
        ("[[pattern]]\nevent = 'failure'\nregex = 'x'\ncolour = 'red'\n", "pattern 1: unknown key 'colour'"),
        ("[[pattern]]\nevent = 'failure'\n", "pattern 1: needs regex"),
        ("[[pattern]]\nevent = 'failure'\nregex = 'x'\ntime_format = 'hh:mm'\n", "pattern 1: time_format"),
        ("title = 'x'\n", "unknown key 'title'"),
        ("[[pattern]\n", "invalid TOML"),
    ],
)  # fmt: skip
def test_a_bad_pattern_file_is_one_line_naming_the_file_and_pattern(
    run: Run, tmp_path: Path, text: str, said: str
) -> None:
    rules = _write(tmp_path, text)
    result = run("events", str(DATA / "logs" / "absl" / "train.log"), "--patterns", str(rules))
    assert_usage_error(result, f"--patterns {rules}: ")
    assert said in result.stderr


def test_a_catastrophic_pattern_runs_in_linear_time(tmp_path: Path) -> None:
    # (a+)+$ backtracks exponentially on "aaa...ab" in a backtracking engine; RE2 reads 10^5 such lines
    # in one pass each (benchmarks measure the time; here the result).
    lines = ["a" * 40 + "b\n"] * 100_000 + ["2025-01-01 00:00:00 aaaa\n"]
    log = _write(tmp_path, "".join(lines), "hostile.log")
    rules = _write(tmp_path, "[[pattern]]\nevent = 'failure'\nregex = '(a+)+$'\n")
    events, reading = _events(log, patterns=rules)
    assert [(event["time"], event["event"]) for event in events] == [
        ("2025-01-01T00:00:00Z", "run_start"),
        ("2025-01-01T00:00:00Z", "failure"),
        ("2025-01-01T00:00:00Z", "run_end"),
    ]
    assert reading["format"] == "patterns"


def test_where_runs_in_linear_time_too() -> None:
    condition = reader.parse_where(["cause~(a+)+$"])[0]
    assert not condition.meets({"cause": "a" * 5000 + "b"})


def test_patterns_load_checks_every_table(tmp_path: Path) -> None:
    loaded = patterns.load(_write(tmp_path, CUSTOM))
    assert [(one.name, one.event, sorted(one.named)) for one in loaded] == [
        ("pattern 1", "checkpoint_end", ["duration", "step", "time"]),
        ("pattern 2", "failure", ["cause"]),
    ]
    with pytest.raises(InputError) as raised:
        patterns.load(tmp_path / "absent.toml")
    assert str(raised.value.where).startswith("patterns ")


# ---------------------------------------------------------------- never silent


def test_verbose_lists_what_auto_considered(run: Run) -> None:
    result = run("events", str(HERE / "deepspeed.log"), "--verbose")
    assert result.exit_code == 0
    said = result.stderr.strip().splitlines()[0]
    assert "format auto tried torchtitan no, megatron no" in said and "patterns yes: patterns" in said
    assert "deepspeed_save 3, deepspeed_saved 2" in said  # rank 1's line too
    named = run("events", str(HERE / "deepspeed.log"), "--format", "patterns", "--verbose")
    assert "format patterns as named" in named.stderr


def test_nothing_recognised_is_one_line_saying_what_was_tried(run: Run, tmp_path: Path) -> None:
    log = _write(tmp_path, "hello\nthe job ran\nWatchdog caught nothing\n", "note.log")
    for command in ("events", "analyze", "fit"):
        result = run(command, str(log))
        assert_usage_error(result, str(log))
        said = result.stderr
        assert "nothing recognised in 3 lines" in said, command
        assert "not torchtitan, megatron, torchelastic, absl" in said
        # The nearest candidate: the line holding a word the NCCL pattern looks for.
        assert "nearest: line 3 holds 'Watchdog caught', which nccl_timeout looks for" in said
        assert "--patterns FILE.toml" in said


def _every_log() -> list[Path]:
    return sorted(path for path in DATA.rglob("*") if path.is_file() and path.suffix not in (".py", ".toml"))


@pytest.mark.parametrize("log", _every_log(), ids=lambda path: str(path.relative_to(DATA)))
def test_no_log_in_the_suite_gives_success_and_no_events(run: Run, log: Path) -> None:
    """events, analyze and fit on each log of the suite, as a user would run them first: an error, or events."""
    for command in ("events", "analyze", "fit"):
        result = run(command, str(log), *(("--json",) if command != "events" else ()))
        if result.exit_code != 0:
            assert result.exit_code == 2 and result.stderr.startswith("error: "), (command, result.stderr)
            continue
        if command == "events":
            assert any(json.loads(line)["event"] != "run_end" for line in result.stdout.splitlines()), command
        else:
            assert json.loads(result.stdout)["reading"]["used"] > 0, command


# ---------------------------------------------------------------- a preset's [log] patterns


def test_a_presets_log_table_names_the_patterns(run_json: Callable[..., dict[str, Any]], tmp_path: Path) -> None:
    log, _ = _write(tmp_path, CUSTOM_LOG, "custom.log"), _write(tmp_path, CUSTOM, "lines.toml")
    preset = _write(tmp_path, 'base = "llama3-405b"\n\n[log]\npatterns = "lines.toml"\n', "cluster.toml")
    assert api.load_preset(str(preset)).log_patterns == "lines.toml"
    # Relative to the preset's directory, whatever the working directory.
    assert api.preset_patterns(str(preset)) == str(tmp_path / "lines.toml")
    document = run_json("analyze", str(log), "--preset", str(preset))
    assert (document["reading"]["format"], document["measured"]["failures"]) == ("patterns", 1)
    # What --save-preset writes keeps it.
    saved = tmp_path / "saved.toml"
    api.save_preset(api.load_preset(str(preset)), saved)
    assert api.load_preset(str(saved)).log_patterns == "lines.toml"


@pytest.mark.parametrize(
    ("table", "said"),
    [("[log]\npattern = 'x'\n", "log.pattern: unknown key (known in [log]: patterns)"),
     ("[log]\npatterns = 3\n", "log.patterns: must be the path of a patterns file"),
     ("log = 'x'\n", "log: must be a table ([log])")],
)  # fmt: skip
def test_a_bad_log_table_names_its_key(run: Run, tmp_path: Path, table: str, said: str) -> None:
    preset = _write(tmp_path, 'base = "llama3-405b"\n' + table, "cluster.toml")
    result = run("optimize", "--preset", str(preset))
    assert_usage_error(result, str(preset))
    assert said in result.stderr


def test_report_reads_its_log_with_the_patterns(run: Run, tmp_path: Path) -> None:
    pytest.importorskip("jinja2")
    text = CUSTOM_LOG + (
        "2025-03-01 11:20:00 supervisor: trainer died (cause=xid)\n"
        "2025-03-01 11:30:00 shard-writer: saved shard set 300 in 12s\n"
    )
    log, rules = _write(tmp_path, text, "custom.log"), _write(tmp_path, CUSTOM)
    out = tmp_path / "review.md"
    result = run("report", "--log", str(log), "--patterns", str(rules), "--markdown", str(out))
    assert result.exit_code == 0, result.stderr
    assert "custom.log, 1.50 h of run" in out.read_text()  # analyze read the run from its lines
    alone = run("report", "--patterns", str(rules), "--markdown", str(tmp_path / "other.md"))
    assert_usage_error(alone, "--patterns")


# ---------------------------------------------------------------- each pattern on its line

LINES = [
    ("nccl_timeout", "[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL("),
    ("nccl_abort", "[E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out. … we are taking the "
                   "entire process down."),
    ("cuda_oom", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB."),
    ("cuda_error", "RuntimeError: CUDA error: an illegal memory access was encountered"),
    ("xid", "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."),
    ("oom_kill", "Out of memory: Killed process 51234 (python3) total-vm:912345678kB"),
    ("agent_exit", "failed (exitcode: -9) local_rank: 0 (pid: 4242) of binary: /usr/bin/python3"),
    ("agent_signal", "Received SIGTERM death signal, shutting down workers"),
    ("signal", "traceback : Signal 6 (SIGABRT) received by PID 4244"),
    ("srun_killed", "srun: error: gpu-node-17: task 5: Killed"),
    ("slurm_cancelled", "slurmstepd: error: *** JOB 881402 ON gpu-a-003 CANCELLED AT 2025-01-11T11:30:00 ***"),
    ("slurm_node_fail", "srun: error: Node failure on gpu-a-011"),
    ("slurm_state", "881377            train        gpu     llm-pt       1024  NODE_FAIL      1:0"),
    ("pod_restart", "Warning  BackOff  3m (x4 over 11h)  kubelet  Back-off restarting failed container pytorch"),
    ("megatron_sigterm", "[exiting program after receiving SIGTERM.] datetime: 2024-09-13 07:04:42"),
    ("megatron_save", "saving checkpoint at iteration    1000 to /ckpt in torch_dist format"),
    ("megatron_saved", "  successfully saved checkpoint from iteration    1000 to /ckpt [ t 1/8, p 1/1 ]"),
    ("megatron_load", " loading distributed checkpoint from /ckpt at iteration 1000"),
    ("megatron_loaded", "  successfully loaded checkpoint from /ckpt [ t 1/8, p 1/1 ] at iteration 1000"),
    ("megatron_start", "[after megatron is initialized] datetime: 2024-09-13 06:00:05"),
    ("megatron_done", "[after training is done] datetime: 2024-09-14 06:00:05"),
    ("megatron_exit", "[exiting program at iteration 1000] datetime: 2024-09-13 07:04:42"),
    ("nemo_save", "Checkpoint save for step 1000 started at 1717236000.0."),
    ("nemo_scheduled", "Scheduled async checkpoint save for /results/checkpoints/megatron_gpt--step=1000.ckpt"),
    ("nemo_persisted", "Async checkpoint save for step 1000 (/ckpt/step=1000.ckpt) finalized successfully."),
    ("deepspeed_save", "[Rank 0] Saving model checkpoint: /ckpt/global_step1000/mp_rank_00_model_states.pt"),
    ("deepspeed_saved", "[Torch] Checkpoint global_step1000 is ready now!"),
    ("hf_save", "Saving model checkpoint to out/checkpoint-500"),
    ("hf_saved", "Model weights saved in out/checkpoint-500/model.safetensors"),
    ("accelerate_save", "Saving current state to ckpt/step_2000"),
    ("accelerate_saved", "Random states saved in ckpt/step_2000/random_states_0.pkl"),
    ("hf_load", "Loading model from out/checkpoint-500."),
    ("hf_loaded", "  Continuing training from global step 500"),
    ("lightning_save", "Epoch 0, global step 2000: 'val_loss' reached 2.31002 (best 2.31002), saving model to "
                       "'/ckpt/epoch=0-step=2000.ckpt' as top 1"),
    ("lightning_load", "Restoring states from the checkpoint path at /ckpt/epoch=1-step=4000.ckpt"),
    ("lightning_loaded", "Restored all states from the checkpoint at /ckpt/epoch=1-step=4000.ckpt"),
    ("torchtune_save", "Saving checkpoint. This may take some time. Retrieving full model state dict..."),
    ("torchtune_part", "Getting full model state dict took 109.51 secs"),
    ("torchtune_shard", "Model checkpoint of size 4.98 GiB saved to /tmp/epoch_0/ft-model-00001-of-00004.safetensors"),
    ("torchtune_saved", "Saving checkpoint took 131.22 secs"),
    ("orbax_save", "[process=0] Saving checkpoint at step 1000"),
    ("orbax_blocking", "Finished blocking save in 1.33 seconds. Continuing to write to /ckpt/1000."),
    ("orbax_future", "ChainedFuture completed 1/1 futures in 13.37 seconds."),
    ("orbax_async", "Finished async_save (blocking + background). Time taken: 14.6s. directory=/ckpt/1000"),
    ("orbax_synchronous", "[process=0] [sync] Finished save in 11.09 seconds @ /ckpt/0"),
    ("torchtitan_save", "Saving the checkpoint (or staging if async is enabled)."),
    ("torchtitan_saved", "Finished saving the checkpoint (or staging if async is enabled)in 4.00 seconds."),
    ("torchtitan_load", "Loading the checkpoint at step 50."),
    ("torchtitan_loaded", "Finished loading the checkpoint in 5.00 seconds."),
]  # fmt: skip


def test_every_pattern_of_the_library_has_its_line() -> None:
    assert sorted(name for name, _ in LINES) == sorted(pattern.name for pattern in patterns.LIBRARY)


@pytest.mark.parametrize(("name", "line"), LINES, ids=[name for name, _ in LINES])
def test_each_line_is_read_by_its_pattern_behind_a_rank_prefix(name: str, line: str) -> None:
    # sacct's rows are the scheduler's own output, never a rank's: their pattern holds the row's start.
    for prefix in ("", "[rank3]:", "[default5]:", "12: ") if name != "slurm_state" else ("",):
        assert patterns.head_matches([prefix + line + "\n"], ()) == {name: 1}, prefix


def test_the_librarys_megatron_lines_read_a_log_named_patterns() -> None:
    # Named --format patterns, Megatron's lines are the library's: the save's lines have no time of their
    # own, so both take the iteration line's [2024-09-13 07:00:00] (counted).
    events, reading = _events("megatron-milestones.log", format="patterns")
    assert _saves(events) == [("2024-09-13T07:00:00Z", "2024-09-13T07:00:00Z", 1000)]
    assert _failures(events) == [("2024-09-13T07:03:14.500Z", "nccl_timeout")]
    assert events[-1] == {"time": "2024-09-13T07:04:42Z", "event": "run_end"}
    assert reading["inferred"]["inferred_times"] == 2
