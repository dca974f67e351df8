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
def ran() -> dict[str, Any]:
    """The notebook executed once (in docs/, as a reader opens it), its code cells by id."""
    notebook = _read()
    patch = pytest.MonkeyPatch()
    # The kernel is this interpreter (the "python3" kernel runs the first python on PATH), drawing with Agg.
    patch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    patch.setenv("MPLBACKEND", "Agg")
    try:
        client = nbclient.NotebookClient(
            notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(DOCS)}}
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
    assert "Figure" in _text(cells["sweep"])  # the plot, drawn
    # The first two presets at their optimum, and the restart what-if: 96.57 % (docs/api.md).
    compared = _text(cells["compare"], "text/html")
    assert '<th style="text-align:left">llama3-405b</th><td>92.50 %' in compared
    assert '<th style="text-align:left">restart=2min</th><td>96.57 %' in compared
    # The fit doctest in ckptcalc/api.py: 3.36 h, 95 % interval 3.04 h to 3.73 h, k = 0.774.
    assert "MTBF 3.36 h (95 % CI 3.04 h to 3.73 h)" in _text(cells["fit"])
    assert "<RunPlan llama3-405b: work 30.0 d, p50 32.4 d" in _text(cells["plan"])
    assert _text(cells["errors"]).splitlines() == ["UnitError bw", "InputError restart", "PresetError preset"]
