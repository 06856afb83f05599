"""The checks pyproject.toml configures, run by the README's test command (so by CI): ruff's
lint rules and formatting over the repository, and mypy --strict over the package. Each
prints the tool's own findings when it fails.

mypy keeps its incremental cache in pytest's cache folder (.pytest_cache/d/mypy, which
``pytest --cache-clear`` empties), so a rerun checks only the modules that changed and what
depends on them: about 0.3 s instead of 12 s. A run without pytest's cache (``-p
no:cacheprovider``; a fresh checkout, as in CI, has none yet) checks everything from cold.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.golden.tree import REPO

CHECKS = {
    "ruff check": ["ruff", "check", "--no-cache", "."],
    "ruff format --check": ["ruff", "format", "--check", "--no-cache", "."],
    # strict = true and packages = ["jouleboard"] come from pyproject.toml's [tool.mypy].
    "mypy --strict": ["mypy", "--strict"],
}


def mypy_cache(config: pytest.Config) -> list[str]:
    """mypy's cache options: its folder in pytest's cache, or none at all."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return ["--no-incremental", "--cache-dir", os.devnull]
    return ["--cache-dir", str(cache.mkdir("mypy"))]


@pytest.mark.parametrize("name", list(CHECKS))
def test_the_configured_check_passes(name: str, request: pytest.FixtureRequest) -> None:
    command = CHECKS[name] + (mypy_cache(request.config) if name.startswith("mypy") else [])
    done = subprocess.run(
        [sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{name} found:\n{done.stdout}{done.stderr}"
