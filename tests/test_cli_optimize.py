"""ckptcalc optimize, presets and the error contract, through the command line."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

from ckptcalc import __version__

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]


def _row(text: str, label: str) -> list[str]:
    """The cells of the table row that starts with ``label``."""
    for line in text.splitlines():
        cells = [cell for cell in re.split(r"\s{2,}", line.strip()) if cell]
        if cells and cells[0] == label:
            return cells
    raise AssertionError(f"no row {label!r} in:\n{text}")


def test_table_shows_llama3_reference(run: Run) -> None:
    result = run("optimize", "--params", "405e9", "--bw", "2TB/s")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "llama3-405b" in out and "default" in out
    assert _row(out, "write time δ")[1] == "3.24 s"
    assert _row(out, "checkpoint size")[1] == "6.48 TB"
    assert "Optimal storage interval: 4.48 min" in out
    loss = out.split("Loss at the optimal interval")[1]
    assert _row(loss, "write")[2:4] == ["1.20 %", "15.5 %"]
    assert _row(loss, "rework")[2:4] == ["1.20 %", "15.5 %"]
    assert _row(loss, "restart")[2:5] == ["5.38 %", "69.1 %", "◀ dominant"]
    assert _row(loss, "total loss")[1] == "7.79 %"
    assert _row(loss, "effective")[2] == "92.2 %"
    assert "verdict: restart dominates (69.1 % of the loss)" in out


def test_json_llama3(run_json: RunJson) -> None:
    doc = run_json("optimize", "--params", "405e9", "--bw", "2TB/s")
    assert doc["schema_version"] == 1
    assert doc["preset"] == "llama3-405b"
    inputs = doc["inputs"]
    assert inputs["params"] == 405e9
    assert inputs["bytes_per_param"] == 16
    assert inputs["checkpoint_bytes"] == pytest.approx(6.48e12)
    assert inputs["bandwidth_bytes_per_s"] == 2e12
    assert inputs["mtbf_s"] == pytest.approx(11160)
    assert inputs["restart_s"] == 600
    assert doc["write_s"] == pytest.approx(3.24)
    assert doc["optimal_interval_s"] == pytest.approx(math.sqrt(2 * 3.24 * 11160))
    assert doc["interval_s"] == doc["optimal_interval_s"]
    assert doc["loss"]["total"] == pytest.approx(0.07786, abs=5e-6)
    assert sum(doc["loss"][k] for k in ("write", "rework", "restart")) == pytest.approx(doc["loss"]["total"])
    assert doc["effective"] == pytest.approx(0.9221, abs=5e-5)
    assert doc["dominant"] == "restart"
    assert doc["warnings"] == []


def test_json_restart_what_if(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b", "--restart", "2min")
    assert doc["effective"] == pytest.approx(0.9652, abs=5e-5)
    assert doc["inputs"]["restart_s"] == 120


def test_given_interval_shows_penalty(run: Run, run_json: RunJson) -> None:
    args = ("optimize", "--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "3.1h", "--restart", "10min")
    args = (*args, "--interval", "30min")
    doc = run_json(*args)
    assert doc["interval_s"] == 1800
    # loss at 30 min: 325/1800 + 1800/22320 + 600/11160; at τ* = √(2·325·11160): 2√(325/22320) + 600/11160
    at_given = 325 / 1800 + 1800 / 22320 + 600 / 11160
    at_best = 2 * math.sqrt(325 / 22320) + 600 / 11160
    assert doc["effective"] == pytest.approx(1 - at_given)
    assert doc["interval_penalty_pp"] == pytest.approx((at_given - at_best) * 100)
    table = run(*args)
    assert f"{(at_given - at_best) * 100:.2f} percentage points" in table.stdout


def test_defaults_say_so_and_flags_override(run_json: RunJson) -> None:
    default = run_json("optimize")
    assert default["preset"] == "llama3-405b"
    assert default["effective"] == pytest.approx(0.9221, abs=5e-5)
    faster = run_json("optimize", "--bw", "4TB/s")
    assert faster["inputs"]["bandwidth_bytes_per_s"] == 4e12
    assert faster["inputs"]["mtbf_s"] == default["inputs"]["mtbf_s"]


def test_bloom_preset(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "bloom-176b")
    assert doc["write_s"] == pytest.approx(2.3e12 / 57.5e9)  # about 40 s
    assert doc["optimal_interval_s"] == pytest.approx(math.sqrt(2 * 40 * 112 * 3600))


def test_save_preset_round_trip(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    target = tmp_path / "cluster-4tbs.toml"
    first = run_json("optimize", "--preset", "llama3-405b", "--bw", "4TB/s", "--save-preset", str(target))
    assert target.exists()
    again = run_json("optimize", "--preset", str(target))
    for key in ("effective", "optimal_interval_s", "write_s"):
        assert again[key] == first[key]
    assert again["inputs"] | {"params": None} == first["inputs"] | {"params": None}


def test_save_preset_refuses_to_overwrite(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "keep.toml"
    target.write_text("# mine\n")
    result = run("optimize", "--save-preset", str(target), "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "--save-preset" in result.stderr and "--force" in result.stderr
    assert target.read_text() == "# mine\n"
    forced = run("optimize", "--save-preset", str(target), "--force", "--json")
    assert forced.exit_code == 0
    assert "[storage]" in target.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["keep.toml"]


def test_presets_list_and_show(run: Run) -> None:
    listed = run("presets", "list")
    assert listed.exit_code == 0
    assert "llama3-405b" in listed.stdout and "bloom-176b" in listed.stdout
    shown = run("presets", "show", "llama3-405b")
    assert shown.exit_code == 0
    assert 'bandwidth = "2TB/s"' in shown.stdout
    import tomllib

    assert tomllib.loads(shown.stdout)["name"] == "llama3-405b"


def test_version(run: Run) -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"ckptcalc {__version__}"


def test_python_dash_m() -> None:
    result = subprocess.run([sys.executable, "-m", "ckptcalc", "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.strip() == f"ckptcalc {__version__}"


BAD = [
    # (arguments, culprit named in the message)
    (["--bw", "0TB/s"], "--bw"),
    (["--bw", "-2TB/s"], "--bw"),
    (["--bw", "nan"], "--bw"),
    (["--bw", "inf TB/s"], "--bw"),
    (["--bw", "2"], "--bw"),
    (["--bw", "2TB"], "--bw"),
    (["--bw", "2XB/s"], "--bw"),
    (["--size", "2TB/s"], "--size"),
    (["--size", "0"], "--size"),
    (["--params", "-1"], "--params"),
    (["--params", "12parsecs"], "--params"),
    (["--mtbf", "3.1"], "--mtbf"),
    (["--mtbf", "0h"], "--mtbf"),
    (["--mtbf", "nan"], "--mtbf"),
    (["--restart", "-10min"], "--restart"),
    (["--restart", "10 lightyears"], "--restart"),
    (["--interval", "0s"], "--interval"),
    (["--bytes-per-param", "0"], "--bytes-per-param"),
    (["--preset", "no-such-preset"], "--preset"),
    (["--preset", "missing/cluster.toml"], "missing/cluster.toml"),
    (["--no-such-flag"], "--no-such-flag"),
]


@pytest.mark.parametrize(("args", "culprit"), BAD)
def test_bad_input(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("optimize", *args, "--json"), culprit)


@pytest.mark.parametrize(
    ("content", "culprit"),
    [
        ("x = [\n", "invalid TOML"),
        ('[storage]\nbandwith = "2TB/s"\n', "storage.bandwith"),
        ("[storage]\nbandwidth = true\n", "storage.bandwidth"),
        ('[failures]\nmtbf = "-1h"\n', "failures.mtbf"),
        ('[cluster]\ngpus = "many"\n', "cluster.gpus"),
        ('color = "blue"\n', "color"),
    ],
)
def test_bad_preset_file(run: Run, tmp_path: Path, content: str, culprit: str) -> None:
    path = tmp_path / "cluster.toml"
    path.write_text(content)
    result = run("optimize", "--preset", str(path), "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {path}: ")
    assert culprit in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_json_is_one_document_with_warnings_inside(run: Run) -> None:
    result = run("optimize", "--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "1h", "--json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["warnings"]
    assert all(f"warning: {w}" in result.stderr for w in doc["warnings"])
    assert "NaN" not in result.stdout and "Infinity" not in result.stdout


def _modules_loaded(*args: str) -> set[str]:
    code = (
        "import sys\n"
        "from ckptcalc.cli import main\n"
        f"sys.argv = ['ckptcalc', *{list(args)!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(result.stderr.split())


def test_optimize_json_imports_neither_rich_nor_numpy() -> None:
    loaded = _modules_loaded("optimize", "--json")
    assert "rich" not in loaded
    assert "numpy" not in loaded
    assert "tomli_w" not in loaded


def test_optimize_table_imports_rich_but_not_numpy() -> None:
    loaded = _modules_loaded("optimize")
    assert "rich" in loaded
    assert "numpy" not in loaded


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (["sweep", "--json"], {"rich", "matplotlib", "tomli_w"}),
        (["simulate", "--cycles", "1e4", "--json"], {"rich", "matplotlib", "tomli_w"}),
        (["compare", "--json"], {"rich", "numpy", "tomli_w"}),
        (["schema"], {"rich", "numpy", "tomli_w"}),
        (["sweep"], {"matplotlib"}),
    ],
)
def test_commands_import_only_what_they_need(args: list[str], absent: set[str]) -> None:
    assert not (_modules_loaded(*args) & absent)
