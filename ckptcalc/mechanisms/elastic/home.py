"""Elastic replica groups: the job keeps training on the groups that are up (docs/model.md §14).

A running share (MODEL.md §17, §13): the groups-up share and the fault tolerance's overhead times the
effective time of the periodic process at the whole-job rate (1 − e)λ, whose intervals are optimised
for that rate. The groups process itself is :mod:`ckptcalc.mechanisms.elastic.model`; this home
declares its inputs, checks them, evaluates a job with them (taking the evaluation over from the core,
which hands itself down), and owns its pairings (docs/model.md §18.4):

* just-in-time recovery and notice serve their shares of the whole-job failures that are not all
  groups down (an all-down failure has no healthy replica and came without notice);
* a spare shortens a failed group's time out: T_j when a spare is swapped in, with probability
  1 − B(S, a), the repair otherwise, and a whole-job failure that finds no spare freezes the job.

It is an approximation (``"model": "approximate"``): within 0.1 pp of the simulation, or inside its
interval, on every case checked where no warning is given (docs/model.md §14.6).

>>> MECHANISM.name, MECHANISM.kind
('elastic', 'running_share')
"""

from __future__ import annotations

import math
import sys
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.mechanisms.base import LARGEST, SMALLEST, Cell, Input, Mechanism, Num
from ckptcalc.mechanisms.elastic import engine, log
from ckptcalc.mechanisms.elastic import model as elastic
from ckptcalc.model.arrays import count, largest, scalar
from ckptcalc.model.arrays import maximum as _maximum

GROUPS, SHARE, REJOIN, PAUSE, OVERHEAD = "groups", "group_share", "rejoin_s", "quorum_pause_s", "ft_overhead"
NAMES = (GROUPS, SHARE, REJOIN, PAUSE, OVERHEAD)

#: The shares and the durations among them, checked as such.
SHARES = (SHARE, OVERHEAD)
PAUSES = (REJOIN, PAUSE)

#: The key of its part of what a log measured (``analyze``'s ``measured``).
MEASURED = "groups"

#: Its parts of ``analyze``'s realised split (the kept work a log's groups lost): (key, as the tables name it, as
#: the schema describes it).
SPLIT_PARTS = (
    ("groups_down", "groups down", "kept work lost to groups down (group-time / G)"),
    ("quorum", "quorum pauses", "kept work lost to quorum pauses (the running groups)"),
    ("overhead", "fault-tolerance overhead", "kept work lost to --ft-overhead outside pauses"),
)

#: How far the analytic form is from the simulation (docs/model.md §14), in every document's part.
NOTE = (
    "elastic replica groups: approximate analytic form (within 0.1 pp of the simulation, or inside its"
    " interval, on every case checked where no warning is given, docs/model.md §14.6; `ckptcalc simulate`"
    " answers)"
)

#: Rounds of the fixed point between the groups up and the spare pool's load (docs/model.md §18.4).
POOL_ROUNDS = 6


def at_work(config: Any) -> bool:
    """Whether ``config`` (a model ``Config``) has elastic replica groups."""
    return getattr(config, GROUPS) is not None


def simulated(config: Any) -> engine.Groups | None:
    """The groups of ``config`` as the event engine runs them (:mod:`.engine`), None without groups."""
    if not at_work(config):
        return None
    return engine.Groups(
        groups=int(getattr(config, GROUPS)),
        group_share=float(getattr(config, SHARE)),
        rejoin_s=float(getattr(config, REJOIN)),
        quorum_pause_s=float(getattr(config, PAUSE) or 0.0),
        overhead=float(getattr(config, OVERHEAD) or 0.0),
    )


# ------------------------------------------------------------------ the model and its pairings


def groups_of(config: Any, mtbf_s: Num | None = None) -> elastic.Groups:
    """The groups process of an elastic ``config`` (at ``mtbf_s`` instead of its own MTBF when given); with
    spare pool, a failed group stays out T_j when a spare is free and the repair time when none is (§18.4)."""
    return pool_of(config, _core(), mtbf_s)[0]


def _core() -> Any:
    """The model's evaluation module (loaded: a configuration exists only once it is)."""
    return sys.modules["ckptcalc.model.evaluation"]


