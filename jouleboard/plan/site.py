"""The whole site's plan: the task views (computed once), then every page and file as a
value: home, task, model and GPU pages, compare, indexes, downloads, releases, about, 404,
embeds, sitemap, robots.txt and the measurement schema."""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Callable, Sequence

from jouleboard.config.content import OwnPage
from jouleboard.core.escape import markup
from jouleboard.core.urls import Urls
from jouleboard.kinds import Kinds
from jouleboard.kinds.base import Record
from jouleboard.loading.dataset import Dataset
from jouleboard.loading.repeats import dataset_of
from jouleboard.measure.units import efficiency_phrase, in_words, measured_gpus, window_words
from jouleboard.plan.columns import column_lines
from jouleboard.plan.downloads import (
    Records,
    configuration_downloads,
    configuration_records,
    download_chunks,
    shared_records,
)
from jouleboard.plan.entities import gpu_page, model_page
from jouleboard.plan.finding import home_card, task_finding
from jouleboard.plan.indexes import compare_page, gpus_index, models_index
from jouleboard.plan.mlperf import mlperf_link, mlperf_part
from jouleboard.plan.releases import (
    ReleaseData,
    atom_feed,
    changelog_page,
    json_feed,
    release_downloads,
)
from jouleboard.plan.task import home_section, task_page
from jouleboard.plan.views import (
    Download,
    DownloadItem,
    DownloadsBody,
    EmbedBody,
    HomeBody,
    Link,
    Page,
    Part,
    Plan,
    ProseBody,
    SiteView,
    TaskView,
    parts,
)
from jouleboard.rank import ranking
from jouleboard.rank.glossary import NoiseScope, glossary_html
from jouleboard.rank.noise import Noise
from jouleboard.render.finding import Finding
from jouleboard.render.markdown import render_markdown


def task_view(data: Dataset, task: str) -> TaskView:
    """One task's public view: kind, units, default deadline and ranking, computed once."""
    reg, info = data.registry, data.registry.tasks[task]
    kind = data.kinds.of(info)
    deadline = ranking.Deadline(info.default_deadline.ms, info.default_deadline.percentile)
    configs = tuple(data.for_task(task))
    noise = data.noise_for(configs)
    accuracy = {
        m: s.accuracy_percent
        for m in sorted({c.model_id for c in configs})
        if (s := reg.accuracy(task, m)) is not None
    }
    return TaskView(
        task,
        info,
        kind,
        kind.units(info),
        deadline,
        configs,
        tuple(ranking.rank(configs, deadline, gpus=set(reg.site.default_gpus), noise=noise)),
        ranking.best_per_model_and_gpu(configs, deadline),
        accuracy,
        noise,
    )


def noise_scopes(site: SiteView) -> list[NoiseScope]:
    """Each measurement-noise estimate with the tasks it serves (in site order) and the GPUs
    those tasks ran on: the glossary's section on noise."""
    scopes: dict[Noise, tuple[dict[str, str], set[str], set[str]]] = {}
    for task, t in site.tasks.items():
        if not t.configs:
            continue
        names, gpus, datasets = scopes.setdefault(t.noise, ({}, set(), set()))
        names[task] = t.info.name
        gpus.update(c.gpu_model for c in t.configs)
        datasets.update(dataset_of(c) for c in t.configs)
    return [
        NoiseScope(noise, names, frozenset(gpus), frozenset(datasets))
        for noise, (names, gpus, datasets) in scopes.items()
    ]


# How each task's finding is had (see :func:`site_view`): made now, or one equal to it.
Found = Callable[[SiteView, TaskView, Callable[[], Finding]], Finding]
# How a text that depends on the code and the kinds alone (the measurement schema) is had,
# by its name: made now, or the one an earlier process made (jouleboard/engine/kept_parts.py).
Text = Callable[[str, Callable[[], str]], str]


def text_now(name: str, make: Callable[[], str]) -> str:
    """A text, made now."""
    return make()


