"""The registered mechanisms, and the core's one way to ask all of them (docs/architecture.md).

:data:`REGISTRY` lists every mechanism that lives in a home of its own; the functions below fold a
hook over it, so that the model, the inputs and the documents iterate over mechanisms and name
none. Tier costs apply in the order listed. ``tests/test_mechanisms.py`` runs every listed mechanism
through the same contract checks.

>>> [m.name for m in REGISTRY]
['slowdown', 'limits', 'compression', 'spares', 'growth']
"""

from __future__ import annotations

from typing import Any

from ckptcalc.mechanisms import compression, growth, limits, slowdown, spares
from ckptcalc.mechanisms.base import Input, Mechanism, Num, TierKey

REGISTRY: tuple[Mechanism, ...] = (
    slowdown.MECHANISM,
    limits.MECHANISM,
    compression.MECHANISM,
    spares.MECHANISM,
    growth.MECHANISM,
)


def inputs() -> tuple[Input, ...]:
    """Every registered mechanism's FIELDS rows (the job's inputs it brings first)."""
    return tuple(row for m in REGISTRY for row in (*m.job_inputs, *m.inputs))


def fields() -> tuple[str, ...]:
    """The field names of every mechanism's inputs: attributes of the scenario and the model's configuration."""
    return tuple(row.name for row in inputs())


def tier_fields() -> tuple[str, ...]:
    """The keys a middle tier carries for a mechanism: attributes of the stated and the model's tiers."""
    return tuple(key.key for key in tier_keys() if key.middle)


def tier_keys() -> tuple[TierKey, ...]:
    """Every key a ``[[levels]]`` tier may state for a mechanism."""
    return tuple(key for m in REGISTRY for key in m.tier_keys)


def names() -> frozenset[str]:
    """The field names of every mechanism's inputs."""
    return frozenset(row.name for row in inputs())


def moved(holder: Any, size_bytes: Num, bandwidth: Num) -> Num:
    """Time to move one checkpoint over ``bandwidth`` to or from ``holder``'s tier: size / B, changed by
    each tier cost in turn (``holder`` None: a tier no mechanism applies to)."""
    time = size_bytes / bandwidth
    for m in REGISTRY:
        time = m.moved(holder, size_bytes, bandwidth, time)
    return time


def stored(holder: Any, size_bytes: Num) -> Num:
    """The bytes one checkpoint takes on ``holder``'s tier."""
    for m in REGISTRY:
        size_bytes = m.stored(holder, size_bytes)
    return size_bytes


def top_level(config: Any, stall_s: Num, lag_s: Num) -> tuple[Num, Num, Num]:
    """The top tier's (stall, lag, slowed part of the stall) after every tier cost."""
    slowed: Num = 0.0
    for m in REGISTRY:
        stall_s, lag_s, slowed = m.top_level(config, stall_s, lag_s, slowed)
    return stall_s, lag_s, slowed


def top_bounds(config: Any, size_bytes: Num) -> list[tuple[Num, str, Num]]:
    """Every bound on the top interval: (shortest allowed, caveat kind, caveat value)."""
    return [bound for m in REGISTRY if (bound := m.top_bound(config, size_bytes)) is not None]


def check_schedule(config: Any, size_bytes: Num, interval_s: Num, arrays: Any) -> None:
    """Refuse a given top interval that a mechanism does not allow."""
    for m in REGISTRY:
        m.check_schedule(config, size_bytes, interval_s, arrays)


def kept(config: Any, size_bytes: Num, arrays: Any) -> Any:
    """The newest storage checkpoints kept: ``config.keep`` (None: all), cut by each mechanism in turn."""
    keep = config.keep
    for m in REGISTRY:
        keep = m.kept(config, size_bytes, keep, arrays)
    return keep


def load_parts(config: Any, result: Any, evaluate: Any, keep: float | None) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.load_parts(config, result, evaluate, keep))


def load_schema() -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.load_schema())


def load_lines(found: dict[str, Any], size: Any) -> tuple[tuple[str, str], ...]:
    return tuple(line for m in REGISTRY for line in m.load_lines(found, size))


