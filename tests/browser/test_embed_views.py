"""Issue 40 item 6: embeds and energy labels. An embed page on a phone shows the phone
render (its text was ~6 px: the desktop SVG shrunk); an energy label's embed code is
absolute, as the charts' are, and shows the label once pasted on another origin; a label
never cuts its text ("Problem Solving with Reas...", "data 2026-02-"), in the font it names
or in a wider fallback; and the embed code of a chart that follows the task page's controls
carries the reader's view, which the embed page draws (ranked again by the same rank.js),
pasted on another origin; without settings it shows its static image."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import SIZES, serve, watch

pytestmark = pytest.mark.browser

PHONE, DESKTOP = SIZES["phone"], SIZES["desktop"]

TEXTS = """(svg) => {
  const frame = svg.getBoundingClientRect();
  return Array.from(svg.querySelectorAll('text')).filter((t) => t.textContent.trim())
    .map((t) => { const r = t.getBoundingClientRect();
      return {text: t.textContent, size: parseFloat(getComputedStyle(t).fontSize),
              x: r.left - frame.left, y: r.top - frame.top, w: r.width, h: r.height}; });
}"""


@pytest.mark.parametrize("chart", ["configurations--gpqa", "deadlines--gpqa", "top--gpqa"])
def test_an_embed_page_on_a_phone_shows_the_phone_render(
    pw_browser: Any, site_url: str, chart: str
) -> None:
    ctx = pw_browser.new_context(viewport=PHONE)
    try:
        rec = watch(ctx, ctx.new_page(), site_url)
        rec.goto(f"/embed/{chart}/")
        img = rec.page.locator("figure.chart img")
        img.evaluate("(i) => i.decode()")
        src = img.evaluate("(i) => i.currentSrc")
        assert src.endswith(".phone.svg"), src
        shown = img.evaluate("(i) => i.getBoundingClientRect().width / i.naturalWidth")
        probe = ctx.new_page()
        probe.set_content(f"<!doctype html><body>{ctx.request.get(src).text()}</body>")
        small = [
            (t["text"], round(t["size"] * shown, 1))
            for t in probe.eval_on_selector("svg", TEXTS)
            if t["size"] * shown < 9.95
        ]
        assert not small, small
        assert rec.page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
        assert rec.errors() == []
    finally:
        ctx.close()


def test_a_labels_embed_code_is_absolute_and_shows_the_label_elsewhere(
    pw_browser: Any, site_url: str, tmp_path: Path
) -> None:
    """The shared site has no site_url: the page makes the label's code absolute from its
    own address, as it does the charts'; pasted on another origin, the label loads."""
    ctx = pw_browser.new_context(viewport=DESKTOP)
    try:
        rec = watch(ctx, ctx.new_page(), site_url)
        rec.goto("/models/openai--gpt-oss-20b/")
        codes = rec.page.locator(".energy-label input.embed-code")
        assert codes.count() >= 1
        code = codes.first.input_value()
        assert code.startswith(f'<img src="{site_url}/labels/'), code
        (tmp_path / "article.html").write_text(
            f'<!doctype html><title>Article</title><link rel="icon" href="data:,">{code}',
            encoding="utf-8",
        )
        with serve(tmp_path) as elsewhere:
            assert elsewhere != site_url
            rec.page.goto(f"{elsewhere}/article.html")
            width = rec.page.locator("img").evaluate(
                "(i) => i.decode().then(() => i.naturalWidth, () => 0)"
            )
            assert width == 240
    finally:
        ctx.close()


LABEL = """(svg) => {
  const frame = svg.getBoundingClientRect();
  const square = Array.from(svg.querySelectorAll('rect'))
    .map((r) => r.getBoundingClientRect())
    .find((r) => r.width > 40 && r.width === r.height);
  const texts = Array.from(svg.querySelectorAll('text')).map((t) => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left - frame.left, right: r.right - frame.left,
            top: r.top - frame.top, bottom: r.bottom - frame.top};
  });
  return {width: frame.width, height: frame.height, texts,
          title: svg.querySelector('title').textContent,
          square: {left: square.left - frame.left, top: square.top - frame.top,
                   bottom: square.bottom - frame.top}};
}"""


