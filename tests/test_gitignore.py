"""What builds and previews leave beside their output is ignored by git, in this repository
and in a site made by `jouleboard init` (a plain `git add -A` once committed `.site.lock`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from jouleboard.cli import main
from jouleboard.output.folder import locked
from tests.golden.tree import REPO

# Beside an output folder "site": its lock and manifest; the preview's folder and lock.
LEFT_BESIDE = (
    ".site.lock",
    ".site.manifest.json",
    ".jouleboard-preview/index.html",
    ".jouleboard-preview.lock",
)


def ignored(repo: Path, names: tuple[str, ...]) -> set[str]:
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", *names],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    return set(done.stdout.split())


def test_the_repository_ignores_what_a_build_leaves() -> None:
    assert ignored(REPO, LEFT_BESIDE) == set(LEFT_BESIDE)


def test_an_initialised_site_ignores_what_a_build_leaves(tmp_path: Path) -> None:
    site = tmp_path / "board"
    assert main(["init", str(site)]) == 0
    subprocess.run(["git", "init", "-q", str(site)], check=True)
    with locked(site / "site"):  # the lock file a build makes, made the way a build does
        pass
    assert (site / ".site.lock").is_file()
    assert ignored(site, LEFT_BESIDE) == set(LEFT_BESIDE)
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=site,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".site.lock" not in status
