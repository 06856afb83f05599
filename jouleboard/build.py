"""Orchestration only: load -> validate -> plan -> charts -> render -> write."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jouleboard.console import SILENT, Progress
from jouleboard.content import about_markdown
from jouleboard.contexts import DownloadsBody, EmbedBody, Link, Page, Plan, ProseBody
from jouleboard.dataset import load_dataset
from jouleboard.escape import markup
from jouleboard.export import DEFAULT_CACHE, render_charts, vega_bundle
from jouleboard.jsonio import dumps_canonical
from jouleboard.outdir import output_folder
from jouleboard.pages import plan_site
from jouleboard.present.downloads import explore_payload, to_csv, to_json
from jouleboard.present.embeds import ChartInfo, chart_csv, chart_info, oembed
from jouleboard.present.markdown import render_markdown
from jouleboard.problems import Problem, ValidationFailed
from jouleboard.releases import (
    atom_feed,
    changelog_page,
    json_feed,
    load_releases,
    release_downloads,
)
from jouleboard.render import (
    SiteContext,
    environment,
    find_asset,
    navigation,
    render_page,
    template_dirs,
)
from jouleboard.urls import Urls
from jouleboard.write import SiteFiles

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

    def __str__(self) -> str:
        stages = ", ".join(f"{k} {v:.2f}s" for k, v in self.timings.items())
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


def _hashed(name: str, content: str) -> str:
    import hashlib

    stem, _, ext = name.rpartition(".")
    return f"{stem}-{hashlib.sha256(content.encode()).hexdigest()[:10]}.{ext}"


def build_site(data_dir: Path, out: Path, base_url: str | None = None,
               project: Path | None = None, cache: Path = DEFAULT_CACHE,
               preview: bool = False, runs: Sequence[Path] = (),
               strict: bool = False, site_url: str | None = None,
               progress: Progress = SILENT) -> BuildSummary:
    """Build the site from ``data_dir`` (and raw ML.ENERGY run trees ``runs``) into ``out``;
    on invalid data, or any warning when ``strict``, nothing is written.

    ``project`` is the site folder whose templates/ and content/ override the packaged
    ones file by file (default: see :func:`find_project`). ``site_url`` (an origin such as
    https://example.org) replaces site.yaml's; ``progress`` receives stage and chart events.
    """
    project = project or find_project(data_dir)
    # Refuse an unsafe --out before any work (and again, under its lock, at commit time).
    target = output_folder(out, data=data_dir, project=project, cache=cache, runs=runs)
    summary = BuildSummary(out)
    timer = _Timer(summary, progress)
    data = load_dataset(data_dir, runs=runs)
    about = about_markdown(project)  # a link, folder or bad text: a problem, early
    if strict and data.warnings:
        raise ValidationFailed(list(data.warnings))
    summary.warnings = data.warnings
    timer.done("load+validate")
    site_settings = data.registry.site
    urls = Urls(base_url or site_settings.base_url,
                site_settings.site_url if site_url is None else site_url)
    summary.site_url = urls.origin
    plan = plan_site(data, urls)
    timer.done("rank+plan")

    files = SiteFiles()
    themes = template_dirs(project)
    bundle = vega_bundle(cache)
    names = {"vega": _hashed("vega.js", bundle)}
    files.add(urls.asset(names["vega"]), bundle)
    for name in ("style.css", "site.js", "rank.js", "explore.js"):
        text = find_asset(name, themes).read_text(encoding="utf-8")
        names[name] = _hashed(name, text)
        files.add(urls.asset(names[name]), text)
    files.add("favicon.svg", find_asset("favicon.svg", themes).read_text(encoding="utf-8"))
    if site_settings.logo:
        files.add(urls.asset(site_settings.logo),
                  find_asset(site_settings.logo, themes).read_bytes())

    specs = {cid: ref.spec for cid, ref in plan.charts.items()}
    exports = render_charts(specs, ("svg", "png"), cache, progress)
    infos: dict[str, ChartInfo] = {}
    embed_pages = []
    for cid, chart in sorted(plan.charts.items()):
        svg = exports[(cid, "svg")]
        files.add(urls.chart(cid, "svg"), svg)
        files.add(urls.chart(cid, "png"), exports[(cid, "png")])
        files.add(urls.chart(cid, "vl.json"), dumps_canonical(specs[cid]))
        files.add(urls.chart(cid, "csv"), chart_csv(specs[cid]))
        match = _SVG_SIZE.search(svg.decode("utf-8"))
        size = (int(match.group(1)), int(match.group(2))) if match else (640, 400)
        infos[cid] = chart_info(chart, size, urls, site_settings)
        files.add(urls.oembed(cid), dumps_canonical(oembed(chart, infos[cid], urls,
                                                             site_settings)))
        embed_pages.append(Page(urls.embed(cid), "embed.html", chart.title, chart.alt,
                                EmbedBody(chart), in_sitemap=False))
    for path, svg_text in sorted(plan.labels.items()):
        files.add(path, svg_text)
    timer.done("charts")

    for download in plan.downloads:
        if download.path.endswith(".csv"):
            files.add(download.path, to_csv(download.columns, download.records))
        else:
            files.add(download.path, to_json(download.records))
    files.add(urls.schema_download, measurement_schema_text())
    for path, task in sorted(plan.explore_data.items()):
        files.add(path, dumps_canonical(explore_payload(
            data.for_task(task), data.registry, lambda m: urls.url(urls.model(m)),
            lambda g: urls.url(urls.gpu(g)))))
    for path, spec in sorted(plan.chart_templates.items()):
        files.add(path, dumps_canonical(spec))

    pages = list(plan.pages) + embed_pages
    if about is not None:
        pages.append(Page(urls.about, "prose.html", "About and methodology",
                          "What jouleboard measures and how it ranks.",
                          ProseBody(render_markdown(about))))
    releases = load_releases(data, data_dir) if data.registry.releases else []
    if releases:
        for download in release_downloads(releases, urls):
            plan.downloads.append(download)
            files.add(download.path, to_csv(download.columns, download.records)
                      if download.path.endswith(".csv") else to_json(download.records))
        pages.append(changelog_page(releases, urls))
        files.add(urls.atom_feed, atom_feed(releases, urls, site_settings.title))
        files.add(urls.json_feed, json_feed(releases, urls, site_settings.title))
    pages.append(downloads_page(urls, plan))
    pages.append(Page(urls.not_found, "prose.html", "Page not found", "Page not found.",
                      ProseBody("<p>There is no page at this address. The "
                                f'<a href="{markup(urls.url(urls.home))}">leaderboard</a> links to '
                                "every task, model and GPU.</p>"), in_sitemap=False))

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
        accent_color=site_settings.accent_color)
    env = environment(themes)
    for page in pages:
        files.add(page.path, render_page(env, page, site, infos))
    files.add(urls.sitemap, sitemap(urls, pages))
    # robots.txt may only name the sitemap with an absolute URL: when the origin is known.
    sitemap_line = f"Sitemap: {urls.absolute(urls.sitemap)}\n" if urls.origin else ""
    files.add("robots.txt", f"User-agent: *\nAllow: /\n{sitemap_line}")
    timer.done("render")

    stats = files.commit(target)
    summary.written, summary.linked = stats.written, stats.linked
    timer.done("write")
    summary.pages, summary.files, summary.bytes = len(pages), len(files.items()), \
        files.total_bytes()
    return summary


def find_project(data_dir: Path) -> Path:
    """The site folder: the one holding the data folder. Its templates/ and content/, where
    present, override the packaged ones; nothing else is needed from it."""
    return data_dir.resolve().parent


def measurement_schema_text() -> str:
    """The published JSON Schema of a measurement file."""
    from typing import Annotated

    from pydantic import Field, TypeAdapter

    from jouleboard.records import DiffusionMeasurement, Measurement

    either: TypeAdapter[Measurement | DiffusionMeasurement] = TypeAdapter(
        Annotated[Measurement | DiffusionMeasurement,
                  Field(discriminator="kind")])
    schema = either.json_schema()
    schema["title"] = "jouleboard measurement (one configuration)"
    return dumps_canonical(schema, indent=2)


def downloads_page(urls: Urls, plan: Plan) -> Page:
    rankings = tuple(Link(d.path.rsplit("/", 1)[-1], urls.url(d.path))
                     for d in plan.downloads if d.path.startswith("downloads/rankings/"))
    versions = tuple(Link(d.path.removeprefix("data/"), urls.url(d.path),
                          "permanent: this release's data, never rewritten")
                     for d in plan.downloads if d.path.startswith("data/"))
    everything = tuple(Link(d.path.rsplit("/", 1)[-1], urls.url(d.path),
                            "every validated configuration, one row each")
                       for d in plan.downloads if d.path.startswith("downloads/configurations"))
    schema = (Link("measurement.schema.json", urls.url(urls.schema_download),
                   "JSON Schema of a measurement file"),)
    return Page(urls.downloads, "downloads.html", "Downloads",
                "Every ranking and the full data set as CSV and JSON.",
                DownloadsBody((("Full data set", everything), ("By release", versions),
                               ("Rankings", rankings), ("Format", schema))))


def sitemap(urls: Urls, pages: list[Page]) -> str:
    entries = "".join(f"  <url><loc>{markup(urls.url(p.path))}</loc></url>\n"
                      for p in sorted(pages, key=lambda p: p.path) if p.in_sitemap)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{entries}</urlset>\n")
