"""First views of task and GPU pages: tables cut to their first rows, so a page stays small
at any number of models. Every row stays reachable: the page's full view (the same page
with nothing cut, at ``<page>/all/``) needs no script, and the task page's script loads the
rest from the task's explore JSON on demand."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypeVar

from jouleboard.plan.views import GpuBody, MoreRows, Page, QualitySection, TaskBody
from jouleboard.rank.tables import Table

T = TypeVar("T")


def full_view_path(page_path: str) -> str:
    """Where a page's full view is: ``tasks/gpqa/index.html`` -> ``tasks/gpqa/all/index.html``."""
    return page_path.removesuffix("index.html") + "all/index.html"


def top_caption(caption: str, shown: int, total: int) -> str:
    """A cut table's caption: "every model" becomes "the top 25 of 157 models"; a caption
    without it gets the count in brackets."""
    part = f"the top {shown} of {total:,} models"
    if "every model" in caption:
        return caption.replace("every model", part, 1)
    return f"{caption} ({part.removeprefix('the ')})"


class Cutter:
    """Cuts a page's tables and lists, noting each cut (by element id) for the template."""

    def __init__(self, full_url: str) -> None:
        self.full_url = full_url
        self.more: dict[str, MoreRows] = {}

    def table(self, table: Table, keep: int, over: int | None = None) -> Table:
        """``table`` with its first ``keep`` rows when it has more than ``over`` (default
        ``keep``), else unchanged."""
        total = len(table.rows)
        if total <= (keep if over is None else over) or total <= keep:
            return table
        self.more[table.id] = MoreRows(keep, total, f"{self.full_url}#{table.id}", table.caption)
        return dataclasses.replace(
            table, rows=table.rows[:keep], caption=top_caption(table.caption, keep, total)
        )

    def items(self, key: str, items: Sequence[T], keep: int) -> tuple[T, ...]:
        """The first ``keep`` of a list (links, sources), noting the cut under ``key``."""
        if len(items) <= keep:
            return tuple(items)
        self.more[key] = MoreRows(keep, len(items), f"{self.full_url}#{key}", "")
        return tuple(items[:keep])


def task_first_view(body: TaskBody, full_url: str, rows: int, top_n: int) -> TaskBody:
    """A task page's first view: the ranking and the correct-answer ranking hold ``rows``
    rows, each other deadline's (collapsed) ranking its top ``top_n`` once it has more than
    ``rows``, and the lists of accuracy sources and unscored models ``rows`` entries."""
    cut = Cutter(full_url)
    table = cut.table(body.table, rows)
    presets = tuple(
        dataclasses.replace(p, table=cut.table(p.table, top_n, over=rows)) for p in body.presets
    )
    quality: QualitySection | None = body.quality
    if quality is not None:
        quality = dataclasses.replace(
            quality,
            table=cut.table(quality.table, rows),
            sources=cut.items("quality-sources", quality.sources, rows),
            unscored=cut.items("unscored-models", quality.unscored, rows),
        )
    if not cut.more:
        return body
    return dataclasses.replace(
        body, table=table, presets=presets, quality=quality, more=cut.more, full_url=full_url
    )


def gpu_first_view(body: GpuBody, full_url: str, rows: int, top_n: int) -> GpuBody:
    """A GPU page's first view: each task's ranking and GPU comparisons (one pair per task,
    so as many as the site has tasks) hold their top ``top_n`` once they have more than
    ``rows``."""
    cut = Cutter(full_url)
    sections = tuple(
        dataclasses.replace(
            s,
            table=cut.table(s.table, top_n, over=rows),
            comparisons=tuple(cut.table(c, top_n, over=rows) for c in s.comparisons),
        )
        for s in body.sections
    )
    if not cut.more:
        return body
    return dataclasses.replace(body, sections=sections, more=cut.more, full_url=full_url)


def with_full_view(page: Page, first: TaskBody | GpuBody) -> tuple[Page, ...]:
    """The page as its first view, and (when anything was cut) its full view beside it: the
    same page with every row, left out of the sitemap (it repeats the first view)."""
    if first is page.body:
        return (page,)
    return (
        dataclasses.replace(page, body=first),
        dataclasses.replace(
            page,
            path=full_view_path(page.path),
            title=f"{page.title}: every model",
            in_sitemap=False,
            canonical=page.path,
        ),
    )
