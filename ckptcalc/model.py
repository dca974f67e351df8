"""The checkpoint model: pure arithmetic in SI units, on floats or numpy arrays.

Nothing here reads files, parses units or prints. Every function accepts plain
floats and numpy arrays alike (arrays broadcast), so a sweep of a million
points goes through the same code as a single ``optimize``; numpy is imported
only when an array is actually passed.

The general model (one or more checkpoint levels, each with a stall ``s``, a
lag ``P``, an interval ``τ``, a restart ``r`` and a share ``q`` of the
failures, at job failure interval ``M``) loses, per unit of elapsed time::

    Σ s/τ  +  Σ q·(τ/2 + P + r)/M

A single synchronous level (``s = δ``, ``P = 0``, ``q = 1``) is Young's
first-order model, δ/τ + τ/2M + r/M, smallest at τ* = √(2δM).

>>> result = evaluate(Config(checkpoint_bytes=6.48e12, bandwidth=2e12, mtbf_s=11160.0, restart_s=600.0))
>>> round(result.optimal_interval_s, 1), round(result.effective, 4), TERMS[result.dominant]
(268.9, 0.9221, 'restart')
"""

from __future__ import annotations

import math
from typing import Any, TypeAlias, TypeVar

#: A float or a numpy array of floats: every function here takes either.
Num: TypeAlias = Any

#: The three kinds of loss, in the order used for ``dominant`` indices.
TERMS: tuple[str, str, str] = ("write", "rework", "restart")

#: Above this ratio (stall or interval to MTBF) the first-order model is unreliable.
FIRST_ORDER_LIMIT = 0.05

#: Above this relative distance the Young interval is flagged as far from the exact one.
EXACT_DRIFT_LIMIT = 0.05


class Record:
    """Base of the small records here: fields in ``__slots__``, equality and repr from them.

    Cheaper to define than dataclasses or named tuples, which matters for a
    command line that starts in a fraction of a second.
    """

    __slots__: tuple[str, ...] = ()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def replace(self: _R, **changes: Any) -> _R:
        """A copy with some fields changed, like :func:`dataclasses.replace`."""
        unknown = set(changes) - set(self.__slots__)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        copy = object.__new__(type(self))
        for name in self.__slots__:
            object.__setattr__(copy, name, changes.get(name, getattr(self, name)))
        return copy


_R = TypeVar("_R", bound=Record)


def replace(record: _R, **changes: Any) -> _R:
    """A copy of ``record`` with some fields changed."""
    return record.replace(**changes)


def _scalar(*values: object) -> bool:
    return all(isinstance(v, (int, float)) for v in values)


def _lib(*values: object) -> Any:
    """``math`` for plain numbers, ``numpy`` as soon as an array is involved."""
    if _scalar(*values):
        return math
    import numpy

    return numpy


def _maximum(a: Num, b: Num) -> Num:
    if _scalar(a, b):
        return max(a, b)
    import numpy

    return numpy.maximum(a, b)


def _share(part: Num, whole: Num) -> Num:
    """part / whole, taken as 0 where ``part`` is 0 (a free checkpoint taken continuously)."""
    if _scalar(part, whole):
        return part / whole if part else 0.0
    import numpy

    with numpy.errstate(divide="ignore", invalid="ignore"):
        return numpy.where(numpy.asarray(part) == 0, 0.0, part / whole)


def _count(mask: Any) -> int:
    """How many points a boolean (scalar or array) marks."""
    if isinstance(mask, bool):
        return int(mask)
    return int(mask.sum())


# ---------------------------------------------------------------- first order


def write_time(checkpoint_bytes: Num, bandwidth: Num) -> Num:
    """Time to write a checkpoint, δ = S / B (seconds)."""
    return checkpoint_bytes / bandwidth


def young_interval(stall_s: Num, mtbf_s: Num, share: Num = 1.0) -> Num:
    """Young's first-order optimum √(2 s M / q); with ``share`` 1 this is √(2δM)."""
    return (2.0 * stall_s * mtbf_s / share) ** 0.5


