"""The whole measured split of a simulated run (docs/model.md §18.5): every share of elapsed time the route
that ran it measured, summing to 1, each with its 95 % half-width where the route keeps batches of it and the
model's share of the same time beside it where the model gives one.

Every route measures useful work, the stalls (write), rework and restarts; beside them, as the job has them,
the waits for a spare node, the groups' losses (groups down, quorum pauses, overhead) and the silent events'
(the work they threw away, their restarts and skips). A route that does not time a share alone counts it
inside another, and says so (``folded``):

* the waits for a node, inside the restarts, on every route but the one engine run with a class noticed
  late (the others keep no elapsed time to divide the waits by);
* the quorum pauses, inside groups down, where the groups pause at all (the elastic runner and the engine
  without a class noticed late keep them together);
* a class noticed late that its home's stepper runs (silent events), inside write, rework and restart, as
  that stepper counts it; the time lost to slow periods (stragglers), inside the restarts, as the model
  counts it.

The groups' overhead is exact everywhere: kept work runs at (1 − o) of its throughput for useful work and
o for the overhead (0 for both while paused), so the overhead is o/(1 − o) of the useful share.

>>> from ckptcalc.simulation.timeline import Failures, Schedule, run_schedule
>>> schedule = Schedule.single(interval_s=600.0, stall_s=10.0, restart_s=300.0)
>>> whole = whole_of(run_schedule(schedule, Failures(7200.0), cycles=200, seed=1), None, model=False)
>>> [name for name, share in whole.shares.items() if share is not None], whole.folded
(['useful', 'write', 'rework', 'restart'], ())
>>> abs(sum(share.simulated for share in whole.shares.values() if share is not None) - 1.0) < 1e-12
True
"""

from __future__ import annotations

from typing import Any

from ckptcalc.mechanisms import registry
from ckptcalc.model.statistics import points
from ckptcalc.records import Record
from ckptcalc.simulation import engine

#: Every share of the whole split, in order (``simulate``'s ``whole_split``).
SHARES = ("useful", "write", "rework", "restart", "waiting", "groups_down", "quorum", "overhead", "silent")


class Share(Record):
    """One share: measured, its 95 % half-width (None: not kept), the model's (None: none alike), whether the
    model's lies in the simulated interval and by how many points it differs (None without both)."""

    simulated: float
    half_width: float | None
    model: float | None
    agrees: bool | None
    difference_pp: float | None


class Whole(Record):
    """Each share of :data:`SHARES` (None where the job lacks it or the route counts it inside another) and
    the names of what the route counts inside other shares."""

    shares: dict[str, Share | None]
    folded: tuple[str, ...]


def _share(simulated: float, half: float | None, model: Any) -> Share:
    found = None if model is None else float(model)
    if found is None:
        return Share(simulated, half, None, None, None)
    agrees = None if half is None else simulated - half <= found <= simulated + half
    return Share(simulated, half, found, agrees, points(found, simulated))


def whole_of(outcome: Any, result: Any, *, model: bool) -> Whole:
    """The whole split of the simulated run ``outcome`` (a :class:`ckptcalc.simulation.timeline.Simulation`)
    of ``result``'s configuration at the schedule it ran (None: a bare schedule), with the model's shares of
    ``result`` beside it where ``model`` (the model holds for the failures simulated)."""
    fit = result if model else None
    late = outcome.late
    if isinstance(late, engine.Found):
        return _engine(late, result, fit)
    low, high = outcome.ci95
    split = outcome.split
    folded: list[str] = []
    if late is not None:
        # A class its home's stepper ran: its losses are inside write, rework and restart, as it counts them.
        home = next(m for m in registry.REGISTRY if m.engine_switch and m.present(result.config))
        folded.append(home.name)
        fit = fit if home.stepped_split_alike(late) else None
    if result is not None and result.pool is not None:
        folded.append("waiting")
    shares: dict[str, Share | None] = dict.fromkeys(SHARES)
    shares["useful"] = _share(split.useful, (high - low) / 2.0, None if not model else result.effective)
    for name in ("write", "rework", "restart"):
        shares[name] = _share(getattr(split, name), None, None if fit is None else getattr(fit, name))
    process = _groups(result)
    if process is not None:
        elastic = None if fit is None else fit.elastic
        overhead = split.useful * process.overhead / (1.0 - process.overhead)
        paused = process.pause_s > 0.0
        down = None if elastic is None else elastic.down + (elastic.quorum if paused else 0.0)
        shares["groups_down"] = _share(outcome.elastic - overhead, None, down)
        shares["overhead"] = _share(overhead, None, None if elastic is None else elastic.overhead)
        if paused:
            folded.append("quorum")
        else:
            shares["quorum"] = _share(0.0, None, None if elastic is None else elastic.quorum)
    return Whole(shares, tuple(folded))


def _engine(found: engine.Found, result: Any, fit: Any) -> Whole:
    """The one engine's run with a class noticed late or slow periods: every share measured alone, with its
    half-width. The model counts the silent events' replays in rework and their restarts (and the waits) in
    restart: with silent events, rework, restart and the silent share have no model's share beside them. The
    time lost to running slow is in the restart, as the model counts it (docs/model.md §21.3), and the
    stragglers' home is named as folded there."""
    config = result.config
    late = any(m.engine_switch and registry.steps_itself(m) and m.present(config) for m in registry.REGISTRY)
    slow = next(
        (m for m in registry.REGISTRY if m.engine_switch and not registry.steps_itself(m) and m.present(config)),
        None,
    )
    alike = None if late else fit
    restart = ("restart", "slowed") if slow is not None else ("restart",)
    parts: dict[str, tuple[tuple[str, ...], Any]] = {
        "useful": (("effective",), None if fit is None else fit.effective),
        "write": (("write",), None if fit is None else fit.write),
        "rework": (("rework",), None if alike is None else alike.rework),
        # The model's restart holds the waits for a node, which the engine times apart.
        "restart": (
            restart,
            None if alike is None else alike.restart - (0.0 if fit.pool is None else fit.pool.waiting),
        ),
    }
    if result.pool is not None:
        parts["waiting"] = (("waiting",), None if fit is None else fit.pool.waiting)
    if _groups(result) is not None:
        for name, key in (("groups_down", "down"), ("quorum", "quorum"), ("overhead", "overhead")):
            parts[name] = ((key,), None if fit is None else getattr(fit.elastic, key))
    if late:
        parts["silent"] = (("silent_rework", "silent_restart"), None)
    shares: dict[str, Share | None] = dict.fromkeys(SHARES)
    for name, (keys, model) in parts.items():
        shares[name] = _share(*found.interval(*keys), model)
    return Whole(shares, () if slow is None else (slow.name,))


def _waiting(fit: Any) -> float:
    """The model's share of waits for a spare node (0 without a pool)."""
    return 0.0 if fit.pool is None else float(fit.pool.waiting)


def _groups(result: Any) -> Any:
    """The elastic replica groups of ``result``'s configuration as the simulation runs them (None: none)."""
    from ckptcalc.simulation.timeline import groups_of

    return None if result is None else groups_of(result.config)
