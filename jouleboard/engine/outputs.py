"""The products of a plan: assets, charts (rendered through the disk cache of
:mod:`jouleboard.render.chart_files`), downloads and the page frame. Whether a product is
made again is :mod:`jouleboard.engine.fresh`'s to say."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from jouleboard.config.schema import SiteSettings
from jouleboard.core.console import SILENT, Progress
from jouleboard.core.jsonio import dumps_canonical
from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.shapes import JsonObject
from jouleboard.core.urls import Urls
from jouleboard.engine.fresh import Content, Products, content_of, key_of
from jouleboard.engine.kept_parts import KnownInfos
from jouleboard.engine.sources import Sources
from jouleboard.output.writer import LastFile
from jouleboard.plan.downloads import download_chunks
from jouleboard.plan.views import ChartRef, Download, Link
from jouleboard.render import charts as charts_present
from jouleboard.render.chart_files import Pool, Renders, start_renders
from jouleboard.render.embeds import ChartInfo, chart_csv, chart_info, oembed
from jouleboard.render.markdown import render_markdown
from jouleboard.render.pages import ASSETS_MAX_BYTES, SiteContext, navigation, read_asset

_SVG_SIZE = re.compile(r'<svg[^>]*?width="(\d+)"[^>]*?height="(\d+)"')


PHONE = "~phone"  # the render id of a chart's phone render


def _svg_size(svg: str) -> tuple[int, int]:
    match = _SVG_SIZE.search(svg)
    return (int(match.group(1)), int(match.group(2))) if match else (640, 400)


def _digest(content: str) -> str:
    import hashlib

    return hashlib.sha256(content.encode()).hexdigest()[:10]


def _hashed(name: str, content: str) -> str:
    stem, _, ext = name.rpartition(".")
    return f"{stem}-{_digest(content)}.{ext}"


SCRIPTS = "js"  # templates/assets/js/: the browser code, ES modules importing each other
ENTRY_MODULES = ("site.js", "task.js", "compare.js")  # the modules pages load


def script_modules(themes: Sequence[Path]) -> dict[str, str]:
    """Each module of templates/assets/js/ by name, sorted: the built-in folder lists them,
    and a theme's file of the same name replaces one (its package.json, which tells Node the
    folder holds ES modules, is not published)."""
    from jouleboard.core.resources import templates_dir

    names = sorted(p.name for p in (templates_dir() / "assets" / SCRIPTS).glob("*.js"))
    return {name: read_asset(f"{SCRIPTS}/{name}", themes) for name in names}


def _module_folder(modules: Mapping[str, str]) -> str:
    """The published folder of the modules: one hash of them all in its name, so a module's
    relative imports (./table.js) hold under any hash and a change to any one of them
    gives the folder a new name."""
    listing = "".join(f"{name}\0{len(text)}\0{text}" for name, text in sorted(modules.items()))
    return f"{SCRIPTS}-{_digest(listing)}"


def asset_files(
    sources: Sources, bundle: str, urls: Urls
) -> tuple[dict[str, str | bytes], dict[str, str]]:
    """The site's assets by output path (names carry a content hash), and each asset's
    hashed name by its plain one (``vega`` for the Vega bundle; ``site.js``, ``task.js``
    and ``compare.js`` for the entry modules)."""
    names = {"vega": _hashed("vega.js", bundle)}
    files: dict[str, str | bytes] = {urls.asset(names["vega"]): bundle}
    text = read_asset("style.css", sources.themes)
    names["style.css"] = _hashed("style.css", text)
    files[urls.asset(names["style.css"])] = text
    modules = script_modules(sources.themes)
    folder = _module_folder(modules)
    for name, text in modules.items():
        files[urls.asset(f"{folder}/{name}")] = text
    names |= {name: f"{folder}/{name}" for name in ENTRY_MODULES}
    files["favicon.svg"] = read_asset("favicon.svg", sources.themes)
    logo = sources.data.registry.site.logo
    if logo:
        files[urls.asset(logo)] = sources.logo
    vega = urls.asset(names["vega"])
    own = sum(len(c.encode() if isinstance(c, str) else c) for p, c in files.items() if p != vega)
    if own > ASSETS_MAX_BYTES:  # each is capped; a theme of many could still be large
        raise ValidationFailed(
            [
                Problem(
                    shown_path(sources.themes[0] / "assets"),
                    "",
                    "file.too-large",
                    f"the site's assets (style.css, js/, favicon.svg, the logo) hold {own:,} "
                    f"bytes, over the {ASSETS_MAX_BYTES:,}-byte cap",
                    "make them smaller; publish large files from static/ or elsewhere",
                )
            ]
        )
    return files, names


def chart_specs(charts: Mapping[str, ChartRef]) -> dict[str, JsonObject]:
    """What to render for ``charts``: each chart's static spec, and its phone render under
    ``<id>~phone``, without the label limits no label reaches (render/charts.py uncut)."""
    images = {cid: charts_present.static(ref.spec) for cid, ref in charts.items()}
    phones = {f"{cid}{PHONE}": charts_present.phone(spec) for cid, spec in images.items()}
    return {cid: charts_present.uncut(spec) for cid, spec in (images | phones).items()}


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
    info = chart_info(chart, _svg_size(svg), urls, settings, _svg_size(phone), png, sources)
    contents: list[str | bytes] = [
        svg,
        phone,
        *((exports[(cid, "png")],) if png else ()),
        dumps_canonical(chart.spec),
        chart_csv(chart.spec),
        dumps_canonical(oembed(chart, info, urls, settings)),
    ]
    return dict(zip(chart_paths(chart, urls, png), contents, strict=True)), info


CHART_BATCH = 500  # charts rendered, then added, at a time (their renders are in memory)
IN_PROCESS_BATCH = 7  # render_charts renders fewer than 8 uncached specs in this process
MANY_RENDERS = 40  # more specs than this: worker processes are worth starting

Add = Callable[[str, Content | LastFile], None]
Batch = list[tuple[ChartRef, str]]  # charts to make, each with its key
Exports = dict[tuple[str, str], bytes]  # (render id, format) -> bytes
Arrivals = Iterator[tuple[tuple[str, str], bytes]]  # Exports' items, as each is made


def chart_paths(chart: ChartRef, urls: Urls, png: bool) -> tuple[str, ...]:
    """The output paths of one chart's files, in the order :func:`chart_output` makes them
    (the SVG and phone SVG first)."""
    cid = chart.id
    exts = ("svg", "phone.svg", *(("png",) if png else ()), "vl.json", "csv")
    return (*(urls.chart(cid, ext) for ext in exts), urls.oembed(cid))


def chart_context(urls: Urls, settings: SiteSettings, png: bool, sources: str) -> object:
    """What every chart's files depend on besides the chart: what its embed and citation
    show, the chart renderer's version and the system's fonts, with which a chart that
    vl-convert's own font cannot draw is drawn (computed once per build, not per chart)."""
    from importlib.metadata import version

    from jouleboard.core.fonts import system_fonts

    return (urls, _fields(settings), png, sources, version("vl-convert-python"), system_fonts())


