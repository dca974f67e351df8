"""Storage tiers from presets and the command line: ``[[levels]]``, the shipped three-tier preset,
simulation agreement, saving, sweeping and the errors (docs/model.md §12)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

HEAD = 'schema_version = 1\n[checkpoint]\nsize = "6.48TB"\n[failures]\nmtbf = "4h"\n[cluster]\ngpus = 16384\n'


def tier(name: str, bandwidth: str, serves: float, restart: str | None = "1min", **extra: str) -> str:
    lines = [f'[[levels]]\nname = "{name}"\nbandwidth = "{bandwidth}"\nserves = {serves}\n']
    if restart is not None:
        lines.append(f'restart = "{restart}"\n')
    lines += [f'{key} = "{value}"\n' for key, value in extra.items()]
    return "".join(lines)


def write(tmp_path: Path, name: str, *tiers: str, head: str = HEAD) -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(head + "".join(tiers), encoding="utf-8")
    return str(path)


def test_two_levels_are_the_memory_shorthand(run_json: RunJson, tmp_path: Path) -> None:
    """gemini-inmemory written as two [[levels]] gives the very same answer."""
    preset = write(tmp_path, "two", tier("host memory", "2.16TB/s", 0.99), tier("storage", "72GB/s", 0.01, "10min"))
    a, b = run_json("optimize", "--preset", preset), run_json("optimize", "--preset", "gemini-inmemory")
    assert a["effective"] == b["effective"]
    assert a["memory_interval_s"] == b["memory_interval_s"] and a["storage_every"] == b["storage_every"]
    assert a["inputs"]["tiers"] is None


def test_one_level_is_storage_only(run_json: RunJson, tmp_path: Path) -> None:
    preset = write(tmp_path, "one", tier("storage", "72GB/s", 1.0, "10min"))
    assert (
        run_json("optimize", "--preset", preset)["effective"]
        == run_json("optimize", "--preset", "gemini-storage-only")["effective"]
    )


def test_a_free_middle_tier_reduces_to_two(run_json: RunJson, tmp_path: Path) -> None:
    """Done when: a middle tier that serves no failures and costs nothing to write gives the two-tier answer."""
    preset = write(
        tmp_path, "three", tier("host memory", "2.16TB/s", 0.99), tier("free", "1000EB/s", 0.0),
        tier("storage", "72GB/s", 0.01, "10min"),
    )  # fmt: skip
    three, two = run_json("optimize", "--preset", preset), run_json("optimize", "--preset", "gemini-inmemory")
    assert three["effective"] == pytest.approx(two["effective"], rel=1e-12)
    assert three["storage_every"] == two["storage_every"] == 54
    assert [level["name"] for level in three["levels"]] == ["memory", "free", "storage"]
    assert [t["share_of_failures"] for t in three["inputs"]["tiers"]] == pytest.approx([0.99, 0.0, 0.01])


def test_reference_12_5_from_a_preset(run_json: RunJson, tmp_path: Path) -> None:
    """§12.2/§12.5's tiers as a preset: 0.948492 exact, 0.947693 first order, m = (7, 5)."""
    preset = write(
        tmp_path, "ref", tier("memory", "2.16TB/s", 0.9), tier("nvme", "540GB/s", 0.08, "3min"),
        tier("storage", "72GB/s", 0.02, "10min"),
    )  # fmt: skip
    doc = run_json("optimize", "--preset", preset)
    assert doc["effective"] == pytest.approx(0.948492, abs=1e-6)
    assert doc["first_order"]["effective"] == pytest.approx(0.947693, abs=1e-6)
    intervals = [level["interval_s"] for level in doc["levels"]]
    assert intervals[1] / intervals[0] == pytest.approx(7.0) and intervals[2] / intervals[1] == pytest.approx(5.0)
    assert doc["storage_every"] == 35


