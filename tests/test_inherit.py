"""Preset inheritance: ``base = "NAME"`` or a relative path, merged key by key before validation."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from typer.testing import CliRunner

from ckptcalc.cli import app
from ckptcalc.errors import InputError, PresetError
from ckptcalc.inputs import preset_document, preset_search, presets
from ckptcalc.inputs.scenario import resolve

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

FULL = """\
schema_version = 1
name = "full"
description = "a complete preset"
source = "test"

[checkpoint]
params = 70e9
bytes_per_param = 16

[storage]
bandwidth = "1TB/s"

[failures]
mtbf = "6h"
mtbf_ci95 = ["5h", "7h"]
restart = "5min"

[cluster]
gpus = 4096
"""


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A preset directory searched by name before the shipped ones."""
    directory = tmp_path / "user"
    directory.mkdir()
    monkeypatch.setenv(preset_search.PATH_VARIABLE, str(directory))
    return directory


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _numbers(document: dict[str, Any]) -> dict[str, Any]:
    """An ``optimize --json`` document without the label of the preset it started from."""
    return {key: value for key, value in document.items() if key != "preset"}


# ---------------------------------------------------------------- shipped presets that inherit


@pytest.mark.parametrize(
    ("preset", "equivalent"),
    [
        (
            "gemini-inmemory",
            ["--preset", "gemini-storage-only", "--replica-survival", "0.99", "--memory-bw", "2.16TB/s",
             "--memory-restart", "1min"],
        ),
        ("llama3-405b-async", ["--preset", "llama3-405b", "--snapshot-bw", "409.6TB/s"]),
    ],
)  # fmt: skip
def test_shipped_inheriting_preset_equals_its_base_with_flags(
    run_json: RunJson, preset: str, equivalent: list[str]
) -> None:
    inherited = run_json("optimize", "--preset", preset)
    flagged = run_json("optimize", *equivalent)
    assert inherited["preset"] == preset
    assert _numbers(inherited) == _numbers(flagged)


@pytest.mark.parametrize(
    ("preset", "base"), [("gemini-inmemory", "gemini-storage-only"), ("llama3-405b-async", "llama3-405b")]
)
def test_shipped_files_name_their_base(preset: str, base: str) -> None:
    document = tomllib.loads((preset_search.shipped_dir() / f"{preset}.toml").read_text(encoding="utf-8"))
    assert document["base"] == base
    assert document["name"] == preset
    assert "checkpoint" not in document and "failures" not in document and "cluster" not in document


#: The tables the two files held before they inherited (git history of presets/).
FLAT = {
    "gemini-inmemory": """\
[checkpoint]
size = "6.48TB"
[storage]
bandwidth = "72GB/s"
[failures]
mtbf = "4h"
restart = "10min"
[cluster]
gpus = 16384
[memory]
replica_survival = 0.99
bandwidth = "2.16TB/s"
restart = "1min"
""",
    "llama3-405b-async": """\
[checkpoint]
params = 405e9
bytes_per_param = 16
[storage]
bandwidth = "2TB/s"
snapshot_bandwidth = "409.6TB/s"
[failures]
mtbf = "3.1h"
restart = "10min"
[cluster]
gpus = 16384
""",
}


@pytest.mark.parametrize("preset", sorted(FLAT))
def test_shipped_inheriting_presets_keep_their_numbers(preset: str) -> None:
    loaded = presets.load(preset)
    flat = presets.parse(FLAT[preset], "flat.toml")
    assert loaded.values() == flat.values()
    assert loaded.mtbf_ci95 is None
    # Metadata is the file's own, never the base's.
    assert loaded.name == preset
    base = presets.parent(preset)
    assert base is not None
    assert loaded.source != presets.load(base.ref).source
    assert loaded.description != presets.load(base.ref).description