def optimal_interval(stall_s: Num, lag_s: Num, mtbf_s: Num, share: Num = 1.0) -> Num:
    """Optimum of one level, bounded below by its lag: max(√(2 s M / q), P)."""
    return _maximum(young_interval(stall_s, mtbf_s, share), lag_s)


def level_loss(
    *, stall_s: Num, lag_s: Num, interval_s: Num, restart_s: Num, share: Num, mtbf_s: Num
) -> tuple[Num, Num, Num]:
    """The (write, rework, restart) shares of elapsed time lost to one level.

    write = s/τ, rework = q·(τ/2 + P)/M, restart = q·r/M.
    """
    write = _share(stall_s, interval_s)
    # Grouped so that scalar factors are combined before touching an array.
    rework = interval_s * (0.5 * share / mtbf_s)
    if not (_scalar(lag_s) and lag_s == 0):
        rework = rework + lag_s * (share / mtbf_s)
    restart = restart_s * (share / mtbf_s)
    return write, rework, restart


def first_order_loss(delta_s: Num, interval_s: Num, mtbf_s: Num, restart_s: Num) -> tuple[Num, Num, Num]:
    """The three terms of Young's model for a single synchronous level."""
    return level_loss(stall_s=delta_s, lag_s=0.0, interval_s=interval_s, restart_s=restart_s, share=1.0, mtbf_s=mtbf_s)


def dominant(write: Num, rework: Num, restart: Num) -> Any:
    """Index into :data:`TERMS` of the largest term (an int, or an int array)."""
    if _scalar(write, rework, restart):
        terms = (write, rework, restart)
        return terms.index(max(terms))
    import numpy

    # Two comparisons instead of stacking and argmax: ties go to the earlier term, as with argmax.
    index = numpy.where(rework > write, 1, 0)
    return numpy.where(restart > numpy.maximum(write, rework), 2, index)


# ------------------------------------------------------- Daly and the exact model


def daly_interval(delta_s: Num, mtbf_s: Num) -> Num:
    """Daly's higher-order optimum (2006, eq. 37).

    τ_D = √(2δM)·(1 + √x/3 + x/9) − δ with x = δ/2M, while δ < 2M; M otherwise.
    """
    x = delta_s / (2.0 * mtbf_s)
    series = (2.0 * delta_s * mtbf_s) ** 0.5 * (1.0 + x**0.5 / 3.0 + x / 9.0) - delta_s
    if _scalar(delta_s, mtbf_s):
        return series if x < 1.0 else mtbf_s
    import numpy

    return numpy.where(x < 1.0, series, mtbf_s + 0.0 * x)


def _excess(t: Num, lib: Any) -> Num:
    """t − 1 + e^{−t}, to full relative precision even for tiny t (a series below 0.1)."""
    series = t * t / 2.0
    horner = 1.0 - t / 12.0
    for k in range(11, 2, -1):
        horner = 1.0 - t / k * horner
    series = series * horner
    direct = t + lib.expm1(-t)
    if lib is math:
        return series if t < 0.1 else direct
    return lib.where(t < 0.1, series, direct)


def lambert_w0_plus_one(eps: Num) -> Num:
    """1 + W₀(−e^{−(1+ε)}) for ε > 0, to full relative precision.

    Writing 1 + W = 1 − e^{−t}, the defining equation W·e^W = −e^{−1−ε} becomes
    t − 1 + e^{−t} = ε: increasing and convex in t, so Newton's method started
    above the root converges to it monotonically. The start √(3ε) is above the
    root while ε < 0.3 (there t²/3 ≤ t − 1 + e^{−t}); 1 + ε always is.
    """
    lib = _lib(eps)
    if lib is math:
        if eps <= 0:
            return 0.0
        t = math.sqrt(3.0 * eps) if eps < 0.3 else 1.0 + eps
    else:
        t = lib.where(eps < 0.3, lib.sqrt(3.0 * eps), 1.0 + eps)
    for _ in range(100):
        step = (_excess(t, lib) - eps) / -lib.expm1(-t)
        t = t - step
        if lib is math:
            if abs(step) <= 1e-16 * t:
                break
        elif bool((abs(step) <= 1e-16 * t).all()):
            break
    return -lib.expm1(-t)


