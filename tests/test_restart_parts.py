"""The restart taken apart: detection, rescheduling, reload and warm-up (docs/model.md §12.1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cli_helpers import assert_usage_error

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

PARTS = ("--detect", "5min", "--reschedule", "2min", "--read-bw", "2TB/s", "--warmup", "3min")


def test_reference_12_1_parts_equal_the_whole(run_json: RunJson) -> None:
    """5 min + 2 min + 6.48 TB / 2 TB/s + 3 min = 603.24 s: the same answer as --restart 603.24s."""
    parts = run_json("optimize", "--preset", "llama3-405b", *PARTS)
    whole = run_json("optimize", "--preset", "llama3-405b", "--restart", "603.24s")
    assert parts["inputs"]["restart_s"] == pytest.approx(603.24, rel=1e-15)
    assert parts["effective"] == pytest.approx(whole["effective"], rel=1e-14)
    assert parts["optimal_interval_s"] == pytest.approx(whole["optimal_interval_s"], rel=1e-14)
    assert parts["effective"] == pytest.approx(0.924736, abs=1e-6)
    assert parts["optimal_interval_s"] == pytest.approx(266.762, abs=1e-3)
    storage = parts["inputs"]["restart_components"]["storage"]
    assert storage == {
        "detect_s": 300.0,
        "reschedule_s": 120.0,
        "reload_s": pytest.approx(3.24, rel=1e-15),
        "read_bandwidth_bytes_per_s": 2e12,
        "warmup_s": 180.0,
        "total_s": pytest.approx(603.24, rel=1e-15),
    }
    assert whole["inputs"]["restart_components"] is None


def test_reference_12_1_reload_grows_with_the_model(run_json: RunJson) -> None:
    """Twice the parameters: δ and the reload both 6.48 s, r = 606.48 s, τ 376.000 s, 0.915197."""
    doc = run_json("optimize", "--preset", "llama3-405b", *PARTS, "--params", "810e9")
    assert doc["inputs"]["restart_s"] == pytest.approx(606.48, rel=1e-14)
    assert doc["inputs"]["restart_components"]["storage"]["reload_s"] == pytest.approx(6.48, rel=1e-14)
    assert doc["optimal_interval_s"] == pytest.approx(376.000, abs=1e-3)
    assert doc["effective"] == pytest.approx(0.915197, abs=1e-6)


def test_sweeping_the_size_reloads_more(run_json: RunJson) -> None:
    """A sweep over the size recomputes the reload at every point: the same as each point alone."""
    sweep = run_json("sweep", "--preset", "llama3-405b", *PARTS, "--over", "params", "--from", "405e9",
                     "--to", "810e9", "--points", "2")  # fmt: skip
    assert sweep["effective"][1] == pytest.approx(0.915197, abs=1e-6)
    assert sweep["effective"][0] == pytest.approx(0.924736, abs=1e-6)


def test_reference_12_1_levers(run_json: RunJson) -> None:
    """detection ÷2: 0.937249, +1.2513 pp; read bandwidth ×2: 0.924870, +0.0134 pp."""
    doc = run_json("optimize", "--preset", "llama3-405b", *PARTS)
    levers = {lever["key"]: lever for lever in doc["levers"]}
    assert levers["detect_half"]["effective"] == pytest.approx(0.937249, abs=1e-6)
    assert levers["detect_half"]["gain_pp"] == pytest.approx(1.2513, abs=1e-4)
    assert levers["detect_half"]["name"] == "detection ÷2 (2.50 min)"
    assert levers["read_bw_x2"]["effective"] == pytest.approx(0.924870, abs=1e-6)
    assert levers["read_bw_x2"]["gain_pp"] == pytest.approx(0.0134, abs=1e-4)
    assert levers["read_bw_x2"]["name"] == "read bandwidth ×2 (storage 4.00 TB/s)"
    # restart ÷2 halves the whole restart, reload included.
    assert levers["restart_half"]["name"] == "restart ÷2 (5.03 min)"


def test_no_part_levers_without_parts(run_json: RunJson) -> None:
    keys = {lever["key"] for lever in run_json("optimize", "--preset", "llama3-405b")["levers"]}
    assert not keys & {"detect_half", "read_bw_x2"}


def test_inputs_table_shows_the_parts(run: Run) -> None:
    result = run("optimize", "--preset", "llama3-405b", *PARTS)
    assert result.exit_code == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("restart "))
    assert "10.1 min" in line
    text = " ".join(result.stdout.split())
    assert "detect 5.00 min + reschedule 2.00 min + reload 3.24 s + warmup 3.00 min" in text


def test_parts_without_read_bandwidth_say_so(run_json: RunJson, run: Run) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b", "--detect", "10min")
    assert doc["inputs"]["restart_s"] == 600.0
    assert doc["inputs"]["restart_components"]["storage"]["read_bandwidth_bytes_per_s"] is None
    text = " ".join(run("optimize", "--preset", "llama3-405b", "--detect", "10min").stdout.split())
    assert "reload 0 s (no read bandwidth)" in text


def test_parts_replace_a_preset_whole_and_back(run_json: RunJson, tmp_path: Any) -> None:
    """On the command line, parts replace a preset's whole restart, and a whole restart its parts."""
    preset = tmp_path / "parts.toml"
    preset.write_text(
        'schema_version = 1\n[checkpoint]\nsize = "6.48TB"\n[storage]\nbandwidth = "2TB/s"\nread_bandwidth = "2TB/s"\n'
        '[failures]\nmtbf = "3.1h"\ndetect = "5min"\nreschedule = "2min"\nwarmup = "3min"\n',
        encoding="utf-8",
    )
    doc = run_json("optimize", "--preset", str(preset))
    assert doc["inputs"]["restart_s"] == pytest.approx(603.24, rel=1e-15)
    whole = run_json("optimize", "--preset", str(preset), "--restart", "10min")
    assert whole["inputs"]["restart_s"] == 600.0
    assert whole["inputs"]["restart_components"] is None
    detect = run_json("optimize", "--preset", str(preset), "--detect", "1min")
    assert detect["inputs"]["restart_s"] == pytest.approx(363.24, rel=1e-14)


