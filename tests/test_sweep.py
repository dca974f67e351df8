"""sweep and compare: vectorised grids, output formats, the picture, and bad input.

Every row is the exact model (docs/model.md §3, §8): references below are Daly's exact form for one synchronous
level and its Lambert-W optimum, worked in the test; first order appears as ``first_order_effective``.
"""

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
from references import daly
from references import lambert as lambert_optimum

from ckptcalc.inputs import grid as sweeps
from ckptcalc.inputs import presets
from ckptcalc.inputs.scenario import resolve
from ckptcalc.inputs.units import format_duration, format_percent, sig_percent
from ckptcalc.model.evaluation import evaluate, replace

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

DELTA, MTBF, RESTART = 3.24, 11160.0, 600.0  # Llama 3 405B (docs/model.md §2)
YOUNG = math.sqrt(2 * DELTA * MTBF)


TAU = lambert_optimum(DELTA, MTBF)  # 266.8 s


def test_default_interval_sweep(run_json: RunJson) -> None:
    doc = run_json("sweep")
    values = np.array(doc["values"])
    assert doc["over"] == "interval" and doc["log"] is True and doc["model"] == "exact"
    assert len(values) == 21
    assert values[0] == pytest.approx(TAU / 10, rel=1e-9) and values[-1] == pytest.approx(TAU * 10, rel=1e-9)
    assert np.allclose(np.diff(np.log(values)), math.log(100) / 20)
    keys = ("values", "interval_s", "optimal_interval_s", "write_s", "effective", "first_order_effective", "dominant")
    lengths = {len(doc[k]) for k in keys} | {len(v) for v in doc["loss"].values()}
    assert lengths == {21}
    assert doc["memory_interval_s"] is None and doc["storage_every"] is None
    assert doc["interval_s"] == doc["values"]
    # Each row against the exact split, worked from the formulas: effective is Daly's form; every failure
    # costs min(X, r) of restart, so restart = 1 − e^{−r/M}; the e^{(τ+δ)/M} attempts at a segment each stall
    # e^{−τ/M}·M·(1 − e^{−δ/M}). First order beside it: 1 − δ/τ − τ/2M − r/M.
    for i, tau in enumerate(values):
        effective = daly(tau, DELTA, RESTART, MTBF)
        write = math.expm1(DELTA / MTBF) * math.exp(-RESTART / MTBF) / math.expm1((tau + DELTA) / MTBF)
        restart = -math.expm1(-RESTART / MTBF)
        assert doc["effective"][i] == pytest.approx(effective, rel=1e-12)
        assert doc["loss"]["write"][i] == pytest.approx(write, rel=1e-9)
        assert doc["loss"]["restart"][i] == pytest.approx(restart, rel=1e-12)
        assert doc["loss"]["rework"][i] == pytest.approx(1 - effective - write - restart, rel=1e-9)
        assert doc["loss"]["total"][i] == pytest.approx(1 - effective, rel=1e-12)
        first = 1 - DELTA / tau - tau / (2 * MTBF) - RESTART / MTBF
        assert doc["first_order_effective"][i] == pytest.approx(max(first, 0.0), rel=1e-12)
        assert doc["optimal_interval_s"][i] == pytest.approx(TAU, rel=1e-9)
    # The minimum of the swept total loss is the row nearest τ*.
    nearest = int(np.argmin(np.abs(np.log(values / TAU))))
    assert int(np.argmin(doc["loss"]["total"])) == nearest
    assert doc["base_optimal_interval_s"] == pytest.approx(TAU, rel=1e-9)
    assert doc["base_effective"] == pytest.approx(daly(TAU, DELTA, RESTART, MTBF), rel=1e-12)


def test_interval_table_highlights_optimum_and_draws_bars(run: Run) -> None:
    result = run("sweep", "--points", "11")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    marked = [line for line in lines if "◀" in line and "█" in line]
    assert len(marked) == 1
    assert marked[0].strip().startswith(format_duration(TAU))  # 4.45 min: the exact optimum, not Young's 4.48
    assert f"Exact optimum τ* = {format_duration(TAU)}" in result.stdout
    assert "Young" not in result.stdout
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
    run_json: RunJson, over: str, start: str, stop: str, change: Callable[[float], dict[str, Any]]
) -> None:
    doc = run_json("sweep", "--over", over, "--from", start, "--to", stop, "--points", "7", "--log")
    base = resolve(presets.load("llama3-405b")).config
    assert len(doc["values"]) == 7
    for i, value in enumerate(doc["values"]):
        single = evaluate(replace(base, **change(value)))
        assert doc["effective"][i] == pytest.approx(float(single.effective), rel=1e-12)
        assert doc["interval_s"][i] == pytest.approx(float(single.optimal_interval_s), rel=1e-12)
        assert doc["first_order_effective"][i] == pytest.approx(float(single.first_order.effective), rel=1e-12)
        assert doc["dominant"][i] in ("write", "rework", "restart")
        # and against the formulas: Daly's form at the Lambert-W optimum
        c = single.config
        tau = lambert_optimum(c.write_s, c.mtbf_s)
        assert doc["interval_s"][i] == pytest.approx(tau, rel=1e-9)
        assert doc["effective"][i] == pytest.approx(daly(tau, c.write_s, c.restart_s, c.mtbf_s), rel=1e-12)


