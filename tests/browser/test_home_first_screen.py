"""The home page's first screen answers (issue 29, item 4): at 1280 x 800 the findings and a
chart of the leading task's ranking show without scrolling; on a phone the chart follows the
findings."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_chart_shows_above_the_fold_at_1280_by_800(site_page: Any, scheme: str) -> None:
    site_page.page.set_viewport_size({"width": 1280, "height": 800})
    site_page.page.emulate_media(color_scheme=scheme)
    site_page.goto("/")
    chart = site_page.page.locator(".hero-chart img")
    chart.wait_for()
    box = chart.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800, box
    assert (
        site_page.page.evaluate("() => document.querySelector('.hero-chart img').naturalWidth") > 0
    )  # it loaded
    first = site_page.page.locator("ul.findings li").first.bounding_box()
    assert first is not None and first["y"] + first["height"] <= 800
    # The chart is the leading task's ranking: it links there and names it.
    href = site_page.page.get_attribute(".hero-chart a", "href")
    assert href is not None and href.endswith("/tasks/gpqa/")
    assert "Problem Solving with Reasoning" in site_page.page.inner_text(".hero-chart figcaption")


def test_on_a_phone_the_chart_follows_the_findings(site_page: Any) -> None:
    site_page.page.set_viewport_size({"width": 390, "height": 844})
    site_page.goto("/")
    chart = site_page.page.locator(".hero-chart").bounding_box()
    findings = site_page.page.locator("ul.findings").bounding_box()
    assert chart is not None and findings is not None
    assert chart["y"] >= findings["y"] + findings["height"] - 1
    assert chart["x"] + chart["width"] <= 390
