"""The benchmarks remove what a measurement left only once they end (benchmarks/run.py
``removals_deferred``): removed at once, it slowed the next measured build on a file system
that passes over recently removed inodes. The measured figures depend on it, so it is
checked here: moved aside while deferred, removed at the end (also after an error), removed
at once otherwise, and never followed through a link."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def run() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import run as module  # benchmarks/run.py (the scripts import it so, beside it)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def a_site(folder: Path) -> Path:
    (folder / "models" / "a").mkdir(parents=True)
    (folder / "models" / "a" / "index.html").write_text("<p>a</p>")
    (folder / "index.html").write_text("<p>home</p>")
    return folder


def test_deferred_removals_wait_in_the_trash_until_the_end(run: ModuleType, tmp_path: Path) -> None:
    site, manifest = a_site(tmp_path / "site"), tmp_path / ".site.manifest.json"
    manifest.write_text("{}")
    with run.removals_deferred(tmp_path):
        run.remove(site)
        run.remove(manifest)
        run.remove(tmp_path / "never-made")  # nothing there: nothing to do
        assert not site.exists() and not manifest.exists()
        kept = sorted(
            p.relative_to(tmp_path / ".trash").parts[1:]
            for p in (tmp_path / ".trash").rglob("*")
            if p.is_file()
        )
        assert kept == [
            (".site.manifest.json",),
            ("site", "index.html"),
            ("site", "models", "a", "index.html"),
        ]
        a_site(site)  # the next measurement's folder, made where the last one was
        run.remove(site)  # a second one of the same name does not replace the first
        assert len(list((tmp_path / ".trash").rglob("index.html"))) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_trash_is_emptied_when_a_measurement_fails(run: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), run.removals_deferred(tmp_path):
        run.remove(a_site(tmp_path / "site"))
        raise RuntimeError("a build failed")
    assert list(tmp_path.iterdir()) == []


def test_outside_the_deferral_a_removal_is_at_once(run: ModuleType, tmp_path: Path) -> None:
    run.remove(a_site(tmp_path / "site"))
    assert list(tmp_path.iterdir()) == []


def test_a_link_is_removed_not_what_it_points_to(run: ModuleType, tmp_path: Path) -> None:
    target = a_site(tmp_path / "kept")
    (tmp_path / "link").symlink_to(target, target_is_directory=True)
    run.remove(tmp_path / "link")
    assert not (tmp_path / "link").is_symlink()
    assert (target / "models" / "a" / "index.html").read_text() == "<p>a</p>"
