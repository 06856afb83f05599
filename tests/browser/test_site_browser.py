"""The built site in a real Chromium: rankings, model pages, charts, CSP, no-JS, sorting, phones.

The site is built once from the committed data/ and served on 127.0.0.1 (see conftest.py).
Every request to another host is recorded and aborted, so nothing leaves the machine.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.browser.conftest import Recorder, is_local, watch
from tests.sitebuild import REPO

pytestmark = pytest.mark.browser

DATA = REPO / "data"

# The published reference: gpqa, median ITL <= 300 ms, B200 + H100 (nickname, tokens/J shown).
REFERENCE_GPQA_300 = [
    ("GPT OSS 20B", "35.15"),
    ("GPT OSS 120B", "25.21"),
    ("Qwen 3 30B A3B Thinking", "11.41"),
    ("NVIDIA Nemotron Nano 9B V2", "9.18"),
    ("NVIDIA Nemotron Nano 12B V2", "7.98"),
    ("Qwen 3 8B", "5.77"),
    ("Qwen 3 14B", "5.48"),
]

# Vega renders each mark group as <g class="mark-TYPE role-mark"> holding one element per item.
RENDERED_MARKS = "svg.marks g.role-mark > *"
RENDERED_POINTS = "svg.marks g.mark-symbol.role-mark path"


def task_ids() -> list[str]:
    return sorted(yaml.safe_load((DATA / "tasks.yaml").read_text(encoding="utf-8")))


def expected_top(task: str, deadline_ms: float, gpus: set[str], n: int) -> list[tuple[str, str]]:
    """The top ``n`` (nickname, tokens/J to 2 decimals), computed straight from data/ files."""
    best: dict[str, float] = {}
    for path in sorted((DATA / "measurements" / task).rglob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        metrics = record["metrics"]
        if metrics["median_itl_ms"] > deadline_ms or record["gpu_model"] not in gpus:
            continue
        model = record["model_id"]
        best[model] = min(best.get(model, float("inf")), metrics["energy_per_token_joules"])
    models = yaml.safe_load((DATA / "models.yaml").read_text(encoding="utf-8"))
    ranked = sorted(best.items(), key=lambda item: item[1])[:n]
    return [(models[model]["nickname"], f"{1 / ept:.2f}") for model, ept in ranked]


def column_index(table: Any, label: str) -> int:
    """The 0-based index of the header whose own text (unit spans and the definition link's
    "?" aside) is exactly ``label``."""
    headers = [text.strip().removesuffix("?").strip()
               for text in table.locator("thead th").all_inner_texts()]
    for index, text in enumerate(headers):
        if text == label or text.split("\n")[0].strip() == label:
            return index
    raise AssertionError(f"no header {label!r} in {headers}")


def table_rows(table: Any, *columns: int) -> list[tuple[str, ...]]:
    """The visible text of the given cells of every body row."""
    return table.evaluate(
        """(table, columns) => Array.from(table.tBodies[0].rows).map(
            (row) => columns.map((i) => row.cells[i].innerText.trim()))""",
        list(columns),
    )


def make_interactive(page: Any, figure: str) -> int:
    """Click the figure's "Explore interactively" button, wait for Vega to draw into
    ``svg.marks``; returns the number of rendered mark items."""
    page.locator(f"{figure} button.interactive").click()
    marks = f"{figure} {RENDERED_MARKS}"
    page.wait_for_function("(sel) => document.querySelectorAll(sel).length > 0", arg=marks)
    return page.locator(marks).count()


def home_model_paths(page: Any) -> list[str]:
    hrefs = page.locator("table.data a[href^='/models/']").evaluate_all(
        "(links) => links.map((a) => a.getAttribute('href'))"
    )
    return sorted(set(hrefs))


def html_pages(site: Path) -> list[str]:
    """Every page's path as served: '/x/y/' for x/y/index.html, '/404.html' for 404.html."""
    paths = []
    for file in sorted(site.rglob("*.html")):
        rel = file.relative_to(site).as_posix()
        paths.append("/" + rel[: -len("index.html")] if rel.endswith("index.html") else "/" + rel)
    return paths


