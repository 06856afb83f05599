"""The resident site behind ``jouleboard serve``: the loaded data, plan, chart files,
template environment and rendered pages stay in memory between edits, and an edit redoes
only what it changed (see jouleboard/engine/live_memo.py).

An update first renders the pages open in a browser (the ones waiting for a reload) and
hands them to ``publish`` (serve then answers their reload at once), then finishes and
commits the whole site through the one writer, so the output folder always equals a clean
``build_site(..., preview=True)`` of the same inputs.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

from jouleboard.config.content import about_markdown
from jouleboard.config.schema import SiteSettings
from jouleboard.core.urls import Urls
from jouleboard.engine.build import (
    BuildSummary,
    Sources,
    StageTimer,
    asset_files,
    checked_pages,
    load_sources,
    plan_of,
    site_context,
    site_urls,
    with_theme,
)
from jouleboard.engine.live_memo import ChartMemo, DownloadMemo, Files, MeasurementMemo, PageMemo
from jouleboard.loading.dataset import load_dataset
from jouleboard.output.folder import output_folder
from jouleboard.output.static import add_static
from jouleboard.output.writer import SiteFiles
from jouleboard.plan.entities import gpu_page, model_page
from jouleboard.plan.site import about_page, home_page, site_view
from jouleboard.plan.task import task_page
from jouleboard.plan.views import Part, Plan, SiteView
from jouleboard.render.chart_files import render_charts, vega_bundle
from jouleboard.render.citation import measured_by
from jouleboard.render.embeds import ChartInfo
from jouleboard.render.pages import SiteContext, environment

Publish = Callable[[dict[str, bytes]], None]


@dataclass(frozen=True)
class Changes:
    """Which inputs an edit touched."""

    data: bool = True
    content: bool = True
    templates: bool = True

    def __or__(self, other: Changes) -> Changes:
        return Changes(
            self.data or other.data,
            self.content or other.content,
            self.templates or other.templates,
        )

    @classmethod
    def of(cls, paths: Iterable[str], data_dir: Path, project: Path) -> Changes:
        """Sorted by the folder each path is in (a path outside all three: everything)."""
        found = {"data": False, "content": False, "templates": False}
        roots = {
            "data": data_dir,
            "content": project / "content",
            "templates": project / "templates",
        }
        for path in paths:
            where = [k for k, root in roots.items() if _inside(path, root)]
            for key in where or found:
                found[key] = True
        return cls(**found)


def _inside(path: str, root: Path) -> bool:
    top = os.path.abspath(root)
    return path == top or path.startswith(top + os.sep)


def page_part(site: SiteView, path: str, about_md: str | None = None) -> Part | None:
    """The part of the plan that makes the page at output ``path``, for the pages built
    one per task, model or GPU, the home page and the about page (as
    :func:`~jouleboard.plan.site.plan_site` makes them); None for any other page."""
    urls = site.urls
    if path == urls.home:
        return home_page(site)
    if path == urls.about and about_md is not None:
        return Part(pages=(about_page(urls, about_md),))
    for view in site.tasks.values():
        if path.startswith(urls.task(view.id).removesuffix("index.html")):
            return task_page(site, view)
    for model_id in site.by_model:
        if path == urls.model(model_id):
            return model_page(site, model_id)
    for gpu in site.registry.gpus:
        if path == urls.gpu(gpu):
            return gpu_page(site, gpu)
    return None


@dataclass(frozen=True)
class Draft:
    """An update's inputs and page frame, before the plan."""

    sources: Sources
    urls: Urls
    assets: Files
    names: dict[str, str]  # hashed asset names
    env: jinja2.Environment
    frame: SiteContext

    @property
    def settings(self) -> SiteSettings:
        return self.sources.data.registry.site


@dataclass(frozen=True)
class Built:
    """The last committed site, as the next update starts from it."""

    draft: Draft
    plan: Plan
    infos: dict[str, ChartInfo]