def test_lever_assumptions_come_from_the_shipped_bases(user_dir: Path) -> None:
    before = presets.lever_assumptions()
    snapshot = presets.parse(FLAT["llama3-405b-async"], "flat.toml")
    memory = presets.parse(FLAT["gemini-inmemory"], "flat.toml")
    assert snapshot.snapshot_bandwidth is not None and memory.memory_bandwidth is not None
    assert before == {
        "snapshot_bandwidth_per_gpu": snapshot.snapshot_bandwidth / 16384,
        "replica_survival": 0.99,
        "memory_bandwidth_per_gpu": memory.memory_bandwidth / 16384,
        "memory_restart_s": 60.0,
    }
    # A user's preset of the same name as a shipped base changes what --preset NAME loads ...
    _write(user_dir / "gemini-storage-only.toml", FULL.replace("gpus = 4096", "gpus = 1024"))
    assert presets.load("gemini-storage-only").gpus == 1024
    # ... but not the shipped presets built on it, nor what the levers assume.
    assert presets.load("gemini-inmemory").gpus == 16384
    assert presets.lever_assumptions() == before


# ---------------------------------------------------------------- finding the base


def test_relative_path_base_is_relative_to_the_file(
    run_json: RunJson, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "lib" / "common.toml", FULL)
    child = _write(tmp_path / "jobs" / "child.toml", 'base = "../lib/common.toml"\n[failures]\nrestart = "2min"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    inherited = run_json("optimize", "--preset", str(child))
    flagged = run_json("optimize", "--preset", str(tmp_path / "lib" / "common.toml"), "--restart", "2min")
    assert _numbers(inherited) == _numbers(flagged)
    assert inherited["inputs"]["restart_s"] == 120.0


def test_name_base_is_looked_up_like_a_preset(run_json: RunJson, user_dir: Path) -> None:
    _write(user_dir / "common.toml", FULL)
    _write(user_dir / "child.toml", 'base = "common"\nname = "child"\n[cluster]\ngpus = 8192\n')
    inherited = run_json("optimize", "--preset", "child")
    assert inherited["inputs"]["gpus"] == 8192
    # Key by key: the base's job MTBF stays as written (the flag --gpus would hold the per-GPU rate).
    assert inherited["inputs"]["mtbf_s"] == 6 * 3600.0
    # A shipped preset is a base like any other.
    _write(user_dir / "faster.toml", 'base = "llama3-405b"\n[storage]\nbandwidth = "4TB/s"\n')
    assert _numbers(run_json("optimize", "--preset", "faster")) == _numbers(
        run_json("optimize", "--preset", "llama3-405b", "--bw", "4TB/s")
    )


def test_one_key_overrides_and_keeps_its_siblings(run_json: RunJson, tmp_path: Path) -> None:
    child = _write(tmp_path / "child.toml", 'base = "llama3-405b-async"\n[storage]\nbandwidth = "4TB/s"\n')
    inputs = run_json("optimize", "--preset", str(child))["inputs"]
    assert inputs["bandwidth_bytes_per_s"] == 4e12
    assert inputs["snapshot_bandwidth_bytes_per_s"] == 409.6e12
    assert inputs["params"] == 405e9 and inputs["bytes_per_param"] == 16


def test_each_key_remembers_its_file(tmp_path: Path) -> None:
    base = _write(tmp_path / "common.toml", FULL)
    child = _write(tmp_path / "child.toml", 'base = "common.toml"\n[failures]\nrestart = "2min"\n')
    scenario = presets.load(str(child))
    assert scenario.where("bandwidth") == f"{base}: storage.bandwidth"
    assert scenario.where("restart_s") == f"{child}: failures.restart"
    assert scenario.name is None or scenario.name == "child"
    assert scenario.description is None and scenario.source is None


# ---------------------------------------------------------------- one way of stating an input


@pytest.mark.parametrize(
    ("tables", "flags"),
    [
        # The child's size replaces the base's params and bytes per parameter ...
        ('[checkpoint]\nsize = "2TB"\n', ["--size", "2TB"]),
        # ... and its parameters replace a base's size (bloom-176b states a size).
        ("[checkpoint]\nparams = 176e9\n", ["--params", "176e9"]),
        # A failure interval of its own drops the base's, and the base's 95 % interval with it.
        ('[failures]\ngpu_mtbf = "30000h"\n', ["--gpu-mtbf", "30000h"]),
        ('[failures]\ncount = 12\nwindow = "60h"\n', ["--failures", "12", "--window", "60h"]),
        ('[failures]\nmtbf = "8h"\n', ["--mtbf", "8h"]),
        # The interval alone keeps the base's MTBF.
        ('[failures]\nmtbf_ci95 = ["5.5h", "6.5h"]\n', ["--mtbf-ci", "5.5h:6.5h"]),
    ],
)
def test_one_way_of_stating_an_input_wins(run_json: RunJson, tmp_path: Path, tables: str, flags: list[str]) -> None:
    source = FULL if "176e9" not in tables else FULL.replace("params = 70e9\nbytes_per_param = 16", 'size = "2.3TB"')
    _write(tmp_path / "common.toml", source)
    child = _write(tmp_path / "child.toml", f'base = "common.toml"\n{tables}')
    inherited = run_json("optimize", "--preset", str(child))
    flagged = run_json("optimize", "--preset", str(tmp_path / "common.toml"), *flags)
    assert _numbers(inherited) == _numbers(flagged)


@pytest.mark.parametrize(
    ("base", "tables", "flags"),
    [
        # The restart's parts replace the base's restart ...
        (
            "llama3-405b",
            '[failures]\ndetect = "15min"\nreschedule = "3min"\nwarmup = "2min"\n[storage]\nread_bandwidth = "1TB/s"\n',
            ["--detect", "15min", "--reschedule", "3min", "--warmup", "2min", "--read-bw", "1TB/s"],
        ),
        # ... and a restart replaces the base's parts.
        ("parts.toml", '[failures]\nrestart = "7min"\n', ["--restart", "7min"]),
    ],
)
def test_restart_one_way_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: str, tables: str, flags: list[str]
) -> None:
    parts = '[failures]\ndetect = "15min"\nreschedule = "3min"\nwarmup = "2min"\n[storage]\nread_bandwidth = "1TB/s"\n'
    _write(tmp_path / "parts.toml", f'base = "llama3-405b"\n{parts}')
    _write(tmp_path / "child.toml", f'base = "{base}"\n{tables}')
    monkeypatch.chdir(tmp_path)
    # Only the numbers matter here: the document's schema is the concern of the restart's own tests.
    runner = CliRunner()
    inherited, flagged = (
        runner.invoke(app, ["optimize", "--preset", *args, "--json"]) for args in (["child.toml"], [base, *flags])
    )
    assert inherited.exit_code == 0 and flagged.exit_code == 0, (inherited.stderr, flagged.stderr)
    assert _numbers(json.loads(inherited.stdout)) == _numbers(json.loads(flagged.stdout))


