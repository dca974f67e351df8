"""A log's failures split by the preset's classes through their causes (docs/model.md §20.6), and a run's
repairs in analyze (docs/model.md §22)."""

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

from ckptcalc.logs.classes import class_of, normalised, split, word_prefix

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]
HERE = Path(__file__).parent / "data" / "logs" / "classes"
RUN = str(HERE / "run-causes.jsonl")
INCIDENTS = str(HERE / "incidents.csv")
PRESET = str(HERE / "classes.toml")
MIN = 60.0
H = 3600.0

# docs/model.md §20.6: the Wilson score 95 % intervals of k failures in n, worked by hand.
WILSON_10 = {4: (0.168180, 0.687326), 3: (0.107791, 0.603222), 1: (0.017876, 0.404150), 2: (0.056682, 0.509838)}
WILSON_8 = {3: (0.136844, 0.694258), 2: (0.071479, 0.590725), 1: (0.022417, 0.470888)}


@pytest.mark.parametrize(
    ("cause", "found", "matches"),
    [
        ("xid", "Xid 79: GPU has fallen off the bus", True),
        ("xid", "XID79", True),
        ("xid", "NVRM: Xid (PCI:0000:3b:00): 48, pid=1234", True),
        ("XID", "xid 48", True),
        ("ecc", "uncorrectable ECC error", True),
        ("ecc", "DBE (double bit ECC) error", True),
        ("ecc", "process exited", False),  # not at a word's start
        ("nccl", "[rank3]: NCCL watchdog timeout", True),
        ("nccl", "nccl_timeout", True),
        ("nccl", "ProcessGroupNCCL watchdog", False),  # inside a word
        ("node failure", "slurmstepd: error: *** NODE FAILURE ***", True),
        ("node failure", "NODE_FAILURE", True),
        ("node failure", "node fail", False),
        ("node_fail", "NODE FAILURE", True),  # the class's own punctuation is one space too
    ],
)
def test_a_cause_matches_as_a_word_prefix(cause: str, found: str, matches: bool) -> None:
    # docs/model.md §20.6: case-folded, runs of other characters one space, at the start of a word.
    assert word_prefix(cause, found) is matches


def test_the_first_class_that_matches_takes_a_cause() -> None:
    classes = [("gpu", 0.1, ("xid",), None), ("bus", 0.1, ("xid 79",), None)]
    assert class_of("Xid 79", classes) == 0
    assert class_of("segfault", classes) is None
    assert normalised("--Rank 3__NCCL--") == "rank 3 nccl"


def test_analyze_splits_the_reference_log_by_hand(run_json: RunJson) -> None:
    # docs/model.md §20.6, Reference 20.1: ten failures, each counted by its own cause (XID79's restart is
    # struck by nccl_timeout, which still counts); the restarts that ended unstruck give each class's mean.
    doc = run_json("analyze", RUN, "--preset", PRESET)
    part = doc["classes"]
    assert (part["match"], part["failures"], part["restarts_shown"]) == ("word_prefix", 10, True)
    rows = {row["name"]: row for row in part["classes"]}
    expected = {
        # name: failures, stated share, agrees, restarts, mean restart
        "gpu": (4, 0.05, False, 3, 20 * MIN),
        "network": (3, 0.3, True, 2, 5 * MIN),
        "node": (1, 0.1, True, 1, 40 * MIN),
    }
    for name, (count, stated, agrees, restarts, restart) in expected.items():
        row = rows[name]
        assert row["failures"] == count
        assert row["measured_share"] == pytest.approx(count / 10, rel=1e-12)
        assert row["share_ci95"] == pytest.approx(WILSON_10[count], abs=5e-7)
        assert row["stated_share"] == pytest.approx(stated, rel=1e-12)
        assert row["agrees"] is agrees
        assert (row["restarts"], row["restart_s"]) == (restarts, pytest.approx(restart, rel=1e-12))
    assert rows["gpu"]["log_causes"] == sorted(
        ["Xid 79: GPU has fallen off the bus", "uncorrectable ECC error", "NVRM: Xid (PCI:0000:3b:00): 48, pid=1234",
         "XID79"]
    )  # fmt: skip
    assert rows["gpu"]["stated_restart_s"] == pytest.approx(20 * MIN)
    assert rows["node"]["stated_restart_s"] is None
    job = part["job"]
    # The job's own: a segfault and ProcessGroupNCCL (nccl inside a word), stated 1 - 0.45 = 0.55.
    assert job["failures"] == 2
    assert job["log_causes"] == ["ProcessGroupNCCL watchdog", "Segmentation fault (core dumped)"]
    assert job["stated_share"] == pytest.approx(0.55, rel=1e-12)
    assert job["share_ci95"] == pytest.approx(WILSON_10[2], abs=5e-7)
    assert job["agrees"] is False
    assert (job["restarts"], job["restart_s"]) == (2, pytest.approx(11 * MIN, rel=1e-12))


