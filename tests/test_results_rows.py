"""Results in a notebook: rows, a DataFrame, plots that draw themselves headless, labels as the user gave
them, and the example data shipped in the package (issue 35, item 4)."""

from __future__ import annotations

import doctest
import sys
import types
from typing import Any

import pytest

import ckptcalc
from ckptcalc import api, examples
from ckptcalc.output import notebook

PNG = b"\x89PNG\r\n\x1a\n"


def test_doctests() -> None:
    for module in (examples, notebook):
        failures, tried = doctest.testmod(module)
        assert tried > 0 and failures == 0, module


def test_a_sweep_gives_one_row_per_point() -> None:
    curve = ckptcalc.sweep("llama3-405b", points=5)
    found = curve.to_rows()
    assert len(found) == 5
    document = curve.to_dict()
    assert [row["interval_s"] for row in found] == document["values"]
    assert [row["effective"] for row in found] == document["effective"]
    assert [row["loss_restart"] for row in found] == document["loss"]["restart"]
    assert all(isinstance(value, (int, float, str, type(None))) for row in found for value in row.values())


def test_compare_and_check_give_one_row_each() -> None:
    compared = ckptcalc.compare(["llama3-405b", "gemini-inmemory"]).to_rows()
    assert [row["name"] for row in compared] == ["llama3-405b", "gemini-inmemory"]
    assert compared[0]["loss.restart"] == ckptcalc.optimize("llama3-405b").loss["restart"]
    checked = ckptcalc.check(["llama3-405b", "rsc1-131k"], min_effective=0.9).to_rows()
    assert [row["passed"] for row in checked] == [True, False]


def test_an_optimum_is_one_row_of_its_figures() -> None:
    (row,) = ckptcalc.optimize("llama3-405b").to_rows()
    # llama3-405b: 92.50 % at 266.8 s (docs/model.md §3.1).
    assert row["effective"] == pytest.approx(0.9250, abs=1e-4)
    assert row["optimal_interval_s"] == pytest.approx(266.76, abs=0.01)
    assert row["inputs.gpus"] == 16384


def test_to_pandas_says_how_to_get_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    with pytest.raises(ckptcalc.InputError, match=r"to_pandas needs pandas: pip install 'ckptcalc\[pandas\]'"):
        ckptcalc.sweep(points=3).to_pandas()


def test_to_pandas_makes_a_frame_of_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    fake = types.ModuleType("pandas")

    def frame(rows: Any) -> str:
        made.append(rows)
        return "frame"

    fake.DataFrame = frame  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pandas", fake)
    curve = ckptcalc.sweep(points=3)
    assert curve.to_pandas() == "frame"
    assert made == [curve.to_rows()]


def test_to_pandas_with_pandas_installed_is_a_frame_of_the_same_rows() -> None:
    import pandas  # the test extra installs it, as the pandas extra does for users

    curve = ckptcalc.sweep(points=5)
    rows = curve.to_rows()
    found = curve.to_pandas()
    assert isinstance(found, pandas.DataFrame)
    assert len(found) == len(rows) == 5
    assert list(found.columns) == list(rows[0])
    assert found["effective"].tolist() == [row["effective"] for row in rows]


def test_plots_are_figures_and_draw_themselves() -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    curve = ckptcalc.sweep(params="70B", gpus=4096, bw="400GB/s", points=9)
    figure = curve.plot()
    assert isinstance(figure, Figure)
    assert figure.axes[0].get_title() == "params=70.0B bw=400GB/s gpus=4096"
    png = curve._repr_png_()
    assert isinstance(png, bytes) and png.startswith(PNG)
    svg = curve._repr_svg_()
    assert isinstance(svg, str) and "<svg" in svg
    log = ckptcalc.fit([examples.path("trace-54d.json")], time_unit="d", where=["planned=false"])
    assert isinstance(log.plot(), Figure)
    drawn = log._repr_png_()
    assert isinstance(drawn, bytes) and drawn.startswith(PNG)
    run = ckptcalc.plan("llama3-405b", work="10d", runs=50, seed=1)
    assert isinstance(run.plot(), Figure)


def test_without_matplotlib_no_image_and_plot_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    curve = ckptcalc.sweep(points=3)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert curve._repr_png_() is None
    with pytest.raises(ckptcalc.InputError, match=r"plot needs matplotlib: pip install 'ckptcalc\[plot\]'"):
        curve.plot()


@pytest.mark.parametrize(
    ("call", "shown"),
    [
        (lambda: ckptcalc.optimize(params="70B"), "<Optimization params=70.0B: "),
        (lambda: ckptcalc.optimize("llama3-405b"), "<Optimization llama3-405b: "),
        (lambda: ckptcalc.optimize("elastic-hsdp", gpus=1024), "<Optimization elastic-hsdp gpus=1024: "),
        (lambda: ckptcalc.plan(work="10d", runs=20, seed=1), "<RunPlan llama3-405b: work 10.0 d"),
    ],
)
def test_labels_follow_what_the_user_gave(call: Any, shown: str) -> None:
    result = call()
    assert repr(result).startswith(shown)


def test_a_custom_job_is_not_labelled_as_the_default_preset() -> None:
    result = ckptcalc.optimize(params="70B", gpus=4096, bw="400GB/s")
    assert result.label == "params=70.0B bw=400GB/s gpus=4096"
    assert "llama3-405b" not in result._repr_html_().split("</caption>")[0]


def test_the_example_log_is_reachable_from_the_package() -> None:
    assert "examples" in dir(ckptcalc)
    assert ckptcalc.examples.names() == ["trace-54d.json"]
    with pytest.raises(ckptcalc.InputError, match=r"no example 'nope\.json'"):
        ckptcalc.examples.path("nope.json")
    # The same 54-day trace the tests read: the fit doctest's 3.36 h.
    log = api.fit([examples.path("trace-54d.json")], time_unit="d", where=["planned=false"])
    assert log.mtbf_s == pytest.approx(3.36 * 3600, rel=2e-3)
