"""render/point_names.py: where a point's name goes, on hand-drawn plots. Boxes are worked
out by hand from the module's stated offsets (7 px beside the point with the name's middle
10 px above or below it, or centred with its middle 12 px above or below; 11 px tall);
"Model" is 29.953 px wide at 11 px (Liberation Sans)."""

from __future__ import annotations

import math

import pytest

from jouleboard.render.point_names import Place, Render, clear_places, name_box, place_names
from jouleboard.render.text_fit import text_width

ABOVE_LEFT, BELOW_RIGHT = Place("left", False), Place("right", True)
ABOVE_RIGHT, BELOW_LEFT = Place("right", False), Place("left", True)
ABOVE, BELOW = Place("centre", False), Place("centre", True)
WIDE = text_width("Model", 11)


def test_name_boxes_by_hand() -> None:
    assert abs(WIDE - 29.953) < 1e-3
    assert name_box(100, 50, WIDE, ABOVE_LEFT) == pytest.approx((63.047, 34.5, 93.0, 45.5))
    assert name_box(100, 50, WIDE, BELOW_RIGHT) == pytest.approx((107.0, 54.5, 136.953, 65.5))
    assert name_box(100, 50, WIDE, ABOVE) == pytest.approx((85.0235, 32.5, 114.9765, 43.5))


def test_an_open_plot_puts_a_name_above_and_left() -> None:
    assert place_names([(0, "Model")], Render(200, 100, [(100, 50)])) == [ABOVE_LEFT]


def test_a_point_on_the_left_edge_names_itself_on_its_right() -> None:
    """Above and left would start at x = 20 - 7 - 29.95 < 0, outside the plot."""
    assert place_names([(0, "Model")], Render(200, 100, [(20, 50)])) == [BELOW_RIGHT]


def test_the_step_line_and_points_are_avoided_where_there_is_a_free_place() -> None:
    """A point at x = 20: its names on the left would start below 0, outside the plot.
    Below and right (27..57 px, 54.5..65.5 px) is free, even with the front's step running
    right at y = 50 and up at x = 40. A point at (40, 60) covers it: then above and right
    (27..57, 34.5..45.5) is free, and is taken; the step rising at x = 40 through that box
    too leaves a mark (or the plot's edge) in every place beside the point, and the name
    goes centred above it (5.02..34.98, 32.5..43.5), clear of both."""
    step = [(20.0, 50.0), (40.0, 50.0), (40.0, 10.0)]
    assert place_names([(0, "Model")], Render(200, 100, [(20, 50)], step[:2])) == [BELOW_RIGHT]
    crowded = [(20.0, 50.0), (40.0, 60.0)]
    assert place_names([(0, "Model")], Render(200, 100, crowded)) == [ABOVE_RIGHT]
    assert place_names([(0, "Model")], Render(200, 100, crowded, step)) == [ABOVE]


def test_a_placed_name_is_an_obstacle_for_the_next() -> None:
    """The first name goes above and left of (100, 100): 63.05..93 px, 84.5..95.5 px. The
    second point's (95, 108) box there, 58.05..88 and 92.5..103.5, would overlap it (and
    no point), so it goes below and right; alone, it would have gone above and left."""
    render = Render(300, 200, [(100, 100), (95, 108)])
    assert place_names([(0, "Model"), (1, "Model")], render) == [ABOVE_LEFT, BELOW_RIGHT]
    assert place_names([(1, "Model")], render) == [ABOVE_LEFT]


def test_a_crowded_corner_takes_a_graze_over_a_cover() -> None:
    """A point at (100, 50) on a plot 120 px wide: its right places leave the plot (2 each);
    points at (76, 40) and (76, 60) sit in its left ones, above-left (63.05..93, 34.5..45.5)
    and below-left (54.5..65.5); one at (100, 30) in the box centred above it (85.02..114.98,
    32.5..43.5). A step rising at x = 86 from y = 70 to 45 runs 0.98 px into the box centred
    below it (56.5..67.5), a graze: a half, the cheapest, so the name goes there. Moved to
    x = 91 the step runs 5.98 px in, a whole mark: centred above and below then cost 1
    each (the left places 1.5: a point and a 2 px graze), and above comes first."""
    points = [(100.0, 50.0), (76.0, 40.0), (76.0, 60.0), (100.0, 30.0)]
    grazed = Render(120, 100, points, line=[(60, 70), (86, 70), (86, 45)])
    assert place_names([(0, "Model")], grazed) == [BELOW]
    crossed = Render(120, 100, points, line=[(60, 70), (91, 70), (91, 45)])
    assert place_names([(0, "Model")], crossed) == [ABOVE]


def test_past_the_foot_of_the_plot_counts_and_above_it_does_not() -> None:
    """A point 3 px under the plot's top on the right edge: above and left reaches up past
    the top, which is allowed (the SVG grows); a point at the foot on the left edge: below
    and right would run past the foot, so above and right is taken."""
    assert place_names([(0, "Model")], Render(200, 100, [(195, 3)])) == [ABOVE_LEFT]
    assert place_names([(0, "Model")], Render(200, 100, [(5, 97)])) == [ABOVE_RIGHT]


@pytest.mark.parametrize("energies", [[1000.0], [1000.0, 1000.0], [60.0, 25_000.0]])
def test_the_accuracy_chart_spans_whole_decades_around_its_points(energies: list[float]) -> None:
    """One model at exactly 1,000 J had a range from 1,000 to 1,000 J (a division by nought
    placing its name); the range is whole decades, at least one, holding every point."""
    from jouleboard.plan.task_charts import accuracy_spec

    points = [
        {"model": f"M{i}", "accuracy": 60.0 + i, "energy": e, "frontier": True}
        for i, e in enumerate(energies)
    ]
    spec = accuracy_spec(points, "t", {p["model"]: "#123456" for p in points}, ())
    ((low, high),) = {tuple(layer["encoding"]["x"]["scale"]["domain"]) for layer in spec["layer"]}
    assert math.log10(low).is_integer() and math.log10(high).is_integer()
    assert low <= min(energies) and max(energies) <= high and high >= 10 * low


def test_a_name_with_no_clear_place_is_left_out_where_only_clear_names_go() -> None:
    """Steps at y = 40 and y = 61 run through all six places of the name of the point at
    (100, 50): the above ones span y 34.5-45.5 or 32.5-43.5 (5.5 or 3.5 px deep, more than
    a 3 px graze), the below ones 54.5-65.5 or 56.5-67.5 (4.5 px). place_names still takes
    the first; clear_places leaves the name out (a live chart 320 px wide drew "DeepSeek
    R1" over a point), and the point at (100, 90) below gets its place above and left,
    which nothing covers."""
    line = [(0.0, 40.0), (200.0, 40.0), (200.0, 61.0), (0.0, 61.0)]
    render = Render(200, 100, [(100, 50), (100, 90)], line)
    names = [(0, "Model"), (1, "Model")]
    assert place_names(names, render)[0] == ABOVE_LEFT
    assert clear_places(names, render) == [None, ABOVE_LEFT]
