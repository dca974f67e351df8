"""The registered mechanisms, and the core's one way to ask all of them (docs/architecture.md).

:data:`REGISTRY` lists every mechanism that lives in a home of its own; the functions below fold a
hook over it, so that the model, the inputs and the documents iterate over mechanisms and name
none. Tier costs apply in the order listed. ``tests/test_mechanisms.py`` runs every listed mechanism
through the same contract checks.

>>> [m.name for m in REGISTRY]
['recovery', 'slowdown', 'limits', 'compression', 'spares', 'elastic', 'silent', 'growth', 'stragglers']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ckptcalc.mechanisms import compression, growth, limits, recovery, slowdown, spares, stragglers
from ckptcalc.mechanisms.base import IN_PLACE, NOWHERE, CauseClass, FailureClass, Input, Mechanism, Num, TierKey
from ckptcalc.mechanisms.elastic import home as elastic
from ckptcalc.mechanisms.silent import home as silent

REGISTRY: tuple[Mechanism, ...] = (
    recovery.MECHANISM,
    slowdown.MECHANISM,
    limits.MECHANISM,
    compression.MECHANISM,
    spares.MECHANISM,
    elastic.MECHANISM,
    silent.MECHANISM,
    growth.MECHANISM,
    stragglers.MECHANISM,
)


_T = TypeVar("_T")


def _first(ask: Callable[[Mechanism], _T | None]) -> _T | None:
    """The first answer that is not None of ``ask`` over the mechanisms in order (None: none answers)."""
    return next((found for m in REGISTRY if (found := ask(m)) is not None), None)


def inputs() -> tuple[Input, ...]:
    """Every registered mechanism's FIELDS rows (the job's inputs it brings first)."""
    return tuple(row for m in REGISTRY for row in (*m.job_inputs, *m.inputs))


def fields() -> tuple[str, ...]:
    """The field names of every mechanism's inputs and of what it carries beside them: attributes of the
    scenario and the model's configuration."""
    return (*(row.name for row in inputs()), *(name for m in REGISTRY for name in m.carried_fields))


def preset_array(section: str, key: str) -> Mechanism | None:
    """The mechanism that reads a preset's array of tables ``[[section.key]]``, None for none."""
    return next((m for m in REGISTRY if (section, key) in m.preset_arrays), None)


def write_preset_arrays(scenario: Any, document: dict[str, Any], written: Any) -> dict[str, Any]:
    for m in REGISTRY:
        document = m.write_preset_array(scenario, document, written)
    return document


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
    return _first(lambda m: m.lever_name(key, changed, rate))


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


# ------------------------------------------------------------------ failure classes


def window_counts() -> tuple[str, ...]:
    """The inputs counted in a failure log's window beside the failures."""
    return tuple(name for m in REGISTRY for name in m.window_counts)


def resolve_classes(scenario: Any, config: Any, duration: Any) -> tuple[Any, tuple[tuple[str, Any], ...]]:
    """``config`` with every failure class's inputs, and what each found beside them, by mechanism name."""
    found: list[tuple[str, Any]] = []
    for m in REGISTRY:
        config, extra = m.resolve_class(scenario, config, duration)
        if extra is not None:
            found.append((m.name, extra))
    return config, tuple(found)


def present(config: Any) -> bool:
    """Whether ``config`` has any registered failure class."""
    return any(m.present(config) for m in REGISTRY)


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
    return _first(lambda m: m.written(kind, value))


def running(config: Any, mtbf_s: Num) -> Any:
    """The running share of ``config`` at ``mtbf_s`` (None when no running share applies)."""
    return _first(lambda m: m.running(config, mtbf_s))


def without_running(config: Any) -> Any:
    """``config`` without its running shares."""
    for m in REGISTRY:
        if m.kind == "running_share":
            config = m.without(config)
    return config


# ------------------------------------------------------------------ running shares (MODEL.md §17)


def axis_sweeps() -> tuple[tuple[str, str, str], ...]:
    """(flag, column, axis label) of every mechanism's input a sweep varies in one numpy pass."""
    return tuple((row.flag, row.column or row.name, row.axis) for row in inputs() if row.axis)


