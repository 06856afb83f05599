"""Orchestration only: load -> validate -> plan -> charts -> render -> write.

Every page and file is planned (jouleboard/plan/); this module renders the charts and the
pages of the plan and hands every byte to the one writer."""

from __future__ import annotations

import dataclasses
import functools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jouleboard.config.content import OwnPage, about_markdown, logo_file, nav_problems, own_pages
from jouleboard.config.schema import SiteSettings
from jouleboard.core.console import SILENT, Progress
from jouleboard.core.jsonio import dumps_canonical
from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.urls import Urls
from jouleboard.engine.fingerprint import inputs_digest, render_digest
from jouleboard.engine.reuse import LastFiles, file_key, page_key
from jouleboard.loading.dataset import Dataset, load_dataset
from jouleboard.output.folder import OutputFolder, output_folder
from jouleboard.output.static import add_static
from jouleboard.output.writer import (
    SiteFiles,
    clean_up_after_killed_builds,
    refuse_added_files,
    unchanged_build,
)
from jouleboard.plan.downloads import download_chunks
from jouleboard.plan.releases import ReleaseData, load_releases
from jouleboard.plan.site import plan_site
from jouleboard.plan.views import ChartRef, Download, Link, Plan
from jouleboard.render import charts as charts_present
from jouleboard.render.chart_files import DEFAULT_CACHE, Pool, cold, render_charts, vega_bundle
from jouleboard.render.citation import measured_by
from jouleboard.render.embeds import ChartInfo, chart_csv, chart_info, oembed
from jouleboard.render.markdown import render_markdown
from jouleboard.render.pages import (
    SiteContext,
    environment,
    navigation,
    read_asset,
    render_page,
    template_dirs,
)

_SVG_SIZE = re.compile(r'<svg[^>]*?width="(\d+)"[^>]*?height="(\d+)"')


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


PHONE = "~phone"  # the render id of a chart's phone render


def _svg_size(svg: str) -> tuple[int, int]:
    match = _SVG_SIZE.search(svg)
    return (int(match.group(1)), int(match.group(2))) if match else (640, 400)


def _hashed(name: str, content: str) -> str:
    import hashlib

    stem, _, ext = name.rpartition(".")
    return f"{stem}-{hashlib.sha256(content.encode()).hexdigest()[:10]}.{ext}"


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
    """Build the site from ``data_dir`` (and raw ML.ENERGY run trees ``runs``) into ``out``;
    on invalid data, or any warning when ``strict``, nothing is written.

    ``project`` is the site folder whose templates/ and content/ override the packaged
    ones file by file (default: see :func:`find_project`). ``site_url`` (an origin such as
    https://example.org) replaces site.yaml's; ``progress`` receives stage and chart events;
    ``require_prometheus`` drops raw runs without prometheus.json (a warning each); ``png``
    also renders every chart as a 2x PNG (og:image, oEmbed thumbnails, "PNG (2×)" links);
    ``one_shot``: the process ends after this build (the command line), so a chart worker
    starts while the data loads instead of vl-convert starting here, after planning, for
    the next build in this process to reuse.
    """
    project = project or find_project(data_dir)
    # Refuse an unsafe --out before any work (and again, under its lock, at commit time).
    target = output_folder(out, data=data_dir, project=project, cache=cache, runs=runs)
    refuse_added_files(target.path, target.given)  # a CNAME put there by hand: not lost
    where_things_are(progress, data_dir, project, cache, target.path, runs)
    started = time.perf_counter()
    inputs = inputs_digest(
        data_dir,
        project,
        runs,
        {
            "base_url": base_url,
            "site_url": site_url,
            "preview": preview,
            "strict": strict,
            "require_prometheus": require_prometheus,
            "png": png,
        },
    )
    record = unchanged_build(target.path, inputs) if inputs is not None else None
    if record is not None:
        clean_up_after_killed_builds(target.path)
        return BuildSummary(
            Path(target.given),
            pages=record.pages,
            files=record.files,
            bytes=record.bytes,
            linked=record.files,
            site_url=record.site_url,
            unchanged=True,
            timings={"check": time.perf_counter() - started},
        )
    with Pool() as pool:
        if cold(cache):  # every chart will be rendered: start the workers while loading
            pool.start(cache)
        elif one_shot:  # a chart or two may change: ready a worker meanwhile
            pool.start(cache, workers=1)
        return _build(
            data_dir,
            target,
            base_url,
            project,
            cache,
            preview,
            runs,
            strict,
            site_url,
            progress,
            require_prometheus,
            png,
            pool,
            inputs,
        )


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


