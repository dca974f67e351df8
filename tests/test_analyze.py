"""``ckptcalc analyze`` and ``simulate --events`` (docs/model.md §11): a hand-worked log, the round trip
through a simulated timeline, and bad logs."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from references import daly

from ckptcalc import api

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
HAND = str(Path(__file__).parent / "data" / "hand-run.jsonl")
MIN = 60.0


def test_hand_worked_log(run_json: RunJson) -> None:
    # docs/model.md §11.3: 120 min of run, worked out by hand there.
    doc = run_json("analyze", HAND, "--time-unit", "min")
    r = doc["realised"]
    assert r["useful"] == pytest.approx(53 / 120, rel=1e-12)
    assert r["write"] == pytest.approx(9 / 120, rel=1e-12)
    assert r["rework"] == pytest.approx(24 / 120, rel=1e-12)
    assert r["restart"] == pytest.approx(34 / 120, rel=1e-12)
    assert r["effective"] == r["useful"] == r["goodput"]
    assert doc["lines"] == {"read": 20, "used": 19, "unknown_events": 1, "skipped_bad": 0, "progress": 1}
    m = doc["measured"]
    assert (m["write_s"], m["write_p90_s"], m["restart_s"], m["restart_p90_s"]) == (120.0, 120.0, 600.0, 600.0)
    assert m["restarts"] == 2  # the restart a second failure interrupted is not a restart time
    assert m["interval_s"] == 600.0
    assert m["approximate"] == []  # every quantile from its values
    assert m["failures"] == 4 and m["mtbf_s"] == 30 * MIN
    # χ²(0.975; 10) = 20.48318, χ²(0.025; 8) = 2.179731
    assert m["mtbf_ci95"] == [
        pytest.approx(240 * MIN / 20.48318, rel=1e-6),
        pytest.approx(240 * MIN / 2.179731, rel=1e-6),
    ]
    causes = {c["cause"]: (c["failures"], c["lost_s"]) for c in doc["causes"]}
    assert causes == {"gpu": (2, 34 * MIN), "nic": (2, 24 * MIN)}
    # The model at δ = 2 min, r = 10 min, M = 30 min, τ = 10 min: Daly's exact form.
    model = doc["model"]
    assert model["effective_at_interval"] == pytest.approx(daly(600.0, 120.0, 600.0, 1800.0), rel=1e-12)
    assert model["effective_at_interval"] == pytest.approx(0.485628, abs=5e-7)
    assert model["difference_pp"] == pytest.approx((53 / 120 - model["effective_at_interval"]) * 100, rel=1e-12)


def test_markdown_and_table(run: Run) -> None:
    markdown = run("analyze", HAND, "--time-unit", "min", "--markdown").stdout
    assert markdown.startswith("# Run analysis:") and "| re-done work | 20.0 % |" in markdown
    table = run("analyze", HAND, "--time-unit", "min").stdout
    assert "Where the run's time went" in table and "Time lost per failure cause" in table
    assert_usage_error(run("analyze", HAND, "--time-unit", "min", "--json", "--markdown"), "--markdown")


def test_windows_and_slo(run_json: RunJson) -> None:
    doc = run_json("analyze", HAND, "--time-unit", "min", "--window", "1h", "--slo", "0.5")
    first, second = doc["windows"]
    # First hour: useful [0,10] + [12,22] kept = 20 min; stalls 4 + 1; restarts 10 + 9; rework 6 + 10.
    assert first["effective"] == pytest.approx(20 / 60, rel=1e-12)
    assert first["restart"] == pytest.approx(19 / 60, rel=1e-12)
    assert second["effective"] == pytest.approx(33 / 60, rel=1e-12)
    assert (first["below_slo"], second["below_slo"]) == (True, False)


@pytest.mark.parametrize(
    ("preset", "flags"),
    [
        ("llama3-405b", ["--cycles", "2000"]),
        # At its optimum (19 s) the asynchronous preset checkpoints 570 times per failure: 1.1 million lines
        # for 1000 failures. Every 5 minutes, 400 failures take 31,000 lines and still pin the stall, the
        # persist, the restart and the interval (each within 1 %, and off by far more when measured wrongly).
        ("llama3-405b-async", ["--interval", "5min", "--cycles", "400"]),
    ],
)
def test_simulated_timeline_round_trip(run_json: RunJson, tmp_path: Path, preset: str, flags: list[str]) -> None:
    # docs/model.md §11.4: analyze recovers what simulate ran.
    log = tmp_path / "run.csv"
    sim = run_json("simulate", "--preset", preset, *flags, "--seed", "3", "--events", str(log))
    doc = run_json("analyze", str(log))  # the log's time_s column says its unit
    job = api.job(preset)
    level = job.config.levels()[-1]
    m = doc["measured"]
    assert m["write_s"] == pytest.approx(float(level.stall_s), rel=0.01)
    if level.lag_s:
        assert m["levels"][0]["persist_s"] == pytest.approx(float(level.lag_s), rel=0.01)
    assert m["restart_s"] == pytest.approx(float(job.config.restart_s), rel=0.01)
    assert m["interval_s"] == pytest.approx(sim["interval_s"], rel=0.01)
    low, high = m["mtbf_ci95"]
    assert low <= float(job.config.mtbf_s) <= high
    assert doc["realised"]["effective"] == pytest.approx(sim["effective"], abs=0.002)
    assert doc["model"]["agrees"] is True
    # The model at the measured inputs predicts the run it measured (the failures drawn included, so the
    # few hundred of a short run do not blur it the way a comparison with the preset's MTBF would).
    assert doc["model"]["effective_at_interval"] == pytest.approx(sim["effective"], abs=0.002)


def test_save_preset_writes_the_measured_inputs(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "measured.toml"
    result = run("analyze", HAND, "--time-unit", "min", "--save-preset", str(target))
    assert result.exit_code == 0, result.stderr
    scenario = api.load_preset(str(target))
    # llama3-405b's 6.48 TB written in the measured 2 min; restart, MTBF, its interval and the interval used.
    assert scenario.bandwidth == pytest.approx(6.48e12 / 120.0, rel=1e-12)
    assert (scenario.restart_s, scenario.mtbf_s, scenario.interval_s) == (600.0, 1800.0, 600.0)
    # The interval is written at 4 significant figures: it moves no effective time.
    assert scenario.mtbf_ci95 is not None and scenario.mtbf_ci95[0] == pytest.approx(240 * MIN / 20.48318, rel=5e-4)
    assert scenario.source is not None and HAND in scenario.source and "4 failures" in scenario.source
    assert_usage_error(run("analyze", HAND, "--time-unit", "min", "--save-preset", str(target)), "--save-preset")


TWO_LEVELS = """time,event,level,resumed_from
0,run_start,,
10,checkpoint_start,memory,
11,checkpoint_end,memory,
21,checkpoint_start,memory,
22,checkpoint_end,memory,
32,checkpoint_start,storage,
35,checkpoint_end,storage,
45,checkpoint_start,memory,
46,checkpoint_end,memory,
50,failure,,
52,restart_end,,45
62,checkpoint_start,memory,
63,checkpoint_end,memory,
73,checkpoint_start,storage,
76,checkpoint_end,storage,
80,failure,,
90,restart_end,,73
100,checkpoint_start,memory,
101,checkpoint_end,memory,
110,run_end,,
"""


@pytest.mark.parametrize("name", ["memory", "storage"])
def test_one_level_named_memory_is_one_level(name: str, tmp_path: Path) -> None:
    """docs/model.md §11.2: the share served from memory and the storage period are two-level figures;
    a log whose only level is named memory is one level, measured and modelled as if it were storage's."""
    docs = []
    for level in (name, "storage"):
        log = tmp_path / f"{level}.csv"
        log.write_text(TWO_LEVELS.replace(",storage,", ",memory,").replace(",memory,", f",{level},"))
        docs.append(api.analyze(str(log), time_unit="min").to_dict())
    m = docs[0]["measured"]
    assert [level["name"] for level in m["levels"]] == [name]
    assert (m["memory_share"], m["storage_every"], m["interval_s"]) == (None, None, 10 * MIN)
    assert docs[0]["model"] == docs[1]["model"] and docs[0]["model"] is not None