def _fields(value: object) -> object:
    """``value`` (the site's settings) as plain values for a key: each model as its class
    and its fields in order, sets sorted. Not ``model_dump_json``: a model's serializer is
    made on its first use, 13 ms of a rebuild (jouleboard/config/schema.py defers it)."""
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        return (type(value).__qualname__, tuple((n, _fields(getattr(value, n))) for n in fields))
    if isinstance(value, list | tuple):
        return tuple(_fields(item) for item in value)
    if isinstance(value, set | frozenset):
        return tuple(sorted(_fields(item) for item in value))  # type: ignore[type-var]
    if isinstance(value, dict):
        return tuple((k, _fields(v)) for k, v in value.items())
    return value


def chart_key(chart: ChartRef, context: object, basis: str) -> str:
    """The key of one chart's files: its view, ``context`` (see :func:`chart_context`) and
    ``basis`` (the code that themes and wraps the render)."""
    return key_of((chart, context), basis)


def start_charts(
    add: Add,
    charts: Mapping[str, ChartRef],
    urls: Urls,
    settings: SiteSettings,
    png: bool,
    products: Products,
    basis: str,
    cache: Path,
    pool: Pool,
    progress: Progress = SILENT,
    sources: str = "",
    known: KnownInfos | None = None,
) -> Charts:
    """Pass to ``add`` the files of every chart whose key is the last build's, and start
    the renders of the others where workers make them: the caller can then make what
    shows none of those before :meth:`Charts.finish` adds them (and add more charts with
    :meth:`Charts.extend` meanwhile). ``known``: what pages need of each chart, as an
    earlier process made it (each chart's is noted there too)."""
    made = _Maker(add, urls, settings, png, products, cache, pool, progress, sources, known)
    started = Charts(made, chart_context(urls, settings, png, sources), basis)
    started.extend(charts)
    return started


