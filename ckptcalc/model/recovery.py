"""Failure classes in the one recursion (docs/model.md §13, MODEL.md §17–§18).

A registered mechanism (:mod:`ckptcalc.mechanisms`) may give a job failure classes beside its periodic
tiers (:class:`ckptcalc.mechanisms.base.FailureClass`): a share of the failures with its own restart and
landing. Two landings are modelled:

* **in place**: the class loses the work since the last step boundary. That is a tier whose
  interval is one step and whose stall is zero, under the periodic tiers, with the class's share and
  restart: :func:`with_classes` puts it there (just-in-time recovery).
* **nowhere**: the class loses nothing and only restarts: a class of the recursion below every tier,
  ``Tiers.nowhere_share`` (failures with notice).

The periodic tiers serve the rest, 1 − Σ shares, each its own part of it (a replica that survives
a share q of the failures that roll back serves q·(1 − Σ shares) of all of them).

>>> from ckptcalc.mechanisms.base import IN_PLACE, FailureClass
>>> t = Tiers(tau1_s=1.0, every=(), stalls=(3.24,), lag_s=0.0, shares=(0.1,), restarts=(600.0,))
>>> j = with_classes(t, step_s=10.0, in_place=FailureClass("jit", 0.9, 603.24, IN_PLACE), nowhere=None)
>>> j.stalls, j.shares, j.tau1_s
((0.0, 3.24), (0.9, 0.1), 10.0)
"""

from __future__ import annotations

from ckptcalc.errors import InputError
from ckptcalc.mechanisms.base import IN_PLACE, NOWHERE, PERIODIC, FailureClass
from ckptcalc.model.arrays import Num, lib, scalar
from ckptcalc.model.tiers import Tiers


def periodic_share(*shares: Num) -> Num:
    """The share of failures that roll back to a periodic checkpoint: 1 less every class's share, in the
    order given, 0 where they sum to 1 within rounding (0.9 + 0.1 leaves −3e-17).

    >>> periodic_share(0.9, 0.1), periodic_share(0.5, 0.2)
    (0.0, 0.3)
    """
    rest: Num = 1.0
    for share in shares:
        rest = rest - share
    if scalar(rest):
        return rest if rest > 1e-12 else 0.0
    ns = lib(rest)
    found: Num = ns.where(rest > 1e-12, rest, 0.0)
    return found


def check_modelled(classes: tuple[FailureClass, ...], tiers: int | None = None) -> None:
    """Refuse a class the recursion does not model: one that rolls back to a tier the job lacks (of
    ``tiers``), or takes its share from another class than the job's own.

    >>> try:
    ...     check_modelled((FailureClass("process", 0.15, 60.0, 2),), tiers=1)
    ... except InputError as e:
    ...     print(e.where)
    process
    """
    for found in classes:
        if isinstance(found.landing, int) and tiers is not None and not 0 <= found.landing < tiers:
            raise InputError(
                f"a failure class that rolls back to tier {found.landing} of a job with {tiers} is not modelled",
                where=found.name,
            )
        if found.taken_from != PERIODIC:
            raise InputError(
                f"a failure class whose share is taken from {found.taken_from} is not modelled", where=found.name
            )


def with_classes(
    periodic: Tiers,
    *,
    step_s: Num,
    in_place: FailureClass | None,
    nowhere: FailureClass | None,
    others: tuple[FailureClass, ...] = (),
) -> Tiers:
    """The schedule ``periodic`` (its shares of all failures, summing to 1 less the classes') with the
    class recovered in place as a tier below it (interval one step, stall 0) and the class that goes
    back nowhere. With an in-place class τ₁ is the step and the first multiple the periodic interval
    in steps (1 as a placeholder). ``others`` land beside a tier's own class with restarts of their own
    (docs/model.md §20): in place on the one-step tier, or on a periodic tier's index."""
    found = periodic
    if nowhere is not None:
        found = found.replace(nowhere_share=nowhere.share, nowhere_restart_s=nowhere.restart_s)
    shift = 0 if in_place is None else 1
    if others:
        found = found.replace(
            extra=tuple((c.share, c.restart_s, 0 if c.landing == IN_PLACE else int(c.landing) + shift) for c in others)
        )
    if in_place is None:
        return found
    return found.replace(
        tau1_s=step_s,
        every=(1.0, *periodic.every),
        stalls=(0.0, *periodic.stalls),
        shares=(in_place.share, *periodic.shares),
        restarts=(in_place.restart_s, *periodic.restarts),
    )


def without_in_place(t: Tiers) -> Tiers:
    """The periodic tiers of a schedule built by :func:`with_classes` with an in-place tier:
    τ₁ the fastest periodic interval, the multiples above it."""
    return t.replace(
        tau1_s=t.tau1_s * t.every[0],
        every=t.every[1:],
        stalls=t.stalls[1:],
        shares=t.shares[1:],
        restarts=t.restarts[1:],
        extra=tuple((q, r, anchor - 1) for q, r, anchor in t.extra if anchor > 0),
    )


def own_shares(shares: tuple[Num, ...], others: tuple[FailureClass, ...]) -> tuple[Num, ...]:
    """Each tier's share of the job's own class: the level's share of failures (docs/model.md §20) less the
    classes with restarts of their own that roll back to it."""
    found = list(shares)
    for c in others:
        if isinstance(c.landing, int):
            found[c.landing] = found[c.landing] - c.share
    return tuple(found)


def split_classes(
    classes: tuple[FailureClass, ...],
) -> tuple[FailureClass | None, FailureClass | None, tuple[FailureClass, ...]]:
    """(the first class recovered in place, the first that goes back nowhere, every other): the first two
    make the one-step tier and the no-loss class, the others land beside them (docs/model.md §20)."""
    in_place = next((c for c in classes if c.landing == IN_PLACE), None)
    nowhere = next((c for c in classes if c.landing == NOWHERE), None)
    return in_place, nowhere, tuple(c for c in classes if c is not in_place and c is not nowhere)
