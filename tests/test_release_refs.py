"""A release's `ref` is a git ref of the site's own repository, never a folder (issue 25
item 10): a ref once read as a path first published another folder's data as an old
release's downloads. `jouleboard diff --base` still takes a folder, by design, but a commit
of that name wins over it.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tarfile
import zlib
from pathlib import Path

import pytest
import yaml

from jouleboard.core.problems import ValidationFailed
from jouleboard.core.safe_read import ArchiveRefused, extract_tar_stream
from jouleboard.engine.build import build_site
from jouleboard.loading.dataset import load_dataset
from jouleboard.plan.diff import base_data
from jouleboard.plan.releases import load_releases
from tests.cli_run import jouleboard as jouleboard_here
from tests.git_repo import git
from tests.golden.tree import DATA, REPO
from tests.measured import run_measured


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
        git(repo, *cmd)
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


@pytest.mark.slow  # starts a build of a git checkout's data
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


def test_an_unknown_ref_fails_the_build_located(repo: Path) -> None:
    """A ref git does not have (a tag missing from a shallow clone) stops the build: before,
    the changelog published the error and the release's downloads vanished (issue 30)."""
    with_releases(repo / "data", "v9")
    with pytest.raises(ValidationFailed) as refused:
        load_releases(load_dataset(repo / "data"), repo / "data")
    (why,) = refused.value.problems
    assert (why.rule, why.pointer) == ("release.ref-unreadable", "/releases/1/ref")
    assert "no commit 'v9'" in why.message and str(repo) not in why.message
    assert "fetch-depth: 0" in why.hint