class _Maker:
    """How :class:`Charts` makes a batch of charts: its renders, then its files."""

    def __init__(
        self,
        add: Add,
        urls: Urls,
        settings: SiteSettings,
        png: bool,
        products: Products,
        cache: Path,
        pool: Pool,
        progress: Progress,
        sources: str,
        known: KnownInfos | None = None,
    ) -> None:
        self.add, self.urls, self.settings, self.png = add, urls, settings, png
        self.products, self.cache, self.pool = products, cache, pool
        self.progress, self.sources, self.known = progress, sources, known

    def sort(
        self, charts: Mapping[str, ChartRef], context: object, basis: str
    ) -> tuple[dict[str, ChartInfo], Batch]:
        """Pass to ``add`` the files of each chart whose key is the last build's; what pages
        need of those, by id, and the others with their keys (to make)."""
        taken: dict[str, ChartInfo] = {}
        stale: Batch = []
        for cid in sorted(charts):
            chart = charts[cid]
            key = chart_key(chart, context, basis)
            paths = chart_paths(chart, self.urls, self.png)
            found = [self.products.take_file(path, key) for path in paths]
            files = [file for file in found if file is not None]
            # What pages need of the chart: as an earlier process made it with this key, else
            # from the SVGs, read for the chart's sizes. They are added as files all the same
            # (linked by the commit, never held or spooled: at 10,000 configurations, 1,512
            # taken SVGs went to the spool folder, 0.3 s, only to be linked from the last
            # build's site).
            info = None
            if len(files) == len(paths):  # every file is the last build's
                info = self.known.get(cid, key) if self.known is not None else None
                if info is None:
                    info = self._info(chart, content_of(files[0]), content_of(files[1]))
            if info is None:
                stale.append((chart, key))
                continue
            for path, content in zip(paths, files, strict=True):
                self.add(path, content)
            taken[cid] = info
            if self.known is not None:
                self.known.note(cid, key, info)
        return taken, stale

    def _info(
        self, chart: ChartRef, svg: Content | None, phone: Content | None
    ) -> ChartInfo | None:
        """What pages need of ``chart``, given its SVGs (None if either is gone)."""
        if svg is None or phone is None:
            return None
        return chart_info(
            chart,
            _svg_size(_text(svg)),
            self.urls,
            self.settings,
            _svg_size(_text(phone)),
            self.png,
            self.sources,
        )

    def start(self, batch: Batch, label: str) -> Callable[[], Arrivals]:
        """The batch's renders, started where workers make them; returns what waits."""
        shown = _Labelled(self.progress, label) if label else self.progress
        charts = {chart.id: chart for chart, _ in batch}
        return _start_render(charts, self.png, self.cache, shown, self.pool)

    def files(
        self, batch: Batch, arrivals: Arrivals, made: Callable[[str, ChartInfo], object]
    ) -> None:
        """Pass each chart's files to ``add`` as soon as its renders have arrived, then
        what pages need of it to ``made``."""
        charts = {chart.id: (chart, key) for chart, key in batch}
        awaited = {cid: set(self._renders(cid)) for cid in charts}
        exports: Exports = {}
        for item, content in arrivals:
            cid = item[0].removesuffix(PHONE)
            if item in awaited.get(cid, ()):
                exports[item] = content
                awaited[cid].discard(item)
                if not awaited[cid]:
                    self._make(*charts.pop(cid), exports, made)
        for chart, key in charts.values():  # (none left: a missing render raises KeyError)
            self._make(chart, key, exports, made)

    def _renders(self, cid: str) -> list[tuple[str, str]]:
        """The exports a chart's files are made from (see :func:`chart_output`)."""
        return [(cid, "svg"), (f"{cid}{PHONE}", "svg"), *([(cid, "png")] if self.png else [])]

    def _make(
        self,
        chart: ChartRef,
        key: str,
        exports: Exports,
        made: Callable[[str, ChartInfo], object],
    ) -> None:
        files, info = chart_output(chart, exports, self.urls, self.settings, self.png, self.sources)
        for path, content in files.items():
            self.products.made_now(path, key, content)
            self.add(path, content)
        for render in self._renders(chart.id):
            del exports[render]  # (a batch's renders are let go of chart by chart)
        if self.known is not None:
            self.known.note(chart.id, key, info)
        made(chart.id, info)