def test_memory_restart_from_parts(run_json: RunJson) -> None:
    """The replica's restart: the same detection, rescheduling and warm-up, reloading from memory."""
    doc = run_json(
        "optimize", "--preset", "gemini-inmemory", "--detect", "30s", "--reschedule", "0s", "--warmup", "30s",
        "--read-bw", "72GB/s", "--memory-read-bw", "6.48TB/s",
    )  # fmt: skip
    parts = doc["inputs"]["restart_components"]
    assert parts["memory"]["total_s"] == pytest.approx(61.0, rel=1e-14)
    assert parts["storage"]["total_s"] == pytest.approx(150.0, rel=1e-14)
    assert doc["inputs"]["memory_restart_s"] == pytest.approx(61.0, rel=1e-14)
    memory = next(level for level in doc["levels"] if level["name"] == "memory")
    assert memory["restart_s"] == pytest.approx(61.0, rel=1e-14)


BAD = [
    (("--restart", "10min", "--detect", "5min"), "--restart"),
    (("--detect", "-5min"), "--detect"),
    (("--read-bw", "0TB/s"), "--read-bw"),
    (("--warmup", "nan"), "--warmup"),
    (("--memory-read-bw", "1TB/s"), "--memory-read-bw"),
]


@pytest.mark.parametrize(("args", "culprit"), BAD)
def test_bad_parts(run: Run, args: tuple[str, ...], culprit: str) -> None:
    assert_usage_error(run("optimize", "--preset", "llama3-405b", *args, "--json"), culprit)