def test_child_size_drops_the_base_params(run_json: RunJson, tmp_path: Path) -> None:
    child = _write(tmp_path / "child.toml", 'base = "llama3-405b"\n[checkpoint]\nsize = "2TB"\n')
    inputs = run_json("optimize", "--preset", str(child))["inputs"]
    assert inputs["checkpoint_bytes"] == 2e12
    assert inputs["params"] is None and inputs["bytes_per_param"] is None


def test_child_failure_interval_drops_the_base_band(run_json: RunJson, tmp_path: Path) -> None:
    _write(tmp_path / "common.toml", FULL)
    child = _write(tmp_path / "child.toml", 'base = "common.toml"\n[failures]\nmtbf = "8h"\n')
    inputs = run_json("optimize", "--preset", str(child))["inputs"]
    assert inputs["mtbf_s"] == 8 * 3600.0
    assert inputs["mtbf_ci95"] is None


# ---------------------------------------------------------------- errors


def _chain(directory: Path, count: int) -> None:
    """``d0.toml`` a complete preset, ``dN.toml`` inheriting from ``d(N-1).toml``."""
    _write(directory / "d0.toml", FULL)
    for n in range(1, count + 1):
        _write(directory / f"d{n}.toml", f'base = "d{n - 1}.toml"\n')


