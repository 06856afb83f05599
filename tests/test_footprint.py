"""The calculator's formula on hand-computed cases."""

from __future__ import annotations

import pytest

from jouleboard.render.footprint import FootprintInputs, footprint


def test_one_million_tokens_at_a_tenth_of_a_joule() -> None:
    # 0.1 J/token x 1e6 = 1e5 J of GPU energy; x PUE 1.2 = 1.2e5 J = 1/30 kWh.
    f = footprint(0.1 * 1e6, FootprintInputs(price_per_kwh=0.3, pue=1.2, grams_co2e_per_kwh=450.0))
    assert f.kwh == pytest.approx(1 / 30, rel=1e-12)
    assert f.cost == pytest.approx(0.01, rel=1e-12)
    assert f.grams_co2e == pytest.approx(15.0, rel=1e-12)


def test_a_kilowatt_hour_is_3_6_megajoules() -> None:
    f = footprint(3.6e6, FootprintInputs(price_per_kwh=0.1, pue=1.0, grams_co2e_per_kwh=400.0))
    assert (f.kwh, f.cost, f.grams_co2e) == pytest.approx((1.0, 0.1, 400.0))
