"""A release's `ref` is a git ref of the site's own repository, never a folder (issue 25
item 10): a ref once read as a path first published another folder's data as an old
release's downloads. `jouleboard diff --base` still takes a folder, by design, but a commit
of that name wins over it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from jouleboard.build import build_site
from jouleboard.diff import base_data
from jouleboard.loading.dataset import load_dataset
from jouleboard.problems import ValidationFailed
from jouleboard.releases import load_releases
from tests.golden.tree import DATA, REPO

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def with_releases(data: Path, ref: str) -> None:
    (data / "releases.yaml").write_text(
        yaml.safe_dump(
            {
                "releases": [
                    {"version": "v2", "date": "2026-03-01", "notes_md": "Second release."},
                    {
                        "version": "v1",
                        "date": "2026-02-16",
                        "notes_md": "First release.",
                        "ref": ref,
                    },
                ]
            }
        )
    )
    site = yaml.safe_load((data / "site.yaml").read_text())
    site["data_version"] = "v2"
    (data / "site.yaml").write_text(yaml.safe_dump(site))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """tmp/repo: a git repository whose tag v1 holds the golden data; tmp/other-data and
    tmp/repo/other-data: another folder's data (one model fewer, so it can be told apart)."""
    repo = tmp_path / "repo"
    shutil.copytree(DATA, repo / "data")
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "v1"], ["tag", "v1"]):
        subprocess.run([*GIT, *cmd], cwd=repo, check=True, timeout=60)
    for other in (tmp_path / "other-data", repo / "other-data"):
        shutil.copytree(DATA, other)
        shutil.rmtree(other / "measurements" / "gpqa" / "Qwen")
    return repo


@pytest.mark.parametrize("ref", ["data/../other-data", "data/../../other-data", "other-data"])
def test_a_ref_that_is_a_folder_path_is_refused(
    repo: Path, ref: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)  # where the folder paths lead: tmp/other-data, repo/other-data
    with_releases(repo / "data", ref)
    data = load_dataset(repo / "data")
    with pytest.raises(ValidationFailed) as refused:
        load_releases(data, repo / "data")
    (problem,) = refused.value.problems
    assert (problem.pointer, problem.rule) == ("/releases/1/ref", "release.ref-not-git")
    assert problem.file.endswith("releases.yaml") and repr(ref) in problem.message
    assert "git tag" in problem.hint and "a folder is never read" in problem.hint


def test_build_refuses_a_folder_ref_before_writing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    with_releases(repo / "data", "data/../../other-data")
    out = tmp_path / "site"
    with pytest.raises(ValidationFailed) as refused:
        build_site(repo / "data", out, project=REPO)
    assert [(p.pointer, p.rule) for p in refused.value.problems] == [
        ("/releases/1/ref", "release.ref-not-git")
    ]
    assert not (out / "data" / "v1").exists()


def test_a_dotted_path_is_refused_at_the_ref(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """../other-data (the issue's case) is refused where the ref is, whichever rule says so
    first (releases.yaml's schema does)."""
    monkeypatch.chdir(repo / "data")
    with_releases(repo / "data", "../other-data")
    with pytest.raises(ValidationFailed) as refused:
        load_releases(load_dataset(repo / "data"), repo / "data")
    assert [p.pointer for p in refused.value.problems] == ["/releases/1/ref"]


def test_a_tag_still_gives_the_release_its_data(repo: Path) -> None:
    (repo / "v1").mkdir()  # a folder named like the tag changes nothing: the tag is read
    with_releases(repo / "data", "v1")
    releases = load_releases(load_dataset(repo / "data"), repo / "data")
    old = releases[1].side.data
    assert old is not None and not releases[1].side.problems
    assert len(old.configurations) == len(load_dataset(DATA).configurations)


def test_an_unknown_ref_is_unreadable_not_fatal(repo: Path) -> None:
    """A tag missing (a shallow clone, issue 30) stays a note in the changelog."""
    with_releases(repo / "data", "v9")
    releases = load_releases(load_dataset(repo / "data"), repo / "data")
    (why,) = releases[1].side.problems
    assert (why.rule, why.pointer) == ("release.ref-unreadable", "/releases/1/ref")
    assert "no commit 'v9'" in why.message and str(repo) not in why.message


def test_diff_base_prefers_a_commit_over_a_folder_of_that_name(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    shutil.copytree(repo / "other-data", repo / "v1")  # a folder named like the tag
    with base_data("v1", repo / "data") as folder:
        assert folder != Path("v1") and (folder / "measurements" / "gpqa" / "Qwen").is_dir()
    with base_data("other-data", repo / "data") as folder:  # a folder, by design
        assert folder == Path("other-data")
    with (
        pytest.raises(ValueError, match="neither a commit"),
        base_data("no-such-thing", repo / "data"),
    ):
        pass
