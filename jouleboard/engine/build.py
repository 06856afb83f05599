"""The one build engine: ``build(inputs, out, state) -> (summary, state)`` is the only
path from inputs to an output folder. A cold build, a rebuild by the command line (whose
state is what the output folder's manifest records), ``jouleboard serve`` (whose state
stays in memory from edit to edit) and the tests' builds all go through it.

Stages: read (sources) -> plan (jouleboard/plan/) -> charts, downloads, pages
(jouleboard/engine/outputs.py, each product taken from the last build while its key is
the same: jouleboard/engine/fresh.py) -> commit (jouleboard/output/writer.py, the one
writer). Nothing is written before every input has been read and checked.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from jouleboard.config.content import about_markdown
from jouleboard.core.console import SILENT, Progress
from jouleboard.core.problems import Problem
from jouleboard.core.urls import Urls
from jouleboard.engine.fingerprint import inputs_digest, render_digest
from jouleboard.engine.fresh import Content, chart_ids, key_of
from jouleboard.engine.outputs import (
    add_charts,
    asset_files,
    download_text,
    site_context,
)
from jouleboard.engine.sources import (
    Sources,
    checked_pages,
    load_sources,
    site_urls,
    with_theme,
)
from jouleboard.engine.state import EVERYTHING, NOTHING, Built, Changes, State
from jouleboard.loading.dataset import load_dataset
from jouleboard.output.folder import OutputFolder, output_folder
from jouleboard.output.static import add_static
from jouleboard.output.writer import (
    SiteFiles,
    clean_up_after_killed_builds,
    refuse_added_files,
    unchanged_build,
)
from jouleboard.plan.downloads import download_chunks
from jouleboard.plan.site import part_for, plan_site, site_view
from jouleboard.plan.views import ChartRef, Page, Part, Plan
from jouleboard.render.chart_files import DEFAULT_CACHE, Pool, cold, vega_bundle
from jouleboard.render.citation import measured_by
from jouleboard.render.embeds import ChartInfo
from jouleboard.render.pages import SiteContext, environment, render_page, template_dirs

Publish = Callable[[dict[str, bytes]], None]


@dataclass(frozen=True)
class Inputs:
    """Everything a build reads, and the options that shape its output."""

    data: Path
    project: Path  # the site folder: its templates/ and content/ override the packaged ones
    runs: tuple[Path, ...] = ()  # raw ML.ENERGY run trees published with the data
    cache: Path = DEFAULT_CACHE  # the chart cache
    base_url: str | None = None  # over site.yaml's
    site_url: str | None = None  # over site.yaml's
    preview: bool = False  # serve's live-reload script on every page
    strict: bool = False  # any warning fails the build
    require_prometheus: bool = False  # raw runs without prometheus.json are dropped
    png: bool = False  # also a 2x PNG of every chart

    def options(self) -> dict[str, object]:
        """The options, as the inputs digest records them."""
        return {
            "base_url": self.base_url,
            "site_url": self.site_url,
            "preview": self.preview,
            "strict": self.strict,
            "require_prometheus": self.require_prometheus,
            "png": self.png,
        }


@dataclass
class BuildSummary:
    out: Path
    pages: int = 0
    files: int = 0
    bytes: int = 0
    written: int = 0
    linked: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    warnings: tuple[Problem, ...] = ()  # raw runs dropped as unstable
    site_url: str = ""  # the origin links were made absolute with ("" = root-relative)
    unchanged: bool = False  # the inputs are those of the last build, whose output is intact
    rendered: int = 0  # pages rendered (the others were the last build's, unchanged)

    def __str__(self) -> str:
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in self.timings.items())
        if self.unchanged:
            return (
                f"{self.out} is up to date: nothing changed since its last build "
                f"({self.pages} pages, {self.files} files, {self.bytes / 1e6:.1f} MB; "
                f"{stages})"
            )
        return (
            f"built {self.pages} pages, {self.files} files, {self.bytes / 1e6:.1f} MB "
            f"into {self.out}; {self.written} written, {self.linked} unchanged ({stages})"
        )


class StageTimer:
    """Seconds per stage into the summary (and to ``progress``)."""

    def __init__(self, summary: BuildSummary, progress: Progress = SILENT) -> None:
        self.summary, self.progress, self.last = summary, progress, time.perf_counter()

    def done(self, stage: str) -> None:
        now = time.perf_counter()
        self.summary.timings[stage] = now - self.last
        self.progress.stage(stage, now - self.last)
        self.last = now


def where_things_are(
    progress: Progress,
    data_dir: Path,
    project: Path,
    cache: Path,
    out: Path,
    runs: Sequence[Path] = (),
) -> None:
    """With -v: every folder a build reads or writes, in the order it looks in them."""
    from jouleboard.core.resources import content_dir

    own = project / "content"
    rows = [
        ("data", str(data_dir.resolve())),
        *(("raw runs", str(Path(run).resolve())) for run in runs),
        ("site folder", str(project.resolve())),
        ("templates", " then ".join(str(p) for p in template_dirs(project))),
        (
            "content",
            " then ".join(dict.fromkeys(str(p) for p in (own, content_dir()) if p.is_dir())),
        ),
        ("chart cache", str(cache)),
        ("output", str(out)),
    ]
    for name, place in rows:
        progress.detail(f"{name:<14} {place}")


def build(
    inputs: Inputs,
    out: Path,
    state: State | None = None,
    *,
    changes: Changes = EVERYTHING,
    waiting: Callable[[], Sequence[str]] = lambda: (),
    publish: Publish | None = None,
    progress: Progress = SILENT,
    one_shot: bool = False,
) -> tuple[BuildSummary, State]:
    """Build ``inputs`` into ``out`` and return the summary and the state the next build
    starts from (``state`` itself, updated). On invalid data, or any warning when
    ``inputs.strict``, nothing is written and the exception propagates; the state then
    remembers ``changes`` for the next build.

    ``state``: what the last build left (None: a new one; the output folder's manifest
    then says which products are still fresh). ``changes``: which inputs changed since
    that build (serve knows; anything else: everything). ``waiting``: output paths a
    browser waits for; they are rendered first and given to ``publish`` with the files
    they use, before the whole site is committed. ``one_shot``: the process ends after
    this build (the command line), so a chart worker starts while the data loads.
    """
    state = state if state is not None else State()
    target = output_folder(
        out, data=inputs.data, project=inputs.project, cache=inputs.cache, runs=inputs.runs
    )
    # Refuse an unsafe --out before any work (and again, under its lock, at commit time).
    refuse_added_files(target.path, target.given)  # a CNAME put there by hand: not lost
    where_things_are(progress, inputs.data, inputs.project, inputs.cache, target.path, inputs.runs)
    started = time.perf_counter()
    if state.built is None or state.built.inputs != inputs:
        changes = EVERYTHING
    changes |= state.pending
    state.pending = changes
    digest = None
    if changes == EVERYTHING and not state.resident:  # serve knows what changed
        digest = inputs_digest(inputs.data, inputs.project, inputs.runs, inputs.options())
        last = unchanged_build(target.path, digest) if digest is not None else None
        if last is not None:
            clean_up_after_killed_builds(target.path)
            state.pending = NOTHING
            summary = BuildSummary(
                Path(target.given),
                pages=last.pages,
                files=last.files,
                bytes=last.bytes,
                linked=last.files,
                site_url=last.site_url,
                unchanged=True,
                timings={"check": time.perf_counter() - started},
            )
            return summary, state
    with Pool() as pool:
        if cold(inputs.cache):  # every chart will be rendered: start the workers while loading
            pool.start(inputs.cache)
        elif one_shot:  # a chart or two may change: ready a worker meanwhile
            pool.start(inputs.cache, workers=1)
        summary = _build(inputs, target, state, changes, digest, waiting, publish, progress, pool)
    state.pending = NOTHING
    return summary, state


def _build(
    inputs: Inputs,
    target: OutputFolder,
    state: State,
    changes: Changes,
    digest: str | None,
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
    env = (
        last.env
        if last is not None and not changes.templates
        else environment(list(sources.themes))
    )
    basis = render_digest(sources.themes)  # pages and downloads
    chart_basis = render_digest(())  # charts: the code only (no template draws them)
    products = state.products
    products.begin(target.path)
    cited = measured_by(sources.data.configurations)

    def render_charts_of(
        charts: Mapping[str, ChartRef], add: Callable[[str, Content], None]
    ) -> dict[str, ChartInfo]:
        return add_charts(
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
        )

    @functools.cache
    def page_frame() -> tuple[dict[str, Content], SiteContext]:
        """The assets and every page's frame (on a cold cache, after the charts: a worker
        is still making the Vega bundle while the others render)."""
        if not state.bundle:
            state.bundle = vega_bundle(inputs.cache, pool)
        assets, names = asset_files(sources, state.bundle, urls)
        return dict(assets), site_context(sources, urls, names, inputs.preview)

    ahead = publish is not None and last is not None and bool(waiting())
    if ahead:  # the waiting pages each made alone, where they can be, before the plan
        early: dict[str, Content] = {}
        parts = _parts_ahead(waiting(), sources, urls, last if not replan else None)
        infos = dict(last.infos) if last is not None else {}
        for part in parts:
            infos |= render_charts_of({c.id: c for c in part.charts}, early.__setitem__)
            early |= dict(part.files)
            frame = page_frame()[1]
            early |= {p.path: render_page(env, p, frame, infos) for p in part.pages}
        if early:
            assert publish is not None
            publish(_as_bytes(page_frame()[0] | early))
            ahead = False
            timer.done("first page")
    plan = (
        plan_site(sources.data, urls, sources.releases, sources.about, sources.pages)
        if replan or last is None
        else last.plan
    )
    timer.done("rank+plan")

    files = SiteFiles()
    # Charts first: on a cold cache one worker is still making the Vega bundle, and the
    # others render meanwhile instead of waiting for it.
    infos = render_charts_of(plan.charts, files.add)
    assets, frame = page_frame()
    for path, content in assets.items():
        files.add(path, content)
    # Every chart is rendered: the workers (~250 MB each at 100k) go while the pages are
    # rendered, not after the write.
    pool.release()
    timer.done("charts")
    if ahead:  # a waiting page not made alone (compare, downloads...): from the whole plan
        wanted = set(waiting())
        pages = {p.path: render_page(env, p, frame, infos) for p in plan.pages if p.path in wanted}
        if pages:
            assert publish is not None
            chart_files = {
                path: files.content(path) for path in _chart_paths(plan, urls, inputs.png)
            }
            publish(_as_bytes(assets | chart_files | plan.files | pages))
            timer.done("first page")

    for download in plan.downloads:
        key = key_of(download, basis)
        if products.resident:  # held in memory for the next build, whole
            files.add(
                download.path, products.get(download.path, key, partial(download_text, download))
            )
            continue
        chunks = products.get(download.path, key, partial(download_chunks, download))
        files.add_chunks(download.path, (chunks,) if isinstance(chunks, str | bytes) else chunks)
    for path, text in sorted(plan.files.items()):
        files.add(path, text)
    made = products.made
    for page in plan.pages:
        files.add(
            page.path,
            products.get(
                page.path,
                page_key(page, frame, infos, basis),
                functools.partial(render_page, env, page, frame, infos),
            ),
        )
    summary.rendered = products.made - made
    timer.done("render")

    add_static(files, inputs.project)  # published as they are, after every generated file

    # What the next build needs to know it has nothing to do, and which files it need not
    # make again (never after warnings: they are worth seeing again; never without a
    # digest: inputs it cannot see, such as kinds imported by name, or serve, whose state
    # is in memory).
    record = (
        {
            "inputs": digest,
            "pages": len(plan.pages),
            "site_url": urls.origin,
            "keys": products.keys,
        }
        if digest is not None and not sources.data.warnings
        else None
    )
    stats = files.commit(target, record)
    products.end()
    state.built = Built(inputs, sources, plan, infos, env)
    summary.written, summary.linked = stats.written, stats.linked
    timer.done("write")
    summary.pages, summary.files, summary.bytes = len(plan.pages), len(files), files.total_bytes()
    return summary


def page_key(page: Page, frame: SiteContext, infos: Mapping[str, ChartInfo], basis: str) -> str:
    """The key of a page: its view, the frame, the entries of the charts it shows, and
    ``basis`` (templates and code)."""
    return key_of((page, frame, {cid: infos[cid] for cid in sorted(chart_ids(page.body))}), basis)


def _sources(inputs: Inputs, state: State, changes: Changes) -> Sources:
    """The inputs read again where ``changes`` touched them (measurement files through the
    state's memo: an unchanged file is not parsed or checked again)."""
    last = state.built
    if changes.data or last is None:
        memo = state.measurements
        load = functools.partial(load_dataset, read=memo.read, check=memo.check)
        sources = load_sources(
            inputs.data, inputs.project, inputs.runs, inputs.require_prometheus, inputs.strict, load
        )
        memo.forget_unseen()  # files deleted or renamed since the last load
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


def _as_bytes(files: Mapping[str, Content]) -> dict[str, bytes]:
    return {
        path: content.encode("utf-8") if isinstance(content, str) else content
        for path, content in files.items()
    }


def build_site(
    data_dir: Path,
    out: Path,
    base_url: str | None = None,
    project: Path | None = None,
    cache: Path = DEFAULT_CACHE,
    preview: bool = False,
    runs: Sequence[Path] = (),
    strict: bool = False,
    site_url: str | None = None,
    progress: Progress = SILENT,
    require_prometheus: bool = False,
    png: bool = False,
    one_shot: bool = False,
) -> BuildSummary:
    """:func:`build` with a new state, the options as keywords: the site from ``data_dir``
    (and raw ML.ENERGY run trees ``runs``) into ``out``. ``project`` is the site folder
    (default: see :func:`find_project`)."""
    inputs = Inputs(
        data_dir,
        project or find_project(data_dir),
        tuple(runs),
        cache,
        base_url,
        site_url,
        preview,
        strict,
        require_prometheus,
        png,
    )
    return build(inputs, out, progress=progress, one_shot=one_shot)[0]


def find_project(data_dir: Path) -> Path:
    """The site folder: the one holding the data folder. Its templates/ and content/, where
    present, override the packaged ones; nothing else is needed from it."""
    return data_dir.resolve().parent
