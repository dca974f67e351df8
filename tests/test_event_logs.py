"""``simulate --events`` and ``analyze`` together (docs/model.md §11.4): the log says its time unit, its
form follows the file's extension, an interrupted persist is written as such, and ``analyze`` with no
flags recovers what the simulation ran; the log is streamed (bounded memory, Ctrl-C leaves nothing)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc import api
from ckptcalc.errors import InputError
from ckptcalc.logs import analyze
from ckptcalc.simulation import events as simulated
from ckptcalc.simulation.timeline import Failures, Schedule

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

# The stress case of issue 21: 6.5 TB persisted at 20 GB/s (325 s) after a 6.5 s snapshot at 1 TB/s, a
# 15-minute MTBF and a 10-minute restart. The interval cannot be shorter than the persist, so the
# optimum is the persist itself, 325 s, and there is nothing to gain.
STRESS = ["--size", "6.5TB", "--bw", "20GB/s", "--snapshot-bw", "1TB/s", "--mtbf", "15min"]
CASES = {
    # The 15-minute-MTBF case of docs/example-run.csv, synchronous: δ = 325 s.
    "sync": (["--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "15min", "--cycles", "2000"], 325.0, 0.0, 600.0),
    # Llama 3 with an asynchronous persist: 6.48 TB snapshot at 409.6 TB/s (δ = 0.0158203125 s) and
    # persisted at 2 TB/s (P = 3.24 s), every 5 minutes.
    "async": (["--preset", "llama3-405b-async", "--interval", "5min", "--cycles", "400"], 6.48 / 409.6, 3.24, 600.0),
    "stress": ([*STRESS, "--cycles", "5000"], 6.5, 325.0, 600.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_analyze_with_no_flags_recovers_the_simulation(run_json: RunJson, tmp_path: Path, case: str) -> None:
    flags, stall, lag, restart = CASES[case]
    log = tmp_path / "run.csv"
    sim = run_json("simulate", *flags, "--seed", "3", "--events", str(log))
    doc = run_json("analyze", str(log))
    m = doc["measured"]
    (level,) = m["levels"]
    # Differences of times near 1e6 s: exact to a few 1e-10 s.
    assert m["write_s"] == pytest.approx(stall, rel=1e-9, abs=1e-8)
    assert m["restart_s"] == pytest.approx(restart, rel=1e-9)
    assert m["interval_s"] == pytest.approx(sim["interval_s"], rel=1e-9)
    if lag:
        assert level["persist_s"] == pytest.approx(lag, rel=1e-9, abs=1e-8)
    else:
        assert level["persist_s"] is None
    # The same timeline: the log starts when training first starts (the times are the simulation's), so
    # the simulation's wall time is the log's plus that start, all of it restart.
    start, wall = doc["start_s"], doc["wall_s"]
    whole = wall + start
    split, realised = sim["split"], doc["realised"]
    expected = {
        "useful": split["useful"] * whole / wall,
        "write": split["write"] * whole / wall,
        "rework": split["rework"] * whole / wall,
        "restart": (split["restart"] * whole - start) / wall,
    }
    for share, value in expected.items():
        # 1e-9 of the wall time: a second over a 50-day run. One interval of rework missed for the last
        # failure alone is 7e-5 in the stress case.
        assert realised[share] == pytest.approx(value, abs=1e-9), share
    assert doc["time_kind"] == "number"
    assert doc["model"]["agrees"] is True and doc["warnings"] == []


def test_the_stress_case_needs_no_flags_and_advises_no_change(run_json: RunJson, tmp_path: Path) -> None:
    log = tmp_path / "run.csv"
    run_json("simulate", *STRESS, "--cycles", "5000", "--events", str(log))
    doc = run_json("analyze", str(log))
    (level,) = doc["measured"]["levels"]
    assert level["persist_s"] == 325.0  # every persist that completed took 325 s
    model = doc["model"]
    assert model["optimal_interval_s"] >= 325.0 and model["robust_interval_s"] >= 325.0
    assert model["optimal_interval_s"] == pytest.approx(325.0, rel=1e-9)  # bound by the persist
    assert model["gain_pp"] == pytest.approx(0.0, abs=1e-9)
    assert doc["warnings"] == []
    text = log.read_text()
    # A failure cut about a third of the persists short; each is written so.
    assert text.count(",interrupted\n") == 1737
    assert text.count("checkpoint_end") == doc["measured"]["levels"][0]["checkpoints"]


@pytest.mark.parametrize("name", ["run.csv", "run.jsonl", "run.json", "run.csv.gz", "run.JSONL.gz"])
def test_the_form_follows_the_extension(run_json: RunJson, tmp_path: Path, name: str) -> None:
    log = tmp_path / name
    run_json("simulate", *STRESS, "--cycles", "300", "--seed", "5", "--events", str(log))
    data = log.read_bytes()
    if name.lower().endswith(".gz"):
        data = gzip.decompress(data)
    text = data.decode()
    stem = name.lower().removesuffix(".gz")
    if stem.endswith(".csv"):
        assert text.startswith("time_s,event,level,resumed_from,async_persist_end\n")
    elif stem.endswith(".jsonl"):
        records = [json.loads(line) for line in text.splitlines()]
        assert records[0] == {"time_s": 600.0, "event": "run_start"}
        assert {"event": "checkpoint_end", "level": "storage", "async_persist_end": "interrupted"}.items() <= max(
            (r for r in records if r.get("async_persist_end") == "interrupted"), key=len
        ).items()
    else:
        records = json.loads(text)
        assert records[0] == {"time_s": 600.0, "event": "run_start"} and records[-1]["event"] == "run_end"
    doc = run_json("analyze", str(log))
    reference = tmp_path / "reference.csv"
    if not reference.exists():
        run_json("simulate", *STRESS, "--cycles", "300", "--seed", "5", "--events", str(reference))
    assert doc["realised"] == run_json("analyze", str(reference))["realised"]


def test_every_written_record_is_an_event_of_the_schema(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    from ckptcalc.commands import events

    log = tmp_path / "run.jsonl"
    api.simulate(size="6.5TB", bw="20GB/s", snapshot_bw="1TB/s", mtbf="15min", cycles=300, events=log)
    validator = Draft202012Validator(events.event_schema())
    for line in log.read_text().splitlines():
        validator.validate(json.loads(line))


@pytest.mark.parametrize("name", ["run.txt", "run", "run.csv.xz", "run.gz", "run.tsv"])
def test_other_extensions_are_refused_before_anything_is_written(run: Run, tmp_path: Path, name: str) -> None:
    result = run("simulate", "--cycles", "300", "--events", str(tmp_path / name))
    assert_usage_error(result, "--events")
    assert ".csv, .jsonl or .json" in result.stderr
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ interrupted persists, by hand

# The second checkpoint's persist (from 210 s) was cut short by the failure at 240 s: it never became
# durable, so the failure loses the work since the first checkpoint (100 s). No restart_end follows, so
# the resume point comes from durability alone (the log's last failure).
INTERRUPTED = """time_s,event,async_persist_end
0,run_start,
100,checkpoint_start,
110,checkpoint_end,130
200,checkpoint_start,
210,checkpoint_end,interrupted
240,failure,
300,run_end,
"""


def test_an_interrupted_persist_is_never_durable() -> None:
    result = analyze.analyze_timeline(analyze.parse(INTERRUPTED, name="cut.csv"))
    assert result.timeline.episodes.resumed_from_s.tolist() == [100.0]
    # Lost [100, 240] less the two 10 s stalls: 120 s (resuming from the interrupted one would lose 30 s);
    # the restart 240–300 = 60 s (the run ended during it); stalls 20 s; useful 300 − 20 − 60 − 120 = 100 s.
    split = result.realised
    assert (split.useful, split.write, split.rework, split.restart) == pytest.approx(
        (100 / 300, 20 / 300, 120 / 300, 60 / 300), rel=1e-12
    )
    # The persist lag from the persist that completed (20 s), not averaged with the one cut short.
    (level,) = result.levels
    assert level.persist_s == 20.0 and level.checkpoints == 2


def test_an_empty_persist_end_is_a_synchronous_checkpoint() -> None:
    # Without a persist end the checkpoint is durable at its end: the failure resumes from 200 s.
    result = analyze.analyze_timeline(analyze.parse(INTERRUPTED.replace("interrupted", ""), name="sync.csv"))
    assert result.timeline.episodes.resumed_from_s.tolist() == [200.0]
    assert result.realised.rework == pytest.approx(30 / 300, rel=1e-12)
    assert result.levels[0].persist_s == 20.0


def test_time_s_is_seconds_and_time_keeps_its_unit() -> None:
    assert analyze.parse(INTERRUPTED, name="a.csv").end_s == 300.0
    assert analyze.parse(INTERRUPTED, name="a.csv", time_field="time_s").end_s == 300.0
    # An explicit unit wins over the name.
    assert analyze.parse(INTERRUPTED, name="a.csv", time_unit="min").end_s == 300.0 * 60
    renamed = INTERRUPTED.replace("time_s,", "time,")
    assert analyze.parse(renamed, name="b.csv", time_unit="min").end_s == 300.0 * 60
    # ``time`` (alone, or beside ``time_s``) is read first, and numbers in it need their unit.
    both = "time,time_s,event\n0,0,run_start\n5,300,run_end\n"
    for text in (renamed, both):
        with pytest.raises(InputError) as refused:
            analyze.parse(text, name="c.csv")
        assert "needs a unit" in refused.value.template and refused.value.where == "c.csv:2"
    assert analyze.parse(both, name="c.csv", time_unit="s").end_s == 5.0


# ------------------------------------------------------------------ streaming and interrupts


def _peak_while_writing(tmp_path: Path, cycles: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """Peak traced memory while ``simulate --events`` writes ``cycles`` of Llama 3, and the log's lines."""
    # Small pieces, so that a short log holds many.
    monkeypatch.setattr(simulated, "ROWS", 4096)
    monkeypatch.setattr(simulated, "BLOCK", 256)
    log = tmp_path / f"run-{len(list(tmp_path.iterdir()))}.csv"
    schedule = Schedule.single(interval_s=266.76, stall_s=3.24, restart_s=600.0)
    tracemalloc.start()
    try:
        api._write_events(schedule, Failures(11160.0), cycles, 1, log, False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    with log.open() as lines:
        count = sum(1 for _ in lines)
    return peak, count


def test_the_log_is_streamed_with_bounded_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _peak_while_writing(tmp_path, 200, monkeypatch)  # what is allocated once (imports, caches)
    small, small_lines = _peak_while_writing(tmp_path, 200, monkeypatch)
    large, large_lines = _peak_while_writing(tmp_path, 1000, monkeypatch)
    assert large_lines > 4.5 * small_lines  # about 85 lines a cycle
    # Five times the log, the same working memory: a piece of 4096 events at a time (held whole, the
    # 85,000 lines of the large log would take some 10 MB).
    assert large < 1.2 * small + 100_000, (small, large)
    assert large < 3_000_000, large


def _without_ignored_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # a background job may inherit SIGINT ignored


def test_ctrl_c_ends_a_long_write_at_once_and_leaves_no_file(tmp_path: Path) -> None:
    log = tmp_path / "big.csv"
    command = [sys.executable, "-m", "ckptcalc", "simulate", "--cycles", "2e5", "--events", str(log)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                             preexec_fn=_without_ignored_sigint)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.startswith(".big.csv.") for p in tmp_path.iterdir()):
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.5)  # well into the writing
        child.send_signal(signal.SIGINT)
        # Ended by the signal, not by the end of the run (which would exit 0 and leave the file); the
        # timeout only keeps a process that ignores it from hanging the suite.
        stdout, stderr = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130
    assert stderr.decode() == f"interrupted: {log} was not written\n" and stdout == b""
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ the consumer's working state