def test_eight_bases_load(run_json: RunJson, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _chain(tmp_path, 8)
    monkeypatch.chdir(tmp_path)
    assert _numbers(run_json("optimize", "--preset", "d8.toml")) == _numbers(
        run_json("optimize", "--preset", "d0.toml")
    )


def test_nine_bases_are_too_many(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _chain(tmp_path, 9)
    monkeypatch.chdir(tmp_path)
    result = run("optimize", "--preset", "d9.toml")
    assert_usage_error(result, "d1.toml: base: ")
    assert "more than 8 bases" in result.stderr
    assert " -> ".join(f"d{n}.toml" for n in range(9, -1, -1)) in result.stderr


def test_cycle_of_two(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "a.toml", 'base = "b.toml"\n')
    _write(tmp_path / "b.toml", 'base = "a.toml"\n')
    monkeypatch.chdir(tmp_path)
    result = run("optimize", "--preset", "a.toml")
    # The base key that closes the cycle is named, with the whole chain.
    assert_usage_error(result, "error: b.toml: base: cycle: a.toml -> b.toml -> a.toml")


def test_cycle_through_names(run: Run, user_dir: Path) -> None:
    _write(user_dir / "a.toml", 'base = "b"\n')
    _write(user_dir / "b.toml", 'base = "a"\n')
    assert_usage_error(run("optimize", "--preset", "a"), "b.toml: base: cycle: a.toml -> b.toml -> a.toml")


def test_self_reference(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "self.toml", FULL.replace("schema_version = 1\n", 'schema_version = 1\nbase = "self.toml"\n'))
    monkeypatch.chdir(tmp_path)
    assert_usage_error(run("optimize", "--preset", "self.toml"), "self.toml: base: cycle: self.toml -> self.toml")


def test_missing_path_base(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "child.toml", 'base = "gone.toml"\n')
    monkeypatch.chdir(tmp_path)
    result = run("optimize", "--preset", "child.toml")
    assert_usage_error(result, "error: child.toml: base: gone.toml: no such file")
    assert "child.toml -> gone.toml" in result.stderr


def test_missing_name_base(run: Run, user_dir: Path) -> None:
    _write(user_dir / "child.toml", 'base = "llama3-405"\n')
    result = run("optimize", "--preset", "child")
    assert_usage_error(result, "child.toml: base: unknown preset 'llama3-405'")
    assert "did you mean 'llama3-405b'?" in result.stderr
    assert "child.toml -> llama3-405" in result.stderr


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("5", ["must be a string", "an integer"]),
        ("true", ["must be a string", "a boolean"]),
        ('["llama3-405b"]', ["must be a string", "an array"]),
        ("{ name = 'x' }", ["must be a string", "a table"]),
        ('""', ["empty preset name"]),
        ('"a\\u0000.toml"', ["NUL"]),
    ],
)
def test_base_that_is_not_a_preset_reference(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, words: list[str]
) -> None:
    _write(tmp_path / "child.toml", f"base = {value}\n")
    monkeypatch.chdir(tmp_path)
    result = run("optimize", "--preset", "child.toml")
    assert_usage_error(result, "error: child.toml: base: ")
    for word in words:
        assert word in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_base_is_refused_without_hanging(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.mkfifo(tmp_path / "pipe.toml")
    _write(tmp_path / "child.toml", 'base = "pipe.toml"\n')
    monkeypatch.chdir(tmp_path)
    result = run("optimize", "--preset", "child.toml")
    assert_usage_error(result, "child.toml: base: pipe.toml: is a FIFO")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_in_the_search_path_is_skipped_by_name_lookup(run: Run, user_dir: Path) -> None:
    os.mkfifo(user_dir / "pipe.toml")
    _write(user_dir / "child.toml", 'base = "pipe"\n')
    result = run("optimize", "--preset", "child")
    assert_usage_error(result, "child.toml: base: unknown preset 'pipe'")


def test_error_in_a_base_key_names_the_base_file(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "common.toml", FULL.replace('bandwidth = "1TB/s"', 'bandwith = "1TB/s"'))
    _write(tmp_path / "child.toml", 'base = "common.toml"\n[storage]\nbandwidth = "2TB/s"\n')
    monkeypatch.chdir(tmp_path)
    result = run("optimize", "--preset", "child.toml")
    assert_usage_error(result, "error: common.toml: storage.bandwith: unknown key")


def test_error_in_a_child_key_names_the_child_file(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "child.toml", 'base = "llama3-405b"\n[storage]\nbandwidth = 5\n')
    monkeypatch.chdir(tmp_path)
    assert_usage_error(run("optimize", "--preset", "child.toml"), "error: child.toml: storage.bandwidth: ")


def test_out_of_range_base_value_names_the_base_file(run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path / "common.toml", FULL.replace('restart = "5min"', 'restart = "0s"'))
    _write(tmp_path / "child.toml", 'base = "common.toml"\n[storage]\nbandwidth = "2TB/s"\n')
    monkeypatch.chdir(tmp_path)
    result = run("optimize", "--preset", "child.toml")
    assert_usage_error(result, "error: common.toml: failures.restart: must be positive")


def test_a_base_newer_than_ckptcalc_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "new.toml", f"schema_version = {preset_document.SCHEMA_VERSION + 1}\n")
    child = _write(tmp_path / "child.toml", 'base = "new.toml"\n')
    with pytest.raises(PresetError) as info:
        presets.load(str(child))
    assert str(info.value).startswith(f"{tmp_path / 'new.toml'}: schema_version: ")


