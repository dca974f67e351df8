"""docs/notebook.ipynb runs from top to bottom in a real kernel and shows what the API computes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
NOTEBOOK = DOCS / "notebook.ipynb"

# In CI a missing nbclient is a failure, not a skip: the notebook must run there.
if os.environ.get("CI"):
    import nbclient
    import nbformat
else:
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")


def _read() -> Any:
    return nbformat.reads(NOTEBOOK.read_text(encoding="utf-8"), as_version=4)  # type: ignore[no-untyped-call]


def test_the_committed_notebook_has_no_outputs() -> None:
    # Outputs are stripped, so that the file changes only when the notebook does.
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    assert code and all(cell["outputs"] == [] and cell["execution_count"] is None for cell in code)
    nbformat.validate(_read())


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The notebook executed once, its code cells by id: in a directory of its own, as a reader of an
    installed wheel opens it (nothing of the repository's tests/ or docs/ within reach)."""
    notebook = _read()
    alone = tmp_path_factory.mktemp("notebook")
    patch = pytest.MonkeyPatch()
    # The kernel is this interpreter (the "python3" kernel runs the first python on PATH), drawing with Agg.
    patch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    patch.setenv("MPLBACKEND", "Agg")
    try:
        client = nbclient.NotebookClient(
            notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(alone)}}
        )
        client.execute()
    finally:
        patch.undo()
    cells = {cell["id"]: cell for cell in notebook.cells if cell["cell_type"] == "code"}
    return {"cells": cells}


def _text(cell: Any, kind: str = "text/plain") -> str:
    """Everything a cell printed and showed as ``kind`` (its stream output counts as text/plain)."""
    parts = []
    for output in cell["outputs"]:
        assert output["output_type"] != "error", output
        if output["output_type"] == "stream" and kind == "text/plain":
            parts.append(output["text"])
        elif output["output_type"] in ("execute_result", "display_data"):
            parts.append(output["data"].get(kind, ""))
    return "".join(parts)


def test_every_cell_runs_without_error_or_warning(ran: dict[str, Any]) -> None:
    for cell_id, cell in ran["cells"].items():
        assert cell["outputs"], cell_id
        assert not [o for o in cell["outputs"] if o["output_type"] == "stream" and o["name"] == "stderr"], cell_id
        _text(cell)


def test_the_optimize_cell_shows_the_optimum(ran: dict[str, Any]) -> None:
    # Llama 3 405B: 92.50 % effective at 266.8 s = 4.45 min, the restart dominating (docs/model.md §3.1).
    cell = ran["cells"]["optimize"]
    assert "<Optimization llama3-405b: interval 4.45 min, effective 92.50 %, restart dominates>" in _text(cell)
    assert '<th style="text-align:left">effective</th><td>92.50 %</td>' in _text(cell, "text/html")
    assert "0.9250 effective, every 266.8 s" in _text(ran["cells"]["optimize-figures"])


def test_the_other_cells_show_their_results(ran: dict[str, Any]) -> None:
    cells = ran["cells"]
    assert "<SweepResult llama3-405b: interval over 41 points, 30.0 s to 1.00 h" in _text(cells["sweep"])
    assert "'interval_s': " in _text(cells["sweep"])  # to_rows(): a point as a plain dict
    # The 70B job is labelled as given, says what it assumed, and the first-hour question: elastic groups at
    # 0.5 % overhead gain 1.15 pp (98.71 % against 97.56 %), 2 spares with a 4 h repair cost (README).
    compared = _text(cells["compare"])
    assert "<Optimization params=70.0B bw=400GB/s gpus=4096: interval 8.30 min, effective 97.56 %" in compared
    assert "restart 10.0 min (default, llama3-405b preset)" in compared
    page = _text(cells["compare"], "text/html")
    assert '<th style="text-align:left">elastic</th><td>98.71 %' in page
    assert '<th style="text-align:left">spares</th>' in page
    # The fit doctest in ckptcalc/api.py: 3.36 h, 95 % interval 3.04 h to 3.73 h, k = 0.774.
    assert "MTBF 3.36 h (95 % CI 3.04 h to 3.73 h)" in _text(cells["fit"])
    assert "<RunPlan llama3-405b: work 30.0 d, p50 32.4 d" in _text(cells["plan"])
    assert _text(cells["errors"]).splitlines() == ["UnitError bw", "InputError restart", "PresetError preset"]


def test_a_sweep_and_a_fit_draw_themselves_as_images(ran: dict[str, Any]) -> None:
    """Headless, a result with a curve shows as a picture, not as ``<Figure size 600x350 ...>``."""
    for name in ("sweep", "fit"):
        shown = [o for o in ran["cells"][name]["outputs"] if o["output_type"] == "execute_result"]
        assert shown and "image/png" in shown[-1]["data"] and "image/svg+xml" in shown[-1]["data"], name
        assert shown[-1]["data"]["image/png"], name
        assert "<Figure" not in _text(ran["cells"][name])


def test_the_notebook_reads_only_what_the_package_ships() -> None:
    text = NOTEBOOK.read_text(encoding="utf-8")
    assert "../" not in text and "tests/data" not in text
    assert "ckptcalc.examples.path(" in text
