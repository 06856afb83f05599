"""A build writes only into a new, empty or jouleboard-made folder; anything else is refused
with one line and exit 1, and nothing anywhere is touched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jouleboard.engine.build import build_site
from jouleboard.output.folder import MARKER, OutputFolder, OutputRefused, real_path
from jouleboard.output.writer import SiteFiles
from tests.golden.tree import DATA, REPO

ENTRY_POINTS = {
    "jouleboard build": ["-m", "jouleboard", "build"],
    "build.py": [str(REPO / "build.py")],
}


def everything(root: Path) -> dict[str, object]:
    """Every entry below ``root`` (links not followed): file bytes and mode, folders,
    symlink targets, the kind of anything else."""
    seen: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            key = path.relative_to(root).as_posix()
            if path.is_symlink():
                seen[key] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[key] = ("dir", path.stat().st_mode)
            elif path.is_file():
                seen[key] = (path.read_bytes(), path.stat().st_mode)
            else:  # a pipe or device: never read (a pipe would wait for ever)
                seen[key] = ("other", path.stat().st_mode)
    return seen


def site_tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A project folder (pyproject.toml, .git, data/) with a folder and a file of the user's
    beside it, and a second checkout whose data lives elsewhere."""
    project = tmp_path / "project"
    shutil.copytree(DATA, project / "data")
    (project / "pyproject.toml").write_text("[project]\nname = 'mine'\n")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    docs = project / "mydocs"
    (docs / "drafts").mkdir(parents=True)
    (docs / "thesis.tex").write_text("\\chapter{Energy}\n")
    (docs / "drafts" / ".notes").write_bytes(b"\x00\x01 private\n")
    (project / "notes.txt").write_text("do not replace me\n")
    (project / "data-link").symlink_to("data")
    other = tmp_path / "other-checkout"
    (other / ".git").mkdir(parents=True)
    (other / "README").write_text("another project\n")
    return project


