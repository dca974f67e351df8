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
