"""The contract battery: every registered mechanism through the same checks (docs/architecture.md).

As scipy runs every distribution of its list through one test module, this module runs every
mechanism of :data:`ckptcalc.mechanisms.registry.REGISTRY` from what its home declares (its inputs,
an example of it at work, its inputs' limits, the figures a table shows): adding a mechanism to the
registry adds it here, with no edit to this file. The checks:

* its rows are in FIELDS where it says, and its keys named by its home, the registry's list and the
  API's keyword types alone;
* its inputs at their limits give the baseline, the job without it (compression 1 through a free
  codec, a slowdown of 0), and its example moves the result; in pairs, one at its limit leaves the
  other alone;
* arrays give what floats give, and a sweep's grid what the scalar path gives at each point;
* its JSON parts are in the published schema (every ``--json`` of these tests is validated too);
* a preset saved from its example reads back to the same numbers;
* the table and Markdown show the JSON's figures: its declared cells, and its levers' gains.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy
import pytest

from ckptcalc import api
from ckptcalc.commands import catalogue
from ckptcalc.inputs.fields import BY_NAME, FIELDS, parse_value
from ckptcalc.mechanisms import registry
from ckptcalc.mechanisms.base import KINDS, Mechanism
from ckptcalc.model.evaluation import evaluate
from ckptcalc.output import schema, wording

Run = Callable[..., Any]
RunJson = Callable[..., dict[str, Any]]

MECHANISMS = registry.REGISTRY
IDS = [m.name for m in MECHANISMS]
PACKAGE = Path(__file__).resolve().parent.parent / "ckptcalc"

#: Files outside a home that may name a mechanism's input: the registry's list (it imports the home by
#: name) and the API's keyword types.
STILL_NAMED = {"inputs/keywords.py", "mechanisms/registry.py"}


def own(m: Mechanism) -> set[str]:
    return {row.name for row in m.inputs}


def flags(pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> list[str]:
    """Command-line flags for (field name, value) pairs; an empty value leaves the input unstated."""
    found: list[str] = []
    for name, value in pairs:
        if value:
            found += [f"--{BY_NAME[name].flag}", value]
    return found


def keywords(pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> dict[str, str]:
    return {BY_NAME[name].public: value for name, value in pairs if value}


def needs(m: Mechanism) -> list[tuple[str, str]]:
    """What the example states beside the mechanism's own inputs (what it needs to work)."""
    return [(name, value) for name, value in m.example if name not in own(m)]


def at_limit(m: Mechanism) -> list[tuple[str, str]]:
    return [*needs(m), *m.limit]


def without_own(document: dict[str, Any], m: Mechanism) -> dict[str, Any]:
    """A document without its echoed inputs and the mechanism's own levers (offered only without it)."""
    kept = {k: v for k, v in document.items() if k != "inputs"}
    kept["levers"] = [lever for lever in document["levers"] if lever["key"] not in m.levers]
    return kept


# ------------------------------------------------------------------ the declaration


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_its_rows_are_in_fields_at_their_anchors(m: Mechanism) -> None:
    assert m.kind in KINDS and m.name
    order = [f.name for f in FIELDS]
    for row in m.inputs:
        field = BY_NAME[row.name]
        assert (field.kind, field.flag, field.section, field.key, field.help) == (
            row.kind,
            row.flag,
            row.section,
            row.key,
            row.help,
        )
        if row.before:
            assert order.index(row.name) < order.index(row.before)
        if row.after:
            assert order.index(row.name) > order.index(row.after)
        assert row.before or row.after
    assert len(order) == len(set(order))
    # The example (or its alternative, where inputs exclude each other) states each input, and the limit
    # says where each has no effect.
    assert own(m) <= {name for name, _ in (*m.example, *m.alternative)}
    assert {name for name, _ in m.limit} == own(m)


def home_of(m: Mechanism) -> Path:
    """A mechanism's home below the package: its module, or the folder of a home that is one
    (``mechanisms/elastic/`` with its ``model.py`` and ``home.py``)."""
    parts = type(m).__module__.split(".")[1:]
    return Path(*parts[:2]) if len(parts) > 2 else Path(*parts).with_suffix(".py")


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstrings' nodes in a module: prose, where a key's word is no naming of the key."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


@dataclasses.dataclass(frozen=True)
class Code:
    """What a module's code says: the identifiers it uses (names, attributes, parameters and keywords) and
    its strings but the docstrings, which are prose."""

    identifiers: frozenset[str]
    strings: frozenset[str]


def code_of(tree: ast.AST) -> Code:
    prose = _docstrings(tree)
    identifiers: set[str] = set()
    strings: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            identifiers.add(node.id)
        elif isinstance(node, ast.Attribute):
            identifiers.add(node.attr)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg is not None:
            identifiers.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            strings.add(node.value)
    return Code(frozenset(identifiers), frozenset(strings))