@pytest.mark.parametrize("font", ["", "DejaVu Sans"])
def test_energy_labels_never_cut_their_text(pw_browser: Any, site_dir: Path, font: str) -> None:
    """Every label of the site, drawn in the font it names and in a wider fallback: every
    text inside the badge and clear of the band's square, none ending in an ellipsis, and
    the model's and the task's names whole (its <title> names them)."""
    labels = sorted((site_dir / "labels").rglob("*.svg"))
    assert len(labels) >= 50
    style = f"<style>svg text{{font-family:'{font}' !important}}</style>" if font else ""
    ctx = pw_browser.new_context(viewport=DESKTOP)
    problems = []
    try:
        page = ctx.new_page()
        for path in labels:
            page.set_content(f"<!doctype html>{style}<body>{path.read_text(encoding='utf-8')}")
            drawn = page.eval_on_selector("svg", LABEL)
            square = drawn["square"]
            # Every text but the band's letter, in reading order.
            words = " ".join(t["text"] for t in drawn["texts"] if len(t["text"]) > 1)
            for t in drawn["texts"]:
                where = f"{path.name}: {t['text']!r}"
                if "…" in t["text"] or t["text"].endswith("..."):
                    problems.append(f"{where} is cut")
                if t["left"] < 0 or t["right"] > drawn["width"] or t["bottom"] > drawn["height"]:
                    problems.append(f"{where} runs past the badge")
                beside = t["top"] < square["bottom"] and t["bottom"] > square["top"]
                if beside and t["left"] < square["left"] and t["right"] > square["left"]:
                    problems.append(f"{where} runs under the band's square")
            for name in drawn["title"].split(", "):
                if " ".join(name.split()) not in " ".join(words.split()):
                    problems.append(f"{path.name}: {name!r} is not shown whole")
    finally:
        ctx.close()
    assert not problems, "\n".join(problems[:20])


def _top_models(page: Any, n: int) -> list[str]:
    cells = page.locator("#ranking-gpqa tbody td.col-model")
    return [cells.nth(i).get_attribute("data-value") or "" for i in range(n)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_embed_code_carries_the_view_the_reader_set(
    pw_browser: Any, site_url: str, tmp_path: Path, viewport: dict[str, int]
) -> None:
    """On the task page the reader sets 50 ms and H100 only: the bar chart's and the
    configurations chart's embed codes carry them; pasted on another origin, the embed
    pages rank the task again at that view and draw it (the bars are the page's own top
    rows at that view; the configurations chart's deadline is 50 ms), while an embed page
    with no settings shows its static image."""
    ctx = pw_browser.new_context(viewport=viewport)
    ctx.set_default_timeout(20_000)
    try:
        rec = watch(ctx, ctx.new_page(), site_url)
        page = rec.page
        rec.goto("/tasks/gpqa/")
        page.locator("#deadline-ms").fill("50")
        page.locator("#deadline-ms").dispatch_event("change")
        page.locator("form.explore input[name=gpu][value=B200]").uncheck()
        page.wait_for_function("() => location.search.includes('gpu=H100')")
        top = int(page.locator("form.explore").get_attribute("data-top") or 0)
        page.wait_for_function(
            "() => document.querySelector('#ranking-gpqa caption').textContent.includes('50 ms')"
        )
        expected = _top_models(page, top)
        codes = {}
        for chart in ("top--gpqa", "configurations--gpqa"):
            box = page.locator(f"#chart-{chart} details.embed-box")
            box.locator("summary").click()
            codes[chart] = box.locator("textarea.embed-code").input_value()
            assert f'src="{site_url}/embed/{chart}/?' in codes[chart], codes[chart]
            assert "deadline=50" in codes[chart] and "gpu=H100" in codes[chart]
        (tmp_path / "article.html").write_text(
            '<!doctype html><title>Article</title><link rel="icon" href="data:,">'
            + "".join(codes.values()),
            encoding="utf-8",
        )
        with serve(tmp_path) as elsewhere:
            page.goto(f"{elsewhere}/article.html")
            bars = page.frame_locator("iframe").nth(0)
            bars.locator("figure.chart svg.marks .role-axis-label text").first.wait_for()
            # The title names the whole view (the GPUs were only in the credit line, which
            # a short frame cuts), and "Full page" opens the task page at it.
            heading = bars.locator("h1").inner_text()
            assert "50 ms" in heading and "on H100" in heading, heading
            full = bars.locator(".credit a", has_text="Full page").get_attribute("href") or ""
            assert full.endswith("/tasks/gpqa/?deadline=50&gpu=H100"), full
            names = bars.locator("figure.chart svg.marks").evaluate(
                """(svg) => Array.from(svg.querySelectorAll('.role-axis-label text'))
                     .map((t) => Array.from(t.childNodes).map((n) => n.textContent).join(' '))
                     .filter((t) => !/^[0-9.,]+$/.test(t))"""
            )
            assert [" ".join(n.split()) for n in names] == expected
            scatter = page.frame_locator("iframe").nth(1)
            scatter.locator("figure.chart svg.marks").wait_for()
            assert scatter.locator("svg.marks text", has_text="deadline 50 ms").count() == 1
            assert "on H100" in scatter.locator(".credit").inner_text()
        # No settings: the static image, the default view.
        rec.goto("/embed/top--gpqa/")
        page.locator("figure.chart img").evaluate("(i) => i.decode()")
        page.wait_for_load_state("networkidle")
        assert page.locator("figure.chart svg.marks").count() == 0
        assert rec.errors() == []
    finally:
        ctx.close()
