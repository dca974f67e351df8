"""Bare counts warned about, --strict, --value on every command, sweeps over every input, completion."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from typer.testing import CliRunner

from ckptcalc import api, completion
from ckptcalc.cli import app
from ckptcalc.inputs import grid
from ckptcalc.inputs.bare_counts import suspects
from ckptcalc.inputs.fields import BY_PUBLIC
from ckptcalc.output import documents

PARAMS_70 = "params 70 is 70 parameters; did you mean 70B (70e9)?"
SIZE_140 = "size 140 is 140 bytes; did you mean 140GB?"


@pytest.fixture(autouse=True)
def _no_earlier_search_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    # What an earlier test's preset search skipped stays in the process; --strict would count it here.
    from ckptcalc.inputs import preset_search

    monkeypatch.setattr(preset_search, "_SKIPPED", {})


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A failure log whose timestamps carry no zone (fit warns) and a run log with no checkpoint (analyze warns)."""
    here = tmp_path_factory.mktemp("logs")
    naive = here / "naive.csv"
    naive.write_text("time\n2026-01-01T00:00\n2026-01-02T00:00\n2026-01-04T00:00\n2026-01-05T00:00\n")
    run = here / "run.jsonl"
    run.write_text(
        '{"time": 0, "event": "run_start"}\n{"time": 100, "event": "failure"}\n'
        '{"time": 160, "event": "restart_end"}\n{"time": 1000, "event": "run_end"}\n'
    )
    bare = here / "bare.toml"
    bare.write_text('base = "llama3-405b"\n[checkpoint]\nparams = 70\n')
    return {"naive": naive, "run": run, "bare": bare}


# ------------------------------------------------------------------ bare counts


class _Stated:
    def __init__(self, params: float | None, size: float | None) -> None:
        self.params, self.checkpoint_bytes = params, size

    def where(self, name: str) -> str:
        return name


@pytest.mark.parametrize(
    ("params", "size", "warned"),
    [
        (70.0, None, ["params"]),
        (999_999.0, None, ["params"]),  # just under 10^6
        (1e6, None, []),  # the floor itself is a (tiny) model
        (70e9, None, []),
        (None, 140.0, ["checkpoint_bytes"]),
        (None, 999_999.0, ["checkpoint_bytes"]),
        (None, 1e6, []),  # 1 MB
        (None, 140e9, []),
        (70.0, 140.0, ["params", "checkpoint_bytes"]),
    ],
)
def test_suspects_are_the_counts_below_their_floors(
    params: float | None, size: float | None, warned: list[str]
) -> None:
    assert [s.name for s in suspects(_Stated(params, size))] == warned


def test_the_api_warns_about_a_bare_parameter_count_and_size() -> None:
    assert PARAMS_70 in api.optimize(params=70).warnings
    assert SIZE_140 in api.optimize(size=140).warnings
    assert not [w for w in api.optimize(params=70e9).warnings if "did you mean" in w]
    assert not [w for w in api.optimize(size="140GB").warnings if "did you mean" in w]


def test_a_preset_key_is_named_by_its_file(logs: dict[str, Path]) -> None:
    found = api.optimize(logs["bare"]).warnings
    assert f"{logs['bare']}: checkpoint.params = 70 is 70 parameters; did you mean 70B (70e9)?" in found


@pytest.mark.parametrize(
    "args",
    [
        ["optimize", "--params", "70"],
        ["optimize", "--params", "70", "--json"],
        ["optimize", "--params", "70", "--value", "effective"],
        ["sweep", "--params", "70", "--points", "3", "--json"],
        ["simulate", "--params", "70", "--cycles", "2000", "--seed", "1", "--json"],
        ["plan", "--params", "70", "--work", "2d", "--runs", "20", "--seed", "1", "--json"],
    ],
)
def test_every_model_command_warns_on_stderr_and_in_the_document(args: list[str]) -> None:
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    assert f"warning: {PARAMS_70}" in result.stderr.splitlines()
    if "--json" in args:
        assert PARAMS_70 in json.loads(result.stdout)["warnings"]


