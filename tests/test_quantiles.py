"""The quantiles of Student's t and chi-square (jouleboard/rank/quantiles.py) against printed
tables and against SciPy, the reference implementation (a test dependency only)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jouleboard.rank.quantiles import chi_square_quantile, student_t_quantile
from tests.conftest import ScipyQuantiles

# Two-sided 95% critical values t(0.975, nu), as printed in any table of Student's t
# (e.g. the NIST/SEMATECH e-Handbook, table 1.3.6.7.2), to three decimals.
T_TABLE = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 10: 2.228, 30: 2.042, 100: 1.984}
# Chi-square (NIST table 1.3.6.7.4): (p, nu) -> quantile, to three decimals.
CHI2_TABLE = {
    (0.025, 3): 0.216,
    (0.975, 3): 9.348,
    (0.05, 10): 3.940,
    (0.95, 10): 18.307,
    (0.01, 1): 0.000157,
    (0.99, 30): 50.892,
}


@pytest.mark.parametrize(("nu", "printed"), T_TABLE.items())
def test_t_matches_the_printed_table(nu: int, printed: float) -> None:
    assert student_t_quantile(0.975, nu) == pytest.approx(printed, abs=5e-4)


@pytest.mark.parametrize(("key", "printed"), CHI2_TABLE.items())
def test_chi_square_matches_the_printed_table(key: tuple[float, int], printed: float) -> None:
    p, nu = key
    assert chi_square_quantile(p, nu) == pytest.approx(printed, rel=2e-3)


def test_t_with_one_degree_is_cauchy() -> None:
    """With one degree of freedom t is the Cauchy distribution: tan(pi (p - 1/2))."""
    for p in (0.6, 0.9, 0.975, 0.9995):
        assert student_t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-12)


def test_t_with_two_degrees_has_a_closed_form() -> None:
    """nu = 2: t = (2p - 1) sqrt(2 / (4 p (1 - p)))."""
    for p in (0.6, 0.9, 0.975, 0.9995):
        closed = (2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p)))
        assert student_t_quantile(p, 2) == pytest.approx(closed, rel=1e-12)


@settings(max_examples=300, deadline=None)
@given(
    p=st.floats(0.75, 0.9999995),  # the range site.yaml's confidence reaches: (1 + c) / 2
    nu=st.floats(0.5, 10_000),
)
def test_t_agrees_with_scipy(p: float, nu: float, scipy_quantiles: ScipyQuantiles) -> None:
    assert student_t_quantile(p, nu) == pytest.approx(scipy_quantiles.t(p, nu), rel=1e-9)


@settings(max_examples=300, deadline=None)
@given(p=st.floats(5e-7, 1 - 5e-7), nu=st.floats(0.5, 10_000))
def test_chi_square_agrees_with_scipy(p: float, nu: float, scipy_quantiles: ScipyQuantiles) -> None:
    assert chi_square_quantile(p, nu) == pytest.approx(scipy_quantiles.chi2(p, nu), rel=1e-9)


def test_t_is_symmetric_and_falls_towards_the_normal() -> None:
    assert student_t_quantile(0.025, 3) == pytest.approx(-student_t_quantile(0.975, 3), rel=1e-14)
    values = [student_t_quantile(0.975, nu) for nu in (1, 2, 3, 10, 100, 1e5)]
    assert values == sorted(values, reverse=True)
    assert values[-1] == pytest.approx(1.959963984540054, rel=1e-4)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, math.nan])
def test_a_probability_outside_zero_and_one_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        student_t_quantile(bad, 3)
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        chi_square_quantile(bad, 3)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_degrees_of_freedom_must_be_positive_and_finite(bad: float) -> None:
    with pytest.raises(ValueError, match="degrees of freedom"):
        student_t_quantile(0.975, bad)
    with pytest.raises(ValueError, match="degrees of freedom"):
        chi_square_quantile(0.975, bad)
