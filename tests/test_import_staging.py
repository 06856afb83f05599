"""An import killed while it commits leaves its staging folder in the data folder (Ctrl-C
cleans it; kill -9 cannot). The next import removes such a folder once it is an hour old,
and nothing else: not a younger one (another import may be at work), not one holding
anything but staged files, not a link or a file of that name."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from jouleboard.importers.contract import ImportPlan, write_plan

HOUR = 3600


def _staging(data: Path, suffix: str, files: dict[str, str], age_s: float) -> Path:
    folder = data / f".jouleboard-staging-{suffix}"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    then = time.time() - age_s
    os.utime(folder, (then, then))
    return folder


def test_the_next_import_removes_what_a_killed_one_left_and_only_that(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    abandoned = _staging(data, "a1b2c3d4", {"0.tmp": "{}", "1.tmp": "{"}, 2 * HOUR)
    empty = _staging(data, "e5f6g7h8", {}, 2 * HOUR)  # killed before it staged a file
    young = _staging(data, "young123", {"0.tmp": "{}"}, 60)
    foreign = _staging(data, "notes_00", {"0.tmp": "{}", "notes.md": "mine"}, 2 * HOUR)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "0.tmp").write_text("{}")
    link = data / ".jouleboard-staging-link0000"
    link.symlink_to(elsewhere)
    odd = data / ".jouleboard-staging-x"  # not a name mkdtemp gives
    odd.mkdir()
    os.utime(odd, (time.time() - 2 * HOUR,) * 2)

    plan = ImportPlan("import-x", files={"m/a.json": json.dumps({"id": 1})})
    assert write_plan(plan, data).written == ("m/a.json",)

    assert not abandoned.exists() and not empty.exists()
    assert sorted(p.name for p in young.iterdir()) == ["0.tmp"]
    assert sorted(p.name for p in foreign.iterdir()) == ["0.tmp", "notes.md"]
    assert link.is_symlink() and (elsewhere / "0.tmp").read_text() == "{}"
    assert odd.is_dir()
    # This import's own staging folder went too.
    left = sorted(p.name for p in data.iterdir() if p.name.startswith(".jouleboard-staging"))
    assert left == sorted(p.name for p in (young, foreign, link, odd))