def assert_clean(rec: Recorder) -> None:
    assert rec.problems() == [], "console errors/warnings or page errors:\n" + "\n".join(
        rec.problems()
    )
    assert rec.external_requests() == [], f"requests left 127.0.0.1: {rec.external_requests()}"


STATIC_PAGES = ["/", "/models/", "/gpus/", "/gpus/b200/", "/gpus/h100/", "/about/", "/downloads/"]


# 1. The home page's first table is the reference top 7 ------------------------------------


def test_home_first_table_is_reference_top7(site_page: Recorder) -> None:
    expected = expected_top("gpqa", 300.0, {"B200", "H100"}, 7)
    assert expected == REFERENCE_GPQA_300, "data/ no longer gives the published reference"

    site_page.goto("/")
    table = site_page.page.locator("table.data").first
    rank = column_index(table, "#")
    tpj = column_index(table, "Tokens/J")
    # The model cell holds the linked nickname, then the builder in a note: read the link.
    names = [n.strip() for n in table.locator("tbody tr td.col-model a").all_inner_texts()]
    cells = table_rows(table, rank, tpj)
    shown = list(zip(names, [value for _, value in cells], strict=True))
    assert shown == expected, "the site disagrees with the data files"
    assert shown == REFERENCE_GPQA_300, "the site disagrees with the published reference"
    assert [r for r, _ in cells] == [str(i) for i in range(1, 8)]
    assert_clean(site_page)


# 2. Every model page linked from the home page loads and its Pareto chart renders ---------


def test_model_pages_from_home_render_pareto_chart(site_page: Recorder) -> None:
    page = site_page.page
    site_page.goto("/")
    paths = home_model_paths(page)
    assert len(paths) >= 10, paths
    for path in paths:
        # site.js is deferred: it has run (and shown the buttons) by DOMContentLoaded.
        site_page.goto(path, wait_until="domcontentloaded")
        info = page.evaluate(
            """() => {
                const figure = document.querySelector("figure.chart[id^='chart-pareto--']");
                const img = figure && figure.querySelector("img");
                return {
                    h1: Array.from(document.querySelectorAll("h1"), (h) => h.innerText.trim()),
                    figure: figure && figure.id,
                    alt: img && img.alt.trim(),
                };
            }"""
        )
        assert len(info["h1"]) == 1 and info["h1"][0], f"{path}: h1s {info['h1']}"
        assert info["figure"], f"{path}: no Pareto chart"
        # The static SVG is there before anything is clicked.
        assert info["alt"], f"{path}: the Pareto image has no alt text"
        selector = f"figure.chart[id='{info['figure']}']"
        page.locator(f"{selector} button.interactive").click()
        # Rendered points, and the button gone once the chart is interactive.
        page.wait_for_function(
            """(arg) => document.querySelectorAll(arg.points).length > 0
                && !document.querySelector(arg.button)""",
            arg={"points": f"{selector} {RENDERED_POINTS}",
                 "button": f"{selector} button.interactive"},
        )
    assert_clean(site_page)


# 3. No console errors or page errors ------------------------------------------------------

TASK_PAGES = [f"/tasks/{task}/" for task in task_ids()]


@pytest.mark.parametrize("path", STATIC_PAGES + TASK_PAGES)
def test_no_console_or_page_errors(site_page: Recorder, path: str) -> None:
    site_page.goto(path)
    site_page.page.wait_for_load_state("load")
    assert site_page.problems() == [], f"{path}:\n" + "\n".join(site_page.problems())


