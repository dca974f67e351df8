"""A job's inputs as a user states them, and their resolution into a model.

A :class:`Scenario` holds what a preset file or the command line said, in SI
units, each field remembering where it came from (``--bw`` or
``cluster.toml: storage.bandwidth``) so that an out-of-range value is reported
against the right culprit. :func:`resolve` checks ranges and combinations and
builds the :class:`ckptcalc.model.evaluation.Config` the model evaluates.

Every input is a row of :data:`ckptcalc.inputs.fields.FIELDS`, which names its
unit kind, flag and preset key.
"""

from __future__ import annotations

import math
from typing import Any

from ckptcalc.errors import InputError
from ckptcalc.inputs import units
from ckptcalc.inputs.bare_counts import Suspect, suspects
from ckptcalc.inputs.fields import BY_NAME, FIELDS
from ckptcalc.mechanisms import registry
from ckptcalc.mechanisms.base import LARGEST as LARGEST
from ckptcalc.mechanisms.base import SMALLEST as SMALLEST
from ckptcalc.model.evaluation import Config, Tier, moved, replace
from ckptcalc.model.statistics import no_failure_bound
from ckptcalc.records import Record

DEFAULT_BYTES_PER_PARAM = 16.0

#: The origin of a per-GPU failure interval that ``gpus`` alone carried over from the base.
SCALED = "gpus"

_MTBF_SOURCES = ("mtbf_s", "gpu_mtbf_s", "failures", "window_s")

#: The scenario attribute holding the stated 95 % interval of the job's MTBF (not an input of FIELDS:
#: it is a pair, written ``LOW:HIGH`` on the command line and as a two-element array in a preset).
BAND = "mtbf_ci95"

#: Weibull shapes the planner and the simulation accept: beyond them Γ(1 + 1/k) leaves floating point
#: or the law is a step; fitted shapes of real clusters lie between 0.3 and 2.
SHAPES = (0.1, 20.0)
_SIZE_SOURCES = ("params", "bytes_per_param", "checkpoint_bytes")


def total(value: float, gpus: float | None, where: str) -> float:
    """A rate as the model takes it: a per-GPU one (:class:`ckptcalc.inputs.units.PerGpu`) times ``gpus``,
    which must then be known; any other as it is."""
    if not isinstance(value, units.PerGpu):
        return value
    if gpus is None:
        raise InputError(f"{units.format_rate(value)} needs the GPU count ({{gpus}})", where=where)
    return float(value) * gpus


class MiddleTier(Record, extra=registry.tier_fields()):
    """A tier between memory and storage, as a preset's ``[[levels]]`` states it (SI units).

    Its restart is ``restart_s``, or (with ``read_bandwidth``) the job's
    detection, rescheduling and warm-up plus the reload, size / read
    bandwidth. ``where`` names it in messages (``file: levels[1]``);
    ``per_gpu`` names its rates stated per GPU. It also holds the mechanisms' keys a middle tier states
    (``registry.tier_fields``), None when unstated.
    """

    name: str
    bandwidth: float
    share: float
    restart_s: float | None = None
    read_bandwidth: float | None = None
    interval_s: float | None = None
    where: str = "levels"
    per_gpu: frozenset[str] = frozenset()

    def __eq__(self, other: object) -> bool:
        # Where a tier was stated is not part of its identity.
        return isinstance(other, MiddleTier) and all(
            getattr(self, name) == getattr(other, name) for name in self._fields if name != "where"
        )

    __hash__ = None


