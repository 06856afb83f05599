"""Orchestration only: load -> validate -> plan -> charts -> render -> write.

Every page and file is planned (jouleboard/plan/); this module renders the charts and the
pages of the plan and hands every byte to the one writer."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jouleboard.console import SILENT, Progress
from jouleboard.content import about_markdown, logo_file
from jouleboard.export import DEFAULT_CACHE, Pool, cold, render_charts, vega_bundle
from jouleboard.fingerprint import inputs_digest
from jouleboard.jsonio import dumps_canonical
from jouleboard.loading.dataset import load_dataset, shown_path
from jouleboard.outdir import OutputFolder, output_folder
from jouleboard.plan.site import plan_site
from jouleboard.plan.views import Link
from jouleboard.present import charts
from jouleboard.present.downloads import to_csv, to_json
from jouleboard.present.embeds import ChartInfo, chart_csv, chart_info, oembed
from jouleboard.present.markdown import render_markdown
from jouleboard.problems import Problem, ValidationFailed
from jouleboard.releases import load_releases
from jouleboard.render import (
    SiteContext,
    environment,
    find_asset,
    navigation,
    render_page,
    template_dirs,
)
from jouleboard.urls import Urls
from jouleboard.write import SiteFiles, unchanged_build

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

    def __str__(self) -> str:
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in self.timings.items())
        if self.unchanged:
            return (f"{self.out} is up to date: nothing changed since its last build "
                    f"({self.pages} pages, {self.files} files, {self.bytes / 1e6:.1f} MB; "
                    f"{stages})")
        return (f"built {self.pages} pages, {self.files} files, {self.bytes / 1e6:.1f} MB "
                f"into {self.out}; {self.written} written, {self.linked} unchanged ({stages})")


class _Timer:
    def __init__(self, summary: BuildSummary, progress: Progress) -> None:
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


def build_site(data_dir: Path, out: Path, base_url: str | None = None,
               project: Path | None = None, cache: Path = DEFAULT_CACHE,
               preview: bool = False, runs: Sequence[Path] = (),
               strict: bool = False, site_url: str | None = None,
               progress: Progress = SILENT, require_prometheus: bool = False,
               png: bool = False) -> BuildSummary:
    """Build the site from ``data_dir`` (and raw ML.ENERGY run trees ``runs``) into ``out``;
    on invalid data, or any warning when ``strict``, nothing is written.

    ``project`` is the site folder whose templates/ and content/ override the packaged
    ones file by file (default: see :func:`find_project`). ``site_url`` (an origin such as
    https://example.org) replaces site.yaml's; ``progress`` receives stage and chart events;
    ``require_prometheus`` drops raw runs without prometheus.json (a warning each); ``png``
    also renders every chart as a 2x PNG (og:image, oEmbed thumbnails, "PNG (2×)" links).
    """
    project = project or find_project(data_dir)
    # Refuse an unsafe --out before any work (and again, under its lock, at commit time).
    target = output_folder(out, data=data_dir, project=project, cache=cache, runs=runs)
    started = time.perf_counter()
    inputs = inputs_digest(data_dir, project, runs, {
        "base_url": base_url, "site_url": site_url, "preview": preview, "strict": strict,
        "require_prometheus": require_prometheus, "png": png})
    record = unchanged_build(target.path, inputs) if inputs is not None else None
    if record is not None:
        return BuildSummary(
            Path(target.given), pages=record.pages, files=record.files, bytes=record.bytes,
            linked=record.files, site_url=record.site_url, unchanged=True,
            timings={"check": time.perf_counter() - started})
    with Pool() as pool:
        if cold(cache):  # every chart will be rendered: start the workers while loading
            pool.start(cache)
        return _build(data_dir, target, base_url, project, cache, preview, runs, strict,
                      site_url, progress, require_prometheus, png, pool, inputs)


def _build(data_dir: Path, target: OutputFolder, base_url: str | None, project: Path,
           cache: Path, preview: bool, runs: Sequence[Path], strict: bool,
           site_url: str | None, progress: Progress, require_prometheus: bool, png: bool,
           pool: Pool, inputs: str | None) -> BuildSummary:
    summary = BuildSummary(Path(target.given))
    timer = _Timer(summary, progress)
    data = load_dataset(data_dir, runs=runs, require_prometheus=require_prometheus)
    about = about_markdown(project)  # a link, folder or bad text: a problem, early
    themes = template_dirs(project)
    logo = (logo_file(data.registry.site.logo, themes, shown_path(data_dir / "site.yaml"))
            if data.registry.site.logo else b"")
    if strict and data.warnings:
        raise ValidationFailed(list(data.warnings))
    summary.warnings = data.warnings
    timer.done("load+validate")
    site_settings = data.registry.site
    urls = Urls(base_url or site_settings.base_url,
                site_settings.site_url if site_url is None else site_url)
    summary.site_url = urls.origin
    releases = load_releases(data, data_dir) if data.registry.releases else []
    plan = plan_site(data, urls, releases, about)
    timer.done("rank+plan")

    files = SiteFiles()
    bundle = vega_bundle(cache, pool)
    names = {"vega": _hashed("vega.js", bundle)}
    files.add(urls.asset(names["vega"]), bundle)
    for name in ("style.css", "site.js", "rank.js", "explore.js"):
        text = find_asset(name, themes).read_text(encoding="utf-8")
        names[name] = _hashed(name, text)
        files.add(urls.asset(names[name]), text)
    files.add("favicon.svg", find_asset("favicon.svg", themes).read_text(encoding="utf-8"))
    if site_settings.logo:
        files.add(urls.asset(site_settings.logo), logo)

    specs = {cid: ref.spec for cid, ref in plan.charts.items()}
    images = {cid: charts.static(spec) for cid, spec in specs.items()}
    phones = {f"{cid}{PHONE}": charts.phone(spec) for cid, spec in images.items()}
    exports = render_charts(images | phones, ("svg", "png") if png else ("svg",), cache,
                            progress, svg_only=frozenset(phones), pool=pool)
    infos: dict[str, ChartInfo] = {}
    for cid, chart in sorted(plan.charts.items()):
        svg = charts.themed(exports[(cid, "svg")].decode("utf-8"))
        phone = charts.themed(exports[(f"{cid}{PHONE}", "svg")].decode("utf-8"))
        files.add(urls.chart(cid, "svg"), svg)
        files.add(urls.chart(cid, "phone.svg"), phone)
        if png:
            files.add(urls.chart(cid, "png"), exports[(cid, "png")])
        files.add(urls.chart(cid, "vl.json"), dumps_canonical(specs[cid]))
        files.add(urls.chart(cid, "csv"), chart_csv(specs[cid]))
        infos[cid] = chart_info(chart, _svg_size(svg), urls, site_settings, _svg_size(phone),
                                png)
        files.add(urls.oembed(cid), dumps_canonical(oembed(chart, infos[cid], urls,
                                                             site_settings)))
    timer.done("charts")

    for download in plan.downloads:
        if download.path.endswith(".csv"):
            files.add(download.path, to_csv(download.columns, download.records))
        else:
            files.add(download.path, to_json(download.records))
    for path, text in sorted(plan.files.items()):
        files.add(path, text)

    site = SiteContext(
        title=site_settings.title, tagline=site_settings.tagline,
        data_version=site_settings.data_version, data_date=site_settings.data_date,
        attribution_html=render_markdown(site_settings.attribution_md),
        base_url=urls.base,
        nav=navigation(site_settings.nav, urls, has_changelog=bool(releases)),
        tasks=tuple(Link(t.name, urls.url(urls.task(tid)))
                    for tid, t in data.registry.tasks.items()),
        css_url=urls.url(urls.asset(names["style.css"])),
        js_url=urls.url(urls.asset(names["site.js"])),
        rank_js_url=urls.url(urls.asset(names["rank.js"])),
        explore_js_url=urls.url(urls.asset(names["explore.js"])),
        compare_url=urls.url(urls.compare), models_url=urls.url(urls.models_index),
        downloads_url=urls.url(urls.downloads), about_url=urls.url(urls.about),
        atom_url=urls.url(urls.atom_feed) if releases else "",
        reload_js_url="/__jouleboard__/reload.js" if preview else "",
        vega_url=urls.url(urls.asset(names["vega"])), favicon_url=urls.url("favicon.svg"),
        origin=urls.origin,
        home_url=urls.url(urls.home),
        logo_url=urls.url(urls.asset(site_settings.logo)) if site_settings.logo else "",
        accent_color=site_settings.accent_color, glossary_url=urls.url(urls.glossary))
    env = environment(themes)
    for page in plan.pages:
        files.add(page.path, render_page(env, page, site, infos))
    timer.done("render")

    # What the next build needs to know it has nothing to do (never after warnings: they
    # are worth seeing again).
    record = {"inputs": inputs, "pages": len(plan.pages), "site_url": urls.origin} \
        if inputs is not None and not data.warnings else None
    stats = files.commit(target, record)
    summary.written, summary.linked = stats.written, stats.linked
    timer.done("write")
    summary.pages, summary.files, summary.bytes = len(plan.pages), len(files), \
        files.total_bytes()
    return summary


def find_project(data_dir: Path) -> Path:
    """The site folder: the one holding the data folder. Its templates/ and content/, where
    present, override the packaged ones; nothing else is needed from it."""
    return data_dir.resolve().parent
