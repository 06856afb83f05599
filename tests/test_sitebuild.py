"""The test run's shared builds (tests/sitebuild.py): each worker starts a background builder,
and when their collections end together each builder takes the locks of some of the builds.
The browser's walk of the default site then ran while the other builder was still making
that site: it found none (HTTP 404), and a worker walked all 230 pages in a test instead."""

from __future__ import annotations

import fcntl
import threading
import time
from pathlib import Path

import pytest

from tests import sitebuild
from tests.browser import tour


def test_the_walk_waits_for_the_default_site_another_builder_makes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked: list[bool] = []  # whether the default site was finished when the walk began
    monkeypatch.setattr(
        tour, "build_tour", lambda folder: walked.append((tmp_path / "default-site.built").exists())
    )
    made_here: list[Path] = []
    monkeypatch.setattr(sitebuild, "_build_default", made_here.append)
    with open(tmp_path / "default-site.lock", "a") as other:  # the other builder's lock
        fcntl.flock(other, fcntl.LOCK_EX)

        def finish() -> None:
            time.sleep(0.3)
            (tmp_path / "default-site.built").write_text("ok\n")
            fcntl.flock(other, fcntl.LOCK_UN)

        other_builder = threading.Thread(target=finish)
        other_builder.start()
        (tmp_path / "site-tour").mkdir()
        sitebuild._walk_default(tmp_path / "site-tour")
        other_builder.join()
    assert walked == [True]
    assert made_here == []  # waited for, not made again
