"""The one table of inputs: every input's unit kind, command-line flag, preset key and sweep column.

:data:`FIELDS` drives the flags of every model command, the preset loader and
writer, ``--what-if``, the API's keywords and ``sweep --over``; the lookups
below find a field by its attribute name, its flag or its public (API) name.
"""

from __future__ import annotations

from collections.abc import Callable

from ckptcalc.errors import UnitError
from ckptcalc.inputs import units
from ckptcalc.mechanisms import registry
from ckptcalc.mechanisms.base import Input
from ckptcalc.records import Record


class Field(Record):
    """How one input is written on the command line and in a preset, and how a sweep varies it.

    ``sweep`` is the input's column name in sweep JSON and CSV (SI units);
    ``axis`` labels a plot's x axis.
    """

    name: str  # attribute of Scenario and Config (SI)
    kind: str  # size, rate, duration, count, fraction, number
    flag: str  # command-line option, also the --what-if and --over key
    section: str  # preset TOML table
    key: str  # key inside that table
    help: str
    sweep: str | None = None
    axis: str | None = None

    @property
    def path(self) -> str:
        return f"{self.section}.{self.key}"

    @property
    def public(self) -> str:
        """The name the Python API takes and errors use: the flag with underscores (``memory_bw``)."""
        return self.flag.replace("-", "_")


_CORE: tuple[Field, ...] = (
    Field("params", "count", "params", "checkpoint", "params", "Model parameters, e.g. 405e9, 405B, 70b."),
    Field(
        "bytes_per_param",
        "number",
        "bytes-per-param",
        "checkpoint",
        "bytes_per_param",
        "Bytes of checkpointed state per parameter (default: 16).",
    ),
    Field(
        "checkpoint_bytes",
        "size",
        "size",
        "checkpoint",
        "size",
        "Checkpoint size instead of params, e.g. 6.5TB, 500GiB.",
    ),
    Field(
        "bandwidth",
        "rate",
        "bw",
        "storage",
        "bandwidth",
        "Aggregate storage write bandwidth, e.g. 2TB/s, 100Gbps; per GPU: 1GB/s/gpu.",
    ),
    Field(
        "snapshot_bandwidth",
        "rate",
        "snapshot-bw",
        "storage",
        "snapshot_bandwidth",
        "Aggregate device-to-host snapshot bandwidth (per GPU: 25GB/s/gpu): makes checkpoints asynchronous.",
    ),
    Field(
        "interval_s",
        "duration",
        "interval",
        "storage",
        "interval",
        "Evaluate this storage checkpoint interval, e.g. 30min.",
    ),
    Field("mtbf_s", "duration", "mtbf", "failures", "mtbf", "Job mean time between failures, e.g. 3.1h."),
    Field(
        "gpu_mtbf_s",
        "duration",
        "gpu-mtbf",
        "failures",
        "gpu_mtbf",
        "Per-GPU mean time between failures (M = this / GPUs).",
    ),
    Field(
        "failures", "count", "failures", "failures", "count", "Failures observed in --window (M = window / failures)."
    ),
    Field("window_s", "duration", "window", "failures", "window", "Observation window for --failures, e.g. 54d."),
    Field(
        "restart_s",
        "duration",
        "restart",
        "failures",
        "restart",
        "Restart time after a failure, e.g. 10min (or give its parts: --detect, --reschedule, --read-bw, --warmup).",
    ),
    Field(
        "detect_s",
        "duration",
        "detect",
        "failures",
        "detect",
        "Restart part: time to notice a failure (hang watchdog), e.g. 15min.",
    ),
    Field(
        "reschedule_s",
        "duration",
        "reschedule",
        "failures",
        "reschedule",
        "Restart part: time to replace nodes and relaunch, e.g. 3min.",
    ),
    Field(
        "read_bandwidth",
        "rate",
        "read-bw",
        "storage",
        "read_bandwidth",
        "Restart part: aggregate storage read bandwidth; the reload is checkpoint size / this.",
    ),
    Field(
        "warmup_s",
        "duration",
        "warmup",
        "failures",
        "warmup",
        "Restart part: time from loaded to training at full speed, e.g. 2min.",
    ),
    Field(
        "shape",
        "number",
        "shape",
        "failures",
        "shape",
        "Weibull shape k of the time between failures (mean: the MTBF); below 1, failures cluster.",
    ),
    Field("gpus", "count", "gpus", "cluster", "gpus", "GPU count; alone, it rescales M holding the per-GPU rate."),
    Field(
        "replica_survival",
        "fraction",
        "replica-survival",
        "memory",
        "replica_survival",
        "Share of failures an in-memory replica survives, e.g. 0.99.",
    ),
    Field(
        "memory_bandwidth",
        "rate",
        "memory-bw",
        "memory",
        "bandwidth",
        "Aggregate bandwidth of the in-memory replica copy (per GPU: 25GB/s/gpu).",
    ),
    Field(
        "memory_restart_s",
        "duration",
        "memory-restart",
        "memory",
        "restart",
        "Restart time when recovering from memory, e.g. 1min.",
    ),
    Field(
        "memory_read_bandwidth",
        "rate",
        "memory-read-bw",
        "memory",
        "read_bandwidth",
        "Restore bandwidth from the replica: the memory restart is detect + reschedule + size / this + warmup.",
    ),
    Field(
        "memory_interval_s",
        "duration",
        "memory-interval",
        "memory",
        "interval",
        "Evaluate this in-memory checkpoint interval.",
    ),
    Field(
        "step_time_s",
        "duration",
        "step-time",
        "training",
        "step_time",
        "Training step time: intervals become whole steps.",
    ),
    Field("discard", "fraction", "discard", "training", "discard", "Share of steps later thrown away (goodput)."),
    Field(
        "max_busy",
        "fraction",
        "max-busy",
        "storage",
        "max_busy",
        "Warn when a tier's storage is busy more than this share of the time (persist / interval; default: 0.5).",
    ),
    Field("gpu_hour_cost", "number", "gpu-hour-cost", "cost", "gpu_hour", "Cost of one GPU-hour, any currency."),
    Field(
        "keep",
        "count",
        "keep",
        "retention",
        "keep",
        "Newest storage checkpoints retained (default: all), e.g. 5.",
    ),
    Field("work_s", "duration", "work", "run", "work", "Useful compute the run needs, e.g. 54d."),
)


