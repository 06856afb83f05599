"""The committed data/ with site.yaml ``table_rows: 5``, built once per test session: every
task has more models than that, so its task and GPU pages are cut to their first rows and
get full views (tests/test_page_size.py, tests/browser/test_top_rows.py)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sitebuild import REPO

TABLE_ROWS = 5
_built: tuple[Path, Path] | None = None


def cut_data(folder: Path) -> Path:
    """A copy of data/ in ``folder`` whose site.yaml sets table_rows to :data:`TABLE_ROWS`."""
    data = folder / "data"
    shutil.copytree(REPO / "data", data)
    site = data / "site.yaml"
    site.write_text(site.read_text(encoding="utf-8") + f"table_rows: {TABLE_ROWS}\n",
                    encoding="utf-8")
    return data


def cut_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(data folder, built site) of :func:`cut_data`, built at most once per session."""
    global _built
    if _built is None:
        folder = tmp_path_factory.mktemp("cut-site")
        data = cut_data(folder)
        out = folder / "site"
        subprocess.run([sys.executable, "-m", "jouleboard", "build", "--data", str(data),
                        "--out", str(out), "-q"], cwd=REPO, check=True)
        _built = (data, out)
    return _built
