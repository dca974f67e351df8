"""The one optimiser (docs/model.md §8.5): its optimum beats every neighbouring schedule, does not depend on
where it starts, keeps the top tier above its persist time, and the robust band picks the multiple of least
regret."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from ckptcalc import api
from ckptcalc.model import band, search, tiers
from ckptcalc.model.arrays import Scalar
from ckptcalc.model.evaluation import Config, _base, evaluate
from ckptcalc.model.one_level import Split
from ckptcalc.model.tiers import Tiers


def value(t: Tiers, mtbf: float) -> float:
    return float(tiers.effective(t, mtbf).effective)


def at_multiples(t: Tiers, every: tuple[float, ...], mtbf: float) -> float:
    """Effective time at whole multiples ``every`` with τ₁ re-optimised."""
    trial = t.replace(every=every)
    return value(trial.replace(tau1_s=search.best_tau1(trial, mtbf)), mtbf)


def neighbours(every: tuple[float, ...]) -> list[tuple[float, ...]]:
    """Each multiple ± 1 (at least 1), one tier at a time."""
    found = []
    for j in range(len(every)):
        for step in (1.0, -1.0):
            m = every[j] + step
            if m >= 1.0:
                found.append((*every[:j], m, *every[j + 1 :]))
    return found


# ------------------------------------------------------------------ the two cases that started it


def test_a_million_gpus_take_the_better_multiple() -> None:
    # docs/model.md §8.5, reference 8.5a: M = 50 000 h / 10⁶ = 180 s, memory 6.48 TB at 10 GB/s/GPU (s₁ = 0.648 ms),
    # storage δ = 3.24 s, q = 0.99, r₁ 60 s, r₂ 600 s. Pinning m = 600 (τ₁ = 0.48064 s) gives
    # 0.6920263, where a search that walked from its start ended at m = 640 (0.6920229).
    found = api.optimize(
        gpu_mtbf="50000h", gpus=1_000_000, replica_survival=0.99, memory_bw="10GB/s/gpu", memory_restart="1min"
    )
    result = found.result
    assert result is not None and result.storage_every is not None and result.memory_interval_s is not None
    assert float(result.storage_every) == 600.0
    assert float(result.memory_interval_s) == pytest.approx(0.48064, rel=1e-4)
    pinned = Tiers(
        tau1_s=0.48064, every=(600.0,), stalls=(6.48e12 / 1e16, 3.24), lag_s=0.0, shares=(0.99, 0.01),
        restarts=(60.0, 600.0),
    )  # fmt: skip
    assert value(pinned, 180.0) == pytest.approx(0.6920263, abs=5e-8)
    assert float(result.effective) >= value(pinned, 180.0)
    assert float(result.effective) > 0.692024  # m = 640 at its own best τ₁: 0.6920229
    for m in (599.0, 601.0, 640.0):
        assert at_multiples(pinned, (m,), 180.0) < float(result.effective)


@pytest.mark.parametrize("tau1", [20.0, 60.0, 150.0])
@pytest.mark.parametrize("lag", [0.0, 3000.0])
def test_three_tiers_with_the_fastest_held_match_an_exhaustive_search(tau1: float, lag: float) -> None:
    # With τ₁ held, every (m₂, m₃) in a box three times the optimum's is evaluated: the search's pick is the
    # best of them. A walk that moves one multiple at a time can stop at a pair such as (8, 25) where (17, 12) is
    # better; this search cannot.
    t = Tiers(
        tau1_s=tau1, every=(1.0, 1.0), stalls=(3.0, 12.0, 90.0), lag_s=lag, shares=(0.90, 0.08, 0.02),
        restarts=(60.0, 180.0, 600.0),
    )  # fmt: skip
    mtbf = 14_400.0
    found = search.best(t, mtbf, tau1_fixed=True)
    best = value(found, mtbf)
    m2, m3 = (int(m) for m in found.every)
    box = itertools.product(range(1, 3 * m2 + 3), range(1, 3 * m3 + 3))
    trials = [t.replace(every=(float(a), float(b))) for a, b in box if a * b * tau1 >= lag]
    exhaustive = max(value(trial, mtbf) for trial in trials)
    assert best == pytest.approx(exhaustive, rel=1e-13)
    assert found.tau1_s == tau1
    assert found.storage_interval_s >= lag


def test_two_levels_match_an_exhaustive_search_over_the_multiple() -> None:
    # τ₁ re-optimised at every m from 1 to 200: the search's optimum is the best of them (docs/model.md §8.3).
    t = Tiers(tau1_s=1.0, every=(1.0,), stalls=(3.0, 90.0), lag_s=0.0, shares=(0.99, 0.01), restarts=(60.0, 600.0))
    found = search.best(t, 14_400.0)
    assert found.every == (54.0,)
    assert found.tau1_s == pytest.approx(292.521, abs=1e-3)
    exhaustive = max(at_multiples(t, (float(m),), 14_400.0) for m in range(1, 201))
    assert value(found, 14_400.0) == pytest.approx(exhaustive, rel=1e-14)
    assert value(found, 14_400.0) == pytest.approx(0.964380, abs=1e-6)


def test_a_start_far_from_the_optimum_is_left_quickly() -> None:
    # docs/model.md §8.5, reference 8.5b: gemini-inmemory's storage at 70.3 MB/s (δ = 92 160 s ≫ M = 4 h). The
    # optimum is m = 7 594 at τ₁ = 174.43 s (effective 0.0531759469), where τ₁ lies 2.3 times its first-order
    # value (75.28 s), beyond the τ₁ search's first bracket; m ± 1 are worse, and the schedule an earlier search
    # reported, m = 10 786 at τ₁ = 110.53 s, gives 0.0527576269.
    t = Tiers(
        tau1_s=1.0, every=(1.0,), stalls=(6.48e12 / 2.16e12, 6.48e12 / 70_312_500.0), lag_s=0.0,
        shares=(0.99, 0.01), restarts=(60.0, 600.0),
    )  # fmt: skip
    found = search.best(t, 14_400.0)
    assert found.every == (7_594.0,)
    assert found.tau1_s == pytest.approx(174.4326, rel=1e-5)
    best = value(found, 14_400.0)
    assert best == pytest.approx(0.0531759469, abs=1e-10)
    for m in (7_593.0, 7_595.0):
        assert at_multiples(t, (m,), 14_400.0) < best
    assert value(t.replace(every=(10_786.0,), tau1_s=110.5345), 14_400.0) == pytest.approx(0.0527576269, abs=1e-9)


def test_the_tau1_search_goes_on_past_its_bracket() -> None:
    # docs/model.md §8.5, reference 8.5b: at m = 7 594 first order puts τ₁ at √(2·(3 + 92 160/7 594)·M /
    # (0.99 + 0.01·7 594)) = 75.28 s, so the first bracket ends at 150.55 s; the optimum, 174.43 s, lies past it.
    t = Tiers(
        tau1_s=1.0, every=(7_594.0,), stalls=(6.48e12 / 2.16e12, 6.48e12 / 70_312_500.0), lag_s=0.0,
        shares=(0.99, 0.01), restarts=(60.0, 600.0),
    )  # fmt: skip
    assert search.first_order_tau1(t, 14_400.0) == pytest.approx(75.2753, rel=1e-5)
    tau = search.best_tau1(t, 14_400.0)
    assert tau == pytest.approx(174.4326, rel=1e-5)
    for other in (tau * 0.999, tau * 1.001, 150.55):
        assert value(t.replace(tau1_s=other), 14_400.0) < value(t.replace(tau1_s=tau), 14_400.0)


def test_the_first_order_start() -> None:
    # docs/model.md §8.5, reference 8.5a: each tier's own Young interval √(2·s_i·M/q_i), nested, the top at least
    # the persist time: T₁ = √(2·0.000648·180/0.99) = 0.4854 s, T₂ = √(2·3.24·180/0.01) = 341.5 s.
    t = Tiers(
        tau1_s=1.0, every=(1.0,), stalls=(6.48e12 / 1e16, 3.24), lag_s=0.0, shares=(0.99, 0.01),
        restarts=(60.0, 600.0),
    )  # fmt: skip
    first = search._first_order_intervals(t, 180.0, Scalar)
    assert first[0] == pytest.approx(0.48541, rel=1e-4)
    assert first[1] == pytest.approx(341.53, rel=1e-4)
    start = search._Search(t.replace(lag_s=500.0), 180.0, False, None)._start(None)
    assert start[0] == pytest.approx(0.48541, rel=1e-4)
    assert start[1] == 500.0


def test_a_start_below_the_persist_time_is_raised_to_it() -> None:
    # docs/model.md §8.4 (m·τ₁ ≥ P) and §8.5 (any start put at or above P), reference 8.5c: the top tier's own
    # first-order interval √(2·10·3600/0.2) = 600 s lies below its persist time P = 1200 s, so the first-order
    # start is (120, 268.3, 1200) s; the optimum sits on the floor, (2, 5) at τ₁ = 120 s. A continuous stage
    # started at a top of 600 s rounds to (3, 4) at τ₁ = 100 s, 0.8162670 against 0.8166105.
    t = Tiers(
        tau1_s=1.0, every=(1.0, 1.0), stalls=(1.0, 3.0, 10.0), lag_s=1200.0, shares=(0.5, 0.3, 0.2),
        restarts=(60.0, 120.0, 600.0),
    )  # fmt: skip
    first = search._first_order_intervals(t, 3600.0, Scalar)
    assert first == pytest.approx([120.0, 268.328, 1200.0], rel=1e-6)
    own = search._first_order_intervals(t.replace(lag_s=0.0), 3600.0, Scalar)
    assert own[-1] == pytest.approx(600.0, rel=1e-12)
    for start in (None, tuple(own)):
        found = search.best(t, 3600.0, start=start)
        assert found.every == (2.0, 5.0), start
        assert found.tau1_s == pytest.approx(120.0, rel=1e-9)
        assert value(found, 3600.0) == pytest.approx(0.8166105, abs=1e-7)
    assert value(t.replace(every=(3.0, 4.0), tau1_s=100.0), 3600.0) == pytest.approx(0.8162670, abs=1e-7)
    best = value(found, 3600.0)
    for trial in itertools.product(range(1, 6), range(1, 12)):
        if trial != (2, 5):
            assert at_multiples(t, (float(trial[0]), float(trial[1])), 3600.0) < best, trial


# ------------------------------------------------------------------ the persist time is a floor


@pytest.mark.parametrize("count", [1, 2, 3])
def test_the_top_tier_never_goes_below_its_persist_time(count: int) -> None:
    # A 20 000 s persist on a job failing every 4 h: the unconstrained optimum of every tier is far shorter,
    # so the optimum sits on the floor m₂⋯m_L·τ₁ = P (docs/model.md §8.2, §8.4).
    stalls, shares, restarts = (3.0, 12.0, 0.5)[-count:], (0.90, 0.08, 0.02)[-count:], (60.0, 180.0, 600.0)[-count:]
    total = sum(shares)
    t = Tiers(
        tau1_s=1.0, every=(1.0,) * (count - 1), stalls=stalls, lag_s=20_000.0,
        shares=tuple(q / total for q in shares), restarts=restarts,
    )  # fmt: skip
    free = search.best(t, 14_400.0)
    assert free.storage_interval_s >= 20_000.0
    assert free.storage_interval_s == pytest.approx(20_000.0, rel=1e-6)
    if count > 1:
        held = search.best(t.replace(tau1_s=700.0), 14_400.0, tau1_fixed=True)
        assert held.tau1_s == 700.0
        assert held.storage_interval_s >= 20_000.0
        if count == 2:
            assert held.segments == math.ceil(20_000.0 / 700.0)


def test_a_preset_with_a_long_persist_reports_it_as_the_bound() -> None:
    config = evaluate(
        Config(
            checkpoint_bytes=6.48e12,
            bandwidth=324e6,
            mtbf_s=14_400.0,
            restart_s=600.0,
            snapshot_bandwidth=2e12,
            replica_survival=0.9,
            memory_bandwidth=2.16e12,
            memory_restart_s=60.0,
        )
    )
    # S / B = 6.48 TB / 324 MB/s = 20 000 s of persist.
    assert float(config.interval_s) >= 20_000.0
    assert any(c.kind == "lag_bound" for c in config.caveats)


# ------------------------------------------------------------------ every neighbour is worse


def random_schedule(
    count: int, log_mtbf: float, log_stalls: list[float], weights: list[float], log_restarts: list[float],
    lag_share: float,
) -> tuple[Tiers, float]:  # fmt: skip
    mtbf = 10**log_mtbf
    stalls = tuple(sorted(10**s for s in log_stalls[:count]))  # slower tiers stall longer
    total = sum(weights[:count])
    shares = tuple(w / total for w in weights[:count])
    restarts = tuple(sorted(10**r for r in log_restarts[:count]))
    lag = lag_share * math.sqrt(2.0 * stalls[-1] * mtbf)
    return Tiers(
        tau1_s=1.0, every=(1.0,) * (count - 1), stalls=stalls, lag_s=lag, shares=shares, restarts=restarts
    ), mtbf


SCHEDULES = {
    "count": st.integers(2, 4),
    "log_mtbf": st.floats(2.5, 5.0),
    "log_stalls": st.lists(st.floats(-2.0, 2.5), min_size=4, max_size=4),
    "weights": st.lists(st.floats(0.01, 1.0), min_size=4, max_size=4),
    "log_restarts": st.lists(st.floats(0.5, 3.0), min_size=4, max_size=4),
    "lag_share": st.one_of(st.just(0.0), st.floats(0.0, 3.0)),
}


@settings(max_examples=60, deadline=None)
@given(**SCHEDULES)
def test_the_optimum_beats_every_neighbouring_schedule(
    count: int, log_mtbf: float, log_stalls: list[float], weights: list[float], log_restarts: list[float],
    lag_share: float,
) -> None:  # fmt: skip
    # docs/model.md §8.5: no schedule one step away is better: τ₁ ± 0.1 % at the optimum's multiples, and each
    # m_i ± 1 at its own best τ₁.
    t, mtbf = random_schedule(count, log_mtbf, log_stalls, weights, log_restarts, lag_share)
    found = search.best(t, mtbf)
    best = value(found, mtbf)
    multiples = tuple(float(m) for m in found.every)
    event(f"{count} tiers, {'async' if t.lag_s > 0 else 'sync'}")
    if best < 1e-3:
        event("effective time near 0")
        return
    event("reaches the comparison")
    assert found.storage_interval_s >= t.lag_s * (1.0 - 1e-12)
    assert best >= at_multiples(t, multiples, mtbf) * (1.0 - 1e-12)
    for factor in (0.999, 1.001):
        nearby = found.replace(tau1_s=found.tau1_s * factor)
        if nearby.storage_interval_s >= t.lag_s:
            assert value(nearby, mtbf) <= best * (1.0 + 1e-12), factor
    for every in neighbours(multiples):
        assert at_multiples(t, every, mtbf) <= best * (1.0 + 1e-12), every


# The same 60 draws on every machine (docs/model.md §8.5 names the schedules where a start decides).
@settings(max_examples=60, deadline=None, derandomize=True)
@given(**SCHEDULES, factors=st.lists(st.lists(st.floats(-4.0, 4.0), min_size=4, max_size=4), min_size=3, max_size=3))
def test_the_optimum_does_not_depend_on_where_the_search_starts(
    count: int, log_mtbf: float, log_stalls: list[float], weights: list[float], log_restarts: list[float],
    lag_share: float, factors: list[list[float]],
) -> None:  # fmt: skip
    # docs/model.md §8.5: started from first order, or from each tier's first-order interval times 2^±4 (in any
    # order, below the persist time or not), the search lands on the same effective time, or (in a few
    # asynchronous four-tier draws) on whole multiples within 0.1 pp of it.
    t, mtbf = random_schedule(count, log_mtbf, log_stalls, weights, log_restarts, lag_share)
    found = search.best(t, mtbf)
    best = value(found, mtbf)
    event(f"{count} tiers, {'async' if t.lag_s > 0 else 'sync'}")
    if best < 1e-3:
        event("effective time near 0")
        return
    event("reaches the comparison")
    first = search._first_order_intervals(t, mtbf, Scalar)
    for row in factors:
        start = tuple(x * 2.0**f for x, f in zip(first, row, strict=False))
        other = search.best(t, mtbf, start=start)
        same = value(other, mtbf) == pytest.approx(best, rel=1e-9)
        event("the same optimum" if same else "another whole-multiple schedule, within 0.1 pp")
        assert value(other, mtbf) == pytest.approx(best, abs=1e-3), (start, other.every, found.every)


# Three schedules where a search that moved one multiple at a time, or a multiple only with its neighbour, or a
# partner only rounded down, ended lower from some starts: (1, 9) for (2, 6) with the top on its persist time,
# (3, 1, 3) for (2, 1, 4) across a tier merged with the next, and, synchronous, (8, 3) for (7, 4), reached by
# m₂ − 1 with m₃ rounded up (0.9353808 against 0.9353865; random schedules of the two tests above).
LOCAL_OPTIMA = [
    (
        Tiers(
            tau1_s=1.0, every=(1.0, 1.0), stalls=(3.206258579175959, 7.242663497684541, 299.73591649080635),
            lag_s=2029.5731953337745, shares=(0.3299738895430122, 0.33730730834883066, 0.3327188021081572),
            restarts=(9.935693348145046, 100.4803100367891, 643.0893976735227),
        ),
        2857.354506209077, [(725.9, 264.6, 5786.8), (44.0, 405.0, 6106.8), (365.9, 4754.0, 913.9)], (2.0, 6.0),
    ),
    (
        Tiers(
            tau1_s=1.0, every=(1.0, 1.0, 1.0),
            stalls=(1.7143713729365524, 7.1662694339209825, 15.161537571680645, 174.16930494663404),
            lag_s=84.31107463728141,
            shares=(0.22083010614023346, 0.1427893689754176, 0.3416090979557989, 0.2947714269285499),
            restarts=(3.627131383629791, 31.494052362276513, 36.67954971910864, 469.80101076916816),
        ),
        616.3857962937248, [(186.4, 536.2, 47.5, 240.3), (166.1, 67.3, 1549.5, 96.3), (468.9, 36.3, 815.8, 4079.0)],
        (2.0, 1.0, 4.0),
    ),
    (
        Tiers(
            tau1_s=1.0, every=(1.0, 1.0), stalls=(0.05055892700872934, 2.9412026405445215, 4.836158230966355),
            lag_s=0.0, shares=(0.4675383875458743, 0.46991383432883865, 0.06254777812528704),
            restarts=(4.763209259841249, 86.9716378288701, 208.69027194580272),
        ),
        3066.7583369649665, [(140.8, 1782.7, 3606.0), (252.1, 535.6, 3837.9), (2.0, 2712.7, 375.4)], (7.0, 4.0),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("t", "mtbf", "starts", "every"), LOCAL_OPTIMA)
def test_coupled_moves_leave_local_optima(
    t: Tiers, mtbf: float, starts: list[tuple[float, ...]], every: tuple[float, ...]
) -> None:
    # docs/model.md §8.5 (whole stage): from first order and from each start, the same multiples; every other
    # schedule in a box twice the optimum's is worse at its own best τ₁.
    found = search.best(t, mtbf)
    assert found.every == every
    best = value(found, mtbf)
    for start in starts:
        other = search.best(t, mtbf, start=start)
        assert other.every == every, start
        assert value(other, mtbf) == pytest.approx(best, rel=1e-12)
    for trial in itertools.product(*(range(1, 2 * int(m) + 2) for m in every)):
        if trial != every:
            assert at_multiples(t, tuple(map(float, trial)), mtbf) < best, trial


def test_five_tiers_take_at_most_three_times_the_evaluations_of_two(monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/model.md §8.5: the search's exact evaluations grow about linearly with the number of tiers. A stack
    # of five (a GPU-memory snapshot, a partner's memory, local NVMe, a burst buffer, remote storage) and the
    # same stack's top two.
    calls = [0]
    exact = tiers.effective

    def counted(schedule: Tiers, mtbf: float) -> Split:
        calls[0] += 1
        return exact(schedule, mtbf)

    monkeypatch.setattr(search, "effective", counted)
    stalls, shares = (0.02, 0.0633, 0.2637, 1.0, 3.24), (0.30, 0.55, 0.10, 0.03, 0.02)
    restarts = (300.0, 600.06, 600.13, 600.5, 603.24)
    used = {}
    for count in (2, 5):
        kept = list(shares[-count:])
        kept[0] += sum(shares[:-count])
        t = Tiers(
            tau1_s=1.0, every=(1.0,) * (count - 1), stalls=stalls[-count:], lag_s=0.0, shares=tuple(kept),
            restarts=restarts[-count:],
        )  # fmt: skip
        calls[0] = 0
        search.best(t, 11_160.0)
        used[count] = calls[0]
    assert used[5] <= 3 * used[2], used


# ------------------------------------------------------------------ the robust band


def test_the_robust_multiple_has_the_least_worst_regret() -> None:
    # gemini-inmemory with M known only within [2 h, 8 h]: for the robust m and its neighbours m ± 1, each at the
    # τ₁ of equal regrets between its two optima, the robust one has the least worst regret.
    config = Config(
        checkpoint_bytes=6.48e12, bandwidth=72e9, mtbf_s=14_400.0, restart_s=600.0, replica_survival=0.99,
        memory_bandwidth=2.16e12, memory_restart_s=60.0,
    )  # fmt: skip
    result = evaluate(config)
    found = band.band(config, result, 7_200.0, 28_800.0)
    m = found.robust_storage_every
    assert m is not None
    lo, hi = band._end(config, 7_200.0), band._end(config, 28_800.0)

    def worst(every: float) -> float:
        base = _base(config).replace(every=(every,))
        a, b = sorted((float(search.best_tau1(base, 7_200.0)), float(search.best_tau1(base, 28_800.0))))
        return band._minimax(config, lo, hi, lambda tau: base.replace(tau1_s=tau), a, b)[1]

    assert found.robust_regret_pp == pytest.approx(100.0 * worst(m), rel=1e-9)
    assert worst(m) < worst(m - 1.0)
    assert worst(m) < worst(m + 1.0)
    assert min(lo.best.every[0], hi.best.every[0]) <= m <= max(lo.best.every[0], hi.best.every[0])
