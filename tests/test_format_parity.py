"""Python (measure/formats.py, ``show``) and the browser (templates/assets/js/formats.js,
``show``) print the same number the same way, for every display rule: hand-picked edge cases
and every value of the committed golden site's explore data, by its column's own rule; and
the browser's deadline wording and file names are Python's."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from jouleboard.measure.formats import PRECISION_LABELS, show
from tests.missing_tool import missing_tool

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
    """formats.js ``show`` of each (rule, value) of ``cases``."""
    return node_call("formats.js", "show", [[rule, v, precisions] for rule, v in cases])


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


MODULES = REPO / "templates" / "assets" / "js"


def node_call(module: str, function: str, cases: list[list[Any]]) -> list[Any]:
    """``function`` of the browser module ``module`` (templates/assets/js/) applied to each
    argument list of ``cases``."""
    node = shutil.which("node")
    if node is None:
        missing_tool("node is not installed")
    script = (
        "const { pathToFileURL } = require('node:url');\n"
        "const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n"
        "import(pathToFileURL(process.argv[1]).href).then((M) => process.stdout.write(\n"
        f"  JSON.stringify(cases.map((a) => M.{function}(...a)))));\n"
    )
    out = subprocess.run(
        [node, "-e", script, str(MODULES / module)],
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
    assert node_call("downloads.js", "deadlineSlug", deadlines) == [
        deadline_slug(ms, p) for ms, p in deadlines
    ]
    sides = [
        [300.0, [3.8, 250.0]],
        [5.0, [3.8, 250.0]],
        [30.0, [1.0, 1000.0]],
        [32.0, [1.0, 1000.0]],
        [10.0, []],
        [10.0, [10.0]],
    ]
    assert node_call("charts.js", "side", sides) == [side(v, values) for v, values in sides]


def test_deadline_wording_matches_python() -> None:
    """The browser words a deadline as Latency.text does, and labels a chart's deadline rule
    as plan/views.py does, for each kind's wording (as the explore JSON carries it)."""
    from jouleboard.config.schema import Percentile
    from jouleboard.kinds.diffusion import DiffusionKind
    from jouleboard.kinds.token import TokenKind

    for latency in (TokenKind.latency, DiffusionKind.latency):
        browser = latency.browser()
        percentiles: tuple[Percentile, ...] = ("p50", "p90")
        cases = [(ms, p) for ms in (300.0, 50.0, 2.5, 1500.0, 30000.0, 0.125) for p in percentiles]
        texts = node_call("wording.js", "deadlineText", [[ms, p, browser] for ms, p in cases])
        assert texts == [latency.text(ms, p) for ms, p in cases]
        labels = node_call("wording.js", "deadlineLabel", [[ms, browser] for ms, _ in cases])
        assert labels == [f"deadline {latency.value(ms)}" for ms, _ in cases]
