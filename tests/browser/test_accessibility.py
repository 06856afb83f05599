"""axe-core on every page type, light and dark, at 390 and 1280 px; visible keyboard focus.

axe runs every rule it has (WCAG 2 A and AA, best practices) and the test fails on a violation
of any impact. No rule is turned off. A page with a chart is audited with one chart made
interactive (vega-embed adds its own markup: the actions menu), and the compare page with two
models chosen (its results table and chart appear only then).
"""

from __future__ import annotations

from typing import Any

import pytest

PAGES = [
    "/",
    "/tasks/gpqa/",
    "/tasks/text-to-image/",
    "/models/openai--gpt-oss-20b/",
    "/models/google--gemma-3-12b-it/",  # two tasks: its section names must differ
    "/gpus/b200/",  # with MLPerf results
    "/gpus/h100/",  # without
    "/models/",
    "/gpus/",
    "/compare/",
    "/downloads/",
    "/changelog/",
    "/about/",
    "/glossary/",
    "/404.html",
    "/embed/top--gpqa/",
    "/embed/pareto--qwen--qwen3-8b--gpqa/",
    "/mlperf/",
    "/mlperf/llama2-70b-99/",
]
WIDTHS = [390, 1280]
SCHEMES = ["light", "dark"]


def _wake_up(page: Any, path: str) -> None:
    """Bring out what the page's script adds on demand: an interactive chart, or on the compare
    page two chosen models with their results."""
    if path == "/compare/":
        page.locator(".model-choices input[type=checkbox]").nth(1).wait_for()
        for i in (0, 1):
            page.locator(".model-choices input[type=checkbox]").nth(i).check()
        page.locator("#compare-results:not([hidden]) #chart-compare svg.marks").wait_for()
        return
    button = page.locator("button.interactive:visible")
    if button.count():
        button.first.click()
        page.locator("figure.chart .vega svg.marks").first.wait_for()
        page.locator("figure.chart .vega details > summary").first.wait_for(state="attached")


def _violations(results: dict[str, Any]) -> list[str]:
    return [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])}x): {v['help']}: "
        + "; ".join(str(n["target"][0]) if n["target"] else "?" for n in v["nodes"][:3])
        for v in results["violations"]
    ]


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_no_axe_violations(pw_browser: Any, site_url: str, scheme: str, width: int) -> None:
    axe_module = pytest.importorskip("axe_playwright_python.sync_playwright")
    axe = axe_module.Axe()
    context = pw_browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    context.set_default_timeout(20_000)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    try:
        for path in PAGES:
            response = page.goto(site_url + path)
            assert response is not None and response.status == 200, path
            _wake_up(page, path)
            bad = _violations(axe.run(page).response)
            if bad:
                found[path] = bad
    finally:
        context.close()
    assert found == {}


# What a focused control must show: an outline at least 2 px wide, or a box shadow.
FOCUS_RING = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const s = getComputedStyle(el);
  const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2;
  return {
    visible: outline || s.boxShadow !== "none",
    what: el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : "") +
      " " + (el.textContent || el.value || "").trim().slice(0, 30),
  };
}"""


@pytest.mark.browser
@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_sort_button_shows_keyboard_focus(pw_browser: Any, site_url: str, scheme: str) -> None:
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    try:
        page.goto(site_url + "/tasks/gpqa/")
        page.locator("th button.sort").first.wait_for()
        for _ in range(200):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.matches('th button.sort')"):
                break
        else:
            pytest.fail("Tab never reached a sort button")
        ring = page.evaluate(FOCUS_RING)
        assert page.evaluate("() => document.activeElement.matches(':focus-visible')")
        assert ring["visible"], f"no visible focus on {ring['what']}"
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("path", ["/tasks/gpqa/", "/models/openai--gpt-oss-20b/", "/compare/"])
def test_every_control_shows_keyboard_focus(pw_browser: Any, site_url: str, path: str) -> None:
    """Tab through the whole page: every link, button, field and summary it reaches (the
    first 600) shows a focus ring."""
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(site_url + path)
        page.wait_for_load_state("load")
        page.wait_for_timeout(200)  # the page script's controls
        seen, unseen = 0, []
        first = None
        for _ in range(600):
            page.keyboard.press("Tab")
            ring = page.evaluate(FOCUS_RING)
            if ring is None:
                continue
            if ring["what"] == first:
                break  # round the page once
            first = first or ring["what"]
            seen += 1
            if not ring["visible"]:
                unseen.append(ring["what"])
        assert seen > 20
        assert unseen == []
    finally:
        context.close()