def test_a_child_that_is_not_a_table_where_a_table_goes(tmp_path: Path) -> None:
    child = _write(tmp_path / "child.toml", 'base = "llama3-405b"\nstorage = "2TB/s"\n')
    with pytest.raises(PresetError) as info:
        presets.load(str(child))
    assert str(info.value).startswith(f"{child}: storage: must be a table")


def test_list_skips_broken_inheriting_presets(run_json: RunJson, user_dir: Path) -> None:
    _write(user_dir / "a.toml", 'base = "b"\n')
    _write(user_dir / "b.toml", 'base = "a"\n')
    _write(user_dir / "lost.toml", 'base = "nowhere"\n')
    _write(user_dir / "child.toml", 'base = "llama3-405b"\ndescription = "mine"\n')
    rows = {row["name"]: row for row in run_json("presets", "list")["presets"]}
    assert rows["child"]["description"] == "mine"
    assert {"llama3-405b-async", "gemini-inmemory", "gemini-storage-only", "llama3-405b"} <= set(rows)
    assert not {"a", "b", "lost"} & set(rows)


# ---------------------------------------------------------------- presets show


def test_show_prints_the_file_as_written(run: Run) -> None:
    result = run("presets", "show", "llama3-405b-async")
    assert result.exit_code == 0, result.stderr
    text = (preset_search.shipped_dir() / "llama3-405b-async.toml").read_text(encoding="utf-8")
    assert result.stdout == text
    assert 'base = "llama3-405b"' in result.stdout


