"""Assemble a site from its inputs: read them (again only where they changed), plan,
make each product (charts, downloads, pages; taken from the last build while its key is
the same) and commit. :func:`jouleboard.engine.build.build` calls it when the inputs
digest says there is something to do; its imports are the whole pipeline.
"""

from __future__ import annotations

import dataclasses
import functools
import posixpath
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path

from jouleboard.config.content import about_markdown
from jouleboard.core.console import SILENT, Progress
from jouleboard.core.problems import ValidationFailed
from jouleboard.core.urls import Urls
from jouleboard.engine.fingerprint import Seen, code_digest, render_digest
from jouleboard.engine.fresh import Content, chart_ids, key_of, view_key
from jouleboard.engine.kept_parts import KeptParts
from jouleboard.engine.kept_templates import KeptTemplates
from jouleboard.engine.outputs import (
    Add,
    Charts,
    asset_files,
    download_text,
    site_context,
    start_charts,
)
from jouleboard.engine.sources import (
    Sources,
    check_links,
    checked_pages,
    load_sources,
    site_urls,
    with_theme,
)
from jouleboard.engine.state import BuildSummary, Built, Changes, Inputs, Publish, State
from jouleboard.loading.dataset import load_dataset
from jouleboard.measure.units import window_words
from jouleboard.output.folder import OutputFolder
from jouleboard.output.static import add_static
from jouleboard.output.writer import LastFile, SiteFiles, last_record
from jouleboard.plan.downloads import download_chunks
from jouleboard.plan.site import (
    Route,
    download_size,
    found_now,
    made_now,
    part_for,
    plan_site,
    site_view,
    sized,
    text_now,
)
from jouleboard.plan.views import ChartRef, Page, Part, Plan, SiteView
from jouleboard.render import charts as chart_kinds
from jouleboard.render.chart_files import Pool, vega_bundle
from jouleboard.render.citation import measured_by
from jouleboard.render.embeds import ChartInfo
from jouleboard.render.pages import SiteContext, environment, render_page


class StageTimer:
    """Seconds per stage into the summary (and to ``progress``)."""

    def __init__(self, summary: BuildSummary, progress: Progress = SILENT) -> None:
        self.summary, self.progress, self.last = summary, progress, time.perf_counter()

    def done(self, stage: str) -> None:
        """``stage`` has ended: its time (with its earlier parts) to the summary, shown."""
        self.part(stage)
        self.progress.stage(stage, self.summary.timings[stage])

    def part(self, stage: str) -> None:
        """A part of ``stage`` has ended (the stages interleave): its time, added."""
        now = time.perf_counter()
        timings = self.summary.timings
        timings[stage] = timings.get(stage, 0.0) + now - self.last
        self.last = now