def placed(base: dict[str, Any], parts: tuple[tuple[str, dict[str, Any]], ...]) -> dict[str, Any]:
    """``base`` with each part's keys inserted after the key it names, in order."""
    found = dict(base)
    for anchor, entries in parts:
        keys = list(found)
        at = keys.index(anchor) + 1
        found = {**{k: found[k] for k in keys[:at]}, **entries, **{k: found[k] for k in keys[at:]}}
    return found


def slowed_share(result: Any) -> float:
    """The share of elapsed time ``result`` loses to training slowed by the tier costs."""
    return sum((m.slowed_share(result) for m in REGISTRY), 0.0)


def levers(config: Any, gpus: float | None) -> list[tuple[str, Any]]:
    """Every mechanism's levers for ``config``: (key, changed configuration)."""
    return [lever for m in REGISTRY for lever in m.lever(config, gpus)]


def lever_keys() -> tuple[str, ...]:
    return tuple(key for m in REGISTRY if m.kind != "running_share" for key in m.levers)


def lever_name(key: str, changed: Any, rate: Any) -> str | None:
    """The words of a mechanism's lever ``key``, None when no mechanism owns it."""
    for m in REGISTRY:
        words = m.lever_name(key, changed, rate)
        if words is not None:
            return words
    return None


def check(where: Any, name: str, value: float) -> bool:
    """Whether a mechanism owns (and has checked) the stated input ``name``."""
    return any(m.check(where, name, value) for m in REGISTRY)


def resolve(scenario: Any, config: Any) -> Any:
    for m in REGISTRY:
        config = m.resolve(scenario, config)
    return config


def check_tier(values: dict[str, Any], where: str) -> None:
    for m in REGISTRY:
        m.check_tier(values, where)


def echo(config: Any) -> dict[str, float | None]:
    return {key: value for m in REGISTRY for key, value in m.echo(config).items()}


def tier_echo(holder: Any) -> dict[str, float | None]:
    return {key: value for m in REGISTRY for key, value in m.tier_echo(holder).items()}


def input_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.input_schema().items()}


def tier_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.tier_schema().items()}


# ------------------------------------------------------------------ running shares (MODEL.md §17)


def panels() -> tuple[tuple[str, str], ...]:
    """The ``--help`` panel of each mechanism's preset section."""
    return tuple(panel for m in REGISTRY for panel in m.panels)


def unit_parsers(count: Any) -> dict[str, Any]:
    """The parsers of the mechanisms' own unit kinds."""
    return {kind: parse for m in REGISTRY for kind, parse in m.unit_parsers(count).items()}


def unit_shown(kind: str) -> str:
    """The core unit kind a value of ``kind`` is shown as (``kind`` itself for a core kind)."""
    return next((shown for m in REGISTRY if (shown := m.unit_shown(kind)) is not None), kind)


def written(kind: str, value: float) -> str | None:
    return next((text for m in REGISTRY if (text := m.written(kind, value)) is not None), None)


def running(config: Any, mtbf_s: Num) -> Any:
    """The running share of ``config`` at ``mtbf_s`` (None when no running share applies)."""
    return next((found for m in REGISTRY if (found := m.running(config, mtbf_s)) is not None), None)


def without_running(config: Any) -> Any:
    """``config`` without its running shares."""
    for m in REGISTRY:
        if m.kind == "running_share":
            config = m.without(config)
    return config


def approximate(config: Any) -> bool:
    return any(m.approximate(config) for m in REGISTRY)


def assumed(scenario: Any) -> dict[str, Any]:
    """What each mechanism's levers assume of the stated ``scenario``, by mechanism name."""
    return {m.name: m.assumed(scenario) for m in REGISTRY}


def running_levers(
    config: Any, gpus: float | None, base: float, evaluate: Any, assumed: dict[str, Any] | None
) -> list[tuple[str, float, Any, float | None, float]]:
    return [lever for m in REGISTRY for lever in m.running_levers(config, gpus, base, evaluate, assumed)]


