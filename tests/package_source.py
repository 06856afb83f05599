"""The package's modules, each parsed once per test process: the import graph's three tests
and the rule-id search walk every module (each parse of the package took ~0.2 s)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "jouleboard"


@functools.cache
def package_trees() -> dict[Path, ast.Module]:
    """Every module of the package by path, sorted; read-only (shared by the tests)."""
    return {
        path: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for path in sorted(PACKAGE.rglob("*.py"))
    }