def _state_after(records: list[dict[str, Any]]) -> int:
    """Memory the consumer holds after taking ``records`` (beyond the records themselves)."""
    run = analyze._Run(None, None, "cause")
    run.fields(("time_s", "event", "step"), 1)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for line, record in enumerate(records, start=1):
            run.record(record, line)
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def _progress(count: int) -> list[dict[str, Any]]:
    head = [{"time_s": "0", "event": "run_start"}]
    return head + [{"time_s": str(i), "event": "progress", "step": str(i)} for i in range(count)]


def test_progress_and_unknown_lines_do_not_grow_the_state() -> None:
    few = _state_after(_progress(10_000))
    many = _state_after(_progress(100_000) + [{"time_s": "1e6", "event": "heartbeat"}] * 10_000)
    assert many < few + 2_000, (few, many)


def test_each_checkpoint_costs_a_few_numbers() -> None:
    def checkpoints(count: int) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = [{"time_s": "0", "event": "run_start"}]
        for i in range(count):
            end = {"time_s": str(10 * i + 2), "event": "checkpoint_end", "async_persist_end": str(10 * i + 5)}
            rows += [{"time_s": str(10 * i + 1), "event": "checkpoint_start"}, end]
        return rows

    few, many = _state_after(checkpoints(1_000)), _state_after(checkpoints(21_000))
    # Start, end, persist end and level: 32 bytes a checkpoint in typed arrays (a dataclass each, with
    # its floats, would take some 200).
    assert (many - few) / 20_000 < 40, (few, many)