@pytest.mark.parametrize(
    ("preset", "over", "start", "stop"),
    [
        ("gemini-inmemory", "mtbf", "1h", "2d"),
        ("gemini-inmemory", "bw", "10GB/s", "1TB/s"),
        ("gemini-inmemory", "replica-survival", "0.5", "0.999"),
        ("llama3-405b-async", "snapshot-bw", "4TB/s", "1PB/s"),
    ],
)
def test_sweep_rows_of_two_levels_and_async_match_optimize(
    run_json: RunJson, preset: str, over: str, start: str, stop: str
) -> None:
    # The vectorised search (τ₁ and the whole multiple m, jointly, for every point at once) lands where one
    # evaluation of that point does.
    doc = run_json("sweep", "--preset", preset, "--over", over, "--from", start, "--to", stop, "--points", "5")
    base = resolve(presets.load(preset)).config
    field = {
        "mtbf": "mtbf_s",
        "bw": "bandwidth",
        "replica-survival": "replica_survival",
        "snapshot-bw": "snapshot_bandwidth",
    }[over]
    two = base.has_memory
    assert (doc["memory_interval_s"] is None) == (doc["storage_every"] is None) == (not two)
    for i, value in enumerate(doc["values"]):
        single = evaluate(replace(base, **{field: value}))
        assert doc["effective"][i] == pytest.approx(float(single.effective), rel=1e-12, abs=0.0)
        # The split moves to first order with the interval (effective only to second order): as close as τ₁.
        for key in ("write", "rework", "restart", "total"):
            assert doc["loss"][key][i] == pytest.approx(float(getattr(single, key)), rel=1e-6, abs=1e-15), key
        assert doc["interval_s"][i] == pytest.approx(float(single.interval_s), rel=1e-6)
        assert doc["first_order_effective"][i] == pytest.approx(float(single.first_order.effective), rel=1e-12)
        assert doc["dominant"][i] == ("write", "rework", "restart")[int(single.dominant)]
        if two:
            assert single.memory_interval_s is not None and single.storage_every is not None
            assert doc["storage_every"][i] == int(single.storage_every)
            assert doc["memory_interval_s"][i] == pytest.approx(float(single.memory_interval_s), rel=1e-6)
            assert doc["interval_s"][i] == pytest.approx(
                doc["storage_every"][i] * doc["memory_interval_s"][i], rel=1e-15
            )


def test_gpus_sweep_holds_per_gpu_rate(run_json: RunJson) -> None:
    doc = run_json("sweep", "--over", "gpus", "--from", "16384", "--to", "100000", "--points", "2")
    # docs/model.md §5: at 100 000 GPUs M = 3.1 h × 16 384 / 100 000 ≈ 30.5 min. First order charges r/M ≈ a third
    # of useful time to restarts; of elapsed time they take exactly 1 − e^{−r/M} ≈ 28 %.
    mtbf = 11160 * 16384 / 100000
    assert doc["loss"]["restart"][-1] == pytest.approx(-math.expm1(-600 / mtbf), rel=1e-12)
    assert doc["loss"]["restart"][-1] == pytest.approx(0.28, abs=0.005)
    tau = lambert_optimum(DELTA, mtbf)
    assert doc["effective"][-1] == pytest.approx(daly(tau, DELTA, RESTART, mtbf), rel=1e-12)
    first = 1 - math.sqrt(2 * DELTA / mtbf) - 600 / mtbf  # at Young's interval
    assert doc["first_order_effective"][-1] == pytest.approx(first, rel=1e-12)
    assert 600 / mtbf == pytest.approx(1 / 3, abs=0.01)


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
        "optimal_interval_s",
        "write_s",
        "loss_write",
        "loss_rework",
        "loss_restart",
        "loss_total",
        "effective",
        "first_order_effective",
        "storage_busy_share",
        "bytes_written_per_day",
        "dominant",
    ]
    assert float(rows[1]["bandwidth_bytes_per_s"]) == pytest.approx(2e12)
    assert float(rows[1]["write_s"]) == pytest.approx(3.24)
    assert float(rows[1]["interval_s"]) == pytest.approx(TAU, rel=1e-9)
    assert float(rows[1]["effective"]) == pytest.approx(daly(TAU, DELTA, RESTART, MTBF), rel=1e-12)
    first = 1 - math.sqrt(2 * DELTA / MTBF) - RESTART / MTBF
    assert float(rows[1]["first_order_effective"]) == pytest.approx(first, rel=1e-12)
    assert rows[1]["dominant"] == "restart"


