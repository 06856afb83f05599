"""One visit of every page of the default site, shared by the tests of page-wide facts.

The tour opens each page once (1280x900, JavaScript on, a CSP-violation listener installed
before any page script) and writes down what the tests in test_site_browser.py check: the
console errors and warnings and uncaught page errors (while loading, and after the charts
went interactive), the requests that left 127.0.0.1, the CSP violations, the page's h1s and
its Pareto chart. On the pages in :func:`interactive_charts` it clicks each chart's
"Explore interactively" button, waits for Vega to draw it and hovers a mark.

Each test asserts on its own pages of the record, so they still fail separately, while the
site is walked once per run (not once per test: the walk takes 30-60 s), in the background
after the default site is built (:func:`build_tour`), or else by the first worker that needs
it; the pytest-xdist workers share it through :func:`tests.sitebuild.build_once`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import Recorder, is_local, launch_chromium, serve, watch
from tests.sitebuild import build_once

# Vega renders each mark group as <g class="mark-TYPE role-mark"> holding one element per item.
RENDERED_MARKS = "svg.marks g.role-mark > *"
RENDERED_POINTS = "svg.marks g.mark-symbol.role-mark path"
PARETO = "figure.chart[id^='chart-pareto--']"
# Every chart of these pages goes interactive (more: interactive_charts).
ALL_CHARTS = ("/", "/gpus/b200/", "/gpus/h100/", "/models/openai--gpt-oss-20b/")

CSP_INIT_SCRIPT = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push({
    directive: event.violatedDirective, blocked: event.blockedURI,
    source: event.sourceFile, line: event.lineNumber, sample: event.sample,
  });
}, true);
"""

FACTS_JS = """() => {
    const pareto = document.querySelector("figure.chart[id^='chart-pareto--']");
    const img = pareto && pareto.querySelector("img");
    return {
        h1: Array.from(document.querySelectorAll("h1"), (h) => h.innerText.trim()),
        pareto: pareto && pareto.id,
        pareto_alt: img && img.alt.trim(),
        charts: Array.from(document.querySelectorAll("figure.chart[data-spec]"), (f) => f.id),
        model_links: Array.from(new Set(Array.from(
            document.querySelectorAll("table.data a[href^='/models/']"),
            (a) => a.getAttribute("href")))).sort(),
        csp: window.__cspViolations === undefined ? null : window.__cspViolations,
    };
}"""


def html_pages(site: Path) -> list[str]:
    """Every page's path as served: '/x/y/' for x/y/index.html, '/404.html' for 404.html."""
    paths = []
    for file in sorted(site.rglob("*.html")):
        rel = file.relative_to(site).as_posix()
        paths.append("/" + rel[: -len("index.html")] if rel.endswith("index.html") else "/" + rel)
    return paths


def interactive_charts(path: str, home_models: list[str]) -> str | None:
    """Which charts of ``path`` the tour makes interactive: 'all', 'pareto' or None.

    All charts: every task page and :data:`ALL_CHARTS` (console and CSP tests, the request
    test), and the first model linked from the home page (CSP test); the Pareto chart of
    every other model page linked from the home page (Pareto test)."""
    if path.startswith("/tasks/") or path in ALL_CHARTS or home_models[:1] == [path]:
        return "all"
    return "pareto" if path in home_models else None


def _go_interactive(page: Any, figure_id: str, pareto: bool) -> int:
    """Clicks the chart's button and waits until Vega has drawn it (for a Pareto chart: its
    points, and the button gone); hovers a drawn mark. The number of marks drawn, 0 if none
    came within the timeout."""
    figure = f"figure.chart[id='{figure_id}']"
    page.locator(f"{figure} button.interactive").click()
    drawn = f"{figure} {RENDERED_POINTS if pareto else RENDERED_MARKS}"
    try:
        page.wait_for_function(
            """(arg) => document.querySelectorAll(arg.drawn).length > 0
                && (!arg.pareto || !document.querySelector(arg.button))""",
            arg={"drawn": drawn, "pareto": pareto, "button": f"{figure} button.interactive"},
        )
    except Exception:  # a timeout: recorded as nothing drawn, the tests say where
        return 0
    # Use the chart a little: hovering a mark shows Vega's tooltip.
    page.locator(f"{figure} {RENDERED_MARKS}").first.hover(force=True)
    return int(page.locator(drawn).count())


