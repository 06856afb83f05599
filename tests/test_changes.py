"""Which inputs an edit touched, as serve sorts the paths its watcher reports
(jouleboard/engine/state.py ``Changes.of``): a path in the data folder, content/ or
templates/ touches that input alone; any other path (static/, whose files are published
as they are; a folder whose name only begins like one of them) touches everything, so
nothing it feeds is left stale."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jouleboard.engine.state import EVERYTHING, Changes

DATA = Changes(data=True, content=False, templates=False)
CONTENT = Changes(data=False, content=True, templates=False)
TEMPLATES = Changes(data=False, content=False, templates=True)


@pytest.mark.parametrize(
    ("where", "touched"),
    [
        ("data/measurements/gpqa/a.json", DATA),
        ("data/models.yaml", DATA),
        ("data", DATA),  # the folder itself
        ("content/about.md", CONTENT),
        ("templates/base.html", TEMPLATES),
        ("data-old/models.yaml", EVERYTHING),  # begins like data/, lies outside it
        ("templates.bak/base.html", EVERYTHING),
        ("static/logo.svg", EVERYTHING),  # serve watches static/ too
    ],
)
def test_a_path_touches_the_input_whose_folder_holds_it(
    tmp_path: Path, where: str, touched: Changes
) -> None:
    path = os.path.abspath(tmp_path / where)
    assert Changes.of([path], tmp_path / "data", tmp_path) == touched


def test_paths_in_several_inputs_touch_each() -> None:
    project = Path("/site")
    paths = ["/site/data/gpus.yaml", "/site/templates/task.html"]
    touched = Changes.of(paths, project / "data", project)
    assert touched == Changes(data=True, content=False, templates=True)
    assert Changes.of([], project / "data", project) == Changes(False, False, False)
