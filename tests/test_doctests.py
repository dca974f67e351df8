"""Every example in the package's docstrings runs and gives what it shows.

Walks every module of ``ckptcalc`` (not only those the API's tests name), so that an example written
beside a formula (docs/model.md's references, worked again in a docstring) cannot go stale unnoticed.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import ckptcalc

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(ckptcalc.__path__, "ckptcalc.") if not info.name.endswith("__main__")
)
PACKAGE = Path(ckptcalc.__file__).parent


def _has_examples(name: str) -> bool:
    parts = name.split(".")[1:]
    path = PACKAGE.joinpath(*parts).with_suffix(".py")
    if not path.exists():
        path = PACKAGE.joinpath(*parts, "__init__.py")
    return ">>> " in path.read_text(encoding="utf-8")


#: Modules with examples; ckptcalc.api's run in tests/test_api.py.
EXAMPLES = [name for name in MODULES if name != "ckptcalc.api" and _has_examples(name)]


def test_the_walk_finds_the_model() -> None:
    assert {"ckptcalc.mechanisms.silent.model", "ckptcalc.model.storage", "ckptcalc.model.weibull"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_examples(name: str) -> None:
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert tried > 0
    assert failures == 0
