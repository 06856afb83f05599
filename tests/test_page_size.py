"""Task and GPU pages stay small at any number of models (issue 19, budget 5): past
site.yaml's ``table_rows`` a page's tables hold their first rows and link a full view
(``<page>/all/``) that has every row, without script.

The site is the committed data/ with ``table_rows: 5`` (tests/cut_site.py); the models a
table must hold are counted here from the measurements themselves (every model with a
configuration on the GPUs that meets the task's default deadline), not by the ranking code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jouleboard.loading.dataset import Dataset, load_dataset
from tests.cut_site import TABLE_ROWS

pytestmark = pytest.mark.slow  # builds a site

TOP_N = 7  # site.yaml top_n of data/: the other tables' first view once they are cut


def secondary(total: int) -> int:
    """Rows of a secondary table (other deadlines, GPU pages) on the first view: its top
    TOP_N once it has more than TABLE_ROWS rows."""
    return total if total <= TABLE_ROWS else min(TOP_N, total)


@pytest.fixture(scope="module")
def built(cut_site: tuple[Path, Path]) -> tuple[Dataset, Path]:
    data, site = cut_site
    return load_dataset(data), site


def meeting(data: Dataset, task: str, gpus: set[str], ms: float | None = None) -> set[str]:
    """Models with a configuration on ``gpus`` within the task's default deadline (or ``ms``)."""
    d = data.registry.tasks[task].default_deadline
    limit = d.ms if ms is None else ms
    return {
        c.model_id
        for c in data.for_task(task)
        if c.gpu_model in gpus and c.latency_ms(d.percentile) <= limit
    }


def rows(html: str, table_id: str) -> list[str]:
    """The body rows of the table ``table_id`` of a page."""
    table = re.search(rf'<table id="{re.escape(table_id)}".*?</table>', html, re.S)
    assert table, f"no table {table_id}"
    body = table.group(0).split("<tbody>", 1)[1]
    return re.findall(r"<tr>.*?</tr>", body, re.S)


def model_links(row_html: list[str]) -> set[str]:
    return {
        re.search(r'col-model"[^>]*><a href="/models/([^/"]+)/"', r).group(1)  # type: ignore[union-attr]
        for r in row_html
    }


def slug(model_id: str) -> str:
    return model_id.replace("/", "--").lower()


def test_a_task_page_holds_the_first_rows_and_links_every_model(
    built: tuple[Dataset, Path],
) -> None:
    data, site = built
    gpus = set(data.registry.site.default_gpus)
    cut = 0
    for task in data.registry.tasks:
        models = meeting(data, task, gpus)
        first = (site / "tasks" / task / "index.html").read_text(encoding="utf-8")
        full = site / "tasks" / task / "all" / "index.html"
        shown = rows(first, f"ranking-{task}")
        if len(models) <= TABLE_ROWS:  # nothing to cut: no full view, no link
            assert len(shown) == len(models) and not full.exists()
            assert "/all/" not in first
            continue
        cut += 1
        assert len(shown) == TABLE_ROWS
        # Without script the full view is a link away; with it, a button loads the rest.
        link = f'<a href="/tasks/{task}/all/#ranking-{task}">Every model (full table)</a>'
        assert link in first
        assert f'class="show-all" data-table="ranking-{task}"' in first
        assert f"the top {TABLE_ROWS} of {len(models)} models" in first
        every = rows(full.read_text(encoding="utf-8"), f"ranking-{task}")
        assert model_links(every) == {slug(m) for m in models}
        assert len(every) == len(models)
        assert model_links(shown) <= model_links(every)
    assert cut >= 5  # the premise: most tasks of data/ have more than five models


def test_other_deadlines_hold_their_top_rows_and_link_the_full_view(
    built: tuple[Dataset, Path],
) -> None:
    data, site = built
    task = "lm-arena-chat"
    gpus = set(data.registry.site.default_gpus)
    first = (site / "tasks" / task / "index.html").read_text(encoding="utf-8")
    full = (site / "tasks" / task / "all" / "index.html").read_text(encoding="utf-8")
    for ms in data.registry.tasks[task].preset_deadlines_ms:
        table_id = f"ranking-{task}-{ms:g}ms"
        if table_id not in first:
            continue  # the default deadline is not repeated
        models = meeting(data, task, gpus, ms)
        shown = rows(first, table_id)
        assert len(shown) == secondary(len(models))
        assert model_links(rows(full, table_id)) == {slug(m) for m in models}


def test_a_gpu_page_holds_the_first_rows_and_links_every_model(built: tuple[Dataset, Path]) -> None:
    data, site = built
    first = (site / "gpus" / "h100" / "index.html").read_text(encoding="utf-8")
    full = (site / "gpus" / "h100" / "all" / "index.html").read_text(encoding="utf-8")
    for task in data.registry.tasks:
        models = meeting(data, task, {"H100"})
        if not models:
            continue
        shown = rows(first, f"ranking-{task}")
        assert len(shown) == secondary(len(models))
        if secondary(len(models)) < len(models):
            assert f'href="/gpus/h100/all/#ranking-{task}"' in first
        assert model_links(rows(full, f"ranking-{task}")) == {slug(m) for m in models}


def test_full_views_stay_out_of_the_sitemap(built: tuple[Dataset, Path]) -> None:
    _, site = built
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert "/tasks/gpqa/" in sitemap and "/all/" not in sitemap


def test_the_default_site_cuts_nothing() -> None:
    """data/ has at most a few dozen models per task: the default table_rows keeps them all."""
    data = load_dataset(Path(__file__).resolve().parents[1] / "data")
    most = max(len({c.model_id for c in data.for_task(t)}) for t in data.registry.tasks)
    assert data.registry.site.table_rows >= most


def test_a_full_view_names_its_first_view_as_canonical() -> None:
    """A full view repeats its first view with every row: search engines are told to list
    the first view (when the origin is known)."""
    from typing import cast

    from jouleboard.plan.first_view import with_full_view
    from jouleboard.plan.views import Page, TaskBody
    from jouleboard.render.pages import SiteContext, canonical_url

    first, whole = cast(TaskBody, object()), cast(TaskBody, object())
    page = Page("tasks/chat/index.html", "task.html", "Chat", "Chat.", whole)
    shown, full = with_full_view(page, first)
    site = cast(SiteContext, type("Site", (), {"origin": "https://x.org", "base_url": "/b/"}))
    assert canonical_url(shown, site) == "https://x.org/b/tasks/chat/"
    assert full.path != shown.path and canonical_url(full, site) == "https://x.org/b/tasks/chat/"
    unknown = cast(SiteContext, type("Site", (), {"origin": "", "base_url": "/"}))
    assert canonical_url(shown, unknown) == ""
