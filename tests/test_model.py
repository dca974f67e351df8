"""The model against references worked by hand from the specification (MODEL.md).

Every expected number below was computed by hand from the formulas, not copied
from the program's output.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ckptcalc.model import TERMS, Config, evaluate

# MODEL.md §2: Llama 3 405B. S = 405e9 × 16 B, B = 2 TB/s, M = 3.1 h, r = 10 min.
LLAMA = Config(checkpoint_bytes=405e9 * 16, bandwidth=2e12, mtbf_s=3.1 * 3600, restart_s=600.0)


def test_llama3_reference() -> None:
    result = evaluate(LLAMA)
    assert LLAMA.write_s == pytest.approx(3.24)  # 6.48e12 / 2e12
    assert result.optimal_interval_s == pytest.approx(268.9, abs=0.05)  # √(2 · 3.24 · 11160)
    assert result.optimal_interval_s / 60 == pytest.approx(4.48, abs=0.005)
    assert result.write == pytest.approx(0.01205, abs=5e-6)
    assert result.rework == pytest.approx(0.01205, abs=5e-6)
    assert result.restart == pytest.approx(600 / 11160)  # 0.05376
    assert result.total == pytest.approx(0.07786, abs=5e-6)
    assert result.effective == pytest.approx(0.9221, abs=5e-5)
    assert TERMS[result.dominant] == "restart"
    assert result.restart / result.total == pytest.approx(0.691, abs=5e-4)
    assert result.caveats == ()


@pytest.mark.parametrize(
    ("change", "effective"),
    [
        # MODEL.md §2 what-ifs, each re-optimised.
        ({"restart_s": 120.0}, 0.9652),
        ({"bandwidth": 2e10}, 0.7053),
        ({"mtbf_s": 24 * 3600.0}, 0.9844),
    ],
)
def test_llama3_what_ifs(change: dict[str, float], effective: float) -> None:
    from ckptcalc.model import replace

    assert evaluate(replace(LLAMA, **change)).effective == pytest.approx(effective, abs=5e-5)


def test_bandwidth_divided_by_100_details() -> None:
    from ckptcalc.model import replace

    result = evaluate(replace(LLAMA, bandwidth=2e10))
    assert result.config.write_s == pytest.approx(324.0)
    assert result.optimal_interval_s == pytest.approx(2689, abs=0.5)


def test_at_optimum_write_equals_rework_and_loss_formula() -> None:
    # At τ*, write = rework = √(δ/2M) and loss* = √(2δ/M) + r/M.
    result = evaluate(LLAMA)
    delta, mtbf = 3.24, 11160.0
    assert result.write == pytest.approx(math.sqrt(delta / (2 * mtbf)))
    assert result.total == pytest.approx(math.sqrt(2 * delta / mtbf) + 600 / mtbf)


def test_given_interval_is_evaluated() -> None:
    from ckptcalc.model import replace

    # --size 6.5TB --bw 20GB/s --mtbf 3.1h --restart 10min --interval 30min
    config = Config(checkpoint_bytes=6.5e12, bandwidth=20e9, mtbf_s=11160.0, restart_s=600.0, interval_s=1800.0)
    result = evaluate(config)
    assert result.interval_s == 1800.0
    assert result.write == pytest.approx(325 / 1800)
    assert result.rework == pytest.approx(1800 / (2 * 11160))
    assert result.optimal_interval_s == pytest.approx(math.sqrt(2 * 325 * 11160))
    assert TERMS[result.dominant] == "write"
    optimum = evaluate(replace(config, interval_s=None))
    assert optimum.effective > result.effective


def test_warning_when_first_order_is_unreliable() -> None:
    config = Config(checkpoint_bytes=6.5e12, bandwidth=20e9, mtbf_s=3600.0, restart_s=600.0)
    kinds = {c.kind for c in evaluate(config).caveats}
    # δ/M = 325/3600 = 0.09 > 0.05
    assert "first_order_stall" in kinds
    assert "first_order_interval" in kinds


def test_loss_clamped_at_zero_with_warning() -> None:
    config = Config(checkpoint_bytes=1e12, bandwidth=1e9, mtbf_s=600.0, restart_s=900.0)
    result = evaluate(config)
    assert result.total > 1
    assert result.effective == 0.0
    assert "loss_clamped" in {c.kind for c in result.caveats}


def test_scalar_and_array_agree() -> None:
    bandwidths = np.array([2e10, 2e11, 2e12, 2e13])
    grid = evaluate(Config(checkpoint_bytes=6.48e12, bandwidth=bandwidths, mtbf_s=11160.0, restart_s=600.0))
    for i, bw in enumerate(bandwidths):
        single = evaluate(Config(checkpoint_bytes=6.48e12, bandwidth=float(bw), mtbf_s=11160.0, restart_s=600.0))
        assert grid.effective[i] == pytest.approx(single.effective, rel=1e-14)
        assert grid.optimal_interval_s[i] == pytest.approx(single.optimal_interval_s, rel=1e-14)
        assert grid.dominant[i] == single.dominant
        assert grid.exact_interval_s[i] == pytest.approx(single.exact_interval_s, rel=1e-12)


def test_plain_floats_do_not_need_numpy() -> None:
    result = evaluate(LLAMA)
    assert isinstance(result.effective, float)
    assert isinstance(result.dominant, int)