def takes_over(config: Any) -> bool:
    """Whether a mechanism evaluates ``config`` itself (the core's closed forms and subsets do not apply)."""
    return any(m.takes_over(config) for m in REGISTRY)


def evaluated(config: Any, core: Any) -> Any:
    """The result of the first mechanism that takes ``config``'s evaluation over, None for none."""
    return _first(lambda m: m.evaluated(config, core))


def effective_at(config: Any, schedule: Any, mtbf_s: float, core: Any) -> float | None:
    return _first(lambda m: m.effective_at(config, schedule, mtbf_s, core))


def unneeded(config: Any, core: Any) -> bool | None:
    return _first(lambda m: m.unneeded(config, core))


def approximate(config: Any) -> bool:
    return any(m.approximate(config) for m in REGISTRY)


def averaged_in_plan(config: Any) -> tuple[Mechanism, ...]:
    """The failure classes of ``config`` that ``plan``'s whole runs leave out, averaged instead."""
    return tuple(m for m in REGISTRY if m.averaged_in_plan(config))


def first_order_classes(config: Any) -> list[tuple[Num, Num, Num]]:
    return [found for m in REGISTRY if (found := m.first_order_class(config)) is not None]


def with_classes(config: Any, schedule: Any, kept: Any) -> Any:
    for m in REGISTRY:
        schedule = m.with_class(config, schedule, kept)
    return schedule


def best(config: Any, base: Any, mtbf: Num, search: Any, effective: Any) -> Any:
    """A failure class's own search for the joint optimum (the first that has one), None for the core's."""
    return _first(lambda m: m.best(config, base, mtbf, search, effective))


def summarized(config: Any, result: Any, kept: Any, caveat: Any) -> Any:
    for m in REGISTRY:
        result = m.summarized(config, result, kept, caveat)
    return result


def kept_for_good_s(config: Any) -> Num | None:
    """The work between the top tier's checkpoints kept for good (None: none kept for good)."""
    return _first(lambda m: m.kept_for_good_s(config))


def echo_parts(config: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.echo_parts(config))


def echo_schema_parts() -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.echo_schema_parts())


def placed_before(base: dict[str, Any], parts: tuple[tuple[str, dict[str, Any]], ...]) -> dict[str, Any]:
    """``base`` with each part's keys inserted before the key it names, in order."""
    found = dict(base)
    for anchor, entries in parts:
        keys = list(found)
        at = keys.index(anchor)
        found = {**{k: found[k] for k in keys[:at]}, **entries, **{k: found[k] for k in keys[at:]}}
    return found


def class_parts(job: Any, result: Any) -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.class_part(job, result).items()}


def class_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.class_schema().items()}


def part_keys() -> tuple[str, ...]:
    """The keys of the failure classes' parts of a document."""
    return tuple(key for m in REGISTRY for key in m.class_schema())


def part_rows(key: str, found: dict[str, Any], words: Any) -> list[tuple[str, str, str]]:
    for m in REGISTRY:
        rows = m.part_rows(key, found, words)
        if rows is not None:
            return rows
    raise KeyError(key)


def part_title(key: str, caption: bool = False) -> str:
    for m in REGISTRY:
        title = m.part_title(key, caption)
        if title is not None:
            return title
    raise KeyError(key)


def caveat_words(kind: str, value: float | None, below: str | None, words: Any) -> str | None:
    return _first(lambda m: m.caveat_words(kind, value, below, words))


def measured(config: Any, analysis: Any) -> Any:
    for m in REGISTRY:
        config = m.measured(config, analysis)
    return config


def measured_values(measured: dict[str, Any]) -> dict[str, float]:
    return {key: value for m in REGISTRY for key, value in m.measured_values(measured).items()}


def class_simulated_parts(found: Any, result: Any) -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.class_simulated_part(found, result).items()}


def class_simulated_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.class_simulated_schema().items()}


def class_simulated_lines(document: dict[str, Any], words: Any) -> list[str]:
    return [line for m in REGISTRY for line in m.class_simulated_lines(document, words)]


