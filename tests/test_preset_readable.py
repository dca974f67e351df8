"""Presets written for a reader: human units at 4 significant figures (a full-precision comment where
rounding would move the effective time by more than 1e-6), --name and --description, derived_from and
changed against the preset started from, [sources] (fitted, measured, derived), natural order."""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import assert_usage_error
from typer.testing import CliRunner

from ckptcalc import api
from ckptcalc.cli import app
from ckptcalc.errors import PresetError
from ckptcalc.inputs import preset_write, presets
from ckptcalc.inputs.scenario import resolve
from ckptcalc.model.evaluation import evaluate

HAND = Path(__file__).parent / "data" / "hand-run.jsonl"

# Four interruptions at 0, 4 h, 10 h and 30 h: the window opens at the first, so 3 interruptions in
# 30 h, an MTBF of exactly 10 h; three gaps say nothing against exponential failures, so no shape.
LOG = "time\n2026-01-01T00:00:00Z\n2026-01-01T04:00:00Z\n2026-01-01T10:00:00Z\n2026-01-02T06:00:00Z\n"
BASE = "llama3-405b-async"  # not the default preset: derived_from must name it


class Trip:
    """The newcomer's round trip, run once: fit a log into a preset, then optimize from it."""

    text: str  # the preset fit --save-preset wrote
    table: Any  # optimize --preset on it, as a table
    json: Any  # and as JSON

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runner = CliRunner()

    def run(self, *args: str) -> Any:
        return self.runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def trip(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trip]:
    root = tmp_path_factory.mktemp("trip")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CKPTCALC_PRESET_PATH", str(tmp_path_factory.mktemp("no-presets")))
        patch.setenv("NO_COLOR", "1")
        patch.setenv("COLUMNS", "100")
        patch.chdir(root)
        (root / "few.csv").write_text(LOG, encoding="utf-8")
        done = Trip(root)
        fitted = done.run(
            "fit", "few.csv", "--preset", BASE, "--save-preset", "saved.toml",
            "--name", "my cluster", "--description", "llama3-405b-async with the failures of few.csv",
        )  # fmt: skip
        assert fitted.exit_code == 0, fitted.stderr
        done.text = (root / "saved.toml").read_text(encoding="utf-8")
        done.table = done.run("optimize", "--preset", "saved.toml")
        done.json = done.run("optimize", "--preset", "saved.toml", "--json")
        yield done


def test_the_fitted_preset_reads_cleanly(trip: Any) -> None:
    document = tomllib.loads(trip.text)
    assert document["name"] == "my cluster"
    assert document["description"] == "llama3-405b-async with the failures of few.csv"
    assert document["derived_from"] == BASE
    # Exactly what differs from llama3-405b-async now: its MTBF (3.1 h there) and the interval it had not.
    assert document["changed"] == ["failures.mtbf", "failures.mtbf_ci95"]
    assert 'mtbf = "10h"\n' in trip.text and "#" not in trip.text
    assert document["sources"] == {"failures.mtbf": "fitted from few.csv"}
    # The 95 % interval of 3 failures in 30 h: 60 h / χ²(0.975; 8) = 60 / 17.535 = 3.4218 h and
    # 60 h / χ²(0.025; 6) = 60 / 1.2373 = 48.49 h = 2.0204 d, written at 4 significant figures.
    assert document["failures"]["mtbf_ci95"] == ["3.422h", "2.02d"]


def test_every_written_value_has_at_most_4_significant_figures(trip: Any) -> None:
    for line in trip.text.splitlines():
        found = re.fullmatch(r'\s*(?:\w+ = )?"?([0-9.]+)(?:[A-Za-z/]+)?"?,?', line)
        if found is not None:
            digits = found.group(1).replace(".", "").strip("0")
            assert len(digits) <= 4 or "." not in found.group(1), line


def test_optimize_labels_the_mtbf_fitted_from_the_log(trip: Any) -> None:
    assert trip.table.exit_code == 0, trip.table.stderr
    mtbf = next(line for line in trip.table.stdout.splitlines() if line.startswith("MTBF "))
    assert "10.0 h" in mtbf and "fitted from few.csv" in mtbf
    assert "given" not in mtbf
    document = json.loads(trip.json.stdout)
    assert document["inputs"]["sources"] == {"failures.mtbf": "fitted from few.csv"}


def test_the_round_trip_keeps_the_result(trip: Any) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(trip.root)
        original = api.fitted_preset(api.fit(["few.csv"]), BASE)
    again = json.loads(trip.json.stdout)
    expected = float(evaluate(resolve(original).config).effective)
    assert again["effective"] == pytest.approx(expected, rel=1e-6)


