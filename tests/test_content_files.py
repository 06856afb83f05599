"""content/about.md is published only as a regular UTF-8 file within the limits (issue 14):
a symbolic link published /etc/passwd, and a folder or Latin-1 file gave a traceback.
Each hostile form fails the build with one located problem and exit 1, and the previous
site is left byte for byte as it was."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from jouleboard.core.markdown_limits import ABOUT_MAX_BYTES
from jouleboard.engine.build import build_site
from tests.cli_run import jouleboard as jouleboard_here
from tests.golden.tree import DATA, REPO, tree

SECRET = "root:x:0:0:secret-marker-4711"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A site folder (data, templates, content) and a site built from it."""
    root = tmp_path_factory.mktemp("content")
    project = root / "project"
    shutil.copytree(REPO / "templates", project / "templates")
    shutil.copytree(REPO / "content", project / "content")
    shutil.copytree(DATA, project / "data")
    (root / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    out = root / "site"
    build_site(project / "data", out, project=project)
    return project, out


def link_to_secret(about: Path) -> None:
    about.symlink_to(about.parents[2] / "secret.txt")


def linked_content_folder(about: Path) -> None:
    elsewhere = about.parents[2] / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(about.parents[2] / "secret.txt", elsewhere / "about.md")
    shutil.rmtree(about.parent)
    about.parent.symlink_to(elsewhere)


def folder(about: Path) -> None:
    about.mkdir()


def latin1(about: Path) -> None:
    about.write_bytes("# Über uns\n\nÉnergie\n".encode("latin-1"))


def over_cap(about: Path) -> None:
    about.write_text(("word " * 15 + "\n\n") * (ABOUT_MAX_BYTES // 75 + 10), encoding="utf-8")


def nested_list(levels: int) -> Callable[[Path], None]:
    def write(about: Path) -> None:
        about.write_text("".join("  " * i + "- x\n" for i in range(levels)), encoding="utf-8")

    return write


def fifo(about: Path) -> None:
    os.mkfifo(about)


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "symlink to a secret": (link_to_secret, "content.not-regular"),
    "content folder is a symlink": (linked_content_folder, "content.not-regular"),
    "folder": (folder, "content.not-regular"),
    "Latin-1": (latin1, "content.not-utf8"),
    "over the cap": (over_cap, "content.too-large"),
    # The reported case (215 s and 3.7 GB, then a traceback): 9 MB, over the size cap.
    "3,000-level nested list": (nested_list(3000), "content.too-large"),
    "200-level nested list": (nested_list(200), "markdown.too-deep"),
    "named pipe": (fifo, "content.not-regular"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_about_md_fails_the_build_cleanly(site: tuple[Path, Path], case: str) -> None:
    project, out = site
    content = project / "content"
    saved = content.parent / "content.saved"
    shutil.copytree(content, saved)
    before = tree(out)
    make, rule = CASES[case]
    about = content / "about.md"
    about.unlink()
    make(about)
    try:
        result = jouleboard_here("build", "--data", project / "data", "--out", out, cwd=REPO)
    finally:
        if content.is_symlink():
            content.unlink()
        else:
            shutil.rmtree(content)
        shutil.move(saved, content)
        shutil.rmtree(project.parent / "elsewhere", ignore_errors=True)
    assert result.returncode == 1, result.stderr
    assert f"content/about.md: /: {rule}: " in result.stderr
    assert "Traceback" not in result.stderr
    assert tree(out) == before
    assert all(SECRET not in p.read_text(errors="replace") for p in out.rglob("*.html"))


def set_logo(project: Path, name: str) -> None:
    site_yaml = project / "data" / "site.yaml"
    text = site_yaml.read_text(encoding="utf-8")
    site_yaml.write_text(text + f"logo: {name}\n", encoding="utf-8")


LOGO_CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "missing": (lambda logo: None, "site.logo-missing"),
    "symlink to a secret": (
        lambda logo: logo.symlink_to(logo.parents[2].parent / "secret.txt"),
        "content.not-regular",
    ),
    "folder": (lambda logo: logo.mkdir(), "content.not-regular"),
}


@pytest.mark.parametrize("case", list(LOGO_CASES))
def test_a_bad_logo_is_a_located_site_yaml_problem(site: tuple[Path, Path], case: str) -> None:
    project, out = site
    site_yaml = project / "data" / "site.yaml"
    saved = site_yaml.read_bytes()
    before = tree(out)
    make, rule = LOGO_CASES[case]
    logo = project / "templates" / "assets" / "logo.svg"
    set_logo(project, "logo.svg")
    make(logo)
    try:
        result = jouleboard_here("build", "--data", project / "data", "--out", out, cwd=REPO)
    finally:
        site_yaml.write_bytes(saved)
        if logo.is_symlink() or logo.is_file():
            logo.unlink()
        elif logo.is_dir():
            logo.rmdir()
    assert result.returncode == 1, result.stderr
    assert f"site.yaml: /logo: {rule}: " in result.stderr
    assert "Traceback" not in result.stderr
    assert tree(out) == before


def test_a_logo_of_the_site_folder_is_published(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(DATA, project / "data")
    (project / "templates" / "assets").mkdir(parents=True)
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>\n'
    (project / "templates" / "assets" / "logo.svg").write_bytes(svg)
    set_logo(project, "logo.svg")
    build_site(project / "data", tmp_path / "site", project=project)
    assert (tmp_path / "site" / "assets" / "logo.svg").read_bytes() == svg
    assert "assets/logo.svg" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
