"""ckptcalc: how often a training job should checkpoint, and what failures cost it.

The Python API (see :mod:`ckptcalc.api`): :func:`optimize`, :func:`sweep`,
:func:`compare`, :func:`simulate`, :func:`plan`, :func:`check`, :func:`fit`,
:func:`analyze` and :func:`events` take a preset (name, path or loaded with
:func:`load_preset`) and inputs as plain SI numbers or strings with units, and
return frozen results whose ``to_dict()`` is the command line's ``--json``
document; :func:`save_preset` writes a scenario as a preset, and
:func:`fitted_preset` and :func:`measured_preset` build one from a fit or an
analysis. Every bad input raises :class:`InputError` (a :class:`ValueError`
naming the input), or one of its kinds :class:`UnitError` and
:class:`PresetError`; all derive from :class:`CkptError`.

>>> import ckptcalc
>>> round(ckptcalc.optimize(preset="llama3-405b", restart="2min").effective, 4)
0.9657
>>> try:
...     ckptcalc.optimize(bw="2")
... except ckptcalc.InputError as error:
...     print(type(error).__name__, error.where)
UnitError bw
"""

from typing import TYPE_CHECKING, Any

from .errors import CkptError, InputError, PresetError, UnitError

if TYPE_CHECKING:  # what __getattr__ below loads on first use, as type checkers should see it
    from . import api as api
    from .api import (
        analyze,
        check,
        compare,
        events,
        fit,
        fitted_preset,
        load_preset,
        measured_preset,
        optimize,
        plan,
        report,
        save_preset,
        simulate,
        sweep,
    )

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
    "events",
    "fit",
    "fitted_preset",
    "load_preset",
    "measured_preset",
    "optimize",
    "plan",
    "report",
    "save_preset",
    "simulate",
    "sweep",
]

_API = frozenset(name for name in __all__ if name[0].islower() and not name.startswith("_"))


def __getattr__(name: str) -> Any:
    # The API loads on first use, so that the command line's start-up does not pay for it twice.
    if name in _API or name == "api":
        import importlib

        api = importlib.import_module("ckptcalc.api")  # not ``from ckptcalc import api``: that asks here again
        return api if name == "api" else getattr(api, name)
    if name == "examples":  # the example data the docs' notebook reads
        import importlib

        return importlib.import_module("ckptcalc.examples")
    raise AttributeError(f"module 'ckptcalc' has no attribute {name!r}")


def __dir__() -> list[str]:
    # The API's functions are listed before they are loaded (tab completion in a notebook), without loading them.
    return sorted({*__all__, "api", "examples", *(name for name in globals() if name.startswith("__"))})