def names_key(code: Code, key: str) -> bool:
    """Whether a module's code names ``key``: as a name, an attribute, a parameter or a keyword, or in a string
    as itself, its flag (``--key``), a table's key (``["key"]``) or a setting (``key=``). Comments and
    docstrings are prose: ``elastic groups`` in a sentence names no key.
    """
    in_text = re.compile(rf"^-*{key}$|--{key}\b|[\[\"']{key}[\]\"']|\b{key}=")
    return key in code.identifiers or any(in_text.search(text) is not None for text in code.strings)


@functools.cache
def _package_code() -> tuple[tuple[Path, Code], ...]:
    """Each module of the package (below it) and what its code says, read once for the keys of every
    mechanism."""
    paths = PACKAGE.rglob("*.py")
    return tuple((path.relative_to(PACKAGE), code_of(ast.parse(path.read_text(encoding="utf-8")))) for path in paths)


@pytest.mark.parametrize(
    ("code", "named"),
    [
        ("'''Replica groups.'''\nx = 1  # groups", False),
        ("def f():\n    '''Two groups.'''", False),
        ("f(groups=2)", True),
        ("def f(groups): pass", True),
        ("x.groups", True),
        ("groups = 1", True),
        ("print('--groups 4')", True),
        ("d['groups']", True),
        ("print('a run of groups=8')", True),
        ("print('the groups are down')", False),
    ],
)
def test_a_key_is_named_by_code_not_prose(code: str, named: bool) -> None:
    assert names_key(code_of(ast.parse(code)), "groups") is named


@pytest.mark.parametrize(
    "m",
    MECHANISMS,
    ids=IDS,
)
def test_its_keys_are_named_in_its_home_and_no_more(m: Mechanism) -> None:
    home = home_of(m)
    for name in own(m):
        naming = {path for path, code in _package_code() if names_key(code, name)}
        outside = {str(path) for path in naming if path != home and home not in path.parents}
        assert outside != {str(path) for path in naming}, name  # its home names it
        assert outside <= STILL_NAMED, (name, sorted(outside - STILL_NAMED))


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_its_json_parts_are_in_the_published_schema(m: Mechanism) -> None:
    job = api.job(**keywords(m.example))
    inputs: dict[str, Any] = schema.INPUTS["properties"]  # type: ignore[assignment]
    tier: dict[str, Any] = schema.TIER["properties"]  # type: ignore[assignment]
    assert set(m.echo(job.config)) <= set(inputs) and set(m.input_schema()) <= set(inputs)
    assert set(m.tier_echo(None)) == set(m.tier_schema()) <= set(tier)
    lever_keys = json.dumps(catalogue.for_command("optimize"))
    for key in m.levers:
        assert f'"{key}"' in lever_keys


# ------------------------------------------------------------------ the model


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_its_limit_is_the_baseline(m: Mechanism, run_json: RunJson) -> None:
    base = run_json("optimize", *flags(needs(m)))
    limit = run_json("optimize", *flags(at_limit(m)))
    assert without_own(limit, m) == without_own(base, m)
    example = run_json("optimize", *flags(m.example))
    assert example["effective"] != base["effective"]  # the example is not the baseline: the checks bite
    if m.alternative:
        other = run_json("optimize", *flags(m.alternative))
        assert other["effective"] != run_json("optimize", *flags(needs(m)))["effective"]
    # The model's own baseline: the example's configuration without the mechanism.
    job = api.job(**keywords(m.example))
    plain = api.job(**keywords(needs(m)))
    assert float(evaluate(m.without(job.config)).effective) == float(evaluate(plain.config).effective)


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_arrays_give_what_floats_give(m: Mechanism) -> None:
    config = api.job(**keywords(m.example)).config
    for name in sorted(own(m)):
        if getattr(config, name) is None:
            continue  # stated in the alternative only, which resolves into the others (a count seen in a window)
        value = float(getattr(config, name))
        values = [value, value / 2 if BY_NAME[name].kind == "fraction" else value * 2]
        column_of: dict[str, Any] = {name: numpy.array(values)}
        grid = evaluate(config.replace(**column_of))
        for i, one in enumerate(values):
            point_of: dict[str, Any] = {name: one}
            point = evaluate(config.replace(**point_of))
            for figure in ("effective", "optimal_interval_s", "write", "rework", "restart"):
                column = numpy.broadcast_to(numpy.asarray(getattr(grid, figure), dtype=float), (len(values),))
                # Effective time to rounding; where a search runs on the grid (a failure class on several
                # tiers), the optimum is flat and its interval, and so the split, holds to 1e-6.
                rel = 1e-12 if figure == "effective" else 1e-6
                assert float(column[i]) == pytest.approx(float(getattr(point, figure)), rel=rel, abs=1e-15), (
                    name,
                    figure,
                    one,
                )


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_a_sweeps_grid_is_the_scalar_path(m: Mechanism, run_json: RunJson) -> None:
    name, value = next((n, v) for n, v in m.example if n in own(m))
    # From its limit to the example; an input whose limit is to leave it unstated (a bound: no limit)
    # sweeps from the example to twice it.
    twice = repr(2 * parse_value(BY_NAME[name], value)) + ("s" if BY_NAME[name].kind == "duration" else "")
    low, high = (dict(m.limit)[name], value) if dict(m.limit)[name] else (value, twice)
    rest = [(n, v) for n, v in m.example if n != name]
    flag = BY_NAME[name].flag
    found = run_json("sweep", *flags(m.example), "--over", flag, "--from", low, "--to", high, "--points", "3")
    assert len(found["values"]) == 3
    for i, point in enumerate(found["values"]):
        unit = "s" if BY_NAME[name].kind == "duration" else ""
        one = run_json("optimize", *flags(rest), f"--{flag}", repr(point) + unit)
        assert found["effective"][i] == pytest.approx(one["effective"], rel=1e-12)
        # A grid's search may settle elsewhere on a flat optimum (a failure class on several tiers): 1e-6.
        assert found["interval_s"][i] == pytest.approx(one["interval_s"], rel=1e-6)


