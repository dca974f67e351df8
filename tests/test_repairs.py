"""Repair times and node availability from incidents with an end per node (docs/model.md §22)."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given
from hypothesis import strategies as st

from ckptcalc import api
from ckptcalc.logs import fit as fitting
from ckptcalc.logs.outages import kind
from ckptcalc.mechanisms.spares import erlang_b, merged_outages, repair_figures

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
LOGS = Path(__file__).parent / "data" / "logs"
REPAIRS = LOGS / "repairs"
PAIRED = str(REPAIRS / "paired.csv")
H = 3600.0


def test_the_reference_log_by_hand(run_json: RunJson) -> None:
    # docs/model.md §22.3: four nodes; n03's two faults overlap (one outage, 6 h to 11 h); n04 still down.
    doc = run_json("fit", PAIRED, "--nodes", "10", "--group-nodes", "4")
    assert (doc["events_read"], doc["events_kept"], doc["interruptions"]) == (13, 7, 6)  # ends are no faults
    assert doc["mtbf_s"] == pytest.approx(4 * H, rel=1e-12)
    r = doc["repairs"]
    assert (r["layout"], r["count"], r["open"], r["unmatched_ends"], r["nodes_seen"]) == ("paired", 5, 1, 0, 4)
    assert r["mean_s"] == pytest.approx(4.8 * H, rel=1e-12)
    assert r["median_s"] == pytest.approx(4 * H, rel=1e-12)
    assert r["p90_s"] == pytest.approx(8 * H, rel=1e-12)
    assert r["longest_s"] == pytest.approx(10 * H, rel=1e-12)
    assert r["down_s"] == pytest.approx(24 * H, rel=1e-12)
    assert r["unavailability"] == pytest.approx(0.1, rel=1e-12)
    assert r["groups_intact"] == pytest.approx(0.9**4, rel=1e-12)
    assert r["node_mtbf_s"] == pytest.approx(40 * H, rel=1e-12)


def test_interleaved_nodes_an_end_without_start_and_overlaps(run_json: RunJson) -> None:
    # docs/model.md §22.4: the end at line 1 has no start (left out, named); node 3's incidents merge to 1–7 h.
    doc = run_json("fit", str(REPAIRS / "interleaved.jsonl"), "--nodes", "6", "--group-nodes", "2")
    assert (doc["events_kept"], doc["interruptions"]) == (5, 4)
    r = doc["repairs"]
    assert (r["count"], r["open"], r["unmatched_ends"]) == (3, 1, 1)
    assert r["unmatched_at"] == [f"{REPAIRS / 'interleaved.jsonl'}:1"]
    assert (r["mean_s"], r["median_s"]) == (pytest.approx(3 * H, rel=1e-12), pytest.approx(2 * H, rel=1e-12))
    assert r["p90_s"] == pytest.approx(5.2 * H, rel=1e-12)
    assert r["unavailability"] == pytest.approx(9 / 60, rel=1e-12)
    assert r["groups_intact"] == pytest.approx(0.85**2, rel=1e-12)


def test_two_columns_separated_by_bars(run_json: RunJson) -> None:
    # docs/model.md §22.4: what sacctmgr --parsable2 list events prints; node017's two incidents overlap,
    # node042's second has no end (Unknown), node099's starts at the window's end.
    doc = run_json("fit", str(REPAIRS / "sacctmgr-events.txt"), "--nodes", "100", "--group-nodes", "8")
    assert doc["reading"]["format"] == "csv"
    assert (doc["events_kept"], doc["interruptions"]) == (6, 5)
    r = doc["repairs"]
    assert (r["layout"], r["count"], r["open"]) == ("columns", 4, 1)
    assert r["mean_s"] == pytest.approx(20.5 / 4 * H, rel=1e-12)
    assert r["median_s"] == pytest.approx(3.5 * H, rel=1e-12)
    assert r["p90_s"] == pytest.approx(9.9 * H, rel=1e-12)
    assert r["down_s"] == pytest.approx(12.5 * H, rel=1e-12)
    assert r["unavailability"] == pytest.approx(12.5 / 1200, rel=1e-12)
    assert r["groups_intact"] == pytest.approx((1 - 12.5 / 1200) ** 8, rel=1e-12)


def test_a_failure_trace_archive_trace_gives_its_repairs(run_json: RunJson) -> None:
    # Unavailabilities of 1 h, 3 h, 50 min and 30 min on three nodes; the window is 1117590000 … 1117710000.
    doc = run_json("fit", str(LOGS / "fta" / "event_trace.tab"), "--nodes", "3")
    r = doc["repairs"]
    assert (r["count"], r["nodes_seen"]) == (4, 3)
    assert r["mean_s"] == pytest.approx((3600 + 10800 + 3000 + 1800) / 4, rel=1e-12)
    assert r["median_s"] == pytest.approx((3000 + 3600) / 2, rel=1e-12)  # of 1800, 3000, 3600, 10800
    # Inside the window: 1 h, 50 min and 30 min (the 3 h outage starts at its end).
    assert r["down_s"] == pytest.approx(3600 + 3000 + 1800, rel=1e-12)
    assert r["unavailability"] == pytest.approx(8400 / (3 * 120000), rel=1e-12)


def test_a_log_without_ends_has_no_repairs(run_json: RunJson) -> None:
    doc = run_json("fit", str(Path(__file__).parent / "data" / "trace-54d.json"), "--time-unit", "d")
    assert doc["repairs"] is None
    assert run_json("fit", "--failures", "419", "--window", "54d")["repairs"] is None


def test_the_table_shows_the_repairs(run: Run) -> None:
    result = run("fit", PAIRED, "--nodes", "10", "--group-nodes", "4")
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "Repairs and node availability" in text
    assert "mean 4.80 h" in text and "median 4.00 h" in text and "p90 8.00 h" in text
    assert "unavailability u 10.0 %" in text and "groups of 4 intact 65.6 %" in text
    without = " ".join(run("fit", PAIRED).stdout.split())
    assert "4 nodes had incidents: give --nodes" in without


def test_an_end_before_its_start_is_a_bad_row(run: Run, tmp_path: Path) -> None:
    bad = tmp_path / "end-before-start.csv"
    bad.write_text(
        "start,end,node\n2025-03-01T00:00:00Z,2025-03-01T01:00:00Z,a\n"
        "2025-03-01T05:00:00Z,2025-03-01T04:00:00Z,b\n2025-03-01T06:00:00Z,2025-03-01T09:00:00Z,a\n"
    )
    assert_usage_error(run("fit", str(bad)), "end-before-start.csv:3")
    result = run("fit", str(bad), "--skip-bad", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["skipped_bad"] == 1 and doc["repairs"]["count"] == 2


def test_a_log_of_ends_alone_is_refused(run: Run, tmp_path: Path) -> None:
    # No start: nothing is an interruption, so nothing is recognised (never exit 0 with no event).
    ends = tmp_path / "only-ends.csv"
    ends.write_text("time,node,event_type\n2025-03-01T02:00:00Z,n01,fault_end\n2025-03-01T04:00:00Z,n02,fault_end\n")
    assert_usage_error(run("fit", str(ends)), "only-ends.csv")


@pytest.mark.parametrize("path", sorted(p for p in LOGS.rglob("*") if p.is_file() and p.suffix != ".toml"), ids=str)
def test_no_log_of_the_suite_passes_with_no_event(run: Run, path: Path) -> None:
    result = run("fit", str(path), "--time-unit", "h", "--json")
    if result.exit_code == 0:
        doc = json.loads(result.stdout)
        assert doc["events_kept"] > 0
    else:
        assert result.exit_code == 2, result.stderr


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["--nodes", "2.5"], "--nodes"),
        (["--nodes", "0"], "--nodes"),
        (["--nodes", "3"], "--nodes"),  # fewer than the 4 nodes with incidents
        (["--nodes", "10", "--group-nodes", "1.5"], "--group-nodes"),
        (["--nodes", "10", "--group-nodes", "20"], "--group-nodes"),  # a group larger than the fleet
    ],
)
def test_bad_node_counts(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("fit", PAIRED, *args), culprit)


def test_save_preset_writes_the_mean_repair_and_reads_back(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "measured.toml"
    result = run("fit", PAIRED, "--nodes", "10", "--save-preset", str(target))
    assert result.exit_code == 0, result.stderr
    saved = tomllib.loads(target.read_text(encoding="utf-8"))
    assert saved["spares"]["repair"] == "4.8h"
    words = saved["sources"]["spares.repair"]
    assert words.startswith("fitted from") and "per node MTBF 144000 s (10 nodes)" in words
    back = api.scenario(str(target))
    assert back.mtbf_s == pytest.approx(4 * H, rel=1e-12)
    # The spares lever sizes its pool at the measured repair (docs/model.md §15.5), with its break-even.
    levers = {lever["key"]: lever for lever in api.optimize(preset=str(target)).to_dict()["levers"]}
    assert "(repair 4.80 h" in levers["spares"]["name"]
    assert levers["spares"]["break_even"]["key"] == "repair_s"
    pool = api.optimize(preset=str(target), spares="auto", nodes=2048).to_dict()["spares"]
    assert pool["repair_s"] == pytest.approx(4.8 * H, rel=1e-12)
    again = run("fit", PAIRED, "--save-preset", str(target))
    assert_usage_error(again, "--save-preset")  # no overwrite without --force


def test_the_report_says_the_repairs_and_sizes_spares_at_them() -> None:
    text = api.report(log=PAIRED, form="markdown")
    assert "5 repairs: mean 4.80 h, median 4.00 h, p90 8.00 h" in text
    # The scenario takes the measured repair (its source the log), and the spares lever sizes its pool at it.
    assert "| spares.repair | 4.80 h | fitted from " in text
    assert "(repair 4.80 h" in text
    # An event log of a run, or an incident log without ends, changes no scenario.
    plain = api.report(log=str(Path(__file__).parent / "data" / "trace-54d.json"), time_unit="d", form="markdown")
    assert "spares.repair" not in plain


# ------------------------------------------------------------------ the arithmetic


def test_overlapping_incidents_of_a_node_merge() -> None:
    spans = [("a", 5.0, 20.0), ("b", 1.0, 2.0), ("a", 0.0, 10.0), ("a", 20.0, 22.0), ("a", 30.0, None)]
    assert merged_outages(spans) == [("a", 0.0, 22.0), ("a", 30.0, None), ("b", 1.0, 2.0)]


def test_event_types() -> None:
    assert [kind(x) for x in ("fault_start", "Fault-End", "DOWN", "up", "node_repaired", "failure", "")] == [
        "start", "end", "start", "end", "end", None, None,
    ]  # fmt: skip


@given(
    st.lists(
        st.tuples(st.sampled_from("abcd"), st.floats(0, 100), st.floats(0, 50)),
        min_size=1,
        max_size=12,
    ),
    st.integers(4, 20),
    st.integers(1, 8),
)
def test_unavailability_and_groups_are_shares(raw: list[tuple[str, float, float]], nodes: int, d: int) -> None:
    spans = [(node, start, start + length) for node, start, length in raw]
    d = min(d, nodes)  # a group is at most the fleet
    found = repair_figures(spans, start_s=0.0, end_s=100.0, nodes=nodes, group_nodes=d)
    u = found["unavailability"]
    event("some node down" if u > 0 else "none down")
    assert 0.0 <= u <= 1.0 / nodes * len({n for n, _, _ in spans}) + 1e-12
    assert found["groups_intact"] == pytest.approx((1 - u) ** d, rel=1e-12)
    assert found["median_s"] <= found["p90_s"] <= found["longest_s"]
    # Merging never adds downtime: the outages cover at most what the incidents do.
    assert found["down_s"] <= sum(min(e, 100.0) - min(s, 100.0) for _, s, e in spans) + 1e-9


@given(st.integers(0, 20))
def test_erlang_b_needs_the_mean_alone(spares: int) -> None:
    # docs/model.md §22.2: B(S, a) takes the repair distribution through its mean alone (a = mean / M): a log
    # of equal repairs and one with a heavy tail and the same mean size the same pool.
    equal = repair_figures([("a", 0.0, 10.0), ("b", 0.0, 10.0), ("c", 0.0, 10.0)], start_s=0.0, end_s=100.0)
    tail = repair_figures([("a", 0.0, 1.0), ("b", 0.0, 1.0), ("c", 0.0, 28.0)], start_s=0.0, end_s=100.0)
    assert equal["mean_s"] == tail["mean_s"] == 10.0 and (equal["p90_s"], tail["p90_s"]) == (10.0, 28.0 - 0.2 * 27)
    blocked = erlang_b(spares, equal["mean_s"] / 40.0)
    event("blocked often" if blocked > 0.01 else "blocked rarely")
    assert blocked == erlang_b(spares, tail["mean_s"] / 40.0)


def test_combined_logs_carry_their_outages() -> None:
    one = fitting.read_log(PAIRED)
    two = fitting.read_log(str(REPAIRS / "sacctmgr-events.txt"))
    both = fitting.combine([one, two])
    assert both.outages is not None
    assert len(both.outages.spans) == len(one.outages.spans) + len(two.outages.spans)  # type: ignore[union-attr]


def test_a_node_written_as_a_float_is_the_same_node(run_json: RunJson, run: Run, tmp_path: Path) -> None:
    """docs/model.md §22.1: a node column with gaps comes out of a data frame as floats; 7 and 7.0 are one node,
    so its fault matches its end (a 1 h repair), where they were two nodes and an unmatched end. A string
    "07" stays a node of its own; a node that is true or a list is a bad row, named with its line."""
    log = tmp_path / "floats.jsonl"
    rows = [(1, 7, "fault_start"), (2, 7.0, "fault_end"), (3, 8.0, "fault_start"), (5, 8, "fault_end")]
    log.write_text("".join(json.dumps({"time": f"2025-03-01T0{h}:00:00Z", "node": n, "event_type": e}) + "\n"
                           for h, n, e in rows), encoding="utf-8")  # fmt: skip
    repairs = run_json("fit", str(log))["repairs"]
    assert (repairs["count"], repairs["nodes_seen"], repairs["unmatched_ends"]) == (2, 2, 0)
    assert repairs["mean_s"] == pytest.approx((3600.0 + 7200.0) / 2, rel=1e-12)
    bad = tmp_path / "bool.jsonl"
    bad.write_text(log.read_text(encoding="utf-8") + json.dumps({"time": "2025-03-01T06:00:00Z", "node": True,
                   "event_type": "fault_start"}) + "\n", encoding="utf-8")  # fmt: skip
    result = run("fit", str(bad))
    assert result.exit_code == 2 and f"{bad}:5" in result.stderr and "a node is a name or a number" in result.stderr


def test_repairs_of_no_time_leave_the_preset_without_a_repair(run: Run, tmp_path: Path) -> None:
    """Faults that end when they start measure a mean repair of 0 s, which a preset cannot hold (a repair is
    positive): the saved fit keeps its MTBF and leaves [spares] repair out (it refused to save at all)."""
    log = tmp_path / "instant.csv"
    log.write_text("time,node,event_type\n" + "".join(
        f"2025-03-01T0{h}:00:00Z,n{h},{kind}\n" for h in (1, 3, 6) for kind in ("fault_start", "fault_end")
    ), encoding="utf-8")  # fmt: skip
    saved = tmp_path / "fitted.toml"
    result = run("fit", str(log), "--nodes", "4", "--save-preset", str(saved))
    assert result.exit_code == 0, result.stderr
    document = tomllib.loads(saved.read_text(encoding="utf-8"))
    assert "spares" not in document and document["failures"]["mtbf"] == "2.5h"


def test_analyze_saves_the_repairs_as_fit_does(run: Run, tmp_path: Path) -> None:
    """docs/model.md §22: a run's log with nodes' fault starts and ends (three repairs of 8 400 s mean, 140 min)
    saves [spares] repair from analyze --save-preset as fit's does (analyze left it out)."""
    saved = tmp_path / "measured.toml"
    result = run("analyze", "tests/data/logs/classes/run-causes.jsonl", "--nodes", "10", "--save-preset", str(saved))
    assert result.exit_code == 0, result.stderr
    document = tomllib.loads(saved.read_text(encoding="utf-8"))
    assert document["spares"]["repair"] == "140min"
    assert (
        document["sources"]["spares.repair"].startswith("fitted from ")
        and "the mean of 3 repairs" in (document["sources"]["spares.repair"])
    )
    assert run("optimize", "--preset", str(saved), "--json").exit_code == 0
