"""sweep and compare: vectorised grids, output formats, the picture, and bad input."""

from __future__ import annotations

import csv
import io
import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import assert_usage_error

from ckptcalc import presets
from ckptcalc import sweep as sweeps
from ckptcalc.model import evaluate
from ckptcalc.scenario import resolve

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

DELTA, MTBF, RESTART = 3.24, 11160.0, 600.0  # Llama 3 405B (MODEL.md §2)
TAU = math.sqrt(2 * DELTA * MTBF)


def test_default_interval_sweep(run_json: RunJson) -> None:
    doc = run_json("sweep")
    values = np.array(doc["values"])
    assert doc["over"] == "interval" and doc["log"] is True
    assert len(values) == 21
    assert values[0] == pytest.approx(TAU / 10) and values[-1] == pytest.approx(TAU * 10)
    assert np.allclose(np.diff(np.log(values)), math.log(100) / 20)
    lengths = {len(doc[k]) for k in ("values", "interval_s", "write_s", "effective", "dominant")}
    lengths |= {len(v) for v in doc["loss"].values()}
    assert lengths == {21}
    # Each row against Young's terms, worked from the formula.
    for tau, write, rework, total in zip(
        values, doc["loss"]["write"], doc["loss"]["rework"], doc["loss"]["total"], strict=True
    ):
        assert write == pytest.approx(DELTA / tau)
        assert rework == pytest.approx(tau / (2 * MTBF))
        assert total == pytest.approx(DELTA / tau + tau / (2 * MTBF) + RESTART / MTBF)
    # The minimum of the swept total loss is the row nearest τ*.
    nearest = int(np.argmin(np.abs(np.log(values / TAU))))
    assert int(np.argmin(doc["loss"]["total"])) == nearest
    assert doc["base_optimal_interval_s"] == pytest.approx(TAU)


def test_interval_table_highlights_optimum_and_draws_bars(run: Run) -> None:
    result = run("sweep", "--points", "11")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    marked = [line for line in lines if "◀" in line and "█" in line]
    assert len(marked) == 1
    assert marked[0].strip().startswith("4.48 min")
    assert "legend:" in result.stdout
    for term in ("write", "rework", "restart"):
        assert term in result.stdout.split("legend:")[1]


@pytest.mark.parametrize(
    ("over", "start", "stop", "change"),
    [
        ("bw", "100GB/s", "10TB/s", lambda v: {"bandwidth": v}),
        ("mtbf", "30min", "2d", lambda v: {"mtbf_s": v}),
        ("restart", "1min", "1h", lambda v: {"restart_s": v}),
        ("size", "1TB", "20TB", lambda v: {"checkpoint_bytes": v}),
        ("params", "7B", "1T", lambda v: {"checkpoint_bytes": v * 16}),
        ("gpus", "1024", "131072", lambda v: {"mtbf_s": MTBF * 16384 / v}),
    ],
)
def test_sweep_over_inputs_matches_optimize(
    run_json: RunJson, over: str, start: str, stop: str, change: Callable[[float], dict[str, float]]
) -> None:
    from ckptcalc.model import replace

    doc = run_json("sweep", "--over", over, "--from", start, "--to", stop, "--points", "7", "--log")
    base = resolve(presets.load("llama3-405b")).config
    assert len(doc["values"]) == 7
    for i, value in enumerate(doc["values"]):
        single = evaluate(replace(base, **change(value)))
        assert doc["effective"][i] == pytest.approx(float(single.effective), rel=1e-12)
        assert doc["interval_s"][i] == pytest.approx(float(single.optimal_interval_s), rel=1e-12)
        assert doc["dominant"][i] in ("write", "rework", "restart")


def test_gpus_sweep_holds_per_gpu_rate(run_json: RunJson) -> None:
    doc = run_json("sweep", "--over", "gpus", "--from", "16384", "--to", "100000", "--points", "2")
    # MODEL.md §5: at 100 000 GPUs M = 3.1 h × 16 384 / 100 000 ≈ 30.5 min; restart alone ≈ a third.
    assert doc["loss"]["restart"][-1] == pytest.approx(600 / (11160 * 16384 / 100000))
    assert doc["loss"]["restart"][-1] == pytest.approx(1 / 3, abs=0.01)


def test_linear_is_default_with_bounds(run_json: RunJson) -> None:
    doc = run_json("sweep", "--over", "mtbf", "--from", "1h", "--to", "3h", "--points", "3")
    assert doc["log"] is False
    assert doc["values"] == pytest.approx([3600, 7200, 10800])


def test_csv(run: Run) -> None:
    result = run("sweep", "--over", "bw", "--from", "1TB/s", "--to", "4TB/s", "--points", "4", "--csv")
    assert result.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 4
    assert list(rows[0]) == [
        "bandwidth_bytes_per_s",
        "interval_s",
        "write_s",
        "loss_write",
        "loss_rework",
        "loss_restart",
        "loss_total",
        "effective",
        "dominant",
    ]
    assert float(rows[1]["bandwidth_bytes_per_s"]) == pytest.approx(2e12)
    assert float(rows[1]["write_s"]) == pytest.approx(3.24)
    assert float(rows[1]["effective"]) == pytest.approx(0.9221, abs=5e-5)


def test_interval_csv_has_one_interval_column(run: Run) -> None:
    result = run("sweep", "--points", "3", "--csv")
    header = result.stdout.splitlines()[0].split(",")
    assert header.count("interval_s") == 1


