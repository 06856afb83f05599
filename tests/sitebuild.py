"""Site builds shared by the whole test run: each data set is built once per run, not once
per module or per pytest-xdist worker (the fixtures in tests/conftest.py hand them out).

A shared site is read-only for the tests that use it: a test that changes a site or its
inputs builds its own (in its ``tmp_path``, from the smallest data that shows the property).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

_done: dict[str, Path] = {}  # this process's finished shared builds, by name


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder every process of this test run shares: the session's base
    folder, or under pytest-xdist the controller's one, which holds each worker's."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(tmp_path_factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], None]) -> Path:
    """``run_root()/name``, made by ``build(folder)`` at most once per test run.

    Workers take a file lock, so a second worker waits for the first one's build and reuses
    it; a marker written after ``build`` returns tells a finished build from a failed one
    (which the next caller starts again from an empty folder).
    """
    if name in _done:
        return _done[name]
    root = run_root(tmp_path_factory)
    folder, finished = root / name, root / f"{name}.built"
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not finished.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            finished.write_text("ok\n")
    _done[name] = folder
    return folder


def _build_default(folder: Path) -> None:
    # The deploy workflow's command: `python build.py --png`, every output the site can have.
    out = folder / "site"
    subprocess.run([sys.executable, "build.py", "--png", "--out", str(out)], cwd=REPO,
                   check=True)
    if not (out / "index.html").is_file():
        pytest.fail(f"build.py --out {out} produced no index.html")


def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the committed data/ with --png (once per test run)."""
    return build_once(tmp_path_factory, "default-site", _build_default) / "site"


def _build_golden(folder: Path) -> None:
    from jouleboard.build import build_site
    from tests.golden.tree import DATA

    build_site(DATA, folder / "site", project=REPO)


def golden_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from tests/golden/data without --png (once per test run)."""
    return build_once(tmp_path_factory, "golden-site", _build_golden) / "site"


def _build_payloads(folder: Path) -> None:
    from jouleboard.build import build_site
    from tests.payloads import write_payload_data, write_payload_project

    build_site(write_payload_data(folder / "data"), folder / "site",
               project=write_payload_project(folder / "project"))


def payload_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the hostile contributor strings of tests/payloads.py (once per
    test run)."""
    return build_once(tmp_path_factory, "payload-site", _build_payloads) / "site"
