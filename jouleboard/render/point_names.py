"""Names beside the points of a scatter chart (the accuracy chart names its Pareto front):
each name takes the one of four places around its point (above or below it, on its left or
its right) that covers the fewest other marks (points, the front's step line, names placed
before it) and stays inside the plot, chosen for each render of the chart (the desktop SVG,
the phone one). Pure arithmetic on pixel positions; plan/task_charts.py puts each choice in
the chart's rows and charts.py draws it."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from jouleboard.render.text_fit import text_width

NAME_SIZE = 11  # px: the names' font size (charts.accuracy_energy)
NAME_DX = 7  # px from a point's centre to the near end of its name (charts.LABEL_SIDES)
NAME_DY = 10  # px from a point's centre to the middle of its name, up or down
POINT_RADIUS = 5.4  # px: a filled point of area 90 px²
GAP = 1.0  # px of air a name keeps from what it must not cover

Box = tuple[float, float, float, float]  # left, top, right, bottom (px, y down)


@dataclass(frozen=True)
class Place:
    """Where a name goes: on its point's left (else its right), below it (else above)."""

    left: bool
    below: bool


# In order of preference. Above and left of a point of a front that rises to the right, no
# other point can lie (it would beat the point) and no step passes; below and right, no step.
PLACES = (Place(True, False), Place(False, True), Place(False, False), Place(True, True))


@dataclass(frozen=True)
class Render:
    """One render's plot: its size, every point's centre, the step line's corners and the
    boxes of names drawn by other rules (px)."""

    width: float
    height: float
    points: Sequence[tuple[float, float]]
    line: Sequence[tuple[float, float]] = ()
    fixed: Sequence[Box] = ()


def name_box(x: float, y: float, width: float, place: Place) -> Box:
    """The box of a name ``width`` px wide at ``place`` around the point at (x, y)."""
    left = x - NAME_DX - width if place.left else x + NAME_DX
    middle = y + NAME_DY if place.below else y - NAME_DY
    return left, middle - NAME_SIZE / 2, left + width, middle + NAME_SIZE / 2


def _meets(a: Box, b: Box) -> bool:
    return a[0] < b[2] + GAP and b[0] < a[2] + GAP and a[1] < b[3] + GAP and b[1] < a[3] + GAP


def _crosses(box: Box, line: Sequence[tuple[float, float]]) -> bool:
    """Whether a polyline of horizontal and vertical steps passes through ``box``."""
    for (x1, y1), (x2, y2) in itertools.pairwise(line):
        span = (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
        if _meets(box, span):
            return True
    return False


def _cost(box: Box, own: int, render: Render, placed: Sequence[Box]) -> int:
    """How many marks ``box`` covers on ``render``, plus one if it leaves the plot (past
    its sides or its foot; above it there is room)."""
    r = POINT_RADIUS
    points = sum(
        _meets(box, (x - r, y - r, x + r, y + r))
        for i, (x, y) in enumerate(render.points)
        if i != own
    )
    names = sum(_meets(box, other) for other in (*render.fixed, *placed))
    outside = box[0] < 0 or box[2] > render.width or box[3] > render.height
    return points + names + _crosses(box, render.line) + outside


def place_names(names: Sequence[tuple[int, str]], render: Render) -> list[Place]:
    """For each (point index, name), in order, its place on ``render``: the one of
    :data:`PLACES` that covers the fewest marks (the first of equals), each name then a
    mark the next must not cover."""
    placed: list[Box] = []
    out = []
    for index, name in names:
        width, (x, y) = text_width(name, NAME_SIZE), render.points[index]
        best = min(PLACES, key=lambda p: _cost(name_box(x, y, width, p), index, render, placed))
        placed.append(name_box(x, y, width, best))
        out.append(best)
    return out