def pool_of(config: Any, core: Any, mtbf_s: Num | None = None) -> tuple[elastic.Groups, Any]:
    """The groups process of an elastic ``config`` and its spare pool (None without a pool), at ``mtbf_s``
    when given. The pool is offered the failures that strike: group-local ones only on the groups up
    (eλA) and the whole-job ones ((1 − e)λ), so its load is a = (eA + 1 − e)·T_rep/M, and A depends on
    the chance B(S, a) that a failed group waits for its repair: a fixed point from A = 1 (§18.4)."""
    mtbf = config.mtbf_s if mtbf_s is None else mtbf_s
    share, rejoin = getattr(config, SHARE), getattr(config, REJOIN)
    pause, overhead = getattr(config, PAUSE), getattr(config, OVERHEAD)

    def process(out: elastic.Out | None) -> elastic.Groups:
        return elastic.groups_process(
            groups=getattr(config, GROUPS),
            group_share=share,
            rejoin_s=rejoin,
            quorum_pause_s=0.0 if pause is None else pause,
            overhead=0.0 if overhead is None else overhead,
            mtbf_s=mtbf,
            out=out,
        )

    found = core.spare_pool(config, mtbf)
    if found is None:
        return process(None), None
    groups = None
    for _ in range(POOL_ROUNDS):
        groups = process(elastic.Out(rejoin_s=rejoin, slow_s=found.out_s, slow_share=found.p_no_spare))
        struck = share * groups.up_share + (1.0 - share)
        found = core.spare_pool(config, mtbf / struck)
    assert groups is not None
    return groups, found


def periodic(config: Any, mtbf_s: Num, groups: elastic.Groups | None = None) -> Any:
    """The periodic process of an elastic ``config``: its checkpoints at the whole-job MTBF ``mtbf_s``,
    without its spare pool (its waits are counted after, §18.4). With ``groups``, just-in-time recovery and
    notice take their shares of the whole-job failures that are not all groups down: an all-down failure
    has no healthy replica to save from and came without notice, so it rolls back (§18.4)."""
    found = _core().without_running(config).replace(mtbf_s=mtbf_s)
    if groups is None or not config.has_recovery:
        return found
    return _core().scaled_classes(found, 1.0 - groups.all_down_share)


def _kept(part: Num, whole: Num) -> Num:
    """part / whole, 0 where the whole is 0 (a periodic process that keeps nothing keeps nothing elastic)."""
    if scalar(part, whole):
        return part / whole if whole else 0.0
    import numpy

    with numpy.errstate(divide="ignore", invalid="ignore"):
        return numpy.where(whole > 0, part / numpy.where(whole > 0, whole, 1.0), 0.0)


def evaluated(config: Any, core: Any) -> Any:
    """Elastic replica groups (docs/model.md §14): the useful share of the groups process times the exact
    periodic model at the whole-job rate, whose intervals are optimised for that rate. The loss split
    (write, rework, restart) stays the periodic process's; the groups' losses are in ``elastic``."""
    groups, pool = pool_of(config, core)
    whole = periodic(config, groups.whole_job_mtbf_s, groups)
    inner = core.evaluate(whole)
    share: Num = getattr(config, SHARE)
    fo = core.first_order(periodic(config, config.mtbf_s / _maximum(1.0 - share, 1e-300)))
    factor = groups.first_order_throughput
    caveats = inner.caveats
    often = count(elastic.all_down_warned(groups))
    if often:
        caveats = (*caveats, core.Caveat("all_down", None, largest(groups.all_down_share), often))
    paused = count(groups.pause_share > elastic.PAUSE_WARNING)
    if paused:
        caveats = (*caveats, core.Caveat("pauses", None, largest(groups.pause_share), paused))
    shares, restarts = core._classes(whole)
    ratio = elastic.restart_ratio(groups, shares=shares, restarts=restarts)
    found = elastic.losses(
        groups, inner.effective, write=inner.write, rework=inner.rework, restart=inner.restart, ratio=ratio
    )
    result = inner.replace(
        caveats=caveats,
        config=config,
        effective=found.effective,
        optimal_effective=inner.optimal_effective * _kept(found.effective, inner.effective),
        write=found.write,
        rework=found.rework,
        restart=found.restart,
        first_order=fo.replace(config=config, effective=fo.effective * factor),
        elastic=found,
    )
    return _with_spares(config, result, groups, pool, core)


def _with_spares(config: Any, result: Any, groups: elastic.Groups, found: Any, core: Any) -> Any:
    """An elastic ``result`` with its spare pool (docs/model.md §18.4): a whole-job failure (rate 1/M_W)
    that finds no spare, with probability B(S, a), freezes the job for T_rep/(S + 1) on average, so the
    job runs 1/(1 + B·T_rep/((S + 1)·M_W)) of the time; every share shrinks by it and the wait joins the
    restart term. A group-local failure waits nothing: its group stays out longer (:func:`groups_of`)."""
    if found is None:
        return result
    run = 1.0 / (1.0 + found.wait_s / groups.whole_job_mtbf_s)
    pool = found.replace(running=run, waiting=1.0 - run)
    losses = result.elastic
    assert losses is not None
    scaled = losses.replace(
        periodic=losses.periodic * run,
        down=losses.down * run,
        quorum=losses.quorum * run,
        overhead=losses.overhead * run,
        effective=losses.effective * run,
        write=losses.write * run,
        rework=losses.rework * run,
        restart=losses.restart * run + (1.0 - run),
    )
    return core._with_spares(config, result.replace(elastic=scaled), pool)


