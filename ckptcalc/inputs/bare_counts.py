"""Inputs that parse but are almost certainly not what was meant: a bare parameter count or size.

``--params 70`` is seventy parameters and ``--size 140`` a hundred and forty bytes. Both are valid
numbers, so nothing refuses them, but a model that small checkpoints in microseconds and every figure
that follows is nonsense. :func:`suspects` names them so that the documents can warn (and ``--strict``
refuse); the sentences are in :mod:`ckptcalc.output.wording`.
"""

from __future__ import annotations

from typing import Protocol

from ckptcalc.inputs.fields import BY_NAME
from ckptcalc.records import Record

#: Below this many parameters a model is not one a checkpoint interval matters for: 10^6.
FEWEST_PARAMS = 1e6

#: Below this many bytes a checkpoint is not one either: 1 MB.
SMALLEST_SIZE = 1e6


class Suspect(Record):
    """One stated input below its floor: the field, where it was stated, and its value (SI)."""

    name: str  # params or checkpoint_bytes
    where: str  # the input's public name, or ``file: key`` for a preset
    value: float


class _Stated(Protocol):
    @property
    def params(self) -> float | None: ...
    @property
    def checkpoint_bytes(self) -> float | None: ...

    def where(self, name: str) -> str: ...


def suspects(scenario: _Stated) -> tuple[Suspect, ...]:
    """The stated parameter count and checkpoint size that fall below their floors, in that order.

    >>> class S:
    ...     params, checkpoint_bytes = 70.0, None
    ...     def where(self, name): return name
    >>> suspects(S())
    (Suspect(name='params', where='params', value=70.0),)
    """
    found = []
    for name, floor in (("params", FEWEST_PARAMS), ("checkpoint_bytes", SMALLEST_SIZE)):
        value = getattr(scenario, name)
        if value is not None and 0 < value < floor:
            where = scenario.where(name)
            # A what-if's column already says what changed: the input's own name is enough.
            where = BY_NAME[name].public if where.startswith("what_if ") else where
            found.append(Suspect(name, where, float(value)))
    return tuple(found)
