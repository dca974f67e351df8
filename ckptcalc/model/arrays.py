"""Floats or numpy arrays: the one shim every model function goes through.

A model function takes plain floats and numpy arrays alike (arrays
broadcast), so a sweep of a million points runs the same code as a single
``optimize``; numpy is imported only when an array is actually passed.
:func:`lib` picks the namespace: :class:`Scalar` (the few numpy functions
the model uses, written for floats with :mod:`math`) or numpy itself.

>>> lib(1.0, 2).exp(0.0)
1.0
>>> type(lib(1.0, __import__("numpy").ones(2))).__name__
'module'
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import numpy
    import numpy.typing as npt

    #: A float or an array of floats: every model function takes either, and broadcasts.
    Num: TypeAlias = float | npt.NDArray[numpy.float64]
    #: The namespace :func:`lib` returns: numpy, or :class:`Scalar` for plain floats.
    Lib: TypeAlias = Any
else:
    Num = Any
    Lib = Any


def scalar(*values: object) -> bool:
    """Whether every value is a plain number (no array among them)."""
    return all(isinstance(v, (int, float)) for v in values)


class Scalar:
    """The numpy functions the model uses, for plain floats."""

    exp = staticmethod(math.exp)
    expm1 = staticmethod(math.expm1)
    log = staticmethod(math.log)
    log1p = staticmethod(math.log1p)
    floor = staticmethod(math.floor)
    ceil = staticmethod(math.ceil)
    sqrt = staticmethod(math.sqrt)
    isfinite = staticmethod(math.isfinite)

    @staticmethod
    def maximum(a: float, b: float) -> float:
        return a if a >= b else b

    @staticmethod
    def minimum(a: float, b: float) -> float:
        return a if a <= b else b

    @staticmethod
    def where(condition: bool, a: float, b: float) -> float:
        return a if condition else b

    @staticmethod
    def rint(a: float) -> float:
        return float(round(a))

    @staticmethod
    def any(condition: bool) -> bool:
        return bool(condition)

    @staticmethod
    def count(condition: bool) -> int:
        return int(condition)


def lib(*values: object) -> Lib:
    """:class:`Scalar` for plain numbers, numpy as soon as an array is involved."""
    if scalar(*values):
        return Scalar
    import numpy

    return numpy


def any_of(condition: Any) -> bool:
    """Whether a condition (a bool, or a boolean array) holds anywhere."""
    return bool(condition) if isinstance(condition, bool) else bool(condition.any())


def count(condition: Any) -> int:
    """How many points a condition (a bool, or a boolean array) marks."""
    return int(condition) if isinstance(condition, bool) else int(condition.sum())


def largest(values: Num) -> float:
    """The largest value of a float or an array, as a float."""
    return float(values) if scalar(values) else float(values.max())  # type: ignore[union-attr]


def divide(a: Num, b: Num, ns: Lib) -> Num:
    """a / b, infinite where b underflowed to 0 (restarts thousands of MTBFs long)."""
    if ns is Scalar:
        return a / b if b else math.inf
    return a / b


def share(part: Num, whole: Num) -> Num:
    """part / whole, taken as 0 where ``part`` is 0 (a free checkpoint taken continuously)."""
    if scalar(part, whole):
        return part / whole if part else 0.0
    import numpy

    with numpy.errstate(divide="ignore", invalid="ignore"):
        return numpy.where(numpy.asarray(part) == 0, 0.0, part / whole)


def maximum(a: Num, b: Num) -> Num:
    return lib(a, b).maximum(a, b)


def minimum(a: Num, b: Num) -> Num:
    return lib(a, b).minimum(a, b)


class quiet:
    """numpy's floating-point warnings off for a block (overflow to inf is handled by the callers)."""

    def __init__(self, ns: Lib) -> None:
        self.ns = ns
        self.saved: dict[str, str] | None = None

    def __enter__(self) -> None:
        if self.ns is not Scalar:
            self.saved = self.ns.seterr(all="ignore")

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            self.ns.seterr(**self.saved)
