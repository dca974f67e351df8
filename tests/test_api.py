"""The Python API: the same documents as the command line, field-named errors, no Typer or Rich."""

from __future__ import annotations

import doctest
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
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


def test_the_error_hierarchy() -> None:
    # ckptcalc/errors.py: CkptError the base, InputError the parent of every user-input error.
    assert issubclass(ckptcalc.CkptError, ValueError)
    assert issubclass(ckptcalc.InputError, ckptcalc.CkptError)
    assert issubclass(ckptcalc.UnitError, ckptcalc.InputError)
    assert issubclass(ckptcalc.PresetError, ckptcalc.InputError)


def _broken_toml(tmp: Path) -> str:
    path = tmp / "broken.toml"
    path.write_text("[storage\nbandwidth = 1\n", encoding="utf-8")
    return str(path)


def _existing(tmp: Path) -> str:
    path = tmp / "taken.jsonl"
    path.write_text("", encoding="utf-8")
    return str(path)


#: Bad inputs of every kind, each with the class it raises and where it points.
EVERY_KIND: list[tuple[str, Callable[[Path], Any], type[Exception], str]] = [
    ("unknown preset", lambda tmp: ckptcalc.optimize("no-such-preset"), ckptcalc.PresetError, "preset"),
    ("broken TOML", lambda tmp: ckptcalc.optimize(_broken_toml(tmp)), ckptcalc.PresetError, "broken.toml"),
    ("bad unit", lambda tmp: ckptcalc.optimize(bw="2"), ckptcalc.UnitError, "bw"),
    ("unparseable value", lambda tmp: ckptcalc.optimize(mtbf="soon"), ckptcalc.UnitError, "mtbf"),
    ("negative value", lambda tmp: ckptcalc.optimize(restart=-60), ckptcalc.InputError, "restart"),
    # mypy refuses the misspelt keyword as well (the inputs are a TypedDict): strict mode flags an unused ignore.
    ("unknown input", lambda tmp: ckptcalc.optimize(bandwith="2TB/s"),  # type: ignore[call-arg]
     ckptcalc.InputError, "bandwith"),
    ("missing log", lambda tmp: ckptcalc.fit([str(tmp / "none.csv")]), ckptcalc.InputError, "none.csv"),
    ("sweep bound", lambda tmp: ckptcalc.sweep(over="mtbf", start="1 parsec"), ckptcalc.UnitError, "start"),
    ("plan work", lambda tmp: ckptcalc.plan(work="-3d", runs=10), ckptcalc.InputError, "work"),
    ("events output exists",
     lambda tmp: ckptcalc.events(["tests/data/hand-run.jsonl"], output=_existing(tmp), time_unit="min"),
     ckptcalc.InputError, "output"),
    ("preset exists", lambda tmp: ckptcalc.save_preset(ckptcalc.load_preset(), _existing(tmp)),
     ckptcalc.PresetError, "save_preset"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "call", "kind", "where"), EVERY_KIND, ids=[c[0] for c in EVERY_KIND])
def test_except_input_error_catches_every_bad_input(
    case: str, call: Callable[[Path], Any], kind: type[Exception], where: str, tmp_path: Path
) -> None:
    try:
        call(tmp_path)
    except ckptcalc.InputError as error:
        assert type(error) is kind, case
        assert where in str(error.where)
    else:  # pragma: no cover - a bad input that went through is the failure this test is for
        pytest.fail(f"{case}: no error")


def test_a_renamed_error_keeps_its_kind() -> None:
    # An error the model raises about a field is renamed to the preset key it came from, its class kept.
    from ckptcalc.inputs.scenario import resolve

    one = resolve(ckptcalc.load_preset("llama3-405b"))

    def unit_trouble() -> None:
        raise ckptcalc.UnitError("no unit", where="bandwidth")

    with pytest.raises(ckptcalc.UnitError) as info:
        api._as_stated(one, unit_trouble)
    assert info.value.where == one.scenario.where("bandwidth") == "llama3-405b.toml: storage.bandwidth"