def measured_parts(analysis: Any) -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.measured_part(analysis).items()}


def measured_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.measured_schema().items()}


def measured_rows(measured: dict[str, Any], words: Any) -> list[tuple[str, str, str]]:
    return [row for m in REGISTRY for row in m.measured_rows(measured, words)]


def checked(result: Any, limit: float | None) -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.checked(result, limit).items()}


def checked_empty() -> dict[str, Any]:
    """Every failure class's part of a ``check`` row that judged nothing (a preset that failed to load)."""
    return {key: None for m in REGISTRY for key in m.checked_schema()}


def checked_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.checked_schema().items()}


def checked_words(row: dict[str, Any], words: Any) -> str:
    return "".join(m.checked_words(row, words) for m in REGISTRY)


def notes(result: Any) -> list[str]:
    return [note for m in REGISTRY for note in m.notes(result)]


def assumed(scenario: Any) -> dict[str, Any]:
    """What each mechanism's levers assume of the stated ``scenario``, by mechanism name."""
    return {m.name: m.assumed(scenario) for m in REGISTRY}


def running_levers(
    config: Any, gpus: float | None, base: float, evaluate: Any, assumed: dict[str, Any] | None
) -> list[tuple[str, float, Any, float | None, float]]:
    return [lever for m in REGISTRY for lever in m.running_levers(config, gpus, base, evaluate, assumed)]


def lever_words(key: str, changed: Any, value: float | None, show: dict[str, Any]) -> str | None:
    return _first(lambda m: m.lever_words(key, changed, value, show))


def running_lever_keys() -> tuple[str, ...]:
    """The running shares' lever keys, where the job lacks each and where it has it."""
    return tuple(key for m in REGISTRY if m.kind == "running_share" for key in (*m.levers, *m.levers_with))


def break_even(key: str, config: Any, gpus: float | None) -> tuple[str, float, str] | None:
    """Where the lever ``key`` (its changed configuration ``config``) starts to pay; None: no cost."""
    return _first(lambda m: m.break_even(key, config, gpus))


def break_even_words(key: str) -> tuple[str, str] | None:
    """How a lever's break-even on the input ``key`` is worded: (words before "pays", after the value)."""
    return next(((before, after) for m in REGISTRY for name, before, after in m.break_even_words if name == key), None)


def sweeps() -> tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...]:
    """Each mechanism's swept inputs, with the flag they follow in ``sweep --over``."""
    return tuple((m.sweeps_after, m.sweeps) for m in REGISTRY if m.sweeps)


def sweep_range(over: str, result: Any) -> tuple[float, float] | None:
    return _first(lambda m: m.sweep_range(over, result))


def check_sweep(over: str, config: Any, low: float, high: float, where: str) -> bool:
    return any(m.check_sweep(over, config, low, high, where) for m in REGISTRY)


def sweep_whole(over: str) -> tuple[bool, float] | None:
    return _first(lambda m: m.sweep_whole(over))


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
    return _first(lambda m: m.simulated_pool(config))


def engine_late_class(config: Any, schedule: Any, kept: Any) -> Any:
    """The class noticed late of ``config`` as the one event engine steps it at ``schedule`` (None: none)."""
    return _first(lambda m: m.engine_late_class(config, schedule, kept))


def engine_slow_periods(config: Any, schedule: Any) -> Any:
    """The periods that slow every step of ``config`` as the one event engine steps them (None: none)."""
    return _first(lambda m: m.engine_slow_periods(config, schedule))


def engine_group_process(config: Any) -> Any:
    """The parts of ``config`` that fail and rejoin on their own (replica groups) as the simulations step them
    (None: none)."""
    return _first(lambda m: m.engine_group_process(config))


def event_log_schema(time: dict[str, Any]) -> dict[str, Any]:
    """The fields every mechanism's events add to a log's line, with their schemas."""
    return {key: value for m in REGISTRY for key, value in m.event_log_schema(time).items()}


def steps_itself(m: Mechanism) -> bool:
    """Whether ``m`` has an event stepper of its own (:meth:`Mechanism.engine`); ``simulate`` runs a class
    without one in the one event engine."""
    return type(m).engine is not Mechanism.engine


