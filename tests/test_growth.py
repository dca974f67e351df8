"""A restart that grows with the job's size (docs/model.md §19): its references, its limit, its sweep over GPUs
and the peak of the useful GPUs, its lever, its inputs' checks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import validate

from ckptcalc import api
from ckptcalc.mechanisms import growth
from ckptcalc.model import decisions
from ckptcalc.model.evaluation import evaluate

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: The references' job (docs/model.md §19.3): llama3-405b's one storage level (3.24 s write), a per-GPU MTBF of
#: 3.1 h × 16 384, 10 min measured at 16 384 GPUs, half of it growing.
JOB = ("--gpu-mtbf", "50790.4h", "--restart", "10min", "--restart-scaled", "0.5", "--restart-at-gpus", "16384")


def test_the_restart_grows_as_worked_by_hand() -> None:
    """docs/model.md §19.3: at 32 768 GPUs, R = 600·(0.5 + 0.5·2^A)."""
    assert growth.grown(600.0, 0.5, 1.0, 2.0) == 900.0
    assert growth.grown(600.0, 0.5, 2.0, 2.0) == 1500.0
    assert growth.grown(600.0, 0.5, 0.0, 2.0) == 600.0


@pytest.mark.parametrize(("power", "restart", "effective"), [("1", 900.0, 0.82237179), ("2", 1500.0, 0.73853295)])
def test_the_references_of_section_19(run_json: RunJson, power: str, restart: float, effective: float) -> None:
    """docs/model.md §19.3: the exact effective time at 32 768 GPUs, to 1e-7."""
    found = run_json("optimize", *JOB, "--gpus", "32768", "--restart-growth", power)
    assert found["inputs"]["restart_s"] == pytest.approx(restart, rel=1e-12)
    assert found["effective"] == pytest.approx(effective, abs=1e-7)
    assert found["scale"]["restart_at_job_s"] == pytest.approx(restart, rel=1e-12)
    # The same job stated with its restart at 32 768 GPUs and no growth gives the same number.
    plain = run_json("optimize", "--gpu-mtbf", "50790.4h", "--gpus", "32768", "--restart", f"{restart}s")
    assert plain["effective"] == pytest.approx(found["effective"], rel=1e-12)


def test_a_growth_of_0_is_todays_model(run_json: RunJson) -> None:
    """With growth 0 every number equals the job without it, to 1e-12: optimize and a sweep over GPUs."""
    stated = ("--restart-growth", "0", "--restart-scaled", "0.5", "--restart-at-gpus", "4096")
    base = run_json("optimize", "--gpu-mtbf", "50790.4h", "--gpus", "32768")
    zero = run_json("optimize", "--gpu-mtbf", "50790.4h", "--gpus", "32768", *stated)
    assert "scale" not in zero
    for key in ("effective", "interval_s", "goodput"):
        assert zero[key] == pytest.approx(base[key], rel=1e-12, abs=1e-15), key
    assert [lever["effective"] for lever in zero["levers"]] == pytest.approx(
        [lever["effective"] for lever in base["levers"]], rel=1e-12
    )
    sweep = ("sweep", "--over", "gpus", "--from", "1024", "--to", "262144", "--gpu-mtbf", "50790h", "--points", "9")
    before, after = run_json(*sweep), run_json(*sweep, *stated)
    assert "useful_gpus" not in after and "best" not in after
    assert after["effective"] == pytest.approx(before["effective"], rel=1e-12, abs=1e-300)
    assert after["interval_s"] == pytest.approx(before["interval_s"], rel=1e-12)


SWEEP: tuple[str, ...] = ("sweep", "--over", "gpus", "--from", "1024", "--to", "262144", "--restart-growth", "2")
SWEEP += ("--restart-scaled", "0.5", "--gpu-mtbf", "50790h")


def test_a_sweep_over_gpus_marks_an_interior_peak(run: Run, run_json: RunJson) -> None:
    """The issue's command: U = N × effective per point, the peak N* inside the range, in JSON and in the table."""
    found = run_json(*SWEEP, "--points", "400")
    values, useful = found["values"], found["useful_gpus"]
    assert len(useful) == len(values) == len(found["restart_s"])
    for n, u, e in zip(values, useful, found["effective"], strict=True):
        assert u == pytest.approx(n * e, rel=1e-12)
    best = found["best"]
    assert 0 < best["index"] < len(values) - 1
    assert useful[best["index"]] == max(useful) == best["useful_gpus"]
    assert best["gpus"] == values[best["index"]]
    # The restart at each point: 10 min at 16 384 GPUs (the preset's), half of it growing as (N/16 384)².
    for n, r in zip(values, found["restart_s"], strict=True):
        assert r == pytest.approx(600.0 * (0.5 + 0.5 * (n / 16384.0) ** 2), rel=1e-12)
    table = run(*SWEEP, "--points", "5").stdout
    assert "useful" in table and "R(N)" in table
    assert sum("best" in line for line in table.splitlines()) == 1