def jouleboard(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return jouleboard_here(*args, cwd=cwd)


@pytest.mark.slow  # builds a site
def test_a_shallow_clone_fails_with_the_ref_a_full_clone_publishes_it(
    repo: Path, tmp_path: Path
) -> None:
    """What the deploy workflow meets: a second release committed on top of the tagged first
    one; a clone of depth 1 (checkout's default) lacks the tag, a full one has it."""
    with_releases(repo / "data", "v1")
    for cmd in (["add", "data"], ["commit", "-qm", "v2"]):
        git(repo, *cmd)
    for depth, name in ((["--depth", "1"], "shallow"), ([], "full")):
        subprocess.run(
            ["git", "clone", "-q", *depth, f"file://{repo}", str(tmp_path / name)],
            check=True,
            timeout=60,
        )
    checked = jouleboard("validate", "--data", "data", cwd=tmp_path / "shallow")
    built = jouleboard("build", "--data", "data", "--out", "site", cwd=tmp_path / "shallow")
    for done in (checked, built):
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.startswith(
            "data/releases.yaml: /releases/1/ref: release.ref-unreadable: cannot read release "
            "v1's data at 'v1': no commit 'v1'"
        ), done.stderr
    assert not (tmp_path / "shallow" / "site").exists()
    built = jouleboard("build", "--data", "data", "--out", "site", cwd=tmp_path / "full")
    assert built.returncode == 0, built.stderr
    assert any((tmp_path / "full" / "site" / "data" / "v1").iterdir())
    assert (
        "could not be read"
        not in (tmp_path / "full" / "site" / "changelog" / "index.html").read_text()
    )


@pytest.mark.parametrize(
    "workflow",
    [
        REPO / ".github" / "workflows" / "deploy.yml",
        REPO / "jouleboard" / "skeleton" / "github" / "workflows" / "deploy.yml",
    ],
    ids=["repository", "init"],
)
def test_the_deploy_checkout_fetches_history_and_tags(workflow: Path) -> None:
    steps = [
        s
        for job in yaml.safe_load(workflow.read_text())["jobs"].values()
        for s in job.get("steps", [])
    ]
    checkouts = [s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert checkouts and all(s.get("with", {}).get("fetch-depth") == 0 for s in checkouts)


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


GIB = 1 << 30
MEMORY_BOUND = 512 * 1024 * 1024  # bytes: issue 41's bound on the largest input's peak


def commit_zeros(repo: Path, name: str, tag: str, size: int = GIB) -> None:
    """Tag a commit whose tree adds ``name``, ``size`` zero bytes, and remove the file in
    the next commit. The blob is written as git writes a loose object (the zlib stream of
    ``blob <size>\\0`` and the content, named by their SHA-1), computed here in ~3 s and
    4.5 MB of disk; git itself would take ~12 s to hash and pack it."""
    header = b"blob %d\0" % size
    digest, deflate = hashlib.sha1(header), zlib.compressobj(1)
    chunk = bytes(16 << 20)
    assert size % len(chunk) == 0
    staged = repo / ".git" / "objects" / "zeros.tmp"
    with staged.open("wb") as f:
        f.write(deflate.compress(header))
        for _ in range(size // len(chunk)):
            digest.update(chunk)
            f.write(deflate.compress(chunk))
        f.write(deflate.flush())
    oid = digest.hexdigest()
    (repo / ".git" / "objects" / oid[:2]).mkdir(exist_ok=True)
    staged.rename(repo / ".git" / "objects" / oid[:2] / oid[2:])
    for cmd in (
        ["update-index", "--add", "--cacheinfo", f"100644,{oid},{name}"],
        ["commit", "-qm", "zeros"],
        ["tag", tag],
        ["rm", "-q", "--cached", name],
        ["commit", "-qm", "no zeros"],
    ):
        git(repo, *cmd)


@pytest.mark.slow  # writes a 1 GiB blob (~3 s) and runs the command line twice
def test_a_ref_holding_a_gib_file_is_refused_at_its_header_in_little_memory(
    repo: Path,
) -> None:
    """Issue 41 item 3: a commit holding a 1 GiB file of zeros (4.5 MB in git), removed by
    the next commit, named as an older release's ref or as diff's base. Before, git
    archive's whole output was read into memory: validate peaked at 2.1 GB and went on.
    Now the archive is unpacked as it streams, and the file's tar header stops it: one
    located line naming the ref and the file, in a few tens of MB."""
    commit_zeros(repo, "data/zeros.bin", "zeros")
    with_releases(repo / "data", "zeros")
    too_large = f"data/zeros.bin has {GIB:,} bytes, over the {4 * 1024 * 1024:,}-byte cap"
    checked, peak = run_measured("validate", "--data", "data", cwd=repo)
    assert checked.returncode == 1, checked.stderr
    assert checked.stderr.splitlines()[0] == (
        "data/releases.yaml: /releases/1/ref: file.too-large: release v1's data: commit "
        f"'zeros': {too_large} (name a ref whose data/ a data folder could hold (each file "
        f"at most {4 * 1024 * 1024:,} bytes, {512 * 1024 * 1024:,} in all))"
    )
    assert "Traceback" not in checked.stderr
    assert peak < MEMORY_BOUND, f"validate peaked at {peak / 1e6:.0f} MB"
    compared, peak = run_measured("diff", "--base", "zeros", "--data", "data", cwd=repo)
    assert compared.returncode == 2
    assert (
        compared.stderr
        == f"jouleboard diff: error: cannot read base 'zeros': commit 'zeros': {too_large}\n"
    )
    assert peak < MEMORY_BOUND, f"diff peaked at {peak / 1e6:.0f} MB"


def _tar(files: dict[str, int]) -> io.BytesIO:
    """A tar archive of files of the given sizes (zero bytes each)."""
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode="w") as tar:
        for name, size in files.items():
            info = tarfile.TarInfo(name)
            info.size = size
            tar.addfile(info, io.BytesIO(bytes(size)))
    stream.seek(0)
    return stream


def test_an_archive_past_the_caps_stops_at_the_file_that_passes_them(tmp_path: Path) -> None:
    """The caps of a data folder in all (bytes, files), tried with small caps: the file
    that passes one is named, and nothing after it is unpacked."""
    with pytest.raises(ArchiveRefused) as refused:
        extract_tar_stream(_tar({"a": 40, "b": 40, "c": 40}), tmp_path / "bytes", 50, 100, 10)
    assert (refused.value.rule, refused.value.message) == (
        "file.too-large",
        "its files pass 100 bytes in all at c",
    )
    assert sorted(p.name for p in (tmp_path / "bytes").iterdir()) == ["a", "b"]
    with pytest.raises(ArchiveRefused) as refused:
        extract_tar_stream(_tar({"a": 1, "b": 1, "c": 1}), tmp_path / "count", 50, 100, 2)
    assert (refused.value.rule, refused.value.message) == (
        "file.too-many",
        "more than 2 files (at c)",
    )
    extract_tar_stream(_tar({"a": 50, "b": 50}), tmp_path / "within", 50, 100, 2)
    assert [p.stat().st_size for p in sorted((tmp_path / "within").iterdir())] == [50, 50]


def test_diff_base_refuses_a_folder_that_is_not_a_data_folder(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 41 item 9: --base=/etc was read as a data folder (763 problems, exit 0)."""
    from jouleboard.cli import main

    assert main(["diff", "--base", "/etc", "--data", str(repo / "data")]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "jouleboard diff: error: cannot read base '/etc': '/etc' is a folder but not a data "
        "folder (it has no site.yaml, models.yaml, gpus.yaml, tasks.yaml)\n"
    )
