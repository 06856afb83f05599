"""Every page built from script-laden registry strings runs no contributor script."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jouleboard.build import build_site
from tests.browser.conftest import serve, watch
from tests.golden.tree import REPO
from tests.payloads import write_payload_data

# Payloads set window.__xss or open a dialog if they ever run.
PROBE = "() => window.__xss === undefined ? null : String(window.__xss)"


@pytest.fixture(scope="module")
def payload_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    base = tmp_path_factory.mktemp("xss-browser")
    out = base / "site"
    build_site(write_payload_data(base / "data"), out, project=REPO)
    pages = sorted("/" + p.relative_to(out).as_posix().removesuffix("index.html")
                   for p in out.rglob("*.html"))
    with serve(out) as url:
        yield url, pages


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
            for button in page.locator("button.interactive:visible").all()[:3]:
                button.click()
            if page.locator("button.interactive").count() or page.locator(".vega").count():
                page.wait_for_timeout(300)
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
