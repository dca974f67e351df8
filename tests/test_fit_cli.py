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
    scenario = api.load_preset(str(target))
    assert scenario.mtbf_s == pytest.approx(fit["mtbf_s"], rel=1e-12)
    assert scenario.mtbf_ci95 == pytest.approx((fit["mtbf_ci95"][0], fit["mtbf_ci95"][1]))
    assert scenario.shape == pytest.approx(fit["weibull"]["shape"], rel=1e-12)
    # ... and a source line saying what was fitted: file, events, window and filter.
    assert scenario.source is not None
    for part in (TRACE, f"{fit['interruptions']} interruptions", "where planned=false", "53.8 d", "on the log's clock"):
        assert part in scenario.source, part
    assert "llama3-405b" in (scenario.description or "") and 'restart = "10min"' in text
    # It plans straight away, with the band and under Weibull failures.
    doc = run_json("optimize", "--preset", str(target))
    assert doc["inputs"]["failure_dist"] == "weibull"
    assert doc["uncertainty"]["mtbf_s"] == fit["mtbf_ci95"]
    same = api.optimize("llama3-405b", mtbf=fit["mtbf_s"], shape=fit["weibull"]["shape"])
    assert doc["effective"] == pytest.approx(same.effective, rel=1e-12)


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
