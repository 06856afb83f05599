"""A rebuild from unchanged inputs into an intact output does nothing; any change to an
input, an option or the output itself makes it build (and the result equals a clean build)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from jouleboard.engine.build import build_site
from jouleboard.output.folder import OutputRefused
from tests.golden.tree import DATA, REPO
from tests.test_incremental_and_serve import tree


def built_project(tmp_path: Path) -> Path:
    """A site folder (data/, templates/) and its site built once, into project/site."""
    root = tmp_path / "project"
    shutil.copytree(DATA, root / "data")
    (root / "templates").mkdir()
    build_site(root / "data", root / "site", project=root)
    return root


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return built_project(tmp_path)


def stat_of(site: Path) -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(site).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in site.rglob("*")
        if p.is_file()
    }


def test_nothing_changed_touches_nothing(project: Path) -> None:
    site = project / "site"
    before, files = stat_of(site), tree(site)
    again = build_site(project / "data", site, project=project)
    assert again.unchanged and again.written == 0
    assert again.files == len(files) and again.bytes == sum(
        p.stat().st_size for p in site.rglob("*") if p.is_file()
    )
    assert stat_of(site) == before  # not one file rewritten or re-linked
    assert "up to date" in str(again)


def touch_measurement(project: Path) -> None:
    path = next((project / "data" / "measurements").rglob("*.json"))
    doc = json.loads(path.read_text())
    doc["metrics"]["median_itl_ms"] *= 1.001
    path.write_text(json.dumps(doc))


def same_bytes_new_mtime(project: Path) -> None:
    """Content decides, not time stamps: rewriting a file with its own bytes is no change."""
    path = project / "data" / "models.yaml"
    path.write_bytes(path.read_bytes())


def site_template(project: Path) -> None:
    text = (REPO / "templates" / "base.html").read_text()
    (project / "templates" / "base.html").write_text(text.replace("Built with", "Made with"))


def new_data_file(project: Path) -> None:
    src = next((project / "data" / "measurements").rglob("*.json"))
    doc = json.loads(src.read_text())
    doc["serving"]["max_num_seqs"] = 999
    src.with_name("copy-seqs999.json").write_text(json.dumps(doc))


INPUT_CHANGES: list[Callable[[Path], None]] = [touch_measurement, site_template, new_data_file]


@pytest.mark.parametrize("change", INPUT_CHANGES, ids=[c.__name__ for c in INPUT_CHANGES])
def test_an_input_change_builds(
    project: Path, tmp_path: Path, change: Callable[[Path], None]
) -> None:
    change(project)
    again = build_site(project / "data", project / "site", project=project)
    assert not again.unchanged and again.written > 0
    clean = tmp_path / "clean"
    build_site(project / "data", clean, project=project)
    assert tree(project / "site") == tree(clean)


def test_rewriting_a_file_with_its_own_bytes_is_no_change(project: Path) -> None:
    same_bytes_new_mtime(project)
    assert build_site(project / "data", project / "site", project=project).unchanged


@pytest.mark.parametrize(
    "option",
    [{"png": True}, {"base_url": "/sub/"}, {"site_url": "https://example.org"}, {"preview": True}],
)
def test_another_option_builds(project: Path, option: dict[str, object]) -> None:
    """A build with another option runs, and what it reuses from the last build's output
    leaves it equal to a clean build with that option."""
    again = build_site(project / "data", project / "site", project=project, **option)
    assert not again.unchanged and again.written > 0
    build_site(project / "data", project / "clean", project=project, **option)
    assert tree(project / "site") == tree(project / "clean")


@pytest.mark.parametrize("library", ["markdown", "nh3", "altair"])
def test_another_version_of_a_library_that_shapes_the_output_builds(
    project: Path, monkeypatch: pytest.MonkeyPatch, library: str
) -> None:
    """After an upgrade of a library that shapes what is published (Markdown and nh3 make
    a description's HTML, Altair a chart's spec), a build of unchanged inputs runs: with
    the new version a clean build could differ."""
    import importlib.metadata

    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata, "version", lambda name: "0.0.0" if name == library else real(name)
    )
    assert not build_site(project / "data", project / "site", project=project).unchanged


def test_every_runtime_dependency_but_the_importers_own_shapes_the_output() -> None:
    """The libraries whose versions the inputs digest reads are the runtime dependencies
    pyproject.toml declares (and two that come with them: pydantic-core, MarkupSafe), but
    ruamel.yaml, which only the importers use; each is installed under that name."""
    import tomllib

    from jouleboard.engine.fingerprint import OUTPUT_LIBRARIES, _version

    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    names = {
        re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower()
        for d in declared["project"]["dependencies"]
    }
    assert sorted(names - set(OUTPUT_LIBRARIES)) == ["ruamel.yaml"]
    assert sorted(set(OUTPUT_LIBRARIES) - names) == ["markupsafe", "pydantic-core"]
    assert [name for name in OUTPUT_LIBRARIES if _version(name) == "-"] == []


def edited_output(site: Path) -> None:
    (site / "index.html").write_text("defaced")


def added_output(site: Path) -> None:
    (site / "stray.txt").write_text("not the build's")


def removed_output(site: Path) -> None:
    os.unlink(next(site.rglob("*.csv")))


OUTPUT_CHANGES: list[Callable[[Path], None]] = [edited_output, removed_output]


@pytest.mark.parametrize("change", OUTPUT_CHANGES, ids=[c.__name__ for c in OUTPUT_CHANGES])
def test_a_changed_output_is_rebuilt_to_a_clean_build(
    project: Path, tmp_path: Path, change: Callable[[Path], None]
) -> None:
    site = project / "site"
    expected = tree(site)
    change(site)
    again = build_site(project / "data", site, project=project)
    assert not again.unchanged
    assert tree(site) == expected


def test_a_file_added_to_the_output_is_refused_not_deleted(project: Path) -> None:
    """A file the last build did not write is someone's (a CNAME): the build refuses, naming
    it, rather than delete it; once it is gone (moved to static/) the site is rebuilt."""
    site = project / "site"
    expected = tree(site)
    added_output(site)
    with pytest.raises(OutputRefused, match=r"did not make \(stray\.txt\)"):
        build_site(project / "data", site, project=project)
    assert (site / "stray.txt").read_text() == "not the build's"
    (site / "stray.txt").unlink()
    assert build_site(project / "data", site, project=project).unchanged
    assert tree(site) == expected


def test_a_damaged_manifest_builds(project: Path) -> None:
    manifest = project / ".site.manifest.json"
    doc = json.loads(manifest.read_text())
    doc["build"]["pages"] += 1  # the checksum no longer matches
    manifest.write_text(json.dumps(doc))
    assert not build_site(project / "data", project / "site", project=project).unchanged


def test_nothing_to_do_imports_no_pipeline(project: Path) -> None:
    """`jouleboard build` with nothing to do reads the digest, not the data: in a fresh
    interpreter it imports neither the schema (pydantic), the kinds, the plan nor the
    templates (the no-op stays fast because none of them loads)."""
    code = (
        "import sys\n"
        "from jouleboard.cli import main\n"
        f"status = main(['build', '-q', '--data', {str(project / 'data')!r}, "
        f"'--out', {str(project / 'site')!r}])\n"
        "heavy = ['pydantic', 'jinja2', 'jouleboard.kinds', 'jouleboard.plan.views',\n"
        "         'jouleboard.loading.dataset', 'jouleboard.engine.assemble']\n"
        "print(status, [m for m in heavy if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    assert "up to date" in done.stdout
    assert done.stdout.splitlines()[-1] == "0 []"
    # The same interpreter after an edit builds, and then the pipeline is imported.
    touch_measurement(project)
    again = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    assert "built" in again.stdout
    assert "'jouleboard.engine.assemble'" in again.stdout.splitlines()[-1]