def test_two_level_csv_has_the_schedule_columns(run: Run) -> None:
    result = run("sweep", "--preset", "gemini-inmemory", "--over", "mtbf", "--points", "3", "--csv")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {"memory_interval_s", "storage_every"} <= set(rows[0])
    for row in rows:
        every = float(row["storage_every"])
        assert every == round(every) >= 1
        assert float(row["interval_s"]) == pytest.approx(every * float(row["memory_interval_s"]), rel=1e-12)


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
    assert float(values[int(np.argmin(total))]) == pytest.approx(TAU, rel=1e-5)  # the exact optimum, not Young's
    assert abs(float(values[int(np.argmin(total))]) / YOUNG - 1) > 1e-3
    index = [0, 123_456, 999_999]
    assert run.result.effective[index] == pytest.approx(
        [daly(v, DELTA, RESTART, MTBF) for v in values[index]], rel=1e-12
    )


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
    assert f"τ* = {format_duration(TAU)}" in text  # the exact optimum, 4.45 min (Young's would be 4.48)
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
    assert doc["command"] == "compare" and doc["schema_version"] == 2
    # Each scenario by the formulas: Daly's form at the Lambert-W optimum of its δ and M.
    cases = [(DELTA, RESTART, MTBF), (DELTA, 120.0, MTBF), (324.0, RESTART, MTBF), (DELTA, RESTART, 86400.0)]
    expected = [daly(lambert_optimum(d, m), d, r, m) for d, r, m in cases]
    effective = [s["effective"] for s in doc["scenarios"]]
    assert effective == pytest.approx(expected, rel=1e-12)
    # docs/model.md §2 told the story in first order: 92.2 %, 96.5 %, 70.5 %, 98.4 %.
    first = [s["first_order"]["effective"] for s in doc["scenarios"]]
    assert first == pytest.approx([1 - math.sqrt(2 * d / m) - r / m for d, r, m in cases], rel=1e-12)
    assert first == pytest.approx([0.9221, 0.9652, 0.7053, 0.9844], abs=5e-5)
    assert [s["name"] for s in doc["scenarios"]] == ["llama3-405b", "restart=2min", "bw=20GB/s", "mtbf=24h"]


@pytest.mark.parametrize("what_if", [["restart", "2min"], ["bw", "20GB/s"], ["mtbf", "24h"], ["gpus", "100000"]])
def test_compare_what_if_matches_optimize(run_json: RunJson, what_if: list[str]) -> None:
    key, value = what_if
    column = run_json("compare", "llama3-405b", "--what-if", f"{key}={value}")["scenarios"][1]
    direct = run_json("optimize", "--preset", "llama3-405b", f"--{key}", value)
    for field in ("effective", "optimal_interval_s", "loss", "dominant", "inputs"):
        assert column[field] == direct[field] or field == "inputs"
    # optimize adds the spares lever's baseline to what it assumes; compare evaluates no lever.
    assert column["inputs"] == {**direct["inputs"], "assumed": column["inputs"]["assumed"]}
    assert [line for line in direct["inputs"]["assumed"] if line not in column["inputs"]["assumed"]] == [
        line for line in direct["inputs"]["assumed"] if line.startswith("a replacement node")
    ]


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
    cases = [(DELTA, RESTART, MTBF), (DELTA, 120.0, MTBF), (324.0, RESTART, MTBF)]
    expected = [daly(lambert_optimum(d, m), d, r, m) for d, r, m in cases]
    effective = next(line for line in out.splitlines() if line.strip().startswith("effective"))
    assert effective.split()[1:] == [part for value in expected for part in format_percent(value).split()]
    versus = next(line for line in out.splitlines() if line.strip().startswith("vs first"))
    assert versus.split()[-2:] == [f"{(value - expected[0]) * 100:+.2f}" for value in expected[1:]]
    optimal = next(line for line in out.splitlines() if line.strip().startswith("optimal interval"))
    assert (
        optimal.split("interval", 1)[1].split()
        == " ".join(format_duration(lambert_optimum(d, m)) for d, _, m in cases).split()
    )
    assert "best: restart=2min" in out
    assert "memory × m" not in out