@dataclass(frozen=True)
class Sources:
    """Everything a build reads from the data and site folders, checked."""

    data: Dataset
    about: str | None  # content/about.md, if any
    themes: tuple[Path, ...]  # template folders, first match wins
    logo: bytes  # site.yaml's logo file ("" without one)
    releases: tuple[ReleaseData, ...]
    pages: tuple[OwnPage, ...] = ()  # the site's own pages: content/<name>.md


def load_sources(
    data_dir: Path,
    project: Path,
    runs: Sequence[Path] = (),
    require_prometheus: bool = False,
    strict: bool = False,
    load: Callable[..., Dataset] = load_dataset,
) -> Sources:
    """Read and check every input (``load``: :func:`load_dataset` or a memoised one with its
    signature); raise ValidationFailed on invalid data, or on any warning when ``strict``."""
    data = load(data_dir, runs=runs, require_prometheus=require_prometheus)
    about = about_markdown(project)  # a link, folder or bad text: a problem, early
    pages = checked_pages(data, data_dir, project)
    sources = with_theme(Sources(data, about, (), b"", (), pages), data_dir, project)
    if strict and data.warnings:
        raise ValidationFailed(list(data.warnings))
    releases = tuple(load_releases(data, data_dir)) if data.registry.releases else ()
    return dataclasses.replace(sources, releases=releases)


def checked_pages(data: Dataset, data_dir: Path, project: Path) -> tuple[OwnPage, ...]:
    """The site's own pages, and site.yaml's nav checked against them (a target naming no
    page is a located problem)."""
    pages = own_pages(project)
    site_yaml = shown_path(data_dir / "site.yaml")
    if problems := nav_problems(data.registry.site.nav, pages, site_yaml):
        raise ValidationFailed(problems)
    return pages


def with_theme(sources: Sources, data_dir: Path, project: Path) -> Sources:
    """``sources`` with the template folders and site.yaml's logo read (again)."""
    themes = tuple(template_dirs(project))
    logo_name = sources.data.registry.site.logo
    logo = (
        logo_file(logo_name, list(themes), shown_path(data_dir / "site.yaml")) if logo_name else b""
    )
    return dataclasses.replace(sources, themes=themes, logo=logo)


def site_urls(settings: SiteSettings, base_url: str | None, site_url: str | None) -> Urls:
    """The site's URLs: ``base_url`` and ``site_url`` (command line) over site.yaml's."""
    return Urls(base_url or settings.base_url, settings.site_url if site_url is None else site_url)


def plan_of(sources: Sources, urls: Urls) -> Plan:
    return plan_site(sources.data, urls, sources.releases, sources.about, sources.pages)


def asset_files(
    sources: Sources, bundle: str, urls: Urls
) -> tuple[dict[str, str | bytes], dict[str, str]]:
    """The site's assets by output path (names carry a content hash), and each asset's
    hashed name by its plain one (``vega`` for the Vega bundle)."""
    names = {"vega": _hashed("vega.js", bundle)}
    files: dict[str, str | bytes] = {urls.asset(names["vega"]): bundle}
    for name in ("style.css", "site.js", "rank.js", "explore.js"):
        text = read_asset(name, sources.themes)
        names[name] = _hashed(name, text)
        files[urls.asset(names[name])] = text
    files["favicon.svg"] = read_asset("favicon.svg", sources.themes)
    logo = sources.data.registry.site.logo
    if logo:
        files[urls.asset(logo)] = sources.logo
    return files, names


def chart_specs(charts: Mapping[str, ChartRef]) -> dict[str, dict[str, Any]]:
    """What to render for ``charts``: each chart's static spec, and its phone render under
    ``<id>~phone``."""
    images = {cid: charts_present.static(ref.spec) for cid, ref in charts.items()}
    phones = {f"{cid}{PHONE}": charts_present.phone(spec) for cid, spec in images.items()}
    return images | phones


