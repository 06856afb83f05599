"""The committed data/ with site.yaml ``table_rows: 5``, built once per test session: every
task has more models than that, so its task and GPU pages are cut to their first rows and
get full views (tests/test_page_size.py, tests/browser/test_top_rows.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sitebuild import REPO, build_once

TABLE_ROWS = 5


def cut_data(folder: Path) -> Path:
    """A copy of data/ in ``folder`` whose site.yaml sets table_rows to :data:`TABLE_ROWS`."""
    data = folder / "data"
    shutil.copytree(REPO / "data", data)
    site = data / "site.yaml"
    site.write_text(
        site.read_text(encoding="utf-8") + f"table_rows: {TABLE_ROWS}\n", encoding="utf-8"
    )
    return data


def build_cut(folder: Path) -> None:
    """``folder``/data (:func:`cut_data`) and its site, ``folder``/site."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "jouleboard",
            "build",
            "--data",
            str(cut_data(folder)),
            "--out",
            str(folder / "site"),
            "-q",
        ],
        cwd=REPO,
        check=True,
    )


def cut_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(data folder, built site) of :func:`cut_data`, built at most once per test run (one
    build shared by every xdist worker: tests.sitebuild.build_once)."""
    folder = build_once(tmp_path_factory, "cut-site", build_cut)
    return folder / "data", folder / "site"
