"""Small example data shipped inside the package, so that the docs' notebook runs from an installed wheel.

``trace-54d.json`` is an incident log of 54 days of interruptions (times in days, planned ones marked), as
:func:`ckptcalc.fit` reads it.

>>> import ckptcalc
>>> ckptcalc.examples.path("trace-54d.json").name
'trace-54d.json'
>>> ckptcalc.examples.names()
['trace-54d.json']
"""

from __future__ import annotations

from pathlib import Path

_HERE = Path(__file__).resolve().parent


def names() -> list[str]:
    """The example files shipped, by name."""
    return sorted(p.name for p in _HERE.iterdir() if p.is_file() and p.suffix != ".py")


def path(name: str) -> Path:
    """The path of the example file ``name`` (one of :func:`names`)."""
    from ckptcalc.errors import InputError

    if name not in names():
        raise InputError(f"no example {name!r}; the examples are {', '.join(names())}", where="name")
    return _HERE / name
