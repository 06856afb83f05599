"""git in the tests' own repositories: a fixed author and no signing, whatever the machine's
git configuration says."""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]


def git(cwd: Path, *args: str) -> str:
    """Run ``git args`` in ``cwd``; its standard output, stripped. A failure fails the test
    (CalledProcessError), as does a git that runs past a minute."""
    done = subprocess.run(
        [*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip()
