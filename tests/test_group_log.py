"""Elastic replica groups in a run's event log: ``group_down`` and ``group_up`` (docs/model.md §11.6).

The fixture tests/data/group-run.jsonl is worked by hand in §11.6; a simulated elastic run written with
``simulate --events`` is read back to the simulation's own split and inputs; and ``plan`` takes every
recovery mechanism."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy
import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc.logs import analyze

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

FIXTURE = Path(__file__).parent / "data" / "group-run.jsonl"

# docs/model.md §11.6, in minutes of a 120-minute run: kept work 81 (120 less stalls 6, the restart 10
# and re-done work 23), of which groups down 29 group-minutes / 4 = 7.25 and quorum pauses 0.75 + 1.5.
HAND = {
    "useful": 71.5 / 120,
    "write": 6 / 120,
    "rework": 23 / 120,
    "restart": 10 / 120,
    "groups_down": 7.25 / 120,
    "quorum": 2.25 / 120,
    "overhead": 0.0,
}


def test_the_hand_worked_log(run_json: RunJson) -> None:
    """docs/model.md §11.6: the split, the counts, e from the two rates, T_j, q_p and M."""
    doc = run_json("analyze", str(FIXTURE), "--time-unit", "min")
    realised = doc["realised"]
    for key, value in HAND.items():
        assert realised[key] == pytest.approx(value, abs=1e-12), key
    assert realised["effective"] == realised["useful"]
    assert sum(realised[key] for key in HAND) == pytest.approx(1.0, abs=1e-12)
    g = doc["measured"]["groups"]
    assert (g["groups"], g["groups_given"]) == (4, False)  # the largest group, 3, + 1
    assert (g["group_failures"], g["whole_job_failures"], g["all_down_failures"]) == (3, 1, 0)
    # Group-local: 3 over 110 running minutes less 46 group-minutes down / 4 = 98.5; whole-job 1 in 120.
    local, whole = 3 / 98.5, 1 / 120
    assert g["group_share"] == pytest.approx(local / (local + whole), rel=1e-12)
    assert g["group_share"] == pytest.approx(0.785169, abs=1e-6)
    assert g["mtbf_s"] == pytest.approx(60 / (local + whole), rel=1e-12)  # 25.7797 min
    low, high = g["group_share_ci95"]
    assert low < g["group_share"] < high
    # Two rejoins of 20 minutes; group 0's span holds the whole-job failure and is not one.
    assert (g["rejoins"], g["rejoin_s"], g["rejoin_p90_s"]) == (2, 1200.0, 1200.0)
    assert g["rejoin_ci95"] == [1200.0, 1200.0]
    assert (g["quorum_pauses"], g["quorum_pause_s"]) == (2, 90.0)
    assert g["down_s"] == 840.0  # 20 + 16 + 20 group-minutes / 4
    # The model: the elastic one at the measured inputs (τ = 20 min, δ = 2 min, r = 10 min).
    elastic = doc["model"]["elastic"]
    assert (elastic["groups"], elastic["rejoin_s"], elastic["quorum_pause_s"]) == (4, 1200.0, 90.0)
    assert elastic["group_share"] == g["group_share"]
    assert doc["measured"]["interval_s"] == 1200.0


def test_the_overhead_is_taken_from_the_flag(run_json: RunJson) -> None:
    """§11.6: o = 0.02 of the running groups' share outside pauses, 71.5 min, is 1.43 min."""
    doc = run_json("analyze", str(FIXTURE), "--time-unit", "min", "--ft-overhead", "0.02")
    realised = doc["realised"]
    assert realised["overhead"] == pytest.approx(1.43 / 120, abs=1e-12)
    assert realised["useful"] == pytest.approx(70.07 / 120, abs=1e-12)
    assert doc["model"]["elastic"]["ft_overhead"] == 0.02


