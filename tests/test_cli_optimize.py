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
from references import daly

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
    # docs/model.md §3.2 and §8.1 (exact), §2.1 (first order)
    result = run("optimize", "--params", "405e9", "--bw", "2TB/s")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "llama3-405b" in out and "default" in out
    assert _row(out, "write time δ")[1] == "3.24 s"
    assert _row(out, "checkpoint size")[1] == "6.48 TB"
    assert "Optimal storage interval: 4.45 min" in out
    loss = out.split("Loss at the optimal interval")[1]
    assert _row(loss, "write")[1:3] == ["1.12 %", "15.0 %"]
    assert _row(loss, "rework")[1:3] == ["1.14 %", "15.2 %"]
    assert _row(loss, "restart")[1:4] == ["5.23 %", "69.8 %", "◀ dominant"]
    assert _row(loss, "total loss")[1:3] == ["7.50 %", "100 %"]
    assert _row(loss, "effective")[1] == "92.5 %"
    text = " ".join(out.split())
    # The seed story stays readable: first order 92.2 %, 69.1 % of its loss from restarts.
    assert "First order (Young, the explanation): 92.2 % effective, Young interval 4.48 min" in text
    assert "69.1 % of it from restarts" in text
    assert "verdict: restart is the largest loss (69.8 % of it; no checkpoint interval can reduce it)" in text


def test_json_llama3(run_json: RunJson) -> None:
    doc = run_json("optimize", "--params", "405e9", "--bw", "2TB/s")
    assert doc["schema_version"] == 2
    assert doc["model"] == "exact"
    assert doc["preset"] == "llama3-405b"
    inputs = doc["inputs"]
    assert inputs["params"] == 405e9
    assert inputs["bytes_per_param"] == 16
    assert inputs["checkpoint_bytes"] == pytest.approx(6.48e12)
    assert inputs["bandwidth_bytes_per_s"] == 2e12
    assert inputs["mtbf_s"] == pytest.approx(11160)
    assert inputs["restart_s"] == 600
    assert doc["write_s"] == pytest.approx(3.24)
    assert doc["optimal_interval_s"] == pytest.approx(266.762, abs=5e-4)
    assert doc["interval_s"] == doc["optimal_interval_s"]
    assert doc["young_interval_s"] == pytest.approx(math.sqrt(2 * 3.24 * 11160))
    assert doc["daly_interval_s"] == pytest.approx(266.8, abs=0.05)
    assert doc["loss"]["total"] == pytest.approx(0.074996, abs=5e-7)
    assert sum(doc["loss"][k] for k in ("write", "rework", "restart")) == pytest.approx(doc["loss"]["total"])
    assert doc["effective"] == pytest.approx(daly(doc["interval_s"], 3.24, 600, 11160), rel=1e-12)
    assert doc["dominant"] == "restart"
    first = doc["first_order"]
    assert first["optimal_interval_s"] == pytest.approx(math.sqrt(2 * 3.24 * 11160))
    assert first["loss"]["total"] == pytest.approx(0.077860, abs=5e-7)
    assert first["effective"] == pytest.approx(0.92214, abs=5e-6)
    assert doc["warnings"] == []