class Scenario(Record, extra=(*registry.fields(), *registry.lever_fields())):
    """Inputs as stated, SI units, ``None`` where unstated.

    ``origin`` maps a field name to where its value came from, for messages. ``per_gpu`` names the
    rates stated per GPU: those fields hold the per-GPU value, and :func:`resolve` multiplies it by
    the GPU count, so that changing ``gpus`` scales them. A :class:`ckptcalc.inputs.units.PerGpu` value
    given for a field marks it so. Every registered mechanism's inputs (:mod:`ckptcalc.mechanisms`) are
    fields too, None when unstated.
    """

    name: str | None = None
    description: str | None = None
    source: str | None = None
    derived_from: str | None = None  # the preset this one was saved from
    changed: tuple[str, ...] | None = None  # the keys (table.key) changed from it
    params: float | None = None
    bytes_per_param: float | None = None
    checkpoint_bytes: float | None = None
    bandwidth: float | None = None
    snapshot_bandwidth: float | None = None
    interval_s: float | None = None
    mtbf_s: float | None = None
    gpu_mtbf_s: float | None = None
    failures: float | None = None
    window_s: float | None = None
    restart_s: float | None = None
    detect_s: float | None = None
    reschedule_s: float | None = None
    read_bandwidth: float | None = None
    warmup_s: float | None = None
    shape: float | None = None
    gpus: float | None = None
    replica_survival: float | None = None
    memory_bandwidth: float | None = None
    memory_restart_s: float | None = None
    memory_read_bandwidth: float | None = None
    memory_interval_s: float | None = None
    step_time_s: float | None = None
    discard: float | None = None
    max_busy: float | None = None  # the busy share of a tier's storage above which a warning is given
    # What a mechanism's levers assume, from a preset's [levers] (its home's ``lever_presets``), are fields
    # too, a rate a units.PerGpu when stated per GPU.
    gpu_hour_cost: float | None = None
    # The newest storage checkpoints retained (docs/model.md §16); work_s the run's length.
    keep: float | None = None
    work_s: float | None = None
    mtbf_ci95: tuple[float, float | None] | None = None
    middle: tuple[MiddleTier, ...] = ()  # tiers between memory and storage ([[levels]] of a preset)
    tier_names: tuple[str, ...] = ()  # every tier's name as a preset's [[levels]] gives it, fastest first
    levers: tuple[tuple[str, float], ...] = ()  # a preset's [levers]: what a lever assumes, by assumption field
    sources: tuple[tuple[str, str], ...] = ()  # a preset's [sources]: how a value came (field, "fitted from FILE")
    log_patterns: str | None = None  # a preset's [log] patterns: the line patterns its run's logs need
    origin: dict[str, str] = None  # type: ignore[assignment]  # {} once built
    per_gpu: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "origin", dict(self.origin or {}))
        marked = {f.name for f in FIELDS if isinstance(getattr(self, f.name), units.PerGpu)}
        for name in marked:
            object.__setattr__(self, name, float(getattr(self, name)))
        stated = {*(self.per_gpu or ()), *marked}
        object.__setattr__(self, "per_gpu", frozenset(n for n in stated if getattr(self, n, None) is not None))

    def __eq__(self, other: object) -> bool:
        # Where a value came from is not part of its identity.
        return isinstance(other, Scenario) and all(
            getattr(self, name) == getattr(other, name) for name in self._fields if name != "origin"
        )

    def values(self) -> dict[str, float]:
        """The stated inputs, by field name; a rate stated per GPU as a :class:`ckptcalc.inputs.units.PerGpu`."""
        return {
            f.name: units.PerGpu(getattr(self, f.name)) if f.name in self.per_gpu else getattr(self, f.name)
            for f in FIELDS
            if getattr(self, f.name) is not None
        }

    def source_of(self, name: str) -> str | None:
        """How the value of field ``name`` came, when a preset's ``[sources]`` says (``fitted from FILE``)."""
        return dict(self.sources).get(name)

    def where(self, name: str) -> str:
        return self.origin.get(name, BY_NAME[name].public if name in BY_NAME else name)

    def where_missing(self, name: str, beside: str) -> str:
        """Where the missing input ``name`` belongs: its key in the preset file that states ``beside``
        (``FILE: table.key``), or its flag where ``beside`` was given on the command line."""
        stated = self.origin.get(beside)
        if stated is not None and ": " in stated and name in BY_NAME:
            return f"{stated.split(': ', 1)[0]}: {BY_NAME[name].path}"
        return self.where(name)

    def shown(self, name: str, value: float) -> str:
        """``value`` of the input ``name`` in its unit, as a message shows it (a mechanism's checks)."""
        formatter = {"size": units.format_size, "rate": units.format_rate, "duration": units.format_duration}
        kind = BY_NAME[name].kind
        return formatter[kind](value) if kind in formatter else f"{value:g}"


def _stated_mtbf_sources(values: dict[str, float]) -> list[str]:
    sources = []
    if "mtbf_s" in values:
        sources.append("mtbf")
    if "gpu_mtbf_s" in values:
        sources.append("gpu_mtbf")
    if "failures" in values or ("window_s" in values and not any(n in values for n in registry.window_counts())):
        sources.append("failures")
    return sources


def _one_way(sources: list[str]) -> str:
    named = " and ".join("{failures}/{window}" if s == "failures" else f"{{{s}}}" for s in sources)
    return f"give the failure interval one way only, not {named}"