def _assembled(core: tuple[Field, ...], rows: tuple[Input, ...]) -> tuple[Field, ...]:
    """The core's rows with each registered mechanism's inserted after the field it names and after the rows
    of mechanisms registered before it that already follow that field (docs/architecture.md)."""
    found = list(core)
    placed = set()
    for row in rows:
        anchor = row.before or row.after
        at = next((i for i, f in enumerate(found) if f.name == anchor), None)
        if at is None:
            raise ValueError(f"mechanism input {row.name} is placed by unknown field {anchor}")
        if not row.before:
            while at + 1 < len(found) and found[at + 1].name in placed:
                at += 1
        found.insert(at + (0 if row.before else 1), Field(row.name, row.kind, row.flag, row.section, row.key, row.help))
        placed.add(row.name)
    return tuple(found)


#: Every input: the core's and each registered mechanism's (ckptcalc.mechanisms.registry).
FIELDS: tuple[Field, ...] = _assembled(_CORE, registry.inputs())

#: Sweepable inputs: (flag, column name in SI units, axis label), in the order ``--over`` lists them.
_SWEEPS: tuple[tuple[str, str, str], ...] = (
    ("interval", "interval_s", "checkpoint interval"),
    ("bw", "bandwidth_bytes_per_s", "storage bandwidth"),
    ("size", "checkpoint_bytes", "checkpoint size"),
    ("params", "params", "parameters"),
    ("mtbf", "mtbf_s", "job MTBF"),
    ("restart", "restart_s", "restart time"),
    ("gpus", "gpus", "GPUs"),
    ("snapshot-bw", "snapshot_bandwidth_bytes_per_s", "snapshot bandwidth"),
    ("replica-survival", "replica_survival", "replica survival"),
    ("memory-bw", "memory_bandwidth_bytes_per_s", "memory bandwidth"),
    ("memory-restart", "memory_restart_s", "memory restart time"),
    *registry.axis_sweeps(),
)


def _with_mechanisms(core: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str, str], ...]:
    """The core's sweeps with each registered mechanism's inserted after the flag it names."""
    found = list(core)
    for after, rows in registry.sweeps():
        at = next(i for i, (flag, _, _) in enumerate(found) if flag == after) + 1
        found[at:at] = rows
    return tuple(found)


_SWEEPS = _with_mechanisms(_SWEEPS)
_SWEEP = {flag: (column, axis) for flag, column, axis in _SWEEPS}
FIELDS = tuple(f.replace(sweep=_SWEEP[f.flag][0], axis=_SWEEP[f.flag][1]) if f.flag in _SWEEP else f for f in FIELDS)

#: The inputs a sweep can vary, by flag, in the order above.
SWEEPABLE: tuple[Field, ...] = tuple(next(f for f in FIELDS if f.flag == flag) for flag, _, _ in _SWEEPS)

#: Sweep columns of the inputs above the table leaves out, where the field's name lacks the unit.
_COLUMNS = {row.name: row.column for row in registry.inputs() if row.column}


def _resolved_column(spec: Field) -> str:
    """The JSON and CSV column of an input swept point by point: its name with the unit in it."""
    if spec.kind == "rate":
        return spec.name.replace("bandwidth", "bandwidth_bytes_per_s")
    return _COLUMNS.get(spec.name, spec.name)


# Every what-if key is also a sweep's --over key: those of SWEEPABLE vary in one numpy pass, the others
# are resolved at each point (ckptcalc.inputs.grid), so they too get a column and an axis label.
FIELDS = tuple(f if f.sweep is not None else f.replace(sweep=_resolved_column(f), axis=f.flag.replace("-", " "))
               for f in FIELDS)  # fmt: skip

#: Everything ``sweep --over`` takes: SWEEPABLE, then every other input, in the order of FIELDS.
OVER_FIELDS: tuple[Field, ...] = (*SWEEPABLE, *(f for f in FIELDS if f.flag not in _SWEEP))

BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
BY_FLAG: dict[str, Field] = {f.flag: f for f in FIELDS}

PARSERS: dict[str, Callable[[str], float]] = {
    **registry.unit_parsers(units.parse_count),
    "size": units.parse_size,
    "rate": units.parse_rate,
    "duration": units.parse_duration,
    "count": units.parse_count,
    "fraction": units.parse_fraction,
    "number": units.parse_number,
}

BY_PUBLIC: dict[str, Field] = {f.public: f for f in FIELDS}


def parse_value(spec: Field, raw: str, where: str | None = None) -> float:
    """Parse ``raw`` with the unit kind of ``spec``; errors name ``where`` (its field by default).
    A rate per GPU stays a :class:`ckptcalc.inputs.units.PerGpu`, which :func:`merge` records as such."""
    try:
        value = PARSERS[spec.kind](raw)
    except UnitError as error:
        raise UnitError(error.template, where=where or spec.public) from None
    return value if isinstance(value, units.PerGpu) else float(value)