def test_the_split_leaves_every_other_number_alone(run_json: RunJson) -> None:
    # No class with causes (the preset llama3-405b states none; without --preset, none): classes is null
    # and every other number of the document is the one it was.
    bare = run_json("analyze", RUN)
    assert bare["classes"] is None
    assert run_json("analyze", RUN, "--preset", "llama3-405b") == bare
    split_doc = run_json("analyze", RUN, "--preset", PRESET)
    assert {k: v for k, v in split_doc.items() if k != "classes"} == {k: v for k, v in bare.items() if k != "classes"}
    assert run_json("fit", INCIDENTS)["classes"] is None


def test_fit_splits_the_interruptions_by_hand(run_json: RunJson) -> None:
    # docs/model.md §20.6, Reference 20.2: nine incidents, the first opens the window: eight interruptions.
    doc = run_json("fit", INCIDENTS, "--preset", PRESET)
    part = doc["classes"]
    assert (part["failures"], part["restarts_shown"]) == (8, False)
    counts = {row["name"]: row["failures"] for row in part["classes"]}
    assert counts == {"gpu": 3, "network": 2, "node": 2}
    for row in part["classes"]:
        assert row["share_ci95"] == pytest.approx(WILSON_8[row["failures"]], abs=5e-7)
        assert (row["restarts"], row["restart_s"]) == (0, None)
    assert [row["agrees"] for row in part["classes"]] == [False, True, True]
    assert part["job"]["failures"] == 1
    assert part["job"]["log_causes"] == ["Segmentation fault"]
    assert part["job"]["share_ci95"] == pytest.approx(WILSON_8[1], abs=5e-7)


def test_the_table_and_markdown_show_the_split(run: Run) -> None:
    table = run("analyze", RUN, "--preset", PRESET)
    assert table.exit_code == 0, table.stderr
    assert "Failures by class (10 failures" in table.stdout
    assert "16.8 % to 68.7 %" in table.stdout
    assert "The stated share of gpu and the job's own lie outside" in table.stdout
    markdown = run("analyze", RUN, "--preset", PRESET, "--markdown")
    assert "| gpu | 4 | 40.0 % | 16.8 % to 68.7 % | 5.00 % | no | 20.0 min (3) |" in markdown.stdout
    fitted = run("fit", INCIDENTS, "--preset", PRESET)
    assert "Failures by class (8 failures" in fitted.stdout
    assert "restart" not in fitted.stdout.split("Failures by class")[1].split("\n")[1]  # no restarts in a fit


@pytest.mark.parametrize("command", ["analyze", "fit"])
def test_save_preset_writes_the_measured_shares(run: Run, tmp_path: Path, command: str) -> None:
    saved = tmp_path / "measured.toml"
    log = RUN if command == "analyze" else INCIDENTS
    result = run(command, log, "--preset", PRESET, "--save-preset", str(saved))
    assert result.exit_code == 0, result.stderr
    tables = tomllib.loads(saved.read_text(encoding="utf-8"))["failures"]["classes"]
    n = 10 if command == "analyze" else 8
    shares = {"gpu": 4 / 10, "network": 3 / 10, "node": 1 / 10} if n == 10 else {"gpu": 3 / 8, "network": 2 / 8,
                                                                                "node": 2 / 8}  # fmt: skip
    assert [t["name"] for t in tables] == ["gpu", "network", "node"]
    assert [t["share"] for t in tables] == pytest.approx([shares[t["name"]] for t in tables], rel=1e-12)
    assert [t["causes"] for t in tables] == [["xid", "ecc"], ["nccl"], ["node failure"]]
    assert [t.get("restart") for t in tables] == ["20min", "5min", None]
    if command == "analyze":
        # docs/model.md §20.6: the job's restart is the mean of the restarts it serves, its own class's two
        # (660 s) and node's one (2 400 s, no restart of its own): 1 240 s, not the log's mean over all 16.5 min.
        restart = tomllib.loads(saved.read_text(encoding="utf-8"))["failures"]["restart"]
        assert restart == "1240s"
    again = run("analyze", RUN, "--preset", str(saved), "--json")
    assert [row["agrees"] for row in json.loads(again.stdout)["classes"]["classes"]] == [True, True, True]


