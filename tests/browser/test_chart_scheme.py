"""A live chart follows the reader's light or dark setting while its page is open: it is drawn
again in the colours the static images use for that scheme (render/charts.py THEME_STYLE),
showing the same view. Before, a chart drawn in the light scheme kept its dark grey text on
a page turned dark."""

from __future__ import annotations

import pytest

from jouleboard.render.charts import AXIS_GREY, DARK_TEXT
from tests.browser.conftest import SIZES, Tabs, taken_tab

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
