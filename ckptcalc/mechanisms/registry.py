"""The registered mechanisms, and the core's one way to ask all of them (docs/architecture.md).

:data:`REGISTRY` lists every mechanism that lives in a home of its own; the functions below fold a
hook over it, so that the model, the inputs and the documents iterate over mechanisms and name
none. Tier costs apply in the order listed. ``tests/test_mechanisms.py`` runs every listed mechanism
through the same contract checks.

>>> [m.name for m in REGISTRY]
['slowdown', 'limits', 'compression', 'elastic']
"""

from __future__ import annotations

from typing import Any

from ckptcalc.mechanisms import compression, limits, slowdown
from ckptcalc.mechanisms.base import Input, Mechanism, Num, TierKey
from ckptcalc.mechanisms.elastic import home as elastic

REGISTRY: tuple[Mechanism, ...] = (slowdown.MECHANISM, limits.MECHANISM, compression.MECHANISM, elastic.MECHANISM)


def inputs() -> tuple[Input, ...]:
    """Every registered mechanism's FIELDS rows."""
    return tuple(row for m in REGISTRY for row in m.inputs)


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
    return tuple(key for m in REGISTRY for key in m.levers)


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


def sweeps() -> tuple[tuple[str, str, str], ...]:
    """(flag, column, axis label) of every mechanism's input a sweep varies in one numpy pass."""
    return tuple((row.flag, row.column or row.name, row.axis) for row in inputs() if row.axis)


def takes_over(config: Any) -> bool:
    """Whether a mechanism evaluates ``config`` itself (the core's closed forms and subsets do not apply)."""
    return any(m.takes_over(config) for m in REGISTRY)


def evaluated(config: Any, core: Any) -> Any:
    """The result of the first mechanism that takes ``config``'s evaluation over, None for none."""
    for m in REGISTRY:
        found = m.evaluated(config, core)
        if found is not None:
            return found
    return None


def effective_at(config: Any, schedule: Any, mtbf_s: float, core: Any) -> float | None:
    for m in REGISTRY:
        found = m.effective_at(config, schedule, mtbf_s, core)
        if found is not None:
            return found
    return None


def unneeded(config: Any, core: Any) -> bool | None:
    for m in REGISTRY:
        found = m.unneeded(config, core)
        if found is not None:
            return found
    return None


def approximate(config: Any) -> bool:
    return any(m.approximate(config) for m in REGISTRY)


def model_label(config: Any) -> str | None:
    return next((label for m in REGISTRY if (label := m.model_label(config)) is not None), None)


def assumed_levers(config: Any, assume: Any) -> list[tuple[str, Any]]:
    return [lever for m in REGISTRY for lever in m.assumed_levers(config, assume)]


def refuse_sweep(over: str, low: float, high: float, config: Any, shown: Any) -> None:
    for m in REGISTRY:
        m.refuse_sweep(over, low, high, config, shown)


def own_parts(result: Any) -> dict[str, dict[str, Any] | None]:
    """Every running share's part of a result's document, by the mechanism's name."""
    return {m.name: m.own_part(result) for m in REGISTRY if m.own_schema() is not None}


def own_schemas() -> dict[str, Any]:
    return {m.name: schema for m in REGISTRY if (schema := m.own_schema()) is not None}


def check_work(config: Any, work_s: float, scenario: Any) -> None:
    for m in REGISTRY:
        m.check_work(config, work_s, scenario)


def log_inputs() -> tuple[Input, ...]:
    return tuple(row for m in REGISTRY for row in m.log_inputs())


def log_values(given: dict[str, Any], number: Any) -> dict[str, float]:
    return {key: value for m in REGISTRY for key, value in m.log_values(given, number).items()}


def config_rows(config: Any) -> list[tuple[str, str, Any, str]]:
    return [row for m in REGISTRY for row in m.config_rows(config)]


def split_rows(result: Any) -> list[tuple[str, Any, str]]:
    return [row for m in REGISTRY for row in m.split_rows(result)]


def result_lines(result: Any, form: Any) -> list[str]:
    return [line for m in REGISTRY for line in m.result_lines(result, form)]


def stated_values(config: Any) -> dict[str, float]:
    return {key: value for m in REGISTRY for key, value in m.stated_values(config).items()}


def measured_entries(analysis: Any) -> dict[str, dict[str, Any] | None]:
    return dict(part for m in REGISTRY if (part := m.measured_entry(analysis)) is not None)


def measured_entry_schemas() -> dict[str, Any]:
    return dict(part for m in REGISTRY if (part := m.measured_entry_schema()) is not None)


def measured_entry_rows(measured: dict[str, Any], form: Any) -> list[tuple[str, str, str]]:
    return [row for m in REGISTRY for row in m.measured_entry_rows(measured, form)]


def from_measured(config: Any, analysis: Any) -> tuple[Any, str | None]:
    """``config`` with every mechanism's measured inputs, or (None, the first reason one cannot be built)."""
    for m in REGISTRY:
        found = m.from_measured(config, analysis)
        if found is not None:
            config, reason = found
            if config is None:
                return None, reason
    return config, None


def report_lines(document: dict[str, Any], form: Any) -> list[str]:
    return [line for m in REGISTRY for line in m.report_lines(document, form)]


def break_even(key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
    """Where the lever ``key`` on ``config`` starts to pay, from the mechanism that owns it (None: no cost)."""
    return next((found for m in REGISTRY if (found := m.break_even(key, config, gpus)) is not None), None)
