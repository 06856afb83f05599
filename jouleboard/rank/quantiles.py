"""Quantiles of the distributions the noise model needs: Student's t (the critical value of
an uncertainty estimated from few repeats) and chi-square (the interval of that estimate).

The standard library has only the normal distribution (``statistics.NormalDist``); these
two are small enough to own rather than depend on SciPy for two numbers per data set. Each
quantile inverts its distribution function by bisection to the last representable step, so
it is as exact as the function it inverts; tests/test_quantiles.py checks both against
SciPy and against printed tables.

Distribution functions through the regularized incomplete beta and gamma functions, by
their continued fractions (Lentz's method) and series, as in Numerical Recipes (3rd ed.,
6.2 and 6.4).
"""

from __future__ import annotations

import math
from collections.abc import Callable

_TINY = 1e-300
_STEPS = 400  # continued-fraction and series terms; converges in far fewer for our ranges


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _STEPS):
        m2 = 2 * m
        for numerator in (
            m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + numerator / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, for a, b > 0, 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _gamma_parts(a: float, x: float) -> tuple[float, float]:
    """(P(a, x), Q(a, x)), the regularized lower and upper incomplete gamma functions, for
    a > 0, x >= 0: the smaller of the two computed directly, so a tail keeps its digits."""
    if x <= 0.0:
        return 0.0, 1.0
    front = math.exp(a * math.log(x) - x - math.lgamma(a))
    if x < a + 1.0:  # P by its series
        term = total = 1.0 / a
        n = a
        for _ in range(_STEPS * 10):
            n += 1.0
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-17:
                break
        lower = total * front
        return lower, 1.0 - lower
    # Q by its continued fraction (modified Lentz).
    b = x + 1.0 - a
    c, d = 1.0 / _TINY, 1.0 / b
    h = d
    for i in range(1, _STEPS):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = b + an / c
        c = c if abs(c) > _TINY else _TINY
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    upper = front * h
    return 1.0 - upper, upper


def regularized_gamma(a: float, x: float) -> float:
    """P(a, x), the regularized lower incomplete gamma function, for a > 0, x >= 0."""
    return _gamma_parts(a, x)[0]


def _invert(falls: Callable[[float], float], target: float) -> float:
    """The x >= 0 where the decreasing function ``falls`` reaches ``target``: bisection until
    the bracket cannot shrink (the last representable step)."""
    low, high = 0.0, 1.0
    while falls(high) > target:
        low, high = high, high * 2.0
        if high > 1e300:
            raise ValueError("quantile out of range")
    while True:
        middle = (low + high) / 2.0
        if middle in (low, high):
            return high
        if falls(middle) > target:
            low = middle
        else:
            high = middle


def _check(p: float) -> None:
    if not 0.0 < p < 1.0:
        raise ValueError(f"a probability must lie strictly between 0 and 1, not {p}")


def student_t_quantile(p: float, freedom: float) -> float:
    """The p-quantile of Student's t with ``freedom`` degrees of freedom (> 0):
    t(0.975, 3) = 3.182446305..."""
    _check(p)
    if freedom <= 0 or not math.isfinite(freedom):
        raise ValueError(f"degrees of freedom must be positive and finite, not {freedom}")
    if p == 0.5:
        return 0.0
    tail = min(p, 1.0 - p)  # P(T > t) for the positive quantile
    half = freedom / 2.0
    if tail < 0.25:  # the tail itself keeps its digits: P(T > t) = I_x(nu/2, 1/2) / 2

        def falls(t: float) -> float:
            return 0.5 * regularized_beta(half, 0.5, freedom / (freedom + t * t))

        t = _invert(falls, tail)
    else:  # near the median the central part does: P(|T| < t) = I_y(1/2, nu/2)

        def falls(t: float) -> float:
            return -regularized_beta(0.5, half, t * t / (freedom + t * t))

        t = _invert(falls, -(1.0 - 2.0 * tail))
    return t if p > 0.5 else -t


def chi_square_quantile(p: float, freedom: float) -> float:
    """The p-quantile of the chi-square distribution with ``freedom`` degrees of freedom:
    chi2(0.025, 3) = 0.2157952...; chi2(0.975, 3) = 9.3484036..."""
    _check(p)
    if freedom <= 0 or not math.isfinite(freedom):
        raise ValueError(f"degrees of freedom must be positive and finite, not {freedom}")
    half = freedom / 2.0
    if p < 0.5:  # invert P where it is the small one, Q where that is
        return _invert(lambda x: -_gamma_parts(half, x / 2.0)[0], -p)
    return _invert(lambda x: _gamma_parts(half, x / 2.0)[1], 1.0 - p)
