"""Build the default site once per test session, shared by the link check and the browser tests
(with --png, as the deploy workflow builds it: every output the site can have)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

_site: Path | None = None


def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the site built from the committed data/ (built at most once per session).

    The build is cached in a module variable and, should this module be imported twice under
    two names, by a marker file in the session's base temporary folder.
    """
    global _site
    if _site is not None:
        return _site
    out = tmp_path_factory.getbasetemp() / "jouleboard-site"
    marker = out.parent / "jouleboard-site.built"
    if not marker.exists():
        subprocess.run([sys.executable, "build.py", "--png", "--out", str(out)], cwd=REPO,
                       check=True)
        if not (out / "index.html").is_file():
            pytest.fail(f"build.py --out {out} produced no index.html")
        marker.write_text("ok\n")
    _site = out
    return out