def merge(
    base: Scenario,
    overrides: dict[str, float],
    origin: dict[str, str] | None = None,
    *,
    band: tuple[float, float | None] | None = None,
) -> Scenario:
    """Apply overrides (field name → SI value) and an MTBF ``band`` on top of ``base``.

    Stating the checkpoint size directly replaces parameters and vice versa;
    stating any failure-interval source replaces the base's, and its band
    unless ``band`` is given. Changing only the GPU count holds the base's
    per-GPU failure rate: M × GPUs stays constant, and the band scales with M.
    A rate given as a :class:`ckptcalc.inputs.units.PerGpu` is per GPU; any other replaces the base's,
    per GPU or not, as an aggregate.
    """
    origin = dict(origin or {f: BY_NAME[f].public for f in overrides})
    if band is not None:
        origin.setdefault(BAND, "mtbf_ci")
    stated = _stated_mtbf_sources(overrides)
    if len(stated) > 1:
        raise InputError(_one_way(stated), where=stated[1])
    if "checkpoint_bytes" in overrides and ("params" in overrides or "bytes_per_param" in overrides):
        other = "params" if "params" in overrides else "bytes_per_param"
        raise InputError(f"give the checkpoint size one way only, not {{size}} and {{{other}}}", where="size")
    cleared: dict[str, Any] = {}
    if "checkpoint_bytes" in overrides:
        cleared.update(params=None, bytes_per_param=None)
    elif "params" in overrides or "bytes_per_param" in overrides:
        cleared.update(checkpoint_bytes=None)
    parts = [name for name in (*RESTART_PARTS, "read_bandwidth") if name in overrides]
    if "restart_s" in overrides and parts:
        raise InputError(
            f"give the restart one way only: {{restart}} or its parts, not both (here {{{BY_NAME[parts[0]].public}}})",
            where="restart",
        )
    # Whether a level other than storage will still restart by parts once the overrides apply.
    others = others_by_parts(base.replace(memory_read_bandwidth=None) if "memory_restart_s" in overrides else base)
    others = others or "memory_read_bandwidth" in overrides
    if "restart_s" in overrides:
        # A whole storage restart; the job's parts stay while another level restarts by them.
        cleared["read_bandwidth"] = None
        if not others:
            cleared.update({name: None for name in RESTART_PARTS})
    elif "read_bandwidth" in overrides or (parts and not others):
        # Storage's restart by parts now: its whole restart goes (the job's parts alone, while other
        # levels restart by them, change those levels and leave storage's whole restart alone).
        cleared["restart_s"] = None
    if "memory_restart_s" in overrides and "memory_read_bandwidth" in overrides:
        raise InputError(
            "give the memory restart one way only: {memory_restart} or {memory_read_bw}", where="memory_restart"
        )
    if "memory_restart_s" in overrides:
        cleared["memory_read_bandwidth"] = None
    elif "memory_read_bandwidth" in overrides:
        cleared["memory_restart_s"] = None
    if stated:
        cleared.update({name: None for name in _MTBF_SOURCES})
        cleared[BAND] = None
    elif "gpus" in overrides and overrides["gpus"] != base.gpus:
        per_gpu = per_gpu_mtbf(base)
        if per_gpu is None:
            raise InputError(
                "cannot rescale the failure interval: the base configuration has no GPU count;"
                " give {mtbf}, {gpu_mtbf} or {failures}/{window}",
                where="gpus",
            )
        cleared.update({name: None for name in _MTBF_SOURCES})
        cleared["gpu_mtbf_s"] = per_gpu
        origin["gpu_mtbf_s"] = SCALED
        known = _counted_band(base) or base.mtbf_ci95
        if known is not None and base.gpus is not None:
            factor = base.gpus / overrides["gpus"]
            low, high = known
            cleared[BAND] = (low * factor, None if high is None else high * factor)
    if band is not None:
        cleared[BAND] = band
    merged_origin = {k: v for k, v in base.origin.items() if k not in cleared and k not in overrides}
    merged_origin.update(origin)
    marked = {name for name, value in overrides.items() if isinstance(value, units.PerGpu)}
    plain = {name: float(value) if name in marked else value for name, value in overrides.items()}
    changes = {**cleared, **plain}
    # The base's marks stay on the rates it keeps (not on any a replace() emptied).
    kept = {name for name in base.per_gpu if name not in changes and getattr(base, name) is not None}
    sources = tuple((name, text) for name, text in base.sources if name not in changes)  # a value stated anew is given
    return replace(base, **changes, origin=merged_origin, per_gpu=frozenset(kept | marked), sources=sources)


def per_gpu_rate(scenario: Scenario, name: str) -> float | None:
    """The rate ``name`` per GPU: as stated when stated per GPU, else the aggregate over the GPU count;
    None when the rate or the count is unknown."""
    value = getattr(scenario, name)
    if value is None or name in scenario.per_gpu:
        return value  # type: ignore[no-any-return]
    return None if scenario.gpus is None else value / scenario.gpus