def test_written_times_are_the_simulations_own(tmp_path: Path) -> None:
    # The log's times are the simulation's (seconds from its zero, the first restart's start): the run
    # starts after the first complete restart.
    log = tmp_path / "run.csv"
    api.simulate(size="6.5TB", bw="20GB/s", mtbf="15min", cycles=200, seed=1, events=log)
    first = log.read_text().splitlines()[1]
    assert first == "600.0,run_start,,,"
    assert os.path.getsize(log) > 0


def test_a_log_longer_than_twenty_seconds_of_writing_is_refused(run: Run, tmp_path: Path) -> None:
    """docs/commands/simulate.md: some 9 000 cycles of Llama 3 a second, so at most 2·10⁵ cycles of log."""
    assert api.EVENT_CYCLES == 200_000
    result = run("simulate", "--cycles", "200001", "--events", str(tmp_path / "log.csv"))
    assert_usage_error(result, "--cycles")
    assert "200,000" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("suffix", "gigabytes"), [(".csv", 0.7), (".jsonl", 1.3)])
def test_the_refusal_states_the_size_of_the_largest_log(
    run: Run, tmp_path: Path, suffix: str, gigabytes: float
) -> None:
    """The message's sizes: 2·10⁵ cycles of Llama 3, measured on 2 000 of them, within 10 %."""
    result = run("simulate", "--cycles", "200001", "--events", str(tmp_path / f"log{suffix}"))
    assert f"{gigabytes} GB of {'CSV' if suffix == '.csv' else 'JSON Lines'}" in result.stderr
    log = tmp_path / f"small{suffix}"
    api.simulate(cycles=2_000, seed=1, events=log)
    assert os.path.getsize(log) * 100 / 1e9 == pytest.approx(gigabytes, rel=0.1)


