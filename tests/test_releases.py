"""Releases: changelog with each release's diff, permanent per-release downloads, feeds."""

from __future__ import annotations

import csv
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st
from markdown.extensions.toc import slugify

from jouleboard.config.registry import load_registry
from jouleboard.engine.build import build_site
from jouleboard.plan.releases import slug
from tests.git_repo import git
from tests.golden.tree import DATA, REPO
from tests.test_diff import make_head

ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(scope="module")
def two_releases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repo whose tag v1 holds the golden sample and whose working data is v2:
    the head data of tests/test_diff (one added, one removed, one changed configuration)."""
    tmp = tmp_path_factory.mktemp("releases")
    repo = tmp / "repo"
    shutil.copytree(DATA, repo / "data")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "v1"], ["tag", "v1"]):
        git(repo, *cmd)
    shutil.rmtree(repo / "data")
    shutil.copytree(make_head(tmp), repo / "data")
    (repo / "data" / "releases.yaml").write_text(
        yaml.safe_dump(
            {
                "releases": [
                    {"version": "v2", "date": "2026-03-01", "notes_md": "Second release."},
                    {
                        "version": "v1",
                        "date": "2026-02-16",
                        "notes_md": "First release.",
                        "ref": "v1",
                    },
                ]
            }
        )
    )
    site = yaml.safe_load((repo / "data" / "site.yaml").read_text())
    site["data_version"] = "v2"
    (repo / "data" / "site.yaml").write_text(yaml.safe_dump(site))
    out = tmp / "site"
    build_site(repo / "data", out, project=REPO)
    return out


def test_changelog_shows_each_release_and_its_diff(two_releases: Path) -> None:
    html = (two_releases / "changelog" / "index.html").read_text()
    assert html.index("v2 (2026-03-01)") < html.index("v1 (2026-02-16)")
    # The same change as test_diff's: 1.73x, within the 1.90x two runs may differ by when
    # s comes from one repeat pair (1 degree of freedom).
    assert (
        "1 configuration(s) added, 1 removed, 1 changed by more than 1% in energy per output "
        "(1 of them within measurement noise)."
    ) in html
    assert "Qwen 3 8B" in html  # the rank move the edit caused
    # The first release's summary counts with thousands separators like every other page,
    # and says how many measurements its folded configurations hold (counted here from the
    # sample's files, one of them a repeat run).
    files = len(list((DATA / "measurements").rglob("*.json")))
    assert f"{files - 1:,} configurations ({files:,} measurements) of " in html


def test_every_release_keeps_its_own_downloads(two_releases: Path) -> None:
    v1 = list(csv.DictReader((two_releases / "data/v1/configurations.csv").open()))
    v2 = list(csv.DictReader((two_releases / "data/v2/configurations.csv").open()))
    # 24 token files each, one of them a repeat run folded into its configuration (runs 2);
    # v2 has one removed and one added.
    assert len(v1) == 23 and len(v2) == 23
    assert sum(int(r["runs"]) for r in v1) == sum(int(r["runs"]) for r in v2) == 24
    assert {r["max_num_seqs"] for r in v2} - {r["max_num_seqs"] for r in v1} == {"48"}
    assert json.loads((two_releases / "data/v1/configurations.json").read_text())[0]["task"]


def test_every_release_holds_every_kind(two_releases: Path) -> None:
    """Image configurations are in each release's downloads too, and the changelog links
    every file of a release (it once published the token tasks' file only)."""
    images = len(list((DATA / "measurements" / "text-to-image").rglob("*.json")))
    for version in ("v1", "v2"):
        rows = list(
            csv.DictReader((two_releases / f"data/{version}/configurations-diffusion.csv").open())
        )
        assert len(rows) == images > 0
        assert {r["task"] for r in rows} == {"text-to-image"}
    html = (two_releases / "changelog" / "index.html").read_text()
    assert "/data/v1/configurations-diffusion.csv" in html
    assert "/data/v2/configurations-diffusion.csv" in html
    downloads = (two_releases / "downloads" / "index.html").read_text()
    assert "v1/configurations-diffusion.json" in downloads


def test_atom_feed_is_well_formed_with_the_required_elements(two_releases: Path) -> None:
    feed = ET.fromstring((two_releases / "feed.xml").read_bytes())
    assert feed.tag == f"{ATOM}feed"
    for name in ("id", "title", "updated", "author"):
        assert feed.find(f"{ATOM}{name}") is not None, name
    entries = feed.findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}title") for e in entries] == [
        "jouleboard sample data v2",
        "jouleboard sample data v1",
    ]
    for e in entries:
        assert e.findtext(f"{ATOM}id").startswith("tag:")
        assert e.findtext(f"{ATOM}updated").endswith("T00:00:00Z")
        assert e.find(f"{ATOM}link").get("href").startswith("/changelog/#v")


def test_json_feed_has_the_required_fields(two_releases: Path) -> None:
    feed = json.loads((two_releases / "feed.json").read_text())
    assert feed["version"] == "https://jsonfeed.org/version/1.1"
    assert feed["title"] and feed["items"]
    for item in feed["items"]:
        assert item["id"] and (item.get("content_html") or item.get("content_text"))
    anchors = [item["url"].split("#")[1] for item in feed["items"]]
    html = (two_releases / "changelog" / "index.html").read_text()
    assert all(f'id="{a}"' in html for a in anchors)


def test_release_registry_rules(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data)
    (data / "releases.yaml").write_text(
        yaml.safe_dump(
            {
                "releases": [
                    {"version": "v0", "date": "2026-01-01"},
                    {"version": "v0", "date": "2026-02-01"},
                ]
            }
        )
    )
    _, problems = load_registry(data)
    rules = {p.rule for p in problems}
    assert {
        "registry.release-mismatch",
        "registry.duplicate-release",
        "registry.release-order",
        "schema.missing-field",
    } <= rules


@given(st.text())
@example("v3.1 (2026-11-30)")
@example("Ünïcödé  --  ‹release› 2.0_rc1!")
@example(" \t-x-\n ")
def test_the_feeds_heading_ids_are_markdowns(text: str) -> None:
    """The feeds link each release to its changelog heading by the id markdown's toc
    extension gives it: plan/releases.py makes the id without importing markdown, and
    makes markdown's own."""
    assert slug(text) == slugify(text, "-")