def test_saving_from_the_saved_preset_lists_only_what_changed_now(trip: Any) -> None:
    # saved.toml carries changed = [mtbf, mtbf_ci95] from the fit; a preset saved from it with a new
    # restart changed only that, against saved.toml.
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(trip.root)
        result = trip.run("optimize", "--preset", "saved.toml", "--restart", "15min", "--save-preset", "next.toml")
        assert result.exit_code == 0, result.stderr
        text = (trip.root / "next.toml").read_text(encoding="utf-8")
    document = tomllib.loads(text)
    assert document["derived_from"] == "saved.toml"
    assert document["changed"] == ["failures.restart"]
    assert 'restart = "15min"\n' in text  # as typed
    assert document["sources"] == {"failures.mtbf": "fitted from few.csv"}  # still the fitted value
    assert "source" not in document  # the fit's sentence no longer describes it


def test_a_value_given_anew_is_no_longer_fitted(run: Any, tmp_path: Path, trip: Any) -> None:
    result = run("optimize", "--preset", str(trip.root / "saved.toml"), "--mtbf", "8h", "--json")
    assert json.loads(result.stdout)["inputs"]["sources"] == {}


# ------------------------------------------------------------------ the 1e-6 rule


def _effective(scenario: Any) -> float:
    return float(evaluate(resolve(scenario).config).effective)


def test_rounding_that_moves_nothing_leaves_no_comment() -> None:
    # 2.0000001 TB/s written as 2 TB/s moves the write time by 5e-8 and the effective time far less.
    scenario = presets.load("llama3-405b").replace(bandwidth=2.0000001e12)
    text = preset_write.readable_text(scenario)
    assert 'bandwidth = "2TB/s"\n' in text and "#" not in text
    back = presets.parse(text, "back.toml")
    assert back.bandwidth == 2e12
    assert _effective(back) == pytest.approx(_effective(scenario), rel=1e-6)


def test_rounding_that_moves_the_result_keeps_the_digits_and_a_comment() -> None:
    # The fitted MTBF, 48143.20108695652 s: at 4 figures (13.37 h) the effective time moves by more
    # than 1e-6 of itself, so the value keeps more figures and its SI value in a comment.
    scenario = presets.load("llama3-405b").replace(mtbf_s=48143.20108695652)
    four = presets.load("llama3-405b").replace(mtbf_s=units_of("13.37h"))
    assert abs(_effective(four) / _effective(scenario) - 1) > 1e-6  # the premise
    text = preset_write.readable_text(scenario)
    line = next(line for line in text.splitlines() if line.startswith("mtbf = "))
    assert re.fullmatch(r'mtbf = "13\.37\d+h"  # 48143\.20108695652 s', line), line
    assert text.count("#") == 1  # the others round harmlessly
    back = presets.parse(text, "back.toml")
    assert _effective(back) == pytest.approx(_effective(scenario), rel=1e-6)


def units_of(text: str) -> float:
    from ckptcalc.inputs.units import parse_duration

    return parse_duration(text)


def test_a_scenario_the_model_cannot_evaluate_is_written_exactly() -> None:
    scenario = presets.load("llama3-405b").replace(bandwidth=None, restart_s=600.123456789)
    text = preset_write.readable_text(scenario)
    assert presets.parse(text, "back.toml").restart_s == 600.123456789


# ------------------------------------------------------------------ --name, --description, sources, order


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (("--name", ""), "--name"),
        (("--name", "two\nlines"), "--name"),
        (("--description", "   "), "--description"),
        (("--description", "a\nb"), "--description"),
    ],
)
def test_bad_names_and_descriptions_are_refused(run: Any, tmp_path: Path, args: tuple[str, str], culprit: str) -> None:
    target = tmp_path / "x.toml"
    for command in (("optimize",), ("analyze", str(HAND), "--time-unit", "min")):
        assert_usage_error(run(*command, "--save-preset", str(target), *args), culprit)
    assert not target.exists()


def test_name_without_save_preset_is_refused(run: Any) -> None:
    assert_usage_error(run("optimize", "--name", "x"), "--name")
    assert_usage_error(run("fit", "--failures", "3", "--window", "30h", "--description", "x"), "--description")