def test_memory_parts_beside_a_whole_restart(run: Run, run_json: RunJson) -> None:
    """The replica may restart by parts while storage's restart is whole; parts not given count 0, and a
    warning says so. Both ways for the replica at once is an error."""
    result = run("optimize", "--preset", "gemini-inmemory", "--memory-read-bw", "6TB/s", "--memory-restart", "1min")
    assert_usage_error(result, "--memory-restart")
    doc = run_json("optimize", "--preset", "gemini-storage-only", "--replica-survival", "0.99", "--memory-bw",
                   "2TB/s", "--memory-read-bw", "6TB/s")  # fmt: skip
    assert doc["inputs"]["memory_restart_s"] == pytest.approx(1.08, rel=1e-14)
    assert doc["inputs"]["restart_s"] == 600.0
    assert list(doc["inputs"]["restart_components"]) == ["memory"]
    assert "the restart is given by parts without detect, reschedule, warmup: each counts 0" in doc["warnings"]


def test_a_whole_restart_keeps_the_parts_other_levels_use(run_json: RunJson) -> None:
    """--restart on a tiered preset replaces storage's restart only; memory and the middle tier keep
    theirs by parts (detection, rescheduling, warm-up and their reloads)."""
    doc = run_json("optimize", "--preset", "llama3-405b-tiered", "--restart", "5min")
    parts = doc["inputs"]["restart_components"]
    assert doc["inputs"]["restart_s"] == 300.0
    assert list(parts) == ["memory", "local nvme"]
    assert parts["memory"]["total_s"] == pytest.approx(600.0 + 6.48e12 / (6.25e9 * 16384), rel=1e-14)
    assert doc["levels"][-1]["restart_s"] == 300.0


def test_a_preset_with_both_ways_is_refused(run: Run, tmp_path: Any) -> None:
    preset = tmp_path / "both.toml"
    preset.write_text(
        'schema_version = 1\n[checkpoint]\nsize = "6.48TB"\n[storage]\nbandwidth = "2TB/s"\n'
        '[failures]\nmtbf = "3.1h"\nrestart = "10min"\ndetect = "5min"\n',
        encoding="utf-8",
    )
    result = run("optimize", "--preset", str(preset), "--json")
    assert_usage_error(result, "both.toml: failures.restart")
    assert "both.toml: failures.detect)" in result.stderr


def test_save_preset_keeps_the_parts(run: Run, run_json: RunJson, tmp_path: Any) -> None:
    target = tmp_path / "saved.toml"
    result = run("optimize", "--preset", "llama3-405b", *PARTS, "--save-preset", str(target))
    assert result.exit_code == 0, result.stderr
    text = target.read_text(encoding="utf-8")
    assert 'detect = "5min"' in text and 'read_bandwidth = "2TB/s"' in text and "restart =" not in text
    again = run_json("optimize", "--preset", str(target))
    assert again["effective"] == pytest.approx(0.924736, abs=1e-6)


def test_storage_restarts_from_the_parts_alone_beside_a_replica_by_parts(run_json: RunJson, tmp_path: Any) -> None:
    """docs/model.md §12.1: with no whole restart, the job's parts are storage's restart too, even while the
    replica takes them by parts (its reload 6.48 TB / 6.48 TB/s = 1 s) and storage has no read bandwidth."""
    preset = tmp_path / "parts.toml"
    preset.write_text(
        'schema_version = 1\n[checkpoint]\nsize = "6.48TB"\n[storage]\nbandwidth = "72GB/s"\n'
        '[failures]\nmtbf = "4h"\ndetect = "5min"\n'
        '[memory]\nreplica_survival = 0.99\nbandwidth = "2.16TB/s"\nread_bandwidth = "6.48TB/s"\n',
        encoding="utf-8",
    )
    doc = run_json("optimize", "--preset", str(preset))
    assert (doc["inputs"]["restart_s"], doc["inputs"]["memory_restart_s"]) == (300.0, pytest.approx(301.0, rel=1e-14))
    assert list(doc["inputs"]["restart_components"]) == ["memory", "storage"]