def test_two_levels(run_json: RunJson, tmp_path: Path) -> None:
    log = tmp_path / "two.csv"
    log.write_text(TWO_LEVELS)
    doc = run_json("analyze", str(log), "--time-unit", "min")
    m = doc["measured"]
    assert [level["name"] for level in m["levels"]] == ["memory", "storage"]
    assert m["memory_share"] == 0.5 and m["storage_every"] == 3
    assert m["interval_s"] == 10 * MIN
    assert doc["model"] is not None
    # Lost: [45, 50] (stall 1) and [73, 80] (stall 3) of work: 4 + 4 min; restarts 2 + 10; stalls 11.
    r = doc["realised"]
    assert r["rework"] == pytest.approx(8 / 110) and r["restart"] == pytest.approx(12 / 110)
    assert r["write"] == pytest.approx(11 / 110)


@pytest.mark.parametrize(
    ("lines", "where", "message"),
    [
        (['{"time": 0, "event": "run_start"}', "{not json"], ":2", "malformed JSON"),
        (['{"time": 0, "event": "run_start"}', '{"time": "yesterday", "event": "failure"}'], ":2", "time"),
        (['{"time": 0, "event": "run_start"}', '{"time": 5, "event": "checkpoint_end"}'], ":2", "without a"),
        (['{"time": 5, "event": "failure"}'], ":1", "before run_start"),
        (['{"time": 1, "event": "progress"}', '{"time": 2, "event": "run_end"}'], ":1", "before run_start"),
        (['{"time": 0, "event": "run_start"}', '{"time": 5, "event": "failure"}', '{"time": 4, "event": "failure"}'],
         ":3", "backwards"),
        (['{"time": 0, "event": "run_start"}', '{"time": 0, "event": "run_start"}'], ":2", "second run_start"),
        (['{"time": 0, "event": "run_start"}', '{"time": 5, "event": "restart_end"}'], ":2", "without a failure"),
        (['{"time": 0, "event": "run_start"}', '{"time": 5, "event": "failure"}',
          '{"time": 9, "event": "restart_end", "resumed_from": 7}'], ":3", "later than the failure"),
        (['{"time": 0, "event": "run_start"}', '{"time": 5}'], ":2", "no 'event'"),
        (['{"time": 0, "event": "run_start"}', "[1, 2]"], ":2", "JSON object"),
        (["time,event", "0,run_start", "5,failure,extra"], ":3", "fields"),
        (["time,kind", "0,run_start"], ":1", "no column 'event' in the header"),
        (['{"time": 0, "event": "heartbeat"}'], "", "nothing recognised in 1 line"),
    ],
)  # fmt: skip
def test_bad_logs_name_the_line(run: Run, tmp_path: Path, lines: list[str], where: str, message: str) -> None:
    log = tmp_path / "bad.log"
    log.write_text("\n".join(lines) + "\n")
    result = run("analyze", str(log), "--time-unit", "s", "--json")
    assert_usage_error(result, f"{log}{where}")
    assert message in result.stderr