def test_analyze_saves_values_measured_from_the_log(run: Any, tmp_path: Path) -> None:
    target = tmp_path / "measured.toml"
    result = run("analyze", str(HAND), "--time-unit", "min", "--save-preset", str(target), "--name", "hand run")
    assert result.exit_code == 0, result.stderr
    document = tomllib.loads(target.read_text(encoding="utf-8"))
    assert document["name"] == "hand run" and document["derived_from"] == "llama3-405b"
    sources = document["sources"]
    assert sources["failures.mtbf"] == sources["failures.restart"] == f"measured from {HAND}"
    assert sources["storage.bandwidth"].startswith("derived from the write time measured in")
    # The checkpoint size is llama3-405b's, stated as a size now: params and bytes_per_param go.
    assert {"checkpoint.size", "checkpoint.params", "storage.bandwidth", "failures.mtbf"} <= set(document["changed"])
    table = run("optimize", "--preset", str(target)).stdout
    assert "measured from" in next(line for line in table.splitlines() if line.startswith("MTBF "))


def test_a_bad_source_is_refused(tmp_path: Path) -> None:
    text = 'schema_version = 1\n[failures]\nmtbf = "3h"\n[sources]\n"failures.mtbf" = "guessed"\n'
    with pytest.raises(PresetError, match=r"bad\.toml: sources\.failures\.mtbf: must be one line"):
        presets.parse(text, "bad.toml")
    with pytest.raises(PresetError, match=r"bad\.toml: sources\.failures\.nope: unknown preset key"):
        presets.parse(text.replace('"failures.mtbf" =', '"failures.nope" ='), "bad.toml")


def test_a_child_stating_a_fitted_value_anew_drops_its_source(tmp_path: Path) -> None:
    fitted = 'schema_version = 1\n[failures]\nmtbf = "3h"\nrestart = "10min"\n'
    (tmp_path / "fitted.toml").write_text(
        fitted + '[sources]\n"failures.mtbf" = "fitted from a.log"\n', encoding="utf-8"
    )
    (tmp_path / "same.toml").write_text('base = "./fitted.toml"\n[failures]\nrestart = "5min"\n', encoding="utf-8")
    (tmp_path / "anew.toml").write_text('base = "./fitted.toml"\n[failures]\ngpu_mtbf = "5000h"\n', encoding="utf-8")
    assert presets.load(str(tmp_path / "same.toml")).source_of("mtbf_s") == "fitted from a.log"
    assert presets.load(str(tmp_path / "anew.toml")).sources == ()


def test_presets_are_listed_naturally(run: Any) -> None:
    names = [row["name"] for row in json.loads(run("presets", "list", "--json").stdout)["presets"]]
    assert names.index("llama3-405b") < names.index("llama3-405b-async") < names.index("llama3-405b-tiered")
    assert names.index("rsc1-16k") < names.index("rsc1-131k")  # 16 < 131 as numbers
    assert names == sorted(names, key=presets.natural)


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["b-2", "b-10", "b"], ["b", "b-2", "b-10"]),
        (["llama3-405b-async", "llama3-405b", "llama3-70b"], ["llama3-70b", "llama3-405b", "llama3-405b-async"]),
        (["B1", "a2"], ["a2", "B1"]),  # case does not order
    ],
)
def test_natural_order(names: list[str], expected: list[str]) -> None:
    assert sorted(names, key=presets.natural) == expected


def test_presets_list_shows_a_saved_presets_own_name(run: Any, trip: Any, tmp_path: Path) -> None:
    import os

    folder = Path(os.environ["CKPTCALC_PRESET_PATH"])
    (folder / "mine.toml").write_text(trip.text, encoding="utf-8")
    rows = {row["name"]: row for row in json.loads(run("presets", "list", "--json").stdout)["presets"]}
    assert rows["mine"]["title"] == "my cluster"
    assert rows["llama3-405b"]["title"] == "llama3-405b"
    assert "my cluster: llama3-405b-async with" in run("presets", "list").stdout


@pytest.mark.parametrize(
    ("given", "written"),
    [("70e9", '"70B"'), ("70.5e9", '"70.5B"'), ("1.5e12", '"1.5T"'), ("70123456789", "70123456789")],
)
def test_a_parameter_count_is_written_as_people_say_it(run: Any, tmp_path: Path, given: str, written: str) -> None:
    # Billions and trillions where that is exact; any other count as its digits, never rounded.
    path = tmp_path / "model.toml"
    assert run("optimize", "--params", given, "--save-preset", str(path)).exit_code == 0
    assert f"params = {written}\n" in path.read_text()
    assert float(run("optimize", "--preset", str(path), "--value", "inputs.params").stdout) == float(given)