def test_compare_warns_under_the_column_that_has_it() -> None:
    result = invoke("compare", "--what-if", "size=140", "--json")
    assert result.exit_code == 0, result.stderr
    first, changed = json.loads(result.stdout)["scenarios"]
    assert SIZE_140 not in first["warnings"] and SIZE_140 in changed["warnings"]
    table = invoke("compare", "--what-if", "size=140")
    assert f"warning: size=140: {SIZE_140}" in table.stderr.splitlines()


def test_check_warns_about_each_preset(logs: dict[str, Path]) -> None:
    result = invoke("check", str(logs["bare"]), "llama3-405b", "--min-effective", "0.5", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["warnings"] == [
        f"{logs['bare']}: checkpoint.params = 70 is 70 parameters; did you mean 70B (70e9)?"
    ]


def test_no_warning_for_counts_with_their_scale() -> None:
    result = invoke("optimize", "--params", "70e9", "--json")
    assert result.exit_code == 0
    assert "did you mean" not in result.stderr
    result = invoke("optimize", "--size", "140GB", "--strict", "--value", "effective")
    assert result.exit_code == 0 and result.stderr == ""


# ------------------------------------------------------------------ --strict


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (["optimize", "--params", "70"], PARAMS_70),
        (["optimize", "--size", "140", "--json"], SIZE_140),
        (["sweep", "--params", "70", "--points", "3"], PARAMS_70),
        (["sweep", "--params", "70", "--points", "3", "--json"], PARAMS_70),
        (["compare", "--what-if", "params=70"], f"params=70: {PARAMS_70}"),
        (["simulate", "--params", "70", "--cycles", "2000", "--seed", "1"], PARAMS_70),
        (["plan", "--params", "70", "--work", "2d", "--runs", "20", "--seed", "1"], PARAMS_70),
        (["check", "BARE", "--min-effective", "0.5"], "checkpoint.params = 70"),
        (["fit", "NAIVE"], "have no zone"),
        (["analyze", "RUN", "--time-unit", "s"], "no completed checkpoint"),
    ],
)
def test_strict_turns_the_first_warning_into_an_error(args: list[str], culprit: str, logs: dict[str, Path]) -> None:
    args = [{"BARE": str(logs["bare"]), "NAIVE": str(logs["naive"]), "RUN": str(logs["run"])}.get(a, a) for a in args]
    result = invoke(*args, "--strict")
    assert_usage_error(result, culprit)
    assert "--strict" in result.stderr


def test_strict_writes_nothing(tmp_path: Path) -> None:
    saved = tmp_path / "saved.toml"
    result = invoke("optimize", "--params", "70", "--strict", "--save-preset", str(saved))
    assert_usage_error(result, PARAMS_70)
    assert not saved.exists()


