"""Rates per GPU: ``25GB/s/gpu`` is 25 GB/s times the job's GPU count (README "Units").

The per-GPU value and its mark live in the scenario, so that a new GPU count
scales the aggregate and ``--save-preset`` writes the rate back per GPU.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc.errors import InputError, UnitError
from ckptcalc.inputs import preset_document, preset_write, presets, units
from ckptcalc.inputs.fields import BY_NAME as FIELDS
from ckptcalc.inputs.fields import parse_value
from ckptcalc.inputs.scenario import Scenario, merge, resolve

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

#: llama3-405b-async's assumption: 25 GB/s device-to-host per GPU × 16,384 GPUs = 409.6 TB/s.
PER_GPU = 25e9
GPUS = 16384
AGGREGATE = 409.6e12

# ---------------------------------------------------------------- parsing

SPELLINGS = [
    ("25GB/s/gpu", 25e9),
    ("25GB/s/GPU", 25e9),
    ("25 GB/s/gpu", 25e9),
    ("25 GB/s per GPU", 25e9),
    ("25GB/s per gpu", 25e9),
    ("1.5TiB/s/gpu", 1.5 * 2**40),
    ("100Gbps/gpu", 100e9 / 8),
    (" 2 TB/s / Gpu ", 2e12),
]


@pytest.mark.parametrize(("raw", "expected"), SPELLINGS, ids=[raw for raw, _ in SPELLINGS])
def test_parse_per_gpu(raw: str, expected: float) -> None:
    value = units.parse_rate(raw)
    assert isinstance(value, units.PerGpu)
    assert value == expected


def test_plain_rate_is_not_per_gpu() -> None:
    assert not isinstance(units.parse_rate("25GB/s"), units.PerGpu)
    # Arithmetic gives plain floats: the mark never outlives the value as written.
    assert type(units.parse_rate("25GB/s/gpu") * GPUS) is float


BAD = [
    # (raw input, words the one-line message must contain besides the quoted input)
    ("25GB/s/gpu/gpu", ["per GPU", "25GB/s/gpu"]),
    ("/gpu", ["per GPU", "25GB/s/gpu"]),
    (" per GPU", ["per GPU"]),
    ("25/gpu", ["no unit", "25GB/s/gpu"]),
    ("25GB/gpu", ["is a size", "25GB/s/gpu"]),
    ("25min/gpu", ["is a duration"]),
    ("25GB/s/gpus", ["unknown rate unit"]),
    ("nan/gpu", ["expected a rate"]),
    ("1e999TB/s/gpu", ["finite"]),
]


@pytest.mark.parametrize(("raw", "words"), BAD, ids=[raw for raw, _ in BAD])
def test_parse_per_gpu_errors(raw: str, words: list[str]) -> None:
    with pytest.raises(UnitError) as info:
        units.parse_rate(raw)
    message = str(info.value)
    assert repr(raw) in message and "\n" not in message
    for word in words:
        assert word in message


@pytest.mark.parametrize("kind", ["size", "duration", "count", "number"])
def test_only_rates_take_per_gpu(kind: str) -> None:
    with pytest.raises(UnitError):
        parse_value(next(f for f in FIELDS.values() if f.kind == kind), "25GB/s/gpu")


def test_format_per_gpu() -> None:
    assert units.format_rate(units.PerGpu(25e9)) == "25.0 GB/s per GPU"
    assert units.format_rate(25e9) == "25.0 GB/s"
    assert units.format_per_gpu(25e9, GPUS) == "25.0 GB/s per GPU × 16384 GPUs"
    assert units.format_per_gpu(25e9, 1) == "25.0 GB/s per GPU × 1 GPU"
    assert units.written_rate(25e9) == "25GB/s"
    assert units.written_rate(AGGREGATE) == "409.6TB/s"


def test_parse_value_keeps_the_mark() -> None:
    value = parse_value(FIELDS["snapshot_bandwidth"], "25GB/s/gpu")
    assert isinstance(value, units.PerGpu) and value == PER_GPU
    assert type(parse_value(FIELDS["snapshot_bandwidth"], "25GB/s")) is float


# ---------------------------------------------------------------- the scenario


def test_scenario_holds_the_per_gpu_value() -> None:
    stated = Scenario(snapshot_bandwidth=units.PerGpu(PER_GPU), gpus=float(GPUS))
    assert stated.snapshot_bandwidth == PER_GPU and type(stated.snapshot_bandwidth) is float
    assert stated.per_gpu == {"snapshot_bandwidth"}
    assert isinstance(stated.values()["snapshot_bandwidth"], units.PerGpu)
    # Per GPU or not is part of a scenario's identity.
    assert stated != Scenario(snapshot_bandwidth=PER_GPU, gpus=float(GPUS))
    assert stated == Scenario(snapshot_bandwidth=PER_GPU, gpus=float(GPUS), per_gpu=frozenset({"snapshot_bandwidth"}))


def test_merge_sets_and_clears_the_mark() -> None:
    base = presets.load("llama3-405b")
    per_gpu = merge(base, {"snapshot_bandwidth": units.PerGpu(PER_GPU)})
    assert per_gpu.per_gpu == {"snapshot_bandwidth"}
    # Other changes keep it; a plain rate over it states the aggregate.
    assert merge(per_gpu, {"restart_s": 120.0}).per_gpu == {"snapshot_bandwidth"}
    plain = merge(per_gpu, {"snapshot_bandwidth": 500e12})
    assert plain.per_gpu == frozenset() and plain.snapshot_bandwidth == 500e12
    # A rate emptied by replace() loses its mark at the next merge (as analyze's preset does).
    emptied = merge(per_gpu.replace(snapshot_bandwidth=None), {"restart_s": 120.0})
    assert emptied.per_gpu == frozenset()
    assert resolve(emptied).config.snapshot_bandwidth is None


def test_resolve_multiplies_by_the_gpu_count() -> None:
    base = presets.load("llama3-405b")
    job = resolve(merge(base, {"snapshot_bandwidth": units.PerGpu(PER_GPU)}))
    assert job.config.snapshot_bandwidth == AGGREGATE
    # The job keeps the scenario as stated: per GPU.
    assert job.scenario.snapshot_bandwidth == PER_GPU and job.scenario.per_gpu == {"snapshot_bandwidth"}


def test_resolve_without_gpu_count_is_an_error() -> None:
    stated = Scenario(
        checkpoint_bytes=1e12, bandwidth=units.PerGpu(1e9), mtbf_s=3600.0, restart_s=60.0, origin={"bandwidth": "bw"}
    )
    with pytest.raises(InputError) as info:
        resolve(stated)
    assert info.value.where == "bw"
    assert info.value.message == "1.00 GB/s per GPU needs the GPU count (gpus)"


# ---------------------------------------------------------------- the command line


def _numbers(document: dict[str, Any]) -> dict[str, Any]:
    """A document without the per-GPU echo, which is all a per-GPU rate adds."""
    inputs = {k: v for k, v in document["inputs"].items() if "_per_gpu_" not in k}
    return {**document, "inputs": inputs}


def test_per_gpu_equals_the_aggregate_exactly(run: Run) -> None:
    # 25 GB/s × 16,384 = 409.6 TB/s (the llama3-405b-async assumption), to the last bit.
    per_gpu = run("optimize", "--preset", "llama3-405b", "--snapshot-bw", "25GB/s/gpu", "--json")
    aggregate = run("optimize", "--preset", "llama3-405b", "--snapshot-bw", "409.6TB/s", "--json")
    assert per_gpu.exit_code == 0 and aggregate.exit_code == 0, per_gpu.stderr + aggregate.stderr
    one, other = json.loads(per_gpu.stdout), json.loads(aggregate.stdout)
    assert one["inputs"]["snapshot_bandwidth_bytes_per_s"] == AGGREGATE
    assert one["inputs"]["snapshot_bandwidth_per_gpu_bytes_per_s"] == PER_GPU
    assert other["inputs"]["snapshot_bandwidth_per_gpu_bytes_per_s"] is None
    levers = [{k: v for k, v in lever.items() if k != "name"} for lever in one["levers"]]
    assert levers == [{k: v for k, v in lever.items() if k != "name"} for lever in other["levers"]]
    assert {**_numbers(one), "levers": None} == {**_numbers(other), "levers": None}


def test_spelled_out_per_gpu_on_the_command_line(run_json: RunJson) -> None:
    doc = run_json("optimize", "--snapshot-bw", "25 GB/s per GPU")
    assert doc["inputs"]["snapshot_bandwidth_bytes_per_s"] == AGGREGATE


#: A preset without a GPU count.
NO_GPUS = '[checkpoint]\nsize = "1TB"\n[storage]\nbandwidth = "{bandwidth}"\n[failures]\nmtbf = "3h"\nrestart = "5min"'


@pytest.mark.parametrize("flag", ["--bw", "--snapshot-bw"])
def test_missing_gpu_count(run: Run, tmp_path: Path, flag: str) -> None:
    preset = tmp_path / "no-gpus.toml"
    preset.write_text(NO_GPUS.format(bandwidth="100GB/s"))
    result = run("optimize", "--preset", str(preset), flag, "25GB/s/gpu")
    assert_usage_error(result, f"error: {flag}: 25.0 GB/s per GPU needs the GPU count (--gpus)")


def test_missing_gpu_count_in_a_preset(run: Run, tmp_path: Path) -> None:
    preset = tmp_path / "no-gpus.toml"
    preset.write_text(NO_GPUS.format(bandwidth="1GB/s/gpu"))
    result = run("optimize", "--preset", str(preset))
    assert_usage_error(result, f"{preset}: storage.bandwidth: 1.00 GB/s per GPU needs the GPU count (--gpus)")


def test_gpus_scale_the_aggregate(run_json: RunJson) -> None:
    for gpus in (1024, 8192, 100000):
        doc = run_json("optimize", "--snapshot-bw", "25GB/s/gpu", "--gpus", str(gpus))
        assert doc["inputs"]["snapshot_bandwidth_bytes_per_s"] == PER_GPU * gpus
        assert doc["inputs"]["snapshot_bandwidth_per_gpu_bytes_per_s"] == PER_GPU


def test_what_if_gpus_scales_the_aggregate(run_json: RunJson) -> None:
    doc = run_json("compare", "llama3-405b", "--what-if", "snapshot-bw=25GB/s/gpu", "--what-if", "gpus=8192")
    first, per_gpu, fewer = (s["inputs"] for s in doc["scenarios"])
    assert first["snapshot_bandwidth_bytes_per_s"] is None
    assert per_gpu["snapshot_bandwidth_bytes_per_s"] == AGGREGATE
    assert fewer["snapshot_bandwidth_bytes_per_s"] is None  # what-ifs vary the first preset


def test_preset_file_with_a_per_gpu_rate(run_json: RunJson, tmp_path: Path) -> None:
    preset = tmp_path / "async.toml"
    preset.write_text(
        '[checkpoint]\nparams = 405e9\n[storage]\nbandwidth = "2TB/s"\nsnapshot_bandwidth = "25GB/s/gpu"\n'
        '[failures]\nmtbf = "3.1h"\nrestart = "10min"\n[cluster]\ngpus = 16384\n'
    )
    doc = run_json("optimize", "--preset", str(preset))
    assert doc["inputs"]["snapshot_bandwidth_bytes_per_s"] == AGGREGATE
    assert doc == run_json("optimize", "--preset", str(preset), "--gpus", "16384")
    # Half the GPUs: half the snapshot bandwidth (and twice the MTBF, the per-GPU rate held).
    half = run_json("optimize", "--preset", str(preset), "--gpus", "8192")
    assert half["inputs"]["snapshot_bandwidth_bytes_per_s"] == AGGREGATE / 2
    assert half["inputs"]["mtbf_s"] == pytest.approx(2 * 3.1 * 3600)
    # A plain rate over it is the aggregate.
    plain = run_json("optimize", "--preset", str(preset), "--snapshot-bw", "100TB/s")
    assert plain["inputs"]["snapshot_bandwidth_bytes_per_s"] == 100e12
    assert plain["inputs"]["snapshot_bandwidth_per_gpu_bytes_per_s"] is None


def test_save_preset_round_trip_writes_per_gpu(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    target = tmp_path / "per-gpu.toml"
    replica = ["--replica-survival", "0.99", "--memory-bw", "132MB/s/gpu", "--memory-restart", "1min"]
    first = run_json("optimize", "--snapshot-bw", "25GB/s/gpu", *replica, "--save-preset", str(target))
    written = tomllib.loads(target.read_text())
    assert written["storage"]["snapshot_bandwidth"] == "25GB/s/gpu"
    assert written["memory"]["bandwidth"] == "132MB/s/gpu"
    assert written["storage"]["bandwidth"] == "2TB/s"
    again = run_json("optimize", "--preset", str(target))
    for key in ("effective", "optimal_interval_s", "write_s"):
        assert again[key] == first[key], key
    # Named, the saved preset assumes nothing the flags' job took from the default preset.
    mine = ("sources", "assumed")
    assert {k: v for k, v in again["inputs"].items() if k not in mine} == {
        k: v for k, v in first["inputs"].items() if k not in mine
    }
    # Loaded back, it is still per GPU: a new GPU count scales it.
    scaled = run_json("optimize", "--preset", str(target), "--gpus", "8192")
    assert scaled["inputs"]["snapshot_bandwidth_bytes_per_s"] == PER_GPU * 8192


def test_to_document_round_trip() -> None:
    stated = merge(presets.load("llama3-405b"), {"snapshot_bandwidth": units.PerGpu(PER_GPU)})
    document = preset_write.to_document(stated)
    assert document["storage"]["snapshot_bandwidth"] == "25GB/s/gpu"
    assert preset_document.from_document(document, "saved.toml") == stated


def test_inputs_table_shows_both(run: Run) -> None:
    result = run("optimize", "--snapshot-bw", "25GB/s/gpu")
    assert result.exit_code == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("snapshot bandwidth"))
    assert "410 TB/s" in row and "25.0 GB/s per GPU × 16384 GPUs" in row and "asynchronous" in row
    plain = run("optimize", "--snapshot-bw", "409.6TB/s").stdout
    assert "per GPU ×" not in next(line for line in plain.splitlines() if line.startswith("snapshot bandwidth"))


def test_targets_show_both_for_a_per_gpu_storage_bandwidth(run: Run) -> None:
    result = run("optimize", "--bw", "125MB/s/gpu", "--target", "0.9")
    assert result.exit_code == 0, result.stderr
    assert "2.05 TB/s (125 MB/s per GPU)" in result.stdout


def test_levers_say_the_aggregate(run_json: RunJson) -> None:
    names = {lever["key"]: lever["name"] for lever in run_json("optimize")["levers"]}
    assert names["async"] == "asynchronous snapshots (25.0 GB/s per GPU × 16384 GPUs = 410 TB/s)"
    assert "132 MB/s per GPU × 16384 GPUs = 2.16 TB/s" in names["memory_replica"]


# ---------------------------------------------------------------- errors that say which one the flag wants


def test_slow_snapshot_mentions_the_per_gpu_form(run: Run) -> None:
    # 25 GB/s meant per GPU, given as the aggregate: below llama3-405b's 2 TB/s storage.
    result = run("optimize", "--preset", "llama3-405b", "--snapshot-bw", "25GB/s")
    assert_usage_error(result, "error: --snapshot-bw: snapshot bandwidth 25.0 GB/s is not above the storage bandwidth")
    assert "aggregate over all GPUs" in result.stderr
    assert "write 25GB/s/gpu for a per-GPU rate" in result.stderr


def test_slow_per_gpu_snapshot_shows_its_aggregate(run: Run) -> None:
    result = run("optimize", "--snapshot-bw", "100GB/s/gpu", "--gpus", "16")
    assert_usage_error(result, "snapshot bandwidth 1.60 TB/s (100 GB/s per GPU × 16 GPUs) is not above the storage")
    assert "write" not in result.stderr  # already per GPU: no hint


def test_out_of_range_rate_says_it_is_the_aggregate(run: Run) -> None:
    """Too slow: perhaps a per-GPU rate given as the aggregate, so the hint; too fast: no hint (per GPU
    would only be faster)."""
    result = run("optimize", "--bw", "1e-12B/s")
    assert_usage_error(result, "--bw")
    assert "aggregate over all GPUs" in result.stderr and "25GB/s/gpu" in result.stderr
    result = run("optimize", "--bw", "1e22B/s")
    assert_usage_error(result, "--bw")
    assert "/gpu" not in result.stderr


def test_out_of_range_aggregate_of_a_per_gpu_rate(run: Run) -> None:
    result = run("optimize", "--bw", "1e18B/s/gpu")
    assert_usage_error(result, "--bw: 16400000 PB/s (1000 PB/s per GPU × 16384 GPUs) is out of range")
    assert "write" not in result.stderr  # already per GPU: no hint


@pytest.mark.parametrize("raw", ["25GB/s/gpu/gpu", "/gpu", "25/gpu"])
def test_bad_per_gpu_forms_on_the_command_line(run: Run, raw: str) -> None:
    assert_usage_error(run("optimize", "--snapshot-bw", raw, "--json"), "--snapshot-bw: ")


# ---------------------------------------------------------------- sweeps


def test_sweep_over_gpus_scales_a_per_gpu_rate(run_json: RunJson) -> None:
    swept = run_json("sweep", "--over", "gpus", "--snapshot-bw", "25GB/s/gpu", "--from", "1024", "--to", "16384",
                     "--points", "3", "--log")  # fmt: skip
    assert swept["values"] == [1024.0, 4096.0, 16384.0]
    for value, effective, interval in zip(swept["values"], swept["effective"], swept["interval_s"], strict=True):
        one = run_json("optimize", "--snapshot-bw", "25GB/s/gpu", "--gpus", str(int(value)))
        assert effective == pytest.approx(one["effective"], rel=1e-12)
        assert interval == pytest.approx(one["optimal_interval_s"], rel=1e-9)


def test_sweep_over_gpus_refuses_a_snapshot_below_storage(run: Run) -> None:
    result = run("sweep", "--over", "gpus", "--snapshot-bw", "25GB/s/gpu", "--from", "16", "--to", "16384")
    assert_usage_error(result, "at 16 GPUs it is 400 GB/s")


def test_sweep_bounds_per_gpu(run_json: RunJson) -> None:
    swept = run_json("sweep", "--over", "snapshot-bw", "--from", "10GB/s/gpu", "--to", "100GB/s/gpu", "--points", "2")
    assert swept["values"] == [10e9 * GPUS, 100e9 * GPUS]


# ---------------------------------------------------------------- invariants


@settings(max_examples=200, deadline=None)
@given(v=st.floats(min_value=1e-3, max_value=1e18, allow_nan=False, allow_infinity=False))
def test_written_per_gpu_rate_round_trip(v: float) -> None:
    # What --save-preset writes for a per-GPU rate loads back to the same per-GPU float.
    text = preset_write.to_document(Scenario(memory_bandwidth=units.PerGpu(v)))["memory"]["bandwidth"]
    event("reached the assertions")
    assert text.endswith("/s/gpu")
    back = units.parse_rate(text)
    assert isinstance(back, units.PerGpu) and back == v, text


@settings(max_examples=100, deadline=None)
@given(gpus=st.integers(1, 10**6), per_gpu=st.floats(min_value=1e6, max_value=1e12))
def test_aggregate_is_per_gpu_times_gpus(gpus: int, per_gpu: float) -> None:
    base = merge(presets.load("llama3-405b"), {"snapshot_bandwidth": units.PerGpu(per_gpu), "gpus": float(gpus)})
    event("reached the assertions")
    if per_gpu * gpus <= 2e12:
        with pytest.raises(InputError, match="per GPU"):
            resolve(base)
        return
    assert resolve(base).config.snapshot_bandwidth == per_gpu * gpus
