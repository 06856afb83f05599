"""The checks pyproject.toml configures, run by the README's test command (so by CI): ruff's
lint rules and formatting over the repository, and mypy --strict over the package. Each
prints the tool's own findings when it fails."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.golden.tree import REPO

CHECKS = {
    "ruff check": ["ruff", "check", "--no-cache", "."],
    "ruff format --check": ["ruff", "format", "--check", "--no-cache", "."],
    # strict = true and packages = ["jouleboard"] come from pyproject.toml's [tool.mypy].
    "mypy --strict": ["mypy", "--strict", "--no-incremental", "--cache-dir", "/dev/null"],
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_the_configured_check_passes(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", *CHECKS[name]], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{name} found:\n{done.stdout}{done.stderr}"
