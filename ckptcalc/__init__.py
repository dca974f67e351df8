"""ckptcalc: how often a training job should checkpoint, and what failures cost it.

The Python API (see :mod:`ckptcalc.api`): :func:`optimize`, :func:`sweep`,
:func:`compare`, :func:`simulate`, :func:`plan`, :func:`check`, :func:`fit` and :func:`load_preset`
take a preset (name, path or loaded) and inputs as plain SI numbers or
strings with units, and return frozen results whose ``to_dict()`` is the
command line's ``--json`` document. Bad input raises :class:`InputError`, a
:class:`ValueError` naming the input.

>>> import ckptcalc
>>> round(ckptcalc.optimize(preset="llama3-405b", restart="2min").effective, 4)
0.9657
"""

from typing import TYPE_CHECKING, Any

from .errors import CkptError, InputError, PresetError, UnitError

if TYPE_CHECKING:  # what __getattr__ below loads on first use, as type checkers should see it
    from .api import analyze, check, compare, fit, load_preset, optimize, plan, report, simulate, sweep

__version__ = "0.1.0"

__all__ = [
    "CkptError",
    "InputError",
    "PresetError",
    "UnitError",
    "__version__",
    "analyze",
    "check",
    "compare",
    "fit",
    "load_preset",
    "optimize",
    "plan",
    "report",
    "simulate",
    "sweep",
]

_API = frozenset({"analyze", "check", "compare", "fit", "load_preset", "optimize", "plan", "simulate", "sweep"})
_API |= {"report"}


def __getattr__(name: str) -> Any:
    # The API loads on first use, so that the command line's start-up does not pay for it twice.
    if name in _API:
        from ckptcalc import api

        return getattr(api, name)
    raise AttributeError(f"module 'ckptcalc' has no attribute {name!r}")