def per_gpu_mtbf(scenario: Scenario) -> float | None:
    """The per-GPU failure interval implied by a scenario, if its GPU count is known."""
    if scenario.gpus is None:
        return None
    if scenario.gpu_mtbf_s is not None:
        return scenario.gpu_mtbf_s
    try:
        job_mtbf, _ = _mtbf(scenario)
    except InputError:
        return None
    return job_mtbf * scenario.gpus


class Assumed(Record):
    """A value the job runs with that neither the user nor a preset they named stated
    (:mod:`ckptcalc.inputs.assumed`): ``how`` is ``preset`` (the default preset's), ``held`` (a per-GPU
    failure rate held from ``preset`` at ``gpus`` GPUs) or ``default`` (the model's own)."""

    name: str  # the field
    value: float  # SI
    how: str
    preset: str | None = None
    gpus: float | None = None


class Job(Record):
    """A resolved scenario: the model configuration plus what the CLI reports beside it."""

    scenario: Scenario
    config: Config
    mtbf_source: str
    gpu_mtbf_s: float | None
    mtbf_band: tuple[float, float | None] | None = None
    """The job MTBF's 95 % interval: stated, or exact χ² from failures in a window; an open
    upper end when no failure was seen (only a lower bound exists)."""
    classes: tuple[tuple[str, Any], ...] = ()  # what each failure class found beside its inputs, by mechanism
    suspects: tuple[Suspect, ...] = ()  # a bare parameter count or size, almost certainly not what was meant
    assumed: tuple[Assumed, ...] = ()  # what the job runs with that nobody stated (set by the API)

    @property
    def gpus(self) -> float | None:
        return self.scenario.gpus


def _check_positive(scenario: Scenario, name: str, value: float) -> None:
    if not math.isfinite(value):
        raise InputError(f"{value} is not a finite number", where=scenario.where(name))
    if value <= 0:
        raise InputError(f"must be positive, got {_echo(name, value)}", where=scenario.where(name))
    if not SMALLEST <= value <= LARGEST:
        raise InputError(
            f"{_echo(name, value)} is out of range ({SMALLEST:g} to {LARGEST:g} in SI units)"
            + (_per_gpu_hint(scenario, name) if value < SMALLEST else ""),
            where=scenario.where(name),
        )


def _per_gpu_hint(scenario: Scenario, name: str, example: float = 25e9) -> str:
    """For a rate stated as an aggregate, how to state it per GPU instead:
    `` (a rate without /gpu is the aggregate over all GPUs; write 25GB/s/gpu for a per-GPU rate)``."""
    if BY_NAME[name].kind != "rate" or name in scenario.per_gpu:
        return ""
    return (
        " (a rate without /gpu is the aggregate over all GPUs;"
        f" write {units.written_rate(example)}/gpu for a per-GPU rate)"
    )


def _rate_echo(scenario: Scenario, name: str, value: float) -> str:
    """A rate as stated, with the aggregate beside a per-GPU one: ``400 GB/s (25.0 GB/s per GPU × 16 GPUs)``."""
    if name in scenario.per_gpu and scenario.gpus is not None:
        return f"{units.format_rate(value * scenario.gpus)} ({units.format_per_gpu(value, scenario.gpus)})"
    return units.format_rate(value)


def _aggregate(scenario: Scenario) -> Scenario:
    """``scenario`` with every per-GPU rate multiplied by the GPU count (which must be known), checked."""
    totals: dict[str, Any] = {}  # keyword arguments of replace: the rates, all float or None
    for name, value in scenario.values().items():
        if not isinstance(value, units.PerGpu):
            continue
        totals[name] = total(value, scenario.gpus, scenario.where(name))
        if not SMALLEST <= totals[name] <= LARGEST:
            raise InputError(
                f"{_rate_echo(scenario, name, value)} is out of range ({SMALLEST:g} to {LARGEST:g} in SI units)",
                where=scenario.where(name),
            )
    return scenario.replace(**totals, per_gpu=frozenset()) if totals else scenario


def _echo(name: str, value: float) -> str:
    kind = BY_NAME[name].kind
    if kind in ("size", "rate", "duration") and value != 0:
        formatter = {"size": units.format_size, "rate": units.format_rate, "duration": units.format_duration}
        return formatter[kind](value)
    return f"{value:g}"