def test_groups_given_count_the_groups_never_down(run_json: RunJson) -> None:
    # G = 8: the same group-minutes down weigh half as much, and the exposure grows.
    doc = run_json("analyze", str(FIXTURE), "--time-unit", "min", "--groups", "8")
    assert doc["realised"]["groups_down"] == pytest.approx(29 / 8 / 120, abs=1e-12)
    g = doc["measured"]["groups"]
    assert (g["groups"], g["groups_given"]) == (8, True)
    local, whole = 3 / (110 - 46 / 8), 1 / 120
    assert g["group_share"] == pytest.approx(local / (local + whole), rel=1e-12)


def test_a_log_without_groups_is_unchanged(run_json: RunJson) -> None:
    doc = run_json("analyze", "tests/data/hand-run.jsonl", "--time-unit", "min")
    assert doc["measured"]["groups"] is None and doc["model"]["elastic"] is None
    assert (doc["realised"]["groups_down"], doc["realised"]["quorum"], doc["realised"]["overhead"]) == (0, 0, 0)
    assert doc["realised"]["useful"] == pytest.approx(0.441667, abs=1e-6)  # §11.3


def lines() -> list[str]:
    return FIXTURE.read_text().splitlines()


@pytest.mark.parametrize(
    ("line", "replacement", "culprit"),
    [
        # line numbers are 1-based; each replacement breaks one rule
        (5, '{"time": 30, "event": "group_up", "group": 1}', ":5: group_up without a group_down for group 1"),
        (5, '{"time": 30, "event": "group_down", "group": 2}', ":5: group 2 is already down (group_down on line 2"),
        (2, '{"time": 10, "event": "group_down", "group": -1}', ":2: group is a whole number from 0, got '-1'"),
        (2, '{"time": 10, "event": "group_down", "group": 1.5}', ":2: group is a whole number from 0, got '1.5'"),
        (2, '{"time": 10, "event": "group_down", "group": "b"}', ":2: group is a whole number from 0, got 'b'"),
        (2, '{"time": 10, "event": "group_down", "group": true}', ":2: group is a whole number from 0"),
        (2, '{"time": 10, "event": "group_down"}', ":2: a group_down names its group"),
        (5, '{"time": 30, "event": "group_up"}', ":5: a group_up names its group"),
        (2, '{"time": 10, "event": "group_down", "group": 2, "quorum_end": 9}', ":2: quorum_end is earlier"),
    ],
)
def test_bad_group_events_name_the_line(run: Run, tmp_path: Path, line: int, replacement: str, culprit: str) -> None:
    text = lines()
    text[line - 1] = replacement
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(text) + "\n")
    result = run("analyze", str(path), "--time-unit", "min")
    assert_usage_error(result, f"run.jsonl{culprit}")
    # --skip-bad drops the line and counts it, like any other bad record.
    skipped = run("analyze", str(path), "--time-unit", "min", "--skip-bad", "--json")
    assert skipped.exit_code == 0, skipped.stderr
    # A bad group_down leaves its group_up without one: that line goes too.
    assert json.loads(skipped.stdout)["lines"]["skipped_bad"] == (2 if line == 2 else 1)


def test_a_group_at_or_above_the_groups_given_is_refused(run: Run) -> None:
    result = run("analyze", str(FIXTURE), "--time-unit", "min", "--groups", "3")
    assert_usage_error(result, "group-run.jsonl:10: group 3 is not below the run's 3 groups (--groups)")


@pytest.mark.parametrize(
    ("flag", "value"), [("--groups", "1"), ("--groups", "2.5"), ("--ft-overhead", "1"), ("--ft-overhead", "-0.1")]
)
def test_bad_flags(run: Run, flag: str, value: str) -> None:
    assert_usage_error(run("analyze", str(FIXTURE), "--time-unit", "min", flag, value), flag)


