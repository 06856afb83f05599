"""The chart templates shipped with the package (jouleboard/render/chart_templates.json):
each is what its chart kind makes now, and they are every one that the bundled data and the
test data use, so planning those data never imports Altair. When a test here fails, run
``python tools/chart_templates.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jouleboard.render import charts

# Altair makes each template again, and the plans run in a new interpreter.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
FIX = "run: python tools/chart_templates.py"


def test_each_shipped_template_is_what_its_chart_kind_makes_now() -> None:
    shipped = json.loads(charts.PACKAGED.read_text(encoding="utf-8"))
    assert len(shipped) >= 9, FIX  # one or more of each kind the bundled data draws
    for key, entry in shipped.items():
        kind, args = entry["kind"], tuple(entry["args"])
        assert key == charts.template_key(kind, args), f"{kind}{args}: stale key; {FIX}"
        made = getattr(charts, kind).__wrapped__(*args)  # Altair, not the shipped text
        assert json.loads(entry["spec"]) == made, f"{kind}{args}: another spec; {FIX}"


_PLAN = """
import sys
from pathlib import Path
from jouleboard.engine.sources import load_sources, site_urls
from jouleboard.plan.site import plan_site
from jouleboard.render import charts

for data in map(Path, sys.argv[1:]):
    sources = load_sources(data, data.parent)
    urls = site_urls(sources.data.registry.site, None, None)
    plan_site(sources.data, urls, sources.releases, sources.about, sources.pages)
print(len(charts.templates_used()), "altair" in sys.modules)
"""


def test_planning_the_bundled_and_the_test_data_never_imports_altair(tmp_path: Path) -> None:
    """Not even into a new output with an empty chart cache: the first build of a fresh
    checkout (a deploy's) made every template with Altair, ~0.3 s of its plan."""
    data = [str(REPO / "data"), str(REPO / "tests" / "golden" / "data")]
    done = subprocess.run(
        [sys.executable, "-c", _PLAN, *data],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env={**os.environ, "JOULEBOARD_CACHE": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    used, altair = done.stdout.split()
    assert int(used) >= 9 and altair == "False", f"{done.stdout}; {FIX}"
