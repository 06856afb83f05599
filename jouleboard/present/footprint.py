"""Electricity, cost and emissions of GPU energy: the calculator's formula and defaults.

The browser recomputes the same figures (templates/assets/rank.js, ``footprint``) when a
reader changes the inputs; the defaults are written into the page for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jouleboard.config import Registry
from jouleboard.present.formats import significant
from jouleboard.present.tables import Cell, Column, Table, model_cell
from jouleboard.rank import RankedRow
from jouleboard.records import Configuration
from jouleboard.urls import Urls

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


FOOTPRINT_COLUMNS = (
    Column("kwh_per_mtok", "kWh", "per 1M tokens", numeric=True),
    Column("cost_per_mtok", "Cost", "USD per 1M tokens", numeric=True),
    Column("co2_per_mtok", "CO₂e", "kg per 1M tokens", numeric=True),
    Column("kwh_per_kresp", "kWh", "per 1,000 responses", numeric=True),
    Column("cost_per_kresp", "Cost", "USD per 1,000 responses", numeric=True),
    Column("co2_per_kresp", "CO₂e", "kg per 1,000 responses", numeric=True),
)


def footprint_table(table_id: str, caption: str, rows: Sequence[RankedRow[Configuration]],
                    registry: Registry,
                    urls: Urls, inputs: FootprintInputs) -> Table:
    body = []
    for r in rows:
        per_mtok = footprint(r.config.energy_per_token_joules * 1e6, inputs)
        per_kresp = footprint(r.config.energy_per_response_joules * 1e3, inputs)
        values = (per_mtok.kwh, per_mtok.cost, per_mtok.grams_co2e / 1000,
                  per_kresp.kwh, per_kresp.cost, per_kresp.grams_co2e / 1000)
        body.append((model_cell(r.config.model_id, registry, urls),
                     *(Cell(v, significant(v, 3)) for v in values)))
    return Table(table_id, caption, (Column("model", "Model"), *FOOTPRINT_COLUMNS), tuple(body))
