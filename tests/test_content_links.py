"""Links between the site's own pages, written in markdown (content pages, registry
descriptions, the attribution), are checked: a link to a page the site does not have is a
located error of validate and build, never a published 404 (issue 39, item 4:
``[x](/resluts/)`` in content/team.md validated, built and was published)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from jouleboard.cli import main

MODEL = "example-org/example-llm-8b"


@pytest.fixture
def site(new_site: Path) -> Path:  # a folder made by jouleboard init (tests/conftest.py)
    return new_site


def validate(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    status = main(["validate"])
    _, err = capsys.readouterr()
    return status, [line for line in err.splitlines() if "content.broken-link" in line]


def edit_registry(site: Path, name: str, change: dict[str, object], key: str | None = None) -> None:
    path = site / "data" / name
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    (doc[key] if key else doc).update(change)
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")


def test_a_content_page_linking_to_no_page_fails_validate_with_its_line(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (site / "content" / "team.md").write_text(
        "# Team\n\nOur [results](/resluts/) and [the glossary's noise](../glossary/#nois).\n",
        encoding="utf-8",
    )
    status, lines = validate(capsys)
    assert status == 1
    assert lines == [
        "content/team.md: /: content.broken-link: line 3: links to '../glossary/#nois': "
        "/glossary/ has no anchor 'nois' (did you mean #noise?)",
        "content/team.md: /: content.broken-link: line 3: links to '/resluts/', which from "
        "/team/ is /resluts/: the site has no such page (link to a page the site makes, as "
        "sitemap.xml lists them, or a file of static/)",
    ]


def test_links_to_what_the_site_has_pass(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (site / "static").mkdir()
    (site / "static" / "paper.pdf").write_bytes(b"%PDF-1.4\n")
    (site / "content" / "team.md").write_text(
        "# Team\n\n"
        "[about](../about/) [home](../) [chat](../tasks/chat/) [noise](../glossary/#noise) "
        "[model](../models/example-org--example-llm-8b/) [gpu](../gpus/h100/) "
        "[schema](../downloads/measurement.schema.json) [paper](../paper.pdf) "
        "[below](#who-we-are) [elsewhere](https://example.org/x) [mail](mailto:a@b.c) "
        "[root](/about/)\n\n## Who we are\n",
        encoding="utf-8",
    )
    status, lines = validate(capsys)
    assert (status, lines) == (0, [])


def test_a_description_is_checked_from_every_page_that_shows_it(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task's description is on the home page (/) and the task's page (/tasks/chat/): a
    link written for one of them breaks on the other."""
    edit_registry(site, "tasks.yaml", {"description_md": "See [about](about/)."}, "chat")
    status, lines = validate(capsys)
    assert status == 1
    assert lines == [  # right on the home page, wrong on the task's
        "data/tasks.yaml: /chat/description_md: content.broken-link: links to 'about/', "
        "which from /tasks/chat/ is /tasks/chat/about/: the site has no such page (did you "
        "mean ../../about/?)"
    ]
    edit_registry(site, "tasks.yaml", {"description_md": "See [about](/about/)."}, "chat")
    assert validate(capsys) == (0, [])


def test_a_model_description_is_checked_on_the_model_page(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_registry(site, "models.yaml", {"description_md": "On [chat](../tasks/chat/)."}, MODEL)
    status, lines = validate(capsys)
    assert status == 1
    assert lines == [
        "data/models.yaml: /example-org~1example-llm-8b/description_md: content.broken-link: "
        "links to '../tasks/chat/', which from /models/example-org--example-llm-8b/ is "
        "/models/tasks/chat/: the site has no such page (did you mean ../../tasks/chat/?)"
    ]
    edit_registry(site, "models.yaml", {"description_md": "On [chat](../../tasks/chat/)."}, MODEL)
    assert validate(capsys) == (0, [])


def test_the_attribution_on_every_page_links_from_the_root(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit_registry(site, "site.yaml", {"attribution_md": "Data: see [about](about/)."})
    status, lines = validate(capsys)
    (line,) = lines
    assert status == 1 and "data/site.yaml: /attribution_md: content.broken-link" in line
    assert "link from the site's root, e.g. /about/" in line
    edit_registry(site, "site.yaml", {"attribution_md": "Data: see [about](/about/)."})
    assert validate(capsys) == (0, [])


def test_a_root_link_outside_the_base_url_is_named(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Under /board/ (GitHub project pages), /about/ leaves the site."""
    edit_registry(site, "site.yaml", {"base_url": "/board/"})
    (site / "content" / "team.md").write_text("# Team\n\n[about](/about/)\n", encoding="utf-8")
    status, lines = validate(capsys)
    (line,) = lines
    assert status == 1 and "links to '/about/', outside the site" in line
    assert "relative to the page, e.g. ../about/" in line


@pytest.mark.slow  # builds (and fails to build) a site
def test_build_fails_on_a_broken_link_and_writes_nothing(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (site / "content" / "team.md").write_text("# Team\n\n[x](/resluts/)\n", encoding="utf-8")
    assert main(["build"]) == 1
    _, err = capsys.readouterr()
    assert "content/team.md: /: content.broken-link: line 3: links to '/resluts/'" in err
    assert "nothing was written" in err and not (site / "site").exists()
    (site / "content" / "team.md").write_text("# Team\n\n[x](../about/)\n", encoding="utf-8")
    assert main(["build"]) == 0
    assert (site / "site" / "team" / "index.html").is_file()


def test_the_packaged_about_page_links_only_to_pages_every_site_has(tmp_path: Path) -> None:
    """jouleboard's own about page (a site without content/about.md publishes it) linked to
    ../mlperf/, which a site without MLPerf results does not have: a 404 on the sample."""
    from jouleboard.config.content import about_markdown
    from jouleboard.engine.sources import load_sources, site_urls
    from jouleboard.plan.links import MarkdownSource, link_problems
    from jouleboard.plan.site import plan_site
    from tests.golden.tree import DATA

    sources = load_sources(DATA, tmp_path)  # no content/ there: the packaged page
    about = about_markdown(tmp_path)
    assert about is not None and sources.about == about and not sources.data.mlperf
    urls = site_urls(sources.data.registry.site, None, None)
    plan = plan_site(sources.data, urls, sources.releases, about, sources.pages)
    assert link_problems(plan, urls, [MarkdownSource("about.md", "", about)]) == []
    assert "../glossary/#noise" in about  # links there are, and are checked
