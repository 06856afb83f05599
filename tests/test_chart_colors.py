"""Issue 29 item 5: one colour per model on every chart, a palette whose neighbours differ and
that reads on the light and the dark page, deadline labels clear of their lines, log axes
that say so. The colour arithmetic here is written out from the WCAG and CIELAB
definitions, not taken from the package."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jouleboard.kinds.base import Latency
from jouleboard.render import charts

WHITE, DARK_PAGE = "#ffffff", "#121417"  # style.css --bg, light and dark


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def _luminance(color: str) -> float:
    r, g, b = map(_linear, _rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: str, b: str) -> float:
    low, high = sorted((_luminance(a), _luminance(b)))
    return (high + 0.05) / (low + 0.05)


def _lab(color: str) -> tuple[float, float, float]:
    r, g, b = map(_linear, _rgb(color))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _delta_e(a: str, b: str) -> float:
    return math.dist(_lab(a), _lab(b))


def test_reference_values() -> None:
    # Black on white is 21:1; white's L* is 100 (the helpers above are the standard ones).
    assert round(_contrast("#000000", WHITE), 1) == 21.0
    assert round(_lab(WHITE)[0]) == 100


def test_model_palette_reads_on_both_pages_and_neighbours_differ() -> None:
    palette = charts.MODEL_COLORS
    assert len(palette) >= 18  # the largest task of the default data has 18 models
    assert len(set(palette)) == len(palette)
    for color in palette:
        # WCAG 1.4.11: a graphical object 3:1 against what is next to it, in both schemes.
        assert _contrast(color, WHITE) >= 3, color
        assert _contrast(color, DARK_PAGE) >= 3, color
        # Not to be taken for the deadline rule.
        assert _delta_e(color, charts.DEADLINE_RED) > 30, color
    for a, b in itertools.pairwise(palette):
        assert _delta_e(a, b) >= 40, (a, b)
    for a, b in itertools.combinations(palette, 2):
        assert _delta_e(a, b) >= 20, (a, b)


def test_model_colors_hand_case() -> None:
    # a-b share a task, b-c another, d is alone: in id order a gets 0, b 1 (a taken), c 0
    # (only b, with 1, is beside it), d 0.
    picks = charts.model_colors([{"a", "b"}, {"b", "c"}, {"d"}], palette=("red", "blue"))
    assert picks == {
        "a": ("red", False),
        "b": ("blue", False),
        "c": ("red", False),
        "d": ("red", False),
    }
    # Three in one task and two colours: the third repeats a colour and is labelled.
    picks = charts.model_colors([{"x", "y", "z"}], palette=("red", "blue"))
    assert picks == {"x": ("red", False), "y": ("blue", False), "z": ("red", True)}
    # The order of the groups and of their members changes nothing.
    groups = [["m3", "m1", "m2"], ["m4", "m2"], ["m1", "m5"]]
    assert charts.model_colors(groups) == charts.model_colors(
        [list(reversed(g)) for g in reversed(groups)]
    )


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


def test_one_colour_per_model_on_every_chart(default_site: Path) -> None:
    seen: dict[str, tuple[str, str]] = {}  # model -> (colour, first chart)
    coloured = 0
    for name, spec in _published(default_site):
        drawn = {
            row["model"]
            for rows in spec.get("datasets", {}).values()
            for row in rows
            if "model" in row
        }
        for node in _nodes(spec):
            color = node.get("color")
            if not (isinstance(color, dict) and color.get("field") == "model"):
                continue
            scale = color.get("scale") or {}
            # Every model the chart draws has its colour named; no scheme picks for it.
            assert set(drawn) <= set(scale.get("domain", ())), name
            pairs = dict(zip(scale["domain"], scale["range"], strict=True))
            # Within a chart, no two models look alike.
            assert len(set(pairs.values())) == len(pairs), name
            for model, value in pairs.items():
                first = seen.setdefault(model, (value, name))
                assert first[0] == value, (model, first, name)
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


def test_log_axes_say_so_and_deadline_labels_clear_their_lines(default_site: Path) -> None:
    log_axes = labels = 0
    for name, spec in _published(default_site):
        for data, view in _marks(spec):
            for channel in ("x", "y"):
                enc = view.get("encoding", {}).get(channel)
                if isinstance(enc, dict) and (enc.get("scale") or {}).get("type") == "log":
                    title = enc.get("title", "")
                    assert title.endswith("log scale)"), (name, title)
                    log_axes += 1
            mark = view["mark"]
            if data == "deadline" and isinstance(mark, dict) and mark["type"] == "text":
                # Above the plot (the rule runs from y=0 down), off the rule's x.
                assert mark["y"] < 0 and mark["baseline"] == "bottom", name
                assert abs(mark["dx"]) >= 2, name
                labels += 1
    assert log_axes > 50 and labels > 20