# (name, working folder relative to the workspace, extra arguments, words of the message)
UNSAFE = [
    ("folder of user files", ".", ["--out", "mydocs"], "not empty and was not made by"),
    ("the data folder", ".", ["--out", "data"], "it is the data folder"),
    (
        "the data folder spelt differently",
        ".",
        ["--out", "./mydocs/../data/"],
        "it is the data folder",
    ),
    ("a link to the data folder", ".", ["--out", "data-link"], "it is the data folder"),
    ("the project folder", ".", ["--out", "."], "it contains the data folder"),
    (
        "a parent of the data folder",
        "data/measurements",
        ["--data", "../../data", "--out", "../../.."],
        "it contains the data folder",
    ),
    (
        "a new folder inside the data folder",
        ".",
        ["--out", "data/site"],
        "it is inside the data folder",
    ),
    (
        "a folder inside the data folder",
        ".",
        ["--out", "data/measurements"],
        "it is inside the data folder",
    ),
    ("a file", ".", ["--out", "notes.txt"], "it is a file, not a folder"),
    ("a folder below a file", ".", ["--out", "notes.txt/site"], "is a file, not a folder"),
    (
        "another checkout",
        "../other-checkout",
        ["--data", "../project/data", "--out", "."],
        "it is the project folder",
    ),
]


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(("name", "cwd", "args", "words"), UNSAFE, ids=[u[0] for u in UNSAFE])
def test_unsafe_out_is_refused_and_nothing_is_touched(
    workspace: Path, entry: str, name: str, cwd: str, args: list[str], words: str
) -> None:
    root = workspace.parent
    before = everything(root)
    argv = [sys.executable, *ENTRY_POINTS[entry]]
    if "--data" not in args:
        argv += ["--data", "data"]
    result = subprocess.run(
        [*argv, *args], cwd=workspace / cwd, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1, (name, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("jouleboard build: error: refusing to write into "), lines
    assert words in lines[0] and "choose" in lines[0], lines  # what, why, how to fix
    assert everything(root) == before, f"{name}: something was changed"


def test_serve_refuses_an_unsafe_preview_folder(workspace: Path) -> None:
    before = everything(workspace.parent)
    for out in ("data", "mydocs"):
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "jouleboard",
                "serve",
                "--data",
                "data",
                "--out",
                out,
                "--port",
                "0",
            ],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        assert result.stderr.splitlines()[-1].startswith(
            "jouleboard serve: error: refusing to write into "
        ), result.stderr
    assert everything(workspace.parent) == before


def test_library_build_refuses_before_loading_the_data(workspace: Path) -> None:
    """build_site (used by the benchmarks) checks --out before any work: even a data folder
    that does not load is not read when --out is unsafe."""
    data = workspace / "data"
    (data / "site.yaml").write_text("title: [unclosed\n")  # would fail validation
    before = everything(workspace.parent)
    for out in (data, workspace / "mydocs", workspace, workspace / "notes.txt"):
        with pytest.raises(OutputRefused):
            build_site(data, out, project=REPO)
    assert everything(workspace.parent) == before


def test_new_empty_and_marked_folders_are_built(workspace: Path, tmp_path: Path) -> None:
    data = workspace / "data"
    empty = tmp_path / "empty"
    empty.mkdir()
    new = tmp_path / "new" / "nested" / "site"
    for out in (empty, new):
        build_site(data, out, project=REPO)
        assert (out / "index.html").is_file() and (out / MARKER).is_file()
    # A marked previous site is replaced completely; a file the last build did not write is
    # someone's: refused and kept until it is moved away (to static/, to publish it).
    (empty / "stale.html").write_text("from an older build")
    (data / "site.yaml").write_text(
        (data / "site.yaml").read_text().replace("jouleboard sample", "jouleboard sample, edited")
    )
    with pytest.raises(OutputRefused, match=r"stale\.html"):
        build_site(data, empty, project=REPO)
    assert (empty / "stale.html").read_text() == "from an older build"
    (empty / "stale.html").unlink()
    build_site(data, empty, project=REPO)
    clean = tmp_path / "clean"
    build_site(data, clean, project=REPO)
    assert site_tree(empty) == site_tree(clean)


def test_the_marker_is_part_of_every_site(tmp_path: Path) -> None:
    out = tmp_path / "site"
    summary = build_site(DATA, out, project=REPO)
    assert (
        (out / MARKER)
        .read_text(encoding="utf-8")
        .startswith("This folder is a site built by jouleboard")
    )
    assert summary.files == len(site_tree(out))


def test_commit_checks_again_under_the_lock(tmp_path: Path) -> None:
    """A folder that was fine when the build started but holds someone's files by the time
    the site is written is not replaced."""
    out = tmp_path / "site"
    folder = OutputFolder(str(out), real_path(out))
    folder.check()  # missing: fine
    out.mkdir()
    (out / "report.docx").write_bytes(b"PK\x03\x04 mine")
    before = everything(tmp_path)
    files = SiteFiles()
    files.add("index.html", "<!doctype html>")
    with pytest.raises(OutputRefused, match="not empty and was not made by jouleboard"):
        files.commit(folder)
    assert everything(tmp_path) == before


def test_a_site_from_before_the_marker_is_recognised_by_its_manifest(tmp_path: Path) -> None:
    """An unmarked site whose files are exactly those its old-format manifest lists is
    jouleboard's; one extra file of the user's makes it not."""
    out = tmp_path / "site"
    (out / "a").mkdir(parents=True)
    (out / "index.html").write_text("<!doctype html>")
    (out / "a" / "b.css").write_text("body{}")
    listed = {
        name: ["0" * 64, (out / name).stat().st_size, (out / name).stat().st_mtime_ns]
        for name in ("index.html", "a/b.css")
    }
    (tmp_path / ".site.manifest.json").write_text(json.dumps({"files": listed}))
    OutputFolder(str(out), real_path(out)).check()
    (out / "a" / "mine.txt").write_text("user file")
    with pytest.raises(OutputRefused, match=r"no \.jouleboard-site marker"):
        OutputFolder(str(out), real_path(out)).check()
    # A manifest that is a link (to the one that lists the site, or to a device) or a pipe
    # is not read: the site is not taken as jouleboard's, and nothing waits.
    (out / "a" / "mine.txt").unlink()
    manifest, listing = tmp_path / ".site.manifest.json", tmp_path / "listing.json"
    manifest.rename(listing)
    for make in (lambda: manifest.symlink_to(listing), lambda: os.mkfifo(manifest)):
        make()
        with pytest.raises(OutputRefused, match=r"no \.jouleboard-site marker"):
            OutputFolder(str(out), real_path(out)).check()
        manifest.unlink()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_an_unwritable_out_is_refused_before_any_work(workspace: Path) -> None:
    """--out /proc/x was refused only when writing, after loading, planning, drawing and
    rendering the whole site (issue 30): now before any of it, in one line."""
    result = subprocess.run(
        [sys.executable, "-m", "jouleboard", "build", "--data", "data", "--out", "/proc/jb-x"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "jouleboard build: error: refusing to write into /proc/jb-x: cannot create files in "
        "/proc (No such file or directory); choose an --out on a writable disk"
    ]