def _mtbf(scenario: Scenario) -> tuple[float, str]:
    if scenario.mtbf_s is not None:
        return scenario.mtbf_s, "mtbf"
    if scenario.gpu_mtbf_s is not None:
        if scenario.gpus is None:
            raise InputError("a per-GPU MTBF needs the GPU count ({gpus})", where=scenario.where("gpu_mtbf_s"))
        source = "scaled" if scenario.origin.get("gpu_mtbf_s") == SCALED else "gpu_mtbf"
        return scenario.gpu_mtbf_s / scenario.gpus, source
    counted = any(getattr(scenario, name) is not None for name in registry.window_counts())
    if scenario.failures is not None or (scenario.window_s is not None and not counted):
        if scenario.failures is None:
            raise InputError(
                "{window} needs {failures} (failures seen in that window)", where=scenario.where("window_s")
            )
        if scenario.window_s is None:
            raise InputError("{failures} needs {window} (the time they were seen in)", where=scenario.where("failures"))
        if scenario.failures == 0:
            # No failure seen: only a bound exists, M > T/ln 20 at 95 %; plan at it.
            return no_failure_bound(scenario.window_s), "failures_bound"
        return scenario.window_s / scenario.failures, "failures"
    raise InputError("no failure interval: give {mtbf}, {gpu_mtbf} or {failures} with {window}", where="mtbf")


def resolve(scenario: Scenario) -> Job:
    """Check ranges and combinations, and build the model configuration (per-GPU rates times the GPU
    count); the job keeps the scenario as stated."""
    values = scenario.values()
    _check_ranges(scenario, values)
    stated, scenario = scenario, _aggregate(scenario)
    if scenario.gpu_hour_cost is not None and scenario.gpus is None:
        raise InputError("a GPU-hour cost needs the GPU count ({gpus})", where=scenario.where("gpu_hour_cost"))
    sources = _stated_mtbf_sources(values)
    if len(sources) > 1:
        raise InputError(_one_way(sources), where=scenario.where("mtbf_s"))
    size = _size(scenario)
    if scenario.bandwidth is None:
        raise InputError("no storage bandwidth given", where="bw")
    restart, memory_restart = _restarts(scenario)
    mtbf, source = _mtbf(scenario)
    _check_levels(stated, values)
    band = _band(scenario, mtbf, source)
    config = Config(
        checkpoint_bytes=size,
        bandwidth=scenario.bandwidth,
        mtbf_s=mtbf,
        restart_s=restart,
        snapshot_bandwidth=scenario.snapshot_bandwidth,
        replica_survival=scenario.replica_survival,
        memory_bandwidth=scenario.memory_bandwidth,
        memory_restart_s=memory_restart,
        interval_s=scenario.interval_s,
        memory_interval_s=scenario.memory_interval_s,
        shape=scenario.shape,
        read_bandwidth=scenario.read_bandwidth,
        memory_read_bandwidth=scenario.memory_read_bandwidth,
        middle=_middle(scenario),
    )
    config = _with_storage(scenario, config)
    _check_persist(scenario, config)
    config, classes = _with_classes(scenario, config)
    gpu_mtbf = scenario.gpu_mtbf_s
    if gpu_mtbf is None and scenario.gpus is not None:
        gpu_mtbf = mtbf * scenario.gpus
    return Job(
        scenario=stated, config=config, mtbf_source=source, gpu_mtbf_s=gpu_mtbf, mtbf_band=band,
        classes=classes, suspects=suspects(stated),
    )  # fmt: skip


#: The parts of a restart that do not depend on the level it restores from (docs/model.md §12.1).
RESTART_PARTS = ("detect_s", "reschedule_s", "warmup_s")


def fixed_restart(scenario: Scenario) -> float:
    """Detection + rescheduling + warm-up (each 0 when unstated)."""
    return sum(getattr(scenario, name) or 0.0 for name in RESTART_PARTS)


def by_parts(scenario: Scenario) -> bool:
    """Whether storage's restart is given as its parts rather than as a whole."""
    return any(getattr(scenario, name) is not None for name in (*RESTART_PARTS, "read_bandwidth"))


def others_by_parts(scenario: Scenario) -> bool:
    """Whether a level other than storage restarts by parts (the replica or a middle tier)."""
    return scenario.memory_read_bandwidth is not None or any(
        t.read_bandwidth is not None and t.restart_s is None for t in scenario.middle
    )


