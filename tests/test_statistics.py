"""The descriptive figures the documents print, against values worked by hand."""

from __future__ import annotations

import pytest

from ckptcalc.model.statistics import points, quantiles, shares, tally, wilson_interval


@pytest.mark.parametrize(
    ("hits", "total", "low", "high"),
    [
        # The roots of (1 + z²/n)p² − (2p̂ + z²/n)p + p̂² = 0, z = 1.959964 (the score test inverted):
        # p̂ = 1/2, n = 10: 1.384146p² − 1.384146p + 0.25 = 0.
        (5, 10, 0.236593, 0.763407),
        # No hit: the lower end is 0 and the upper z²/(n + z²) = 3.8415/13.8415.
        (0, 10, 0.0, 0.277533),
        # All hits: the mirror image.
        (10, 10, 0.722467, 1.0),
        # p̂ = 0.9, n = 100: 1.038415p² − 1.838415p + 0.81 = 0.
        (90, 100, 0.825634, 0.944771),
    ],
)
def test_wilson_interval(hits: int, total: int, low: float, high: float) -> None:
    assert wilson_interval(hits, total) == pytest.approx((low, high), abs=2e-6)


def test_wilson_interval_ends_are_exact_at_none_and_all() -> None:
    assert wilson_interval(0, 7)[0] == 0.0
    assert wilson_interval(7, 7)[1] == 1.0


def test_quantiles_interpolate_linearly() -> None:
    # 1..5: the 10th percentile sits 0.4 of the way from 1 to 2, the 90th 0.6 from 4 to 5.
    assert quantiles([5.0, 1.0, 3.0, 2.0, 4.0]) == pytest.approx({"p10": 1.4, "p50": 3.0, "p90": 4.6, "mean": 3.0})


def test_shares_and_points() -> None:
    assert shares({"a": 1.0, "b": 3.0}, 4.0) == {"a": 0.25, "b": 0.75}
    assert shares({"a": 0.0, "b": 0.0}, 0.0) == {"a": 0.0, "b": 0.0}
    assert points(0.9657, 0.925) == pytest.approx(4.07)
    assert points(0.5, 0.75) == -25.0


def test_tally_keeps_first_seen_order() -> None:
    assert list(tally([("b", 2), ("a", 1), ("b", 5)]).items()) == [("b", 7), ("a", 1)]