def found_now(site: SiteView, t: TaskView, make: Callable[[], Finding]) -> Finding:
    """A task's finding, made now."""
    return make()


def site_view(data: Dataset, urls: Urls, found: Found = found_now) -> SiteView:
    """The data as the plan reads it: each task's view and finding, the records by model.
    ``found`` gives each finding: made now, or one equal to it (a finding an earlier process
    made from the same task view, registry, URLs and MLPerf results:
    jouleboard/engine/kept_parts.py)."""
    by_model: dict[str, dict[str, list[Record]]] = {}
    for c in data.configurations:
        by_model.setdefault(c.model_id, {}).setdefault(c.task, []).append(c)
    site = SiteView(
        data.registry,
        urls,
        {t: task_view(data, t) for t in data.registry.tasks},
        by_model,
        dict(Counter(c.gpu_model for c in data.configurations)),
        mlperf=data.mlperf,
        kinds=data.kinds,
    )
    findings = {
        t.id: found(site, t, functools.partial(task_finding, site, t)) for t in site.tasks.values()
    }
    return dataclasses.replace(site, findings=findings)


def home_page(site: SiteView) -> Part:
    order = {k: i for i, k in enumerate(site.kinds.order())}
    sections, out = [], Part()
    tasks = sorted(site.tasks.values(), key=lambda t: order[t.info.kind])
    for t in tasks:
        section, part = home_section(site, t)
        sections.append(section)
        out += part
    settings = site.registry.site
    gpus = measured_gpus(settings.default_gpus, (c for t in site.tasks.values() for c in t.configs))
    ranked_by = efficiency_phrase(t.units for t in site.tasks.values())
    window = window_words(c.provenance for t in site.tasks.values() for c in t.configs)
    intro = (
        "Each row is a model's most energy-efficient serving configuration that still "
        f"meets the latency deadline: the one that produces the most {ranked_by} of GPU "
        "energy. Energy is measured on the GPUs only"
        + (f", {window}" if window else "")
        + (f", in serving benchmarks on {in_words(gpus)} GPUs." if gpus else ".")
    )
    return out + Part(
        pages=(
            Page(
                site.urls.home,
                "home.html",
                settings.title,
                settings.tagline or "GPU energy-efficiency leaderboard",
                HomeBody(
                    intro,
                    tuple(sections),
                    mlperf_link(site.mlperf, site.urls),
                    tuple(home_card(site, t) for t in tasks if t.configs),
                    ranked_by,
                ),
            ),
        )
    )