class Charts:
    """A plan's charts under way (:func:`start_charts`). ``infos``: what pages need of each
    chart made so far (taken from the last build, or drawn), by id; :meth:`finish` makes
    the others :data:`CHART_BATCH` at a time (only so many renders are in memory). A
    batch's renders start as its charts are added (:meth:`extend`) while fewer than that
    are under way, else when :meth:`finish` comes to it."""

    def __init__(self, maker: _Maker, context: object, basis: str) -> None:
        self.infos: dict[str, ChartInfo] = {}
        # Each batch to make, with its renders once they are started.
        self.batches: list[tuple[Batch, Callable[[], Arrivals] | None]] = []
        self._added: set[str] = set()  # the id of every chart added, made or not
        self.maker, self.context, self.basis = maker, context, basis

    def extend(self, charts: Mapping[str, ChartRef]) -> None:
        """Take the files of ``charts`` whose key is the last build's (see
        :func:`start_charts`); queue the others, their renders started at once while
        fewer than :data:`CHART_BATCH` charts' renders are under way. A chart added
        before is passed over."""
        new = {cid: chart for cid, chart in charts.items() if cid not in self._added}
        taken, stale = self.maker.sort(new, self.context, self.basis)
        self.infos |= taken
        self._added.update(new)
        first = len(self.batches)
        self.batches += [
            (stale[i : i + CHART_BATCH], None) for i in range(0, len(stale), CHART_BATCH)
        ]
        under_way = sum(len(batch) for batch, renders in self.batches[:first] if renders)
        for number in range(first, len(self.batches)):
            batch = self.batches[number][0]
            earlier_waits = number > 0 and self.batches[number - 1][1] is None
            if earlier_waits or (under_way and under_way + len(batch) > CHART_BATCH):
                break  # it starts when finish() comes to it
            self.batches[number] = (batch, self.maker.start(batch, self._label(number + 1)))
            under_way += len(batch)

    @property
    def unmade(self) -> frozenset[str]:
        """The ids of the charts :meth:`finish` has yet to make."""
        return frozenset(chart.id for batch, _ in self.batches for chart, _ in batch)

    def finish(self, drawn: Callable[[str], object] = lambda cid: None) -> dict[str, ChartInfo]:
        """Make every chart not taken, passing its files to ``add`` and then its id to
        ``drawn`` as soon as its renders have arrived (the pages that waited only for it
        can be made while the workers draw the rest); what pages need of every chart, by
        id."""

        def made(cid: str, info: ChartInfo) -> None:
            self.infos[cid] = info
            drawn(cid)

        for number, (batch, renders) in enumerate(self.batches, 1):
            arrivals = (renders or self.maker.start(batch, self._label(number)))()
            self.maker.files(batch, arrivals, made)
        self.batches = []
        return self.infos

    def _label(self, number: int) -> str:
        """Which batch, when there are several ("rendering charts (batch 2 of 13)")."""
        return f"batch {number} of {len(self.batches)}" if len(self.batches) > 1 else ""


def _start_render(
    charts: Mapping[str, ChartRef], png: bool, cache: Path, progress: Progress, pool: Pool
) -> Callable[[], Arrivals]:
    """The renders of ``charts`` (see :func:`chart_specs`), started if workers make them;
    returns what waits for them. Without running workers, a few go in batches that
    render_charts renders in this process, whose renderer is warm (a worker costs ~0.5 s
    to start: an edit in serve); many go to render_charts whole, which spreads them over
    worker processes."""
    items = sorted(chart_specs(charts).items())
    formats = ("svg", "png") if png else ("svg",)

    def start(batch: list[tuple[str, JsonObject]]) -> Renders:
        phone = frozenset(cid for cid, _ in batch if cid.endswith(PHONE))
        return start_renders(dict(batch), formats, cache, progress, phone, pool)

    if len(items) > MANY_RENDERS:
        pool.widen()  # (a rebuild readies one worker for the few renders an edit makes)
    if pool.started or len(items) > MANY_RENDERS:
        return start(items).arrivals

    def in_process() -> Arrivals:
        for at in range(0, len(items), IN_PROCESS_BATCH):
            yield from start(items[at : at + IN_PROCESS_BATCH]).arrivals()

    return in_process


def _text(content: Content) -> str:
    return content.decode("utf-8") if isinstance(content, bytes) else content


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
    sources: Sources,
    urls: Urls,
    names: Mapping[str, str],
    preview: bool,
    measured: tuple[str, str],
) -> SiteContext:
    """What every page's frame shows; ``names``: the hashed asset names; ``measured``: the
    data sets measured (:func:`~jouleboard.render.citation.measured_by`, short) and the part
    of each run their energy covers (:func:`~jouleboard.measure.units.window_words`)."""
    settings = sources.data.registry.site

    def asset(name: str) -> str:
        return urls.url(urls.asset(names[name]))

    return SiteContext(
        measured_by=measured[0],
        energy_window=measured[1],
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
        task_js_url=asset("task.js"),
        compare_js_url=asset("compare.js"),
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
