"""The spec a static chart image is rendered from (render/charts.py static) leaves out what
an image never shows: its tooltips among them. That is only right if the picture stays the
same, byte for byte: here one chart of each kind the bundled site draws, and its phone
render, is rendered by vl-convert with its tooltips and without."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jouleboard.render import charts
from jouleboard.render.chart_files import stable_ids
from tests.chart_kinds import one_of_each_kind

pytestmark = pytest.mark.slow  # plans the bundled site and renders 32 charts


def tooltips(node: Any) -> int:
    """How many tooltips ``node`` (a spec, its data rows left out) defines."""
    if isinstance(node, list):
        return sum(tooltips(value) for value in node)
    if not isinstance(node, dict):
        return 0
    return sum(
        (key == "tooltip") + tooltips(value)
        for key, value in node.items()
        if key not in ("datasets", "values")
    )


def test_a_static_chart_drops_its_tooltips_and_no_byte_of_its_picture() -> None:
    import vl_convert

    kinds = one_of_each_kind()
    for kind, spec in kinds.items():
        assert tooltips(spec) > 0, kind
        # What static() made before it left tooltips out: ARIA labels off, no title.
        with_tips = {**spec, "config": {**spec["config"], "aria": False}}
        with_tips.pop("title", None)
        image = charts.static(spec)
        assert tooltips(image) == 0, kind
        for before, after in (
            (with_tips, image),
            (charts.phone(with_tips), charts.phone(image)),
        ):
            svgs = [stable_ids(vl_convert.vegalite_to_svg(json.dumps(s))) for s in (before, after)]
            assert svgs[0] == svgs[1], kind
            assert "<path" in svgs[1], kind
