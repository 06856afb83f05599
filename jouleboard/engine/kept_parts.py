"""The parts of the plan an earlier process made one per page (jouleboard/plan/site.py
``Route``: the task and model pages' parts), kept for the next command-line build into the
same output: after one edited measurement, a new process plans again only the parts that
read its task (the task's page and the pages of its models) and takes the others as they
were. Sphinx keeps its environment so; the plan of the default data is 0.2 s, its task and
model pages most of it.

A part is a pure function of what its route reads: the registry, the URLs, the MLPerf
results and the data of the route's tasks (each task's configurations and its measurement
noise). Each kept part is keyed by their digest and the whole by a basis: the kept reads'
(the package's code, the versions of Python and pydantic, the working folder, the data
folder and the kinds: jouleboard/engine/kept.py) with the versions of the libraries that
plan (Altair makes the chart templates, markdown and nh3 the descriptions). Any difference
and the part is made again, so a kept part is one a clean build makes the same. The home and
GPU pages read every task: they are always made (about 0.02 s).

Beside the parts, under names no route has, the same file keeps what else a build would
make again from the same reads: each task's finding (keyed as a route that reads that task
alone), the measurement schema (the basis covers all it depends on), the Markdown texts
rendered, and what pages need of each chart by the chart's key.

The parts are kept as the reads are, in the same frames (:class:`kept.Writer`), in their own
file beside them in the chart cache, and trusted by the same rule.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from jouleboard.engine import kept
from jouleboard.engine.fresh import view_key

if TYPE_CHECKING:
    from collections.abc import Callable

    from jouleboard.plan.site import Route
    from jouleboard.plan.views import Page, Part, SiteView, TaskView
    from jouleboard.render.embeds import ChartInfo
    from jouleboard.render.finding import Finding

T = TypeVar("T")
_MAGIC = b"jouleboard-kept-parts-1\n"
# Libraries whose output a part holds: Altair's chart templates, markdown's HTML as nh3
# cleans it.
_PLANNERS = ("altair", "markdown", "nh3")
# Kept beside the parts, under a name no route has: the Markdown texts builds rendered,
# with their HTML (jouleboard/render/markdown.py), so the next process renders none of them
# again (the home page's task descriptions, the about page...: 0.03-0.05 s, half of it
# making the converter). A text no build has asked for in _RENDERED_BUILDS builds in a row
# is dropped: one edited away, or one of a part taken all that time (rendered again, once,
# when its part is made).
_RENDERED = "\0markdown"
_RENDERED_BUILDS = 64
# Each task's finding (it ranks the task about ten times: 0.03-0.04 s for the bundled data's
# seven) is kept beside the parts too, by this prefix and the task's id, keyed as a route
# that reads that task alone (tests/test_kept_parts.py checks that it reads no other).
_FINDING = "\0finding/"
# A text that depends on the code and the kinds alone (both in the basis): the measurement
# schema (pydantic makes it in 0.01-0.02 s), by this prefix and its name.
_TEXT = "\0text/"
# What pages need of each chart (ChartInfo: its sizes, URLs, embed code), by chart id with
# the chart's key: a chart taken from the last build is then not read back for its sizes
# (580 SVG files of the bundled data, read and checked against their digests: 0.02 s).
_CHARTS = "\0charts"


class KnownInfos:
    """The chart infos an earlier process kept, and those of this build (see _CHARTS)."""

    def __init__(self) -> None:
        self.earlier: dict[str, tuple[str, ChartInfo]] = {}
        self.now: dict[str, tuple[str, ChartInfo]] = {}

    def get(self, cid: str, key: str) -> ChartInfo | None:
        """The info of chart ``cid`` as the earlier process made it with ``key``, or None."""
        known = self.earlier.get(cid)
        return known[1] if known is not None and known[0] == key else None

    def note(self, cid: str, key: str, info: ChartInfo) -> None:
        self.now[cid] = (key, info)


class Reads(Protocol):
    """This build's kept reads (jouleboard/engine/state.py KeptReads): their basis, set when
    the data loads; None before, "" when nothing is kept (a site's kinds)."""

    basis: str | None


def parts_file(cache: Path, out: Path) -> Path:
    """Where the kept parts of builds into ``out`` live, in the chart cache ``cache``."""
    return kept.kept_file(cache, out).with_suffix(".parts")


class KeptParts:
    """One build's route parts through the parts kept at ``path``: pass it to
    :func:`jouleboard.plan.site.plan_site` as ``made``; :meth:`keep` after the build
    succeeded puts this build's parts in place for the next process, :meth:`discard` after
    it failed drops them."""

    def __init__(self, path: Path, reads: Reads) -> None:
        self.path = path
        self.reads = reads  # this build's kept reads: their basis, once the data is loaded
        self.basis: str | None = None  # once the plan starts (the first route)
        self.earlier: kept.Reads = {}
        self.writer: kept.Writer | None = None
        self.made = 0  # parts made anew (the others were taken)
        self.taken = 0
        # The digest of what every route reads (the registry, URLs and MLPerf results, held),
        # and of each task's data, by task id (its view not held: it holds the records).
        self._shared: tuple[tuple[object, ...], str] | None = None
        self._tasks: dict[str, tuple[weakref.ref[TaskView], str]] = {}
        self._view_keys: dict[int, tuple[Page, str]] = {}  # id(page) -> (page, view key)
        # The texts kept rendered: each one's HTML, and the builds in a row that did not ask.
        self._rendered: dict[str, tuple[str, int]] = {}
        self.infos = KnownInfos()  # pass to the build's charts (engine/outputs.py)

    def __call__(self, site: SiteView, route: Route) -> Part:
        if self.basis is None:
            self.start()
        if not self.basis or route.tasks is None:
            return route.make()
        key = self._key(site, route.tasks)
        last = self.earlier.get(route.path)
        if last is not None and last[0] == key:
            kept_part = _unpickled(last[1])
            if kept_part is not None:
                self.taken += 1
                self._add(route.path, key, last[1])
                return self._views(*kept_part)
        part = route.make()
        self.made += 1
        views = tuple(view_key(page) for page in part.pages)
        self._add(route.path, key, pickle.dumps((part, views), protocol=pickle.HIGHEST_PROTOCOL))
        return self._views(part, views)

    def found(self, site: SiteView, t: TaskView, make: Callable[[], Finding]) -> Finding:
        """A task's finding for :func:`jouleboard.plan.site.site_view`'s ``found``: the one an
        earlier process kept for the same reads, else ``make()`` (and kept)."""
        if self.basis is None:
            self.start()
        if not self.basis:
            return make()
        key = self._key(site, (t.id,))
        last = self.earlier.get(_FINDING + t.id)
        if last is not None and last[0] == key:
            with contextlib.suppress(Exception):  # (a damaged pickle: made again)
                kept_finding: Finding = pickle.loads(last[1])
                self._add(_FINDING + t.id, key, last[1])
                return kept_finding
        made = make()
        self.made += 1
        self._add(_FINDING + t.id, key, pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))
        return made

    def text(self, name: str, make: Callable[[], str]) -> str:
        """A text for :func:`jouleboard.plan.site.plan_site`'s ``text``: the one an earlier
        process of the same basis kept, else ``make()`` (and kept)."""
        if self.basis is None:
            self.start()
        if not self.basis:
            return make()
        last = self.earlier.get(_TEXT + name)
        made = last[1].decode("utf-8") if last is not None else make()
        self.made += last is None
        self._add(_TEXT + name, b"", made.encode("utf-8"))
        return made

    def view_key(self, page: Page) -> str | None:
        """The digest of a route page's view (jouleboard/engine/fresh.py :func:`view_key`),
        as the process that made its part computed it; None for another page."""
        known = self._view_keys.get(id(page))
        return known[1] if known is not None and known[0] is page else None

    def keep(self) -> None:
        """Put this build's parts, findings, texts and chart infos in place for the next
        process, if any was made anew or the kept renders or chart infos changed (else the
        kept ones are still the same)."""
        if self.writer is not None:
            from jouleboard.render.markdown import rendered_since  # (imported by start)

            rendered = {text: (html, 0) for text, html in rendered_since().items()}
            for text, (html, unasked) in self._rendered.items():
                if text not in rendered and unasked + 1 < _RENDERED_BUILDS:
                    rendered[text] = (html, unasked + 1)
            data = pickle.dumps(dict(sorted(rendered.items())), pickle.HIGHEST_PROTOCOL)
            self.writer.add(_RENDERED, b"", data)
            infos = pickle.dumps(dict(sorted(self.infos.now.items())), pickle.HIGHEST_PROTOCOL)
            self.writer.add(_CHARTS, b"", infos)
            kept_now = {_RENDERED: data, _CHARTS: infos}
            if self.made or any(
                value != self.earlier.get(name, (b"", b""))[1] for name, value in kept_now.items()
            ):
                self.writer.commit()
        self.discard()

    def discard(self) -> None:
        if self.writer is not None:
            from jouleboard.render.markdown import rendered_since

            rendered_since()  # (stops noting them)
            self.writer.discard()
            self.writer = None

    def start(self) -> None:
        """Take what an earlier process kept (parts, findings, texts, chart infos), if it is
        of this build's basis (once its data is loaded: before the plan renders a text)."""
        from importlib.metadata import PackageNotFoundError, version

        from jouleboard.render.embeds import ChartInfo
        from jouleboard.render.markdown import take_rendered

        reads = self.reads.basis or ""
        try:
            planners = [version(name) for name in _PLANNERS]
        except PackageNotFoundError:  # (vendored, say): nothing to key the parts by
            reads = ""
        if not reads:
            self.basis = ""
            return
        self.basis = hashlib.sha256(repr((reads, planners)).encode()).hexdigest()
        earlier_basis, earlier = kept.recall(self.path, _MAGIC)
        self.earlier = earlier if earlier_basis == self.basis else {}
        self.writer = kept.Writer(self.path, self.basis, _MAGIC)
        self._rendered = _kept_pairs(self.earlier.get(_RENDERED, (b"", b""))[1], int)
        self.infos.earlier = _kept_pairs(self.earlier.get(_CHARTS, (b"", b""))[1], ChartInfo)
        take_rendered({text: html for text, (html, _) in self._rendered.items()})

    def _key(self, site: SiteView, tasks: tuple[str, ...]) -> bytes:
        """The digest of what a route (or a finding) reading ``tasks`` reads."""
        shared = (site.registry, site.urls, site.mlperf)
        held = self._shared[0] if self._shared is not None else ()
        if len(held) != len(shared) or any(a is not b for a, b in zip(held, shared, strict=True)):
            self._shared, self._tasks = (shared, kept.data_key(shared)), {}
        for task in tasks:
            t = site.tasks[task]
            known = self._tasks.get(task)
            if known is None or known[0]() is not t:
                self._tasks[task] = (weakref.ref(t), kept.data_key((task, t.configs, t.noise)))
        assert self._shared is not None
        read = (self._shared[1], *(self._tasks[task][1] for task in tasks))
        return hashlib.sha256("\0".join(read).encode()).digest()

    def _views(self, part: Part, views: tuple[str, ...]) -> Part:
        for page, view in zip(part.pages, views, strict=True):
            self._view_keys[id(page)] = (page, view)
        return part

    def _add(self, path: str, key: bytes, data: bytes) -> None:
        if self.writer is not None:
            self.writer.add(path, key, data)


def _kept_pairs(data: bytes, second: type[T]) -> dict[str, tuple[str, T]]:
    """A mapping kept beside the parts (_RENDERED, _CHARTS): by name, a text and a value of
    type ``second``; none when none was kept or its pickle is damaged."""
    try:
        kept_mapping = pickle.loads(data) if data else {}
        return {
            name: (text, value)
            for name, (text, value) in kept_mapping.items()
            if isinstance(name, str) and isinstance(text, str) and isinstance(value, second)
        }
    except Exception:
        return {}


def _unpickled(data: bytes) -> tuple[Part, tuple[str, ...]] | None:
    """A kept part and its pages' view keys, or None if they cannot be made (a damaged
    pickle)."""
    try:
        part, views = pickle.loads(data)
        if len(views) != len(part.pages):
            return None
    except Exception:
        return None
    return part, views
