"""Energy labels: an appliance-style A–G badge per model and task, as a small SVG.

Bands compare a model's tokens per joule (its chosen configuration at the task's default
deadline) with the best model of the task: A within a factor of 2 of the best, then one
band per further halving (B down to 1/4, C to 1/8, ... F to 1/64), G below that. The
scale is relative to the current field, so a label is dated with the data version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jouleboard.core.escape import markup

BANDS = "ABCDEFG"
# Green to red, dark enough for white text (WCAG AA at the sizes used).
COLORS = {
    "A": "#0a7d3b",
    "B": "#3f7f12",
    "C": "#6b7a00",
    "D": "#8a6d00",
    "E": "#a35a00",
    "F": "#b3400f",
    "G": "#b3261e",
}


@dataclass(frozen=True, slots=True)
class EnergyLabel:
    band: str
    value: float  # outputs per joule, kJ or MJ (as ``unit`` says)
    best_value: float
    unit: str  # e.g. tokens/J, images/kJ
    model: str
    task: str
    data_date: str
    deadline: str
    # The places the measurement noise allows it on the task ("1–4"; "" for none), and of
    # how many ranked models.
    places: str = ""
    ranked: int = 0
    # The figures as every table of the task prints them (measure/formats.py, the task's
    # efficiency rule): 37.7 videos/MJ, not 37.75; "" falls back to two decimals.
    shown: str = ""
    best_shown: str = ""
    boundary: str = ""  # what the energy includes, shortly: "GPU energy" (measure/units.py)


def band(value: float, best_value: float) -> str:
    """A for >= 1/2 of the best, B for >= 1/4, ..., F for >= 1/64, else G."""
    ratio = value / best_value
    if ratio >= 0.5:
        return "A"
    halvings = math.ceil(-math.log2(ratio)) - 1  # 1 for [1/4, 1/2), 2 for [1/8, 1/4) ...
    return BANDS[min(halvings, len(BANDS) - 1)]


def _figure(value: float, shown: str = "") -> str:
    """``shown`` (the tables' figure) where given, else two decimals (the whole number past
    100)."""
    if shown:
        return shown
    return f"{value:.2f}" if value < 100 else f"{value:,.0f}"


def label_svg(label: EnergyLabel) -> str:
    """A 240x96 badge; every string goes through :func:`jouleboard.core.escape.markup` (quotes
    included: the model and task names sit in an attribute too)."""

    def step(i: int, b: str) -> str:
        lift, faded = (6, "") if b == label.band else (0, ' opacity="0.35"')
        return (
            f'<rect x="{8 + i * 15}" y="{60 - lift}" width="13" height="{14 + lift}" '
            f'rx="2" fill="{COLORS[b]}"{faded}/>'
        )

    steps = "".join(step(i, b) for i, b in enumerate(BANDS))

    def _fit(text: str, chars: int) -> str:
        # The badge starts 168 px in: longer names end in an ellipsis before it (the
        # aria-label keeps them whole).
        return markup(text if len(text) <= chars else text[: chars - 1].rstrip() + "…")

    model, task = markup(label.model[:38]), markup(label.task[:40])
    # The place (range) on the task where ranked, else how it compares with the best.
    standing = (
        f"#{markup(label.places)}"
        if label.places
        else f"best {_figure(label.best_value, label.best_shown)}"
    )
    where = (
        f", place {markup(label.places)} of {label.ranked}, "
        f"best {_figure(label.best_value, label.best_shown)}"
        if label.places
        else ""
    )
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="96" viewBox="0 0 240 96" '
        f'role="img" aria-label="Energy label {label.band}: {model}, {task}, '
        f"{_figure(label.value, label.shown)} {markup(label.unit)}"
        f'{", " + markup(label.boundary) if label.boundary else ""}{where}">'
        f"<title>{markup(label.model)}, {markup(label.task)}</title>"
        '<rect width="240" height="96" rx="8" fill="#ffffff" stroke="#c8ccd2"/>'
        f'<rect x="176" y="8" width="56" height="56" rx="6" fill="{COLORS[label.band]}"/>'
        f'<text x="204" y="50" font-size="40" font-weight="700" text-anchor="middle" '
        f'fill="#ffffff" font-family="system-ui, sans-serif">{label.band}</text>'
        '<g font-family="system-ui, sans-serif" fill="#1b1d21">'
        f'<text x="8" y="20" font-size="13" font-weight="700">{_fit(label.model, 20)}</text>'
        f'<text x="8" y="36" font-size="11">{_fit(label.task, 26)}</text>'
        f'<text x="8" y="52" font-size="11">{_figure(label.value, label.shown)} '
        f"{markup(label.unit)} · {standing}</text>"
        f'<text x="8" y="91" font-size="9" fill="#5c6370">'
        f"{markup(label.boundary) + ' · ' if label.boundary else ''}{markup(label.deadline)} · "
        f"{markup(label.data_date)}</text></g>{steps}</svg>\n"
    )
