"""Sweeps over the inputs the model's configuration does not hold as they are stated.

A restart part, a per-GPU MTBF, the failures seen in a window or a silent event's latency reach the
configuration only once :func:`ckptcalc.inputs.scenario.resolve` has combined them with the rest, so a
sweep over one of them cannot set a single array. Instead each point is merged and resolved as
``--what-if`` would be, and the configurations are stacked field by field into one whose differing
fields are arrays: the model still evaluates the whole grid in one numpy pass.
"""

from __future__ import annotations

from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.inputs.fields import Field
from ckptcalc.inputs.scenario import Job, merge, resolve
from ckptcalc.model.evaluation import Config
from ckptcalc.records import Record

_PARTNERS = {"window_s": "failures", "failures": "window_s"}

#: The most points resolved one by one (each a whole resolution of the job, about a millisecond).
MAX_POINTS = 10_000


def stated(job: Job, spec: Field) -> float | None:
    """The job's value of ``spec`` as an aggregate (a per-GPU rate times the GPU count)."""
    value = getattr(job.scenario, spec.name)
    if value is None:
        return None
    if spec.name in job.scenario.per_gpu and job.gpus is not None:
        return float(value) * float(job.gpus)
    return float(value)


def config(job: Job, spec: Field, values: Any) -> Config:
    """The job resolved at each of ``values`` of ``spec``, stacked; intervals re-optimised at every point
    (a swept memory interval stays pinned, as ``--what-if memory_interval=`` leaves it)."""
    import numpy

    points = len(values)
    if points > MAX_POINTS:
        raise InputError(
            f"at most {MAX_POINTS} points when sweeping {spec.flag} (each is resolved on its own), got {points}",
            where="points",
        )
    # A window and the failures counted in it state the MTBF together: sweeping one keeps the other.
    partner = _PARTNERS.get(spec.name)
    other = None if partner is None else getattr(job.scenario, partner)
    kept = {} if partner is None or other is None else {partner: other}
    found = []
    for value in numpy.asarray(values, dtype=float).tolist():
        changed = merge(job.scenario, {**kept, spec.name: value}, origin={spec.name: "over"})
        resolved = resolve(changed).config
        free = resolved.optimal()
        if spec.name == "memory_interval_s":
            free = free.replace(memory_interval_s=resolved.memory_interval_s)
        found.append(free)
    stacked = _stack(found, spec)
    assert isinstance(stacked, Config)
    # An input the configuration does not depend on (a cost, a warning threshold) still sweeps
    # ``points`` rows: one field as an array gives every result its length.
    return stacked.replace(checkpoint_bytes=numpy.broadcast_to(stacked.checkpoint_bytes, (points,)).astype(float))


def _stack(items: list[Any], spec: Field) -> Any:
    """One value for ``items`` (one per point): the value itself where all are equal, an array of
    numbers, a record or tuple stacked member by member."""
    import numpy

    first = items[0]
    if all(item is first or _equal(item, first) for item in items):
        return first
    if isinstance(first, Record) and all(type(item) is type(first) for item in items):
        return first.replace(**{name: _stack([getattr(item, name) for item in items], spec) for name in first._fields})
    if isinstance(first, tuple) and all(isinstance(item, tuple) and len(item) == len(first) for item in items):
        return tuple(_stack([item[i] for item in items], spec) for i in range(len(first)))
    if all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in items):
        return numpy.asarray(items, dtype=float)
    raise InputError(
        f"cannot sweep {spec.flag} over this range: the configuration changes form within it"
        " (a level or a failure law appears or goes); sweep a narrower range",
        where="over",
    )


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays compare element-wise
        return False