def run_waits(config: Any) -> Any:
    return _first(lambda m: m.run_waits(config))


def simulated_parts(outcome: Any, result: Any) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.simulated_parts(outcome, result))


def simulated_schema(parts: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.simulated_schema(parts))


def simulated_lines(document: dict[str, Any], show: dict[str, Any]) -> list[str]:
    return [line for m in REGISTRY for line in m.simulated_lines(document, show)]


def model_label(config: Any) -> str | None:
    return _first(lambda m: m.model_label(config))


# ------------------------------------------------------------------ failure classes


def classes(config: Any) -> tuple[FailureClass, ...]:
    """Every failure class the mechanisms give ``config``, in the order registered."""
    return tuple(found for m in REGISTRY for found in m.classes(config))


def landing(config: Any, where: int | str) -> FailureClass | None:
    """The first class of ``config`` that lands ``where`` (:data:`IN_PLACE`, :data:`NOWHERE`), None for none:
    it makes the one-step tier or the no-loss class, and any further class landing there joins it with a
    restart of its own (docs/model.md §20)."""
    return next((c for c in classes(config) if c.landing == where), None)


def class_inputs() -> tuple[tuple[str, str], ...]:
    """Every failure class by name, with the input that turns it on, in the order registered."""
    return tuple(row for m in REGISTRY for row in m.class_inputs)


def log_kinds() -> dict[str, str]:
    """A log's ``recovery`` kinds of every failure class: kind -> where the class lands."""
    return {kind: where for m in REGISTRY for kind, where in m.log_kinds}


def in_place(config: Any) -> FailureClass | None:
    """The class of ``config`` recovered in place (a one-step tier under the periodic ones), if any."""
    return landing(config, IN_PLACE)


def nowhere(config: Any) -> FailureClass | None:
    """The class of ``config`` that goes back nowhere, if any."""
    return landing(config, NOWHERE)


def scaled_classes(config: Any, factor: Num) -> Any:
    """``config`` with every class's share scaled by ``factor``."""
    for m in REGISTRY:
        config = m.scaled_classes(config, factor)
    return config


def first_order(config: Any, mtbf_s: Num) -> list[tuple[Num, Num]]:
    """Every mechanism's first-order (rework, restart) term of its classes."""
    return [term for m in REGISTRY if (term := m.first_order(config, mtbf_s)) is not None]


def class_rows(config: Any, rate: Any, duration: Any, pct: Any) -> tuple[tuple[str, str, str], ...]:
    """The Inputs table's rows on every failure class, after the restart."""
    return tuple(row for m in REGISTRY for row in m.class_rows(config, rate, duration, pct))


def records(config: Any, needed: bool) -> dict[str, Any]:
    """Each failure-class mechanism's record of a result, by its key (None where it is not configured)."""
    found: dict[str, Any] = {}
    for m in REGISTRY:
        declared = m.record_schema()
        if declared is not None:
            found[declared[0]] = m.record(config, needed)
    return found


def record_schemas() -> dict[str, tuple[dict[str, Any], str]]:
    """The JSON Schema of each record: key -> (properties, description)."""
    found: dict[str, tuple[dict[str, Any], str]] = {}
    for m in REGISTRY:
        declared = m.record_schema()
        if declared is not None:
            found[declared[0]] = (declared[1]["properties"], declared[1]["description"])
    return found


def input_report_lines(inputs: dict[str, Any], rate: Any) -> tuple[str, ...]:
    return tuple(line for m in REGISTRY for line in m.input_report_lines(inputs, rate))


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


def measured_model_schemas() -> dict[str, Any]:
    """The schema of every running share's part of ``analyze``'s ``model``, described as that document has it."""
    return {
        m.name: {**schema, "description": m.measured_model_words}
        for m in REGISTRY
        if (schema := m.own_schema()) is not None
    }


def check_work(config: Any, work_s: float, scenario: Any) -> None:
    for m in REGISTRY:
        m.check_work(config, work_s, scenario)


