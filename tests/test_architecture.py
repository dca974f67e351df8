"""The module map of docs/architecture.md: every import points down, and the command line holds no model.

Reads each module's imports (including those inside functions) without importing it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ckptcalc"

#: docs/architecture.md's layers, lowest first: a module may import from its own layer's
#: earlier entries and from lower layers, never from a higher one. A layer is a subpackage
#: (its modules in the order they may import each other) or a group of top-level modules.
LAYERS: list[tuple[str, list[str]]] = [
    ("", ["errors", "records", "files"]),  # foundations
    # Each mechanism's home: a module, or a folder (its model part, then its declaration).
    (
        "mechanisms",
        [
            "base",
            "recovery",
            "slowdown",
            "limits",
            "compression",
            "silent.model",
            "silent.stepper",
            "silent.home",
            "spares",
            "elastic.model",
            "elastic.log",
            "elastic.engine",
            "elastic.home",
            "growth",
            "stragglers",
            "registry",
        ],
    ),
    (
        "model",
        [
            "statistics",
            "arrays",
            "numeric",
            "one_level",
            "tiers",
            "recovery",
            "search",
            "weibull",
            "storage",
            "evaluation",
            "band",
            "decisions",
        ],
    ),
    (
        "inputs",
        [
            "arguments",
            "units",
            "fields",
            "keywords",
            "what_ifs",
            "bare_counts",
            "scenario",
            "assumed",
            "resolved_sweep",
            "grid",
            "preset_search",
            "preset_document",
            "inherit",
            "presets",
            "preset_write",
            "dates",
        ],
    ),
    ("simulation", ["interference", "engine", "timeline", "split", "search", "events", "plan"]),
    (
        "logs",
        [
            "adapter",
            "assembly",
            "csv_format",
            "torchelastic_format",
            "patterns",
            "patterns_format",
            "torchtitan_format",
            "megatron_format",
            "absl_format",
            "jsonl_format",
            "json_format",
            "sacct_format",
            "fta_format",
            "reader",
        ],
    ),
    # A home's log part (its events in a log) reads with the reader's helpers: it sits above the reader.
    ("mechanisms", ["silent.log"]),
    (
        "logs",
        [
            "canonical",
            "outages",
            "classes",
            "fit",
            "analyze",
        ],
    ),
    (
        "output",
        ["wording", "markdown", "documents", "schema", "typed", "tables", "plot", "display", "notebook", "report"],
    ),
    # One module per command: its document, table, Markdown and schema, from the output layer's pieces.
    (
        "commands",
        [
            "optimize",
            "sweep",
            "compare",
            "check",
            "simulate",
            "plan",
            "fit",
            "analyze",
            "events",
            "presets",
            "catalogue",
        ],
    ),
    ("", ["api"]),  # orchestration
    ("", ["completion"]),  # shell completion of option values
    ("", ["cli"]),  # the command line
    ("", ["__main__"]),
]
RANK = {
    f"{sub}.{name}" if sub else name: (layer, position)
    for layer, (sub, names) in enumerate(LAYERS)
    for position, name in enumerate(names)
}
SUBPACKAGES = {sub for sub, _ in LAYERS if sub} | {"mechanisms/silent", "mechanisms/elastic"}

#: The model's leaves: modules that import nothing of ckptcalc but each other (the numbers shared by
#: every home, the float-or-array shim, plain-Python numerics), which a mechanism's home may import from
#: below the model's layer.
LEAVES = ("model.statistics", "model.arrays", "model.numeric")


def module_file(module: str) -> Path:
    return PACKAGE / (module.replace(".", "/") + ".py")


def _resolve(module: str, node: ast.ImportFrom) -> list[str]:
    """The ckptcalc modules (dotted below ckptcalc) that one ``from … import …`` names."""
    if node.level:
        here = module.split(".")[:-1]
        base = here[: len(here) - (node.level - 1)]
        target = [*base, *(node.module.split(".") if node.module else [])]
    elif (node.module or "") == "ckptcalc" or (node.module or "").startswith("ckptcalc."):
        target = (node.module or "").split(".")[1:]
    else:
        return []
    dotted = ".".join(target)
    if dotted in RANK:
        return [dotted]
    # ``from ckptcalc.model import exact``: the names are modules of that package.
    found = [f"{dotted}.{a.name}" if dotted else a.name for a in node.names]
    return [name for name in found if name in RANK]


def imports(module: str) -> set[str]:
    """The ckptcalc modules ``module`` imports, at any depth of its code."""
    tree = ast.parse(module_file(module).read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.update(_resolve(module, node))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ckptcalc."):
                    dotted = alias.name.split(".", 1)[1]
                    if dotted in RANK:
                        found.add(dotted)
    return found


def test_every_module_has_a_place_on_the_map() -> None:
    modules = {
        ".".join(p.relative_to(PACKAGE).with_suffix("").parts) for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"
    }
    assert modules == set(RANK)


@pytest.mark.parametrize("module", sorted(RANK))
def test_imports_point_down(module: str) -> None:
    here = RANK[module]
    upward = sorted(name for name in imports(module) if RANK[name] >= here and name not in LEAVES)
    assert upward == [], f"{module} imports {upward}, which sit at or above it on the map"


def test_an_upward_arrow_is_caught() -> None:
    # The reader itself: a model module importing the output layer, relatively and absolutely.
    tree = ast.parse("from ..output import tables\nfrom ckptcalc.inputs.units import parse_duration\n")
    found = {
        name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for name in _resolve("model.tiers", node)
    }
    assert found == {"output.tables", "inputs.units"}
    assert all(RANK[name] > RANK["model.tiers"] for name in found)


@pytest.mark.parametrize("sub", sorted(SUBPACKAGES))
def test_subpackage_inits_import_nothing(sub: str) -> None:
    # Start-up pays only for the modules a command uses: a package's __init__ loads none.
    tree = ast.parse((PACKAGE / sub / "__init__.py").read_text(encoding="utf-8"))
    assert not [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def test_the_package_itself_loads_only_errors_at_import() -> None:
    # ckptcalc/__init__.py imports errors eagerly and the API only when a function is first used.
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    top = {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 1}
    top |= {
        (node.module or "").removeprefix("ckptcalc.")
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ckptcalc.")
    }
    assert top == {"errors"}


def test_only_tables_and_the_command_line_import_typer_or_rich() -> None:
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        absolute = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
        names |= {(n.module or "").split(".")[0] for n in absolute}
        where = ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        if where != "cli":
            assert "typer" not in names, where
        if where not in ("cli", "output.tables") and not where.startswith("commands."):
            assert "rich" not in names, where


def _loads_rich(node: ast.AST) -> bool:
    """An import of Rich, or of ``output.tables`` (which imports Rich)."""
    if not isinstance(node, ast.ImportFrom):
        return False
    if (node.module or "").split(".")[0] == "rich":
        return True
    return node.module == "ckptcalc.output" and any(a.name == "tables" for a in node.names)


def test_a_command_imports_rich_only_inside_its_table_functions() -> None:
    # ``--json`` loads the command's module to build its document: Rich must not come with it.
    for path in (PACKAGE / "commands").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        at_import = [
            top
            for top in tree.body
            if not isinstance(top, ast.FunctionDef)
            and not (isinstance(top, ast.If) and ast.unparse(top.test) == "TYPE_CHECKING")
        ]
        assert not [node for top in at_import for node in ast.walk(top) if _loads_rich(node)], path.name


def test_the_model_knows_nothing_of_inputs_files_or_words() -> None:
    # The model reaches the mechanisms' homes (their effect on it), which reach only the foundations.
    for module in (name for name in RANK if name.startswith("model.")):
        assert not {
            name
            for name in imports(module)
            if not name.startswith(("model.", "mechanisms.")) and name not in ("errors", "records")
        }, module


def test_a_mechanism_home_imports_only_the_foundations_and_other_homes() -> None:
    # The mechanisms' layer; a home's parts placed higher (its log part) import as their layer allows.
    for module in (name for name in RANK if name.startswith("mechanisms.") and RANK[name][0] == 1):
        assert not {
            name
            for name in imports(module)
            if not name.startswith("mechanisms.") and name not in ("errors", "records", *LEAVES)
        }, module


def test_the_leaves_import_nothing_of_the_package_but_each_other() -> None:
    for module in LEAVES:
        assert imports(module) <= set(LEAVES), module


def test_the_command_line_holds_no_model_logic() -> None:
    # cli.py parses, calls the API and hands the result to the output modules.
    assert {name for name in imports("cli") if name.startswith(("model.", "simulation.", "logs."))} == set()
    assert "inputs.presets" not in imports("cli")


#: Operators that work numbers out. ``+`` and ``*`` also join and repeat text and lists, which is layout.
ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
#: Builtins and numpy functions that reduce numbers to a figure.
REDUCING = {"round", "sum", "min", "max", "abs", "pow", "divmod", "mean", "median", "percentile", "quantile",
            "count_nonzero", "average", "std", "var", "cumsum", "prod"}  # fmt: skip


def _text(node: ast.expr) -> bool:
    """A string or list written out (or joined to one): joining or repeating it is layout, not a computation."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _text(node.left) or _text(node.right)
    return isinstance(node, (ast.JoinedStr, ast.List, ast.ListComp)) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def computations(source: str) -> list[str]:
    """Where ``source`` works a figure out: arithmetic on anything but written-out text or lists, an
    ordering comparison (a verdict), or a call that reduces numbers. Each as ``line: code``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.BinOp):
            left, op, right = node.left, node.op, node.right
        elif isinstance(node, ast.AugAssign):
            left, op, right = node.target, node.op, node.value
        else:
            left = op = right = None  # type: ignore[assignment]
        if op is not None and isinstance(op, ARITHMETIC):
            assert left is not None and right is not None
            layout = isinstance(op, (ast.Add, ast.Mult, ast.Mod)) and (_text(left) or _text(right))
            if not layout:
                found.append(node)
        elif isinstance(node, ast.Compare) and any(isinstance(o, ORDERING) for o in node.ops):
            found.append(node)
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in REDUCING:
                found.append(node)
    return sorted(f"{n.lineno}: {ast.unparse(n)}" for n in found)  # type: ignore[attr-defined]


def test_the_documents_compute_nothing() -> None:
    # Every figure a document prints is worked out in the model or the API and handed over: here only
    # dictionaries are filled and text laid out, so a second formula for a number cannot creep in.
    source = (PACKAGE / "output" / "documents.py").read_text(encoding="utf-8")
    assert computations(source) == []


#: Functions of the output layer, the commands and the API whose arithmetic is layout, not a figure of a
#: result: fitting columns, bars and axes to the terminal or the canvas, counting rows left out, joining
#: text or rows that a call returns (which a syntax tree cannot tell from numbers). Each says why.
LAYOUT: dict[str, dict[str, str]] = {
    "commands.analyze": {"_windows": "the windows chart: bar lengths and the rows shown, fitted to the terminal"},
    "commands.compare": {
        "_compare_rows": "column widths fitted to the terminal",
        "_too_wide": "column widths fitted to the terminal",
        "table.line": "column widths fitted to the terminal",
    },
    "commands.fit": {"table": "the gaps histogram: bar lengths fitted to the terminal"},
    "commands.sweep": {"table": "the rows sampled to fit the screen, column widths and the bars' room"},
    "output.display": {"short": "cuts a line to the longest shown"},
    "output.notebook": {
        "completion_figure": "axes in the unit chosen for them",
        "survival_figure": "axes in the unit chosen for them",
        "sweep_figure": "axes in the unit chosen for them",
    },
    "output.plot": {"draw": "axes and their limits", "draw_survival": "axes and their limits"},
    "output.report": {
        "<module>": "the size limit of a report and the templates' folder",
        "_Charts._svg": "numbers the charts drawn",
        "_Charts.completion": "axes in the unit chosen for them",
        "_Charts.loss_curve": "axes in the unit chosen for them, and their limits",
        "_Charts.survival": "axes, their limits and the scale (log when wide)",
        "_survival_limits": "the survival chart's axis limits",
        "_levers": "joins a lever's name and its break-even words",
        "_log_sections": "joins a log's lines and its warnings",
    },
    "output.tables": {
        "bar": "a bar's glyphs fitted to its width",
        "legend": "repeats a glyph",
        "narrow": "whether the terminal has 80 columns",
        "progress.update": "the seconds a progress bar has been shown",
        "mtbf_note": "joins a note and its qualifier",
    },
    "output.wording": {
        "analyze_header": "joins a header and its bad lines' count",
        "check_row": "joins a row's words and each mechanism's",
        "caveat": "says at how many points, where more than one (a plural)",
        "coalescing_row": "joins a window and its mark",
        "events_header": "names the files, or the one file (a plural)",
        "fit_source": "joins a source and its test's words",
        "level_list": "joins level names and the async mark",
        "measured_rows": "joins rows that calls return",
        "report_mechanisms": "joins lines that calls return",
        "sentence": "capitalises and ends a sentence",
        "strict": "how many more warnings (a plural)",
        "split_parts": "joins the parts a document has",
        "ordinal": "the English suffix of an ordinal (1st, 2nd, 11th)",
        "_moment": "an offset from UTC as hours and minutes",
    },
}


#: The modules that lay out what they are given: the output layer, the commands and the API.
SCREENED = sorted(m for m in RANK if m.startswith(("output.", "commands.")) or m == "api")


def computations_by_function(source: str) -> dict[str, list[str]]:
    """:func:`computations` grouped by the function (dotted through classes and nested functions) they
    stand in; ``<module>`` for those at the top level."""
    tree = ast.parse(source)
    spans = [
        (node.lineno, node.end_lineno or node.lineno, node.name)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    found: dict[str, list[str]] = {}
    for item in computations(source):
        line = int(item.split(":", 1)[0])
        inside = sorted(span for span in spans if span[0] <= line <= span[1])
        found.setdefault(".".join(name for _, _, name in inside) or "<module>", []).append(item)
    return found


@pytest.mark.parametrize("module", SCREENED)
def test_the_output_layer_and_the_api_compute_nothing(module: str) -> None:
    # A figure is worked out once, in the model or the simulation, and handed over: the renderers lay it
    # out. What remains is named above, as layout (with why).
    found = computations_by_function(module_file(module).read_text(encoding="utf-8"))
    layout = set(LAYOUT.get(module, {}))
    assert {name: items for name, items in found.items() if name not in layout} == {}
    assert layout - set(found) == set(), f"{module}: listed but computing nothing"


@pytest.mark.parametrize(
    ("code", "caught"),
    [
        ("x = a * (1.0 - d)", True),
        ("x = (v - s) * 100.0", True),
        ("x = {k: v / n for k, v in d.items()}", True),
        ("n += c.points", True),
        ("ok = low <= v <= high", True),
        ("p = numpy.percentile(t, [10, 50])", True),
        ("s = f'{round(t)}'", True),
        ('s = "\\n".join(lines) + "\\n"', False),
        ('lines += ["", "x"]', False),
        ('pad = " " * 4', False),
        ("if k == -1: pass", False),
        ("t: int | None = None", False),
    ],
)
def test_a_computation_is_caught(code: str, caught: bool) -> None:
    assert bool(computations(code)) is caught