def _restarts(scenario: Scenario) -> tuple[float, float | None]:
    """The model's storage and memory restart: a whole, or (with a read bandwidth) the fixed part to
    which the model adds the reload. A restart is given one way: its whole or its parts."""
    stated = [name for name in (*RESTART_PARTS, "read_bandwidth") if getattr(scenario, name) is not None]
    parts = stated
    if others_by_parts(scenario):
        # The job's parts serve the other levels; only a read bandwidth makes storage's by parts too.
        parts = [name for name in stated if name == "read_bandwidth"]
    if scenario.restart_s is not None and parts:
        part = BY_NAME[parts[0]].public
        origin = scenario.where(parts[0])
        named = f"{{{part}}}" if origin == part else origin
        raise InputError(f"give the restart one way only, as a whole or by its parts, not both (here {named})",
                         where=scenario.where("restart_s"))  # fmt: skip
    if scenario.restart_s is None and not stated:
        raise InputError(
            "no restart time given: {restart}, or its parts {detect}, {reschedule}, {read_bw}, {warmup}",
            where="restart",
        )
    restart = scenario.restart_s if scenario.restart_s is not None else fixed_restart(scenario)
    memory = scenario.memory_restart_s
    if scenario.memory_read_bandwidth is not None:
        if memory is not None:
            raise InputError(
                "give the memory restart one way only: {memory_restart} or {memory_read_bw} (with the restart's parts)",
                where=scenario.where("memory_read_bandwidth"),
            )
        memory = fixed_restart(scenario)
    return restart, memory


def _middle(scenario: Scenario) -> tuple[Tier, ...]:
    """The model's middle tiers: rates per GPU times the GPU count, restarts as :func:`_restarts` has them;
    storage serves what the faster tiers leave, which must be some."""
    found = []
    if scenario.middle:
        faster = (scenario.replica_survival or 0.0) + sum(tier.share for tier in scenario.middle)
        if not faster < 1.0 - 1e-12:
            shares = " + ".join(f"{t.share:g}" for t in scenario.middle)
            raise InputError(
                f"the faster tiers serve {scenario.replica_survival or 0.0:g} + {shares} = {faster:.10g} of"
                " the failures, leaving none to storage: storage recovers the failures no faster tier survives",
                where=scenario.where("replica_survival"),
            )
    given = [scenario.memory_interval_s, *(t.interval_s for t in scenario.middle), scenario.interval_s]
    stated = [g is not None for g in given]
    if scenario.middle and any(stated) and not (all(stated) or stated == [True] + [False] * (len(given) - 1)
                                                or stated == [False] * (len(given) - 1) + [True]):  # fmt: skip
        places = [scenario.where("memory_interval_s"), *(f"{t.where}.interval" for t in scenario.middle),
                  scenario.where("interval_s")]  # fmt: skip
        raise InputError(
            "with three or more tiers, give every tier's interval, only the fastest's, or only storage's",
            where=next(place for place, known in zip(places, stated, strict=True) if known),
        )
    costs = [key for key in registry.tier_keys() if key.middle]  # the tier costs' keys a middle tier carries
    for tier in scenario.middle:
        rates = {}
        for name in ("bandwidth", "read_bandwidth", *(key.key for key in costs if key.kind == "rate")):
            value = getattr(tier, name)
            if value is not None and name in tier.per_gpu:
                value = total(units.PerGpu(value), scenario.gpus, f"{tier.where}.{name}")
            rates[name] = value
        checked = {**rates, "restart": tier.restart_s, "interval": tier.interval_s}
        registry.check_tier({key.key: getattr(tier, key.key) for key in costs}, tier.where)
        for key, value in checked.items():
            if value is not None and not (math.isfinite(value) and SMALLEST <= value <= LARGEST):
                raise InputError(
                    f"{value:g} in SI units is out of range ({SMALLEST:g} to {LARGEST:g})", where=f"{tier.where}.{key}"
                )
        restart = tier.restart_s if tier.restart_s is not None else fixed_restart(scenario)
        found.append(
            Tier(
                name=tier.name,
                bandwidth=rates["bandwidth"],
                restart_s=restart,
                share=tier.share,
                read_bandwidth=rates["read_bandwidth"],
                interval_s=tier.interval_s,
                **{key.key: rates.get(key.key, getattr(tier, key.key)) for key in costs},
            )
        )
    return tuple(found)


class Parts(Record):
    """A restart taken apart (docs/model.md §12.1): the reload is checkpoint size / read bandwidth
    (0 when no read bandwidth is given)."""

    detect_s: float
    reschedule_s: float
    reload_s: float
    warmup_s: float
    read_bandwidth: float | None
    total_s: float


def anatomy(job: Job) -> tuple[tuple[str, Parts], ...]:
    """Each level whose restart is given as parts, by level name, fastest first; () when none is."""
    s, c = job.scenario, job.config
    detect, reschedule, warmup = (float(getattr(s, name) or 0.0) for name in RESTART_PARTS)
    size = float(c.checkpoint_bytes)
    found = []
    levels = c.levels()
    reads: list[float | bool | None] = []
    holders: list[Any] = []  # what states each level's tier costs (docs/model.md §17): none on memory
    if c.has_memory:
        reads.append(None if c.memory_read_bandwidth is None else float(c.memory_read_bandwidth))
        holders.append(None)
    for stated, tier in zip(s.middle, c.middle, strict=True):
        read = tier.read_bandwidth
        reads.append(float(read) if stated.restart_s is None and read is not None else None)
        holders.append(tier)
    reads.append(float(c.read_bandwidth) if c.read_bandwidth is not None else (s.restart_s is None))
    holders.append(c)
    for level, read, holder in zip(levels, reads, holders, strict=True):
        if read is None or read is False:
            continue
        bandwidth = None if read is True else float(read)
        reload = float(moved(holder, size, bandwidth)) if bandwidth is not None else 0.0
        found.append((level.name, Parts(detect, reschedule, reload, warmup, bandwidth, float(level.restart_s))))
    return tuple(found)


