"""Cut task pages in a real Chromium (issue 19, budget 5): the first view holds site.yaml's
``table_rows`` rows and fetches no explore JSON; "Show all" brings in every model in rank
order, and the controls, search and sort work past the first rows; with JavaScript off the
full view is a link away and holds every model. The expected rankings come from
jouleboard.rank.ranking.rank on the same data (table_rows: 5, tests/cut_site.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jouleboard.loading.dataset import Dataset, load_dataset
from jouleboard.rank.ranking import Deadline, rank
from tests.browser.conftest import Recorder, serve, watch
from tests.cut_site import TABLE_ROWS

pytestmark = pytest.mark.browser

TASK = "lm-arena-chat"
PAGE = f"/tasks/{TASK}/"
TABLE = f"#ranking-{TASK}"
MODEL_CELLS = f"{TABLE} tbody tr:not([hidden]) td.col-model"


@pytest.fixture(scope="module")
def cut(cut_site: tuple[Path, Path]) -> Iterator[tuple[Dataset, str]]:
    data, site = cut_site
    with serve(site) as url:
        yield load_dataset(data), url


def expected(data: Dataset, task: str, ms: float | None = None) -> list[str]:
    """Nicknames of the ranking at the task's default deadline (or ``ms``), default GPUs."""
    d = data.registry.tasks[task].default_deadline
    rows = rank(
        data.for_task(task),
        Deadline(d.ms if ms is None else ms, d.percentile),
        gpus=set(data.registry.site.default_gpus),
    )
    return [data.registry.models[r.config.model_id].nickname for r in rows]


def wait_rows(page: Any, count: int) -> None:
    """Until the ranking table holds ``count`` body rows."""
    page.wait_for_function(
        "([sel, n]) => document.querySelectorAll(sel).length === n",
        arg=[f"{TABLE} tbody tr", count],
    )


def names(page: Any) -> list[str]:
    return [
        n.strip()
        for n in page.locator(MODEL_CELLS).evaluate_all(
            "(cells) => cells.map((td) => td.dataset.value)"
        )
    ]


@pytest.fixture
def rec(pw_context: Any, cut: tuple[Dataset, str]) -> Iterator[Recorder]:
    recorder = watch(pw_context, pw_context.new_page(), cut[1])
    yield recorder
    assert recorder.problems() == []
    assert recorder.external_requests() == []


def test_show_all_brings_in_every_model_in_rank_order(
    rec: Recorder, cut: tuple[Dataset, str]
) -> None:
    data = cut[0]
    ranking = expected(data, TASK)
    assert len(ranking) > TABLE_ROWS  # the premise: the page is cut
    rec.goto(PAGE)
    rec.page.wait_for_load_state("networkidle")
    assert names(rec.page) == ranking[:TABLE_ROWS]
    assert not any("/explore/" in url for url in rec.requests)  # not part of the first view
    button = rec.page.get_by_role("button", name=f"Show all {len(ranking)} models")
    button.click()
    wait_rows(rec.page, len(ranking))
    assert names(rec.page) == ranking
    assert "every model at" in rec.page.locator(f"{TABLE} caption").inner_text()
    assert rec.page.locator(f"#more-ranking-{TASK}").is_hidden()


def test_the_controls_rerank_past_the_first_rows(rec: Recorder, cut: tuple[Dataset, str]) -> None:
    data = cut[0]
    rec.goto(PAGE)
    ms = min(data.registry.tasks[TASK].preset_deadlines_ms)
    ranking = expected(data, TASK, ms)
    assert len(ranking) > TABLE_ROWS
    number = rec.page.locator("#deadline-ms")
    number.fill(f"{ms:g}")
    number.dispatch_event("change")
    wait_rows(rec.page, len(ranking))
    assert names(rec.page) == ranking


def test_search_and_sort_reach_every_model(rec: Recorder, cut: tuple[Dataset, str]) -> None:
    data = cut[0]
    ranking = expected(data, TASK)
    last = ranking[-1]  # far past the first view's rows
    rec.goto(PAGE)
    rec.page.locator("#model-search").fill(last)
    rec.page.wait_for_function(
        "([sel, name]) => Array.from(document.querySelectorAll(sel))"
        ".some((td) => td.dataset.value === name)",
        arg=[MODEL_CELLS, last],
    )
    assert last in names(rec.page)
    # A sort orders every model, not only the first rows: tokens/J ascending puts the
    # last-ranked model first.
    rec.goto(PAGE)
    rec.page.locator(f"{TABLE} thead th.col-tokens_per_joule button").click()
    wait_rows(rec.page, len(ranking))
    assert names(rec.page) == ranking[::-1]


def test_without_javascript_the_full_view_is_linked(
    pw_browser: Any, cut: tuple[Dataset, str]
) -> None:
    data, url = cut
    ranking = expected(data, TASK)
    context = pw_browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(url + PAGE)
        assert names(page) == ranking[:TABLE_ROWS]
        assert page.locator("button.show-all").first.is_hidden()  # script shows it
        page.get_by_role("link", name="Every model (full table)").first.click()
        page.wait_for_load_state()
        assert page.url == f"{url}/tasks/{TASK}/all/#ranking-{TASK}"
        assert names(page) == ranking
    finally:
        context.close()