def test_a_sweep_over_the_restart_grows_each_value(run: Run, run_json: RunJson) -> None:
    """docs/model.md §19.3: a swept restart is the restart as measured at N₀, grown to the job's size like the
    stated one: at 10 min the row is §19.3's reference (900 s, 0.82237179), and the job's row is marked there."""
    found = run_json("sweep", "--over", "restart", "--from", "5min", "--to", "15min", "--points", "3", *JOB,
                     "--gpus", "32768", "--restart-growth", "1")  # fmt: skip
    assert found["values"] == pytest.approx([300.0, 600.0, 900.0], rel=1e-12)
    assert found["grown_restart_s"] == pytest.approx([450.0, 900.0, 1350.0], rel=1e-12)
    assert found["effective"][1] == pytest.approx(0.82237179, abs=1e-7)
    validate(found)
    table = run("sweep", "--over", "restart", "--from", "5min", "--to", "15min", "--points", "3", *JOB,
                "--gpus", "32768", "--restart-growth", "1").stdout  # fmt: skip
    assert "R(N)" in table and "15.0 min" in table
    marked = [line for line in table.splitlines() if "◀" in line]
    assert len(marked) == 1 and marked[0].lstrip().startswith("10.0 min")


def test_the_streamed_sweep_finds_the_same_peak(run_json: RunJson, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = run_json(*SWEEP, "--points", "101")
    monkeypatch.setattr(api.SweepStream, "CHUNK", 8)
    sliced = run_json(*SWEEP, "--points", "101")
    assert sliced["best"] == whole["best"]
    assert sliced["useful_gpus"] == whole["useful_gpus"]


def test_optimize_reports_the_peak_that_a_fine_sweep_finds(run_json: RunJson) -> None:
    found = run_json("optimize", *JOB, "--gpus", "16384", "--restart-growth", "2")["scale"]
    n = found["best_gpus"]
    assert n == int(n) and found["useful_gpus_at_best"] == pytest.approx(n * found["effective_at_best"], rel=1e-12)
    assert found["restart_at_best_s"] == pytest.approx(600.0 * (0.5 + 0.5 * (n / 16384.0) ** 2), rel=1e-12)
    near = run_json("sweep", *JOB, "--over", "gpus", "--from", str(n - 50), "--to", str(n + 50), "--points", "101",
                    "--restart-growth", "2", "--gpus", "16384")  # fmt: skip
    assert max(near["useful_gpus"]) <= found["useful_gpus_at_best"] * (1 + 1e-9)
    assert near["best"]["gpus"] == pytest.approx(n, abs=1.0)


def test_the_lever_holds_the_restart_at_its_measured_value() -> None:
    """At 32 768 GPUs with A = 1 the lever is the same job with a 600 s restart; it pays while a flat restart
    stays under the grown 900 s (its break-even)."""
    job = api.job(gpu_mtbf="50790.4h", gpus="32768", restart="10min", restart_growth="1", restart_scaled="0.5",
                  restart_at_gpus="16384")  # fmt: skip
    found = {lever.key: lever for lever in decisions.levers(job.config, job.gpus, None)}
    lever = found[growth.LEVER_FIXED]
    plain = api.job(gpu_mtbf="50790.4h", gpus="32768", restart="10min")
    assert lever.effective == pytest.approx(float(evaluate(plain.config.optimal()).effective), rel=1e-12)
    assert lever.break_even is not None
    assert lever.break_even.value == pytest.approx(900.0, rel=1e-12)
    assert lever.value == pytest.approx(900.0, rel=1e-12)


def test_no_lever_where_the_job_is_measured_at_its_own_size() -> None:
    job = api.job(gpu_mtbf="50790.4h", gpus="16384", restart_growth="1")
    assert growth.LEVER_FIXED not in {lever.key for lever in decisions.levers(job.config, job.gpus, None)}


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--restart-growth", "-1"), "--restart-growth"),
        (("--restart-growth", "9"), "--restart-growth"),
        (("--restart-growth", "1", "--restart-scaled", "1.5"), "--restart-scaled"),
        (("--restart-growth", "1", "--restart-at-gpus", "0.5"), "--restart-at-gpus"),
        (("--restart-scaled", "0.5"), "--restart-scaled"),
        (("--restart-at-gpus", "1024"), "--restart-at-gpus"),
    ],
)
def test_bad_input_names_the_option(run: Run, flags: tuple[str, ...], named: str) -> None:
    result = run("optimize", *flags)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0], result.stderr


def test_a_preset_keeps_the_growth(run_json: RunJson, tmp_path: Any) -> None:
    path = tmp_path / "grown.toml"
    first = run_json("optimize", *JOB, "--gpus", "32768", "--restart-growth", "2", "--save-preset", str(path))
    assert "[scale]" in path.read_text(encoding="utf-8")
    again = run_json("optimize", "--preset", str(path))
    assert again["scale"] == first["scale"] and again["effective"] == first["effective"]
    assert json.dumps(again["levers"]) == json.dumps(first["levers"])


def test_the_engine_runs_the_restart_at_the_jobs_size() -> None:
    """The simulation runs the grown restart: its 95 % interval holds §19.3's 0.82237179 (A = 1)."""
    document = api.simulate(gpus="32768", gpu_mtbf="50790.4h", restart="10min", restart_growth="1",
                            restart_scaled="0.5", restart_at_gpus="16384", cycles=20_000, seed=5).to_dict()  # fmt: skip
    low, high = document["effective_ci95"]
    assert low <= 0.82237179 <= high
    assert not low <= 0.8677954 <= high  # the restart as measured, not grown, is outside it