def test_skip_bad_counts_and_goes_on(run_json: RunJson, tmp_path: Path) -> None:
    log = tmp_path / "some-bad.jsonl"
    text = Path(HAND).read_text().replace('{"time": 41, "event": "heartbeat"}', "{broken")
    log.write_text(text)
    doc = run_json("analyze", str(log), "--time-unit", "min", "--skip-bad")
    assert doc["lines"]["skipped_bad"] == 1
    assert doc["realised"]["useful"] == pytest.approx(53 / 120)


def test_numeric_times_need_a_unit(run: Run) -> None:
    assert_usage_error(run("analyze", HAND, "--json"), "--time-unit")


def test_special_files_are_refused(run: Run, tmp_path: Path) -> None:
    assert_usage_error(run("analyze", str(tmp_path), "--time-unit", "s"), str(tmp_path))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = run("analyze", str(fifo), "--time-unit", "s")
    assert_usage_error(result, str(fifo))
    assert "regular file" in result.stderr


def test_stdin(run: Run) -> None:
    result = run("analyze", "-", "--time-unit", "min", "--json", input=Path(HAND).read_text())
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["realised"]["useful"] == pytest.approx(53 / 120)


def test_timestamps(run_json: RunJson, tmp_path: Path) -> None:
    log = tmp_path / "stamps.csv"
    log.write_text(
        "time,event,resumed_from\n2026-01-01T00:00:00Z,run_start,\n2026-01-01T01:00:00Z,checkpoint_start,\n"
        "2026-01-01T01:01:00+00:00,checkpoint_end,\n2026-01-01T02:00:00Z,failure,\n"
        "2026-01-01T02:10:00Z,restart_end,2026-01-01T01:00:00Z\n2026-01-01T04:00:00Z,run_end,\n"
    )
    doc = run_json("analyze", str(log))
    assert doc["time_kind"] == "timestamp" and doc["wall_s"] == 4 * 3600.0
    # Lost [1:00, 2:00] minus the 1-minute stall; restart 10 minutes.
    assert doc["realised"]["rework"] == pytest.approx(59 / 240) and doc["realised"]["restart"] == pytest.approx(
        10 / 240
    )
    assert doc["model"] is None and "no model" in doc["warnings"][0]


