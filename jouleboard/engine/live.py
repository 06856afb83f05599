"""The resident site behind ``jouleboard serve``: one :class:`~jouleboard.engine.state.State`
kept in memory from edit to edit and handed to :func:`~jouleboard.engine.build.build`,
the one build engine, with what the edit changed. An update first renders the pages open
in a browser and hands them to ``publish`` (serve then answers their reload at once), then
commits the whole site, so the output folder always equals a clean
``build_site(..., preview=True)`` of the same inputs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from jouleboard.engine.build import BuildSummary, Inputs, Publish, build
from jouleboard.engine.state import Changes, State
from jouleboard.output.folder import output_folder
from jouleboard.render.chart_files import render_charts

__all__ = ["Changes", "LiveSite", "output_path"]


class LiveSite:
    """Updates of the preview in ``out``; see the module's docstring."""

    def __init__(self, data_dir: Path, out: Path, project: Path, cache: Path) -> None:
        self.inputs = Inputs(data_dir, project, cache=cache, preview=True)
        self.out = out
        self.target = output_folder(out, data=data_dir, project=project, cache=cache, runs=())
        self.state = State(resident=True)

    def warm_up(self) -> None:
        """Start this process's chart renderer now (~1 s), not at the first edited chart:
        a chart no cache holds, rendered into a private, throw-away cache."""
        with tempfile.TemporaryDirectory(prefix="jouleboard-warm-") as folder:
            render_charts(
                {"warm-up": {"mark": "point", "data": {"values": [{"x": 1}]}}},
                ("svg",),
                Path(folder),
            )

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


def output_path(url_path: str) -> str:
    """The output file a served URL path names: ``/models/x/`` -> ``models/x/index.html``."""
    path = url_path.lstrip("/")
    return path + "index.html" if path == "" or path.endswith("/") else path
