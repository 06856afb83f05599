"""Pages of a site's own (issue 30): every content/<name>.md but about.md becomes a page at
/<name>/, titled by its first heading, rendered and escaped as about.md is; site.yaml nav can
target it by name. A bad file or a nav target naming no page is one located problem in
validate and build, and the build writes nothing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from jouleboard.core.problems import ValidationFailed
from jouleboard.engine.build import build_site
from tests.cli_run import jouleboard as jouleboard_here
from tests.golden.tree import DATA, REPO

TEAM = "# Our team\n\nWe measure **carefully**.\n\n<script>alert('x')</script>\n"


def project_with(tmp_path: Path, pages: dict[str, str], nav: list[dict[str, str]]) -> Path:
    """A site folder: the sample data, the repository's content, ``pages`` added to content/
    and ``nav`` as site.yaml's navigation."""
    project = tmp_path / "project"
    shutil.copytree(REPO / "content", project / "content")
    shutil.copytree(DATA, project / "data")
    for name, text in pages.items():
        (project / "content" / name).write_text(text, encoding="utf-8")
    site_yaml = project / "data" / "site.yaml"
    settings = yaml.safe_load(site_yaml.read_text())
    settings["nav"] = nav
    site_yaml.write_text(yaml.safe_dump(settings))
    return project


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return jouleboard_here(*args, cwd=REPO)


def test_a_content_file_becomes_a_page_the_nav_links_by_name(tmp_path: Path) -> None:
    nav = [{"label": "Leaderboard", "target": "leaderboard"}, {"label": "Team", "target": "team"}]
    project = project_with(tmp_path, {"team.md": TEAM}, nav)
    out = tmp_path / "site"
    build_site(project / "data", out, project=project)
    html = (out / "team" / "index.html").read_text()
    assert "<title>Our team · " in html and "<h1>Our team</h1>" in html
    assert "<strong>carefully</strong>" in html
    assert "<script>alert" not in html and "alert(" not in html  # raw HTML is not published
    home = (out / "index.html").read_text()
    assert '<a href="/team/">Team</a>' in home
    assert "/team/" in (out / "sitemap.xml").read_text()


@pytest.mark.parametrize(
    ("name", "text", "rule"),
    [
        ("models.md", TEAM, "content.reserved-name"),
        ("leaderboard.md", TEAM, "content.reserved-name"),
        ("Team Page.md", TEAM, "content.bad-name"),
        ("team.md", "Our team\n\nno heading\n", "content.no-title"),
    ],
)
def test_a_file_that_cannot_be_a_page_is_located(
    tmp_path: Path, name: str, text: str, rule: str
) -> None:
    project = project_with(tmp_path, {name: text}, [])
    out = tmp_path / "site"
    with pytest.raises(ValidationFailed) as info:
        build_site(project / "data", out, project=project)
    (problem,) = info.value.problems
    assert problem.rule == rule and problem.file.endswith(name) and problem.hint
    assert not out.exists()
    done = cli("validate", "--data", str(project / "data"))
    assert done.returncode == 1 and rule in done.stderr + done.stdout


def test_a_nav_target_naming_no_page_says_which_and_suggests_one(tmp_path: Path) -> None:
    nav = [{"label": "Team", "target": "teem"}]
    project = project_with(tmp_path, {"team.md": TEAM}, nav)
    for args in (
        ("validate", "--data", str(project / "data")),
        ("build", "--data", str(project / "data"), "--out", str(tmp_path / "site")),
    ):
        done = cli(*args)
        assert done.returncode == 1, done
        line = next(ln for ln in done.stderr.splitlines() if "registry.unknown-nav-target" in ln)
        assert "site.yaml: /nav/0/target:" in line and "did you mean 'team'" in line
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "site").exists()


def test_the_nav_target_pattern_takes_names_but_not_paths(tmp_path: Path) -> None:
    """A target is a name, never a path or another scheme: those stay schema errors."""
    for target in ("../etc", "javascript:alert(1)", "Team", "http://example.org"):
        project = project_with(tmp_path / target.replace("/", "_"), {}, [])
        site_yaml = project / "data" / "site.yaml"
        settings = yaml.safe_load(site_yaml.read_text())
        settings["nav"] = [{"label": "X", "target": target}]
        site_yaml.write_text(yaml.safe_dump(settings))
        done = cli("validate", "--data", str(project / "data"))
        assert done.returncode == 1 and "/nav/0/target" in done.stderr, (target, done.stderr)