#: Every function the README and docs/api.md call as ckptcalc.NAME(...), and the helpers docs/api.md names.
NAMED = {"analyze", "check", "compare", "events", "fit", "fitted_preset", "load_preset", "measured_preset",
         "optimize", "plan", "report", "save_preset", "simulate", "sweep"}  # fmt: skip


def test_every_named_function_is_exported() -> None:
    root = Path(__file__).resolve().parent.parent
    text = "".join((root / name).read_text(encoding="utf-8") for name in ("README.md", "docs/api.md"))
    called = set(re.findall(r"ckptcalc\.(?:api\.)?([a-z][a-z_]*)\(", text))
    called |= set(re.findall(r"`ckptcalc\.([a-z][a-z_]*)`", text))
    assert called - {"api"} <= NAMED
    errors_named = {"CkptError", "InputError", "UnitError", "PresetError"}
    assert set(ckptcalc.__all__) == NAMED | errors_named | {"__version__"}
    for name in NAMED:
        assert getattr(ckptcalc, name) is getattr(api, name)
        assert callable(getattr(ckptcalc, name))


def test_dir_lists_the_api_without_loading_it() -> None:
    code = (
        "import sys, ckptcalc\n"
        "names = dir(ckptcalc)\n"
        "print('ckptcalc.api' in sys.modules, 'numpy' in sys.modules)\n"
        "print(' '.join(names))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "False False"
    names = out[1].split()
    assert set(ckptcalc.__all__) <= set(names)
    assert "api" in names and "TYPE_CHECKING" not in names and names == sorted(names)
    assert ckptcalc.api is api


@pytest.fixture(scope="module")
def shown() -> dict[str, Any]:
    """One small result of every command, computed once for the display tests."""
    return {
        "optimize": ckptcalc.optimize("llama3-405b"),
        "sweep": ckptcalc.sweep("llama3-405b", points=5),
        "compare": ckptcalc.compare(["llama3-405b", "gemini-inmemory"]),
        "check": ckptcalc.check(["llama3-405b", "rsc1-131k"], min_effective=0.9),
        "simulate": ckptcalc.simulate(cycles=4000, seed=3),
        "plan": ckptcalc.plan(work="30d", runs=20, seed=1),
        "fit": ckptcalc.fit(failures=419, window="54d"),
        "analyze": ckptcalc.analyze("tests/data/hand-run.jsonl", time_unit="min"),
    }


#: What each repr must hold. llama3-405b: 92.50 % at 266.8 s = 4.45 min, restart dominating (docs/model.md §3.1,
#: test_results_are_frozen_and_copies); gemini-inmemory 96.44 %; rsc1-131k fails a 90 % floor (65.5 %);
#: 419 interruptions in 54 d: MTBF 54 × 24 / 419 = 3.093 h (the fit doctest).
REPRS = {
    "optimize": "<Optimization llama3-405b: interval 4.45 min, effective 92.50 %, restart dominates>",
    "sweep": "<SweepResult llama3-405b: interval over 5 points, 26.7 s to 44.5 min, base optimum 4.45 min, effective",
    "compare": "<Comparison 2 scenarios: llama3-405b 92.50 %, gemini-inmemory 96.44 %>",
    "check": "<Check 1 of 2 failed: floor 90.00 %, rsc1-131k>",
    "simulate": "<Simulation llama3-405b: effective 9",
    "plan": "<RunPlan llama3-405b: work 30.0 d, p50 32.",
    "fit": "<FailureLog counts: MTBF 3.09 h (95 % CI ",
    "analyze": "<RunAnalysis tests/data/hand-run.jsonl: effective 44.17 % realised",
}


@pytest.mark.parametrize("command", sorted(REPRS))
def test_repr_is_one_short_line_of_headline_figures(command: str, shown: dict[str, Any]) -> None:
    text = repr(shown[command])
    assert text.startswith(REPRS[command])
    assert text.endswith(">") and "\n" not in text
    assert len(text) <= 160
    markdown = shown[command]._repr_markdown_()
    assert markdown.startswith(f"**{type(shown[command]).__name__}: ") and "\n|---|---|\n" in markdown
    page = shown[command]._repr_html_()
    assert page.startswith('<table class="ckptcalc"><caption>') and page.endswith("</table>")
    assert "<script" not in page


def test_the_tables_carry_the_headline_figures(shown: dict[str, Any]) -> None:
    rows = shown["optimize"]._repr_markdown_().splitlines()
    assert "| optimal interval | 4.45 min |" in rows and "| effective | 92.50 % |" in rows
    assert '<tr><th style="text-align:left">effective</th><td>92.50 %</td></tr>' in shown["optimize"]._repr_html_()
    assert "| rsc1-131k | FAIL at 65.52 % (point) |" in shown["check"]._repr_markdown_().splitlines()


HOSTILE = '<script>alert("x")</script> | a`b`\nnext & more'


def test_display_escapes_what_it_shows(shown: dict[str, Any]) -> None:
    document = shown["optimize"].to_dict()
    document["preset"] = HOSTILE
    hostile = api.Optimization(document, None)
    page = hostile._repr_html_()
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "next &amp; more" in page
    title = hostile._repr_markdown_().splitlines()[0]
    assert title == '**Optimization: &lt;script&gt;alert("x")&lt;/script&gt; \\| a\\`b\\` next &amp; more**'
    text = repr(hostile)
    assert "\n" not in text and text.startswith('<Optimization <script>alert("x")</script> | a`b`\\nnext & more: ')


def test_a_long_repr_is_cut() -> None:
    names = [f"scenario-number-{i}-with-a-long-name" for i in range(12)]
    document = {"command": "compare", "scenarios": [
        {"name": n, "effective": 0.9, "interval_s": 60.0, "dominant": "write"} for n in names]}  # fmt: skip
    text = repr(api.Comparison(document, None))
    assert len(text) == 160 and text.endswith("…>")
    assert len(api.Comparison(document, None)._repr_markdown_().splitlines()) == 2 + 2 + 12  # every row kept


def test_the_typed_inputs_are_the_fields() -> None:
    from typing import get_type_hints

    from ckptcalc.inputs.fields import FIELDS
    from ckptcalc.inputs.keywords import ModelInputs, PlanInputs

    public = [field.public for field in FIELDS]
    assert len(public) == len(set(public)) == len(ModelInputs.__annotations__)
    assert set(ModelInputs.__annotations__) == set(public) and ModelInputs.__required_keys__ == frozenset()
    assert set(PlanInputs.__annotations__) == set(public) - {"work"}  # plan takes work by name
    assert set(get_type_hints(ModelInputs).values()) == {str | float}


@pytest.mark.parametrize("name", ["optimize", "sweep", "simulate", "plan"])
def test_help_lists_every_input_with_its_unit(name: str) -> None:
    import pydoc

    from ckptcalc.inputs.fields import FIELDS

    text = re.sub(".\b", "", pydoc.render_doc(getattr(ckptcalc, name)))  # without the overstruck bold
    for field in FIELDS:
        assert f"{field.public} : " in text and f"Preset key: {field.path}." in text
    # Units as the fields give them: storage bandwidth in bytes per second, the restart in seconds.
    assert 'bw : bytes/s (or "2TB/s", "100Gbps")' in text
    assert 'restart : s (or "10min", "3.1h")' in text
    assert 'replica_survival : share from 0 to 1 (or "95%")' in text
    # The help names the keywords, not the flags.
    assert "Failures observed in window (M = window / failures)." in text and "--window" not in text


def test_the_inputs_section_comes_before_the_examples() -> None:
    doc = ckptcalc.optimize.__doc__
    assert doc is not None
    # test_doctests runs the examples after it.
    assert doc.index("The optimal checkpoint interval") < doc.index("    Inputs\n    ------\n") < doc.index(">>>")


def test_the_readme_python_example_runs() -> None:
    # README.md's example catches ckptcalc.InputError around a UnitError: it must run as written.
    readme = Path(__file__).resolve().parent.parent / "README.md"
    failures, tried = doctest.testfile(str(readme), module_relative=False)
    assert tried == 3 and failures == 0