class LiveSite:
    """Updates of the preview in ``out``; see the module's docstring."""

    def __init__(self, data_dir: Path, out: Path, project: Path, cache: Path) -> None:
        self.data_dir, self.project, self.cache = data_dir, project, cache
        self.target = output_folder(out, data=data_dir, project=project, cache=cache, runs=())
        self.measurements = MeasurementMemo()
        self.charts = ChartMemo(cache)
        self.pages = PageMemo()
        self.downloads = DownloadMemo()
        self.bundle = ""
        self.built: Built | None = None
        self.failed = Changes(False, False, False)  # what updates that failed touched

    def warm_up(self) -> None:
        """Start this process's chart renderer now (~1 s), not at the first edited chart:
        a chart no cache holds, rendered into a private, throw-away cache."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="jouleboard-warm-") as folder:
            render_charts(
                {"warm-up": {"mark": "point", "data": {"values": [{"x": 1}]}}},
                ("svg",),
                Path(folder),
            )

    def update(
        self, changes: Changes, waiting: Callable[[], Sequence[str]], publish: Publish
    ) -> BuildSummary:
        """Rebuild what ``changes`` touched: the pages ``waiting()`` names (output paths)
        first, given to ``publish`` with the assets and files they use, then the whole site,
        committed. Raises on invalid data or a template error, before anything is published
        when the pages rendered first meet it; what a failed update touched is redone by
        the next one."""
        changes |= self.failed
        self.failed = changes
        summary = self._update(changes, waiting, publish)
        self.failed = Changes(False, False, False)
        return summary

    def _update(
        self, changes: Changes, waiting: Callable[[], Sequence[str]], publish: Publish
    ) -> BuildSummary:
        summary = BuildSummary(Path(self.target.given))
        timer = StageTimer(summary)
        replan = self.built is None or changes.data or changes.content
        draft = self._draft(changes, replan)
        timer.done("load+validate")
        ahead = self._parts_ahead(waiting(), draft, replan)
        if ahead:
            publish(ahead)
            timer.done("first page")
        plan = (
            plan_of(draft.sources, draft.urls) if replan or self.built is None else self.built.plan
        )
        timer.done("rank+plan")
        chart_files, infos = self.charts.outputs(
            plan.charts, draft.urls, draft.settings, measured_by(draft.sources.data.configurations)
        )
        timer.done("charts")
        if not ahead:  # a waiting page not made alone (about, compare...): now it can be
            ahead = self._pages_ahead(waiting(), draft, plan, chart_files, infos)
            if ahead:
                publish(ahead)
                timer.done("first page")
        files = SiteFiles()
        for path, content in sorted((draft.assets | chart_files).items()):
            files.add(path, content)
        for path, text in self.downloads.texts(plan.downloads).items():
            files.add(path, text)
        for path, text in sorted(plan.files.items()):
            files.add(path, text)
        for path, html in self.pages.render(plan.pages, draft.env, draft.frame, infos).items():
            files.add(path, html)
        add_static(files, self.project)  # as build does: static/ last, as it is
        timer.done("render")
        stats = files.commit(self.target)
        timer.done("write")
        self.built = Built(draft, plan, infos)
        self.charts.keep_only(plan.charts)
        summary.written, summary.linked = stats.written, stats.linked
        summary.pages, summary.files = len(plan.pages), len(files)
        summary.bytes = files.total_bytes()
        return summary

    def _draft(self, changes: Changes, replan: bool) -> Draft:
        """The inputs read again where ``changes`` touched them, and the page frame."""
        built = self.built.draft if self.built is not None else None
        sources = self._sources(changes)
        urls = site_urls(sources.data.registry.site, None, None)
        if not self.bundle:
            self.bundle = vega_bundle(self.cache)
        if built is None or replan or changes.templates:
            assets, names = asset_files(sources, self.bundle, urls)
        else:
            assets, names = built.assets, built.names
        env = (
            built.env
            if built is not None and not changes.templates
            else environment(list(sources.themes))
        )
        return Draft(
            sources, urls, assets, names, env, site_context(sources, urls, names, preview=True)
        )

    def _sources(self, changes: Changes) -> Sources:
        if changes.data or self.built is None:
            load = functools.partial(
                load_dataset, read=self.measurements.read, check=self.measurements.check
            )
            sources = load_sources(self.data_dir, self.project, load=load)
            self.measurements.forget_unseen()  # files deleted or renamed since the last load
            return sources
        sources = self.built.draft.sources
        if changes.content:  # content/: about.md and the site's own pages
            sources = dataclasses.replace(
                sources,
                about=about_markdown(self.project),
                pages=checked_pages(sources.data, self.data_dir, self.project),
            )
        if changes.templates:  # the logo is a template asset
            sources = with_theme(sources, self.data_dir, self.project)
        return sources

    def _parts_ahead(self, paths: Sequence[str], draft: Draft, replan: bool) -> dict[str, bytes]:
        """The waiting pages made alone (each with the charts and files of its part) and the
        assets, by output path; {} when none of them can be made alone."""
        if self.built is None or not paths:
            return {}
        site = site_view(draft.sources.data, draft.urls) if replan else None
        old = {p.path: p for p in self.built.plan.pages} if not replan else {}
        infos = dict(self.built.infos)
        out: Files = {}
        for path in dict.fromkeys(paths):
            part = (
                page_part(site, path, draft.sources.about)
                if site is not None
                else Part(pages=(old[path],))
                if path in old
                else None
            )
            if part is None:
                continue
            charts = {ref.id: ref for ref in part.charts}
            chart_files, part_infos = self.charts.outputs(
                charts, draft.urls, draft.settings, measured_by(draft.sources.data.configurations)
            )
            infos |= part_infos
            out |= chart_files | dict(part.files)
            out |= self.pages.render(part.pages, draft.env, draft.frame, infos, keep=False)
        return _as_bytes(draft.assets | out) if out else {}

    def _pages_ahead(
        self,
        paths: Sequence[str],
        draft: Draft,
        plan: Plan,
        chart_files: Files,
        infos: dict[str, ChartInfo],
    ) -> dict[str, bytes]:
        """The waiting pages of the whole plan, with every asset, chart and file."""
        wanted = set(paths)
        pages = [p for p in plan.pages if p.path in wanted] if self.built is not None else []
        if not pages:
            return {}
        html = self.pages.render(pages, draft.env, draft.frame, infos, keep=False)
        return _as_bytes(draft.assets | chart_files | plan.files | html)


def _as_bytes(files: Mapping[str, str | bytes]) -> dict[str, bytes]:
    return {
        path: content.encode("utf-8") if isinstance(content, str) else content
        for path, content in files.items()
    }


def output_path(url_path: str) -> str:
    """The output file a served URL path names: ``/models/x/`` -> ``models/x/index.html``."""
    path = url_path.lstrip("/")
    return path + "index.html" if path == "" or path.endswith("/") else path
