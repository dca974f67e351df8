"""Hostile use of the command line: every bad invocation fails the same plain way, and output behaves in pipes.

The contract (README, "Exit codes"): bad input exits 2 with exactly one line ``error: ...`` on stderr that names
the culprit, nothing on stdout, no traceback, no Rich panel, and nothing written to disk. Output sent to a pipe
carries no colour codes, and the tables stay within a 60-column terminal without cutting the numbers.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from references import daly as _daly
from references import lambert as _lambert

from ckptcalc.inputs import presets
from ckptcalc.inputs.scenario import resolve
from ckptcalc.inputs.units import format_duration, format_percent, sig
from ckptcalc.model.evaluation import evaluate

Run = Callable[..., Any]

BOX = "╭╰│─┃━"
ANSI = "\x1b["

#: Commands that take ``--json``; the table inserts it right after the command name, so that a trailing
#: option left without its value (``optimize --bw``) stays at the end of the line.
JSON_COMMANDS = {("optimize",), ("sweep",), ("compare",), ("simulate",), ("check",), ("presets", "list")}

CLUSTER_TOML = """\
schema_version = 1
name = "cluster"
description = "Our 4k-GPU cluster"

[checkpoint]
params = 70e9
bytes_per_param = 16

[storage]
bandwidth = "400GB/s"

[failures]
mtbf = "9h"
restart = "6min"

