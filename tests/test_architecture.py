"""The module map of docs/architecture.md: every import points down, and the command line holds no model.

Reads each module's imports (including those inside functions) without importing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ckptcalc"

#: docs/architecture.md's bands, lowest first: a module may import from its own band's
#: earlier entries and from lower bands, never from a higher one.
BANDS: list[list[str]] = [
    ["records", "errors", "units", "numeric"],  # foundations
    ["exact", "nested", "renewal", "model"],  # the pure model
    ["scenario", "decide", "robust", "files", "eventlog"],  # inputs, decisions, uncertainty, files in and out
    ["sweeps", "montecarlo", "runs", "presets", "wording", "failures", "timeline"],  # grids, simulation, logs
    ["documents", "schema"],  # documents
    ["api"],  # orchestration
    ["tables", "plot"],  # terminal and pictures
    ["cli"],  # the command line
    ["__main__"],
]
RANK = {name: (band, position) for band, names in enumerate(BANDS) for position, name in enumerate(names)}


def imports(module: str) -> set[str]:
    """The ckptcalc modules ``module`` imports, at any depth of its code."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names if (PACKAGE / f"{alias.name}.py").exists())
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ckptcalc."):
            found.add((node.module or "").split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("ckptcalc."))
    return found - {"__init__"}


def test_every_module_has_a_place_on_the_map() -> None:
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert modules == set(RANK)


@pytest.mark.parametrize("module", sorted(RANK))
def test_imports_point_down(module: str) -> None:
    here = RANK[module]
    upward = sorted(name for name in imports(module) if name in RANK and RANK[name] >= here)
    assert upward == [], f"{module} imports {upward}, which sit at or above it on the map"


def test_the_package_itself_loads_only_errors_at_import() -> None:
    # ckptcalc/__init__.py imports errors eagerly and the API only when a function is first used.
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 1}
    assert top == {"errors"}


def test_only_tables_and_the_command_line_import_typer_or_rich() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        absolute = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
        names |= {(n.module or "").split(".")[0] for n in absolute}
        if path.stem != "cli":
            assert "typer" not in names, path.stem
        if path.stem not in ("cli", "tables"):
            assert "rich" not in names, path.stem


def test_the_command_line_holds_no_model_logic() -> None:
    # cli.py parses, calls the API and hands the result to the output modules (documents, tables, plot).
    assert imports("cli") & {"model", "exact", "decide", "sweeps", "montecarlo", "presets"} == set()