def test_shipped_three_tier_preset_agrees_with_simulate(run_json: RunJson) -> None:
    """Done when: the three-tier preset's exact model lies in simulate's confidence interval."""
    doc = run_json("simulate", "--preset", "llama3-405b-tiered", "--cycles", "1e6")
    low, high = doc["effective_ci95"]
    assert low <= doc["analytic"]["exact"] <= high
    assert doc["agreement"]["exact"]["agrees"] is True
    assert [t["name"] for t in doc["tier_intervals"]] == ["memory", "local nvme", "storage"]
    optimum = run_json("optimize", "--preset", "llama3-405b-tiered")
    assert [t["interval_s"] for t in doc["tier_intervals"]] == [level["interval_s"] for level in optimum["levels"]]


def test_shipped_three_tier_preset(run_json: RunJson, run: Run) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b-tiered")
    assert doc["effective"] == pytest.approx(0.938368, abs=1e-6)
    tiers = doc["inputs"]["tiers"]
    assert [t["bandwidth_per_gpu_bytes_per_s"] for t in tiers] == [6.25e9, 1.5e9, None]
    assert [t["bandwidth_bytes_per_s"] for t in tiers] == pytest.approx([6.25e9 * 16384, 1.5e9 * 16384, 2e12])
    parts = doc["inputs"]["restart_components"]
    assert set(parts) == {"memory", "local nvme", "storage"}
    assert parts["storage"]["total_s"] == pytest.approx(603.24, rel=1e-14)
    assert [v["key"] for v in doc["levers"] if v["key"] != "elastic"][1] == "detect_half"
    text = " ".join(run("optimize", "--preset", "llama3-405b-tiered").stdout.split())
    assert "tier local nvme 24.6 TB/s 1.50 GB/s per GPU × 16384 GPUs; 12.0 % of failures" in text
    assert "storage with every 7th local nvme checkpoint (24.7 min)" in text


def test_inherited_three_tier_preset_equals_its_flat_copy(run_json: RunJson, tmp_path: Path) -> None:
    """The tiered preset inherits llama3-405b; written out whole it gives the same numbers."""
    resolved = run_json("optimize", "--preset", "llama3-405b-tiered")
    flat = write(
        tmp_path, "flat",
        tier("host memory", "6.25GB/s/gpu", 0.85, None, read_bandwidth="6.25GB/s/gpu"),
        tier("local nvme", "1.5GB/s/gpu", 0.12, None, read_bandwidth="3GB/s/gpu"),
        tier("remote storage", "2TB/s", 0.03, None, read_bandwidth="2TB/s"),
        head='schema_version = 1\n[checkpoint]\nparams = 405e9\n[failures]\nmtbf = "3.1h"\ndetect = "5min"\n'
        'reschedule = "3min"\nwarmup = "2min"\n[cluster]\ngpus = 16384\n',
    )  # fmt: skip
    assert run_json("optimize", "--preset", flat)["effective"] == resolved["effective"]


