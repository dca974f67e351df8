"""Properties of the model, units, presets and decisions, checked over wide ranges with Hypothesis.

Every assertion relates computed quantities to each other (an optimum against its neighbours, an
array against its scalars, a round trip against its start); none compares with a hard-coded output.
Ranges: sizes 1e6..1e16 B, bandwidths 1e6..1e15 B/s, MTBF 60 s..1e8 s, restarts 0.1 s..1e6 s,
replica survival 0.001..0.999, all drawn log-uniformly so that every decade is exercised.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ckptcalc import decide, model, presets, units
from ckptcalc.decide import LeverAssumptions
from ckptcalc.model import Config, Result, evaluate, replace
from ckptcalc.scenario import Scenario, resolve

REL = 1e-12  # float noise allowed when two computations of one quantity are compared
EPSILONS = (1e-3, 0.1, 0.5)


def log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    """Floats spread evenly over the decades between ``low`` and ``high`` (both included)."""
    return st.floats(math.log10(low), math.log10(high)).map(lambda e: min(max(10.0**e, low), high))


SIZE = log_uniform(1e6, 1e16)
BANDWIDTH = log_uniform(1e6, 1e15)
MTBF = log_uniform(60.0, 1e8)
RESTART = log_uniform(0.1, 1e6)
SURVIVAL = st.floats(0.001, 0.999)
SNAPSHOT_FACTOR = log_uniform(1.01, 1e4)  # snapshot bandwidth / storage bandwidth, always above 1
FACTOR = log_uniform(1.0 + 1e-6, 1e3)  # a change of one input, always an increase
KINDS = ("single", "memory", "async", "both")
MULTI = ("memory", "async", "both")


@st.composite
def configs(
    draw: st.DrawFn, kinds: tuple[str, ...] = KINDS, intervals: bool | None = False, kind: str | None = None
) -> Config:
    """A valid configuration of one of ``kinds``; ``intervals`` True/None gives fixed intervals always/sometimes."""
    kind = kind or draw(st.sampled_from(kinds))
    size, bandwidth = draw(SIZE), draw(BANDWIDTH)
    extra: dict[str, float] = {}
    if kind in ("async", "both"):
        extra["snapshot_bandwidth"] = bandwidth * draw(SNAPSHOT_FACTOR)
    if kind in ("memory", "both"):
        extra.update(replica_survival=draw(SURVIVAL), memory_bandwidth=draw(BANDWIDTH), memory_restart_s=draw(RESTART))
    given_interval = draw(st.booleans()) if intervals is None else intervals
    if given_interval:
        if "snapshot_bandwidth" in extra:  # an asynchronous interval cannot be shorter than the persist time
            extra["interval_s"] = size / bandwidth * draw(log_uniform(1.0, 1e3))
        else:
            extra["interval_s"] = draw(log_uniform(1e-3, 1e9))
        if "replica_survival" in extra:
            extra["memory_interval_s"] = draw(log_uniform(1e-3, 1e9))
    return Config(checkpoint_bytes=size, bandwidth=bandwidth, mtbf_s=draw(MTBF), restart_s=draw(RESTART), **extra)


def effective(config: Config) -> float:
    """Effective time with every interval re-optimised."""
    return float(evaluate(config.optimal()).effective)


def finite_nonnegative(*values: Any) -> bool:
    return all(math.isfinite(v) and v >= 0 for v in values)


# ------------------------------------------------------- 1. the optimum is a minimum


@settings(max_examples=400, deadline=None)
@given(config=configs(kinds=("single",)))
def test_single_level_optimum_is_a_minimum(config: Config) -> None:
    best = evaluate(config)
    tau = best.optimal_interval_s
    assert best.interval_s == tau
    for eps in EPSILONS:
        for factor in (1 - eps, 1 + eps):
            moved = evaluate(replace(config, interval_s=tau * factor))
            assert best.total <= moved.total * (1 + REL), (eps, factor)
            assert best.effective >= moved.effective - REL * max(1.0, moved.total), (eps, factor)


@settings(max_examples=400, deadline=None)
@given(config=configs(kinds=MULTI))
def test_each_level_optimum_is_a_minimum_of_its_interval(config: Config) -> None:
    best = evaluate(config)
    mtbf = config.mtbf_s
    for index, level in enumerate(best.levels):
        field = "memory_interval_s" if level.level.name == "memory" else "interval_s"
        young = math.sqrt(2 * level.level.stall_s * mtbf / level.level.share)
        bound = level.level.lag_s > 0 and level.level.lag_s >= young
        if bound:  # held up by the persist time: the interval may only grow
            assert level.optimal_interval_s == level.level.lag_s
            factors = [1 + eps for eps in EPSILONS]
        else:
            assert level.optimal_interval_s == pytest.approx(young, rel=REL)
            factors = [f for eps in EPSILONS for f in (1 - eps, 1 + eps)]
        for factor in factors:
            moved = evaluate(replace(config, **{field: level.optimal_interval_s * factor}))
            assert best.total <= moved.total * (1 + REL), (level.level.name, factor)
            assert best.levels[index].loss <= moved.levels[index].loss * (1 + REL), (level.level.name, factor)
            for other in range(len(best.levels)):  # the other levels do not notice
                if other != index:
                    assert moved.levels[other].loss == best.levels[other].loss


# ---------------------------------------------------------- 2. the exact optimum


@settings(max_examples=400, deadline=None)
@given(
    mtbf=MTBF,
    ratio=log_uniform(1e-12, 1e2),  # δ / M
    restart_ratio=log_uniform(1e-9, 1e2),  # r / M, kept where e^{r/M} is a float
)
def test_exact_interval_maximises_exact_effective(mtbf: float, ratio: float, restart_ratio: float) -> None:
    delta, restart = ratio * mtbf, restart_ratio * mtbf
    best = model.exact_interval(delta, mtbf)
    assert 0 < best <= mtbf * (1 + REL)
    top = model.exact_effective(best, delta, restart, mtbf)
    assert 0 < top <= 1
    for eps in EPSILONS:
        for factor in (1 - eps, 1 + eps):
            assert model.exact_effective(best * factor, delta, restart, mtbf) <= top * (1 + REL), factor
    # In particular it is no worse than Young's or Daly's interval.
    rows = model.interval_comparison(Config(checkpoint_bytes=delta, bandwidth=1.0, mtbf_s=mtbf, restart_s=restart))
    assert rows is not None
    scores = {name: score for name, _, score in rows}
    assert scores["exact"] == top
    assert scores["young"] <= top * (1 + REL) and scores["daly"] <= top * (1 + REL)


def _lambert_reference(eps: float) -> float:
    """1 + W0(−e^{−(1+ε)}) to ~60 digits: bisection on u + ln(1 − u) + ε = 0, independent of the code."""
    with localcontext() as context:
        context.prec = 60
        e, low, high = Decimal(eps), Decimal(0), Decimal(1)
        for _ in range(260):
            middle = (low + high) / 2
            if middle + (1 - middle).ln() + e > 0:
                low = middle
            else:
                high = middle
        return float((low + high) / 2)


@settings(max_examples=100, deadline=None)
@given(mtbf=MTBF, ratio=log_uniform(1e-17, 1e2))  # δ/M over the whole range of sizes, bandwidths and MTBFs
@example(mtbf=1e8, ratio=1e-17)
def test_exact_interval_matches_a_high_precision_reference(mtbf: float, ratio: float) -> None:
    # The docstring promises full relative precision for tiny δ/M; the suite documents 1e-9.
    assert model.exact_interval(ratio * mtbf, mtbf) == pytest.approx(mtbf * _lambert_reference(ratio), rel=1e-9)


# ------------------------------------------------------------- 3. monotonicity


@settings(max_examples=400, deadline=None)
@given(config=configs(intervals=None), factor=FACTOR)
def test_more_bandwidth_never_lowers_effective(config: Config, factor: float) -> None:
    if config.is_async:  # keep the snapshot above the faster storage, so the configuration stays valid
        config = replace(config, snapshot_bandwidth=config.snapshot_bandwidth * factor)
    base = effective(config)
    assert effective(replace(config, bandwidth=config.bandwidth * factor)) >= base - REL
    if config.is_async:
        assert effective(replace(config, snapshot_bandwidth=config.snapshot_bandwidth * factor)) >= base - REL
    if config.has_memory:
        assert effective(replace(config, memory_bandwidth=config.memory_bandwidth * factor)) >= base - REL


@settings(max_examples=400, deadline=None)
@given(config=configs(intervals=None), factor=FACTOR)
def test_longer_restart_never_raises_effective(config: Config, factor: float) -> None:
    base = effective(config)
    assert effective(replace(config, restart_s=config.restart_s * factor)) <= base + REL
    if config.has_memory:
        assert effective(replace(config, memory_restart_s=config.memory_restart_s * factor)) <= base + REL


@settings(max_examples=400, deadline=None)
@given(config=configs(intervals=None), factor=FACTOR)
def test_shorter_mtbf_never_raises_effective(config: Config, factor: float) -> None:
    assert effective(replace(config, mtbf_s=config.mtbf_s / factor)) <= effective(config) + REL


# ------------------------------------------------------- 4. ranges and finiteness


def _check_result(result: Result) -> None:
    for level in result.levels:
        assert finite_nonnegative(level.write, level.rework, level.restart, level.loss), level
        assert math.isfinite(level.interval_s) and level.interval_s > 0
        assert math.isfinite(level.optimal_interval_s) and level.optimal_interval_s > 0
    assert finite_nonnegative(result.write, result.rework, result.restart, result.total)
    assert result.total == pytest.approx(sum(level.loss for level in result.levels), rel=REL)
    assert result.write + result.rework + result.restart == pytest.approx(result.total, rel=REL)
    assert 0.0 <= result.effective <= 1.0
    assert result.effective == max(1.0 - result.total, 0.0)
    terms = (result.write, result.rework, result.restart)
    assert terms[result.dominant] == max(terms)
    for value in (result.daly_interval_s, result.exact_interval_s):
        assert (value is None) == (not result.config.is_single_sync)
        assert value is None or (math.isfinite(value) and value > 0)
    for caveat in result.caveats:
        assert caveat.points >= 1
        assert caveat.value is None or math.isfinite(caveat.value)


@settings(max_examples=500, deadline=None)
@given(config=configs(intervals=None))
def test_loss_terms_nonnegative_finite_and_effective_in_unit_interval(config: Config) -> None:
    _check_result(evaluate(config))
    _check_result(evaluate(config.optimal()))


@settings(max_examples=500, deadline=None)
@given(config=configs(kinds=("single",), intervals=None))
# Found by this test: e^{r/M} overflows math.exp (r/M = 16667), and so does e^{(τ+δ)/M} when δ ≫ M.
@example(config=Config(checkpoint_bytes=1e6, bandwidth=1e9, mtbf_s=60.0, restart_s=1e6))
@example(config=Config(checkpoint_bytes=1e16, bandwidth=1e6, mtbf_s=60.0, restart_s=1.0))
def test_exact_effective_of_a_result_is_finite(config: Config) -> None:
    result = evaluate(config)
    value = result.exact_effective  # the exact-model effective time the CLI reports for every single level
    assert value is not None and math.isfinite(value) and 0.0 <= value <= 1.0
    comparison = model.interval_comparison(config)
    assert comparison is not None
    for name, interval, score in comparison:
        assert math.isfinite(interval) and interval > 0, name
        assert math.isfinite(score) and 0.0 <= score <= 1.0, name


# ----------------------------------------------------------- 5. Daly → Young


@settings(max_examples=400, deadline=None)
@given(mtbf=MTBF, ratio=log_uniform(1e-12, 1e-2))
def test_daly_tends_to_young(mtbf: float, ratio: float) -> None:
    delta = ratio * mtbf

    def drift(d: float) -> float:
        young = model.young_interval(d, mtbf)
        return abs(model.daly_interval(d, mtbf) - young) / young

    assert drift(delta) <= 1.0 * math.sqrt(ratio)
    assert drift(delta) > 0  # Daly's correction is really applied
    # → 0 at the rate √(δ/M): a hundredfold smaller δ/M brings it about tenfold closer.
    assert drift(delta / 100) <= drift(delta) / 5


# ------------------------------------------------- 6. one level, and arrays vs scalars


@settings(max_examples=400, deadline=None)
@given(config=configs(kinds=("single",), intervals=None))
def test_single_level_is_the_first_order_formula(config: Config) -> None:
    result = evaluate(config)
    (level,) = result.levels
    delta, mtbf, restart = config.checkpoint_bytes / config.bandwidth, config.mtbf_s, config.restart_s
    assert level.optimal_interval_s == pytest.approx(math.sqrt(2 * delta * mtbf), rel=REL)
    tau = level.interval_s if config.interval_s is None else config.interval_s
    assert level.interval_s == tau
    direct = model.first_order_loss(delta, tau, mtbf, restart)
    general = model.level_loss(stall_s=delta, lag_s=0.0, interval_s=tau, restart_s=restart, share=1.0, mtbf_s=mtbf)
    by_hand = (delta / tau, tau / (2 * mtbf), restart / mtbf)
    for got, first, lvl, hand in zip((level.write, level.rework, level.restart), direct, general, by_hand, strict=True):
        assert got == pytest.approx(first, rel=REL) and got == pytest.approx(lvl, rel=REL)
        assert got == pytest.approx(hand, rel=1e-10)
    assert (result.write, result.rework, result.restart) == (level.write, level.rework, level.restart)


@settings(max_examples=300, deadline=None)
@given(config=configs(kinds=MULTI, intervals=None))
def test_multi_level_terms_are_level_loss_of_each_level(config: Config) -> None:
    result = evaluate(config)
    size, q = config.checkpoint_bytes, config.replica_survival
    expected_levels = []
    if config.has_memory:
        expected_levels.append(("memory", size / config.memory_bandwidth, 0.0, config.memory_restart_s, q))
    stall = size / (config.snapshot_bandwidth if config.is_async else config.bandwidth)
    lag = size / config.bandwidth if config.is_async else 0.0
    expected_levels.append(("storage", stall, lag, config.restart_s, 1.0 - q if config.has_memory else 1.0))
    assert len(result.levels) == len(expected_levels)
    for got, (name, s, p, r, share) in zip(result.levels, expected_levels, strict=True):
        lvl = got.level
        assert lvl.name == name
        assert (lvl.stall_s, lvl.lag_s, lvl.restart_s, lvl.share) == pytest.approx((s, p, r, share), rel=REL)
        terms = model.level_loss(
            stall_s=s, lag_s=p, interval_s=got.interval_s, restart_s=r, share=share, mtbf_s=config.mtbf_s
        )
        assert (got.write, got.rework, got.restart) == pytest.approx(terms, rel=REL)
        assert got.optimal_interval_s == pytest.approx(max(math.sqrt(2 * s * config.mtbf_s / share), p), rel=REL)


def _stack(items: list[Config]) -> Config:
    """One configuration whose fields are arrays of the fields of ``items``."""
    stacked: dict[str, Any] = {}
    for name in Config.__slots__:
        values = [getattr(c, name) for c in items]
        assert all(v is None for v in values) or all(v is not None for v in values)
        stacked[name] = None if values[0] is None else np.array(values, dtype=float)
    return Config(**stacked)


@st.composite
def config_lists(draw: st.DrawFn) -> list[Config]:
    kind = draw(st.sampled_from(KINDS))
    given_intervals = draw(st.booleans())
    return draw(st.lists(configs(kind=kind, intervals=given_intervals), min_size=2, max_size=6))


@settings(max_examples=300, deadline=None)
@given(items=config_lists())
def test_array_evaluation_equals_scalar_evaluations(items: list[Config]) -> None:
    grid = evaluate(_stack(items))
    singles = [evaluate(c) for c in items]
    close = {"rel": REL, "abs": 0.0}
    for i, one in enumerate(singles):
        for name in ("write", "rework", "restart", "total", "effective", "interval_s", "optimal_interval_s"):
            assert float(getattr(grid, name)[i]) == pytest.approx(getattr(one, name), **close), name
        assert int(grid.dominant[i]) == one.dominant
        for level_grid, level_one in zip(grid.levels, one.levels, strict=True):
            for name in ("write", "rework", "restart", "interval_s", "optimal_interval_s"):
                assert float(getattr(level_grid, name)[i]) == pytest.approx(getattr(level_one, name), **close), name
        assert (grid.daly_interval_s is None) == (one.daly_interval_s is None) == (not one.config.is_single_sync)
        if one.config.is_single_sync:
            assert float(grid.daly_interval_s[i]) == pytest.approx(one.daly_interval_s, **close)
            # The Newton solve for the exact interval stops at a point fixed only to its conditioning,
            # about 1e-16 / √(2δ/M) relative (see test_exact_interval_matches_a_high_precision_reference).
            ratio = one.config.checkpoint_bytes / one.config.bandwidth / one.config.mtbf_s
            solver = max(REL, 4e-16 / math.sqrt(2 * ratio))
            assert float(grid.exact_interval_s[i]) == pytest.approx(one.exact_interval_s, rel=solver, abs=0.0)
    # Caveats of the grid summarise those of the points: same kinds, counts summed, worst value kept.
    summary: dict[tuple[str, str | None], tuple[int, float | None]] = {}
    for one in singles:
        for c in one.caveats:
            count, worst = summary.get((c.kind, c.level), (0, None))
            if c.value is not None:
                worst = c.value if worst is None else max(worst, c.value)
            summary[(c.kind, c.level)] = (count + c.points, worst)
    found = {(c.kind, c.level): c for c in grid.caveats}
    assert set(found) == set(summary)
    for key, (count, worst) in summary.items():
        if key[0] == "no_closed_form":
            continue  # one notice for the whole grid
        assert found[key].points == count, key
        assert (found[key].value is None) == (worst is None), key
        if worst is not None:
            assert found[key].value == pytest.approx(worst, rel=REL), key


@settings(max_examples=200, deadline=None)
@given(items=config_lists().filter(lambda cs: cs[0].is_single_sync))
def test_array_exact_effective_equals_scalars(items: list[Config]) -> None:
    with np.errstate(over="ignore", under="ignore"):
        grid = evaluate(_stack(items)).exact_effective
    assert grid is not None
    for i, config in enumerate(items):
        assert float(grid[i]) == pytest.approx(evaluate(config).exact_effective, rel=REL, abs=1e-300)


# ------------------------------------------------------------ 7. units round trips

FORMATS = {
    "size": (units.format_size, units.parse_size),
    "rate": (units.format_rate, units.parse_rate),
    "duration": (units.format_duration, units.parse_duration),
    "count": (units.format_count, units.parse_count),
}
# Every unit the formatters may pick, and the points where they switch from one to the next.
SWITCHES = (1e-3, 1.0, 60.0, 3600.0, 86400.0, 1e3, 1e6, 1e9, 1e12, 1e15)
MAGNITUDES = (
    log_uniform(1e-12, 1e30)
    | st.builds(lambda unit, near: unit * near, st.sampled_from(SWITCHES), st.floats(0.998, 1.002))
    | st.integers(0, 10**8).map(float)
)
VALUES = st.builds(lambda sign, x: sign * x, st.sampled_from((1.0, -1.0)), MAGNITUDES)


@pytest.mark.parametrize("kind", sorted(FORMATS))
@settings(max_examples=300, deadline=None)
@given(x=VALUES, digits=st.integers(1, 15))
@example(x=0.0, digits=3)
@example(x=999.96e12, digits=3)
@example(x=1e-12, digits=15)
@example(x=-86400 * 0.99951, digits=3)
def test_format_parse_round_trip_wide(kind: str, x: float, digits: int) -> None:
    formatter, parser = FORMATS[kind]
    full = formatter(x, digits=15)
    assert parser(full) == pytest.approx(x, rel=1e-12, abs=0.0), full
    short = formatter(x)
    assert parser(short) == pytest.approx(x, rel=5e-3, abs=0.0), short
    # Any number of significant figures: rounding to d figures errs by at most half a unit in the last one.
    text = formatter(x, digits=digits)
    assert parser(text) == pytest.approx(x, rel=0.5 * 10.0 ** (1 - digits) * (1 + 1e-9) + 1e-15, abs=0.0), text


# ------------------------------------------------------------- 8. presets round trip

WHOLE = st.integers(1, 10**6).map(float)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """A scenario that resolves: every combination of the optional inputs, values in wide valid ranges."""
    values: dict[str, float] = {}
    if draw(st.booleans()):
        values["checkpoint_bytes"] = draw(SIZE)
        size = values["checkpoint_bytes"]
    else:
        values["params"] = draw(log_uniform(1e5, 1e14) | st.integers(1, 10**13).map(float))
        if draw(st.booleans()):
            values["bytes_per_param"] = draw(st.sampled_from((2.0, 4.0, 12.0, 16.0)) | st.floats(0.5, 64.0))
        size = values["params"] * values.get("bytes_per_param", 16.0)
    values["bandwidth"] = draw(BANDWIDTH)
    if draw(st.booleans()):
        values["snapshot_bandwidth"] = values["bandwidth"] * draw(SNAPSHOT_FACTOR)
    if draw(st.booleans()):
        low = size / values["bandwidth"] if "snapshot_bandwidth" in values else 1e-3
        values["interval_s"] = max(low, 1e-3) * draw(log_uniform(1.0, 1e6))
    mtbf = draw(MTBF)
    source = draw(st.sampled_from(("mtbf", "gpu_mtbf", "failures")))
    gpus = draw(st.none() | WHOLE)
    if source == "mtbf":
        values["mtbf_s"] = mtbf
    elif source == "gpu_mtbf":
        gpus = gpus or draw(WHOLE)
        values["gpu_mtbf_s"] = mtbf * gpus
    else:
        failures = draw(WHOLE)
        values.update(failures=failures, window_s=mtbf * failures)
    if gpus is not None:
        values["gpus"] = gpus
        if draw(st.booleans()):
            values["gpu_hour_cost"] = draw(log_uniform(1e-3, 1e3))
    values["restart_s"] = draw(RESTART)
    if draw(st.booleans()):
        values.update(replica_survival=draw(SURVIVAL), memory_bandwidth=draw(BANDWIDTH), memory_restart_s=draw(RESTART))
        if draw(st.booleans()):
            values["memory_interval_s"] = draw(log_uniform(1e-3, 1e9))
    if draw(st.booleans()):
        values["step_time_s"] = draw(log_uniform(1e-3, 1e4))
    if draw(st.booleans()):
        values["discard"] = draw(st.floats(0.0, 1.0, exclude_max=True))
    name = draw(st.none() | st.text(st.characters(codec="utf-8"), min_size=1, max_size=20))
    return Scenario(name=name, **values)


@settings(max_examples=300, deadline=None)
@given(scenario=scenarios())
def test_preset_round_trip_gives_the_same_model(scenario: Scenario) -> None:
    text = presets.dumps(scenario)
    loaded = presets.parse(text, "x.toml")
    assert loaded.values() == scenario.values(), text
    assert loaded.name == scenario.name
    original, again = resolve(scenario), resolve(loaded)
    assert again.config == original.config, text
    assert (again.mtbf_source, again.gpu_mtbf_s) == (original.mtbf_source, original.gpu_mtbf_s)
    assert evaluate(again.config).effective == evaluate(original.config).effective
    # Saving what was loaded writes the same file.
    assert presets.dumps(loaded) == text


# ---------------------------------------------------------------- 9. decisions


@cache
def assumptions() -> LeverAssumptions:
    return presets.lever_assumptions()


@settings(max_examples=300, deadline=None)
@given(config=configs(intervals=None), gpus=st.none() | WHOLE)
def test_levers_gain_is_their_effective_minus_base(config: Config, gpus: float | None) -> None:
    assume = assumptions()
    found = decide.levers(config, gpus, assume)
    base = effective(config)
    expected = {
        "bandwidth_x2": replace(config, bandwidth=config.bandwidth * 2),
        "restart_half": replace(config, restart_s=config.restart_s / 2),
        "mtbf_x2": replace(config, mtbf_s=config.mtbf_s * 2),
    }
    if gpus is not None:
        snapshot = assume.snapshot_bandwidth_per_gpu * gpus
        if not config.is_async and snapshot > config.bandwidth:
            expected["async"] = replace(config, snapshot_bandwidth=snapshot)
        if not config.has_memory:
            expected["memory_replica"] = replace(
                config,
                replica_survival=assume.replica_survival,
                memory_bandwidth=assume.memory_bandwidth_per_gpu * gpus,
                memory_restart_s=assume.memory_restart_s,
            )
    assert sorted(lever.key for lever in found) == sorted(expected)
    for lever in found:
        assert lever.effective == effective(expected[lever.key]), lever.key
        assert lever.gain_pp == pytest.approx((lever.effective - base) * 100.0, rel=REL, abs=1e-12), lever.key
        if lever.key in ("bandwidth_x2", "restart_half", "mtbf_x2"):
            assert lever.gain_pp >= -1e-10, lever.key  # none of these can hurt
    gains = [lever.gain_pp for lever in found]
    assert gains == sorted(gains, reverse=True)


GOALS = st.floats(0.05, 0.999)


@settings(max_examples=300, deadline=None)
@given(config=configs(intervals=None), goal=GOALS)
def test_bandwidth_target_reaches_the_goal(config: Config, goal: float) -> None:
    found = decide.targets(config, goal, None).bandwidth
    if found is not None:
        assert effective(replace(config, bandwidth=found)) == pytest.approx(goal, abs=1e-9)
        if config.is_async:
            assert found < config.snapshot_bandwidth
    else:  # not even the fastest storage reaches it (async: storage as fast as the snapshot; else δ/M = 1e-15)
        fastest = config.snapshot_bandwidth if config.is_async else config.checkpoint_bytes / (config.mtbf_s * 1e-15)
        assert effective(replace(config, bandwidth=fastest)) <= goal + 1e-9


@settings(max_examples=300, deadline=None)
@given(config=configs(intervals=None), goal=GOALS)
def test_restart_target_reaches_the_goal(config: Config, goal: float) -> None:
    found = decide.targets(config, goal, None).restart_s
    if found is not None:
        assert found > 0
        assert effective(replace(config, restart_s=found)) == pytest.approx(goal, abs=1e-9)
    else:  # not even an instant restart reaches it
        assert effective(replace(config, restart_s=0.0)) <= goal + 1e-9


@settings(max_examples=300, deadline=None)
@given(config=configs(intervals=None), goal=GOALS, gpu_scale=st.none() | WHOLE)
# Found by this test: the closed form for M cancels catastrophically when δ ≫ r·(1 − F) (here δ = 1e8 s, r = 1 s).
@example(config=Config(checkpoint_bytes=1e14, bandwidth=1e6, mtbf_s=100.0, restart_s=1.0), goal=0.5, gpu_scale=None)
def test_mtbf_and_gpu_targets_reach_the_goal(config: Config, goal: float, gpu_scale: float | None) -> None:
    gpu_mtbf = None if gpu_scale is None else config.mtbf_s * gpu_scale
    found = decide.targets(config, goal, gpu_mtbf)
    # A long enough MTBF always reaches any goal below 1.
    assert found.mtbf_s is not None
    assert effective(replace(config, mtbf_s=found.mtbf_s)) == pytest.approx(goal, abs=1e-9)
    if gpu_mtbf is None:
        assert found.gpus is None
    elif found.gpus is not None:
        # The largest GPU count that still reaches the goal at the same per-GPU failure rate.
        assert found.gpus >= 1 and float(found.gpus).is_integer()
        assert effective(replace(config, mtbf_s=gpu_mtbf / found.gpus)) >= goal - 1e-9
        assert effective(replace(config, mtbf_s=gpu_mtbf / (found.gpus + 1))) <= goal + 1e-9
    else:  # not even a single GPU reaches it
        assert effective(replace(config, mtbf_s=gpu_mtbf)) <= goal + 1e-9
