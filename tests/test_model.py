"""The model against references worked by hand in docs/model.md.

Every expected number below was computed by hand from the formulas of the
cited section, not copied from the program's output.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from ckptcalc.model.evaluation import TERMS, Config, daly_interval, dominant, evaluate, first_order, replace

# docs/model.md §2.1: Llama 3 405B. S = 405e9 × 16 B, B = 2 TB/s, M = 3.1 h, r = 10 min.
LLAMA = Config(checkpoint_bytes=405e9 * 16, bandwidth=2e12, mtbf_s=3.1 * 3600, restart_s=600.0)


def test_llama3_first_order_reference() -> None:
    # docs/model.md §2.1
    fo = first_order(LLAMA)
    assert LLAMA.write_s == pytest.approx(3.24)  # 6.48e12 / 2e12
    assert fo.optimal_interval_s == pytest.approx(268.918, abs=5e-4)  # √(2 · 3.24 · 11160)
    assert fo.write == pytest.approx(0.012048, abs=5e-7)
    assert fo.rework == pytest.approx(0.012048, abs=5e-7)
    assert fo.restart == pytest.approx(0.053763, abs=5e-7)
    assert fo.total == pytest.approx(0.077860, abs=5e-7)
    assert fo.effective == pytest.approx(0.92214, abs=5e-6)
    assert fo.restart / fo.total == pytest.approx(0.6905, abs=5e-4)
    # At τ*, write = rework = √(δ/2M) and loss* = √(2δ/M) + r/M.
    assert fo.write == pytest.approx(math.sqrt(3.24 / (2 * 11160)), rel=1e-12)
    assert fo.total == pytest.approx(math.sqrt(2 * 3.24 / 11160) + 600 / 11160, rel=1e-12)


def test_llama3_exact_reference() -> None:
    # docs/model.md §3.2 and §8.1
    result = evaluate(LLAMA)
    assert result.optimal_interval_s == pytest.approx(266.762, abs=5e-4)
    assert result.effective == pytest.approx(0.925004, abs=5e-7)
    assert result.restart == pytest.approx(0.0523437, abs=5e-8)
    assert result.write == pytest.approx(0.0112364, abs=5e-8)
    assert result.rework == pytest.approx(0.0114158, abs=5e-8)
    assert result.total == pytest.approx(0.074996, abs=5e-7)
    assert TERMS[result.dominant] == "restart"
    assert result.restart / result.total == pytest.approx(0.698, abs=5e-4)
    assert result.young_interval_s == pytest.approx(268.918, abs=5e-4)
    assert result.first_order.effective == pytest.approx(0.92214, abs=5e-6)
    assert result.caveats == ()


@pytest.mark.parametrize(
    ("change", "interval", "effective"),
    [
        # docs/model.md §3.3, each at its exact optimum.
        ({"restart_s": 120.0}, 266.762, 0.965657),
        ({"bandwidth": 2e10}, 2477.66, 0.737265),
        ({"mtbf_s": 24 * 3600.0}, 746.09, 0.984504),
    ],
)
def test_llama3_what_ifs(change: dict[str, Any], interval: float, effective: float) -> None:
    result = evaluate(replace(LLAMA, **change))
    assert result.optimal_interval_s == pytest.approx(interval, abs=0.01)
    assert result.effective == pytest.approx(effective, abs=5e-7)


@pytest.mark.parametrize(("mtbf", "minutes"), [(24 * 3600.0, 116.69), (6 * 3600.0, 56.71)])
def test_daly_interval_reference(mtbf: float, minutes: float) -> None:
    # docs/model.md §3.1: δ = 5 min; a changed coefficient (x/9 → x/8) moves these by more than 1e-9.
    x = 300.0 / (2 * mtbf)
    by_hand = math.sqrt(2 * 300.0 * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - 300.0
    assert daly_interval(300.0, mtbf) == pytest.approx(by_hand, rel=1e-12)
    assert daly_interval(300.0, mtbf) / 60 == pytest.approx(minutes, abs=5e-3)


def test_scale_to_100k_gpus_reference() -> None:
    # docs/model.md §5.1
    config = replace(LLAMA, mtbf_s=11160.0 * 16384 / 100000)
    result = evaluate(config)
    assert config.mtbf_s == pytest.approx(1828.4544)
    assert result.optimal_interval_s == pytest.approx(106.701, abs=5e-4)
    assert result.effective == pytest.approx(0.678227, abs=5e-7)
    assert result.first_order.effective == pytest.approx(0.612323, abs=5e-7)
    assert result.young_interval_s == pytest.approx(108.850, abs=5e-4)


def test_where_first_order_breaks_reference() -> None:
    # docs/model.md §8.2: δ = 325 s, M = 15 min, r = 10 min
    config = Config(checkpoint_bytes=6.5e12, bandwidth=20e9, mtbf_s=900.0, restart_s=600.0)
    result = evaluate(config)
    assert result.first_order.effective == 0.0
    assert result.first_order.total > 1
    assert result.optimal_interval_s == pytest.approx(565.333, abs=5e-4)
    assert result.effective == pytest.approx(0.190915, abs=5e-7)
    given = evaluate(replace(config, interval_s=300.0))
    assert given.interval_s == 300.0
    assert given.effective == pytest.approx(0.170696, abs=5e-7)
    assert given.optimal_effective == pytest.approx(0.190915, abs=5e-7)
    assert (given.optimal_effective - given.effective) * 100 == pytest.approx(2.0219, abs=5e-4)


def test_given_interval_is_evaluated_and_first_order_explains() -> None:
    config = Config(checkpoint_bytes=6.5e12, bandwidth=20e9, mtbf_s=11160.0, restart_s=600.0, interval_s=1800.0)
    result = evaluate(config)
    assert result.interval_s == 1800.0
    assert result.first_order.write == pytest.approx(325 / 1800)
    assert result.first_order.rework == pytest.approx(1800 / (2 * 11160))
    assert result.young_interval_s == pytest.approx(math.sqrt(2 * 325 * 11160))
    optimum = evaluate(replace(config, interval_s=None))
    assert optimum.effective > result.effective
    assert result.optimal_effective == pytest.approx(optimum.effective, rel=1e-15)


def test_split_sums_to_one() -> None:
    result = evaluate(replace(LLAMA, mtbf_s=300.0))
    assert result.effective + result.write + result.rework + result.restart == pytest.approx(1.0, abs=1e-15)
    assert 0 <= result.effective <= 1


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        ((0.1, 0.1, 0.05), 0),  # exact tie: the earlier term
        ((0.1, 0.1 * (1 + 1e-10), 0.05), 0),  # within 1e-9: tied
        ((0.1, 0.1 * (1 + 1e-8), 0.05), 1),  # beyond: the larger
        ((0.02, 0.3, 0.3), 1),
        ((0.02, 0.1, 0.3), 2),
    ],
)
def test_dominant_tie_rule_is_the_same_for_floats_and_arrays(terms: tuple[float, float, float], expected: int) -> None:
    # docs/model.md §8.6
    assert dominant(*terms) == expected
    arrays = [np.array([t, t]) for t in terms]
    assert list(dominant(*arrays)) == [expected, expected]


def test_scalar_and_array_agree() -> None:
    bandwidths = np.array([2e10, 2e11, 2e12, 2e13])
    grid = evaluate(Config(checkpoint_bytes=6.48e12, bandwidth=bandwidths, mtbf_s=11160.0, restart_s=600.0))
    for i, bw in enumerate(bandwidths):
        single = evaluate(Config(checkpoint_bytes=6.48e12, bandwidth=float(bw), mtbf_s=11160.0, restart_s=600.0))
        assert grid.effective[i] == pytest.approx(single.effective, rel=1e-14)
        assert grid.optimal_interval_s[i] == pytest.approx(single.optimal_interval_s, rel=1e-14)
        assert grid.dominant[i] == single.dominant
        assert grid.daly_interval_s is not None
        assert grid.daly_interval_s[i] == pytest.approx(single.daly_interval_s, rel=1e-12)


def test_plain_floats_do_not_need_numpy() -> None:
    result = evaluate(LLAMA)
    assert isinstance(result.effective, float)
    assert isinstance(result.dominant, int)
