"""What a resident ``jouleboard serve`` keeps between edits, so an edit redoes only what it
changed. Every memo is keyed by what its result is computed from (a file's status, the
registries, a chart's spec, a page's value), never by time, so a memoised result is the
one a clean build computes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from jouleboard.config.registry import Registry
from jouleboard.config.schema import SiteSettings
from jouleboard.core.problems import Problem
from jouleboard.core.urls import Urls
from jouleboard.engine.build import chart_output, chart_specs, download_text
from jouleboard.kinds import kinds
from jouleboard.kinds.base import Record
from jouleboard.loading.dataset import MeasurementFile, check_file, read_measurement
from jouleboard.plan.views import ChartRef, Download, Page
from jouleboard.render.chart_files import render_charts
from jouleboard.render.embeds import ChartInfo
from jouleboard.render.pages import SiteContext, render_page

Files = dict[str, str | bytes]
RECENT_NS = 2_000_000_000
IN_PROCESS_BATCH = 7  # render_charts renders fewer than 8 uncached charts in this process
MANY_RENDERS = 40  # more than this: worker processes are worth starting


class MeasurementMemo:
    """Each measurement file read and parsed, by its status (an edited file is read again,
    alone), and checked against the registries while they stay the same. Pass
    :meth:`read` and :meth:`check` to :func:`~jouleboard.loading.dataset.load_dataset`."""

    def __init__(self) -> None:
        self._read: dict[tuple[str, str], tuple[tuple[object, ...], MeasurementFile]] = {}
        self._checked: dict[int, tuple[MeasurementFile, Record | None, list[Problem]]] = {}
        self._registry: Registry | None = None
        self._seen: set[tuple[str, str]] = set()

    def read(self, path: Path, data_root: Path) -> MeasurementFile:
        try:
            st = os.lstat(path)
        except OSError:  # gone or unreadable: read_measurement says so
            return read_measurement(path, data_root)
        key = (str(path), str(data_root))
        # What the result depends on: the file's bytes (status as a proxy: an editor's save
        # changes its inode or times), the working folder (names in messages) and the kinds.
        status = (
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_size,
            st.st_ino,
            st.st_mode,
            os.getcwd(),
            tuple(kinds()),
        )
        self._seen.add(key)
        known = self._read.get(key)
        # A file written in the last seconds is read again: two saves within one tick of
        # the file system's clock (a few ms) can leave the same status.
        settled = time.time_ns() - st.st_mtime_ns > RECENT_NS
        if known is not None and known[0] == status and settled:
            return known[1]
        file = read_measurement(path, data_root)
        self._read[key] = (status, file)
        return file

    def check(
        self, file: MeasurementFile, registry: Registry
    ) -> tuple[Record | None, list[Problem]]:
        if registry is not self._registry:  # compared once per load, not once per file
            if registry != self._registry:
                self._checked.clear()
            self._registry = registry
        known = self._checked.get(id(file))
        if known is not None and known[0] is file:
            return known[1], list(known[2])
        record, problems = check_file(file, registry)
        self._checked[id(file)] = (file, record, problems)
        return record, list(problems)

    def forget_unseen(self) -> None:
        """Drop files not read since the last call (deleted or renamed)."""
        self._read = {k: v for k, v in self._read.items() if k in self._seen}
        live = {id(v[1]) for v in self._read.values()}
        self._checked = {k: v for k, v in self._checked.items() if k in live}
        self._seen = set()


class ChartMemo:
    """Each chart's published files and sizes, by its ChartRef (spec, title, page...);
    renders missing from the disk cache are made in this process (a few) or in worker
    processes started for them (many: see :func:`~jouleboard.render.chart_files.render_charts`)."""

    def __init__(self, cache: Path) -> None:
        self.cache = cache
        self._done: dict[str, tuple[ChartRef, Files, ChartInfo]] = {}
        self._context: tuple[Urls, SiteSettings, str] | None = None

    def outputs(
        self,
        charts: Mapping[str, ChartRef],
        urls: Urls,
        settings: SiteSettings,
        sources: str = "",
    ) -> tuple[Files, dict[str, ChartInfo]]:
        """The files and infos of ``charts`` (SVGs only: serve makes no PNGs); ``sources``:
        the data sets their citations name."""
        if (urls, settings, sources) != self._context:
            self._done.clear()
            self._context = (urls, settings, sources)
        new = {
            cid: ref
            for cid, ref in charts.items()
            if cid not in self._done or self._done[cid][0] != ref
        }
        if new:
            exports = self._render(chart_specs(new), set(new))
            for cid, ref in new.items():
                files, info = chart_output(ref, exports, urls, settings, False, sources)
                self._done[cid] = (ref, files, info)
        out: Files = {}
        infos: dict[str, ChartInfo] = {}
        for cid in sorted(charts):
            out |= self._done[cid][1]
            infos[cid] = self._done[cid][2]
        return out, infos

    def _render(
        self, specs: dict[str, dict[str, Any]], charts: set[str]
    ) -> dict[tuple[str, str], bytes]:
        """SVGs of ``specs`` (``charts``: the ids that are not phone renders). An edit's few
        go in batches that render_charts renders in this process, whose renderer is warm
        (worker processes would cost ~0.5 s each to start, per edit); many (a cold cache)
        go to render_charts whole, which spreads them over worker processes."""
        items = sorted(specs.items())
        batches = (
            [items]
            if len(items) > MANY_RENDERS
            else [items[i : i + IN_PROCESS_BATCH] for i in range(0, len(items), IN_PROCESS_BATCH)]
        )
        exports: dict[tuple[str, str], bytes] = {}
        for batch in batches:
            exports |= render_charts(
                dict(batch),
                ("svg",),
                self.cache,
                svg_only=frozenset(cid for cid, _ in batch if cid not in charts),
            )
        return exports

    def keep_only(self, ids: Iterable[str]) -> None:
        wanted = set(ids)
        self._done = {k: v for k, v in self._done.items() if k in wanted}


class PageMemo:
    """Each page's HTML, by the page's value, for one template environment, page frame and
    set of chart infos (any of those changed: every page is rendered again)."""

    def __init__(self) -> None:
        self._html: dict[str, tuple[Page, str]] = {}
        self._env: jinja2.Environment | None = None  # held, so its id is never reused
        self._frame: tuple[SiteContext, dict[str, ChartInfo]] | None = None

    def render(
        self,
        pages: Sequence[Page],
        env: jinja2.Environment,
        site: SiteContext,
        infos: dict[str, ChartInfo],
        keep: bool = True,
    ) -> dict[str, str]:
        """HTML by output path; ``keep``: remember it (False for a page rendered ahead of
        the rest with infos that may still change)."""
        same = env is self._env and (site, infos) == self._frame
        out = {}
        for page in pages:
            known = self._html.get(page.path) if same else None
            html = (
                known[1]
                if known is not None and known[0] == page
                else render_page(env, page, site, infos)
            )
            out[page.path] = html
        if keep:
            self._html = {p.path: (p, out[p.path]) for p in pages}
            self._env, self._frame = env, (site, dict(infos))
        return out


class DownloadMemo:
    """Each download's text (CSV or JSON), by its records."""

    def __init__(self) -> None:
        self._text: dict[str, tuple[Download, str]] = {}

    def texts(self, downloads: Sequence[Download]) -> dict[str, str]:
        out = {}
        for d in downloads:
            known = self._text.get(d.path)
            out[d.path] = known[1] if known is not None and known[0] == d else download_text(d)
        self._text = {d.path: (d, out[d.path]) for d in downloads}
        return out
