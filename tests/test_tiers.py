"""Nested tiers: the exact recursion one period inside the next (docs/model.md §12.2–§12.6)."""

from __future__ import annotations

import math
from typing import Any

import numpy
import pytest

from ckptcalc.model import search
from ckptcalc.model import tiers as nested
from ckptcalc.model.arrays import Scalar
from ckptcalc.model.evaluation import Config, Tier, evaluate, first_order
from ckptcalc.simulation import timeline as mc

M = 14_400.0
STALLS = (3.0, 12.0, 90.0)
SHARES = (0.90, 0.08, 0.02)
RESTARTS = (60.0, 180.0, 600.0)


def tiers(tau: float, every: tuple[float, ...], lag: float = 0.0) -> nested.Tiers:
    return nested.Tiers(tau1_s=tau, every=every, stalls=STALLS, lag_s=lag, shares=SHARES, restarts=RESTARTS)


def reference_job(**changes: Any) -> Config:
    """docs/model.md §12.2: 6.48 TB written at 2.16 TB/s, 540 GB/s and 72 GB/s (stalls 3, 12, 90 s)."""
    config = Config(
        checkpoint_bytes=6.48e12,
        bandwidth=72e9,
        mtbf_s=M,
        restart_s=600.0,
        replica_survival=0.90,
        memory_bandwidth=2.16e12,
        memory_restart_s=60.0,
        middle=(Tier("nvme", 540e9, 180.0, 0.08),),
    )
    return config.replace(**changes)


# ------------------------------------------------------------ hand-worked references


def test_reference_12_2_first_order() -> None:
    """§12.2: the tiers separate; each optimum is Young's with its own share."""
    fo = first_order(reference_job())
    assert [float(level.interval_s) for level in fo.levels] == pytest.approx([309.839, 2078.461, 11384.200], abs=1e-3)
    losses = [float(level.write + level.rework) for level in fo.levels]
    assert losses == pytest.approx([0.0193649, 0.0115470, 0.0158114], abs=1e-7)
    assert float(fo.restart) == pytest.approx(80.4 / 14_400, rel=1e-12)
    assert float(fo.total) == pytest.approx(0.0523066, abs=1e-7)
    assert float(fo.effective) == pytest.approx(0.947693, abs=1e-6)


def test_reference_12_3_every_checkpoint_to_every_tier() -> None:
    """§12.3: all multiples 1, so every failure lands at the same point: τ/((e^{(τ+Σs)/M} − 1)(M + R))."""
    a = [math.exp(-r / M) for r in RESTARTS]
    assert a == pytest.approx([0.9958420, 0.9875778, 0.9591894], abs=1e-7)
    split = nested.effective(tiers(300.0, (1.0, 1.0)), M)
    assert float(split.effective) == pytest.approx(0.726318, abs=1e-6)
    assert float(split.effective) == pytest.approx(300.0 / (math.expm1(405.0 / M) * (M + 80.3979)), rel=1e-6)
    # The restart share is that of one level with R: R per failure, M + R per failure cycle.
    assert float(split.restart) == pytest.approx(80.3979 / (M + 80.3979), rel=1e-5)


def test_reference_12_4_nested_by_hand() -> None:
    """§12.4: tiers 2 and 3 every second segment; A = 721.84391 s for two segments of 300 s."""
    split = nested.effective(tiers(300.0, (2.0, 1.0)), M)
    assert float(split.effective) == pytest.approx(600.0 / 721.84391, rel=1e-8)
    assert float(split.effective) == pytest.approx(0.831205, abs=1e-6)


def test_reference_12_4_recovery_times() -> None:
    """§12.4's T_c, R and w₁ come from the recovery recursion of §12.3."""
    rec = nested._recovery(tiers(300.0, (2.0, 1.0)), M, Scalar)
    assert float(rec.restart) == pytest.approx(80.39785, abs=1e-5)
    assert float(rec.lands[0]) == pytest.approx(0.8996244, abs=1e-7)
    assert sum(float(x) for x in rec.lands) == pytest.approx(1.0, abs=1e-15)


def test_reference_12_5_joint_optimum() -> None:
    """§12.5: τ₁ 305.258 s, m = (7, 5), 0.948492; first order 0.947693."""
    result = evaluate(reference_job())
    intervals = [float(plan.interval_s) for plan in result.levels]
    assert intervals == pytest.approx([305.258, 2136.81, 10684.04], abs=1e-2)
    assert intervals[1] / intervals[0] == pytest.approx(7.0, abs=1e-9)
    assert intervals[2] / intervals[1] == pytest.approx(5.0, abs=1e-9)
    assert result.storage_every is not None
    assert float(result.storage_every) == 35.0
    assert float(result.effective) == pytest.approx(0.948492, abs=1e-6)
    assert float(result.first_order.effective) == pytest.approx(0.947693, abs=1e-6)


