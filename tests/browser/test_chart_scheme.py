"""A live chart follows the reader's light or dark setting while its page is open: it is drawn
again in the colours the static images use for that scheme (render/charts.py THEME_STYLE),
showing the same view. Before, a chart drawn in the light scheme kept its dark grey text on
a page turned dark."""

from __future__ import annotations

from typing import Any

import pytest

from jouleboard.render.charts import AXIS_GREY, DARK_TEXT
from tests.browser.conftest import SIZES, Tabs, taken_tab, watch

pytestmark = pytest.mark.browser

# The fill of every axis label of the page's live charts, and the texts drawn as marks
# (bar labels: the values and places of the view shown).
READ = """() => ({
  fills: Array.from(document.querySelectorAll('figure.chart .vega svg .role-axis-label text'),
                    (t) => t.getAttribute('fill')),
  texts: Array.from(document.querySelectorAll('figure.chart .vega svg .role-mark text'),
                    (t) => t.textContent).filter(Boolean),
})"""
# Every one of the figures is drawn live, all its axis labels in ``colour`` (a page draws its
# live charts one by one: waiting for any label saw the scatter drawn before the bars).
ALL_IN = """([figures, colour]) => figures.every((id) => {
  const labels = document.querySelectorAll(`#${id} .vega svg .role-axis-label text`);
  return labels.length > 0 && Array.from(labels).every((t) => t.getAttribute('fill') === colour);
})"""
LIVE = ["chart-top--gpqa", "chart-configurations--gpqa"]  # the charts the view draws live


def test_a_live_chart_is_drawn_again_when_the_scheme_changes(
    request: pytest.FixtureRequest, shared_tabs: Tabs, site_url: str
) -> None:
    options = {"viewport": SIZES["desktop"], "color_scheme": "light"}
    with taken_tab(request, shared_tabs, site_url, **options) as rec:
        # A deadline of the reader's own: the task page draws its charts live, for that view.
        rec.goto("/tasks/gpqa/?deadline=100")
        rec.page.wait_for_function(ALL_IN, arg=[LIVE, AXIS_GREY])
        before = rec.page.evaluate(READ)
        assert len(before["fills"]) > 5 and any("(#" in t for t in before["texts"]), before
        for scheme, colour in (("dark", DARK_TEXT), ("light", AXIS_GREY)):
            rec.page.emulate_media(color_scheme=scheme)
            rec.page.wait_for_function(ALL_IN, arg=[LIVE, colour])
            after = rec.page.evaluate(READ)
            assert after["texts"] == before["texts"], scheme  # the same view, redrawn
            assert len(after["fills"]) == len(before["fills"]), scheme
        assert rec.page_errors == []


# Every fetch of the page waits 700 ms: a slow network, where a reader's second change comes
# while the first one's spec and data are still on their way.
SLOW_FETCH = """{ const f = window.fetch;
  window.fetch = (...a) => new Promise((r) => setTimeout(r, 700)).then(() => f(...a)); }"""


def test_a_chart_asked_twice_while_loading_is_drawn_once(pw_context: Any, site_url: str) -> None:
    """Two models ticked on /compare/ one after the other, on a slow network, each asked for
    the comparison chart: both draws ran into the same place, and the chart had two actions
    menus, one of them nameless (axe: summary-name). The newer request now wins."""
    pw_context.add_init_script(SLOW_FETCH)
    rec = watch(pw_context, pw_context.new_page(), site_url)
    rec.goto("/compare/")
    boxes = rec.page.locator(".model-choices input[type=checkbox]")
    boxes.nth(1).wait_for()
    boxes.nth(0).check()
    boxes.nth(1).check()
    rec.page.locator("#compare-results:not([hidden]) #chart-compare svg.marks").wait_for()
    # Every draw asked for has settled (live-chart.js keeps the figure's newest in jbQueue).
    drawn = rec.page.evaluate("""async () => {
      const figure = document.querySelector('#chart-compare');
      for (let p = null; p !== figure.jbQueue; ) { p = figure.jbQueue; await p; }
      const holder = figure.querySelector('.vega');
      return { marks: holder.querySelectorAll('svg.marks').length,
               menus: Array.from(holder.querySelectorAll('details > summary'),
                                 (s) => s.getAttribute('aria-label')) };
    }""")
    assert drawn == {"marks": 1, "menus": ["Chart actions: save as SVG or PNG"]}, drawn
    assert rec.errors() == []


# Three draws of one figure asked for at once, through the page's own module: when each
# request settles, is its chart there?
THREE_AT_ONCE = """async () => {
  const entry = document.querySelector('script[type=module][src$="/site.js"]').src;
  const { embedChart } = await import(entry.replace(/site\\.js$/, 'live-chart.js'));
  const figure = document.querySelector('#chart-top--gpqa');
  const drawn = () => figure.querySelectorAll('.vega svg.marks').length;
  const settled = await Promise.all(['a', 'b', 'c'].map(
    (name) => embedChart(figure).then(() => [name, drawn()])));
  return { settled, menus: figure.querySelectorAll('.vega details').length };
}"""


def test_a_replaced_request_settles_when_the_chart_is_drawn(pw_context: Any, site_url: str) -> None:
    """A draw a newer one replaced resolved at once, before any chart was there: the
    "Explore interactively" button then moved focus to a chart not yet drawn."""
    pw_context.add_init_script(SLOW_FETCH)
    rec = watch(pw_context, pw_context.new_page(), site_url)
    rec.goto("/tasks/gpqa/")
    got = rec.page.evaluate(THREE_AT_ONCE)
    assert got == {"settled": [["a", 1], ["b", 1], ["c", 1]], "menus": 1}, got
    assert rec.errors() == []


# The first request for a chart's spec fails, as on a dropped connection; later ones work.
FIRST_SPEC_FAILS = """{ const f = window.fetch; let failed = false;
  window.fetch = (url, ...rest) => {
    if (!failed && String(url).endsWith('.vl.json')) {
      failed = true;
      return Promise.reject(new TypeError('network error'));
    }
    return f(url, ...rest);
  }; }"""


def test_explore_works_on_a_second_click_after_a_failed_load(
    pw_context: Any, site_url: str
) -> None:
    """A spec whose load failed was kept as failed: "Explore interactively", enabled again,
    failed on every click until the page was reloaded."""
    pw_context.add_init_script(FIRST_SPEC_FAILS)
    rec = watch(pw_context, pw_context.new_page(), site_url)
    rec.goto("/tasks/gpqa/")
    button = rec.page.locator("figure#chart-top--gpqa button.interactive")
    button.click()
    rec.page.wait_for_function(
        "() => !document.querySelector('figure#chart-top--gpqa button.interactive').disabled"
    )
    assert rec.page.locator("figure#chart-top--gpqa .vega svg.marks").count() == 0
    button.click()
    rec.page.locator("figure#chart-top--gpqa .vega svg.marks").wait_for()
    assert rec.page.locator("figure#chart-top--gpqa .vega details").count() == 1
