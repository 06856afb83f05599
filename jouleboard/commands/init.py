"""``jouleboard init DIR``: a new leaderboard folder, ready to build, check and publish.

It holds registries (four accelerators, one task, one model), one example measurement that
validates, site.yaml, an about page to adapt, both GitHub workflows, requirements.txt (with
vendor/ and the wheel it names, when jouleboard was installed from a local wheel: so the
folder installs and builds wherever its CI runs, with nothing to edit) and a README with the
two commands; ``--example mlenergy-v3`` puts the bundled ML.ENERGY v3 data
(with its NOTICE) in place of the example data and about page. The folder is written
beside its final place and renamed into it, so an interrupted init leaves nothing
half-written; a non-empty DIR is refused, never overwritten.
"""

from __future__ import annotations

import argparse
import os
import shutil
import string
import sys
import tarfile
import tempfile
import urllib.parse
from importlib.resources import files
from pathlib import Path
from typing import NamedTuple

VENDOR = "vendor"  # the site's folder for the wheel requirements.txt names by path
ARCHIVES = (".whl", ".tar.gz", ".zip")
# Stored without the leading dot: package data and sdists drop hidden files.
_RENAMES = {"github": ".github", "gitignore": ".gitignore"}
# The README's notes for a folder with the example measurement, and for a bundled example.
_README_NOTES = {
    True: {
        "example_note": "`data/measurements/chat/example-org/` holds an example measurement: "
        "replace it (and the example model) with yours.",
        "about_note": "the about page (methodology, where the data comes from): edit its "
        '"Data source and license" section for your measurements.',
        "rank_task": "chat",
    },
    False: {
        "example_note": "`data/` holds The ML.ENERGY Benchmark v3 (Apache-2.0); `NOTICE` and "
        "every file's `provenance` say where it comes from: keep them when "
        "you publish it.",
        "about_note": "(optional) replaces the built-in about page (the ML.ENERGY "
        "methodology and data source).",
        "rank_task": "gpqa",
    },
}


class InitRefused(Exception):
    """DIR cannot be made (it is not empty, or is a file): printed as one line."""


def skeleton_dir() -> Path:
    return Path(str(files("jouleboard").joinpath("skeleton")))


def init_site(
    target: Path,
    example: str | None = None,
    requirement_line: str | None = None,
    vendor: Path | None = None,
) -> list[str]:
    """Make the leaderboard folder ``target``; return the files written (relative, sorted).
    ``requirement_line``: requirements.txt's jouleboard line, and ``vendor``: the archive
    (wheel or sdist) copied into vendor/ for it to name (default: :func:`requirement`'s).

    Raise :class:`InitRefused` if ``target`` exists and is not an empty folder; a symbolic
    link (even to an empty folder) is refused, not followed: the new folder would replace
    the link, not fill the folder it points to.
    """
    if target.is_symlink():
        raise InitRefused(
            f"{target} is a symbolic link; jouleboard init writes only into a "
            "new or empty folder, not through a link: give the folder's own "
            "path (nothing was changed)"
        )
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        kind = "non-empty folder" if target.is_dir() else "file"
        raise InitRefused(
            f"{target} is a {kind}; jouleboard init writes only into a "
            "new or empty folder (nothing was changed)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.init-", dir=target.parent))
    try:
        if requirement_line is None:
            origin = requirement()
            requirement_line, vendor = origin.line, origin.archive
        _write_skeleton(staging, requirement_line, with_example_data=example is None)
        if vendor is not None:  # requirements.txt names it by its path in the folder
            (staging / VENDOR).mkdir()
            shutil.copyfile(vendor, staging / VENDOR / vendor.name)
        if example is not None:
            _write_example(staging, example)
        written = sorted(
            p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()
        )
        staging.chmod(0o755)  # mkdtemp makes it private; a site folder is an ordinary one
        if target.exists():
            target.rmdir()  # empty, checked above
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return written


def _write_skeleton(root: Path, requirement_line: str, with_example_data: bool) -> None:
    skeleton = skeleton_dir()
    for source in sorted(skeleton.rglob("*")):
        relative = source.relative_to(skeleton)
        # A bundled example brings its own data/ and uses the built-in about page, written
        # for it; the skeleton's about page is a starting point for the user's own data.
        if not source.is_file() or (
            relative.parts[0] in ("data", "content") and not with_example_data
        ):
            continue
        parts = (_RENAMES.get(relative.parts[0], relative.parts[0]), *relative.parts[1:])
        destination = root.joinpath(*parts)
        destination.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8")
        if relative.as_posix() == "README.md":
            text = string.Template(text).substitute(_README_NOTES[with_example_data])
        destination.write_text(text, encoding="utf-8")
    (root / "requirements.txt").write_text(
        "# What the workflows install; upgrade on purpose (charts change with vl-convert).\n"
        f"{requirement_line}\n",
        encoding="utf-8",
    )


def _write_example(root: Path, name: str) -> None:
    """The bundled example's data/ and NOTICE: from the wheel's archive, or the checkout."""
    from jouleboard.core.resources import example_members, example_source

    source = example_source(name)
    if source.is_file():
        from jouleboard.core.safe_read import extract_tar

        with tarfile.open(source, "r:gz") as archive:
            extract_tar(archive, root)  # no links, no paths outside root
        return
    for relative, path in example_members(source):
        destination = root / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)