def _visit(rec: Recorder, path: str, home_models: list[str]) -> dict[str, Any]:
    """One page's record (see the module docstring)."""
    console, errors, requests = len(rec.console), len(rec.page_errors), len(rec.requests)
    rec.goto(path, wait_until="load")
    facts = rec.page.evaluate(FACTS_JS)
    at_load = rec.console[console:] + rec.page_errors[errors:]
    which = interactive_charts(path, home_models or facts["model_links"])
    drawn = {}
    if which == "all":
        drawn = {
            fid: _go_interactive(rec.page, fid, fid == facts["pareto"]) for fid in facts["charts"]
        }
    elif which == "pareto" and facts["pareto"]:
        drawn = {facts["pareto"]: _go_interactive(rec.page, facts["pareto"], True)}
    csp = rec.page.evaluate(
        "() => window.__cspViolations === undefined ? null : window.__cspViolations"
    )
    return {
        "problems_at_load": at_load,
        "problems": rec.console[console:] + rec.page_errors[errors:],
        "errors": [line for line in rec.console[console:] if line.startswith("error:")]
        + rec.page_errors[errors:],
        "foreign": sorted({url for url in rec.requests[requests:] if not is_local(url)}),
        "requests": rec.requests[requests:],
        "csp": csp,
        "h1": facts["h1"],
        "pareto": facts["pareto"],
        "pareto_alt": facts["pareto_alt"],
        "model_links": facts["model_links"],
        "drawn": drawn,
    }


def walk(browser: Any, base_url: str, site: Path) -> dict[str, dict[str, Any]]:
    """Every page of ``site`` (served at ``base_url``), home page first: path -> record."""
    paths = html_pages(site)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    context.add_init_script(CSP_INIT_SCRIPT)
    try:
        rec = watch(context, context.new_page(), base_url)
        record = {"/": _visit(rec, "/", [])}
        home_models = record["/"]["model_links"]
        for path in paths:
            if path != "/":
                record[path] = _visit(rec, path, home_models)
    finally:
        context.close()
    return record


def build_tour(folder: Path) -> None:
    """The walk as a shared build (tests.sitebuild.BUILDS, made in the background after the
    default site): its own server and browser; ``folder``/tour.json."""
    from playwright.sync_api import sync_playwright

    site = folder.parent / "default-site" / "site"  # tests.sitebuild.built_site
    with sync_playwright() as playwright, serve(site) as url:
        browser, errors = launch_chromium(playwright)
        if browser is None:  # the test then walks in-process, where pw_browser says why
            raise RuntimeError("; ".join(errors))
        try:
            record = walk(browser, url, site)
        finally:
            browser.close()
    (folder / "tour.json").write_text(json.dumps(record), encoding="utf-8")


def shared_tour(
    tmp_path_factory: pytest.TempPathFactory, browser: Any, base_url: str, site: Path
) -> dict[str, dict[str, Any]]:
    """:func:`walk`, made once per test run: by the background builder (:func:`build_tour`)
    or else by the first worker to need it; the others read its record."""

    def make(folder: Path) -> None:
        record = walk(browser, base_url, site)
        (folder / "tour.json").write_text(json.dumps(record), encoding="utf-8")

    folder = build_once(tmp_path_factory, "site-tour", make)
    loaded: dict[str, dict[str, Any]] = json.loads((folder / "tour.json").read_text("utf-8"))
    return loaded