[cluster]
gpus = 4096
"""

#: Files present in the working directory of every case (None: a directory). Each case must leave all of
#: them exactly as they were, and create nothing beside them.
FILES: dict[str, bytes | None] = {
    "cluster.toml": CLUSTER_TOML.encode(),
    "saved.toml": b'# precious, must not be overwritten\nschema_version = 1\n[storage]\nbandwidth = "1TB/s"\n',
    "loss.png": b"\x89PNG\r\n\x1a\n precious picture",
    "bare-rate.toml": b"schema_version = 1\n[storage]\nbandwidth = 2\n",
    "not-toml.toml": b"[storage\nbandwidth = '2TB/s'\n",
    "typo.toml": b'[storage]\nbandwdth = "2TB/s"\n',
    "latin1.toml": b'description = "caf\xe9"\n',
    "future.toml": b"schema_version = 99\n",
    "inf.toml": b"[checkpoint]\nparams = inf\n",
    "nan.toml": b"[checkpoint]\nparams = nan\n",
    "deep.toml": b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "scalar-table.toml": b"storage = 3\n",
    "unknown-table.toml": b"[frobnicate]\nx = 1\n",
    "bad-name.toml": b"name = 3\n",
    "negative.toml": b'[failures]\nmtbf = "-3h"\n',
    "adir": None,
    "user": None,
    "user/broken.toml": b'[storage]\nbandwidth = "fast"\n',
}


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    culprit: str


def case(culprit: str, *args: str, id: str | None = None) -> Any:
    return pytest.param(Case(id or " ".join(args), args, culprit), id=id or " ".join(args))


CASES = [
    # ------------------------------------------------------------ optimize: Typer's own usage errors
    case("--frobnicate", "optimize", "--frobnicate"),
    case("--bw", "optimize", "--bw", id="optimize --bw <missing value>"),
    case("extra", "optimize", "extra"),
    case("--json", "optimize", "--json=yes"),
    # ------------------------------------------------------------ optimize: units
    case("--bw", "optimize", "--bw", "2"),
    case("--bw", "optimize", "--bw", "2TB"),
    case("--bw", "optimize", "--bw", ""),
    case("--size", "optimize", "--size", "6.5TB/s"),
    case("--mtbf", "optimize", "--mtbf", "3.1"),
    case("--mtbf", "optimize", "--mtbf", "3.1xx"),
    case("--restart", "optimize", "--restart", "10min5"),
    case("--gpu-hour-cost", "optimize", "--gpu-hour-cost", "2.5$"),
    # ------------------------------------------------------------ optimize: zero, negative, NaN, inf, overflow
    case("--bw", "optimize", "--bw", "0TB/s"),
    case("--bw", "optimize", "--bw", "-2TB/s"),
    case("--bw", "optimize", "--bw", "nanTB/s"),
    case("--bw", "optimize", "--bw", "1e400TB/s"),
    case("--mtbf", "optimize", "--mtbf", "infh"),
    case("--mtbf", "optimize", "--mtbf", "0s"),
    case("--restart", "optimize", "--restart", "-10min"),
    case("--interval", "optimize", "--interval", "0s"),
    case("--params", "optimize", "--params", "nan"),
    case("--params", "optimize", "--params", "-405e9"),
    case("--params", "optimize", "--params", "1e308"),  # 1e308 × 16 bytes overflows to inf
    case("--gpus", "optimize", "--gpus", "1.5"),
    case("--gpus", "optimize", "--gpus", "0"),
    case("--gpus", "optimize", "--gpus", "inf"),
    case("--discard", "optimize", "--discard", "1"),
    case("--discard", "optimize", "--discard", "nan"),
    case("--replica-survival", "optimize", "--replica-survival", "1.5"),
    case("--bytes-per-param", "optimize", "--bytes-per-param", "0"),
    # ------------------------------------------------------------ optimize: contradictions
    case("--gpu-mtbf", "optimize", "--mtbf", "1h", "--gpu-mtbf", "100h"),
    case("--snapshot-bw", "optimize", "--snapshot-bw", "1TB/s"),
    case("--memory-bw", "optimize", "--memory-bw", "1TB/s"),
    # ------------------------------------------------------------ optimize: presets
    case("nosuch", "optimize", "--preset", "nosuch"),
    case("nosuch.toml", "optimize", "--preset", "./nosuch.toml"),
    case("--preset", "optimize", "--preset", "", id="optimize --preset <empty>"),
    case("storage.bandwidth", "optimize", "--preset", "bare-rate.toml"),
    case("not-toml.toml", "optimize", "--preset", "not-toml.toml"),
    case("storage.bandwdth", "optimize", "--preset", "typo.toml"),
    case("latin1.toml", "optimize", "--preset", "latin1.toml"),
    case("schema_version", "optimize", "--preset", "future.toml"),
    case("checkpoint.params", "optimize", "--preset", "inf.toml"),
    case("nan.toml: checkpoint.params", "optimize", "--preset", "nan.toml"),
    case("deep.toml", "optimize", "--preset", "deep.toml"),
    case("failures.mtbf", "optimize", "--preset", "negative.toml"),
    case("adir", "optimize", "--preset", "./adir"),
    case("broken.toml: storage.bandwidth", "optimize", "--preset", "broken"),
    # ------------------------------------------------------------ optimize: decisions and output
    case("--target", "optimize", "--target", "1.5"),
    case("--target", "optimize", "--target", "abc"),
    case("--target", "optimize", "--target", "nan"),
    case("--target", "optimize", "--target", "100%"),
    case("--value", "optimize", "--value", "frob"),
    case("--value", "optimize", "--value", "loss"),
    case("--save-preset", "optimize", "--save-preset", "saved.toml"),
    case("--save-preset", "optimize", "--preset", "./cluster.toml", "--bw", "4TB/s", "--save-preset", "./cluster.toml"),
    case("--save-preset", "optimize", "--save-preset", "adir"),
    case("--save-preset", "optimize", "--save-preset", "nodir/new.toml"),
    case("--bw", "optimize", "--save-preset", "new.toml", "--bw", "0TB/s"),
    case("--value", "optimize", "--save-preset", "new.toml", "--value", "frob"),
    # ------------------------------------------------------------ sweep
    case("--points", "sweep", "--points", "abc"),
    case("--points", "sweep", "--points", "1"),
    case("--points", "sweep", "--points", "99999999999999999999999"),
    case("--to", "sweep", "--to", id="sweep --to <missing value>"),
    case("--over", "sweep", "--over", "frob"),
    case("--over", "sweep", "--over", "replica-survival"),
    case("--from", "sweep", "--over", "bw", "--from", "10TB/s", "--to", "1TB/s"),
    case("--from", "sweep", "--over", "bw", "--from", "2"),
    case("--to", "sweep", "--over", "mtbf", "--to", "2TB/s"),
    case("--from", "sweep", "--over", "mtbf", "--from", "0s", "--to", "1h"),
    case("--csv", "sweep", "--csv"),
    case("--restart", "sweep", "--restart", "10"),
    case("--plot", "sweep", "--plot", "out.txt"),
    case("--plot", "sweep", "--plot", "nodir/out.png"),
    case("--plot", "sweep", "--plot", "loss.png"),
    case("--plot", "sweep", "--plot", "", id="sweep --plot <empty>"),
    case("--points", "sweep", "--plot", "new.png", "--points", "1"),
    case("--from", "sweep", "--plot", "new.svg", "--over", "bw", "--from", "2"),
    # ------------------------------------------------------------ compare
    case("nosuch", "compare", "nosuch"),
    case("scalar-table.toml: storage", "compare", "llama3-405b", "scalar-table.toml"),
    case("--bw", "compare", "--bw", "fast"),  # the job flags are compare's own since issue 35
    case("--what-if", "compare", "--what-if", id="compare --what-if <missing value>"),
    case("--what-if restart", "compare", "--what-if", "restart"),
    case("--what-if restart=", "compare", "--what-if", "restart="),
    case("frob", "compare", "--what-if", "frob=2"),
    case("--what-if bw=2", "compare", "--what-if", "bw=2"),
    case("--what-if mtbf=-1h", "compare", "--what-if", "mtbf=-1h"),
    case("--what-if gpus=1e400", "compare", "--what-if", "gpus=1e400"),
    # ------------------------------------------------------------ simulate
    case("--seed", "simulate", "--seed", "x"),
    case("--seed", "simulate", "--seed", "1.5"),
    case("--seed", "simulate", "--seed", "-1"),
    case("--cycles", "simulate", "--cycles", "abc"),
    case("--cycles", "simulate", "--cycles", "0"),
    case("--cycles", "simulate", "--cycles", "10"),
    case("--cycles", "simulate", "--cycles", "1e12"),
    case("--cycles", "simulate", "--cycles", "inf"),
    case("--cycles", "simulate", "--cycles", "1000.5"),
    case("--shape", "simulate", "--failure-dist", "exponential", "--shape", "0.7"),
    case("--shape", "simulate", "--failure-dist", "weibull"),
    case("--shape", "simulate", "--failure-dist", "weibull", "--shape", "0"),
    case("--shape", "simulate", "--failure-dist", "weibull", "--shape", "nan"),
    case("--failure-dist", "simulate", "--failure-dist", "gamma"),
    case("--mtbf", "simulate", "--mtbf", "3.1"),
    # ------------------------------------------------------------ check
    case("PRESET", "check", id="check <no files>"),
    case("--min-effective", "check", "llama3-405b"),
    case("--min-effective", "check", "llama3-405b", "--min-effective", id="check --min-effective <missing value>"),
    case("--min-effective", "check", "llama3-405b", "--min-effective", "1.5"),
    case("--min-effective", "check", "llama3-405b", "--min-effective", "abc"),
    case("nosuch", "check", "nosuch", "--min-effective", "0.9"),
    case("unknown-table.toml: frobnicate", "check", "unknown-table.toml", "--min-effective", "0.9"),
    # ------------------------------------------------------------ presets show / list
    case("argument 'name'", "presets", "show", id="presets show <no name>"),
    case("nosuch", "presets", "show", "nosuch"),
    case("surplus", "presets", "show", "llama3-405b", "surplus"),
    case("--bogus", "presets", "show", "--bogus"),
    case("schema_version", "presets", "show", "./future.toml"),
    case("bad-name.toml: name", "presets", "show", "./bad-name.toml"),
    case("storage.bandwidth", "presets", "show", "broken"),
    case("surplus", "presets", "list", "surplus"),
    case("--bogus", "presets", "list", "--bogus"),
    # ------------------------------------------------------------ the top-level app
    case("optimise", "optimise"),
    case("--bogus", "--bogus"),
    case("frob", "presets", "frob"),
    case("--version", "--version=yes"),
]


def _with_json(args: tuple[str, ...]) -> list[str]:
    for size in (2, 1):
        if tuple(args[:size]) in JSON_COMMANDS:
            return [*args[:size], "--json", *args[size:]]
    return list(args)


def _populate(root: Path) -> None:
    for name, content in FILES.items():
        path = root / name
        if content is None:
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)


def _snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``root`` (hidden ones too): kind, size, mtime and a hash of the contents."""
    entries: dict[str, tuple[Any, ...]] = {}
    for path in [root, *sorted(root.rglob("*"))]:
        info = path.lstat()
        name = path.relative_to(root).as_posix()
        if path.is_dir() and not path.is_symlink():
            entries[name] = ("dir", info.st_mtime_ns)
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            entries[name] = ("file", info.st_size, info.st_mtime_ns, digest)
    return entries