@pytest.mark.parametrize(
    "causes",
    ['"xid"', '["xid", 3]', '["--"]', "[]" + '\n[[failures.classes]]\nname = "b"\nshare = 0.1\ncauses = "ecc"'],
)
def test_causes_that_are_not_a_list_of_words_are_refused(run: Run, tmp_path: Path, causes: str) -> None:
    preset = tmp_path / "bad.toml"
    preset.write_text(
        'schema_version = 1\nbase = "llama3-405b"\n\n[[failures.classes]]\nname = "a"\nshare = 0.1\n'
        f"causes = {causes}\n",
        encoding="utf-8",
    )
    where = "failures.classes[1].causes" if 'name = "b"' in causes else "failures.classes[0].causes"
    assert_usage_error(run("analyze", RUN, "--preset", str(preset)), f"bad.toml: {where}")
    assert_usage_error(run("fit", INCIDENTS, "--preset", str(preset)), f"bad.toml: {where}")


def test_analyze_reads_the_repairs_of_a_run_by_hand(run_json: RunJson) -> None:
    # docs/model.md §20.6 (Reference 20.1's fault rows) with §22: n01 out 55-175 min, n03 325-385 min,
    # n02 595-835 min, n04 from 860 min with no end. Window: the run, 0-900 min.
    doc = run_json("analyze", RUN, "--nodes", "8", "--group-nodes", "4")
    r = doc["repairs"]
    assert (r["layout"], r["count"], r["open"], r["unmatched_ends"], r["nodes_seen"]) == ("paired", 3, 1, 0, 4)
    assert r["mean_s"] == pytest.approx(140 * MIN, rel=1e-12)  # (120 + 60 + 240) / 3
    assert r["median_s"] == pytest.approx(2 * H, rel=1e-12)
    assert r["p90_s"] == pytest.approx(216 * MIN, rel=1e-12)  # 120 + 0.8 × (240 − 120)
    assert r["longest_s"] == pytest.approx(4 * H, rel=1e-12)
    assert r["down_s"] == pytest.approx(460 * MIN, rel=1e-12)  # 120 + 60 + 240 + 40
    assert r["unavailability"] == pytest.approx(460 / 7200, rel=1e-12)
    assert r["groups_intact"] == pytest.approx((1 - 460 / 7200) ** 4, rel=1e-12)
    # The fault rows are no events of the run: its split and counts are those without them.
    assert doc["lines"]["unknown_events"] == 7
    assert run_json("analyze", "tests/data/hand-run.jsonl", "--time-unit", "min")["repairs"] is None


def test_analyze_refuses_a_fleet_smaller_than_its_faults(run: Run) -> None:
    assert_usage_error(run("analyze", RUN, "--nodes", "3"), "--nodes")
    assert_usage_error(run("analyze", RUN, "--nodes", "2.5"), "--nodes")


def test_the_repairs_show_in_the_table(run: Run) -> None:
    result = run("analyze", RUN, "--nodes", "8", "--group-nodes", "4")
    assert "Repairs and node availability" in result.stdout
    assert "groups of 4 intact" in result.stdout
    markdown = run("analyze", RUN, "--nodes", "8", "--markdown")
    assert "| mean | 2.33 h |" in markdown.stdout