def assemble(
    inputs: Inputs,
    target: OutputFolder,
    state: State,
    changes: Changes,
    digest: str | None,
    digested: Seen,
    waiting: Callable[[], Sequence[str]],
    publish: Publish | None,
    progress: Progress,
    pool: Pool,
) -> BuildSummary:
    summary = BuildSummary(Path(target.given))
    timer = StageTimer(summary, progress)
    last = state.built
    sources = _sources(inputs, state, changes)
    summary.warnings = sources.data.warnings
    timer.done("load+validate")
    settings = sources.data.registry.site
    urls = site_urls(settings, inputs.base_url, inputs.site_url)
    summary.site_url = urls.origin
    replan = last is None or changes.data or changes.content
    code = code_digest(digested)
    basis = render_digest(sources.themes, code)  # pages and downloads
    chart_basis = render_digest((), code)  # charts: the code only (no template draws them)
    if last is not None and not changes.templates:
        env = last.env
    else:  # templates compiled by an earlier process are loaded, not compiled again
        env = environment(list(sources.themes))
        env.bytecode_cache = KeptTemplates(inputs.cache, chart_basis)
    products = state.products
    products.begin(target.path)
    # Cached chart templates are used only as the last build into this output made them.
    chart_kinds.trust_templates(last_record(target.path).get("chart_templates"))
    cited = measured_by(sources.data.configurations)
    # (in the page frame: the data sets, and the part of each run their energy covers)
    measured = (
        measured_by(sources.data.configurations, full=False),
        window_words(c.provenance for c in sources.data.configurations),
    )

    def charts_of(charts: Mapping[str, ChartRef], add: Add) -> Charts:
        return start_charts(
            add,
            charts,
            urls,
            settings,
            inputs.png,
            products,
            chart_basis,
            inputs.cache,
            pool,
            progress,
            cited,
            state.parts.infos if state.parts is not None else None,
        )

    @functools.cache
    def page_frame() -> tuple[dict[str, Content], SiteContext]:
        """The assets and every page's frame (on a cold cache, after the charts: a worker
        is still making the Vega bundle while the others render)."""
        if not state.bundle:
            state.bundle = vega_bundle(inputs.cache, pool)
        assets, names = asset_files(sources, state.bundle, urls)
        return dict(assets), site_context(sources, urls, names, inputs.preview, measured)

    ahead = publish is not None and last is not None and bool(waiting())
    if ahead:  # the waiting pages each made alone, where they can be, before the plan
        early: dict[str, Content | LastFile] = {}
        parts = _parts_ahead(waiting(), sources, urls, last if not replan else None)
        infos = dict(last.infos) if last is not None else {}
        for part in parts:
            infos |= charts_of({c.id: c for c in part.charts}, early.__setitem__).finish()
            early |= dict(part.files)
            frame = page_frame()[1]
            early |= {
                p.path: render_page(env, p, frame, own_charts(infos, chart_ids(p.body)))
                for p in part.pages
            }
        if early:
            assert publish is not None
            publish(_as_bytes(page_frame()[0] | early))
            ahead = False
            timer.done("first page")
    files = SiteFiles()
    charts = charts_of({}, files.add)
    if replan or last is None:
        if state.parts is not None:  # what an earlier process kept, before a text is rendered
            state.parts.start()
        plan = plan_site(
            sources.data,
            urls,
            sources.releases,
            sources.about,
            sources.pages,
            _charts_started(state.parts, charts, pool) if state.parts else made_now,
            state.parts.found if state.parts else found_now,
            state.parts.text if state.parts else text_now,
        )
        check_links(plan, urls, sources, inputs.data, inputs.project)  # before a byte is written
    else:
        plan = last.plan
    if not state.resident:  # the next build is another process's: see Sources.planned
        sources = sources.planned()
    timer.done("rank+plan")

    # Charts first: on a cold cache one worker is still making the Vega bundle, and the
    # others render meanwhile instead of waiting for it. While workers render, this
    # process makes the downloads and the pages that show none of the charts they draw.
    charts.extend(plan.charts)
    timer.part("charts")
    if ahead:  # a waiting page not made alone (compare, downloads...): from the whole plan
        infos = charts.finish()
        timer.part("charts")
        assets, frame = page_frame()
        wanted = set(waiting())
        unmade = {d.path: d for d in plan.downloads}  # sized by making them now
        pages = {
            p.path: render_page(
                env,
                sized(p, lambda path: download_size(unmade[path])),
                frame,
                own_charts(infos, chart_ids(p.body)),
            )
            for p in plan.pages
            if p.path in wanted
        }
        if pages:
            assert publish is not None
            chart_files = {
                path: files.content(path) for path in _chart_paths(plan, urls, inputs.png)
            }
            publish(_as_bytes({**assets, **chart_files, **plan.files, **pages}))
            timer.done("first page")

    # A download whose text another one has (a release's of the working data, the full data
    # set's: the same rows) is made once; by its rows, columns and format, the path made.
    # Its key is its path's with its rows' digest, taken once for every download of them (a
    # pickle of the full data set, ~3.5 ms, was taken for each of 8 files).
    made_at: dict[tuple[int, tuple[str, ...], str], str] = {}
    rows_key: dict[tuple[int, tuple[str, ...]], str] = {}
    for download in plan.downloads:
        same_rows = (id(download.records), download.columns)
        if same_rows not in rows_key:
            rows_key[same_rows] = key_of((download.columns, download.records), basis)
        key = key_of((download.path, rows_key[same_rows]), basis)
        if products.resident:  # held in memory for the next build, whole
            files.add(
                download.path, products.get(download.path, key, partial(download_text, download))
            )
            continue
        made = products.get(download.path, key, partial(download_chunks, download))
        same_text = (*same_rows, posixpath.splitext(download.path)[1])
        if isinstance(made, str | bytes | LastFile):
            files.add(download.path, made)
        elif same_text in made_at:  # (``made`` is a generator, never run)
            files.add_copy(download.path, made_at[same_text])
        else:
            files.add_chunks(download.path, made)
            made_at[same_text] = download.path
    for path, text in sorted(plan.files.items()):
        files.add(path, text)

    shown: dict[str, set[str]] = {}  # page path -> the charts it shows (looked for once)

    def charts_shown(page: Page) -> set[str]:
        ids = shown.get(page.path)
        if ids is None:
            ids = shown[page.path] = chart_ids(page.body)
        return ids

    def add_page(page: Page, infos: dict[str, ChartInfo]) -> int:
        """Add ``page`` (its last build's, or rendered now); 1 if it was rendered."""
        page = sized(page, files.size)  # the downloads are made
        frame, before = page_frame()[1], products.made
        own = own_charts(infos, charts_shown(page))
        render = partial(render_page, env, page, frame, own)
        key = page_key(page, frame, own, basis, state.parts)
        files.add(page.path, products.get(page.path, key, render))
        return products.made - before

    drawing = charts.unmade
    later: dict[str, list[Page]] = {}  # chart id -> the pages that wait for it
    waits: dict[str, int] = {}  # page path -> the charts it waits for
    rendered = 0
    for page in plan.pages:
        awaited = charts_shown(page) & drawing if drawing else set()
        if awaited:
            waits[page.path] = len(awaited)
            for cid in awaited:
                later.setdefault(cid, []).append(page)
        else:
            rendered += add_page(page, charts.infos)
    timer.part("render")

    def drawn(cid: str) -> None:
        """A chart's files are made: the pages that waited for it alone are made now, while
        the workers draw the rest (they were made after the last render, on one core)."""
        nonlocal rendered
        for page in later.pop(cid, ()):
            waits[page.path] -= 1
            if not waits[page.path]:
                rendered += add_page(page, charts.infos)

    infos = charts.finish(drawn)
    assert not later, f"pages never made: their charts were not drawn ({sorted(later)})"
    assets = page_frame()[0]
    for path, content in assets.items():
        files.add(path, content)
    # Every chart is rendered: the workers (~250 MB each at 100k) go now, not after the
    # write.
    pool.release()
    timer.done("charts")
    summary.rendered = rendered
    timer.done("render")

    # Published as they are, after every generated file; skipped hidden names are warnings.
    notes = add_static(files, inputs.project)
    if notes and inputs.strict:
        raise ValidationFailed(notes)
    summary.warnings = (*summary.warnings, *notes)

    # The chart templates this build trusts the next one to read from the cache, always;
    # what the next build needs to know it has nothing to do, and which files it need not
    # make again (never after warnings: they are worth seeing again; never without a
    # digest: inputs it cannot see, such as kinds imported by name, or serve, whose state
    # is in memory). The digest only if no input changed after it was taken (an edit saved
    # while the build ran: Statuses.unchanged); the keys are each product's own, as it was
    # made.
    record: dict[str, object] = {"chart_templates": chart_kinds.templates_made()}
    if digest is not None and not summary.warnings:
        record |= {
            "inputs": digest if digested.statuses.unchanged() else None,
            "pages": len(plan.pages),
            "site_url": urls.origin,
            "keys": products.keys,
        }
    stats = files.commit(target, record)
    products.end()
    state.built = Built(inputs, sources, plan, infos, env)
    summary.written, summary.linked = stats.written, stats.linked
    timer.done("write")
    summary.pages, summary.files, summary.bytes = len(plan.pages), len(files), files.total_bytes()
    return summary