def assert_plain_error(result: Any, culprit: str) -> None:
    """The usage-error contract, stricter than ``assert_usage_error``: exactly one line, nothing raised."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert_usage_error(result, culprit)
    assert result.stderr.startswith("error: ")
    assert result.stderr.endswith("\n") and result.stderr.count("\n") == 1, result.stderr
    assert not any(ch in result.stderr for ch in BOX), result.stderr
    assert ANSI not in result.stderr


def test_table_is_large_and_covers_every_command() -> None:
    commands = {c.values[0].args[:2] if c.values[0].args[0] == "presets" else c.values[0].args[:1] for c in CASES}
    assert len(CASES) >= 45
    for needed in [("optimize",), ("sweep",), ("compare",), ("simulate",), ("check",)]:
        assert needed in commands
    assert {("presets", "show"), ("presets", "list"), ("presets", "frob"), ("--bogus",), ("optimise",)} <= commands


@pytest.mark.parametrize("bad", CASES)
def test_bad_invocation(bad: Case, run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _populate(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CKPTCALC_PRESET_PATH", str(tmp_path / "user"))
    before = _snapshot(tmp_path)
    result = run(*_with_json(bad.args))
    assert_plain_error(result, bad.culprit)
    assert _snapshot(tmp_path) == before


# Values that parse but push the arithmetic to its limits: they must give a result (finite JSON, never NaN) or
# a plain usage error, never a traceback and exit 1.
EXTREMES = [
    ("optimize", "--params", "1e300", "--bytes-per-param", "1e300"),
    ("optimize", "--size", "1e-320"),
    ("optimize", "--mtbf", "1e-300s"),
    ("optimize", "--restart", "1e300d"),
    ("optimize", "--gpus", "1e300"),
    ("optimize", "--failures", "1e300", "--window", "1s"),
    ("optimize", "--gpu-hour-cost", "1e308"),
    ("sweep", "--over", "bw", "--from", "1e-300B/s", "--to", "1e300B/s"),
    ("simulate", "--cycles", "1e3", "--mtbf", "1e-300s"),
    ("simulate", "--cycles", "1e3", "--size", "1e-320"),
]


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("args", EXTREMES, ids=[" ".join(a) for a in EXTREMES])
def test_extreme_values_never_crash(args: tuple[str, ...], run: Run) -> None:
    result = run(*_with_json(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr)
    if result.exit_code == 0:
        assert isinstance(_strict_json(result.stdout), dict)
    else:
        assert result.stdout == ""
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr


def test_extreme_values_never_crash_the_table(run: Run) -> None:
    result = run("optimize", "--params", "1e308")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), (result.exit_code, result.stderr)


# ---------------------------------------------------------------- a real process, stderr a pipe


def _env(**changes: str | None) -> dict[str, str]:
    """The test environment without anything that forces colour or a terminal, plus ``changes``."""
    env = dict(os.environ)
    for name in ("FORCE_COLOR", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "PY_COLORS", "NO_COLOR"):
        env.pop(name, None)
    env.update(TERM="xterm-256color", COLORTERM="truecolor")
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _ckptcalc(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ckptcalc", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env if env is not None else _env(),
        cwd=cwd,
        timeout=timeout,
    )


SUBPROCESS_CASES = [
    pytest.param(("optimize", "--json", "--frobnicate"), "--frobnicate", id="typer unknown option"),
    pytest.param(("optimise",), "optimise", id="typer unknown command"),
    pytest.param(("presets", "show"), "argument 'name'", id="typer missing argument"),
    pytest.param(("sweep", "--json", "--points", "abc"), "--points", id="typer not an integer"),
    pytest.param(("optimize", "--json", "--bw", "2"), "--bw", id="unit"),
    pytest.param(("check", "--json", "./missing.toml", "--min-effective", "0.9"), "missing.toml", id="preset file"),
    pytest.param(("simulate", "--json", "--cycles", "10"), "--cycles", id="range"),
]


@pytest.mark.parametrize(("args", "culprit"), SUBPROCESS_CASES)
def test_bad_invocation_in_a_real_process(args: tuple[str, ...], culprit: str, tmp_path: Path) -> None:
    before = _snapshot(tmp_path)
    done = _ckptcalc(*args, cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert culprit in done.stderr
    assert "Traceback" not in done.stderr
    assert ANSI not in done.stderr
    assert not any(ch in done.stderr for ch in BOX), done.stderr
    assert _snapshot(tmp_path) == before


# ---------------------------------------------------------------- terminal manners

GOOD = [
    ("optimize",),
    ("sweep",),
    ("compare", "llama3-405b", "bloom-176b"),
    ("simulate", "--cycles", "1e5"),
    ("--help",),
    ("optimize", "--help"),
]


@pytest.mark.parametrize("no_color", ["1", None], ids=["NO_COLOR=1", "piped, no NO_COLOR"])
@pytest.mark.parametrize("args", GOOD, ids=[" ".join(a) for a in GOOD])
def test_no_ansi_in_a_pipe(args: tuple[str, ...], no_color: str | None) -> None:
    done = _ckptcalc(*args, env=_env(NO_COLOR=no_color))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert ANSI not in done.stdout, done.stdout
    assert ANSI not in done.stderr, done.stderr


def _single(preset: str, **changes: Any) -> tuple[float, float]:
    """(exact optimum, effective time there) of a one-level preset, from the formulas."""
    config = resolve(presets.load(preset)).config.replace(**changes)
    delta, mtbf = float(config.write_s), float(config.mtbf_s)
    tau = _lambert(delta, mtbf)
    return tau, _daly(tau, delta, float(config.restart_s), mtbf)


def _narrow_numbers() -> dict[str, list[str]]:
    """The numbers each table must show whole in 60 columns: worked from the formulas for one level, and
    the exact model's own figures for the two-level preset (checked against an independent reference in
    test_levels and test_sim_independent)."""
    tau, effective = _single("llama3-405b")
    gemini = evaluate(resolve(presets.load("gemini-inmemory")).config)
    assert gemini.optimal_memory_interval_s is not None
    _, slow = _single("llama3-405b", bandwidth=200e9)
    fast_tau, fast = _single("llama3-405b", bandwidth=20e12)
    bloom_tau, bloom = _single("bloom-176b")
    long = _daly(10 * tau, 3.24, 600.0, 11160.0)  # the sweep's last row, τ* × 10
    return {
        "optimize": [
            format_percent(effective),
            format_duration(tau),
            format_percent(1 - effective),
            "3.24 s",
            "6.48 TB",
        ],
        "gemini-inmemory": [
            format_percent(gemini.effective),
            format_duration(gemini.optimal_interval_s),
            format_percent(gemini.total),
            format_duration(gemini.optimal_memory_interval_s),
        ],
        "sweep": [
            format_duration(tau),
            format_duration(tau / 10),
            format_duration(tau * 10),
            sig(effective * 100),
            sig(long * 100),
        ],
        "sweep bw": [
            "200 GB/s",
            "20.0 TB/s",
            format_duration(tau),
            sig(slow * 100),
            sig(fast * 100),
            format_duration(fast_tau),
        ],
        # the middle row of 21 log-spaced points from M/10 to 10·M is the preset itself
        "sweep two levels": [
            "24.0 min",
            "1.67 d",
            format_duration(gemini.optimal_interval_s),
            sig(gemini.effective * 100),
        ],
        "compare": [
            format_percent(effective),
            format_percent(bloom),
            format_duration(tau),
            format_duration(bloom_tau),
            f"{(bloom - effective) * 100:+.2f}",
        ],
    }


NUMBERS = _narrow_numbers()
NARROW = [
    pytest.param(("optimize",), NUMBERS["optimize"], id="optimize"),
    pytest.param(("optimize", "--preset", "gemini-inmemory"), NUMBERS["gemini-inmemory"], id="gemini-inmemory"),
    pytest.param(("sweep",), NUMBERS["sweep"], id="sweep"),
    pytest.param(("sweep", "--over", "bw"), NUMBERS["sweep bw"], id="sweep bw"),
    pytest.param(("compare", "llama3-405b", "bloom-176b"), NUMBERS["compare"], id="compare"),
    pytest.param(
        ("sweep", "--preset", "gemini-inmemory", "--over", "mtbf"), NUMBERS["sweep two levels"], id="sweep two levels"
    ),
    pytest.param(("simulate", "--cycles", "1e5"), None, id="simulate"),
]


@pytest.mark.parametrize(("args", "numbers"), NARROW)
def test_tables_fit_60_columns(args: tuple[str, ...], numbers: list[str] | None, run: Run) -> None:
    # In-process: the width is the tables' own affair (each case prints here what a process prints).
    env = {"COLUMNS": "60", "LINES": "25"}
    done = run(*args, env=env)
    assert done.exit_code == 0, done.stderr
    wide = [line for line in done.stdout.splitlines() if len(line) > 60]
    assert not wide, "\n".join(wide)
    assert "…" not in done.stdout
    if numbers is None:  # the simulation's headline: effective time and its confidence interval, 4 digits
        doc = json.loads(run(*args, "--json", env=env).stdout)
        low, high = doc["effective_ci95"]
        numbers = [format_percent(value, 4) for value in (doc["effective"], low, high)]
    for number in numbers:
        assert number in done.stdout, f"{number!r} missing or split across lines in:\n{done.stdout}"


# ---------------------------------------------------------------- shell completion
#
# Typer 0.29 detects the shell with shellingham, from the process tree (not from $SHELL alone), and
# ``--show-completion``/``--install-completion`` are plain flags. With _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION
# set they take the shell's name instead, which makes the result independent of whoever runs the tests.


def _assert_bash_script(text: str) -> None:
    assert "ckptcalc" in text
    assert "_CKPTCALC_COMPLETE=complete_bash" in text
    assert re.search(r"^complete .*ckptcalc$", text, re.MULTILINE), text


def test_show_completion_for_a_named_shell() -> None:
    env = _env(SHELL="/bin/bash", _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    done = _ckptcalc("--show-completion", "bash", env=env)
    assert done.returncode == 0, done.stderr
    _assert_bash_script(done.stdout)
    assert ANSI not in done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_show_completion_detects_bash() -> None:
    env = _env(SHELL="/bin/bash")
    # A list, not one simple command, so that bash stays the parent process instead of exec'ing Python.
    script = '"$0" -m ckptcalc --show-completion; exit $?'
    done = subprocess.run(
        ["bash", "-c", script, sys.executable], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    _assert_bash_script(done.stdout)


def test_help_offers_completion() -> None:
    done = _ckptcalc("--help", env=_env(NO_COLOR="1"))
    assert done.returncode == 0, done.stderr
    assert "--install-completion" in done.stdout
    assert "--show-completion" in done.stdout


def test_install_completion_into_a_scratch_home(tmp_path: Path) -> None:
    env = _env(HOME=str(tmp_path), SHELL="/bin/bash", _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    done = _ckptcalc("--install-completion", "bash", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ANSI not in done.stdout
    script = tmp_path / ".bash_completions" / "ckptcalc.sh"
    assert str(script) in done.stdout
    _assert_bash_script(script.read_text())
    assert str(script) in (tmp_path / ".bashrc").read_text()


# ---------------------------------------------------------------- logs at the edges of a double

SMALL_LOG = "time,kind\n1,gpu\n5,gpu\n9,gpu\n"


@pytest.mark.parametrize(
    ("log", "window", "interruptions", "mtbf"),
    [
        # window [1 s, 1e308 s], 2 interruptions after its start: MTBF 5e307 s = 5.787e302 d
        (SMALL_LOG, ("--window-end", "1e308"), 2, "5.79e+302 d"),
        # window [-1e308 s, 9 s], all 3 inside: MTBF 1e308 / 3 s = 3.858e302 d
        (SMALL_LOG, ("--window-start=-1e308",), 3, "3.86e+302 d"),
        # times 1, 1e307, 1.5e308 s: window 1.5e308 s, 2 interruptions: MTBF 7.5e307 s = 8.681e302 d
        ("time,kind\n1,gpu\n1e307,gpu\n1.5e308,gpu\n", (), 2, "8.68e+302 d"),
    ],
)
def test_times_near_the_largest_double_print_a_whole_table(
    log: str, window: tuple[str, ...], interruptions: int, mtbf: str, run: Run, tmp_path: Path
) -> None:
    path = tmp_path / "incidents.csv"
    path.write_text(log)
    document = run("fit", str(path), "--time-unit", "s", *window, "--json")
    assert document.exit_code == 0, document.stderr
    found = json.loads(document.stdout)
    assert found["interruptions"] == interruptions
    # 2T overflows in the interval's formula: the bounds are unknown, not a crash.
    assert found["mtbf_ci95"] == [None, None]
    table = run("fit", str(path), "--time-unit", "s", *window)
    assert table.exit_code == 0, table.stderr
    assert table.exception is None or isinstance(table.exception, SystemExit), repr(table.exception)
    assert f"MTBF: {mtbf}  (95 %: - to ∞)" in table.stdout
    assert "Gaps between interruptions" in table.stdout  # the table went on to its end


def test_a_csv_with_100000_columns_is_read_in_linear_time(tmp_path: Path) -> None:
    # The header's duplicate check once compared every name with every other: 10^10 steps here.
    columns = 10**5
    path = tmp_path / "wide.csv"
    with path.open("w") as out:
        out.write(",".join(f"c{i}" for i in range(columns)) + "\n")
        for hour in (1, 2, 4):
            out.write(f"{hour}," + ",".join(["x"] * (columns - 1)) + "\n")
    done = _ckptcalc("fit", str(path), "--time", "c0", "--time-unit", "h", "--json", env=_env(), timeout=90)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    # incidents at 1, 2 and 4 h: the window [1 h, 4 h] holds 2 interruptions, MTBF 1.5 h
    assert (found["events_kept"], found["interruptions"], found["mtbf_s"]) == (3, 2, 5400.0)


def test_a_duplicate_column_among_100000_is_named(tmp_path: Path) -> None:
    columns = 10**5
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(columns)) + ",c777\n1," + ",".join(["x"] * columns) + "\n")
    done = _ckptcalc("fit", str(path), "--time", "c0", "--time-unit", "h", env=_env(), timeout=90)
    assert done.returncode == 2
    assert done.stderr == f"error: {path}:1: duplicate column 'c777' in the header\n"


@pytest.mark.parametrize("mtbf", ["2s", "0.5s", "1e-3s"])
def test_in_place_recovery_on_a_job_that_fails_far_faster_than_it_restarts_is_effective_0(
    run_json: Callable[..., dict[str, Any]], mtbf: str
) -> None:
    # A failure every few seconds against a 10-minute restart: the shares of the failures that end a step
    # overflow, and the job gets nothing done (it raised ZeroDivisionError, exit 1, before).
    doc = run_json("optimize", "--mtbf", mtbf, "--jit-share", "0.6", "--step-time", "10s", "--notice-share", "0.05")
    assert doc["effective"] == 0.0