def exact_interval(delta_s: Num, mtbf_s: Num) -> Num:
    """Exact optimum for exponential failures: M·(1 + W₀(−e^{−(1 + δ/M)})).

    It does not depend on the restart time.
    """
    return mtbf_s * lambert_w0_plus_one(delta_s / mtbf_s)


def exact_effective(interval_s: Num, delta_s: Num, restart_s: Num, mtbf_s: Num) -> Num:
    """Share of time spent on kept work when failures are exponential and may
    strike during writes and restarts: τ / (M·e^{r/M}·(e^{(τ+δ)/M} − 1)).

    Written as (τ/M)·e^{−r/M}/(e^x − 1) with x = (τ+δ)/M, and as
    (τ/M)·e^{−r/M−x} once e^x would overflow, so it tends to 0 instead of failing.
    """
    lib = _lib(interval_s, delta_s, restart_s, mtbf_s)
    x = (interval_s + delta_s) / mtbf_s
    scale = interval_s / mtbf_s
    if lib is math:
        if x > 700.0:
            return scale * math.exp(-restart_s / mtbf_s - x)
        return scale * math.exp(-restart_s / mtbf_s) / math.expm1(x)
    safe = lib.minimum(x, 700.0)
    direct = scale * lib.exp(-restart_s / mtbf_s) / lib.expm1(safe)
    return lib.where(x > 700.0, scale * lib.exp(-restart_s / mtbf_s - x), direct)


# ------------------------------------------------------------ configurations


class Level(Record):
    """One checkpoint level: where a checkpoint goes and which failures it serves."""

    __slots__ = ("interval_s", "lag_s", "name", "restart_s", "share", "stall_s")
    name: str
    stall_s: Num
    lag_s: Num
    restart_s: Num
    share: Num
    interval_s: Num | None

    def __init__(
        self, name: str, stall_s: Num, lag_s: Num, restart_s: Num, share: Num, interval_s: Num | None = None
    ) -> None:
        self.name = name
        self.stall_s = stall_s
        self.lag_s = lag_s
        self.restart_s = restart_s
        self.share = share
        self.interval_s = interval_s

    def optimal_interval(self, mtbf_s: Num) -> Num:
        return optimal_interval(self.stall_s, self.lag_s, mtbf_s, self.share)


class Config(Record):
    """A training job's checkpointing, in SI units (fields may be numpy arrays).

    ``snapshot_bandwidth`` makes storage checkpoints asynchronous (snapshot to
    host memory, persist in the background). ``replica_survival`` with
    ``memory_bandwidth`` and ``memory_restart_s`` adds an in-memory replica level
    that serves that share of failures. Intervals left ``None`` are optimised.
    """

    __slots__ = (
        "bandwidth",
        "checkpoint_bytes",
        "interval_s",
        "memory_bandwidth",
        "memory_interval_s",
        "memory_restart_s",
        "mtbf_s",
        "replica_survival",
        "restart_s",
        "snapshot_bandwidth",
    )
    checkpoint_bytes: Num
    bandwidth: Num
    mtbf_s: Num
    restart_s: Num
    snapshot_bandwidth: Num | None
    replica_survival: Num | None
    memory_bandwidth: Num | None
    memory_restart_s: Num | None
    interval_s: Num | None
    memory_interval_s: Num | None

    def __init__(
        self,
        checkpoint_bytes: Num,
        bandwidth: Num,
        mtbf_s: Num,
        restart_s: Num,
        snapshot_bandwidth: Num | None = None,
        replica_survival: Num | None = None,
        memory_bandwidth: Num | None = None,
        memory_restart_s: Num | None = None,
        interval_s: Num | None = None,
        memory_interval_s: Num | None = None,
    ) -> None:
        self.checkpoint_bytes = checkpoint_bytes
        self.bandwidth = bandwidth
        self.mtbf_s = mtbf_s
        self.restart_s = restart_s
        self.snapshot_bandwidth = snapshot_bandwidth
        self.replica_survival = replica_survival
        self.memory_bandwidth = memory_bandwidth
        self.memory_restart_s = memory_restart_s
        self.interval_s = interval_s
        self.memory_interval_s = memory_interval_s

    @property
    def write_s(self) -> Num:
        """Time to make a checkpoint durable in storage, S / B, in every mode."""
        return write_time(self.checkpoint_bytes, self.bandwidth)

    @property
    def is_async(self) -> bool:
        return self.snapshot_bandwidth is not None

    @property
    def has_memory(self) -> bool:
        return self.replica_survival is not None

    @property
    def is_single_sync(self) -> bool:
        return not (self.is_async or self.has_memory)

    def levels(self) -> tuple[Level, ...]:
        """The levels of MODEL.md §4, memory first when there is one."""
        levels: list[Level] = []
        storage_share: Num = 1.0
        if self.replica_survival is not None:
            assert self.memory_bandwidth is not None and self.memory_restart_s is not None
            levels.append(
                Level(
                    name="memory",
                    stall_s=write_time(self.checkpoint_bytes, self.memory_bandwidth),
                    lag_s=0.0,
                    restart_s=self.memory_restart_s,
                    share=self.replica_survival,
                    interval_s=self.memory_interval_s,
                )
            )
            storage_share = 1.0 - self.replica_survival
        if self.snapshot_bandwidth is not None:
            stall, lag = write_time(self.checkpoint_bytes, self.snapshot_bandwidth), self.write_s
        else:
            stall, lag = self.write_s, 0.0
        levels.append(
            Level(
                name="storage",
                stall_s=stall,
                lag_s=lag,
                restart_s=self.restart_s,
                share=storage_share,
                interval_s=self.interval_s,
            )
        )
        return tuple(levels)

    def optimal(self) -> Config:
        """The same configuration with every interval left to the optimiser."""
        return self.replace(interval_s=None, memory_interval_s=None)