def lever_words(key: str, changed: Any, value: float | None, show: dict[str, Any]) -> str | None:
    return next((words for m in REGISTRY if (words := m.lever_words(key, changed, value, show)) is not None), None)


def running_lever_keys() -> tuple[str, ...]:
    """The running shares' lever keys, where the job lacks each and where it has it."""
    return tuple(key for m in REGISTRY if m.kind == "running_share" for key in (*m.levers, *m.levers_with))


def break_even(key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
    """Where the lever ``key`` (its changed configuration ``config``) starts to pay; None: no cost."""
    return next((found for m in REGISTRY if (found := m.break_even(key, config, gpus)) is not None), None)


def sweeps() -> tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...]:
    """Each mechanism's swept inputs, with the flag they follow in ``sweep --over``."""
    return tuple((m.sweeps_after, m.sweeps) for m in REGISTRY if m.sweeps)


def sweep_range(over: str, result: Any) -> tuple[float, float] | None:
    return next((found for m in REGISTRY if (found := m.sweep_range(over, result)) is not None), None)


def check_sweep(over: str, config: Any, low: float, high: float, where: str) -> bool:
    return any(m.check_sweep(over, config, low, high, where) for m in REGISTRY)


def sweep_whole(over: str) -> tuple[bool, float] | None:
    return next((found for m in REGISTRY if (found := m.sweep_whole(over)) is not None), None)


def sweep_columns(result: Any) -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.sweep_columns(result).items()}


def sweep_schema(fractions: Any) -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.sweep_schema(fractions).items()}


def result_parts(job: Any, result: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.result_parts(job, result))


def result_schema(parts: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.result_schema(parts))


def input_rows(job: Any, show: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [row for m in REGISTRY for row in m.input_rows(job, show)]


def figure_tables(document: dict[str, Any], show: dict[str, Any]) -> list[tuple[str, str, list[Any]]]:
    return [table for m in REGISTRY for table in m.figure_tables(document, show)]


def simulated() -> tuple[Mechanism, ...]:
    """The mechanisms the simulations tell apart by name."""
    return tuple(m for m in REGISTRY if m.simulated_name)


def simulated_pool(config: Any) -> Any:
    return next((found for m in REGISTRY if (found := m.simulated_pool(config)) is not None), None)


def run_waits(config: Any) -> Any:
    return next((found for m in REGISTRY if (found := m.run_waits(config)) is not None), None)


def simulated_parts(outcome: Any, result: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.simulated_parts(outcome, result))


def simulated_schema(parts: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.simulated_schema(parts))


def simulated_lines(document: dict[str, Any], show: dict[str, Any]) -> list[str]:
    return [line for m in REGISTRY for line in m.simulated_lines(document, show)]


# ------------------------------------------------------------------ scale (MODEL.md §19)


def at_gpus(job: Any, config: Any, gpus: Num) -> dict[str, Any]:
    """What changes in ``config`` when the job runs on ``gpus`` GPUs, beyond the MTBF and per-GPU rates."""
    return {key: value for m in REGISTRY for key, value in m.at_gpus(job, config, gpus).items()}


def scale_parts(job: Any, result: Any, at_gpus: Any) -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.scale_parts(job, result, at_gpus).items()}


def scale_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.scale_schema().items()}


def sweep_parts(over: str, values: Any, result: Any) -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.sweep_parts(over, values, result).items()}


def sweep_peak(values: Any, columns: dict[str, Any], at: tuple[int, int], found: dict[str, Any]) -> dict[str, Any]:
    for m in REGISTRY:
        found = m.sweep_peak(values, columns, at, found)
    return found


def sweep_part_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.sweep_part_schema().items()}


def sweep_cells(over: str, values: Any, result: Any, show: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [cells for m in REGISTRY for cells in m.sweep_cells(over, values, result, show)]


def other_lever_keys() -> tuple[str, ...]:
    """Levers offered where the job has a mechanism that is not a running share."""
    return tuple(key for m in REGISTRY if m.kind != "running_share" for key in m.levers_with)