def test_reference_12_5_no_better_multiples_nearby() -> None:
    """The search's multiples beat every other pair in a box around them (τ₁ re-optimised for each)."""
    best = float(evaluate(reference_job()).effective)
    base = tiers(1.0, (1.0, 1.0))
    for m2 in range(4, 11):
        for m3 in range(2, 9):
            trial = base.replace(every=(float(m2), float(m3)))
            tau = search.best_tau1(trial, M)
            assert float(nested.effective(trial.replace(tau1_s=tau), M).effective) <= best * (1 + 1e-12)


def test_reference_12_6_a_free_tier_changes_nothing() -> None:
    """§12.6: a middle tier that serves no failure and costs (next to) nothing to write gives §8.3's answer."""
    two = Config(
        checkpoint_bytes=6.48e12, bandwidth=72e9, mtbf_s=M, restart_s=600.0,
        replica_survival=0.99, memory_bandwidth=2.16e12, memory_restart_s=60.0,
    )  # fmt: skip
    three = two.replace(middle=(Tier("free", 1e21, 60.0, 0.0),))
    a, b = evaluate(two), evaluate(three)
    assert float(b.effective) == pytest.approx(float(a.effective), rel=1e-12)
    assert float(b.effective) == pytest.approx(0.964380, abs=1e-6)
    assert a.memory_interval_s is not None and a.storage_every is not None
    assert b.memory_interval_s is not None and b.storage_every is not None
    assert float(b.storage_every) == float(a.storage_every) == 54.0
    assert float(b.memory_interval_s) == pytest.approx(float(a.memory_interval_s), rel=1e-6)
    assert float(a.memory_interval_s) == pytest.approx(292.521, abs=1e-3)


def test_arrays_match_floats() -> None:
    """A grid goes through the same recursion as single points."""
    taus = numpy.array([30.0, 300.0, 3000.0])
    mtbfs = numpy.array([3600.0, 14_400.0, 86_400.0])
    t = tiers(1.0, (3.0, 4.0), lag=0.0)
    grid = nested.effective(t.replace(tau1_s=taus), mtbfs)
    for i in range(3):
        one = nested.effective(t.replace(tau1_s=float(taus[i])), float(mtbfs[i]))
        assert float(numpy.asarray(grid.effective)[i]) == pytest.approx(float(one.effective), rel=1e-13)
        assert float(numpy.asarray(grid.write)[i]) == pytest.approx(float(one.write), rel=1e-12)


def test_swept_mtbf_reoptimises_every_point() -> None:
    """evaluate on an array of MTBFs gives, point by point, the optimum of each."""
    mtbfs = numpy.array([7200.0, 14_400.0, 28_800.0])
    grid = evaluate(reference_job(mtbf_s=mtbfs))
    for i, mtbf in enumerate(mtbfs):
        one = evaluate(reference_job(mtbf_s=float(mtbf)))
        assert float(grid.effective[i]) == pytest.approx(float(one.effective), rel=1e-9)


def test_split_sums_to_one() -> None:
    split = nested.effective(tiers(250.0, (4.0, 3.0), lag=400.0), M)
    total = float(split.effective + split.write + split.rework + split.restart)
    assert total == pytest.approx(1.0, abs=1e-12)
    assert min(float(split.write), float(split.rework), float(split.restart)) > 0


def test_degenerate_periods_keep_the_restart_share() -> None:
    """Periods thousands of MTBFs long: effective 0, no error, and the restarts still take
    Σ q_c·(1 − e^{−r_c/M}) of the time (every gap between failures starts with one), the rest re-done."""
    split = nested.effective(tiers(1e7, (50.0, 50.0)), 10.0)
    assert float(split.effective) == 0.0
    by_hand = sum(q * -math.expm1(-r / 10.0) for q, r in zip(SHARES, RESTARTS, strict=True))
    assert float(split.restart) == pytest.approx(by_hand, rel=1e-14)
    assert float(split.restart) == pytest.approx(0.9 * -math.expm1(-6.0) + 0.08 * -math.expm1(-18.0) + 0.02, rel=1e-12)
    assert float(split.rework) == pytest.approx(1.0 - by_hand, rel=1e-12)


# ------------------------------------------------------------ the simulation


