"""Every page and every SVG or XML file built from script-laden contributor strings runs no
contributor script, opened directly in Chromium."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import serve, watch

# Payloads set window.__xss or open a dialog if they ever run.
PROBE = "() => window.__xss === undefined ? null : String(window.__xss)"
# Every chart clicked is drawn (its button goes) or has given up (its button is enabled again).
# No chart draws itself: an embed page, too, shows its SVG until its button is clicked.
CHARTS_SETTLED = """() => !document.querySelector("button.interactive[disabled]")"""


def settle_charts(page: Any) -> None:
    """Waits until the page's live charts are drawn (the payload strings are in Vega's titles
    and tooltips by then), 5 s at most: a chart that cannot draw is no XSS, the probes run."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(CHARTS_SETTLED, timeout=5_000)


@pytest.fixture(scope="module")
def payload_out(payload_site: Path) -> Iterator[tuple[str, Path]]:
    with serve(payload_site) as url:
        yield url, payload_site


@pytest.fixture(scope="module")
def payload_url(payload_out: tuple[str, Path]) -> tuple[str, list[str]]:
    url, out = payload_out
    pages = sorted(
        "/" + p.relative_to(out).as_posix().removesuffix("index.html") for p in out.rglob("*.html")
    )
    return url, pages


@pytest.mark.browser
def test_no_payload_runs_on_any_page(pw_browser: Any, payload_url: tuple[str, list[str]]) -> None:
    url, pages = payload_url
    assert len(pages) > 10
    context = pw_browser.new_context()
    page = context.new_page()
    rec = watch(context, page, url)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.add_init_script("""
        window.__csp = [];
        document.addEventListener('securitypolicyviolation',
            (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
    """)
    ran: dict[str, str] = {}
    csp: dict[str, list[str]] = {}
    try:
        for path in pages:
            rec.goto(path)
            # Interactive charts put the payload strings through Vega titles and tooltips too.
            # A clicked button disables itself, then goes once its chart is drawn: always
            # click the first one still waiting (positions shift as buttons go).
            waiting = page.locator("button.interactive:visible:not([disabled])")
            for _ in range(3):
                if not waiting.count():
                    break
                waiting.first.click()
            settle_charts(page)
            for row in page.locator("table.data tbody tr:visible").all()[:3]:
                row.hover()
            if (value := page.evaluate(PROBE)) is not None:
                ran[path] = value
            if violations := page.evaluate("window.__csp"):
                csp[path] = violations
    finally:
        context.close()
    assert dialogs == []
    assert ran == {}
    assert csp == {}  # inline payloads never even reach the CSP: they are text
    assert rec.page_errors == []
    assert rec.external_requests() == []


@pytest.mark.browser
def test_no_payload_runs_in_any_svg_or_xml_file(
    pw_browser: Any, payload_out: tuple[str, Path]
) -> None:
    """Energy labels, chart SVGs, the favicon, the Atom feed and the sitemap, each opened
    as a document of its own (where an SVG's onload or script would run)."""
    url, out = payload_out
    files = sorted(
        "/" + p.relative_to(out).as_posix() for p in out.rglob("*") if p.suffix in (".svg", ".xml")
    )
    assert len([f for f in files if f.startswith("/labels/")]) >= 4
    assert {"/feed.xml", "/sitemap.xml"} <= set(files)
    context = pw_browser.new_context()
    page = context.new_page()
    rec = watch(context, page, url)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    ran: dict[str, str] = {}
    try:
        for path in files:
            rec.goto(path, wait_until="load")
            if (value := page.evaluate(PROBE)) is not None:
                ran[path] = value
    finally:
        context.close()
    assert dialogs == []
    assert ran == {}
    assert rec.page_errors == []
    assert rec.external_requests() == []


@pytest.mark.browser
def test_inherited_names_in_the_url_fall_back_to_defaults(
    pw_browser: Any, payload_url: tuple[str, list[str]]
) -> None:
    """?pct=constructor, ?task=__proto__, ?gpu=toString: no error, no native code shown."""
    url, pages = payload_url
    task = next(p for p in pages if p.startswith("/tasks/") and p.count("/") == 3)
    context = pw_browser.new_context()
    page = context.new_page()
    rec = watch(context, page, url)
    try:
        for path in (
            f"{task}?pct=constructor&gpu=toString&deadline=100",
            "/compare/?task=__proto__&pct=constructor&models=constructor,toString",
        ):
            rec.goto(path)
            page.wait_for_timeout(500)
            assert "native code" not in page.inner_text("body"), path
    finally:
        context.close()
    assert rec.page_errors == []
