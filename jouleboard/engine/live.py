"""The resident site behind ``jouleboard serve``: one :class:`~jouleboard.engine.state.State`
kept in memory from edit to edit and handed to :func:`~jouleboard.engine.build.build`,
the one build engine, with what the edit changed. An update first renders the pages open
in a browser and hands them to ``publish`` (serve then answers their reload at once), then
commits the whole site, so the output folder always equals a clean
``build_site(..., preview=True)`` of the same inputs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from jouleboard.core.jsonio import dumps_canonical
from jouleboard.core.shapes import JsonObject
from jouleboard.core.urls import chart_kind
from jouleboard.engine.build import BuildSummary, Inputs, Publish, build
from jouleboard.engine.outputs import IN_PROCESS_BATCH, chart_specs
from jouleboard.engine.state import Changes, State
from jouleboard.output.folder import output_folder
from jouleboard.plan.views import ChartRef
from jouleboard.render.chart_files import bundled_font_suffices, render_charts

__all__ = ["Changes", "LiveSite", "output_path"]


class LiveSite:
    """Updates of the preview in ``out``; see the module's docstring."""

    def __init__(self, data_dir: Path, out: Path, project: Path, cache: Path) -> None:
        self.inputs = Inputs(data_dir, project, cache=cache, preview=True)
        self.out = out
        self.target = output_folder(out, data=data_dir, project=project, cache=cache, runs=())
        self.state = State(resident=True)

    def warm_up(self) -> None:
        """Start this process's chart renderer now, not at the first edited chart: render
        one chart of each kind the site draws, desktop and phone (before any build, a chart
        of one point), into a private, throw-away cache. A kind's first render compiles its
        code: without this, the first measurement edit's reload came ~75 ms later."""
        built = self.state.built
        specs = warm_up_specs(built.plan.charts) if built is not None else {}
        items = sorted((specs or {"warm-up": POINT}).items())
        with tempfile.TemporaryDirectory(prefix="jouleboard-warm-") as folder:
            for at in range(0, len(items), IN_PROCESS_BATCH):  # in this process, not workers
                render_charts(dict(items[at : at + IN_PROCESS_BATCH]), ("svg",), Path(folder))

    def update(
        self, changes: Changes, waiting: Callable[[], Sequence[str]], publish: Publish
    ) -> BuildSummary:
        """Rebuild what ``changes`` touched: the pages ``waiting()`` names (output paths)
        first, given to ``publish`` with the assets and files they use, then the whole site,
        committed. Raises on invalid data or a template error, before anything is published
        when the pages rendered first meet it; what a failed update touched is redone by
        the next one."""
        summary, self.state = build(
            self.inputs, self.out, self.state, changes=changes, waiting=waiting, publish=publish
        )
        return summary


POINT: JsonObject = {"mark": "point", "data": {"values": [{"x": 1}]}}


def warm_up_specs(charts: Mapping[str, ChartRef]) -> dict[str, JsonObject]:
    """What :meth:`LiveSite.warm_up` renders: the static specs, desktop and phone (see
    :func:`~jouleboard.engine.outputs.chart_specs`), of the first chart of each kind in
    ``charts`` (ids sorted) that this process's renderer draws: one whose text vl-convert's
    own font covers (another goes to a worker: see ``bundled_font_suffices``)."""
    specs: dict[str, JsonObject] = {}
    kinds: set[str] = set()
    for cid in sorted(charts):
        if chart_kind(cid) not in kinds:
            drawn = chart_specs({cid: charts[cid]})
            if all(bundled_font_suffices(dumps_canonical(spec)) for spec in drawn.values()):
                specs |= drawn
                kinds.add(chart_kind(cid))
    return specs


def output_path(url_path: str) -> str:
    """The output file a served URL path names: ``/models/x/`` -> ``models/x/index.html``."""
    path = url_path.lstrip("/")
    return path + "index.html" if path == "" or path.endswith("/") else path
