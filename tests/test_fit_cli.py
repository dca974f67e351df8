"""ckptcalc fit on the command line: the document is the library's, validated against its schema (docs/fit.md)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

import ckptcalc
from ckptcalc import api

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
TRACE = str(Path(__file__).parent / "data" / "trace-54d.json")


def test_fit_json_is_the_api_document(run_json: RunJson) -> None:
    doc = run_json("fit", TRACE, "--time-unit", "d", "--where", "planned=false", "--observed-gpus", "16384")
    assert doc["command"] == "fit"
    assert doc == api.fit([TRACE], time_unit="d", where=["planned=false"], observed_gpus=16384).to_dict()
    # docs/fit.md §4: M̂ = T/n, and the exact interval around it
    assert doc["mtbf_s"] == pytest.approx(doc["window_s"] / doc["interruptions"], rel=1e-12)
    low, high = doc["mtbf_ci95"]
    assert low < doc["mtbf_s"] < high
    assert doc["gpu_mtbf_s"] == pytest.approx(doc["mtbf_s"] * 16384, rel=1e-12)
    assert doc["weibull"]["verdict"] == "clustered"


def test_fit_table(run: Run) -> None:
    result = run("fit", TRACE, "--time-unit", "d", "--cause", "cause.component")
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "MTBF:" in text and "(95 %:" in text
    assert "Weibull shape k =" in text
    assert "Causes" in text and "gpu_hbm" in text


def test_fit_reads_stdin(run: Run) -> None:
    lines = "\n".join(json.dumps({"time": t}) for t in (0, 3, 5, 11, 20))
    result = run("fit", "-", "--time-unit", "h", "--json", input=lines)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["interruptions"] == 4
    assert doc["mtbf_s"] == pytest.approx(20 * 3600 / 4)


@pytest.mark.parametrize(
    ("content", "args", "culprit"),
    [
        ("time,cause\n1,x\n2,y\n", [], "--time-unit"),
        ("time\n1\nnot-a-time\n", ["--time-unit", "h"], "log.csv:3"),
        ('{"time": 1}\n{broken\n', ["--time-unit", "h"], "log.csv:2"),
        ("time\n", ["--time-unit", "h"], "log.csv"),
        ("time\n1\n2\n", ["--time-unit", "parsecs"], "--time-unit"),
        ("time\n1\n2\n", ["--time-unit", "h", "--coalesce", "5"], "--coalesce"),
        ("time\n1\n2\n", ["--time-unit", "h", "--observed-gpus", "-3"], "--observed-gpus"),
    ],
)
def test_fit_bad_input(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, args: list[str], culprit: str
) -> None:
    log = tmp_path / "log.csv"
    log.write_text(content)
    monkeypatch.chdir(tmp_path)
    assert_usage_error(run("fit", "log.csv", *args, "--json"), culprit)


def test_fit_refuses_a_fifo_without_hanging(run: Run, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert_usage_error(run("fit", str(fifo), "--time-unit", "h"), str(fifo))


def test_fit_in_the_package() -> None:
    assert ckptcalc.fit is api.fit


# ------------------------------------------------------- --save-preset and --plot


def test_save_preset_feeds_the_planner(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    target = tmp_path / "fitted.toml"
    result = run("fit", TRACE, "--time-unit", "d", "--where", "planned=false", "--save-preset", str(target), "--json")
    assert result.exit_code == 0, result.stderr
    assert f"saved {target}" in result.stderr
    fit = json.loads(result.stdout)
    text = target.read_text(encoding="utf-8")
    # [failures] carries the fit: M, its interval and (failures cluster) the Weibull shape ...
    # Written at 4 significant figures (more where that moves the effective time by over 1e-6).
    scenario = api.load_preset(str(target))
    assert scenario.mtbf_s == pytest.approx(fit["mtbf_s"], rel=5e-4)
    assert scenario.mtbf_ci95 == pytest.approx((fit["mtbf_ci95"][0], fit["mtbf_ci95"][1]), rel=5e-4)
    assert scenario.shape == pytest.approx(fit["weibull"]["shape"], rel=5e-4)
    # ... and a source line saying what was fitted: file, events, window and filter.
    assert scenario.source is not None
    for part in (TRACE, f"{fit['interruptions']} interruptions", "where planned=false", "53.8 d", "on the log's clock"):
        assert part in scenario.source, part
    assert "llama3-405b" in (scenario.description or "") and 'restart = "10min"' in text
    # It plans straight away, with the band and under Weibull failures.
    doc = run_json("optimize", "--preset", str(target))
    assert doc["inputs"]["failure_dist"] == "weibull"
    assert doc["uncertainty"]["mtbf_s"] == pytest.approx(fit["mtbf_ci95"], rel=5e-4)
    same = api.optimize("llama3-405b", mtbf=fit["mtbf_s"], shape=fit["weibull"]["shape"])
    assert doc["effective"] == pytest.approx(same.effective, rel=1e-6)  # what the rounding may move


def test_save_preset_without_a_shape_when_exponential_fits(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "few.csv"
    log.write_text("time\n2026-01-01T00:00:00Z\n2026-01-01T05:00:00Z\n2026-01-02T00:00:00Z\n2026-01-03T10:00:00Z\n")
    target = tmp_path / "few.toml"
    result = run("fit", str(log), "--save-preset", str(target), "--preset", "gemini-inmemory")
    assert result.exit_code == 0, result.stderr
    scenario = api.load_preset(str(target))
    assert scenario.shape is None and scenario.replica_survival == 0.99
    assert scenario.source is not None and "exponential is consistent, so no shape" in scenario.source
    assert "2026-01-01T00:00:00Z to 2026-01-03T10:00:00Z" in scenario.source


def test_save_preset_never_overwrites_without_force(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "kept.toml"
    target.write_text("keep me\n")
    result = run("fit", TRACE, "--time-unit", "d", "--save-preset", str(target))
    assert_usage_error(result, "--save-preset")
    assert target.read_text() == "keep me\n"
    assert run("fit", TRACE, "--time-unit", "d", "--save-preset", str(target), "--force").exit_code == 0
    assert "mtbf_ci95" in target.read_text()


def test_save_preset_needs_an_interruption(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "one.csv"
    log.write_text("time\n0\n")
    result = run("fit", str(log), "--time-unit", "h", "--window-end", "100", "--save-preset", str(tmp_path / "x.toml"))
    assert_usage_error(result, "--save-preset")
    assert "lower bound" in result.stderr and not (tmp_path / "x.toml").exists()


def test_plot_draws_the_survival_curves(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "survival.svg"
    result = run("fit", TRACE, "--time-unit", "d", "--where", "planned=false", "--plot", str(target))
    assert result.exit_code == 0, result.stderr
    svg = target.read_text(encoding="utf-8")
    for label in ("log (Kaplan–Meier)", "exponential fit", "Weibull fit", "time between interruptions (h)"):
        assert label in svg, label
    assert_usage_error(run("fit", TRACE, "--time-unit", "d", "--plot", str(target)), "--plot")
    assert_usage_error(run("fit", TRACE, "--time-unit", "d", "--plot", str(tmp_path / "s.gif")), "--plot")


def test_plot_ignores_a_bogus_matplotlib_backend(tmp_path: Path) -> None:
    import subprocess
    import sys

    target = tmp_path / "survival.png"
    env = {**os.environ, "MPLBACKEND": "bogus"}
    code = "from ckptcalc.cli import main; main()"
    args = ["fit", TRACE, "--time-unit", "d", "--plot", str(target), "--json"]
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("flags", "culprit"), [(["--time", "gpus.2"], "gpus.jsonl:1"), (["--where", "gpus.5=6"], "gpus.jsonl")]
)
def test_a_path_past_the_end_of_a_list_is_a_usage_error(
    run: Run, tmp_path: Path, flags: list[str], culprit: str
) -> None:
    path = tmp_path / "gpus.jsonl"
    path.write_text('{"time": 1, "gpus": [5, 6]}\n{"time": 2, "gpus": [5, 6]}\n')
    assert_usage_error(run("fit", str(path), "--time-unit", "s", *flags, "--json"), culprit)


# ------------------------------------------------------- the data people have (issue: six conversions no longer needed)

HOUR = 3600.0


def _doc(run: Run, *args: str) -> dict[str, Any]:
    result = run("fit", *args, "--json")
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_us_order_local_timestamps_with_time_format_and_tz(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "lanl.csv"
    log.write_text("Prob Started,Cause\n6/21/2005 10:54,Hardware\n6/21/2005 12:54,Software\n6/21/2005 18:54,Hardware\n")
    doc = _doc(run, str(log), "--time", "Prob Started", "--time-format", "%m/%d/%Y %H:%M", "--tz", "-06:00")
    # 10:54 at UTC−6 is 16:54 UTC; 8 h of window, 2 interruptions counted after the first: M̂ = 4 h (§4).
    assert doc["window_start_s"] == 1119372840.0 and doc["window_s"] == 8 * HOUR
    assert (doc["interruptions"], doc["mtbf_s"]) == (2, 4 * HOUR)
    assert (doc["naive_timestamps"], doc["tz"], doc["warnings"]) == (3, "-06:00", [])
    assert [c["cause"] for c in doc["causes"]] == ["Hardware", "Software"]


@pytest.mark.parametrize("suffix", [".gz", ".xz", ".bz2"])
def test_compressed_logs_fit_like_the_plain_one(run: Run, tmp_path: Path, suffix: str) -> None:
    import bz2
    import gzip
    import lzma

    text = "Timestamp,Cause\n2024-05-01T00:00:00Z,gpu\n2024-05-01T02:00:00Z,nic\n2024-05-01T03:00:00Z,gpu\n"
    plain = tmp_path / "log.csv"
    plain.write_text(text)
    packed = tmp_path / f"log.csv{suffix}"
    compress: dict[str, Callable[[bytes], bytes]] = {".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress}
    packed.write_bytes(compress[suffix](text.encode()))
    expected = _doc(run, str(plain))
    got = _doc(run, str(packed))
    assert got["logs"] == [str(packed)]
    assert {**got, "logs": None} == {**expected, "logs": None}
    assert (got["interruptions"], got["mtbf_s"]) == (2, 1.5 * HOUR)  # 3 h / 2


def test_a_timestamp_column_and_a_cause_column_are_found_by_default(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "gpu.csv"
    log.write_text("Node,Timestamp,Cause\nn1,2024-05-01T00:00:00Z,DBE\nn2,2024-05-01T06:00:00Z,OTB\n"
                   "n3,2024-05-01T09:00:00Z,DBE\n")  # fmt: skip
    doc = _doc(run, str(log))
    assert (doc["time_field"], doc["cause_field"]) == ("Timestamp", "Cause")
    assert doc["causes"] == [{"cause": "DBE", "count": 1, "share": 0.5}, {"cause": "OTB", "count": 1, "share": 0.5}]


@pytest.mark.parametrize(
    ("filters", "kept"),
    [
        (["--where", "event!=fault_end"], 5),  # the empty event too
        # the issue's `event!=`: not empty, not a field called "event!"; the fault_end row passes and is read,
        # but an incident's end is no interruption (docs/model.md §22)
        (["--where", "event!="], 4),
        (["--where", "node~^gpu-0"], 3),
        (["--where", "event in fault_start, fault_end"], 4),
        (["--where-any", "node=gpu-01", "--where-any", "node=gpu-07"], 2),
        (["--where", "event=fault_start", "--where-any", "node~1$", "--where-any", "node~7$"], 3),
    ],
)
def test_where_operators_on_the_command_line(run: Run, tmp_path: Path, filters: list[str], kept: int) -> None:
    log = tmp_path / "faults.jsonl"
    rows = [(1, "fault_start", "gpu-01"), (2, "fault_end", "gpu-01"), (3, "fault_start", "gpu-07"),
            (4, "", "node-3"), (5, "fault_start", "gpu-03"), (6, "fault_start", "node-11")]  # fmt: skip
    log.write_text("".join(json.dumps({"time": t, "event": e, "node": n}) + "\n" for t, e, n in rows))
    doc = _doc(run, str(log), "--time-unit", "h", *filters)
    assert (doc["events_read"], doc["events_kept"]) == (6, kept)
    assert doc["where_any"] == [filters[i + 1] for i, f in enumerate(filters) if f == "--where-any"]


def test_a_tab_separated_trace_with_a_marked_header(run: Run, tmp_path: Path) -> None:
    # A tab-separated table with "# " before the names, epoch seconds (a Failure Trace Archive file, whose
    # own columns --format auto recognises, is read without any flag: tests/test_fta.py).
    log = tmp_path / "trace.tsv"
    log.write_text("# id\tnode\tstate\tstarted\n1\t7\tdown\t0\n2\t9\tdown\t7200\n3\t7\tup\t9000\n"
                   "4\t7\tdown\t10800\n")  # fmt: skip
    doc = _doc(run, str(log), "--time", "started", "--time-unit", "s", "--where", "state=down")
    assert (doc["events_kept"], doc["interruptions"], doc["mtbf_s"]) == (3, 2, 1.5 * HOUR)


def test_naive_timestamps_are_reported_with_a_note(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "naive.csv"
    log.write_text("time\n2024-05-01 00:00\n2024-05-01 02:00\n2024-05-01T03:00:00Z\n")
    result = run("fit", str(log))
    assert result.exit_code == 0, result.stderr
    assert "naive timestamps 2 (read in UTC)" in " ".join(result.stdout.split())
    assert (
        result.stderr == "warning: 2 timestamps have no zone and were read as UTC: give --tz if they are local times\n"
    )
    doc = _doc(run, str(log))
    assert (doc["naive_timestamps"], doc["tz"]) == (2, None) and len(doc["warnings"]) == 1
    local = _doc(run, str(log), "--tz", "Europe/Paris")  # CEST, +2: the naive ones move 2 h earlier
    assert (local["naive_timestamps"], local["tz"], local["warnings"]) == (2, "Europe/Paris", [])
    assert local["window_start_s"] == doc["window_start_s"] - 2 * HOUR


def test_counts_from_a_paper_on_the_command_line(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    doc = run_json("fit", "--failures", "419", "--window", "54d", "--observed-gpus", "16384")
    assert doc["source"] == "counts" and doc["logs"] == []
    assert doc["mtbf_s"] == pytest.approx(54 * 24 * HOUR / 419, rel=1e-12)  # §6: 3.09 h
    assert doc["gpu_mtbf_s"] == pytest.approx(16384 * doc["mtbf_s"], rel=1e-12)
    assert doc == api.fit(failures=419, window="54d", observed_gpus=16384).to_dict()
    result = run("fit", "--failures", "419", "--window", "54d")
    assert result.exit_code == 0, result.stderr
    assert "ckptcalc fit: 419 interruptions in 54.0 d" in result.stdout and "MTBF: 3.09 h" in result.stdout
    bound = run_json("fit", "--failures", "0", "--window", "54d")
    assert bound["mtbf_s"] is None and bound["mtbf_ci95"][1] is None  # §4: only T/ln 20
    target = tmp_path / "paper.toml"
    saved = run("fit", "--failures", "419", "--window", "54d", "--save-preset", str(target))
    assert saved.exit_code == 0, saved.stderr
    scenario = api.load_preset(str(target))
    assert scenario.mtbf_s == pytest.approx(doc["mtbf_s"], rel=5e-4) and scenario.shape is None
    assert scenario.source == "ckptcalc fit --failures 419 --window 54.0 d: a count, no gaps, so exponential"


def test_a_vanishing_p_value_prints_as_a_bound(run: Run, tmp_path: Path) -> None:
    # tests/test_fit.py: 600 gaps of 1 s and 600 of 10⁶ s give p ≈ 10^−2019 (docs/fit.md §8).
    times, t = [0.0], 0.0
    for gap in [1.0, 1e6] * 600:
        t += gap
        times.append(t)
    log = tmp_path / "burst.csv"
    log.write_text("time\n" + "".join(f"{x}\n" for x in times))
    result = run("fit", str(log), "--time-unit", "s")
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "test of k = 1: p < 1e-300" in text and "p = 0" not in text
    weibull = _doc(run, str(log), "--time-unit", "s")["weibull"]
    assert (weibull["p_value"], weibull["p_value_underflow"]) == (0.0, True)


def test_near_zero_gaps_propose_coalescing(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "near.csv"
    log.write_text("time\n" + "".join(f"{t}\n" for t in (0, 30, 3600, 3640, 7200, 7500, 14400)))
    result = run("fit", str(log), "--time-unit", "s")
    assert result.exit_code == 0, result.stderr
    assert "2 of 6 gaps are under 1 min" in result.stderr and "--coalesce 5min" in result.stderr
    text = " ".join(result.stdout.split())
    assert "Coalescing: interruptions and Weibull k by window" in text
    assert "0 (none) (used) 6 40.0 min" in text and "5.00 min 3 1.33 h" in text
    doc = _doc(run, str(log), "--time-unit", "s", "--coalesce", "5min")
    assert doc["coalescing"] is None  # coalesced within 5 min: no gap under 1 min is left
    assert doc["near_zero_gaps"] == 0


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--where", "event=="], "--where"),
        (["--where", "time>5"], "--where"),
        (["--where", "=x"], "--where"),
        (["--where-any", "node~("], "--where-any"),
        (["--tz", "Mars/Olympus"], "--tz"),
        (["--tz", "+25:00"], "--tz"),
        (["--time-format", "%Q"], "--time-format"),
        (["--time-format", "m/d/Y"], "--time-format"),
        (["--failures", "3", "--window", "1d"], "--failures"),
        (["--failures", "3"], "--failures"),
    ],
)
def test_fit_refuses_malformed_data_options(run: Run, tmp_path: Path, args: list[str], culprit: str) -> None:
    log = tmp_path / "log.csv"
    log.write_text("time\n1\n2\n")
    assert_usage_error(run("fit", str(log), "--time-unit", "h", *args), culprit)


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--failures", "3"], "--window"),
        (["--window", "1d"], "--failures"),
        (["--failures", "2.5", "--window", "1d"], "--failures"),
        (["--failures", "3", "--window", "0s"], "--window"),
        (["--failures", "3", "--window", "1d", "--coalesce", "5min"], "--coalesce"),
        ([], "LOG..."),
    ],
)
def test_counts_need_both_and_nothing_of_a_log(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("fit", *args), culprit)


def test_analyze_reads_naive_timestamps_in_the_zone_given(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    events = [("2024-05-01T00:00:00", "run_start"), ("2024-05-01T01:00:00", "run_end")]
    log.write_text("".join(json.dumps({"time": t, "event": e}) + "\n" for t, e in events))
    assert_usage_error(run("analyze", str(log), "--tz", "nowhere"), "--tz")
    result = run("analyze", str(log), "--tz", "+02:00", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["wall_s"] == HOUR


def test_fit_reads_a_simulated_event_log_without_flags(run_json: RunJson, tmp_path: Path) -> None:
    # A run's event log in seconds (what simulate --events writes): its failures are the incidents, time_s
    # in seconds, the other events ignored and counted. Failures at 100, 700 and 1300 s: two gaps of
    # 600 s, so n = 2 and M̂ = T/n = 1200/2 = 600 s (docs/fit.md §3, §4).
    log = tmp_path / "sim.csv"
    log.write_text(
        "time_s,event,level,resumed_from,async_persist_end\n0.0,run_start,,,\n50.0,checkpoint_start,storage,,\n"
        "60.0,checkpoint_end,storage,,\n100.0,failure,,,\n200.0,restart_end,,50.0,\n700.0,failure,,,\n"
        "800.0,restart_end,,50.0,\n1300.0,failure,,,\n1400.0,run_end,,,\n"
    )
    doc = run_json("fit", str(log))
    assert doc["time_field"] == "time_s"
    assert (doc["events_kept"], doc["reading"]["ignored"], doc["interruptions"]) == (3, 6, 2)
    assert doc["mtbf_s"] == pytest.approx(600.0, rel=1e-12)


def test_fit_of_simulate_events_matches_the_filtered_reading(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    log = tmp_path / "sim.csv"
    made = run("simulate", "--cycles", "300", "--seed", "3", "--events", str(log), "--json")
    assert made.exit_code == 0, made.stderr
    plain = run_json("fit", str(log))
    named = run_json("fit", str(log), "--time", "time_s", "--time-unit", "s", "--where", "event=failure")
    assert plain["events_kept"] == named["events_kept"] == 300
    assert plain["mtbf_s"] == named["mtbf_s"] and plain["weibull"] == named["weibull"]


def test_the_causes_table_lists_the_most_frequent_and_sums_the_rest(run: Any, tmp_path: Path) -> None:
    """A log of 30 distinct causes (an Xid line with its pid each, one of them three times; the first line opens
    the window and is not counted: 29 causes over 31 interruptions) lists the 20 most frequent and one row for
    the other 9, with their count and share: a million such lines printed a million rows."""
    log = tmp_path / "xids.csv"
    causes = [f"Xid 79: pid={i}" for i in range(30)] + ["Xid 79: pid=7"] * 2
    log.write_text("time,cause\n" + "".join(f"{k * 3600},{c}\n" for k, c in enumerate(causes)), encoding="utf-8")
    out = run("fit", str(log), "--time-unit", "s").stdout
    block = out.split("Causes")[1].split("\n\n")[0]
    rows = [line for line in block.splitlines() if line.startswith("Xid 79")]
    assert len(rows) == 20 and rows[0].split()[-3:] == ["3", "9.68", "%"]  # pid 7: 3 of the 31 after the first
    assert block.splitlines()[-1].split() == ["9", "more", "causes", "(--json", "gives", "each)", "9", "29.0", "%"]