def _counted_band(scenario: Scenario) -> tuple[float, float | None] | None:
    """The exact 95 % χ² interval of M = T/n from n failures in a window T (docs/model.md §9.1);
    with none seen, only the lower bound T/ln 20. None unless both are stated and valid."""
    from ckptcalc.model.numeric import mtbf_interval

    window, count = scenario.window_s, scenario.failures
    if window is None or count is None or not (window > 0 and count >= 0 and float(count).is_integer()):
        return None
    if not math.isfinite(window * count):
        return None
    return mtbf_interval(int(count), window)


def _band(scenario: Scenario, mtbf: float, source: str) -> tuple[float, float | None] | None:
    """The MTBF's 95 % interval: the stated one (checked), or the exact χ² one of failures in a window."""
    stated = scenario.mtbf_ci95
    if source in ("failures", "failures_bound"):
        if stated is not None:
            raise InputError(
                "{failures}/{window} give the interval themselves; drop {mtbf_ci}", where=scenario.where(BAND)
            )
        return _counted_band(scenario)
    if stated is None:
        return None
    low, high = stated
    where = scenario.where(BAND)
    if high is None:
        if not low <= mtbf * (1.0 + 1e-12):
            raise InputError(
                f"the bound {units.format_duration(low)} lies above the MTBF {units.format_duration(mtbf)}",
                where=where,
            )
        return low, None
    for value in (low, high):
        if not (math.isfinite(value) and SMALLEST <= value <= LARGEST):
            raise InputError(f"{value:g} s is out of range ({SMALLEST:g} to {LARGEST:g} s)", where=where)
    if not low < high:
        raise InputError(
            f"the low end {units.format_duration(low)} must lie below the high end {units.format_duration(high)}",
            where=where,
        )
    if not low * (1.0 - 1e-12) <= mtbf <= high * (1.0 + 1e-12):
        raise InputError(
            f"{units.format_duration(low)} to {units.format_duration(high)} does not contain"
            f" the MTBF {units.format_duration(mtbf)}",
            where=where,
        )
    return low, high


def check_stated(values: dict[str, float]) -> dict[str, float]:
    """``values`` (SI, by field name) checked by the rules every model input meets (:func:`_check_ranges`):
    the one path for the inputs a log command also takes (``analyze``'s window, GPUs, groups)."""
    _check_ranges(Scenario(), values)
    return values


def _check_ranges(scenario: Scenario, values: dict[str, float]) -> None:
    """Every stated value in its range: shares in theirs, counts whole, the rest positive."""
    for name, value in values.items():
        if registry.check(scenario.where, name, value):
            continue  # a mechanism's input, checked in its home
        if name == "keep":
            _check_keep(scenario, name, value)
        elif name in ("discard", "replica_survival"):  # all lost at 1: open at the top
            if not (math.isfinite(value) and 0 <= value < 1):
                raise InputError(f"must be a share in [0, 1), got {value:g}", where=scenario.where(name))
        elif name == "max_busy":
            _check_busy(scenario, name, value)
        elif name in RESTART_PARTS:
            if not (math.isfinite(value) and (value == 0 or SMALLEST <= value <= LARGEST)):
                raise InputError(
                    f"must be 0 or a duration from {SMALLEST:g} to {LARGEST:g} s, got {value:g} s",
                    where=scenario.where(name),
                )
        elif name == "shape":
            if not (math.isfinite(value) and SHAPES[0] <= value <= SHAPES[1]):
                raise InputError(
                    f"must lie between {SHAPES[0]:g} and {SHAPES[1]:g}, got {value:g}", where=scenario.where(name)
                )
        elif name == "failures" and value == 0:
            continue  # no failure seen: the window then gives a lower bound on M
        else:
            _check_positive(scenario, name, value)
    for name in ("gpus", "failures"):
        if name in values and not float(values[name]).is_integer():
            raise InputError(f"must be a whole number, got {values[name]:g}", where=scenario.where(name))