def test_json_restart_what_if(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b", "--restart", "2min")
    assert doc["effective"] == pytest.approx(0.965657, abs=5e-7)  # docs/model.md §3.3
    assert doc["inputs"]["restart_s"] == 120


def test_given_interval_shows_penalty(run: Run, run_json: RunJson) -> None:
    args: tuple[str, ...] = ("optimize", "--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "3.1h", "--restart", "10min")
    args = (*args, "--interval", "30min")
    doc = run_json(*args)
    assert doc["interval_s"] == 1800
    at_given = daly(1800, 325, 600, 11160)
    assert doc["effective"] == pytest.approx(at_given, rel=1e-12)
    assert doc["interval_penalty_pp"] == pytest.approx((doc["optimal_effective"] - at_given) * 100, rel=1e-9)
    assert doc["optimal_effective"] > at_given
    # first order at the given interval explains it
    assert doc["first_order"]["interval_s"] == 1800
    assert doc["first_order"]["effective"] == pytest.approx(1 - (325 / 1800 + 1800 / 22320 + 600 / 11160))
    table = run(*args)
    assert f"costs {doc['interval_penalty_pp']:.3g} percentage points" in " ".join(table.stdout.split())


def test_where_first_order_breaks(run_json: RunJson) -> None:
    # docs/model.md §8.2: the headline cases.
    base = ("optimize", "--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "15min", "--gpus", "16384")
    doc = run_json(*base)
    assert doc["effective"] == pytest.approx(0.190915, abs=5e-7)
    assert doc["first_order"]["effective"] == 0.0
    assert doc["first_order"]["loss"]["total"] > 1
    gains = {lever["key"]: lever["gain_pp"] for lever in doc["levers"]}
    assert gains["bandwidth_x2"] == pytest.approx(7.2427, abs=5e-4)
    assert gains["restart_half"] == pytest.approx(7.5528, abs=5e-4)
    assert gains["mtbf_x2"] == pytest.approx(17.6608, abs=5e-4)
    pinned = run_json(*base, "--interval", "5min")
    assert pinned["interval_penalty_pp"] == pytest.approx(2.0219, abs=5e-4)
    assert pinned["lost_gpu_hours_per_day"] == pytest.approx((1 - 0.170696) * 16384 * 24, rel=1e-6)
    assert pinned["lost_gpu_hours_per_day"] <= 16384 * 24


def test_async_and_two_level_presets(run_json: RunJson) -> None:
    # docs/model.md §8.3 reference 8.3, and 8.4 (the gemini-inmemory preset is reference 8.4's case)
    doc = run_json("optimize", "--preset", "llama3-405b-async")
    assert doc["effective"] == pytest.approx(0.945787, abs=5e-7)
    assert doc["optimal_interval_s"] == pytest.approx(18.7807, abs=5e-4)
    gemini = run_json("optimize", "--preset", "gemini-inmemory")
    assert gemini["effective"] == pytest.approx(0.964380, abs=5e-7)
    assert gemini["storage_every"] == 54
    assert gemini["interval_s"] == gemini["storage_every"] * gemini["memory_interval_s"]
    assert gemini["memory_interval_s"] == pytest.approx(292.52, abs=0.05)


def test_defaults_say_so_and_flags_override(run_json: RunJson) -> None:
    default = run_json("optimize")
    assert default["preset"] == "llama3-405b"
    assert default["effective"] == pytest.approx(0.925004, abs=5e-7)
    faster = run_json("optimize", "--bw", "4TB/s")
    assert faster["inputs"]["bandwidth_bytes_per_s"] == 4e12
    assert faster["inputs"]["mtbf_s"] == default["inputs"]["mtbf_s"]


def test_bloom_preset(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "bloom-176b")
    assert doc["write_s"] == pytest.approx(2.3e12 / 57.5e9)  # about 40 s
    assert doc["young_interval_s"] == pytest.approx(math.sqrt(2 * 40 * 112 * 3600))
    # t − 1 + e^{−t} = δ/M at the optimum, τ = M(1 − e^{−t})
    t = -math.log1p(-doc["optimal_interval_s"] / (112 * 3600))
    assert t - 1 + math.exp(-t) == pytest.approx(40 / (112 * 3600), rel=1e-9)


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
    result = run("optimize", "--preset", "llama3-405b-async", "--bw", "300GB/s", "--json")
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
    assert "scipy" not in loaded  # statistics only for the commands that fit logs
    assert "pydantic" not in loaded  # Typer's coercion of a typed default
    assert "typer" in loaded  # the floor every command pays


def test_optimize_table_imports_rich_but_not_numpy() -> None:
    loaded = _modules_loaded("optimize")
    assert "rich" in loaded
    assert "numpy" not in loaded


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (["sweep", "--json"], {"rich", "matplotlib", "tomli_w", "pydantic"}),
        (["simulate", "--cycles", "1e4", "--json"], {"rich", "matplotlib", "tomli_w", "pydantic"}),
        (["compare", "--json"], {"rich", "numpy", "tomli_w", "pydantic"}),
        (["schema"], {"rich", "numpy", "tomli_w", "pydantic"}),
        (["sweep"], {"matplotlib", "pydantic"}),
        (["optimize", "--preset", "gemini-inmemory", "--json"], {"rich", "numpy", "tomli_w", "scipy", "pydantic"}),
        (["optimize", "--preset", "llama3-405b-tiered", "--json"], {"rich", "numpy", "tomli_w", "scipy", "pydantic"}),
        (["--help"], {"numpy", "scipy", "tomli_w", "pydantic"}),
    ],
)
def test_commands_import_only_what_they_need(args: list[str], absent: set[str]) -> None:
    # pydantic: Typer coerces an option's non-None default through it (75 ms of imports), so no option of
    # these commands has one.
    assert not (_modules_loaded(*args) & absent)


def _loaded_and_built(*args: str) -> tuple[list[str], set[str]]:
    """The commands a process built (turned into click commands) and the modules it loaded."""
    code = (
        "import io, sys\n"
        "import ckptcalc.cli as cli\n"
        "built = []\n"
        "build = cli._build_command\n"
        "def record(info):\n"
        "    built.append(info.callback.__name__)\n"
        "    return build(info)\n"
        "cli._build_command = record\n"
        f"sys.argv = ['ckptcalc', *{list(args)!r}]\n"
        "sys.stdout = io.StringIO()\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(' '.join(built) + '\\n' + ' '.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    built, modules = result.stderr.splitlines()[-2:]
    return built.split(), set(modules.split())


#: The homes of the other commands (and of the output forms optimize --json does not print).
OTHER_COMMANDS = ("ckptcalc.logs", "ckptcalc.simulation", "ckptcalc.completion", "ckptcalc.inputs.grid",
                  "ckptcalc.inputs.preset_write", "ckptcalc.output.tables", "ckptcalc.output.markdown",
                  "ckptcalc.output.plot", "ckptcalc.output.report", "ckptcalc.output.schema",
                  "ckptcalc.output.display", *(f"ckptcalc.commands.{c}" for c in (
                      "sweep", "compare", "check", "simulate", "plan", "fit", "analyze", "events", "presets",
                      "catalogue")))  # fmt: skip


def test_optimize_json_builds_and_loads_only_its_own_command() -> None:
    built, modules = _loaded_and_built("optimize", "--json")
    assert built == ["optimize"]
    strays = {m for m in modules if m.startswith(OTHER_COMMANDS)}
    assert not strays
    # An option not given is not coerced through pydantic (Typer builds an adapter per parameter).
    assert not {m for m in modules if m.split(".")[0] in {"pydantic", "pydantic_core"}}
    assert {
        "ckptcalc.api",
        "ckptcalc.model.evaluation",
        "ckptcalc.output.documents",
        "ckptcalc.commands.optimize",
    } <= modules


def test_events_builds_only_events_and_help_builds_every_command() -> None:
    built, modules = _loaded_and_built("events", "--help")
    assert built == ["events_command"]
    assert "ckptcalc.model.evaluation" not in modules  # a log command does not load the model
    built, _ = _loaded_and_built("--help")
    assert len(built) == len(set(built)) >= 11
    assert {"optimize", "sweep", "events_command", "schema"} <= set(built)


def test_a_given_value_is_still_coerced_by_typer() -> None:
    """Only absent values and plain text skip Typer's coercion: a number, a path and a list still go
    through it, and a bad number is still refused."""
    from typer.testing import CliRunner

    from ckptcalc.cli import app

    result = CliRunner().invoke(app, ["fit", "--year", "x", "tests/data/logs/sacct/requeued-job.txt"])
    assert result.exit_code == 2
    assert "--year" in result.stderr


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("check", "([run] work)"),
        ("optimize", "[[failures.classes]]"),
        ("analyze", "TOML file of [[pattern]] tables"),
        ("report", "[[pattern]] tables for the log's lines (default: the first preset's [log])"),
    ],
)
def test_brackets_in_the_help_are_kept(run: Any, monkeypatch: pytest.MonkeyPatch, command: str, written: str) -> None:
    """A preset's table named in an option's help ([run], [[failures.classes]]) is printed as written: the
    help's markup took it for a style and printed "( work)" and "[]"."""
    monkeypatch.setenv("COLUMNS", "400")
    out = " ".join(run(command, "--help").stdout.split())
    assert written in out
