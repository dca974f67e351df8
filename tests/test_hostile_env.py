"""Hostile environments and a new user's first mistakes, as one table per kind (run without root):
each case behaves, with no traceback, no hang and nothing raw reaching the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

Run = Callable[..., Any]
DATA = Path(__file__).parent / "data"
LONG = "a" * 300
EVIL = "evil \x1b[2J\x1b]0;pwned\x07 text"


def _ckptcalc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = "from ckptcalc.cli import main; main()"
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=full_env, timeout=120
    )


def _preset(path: Path, description: str = "a test preset") -> Path:
    path.write_text(
        f'description = {json.dumps(description)}\n[checkpoint]\nsize = "6.48TB"\n[storage]\nbandwidth = "2TB/s"\n'
        '[failures]\nmtbf = "3.1h"\nrestart = "10min"\n',
        encoding="utf-8",
    )
    return path


# ----------------------------------------------------------- bad input: exit 2, one line


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["optimize", "--value", "levels.\u00b2"], "--value"),  # isdigit() accepts it, int() does not
        (["optimize", "--value", "levels.\u2460"], "--value"),
        (["optimize", "--preset", LONG], "--preset"),
        (["optimize", "--save-preset", f"{LONG}.toml"], "--save-preset"),
        (["sweep", "--plot", f"{LONG}.png"], "--plot"),
        (["fit", "tests/data/trace-54d.json", "--time-unit", "d", "--save-preset", f"{LONG}.toml"], "--save-preset"),
        (["optimize", "--params", "405B", "--size", "6TB"], "--size"),
        (["optimize", "--preset", "llama3"], "did you mean 'llama3-405b'"),
        (["sweep", "--over", "gpu"], "did you mean 'gpus'"),
        (["compare", "--what-if", "rstart=2min"], "did you mean 'restart'"),
        (["compare", "--what-if", "bw", "4TB/s"], "write --what-if bw=VALUE"),
        (["optimize", "llama3-405b"], "did you mean --preset llama3-405b"),
        (["optimize", "--mtbf", "3.1", "hours"], "--mtbf '3.1 hours'"),
        (["optimize", "--value", "efective"], "did you mean 'effective'"),
        (["optimize", "--gpus", "16Kx"], "--gpus"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], culprit: str
) -> None:
    args = [str(DATA / a.removeprefix("tests/data/")) if a.startswith("tests/data/") else a for a in args]
    monkeypatch.chdir(tmp_path)
    assert_usage_error(run(*args), culprit)


def test_check_reports_each_file_and_goes_on(run: Run, tmp_path: Path) -> None:
    empty = tmp_path / "empty.toml"
    empty.write_text("")
    result = run("check", "llama3-405b", str(empty), "--min-effective", "0.5")
    assert result.exit_code == 2  # a preset that cannot be read outranks one that falls short
    assert "ok   llama3-405b" in result.stdout
    expected = f"error: {empty}: checkpoint.size: no checkpoint size: give checkpoint.params or checkpoint.size"
    assert result.stderr.strip() == expected


# ------------------------------------------------------------ the preset search


def test_unusable_search_entries_are_skipped_with_a_warning(tmp_path: Path) -> None:
    search = tmp_path / "presets"
    search.mkdir()
    os.mkfifo(search / "fifo.toml")  # would hang a reader
    _preset(search / "mine.toml")
    not_a_dir = _preset(tmp_path / "file.toml")
    paths = os.pathsep.join([str(search), str(tmp_path / LONG), str(not_a_dir / "sub")])
    for args in (["optimize", "--json"], ["presets", "list"], ["optimize", "--preset", "nosuch"]):
        done = _ckptcalc(*args, env={"CKPTCALC_PRESET_PATH": paths})
        assert "Traceback" not in done.stderr
        assert f"warning: CKPTCALC_PRESET_PATH: skipped '{search / 'fifo.toml'}': not a regular file" in done.stderr
        assert "File name too long" in done.stderr and "Not a directory" in done.stderr
    assert "mine" in _ckptcalc("presets", "list", env={"CKPTCALC_PRESET_PATH": paths}).stdout


# ------------------------------------------------------------ terminal injection


def test_control_characters_print_as_escapes(tmp_path: Path) -> None:
    search = tmp_path / "presets"
    search.mkdir()
    _preset(search / "evil.toml", EVIL)
    env = {"CKPTCALC_PRESET_PATH": str(search)}
    listing = _ckptcalc("presets", "list", env=env)
    assert "\x1b" not in listing.stdout and "\\x1b[2J" in listing.stdout and "\\x07" in listing.stdout
    shown = _ckptcalc("presets", "show", "evil", env=env)
    assert "\x1b" not in shown.stdout
    missing = _ckptcalc("optimize", "--preset", f"{tmp_path}/x\x1b[2J.toml")
    assert missing.returncode == 2 and "\x1b" not in missing.stderr and "\\x1b[2J" in missing.stderr
    table = _ckptcalc("optimize", "--preset", str(search / "evil.toml"), "--what-if", "x")
    assert "\x1b" not in table.stderr
    fit_log = tmp_path / "log.csv"
    fit_log.write_text("time,cause\n0,gpu\n1,\x1b[31mred\n3,gpu\n", encoding="utf-8")
    fitted = _ckptcalc("fit", str(fit_log), "--time-unit", "h", "--cause", "cause")
    assert fitted.returncode == 0 and "\x1b" not in fitted.stdout and "\\x1b[31mred" in fitted.stdout


# ---------------------------------------------------------------- help


COMMANDS = ["optimize", "sweep", "compare", "simulate", "plan", "check", "fit", "analyze", "events", "schema"]


@pytest.mark.parametrize("command", COMMANDS)
def test_help_speaks_the_users_terms(command: str) -> None:
    text = _ckptcalc(command, "--help").stdout
    for internal in ("<bool>", "<str>", "<int>", "<list[str]>", "<float>", "<path>"):
        assert internal not in text, internal
    assert " · " not in text  # one example a line
    assert "Examples:" in text


def test_model_options_show_the_default_presets_values() -> None:
    text = " ".join(_ckptcalc("optimize", "--help").stdout.split())
    assert "(llama3-405b: 2.00 TB/s)" in text and "(llama3-405b: 405B)" in text


@pytest.mark.parametrize("args", [[], ["presets"]])
def test_bare_commands_print_their_help_once(args: list[str]) -> None:
    done = _ckptcalc(*args)
    assert done.returncode == 0 and done.stdout.count("Usage:") == 1


# ------------------------------------------------------------ small fixes


def test_counts_and_sweeps(run: Run) -> None:
    assert run("optimize", "--gpus", "16Ki", "--value", "inputs.gpus").stdout.strip() == "16384"
    assert run("optimize", "--gpus", "16k", "--value", "inputs.gpus").stdout.strip() == "16000"
    gpus = json.loads(run("sweep", "--over", "gpus", "--points", "7", "--json").stdout)["values"]
    assert all(float(v).is_integer() for v in gpus) and len(gpus) == 7
    asynchronous = json.loads(run("sweep", "--preset", "llama3-405b-async", "--json").stdout)
    assert asynchronous["values"][0] == pytest.approx(3.24)  # starts at the persist time, not below


def test_no_numpy_warning_lines() -> None:
    done = _ckptcalc("sweep", "--over", "mtbf", "--from", "1e-9s", "--to", "1e-3s", "--points", "50", "--json")
    assert "RuntimeWarning" not in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------------ saving and reports


def test_save_preset_says_where_it_came_from(run: Run, tmp_path: Path) -> None:
    from ckptcalc import api

    target = tmp_path / "faster.toml"
    result = run("optimize", "--bw", "4TB/s", "--save-preset", str(target), "--json")
    assert result.exit_code == 0
    assert f"saved {target} (from llama3-405b, changed: storage.bandwidth)" in result.stderr
    scenario = api.load_preset(str(target))
    assert scenario.derived_from == "llama3-405b" and scenario.changed == ("storage.bandwidth",)
    assert scenario.source is None  # the original's source no longer describes this configuration
    same = tmp_path / "same.toml"
    run("optimize", "--save-preset", str(same), "--json")
    assert api.load_preset(str(same)).source == api.load_preset("llama3-405b").source


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["optimize"], "| restart | 5.23 % | 69.8 % |"),
        (["compare", "--what-if", "restart=2min"], "| restart=2min | 4.45 min |"),
        (["check", "llama3-405b", "--min-effective", "0.9"], "| llama3-405b | 92.5 % | point | pass |"),
        (["sweep", "--points", "3"], "| 4.45 min | 4.45 min | 1.12 % |"),
    ],
)
def test_markdown_tables(run: Run, args: list[str], expected: str) -> None:
    result = run(*args, "--markdown")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("## ckptcalc ") and expected in result.stdout


@pytest.mark.parametrize("columns", ["40", "80"])
def test_compare_never_cuts_a_number(columns: str) -> None:
    args = ["compare", "--what-if", "restart=2min", "--what-if", "bw=20GB/s", "--what-if", "mtbf=24h",
            "--what-if", "gpus=100000", "--what-if", "restart=1min"]  # fmt: skip
    done = _ckptcalc(*args, env={"COLUMNS": columns})
    assert done.returncode == 0 and "…" not in done.stdout
    assert "-24.68" in done.stdout and "67.8 %" in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= int(columns)


def test_extremes_still_validate(run_json: Any) -> None:
    # Shares of elapsed time stay within [0, 1] where first order would charge 200 % to restarts.
    doc = run_json("optimize", "--mtbf", "5min")
    assert 0.0 <= doc["loss"]["restart"] <= 1.0 and doc["first_order"]["loss"]["restart"] > 1.0
    simulated = run_json("simulate", "--preset", "gemini-inmemory", "--memory-interval", "1e-9s", "--interval",
                         "1e10s", "--cycles", "1e4")  # fmt: skip
    assert simulated["storage_every"] >= 1


@pytest.mark.parametrize(
    ("args", "culprit", "name"),
    [
        (["optimize", "--save-preset"], "--save-preset", "out.toml"),
        (["sweep", "--plot"], "--plot", "out.png"),
        (["fit", "tests/data/trace-54d.json", "--time-unit", "d", "--save-preset"], "--save-preset", "out.toml"),
        (["analyze", "tests/data/hand-run.jsonl", "--time-unit", "min", "--save-preset"], "--save-preset", "out.toml"),
    ],
)
def test_force_never_replaces_a_special_file(
    run: Run, tmp_path: Path, args: list[str], culprit: str, name: str
) -> None:
    # A FIFO (or /dev/null, as root) replaced by a regular file would break everything else using it.
    import stat

    target = tmp_path / name
    os.mkfifo(target)
    args = [str(DATA / a.removeprefix("tests/data/")) if a.startswith("tests/data/") else a for a in args]
    result = run(*args, str(target), "--force")
    assert_usage_error(result, culprit)
    assert "not a regular file" in result.stderr
    assert stat.S_ISFIFO(os.stat(target).st_mode)