def effective_at(config: Any, schedule: Any, mtbf_s: float, core: Any) -> float:
    """Effective time of an elastic ``config`` running the periodic ``schedule`` at the job MTBF ``mtbf_s``."""
    groups, found = pool_of(config, core, mtbf_s)
    if config.has_recovery:
        # The shares of just-in-time recovery and notice at this MTBF's all-down share (§18.4).
        served = core._base(periodic(config, groups.whole_job_mtbf_s, groups))
        schedule = schedule.replace(shares=served.shares, nowhere_share=served.nowhere_share, extra=served.extra)
    running = 1.0
    if found is not None:
        running = 1.0 / (1.0 + float(found.wait_s) / float(groups.whole_job_mtbf_s))
    return float(core.effective(schedule, groups.whole_job_mtbf_s).effective * groups.throughput) * running


# ------------------------------------------------------------------ the declaration


class Elastic(Mechanism):
    name = "elastic"
    kind = "running_share"
    inputs = (
        Input(
            GROUPS,
            "count",
            "groups",
            "elastic",
            "groups",
            "Elastic replica groups (torchft-style, 2 or more): a group-local failure drops one group, the rest"
            " train on.",
            after="",
            before="keep",
            axis="replica groups",
        ),
        Input(
            SHARE,
            "fraction",
            "group-share",
            "elastic",
            "group_share",
            "Share of failures that take down only their replica group (with --groups; default: 0.95).",
            after=GROUPS,
            axis="group-local share of failures",
        ),
        Input(
            REJOIN,
            "duration",
            "rejoin",
            "elastic",
            "rejoin",
            "Time a dropped group takes to rejoin from a peer (with --groups; default: 30min).",
            after=SHARE,
            axis="rejoin time",
        ),
        Input(
            PAUSE,
            "duration",
            "quorum-pause",
            "elastic",
            "quorum_pause",
            "Pause of every running group at each group-local failure (quorum change), e.g. 20s (default: 0).",
            after=REJOIN,
            axis="quorum pause",
        ),
        Input(
            OVERHEAD,
            "fraction",
            "ft-overhead",
            "elastic",
            "ft_overhead",
            "Throughput the fault tolerance costs per step (with --groups; default: 0.02).",
            after=PAUSE,
            axis="fault-tolerance overhead",
        ),
    )
    levers = ("elastic",)
    what_if_example = f"{GROUPS}=8 ft-overhead=0.5%"
    log_split_keys = tuple((key, words) for key, _, words in SPLIT_PARTS)
    break_even_words = ((OVERHEAD, "", "overhead"),)
    example = ((GROUPS, "4"), (SHARE, "0.8"), (REJOIN, "5min"), (PAUSE, "20s"), (OVERHEAD, "0.01"))
    limit = ((GROUPS, ""), (SHARE, ""), (REJOIN, ""), (PAUSE, ""), (OVERHEAD, ""))  # no groups: the periodic job
    #: The simulations tell the groups apart after the persist's slowdown (and the mechanisms before this one
    #: in the registry that follow it); the one event engine runs them beside asynchronous checkpoints, the
    #: persist's slowdown and the classes of their own landing, which the groups' own stepper does not; none
    #: runs them under Weibull failures or in a search.
    simulated_name = "elastic"
    simulated_after = "slowdown"
    simulated_input = (GROUPS, GROUPS)
    not_simulated_with = ("async", "slowdown", "jit", "notice", "weibull", "search")
    one_engine_with = ("async", "slowdown", "jit", "notice")
    cells = (
        Cell("groups down", ("elastic", "groups_down_loss")),
        Cell("quorum pauses", ("elastic", "quorum_loss")),
        Cell("FT overhead", ("elastic", "overhead_loss")),
    )

    # ------------------------------------------------------------- the model

    def without(self, config: Any) -> Any:
        return config.replace(**dict.fromkeys(NAMES))

    def simulated_held(self, config: Any) -> bool:
        return at_work(config)

    def simulated_parts(self, outcome: Any, result: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
        return (("whole_split", {self.name: {"lost": outcome.elastic} if at_work(result.config) else None}),)

    def simulated_schema(self, parts: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
        lost = parts["object"](
            {"lost": parts["fraction"]},
            "with --groups: the share of elapsed time the groups down, the quorum pauses and the overhead took"
            " from kept work (split + this = 1); null otherwise",
        )
        return (("whole_split", {self.name: {"oneOf": [{"type": "null"}, lost]}}),)

    def engine_group_process(self, config: Any) -> engine.Groups | None:
        return simulated(config)

    def event_log_schema(self, time: dict[str, Any]) -> dict[str, Any]:
        return engine.log_schema(time)

    def takes_over(self, config: Any) -> bool:
        return at_work(config)

    def evaluated(self, config: Any, core: Any) -> Any:
        return evaluated(config, core) if at_work(config) else None

    def effective_at(self, config: Any, schedule: Any, mtbf_s: float, core: Any) -> float | None:
        return effective_at(config, schedule, mtbf_s, core) if at_work(config) else None

    def unneeded(self, config: Any, core: Any) -> bool | None:
        # All groups down at once rolls back whatever the shares (docs/model.md §18.4): a periodic
        # checkpoint is needed unless that never happens.
        if not at_work(config) or not scalar(getattr(config, GROUPS), config.mtbf_s):
            return None
        return bool(pool_of(config, core)[0].all_down_share <= 0.0)

    def approximate(self, config: Any) -> bool:
        return at_work(config)

    def model_label(self, config: Any) -> str | None:
        return "exact periodic model at the whole-job rate; elastic groups approximate" if at_work(config) else None

    # ------------------------------------------------------------- levers

    def assumed_levers(self, config: Any, assume: Any) -> list[tuple[str, Any]]:
        if at_work(config):
            return [("without_elastic", self.without(config))]
        if assume is None or config.shape is not None:
            return []  # (elastic groups under Weibull failures have no model)
        changed = config.replace(
            **{
                GROUPS: assume.elastic_groups,
                SHARE: assume.elastic_group_share,
                REJOIN: assume.elastic_rejoin_s,
                PAUSE: assume.elastic_quorum_pause_s,
                OVERHEAD: assume.elastic_ft_overhead,
            }
        )
        return [("elastic", changed)]

    def break_even(self, key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
        """The fault-tolerance overhead at which the groups of the ``elastic`` lever's configuration
        ``config`` stop paying (docs/model.md §14.7): the useful share is (1 − o) times what does not depend
        on o (the periodic process at the whole-job rate, the groups up, the pauses, the spare pool's waits), so
        the gain is zero at o* = 1 − E₀·(1 − o)/E(o), E₀ the job without groups. None where the groups do
        not pay even without overhead, or for a key or configuration not this mechanism's."""
        if key != "elastic" or not at_work(config):
            return None
        core = _core()
        with_groups = float(core.evaluate(config.optimal()).effective)
        without = float(core.evaluate(self.without(config).optimal()).effective)
        overhead = float(getattr(config, OVERHEAD) or 0.0)
        if not with_groups > 0.0:
            return None
        found = 1.0 - without * (1.0 - overhead) / with_groups
        return (OVERHEAD, found, "fraction") if 0.0 <= found < 1.0 else None

    # ------------------------------------------------------------- inputs

    def defaults_taken(self, scenario: Any, config: Any) -> tuple[tuple[str, float], ...]:
        if getattr(scenario, GROUPS) is None:
            return ()
        return tuple(
            (name, float(getattr(config, name)))
            for name in NAMES[1:]
            if getattr(scenario, name) is None and getattr(config, name, None) is not None
        )

    def check(self, where: Any, name: str, value: float) -> bool:
        if name == OVERHEAD:  # all throughput lost at 1: open at the top, as analyze reads it too
            if not (math.isfinite(value) and 0 <= value < 1):
                raise InputError(f"must be a share in [0, 1), got {value:g}", where=where(name))
        elif name in SHARES:
            if not (math.isfinite(value) and 0 <= value <= 1):
                raise InputError(f"must be a share in [0, 1], got {value:g}", where=where(name))
        elif name in PAUSES:
            if not (math.isfinite(value) and (value == 0 or SMALLEST <= value <= LARGEST)):
                raise InputError(
                    f"must be 0 or a duration from {SMALLEST:g} to {LARGEST:g} s, got {value:g} s", where=where(name)
                )
        elif name == GROUPS:
            if not math.isfinite(value):
                raise InputError(f"{value} is not a finite number", where=where(name))
            if value <= 0:
                raise InputError(f"must be positive, got {value:g}", where=where(name))
            if not SMALLEST <= value <= LARGEST:
                raise InputError(
                    f"{value:g} is out of range ({SMALLEST:g} to {LARGEST:g} in SI units)", where=where(name)
                )
            if not float(value).is_integer():
                raise InputError(f"must be a whole number, got {value:g}", where=where(name))
            if value < 2:
                raise InputError(
                    f"must be 2 or more replica groups, got {value:g} (one group is the periodic job itself)",
                    where=where(name),
                )
        else:
            return False
        return True

    def resolve(self, scenario: Any, config: Any) -> Any:
        """The model's elastic replica groups (docs/model.md §14), or none. ``groups`` alone assumes what the
        elastic lever does (:mod:`ckptcalc.mechanisms.elastic.model`: 95 % group-local, rejoin 30 min, 2 %
        overhead)."""
        if getattr(scenario, GROUPS) is None:
            for name in NAMES[1:]:
                if getattr(scenario, name) is not None:
                    raise InputError("needs {groups} (the elastic replica groups)", where=scenario.where(name))
            return config
        if scenario.shape is not None:
            raise InputError(
                "elastic replica groups under Weibull failures have no model here; drop {shape} or {groups}",
                where=scenario.where(GROUPS),
            )
        rejoin = _or(getattr(scenario, REJOIN), elastic.DEFAULT_REJOIN_S)
        pause = _or(getattr(scenario, PAUSE), elastic.DEFAULT_QUORUM_PAUSE_S)
        if pause > rejoin:
            # A quorum change is part of bringing a group back: one outlasting the rejoin has no meaning here.
            raise InputError(
                f"a quorum pause ({scenario.shown(PAUSE, pause)}) longer than the rejoin"
                f" ({scenario.shown(REJOIN, rejoin)}) is outside the model: the group is back before the pause ends",
                where=scenario.where(PAUSE),
            )
        return config.replace(
            **{
                GROUPS: getattr(scenario, GROUPS),
                SHARE: _or(getattr(scenario, SHARE), elastic.DEFAULT_GROUP_SHARE),
                REJOIN: rejoin,
                PAUSE: pause,
                OVERHEAD: _or(getattr(scenario, OVERHEAD), elastic.DEFAULT_FT_OVERHEAD),
            }
        )

    def sweep_whole(self, over: str) -> tuple[bool, float] | None:
        # Whole groups, spaced as any other input; those below 2 are refused (:meth:`refuse_sweep`), not raised.
        return (False, 1.0) if over == GROUPS else None

    def sweep_range(self, over: str, result: Any) -> tuple[float, float] | None:
        """A tenth to ten times the base's groups, never below 2; None without groups in the base (the core
        refuses the sweep for having nothing to sweep around)."""
        if over != GROUPS:
            return None
        value = getattr(result.config, GROUPS)
        return None if value is None else (max(2.0, float(value) / 10.0), float(value) * 10.0)

    def refuse_sweep(self, over: str, low: float, high: float, config: Any, shown: Any) -> None:
        if over not in {row.flag for row in self.inputs}:
            return
        if not at_work(config):
            raise InputError(f"sweeping {over} needs elastic replica groups in the base ({{groups}})", where="over")
        if over == GROUPS and low < 2:
            raise InputError("groups must be 2 or more over the whole sweep", where="start")
        if over in ("quorum-pause", "rejoin"):
            pause = high if over == "quorum-pause" else float(getattr(config, PAUSE) or 0.0)
            rejoin = low if over == "rejoin" else float(getattr(config, REJOIN) or 0.0)
            if pause > rejoin:
                raise InputError(
                    f"the quorum pause must not outlast the rejoin: {shown(PAUSE, pause)} against"
                    f" {shown(REJOIN, rejoin)} (the group is back before the pause ends)",
                    where="stop" if over == "quorum-pause" else "start",
                )

    # ------------------------------------------------------------- results

    def echo(self, config: Any) -> dict[str, float | None]:
        groups = getattr(config, GROUPS)
        found: dict[str, float | None] = {GROUPS: None if groups is None else int(groups)}
        for name in NAMES[1:]:
            value = getattr(config, name)
            found[name] = None if value is None else float(value)
        return found

    def own_part(self, result: Any) -> dict[str, Any] | None:
        """The elastic replica groups' shares (docs/model.md §14), or None without them; the losses are shares
        of elapsed time, beside the periodic process's write, rework and restart."""
        found = result.elastic
        if found is None:
            return None
        c, groups = result.config, found.groups
        return {
            GROUPS: int(getattr(c, GROUPS)),
            SHARE: float(getattr(c, SHARE)),
            REJOIN: float(getattr(c, REJOIN)),
            PAUSE: float(getattr(c, PAUSE) or 0.0),
            OVERHEAD: float(getattr(c, OVERHEAD) or 0.0),
            "groups_up_share": float(groups.up_share),
            "pause_share": float(groups.pause_share),
            "groups_down_loss": float(found.down),
            "quorum_loss": float(found.quorum),
            "overhead_loss": float(found.overhead),
            "whole_job_mtbf_s": float(groups.whole_job_mtbf_s),
            "periodic_effective": float(found.periodic),
            "all_down_share": float(groups.all_down_share),
            "model": "approximate",
            "note": NOTE,
        }

    measured_model_words = (
        "the elastic model at the measured G, e, T_j, q_p, o (as optimize --json's elastic); null without group events"
    )

    def own_schema(self) -> dict[str, Any] | None:
        fraction = {"type": "number", "minimum": 0, "maximum": 1}
        seconds = {"type": "number", "minimum": 0, "description": "seconds"}
        properties = {
            GROUPS: {"type": "integer", "minimum": 2},
            SHARE: fraction,
            REJOIN: seconds,
            PAUSE: seconds,
            OVERHEAD: fraction,
            "groups_up_share": {**fraction, "description": "expected share of the groups up while running"},
            "pause_share": {**fraction, "description": "share of running time in quorum pauses"},
            "groups_down_loss": {**fraction, "description": "share of elapsed time lost to groups down"},
            "quorum_loss": {**fraction, "description": "share of elapsed time lost to quorum pauses"},
            "overhead_loss": {**fraction, "description": "share of elapsed time lost to the per-step overhead"},
            "whole_job_mtbf_s": {**seconds, "description": "mean time between whole-job failures"},
            "periodic_effective": {
                **fraction,
                "description": "effective time of the periodic process alone; effective + the three elastic"
                " losses = this, and this + loss.write + loss.rework + loss.restart = 1",
            },
            "all_down_share": {
                **fraction,
                "description": "share of whole-job failures that are all groups down at once; a warning"
                " above 0.05 with four groups or more (docs/model.md §14.6)",
            },
            "model": {"const": "approximate"},
            "note": {"type": "string"},
        }
        return {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "properties": properties,
                    "required": list(properties),
                    "description": "elastic replica groups (docs/model.md §14); null without --groups",
                },
            ]
        }

    def check_work(self, config: Any, work_s: float, scenario: Any) -> None:
        rejoin = getattr(config, REJOIN)
        if rejoin is not None and rejoin > work_s:
            raise InputError(
                f"rejoin {scenario.shown(REJOIN, float(rejoin))} is longer than the run"
                f" ({scenario.shown(REJOIN, work_s)} of work): a dropped group would never be back",
                where=scenario.where(REJOIN),
            )

    def log_inputs(self) -> tuple[Input, ...]:
        count = "Replica groups of the run (default: the largest group + 1)."
        words = "Per-step cost of the groups' fault tolerance (default: 0)."
        return (
            Input(GROUPS, "count", "groups", "", "", count, after="discard", metavar="G"),
            Input(OVERHEAD, "fraction", "ft-overhead", "", "", words, after=GROUPS),
        )

    def log_values(self, given: dict[str, Any], number: Any) -> dict[str, float]:
        """The run's G as given (checked as every model input is; absent: the largest group + 1) and the
        overhead o (default 0)."""
        found: dict[str, float] = {}
        raw = given.get(GROUPS)
        if raw is not None:
            count = float(number(raw, GROUPS))
            if math.isnan(count):
                raise InputError("is not a number", where=GROUPS)
            self.check(lambda name: name, GROUPS, count)
            found[GROUPS] = int(count)
        raw = given.get(OVERHEAD)
        cost = 0.0 if raw is None else float(number(raw, OVERHEAD))
        if not (math.isfinite(cost) and 0.0 <= cost < 1.0):
            raise InputError(f"must be a share in [0, 1), got {cost:g}", where=OVERHEAD)
        return {"overhead": cost, **found}

    def log_reading(self, stated: dict[str, Any], reader: Any) -> Any:
        """The groups' ``group_down`` and ``group_up`` events (docs/model.md §11.6)."""
        return log.Reading(reader, stated.get(GROUPS))

    def log_losses(
        self, kept: Any, *, start_s: float, end_s: float, blocked: Any, restarts: Any, failures_s: Any, stated: Any
    ) -> Any:
        overhead = stated.get("overhead", 0.0)
        found = log.losses(kept, start_s=start_s, end_s=end_s, blocked=blocked, restarts=restarts,
                           failures_s=failures_s, overhead=overhead)  # fmt: skip
        return log.Lost(kept, found, start_s, end_s, failures_s, overhead)

    def log_split_parts(self, measured: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        return tuple((key, name) for key, name, _ in SPLIT_PARTS) if measured.get(MEASURED) is not None else ()

    def measured_failures(self, measured: dict[str, Any]) -> tuple[tuple[int, ...], float | None] | None:
        """M over every failure, each with every group up: the group-local and whole-job ones."""
        g = measured.get(MEASURED)
        return None if g is None else ((g["group_failures"], g["whole_job_failures"]), g["mtbf_s"])

    def config_rows(self, config: Any) -> list[tuple[str, str, Any, str]]:
        if not at_work(config):
            return []
        return [
            ("replica groups", "count", getattr(config, GROUPS), "elastic"),
            ("group-local share", "fraction", getattr(config, SHARE), "of failures drop one group"),
            ("rejoin", "duration", getattr(config, REJOIN), "a dropped group back from a peer"),
            ("quorum pause", "duration", getattr(config, PAUSE) or 0.0, "every running group, per group-local failure"),
            ("FT overhead", "fraction", getattr(config, OVERHEAD) or 0.0, "of throughput per step"),
        ]

    def split_rows(self, result: Any) -> list[tuple[str, Any, str]]:
        found = result.elastic
        if found is None:
            return []
        return [
            ("groups down", found.down, "elastic"),
            ("quorum pauses", found.quorum, "elastic"),
            ("FT overhead", found.overhead, "elastic"),
        ]

    def result_lines(self, result: Any, form: Any) -> list[str]:
        """What the elastic replica groups do to the time, in one sentence (docs/model.md §14)."""
        found = result.elastic
        if found is None:
            return []
        groups = found.groups
        return [
            f"Elastic groups: {form('fraction', float(groups.up_share))} of the groups up on average,"
            f" whole-job failures every {form('duration', float(groups.whole_job_mtbf_s))} (the periodic interval"
            f" is optimised for them); periodic process alone {form('fraction', float(found.periodic))}."
            " Approximate: within 0.1 pp of `ckptcalc simulate` on the cases checked where no warning is given"
            f" (all groups down here {form('fraction', float(groups.all_down_share))} of whole-job failures;"
            " docs/model.md §14.6)."
        ]

    def stated_values(self, config: Any) -> dict[str, float]:
        return {name: float(getattr(config, name)) for name in NAMES} if at_work(config) else {}

    def measured_entry(self, analysis: Any) -> tuple[str, dict[str, Any] | None] | None:
        """What a log's replica-group events measured (docs/model.md §11.6), or None without any."""
        g = analysis.measured_by.get(self.name)
        if g is None:
            return MEASURED, None
        return MEASURED, {
            GROUPS: g.groups,
            "groups_given": g.given,
            "group_failures": g.group_failures,
            "whole_job_failures": g.whole_job_failures,
            "all_down_failures": g.all_down_failures,
            SHARE: g.group_share,
            "group_share_ci95": None if g.group_share_ci95 is None else list(g.group_share_ci95),
            "rejoins": g.rejoins,
            REJOIN: g.rejoin_s,
            "rejoin_p90_s": g.rejoin_p90_s,
            "rejoin_ci95": None if g.rejoin_ci95 is None else list(g.rejoin_ci95),
            "quorum_pauses": g.quorum_pauses,
            PAUSE: g.quorum_pause_s,
            OVERHEAD: g.ft_overhead,
            "mtbf_s": g.mtbf_s,
            "down_s": g.down_s,
        }

    def measured_entry_schema(self) -> tuple[str, dict[str, Any]] | None:
        count = {"type": "integer", "minimum": 0}
        maybe_share = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
        maybe_seconds = {"type": ["number", "null"], "minimum": 0, "description": "seconds"}
        pair = {"type": ["array", "null"], "items": {"type": "number"}, "minItems": 2, "maxItems": 2}
        properties = {
            GROUPS: {"type": "integer", "minimum": 1, "description": "G: --groups, or the largest group + 1"},
            "groups_given": {"type": "boolean", "description": "G came from --groups"},
            "group_failures": {**count, "description": "group_down events: failures that took one group out"},
            "whole_job_failures": {**count, "description": "failure events, less those with every group down"},
            "all_down_failures": {**count, "description": "failures with every group down (the last group's)"},
            SHARE: {**maybe_share, "description": "e: group-local rate / all failures' rate"},
            "group_share_ci95": {**pair, "description": "Wilson 95 % of the count's split, as a share of rates"},
            "rejoins": {**count, "description": "group_down to group_up spans no whole-job failure interrupted"},
            REJOIN: {**maybe_seconds, "description": "T_j: their mean"},
            "rejoin_p90_s": maybe_seconds,
            "rejoin_ci95": {**pair, "description": "Student's t 95 % interval of the mean (null for one)"},
            "quorum_pauses": {**count, "description": "group_down events with a quorum_end"},
            PAUSE: {**maybe_seconds, "description": "q_p: mean quorum_end − group_down; null unmarked"},
            OVERHEAD: {
                "type": "number",
                "minimum": 0,
                "maximum": 1,
                "description": "o, as given (--ft-overhead; a log cannot show it)",
            },
            "mtbf_s": {**maybe_seconds, "description": "M: every failure, with every group up"},
            "down_s": {"type": "number", "minimum": 0, "description": "group-time down over the run, divided by G"},
        }
        found = {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "description": "the replica groups' group_down and group_up events (docs/model.md §11.6); null: none in"
            " the log",
        }
        return MEASURED, {"oneOf": [{"type": "null"}, found]}

    def measured_entry_rows(self, measured: dict[str, Any], form: Any) -> list[tuple[str, str, str]]:
        """(what, value, note) rows of what a log's replica-group events measured (docs/model.md §11.6)."""
        g = measured.get(MEASURED)
        if g is None:
            return []

        def span(pair: list[Any], kind: str) -> str:
            low, high = pair
            return f"> {form(kind, low)}" if high is None else f"{form(kind, low)} to {form(kind, high)}"

        given = "given (--groups)" if g["groups_given"] else "the largest group + 1"
        rows = [("replica groups", f"{g[GROUPS]}", given)]
        note = f"{g['whole_job_failures']:,} whole-job"
        if g["all_down_failures"]:
            note += f", {g['all_down_failures']:,} with every group down (group-local)"
        rows.append(("group-local failures", f"{g['group_failures']:,}", note))
        if g[SHARE] is not None:
            rows.append(
                (
                    "group-local share",
                    form("fraction", g[SHARE]),
                    f"of the failure rate; 95 %: {span(g['group_share_ci95'], 'fraction')}",
                )
            )
        if g[REJOIN] is not None:
            note = f"p90 {form('duration', g['rejoin_p90_s'])}, {g['rejoins']:,} rejoins"
            if g["rejoin_ci95"] is not None:
                note += f"; 95 %: {span(g['rejoin_ci95'], 'duration')}"
            rows.append(("rejoin", form("duration", g[REJOIN]), note))
        if g[PAUSE] is not None:
            rows.append(("quorum pause", form("duration", g[PAUSE]), f"{g['quorum_pauses']:,} marked (quorum_end)"))
        else:
            rows.append(("quorum pause", "-", "none marked (quorum_end): counted as useful, none in the model"))
        rows.append(("FT overhead", form("fraction", g[OVERHEAD]), "as given (--ft-overhead): a log cannot show it"))
        if g["mtbf_s"] is not None:
            rows.append(
                ("MTBF, every group up", form("duration", g["mtbf_s"]), "every failure: group-local and whole-job")
            )
        return rows

    def from_measured(self, config: Any, analysis: Any) -> tuple[Any, str | None] | None:
        g = analysis.measured_by.get(self.name)
        return None if g is None else log.elastic_config(config, g)

    def report_lines(self, document: dict[str, Any], form: Any) -> list[str]:
        found = document.get(self.name)
        if found is None:
            return []
        return [
            f"elastic replica groups: {found[GROUPS]}, {form('fraction', found[SHARE])} of failures group-local,"
            f" rejoin {form('duration', found[REJOIN])}; {form('fraction', found['groups_up_share'])} of the groups"
            f" up on average, whole-job failures every {form('duration', found['whole_job_mtbf_s'])}; lost to groups"
            f" down {form('fraction', found['groups_down_loss'])}, to quorum pauses"
            f" {form('fraction', found['quorum_loss'])}, to overhead {form('fraction', found['overhead_loss'])}"
            " (approximate, docs/model.md §14)"
        ]

    def input_schema(self) -> dict[str, Any]:
        share = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
        seconds = {"type": ["number", "null"], "minimum": 0, "description": "seconds"}
        return {
            GROUPS: {"type": ["integer", "null"], "minimum": 2, "description": "elastic replica groups"},
            SHARE: share,
            REJOIN: seconds,
            PAUSE: seconds,
            OVERHEAD: share,
        }


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


MECHANISM = Elastic()
