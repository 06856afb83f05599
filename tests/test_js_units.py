"""Run the JavaScript unit tests (tests/js/) under Node's own test runner."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.missing_tool import missing_tool

REPO = Path(__file__).resolve().parents[1]


def test_node_unit_tests_pass() -> None:
    node = shutil.which("node")
    if node is None:
        missing_tool("node is not installed: the JS unit tests cannot run")
    result = subprocess.run(
        [node, "--test", str(REPO / "tests" / "js")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout
