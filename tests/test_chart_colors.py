"""Issue 29 item 5 and issue 40 item 4: one colour per model on a task's charts, a palette
whose colours a reader (a colour-blind one too, for the first six) tells apart and that
reads on the light and the dark page, look-alike colours named on the chart, deadline labels
clear of their lines, log axes that say so. The colour arithmetic here is written out from
the WCAG, CIELAB and CIEDE2000 definitions, not taken from the package."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from jouleboard.kinds.base import Latency
from jouleboard.render import charts
from tests.colour_maths import (
    DARK_PAGE,
    DEUTERANOPIA,
    PROTANOPIA,
    WHITE,
    ciede2000,
    contrast,
    delta_e,
    lab,
    seen,
)


def test_reference_values() -> None:
    # Black on white is 21:1; white's L* is 100 (the helpers above are the standard ones).
    assert round(contrast("#000000", WHITE), 1) == 21.0
    assert round(lab(WHITE)[0]) == 100
    # CIEDE2000: pairs of Sharma, Wu and Dalal's test data, with their published values.
    for lab1, lab2, expected in (
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, -1.3802, -84.2814), (50.0, 0.0, -82.7485), 1.0000),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((50.0, 2.5, 0.0), (61.0, -5.0, 29.0), 22.8977),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
        ((22.7233, 20.0904, -46.6940), (23.0331, 14.9730, -42.5619), 2.0373),
    ):
        assert ciede2000(lab1, lab2) == pytest.approx(expected, abs=1e-4)
    # A dichromat cannot tell pure red from a dark yellow-green it is mixed with.
    assert delta_e(seen("#ff0000", DEUTERANOPIA), seen("#a08000", DEUTERANOPIA)) < 12


CLEARLY_DISTINCT = 20.0  # CIEDE2000: two colours a reader tells apart at a glance
DICHROMAT_DISTINCT = 12.0  # the same for the first six, as a dichromat sees them


def test_model_palette_reads_on_both_pages_and_is_distinct() -> None:
    palette = charts.MODEL_COLORS
    assert len(palette) >= 8
    assert len(set(palette)) == len(palette)
    for color in palette:
        # WCAG 1.4.11: a graphical object 3:1 against what is next to it, in both schemes.
        assert contrast(color, WHITE) >= 3, color
        assert contrast(color, DARK_PAGE) >= 3, color
        # Not to be taken for the deadline rule, nor for the axes' grey.
        assert delta_e(color, charts.DEADLINE_RED) > 20, color
        assert delta_e(color, charts.AXIS_GREY) > 15, color
    for a, b in itertools.combinations(palette, 2):
        assert delta_e(a, b) >= CLEARLY_DISTINCT, (a, b)
    # The first six (a task's best ranked models, and any compare page's choice) stay apart
    # for readers with protanopia or deuteranopia too.
    for a, b in itertools.combinations(palette[:6], 2):
        for matrix in (DEUTERANOPIA, PROTANOPIA):
            apart = delta_e(seen(a, matrix), seen(b, matrix))
            assert apart >= DICHROMAT_DISTINCT, (a, b, apart)


def test_model_colors_hand_case() -> None:
    # The palette in the models' order; past it, one grey, and a chart drawing two models
    # of one colour names them both.
    picks = charts.model_colors(["x", "y", "z", "w"], palette=("red", "blue"))
    assert picks == {"x": "red", "y": "blue", "z": charts.OTHER_GREY, "w": charts.OTHER_GREY}
    assert charts.shared_colors(picks) == ("z", "w")
    assert charts.shared_colors({"x": "red", "y": "blue", "z": charts.OTHER_GREY}) == ()
    assert charts.model_colors([]) == {}
    # The grey of the rest reads on both pages and is no palette colour.
    assert contrast(charts.OTHER_GREY, WHITE) >= 3 and contrast(charts.OTHER_GREY, DARK_PAGE) >= 3
    assert min(delta_e(charts.OTHER_GREY, c) for c in charts.MODEL_COLORS) > CLEARLY_DISTINCT


def test_log_titles() -> None:
    assert charts.log_title("Energy per token (J)") == "Energy per token (J, log scale)"
    assert charts.log_title("Latency (ms, log)") == "Latency (ms, log scale)"
    assert charts.log_title("Latency (ms, log scale)") == "Latency (ms, log scale)"
    assert charts.log_title("Latency") == "Latency (log scale)"
    latency = Latency({"p50": "median latency"}, {"p50": "p50"}, "s", 1000.0)  # type: ignore[arg-type]
    assert latency.axis_title("p50") == "Median latency (s, log scale)"


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for value in node:
            yield from _nodes(value)
    elif isinstance(node, dict):
        yield node
        for key, value in node.items():
            if key != "datasets":
                yield from _nodes(value)


def _published(site: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted((site / "charts").glob("*.vl.json")):
        yield path.name, json.loads(path.read_text(encoding="utf-8"))


def test_one_colour_per_model_on_a_tasks_charts_and_look_alikes_named(
    default_site: Path,
) -> None:
    """Every chart of one task gives a model the same colour; on any chart, two models
    whose colours a reader could confuse are both named beside their marks."""
    seen: dict[tuple[str, str], tuple[str, str]] = {}  # (task, model) -> (colour, chart)
    coloured = 0
    for name, spec in _published(default_site):
        task = name.removesuffix(".vl.json").rsplit("--", 1)[-1]
        datasets = spec.get("datasets", {})
        drawn = {row["model"] for rows in datasets.values() for row in rows if "model" in row}
        # A chart names a model beside its mark where its row says so (``named``: the
        # accuracy chart, render/point_names.py), or names every line at its end (the
        # deadline chart), which then needs no legend.
        direct = {row["model"] for rows in datasets.values() for row in rows if row.get("named")}
        direct |= {row["model"] for row in datasets.get("ends", [])}
        for node in _nodes(spec):
            color = node.get("color")
            if not (isinstance(color, dict) and color.get("field") == "model"):
                continue
            scale = color.get("scale") or {}
            # Every model the chart draws has its colour named; no scheme picks for it.
            assert set(drawn) <= set(scale.get("domain", ())), name
            pairs = dict(zip(scale["domain"], scale["range"], strict=True))
            for a, b in itertools.combinations(sorted(drawn), 2):
                if delta_e(pairs[a], pairs[b]) < CLEARLY_DISTINCT:
                    assert {a, b} <= direct, (name, a, b)
            for model in drawn:
                first = seen.setdefault((task, model), (pairs[model], name))
                assert first[0] == pairs[model], (model, first, name)
            coloured += 1
    assert coloured >= 3 * 7  # the bar, configurations and deadline charts of 7 tasks


def _marks(node: Any, data: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Each single view of a spec with the name of the data it draws (a layer's own or the
    one it inherits)."""
    if isinstance(node, dict):
        data = node.get("data", {}).get("name", data)
        if "mark" in node:
            yield data, node
        for layer in node.get("layer", ()):
            yield from _marks(layer, data)


def test_log_axes_say_so(default_site: Path) -> None:
    log_axes = 0
    for name, spec in _published(default_site):
        for _, view in _marks(spec):
            for channel in ("x", "y"):
                enc = view.get("encoding", {}).get(channel)
                if isinstance(enc, dict) and (enc.get("scale") or {}).get("type") == "log":
                    title = enc.get("title", "")
                    assert title.endswith("log scale)"), (name, title)
                    log_axes += 1
    assert log_axes > 50


SVG_NS = "{http://www.w3.org/2000/svg}"
_TRANSLATE = re.compile(r"translate\((-?[\d.]+),(-?[\d.]+)\)")


def _deadlines_drawn(svg: str) -> tuple[list[float], list[tuple[str, float, float]]]:
    """In a chart's SVG (vl-convert's: a mark's items inside its ``g.mark-*`` group), the x
    of each deadline rule (a red dashed line across the plot) and each non-blank label
    drawn in the deadline's red: (its text-anchor, x, y), in the plot's coordinates."""
    root = ElementTree.fromstring(svg)
    rules, labels = [], []
    for group in root.iter(f"{SVG_NS}g"):
        if "role-mark" not in group.get("class", ""):
            continue
        for item in group:
            where = _TRANSLATE.match(item.get("transform", ""))
            if where is None:
                continue
            x, y = float(where[1]), float(where[2])
            if item.tag == f"{SVG_NS}line" and item.get("stroke") == charts.DEADLINE_RED:
                rules.append(x)
            elif (
                item.tag == f"{SVG_NS}text"
                and item.get("fill") == charts.DEADLINE_RED
                and (item.text or "").strip()
            ):
                labels.append((item.get("text-anchor", "start"), x, y))
    return rules, labels


def test_deadline_labels_clear_their_lines(default_site: Path) -> None:
    """Each drawn deadline (desktop and phone images) has one label, above the plot (the
    rule runs from y=0 down) and beside the rule, off its x by 2 px or more on the side the
    label runs to: read from the SVGs vl-convert drew, whatever the spec says."""
    drawn = {"start": 0, "end": 0}
    for svg_path in sorted((default_site / "charts").glob("*.svg")):
        rules, labels = _deadlines_drawn(svg_path.read_text(encoding="utf-8"))
        assert len(labels) == len(rules), svg_path.name
        for rule_x, (anchor, x, y) in zip(rules, labels, strict=True):
            assert y < 0, svg_path.name
            assert (x - rule_x if anchor == "start" else rule_x - x) >= 2, svg_path.name
            drawn[anchor] += 1
    # Both sides occur, and the deadlines were found (the default build draws 146: 10 start).
    assert drawn["start"] >= 4 and drawn["end"] >= 100, drawn