def log_inputs() -> tuple[Input, ...]:
    return tuple(row for m in REGISTRY for row in m.log_inputs())


def log_values(given: dict[str, Any], number: Any) -> dict[str, float]:
    return {key: value for m in REGISTRY for key, value in m.log_values(given, number).items()}


def what_if_example() -> str:
    """The first mechanism's example of a ``--what-if``, named by the mechanism (``'NAME: KEY=VALUE ...'``)."""
    return next(f"'{m.name}: {m.what_if_example}'" for m in REGISTRY if m.what_if_example)


def log_readings(stated: dict[str, Any], reader: Any) -> dict[str, Any]:
    """A new reader of its events in a log for each mechanism that reads some, by its name."""
    return {m.name: found for m in REGISTRY if (found := m.log_reading(stated, reader)) is not None}


def log_losses(kept: dict[str, Any], **run: Any) -> dict[str, Any]:
    """What the events each mechanism kept (``kept`` by its name) cost a log's run, by its name, in order."""
    return {m.name: m.log_losses(kept[m.name], **run) for m in REGISTRY if m.name in kept}


def log_split_keys() -> tuple[tuple[str, str], ...]:
    return tuple(part for m in REGISTRY for part in m.log_split_keys)


def log_split_parts(measured: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(part for m in REGISTRY for part in m.log_split_parts(measured))


def measured_failures(measured: dict[str, Any]) -> tuple[tuple[int, ...], float | None] | None:
    return _first(lambda m: m.measured_failures(measured))


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


def incident_log_parts(log: Any, fitted: Any, given: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(part for m in REGISTRY for part in m.incident_log_part(log, fitted, given))


def incident_log_schema() -> dict[str, Any]:
    return {key: value for m in REGISTRY for key, value in m.incident_log_schema().items()}


def incident_log_values(document: dict[str, Any]) -> dict[str, tuple[float, str]]:
    return {key: value for m in REGISTRY for key, value in m.incident_log_values(document).items()}


def assumed_lever_name(key: str, changed: Any, assume: Any, words: Any) -> str | None:
    return _first(lambda m: m.assumed_lever_name(key, changed, assume, words))


def lever_presets() -> tuple[tuple[str, str, str], ...]:
    """Every ``[levers]`` key a mechanism reads: (key, unit kind, attribute)."""
    return tuple(row for m in REGISTRY for row in m.lever_presets())


def lever_fields() -> tuple[str, ...]:
    """The attributes those keys set, on the scenario and on what the levers assume."""
    return tuple(attribute for _, _, attribute in lever_presets())


def what_if(name: str, scenario: Any, base: Any) -> Any:
    for m in REGISTRY:
        scenario = m.what_if(name, scenario, base)
    return scenario


def sweep_start(name: str, config: Any) -> float | None:
    return _first(lambda m: m.sweep_start(name, config))


def sweep_stated(name: str, config: Any) -> float | None:
    return _first(lambda m: m.sweep_stated(name, config))


def varied(name: str, config: Any, values: Any, scenario: Any) -> Any:
    return _first(lambda m: m.varied(name, config, values, scenario))


def defaults_taken(scenario: Any, config: Any) -> tuple[tuple[str, float], ...]:
    """Every mechanism's inputs taken from its own defaults, (field, value)."""
    return tuple(pair for m in REGISTRY for pair in m.defaults_taken(scenario, config))


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


def baseline_notes(levers: Any, show: dict[str, Any]) -> list[str]:
    return [note for m in REGISTRY for note in m.baseline_notes(levers, show)]


def cause_classes(scenario: Any) -> tuple[CauseClass, ...]:
    """Every stated class with the causes it stands for (docs/model.md §20.6), the mechanisms in order."""
    return tuple(found for m in REGISTRY for found in m.cause_classes(scenario))


def with_cause_shares(scenario: Any, shares: dict[str, float]) -> Any:
    """``scenario`` with its classes' shares as a log measured them (``shares`` by class name)."""
    for m in REGISTRY:
        scenario = m.with_cause_shares(scenario, shares)
    return scenario