def size_text(size: int) -> str:
    """A file size as people read it: 812 B, 3.1 kB, 2.4 MB."""
    for unit, scale in (("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def downloads_page(urls: Urls, downloads: Sequence[Download]) -> Page:
    """Every published file, grouped as planned (the full data set, each release, each
    task's rankings), one line per file with its formats and row count, and what each of
    their columns means; its sizes are known once the files are made (:func:`sized`)."""
    items: dict[str, dict[str, list[Download]]] = {}
    for d in downloads:
        items.setdefault(d.group, {}).setdefault(d.path.rsplit(".", 1)[0], []).append(d)
    groups = []
    # The data sets first, then each task's rankings (in the order the tasks are planned).
    for group, files in sorted(items.items(), key=lambda g: g[0].startswith("Rankings")):
        lines = []
        for stem, same in files.items():
            links = tuple(Link(d.path.rsplit(".", 1)[-1].upper(), urls.url(d.path)) for d in same)
            name = stem.removeprefix("downloads/").removeprefix("rankings/").removeprefix("data/")
            sizes = tuple(d.path for d in same)
            lines.append(
                DownloadItem(name, same[0].description, len(same[0].records), links, sizes)
            )
        groups.append((group, tuple(lines)))
    schema = DownloadItem(
        "measurement.schema.json",
        "JSON Schema of a measurement file",
        None,
        (Link("JSON", urls.url(urls.schema_download)),),
    )
    return Page(
        urls.downloads,
        "downloads.html",
        "Downloads",
        "Every ranking and the full data set as CSV and JSON.",
        DownloadsBody((*groups, ("Format", (schema,))), column_lines(downloads)),
    )


def sized(page: Page, size_of: Callable[[str], int]) -> Page:
    """``page`` with the size of each file it offers in that file's label ("CSV, 3.1 kB"),
    as ``size_of(output path)`` gives it in bytes: the downloads page's sizes are known once
    the files are made, so a build made from the last one's files need not make them again
    to size them. Any other page is returned as it is."""
    if not isinstance(page.body, DownloadsBody):
        return page
    groups = tuple(
        (title, tuple(_sized(item, size_of) for item in items)) for title, items in page.body.groups
    )
    return dataclasses.replace(page, body=dataclasses.replace(page.body, groups=groups))


def _sized(item: DownloadItem, size_of: Callable[[str], int]) -> DownloadItem:
    if not item.sizes:  # not a file of the build's (the schema)
        return item
    files = tuple(
        dataclasses.replace(link, label=f"{link.label}, {size_text(size_of(path))}")
        for link, path in zip(item.files, item.sizes, strict=True)
    )
    return dataclasses.replace(item, files=files, sizes=())


def download_size(download: Download) -> int:
    """The bytes of a download's file, made to count them (for :func:`sized` before the
    build has made it)."""
    return sum(len(chunk.encode()) for chunk in download_chunks(download))


def measurement_schema_text(kinds: Kinds) -> str:
    """The published JSON Schema of a measurement file (any of ``kinds``: plan/schemas.py)."""
    from jouleboard.plan.schemas import schema_text

    return schema_text("measurement", kinds)


def sitemap(urls: Urls, pages: Sequence[Page]) -> str:
    entries = "".join(
        f"  <url><loc>{markup(urls.absolute(p.path))}</loc></url>\n"
        for p in sorted(pages, key=lambda p: p.path)
        if p.in_sitemap
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{entries}</urlset>\n"
    )


def release_part(
    releases: Sequence[ReleaseData], urls: Urls, title: str, rows: Records = configuration_records
) -> Part:
    if not releases:
        return Part()
    return Part(
        pages=(changelog_page(releases, urls, rows),),
        downloads=tuple(release_downloads(releases, urls, rows)),
        files=(
            (urls.atom_feed, atom_feed(releases, urls, title)),
            (urls.json_feed, json_feed(releases, urls, title)),
        ),
    )


@dataclasses.dataclass(frozen=True)
class Route:
    """A part made one per page (home, task, model or GPU page): the output path it makes (a
    task's: the folder of its pages), how, and the tasks whose data it reads (None: every
    task's), besides the registry, the URLs and the MLPerf results."""

    path: str
    make: Callable[[], Part]
    tasks: tuple[str, ...] | None


def made_now(site: SiteView, route: Route) -> Part:
    """A route's part, made now (see :func:`plan_site`'s ``made``)."""
    return route.make()


def plan_site(
    data: Dataset,
    urls: Urls,
    releases: Sequence[ReleaseData] = (),
    about_md: str | None = None,
    own: Sequence[OwnPage] = (),
    made: Callable[[SiteView, Route], Part] = made_now,
    found: Found = found_now,
    text: Text = text_now,
) -> Plan:
    """Every output of the site as values (pure: the caller has read every input).
    ``made`` gives each route's part, ``found`` each task's finding and ``text`` the
    measurement schema: made now, or one equal to it (made by an earlier process from the
    same reads: jouleboard/engine/kept_parts.py)."""
    site = site_view(data, urls, found)
    model_ids = sorted(site.by_model)
    part = parts(made(site, route) for route in page_routes(site))
    part += compare_page(site) + models_index(site, model_ids) + gpus_index(site)
    part += mlperf_part(data.mlperf, urls, data.registry)
    rows = shared_records()
    part += Part(
        downloads=tuple(
            configuration_downloads(
                data,
                urls.configurations_download,
                "Full data set",
                "every validated configuration, one row each",
                rows,
            )
        )
    )
    part += release_part(releases, urls, data.registry.site.title, rows)
    part += Part(
        pages=(
            Page(
                urls.glossary,
                "prose.html",
                "Glossary",
                "What each term in the tables, charts and findings means.",
                ProseBody(glossary_html(noise_scopes(site))),
            ),
        )
    )
    if about_md is not None:
        part += Part(pages=(about_page(urls, about_md),))
    part += Part(pages=tuple(own_page(urls, page) for page in own))
    return finish(part, urls, data.kinds, text)


def page_routes(site: SiteView) -> list[Route]:
    """The parts made one per page (home, task, model and GPU pages), in plan order."""
    urls = site.urls
    routes = [Route(urls.home, functools.partial(home_page, site), None)]
    routes += [
        Route(
            urls.task(t.id).removesuffix("index.html"),
            functools.partial(task_page, site, t),
            (t.id,),
        )
        for t in site.tasks.values()
    ]
    routes += [
        Route(
            urls.model(m),
            functools.partial(model_page, site, m),
            tuple(t for t in site.tasks if t in site.by_model[m]),
        )
        for m in sorted(site.by_model)
    ]
    routes += [
        Route(urls.gpu(g), functools.partial(gpu_page, site, g), None)
        for g in sorted(site.registry.gpus)
    ]
    return routes


def part_for(site: SiteView, path: str, about_md: str | None = None) -> Part | None:
    """The part of the plan that makes the page at output ``path`` alone, as
    :func:`plan_site` makes it: a home, task, model, GPU or about page; None for any other
    page (those come from the whole plan)."""
    if path == site.urls.about and about_md is not None:
        return Part(pages=(about_page(site.urls, about_md),))
    for route in page_routes(site):
        if path == route.path or (route.path.endswith("/") and path.startswith(route.path)):
            return route.make()
    return None


def own_page(urls: Urls, page: OwnPage) -> Page:
    """A page of the site's own (content/<name>.md), rendered as about.md is."""
    return Page(
        urls.page(page.name),
        "prose.html",
        page.title,
        page.title,
        ProseBody(render_markdown(page.markdown)),
    )


def about_page(urls: Urls, about_md: str) -> Page:
    """content/about.md as the about page."""
    return Page(
        urls.about,
        "prose.html",
        "About and methodology",
        "What jouleboard measures and how it ranks.",
        ProseBody(render_markdown(about_md)),
    )


def finish(part: Part, urls: Urls, kinds: Kinds, text: Text = text_now) -> Plan:
    """The outputs every site has whatever its pages: embeds, downloads page, 404, sitemap,
    robots.txt and the schema (``text`` gives it: see :func:`plan_site`)."""
    draft = Plan.of(part)
    embeds = tuple(
        Page(
            urls.embed(cid),
            "embed.html",
            chart.title,
            chart.alt,
            EmbedBody(chart),
            in_sitemap=False,
        )
        for cid, chart in sorted(draft.charts.items())
    )
    not_found = Page(
        urls.not_found,
        "prose.html",
        "Page not found",
        "Page not found.",
        ProseBody(
            "<p>There is no page at this address. The "
            f'<a href="{markup(urls.url(urls.home))}">leaderboard</a> links to '
            "every task, model and GPU.</p>"
        ),
        in_sitemap=False,
    )
    pages = (*draft.pages, *embeds, downloads_page(urls, draft.downloads), not_found)
    # robots.txt may only name the sitemap with an absolute URL: when the origin is known.
    sitemap_line = f"Sitemap: {urls.absolute(urls.sitemap)}\n" if urls.origin else ""
    return Plan.of(
        part
        + Part(
            pages=pages[len(draft.pages) :],
            files=(
                (urls.sitemap, sitemap(urls, pages)),
                ("robots.txt", f"User-agent: *\nAllow: /\n{sitemap_line}"),
                (
                    urls.schema_download,
                    text("measurement schema", functools.partial(measurement_schema_text, kinds)),
                ),
            ),
        )
    )