class Caveat(Record):
    """Something the user should know about a result; ``render`` words it.

    kinds: ``first_order_stall`` / ``first_order_interval`` (ratio to MTBF
    above :data:`FIRST_ORDER_LIMIT`), ``loss_clamped`` (loss ≥ 1),
    ``exact_drift`` (Young's interval more than :data:`EXACT_DRIFT_LIMIT` from
    the exact one), ``lag_bound`` (the optimum is held up by the persist time),
    ``no_closed_form`` (async or multi-level: simulation is the check).
    ``value`` is the worst ratio seen; ``points`` how many points of a sweep it affects.
    """

    __slots__ = ("kind", "level", "points", "value")
    kind: str
    level: str | None
    value: float | None
    points: int

    def __init__(self, kind: str, level: str | None = None, value: float | None = None, points: int = 1) -> None:
        self.kind = kind
        self.level = level
        self.value = value
        self.points = points


class LevelResult(Record):
    __slots__ = ("interval_s", "level", "optimal_interval_s", "restart", "rework", "write")
    level: Level
    interval_s: Num
    optimal_interval_s: Num
    write: Num
    rework: Num
    restart: Num

    def __init__(
        self, level: Level, interval_s: Num, optimal_interval_s: Num, write: Num, rework: Num, restart: Num
    ) -> None:
        self.level = level
        self.interval_s = interval_s
        self.optimal_interval_s = optimal_interval_s
        self.write = write
        self.rework = rework
        self.restart = restart

    @property
    def loss(self) -> Num:
        return self.write + self.rework + self.restart


