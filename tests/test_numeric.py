"""The incomplete gamma function and χ² quantiles of ckptcalc.model.numeric, against scipy and hand-worked values."""

from __future__ import annotations

import math

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from scipy import special as sp

from ckptcalc.model.numeric import chi2_quantile, gamma_p, gamma_q


@pytest.mark.parametrize(
    ("a", "x", "p"),
    [
        # Integer a: P(n, x) = 1 − e^{−x}·Σ_{j<n} x^j/j! (docs/fit.md §5), worked by hand.
        (1.0, 1.0, 1.0 - math.exp(-1.0)),
        (2.0, 1.0, 1.0 - 2.0 * math.exp(-1.0)),
        (3.0, 2.0, 1.0 - math.exp(-2.0) * (1.0 + 2.0 + 2.0)),
        # a = ½: P(½, x) = erf(√x).
        (0.5, 0.25, math.erf(0.5)),
        (0.5, 9.0, math.erf(3.0)),
    ],
)
def test_incomplete_gamma_hand_worked(a: float, x: float, p: float) -> None:
    assert gamma_p(a, x) == pytest.approx(p, rel=1e-13)
    assert gamma_q(a, x) == pytest.approx(1.0 - p, rel=1e-12)


def test_incomplete_gamma_edges() -> None:
    assert gamma_p(2.0, 0.0) == 0.0 and gamma_q(2.0, 0.0) == 1.0
    assert gamma_p(2.0, math.inf) == 1.0 and gamma_q(2.0, math.inf) == 0.0


def test_upper_gamma_far_in_its_tail_is_zero_without_the_fraction(monkeypatch: pytest.MonkeyPatch) -> None:
    # Q(2/3, 4.95e16): the prefix x^a e^{-x}/Γ(a) underflows, so Q is 0 in double precision. The continued
    # fraction cannot converge there (b += 2 no longer moves b = 4.95e16) and once ran all 10^7 terms (3 s,
    # met by a Weibull optimum at 9 ms intervals); with one term allowed, the answer is still 0.
    from ckptcalc.model import numeric

    monkeypatch.setattr(numeric, "_MAX_TERMS", 1)
    assert gamma_q(2.0 / 3.0, 4.95e16) == 0.0
    assert sp.gammaincc(2.0 / 3.0, 4.95e16) == 0.0
    assert gamma_q(2.0 / 3.0, 700.0) == pytest.approx(sp.gammaincc(2.0 / 3.0, 700.0), rel=1e-3)  # the fraction


@settings(max_examples=300, deadline=None)
@given(log_a=st.floats(-2.0, 4.0), log_ratio=st.floats(-3.0, 1.5))
def test_incomplete_gamma_matches_scipy(log_a: float, log_ratio: float) -> None:
    a = 10.0**log_a
    x = a * 10.0**log_ratio
    expected_p, expected_q = float(sp.gammainc(a, x)), float(sp.gammaincc(a, x))
    event("series" if x < a + 1.0 else "continued fraction")
    for got, expected in ((gamma_p(a, x), expected_p), (gamma_q(a, x), expected_q)):
        if expected > 1e-250:
            assert got == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("probability", [0.025, 0.05, 0.5, 0.95, 0.975])
@pytest.mark.parametrize("dof", [1, 2, 6, 12, 838, 840, 20_000])
def test_chi2_quantile_matches_scipy(probability: float, dof: int) -> None:
    from scipy import stats  # a second to import, in the test that needs it rather than in every collection

    assert chi2_quantile(probability, dof) == pytest.approx(float(stats.chi2.ppf(probability, dof)), rel=1e-11)


def test_chi2_quantile_with_two_degrees_of_freedom_is_a_logarithm() -> None:
    # χ²(p; 2) = −2·ln(1 − p), the n = 0 bound of docs/fit.md §4.
    assert chi2_quantile(0.95, 2) == pytest.approx(-2.0 * math.log(0.05), rel=1e-13)
    assert chi2_quantile(0.025, 2) == pytest.approx(-2.0 * math.log(0.975), rel=1e-13)


@pytest.mark.parametrize(("probability", "dof"), [(0.0, 2), (1.0, 2), (0.5, 0), (math.nan, 2)])
def test_chi2_quantile_refuses_impossible_arguments(probability: float, dof: float) -> None:
    with pytest.raises(ValueError, match="need 0 < p < 1"):
        chi2_quantile(probability, dof)
