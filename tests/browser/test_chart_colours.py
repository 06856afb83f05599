"""Issue 40 item 4: colours a reader tells apart. On a task's charts, two models drawn in
colours a reader could confuse (CIEDE2000 under 20) are both named on the chart itself, not
only in a legend; the models chosen on /compare/ always get clearly distinct colours (for
dichromats too); a legend's text is at least the size of the chart's other text. Each is
measured in Chromium on the colours and sizes as drawn, at 390 and 1280 px, in the light
and the dark scheme; the colour arithmetic is tests/colour_maths.py's, not the package's."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import SIZES, Recorder, Tabs, taken_tab
from tests.colour_maths import (
    DEUTERANOPIA,
    PROTANOPIA,
    contrast,
    delta_e,
    parse_css_color,
    seen,
)

pytestmark = pytest.mark.browser

CLEARLY_DISTINCT = 20.0  # CIEDE2000
DICHROMAT_DISTINCT = 12.0

# An SVG chart's model legend (entries: label and the symbol's colour as drawn), the texts
# drawn as marks (names beside points and lines) and the font sizes of axes and legends.
READ_CHART = """(svg) => {
  const legend = [];
  for (const group of svg.querySelectorAll('.role-legend')) {
    const title = group.querySelector('.role-legend-title text');
    if (!title || title.textContent !== 'Model') continue;
    for (const label of group.querySelectorAll('.role-legend-label text')) {
      const entry = label.parentElement.parentElement;
      const symbol = entry.querySelector('.role-legend-symbol path');
      legend.push({name: label.textContent, color: getComputedStyle(symbol).fill});
    }
  }
  const named = Array.from(svg.querySelectorAll('.role-mark text'))
    .map((t) => Array.from(t.childNodes).map((n) => n.textContent).join(' ').trim())
    .filter(Boolean);
  const size = (selector) => Array.from(svg.querySelectorAll(selector))
    .filter((t) => t.textContent.trim())
    .map((t) => parseFloat(getComputedStyle(t).fontSize));
  return {legend, named, legendSizes: size('.role-legend-label text'),
          axisSizes: size('.role-axis-label text, .role-axis-title text')};
}"""


@pytest.fixture
def tab(request: pytest.FixtureRequest, shared_tabs: Tabs, site_url: str) -> Iterator[Any]:
    """tab(size, scheme) -> (this test's page, a blank probe page beside it: the same
    scheme), the shared ones of their kind (conftest.taken_tab)."""
    with contextlib.ExitStack() as stack:

        def taken(size: str, scheme: str) -> tuple[Recorder, Any]:
            options = {"viewport": SIZES[size], "color_scheme": scheme}
            rec = stack.enter_context(taken_tab(request, shared_tabs, site_url, **options))
            return rec, shared_tabs.probe(**options)

        yield taken


def _static_charts(rec: Any) -> list[dict[str, Any]]:
    """Each chart image the page shows: its file and the scale it is shown at."""
    rec.page.evaluate("() => document.querySelectorAll('img').forEach((i) => i.loading = 'eager')")
    rec.page.wait_for_function(
        "() => Array.from(document.querySelectorAll('figure.chart img')).every((i) => i.complete)"
    )
    images: list[dict[str, Any]] = rec.page.eval_on_selector_all(
        "figure.chart img",
        """(imgs) => imgs.filter((i) => i.getBoundingClientRect().width > 0).map((i) => ({
             src: i.currentSrc, scale: i.getBoundingClientRect().width / i.naturalWidth}))""",
    )
    return images


def _read_static(rec: Any, probe: Any, src: str, read: str = READ_CHART) -> Any:
    """A chart file inlined alone in a blank page of the same scheme (its own dark-scheme
    rules apply there as they do to the image), read as drawn by ``read``."""
    probe.set_content(f"<!doctype html><body>{rec.page.context.request.get(src).text()}</body>")
    return probe.eval_on_selector("svg", read)


def _confusable(legend: list[dict[str, str]]) -> list[tuple[str, str, float]]:
    colours = [(e["name"], parse_css_color(e["color"])) for e in legend]
    return [
        (a, b, delta_e(ca, cb))
        for (a, ca), (b, cb) in itertools.combinations(colours, 2)
        if delta_e(ca, cb) < CLEARLY_DISTINCT
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_look_alike_colours_on_a_task_are_named_on_the_chart(
    tab: Any, size: str, scheme: str
) -> None:
    """gpqa's five olives and greens (issue 40): any two models whose colours are closer
    than a CIEDE2000 of 20 are both named beside their marks."""
    rec, probe = tab(size, scheme)
    rec.goto("/tasks/gpqa/")
    problems, legends = [], 0
    for image in _static_charts(rec):
        chart = _read_static(rec, probe, image["src"])
        legends += bool(chart["legend"])
        named = {" ".join(n.split()) for n in chart["named"]}
        for a, b, apart in _confusable(chart["legend"]):
            if not {a, b} <= named:
                problems.append(f"{image['src']}: {a} and {b} differ by {apart:.1f} only")
    assert legends >= 2  # the configurations and accuracy charts keep a legend
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_the_models_compared_get_clearly_distinct_colours(tab: Any, size: str, scheme: str) -> None:
    """GPT OSS 20B against Qwen 3 8B were two olives (issue 40); so were other pairs: every
    pair and trio tried here is told apart, by a dichromat too, and each colour stands out
    from the page (3:1)."""
    rec, _ = tab(size, scheme)
    for models in (
        "openai/gpt-oss-20b,Qwen/Qwen3-8B",
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2,nvidia/NVIDIA-Nemotron-Nano-12B-v2,Qwen/Qwen3-8B",
    ):
        rec.goto(f"/compare/?task=gpqa&models={models}")
        rec.page.wait_for_selector("figure.chart svg.marks .role-legend-label text")
        chart = rec.page.eval_on_selector("figure.chart svg.marks", READ_CHART)
        page_bg = parse_css_color(
            rec.page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        )
        colours = {e["name"]: parse_css_color(e["color"]) for e in chart["legend"]}
        assert len(colours) == models.count(",") + 1, colours
        for (a, ca), (b, cb) in itertools.combinations(colours.items(), 2):
            assert delta_e(ca, cb) >= CLEARLY_DISTINCT, (a, ca, b, cb)
            for matrix in (DEUTERANOPIA, PROTANOPIA):
                apart = delta_e(seen(ca, matrix), seen(cb, matrix))
                assert apart >= DICHROMAT_DISTINCT, (a, b, apart)
        for name, colour in colours.items():
            assert contrast(colour, page_bg) >= 3, (name, colour, page_bg)
    assert rec.errors() == []


def _legend_problems(name: str, chart: dict[str, Any], scale: float) -> list[str]:
    if not chart["legendSizes"]:
        return []
    smallest = min(chart["legendSizes"]) * scale
    largest_axis = max(chart["axisSizes"], default=0) * scale
    if smallest + 0.05 < max(largest_axis, 10):
        return [f"{name}: legend text {smallest:.1f} px beside axis text {largest_axis:.1f} px"]
    return []


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_legend_text_is_as_large_as_the_charts_other_text(tab: Any, size: str) -> None:
    """Legend text was 11 px beside 12 px axis titles, and ~6 px on a phone's embed page
    (issue 40): wherever a chart is shown, its legend's text is at least as large as its
    axes' (and 10 px or more)."""
    rec, probe = tab(size, "light")
    problems = []
    for path in ("/tasks/gpqa/", "/embed/configurations--gpqa/", "/embed/accuracy--gpqa/"):
        rec.goto(path)
        for image in _static_charts(rec):
            chart = _read_static(rec, probe, image["src"])
            problems += _legend_problems(f"{path} {image['src']}", chart, image["scale"])
    rec.goto("/compare/?task=gpqa&models=openai/gpt-oss-20b,Qwen/Qwen3-8B")
    live = rec.page.wait_for_selector("figure.chart svg.marks .role-legend-label text")
    assert live is not None
    svg = rec.page.query_selector("figure.chart svg.marks")
    scale = svg.bounding_box()["width"] / float(svg.get_attribute("width") or 1)
    problems += _legend_problems("compare", svg.evaluate(READ_CHART), scale)
    assert not problems, "\n".join(problems)


