"""A command-line rebuild after an edited measurement takes its inputs digest in a forked
child while the process imports the pipeline (jouleboard/engine/build.py _digest_beside).
The site is the one a clean build makes; a child that fails leaves the digest to the
process itself, with the same site. (A rebuild with nothing to do still imports nothing of
the pipeline: tests/test_unchanged_rebuild.py.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.golden.tree import DATA, REPO, tree
from tests.sitebuild import copy_chart_cache

pytestmark = pytest.mark.slow  # builds sites in new interpreters

# A new interpreter running `jouleboard build`, each inputs_digest call written to LOG by
# the process that made it ("child" or "parent"), and "start" when a chart worker starts;
# with FAIL set, the child's digest raises.
SCRIPT = textwrap.dedent(
    """
    import os, sys
    import jouleboard.engine.build as build
    parent, real = os.getpid(), build.inputs_digest
    def digest(*args, **kwargs):
        who = "child" if os.getpid() != parent else "parent"
        with open(os.environ["LOG"], "a") as log:
            log.write(who + "\\n")
        if who == "child" and os.environ.get("FAIL"):
            raise RuntimeError("the child fails")
        return real(*args, **kwargs)
    build.inputs_digest = digest
    start = build.Pool.start
    def started(pool, *args, **kwargs):
        with open(os.environ["LOG"], "a") as log:
            log.write("start\\n")
        return start(pool, *args, **kwargs)
    build.Pool.start = started
    from jouleboard.cli import run
    sys.argv = ["jouleboard", "build", "--data", "data", "--out", sys.argv[1]]
    run()
    """
)


@pytest.fixture()
def project(tmp_path: Path, golden_site: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(DATA, root / "data")
    copy_chart_cache(root / "cache", link=True)
    return root


def cli_build(project: Path, out: str, fail: bool = False) -> list[str]:
    """Build ``project``'s data into ``out`` in a new interpreter; which processes took a
    digest, and when a chart worker started, in order."""
    log = project / f"{out}.log"
    log.unlink(missing_ok=True)
    env = {**os.environ, "JOULEBOARD_CACHE": str(project / "cache"), "LOG": str(log)}
    env.pop("FAIL", None)
    if fail:
        env["FAIL"] = "1"
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, out],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return log.read_text().split() if log.exists() else []


def edit_one(project: Path, factor: float) -> None:
    path = sorted((project / "data" / "measurements").rglob("*.json"))[0]
    doc = json.loads(path.read_text())
    doc["metrics"]["median_itl_ms"] *= factor
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize("fail", [False, True], ids=["child", "child-fails"])
def test_an_edit_rebuild_digests_in_a_child_and_equals_a_clean_build(
    project: Path, fail: bool
) -> None:
    cli_build(project, "site")
    edit_one(project, 1.01)
    took = cli_build(project, "site", fail=fail)
    # The child took it; when it failed, the process took it itself afterwards.
    assert [t for t in took if t != "start"] == (["child", "parent"] if fail else ["child"])
    # One chart worker, started on the child's word that a file was edited (which it says
    # before its own check: so before the process's check when the child fails; as to the
    # child's check, either may write first).
    assert took.count("start") == 1
    if fail:
        assert took.index("start") < took.index("parent")
    shutil.rmtree(project / "cache")  # a clean build: nothing kept for any output
    copy_chart_cache(project / "cache", link=True)
    cli_build(project, "clean")
    assert tree(project / "site") == tree(project / "clean")