@pytest.mark.parametrize("path", [*TASK_PAGES, "/"])
def test_no_console_errors_after_charts_go_interactive(site_page: Recorder, path: str) -> None:
    """Every chart of the page made interactive: no Vega error or warning either (e.g. the
    ranking bars once logged 'Domains that should be unioned has conflicting sort
    properties' because the y sort of their two layers had no op)."""
    page = site_page.page
    site_page.goto(path)
    figure_ids = page.locator("figure.chart[data-spec]").evaluate_all(
        "(figures) => figures.map((f) => f.id)"
    )
    assert figure_ids, f"{path}: no charts"
    for figure_id in figure_ids:
        assert make_interactive(page, f"figure.chart[id='{figure_id}']") > 0, figure_id
    assert site_page.problems() == [], f"{path}:\n" + "\n".join(site_page.problems())


# 4. No request leaves the local host ------------------------------------------------------


def test_url_guard_tells_local_from_foreign() -> None:
    assert is_local("http://127.0.0.1:8000/assets/x.js")
    assert is_local("data:image/svg+xml;base64,AAAA")
    assert not is_local("https://cdn.jsdelivr.net/npm/vega@6")
    assert not is_local("http://127.0.0.1.example.com/")
    assert not is_local("http://93.184.216.34/x.png")


def test_requests_for_other_hosts_are_recorded_and_never_answered(site_page: Recorder) -> None:
    """The guard itself: a document asking other hosts (by name, by IP address, by a name
    that starts like ours) gets no answer, and each request counts as leaving 127.0.0.1."""
    foreign = ["https://cdn.jsdelivr.net/npm/vega@6", "http://93.184.216.34/x.png",
               "http://127.0.0.1.example.com/y.png"]
    site_page.goto("/about/")
    probe = site_page.page.context.new_page()  # no site CSP: the requests are really sent
    answered: list[str] = []
    failed: list[str] = []
    probe.on("response", lambda response: answered.append(response.url))
    probe.on("requestfailed", lambda request: failed.append(f"{request.url} {request.failure}"))
    probe.set_content("".join(f'<img src="{url}">' for url in foreign))
    probe.wait_for_load_state("load")
    probe.close()
    assert site_page.external_requests() == sorted(foreign)
    # Refused by the dead proxy (conftest.LAUNCH_ARGS), not by a missing network.
    assert sorted(failed) == [f"{url} net::ERR_PROXY_CONNECTION_FAILED" for url in sorted(foreign)]
    assert answered == []


def test_no_request_leaves_localhost(site_page: Recorder, site_dir: Path) -> None:
    """Every page of the site; charts made interactive on a task, a model and a GPU page.
    (Every model page linked from home goes interactive in the Pareto test, checked too.)"""
    page = site_page.page
    paths = html_pages(site_dir)
    assert "/" in paths and len(paths) > 20, paths
    interactive = {"/tasks/gpqa/", "/models/openai--gpt-oss-20b/", "/gpus/h100/"}
    assert interactive <= set(paths)
    for path in paths:
        page.goto(site_page.base_url + path, wait_until="load")
        if path in interactive:
            for figure_id in page.locator("figure.chart[data-spec]").evaluate_all(
                "(figures) => figures.map((f) => f.id)"
            ):
                make_interactive(page, f"figure.chart[id='{figure_id}']")
    assert any("/assets/vega-" in url for url in site_page.requests), "no chart went interactive"
    assert site_page.external_requests() == [], (
        "requests to other hosts:\n" + "\n".join(site_page.external_requests())
    )
    assert site_page.errors() == [], "\n".join(site_page.errors())


# 5. Without JavaScript the tables and chart images are all there -------------------------


@pytest.fixture
def nojs_page(pw_browser: Any, site_url: str) -> Iterator[Recorder]:
    context = pw_browser.new_context(java_script_enabled=False, viewport={"width": 1280,
                                                                         "height": 900})
    context.set_default_timeout(15_000)
    try:
        yield watch(context, context.new_page(), site_url)
    finally:
        context.close()


