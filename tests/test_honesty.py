"""The suite's own honesty: every property test says how its draws split.

A Hypothesis test whose draws mostly miss its assertions passes without testing anything, and nothing
shows it. So every ``@given`` test records a ``hypothesis.event`` on the way to its assertions (in its
body, or in a module-level helper it calls); ``pytest --hypothesis-show-statistics`` then prints the
share of draws that reached them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def _name(call: ast.expr) -> str:
    if isinstance(call, ast.Call):
        call = call.func
    if isinstance(call, ast.Attribute):
        return call.attr
    return call.id if isinstance(call, ast.Name) else ""


def _records_event(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _name(n) == "event" for n in ast.walk(node))


def _property_tests() -> list[tuple[str, ast.FunctionDef, dict[str, ast.FunctionDef]]]:
    found = []
    for path in sorted(TESTS.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        helpers = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef)
                and node.name.startswith("test_")
                and any(_name(d) == "given" for d in node.decorator_list)
            ):
                found.append((f"{path.name}::{node.name}", node, helpers))
    return found


PROPERTY_TESTS = _property_tests()


def test_the_walk_finds_the_property_tests() -> None:
    assert len(PROPERTY_TESTS) >= 70


@pytest.mark.parametrize(("name", "node", "helpers"), PROPERTY_TESTS, ids=[t[0] for t in PROPERTY_TESTS])
def test_every_property_test_records_an_event(
    name: str, node: ast.FunctionDef, helpers: dict[str, ast.FunctionDef]
) -> None:
    called = {_name(n) for n in ast.walk(node) if isinstance(n, ast.Call)}
    assert _records_event(node) or any(_records_event(helpers[c]) for c in called if c in helpers), (
        f"{name} records no hypothesis.event: say how its draws split"
    )
