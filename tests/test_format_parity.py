"""Python (measure/formats.py, ``show``) and the browser (templates/assets/explore.js,
``show``) print the same number the same way, for every display rule: hand-picked edge cases
and every value of the committed golden site's explore data, by its column's own rule."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jouleboard.measure.formats import PRECISION_LABELS, show

REPO = Path(__file__).resolve().parents[1]
EXPLORE = REPO / "tests" / "golden" / "expected" / "explore"
RULES = ("int", "fixed1", "fixed2", "fixed4", "sig2", "sig3", "sig4")  # numbers
TEXTS = (
    ("text", "1024×1024, 81 frames"),
    ("text", "TP1 EP1 DP1"),
    ("precision", "mxfp4"),
    ("precision", "bfloat16"),
)
EDGES = (
    0,
    1,
    7,
    9.996,
    99.95,
    0.5,
    1.5,
    2.5,
    0.000123456,
    0.028449,
    35.15488,
    66.0,
    4096,
    123456.789,
    1234567.891,
    0.999,
    1e-7,
    12.3456789,
    1000,
    999.5,
)


def node_show(cases: list[tuple[str, Any]], precisions: dict[str, str]) -> list[str]:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but node is not installed")
        pytest.skip("node is not installed")
    script = (
        "const E = require(process.argv[1]);\n"
        "const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        "process.stdout.write(JSON.stringify(input.cases.map(([rule, v]) =>\n"
        "  E.show(rule, v, input.precisions))));\n"
    )
    out = subprocess.run(
        [node, "-e", script, str(REPO / "templates/assets/explore.js")],
        input=json.dumps({"cases": cases, "precisions": precisions}),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: list[str] = json.loads(out.stdout)
    return result


def test_edge_cases_print_alike() -> None:
    cases = [(rule, v) for rule in RULES for v in EDGES] + [("sig3", None), ("int", None), *TEXTS]
    # The page's explore data carries the precision labels (plan/explore.py).
    assert node_show(cases, PRECISION_LABELS) == [show(rule, v) for rule, v in cases]


def test_every_explore_value_prints_alike() -> None:
    cases: list[tuple[str, Any]] = []
    precisions: dict[str, str] = {}
    for path in sorted(EXPLORE.glob("*.json")):
        data = json.loads(path.read_text())
        precisions.update(data["precisions"])
        for column in data["table"]:
            if column["show"] == "gpu":
                continue
            keys = (column.get("by_percentile") or {"": column["key"]}).values()
            for key in keys:
                i = data["columns"].index(key)
                cases += [(column["show"], row[i]) for row in data["rows"]]
    assert len(cases) > 100
    assert node_show(cases, precisions) == [show(rule, v) for rule, v in cases]


def node_call(function: str, cases: list[list[Any]]) -> list[Any]:
    """``explore.js``'s exported ``function`` applied to each argument list of ``cases``."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but node is not installed")
        pytest.skip("node is not installed")
    script = (
        "const E = require(process.argv[1]);\n"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        f"process.stdout.write(JSON.stringify(cases.map((a) => E.{function}(...a))));\n"
    )
    out = subprocess.run(
        [node, "-e", script, str(REPO / "templates/assets/explore.js")],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: list[Any] = json.loads(out.stdout)
    return result


def test_view_download_names_and_label_sides_match_python() -> None:
    """The browser names a downloaded view's deadline as urls.deadline_slug names the prebuilt
    files, and puts chart labels on the side render/charts.py ``side`` does."""
    from jouleboard.core.urls import deadline_slug
    from jouleboard.render.charts import side

    deadlines = [
        [ms, p]
        for ms in (300.0, 50.0, 2.5, 1000.0, 1500.0, 30000.0, 1800000.0, 0.125)
        for p in ("p50", "batch")
    ]
    assert node_call("deadlineSlug", deadlines) == [deadline_slug(ms, p) for ms, p in deadlines]
    sides = [
        [300.0, [3.8, 250.0]],
        [5.0, [3.8, 250.0]],
        [30.0, [1.0, 1000.0]],
        [32.0, [1.0, 1000.0]],
        [10.0, []],
        [10.0, [10.0]],
    ]
    assert node_call("side", sides) == [side(v, values) for v, values in sides]