@pytest.mark.parametrize("path", ["/", "/tasks/gpqa/"])
def test_tables_and_images_without_javascript(nojs_page: Recorder, path: str) -> None:
    page = nojs_page.page
    nojs_page.goto(path)
    table = page.locator("table.data").first
    assert table.locator("tbody tr").count() >= 7
    first_model = table.locator("tbody tr").first.locator("td.col-model a")
    assert first_model.is_visible()
    assert first_model.inner_text().strip() == "GPT OSS 20B"
    tpj = column_index(table, "Tokens/J")
    cell = table.locator("tbody tr").first.locator("td").nth(tpj)
    assert cell.is_visible()
    assert cell.inner_text().strip() == "35.15"
    # Headers are plain text (no sort buttons without the script).
    assert table.locator("thead button").count() == 0

    images = page.locator("figure.chart img")
    assert images.count() > 0, f"{path}: no chart images"
    for i in range(images.count()):
        image = images.nth(i)
        assert (image.get_attribute("alt") or "").strip(), f"{path}: chart image {i} has no alt"
        src = image.get_attribute("src")
        assert src and nojs_page.page.request.get(nojs_page.base_url + src).status == 200, src
    # And the browser draws it (lazy loading works without script).
    first = images.first
    first.scroll_into_view_if_needed()
    first.evaluate(
        "(img) => img.complete ? null : new Promise((ok) => img.addEventListener('load', ok))"
    )
    size = first.evaluate("(img) => [img.naturalWidth, img.getBoundingClientRect().height]")
    assert size[0] > 0 and size[1] > 0, f"{path}: first chart image not drawn: {size}"
    # The "Explore interactively" buttons need the script: they stay hidden.
    buttons = page.locator("button.interactive")
    for i in range(buttons.count()):
        assert not buttons.nth(i).is_visible(), f"{path}: a dead 'Explore' button is shown"
    assert nojs_page.external_requests() == []


# 6. Content-Security-Policy: a strict meta policy and no violations -----------------------


