"""The Python API: the same documents as the command line, field-named errors, no Typer or Rich."""

from __future__ import annotations

import doctest
import math
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

import ckptcalc
from ckptcalc import api, errors, records
from ckptcalc.inputs.scenario import Scenario
from ckptcalc.model import evaluation as model
from ckptcalc.model import one_level, search, tiers

RunJson = Callable[..., dict[str, Any]]


@pytest.mark.parametrize("module", [ckptcalc, api, one_level, tiers, search, model, records])
def test_doctests(module: Any) -> None:
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0


@pytest.mark.parametrize(
    ("kwargs", "args"),
    [
        ({"preset": "llama3-405b", "restart": "2min"}, ["--preset", "llama3-405b", "--restart", "2min"]),
        ({"preset": "gemini-inmemory", "target": 0.97}, ["--preset", "gemini-inmemory", "--target", "0.97"]),
        ({"size": "6.5TB", "bw": "20GB/s", "mtbf": "15min", "interval": "5min"},
         ["--size", "6.5TB", "--bw", "20GB/s", "--mtbf", "15min", "--interval", "5min"]),
        ({"gpus": 100000}, ["--gpus", "100000"]),
    ],
)  # fmt: skip
def test_optimize_document_is_the_cli_json(kwargs: dict[str, Any], args: list[str], run_json: RunJson) -> None:
    assert ckptcalc.optimize(**kwargs).to_dict() == run_json("optimize", *args)


def test_si_numbers_equal_strings_with_units() -> None:
    by_text = ckptcalc.optimize(bw="20GB/s", restart="2min", mtbf="24h")
    by_number = ckptcalc.optimize(bw=20e9, restart=120, mtbf=86400.0)
    assert by_text.to_dict() == by_number.to_dict()
    # docs/model.md §3.2: Llama 3 with a 2-minute restart at its exact optimum
    assert ckptcalc.optimize(restart=120).effective == pytest.approx(0.965657, abs=5e-7)


def test_results_are_frozen_and_copies() -> None:
    result = ckptcalc.optimize()
    with pytest.raises(AttributeError):
        result.document = {}  # type: ignore[misc]
    result.to_dict()["effective"] = 2.0
    assert result.effective == pytest.approx(0.925004, abs=5e-7)


def test_a_loaded_preset_is_accepted() -> None:
    preset = ckptcalc.load_preset("llama3-405b")
    assert isinstance(preset, Scenario)
    by_name = ckptcalc.optimize("llama3-405b", restart="2min").to_dict()
    assert ckptcalc.optimize(preset, restart="2min").to_dict() == by_name


def test_other_commands_are_the_cli_json(run_json: RunJson) -> None:
    assert ckptcalc.sweep(over="mtbf", start="1h", stop="1d", points=4).to_dict() == run_json(
        "sweep", "--over", "mtbf", "--from", "1h", "--to", "1d", "--points", "4"
    )
    assert ckptcalc.compare(["llama3-405b", "bloom-176b"], what_ifs=[("restart", "2min")]).to_dict() == run_json(
        "compare", "llama3-405b", "bloom-176b", "--what-if", "restart=2min"
    )
    assert ckptcalc.check(["llama3-405b"], min_effective=0.9).to_dict() == run_json(
        "check", "llama3-405b", "--min-effective", "0.9"
    )
    assert ckptcalc.simulate(cycles=4000, seed=3).to_dict() == run_json("simulate", "--cycles", "4000", "--seed", "3")


BAD = [
    # (function, arguments, the field the error names)
    ("optimize", {"bw": -2e12}, "bw"),
    ("optimize", {"bw": 0}, "bw"),
    ("optimize", {"bw": "0TB/s"}, "bw"),
    ("optimize", {"restart": math.nan}, "restart"),
    ("optimize", {"mtbf": math.inf}, "mtbf"),
    ("optimize", {"mtbf": "3.1"}, "mtbf"),
    ("optimize", {"replica_survival": 0.9}, "replica_survival"),
    ("optimize", {"memory_bw": "1TB/s"}, "memory_bw"),
    ("optimize", {"bandwidth": 1e12}, "bandwidth"),
    ("optimize", {"bw": [1.0]}, "bw"),
    ("optimize", {"target": 1.5}, "target"),
    ("optimize", {"preset": "nope"}, "preset"),
    ("sweep", {"over": "nothing"}, "over"),
    ("sweep", {"points": 1}, "points"),
    ("sweep", {"over": "bw", "start": "2TB/s", "stop": "1TB/s"}, "start"),
    ("simulate", {"cycles": 10}, "cycles"),
    ("simulate", {"failure_dist": "weibull"}, "shape"),
    ("check", {"presets": ["llama3-405b"], "min_effective": 2}, "min_effective"),
]


@pytest.mark.parametrize(("name", "kwargs", "field"), BAD)
def test_bad_input_raises_input_error_naming_the_field(name: str, kwargs: dict[str, Any], field: str) -> None:
    function = getattr(ckptcalc, name)
    with pytest.raises(errors.CkptError) as info:
        function(**kwargs)
    assert isinstance(info.value, ValueError)
    assert info.value.where == field
    assert "--" not in str(info.value)  # fields, not flags


def test_input_error_is_exported() -> None:
    assert issubclass(ckptcalc.InputError, ValueError)
    with pytest.raises(ckptcalc.InputError):
        ckptcalc.optimize(gpus=1.5)


def test_api_imports_neither_typer_nor_rich() -> None:
    code = (
        "import sys, ckptcalc\n"
        "r = ckptcalc.optimize(preset='llama3-405b', restart='2min')\n"
        "print(r.effective)\n"
        "print(sorted(m for m in ('typer', 'rich', 'numpy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert float(out[0]) == pytest.approx(0.965657, abs=5e-7)
    assert out[1] == "[]"


def test_the_simulation_itself_refuses_too_few_cycles() -> None:
    # Below the API too: 10 cycles cannot fill the 20 batches behind the confidence interval.
    from ckptcalc.model.evaluation import Config
    from ckptcalc.simulation import timeline as montecarlo

    config = Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0)
    with pytest.raises(ckptcalc.InputError) as info:
        montecarlo.run(config, montecarlo.Failures(11160.0), cycles=10)
    assert info.value.where == "cycles"
