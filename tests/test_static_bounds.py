"""static/ within bounds (issue 41 items 4 and 7): its files are copied in chunks under a
documented total cap; a file where the build makes a folder (static/about, static/charts),
a folder where it makes a file (static/index.html/x) or a name that differs from another
only in case (static/INDEX.HTML beside index.html) is caught by the name-clash check and
named by its static/ path, not the staging folder's; hidden names other than .nojekyll and
.well-known/ (.git, .env) are skipped with a note.
"""

from __future__ import annotations

import os
import shutil
import tracemalloc
from pathlib import Path

import pytest

from jouleboard.core.problems import ValidationFailed
from jouleboard.core.safe_read import STATIC_FILE_CAP, STATIC_TOTAL_CAP
from jouleboard.engine.build import build_site
from jouleboard.output.static import add_static, clashes
from jouleboard.output.writer import SiteFiles
from tests.measured import run_measured
from tests.test_validation_rules import VALID, make_data_dir, write_measurement

MEMORY_BOUND = 512 * 1024 * 1024  # bytes: issue 41's bound on the largest input's peak
# Paths a build makes, as jouleboard names them (core/urls.py): pages in folders of their own.
GENERATED = ["index.html", "about/index.html", "charts/gpqa.svg", "models/a/index.html"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A site folder holding a valid data folder of one measurement."""
    root = tmp_path / "project"
    write_measurement(make_data_dir(root), VALID)
    return root


def test_every_overlap_with_a_generated_path_is_a_clash_named_by_its_static_path(
    tmp_path: Path,
) -> None:
    static = {
        "about": "the build makes a folder about/ here",  # a file where a page's folder is
        "charts": "the build makes a folder charts/ here",
        "index.html/x": "the build makes index.html as a file, where this needs a folder",
        "INDEX.HTML": "INDEX.HTML differs only in case from index.html, which the build makes",
        "About/x.txt": "its folder About/ differs only in case from about/",
        "models/a/index.html": "the build makes models/a/index.html itself",
        "notes.TXT": None,  # the first of the two by sorted name (upper case sorts first)
        "notes.txt": "notes.txt differs only in case from notes.TXT, which static/ holds",
        "CNAME": None,
        "about.txt": None,
        "models/b/logo.svg": None,
    }
    problems = clashes(tmp_path, static, GENERATED)
    found = {p.file: p.message for p in problems}
    for name, why in static.items():
        shown = (tmp_path / "static" / name).as_posix()
        if why is None:
            assert shown not in found, (name, found.get(shown))
        else:
            assert why in found[shown], (name, found[shown])
    assert {p.rule for p in problems} == {"static.name-clash"}


@pytest.mark.slow  # builds a site twice
def test_a_static_file_where_the_build_makes_a_folder_fails_the_build_by_its_name(
    project: Path,
) -> None:
    """Before: "File exists: <project>/.site-new-XXXX/about", the staging folder named."""
    out = project / "site"
    build_site(project / "data", out)
    before = {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    static = project / "static"
    for name in ("about", "charts", "index.html/x", "INDEX.HTML"):
        (static / name).parent.mkdir(parents=True, exist_ok=True)
        (static / name).write_text("x\n")
    with pytest.raises(ValidationFailed) as failed:
        build_site(project / "data", out)
    assert sorted(p.file for p in failed.value.problems) == sorted(
        (static / name).as_posix() for name in ("about", "charts", "index.html/x", "INDEX.HTML")
    )
    assert all(".site-new" not in p.message for p in failed.value.problems)
    assert {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} == before


@pytest.mark.slow  # builds a site
def test_hidden_names_but_nojekyll_and_well_known_are_skipped_with_a_note(project: Path) -> None:
    """Before: static/.git/config and static/.env were published."""
    static = project / "static"
    files = {
        ".git/config": "[remote] url = secret\n",
        ".env": "TOKEN=secret\n",
        ".well-known/.hidden": "x\n",
        ".nojekyll": "",
        ".well-known/security.txt": "Contact: mailto:a@example.org\n",
        "CNAME": "energy.example.org\n",
    }
    for name, text in files.items():
        (static / name).parent.mkdir(parents=True, exist_ok=True)
        (static / name).write_text(text)
    out = project / "site"
    summary = build_site(project / "data", out)
    for name in (".nojekyll", ".well-known/security.txt", "CNAME"):
        assert (out / name).read_text() == files[name]
    for name in (".git", ".env", ".well-known/.hidden"):
        assert not os.path.lexists(out / name), name
    notes = {(w.file, w.rule) for w in summary.warnings}
    assert notes == {
        ((static / name).as_posix(), "static.hidden")
        for name in (".git", ".env", ".well-known/.hidden")
    }


def test_static_files_are_copied_in_chunks_not_held(project: Path) -> None:
    """Fifteen files of 16 MiB (240 MiB, under the total cap): before, each was read whole
    and kept until the write (the site's 100 such files peaked at 1.7 GB)."""
    static = project / "static"
    static.mkdir()
    count = STATIC_TOTAL_CAP // STATIC_FILE_CAP - 1
    for n in range(count):
        with (static / f"f{n}.bin").open("wb") as f:
            f.truncate(STATIC_FILE_CAP)  # sparse: zeros that take no disk to write
    files = SiteFiles()
    tracemalloc.start()
    try:
        assert add_static(files, project) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sorted(files.paths()) == sorted(f"f{n}.bin" for n in range(count))
    # The writer keeps 32 MiB of content in memory before it spools to disk, and joins a
    # file's chunks once: a file and a half over that, whatever static/ holds.
    assert peak < 64 * 1024 * 1024, f"{peak / 1e6:.0f} MB held for {count * 16} MiB of files"
    assert files.content("f3.bin") == bytes(STATIC_FILE_CAP)


@pytest.mark.slow  # runs the command line
def test_static_over_the_total_cap_is_one_located_line_in_little_memory(project: Path) -> None:
    """The issue's case: 100 files of 16 MiB (before: built, 1.7 GB peak, 39 s)."""
    static = project / "static"
    static.mkdir()
    for n in range(100):
        with (static / f"f{n:03}.bin").open("wb") as f:
            f.truncate(STATIC_FILE_CAP)
    done, peak = run_measured("build", "--data", "data", "--out", "site", cwd=project)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("static")] == [
        f"static: /: file.too-large: static/ holds {100 * 16 * 1024 * 1024:,} bytes of files, "
        f"over the {STATIC_TOTAL_CAP:,}-byte cap of the files a build copies as they are "
        "(publish large files from elsewhere and link them)"
    ]
    assert not (project / "site").exists()
    assert peak < MEMORY_BOUND, f"{peak / 1e6:.0f} MB"
    shutil.rmtree(static)


@pytest.mark.slow  # builds a site
def test_theme_assets_over_their_total_cap_fail_the_build_located(project: Path) -> None:
    """templates/assets/ overrides are read whole (their names get content hashes): each
    is under ASSET_MAX_BYTES, and now all of them under ASSETS_MAX_BYTES too (before: five
    4 MiB modules were published)."""
    from jouleboard.core.resources import templates_dir
    from jouleboard.render.pages import ASSET_MAX_BYTES, ASSETS_MAX_BYTES

    modules = sorted(p.name for p in (templates_dir() / "assets" / "js").glob("*.js"))
    count = ASSETS_MAX_BYTES // ASSET_MAX_BYTES + 1
    assert len(modules) >= count
    theme = project / "templates" / "assets" / "js"
    theme.mkdir(parents=True)
    for name in modules[:count]:
        (theme / name).write_text("//" + "x" * (ASSET_MAX_BYTES - 3) + "\n")
    with pytest.raises(ValidationFailed) as failed:
        build_site(project / "data", project / "site")
    [problem] = failed.value.problems
    assert (problem.file, problem.rule) == (
        (project / "templates" / "assets").as_posix(),
        "file.too-large",
    )
    assert f"over the {ASSETS_MAX_BYTES:,}-byte cap" in problem.message
    assert not (project / "site").exists()
