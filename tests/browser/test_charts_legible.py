"""Charts read well on a phone and on a desktop (issue: story): at 390x844 and 1280x800,
every chart text is at least 10 CSS px as shown (390 px), inside its SVG, and no two chart
texts overlap; no page scrolls sideways. The static charts are SVG images, so each one the
page shows is measured where it is drawn: inlined at its shown scale in a blank page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import Recorder, Tabs, taken_tab, watch

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
PAGES = [
    "/",
    "/tasks/gpqa/",
    "/tasks/lm-arena-chat/",
    "/tasks/text-to-image/",
    "/tasks/text-to-video/",
    "/models/openai--gpt-oss-20b/",
    "/gpus/h100/",
    "/compare/",
    "/mlperf/llama2-70b-99/",
    "/mlperf/stable-diffusion-xl/",
    "/downloads/",
    "/glossary/",
]
CHARTLESS = {"/compare/", "/downloads/", "/glossary/"}  # compare: drawn once models are picked

# Every visible text of an SVG at scale 1: its box, font size and text.
MEASURE = """(svg) => {
  const frame = svg.getBoundingClientRect();
  const out = [];
  for (const t of svg.querySelectorAll('text')) {
    if (!t.textContent.trim() || !t.checkVisibility({opacityProperty: true})) continue;
    const r = t.getBoundingClientRect();
    out.push({text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize),
              x: r.left - frame.left, y: r.top - frame.top, w: r.width, h: r.height});
  }
  return {w: frame.width, h: frame.height, texts: out};
}"""


def shown_charts(rec: Recorder) -> list[dict[str, Any]]:
    """The static chart images on the page: the file drawn and its shown/natural scale."""
    images: list[dict[str, Any]] = rec.page.eval_on_selector_all(
        "figure.chart img",
        """(imgs) => imgs.map((i) => ({src: i.currentSrc, shown: i.getBoundingClientRect().width,
                                      natural: i.naturalWidth}))""",
    )
    return [i for i in images if i["shown"] > 0]


def measure_svg(rec: Recorder, probe: Any, src: str) -> dict[str, Any]:
    """The chart file ``src`` inlined alone in the blank page ``probe``, measured."""
    text = rec.page.context.request.get(src).text()
    probe.set_content(f"<!doctype html><body style='margin:0'>{text}</body>")
    result: dict[str, Any] = probe.eval_on_selector("svg", MEASURE)
    return result


def overlaps(a: dict[str, float], b: dict[str, float], slack: float = 1.0) -> bool:
    return (
        a["x"] + a["w"] - slack > b["x"]
        and b["x"] + b["w"] - slack > a["x"]
        and a["y"] + a["h"] - slack > b["y"]
        and b["y"] + b["h"] - slack > a["y"]
    )


def chart_problems(rec: Recorder, probe: Any, min_px: float | None) -> list[str]:
    """Every problem of every chart drawn on the current page (each measured in ``probe``, a
    blank page: each chart replaces the last)."""
    problems = []
    measured = [(image, measure_svg(rec, probe, image["src"])) for image in shown_charts(rec)]
    for image, m in measured:
        scale = image["shown"] / image["natural"]
        name = image["src"].rsplit("/", 1)[-1]
        for t in m["texts"]:
            if min_px is not None and t["size"] * scale < min_px - 0.05:
                problems.append(f"{name}: {t['text']!r} shown at {t['size'] * scale:.1f} px")
            if (
                t["x"] < -1
                or t["y"] < -1
                or t["x"] + t["w"] > m["w"] + 1
                or t["y"] + t["h"] > m["h"] + 1
            ):
                problems.append(f"{name}: {t['text']!r} outside its SVG")
        texts = m["texts"]
        for i, a in enumerate(texts):
            for b in texts[i + 1 :]:
                if overlaps(a, b):
                    problems.append(f"{name}: {a['text']!r} overlaps {b['text']!r}")
    return problems


@pytest.fixture(params=["phone", "desktop"])
def sized(
    request: pytest.FixtureRequest, shared_tabs: Tabs, site_url: str
) -> Iterator[tuple[str, Recorder, Any]]:
    """(size, the page, a blank probe page beside it), from the shared tabs."""
    size = PHONE if request.param == "phone" else DESKTOP
    with taken_tab(request, shared_tabs, site_url, 15_000, viewport=size) as rec:
        yield request.param, rec, shared_tabs.probe(viewport=size)


@pytest.mark.parametrize("path", PAGES)
def test_charts_legible_and_no_sideways_scroll(sized: tuple[str, Recorder, Any], path: str) -> None:
    which, rec, probe = sized
    rec.goto(path)  # returns once the page has loaded: its script has run
    rec.page.evaluate("() => document.querySelectorAll('img').forEach((i) => i.loading = 'eager')")
    rec.page.wait_for_function(
        "() => Array.from(document.querySelectorAll('figure.chart img')).every((i) => i.complete)"
    )
    wide = rec.page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= rec.page.viewport_size["width"], f"{path} scrolls sideways ({wide} px)"
    if path not in CHARTLESS:
        assert shown_charts(rec), f"{path} shows no chart"
    problems = chart_problems(rec, probe, 10.0 if which == "phone" else None)
    assert not problems, "\n".join(problems[:30])


def test_live_compare_chart_is_legible_on_a_phone(pw_browser: Any, site_url: str) -> None:
    """The compare chart is drawn in the page by script: on a phone it takes the phone
    layout, so its text is drawn at 10 px or more, inside the chart, without overlaps."""
    ctx = pw_browser.new_context(viewport=PHONE)
    try:
        rec = watch(ctx, ctx.new_page(), site_url)
        rec.goto("/compare/?task=gpqa&models=openai/gpt-oss-20b,openai/gpt-oss-120b,Qwen/Qwen3-14B")
        rec.page.wait_for_selector("figure.chart svg.marks text")
        m = rec.page.eval_on_selector("figure.chart svg.marks", MEASURE)
        scale = m["w"] / float(rec.page.get_attribute("figure.chart svg.marks", "width") or 1)
        small = [t["text"] for t in m["texts"] if t["size"] * scale < 9.95]
        assert not small, small
        outside = [t["text"] for t in m["texts"] if t["x"] < -1 or t["x"] + t["w"] > m["w"] + 1]
        assert not outside, outside
        assert rec.page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        ctx.close()


BOXES = """(imgs) => imgs.map((i) => {
  const r = i.getBoundingClientRect();
  return [Math.round(r.width), Math.round(r.height), i.naturalWidth];
})"""


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_each_chart_holds_its_place_before_its_image_arrives(
    pw_browser: Any, site_url: str, size: dict[str, int]
) -> None:
    """A chart image's box is the size it is drawn at before its file arrives (from its
    width and height, and the phone render's on its <source>), so the page does not jump as
    the lazy images load: with every chart file refused, each box is the one the loaded
    chart has (the style once set `width: auto`, and each image was 0 x 0 until loaded)."""
    paths = ("/", "/tasks/gpqa/", "/models/openai--gpt-oss-20b/")
    boxes: dict[tuple[bool, str], list[list[int]]] = {}
    for refused in (True, False):
        ctx = pw_browser.new_context(viewport=size)
        try:
            page = ctx.new_page()
            if refused:
                page.route("**/charts/*.svg", lambda route: route.abort())
            for path in paths:
                page.goto(site_url + path)
                if not refused:
                    page.evaluate(
                        "() => document.querySelectorAll('img').forEach((i) => i.loading = 'eager')"
                    )
                    page.wait_for_function(
                        "() => Array.from(document.querySelectorAll('figure.chart img'))"
                        ".every((i) => i.complete)"
                    )
                boxes[refused, path] = page.eval_on_selector_all("figure.chart img", BOXES)
        finally:
            ctx.close()
    for path in paths:
        waiting, loaded = boxes[True, path], boxes[False, path]
        assert loaded and all(natural > 0 for *_, natural in loaded), (path, loaded)
        assert all(natural == 0 for *_, natural in waiting), (path, waiting)  # none arrived
        # Within a pixel: the width and height given are the chart's, rounded.
        pairs = zip(waiting, loaded, strict=True)
        moved = [(a, b) for a, b in pairs if max(abs(a[0] - b[0]), abs(a[1] - b[1])) > 1]
        assert not moved, (path, moved)


# Where a drawn name (a text mark) crosses a line mark (each line's path sampled every px) or
# covers a point mark: each name's box less 1 px each side against them.
NAMES_ON_MARKS = """(svg) => {
  const names = Array.from(svg.querySelectorAll('g.mark-text.role-mark text'))
    .filter((t) => t.textContent.trim()).map((t) => [t.textContent, t.getBoundingClientRect()]);
  const inside = (x, y, r) =>
    x > r.left + 1 && x < r.right - 1 && y > r.top + 1 && y < r.bottom - 1;
  const covered = new Set();
  for (const path of svg.querySelectorAll('g.mark-line path')) {
    const m = path.getScreenCTM();
    for (let s = 0; s <= path.getTotalLength(); s += 1) {
      const p = path.getPointAtLength(s);
      const x = m.a * p.x + m.c * p.y + m.e, y = m.b * p.x + m.d * p.y + m.f;
      for (const [name, r] of names) if (inside(x, y, r)) covered.add(`${name} on the line`);
    }
  }
  for (const point of svg.querySelectorAll('g.mark-symbol.role-mark path')) {
    const p = point.getBoundingClientRect();
    for (const [name, r] of names) {
      const meets = p.left < r.right - 1 && p.right > r.left + 1 &&
        p.top < r.bottom - 1 && p.bottom > r.top + 1;
      if (meets) covered.add(`${name} on a point`);
    }
  }
  return [names.length, [...covered]];
}"""


@pytest.mark.parametrize("render", ["svg", "phone.svg"])
def test_no_name_on_the_accuracy_chart_covers_the_front_or_a_point(
    pw_browser: Any, site_url: str, render: str
) -> None:
    """The accuracy chart names the models on its Pareto front and those whose colour
    another shares. The front's dashed steps ran through "GPT OSS 20B" and "Qwen 3 30B A3B
    Thinking" (names alternated above and below their points), and on a phone "DeepSeek
    R1", centred under its point, covered DeepSeek V3.1's. Each name now takes a place clear
    of the points, the steps and the other names (render/point_names.py)."""
    ctx = pw_browser.new_context(viewport=DESKTOP)
    try:
        page = ctx.new_page()
        text = ctx.request.get(f"{site_url}/charts/accuracy--gpqa.{render}").text()
        page.set_content(f"<!doctype html><body style='margin:0'>{text}</body>")
        names, covered = page.eval_on_selector("svg", NAMES_ON_MARKS)
        assert names == 6 and covered == [], (names, covered)  # the front's four, two greys
    finally:
        ctx.close()


def test_the_interactive_accuracy_chart_keeps_its_names_clear(
    pw_browser: Any, site_url: str
) -> None:
    """The interactive view fitted its figure, narrower than the plots the names were
    placed for: at 390 px "DeepSeek V3.1" sat on the front's step. It is now drawn at the
    widest of the widths its names were placed for that fits (usermeta.live), at its own
    size: Vega finds the point under the pointer in unscaled pixels, so a chart shrunk to
    fit would show the wrong tooltips. A width too narrow to name a model clear of the
    other marks leaves its name out (at 360 px "DeepSeek V3.1" crossed the step). Small
    phone, phone, small tablet, tablet, desktop."""
    ctx = pw_browser.new_context(viewport=DESKTOP)
    try:
        page = ctx.new_page()
        for width in (360, 390, 600, 768, 1280):
            page.set_viewport_size({"width": width, "height": 800})
            page.goto(f"{site_url}/tasks/gpqa/")
            figure = page.locator("#chart-accuracy--gpqa")
            figure.locator("button.interactive").click()
            svg = figure.locator("svg.marks")
            svg.locator("g.mark-text text").first.wait_for(state="attached")
            names, covered = svg.evaluate(NAMES_ON_MARKS)
            # Every name from a phone's width up; at 360 px, those with a clear place.
            assert names == 6 if width >= 390 else names >= 3, (width, names)
            assert covered == [], (width, covered)
            drawn, shown, room = svg.evaluate(
                "(s) => [Number(s.getAttribute('width')), s.getBoundingClientRect().width,"
                " s.closest('figure').clientWidth]"
            )
            assert drawn == round(shown) and drawn <= room, (width, drawn, shown, room)
    finally:
        ctx.close()
