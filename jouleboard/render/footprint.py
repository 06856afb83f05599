"""Electricity, cost and emissions of GPU energy: the calculator's formula and defaults.

The browser recomputes the same figures (templates/assets/js/rank.js, ``footprint``) when a
reader changes the inputs; the defaults are written into the page for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from jouleboard.config.registry import Registry
from jouleboard.core.urls import Urls
from jouleboard.measure.formats import significant
from jouleboard.rank.ranking import Rankable, RankedRow
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


# A figure's steps (suffix, size): energy in kWh, and plain numbers (USD, kg).
ENERGY_STEPS = (("Wh", 1e-3), ("kWh", 1.0), ("MWh", 1e3), ("GWh", 1e6), ("TWh", 1e9))
NUMBER_STEPS = (("", 1.0), ("k", 1e3), ("M", 1e6), ("B", 1e9), ("T", 1e12))


def scaled(value: float, steps: Sequence[tuple[str, float]]) -> tuple[str, str]:
    """``value`` in the largest step it reaches (the first when it reaches none), to 3
    significant digits, and that step's suffix; a figure that rounds to 1,000 of a step
    reads 1.00 of the next. js/formats.js ``scaled`` is the same."""
    i = 0
    if value != 0 and math.isfinite(value):
        i = max((n for n, (_, size) in enumerate(steps) if abs(value) >= size), default=0)
    text = significant(value / steps[i][1], 3)
    if i + 1 < len(steps) and abs(float(text.replace(",", ""))) >= 1000:
        i += 1
        text = significant(value / steps[i][1], 3)
    return text, steps[i][0]


def energy_text(kwh: float) -> str:
    """``350 Wh``, ``1.23 MWh``, ``4.56 GWh``: an amount of electricity in kWh, scaled."""
    text, unit = scaled(kwh, ENERGY_STEPS)
    return f"{text} {unit}"


def number_text(value: float) -> str:
    """``0.0123``, ``456``, ``1.23k``, ``45.6M``, ``7.89B``: a cost or a mass, scaled."""
    text, suffix = scaled(value, NUMBER_STEPS)
    return f"{text}{suffix}"


Scale = tuple[str, str, float, str]  # key, "per 1M tokens", amount, energy field


def footprint_columns(scales: Sequence[Scale]) -> tuple[Column, ...]:
    """Electricity (its unit in each cell: Wh to GWh), cost and CO2e for each amount of
    output a kind states (1M tokens, 1,000 responses, 1,000 images, ...)."""
    return tuple(
        column
        for key, per, _, _ in scales
        for column in (
            Column(f"kwh_per_{key}", "Electricity", per, numeric=True),
            Column(f"cost_per_{key}", "Cost", f"USD {per}", numeric=True),
            Column(f"co2_per_{key}", "CO₂e", f"kg {per}", numeric=True),
        )
    )


C = TypeVar("C", bound=Rankable)


def footprint_table(
    table_id: str,
    caption: str,
    rows: Sequence[RankedRow[C]],
    registry: Registry,
    urls: Urls,
    inputs: FootprintInputs,
    scales: Sequence[Scale],
) -> Table:
    body = []
    for r in rows:
        cells: list[Cell] = []
        for _, _, amount, energy in scales:
            f = footprint(getattr(r.config, energy) * amount, inputs)
            cells += [
                Cell(f.kwh, energy_text(f.kwh)),
                Cell(f.cost, number_text(f.cost)),
                Cell(f.grams_co2e / 1000, number_text(f.grams_co2e / 1000)),
            ]
        body.append((model_cell(r.config.model_id, registry, urls), *cells))
    return Table(
        table_id,
        caption,
        (Column("model", "Model"), *footprint_columns(scales)),
        tuple(body),
        glossary_url=urls.url(urls.glossary),  # each figure's header links what it means
    )