def test_compare_two_levels_shows_the_schedule(run: Run) -> None:
    out = run("compare", "llama3-405b", "gemini-inmemory").stdout
    best = evaluate(resolve(presets.load("gemini-inmemory")).config)
    line = next(line for line in out.splitlines() if line.strip().startswith("memory × m"))
    assert best.optimal_memory_interval_s is not None and best.optimal_storage_every is not None
    schedule = f"{format_duration(best.optimal_memory_interval_s)} × {int(best.optimal_storage_every)}"
    assert line.split()[3:] == ["-", *schedule.split()]


@pytest.mark.parametrize("columns", [60, 80, 100, 120])
@pytest.mark.parametrize(
    "args",
    [
        ("--over", "mtbf", "--from", "3.1h", "--to", "30h", "--points", "3"),  # the marked row has the longest bar
        ("--points", "5"),
        ("--preset", "gemini-inmemory", "--over", "mtbf", "--points", "5"),
    ],
    ids=["marked-row-longest", "interval", "two-levels"],
)
def test_sweep_marker_survives_every_width(
    run: Run, monkeypatch: pytest.MonkeyPatch, columns: int, args: tuple[str, ...]
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    out = run("sweep", *args).stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= columns
    assert "…" not in out
    marked = [line for line in lines if line.rstrip().endswith("◀")]
    if len(marked) != 1:  # no room for even the marker: the note under the table names the row
        assert not marked and "◀ marks " in lines[-1], out
        row = lines[-1].split("◀ marks ")[1].rstrip(")")
        assert sum(line.strip().startswith(row) for line in lines) == 1, out


GROWN = ("--over", "gpus", "--from", "1024", "--to", "262144", "--points", "5", "--restart-growth", "2",
         "--restart-scaled", "0.5", "--gpu-mtbf", "50790h")  # fmt: skip


@pytest.mark.parametrize("columns", [20, 30, 40, 60, 80, 100])
@pytest.mark.parametrize("args", [GROWN, ("--over", "bw", "--points", "3")], ids=["growth", "bw"])
def test_a_narrow_table_leaves_columns_out_and_says_which(
    run: Run, run_json: RunJson, monkeypatch: pytest.MonkeyPatch, columns: int, args: tuple[str, ...]
) -> None:
    """Every row keeps its swept value and its effective time at any width; a column that does not fit is left
    out whole and named under the table (Rich squeezed the swept value to nothing at 20 columns, and cut the
    useful GPUs to their first digit at 80)."""
    document = run_json("sweep", *args)
    monkeypatch.setenv("COLUMNS", str(columns))
    out = run("sweep", *args).stdout
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= columns
    rule = next(k for k, line in enumerate(lines) if line.startswith("─"))
    header, rows = lines[rule - 1].split(), lines[rule + 1 : rule + 1 + len(document["values"])]
    for row, value, effective in zip(rows, document["values"], document["effective"], strict=True):
        assert sig_percent(effective) in row.split(), (row, out)
        if args is GROWN:
            assert int(row.split()[0]) == value, (row, out)
    text = " ".join(out.split())
    for name in ("interval", "write", "rework", "restart", "total", *(["R(N)", "useful"] if args is GROWN else [])):
        assert (name in header) != (f"{name}," in text or f"{name}:" in text), (name, out)
    if args is GROWN and columns >= 80:
        assert "useful" in header and "1.02k" in rows[0]


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


def test_streamed_document_is_the_in_memory_one(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Slices of 7 points make 33 points stream in five pieces.
    from ckptcalc import api

    monkeypatch.setattr(api.SweepStream, "CHUNK", 7)
    for args, preset in (
        (["--points", "33"], "llama3-405b"),
        (["--points", "33", "--preset", "gemini-inmemory"], "gemini-inmemory"),
    ):
        streamed = json.loads(run("sweep", *args, "--json").stdout)
        named = preset if "--preset" in args else None  # the default, as the command line left it unnamed
        assert streamed == api.sweep(named, points=33).to_dict()
        csv_text = run("sweep", *args, "--csv").stdout
        assert csv_text == api.sweep(named, points=33).to_csv()


def test_a_sweep_over_a_plain_number_prints_its_table(run: Run) -> None:
    # An input of no unit (the Weibull shape) is shown to 4 significant figures, as a fraction is; the table
    # raised a KeyError on it before.
    result = run("sweep", "--over", "shape", "--from", "0.5", "--to", "2", "--points", "4")
    assert result.exit_code == 0, result.stderr
    values = [line.split()[0] for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert values == ["0.5000", "1.000", "1.500", "2.000"]