def test_events_are_refused_for_two_levels_and_never_overwrite(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "sim.csv"
    assert_usage_error(run("simulate", "--preset", "gemini-inmemory", "--cycles", "1e4", "--events", str(log)),
                       "--events")  # fmt: skip
    assert not log.exists()
    log.write_text("keep\n")
    assert_usage_error(run("simulate", "--cycles", "1e4", "--events", str(log)), "--events")
    assert log.read_text() == "keep\n"


def test_example_log_in_docs_is_what_simulate_writes(tmp_path: Path) -> None:
    # docs/example-run.csv: ckptcalc simulate --size 6.5TB --bw 20GB/s --mtbf 15min --cycles 200 --seed 1 --events
    fresh = tmp_path / "run.csv"
    api.simulate("llama3-405b", size="6.5TB", bw="20GB/s", mtbf="15min", cycles=200, seed=1, events=fresh)
    shipped = Path(__file__).parent.parent / "docs" / "example-run.csv"
    assert fresh.read_text() == shipped.read_text()
    assert math.isclose(api.analyze(str(shipped)).realised["effective"], 0.204159, abs_tol=5e-7)


def test_times_too_large_for_the_arithmetic_are_refused(run: Run, tmp_path: Path) -> None:
    log = tmp_path / "huge.jsonl"
    log.write_text('{"time": 0, "event": "run_start"}\n{"time": 1e300, "event": "failure"}\n')
    result = run("analyze", str(log), "--time-unit", "s", "--json")
    assert_usage_error(result, f"{log}:2")
    assert "out of range" in result.stderr


def test_the_effective_interval_stays_a_share(run_json: RunJson, tmp_path: Path) -> None:
    log = tmp_path / "open.jsonl"
    lines = ['{"time": 0, "event": "run_start"}', '{"time": 10, "event": "checkpoint_start"}']
    log.write_text("\n".join([*lines, '{"time": 100, "event": "run_end"}']) + "\n")
    low, high = run_json("analyze", str(log), "--time-unit", "s")["realised"]["effective_ci95"]
    assert 0.0 <= low <= high <= 1.0


def test_event_logs_have_a_size_limit(run: Run, tmp_path: Path) -> None:
    result = run("simulate", "--cycles", "2e6", "--events", str(tmp_path / "big.csv"))
    assert_usage_error(result, "--cycles")
    assert not (tmp_path / "big.csv").exists()


# Asynchronous persists: the failure at 240 s comes after the second checkpoint's stall (200–210 s) but
# before its persist is durable (250 s), so training resumes from the first one (100 s), durable at 130 s.
ASYNC_FAILURE = """time,event,async_persist_end
0,run_start,
100,checkpoint_start,
110,checkpoint_end,130
200,checkpoint_start,
210,checkpoint_end,250
240,failure,
260,restart_end,
400,run_end,
"""


def test_an_asynchronous_failure_resumes_from_the_last_durable_checkpoint() -> None:
    from ckptcalc.logs import analyze

    result = analyze.analyze_timeline(analyze.parse(ASYNC_FAILURE, name="async.csv", time_unit="s"))
    assert result.timeline.episodes.resumed_from_s.tolist() == [100.0]  # from the stall's end it would be 200
    # Lost: [100, 240] less the two 10 s stalls in it = 120 s (resuming from 200 s would lose 30 s);
    # restart 240–260 = 20 s; stalls 20 s; useful 400 − 20 − 20 − 120 = 240 s.
    split = result.realised
    assert (split.useful, split.write, split.rework, split.restart) == pytest.approx((0.6, 0.05, 0.3, 0.05), rel=1e-12)
    assert [(c.cause, c.failures, c.lost_s) for c in result.causes] == [("unknown", 1, 140.0)]
    assert result.levels[0].persist_s == pytest.approx((20.0 + 40.0) / 2, rel=1e-12)


def _stalls_in_every_other_batch() -> str:
    # 2000 s of run, so the 20 batches are 100 s each; odd batches hold a 20 s stall, even ones none.
    lines = ["time,event", "0,run_start"]
    for batch in range(1, 20, 2):
        lines += [f"{batch * 100 + 10},checkpoint_start", f"{batch * 100 + 30},checkpoint_end"]
    return "\n".join([*lines, "2000,run_end"]) + "\n"


def test_the_interval_of_the_effective_time_uses_students_t_for_19_degrees_of_freedom() -> None:
    from ckptcalc.logs import analyze

    result = analyze.analyze_timeline(analyze.parse(_stalls_in_every_other_batch(), name="b.csv", time_unit="s"))
    assert result.realised.effective == pytest.approx(0.9, rel=1e-12)  # 200 s of stalls in 2000 s
    # Batch effective times: ten at 1.0 and ten at 0.8, mean 0.9, sample sd √(20 × 0.1² / 19).
    # Half-width t · sd / √20 = t · 0.1 / √19, with t = 2.0930240544 (Student's t, 0.975 quantile, 19 df,
    # from tables; scipy.stats.t.ppf(0.975, 19) gives the same).
    half = 2.093024054408263 * 0.1 / math.sqrt(19)
    low, high = result.effective_ci95
    assert (low, high) == pytest.approx((0.9 - half, 0.9 + half), rel=1e-12)
    assert half == pytest.approx(0.0480173, abs=1e-7)


# A storage checkpoint (12–14) completes inside a memory one (10–) that the failure at 16 cuts short: the
# stalls overlap, so the time stalled is their union, 10–16 = 6 s, not 6 + 2. The restart is 16–20; the
# failure resumes from the storage checkpoint (durable at 14), and 12–16 holds no work to redo.
OVERLAPPING_STALLS = """time,event,level
0,run_start,
10,checkpoint_start,memory
12,checkpoint_start,storage
14,checkpoint_end,storage
16,failure,
20,restart_end,
30,run_end,
"""


def test_overlapping_stalls_count_once() -> None:
    from ckptcalc.logs import analyze

    result = analyze.analyze_timeline(analyze.parse(OVERLAPPING_STALLS, name="overlap.csv", time_unit="s"))
    assert result.timeline.episodes.resumed_from_s.tolist() == [12.0]
    split = result.realised
    assert (split.useful, split.write, split.rework, split.restart) == pytest.approx((20 / 30, 6 / 30, 0.0, 4 / 30))


# ------------------------------------------------------------------ quantiles past the exact buffer


def test_quantiles_are_numpys_while_the_values_fit() -> None:
    import numpy

    from ckptcalc.logs.analyze import EXACT_VALUES, Quantiles

    values = numpy.random.default_rng(7).exponential(3.0, EXACT_VALUES)
    q = Quantiles()
    for at in range(0, values.size, 4096):
        q.extend(values[at : at + 4096])
    assert not q.approximate and q.rank_error == 0.0 and q.count == EXACT_VALUES
    assert q.quantile(0.9) == float(numpy.percentile(values, 90))
    assert q.median() == float(numpy.median(values)) and q.mean == float(values.mean())


def test_quantiles_past_the_buffer_come_from_the_sketch_within_its_rank_error() -> None:
    import numpy

    from ckptcalc.logs.analyze import EXACT_VALUES, Quantiles

    values = numpy.arange(1.0, 3 * EXACT_VALUES + 1.0)  # 1 .. 300 000: the value at rank r is r itself
    q = Quantiles()
    q.extend(values[:EXACT_VALUES])
    exact = q.approximate
    q.extend(values[EXACT_VALUES:])
    assert (exact, q.approximate, q.count) == (False, True, values.size)
    assert 0.0 < q.rank_error < 0.005  # KLL with k = 1000: about 0.3 % of the ranks
    for p in (0.1, 0.5, 0.9):
        assert abs(q.quantile(p) / values.size - p) <= q.rank_error
    assert q.mean == pytest.approx((values.size + 1) / 2, rel=1e-12)  # the sum is kept whole


def test_a_log_past_the_buffer_says_which_quantiles_are_approximate(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ckptcalc.logs import analyze as reading

    log = tmp_path / "sim.csv"
    assert run("simulate", "--cycles", "300", "--seed", "2", "--events", str(log)).exit_code == 0
    exact = json.loads(run("analyze", str(log), "--json").stdout)
    assert exact["measured"]["approximate"] == []
    monkeypatch.setattr(reading, "EXACT_VALUES", 50)  # 300 restarts and thousands of checkpoints: past it
    result = run("analyze", str(log), "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    m, e = doc["measured"], exact["measured"]
    assert m["approximate"] == ["storage.write_p90_s", "restart_p90_s", "interval_s"]
    assert doc["realised"] == exact["realised"]  # the split never comes from a sketch
    assert m["write_s"] == pytest.approx(e["write_s"], rel=1e-12)  # a mean from the whole sum
    assert m["restart_p90_s"] == pytest.approx(e["restart_p90_s"], rel=0.05)
    assert m["interval_s"] == pytest.approx(e["interval_s"], rel=0.05)
    table = run("analyze", str(log))
    assert "p90 ≈" in table.stdout and "KLL sketch" in table.stdout