CSP_INIT_SCRIPT = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push({
    directive: event.violatedDirective, blocked: event.blockedURI,
    source: event.sourceFile, line: event.lineNumber, sample: event.sample,
  });
}, true);
"""


def test_no_csp_violations(site_page: Recorder) -> None:
    page = site_page.page
    page.add_init_script(CSP_INIT_SCRIPT)
    site_page.goto("/")
    model_page = home_model_paths(page)[0]
    violations = {}
    # Every chart goes interactive on the task, model and GPU pages (Vega runs without eval).
    for path in ["/", "/tasks/gpqa/", model_page, "/gpus/b200/", "/about/"]:
        site_page.goto(path)
        page.wait_for_load_state("load")
        if path != "/" and path != "/about/":
            figure_ids = page.locator("figure.chart[data-spec]").evaluate_all(
                "(figures) => figures.map((f) => f.id)"
            )
            assert figure_ids, f"{path}: no charts"
            for figure_id in figure_ids:
                figure = f"figure.chart[id='{figure_id}']"
                make_interactive(page, figure)
                # Use the chart a little: hovering a mark shows Vega's tooltip.
                page.locator(f"{figure} {RENDERED_MARKS}").first.hover(force=True)
        found = page.evaluate("() => window.__cspViolations")
        assert found is not None, f"{path}: the init script did not run"
        if found:
            violations[path] = found
    assert violations == {}
    assert site_page.errors() == [], "\n".join(site_page.errors())
    assert site_page.external_requests() == []


class _MetaParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.csp: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "meta" and attributes.get("http-equiv", "").lower() == (
            "content-security-policy"
        ):
            self.csp.append(attributes.get("content", ""))


def test_every_page_has_strict_csp_meta(site_dir: Path) -> None:
    pages = sorted(site_dir.rglob("*.html"))
    assert len(pages) > 20
    problems = []
    for file in pages:
        parser = _MetaParser()
        parser.feed(file.read_text(encoding="utf-8"))
        name = file.relative_to(site_dir).as_posix()
        if len(parser.csp) != 1:
            problems.append(f"{name}: {len(parser.csp)} CSP meta tags")
            continue
        directives = {}
        for part in parser.csp[0].split(";"):
            words = part.split()
            if words:
                directives[words[0].lower()] = words[1:]
        script_src = directives.get("script-src")
        if script_src is None:
            problems.append(f"{name}: no script-src")
        elif "'self'" not in script_src or {"'unsafe-inline'", "'unsafe-eval'"} & set(
            script_src
        ):
            problems.append(f"{name}: script-src {' '.join(script_src)}")
    assert problems == []


# 7. Sortable tables -----------------------------------------------------------------------


def test_sortable_numeric_column(site_page: Recorder) -> None:
    page = site_page.page
    site_page.goto("/")
    table = page.locator("table.data").first
    index = column_index(table, "J/token")
    header = table.locator("thead th").nth(index)
    button = header.locator("button.sort")
    models_before = sorted(table.locator("tbody td.col-model").all_inner_texts())

    def values() -> list[float]:
        return [
            float(v)
            for v in table.evaluate(
                "(t, i) => Array.from(t.tBodies[0].rows).map((r) => r.cells[i].dataset.value)",
                index,
            )
        ]

    assert header.get_attribute("aria-sort") is None
    button.click()
    assert header.get_attribute("aria-sort") == "ascending"
    ascending = values()
    assert len(ascending) >= 7
    assert ascending == sorted(ascending)

    button.click()
    assert header.get_attribute("aria-sort") == "descending"
    descending = values()
    assert descending == sorted(descending, reverse=True)
    assert descending != ascending

    # Only one header is marked as sorted at a time; the rows are the same rows.
    tokens_index = column_index(table, "Tokens/J")
    table.locator("thead th").nth(tokens_index).locator("button.sort").click()
    assert header.get_attribute("aria-sort") is None
    assert table.locator("thead th[aria-sort]").count() == 1
    assert sorted(table.locator("tbody td.col-model").all_inner_texts()) == models_before

    # The sort buttons work from the keyboard too.
    button.focus()
    page.keyboard.press("Enter")
    assert header.get_attribute("aria-sort") == "ascending"
    assert values() == ascending
    assert_clean(site_page)


# 8. Phone width ---------------------------------------------------------------------------


@pytest.fixture
def phone_page(pw_browser: Any, site_url: str) -> Iterator[Recorder]:
    context = pw_browser.new_context(
        viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
        has_touch=True,
    )
    context.set_default_timeout(15_000)
    try:
        yield watch(context, context.new_page(), site_url)
    finally:
        context.close()


@pytest.mark.parametrize(
    "path", ["/", "/tasks/gpqa/", "/models/openai--gpt-oss-20b/", "/gpus/b200/", "/about/"]
)
def test_no_horizontal_overflow_on_phone(phone_page: Recorder, path: str) -> None:
    page = phone_page.page
    phone_page.goto(path)
    page.wait_for_load_state("load")
    width = page.evaluate(
        "() => ({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})"
    )
    assert width["inner"] == 390
    if width["scroll"] > width["inner"] + 1:
        wide = page.evaluate(
            """() => Array.from(document.querySelectorAll('body *'))
                .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1
                    && !el.closest('.table-wrap'))
                .slice(0, 5).map((el) => el.tagName + '.' + el.className)"""
        )
        pytest.fail(f"{path}: document is {width['scroll']} px wide at 390 px: {wide}")
    # The tables scroll inside their own wrapper instead.
    wraps = page.locator(".table-wrap")
    for i in range(wraps.count()):
        overflow = wraps.nth(i).evaluate("(el) => getComputedStyle(el).overflowX")
        assert overflow in ("auto", "scroll"), f"{path}: .table-wrap overflow-x is {overflow}"