def test_show_resolved_prints_the_merged_preset(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    result = run("presets", "show", "llama3-405b-async", "--resolved")
    assert result.exit_code == 0, result.stderr
    document = tomllib.loads(result.stdout)
    assert "base" not in document
    assert document["name"] == "llama3-405b-async"
    assert document["storage"] == {"bandwidth": "2TB/s", "snapshot_bandwidth": "409.6TB/s"}
    assert document["failures"] == {"mtbf": "3.1h", "restart": "10min"}
    assert document["cluster"] == {"gpus": 16384}
    # What it prints is a preset of the same numbers.
    copy = _write(tmp_path / "copy.toml", result.stdout)
    assert _numbers(run_json("optimize", "--preset", str(copy))) == _numbers(
        run_json("optimize", "--preset", "llama3-405b-async")
    )


def test_show_resolved_of_a_preset_without_base(run: Run) -> None:
    result = run("presets", "show", "llama3-405b", "--resolved")
    assert result.exit_code == 0, result.stderr
    assert tomllib.loads(result.stdout) == tomllib.loads(
        (preset_search.shipped_dir() / "llama3-405b.toml").read_text(encoding="utf-8")
    )


def test_show_resolved_reports_a_cycle(run: Run, user_dir: Path) -> None:
    _write(user_dir / "loop.toml", 'base = "loop"\n')
    assert_usage_error(run("presets", "show", "loop", "--resolved"), "loop.toml: base: cycle")
    assert_usage_error(run("presets", "show", "loop"), "loop.toml: base: cycle")


# ---------------------------------------------------------------- --save-preset --keep-base


def test_keep_base_writes_only_the_differences(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    flags = ["--preset", "llama3-405b-async", "--restart", "5min"]
    result = run("optimize", *flags, "--save-preset", str(path), "--keep-base")
    assert result.exit_code == 0, result.stderr
    assert f"saved {path} (from llama3-405b-async, changed: failures.restart)" in result.stderr
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    assert document["base"] == "llama3-405b"
    assert document["derived_from"] == "llama3-405b-async"
    assert document["changed"] == ["failures.restart"]
    assert document["name"] == "mine"
    assert "source" not in document  # it changed, so the original's source no longer describes it
    assert {key: value for key, value in document.items() if isinstance(value, dict)} == {
        "storage": {"snapshot_bandwidth": "409.6TB/s"},
        "failures": {"restart": "5min"},
    }
    assert _numbers(run_json("optimize", "--preset", str(path))) == _numbers(run_json("optimize", *flags))


def test_without_keep_base_the_resolved_values_are_written(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "flat.toml"
    result = run("optimize", "--preset", "llama3-405b-async", "--save-preset", str(path))
    assert result.exit_code == 0, result.stderr
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    assert "base" not in document
    assert document["storage"] == {"bandwidth": "2TB/s", "snapshot_bandwidth": "409.6TB/s"}
    assert document["derived_from"] == "llama3-405b-async"


@pytest.mark.parametrize(
    "flags",
    [
        [],
        ["--gpus", "32768"],  # held per-GPU rate: the base's mtbf gives way to a gpu_mtbf
        ["--size", "5TB"],  # the base's params give way to a size
        ["--mtbf", "2h", "--mtbf-ci", "1.5h:2.5h"],
        ["--memory-interval", "2min", "--bw", "100GB/s"],
    ],
)
def test_keep_base_round_trip(run: Run, run_json: RunJson, tmp_path: Path, flags: list[str]) -> None:
    kept, flat = tmp_path / "kept.toml", tmp_path / "flat.toml"
    result = run("optimize", "--preset", "gemini-inmemory", *flags, "--save-preset", str(kept), "--keep-base")
    assert result.exit_code == 0, result.stderr
    assert run("optimize", "--preset", "gemini-inmemory", *flags, "--save-preset", str(flat)).exit_code == 0
    document = tomllib.loads(kept.read_text(encoding="utf-8"))
    assert document["base"] == "gemini-storage-only"
    assert document["memory"]["replica_survival"] == 0.99
    # The saved file loads back to what a plain --save-preset writes, and to what was run.
    loaded = run_json("optimize", "--preset", str(kept))
    assert _numbers(loaded) == _numbers(run_json("optimize", "--preset", str(flat)))
    ran = run_json("optimize", "--preset", "gemini-inmemory", *flags)
    assert {k: v for k, v in loaded.items() if k not in ("preset", "inputs")} == {
        k: v for k, v in ran.items() if k not in ("preset", "inputs")
    }


def test_keep_base_rewrites_a_relative_base_for_the_new_file(
    run: Run, run_json: RunJson, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "lib" / "common.toml", FULL)
    _write(tmp_path / "jobs" / "child.toml", 'base = "../lib/common.toml"\n[storage]\nbandwidth = "3TB/s"\n')
    (tmp_path / "out" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "jobs")
    target = tmp_path / "out" / "deeper" / "saved.toml"
    result = run("optimize", "--preset", "child.toml", "--save-preset", str(target), "--keep-base")
    assert result.exit_code == 0, result.stderr
    document = tomllib.loads(target.read_text(encoding="utf-8"))
    assert document["base"] == "../../lib/common.toml"
    assert document["storage"] == {"bandwidth": "3TB/s"}
    monkeypatch.chdir(tmp_path)
    assert _numbers(run_json("optimize", "--preset", str(target))) == _numbers(
        run_json("optimize", "--preset", "jobs/child.toml")
    )


def test_keep_base_needs_save_preset(run: Run) -> None:
    result = run("optimize", "--preset", "llama3-405b-async", "--keep-base")
    assert_usage_error(result, "error: --keep-base: only goes with --save-preset")


@pytest.mark.parametrize("preset", [None, "llama3-405b"])
def test_keep_base_needs_a_preset_with_a_base(run: Run, tmp_path: Path, preset: str | None) -> None:
    path = tmp_path / "mine.toml"
    chosen = ["--preset", preset] if preset else []
    result = run("optimize", *chosen, "--save-preset", str(path), "--keep-base")
    assert_usage_error(result, "error: --keep-base: the preset 'llama3-405b' names no base")
    assert not path.exists()


def test_keep_base_refuses_to_drop_a_key_of_the_base(run: Run, tmp_path: Path) -> None:
    _write(tmp_path / "common.toml", FULL.replace('restart = "5min"', 'restart = "5min"\nshape = 0.8'))
    child = _write(tmp_path / "child.toml", 'base = "common.toml"\n[storage]\nbandwidth = "2TB/s"\n')
    path = tmp_path / "mine.toml"
    result = run(
        "optimize", "--preset", str(child), "--failure-dist", "exponential", "--save-preset", str(path), "--keep-base"
    )
    assert_usage_error(result, "error: --keep-base: the base 'common.toml' sets failures.shape")
    assert "save without --keep-base" in result.stderr
    assert not path.exists()


def test_keep_base_never_overwrites_without_force(run: Run, tmp_path: Path) -> None:
    path = _write(tmp_path / "mine.toml", "precious = true\n")
    result = run("optimize", "--preset", "llama3-405b-async", "--save-preset", str(path), "--keep-base")
    assert_usage_error(result, "--save-preset")
    assert path.read_text(encoding="utf-8") == "precious = true\n"


# ---------------------------------------------------------------- the library


def test_api_keep_base_of(tmp_path: Path) -> None:
    from ckptcalc import api

    scenario = api.scenario("llama3-405b-async", restart="5min")
    path = tmp_path / "mine.toml"
    api.save_preset(scenario, path, keep_base_of="llama3-405b-async")
    assert presets.load(str(path)).values() == scenario.values()
    with pytest.raises(InputError) as info:
        api.save_preset(scenario, tmp_path / "other.toml", keep_base_of="llama3-405b")
    assert info.value.where == "keep_base"


def test_parent_of_a_preset() -> None:
    found = presets.parent("gemini-inmemory")
    assert found is not None
    assert (found.ref, found.label, found.by_name) == ("gemini-storage-only", "gemini-storage-only.toml", True)
    assert presets.parent("gemini-storage-only") is None


def test_resolved_preset_resolves(tmp_path: Path) -> None:
    job = resolve(presets.load("gemini-inmemory"))
    assert job.config.replica_survival == 0.99
    assert job.config.checkpoint_bytes == 6.48e12
    assert json.dumps(presets.resolved_document("gemini-inmemory"))  # plain data, no base
    assert "base" not in presets.resolved_document("gemini-inmemory")


def test_a_preset_may_extend_the_one_it_shadows(run_json: RunJson, tmp_path: Path, monkeypatch: Any) -> None:
    """A user preset named like a shipped one, with that name as its base, starts from the shipped one."""
    (tmp_path / "llama3-405b.toml").write_text('base = "llama3-405b"\n[failures]\nrestart = "5min"\n', "utf-8")
    monkeypatch.setenv("CKPTCALC_PRESET_PATH", str(tmp_path))
    doc = run_json("optimize", "--preset", "llama3-405b")
    assert doc["inputs"]["restart_s"] == 300.0 and doc["inputs"]["mtbf_s"] == 11160.0


def test_presets_list_warns_of_a_preset_it_cannot_read(run: Run, tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "sp_a.toml").write_text('base = "sp_b"\n', "utf-8")
    (tmp_path / "sp_b.toml").write_text('base = "sp_a"\n', "utf-8")
    monkeypatch.setenv("CKPTCALC_PRESET_PATH", str(tmp_path))
    result = run("presets", "list")
    assert result.exit_code == 0
    assert "sp_a" not in result.stdout and "llama3-405b" in result.stdout
    warned = [w for w in preset_search.search_warnings() if "sp_a.toml: not listed:" in w]
    assert warned and "cycle: " in warned[0]
