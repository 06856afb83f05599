"""A build killed at any moment leaves the output folder as the previous or the new site."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from jouleboard.engine.build import build_site
from tests.golden.tree import DATA, REPO, tree

KILLS = 12
MAX_KILLS = 36


def build(data: Path, out: Path) -> subprocess.Popen[bytes]:
    """A build of ``data`` into ``out``, in a new process whose temp folder is beside
    ``out``: what a killed build leaves there (its chart workers' font folder) stays with
    the test's files."""
    temp = out.parent / "tmp"
    temp.mkdir(exist_ok=True)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jouleboard",
            "build",
            "--data",
            str(data),
            "--out",
            str(out),
            "--project",
            str(REPO),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(temp)},
    )


def test_kill_9_during_builds_never_leaves_a_partial_site(tmp_path):
    new_data = tmp_path / "data"
    shutil.copytree(DATA, new_data)
    site = yaml.safe_load((new_data / "site.yaml").read_text())
    site["title"] = "jouleboard sample, next release"
    (new_data / "site.yaml").write_text(yaml.safe_dump(site))

    out = tmp_path / "site"
    reference_new = tmp_path / "reference-new"
    build_site(new_data, reference_new, project=REPO)  # in this process: no kill lands here
    new = tree(reference_new)
    build_site(DATA, out, project=REPO)
    previous = tree(out)
    assert previous != new
    # How long a build that replaces a site with the other data set takes, as each killed
    # build below does (timed with the charts cached, so kills land before and after the swap).
    timing = [DATA]  # the data set the next timed build puts in place of the other one

    def replacing_build() -> float:
        data = timing[0]
        timing[0] = new_data if data == DATA else DATA
        started = time.perf_counter()
        assert build(data, reference_new).wait(timeout=300) == 0
        return time.perf_counter() - started

    full = replacing_build()

    sites = {DATA: previous, new_data: new}
    rnd = random.Random(20261130)
    outcomes: list[str] = []
    i = 0
    # A parallel test run (pytest-xdist) makes a build's time vary with the other worker's
    # load: past KILLS, kills go on, over a window twice as long, until both outcomes are seen.
    while i < KILLS or (len(set(outcomes)) < 2 and i < MAX_KILLS):
        if i >= KILLS and (i - KILLS) % 6 == 0:
            # Every kill so far landed on one side of the swap: the other worker's load has
            # changed how long a build takes. Time one again, under the load of now.
            full = max(full, replacing_build())
        data = new_data if i % 2 == 0 else DATA  # alternate, so every kill can change it
        before = tree(out)
        proc = build(data, out)
        time.sleep(rnd.uniform(0.05, full * (1.1 if i < KILLS else 2.0)))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        state = tree(out)
        assert state in (before, sites[data]), f"kill {i}: output is neither site"
        outcomes.append("replaced" if state != before else "kept")
        i += 1
    # Leftover staging folders are allowed after a kill; a completed build removes them.
    # A completed build after all the kills still produces the right site and cleans up.
    assert build(new_data, out).wait(timeout=300) == 0
    assert tree(out) == new
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site-")]
    # The kill times must have hit both before and after the swap, or the test proves little.
    assert {"kept", "replaced"} <= set(outcomes), outcomes