def test_strict_refuses_before_a_simulation_writes_its_events(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    result = invoke("simulate", "--params", "70", "--cycles", "1000", "--events", str(events), "--strict")
    assert_usage_error(result, PARAMS_70)
    assert not events.exists()


def test_sweep_csv_warns_on_stderr() -> None:
    result = invoke("sweep", "--params", "70", "--points", "2", "--csv")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [f"warning: {PARAMS_70}"]


def test_strict_counts_the_other_warnings() -> None:
    result = invoke("compare", "--what-if", "params=70", "--what-if", "size=140", "--strict")
    assert_usage_error(result, "and 1 more warning;")


# ------------------------------------------------------------------ --value


@pytest.mark.parametrize(
    ("args", "key", "expected"),
    [
        # The grid's ends are the bounds given: 1 h and 24 h in seconds.
        (["sweep", "--over", "mtbf", "--from", "1h", "--to", "24h", "--points", "3"], "values.2", 86400.0),
        (["compare", "--what-if", "restart=2min"], "scenarios.1.inputs.restart_s", 120.0),
        # 419 interruptions in 54 days: M = 54 × 86400 / 419 s.
        (["fit", "--failures", "419", "--window", "54d"], "mtbf_s", 54 * 86400 / 419),
        (["plan", "--work", "2d", "--runs", "20", "--seed", "1"], "work_s", 2 * 86400.0),
        (["simulate", "--cycles", "2000", "--seed", "1"], "cycles", 2000.0),
        (["check", "llama3-405b", "--min-effective", "0.5"], "min_effective", 0.5),
    ],
)
def test_value_prints_one_bare_number(args: list[str], key: str, expected: float) -> None:
    result = invoke(*args, "--value", key)
    assert result.exit_code == 0, result.stderr
    assert float(result.stdout) == pytest.approx(expected, rel=1e-12)
    assert result.stdout.count("\n") == 1


def test_value_agrees_with_the_json(logs: dict[str, Path]) -> None:
    for args, key in [
        (["analyze", str(logs["run"]), "--time-unit", "s"], "realised.effective"),
        (["simulate", "--cycles", "2000", "--seed", "3"], "effective"),
    ]:
        whole = json.loads(invoke(*args, "--json").stdout)
        assert float(invoke(*args, "--value", key).stdout) == documents.value_at(whole, key)


def test_events_value_picks_from_the_summary(tmp_path: Path, logs: dict[str, Path]) -> None:
    out = tmp_path / "events.jsonl"
    result = invoke("events", str(logs["run"]), "--time-unit", "s", "--output", str(out), "--value", "events")
    assert result.exit_code == 0, result.stderr
    assert int(result.stdout) == len(out.read_text().splitlines())
    assert_usage_error(invoke("events", str(logs["run"]), "--time-unit", "s", "--value", "events"), "--value")


def test_an_unknown_key_suggests_the_three_nearest() -> None:
    result = invoke("optimize", "--value", "effectiv")
    assert_usage_error(result, "--value: unknown key 'effectiv'; did you mean 'effective', ")
    suggested = result.stderr.split("did you mean ")[1].split("?")[0]
    assert suggested.count("'") == 6  # three keys, quoted
    assert len(result.stderr) < 200  # not the ~110 keys
    result = invoke("sweep", "--points", "3", "--value", "efective.0")
    assert_usage_error(result, "'effective.0'")


def test_nearest_falls_back_to_keys_holding_the_word() -> None:
    from ckptcalc.cli import _nearest

    paths = ["loss.write", "loss.rework", "loss.restart", "effective"]
    assert _nearest("effective", paths)[0] == "effective"
    assert len(_nearest("zzzz", paths)) == 3
    assert _nearest("rework", paths)[0] == "loss.rework"


# ------------------------------------------------------------------ sweep --over every input


def test_every_what_if_key_is_an_over_key() -> None:
    # --what-if takes every input by its public name (api.what_if looks it up in BY_PUBLIC), all numeric.
    what_if_keys = {spec.flag for spec in BY_PUBLIC.values()}
    assert what_if_keys <= set(grid.OVER)
    assert set(grid.SI_NAME) == set(grid.OVER)
    assert set(completion.over("")) == set(grid.OVER)


def test_a_window_sweep_is_the_mtbf_sweep_at_window_over_failures() -> None:
    # M = window / failures: 100 failures in 5.4 d, 54 d and 540 d are M = 4665.6 s, 46656 s, 466560 s.
    by_window = api.sweep(failures=100, window="54d", over="window", points=3)
    by_mtbf = api.sweep(mtbf=46656, over="mtbf", start=4665.6, stop=466560, points=3, log=True)
    assert by_window["values"] == pytest.approx([466560.0, 4665600.0, 46656000.0])
    assert by_window["effective"] == pytest.approx(by_mtbf["effective"], rel=1e-12)


def test_a_resolved_sweep_point_is_the_what_if_of_that_value() -> None:
    swept = api.sweep(over="detect", start="1min", stop="31min", points=3)
    columns = api.compare(what_ifs=[("detect", "16min")]).scenarios
    assert swept["values"][1] == 16 * 60
    assert swept["effective"][1] == pytest.approx(columns[1]["effective"], rel=1e-9)
    assert swept["effective"][1] == api.optimize(detect="16min").effective


def test_a_lone_restart_part_sweeps_as_the_whole_restart() -> None:
    # With no other part given, the restart by parts is detect + 0 + 0 (docs/model.md §12.1): a sweep over
    # detect, resolved point by point, is the vectorised sweep over the restart.
    by_part = api.sweep(over="detect", start="1min", stop="30min", points=4)
    whole = api.sweep(over="restart", start="1min", stop="30min", points=4)
    assert by_part["values"] == whole["values"]
    assert by_part["effective"] == pytest.approx(whole["effective"], rel=1e-12)


def test_an_input_the_model_ignores_sweeps_flat() -> None:
    swept = api.sweep(over="gpu_hour_cost", start=1, stop=3, points=3, gpus=16384)
    assert len(swept["effective"]) == 3 and len(set(swept["effective"])) == 1
    assert swept["values_name"] == "gpu_hour_cost"


def test_a_count_sweeps_whole_numbers() -> None:
    swept = api.sweep("palm-spikes", over="keep", start=1, stop=9, points=5, log=False)
    assert swept["values"] == [1.0, 3.0, 5.0, 7.0, 9.0]


# ------------------------------------------------------------------ completion


def test_completion_callbacks() -> None:
    assert completion.presets("llama3-405b-") == [
        "llama3-405b-async",
        "llama3-405b-classes",
        "llama3-405b-jit",
        "llama3-405b-tiered",
    ]
    assert completion.over("snap") == ["snapshot-bw"]
    assert completion.over("detect") == ["detect", "detect-latency"]
    assert completion.schema_names("pl") == ["plan"]
    assert completion.value_keys("optimize")("loss.") == ["loss.write", "loss.rework", "loss.restart", "loss.total"]
    assert "completion_s.p50" in completion.value_keys("plan")("completion_s")


def test_value_completion_covers_the_document() -> None:
    document = api.optimize().to_dict()
    keys = set(completion.value_keys("optimize")(""))
    shown = [
        path
        for path in documents.scalar_paths(document)
        if documents.value_at(document, path) is not None
        and all(part == "0" for part in path.split(".") if part.isdigit())
    ]
    assert shown and set(shown) <= keys


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        ("ckptcalc sweep --over snap", ["snapshot-bw"]),
        ("ckptcalc schema pl", ["plan"]),
        ("ckptcalc presets show llama3-405b-j", ["llama3-405b-jit"]),
        ("ckptcalc check llama3-405b-t", ["llama3-405b-tiered"]),
        ("ckptcalc fit --preset llama3-405b-a", ["llama3-405b-async"]),
        ("ckptcalc plan --value completion_s.p5", ["completion_s.p50"]),
        ("ckptcalc events --value reading.fi", ["reading.files", "reading.filtered"]),
    ],
)
def test_bash_completion(words: str, expected: list[str]) -> None:
    env = {"_CKPTCALC_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
    result = CliRunner().invoke(app, [], env=env, prog_name="ckptcalc")
    assert result.exit_code == 0
    assert result.stdout.split() == expected


def test_completion_imports_no_numpy() -> None:
    code = (
        "import sys\n"
        "from ckptcalc.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    words = "ckptcalc optimize --value loss.re"
    env = {**os.environ, "_CKPTCALC_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": "3"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["loss.rework", "loss.restart"]
    assert not {"numpy", "scipy", "rich"} & set(done.stderr.split())