def test_large_grid_is_one_vectorised_pass() -> None:
    job = resolve(presets.load("llama3-405b"))
    values = sweeps.grid(10.0, 10000.0, 1_000_000, True)
    run = sweeps.run(job, "interval", values, True)
    total = run.result.total
    assert total.shape == (1_000_000,)
    assert float(values[int(np.argmin(total))]) == pytest.approx(TAU, rel=1e-4)


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot(run: Run, tmp_path: Path, suffix: str) -> None:
    target = tmp_path / f"loss{suffix}"
    result = run("sweep", "--plot", str(target), "--json")
    assert result.exit_code == 0, result.stderr
    json.loads(result.stdout)
    data = target.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        return
    root = ET.fromstring(data)
    assert root.tag.endswith("svg")
    text = data.decode()
    assert 'id="optimum"' in text and 'id="optimum-label"' in text
    assert "Young–Daly τ* = 4.48 min" in text
    assert "checkpoint interval (min)" in text
    assert "share of time lost (%)" in text
    for term in ("write", "rework", "restart", "total"):
        assert f">{term}<" in text


def test_plot_refuses_to_overwrite(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "loss.png"
    target.write_bytes(b"mine")
    result = run("sweep", "--plot", str(target))
    assert result.exit_code == 2
    assert target.read_bytes() == b"mine"
    assert run("sweep", "--plot", str(target), "--force").exit_code == 0
    assert target.read_bytes().startswith(b"\x89PNG")


def test_plot_without_matplotlib(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    result = run("sweep", "--plot", str(tmp_path / "x.png"))
    assert result.exit_code == 2
    assert "ckptcalc[plot]" in result.stderr
    assert not (tmp_path / "x.png").exists()


SWEEP_BAD = [
    (["--from", "10min", "--to", "1min"], "--from"),
    (["--from", "5min", "--to", "5min"], "--from"),
    (["--points", "0"], "--points"),
    (["--points", "-3"], "--points"),
    (["--points", "20000000"], "--points"),
    (["--points", "many"], "--points"),
    (["--over", "bw", "--from", "0GB/s", "--to", "1TB/s", "--log"], "--from"),
    (["--over", "bw", "--from", "-1GB/s", "--to", "1TB/s"], "--from"),
    (["--over", "colour"], "--over"),
    (["--over", "bw", "--from", "10min", "--to", "1h"], "--from"),
    (["--json", "--csv"], "--csv"),
    (["--plot", "/no/such/dir/x.png"], "--plot"),
    (["--plot", "x.pdf"], "--plot"),
]


@pytest.mark.parametrize(("args", "culprit"), SWEEP_BAD)
def test_sweep_bad_input(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], culprit: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert_usage_error(run("sweep", *args, "--json"), culprit)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ compare


def test_compare_headline_story(run_json: RunJson) -> None:
    doc = run_json(
        "compare", "llama3-405b", "--what-if", "restart=2min", "--what-if", "bw=20GB/s", "--what-if", "mtbf=24h"
    )
    assert doc["command"] == "compare" and doc["schema_version"] == 1
    effective = [s["effective"] for s in doc["scenarios"]]
    # MODEL.md §2: 92.2 %, 96.5 %, 70.5 %, 98.4 %
    assert effective == pytest.approx([0.9221, 0.9652, 0.7053, 0.9844], abs=5e-5)
    assert [s["name"] for s in doc["scenarios"]] == ["llama3-405b", "restart=2min", "bw=20GB/s", "mtbf=24h"]


@pytest.mark.parametrize("what_if", [["restart", "2min"], ["bw", "20GB/s"], ["mtbf", "24h"], ["gpus", "100000"]])
def test_compare_what_if_matches_optimize(run_json: RunJson, what_if: list[str]) -> None:
    key, value = what_if
    column = run_json("compare", "--what-if", f"{key}={value}")["scenarios"][1]
    direct = run_json("optimize", "--preset", "llama3-405b", f"--{key}", value)
    for field in ("effective", "optimal_interval_s", "loss", "dominant", "inputs"):
        assert column[field] == direct[field]


def test_compare_presets_and_paths(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    path = tmp_path / "cluster.toml"
    assert run("optimize", "--bw", "4TB/s", "--save-preset", str(path)).exit_code == 0
    doc = run_json("compare", "llama3-405b", "bloom-176b", str(path))
    assert [s["name"] for s in doc["scenarios"]] == ["llama3-405b", "bloom-176b", str(path)]
    assert doc["scenarios"][2]["inputs"]["bandwidth_bytes_per_s"] == 4e12


def test_compare_table(run: Run) -> None:
    result = run("compare", "llama3-405b", "--what-if", "restart=2min", "--what-if", "bw=20GB/s")
    assert result.exit_code == 0
    out = result.stdout
    effective = next(line for line in out.splitlines() if line.strip().startswith("effective"))
    assert effective.split()[1:] == ["92.2", "%", "96.5", "%", "70.5", "%"]
    versus = next(line for line in out.splitlines() if line.strip().startswith("vs first"))
    assert versus.split()[-2:] == [f"{(0.965151 - 0.922140) * 100:+.2f}", f"{(0.705271 - 0.922140) * 100:+.2f}"]
    assert "best: restart=2min" in out


COMPARE_BAD = [
    (["--what-if", "restart"], "--what-if restart"),
    (["--what-if", "=2min"], "--what-if =2min"),
    (["--what-if", "colour=blue"], "colour"),
    (["--what-if", "restart=2"], "--what-if restart=2"),
    (["--what-if", "bw=-1TB/s"], "--what-if bw=-1TB/s"),
    (["nope"], "nope"),
]


@pytest.mark.parametrize(("args", "culprit"), COMPARE_BAD)
def test_compare_bad_input(run: Run, args: list[str], culprit: str) -> None:
    assert_usage_error(run("compare", *args, "--json"), culprit)