def _size(scenario: Scenario) -> float:
    if scenario.checkpoint_bytes is not None:
        return scenario.checkpoint_bytes
    if scenario.params is not None:
        return scenario.params * (scenario.bytes_per_param or DEFAULT_BYTES_PER_PARAM)
    raise InputError("no checkpoint size: give {params} or {size}", where="size")


def _check_levels(scenario: Scenario, values: dict[str, float]) -> None:
    """An in-memory level is stated whole or not at all; a snapshot must be faster than storage."""
    if scenario.replica_survival is None:
        for name in ("memory_bandwidth", "memory_restart_s", "memory_read_bandwidth", "memory_interval_s"):
            if name in values:
                raise InputError("needs {replica_survival} (the in-memory level)", where=scenario.where(name))
    else:
        for name in ("memory_bandwidth", "memory_restart_s"):
            if name == "memory_restart_s" and "memory_read_bandwidth" in values:
                continue  # the memory restart from its parts
            if name not in values:
                needed = BY_NAME[name].public
                raise InputError(f"an in-memory level needs {{{needed}}} too", where=scenario.where("replica_survival"))
    snapshot, bandwidth = scenario.snapshot_bandwidth, scenario.bandwidth or 0.0
    if snapshot is not None and _at_scale(scenario, "snapshot_bandwidth") <= _at_scale(scenario, "bandwidth"):
        raise InputError(
            f"snapshot bandwidth {_rate_echo(scenario, 'snapshot_bandwidth', snapshot)} is not above the storage"
            f" bandwidth {_rate_echo(scenario, 'bandwidth', bandwidth)}: asynchronous would be no faster"
            + _per_gpu_hint(scenario, "snapshot_bandwidth", snapshot),
            where=scenario.where("snapshot_bandwidth"),
        )


def _at_scale(scenario: Scenario, name: str) -> float:
    """A stated rate as the model takes it (0 if unstated): per GPU times the GPU count (known by now)."""
    value = getattr(scenario, name) or 0.0
    return value * (scenario.gpus or 1.0) if name in scenario.per_gpu else value


def _check_persist(scenario: Scenario, config: Config) -> None:
    """A storage snapshot must be durable before the next starts: the storage interval (a whole
    number of memory intervals, with a memory level) is at least the persist time."""
    if not config.is_async or scenario.interval_s is None:
        return
    storage = scenario.interval_s
    given = [scenario.memory_interval_s, *(t.interval_s for t in scenario.middle), storage]
    if all(g is not None for g in given[:-1]):
        # Each interval a whole multiple of the one below, as the model rounds them.
        below = float(given[0] or storage)
        for interval in given[1:]:
            below *= max(1.0, float(round(float(interval or below) / below)))
        storage = below
    if storage < config.write_s:
        raise InputError(
            f"interval {units.format_duration(storage)} is shorter than the persist time"
            f" {units.format_duration(config.write_s)}: a checkpoint cannot start before the last is durable",
            where=scenario.where("interval_s"),
        )


# ------------------------------------------------------------------ storage (docs/model.md §17)


def _check_busy(scenario: Scenario, name: str, value: float) -> None:
    """The busy share warned above, in (0, 1): at 1 a schedule cannot run."""
    if not (math.isfinite(value) and 0 < value < 1):
        raise InputError(f"must be a share in (0, 1), got {value:g}", where=scenario.where(name))


def _with_storage(scenario: Scenario, config: Config) -> Config:
    """Every registered mechanism's inputs, checked in its home."""
    resolved: Config = registry.resolve(scenario, config)
    return resolved


# ------------------------------------------------------ failure classes and retention (docs/model.md §16)


def _check_keep(scenario: Scenario, name: str, value: float) -> None:
    """The newest checkpoints kept: a whole count from 1."""
    if not (math.isfinite(value) and float(value).is_integer() and 1 <= value <= LARGEST):
        raise InputError(
            f"must be a whole number of checkpoints from 1, got {value:g} (the newest checkpoint is always kept)",
            where=scenario.where(name),
        )


def _with_classes(scenario: Scenario, config: Config) -> tuple[Config, tuple[tuple[str, Any], ...]]:
    """The configuration with every failure class's inputs (checked in its home), the retention and the
    run's length, and what each class found beside its inputs (the 95 % band of a rate seen in a window)."""
    found: Config
    found, classes = registry.resolve_classes(scenario, config, units.format_duration)
    found = found.replace(keep=scenario.keep, work_s=scenario.work_s)
    from ckptcalc.model import storage

    try:
        storage.kept(found)  # a retention limit that holds no checkpoint, named where it was given
    except InputError as error:
        raise InputError(error.template, where=scenario.where(error.where or "keep")) from None
    return found, classes
