"""Silent events in a run's event log: ``silent_detected`` and ``rollback``, read and checked line by line.

Each rule a line can break is refused naming its FILE:LINE (or skipped and counted with ``--skip-bad``),
and the canonical log (``ckptcalc events``) keeps the events, so that it reads back to the same ones."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc.errors import InputError
from ckptcalc.logs import analyze

Run = Callable[..., Any]

# docs/model.md §11.7: a 120-minute run (--time-unit min), worked by hand there: a silent event seen at 50
# that began at 35, rolled back to the checkpoint started at 20 with 3 minutes skipped; a failure; a
# second one, of unknown onset, rolled back to the checkpoint started at 100 (durable at 105).
FIXTURE = Path(__file__).parent / "data" / "silent-run.jsonl"
LOG = FIXTURE.read_text().splitlines()


def read(lines: list[str], **options: Any) -> analyze.Timeline:
    return analyze.parse(lines, name="run.jsonl", time_unit="min", **options)


def test_the_events_are_read_in_seconds() -> None:
    silent = read(LOG).silent
    assert silent is not None
    assert silent.detect_s.tolist() == [3000.0, 6600.0]
    assert silent.onset_s[0] == 2100.0 and math.isnan(silent.onset_s[1])
    assert silent.rollback_s.tolist() == [3120.0, 6660.0]
    assert silent.to_s.tolist() == [1200.0, 6000.0]
    assert silent.skip_s.tolist() == [180.0, 0.0]  # 3 minutes; none given is 0
    assert silent.causes == ("loss_spike",) and silent.cause.tolist() == [0, -1]


def test_a_log_without_silent_events_has_none() -> None:
    assert read([line for line in LOG if "silent_detected" not in line and "rollback" not in line]).silent is None


def test_a_detection_without_a_rollback_and_one_to_the_run_start() -> None:
    text = [*LOG[:6], '{"time": 52, "event": "rollback", "to": 0}', *LOG[7:13], *LOG[15:]]
    silent = read(text).silent
    assert silent is not None
    assert silent.to_s.tolist() == [0.0] and silent.detect_s.tolist() == [3000.0]
    unanswered = read(LOG[:6] + LOG[15:]).silent
    assert unanswered is not None and math.isnan(unanswered.rollback_s[0]) and math.isnan(unanswered.to_s[0])


# Each replacement (line number: new text, 1-based) breaks one rule of the line it names.
BAD = [
    ({6: '{"time": 50, "event": "silent_detected", "onset": 55}'}, ":6: onset is later than the silent_detected"),
    ({6: '{"time": 50, "event": "rollback", "to": 20}'}, ":6: rollback without a silent_detected before it"),
    ({8: '{"time": 60, "event": "rollback", "to": 20}'}, ":8: rollback without a silent_detected before it"),
    ({7: '{"time": 52, "event": "rollback", "to": 51}'}, ":7: rollback to a time after its silent_detected (line 6)"),
    ({7: '{"time": 52, "event": "rollback", "to": 30}'}, ":7: rollback to 1800 s: no checkpoint durable by then"),
    ({7: '{"time": 52, "event": "rollback"}'}, ":7: a rollback names the checkpoint it went back to (to)"),
    ({7: '{"time": 52, "event": "rollback", "to": 20, "skip": -1}'}, ":7: skip is a duration of at least 0"),
    ({7: '{"time": 52, "event": "rollback", "to": 20, "skip": "abc"}'}, ":7: skip is a duration of at least 0"),
    ({7: '{"time": 52, "event": "rollback", "to": 20, "skip": true}'}, ":7: skip is a duration of at least 0"),
    # The checkpoint started at 100 is durable only at 105 (its persist's end): not by 104.
    (
        {14: '{"time": 103, "event": "silent_detected"}', 15: '{"time": 104, "event": "rollback", "to": 100}'},
        ":15: rollback to 6000 s: no checkpoint durable by then",
    ),
]


def broken(replacements: dict[int, str]) -> list[str]:
    text = list(LOG)
    for line, replacement in replacements.items():
        text[line - 1] = replacement
    return text


@pytest.mark.parametrize(("replacements", "culprit"), BAD)
def test_bad_silent_events_name_the_line(replacements: dict[int, str], culprit: str) -> None:
    with pytest.raises(InputError) as error:
        read(broken(replacements))
    assert f"run.jsonl{culprit}" in str(error.value)
    # --skip-bad drops the line whole and counts it.
    assert read(broken(replacements), skip_bad=True).skipped_bad >= 1


def test_a_skipped_detection_leaves_its_rollback_without_one() -> None:
    timeline = read(broken({6: '{"time": 50, "event": "silent_detected", "onset": 55}'}), skip_bad=True)
    assert timeline.skipped_bad == 2  # line 6, then line 7 (no detection before it)
    assert timeline.silent is not None and timeline.silent.detect_s.tolist() == [6600.0]


def test_the_command_refuses_a_bad_line(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(broken({7: '{"time": 52, "event": "rollback", "to": 51}'})) + "\n")
    assert_usage_error(run("analyze", str(path), "--time-unit", "min"), "run.jsonl:7: rollback to a time after")
    skipped = run("analyze", str(path), "--time-unit", "min", "--skip-bad", "--json")
    assert skipped.exit_code == 0, skipped.stderr
    assert json.loads(skipped.stdout)["lines"]["skipped_bad"] == 1


def test_the_canonical_log_keeps_the_silent_events(run: Run, tmp_path: Path) -> None:
    source = tmp_path / "run.jsonl"
    source.write_text("\n".join(LOG) + "\n")
    events = run("events", str(source), "--time-unit", "min")
    assert events.exit_code == 0, events.stderr
    # Times and the skip in seconds, the time_s log's unit.
    assert '"event": "silent_detected", "cause": "loss_spike", "onset": 2100.0}' in events.stdout
    assert '"event": "rollback", "to": 1200.0, "skip": 180.0}' in events.stdout
    again = analyze.parse(events.stdout.splitlines(), name="again.jsonl").silent
    first = read(LOG).silent
    assert again is not None and first is not None
    for key in ("detect_s", "rollback_s", "to_s", "skip_s"):
        assert getattr(again, key).tolist() == getattr(first, key).tolist(), key
    csv = tmp_path / "again.csv"
    assert run("events", str(source), "--time-unit", "min", "--output", str(csv)).exit_code == 0
    assert csv.read_text().splitlines()[0].endswith(",quorum_end,onset,to,skip")
    back = analyze.read(str(csv)).silent
    assert back is not None and back.skip_s.tolist() == [180.0, 0.0]


def test_the_event_schema_names_the_fields(run: Run) -> None:
    schema = json.loads(run("schema", "event").stdout)
    assert {"onset", "to", "skip"} <= set(schema["properties"])
    assert "silent_detected or rollback" in schema["properties"]["event"]["description"]


def test_the_split_counts_each_lost_span_once() -> None:
    """docs/model.md §11.7: the silent loss is the kept work rolled back past (20–50 less the stalls 20–22
    and 40–42: 26) and the skip after the rollback (52–55: 3), and 100–110 less the stall 100–102 (8): 37
    of 120 minutes.
    The stalls (8), the restart 70–80 (10) and the failure's rework 62–70 (8) stay theirs."""
    realised = analyze.analyze_timeline(read(LOG)).realised
    hand = {"useful": 57 / 120, "write": 8 / 120, "rework": 8 / 120, "restart": 10 / 120, "silent": 37 / 120}
    for key, value in hand.items():
        assert getattr(realised, key) == pytest.approx(value, abs=1e-12), key
    assert sum(hand.values()) == pytest.approx(1.0, abs=1e-12)