PAIRS = list(itertools.combinations(MECHANISMS, 2))


def merged(*pairs: tuple[tuple[str, str], ...] | list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(field, value) pairs of several mechanisms' examples, each field once (the later one's value)."""
    found: dict[str, str] = {}
    for items in pairs:
        found.update(dict(items))
    return list(found.items())


#: optimize's documents by their flags, for the pairs: a mechanism whose example needs nothing beside its own
#: inputs leaves the other's example alone, the same job in each of its pairs (silent's, the slowest at about
#: half a second, in four of them). Each is still run and validated once in each worker.
_OPTIMIZED: dict[tuple[str, ...], dict[str, Any]] = {}


def _optimized(run_json: RunJson, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    key = tuple(flags(pairs))
    if key not in _OPTIMIZED:
        _OPTIMIZED[key] = run_json("optimize", *key)
    return _OPTIMIZED[key]


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a.name}+{b.name}" for a, b in PAIRS])
def test_in_pairs_one_at_its_limit_leaves_the_other(a: Mechanism, b: Mechanism, run_json: RunJson) -> None:
    """Two mechanisms at once: each at its limit gives the other alone (its tier costs compose)."""
    both = run_json("optimize", *flags(merged(a.example, b.example)))
    for one, other in ((a, b), (b, a)):
        alone = _optimized(run_json, merged(needs(one), other.example))
        limited = _optimized(run_json, merged(at_limit(one), other.example))
        assert without_own(limited, one) == without_own(alone, one)
        assert both["effective"] != alone["effective"]


# ------------------------------------------------------------------ presets and renderers


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_a_saved_preset_keeps_every_number(m: Mechanism, run: Run, run_json: RunJson, tmp_path: Path) -> None:
    path = tmp_path / "saved.toml"
    first = run_json("optimize", *flags(m.example), "--save-preset", str(path))
    again = run_json("optimize", "--preset", str(path))
    for key in ("effective", "interval_s", "loss", "levels", "storage", "levers"):
        assert again[key] == first[key], key
    # A saved preset, once named, assumes nothing the flags' job took from the default preset.
    echoed = {k: v for k, v in first["inputs"].items() if k not in ("sources", "assumed")}
    assert {k: again["inputs"][k] for k in echoed} == echoed


def _figure(document: dict[str, Any], path: tuple[str, ...]) -> Any:
    found: Any = document
    for key in path:
        found = found[key]
    return found


@pytest.mark.parametrize("m", MECHANISMS, ids=IDS)
def test_the_table_and_markdown_show_the_json(m: Mechanism, run: Run, run_json: RunJson) -> None:
    document = run_json("optimize", *flags(m.example))
    table = run("optimize", *flags(m.example)).stdout
    markdown = run("optimize", *flags(m.example), "--markdown").stdout
    for cell in m.cells:
        shown = wording.pct(float(_figure(document, cell.path)))
        assert re.search(rf"^\s*{re.escape(cell.label)}\s+{re.escape(shown)}", table, re.M), (cell, shown)
    # Its levers: where the job lacks the mechanism (the needs alone), each lever's name and gain.
    plain = run_json("optimize", *flags(needs(m)))
    plain_table = run("optimize", *flags(needs(m))).stdout
    plain_markdown = run("optimize", *flags(needs(m)), "--markdown").stdout
    levers = [lever for lever in plain["levers"] if lever["key"] in m.levers]
    assert len(levers) == len(m.levers)
    for lever in levers:
        gain = f"{lever['gain_pp']:+.2f} pp"
        name = lever["name"] + wording.break_even(lever["break_even"])  # where a lever with a cost pays
        row = f"| {name} | {wording.pct(lever['effective'])} | {gain} |"
        assert row in plain_markdown, row
        assert lever["name"][:30] in plain_table and gain in plain_table
    assert markdown.startswith("## ckptcalc optimize")