def test_save_preset_round_trip(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    target = tmp_path / "saved.toml"
    result = run("optimize", "--preset", "llama3-405b-tiered", "--gpus", "8192", "--save-preset", str(target))
    assert result.exit_code == 0, result.stderr
    text = target.read_text(encoding="utf-8")
    assert text.count("[[levels]]") == 3 and 'bandwidth = "1.5GB/s/gpu"' in text and "[memory]" not in text
    again = run_json("optimize", "--preset", str(target))
    direct = run_json("optimize", "--preset", "llama3-405b-tiered", "--gpus", "8192")
    assert again["effective"] == pytest.approx(direct["effective"], rel=1e-14)


def test_gpus_scale_per_gpu_tier_rates(run_json: RunJson) -> None:
    """A sweep over GPUs scales each tier's per-GPU rate, as --gpus does point by point."""
    sweep = run_json("sweep", "--preset", "llama3-405b-tiered", "--over", "gpus", "--from", "8192", "--to",
                     "16384", "--points", "2")  # fmt: skip
    for gpus, effective in zip(sweep["values"], sweep["effective"], strict=True):
        point = run_json("optimize", "--preset", "llama3-405b-tiered", "--gpus", str(int(gpus)))
        assert effective == pytest.approx(point["effective"], rel=1e-9)


def test_uncertainty_with_tiers(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b-tiered", "--mtbf-ci", "2.5h:4h")
    band = doc["uncertainty"]
    assert band["robust_regret_pp"] <= band["point_regret_pp"] + 1e-12
    low, high = band["optimal_effective"]
    assert low < doc["effective"] < high


def test_compare_shows_tiers(run_json: RunJson) -> None:
    doc = run_json("compare", "llama3-405b", "llama3-405b-tiered")
    effective = [s["effective"] for s in doc["scenarios"]]
    assert effective[1] > effective[0]


@pytest.mark.parametrize(
    ("command", "culprit"),
    [
        (("plan", "--work", "54d"), "one or two levels"),
        (("simulate", "--optimize", "--cycles", "1e4"), "together with --optimize"),
    ],
)
def test_commands_that_cover_two_levels_say_so(run: Run, command: tuple[str, ...], culprit: str) -> None:
    result = run(command[0], "--preset", "llama3-405b-tiered", *command[1:], "--json")
    assert_usage_error(result, culprit)


BAD_LEVELS = [
    ((tier("a", "1TB/s", 0.5), tier("b", "72GB/s", 0.4, "10min")), "levels: the tiers' shares of failures"),
    ((tier("a", "1TB/s", 0.5, oops="1"), tier("b", "72GB/s", 0.5, "10min")), "levels[0].oops: unknown key"),
    (
        (tier("a", "1TB/s", 0.5, snapshot_bandwidth="9TB/s"), tier("b", "72GB/s", 0.5, "10min")),
        "levels[0].snapshot_bandwidth: only the last tier",
    ),
    ((tier("a", "1TB/s", 1.0), tier("b", "72GB/s", 0.0, "10min")), "levels[1].serves: the last tier"),
    ((tier("a", "1TB/s", 0.5, detect="1min"), tier("b", "72GB/s", 0.5, "10min")), "levels[0].restart: give restart"),
    ((tier("a", "1TB/s", 0.5, None), tier("b", "72GB/s", 0.5, "10min")), "levels[0].restart: a tier needs"),
    (
        (
            tier("a", "1TB/s", 0.5, None, read_bandwidth="1TB/s", detect="1min"),
            tier("b", "72GB/s", 0.5, None, read_bandwidth="1TB/s", detect="2min"),
        ),
        "levels[1].detect: detect follows",
    ),
    ((tier("a", "1TB/s", 1.5), tier("b", "72GB/s", 0.5, "10min")), "levels[0].serves: must be a share"),
    ((tier("a", "1TB/s", 0.5), tier("a", "72GB/s", 0.5, "10min")), "levels[1].name: two tiers named"),
    ((tier("a", "oops", 0.5), tier("b", "72GB/s", 0.5, "10min")), "levels[0].bandwidth"),
    (tuple(tier(f"t{i}", "1TB/s", 0.1) for i in range(9)), "levels: at most 8 tiers"),
]


@pytest.mark.parametrize(("tiers", "message"), BAD_LEVELS)
def test_bad_levels(run: Run, tmp_path: Path, tiers: tuple[str, ...], message: str) -> None:
    preset = write(tmp_path, "bad", *tiers)
    result = run("optimize", "--preset", preset, "--json")
    assert_usage_error(result, f"bad.toml: {message}")


def test_levels_with_classic_keys_are_refused(run: Run, tmp_path: Path) -> None:
    levels = tier("a", "1TB/s", 0.5) + tier("b", "72GB/s", 0.5, "10min")
    preset = write(tmp_path, "mixed", levels, head=HEAD + '[storage]\nbandwidth = "2TB/s"\n')
    assert_usage_error(run("optimize", "--preset", preset, "--json"), "drop storage.bandwidth")
    preset = write(tmp_path, "memory", levels, head=HEAD + "[memory]\nreplica_survival = 0.5\n")
    assert_usage_error(run("optimize", "--preset", preset, "--json"), "[[levels]] or with [memory]")


def test_levels_must_be_tables(run: Run, tmp_path: Path) -> None:
    preset = tmp_path / "flat.toml"
    preset.write_text("levels = [1, 2]\n" + HEAD, encoding="utf-8")
    assert_usage_error(run("optimize", "--preset", str(preset), "--json"), "flat.toml: levels: must be an array")


def test_middle_tier_per_gpu_needs_the_gpu_count(run: Run, tmp_path: Path) -> None:
    preset = write(
        tmp_path, "nogpus", tier("a", "1TB/s", 0.5), tier("b", "1GB/s/gpu", 0.3), tier("c", "72GB/s", 0.2, "10min"),
        head='schema_version = 1\n[checkpoint]\nsize = "6.48TB"\n[failures]\nmtbf = "4h"\n',
    )  # fmt: skip
    assert_usage_error(run("optimize", "--preset", preset, "--json"), "nogpus.toml: levels[1].bandwidth")


def test_a_child_levels_replace_the_base_levels(run_json: RunJson, tmp_path: Path) -> None:
    """A preset on a two-level base that lists [[levels]] replaces the base's [memory] and storage keys."""
    child = tmp_path / "child.toml"
    child.write_text(
        'schema_version = 1\nbase = "gemini-inmemory"\n'
        + tier("host memory", "2.16TB/s", 0.99)
        + tier("storage", "72GB/s", 0.01, "10min"),
        encoding="utf-8",
    )
    assert (
        run_json("optimize", "--preset", str(child))["effective"]
        == run_json("optimize", "--preset", "gemini-inmemory")["effective"]
    )


def test_json_is_one_document(run: Run) -> None:
    result = run("optimize", "--preset", "llama3-405b-tiered", "--json")
    assert json.loads(result.stdout)["command"] == "optimize"


def test_asynchronous_top_tier_agrees_with_simulate(run_json: RunJson, tmp_path: Path) -> None:
    """Storage written asynchronously under two synchronous tiers: the exact model lies in simulate's CI,
    and the storage interval covers its persist time."""
    child = tmp_path / "async3.toml"
    child.write_text(
        'schema_version = 1\nbase = "llama3-405b-tiered"\n'
        + tier("host memory", "6.25GB/s/gpu", 0.85, None, read_bandwidth="6.25GB/s/gpu")
        + tier("local nvme", "1.5GB/s/gpu", 0.12, None, read_bandwidth="3GB/s/gpu")
        + tier("remote storage", "200GB/s", 0.03, None, snapshot_bandwidth="25GB/s/gpu", read_bandwidth="200GB/s"),
        encoding="utf-8",
    )
    optimum = run_json("optimize", "--preset", str(child))
    storage = optimum["levels"][-1]
    assert storage["lag_s"] == pytest.approx(32.4, rel=1e-12)
    assert storage["interval_s"] >= storage["lag_s"]
    doc = run_json("simulate", "--preset", str(child), "--cycles", "1e6")
    low, high = doc["effective_ci95"]
    assert low <= doc["analytic"]["exact"] == optimum["effective"] <= high


# ------------------------------------------------------------ commands and odd inputs


def test_interval_sweep_with_tiers(run_json: RunJson) -> None:
    """The default sweep (over the storage interval) re-optimises the faster tiers at every point."""
    doc = run_json("sweep", "--preset", "llama3-405b-tiered", "--points", "5")
    assert len(doc["effective"]) == 5
    best = run_json("optimize", "--preset", "llama3-405b-tiered")["effective"]
    assert max(doc["effective"]) <= best * (1 + 1e-9)
    assert all(m >= 1 for m in doc["storage_every"])


def test_step_time_with_tiers(run_json: RunJson) -> None:
    doc = run_json("optimize", "--preset", "llama3-405b-tiered", "--step-time", "10s")
    assert [level["optimal_interval_steps"] for level in doc["levels"]] == [4, 20, 140]
    assert doc["optimal_interval_steps"] == 140


@pytest.mark.parametrize("args", [("--mtbf", "10s"), ("--gpus", "1e8"), ("--warmup", "1e6s")])
def test_restarts_far_beyond_the_mtbf(run_json: RunJson, args: tuple[str, ...]) -> None:
    """Restarts thousands of MTBFs long: effective time 0 and the whole time restart, as with one level."""
    doc = run_json("optimize", "--preset", "llama3-405b-tiered", *args)
    assert doc["effective"] == 0.0 and doc["loss"]["restart"] == 1.0


def test_simulate_restarts_far_beyond_the_mtbf(run_json: RunJson) -> None:
    doc = run_json("simulate", "--preset", "llama3-405b-tiered", "--mtbf", "10s", "--cycles", "200")
    assert doc["effective"] == 0.0 and doc["analytic"]["exact"] == 0.0


def test_shares_are_checked_after_flags(run: Run, run_json: RunJson) -> None:
    """A first tier that with the middle ones leaves storage nothing is refused; sweeps stay below it."""
    assert_usage_error(run("optimize", "--preset", "llama3-405b-tiered", "--replica-survival", "0.88", "--json"),
                       "--replica-survival: the faster tiers serve 0.88 + 0.12 = 1")  # fmt: skip
    result = run("sweep", "--preset", "llama3-405b-tiered", "--over", "replica-survival", "--from", "0.5", "--to",
                 "0.9", "--points", "3", "--json")  # fmt: skip
    assert_usage_error(result, "--to: replica survival must stay below 0.88")
    doc = run_json("sweep", "--preset", "llama3-405b-tiered", "--over", "replica-survival", "--points", "3")
    assert max(doc["values"]) < 0.88 and all(0 < e < 1 for e in doc["effective"])


def test_persist_time_with_pinned_tiers(run: Run, tmp_path: Path) -> None:
    """Storage every 3 s (4 s rounded to a whole number of the 3 s tier below) is shorter than its 3.24 s
    persist: refused, as simulate refuses it."""
    preset = write(
        tmp_path, "pinned", tier("m", "100TB/s", 0.85, interval="1s"), tier("n", "24TB/s", 0.12, interval="3s"),
        tier("s", "2TB/s", 0.03, "10min", snapshot_bandwidth="400TB/s", interval="4s"),
    )  # fmt: skip
    result = run("optimize", "--preset", preset, "--json")
    assert_usage_error(result, "pinned.toml: levels[2].interval: interval 3.00 s")


def test_rounded_tier_intervals_are_named(run_json: RunJson, tmp_path: Path) -> None:
    preset = write(
        tmp_path, "round", tier("m", "100TB/s", 0.85, interval="1min"), tier("nvme", "24TB/s", 0.12, interval="2.5min"),
        tier("s", "2TB/s", 0.03, "10min", interval="7min"),
    )  # fmt: skip
    doc = run_json("optimize", "--preset", preset)
    assert [level["interval_s"] for level in doc["levels"]] == [60.0, 120.0, 480.0]
    assert doc["warnings"] == [
        "the nvme interval 2.50 min is not a whole number of memory intervals: rounded to the nearest whole"
        " multiple, at least one",
        "the storage interval 7.00 min is not a whole number of nvme intervals: rounded to the nearest whole"
        " multiple, at least one",
    ]
    assert run_json("simulate", "--preset", preset, "--cycles", "1e4")["warnings"] == doc["warnings"]


def test_some_intervals_given_are_refused(run: Run, tmp_path: Path) -> None:
    preset = write(tmp_path, "some", tier("m", "100TB/s", 0.85), tier("n", "24TB/s", 0.12, interval="5min"),
                   tier("s", "2TB/s", 0.03, "10min"))  # fmt: skip
    assert_usage_error(run("optimize", "--preset", preset, "--json"), "some.toml: levels[1].interval: with three")


def test_targets_scale_rates_per_gpu(run_json: RunJson) -> None:
    """The GPU count that reaches a target with a per-GPU snapshot rate is the largest that does."""
    doc = run_json("optimize", "--snapshot-bw", "25GB/s/gpu", "--target", "0.95")
    most = doc["targets"]["gpus"]
    at = run_json("optimize", "--snapshot-bw", "25GB/s/gpu", "--gpus", str(most))["effective"]
    above = run_json("optimize", "--snapshot-bw", "25GB/s/gpu", "--gpus", str(most + 1))["effective"]
    assert at >= 0.95 > above


def test_a_child_cannot_change_a_tier_through_the_classic_tables(run: Run, tmp_path: Path) -> None:
    child = tmp_path / "child.toml"
    child.write_text('base = "llama3-405b-tiered"\n[storage]\nbandwidth = "4TB/s"\n', encoding="utf-8")
    result = run("optimize", "--preset", str(child), "--json")
    assert_usage_error(result, "child.toml: storage.bandwidth: the base lists its tiers as [[levels]]")


@pytest.mark.parametrize(
    ("name", "message"),
    [('"memory"', "names the first or last tier"), ('"' + "x" * 41 + '"', "at most 40 characters"),
     ("5", "must be a string"), ('"two\\nlines"', "must be printable"), ('"  "', "must not be empty")],
)  # fmt: skip
def test_tier_names(run: Run, tmp_path: Path, name: str, message: str) -> None:
    middle = f'[[levels]]\nname = {name}\nbandwidth = "24TB/s"\nrestart = "1min"\nserves = 0.12\n'
    preset = write(tmp_path, "names", tier("m", "100TB/s", 0.85), middle, tier("s", "2TB/s", 0.03, "10min"))
    result = run("optimize", "--preset", preset, "--json")
    assert_usage_error(result, "names.toml: levels[1].name: ")
    assert message in result.stderr


def test_saving_keeps_the_tier_names(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "saved.toml"
    assert run("optimize", "--preset", "llama3-405b-tiered", "--save-preset", str(target)).exit_code == 0
    text = target.read_text(encoding="utf-8")
    assert 'name = "host memory"' in text and 'name = "remote storage"' in text


def test_keep_base_with_inherited_tiers(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    child = tmp_path / "child.toml"
    child.write_text('base = "llama3-405b-tiered"\n[cluster]\ngpus = 8192\n', encoding="utf-8")
    target = tmp_path / "saved.toml"
    result = run("optimize", "--preset", str(child), "--save-preset", str(target), "--keep-base")
    assert result.exit_code == 0, result.stderr
    text = target.read_text(encoding="utf-8")
    assert 'base = "llama3-405b-tiered"' in text and "[[levels]]" not in text
    assert (
        run_json("optimize", "--preset", str(target))["effective"]
        == run_json("optimize", "--preset", str(child))["effective"]
    )


def test_middle_tier_rates_in_range(run: Run, tmp_path: Path) -> None:
    preset = write(tmp_path, "slow", tier("m", "100TB/s", 0.85), tier("n", "1e-12B/s", 0.12),
                   tier("s", "2TB/s", 0.03, "10min"))  # fmt: skip
    assert_usage_error(run("optimize", "--preset", preset, "--json"), "slow.toml: levels[1].bandwidth: 1e-12")


def test_markdown_lists_the_tiers(run: Run) -> None:
    result = run("optimize", "--preset", "llama3-405b-tiered", "--markdown")
    assert "| local nvme | 3.53 min | 264 ms | 12.0 % | 10.0 min |" in result.stdout


# ------------------------------------------------------------ a second round of odd inputs


def test_analyze_saves_over_a_tiered_preset(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    """The measured levels replace the base's, tiers included."""
    target = tmp_path / "measured.toml"
    log = str(Path(__file__).resolve().parent.parent / "docs" / "example-run.csv")
    result = run("analyze", log, "--time-unit", "s", "--preset", "llama3-405b-tiered", "--save-preset", str(target))
    assert result.exit_code == 0, result.stderr
    assert "[[levels]]" not in target.read_text(encoding="utf-8")
    assert run_json("optimize", "--preset", str(target))["inputs"]["tiers"] is None


TZ = (tier("m", "1TB/s", 0.0, "30s"), tier("n", "200GB/s", 0.9, "2min"),
      tier("s", "5GB/s", 0.1, "10min", snapshot_bandwidth="2TB/s"))  # fmt: skip
TZ_HEAD = 'schema_version = 1\n[checkpoint]\nsize = "1TB"\n[failures]\nmtbf = "1h"\n'


@pytest.mark.parametrize("fastest", ["10s", "20s", "30s"])
def test_pinned_fastest_tier_keeps_storage_over_its_persist(run_json: RunJson, tmp_path: Path, fastest: str) -> None:
    preset = write(tmp_path, "tz", *TZ, head=TZ_HEAD)
    storage = run_json("optimize", "--preset", preset, "--memory-interval", fastest)["levels"][-1]
    assert storage["interval_s"] >= storage["lag_s"] == 200.0


def test_sweep_refuses_storage_intervals_rounded_under_the_persist(run: Run) -> None:
    result = run("sweep", "--preset", "gemini-inmemory", "--snapshot-bw", "100TB/s", "--memory-interval", "40s",
                 "--from", "90s", "--to", "100s", "--points", "3", "--linear", "--json")  # fmt: skip
    assert_usage_error(result, "--from: storage intervals round to whole multiples of the pinned ones below")


def test_robust_never_worse_than_the_point_optimum(run_json: RunJson, tmp_path: Path) -> None:
    """A persist-bound asynchronous top tier across a wide MTBF interval."""
    preset = write(
        tmp_path, "ra", tier("m", "100TB/s", 0.85, "10min"), tier("n", "25TB/s", 0.12, "10min"),
        tier("s", "20GB/s", 0.03, "10min", snapshot_bandwidth="400TB/s"),
        head='schema_version = 1\n[checkpoint]\nsize = "6.48TB"\n[failures]\nmtbf = "30min"\n'
        'mtbf_ci95 = ["5min", "5h"]\n',
    )  # fmt: skip
    band = run_json("optimize", "--preset", preset)["uncertainty"]
    assert band["robust_regret_pp"] <= band["point_regret_pp"] * (1 + 1e-12)


@pytest.mark.parametrize(
    ("preset", "steps"), [("llama3-405b-tiered", [1, 2, 14]), ("gemini-inmemory", [1, 26])]
)  # fmt: skip
def test_long_steps_do_not_stretch_the_tiers_above(run_json: RunJson, preset: str, steps: list[int]) -> None:
    """A step longer than the fastest interval rounds that one up to a step; the tiers above stay near
    their optima (storage 24.7 min = 14.8 steps of 100 s; 4.39 h = 26.3 steps of 10 min)."""
    step = "100s" if preset == "llama3-405b-tiered" else "10min"
    doc = run_json("optimize", "--preset", preset, "--step-time", step)
    assert [level["optimal_interval_steps"] for level in doc["levels"]] == steps


def test_what_if_over_pinned_tiers(run_json: RunJson, tmp_path: Path) -> None:
    preset = write(
        tmp_path, "pinall", tier("m", "2.16TB/s", 0.9, interval="5min"), tier("n", "540GB/s", 0.08, "3min",
        interval="30min"), tier("s", "72GB/s", 0.02, "10min", interval="3h"),
    )  # fmt: skip
    doc = run_json("compare", preset, "--what-if", "mtbf=2h")
    assert (
        doc["scenarios"][1]["effective"]
        == run_json("optimize", "--preset", preset, "--mtbf", "2h")["optimal_effective"]
    )


def test_keep_base_over_two_levels(run: Run, run_json: RunJson, tmp_path: Path) -> None:
    base = write(tmp_path, "two", tier("ram", "2.16TB/s", 0.99), tier("pfs", "72GB/s", 0.01, "10min"))
    child = tmp_path / "k2.toml"
    child.write_text(f'base = "{Path(base).name}"\n[failures]\nmtbf = "3h"\n', encoding="utf-8")
    target = tmp_path / "kk.toml"
    result = run("optimize", "--preset", str(child), "--mtbf", "2h", "--save-preset", str(target), "--keep-base")
    assert result.exit_code == 0, result.stderr
    assert (
        run_json("optimize", "--preset", str(target))["effective"]
        == run_json("optimize", "--preset", str(child), "--mtbf", "2h")["effective"]
    )
    plain = tmp_path / "plain.toml"
    assert run("optimize", "--preset", base, "--save-preset", str(plain)).exit_code == 0
    assert 'name = "ram"' in plain.read_text(encoding="utf-8")


def test_keep_base_will_not_overwrite_its_base(run: Run, tmp_path: Path) -> None:
    base = write(tmp_path, "base", tier("ram", "2.16TB/s", 0.99), tier("pfs", "72GB/s", 0.01, "10min"))
    before = Path(base).read_text(encoding="utf-8")
    child = tmp_path / "kid.toml"
    child.write_text('base = "base.toml"\n[failures]\nmtbf = "3h"\n', encoding="utf-8")
    result = run("optimize", "--preset", str(child), "--save-preset", base, "--keep-base", "--force")
    assert_usage_error(result, "a preset cannot be saved over its own base")
    assert Path(base).read_text(encoding="utf-8") == before


def test_detection_lever_beside_a_whole_storage_restart(run_json: RunJson) -> None:
    keys = [lever["key"] for lever in run_json("optimize", "--preset", "llama3-405b-tiered", "--restart", "10min")[
        "levers"]]  # fmt: skip
    assert "detect_half" in keys


def test_every_restart_whole_drops_the_job_parts(run_json: RunJson, tmp_path: Path) -> None:
    preset = tmp_path / "rp2.toml"
    preset.write_text(
        'schema_version = 1\n[checkpoint]\nsize = "6.48TB"\n[storage]\nbandwidth = "2TB/s"\nread_bandwidth = "2TB/s"\n'
        '[failures]\nmtbf = "3.1h"\ndetect = "5min"\n[memory]\nreplica_survival = 0.9\nbandwidth = "100TB/s"\n'
        'read_bandwidth = "100TB/s"\n',
        encoding="utf-8",
    )
    doc = run_json("optimize", "--preset", str(preset), "--memory-restart", "1min", "--restart", "5min")
    assert (doc["inputs"]["restart_s"], doc["inputs"]["memory_restart_s"]) == (300.0, 60.0)
    assert doc["inputs"]["restart_components"] is None


def test_shipped_bases_are_the_shipped_ones(run_json: RunJson, tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "llama3-405b.toml").write_text(
        '[checkpoint]\nsize = "1TB"\n[storage]\nbandwidth = "1TB/s"\n[failures]\nmtbf = "1h"\nrestart = "1min"\n',
        encoding="utf-8",
    )
    shipped = run_json("optimize", "--preset", "llama3-405b-tiered")["effective"]
    monkeypatch.setenv("CKPTCALC_PRESET_PATH", str(tmp_path))
    assert run_json("optimize", "--preset", "llama3-405b-tiered")["effective"] == shipped


def test_a_preset_shape_is_named_by_its_key(run: Run, tmp_path: Path) -> None:
    child = tmp_path / "w.toml"
    child.write_text('base = "llama3-405b-tiered"\n[failures]\nshape = 0.7\n', encoding="utf-8")
    for command in (("optimize", "--preset", str(child)), ("compare", str(child)), ("sweep", "--preset", str(child))):
        assert_usage_error(run(*command, "--json"), "w.toml: failures.shape: more than one checkpoint level")


def test_replica_survival_sweep_from_zero(run_json: RunJson) -> None:
    doc = run_json("sweep", "--preset", "gemini-inmemory", "--over", "replica-survival", "--from", "0", "--to",
                   "0.9", "--points", "3", "--linear")  # fmt: skip
    assert doc["values"][0] == 0.0 and len(doc["effective"]) == 3


def test_a_child_changes_detection_its_base_states_on_the_tiers(run_json: RunJson, tmp_path: Path) -> None:
    """The base states detect (and warm-up) on its tiers; the child's [failures] detect replaces it and
    keeps the warm-up."""
    base = write(
        tmp_path, "tb", tier("mem", "2.16TB/s", 0.9, None, read_bandwidth="2TB/s", detect="5min", warmup="2min"),
        tier("nvme", "540GB/s", 0.08, "3min"),
        tier("pfs", "72GB/s", 0.02, None, read_bandwidth="72GB/s", detect="5min"),
    )  # fmt: skip
    child = tmp_path / "tc.toml"
    child.write_text(f'base = "{Path(base).name}"\n[failures]\ndetect = "1min"\n', encoding="utf-8")
    parts = run_json("optimize", "--preset", str(child))["inputs"]["restart_components"]
    assert {name: (p["detect_s"], p["warmup_s"]) for name, p in parts.items()} == {
        "memory": (60.0, 120.0),
        "storage": (60.0, 120.0),
    }