# ------------------------------------------------------------------ streamed: stdout, FIFOs, devices


def test_events_to_stdout_is_the_jsonl_file_written_otherwise(run: Run, tmp_path: Path) -> None:
    reference = tmp_path / "run.jsonl"
    assert run("simulate", "--cycles", "300", "--seed", "4", "--events", str(reference)).exit_code == 0
    result = run("simulate", "--cycles", "300", "--seed", "4", "--events", "-")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == reference.read_text()  # the log alone: no summary beside it
    assert json.loads(result.stdout.splitlines()[0]) == {"time_s": 600.0, "event": "run_start"}


@pytest.mark.parametrize("flag", [["--json"], ["--value", "effective"]])
def test_events_to_stdout_leaves_no_room_for_a_summary(run: Run, flag: list[str]) -> None:
    result = run("simulate", "--cycles", "300", "--events", "-", *flag)
    assert_usage_error(result, flag[0])


def test_events_to_dev_null_streams(run_json: RunJson) -> None:
    assert run_json("simulate", "--cycles", "300", "--events", os.devnull)["command"] == "simulate"
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


def test_events_to_a_fifo_stream_in_the_form_its_name_says(run_json: RunJson, tmp_path: Path) -> None:
    import stat
    import threading

    reference = tmp_path / "run.csv"
    run_json("simulate", "--cycles", "300", "--seed", "6", "--events", str(reference))
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    doc = run_json("simulate", "--cycles", "300", "--seed", "6", "--events", str(fifo))
    reader.join(timeout=30)
    assert doc["command"] == "simulate"
    assert got == [reference.read_bytes()]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # written through, never replaced


def test_a_fifo_whose_reader_leaves_is_an_output_error(run: Run, tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    def leave() -> None:
        with open(fifo, "rb") as early:
            early.read(10)

    reader = threading.Thread(target=leave)
    reader.start()
    result = run("simulate", "--cycles", "5000", "--events", str(fifo), "--json")
    reader.join(timeout=30)
    assert result.exit_code == 74  # docs/exit-codes.md: output could not be written
    assert result.stderr.strip() == "error: cannot write output: Broken pipe"
