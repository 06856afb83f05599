"""A page that prints (issue 40, item 7): on paper the controls are gone (navigation, slider,
buttons, help links, forms, embed boxes), a table is whole (no column cut at the right), a
chart stays with its caption, the page says its address and its data's date, and a task
prints on a few pages (gpqa took 7).

Chromium's own print layout is read two ways: the DOM under print media at the width of
an A4 page's text (210 mm less the 12 mm margins: 703 CSS px), and ``page.pdf()`` for the
page count."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import Tabs, taken_tab

pytestmark = pytest.mark.browser

A4_TEXT = {"width": 703, "height": 1032}  # CSS px at 96/in: (210 - 24) mm x (297 - 24) mm
PAGES = [
    "/tasks/gpqa/",
    "/tasks/gpqa/?deadline=50",
    "/gpus/b200/",
    "/models/openai--gpt-oss-20b/",
    "/mlperf/llama2-70b-99/",
    "/compare/?task=gpqa&models=openai/gpt-oss-20b,Qwen/Qwen3-8B",
]


@pytest.fixture
def printed(request: pytest.FixtureRequest, shared_tabs: Tabs, site_url: str) -> Iterator[Any]:
    """printed(path, scheme="light") -> a page loaded on screen, then laid out for print
    (the shared page of its kind, conftest.taken_tab)."""
    with contextlib.ExitStack() as stack:

        def opened(path: str, scheme: str = "light") -> Any:
            rec = stack.enter_context(
                taken_tab(request, shared_tabs, site_url, viewport=A4_TEXT, color_scheme=scheme)
            )
            rec.goto(path)
            if path.startswith("/compare/"):
                rec.page.wait_for_function(
                    "() => !document.getElementById('compare-results').hidden"
                )
            rec.page.emulate_media(media="print")
            return rec.page

        yield opened


@pytest.mark.parametrize("path", PAGES)
def test_no_control_prints(printed: Any, path: str) -> None:
    page = printed(path)
    shown = page.evaluate("""() => Array.from(document.querySelectorAll(
        `nav, form, input, select, button, textarea, summary, a.def, .scroll-cue,
         details.embed-box`))
        .filter((el) => el.getClientRects().length > 0)
        .filter((el) => !(el.matches('button.sort') && el.closest('th')))  // a header's text
        .map((el) => el.outerHTML.slice(0, 80))""")
    assert shown == []


@pytest.mark.parametrize("path", PAGES)
def test_every_table_prints_whole(printed: Any, path: str) -> None:
    """Median ITL and every column after it were cut at the right of a task's table."""
    page = printed(path)
    cut = page.evaluate("""() => {
      const right = document.documentElement.clientWidth;
      return Array.from(document.querySelectorAll('table.data'))
        .filter((t) => t.getClientRects().length > 0)
        .filter((t) => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1 ||
          t.getBoundingClientRect().right > right + 0.5 ||
          Array.from(t.tHead.rows[0].cells).some((c) =>
            c.getBoundingClientRect().right > right + 0.5))
        .map((t) =>
          `${t.id}: ${Math.round(t.getBoundingClientRect().right)} px on a ${right} px page`);
    }""")
    assert cut == []
    assert page.locator("table.data").count() >= 1


@pytest.mark.parametrize("path", ["/tasks/gpqa/", "/models/openai--gpt-oss-20b/"])
def test_each_chart_is_kept_with_its_caption(printed: Any, path: str) -> None:
    """A chart landed on another page than its caption: a figure is not to be broken across
    pages, and it fits on one (a figure taller than a page would be broken anyway)."""
    page = printed(path)
    figures = page.evaluate("""() => Array.from(document.querySelectorAll('figure.chart'))
        .filter((f) => f.getClientRects().length > 0)
        .map((f) => [f.id, getComputedStyle(f).breakInside, f.getBoundingClientRect().height,
                     !!f.querySelector('figcaption') && f.querySelector('figcaption')
                       .getClientRects().length > 0])""")
    assert len(figures) >= 2
    for fid, brk, height, captioned in figures:
        assert brk == "avoid" and height <= A4_TEXT["height"] and captioned, (fid, brk, height)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_address_and_the_data_date_print(printed: Any, site_url: str, scheme: str) -> None:
    """The printed page says where it came from, with the reader's view in the address, and
    how old its data is (the date the footer gives), in dark ink whatever the screen's
    scheme."""
    path = "/tasks/gpqa/?deadline=50"
    page = printed(path, scheme)
    line = page.locator(".print-source")
    assert line.is_visible()
    text = line.inner_text()
    assert site_url + path in text
    footer = page.locator("footer").inner_text()
    dated = re.search(r"dated (\d{4}-\d{2}-\d{2})", footer)
    assert dated is not None and dated.group(1) in text
    color = page.evaluate("() => getComputedStyle(document.body).color")
    assert color == "rgb(0, 0, 0)", color
    # A view the reader sets after loading is the one named (the URL changes in place).
    page.emulate_media(media="screen")
    page.fill("#deadline-ms", "100")
    page.press("#deadline-ms", "Enter")
    page.wait_for_function("() => location.search.includes('deadline=100')")
    page.pdf()  # printing fires beforeprint
    assert "deadline=100" in page.locator(".print-url").inner_text()


def test_a_task_prints_on_a_few_pages(pw_browser: Any, site_url: str) -> None:
    """gpqa printed on 7 A4 pages (the navigation, the controls, one chart a page)."""
    ctx = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        page.goto(site_url + "/tasks/gpqa/")
        pdf = page.pdf(format="A4")
    finally:
        ctx.close()
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf))
    assert 1 <= pages <= 6, pages