def test_the_canonical_log_keeps_the_groups(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    events = run("events", str(FIXTURE), "--time-unit", "min")
    assert '"event": "group_down", "group": 2, "quorum_end": 660.0' in events.stdout
    again = tmp_path / "again.jsonl"
    again.write_text(events.stdout)
    assert (
        run_json("analyze", str(again))["realised"]
        == run_json("analyze", str(FIXTURE), "--time-unit", "min")["realised"]
    )
    csv = tmp_path / "again.csv"
    assert run("events", str(FIXTURE), "--time-unit", "min", "--output", str(csv)).exit_code == 0
    assert csv.read_text().splitlines()[0].endswith(",kind,group,quorum_end,onset,to,skip")
    assert run_json("analyze", str(csv))["measured"]["groups"]["rejoin_s"] == 1200.0


def test_every_fixture_line_is_an_event_of_the_schema() -> None:
    from jsonschema import Draft202012Validator

    from ckptcalc.commands import events

    validator = Draft202012Validator(events.event_schema())
    for line in lines():
        validator.validate(json.loads(line))


def test_an_all_down_failure_counts_once_as_group_local() -> None:
    """Two groups: group 0 down at 10, group 1 at 20 with the failure at 20: one whole-job failure less."""
    text = "\n".join([
        '{"time": 0, "event": "run_start"}',
        '{"time": 10, "event": "group_down", "group": 0}',
        '{"time": 20, "event": "group_down", "group": 1}',
        '{"time": 20, "event": "failure"}',
        '{"time": 30, "event": "restart_end"}',
        '{"time": 30, "event": "group_up", "group": 0}',
        '{"time": 30, "event": "group_up", "group": 1}',
        '{"time": 100, "event": "run_end"}',
    ])  # fmt: skip
    found = analyze.analyze_timeline(analyze.parse(text.splitlines(), name="run.jsonl", time_unit="s"))
    g = found.measured_by.get("elastic")
    assert g is not None
    assert (g.groups, g.group_failures, g.whole_job_failures, g.all_down_failures) == (2, 2, 0, 1)
    assert g.rejoins == 0 and g.rejoin_s is None  # both spans hold the failure
    # No checkpoint: 0–20 is re-done, 20–30 restart, and the groups are all back for the kept 30–100.
    split = found.realised
    assert (split.rework, split.restart, split.own.get("groups_down", 0.0), split.useful) == pytest.approx(
        (0.2, 0.1, 0.0, 0.7)
    )
    assert g.group_share == 1.0 and math.isfinite(g.exposure_s)


# An elastic job whose whole-job failures come often enough for a short log: M = 1 h, e = 0.8, four
# groups, a 10-minute rejoin, a 1-minute quorum pause and a 5 % overhead (docs/model.md §11.6).
ELASTIC = ["--mtbf", "1h", "--groups", "4", "--group-share", "0.8", "--rejoin", "10min", "--quorum-pause", "1min",
           "--ft-overhead", "0.05"]  # fmt: skip


@pytest.mark.parametrize("name", ["run.jsonl", "run.csv"])
def test_a_simulated_elastic_run_reads_back_to_the_simulation(run_json: RunJson, tmp_path: Path, name: str) -> None:
    log = tmp_path / name
    sim = run_json("simulate", *ELASTIC, "--cycles", "200", "--seed", "3", "--events", str(log))
    doc = run_json("analyze", str(log), "--ft-overhead", "0.05")
    g = doc["measured"]["groups"]
    # Every group dropped at least once in 200 whole-job cycles, so the largest group + 1 is G.
    assert (g["groups"], g["groups_given"]) == (4, False)
    assert g["rejoin_s"] == pytest.approx(600.0, rel=1e-12)  # T_j is fixed: every rejoin is it
    assert g["quorum_pause_s"] == pytest.approx(60.0, rel=1e-12)
    low, high = g["group_share_ci95"]
    assert low < 0.8 < high
    assert g["all_down_failures"] >= 0 and g["whole_job_failures"] + g["all_down_failures"] > 0
    # The same timeline: the simulation's wall time is the log's plus its start, all restart (§11.4).
    start, wall = doc["start_s"], doc["wall_s"]
    whole = wall + start
    split, realised = sim["split"], doc["realised"]
    assert realised["useful"] == pytest.approx(sim["effective"] * whole / wall, abs=1e-9)
    assert realised["write"] == pytest.approx(split["write"] * whole / wall, abs=1e-9)
    assert realised["rework"] == pytest.approx(split["rework"] * whole / wall, abs=1e-9)
    assert realised["restart"] == pytest.approx((split["restart"] * whole - start) / wall, abs=1e-9)
    lost = realised["groups_down"] + realised["quorum"] + realised["overhead"]
    assert lost == pytest.approx(sim["elastic"]["lost"] * whole / wall, abs=1e-9)
    assert doc["model"]["elastic"]["groups"] == 4 and doc["model"]["agrees"] is True


def test_the_simulated_log_names_its_groups(tmp_path: Path) -> None:
    from ckptcalc.simulation.events import EVENT_KINDS, elastic_events
    from ckptcalc.simulation.timeline import Failures, Groups, Schedule

    g = Groups(groups=2, group_share=0.5, rejoin_s=1800.0, quorum_pause_s=0.0, overhead=0.0)
    log = elastic_events(Schedule.single(interval_s=600.0, stall_s=10.0, restart_s=300.0), g, Failures(3600.0),
                         cycles=200, seed=1)  # fmt: skip
    kinds = [EVENT_KINDS[int(k)] for k in log.kind]
    groups = log.group[[k in ("group_down", "group_up") for k in kinds]]
    assert set(groups.tolist()) == {0, 1}
    assert bool((log.group[[k not in ("group_down", "group_up") for k in kinds]] == -1).all())
    assert bool((numpy.diff(log.time_s) >= 0).all()) and kinds[0] == "run_start" and kinds[-1] == "run_end"


def test_the_table_and_the_markdown_show_the_groups(run: Run) -> None:
    text = " ".join(run("analyze", str(FIXTURE), "--time-unit", "min").stdout.split())
    assert "groups down 6.04 % 7.25 min" in text and "quorum pauses 1.88 % 2.25 min" in text
    assert "group-local share 78.5 %" in text and "rejoin 20.0 min" in text
    markdown = run("analyze", str(FIXTURE), "--time-unit", "min", "--markdown").stdout
    assert "| groups down | 6.04 % |" in markdown and "| quorum pause | 1.50 min |" in markdown


def test_save_preset_writes_the_elastic_keys(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    preset = tmp_path / "measured.toml"
    result = run("analyze", str(FIXTURE), "--time-unit", "min", "--save-preset", str(preset))
    assert result.exit_code == 0, result.stderr
    text = preset.read_text()
    assert "[elastic]\ngroups = 4\ngroup_share = 0.785169" in text
    assert 'rejoin = "20min"\nquorum_pause = "1.5min"\nft_overhead = 0\n' in text
    # The preset is the model the analysis ran: the same effective time at the interval used, within the
    # 1e-6 that writing its values at 4 significant figures may move it.
    analysed = run_json("analyze", str(FIXTURE), "--time-unit", "min")["model"]
    assert run_json("optimize", "--preset", str(preset))["effective"] == pytest.approx(
        analysed["effective_at_interval"], rel=1e-6
    )


BASELINE_DAYS = 30 / 0.9250040299  # W / effective of llama3-405b (docs/model.md §3)


@pytest.mark.parametrize(
    ("flags", "shorter"),
    [
        (["--groups", "8"], True),  # the groups keep training: only whole-job failures roll back
        (["--jit-share", "0.9", "--step-time", "10s"], True),  # 90 % replay one step only
        (["--spares", "4", "--repair", "4h", "--nodes", "64"], False),  # a restart may wait for a node
    ],
)
def test_plan_takes_every_mechanism(run_json: RunJson, flags: list[str], shorter: bool) -> None:
    doc = run_json("plan", "--work", "30d", *flags, "--runs", "100")
    assert doc["effective"] == pytest.approx(run_json("optimize", *flags)["effective"], rel=1e-12)
    assert doc["expected_s"] == pytest.approx(30 * 86400 / doc["effective"], rel=1e-12)
    assert abs(doc["mean_vs_expected"]) < 0.002  # the simulated runs' mean against W / effective
    days = doc["completion_s"]["mean"] / 86400
    assert (days < BASELINE_DAYS) is shorter, days


@st.composite
def group_logs(draw: st.DrawFn) -> tuple[list[tuple[int, str, dict[str, Any]]], int, int, int, int]:
    """A 60-second run with one failure at f restarted at f + r (from the run's start), and up to three
    groups' spans down at whole seconds, some with a pause: (events, G, f, r, end)."""
    end, groups = 60, draw(st.integers(2, 4))
    f = draw(st.integers(1, 50))
    r = draw(st.integers(1, 59 - f))
    events: list[tuple[int, str, dict[str, Any]]] = [(f, "failure", {}), (f + r, "restart_end", {})]
    for group in range(groups):
        at = 0
        for _ in range(draw(st.integers(0, 3))):
            a = draw(st.integers(at + 1, end + 2))
            b = draw(st.integers(a + 1, end + 4))
            if a >= end:
                break
            pause = draw(st.one_of(st.none(), st.integers(0, 5)))
            fields: dict[str, Any] = {"group": group}
            if pause is not None:
                fields["quorum_end"] = a + pause
            events.append((a, "group_down", fields))
            if b < end:
                events.append((b, "group_up", {"group": group}))
            at = b
            if b >= end:
                break
    return events, groups, f, r, end


@settings(max_examples=60, deadline=None)
@given(group_logs())
def test_the_split_is_the_second_by_second_count(
    case: tuple[list[tuple[int, str, dict[str, Any]]], int, int, int, int],
) -> None:
    """Against a count second by second (every time is whole, so each second is one state): the groups'
    losses in the kept work, the exposure behind e, and a split that sums to 1."""
    events, g, f, r, end = case
    order = {"failure": 0, "group_up": 1, "group_down": 2, "restart_end": 3}
    lines = ['{"time": 0, "event": "run_start"}']
    lines += [json.dumps({"time": t, "event": kind, **fields}) for t, kind, fields in
              sorted(events, key=lambda e: (e[0], order[e[1]]))]  # fmt: skip
    lines.append(f'{{"time": {end}, "event": "run_end"}}')
    found = analyze.analyze_timeline(analyze.parse(lines, name="run.jsonl", time_unit="s", groups=g), overhead=0.1)
    spans = []  # (group, down from, down to, pause to)
    for t, kind, fields in events:
        if kind == "group_down":
            # A pause ends at its quorum_end or the first whole-job failure from its start on.
            spans.append([t, end, min(fields.get("quorum_end", t), f if t <= f else end)])
        elif kind == "group_up":
            spans[-1][1] = t
    down = quorum = overhead = exposure = 0.0
    for second in range(end):
        mid = second + 0.5
        d = sum(a <= mid < b for a, b, _ in spans)
        paused = any(a <= mid < p for a, _, p in spans)
        if not f <= mid < f + r:
            exposure += (g - d) / g
        if mid >= f + r:  # kept work: before f is re-done (resumed from the start), then the restart
            down += d / g
            quorum += (g - d) / g if paused else 0.0
            overhead += 0.0 if paused or not spans else 0.1 * (g - d) / g  # o only with groups in the log
    split = found.realised
    event("groups down" if down else "no group down in the kept work")
    event("paused" if quorum else "no pause")
    lost = [split.own.get(key, 0.0) for key in ("groups_down", "quorum", "overhead")]  # none: no group events
    assert [part * end for part in lost] == pytest.approx([down, quorum, overhead], abs=1e-9)
    assert split.useful + split.write + split.rework + split.restart + sum(lost) == pytest.approx(1.0, abs=1e-12)
    measured = found.measured_by.get("elastic")
    if measured is not None:
        assert measured.exposure_s == pytest.approx(exposure, abs=1e-9)
        assert measured.group_failures == sum(kind == "group_down" for _, kind, _ in events)
