"""Names beside the points of a scatter chart (the accuracy chart names its Pareto front and
the models whose colour another shares): each name takes the one of six places around its
point (above or below it: on its left, on its right or centred) that covers the fewest other
marks (points, the front's step line, names placed before it) and stays inside the plot,
chosen for each render of the chart (the desktop SVG, the phone one). Pure arithmetic on
pixel positions; plan/task_charts.py puts each choice in the chart's rows and charts.py
draws it."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from jouleboard.render.text_fit import text_width

NAME_SIZE = 11  # px: the names' font size
NAME_DX = 7  # px from a point's centre to the near end of a name beside it
NAME_DY = 10  # px from a point's centre to the middle of a name beside it, up or down
NAME_DY_CENTRE = 12  # px to a name centred over or under it: past the point and half a name
POINT_RADIUS = 5.4  # px: a filled point of area 90 px²
GAP = 1.0  # px of air a name keeps from what it must not cover
GRAZE = 3.0  # px: a step no deeper inside a name than this only grazes it
OUTSIDE = 2  # what a name past the plot's sides or foot costs: clipped, or over an axis

Box = tuple[float, float, float, float]  # left, top, right, bottom (px, y down)


@dataclass(frozen=True)
class Place:
    """Where a name goes: on its point's left or right, or centred over or under it;
    below the point (else above)."""

    at: Literal["left", "centre", "right"]
    below: bool


# In order of preference. Above and left of a point of a front that rises to the right, no
# other point can lie (it would beat the point) and no step passes; below and right, no step.
PLACES = (
    Place("left", False),
    Place("right", True),
    Place("right", False),
    Place("left", True),
    Place("centre", False),
    Place("centre", True),
)


@dataclass(frozen=True)
class Render:
    """One render's plot: its size, every point's centre and the step line's corners (px)."""

    width: float
    height: float
    points: Sequence[tuple[float, float]]
    line: Sequence[tuple[float, float]] = ()


def name_box(x: float, y: float, width: float, place: Place) -> Box:
    """The box of a name ``width`` px wide at ``place`` around the point at (x, y)."""
    left = {"left": x - NAME_DX - width, "centre": x - width / 2, "right": x + NAME_DX}[place.at]
    dy = NAME_DY_CENTRE if place.at == "centre" else NAME_DY
    middle = y + dy if place.below else y - dy
    return left, middle - NAME_SIZE / 2, left + width, middle + NAME_SIZE / 2


def _meets(a: Box, b: Box) -> bool:
    return a[0] < b[2] + GAP and b[0] < a[2] + GAP and a[1] < b[3] + GAP and b[1] < a[3] + GAP


def _crossing(box: Box, line: Sequence[tuple[float, float]]) -> float:
    """What a polyline of horizontal and vertical steps running through ``box`` costs: 1,
    or a half where it only grazes an end or an edge (no deeper than :data:`GRAZE` px: a
    crowded corner may leave no better place)."""
    deepest = -GAP
    for (x1, y1), (x2, y2) in itertools.pairwise(line):
        span = (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
        if _meets(box, span):
            across = (box[0], box[2], x1) if x1 == x2 else (box[1], box[3], y1)
            deepest = max(deepest, min(across[2] - across[0], across[1] - across[2]))
    return 0.0 if deepest == -GAP else 1.0 if deepest > GRAZE else 0.5


def _cost(box: Box, own: int, render: Render, placed: Sequence[Box]) -> float:
    """How many marks ``box`` covers on ``render`` (a step it only grazes counts a half),
    plus :data:`OUTSIDE` if it leaves the plot past its sides or its foot (above it, the
    chart grows to hold it)."""
    r = POINT_RADIUS
    points = sum(
        _meets(box, (x - r, y - r, x + r, y + r))
        for i, (x, y) in enumerate(render.points)
        if i != own
    )
    names = sum(_meets(box, other) for other in placed)
    outside = box[0] < 0 or box[2] > render.width or box[3] > render.height
    return points + names + _crossing(box, render.line) + OUTSIDE * outside


def place_names(names: Sequence[tuple[int, str]], render: Render) -> list[Place]:
    """For each (point index, name), in order, its place on ``render``: the one of
    :data:`PLACES` that covers the fewest marks (the first of equals), each name then a
    mark the next must not cover."""
    placed: list[Box] = []
    out = []
    for index, name in names:
        best, _, box = _best(index, name, render, placed)
        placed.append(box)
        out.append(best)
    return out


def clear_places(names: Sequence[tuple[int, str]], render: Render) -> list[Place | None]:
    """As :func:`place_names`, but a name whose best place still covers a mark (a point, a
    name, a step it crosses more than grazes, the plot's edge) is left out (None): on a
    plot too narrow to name it clear, its point is named by the legend and the tooltip."""
    placed: list[Box] = []
    out: list[Place | None] = []
    for index, name in names:
        best, cost, box = _best(index, name, render, placed)
        if cost >= 1:
            out.append(None)
            continue
        placed.append(box)
        out.append(best)
    return out


def _best(index: int, name: str, render: Render, placed: Sequence[Box]) -> tuple[Place, float, Box]:
    """The place of :data:`PLACES` where ``name`` covers the fewest marks (the first of
    equals), what it covers there, and its box."""
    width, (x, y) = text_width(name, NAME_SIZE), render.points[index]
    costs = [
        (_cost(name_box(x, y, width, p), index, render, placed), i) for i, p in enumerate(PLACES)
    ]
    cost, i = min(costs)
    return PLACES[i], cost, name_box(x, y, width, PLACES[i])