def test_a_silent_span_inside_a_failures_rework_is_not_counted_again() -> None:
    # A failure at 48 back to 20 (restart to 49): 20–48 is rework; the detection at 50 rolls back to
    # 20 too, so only 48–50 (less the restart 48–49) and the skip 52–55 are silent.
    text = [*LOG[:5], '{"time": 48, "event": "failure"}', '{"time": 49, "event": "restart_end", "resumed_from": 20}',
            *LOG[5:7], *LOG[7:13], *LOG[15:]]  # fmt: skip
    realised = analyze.analyze_timeline(read(text)).realised
    assert realised.silent == pytest.approx(4 / 120, abs=1e-12)  # 49–50 and 52–55
    assert realised.rework == pytest.approx((28 - 4 + 8) / 120, abs=1e-12)  # 20–48 less stalls, and 62–70


def test_what_the_silent_events_measured() -> None:
    """docs/model.md §11.7: 24 a day (2.90651 to 86.6963), latency 15 min, 43 min lost."""
    from scipy.stats import chi2

    measured = analyze.analyze_timeline(read(LOG)).silent
    assert measured is not None
    assert (measured.events, measured.rollbacks, measured.onsets) == (2, 2, 1)
    assert measured.per_day == pytest.approx(24.0, rel=1e-12)  # 2 in 120 minutes
    assert measured.mtbf_s == 3600.0
    wall = 7200.0
    low, high = measured.per_day_ci95
    assert low == pytest.approx(chi2.ppf(0.025, 4) / (2 * wall) * 86400, rel=1e-9)
    assert high == pytest.approx(chi2.ppf(0.975, 6) / (2 * wall) * 86400, rel=1e-9)
    assert (low, high) == pytest.approx((2.90651, 86.6963), rel=1e-5)
    # One onset: 50 − 35 minutes; no interval from one.
    assert (measured.detect_latency_s, measured.detect_latency_p90_s) == (900.0, 900.0)
    assert measured.detect_latency_ci95 is None
    # Lost: 50 − 20 + 3 and 110 − 100 minutes.
    assert (measured.lost_s, measured.lost_per_event_s, measured.skip_s) == (2580.0, 1290.0, 90.0)


