"""Text-to-image and text-to-video pages in a real browser."""

from __future__ import annotations

import pytest

from tests.browser.conftest import Recorder


@pytest.mark.browser
@pytest.mark.parametrize(("task", "unit", "first"), [
    ("text-to-image", "Images/kJ", "SANA 1.5 1.6B"),
    ("text-to-video", "Videos/MJ", "CogVideoX 2B"),
])
def test_diffusion_task_page(site_page: Recorder, task: str, unit: str, first: str) -> None:
    page = site_page.page
    site_page.goto(f"/tasks/{task}/")
    table = page.locator(f"#ranking-{task}")
    assert unit in table.locator("thead").inner_text()
    assert table.locator("tbody tr").first.locator("td").nth(1).inner_text().startswith(first)
    assert "token" not in page.locator("main").inner_text().lower()
    figure = page.locator(f"#chart-configurations--{task}")
    figure.locator("button.interactive").click()
    figure.locator("svg.marks").wait_for()
    assert figure.locator("g.mark-symbol.role-mark path").count() > 10
    assert site_page.problems() == []
    assert site_page.external_requests() == []