class Result(Record):
    """Loss, effective time and intervals for one configuration (or a grid)."""

    __slots__ = (
        "caveats",
        "config",
        "daly_interval_s",
        "dominant",
        "effective",
        "exact_interval_s",
        "levels",
        "restart",
        "rework",
        "total",
        "write",
    )
    config: Config
    levels: tuple[LevelResult, ...]
    write: Num
    rework: Num
    restart: Num
    total: Num
    effective: Num
    dominant: Any
    daly_interval_s: Num | None
    exact_interval_s: Num | None
    caveats: tuple[Caveat, ...]

    def __init__(
        self,
        config: Config,
        levels: tuple[LevelResult, ...],
        write: Num,
        rework: Num,
        restart: Num,
        total: Num,
        effective: Num,
        dominant: Any,
        daly_interval_s: Num | None,
        exact_interval_s: Num | None,
        caveats: tuple[Caveat, ...] = (),
    ) -> None:
        self.config = config
        self.levels = levels
        self.write = write
        self.rework = rework
        self.restart = restart
        self.total = total
        self.effective = effective
        self.dominant = dominant
        self.daly_interval_s = daly_interval_s
        self.exact_interval_s = exact_interval_s
        self.caveats = caveats

    @property
    def exact_effective(self) -> Num | None:
        """Effective time at the evaluated interval under the exact model (single synchronous level)."""
        c = self.config
        if not c.is_single_sync:
            return None
        return exact_effective(self.interval_s, c.write_s, c.restart_s, c.mtbf_s)

    @property
    def storage(self) -> LevelResult:
        return self.levels[-1]

    @property
    def interval_s(self) -> Num:
        return self.storage.interval_s

    @property
    def optimal_interval_s(self) -> Num:
        return self.storage.optimal_interval_s


def _worst(ratio: Num) -> float:
    return float(ratio) if _scalar(ratio) else float(ratio.max())


def evaluate(config: Config) -> Result:
    """Evaluate ``config`` at its given intervals (optimal where none is given)."""
    mtbf = config.mtbf_s
    caveats: list[Caveat] = []
    results: list[LevelResult] = []
    for level in config.levels():
        best = level.optimal_interval(mtbf)
        interval = best if level.interval_s is None else level.interval_s
        write, rework, restart = level_loss(
            stall_s=level.stall_s,
            lag_s=level.lag_s,
            interval_s=interval,
            restart_s=level.restart_s,
            share=level.share,
            mtbf_s=mtbf,
        )
        results.append(LevelResult(level, interval, best, write, rework, restart))
        name = level.name if not config.is_single_sync else None
        for kind, quantity in (("first_order_stall", level.stall_s), ("first_order_interval", level.share * interval)):
            hits = _count(quantity > FIRST_ORDER_LIMIT * mtbf)
            if hits:
                caveats.append(Caveat(kind, name, _worst(quantity / mtbf), hits))
        if level.interval_s is None:
            young = young_interval(level.stall_s, mtbf, level.share)
            bound = _count((level.lag_s > 0) & (level.lag_s >= young))
            if bound:
                caveats.append(Caveat("lag_bound", level.name, None, bound))

    write, rework, restart = results[0].write, results[0].rework, results[0].restart
    for extra in results[1:]:
        write, rework, restart = write + extra.write, rework + extra.rework, restart + extra.restart
    total = write + rework + restart
    clamped = _count(total >= 1.0)
    if clamped:
        caveats.append(Caveat("loss_clamped", None, _worst(total), clamped))
    effective = _maximum(1.0 - total, 0.0)

    daly = exact = None
    if config.is_single_sync:
        delta = config.write_s
        daly = daly_interval(delta, mtbf)
        exact = exact_interval(delta, mtbf)
        drift = abs(results[0].optimal_interval_s - exact) / exact
        hits = _count(drift > EXACT_DRIFT_LIMIT)
        if hits:
            caveats.append(Caveat("exact_drift", None, _worst(drift), hits))
    else:
        caveats.append(Caveat("no_closed_form"))

    return Result(
        config=config,
        levels=tuple(results),
        write=write,
        rework=rework,
        restart=restart,
        total=total,
        effective=effective,
        dominant=dominant(write, rework, restart),
        daly_interval_s=daly,
        exact_interval_s=exact,
        caveats=tuple(caveats),
    )


def interval_comparison(config: Config) -> list[tuple[str, float, float]] | None:
    """(name, interval, exact effective time) for Young's, Daly's and the exact
    optimum of a single synchronous level; ``None`` when no closed form exists."""
    if not config.is_single_sync:
        return None
    delta, mtbf, restart = config.write_s, config.mtbf_s, config.restart_s
    rows = [
        ("young", young_interval(delta, mtbf)),
        ("daly", daly_interval(delta, mtbf)),
        ("exact", exact_interval(delta, mtbf)),
    ]
    return [(name, tau, exact_effective(tau, delta, restart, mtbf)) for name, tau in rows]