# Each legend symbol of an SVG chart: its fill as drawn, and the opacity it is drawn with.
LEGEND_SYMBOLS = """(svg) => Array.from(svg.querySelectorAll('.role-legend')).flatMap((group) => {
  const title = group.querySelector('.role-legend-title text');
  return Array.from(group.querySelectorAll('.role-legend-symbol path'), (path) => {
    const style = getComputedStyle(path);
    const entry = path.parentElement.parentElement;  // the symbol's and the label's group
    const label = entry.querySelector('.role-legend-label text');
    return {legend: title ? title.textContent : '', label: label ? label.textContent : '',
            fill: style.fill, alpha: parseFloat(style.fillOpacity) * parseFloat(style.opacity)};
  });
})"""


def _over(colour: str, alpha: float, background: str) -> str:
    """``colour`` drawn with ``alpha`` over ``background`` (sRGB, as the browser blends)."""
    top, under = parse_css_color(colour), parse_css_color(background)
    return "#" + "".join(
        f"{round(int(top[i : i + 2], 16) * alpha + int(under[i : i + 2], 16) * (1 - alpha)):02x}"
        for i in (1, 3, 5)
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_shapes_a_legend_names_stand_out_from_the_page(tab: Any, scheme: str) -> None:
    """A legend that tells its entries apart by shape alone (its symbols share one colour:
    the Pareto chart's "Configuration", the task scatter's GPUs) draws them 3:1 or more
    against the page (WCAG 1.4.11, non-text contrast). The Pareto chart's were black, unseen
    on the dark page. (Colour legends are the palette's: the tests above.)"""
    rec, probe = tab("desktop", scheme)
    faint, seen = [], set()
    for path in ("/models/openai--gpt-oss-20b/", "/tasks/gpqa/"):
        rec.goto(path)
        page = rec.page.evaluate("getComputedStyle(document.body).backgroundColor")
        background = parse_css_color(page)
        for image in _static_charts(rec):
            legends: dict[str, list[dict[str, Any]]] = {}
            for symbol in _read_static(rec, probe, image["src"], LEGEND_SYMBOLS):
                legends.setdefault(symbol["legend"], []).append(symbol)
            for title, symbols in legends.items():
                if len({s["fill"] for s in symbols}) > 1:
                    continue  # a colour legend
                for symbol in symbols:
                    seen.add((title, symbol["label"]))
                    drawn = _over(symbol["fill"], symbol["alpha"], background)
                    if contrast(drawn, background) < 3.0:
                        faint.append(f"{image['src']}: {title}: {symbol['label']} drawn {drawn}")
    # The Pareto chart's two configurations, the scatter's two GPUs.
    assert {("Configuration", "Pareto frontier"), ("Configuration", "other")} <= seen, seen
    assert {("GPU", "B200"), ("GPU", "H100")} <= seen, seen
    assert faint == []