def _charts_started(
    parts: KeptParts, charts: Charts, pool: Pool
) -> Callable[[SiteView, Route], Part]:
    """``parts`` as :func:`plan_site`'s ``made``; in a rebuild (an earlier build kept its
    parts) whose worker runs, the charts of each part not taken from the last build are
    added to ``charts`` as soon as it is made: the renders of the edited task's page and of
    its models' pages start while the rest of the site is planned (about 0.1 s before the
    plan ends), not after. A first or cold build adds its charts after the plan, as many
    at a time as CHART_BATCH lets: rendering them while the plan runs took a core from it
    and gained nothing."""

    def made(site: SiteView, route: Route) -> Part:
        taken = parts.taken
        part = parts(site, route)
        if parts.earlier and parts.taken == taken and pool.started:
            charts.extend({c.id: c for c in part.charts})
        return part

    return made


def own_charts(infos: Mapping[str, ChartInfo], ids: Iterable[str]) -> dict[str, ChartInfo]:
    """The entries of the charts a page shows (``ids``): all of ``charts`` its template is
    given and all its key holds. A template that looks past them (the site's chart count,
    another page's chart) finds nothing, rather than a value no key covers, which a rebuild
    would leave stale and a cold build would read as far as its renders had got."""
    return {cid: infos[cid] for cid in sorted(ids)}