@given(
    counts=st.dictionaries(
        st.sampled_from(
            ["Xid 79", "xid48", "NCCL timeout", "ecc", "segfault", "NODE FAILURE", "oom", "ProcessGroupNCCL"]
        ),
        st.integers(min_value=0, max_value=50),
        max_size=8,
    )
)
def test_the_split_adds_up(counts: dict[str, int]) -> None:
    # docs/model.md §20.6: every failure goes to exactly one class or the job's own, and each measured share
    # lies in its own interval.
    classes = [("gpu", 0.2, ("xid", "ecc"), None), ("net", 0.1, ("nccl",), 60.0), ("node", 0.05, ("node",), None)]
    part = split(counts, classes)
    total = sum(counts.values())
    event("no failures" if total == 0 else "failures")
    assert sum(row["failures"] for row in part["classes"]) + part["job"]["failures"] == total
    assert part["job"]["stated_share"] == pytest.approx(0.65, rel=1e-12)
    for row in [*part["classes"], part["job"]]:
        if total == 0:
            assert (row["measured_share"], row["share_ci95"], row["agrees"]) == (None, None, None)
            continue
        low, high = row["share_ci95"]
        assert 0.0 <= low <= row["measured_share"] <= high <= 1.0


def test_the_spares_lever_says_its_repair_was_measured(run: Run, tmp_path: Path) -> None:
    # docs/model.md §22: a repair fitted from a log is measured, not assumed: the lever says so with the figure.
    from ckptcalc import api

    text = api.report(["llama3-405b"], form="markdown", log="tests/data/logs/repairs/paired.csv")
    assert "(repair 4.80 h measured, fitted from tests/data/logs/repairs/paired.csv: the mean of 5 repairs;" in text
    assert "4.80 h assumed" not in text
    assert "(repair 4.00 h assumed;" in api.report(["llama3-405b"], form="markdown")
    saved = tmp_path / "fitted.toml"
    fitted = run("fit", "tests/data/logs/repairs/paired.csv", "--save-preset", str(saved))
    assert fitted.exit_code == 0, fitted.stderr
    levers = json.loads(run("optimize", "--preset", str(saved), "--json").stdout)["levers"]
    assert "repair 4.80 h measured, fitted from" in next(lever["name"] for lever in levers if lever["key"] == "spares")


@pytest.mark.parametrize(("log", "row"), [(RUN, "| gpu | 4 | 40.0 % |"), (INCIDENTS, "| gpu | 3 | 37.5 % |")])
def test_report_log_shows_the_class_split(log: str, row: str) -> None:
    from ckptcalc import api

    text = api.report([PRESET], form="markdown", log=log)
    assert row in text
    assert "16.8 % to 68.7 %" in text if log == RUN else "13.7 % to 69.4 %" in text
    # The scenario re-run at the log's measurements takes the measured shares.
    assert ("| gpu | 40.0 % |" if log == RUN else "| gpu | 37.5 % |") in text


def test_a_frameworks_log_is_split_by_the_causes_its_patterns_name(run_json: RunJson) -> None:
    # docs/model.md §20.6: a text log's failures carry the cause the pattern library gives them (two NCCL
    # watchdog timeouts, ranks interleaved, are nccl_timeout), which the class's `nccl` takes.
    doc = run_json("analyze", "tests/data/logs/patterns/nccl-watchdog.log", "--preset", PRESET)
    rows = {row["name"]: row for row in doc["classes"]["classes"]}
    assert (rows["network"]["failures"], rows["network"]["log_causes"]) == (2, ["nccl_timeout"])
    assert doc["classes"]["job"]["failures"] == 0
    # Wilson, 2 of 2: 0.671191 ± 0.328811.
    assert rows["network"]["share_ci95"] == pytest.approx((0.342380, 1.0), abs=5e-7)


def test_a_row_names_the_most_frequent_causes_and_counts_the_rest() -> None:
    """A log of a thousand distinct causes (an Xid line with its pid each) names the 20 most frequent in a row
    and counts the other 980: the row carried every one (a million-cause log wrote 27 MB of them)."""
    from ckptcalc.logs import classes

    counts = {f"Xid 79: pid={i}": 1 for i in range(1000)} | {"Xid 48": 30, "Xid 31": 20}
    found = classes.split(counts, [("gpu", 0.5, ["xid"], None)])
    row = found["classes"][0]
    assert row["failures"] == 1050 and row["log_causes_more"] == 982
    assert len(row["log_causes"]) == classes.CAUSES_NAMED and {"Xid 48", "Xid 31"} <= set(row["log_causes"])
    assert row["log_causes"] == sorted(row["log_causes"])
    assert found["job"]["log_causes"] == [] and found["job"]["log_causes_more"] == 0
