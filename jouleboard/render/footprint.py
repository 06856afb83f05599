"""Electricity, cost and emissions of GPU energy: the calculator's formula and defaults.

The browser recomputes the same figures (templates/assets/rank.js, ``footprint``) when a
reader changes the inputs; the defaults are written into the page for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jouleboard.config.registry import Registry
from jouleboard.core.urls import Urls
from jouleboard.measure.formats import significant
from jouleboard.rank.ranking import RankedRow
from jouleboard.rank.tables import Cell, Column, Table, model_cell

JOULES_PER_KWH = 3.6e6


@dataclass(frozen=True, slots=True)
class FootprintInputs:
    """Illustrative defaults, stated on the page: a data-centre electricity price, a
    typical large-facility PUE, and a grid carbon intensity near the world average."""

    price_per_kwh: float = 0.10  # USD
    pue: float = 1.2  # facility energy / IT energy
    grams_co2e_per_kwh: float = 400.0


@dataclass(frozen=True, slots=True)
class Footprint:
    kwh: float
    cost: float
    grams_co2e: float


def footprint(energy_joules: float, inputs: FootprintInputs) -> Footprint:
    """Facility electricity (GPU energy x PUE), its cost and its emissions."""
    kwh = energy_joules * inputs.pue / JOULES_PER_KWH
    return Footprint(kwh, kwh * inputs.price_per_kwh, kwh * inputs.grams_co2e_per_kwh)


Scale = tuple[str, str, float, str]  # key, "per 1M tokens", amount, energy field


def footprint_columns(scales: Sequence[Scale]) -> tuple[Column, ...]:
    """kWh, cost and CO2e for each amount of output a kind states (1M tokens, 1,000
    responses, 1,000 images, ...)."""
    return tuple(
        column
        for key, per, _, _ in scales
        for column in (
            Column(f"kwh_per_{key}", "kWh", per, numeric=True),
            Column(f"cost_per_{key}", "Cost", f"USD {per}", numeric=True),
            Column(f"co2_per_{key}", "CO₂e", f"kg {per}", numeric=True),
        )
    )


def footprint_table(
    table_id: str,
    caption: str,
    rows: Sequence[RankedRow[Any]],
    registry: Registry,
    urls: Urls,
    inputs: FootprintInputs,
    scales: Sequence[Scale],
) -> Table:
    body = []
    for r in rows:
        values: list[float] = []
        for _, _, amount, energy in scales:
            f = footprint(getattr(r.config, energy) * amount, inputs)
            values += [f.kwh, f.cost, f.grams_co2e / 1000]
        body.append(
            (
                model_cell(r.config.model_id, registry, urls),
                *(Cell(v, significant(v, 3)) for v in values),
            )
        )
    return Table(
        table_id, caption, (Column("model", "Model"), *footprint_columns(scales)), tuple(body)
    )
