"""Wide tables scroll sideways instead of squeezing a column until its rows grow tall."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_configuration_rows_stay_a_few_lines_tall_at_1280_px(site_page) -> None:
    # The source column ('The ML.ENERGY Benchmark v3' and its release note) used to shrink
    # to ~100 px and wrap into eight lines, making every row 158 px tall.
    site_page.goto("/models/openai--gpt-oss-20b/")
    line, tallest = site_page.page.evaluate("""() => {
        const table = [...document.querySelectorAll('table.data')].find(
            t => t.caption && t.caption.textContent.startsWith('Every configuration'));
        const cell = table.tBodies[0].rows[0].cells[0];
        const rows = [...table.tBodies[0].rows].map(r => r.getBoundingClientRect().height);
        return [parseFloat(getComputedStyle(cell).lineHeight), Math.max(...rows)];
    }""")
    assert tallest <= 4 * line + 24, (line, tallest)  # at most four lines and the padding


def test_sorting_a_grouped_table_orders_every_row(site_page) -> None:
    """A model page's configurations come grouped by GPU count; sorting a column puts every
    row in that order, and the group headers, which no longer hold, go."""
    site_page.goto("/models/openai--gpt-oss-20b/")
    table = site_page.page.locator("#configs-gpqa")
    assert table.locator("tr.group").count() >= 2
    rows = table.locator("tbody tr:not(.group)").count()
    table.locator("th.col-median_itl_ms button.sort").click()
    values = site_page.page.evaluate("""() => [...document.querySelectorAll(
        '#configs-gpqa tbody td.col-median_itl_ms')].map(td => Number(td.dataset.value))""")
    assert table.locator("tr.group").count() == 0
    assert len(values) == rows and values == sorted(values)