def test_the_latency_interval_from_two_onsets() -> None:
    from scipy.stats import t as student

    text = broken({14: '{"time": 110, "event": "silent_detected", "onset": 105}'})
    measured = analyze.analyze_timeline(read(text)).silent
    assert measured is not None and measured.onsets == 2
    latencies = [900.0, 300.0]  # 15 and 5 minutes
    assert measured.detect_latency_s == 600.0
    assert measured.detect_latency_p90_s == pytest.approx(840.0, rel=1e-12)  # 300 + 0.9 × 600
    half = student.ppf(0.975, 1) * 424.26406871192853 / math.sqrt(2)  # s = 600/√2
    assert measured.detect_latency_ci95 == pytest.approx((0.0, 600.0 + half), rel=1e-9)
    assert sum(latencies) / 2 == measured.detect_latency_s


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(LOG) + "\n")
    return path


def test_the_json_document_has_the_silent_keys_of_its_schema(run: Run, log_path: Path) -> None:
    from jsonschema import Draft202012Validator

    from ckptcalc.commands import analyze, events

    result = run("analyze", str(log_path), "--time-unit", "min", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    Draft202012Validator(analyze.schema()).validate(doc)
    assert doc["realised"]["silent"] == pytest.approx(37 / 120, abs=1e-12)
    parts = ("useful", "write", "rework", "restart", "groups_down", "quorum", "overhead", "silent")
    assert sum(doc["realised"][key] for key in parts) == pytest.approx(1.0, abs=1e-12)
    s = doc["measured"]["silent"]
    assert (s["events"], s["rollbacks"], s["onsets"], s["silent_mtbf_s"]) == (2, 2, 1, 3600.0)
    assert (s["per_day"], s["detect_latency_s"], s["lost_s"], s["skip_s"]) == (24.0, 900.0, 2580.0, 90.0)
    assert s["detect_latency_ci95"] is None and len(s["per_day_ci95"]) == 2
    for line in LOG:
        Draft202012Validator(events.event_schema()).validate(json.loads(line))


def test_a_document_without_silent_events_says_none(run: Run) -> None:
    doc = json.loads(run("analyze", "tests/data/hand-run.jsonl", "--time-unit", "min", "--json").stdout)
    assert doc["measured"]["silent"] is None and doc["realised"]["silent"] == 0


def test_the_table_and_the_markdown_show_the_silent_events(run: Run, log_path: Path) -> None:
    text = " ".join(run("analyze", str(log_path), "--time-unit", "min").stdout.split())
    assert "silent events (rolled back, skipped) 30.8 % 37.0 min" in text
    assert "silent events per day 24.0" in text and "detection latency 15.0 min" in text
    assert "lost per silent event 21.5 min" in text
    markdown = run("analyze", str(log_path), "--time-unit", "min", "--markdown").stdout
    assert "| silent events (rolled back, skipped) | 30.8 % |" in markdown
    assert "| detection latency | 15.0 min |" in markdown


def test_save_preset_writes_the_silent_keys(run: Run, log_path: Path, tmp_path: Path) -> None:
    preset = tmp_path / "measured.toml"
    result = run("analyze", str(log_path), "--time-unit", "min", "--save-preset", str(preset))
    assert result.exit_code == 0, result.stderr
    assert '[silent]\nmtbf = "1h"\ndetect_latency = "15min"\nskip = "1.5min"\n' in preset.read_text()


def test_save_preset_leaves_out_what_was_not_measured(run: Run, tmp_path: Path) -> None:
    source = tmp_path / "run.jsonl"
    source.write_text("\n".join(broken({6: '{"time": 50, "event": "silent_detected"}'})[:13] + LOG[15:]) + "\n")
    preset = tmp_path / "measured.toml"
    assert run("analyze", str(source), "--time-unit", "min", "--save-preset", str(preset)).exit_code == 0
    text = preset.read_text()
    assert '[silent]\nmtbf = "2h"\nskip = "3min"\n' in text and "detect_latency" not in text


def test_the_model_at_the_measured_inputs_has_the_silent_events() -> None:
    """docs/model.md §11.7: the model of a log with silent events runs them at the measured rate (one an
    hour), latency (15 min) and skip (1.5 min), so the realised 0.475 lies inside its interval; without
    them the model would claim 0.742, 26.7 points above what the run got."""
    from ckptcalc import api
    from ckptcalc.model.evaluation import Config, evaluate

    outcome = api.analyze(FIXTURE, time_unit="min")
    model = outcome.document["model"]
    # The measured job (§11.7): writes of 2 min persisting 3 min, every 18 min, restarts of 10 min, one
    # failure in 120 min.
    plain = Config(checkpoint_bytes=1.0, bandwidth=1 / 180.0, snapshot_bandwidth=1 / 120.0, mtbf_s=7200.0,
                   restart_s=600.0, interval_s=1080.0)  # fmt: skip
    events: dict[str, Any] = {"silent_mtbf_s": 3600.0, "detect_latency_s": 900.0, "skip_s": 90.0}
    silent = plain.replace(**events)
    assert model["effective_at_interval"] == pytest.approx(float(evaluate(silent).effective), rel=1e-12)
    assert float(evaluate(plain).effective) == pytest.approx(0.742165, abs=1e-6)
    assert model["effective_at_interval"] < 0.475 + 0.03 and model["agrees"]
    assert outcome.document["warnings"] == []


def test_each_window_has_its_silent_share(run: Run, log_path: Path) -> None:
    """docs/model.md §11.7 in two windows of an hour: the silent loss of 26 + 3 min lies in the first, the
    8 min of the second event in the second, and each window's split sums to 1."""
    result = run("analyze", str(log_path), "--time-unit", "min", "--window", "1h", "--json")
    assert result.exit_code == 0, result.stderr
    windows = json.loads(result.stdout)["windows"]
    assert [w["silent"] for w in windows] == pytest.approx([29 / 60, 8 / 60], abs=1e-12)
    parts = ("effective", "write", "rework", "restart", "groups_down", "quorum", "overhead", "silent")
    for w in windows:
        assert sum(w[key] for key in parts) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(("onset", "bad"), [(50.0, False), (50.0 + 1e-9, True), (49.0, False)])
def test_an_onset_at_the_detection_is_zero_latency_not_a_bad_row(onset: float, bad: bool) -> None:
    """Detection latency zero (the onset is the detection) is read; an onset after it is refused."""
    from ckptcalc.logs.reader import BadRecord
    from ckptcalc.mechanisms.silent import log as quiet

    reading = quiet.Reading()
    if bad:
        with pytest.raises(BadRecord, match="onset is later than the silent_detected"):
            reading.detected(50.0, onset, "spike", 4)
        return
    reading.detected(50.0, onset, "spike", 4)
    columns = reading.columns()
    assert columns is not None and columns.onset_s.tolist() == [onset]


@pytest.mark.parametrize(("to", "bad"), [(50.0, False), (50.5, True), (40.0, False)])
def test_a_rollback_to_the_detection_time_is_read(to: float, bad: bool) -> None:
    """A rollback may go back to a checkpoint started at the detection itself, not to one after it."""
    from ckptcalc.logs.reader import BadRecord
    from ckptcalc.mechanisms.silent import log as quiet

    reading = quiet.Reading()
    reading.detected(50.0, None, "spike", 4)
    if bad:
        with pytest.raises(BadRecord, match="rollback to a time after its silent_detected"):
            reading.rollback(60.0, to, 0.0, 0.0, lambda start, by: True)
        return
    reading.rollback(60.0, to, 0.0, 0.0, lambda start, by: True)
    columns = reading.columns()
    assert columns is not None and columns.to_s.tolist() == [to]