def page_key(
    page: Page,
    frame: SiteContext,
    charts: Mapping[str, ChartInfo],
    basis: str,
    parts: KeptParts | None = None,
) -> str:
    """The key of a page: its view's (:func:`view_key`; a kept part's page has it from the
    process that made it: ``parts``), the frame, the entries of the charts it shows
    (:func:`own_charts`), and ``basis`` (templates and code)."""
    view = (parts.view_key(page) if parts is not None else None) or view_key(page)
    return key_of((view, frame, charts), basis)


def _sources(inputs: Inputs, state: State, changes: Changes) -> Sources:
    """The inputs read again where ``changes`` touched them (measurement files through the
    state's memo: an unchanged file is not parsed or checked again)."""
    last = state.built
    if changes.data or last is None:
        memo = state.measurements
        load = functools.partial(
            load_dataset,
            read=memo.read,
            check=memo.check,
            registries=memo.registries,
            mlperf=memo.mlperf,
        )
        sources = load_sources(
            inputs.data, inputs.project, inputs.runs, inputs.require_prometheus, inputs.strict, load
        )
        memo.forget_unseen()  # files deleted or renamed since the last load
        if not state.resident:  # the next build is another process's: see memo.clear
            memo.clear()
        return sources
    sources = last.sources
    if changes.content:  # content/: about.md and the site's own pages
        sources = dataclasses.replace(
            sources,
            about=about_markdown(inputs.project),
            pages=checked_pages(sources.data, inputs.data, inputs.project),
        )
    if changes.templates:  # the logo is a template asset
        sources = with_theme(sources, inputs.data, inputs.project)
    return sources


def _parts_ahead(
    paths: Sequence[str], sources: Sources, urls: Urls, last: Built | None
) -> list[Part]:
    """The parts that make the waiting ``paths`` alone: the last plan's page when the plan
    stays (``last``), else the page's part of a new plan (jouleboard/plan/site.py's
    :func:`part_for`); none for a page that is not one part's."""
    if last is not None:
        old = {p.path: p for p in last.plan.pages}
        return [Part(pages=(old[path],)) for path in dict.fromkeys(paths) if path in old]
    site = site_view(sources.data, urls)
    parts = (part_for(site, path, sources.about) for path in dict.fromkeys(paths))
    return [part for part in parts if part is not None]


def _chart_paths(plan: Plan, urls: Urls, png: bool) -> list[str]:
    from jouleboard.engine.outputs import chart_paths

    return [path for chart in plan.charts.values() for path in chart_paths(chart, urls, png)]


def _as_bytes(files: Mapping[str, Content | LastFile]) -> dict[str, bytes]:
    return {
        path: content.encode("utf-8")
        if isinstance(content, str)
        else content.read()
        if isinstance(content, LastFile)
        else content
        for path, content in files.items()
    }
