"""What git says of the repository that holds a data folder: which commit a ref names.

Light on purpose: the inputs digest (engine/fingerprint.py) asks on a build with nothing to
do, before the pipeline is imported; plan/diff.py takes a release's data out of a commit.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

# git check-ref-format's rules for a ref name: no component starting with '.' or ending in
# '.lock', no '..', '@{', '//', control character, space or any of ~^:?*[\\, not ending in
# '/' or '.', not '@'; and here, no leading '-' (it would read as a command-line option).
_REF_BREAKS = re.compile(r"(^|/)\.|\.lock(/|$)|\.\.|@\{|//|[\x00-\x20\x7f~^:?*\[\\]|/$|\.$|^@$|^-")


def ref_problem(ref: str) -> str | None:
    """Why ``ref`` cannot be a git branch, tag or commit name (None when it can)."""
    if not ref:
        return "it is empty"
    if _REF_BREAKS.search(ref):
        return (
            "it is not a git ref name (a path such as ../other-data is one: no '..', "
            "no component starting with '.', no leading '-' or trailing '/')"
        )
    return None


def git(args: list[str], cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def commit_of(rev: str, data_dir: Path) -> tuple[Path, str]:
    """The repository holding ``data_dir``, and the commit ``rev`` names in it; ValueError
    when there is no repository or no such commit."""
    if rev.startswith("-"):
        raise ValueError("a git revision cannot start with '-'")
    try:
        root = Path(git(["rev-parse", "--show-toplevel"], data_dir))
        commit = git(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], data_dir
        )
    except (OSError, subprocess.CalledProcessError):
        raise ValueError(
            f"no commit {rev!r} in the git repository holding the data folder "
            "(a tag missing from a shallow clone? fetch it)"
        ) from None
    return root, commit


def commits_of(refs: Sequence[str], data_dir: Path) -> tuple[str, ...] | None:
    """The top folder of the repository holding ``data_dir`` and the commit each of ``refs``
    names in it now, from one call of git; None when one is not a ref name, or git cannot
    say (no git, no repository, no such commit)."""
    if any(ref_problem(ref) is not None for ref in refs):  # so none reads as an option
        return None
    # (The closing '--' keeps git from taking a name for a file.)
    args = ["rev-parse", "--show-toplevel", *(f"{ref}^{{commit}}" for ref in refs), "--"]
    try:
        lines = git(args, data_dir).splitlines()
    except (OSError, subprocess.CalledProcessError):
        return None
    return tuple(lines[: 1 + len(refs)])