def chart_output(
    chart: ChartRef,
    exports: Mapping[tuple[str, str], bytes],
    urls: Urls,
    settings: SiteSettings,
    png: bool,
    sources: str = "",
) -> tuple[dict[str, str | bytes], ChartInfo]:
    """One chart's published files (SVG, phone SVG, PNG, spec, CSV, oEmbed) by output path,
    and what pages need of it; ``exports`` holds its renders (see :func:`chart_specs`);
    ``sources``: the data sets its citation names."""
    cid = chart.id
    svg = charts_present.themed(exports[(cid, "svg")].decode("utf-8"))
    phone = charts_present.themed(exports[(f"{cid}{PHONE}", "svg")].decode("utf-8"))
    files: dict[str, str | bytes] = {
        urls.chart(cid, "svg"): svg,
        urls.chart(cid, "phone.svg"): phone,
    }
    if png:
        files[urls.chart(cid, "png")] = exports[(cid, "png")]
    files[urls.chart(cid, "vl.json")] = dumps_canonical(chart.spec)
    files[urls.chart(cid, "csv")] = chart_csv(chart.spec)
    info = chart_info(chart, _svg_size(svg), urls, settings, _svg_size(phone), png, sources)
    files[urls.oembed(cid)] = dumps_canonical(oembed(chart, info, urls, settings))
    return files, info


CHART_BATCH = 500  # charts rendered, then written, at a time (their renders are in memory)


def add_charts(
    files: SiteFiles,
    charts: Mapping[str, ChartRef],
    urls: Urls,
    settings: SiteSettings,
    png: bool,
    cache: Path,
    progress: Progress,
    pool: Pool,
    sources: str = "",
) -> dict[str, ChartInfo]:
    """Render ``charts`` and add each one's files (see :func:`chart_output`) to ``files``,
    :data:`CHART_BATCH` charts at a time, so only one batch's renders are ever in memory;
    returns what pages need of each chart, by id."""
    infos: dict[str, ChartInfo] = {}
    ids = sorted(charts)
    batches = range(0, len(ids), CHART_BATCH)
    for number, start in enumerate(batches, 1):
        batch = {cid: charts[cid] for cid in ids[start : start + CHART_BATCH]}
        shown = (
            progress
            if len(batches) == 1
            else _Labelled(progress, f"batch {number} of {len(batches)}")
        )
        exports = render_charts(
            chart_specs(batch),
            ("svg", "png") if png else ("svg",),
            cache,
            shown,
            svg_only=frozenset(f"{cid}{PHONE}" for cid in batch),
            pool=pool,
        )
        for cid, chart in batch.items():
            chart_files, infos[cid] = chart_output(chart, exports, urls, settings, png, sources)
            for path, content in chart_files.items():
                files.add(path, content)
    return infos


class _Labelled(Progress):
    """``progress`` with ``label`` after what it counts ("rendering charts (batch 2 of 13)")."""

    def __init__(self, progress: Progress, label: str) -> None:
        super().__init__(progress.level, progress.stream)
        self.inner, self.label = progress, label

    def start(self, what: str, total: int) -> None:
        self.inner.start(f"{what} ({self.label})", total)

    def advance(self, count: int = 1) -> None:
        self.inner.advance(count)


def download_text(download: Download) -> str:
    return "".join(download_chunks(download))


