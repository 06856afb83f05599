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
from jouleboard.render.text_fit import fit

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


WIDTH = 240  # px; the badge's height grows with the lines its text needs (at least 96)
MIN_HEIGHT = 96
FONT = "Liberation Sans, Arial, Helvetica, Arimo, sans-serif"  # text_fit's metrics
# Lines are laid out this much narrower than their room, so a reader whose browser falls back
# to a wider sans-serif (DejaVu Sans draws these strings up to 13 % wider) sees them whole.
FALLBACK_SLACK = 1.15
SQUARE = (176, 8, 56)  # the band's square: left, top, side (px)
PAD = 8  # px around the text


def _lines(
    text: str, width: float, size: float, lines: int, bold: bool = False, sep: str = " "
) -> list[_Line]:
    """``text`` wrapped at ``sep`` (never cut) into ``width`` px, smaller where it needs
    more than ``lines`` lines."""
    wrapped, shown = fit(text, width / FALLBACK_SLACK, size, lines, bold, 9, sep)
    return [_Line(line, shown, bold) for line in wrapped]


@dataclass(frozen=True, slots=True)
class _Line:
    text: str
    size: float  # px
    bold: bool = False


def _text(lines: list[_Line], top: float, fill: str = "") -> tuple[str, float]:
    """SVG text elements of ``lines`` from ``top`` down; returns them and the next top."""
    out = []
    for line in lines:
        top += line.size * 1.2
        weight = ' font-weight="700"' if line.bold else ""
        colour = f' fill="{fill}"' if fill else ""
        out.append(
            f'<text x="{PAD}" y="{top - line.size * 0.25:g}" font-size="{line.size:g}"'
            f"{weight}{colour}>{markup(line.text)}</text>"
        )
    return "".join(out), top


def label_svg(label: EnergyLabel) -> str:
    """A 240 px wide badge, 96 px high or more where its text needs more lines: every text
    is whole, wrapped at its spaces (and drawn smaller where that is not enough), never
    cut. Every string goes through :func:`jouleboard.core.escape.markup` (quotes included:
    the model and task names sit in an attribute too)."""
    return _badge(label)[0]


def label_height(label: EnergyLabel) -> int:
    """The badge's height in px (what an ``<img>`` of it says)."""
    return _badge(label)[1]


def _badge(label: EnergyLabel) -> tuple[str, int]:
    left, top, side = SQUARE
    beside = left - PAD - 6  # px of a line beside the square
    full = WIDTH - 2 * PAD
    # The place (range) on the task where ranked, else how it compares with the best.
    standing = (
        f"#{label.places}"
        if label.places
        else f"best {_figure(label.best_value, label.best_shown)}"
    )
    figure = f"{_figure(label.value, label.shown)} {label.unit} · {standing}"
    head, y = _text(
        _lines(label.model, beside, 13, 2, bold=True)
        + _lines(label.task, beside, 11, 2)
        + _lines(figure, beside, 11, 1),
        4,
    )
    steps_top = max(y + 10, top + side - 4)  # the band steps: under the text and the square

    def step(i: int, b: str) -> str:
        lift, faded = (6, "") if b == label.band else (0, ' opacity="0.35"')
        return (
            f'<rect x="{PAD + i * 15}" y="{steps_top - lift:g}" width="13" '
            f'height="{14 + lift}" rx="2" fill="{COLORS[b]}"{faded}/>'
        )

    steps = "".join(step(i, b) for i, b in enumerate(BANDS))
    footer = " · ".join(part for part in (label.boundary, label.deadline, label.data_date) if part)
    foot, y = _text(_lines(footer, full, 10, 2, sep=" · "), steps_top + 17, "#5c6370")
    height = max(MIN_HEIGHT, round(y + 5))
    where = (
        f", place {markup(label.places)} of {label.ranked}, "
        f"best {_figure(label.best_value, label.best_shown)}"
        if label.places
        else ""
    )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" role="img" aria-label="Energy label {label.band}: '
        f"{markup(label.model)}, {markup(label.task)}, "
        f"{_figure(label.value, label.shown)} {markup(label.unit)}"
        f'{", " + markup(label.boundary) if label.boundary else ""}{where}">'
        f"<title>{markup(label.model)}, {markup(label.task)}</title>"
        f'<rect width="{WIDTH}" height="{height}" rx="8" fill="#ffffff" stroke="#c8ccd2"/>'
        f'<rect x="{left}" y="{top}" width="{side}" height="{side}" rx="6" '
        f'fill="{COLORS[label.band]}"/>'
        f'<text x="{left + side / 2:g}" y="{top + 42}" font-size="40" font-weight="700" '
        f'text-anchor="middle" fill="#ffffff" font-family="{FONT}">{label.band}</text>'
        f'<g font-family="{FONT}" fill="#1b1d21">{head}{foot}</g>{steps}</svg>\n'
    )
    return svg, height