@pytest.mark.parametrize("lag", [0.0, 2500.0])
def test_simulation_agrees_within_its_ci(lag: float) -> None:
    """The exact model of three tiers lies inside the simulation's 95 % interval (asynchronous top too)."""
    schedule = mc.Schedule(interval_s=300.0, every=(3, 4), stalls=STALLS, restarts=RESTARTS, shares=SHARES, lag_s=lag)
    sim = mc.run_schedule(schedule, mc.Failures(3600.0), cycles=400_000, seed=5)
    model = nested.effective(tiers(300.0, (3.0, 4.0), lag=lag), 3600.0)
    low, high = sim.ci95
    assert low <= float(model.effective) <= high
    assert sim.split.write == pytest.approx(float(model.write), rel=5e-3)
    assert sim.split.restart == pytest.approx(float(model.restart), rel=2e-2)


def test_reference_12_5_simulated() -> None:
    """§12.5: simulate at the joint optimum, 10⁶ cycles: 0.948453 ± 0.000124, around the exact 0.948492."""
    result = evaluate(reference_job())
    schedule = mc.schedule_for(reference_job())
    assert schedule.every == (7, 5)
    sim = mc.run_schedule(schedule, mc.Failures(M), cycles=1_000_000, seed=mc.DEFAULT_SEED)
    assert sim.effective == pytest.approx(0.948453, abs=1e-6)
    assert (sim.ci95[1] - sim.ci95[0]) / 2 == pytest.approx(0.000124, abs=1e-6)
    assert sim.ci95[0] <= float(result.effective) <= sim.ci95[1]


@pytest.mark.parametrize(
    ("changes", "where"),
    [
        ({"every": (0, 2)}, "storage_every"),
        ({"shares": (0.5, 0.4, 0.2)}, "levels"),
        ({"stalls": (1.0, -1.0, 2.0)}, "levels"),
        ({"lag_s": 1e9}, "interval_s"),
        ({"interval_s": 0.0}, "interval_s"),
    ],
)
def test_tier_schedule_refuses_bad_values(changes: dict[str, object], where: str) -> None:
    from ckptcalc.errors import InputError

    fields = dict(interval_s=300.0, every=(3, 4), stalls=STALLS, restarts=RESTARTS, shares=SHARES)
    fields.update(changes)
    with pytest.raises(InputError) as caught:
        mc.Schedule(**fields)  # type: ignore[arg-type]
    assert caught.value.where == where


def test_a_failure_during_a_restart_keeps_the_point_resumed_from() -> None:
    """With τ and stalls that floating point cannot add exactly, a failure during the restart still
    leaves the job at the checkpoint it resumed from (no work lost, no stall counted)."""
    schedule = mc.Schedule(
        interval_s=42.33403250125843, every=(5, 7), stalls=(0.06, 0.26, 3.2), restarts=(600.0, 600.0, 600.0),
        shares=(0.85, 0.12, 0.03),
    )  # fmt: skip
    step = mc.stepper(schedule)
    n = int(schedule.storage_every or 1)
    start = numpy.arange(n, dtype=float)
    phase = start.copy()
    kept, stalls, restarts = numpy.empty(n), numpy.empty(n), numpy.empty(n)
    step(numpy.full(n, 100.0), numpy.zeros(n, dtype=int), phase, numpy.zeros(n, dtype=bool),
         numpy.full(n, 600.0), numpy.arange(n), kept, stalls, restarts)  # fmt: skip
    assert (kept == 0.0).all()
    assert (stalls == 0.0).all()
    assert (phase == start).all()


def test_a_persist_ending_in_a_stall_counts_no_period_that_has_not_ended() -> None:
    """docs/model.md §12.3 (the prefix up to P): through the 400 s stall that ends a tier-2 period (positions
    1540 to 1950 s), the effective time is smooth in the lag: every second difference over 5 s steps near
    −1.0e-7. A count of whole segments reaching m = 5 at 1550 s (no clamp at m − 1) makes a kink there."""
    base = nested.Tiers(tau1_s=300.0, every=(5.0, 3.0), stalls=(10.0, 400.0, 20.0), lag_s=0.0,
                        shares=(0.6, 0.3, 0.1), restarts=(30.0, 120.0, 900.0))  # fmt: skip

    def at(lag: float) -> float:
        return float(nested.effective(base.replace(lag_s=lag), 3600.0).effective)

    for centre in numpy.arange(1545.0, 1946.0, 5.0):
        second = at(centre - 5.0) - 2.0 * at(centre) + at(centre + 5.0)
        assert -1.1e-7 < second < -0.9e-7, (centre, second)