def site_context(
    sources: Sources, urls: Urls, names: Mapping[str, str], preview: bool
) -> SiteContext:
    """What every page's frame shows; ``names``: the hashed asset names."""
    settings = sources.data.registry.site

    def asset(name: str) -> str:
        return urls.url(urls.asset(names[name]))

    return SiteContext(
        measured_by=measured_by(sources.data.configurations, full=False),
        title=settings.title,
        tagline=settings.tagline,
        data_version=settings.data_version,
        data_date=settings.data_date,
        attribution_html=render_markdown(settings.attribution_md),
        base_url=urls.base,
        nav=navigation(
            settings.nav,
            urls,
            has_changelog=bool(sources.releases),
            has_mlperf=bool(sources.data.mlperf),
        ),
        mlperf_url=urls.url(urls.mlperf_index) if sources.data.mlperf else "",
        tasks=tuple(
            Link(t.name, urls.url(urls.task(tid))) for tid, t in sources.data.registry.tasks.items()
        ),
        css_url=asset("style.css"),
        js_url=asset("site.js"),
        rank_js_url=asset("rank.js"),
        explore_js_url=asset("explore.js"),
        compare_url=urls.url(urls.compare),
        models_url=urls.url(urls.models_index),
        downloads_url=urls.url(urls.downloads),
        about_url=urls.url(urls.about),
        atom_url=urls.url(urls.atom_feed) if sources.releases else "",
        reload_js_url="/__jouleboard__/reload.js" if preview else "",
        vega_url=asset("vega"),
        favicon_url=urls.url("favicon.svg"),
        origin=urls.origin,
        home_url=urls.url(urls.home),
        logo_url=urls.url(urls.asset(settings.logo)) if settings.logo else "",
        accent_color=settings.accent_color,
        glossary_url=urls.url(urls.glossary),
    )


def _build(
    data_dir: Path,
    target: OutputFolder,
    base_url: str | None,
    project: Path,
    cache: Path,
    preview: bool,
    runs: Sequence[Path],
    strict: bool,
    site_url: str | None,
    progress: Progress,
    require_prometheus: bool,
    png: bool,
    pool: Pool,
    inputs: str | None,
) -> BuildSummary:
    summary = BuildSummary(Path(target.given))
    timer = StageTimer(summary, progress)
    sources = load_sources(data_dir, project, runs, require_prometheus, strict)
    summary.warnings = sources.data.warnings
    timer.done("load+validate")
    settings = sources.data.registry.site
    urls = site_urls(settings, base_url, site_url)
    summary.site_url = urls.origin
    plan = plan_of(sources, urls)
    timer.done("rank+plan")

    files = SiteFiles()
    # Charts first: on a cold cache one worker is still making the Vega bundle, and the
    # others render meanwhile instead of waiting for it.
    infos = add_charts(
        files,
        plan.charts,
        urls,
        settings,
        png,
        cache,
        progress,
        pool,
        measured_by(sources.data.configurations),
    )
    assets, names = asset_files(sources, vega_bundle(cache, pool), urls)
    for path, content in assets.items():
        files.add(path, content)
    # Every chart is rendered: the workers (~250 MB each at 100k) go while the pages are
    # rendered, not after the write.
    pool.release()
    timer.done("charts")

    last, basis = LastFiles(target.path), render_digest(sources.themes)
    for download in plan.downloads:
        chunks = last.get(
            download.path, file_key(download, basis), functools.partial(download_chunks, download)
        )
        files.add_chunks(download.path, (chunks,) if isinstance(chunks, bytes) else chunks)
    for path, text in sorted(plan.files.items()):
        files.add(path, text)
    site = site_context(sources, urls, names, preview)
    env = environment(list(sources.themes))
    made = last.made
    for page in plan.pages:
        files.add(
            page.path,
            last.get(
                page.path,
                page_key(page, site, infos, basis),
                functools.partial(render_page, env, page, site, infos),
            ),
        )
    summary.rendered = last.made - made
    timer.done("render")

    add_static(files, project)  # published as they are, after every generated file

    # What the next build needs to know it has nothing to do, and which files it need not
    # make again (never after warnings: they are worth seeing again).
    record = (
        {"inputs": inputs, "pages": len(plan.pages), "site_url": urls.origin, "keys": last.keys}
        if inputs is not None and not sources.data.warnings
        else None
    )
    stats = files.commit(target, record)
    summary.written, summary.linked = stats.written, stats.linked
    timer.done("write")
    summary.pages, summary.files, summary.bytes = len(plan.pages), len(files), files.total_bytes()
    return summary


def find_project(data_dir: Path) -> Path:
    """The site folder: the one holding the data folder. Its templates/ and content/, where
    present, override the packaged ones; nothing else is needed from it."""
    return data_dir.resolve().parent