class Requirement(NamedTuple):
    """Where the new site's CI installs jouleboard from: requirements.txt's ``line``, what
    the user must do when CI cannot reach it (``note``; None: nothing), and the archive
    init copies into vendor/ for the line to name (``archive``; None: none)."""

    line: str
    note: str | None = None
    archive: Path | None = None


def requirement() -> Requirement:
    """How this jouleboard installs where the new site's CI runs. From the installed
    distribution's direct_url.json (PEP 610): none means it came from a package index (the
    version, pinned); a git URL and commit pin that commit; an http(s) URL is named; a local
    wheel or sdist is copied into the site's vendor/ and named by its path there; a checkout
    pins its commit of its https remote; a local folder CI cannot reach is said."""
    import json
    from importlib.metadata import PackageNotFoundError, distribution

    from jouleboard import __version__

    pinned = f"jouleboard=={__version__}"
    try:
        text = distribution("jouleboard").read_text("direct_url.json")
    except PackageNotFoundError:
        text = None
    if text is None:
        return Requirement(pinned)
    try:
        source = json.loads(text)
        url = str(source["url"])
    except (ValueError, KeyError, TypeError):
        return Requirement(pinned)
    vcs = source.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("commit_id"):
        return Requirement(f"jouleboard @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}")
    if url.startswith(("https://", "http://")):
        return Requirement(f"jouleboard @ {url}")
    local = Path(urllib.parse.unquote(url.removeprefix("file://")))
    if url.startswith("file://") and "archive_info" in source:
        why = _archive_problem(local, source["archive_info"])
        if why is None:
            return Requirement(f"./{VENDOR}/{local.name}", archive=local)
        return Requirement(*_unreachable(pinned, f"the archive {local}, which {why}"))
    if url.startswith("file://") and "dir_info" in source:
        remote = _git_remote_commit(local)
        if remote is not None:
            return Requirement(
                f"jouleboard @ git+{remote[0]}@{remote[1]}",
                f"requirements.txt pins jouleboard to commit {remote[1][:12]} of {remote[0]}, "
                "the checkout it is installed from: push that commit there if it is not yet",
            )
    return Requirement(*_unreachable(pinned, url))


def _unreachable(pinned: str, source: str) -> tuple[str, str]:
    """requirements.txt's lines and the note when CI cannot install from ``source``."""
    return f"# jouleboard: say where CI installs it from (README.md)\n{pinned}", (
        f"requirements.txt: jouleboard was installed from {source}, which the site's CI cannot "
        f"reach, and {pinned} is on no package index yet: replace that line with a source "
        "CI can install, e.g. jouleboard @ git+https://github.com/<owner>/jouleboard@<commit>, "
        f"the URL of a wheel you publish, or ./{VENDOR}/<the wheel> committed with the site"
    )


def _archive_problem(path: Path, info: object) -> str | None:
    """Why the wheel or sdist jouleboard was installed from cannot be copied into the site
    (gone, or changed since: its sha256 is not the one pip recorded), or None."""
    import hashlib

    if not path.name.endswith(ARCHIVES) or not path.is_file():
        return "is no longer there"
    hashes = info.get("hashes", {}) if isinstance(info, dict) else {}
    if isinstance(info, dict) and not hashes and str(info.get("hash", "")).startswith("sha256="):
        hashes = {"sha256": str(info["hash"]).removeprefix("sha256=")}
    wanted = hashes.get("sha256") if isinstance(hashes, dict) else None
    if wanted is not None and hashlib.sha256(path.read_bytes()).hexdigest() != wanted:
        return "has changed since it was installed"
    return None


def _git_remote_commit(folder: Path) -> tuple[str, str] | None:
    """(https URL of the remote 'origin', HEAD commit) of the git checkout ``folder``."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.strip()

    try:
        remote, commit = git("remote", "get-url", "origin"), git("rev-parse", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return None
    return (remote, commit) if remote.startswith("https://") else None


HELP = (
    "make a new leaderboard folder (registries, an example measurement, site.yaml, GitHub "
    "workflows)"
)


def add_arguments(n: argparse.ArgumentParser) -> None:
    from jouleboard.core.resources import EXAMPLES

    n.add_argument("dir", type=Path, help="the new folder (must not exist or be empty)")
    n.add_argument(
        "--example",
        choices=EXAMPLES,
        default=None,
        help="start from bundled data instead of the one example measurement",
    )


def run(args: argparse.Namespace) -> int:
    from jouleboard.commands.common import UsageError

    origin = requirement()  # read once: it may ask git
    try:
        written = init_site(args.dir, args.example, origin.line, origin.archive)
    except InitRefused as e:
        raise UsageError(str(e)) from None
    what = f"the {args.example} example" if args.example else "an example measurement"
    if origin.note is not None:
        print(f"note: {origin.note}", file=sys.stderr)
    if origin.archive is not None:
        print(
            f"{VENDOR}/{origin.archive.name}: the jouleboard this folder was made with, which "
            "requirements.txt installs (commit it: CI installs it from there)",
            file=sys.stderr,
        )
    print(
        f"made {args.dir} ({len(written)} files, with {what}); next:\n"
        f"  cd {args.dir}\n  jouleboard build     # the site, into site/\n"
        f"  jouleboard serve     # preview at http://127.0.0.1:8000/"
    )
    return 0
