"""The built site in a real Chromium: rankings, model pages, charts, CSP, no-JS, sorting, phones.

The site is built once from the committed data/ and served on 127.0.0.1 (see conftest.py).
Every request to another host is recorded and refused, so nothing leaves the machine. The
tests of what every page (or a list of pages) does read one shared walk of the whole site
(tests/browser/tour.py) instead of opening the pages again each.
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
from tests.browser.tour import html_pages, shared_tour
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


@pytest.fixture(scope="session")
def tour(
    tmp_path_factory: pytest.TempPathFactory, pw_browser: Any, site_url: str, site_dir: Path
) -> dict[str, dict[str, Any]]:
    """Every page's record from the one walk of the site (tests/browser/tour.py)."""
    return shared_tour(tmp_path_factory, pw_browser, site_url, site_dir)


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
    headers = [
        text.strip().removesuffix("?").strip()
        for text in table.locator("thead th").all_inner_texts()
    ]
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


def assert_clean(rec: Recorder) -> None:
    assert rec.problems() == [], "console errors/warnings or page errors:\n" + "\n".join(
        rec.problems()
    )
    assert rec.external_requests() == [], f"requests left 127.0.0.1: {rec.external_requests()}"


def page_problems(tour: dict[str, dict[str, Any]], paths: list[str], key: str) -> dict[str, Any]:
    """The tour's non-empty ``key`` entries of ``paths``, by path."""
    return {path: tour[path][key] for path in paths if tour[path][key]}


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
    # Places: the point rank (kept for sorting), shown as a range where the measurement
    # noise lets models share it ("3–4"), always holding the point rank.
    ranks = table.evaluate(
        "(t) => Array.from(t.tBodies[0].rows).map((r) => r.cells[0].dataset.value)"
    )
    assert ranks == [str(i) for i in range(1, 8)]
    for i, (text, _) in enumerate(cells, start=1):
        best, _, worst = text.partition("–")
        assert int(best) <= i <= int(worst or best), (i, text)
    assert_clean(site_page)


# 2. Every model page linked from the home page loads and its Pareto chart renders ---------


def test_model_pages_from_home_render_pareto_chart(tour: dict[str, dict[str, Any]]) -> None:
    """Each model page linked from the home page: one h1, a Pareto chart whose static image
    has alt text, and whose points Vega draws once it is made interactive (the button gone);
    no console error or warning, page error or request to another host on the way."""
    paths = tour["/"]["model_links"]
    assert len(paths) >= 10, paths
    for path in paths:
        visit = tour[path]
        assert len(visit["h1"]) == 1 and visit["h1"][0], f"{path}: h1s {visit['h1']}"
        assert visit["pareto"], f"{path}: no Pareto chart"
        # The static SVG is there before anything is clicked.
        assert visit["pareto_alt"], f"{path}: the Pareto image has no alt text"
        assert visit["drawn"].get(visit["pareto"], 0) > 0, f"{path}: Pareto points not drawn"
    visited = ["/", *paths]
    assert page_problems(tour, visited, "problems") == {}, "console errors/warnings or page errors"
    assert page_problems(tour, visited, "foreign") == {}, "requests left 127.0.0.1"


# 3. No console errors or page errors ------------------------------------------------------

TASK_PAGES = [f"/tasks/{task}/" for task in task_ids()]


@pytest.mark.parametrize("path", STATIC_PAGES + TASK_PAGES)
def test_no_console_or_page_errors(tour: dict[str, dict[str, Any]], path: str) -> None:
    problems = tour[path]["problems_at_load"]  # until the load event
    assert problems == [], f"{path}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", [*TASK_PAGES, "/"])
def test_no_console_errors_after_charts_go_interactive(
    tour: dict[str, dict[str, Any]], path: str
) -> None:
    """Every chart of the page made interactive: no Vega error or warning either (e.g. the
    ranking bars once logged 'Domains that should be unioned has conflicting sort
    properties' because the y sort of their two layers had no op)."""
    drawn = tour[path]["drawn"]
    assert drawn, f"{path}: no charts"
    assert [f for f, marks in drawn.items() if marks == 0] == [], f"{path}: charts not drawn"
    assert tour[path]["problems"] == [], f"{path}:\n" + "\n".join(tour[path]["problems"])


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
    foreign = [
        "https://cdn.jsdelivr.net/npm/vega@6",
        "http://93.184.216.34/x.png",
        "http://127.0.0.1.example.com/y.png",
    ]
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


def test_no_request_leaves_localhost(tour: dict[str, dict[str, Any]], site_dir: Path) -> None:
    """Every page of the site; charts made interactive on every task page, the home page,
    model and GPU pages (tour.interactive_charts): no request to another host, no console
    error or page error."""
    paths = html_pages(site_dir)
    assert "/" in paths and len(paths) > 20, paths
    assert sorted(tour) == sorted(paths), "the tour missed pages"
    interactive = {"/tasks/gpqa/", "/models/openai--gpt-oss-20b/", "/gpus/h100/"}
    assert all(tour[path]["drawn"] for path in interactive), "charts not made interactive"
    requests = [url for path in paths for url in tour[path]["requests"]]
    assert any("/assets/vega-" in url for url in requests), "no chart went interactive"
    assert page_problems(tour, paths, "foreign") == {}, "requests to other hosts"
    assert page_problems(tour, paths, "errors") == {}, "console errors or page errors"


# 5. Without JavaScript the tables and chart images are all there -------------------------


@pytest.fixture
def nojs_page(pw_browser: Any, site_url: str) -> Iterator[Recorder]:
    context = pw_browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
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
    # The "Explore interactively" buttons and the forms that re-rank or price a table need
    # the script: they stay hidden (a form's display once overrode its hidden attribute).
    buttons = page.locator("button.interactive")
    for i in range(buttons.count()):
        assert not buttons.nth(i).is_visible(), f"{path}: a dead 'Explore' button is shown"
    forms = page.locator("form.explore, form.calculator")
    if path == "/tasks/gpqa/":
        assert forms.count() == 2
    for i in range(forms.count()):
        assert not forms.nth(i).is_visible(), f"{path}: a dead form is shown"
    assert nojs_page.external_requests() == []


# 6. Content-Security-Policy: a strict meta policy and no violations -----------------------


def test_no_csp_violations(tour: dict[str, dict[str, Any]]) -> None:
    """A listener installed before any page script sees no CSP violation on these pages,
    every chart of the task, model and GPU page made interactive and hovered (Vega runs
    without eval)."""
    model_page = tour["/"]["model_links"][0]
    paths = ["/", "/tasks/gpqa/", model_page, "/gpus/b200/", "/about/"]
    for path in paths[1:4]:
        assert tour[path]["drawn"], f"{path}: no charts"
        assert all(tour[path]["drawn"].values()), f"{path}: charts not drawn"
    assert [p for p in paths if tour[p]["csp"] is None] == [], "the init script did not run"
    assert page_problems(tour, paths, "csp") == {}
    assert page_problems(tour, paths, "errors") == {}
    assert page_problems(tour, paths, "foreign") == {}


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
        elif "'self'" not in script_src or {"'unsafe-inline'", "'unsafe-eval'"} & set(script_src):
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
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
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
