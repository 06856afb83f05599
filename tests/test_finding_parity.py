"""The finding follows the reader's view (issue 40): the browser's finding.js states the
sentence and the "what changes it" strip of any view with the same rules and words as
Python's plan/finding.py. Both run here on many views of every bundled task, from the same
explore JSON the page loads."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jouleboard.plan.explore import explore_payload
from jouleboard.plan.finding import View, default_view, task_finding
from jouleboard.plan.views import SiteView, TaskView

REPO = Path(__file__).resolve().parents[1]
MODULES = REPO / "templates" / "assets" / "js"

# finding.js viewFinding on each (payload, view), the payload's rows made records as the page
# makes them (rank.js records).
SCRIPT = """
const { pathToFileURL } = require('node:url');
const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const dir = process.argv[1];
Promise.all([import(pathToFileURL(dir + '/finding.js').href),
             import(pathToFileURL(dir + '/rank.js').href)]).then(([F, R]) => {
  const out = input.map(([data, views]) => {
    data.configs = R.records(data);
    return views.map((v) => F.viewFinding(data, v));
  });
  process.stdout.write(JSON.stringify(out));
});
"""


@pytest.fixture(scope="module")
def site(default_view: SiteView) -> SiteView:
    return default_view


def views(site: SiteView, t: TaskView) -> list[View]:
    """The default view, tighter and looser deadlines, another percentile, each GPU alone,
    each precision alone, an energy budget, and a view where nothing qualifies."""
    base = default_view(site, t)
    ms = base.ms
    scale = t.kind.latency.scale_ms
    precisions = sorted({c.weight_precision for c in t.configs})
    budget = sorted(c.energy_per_output_joules for c in t.configs)[len(t.configs) // 3]
    out = [
        base,
        View(ms / 6, base.percentile, base.gpus),
        View(ms * 3, base.percentile, base.gpus),
        View(1 * scale, base.percentile, base.gpus),  # nothing is this fast
        View(ms, "p90", base.gpus),
        View(ms, base.percentile, base.gpus, budget=budget),
        *(View(ms, base.percentile, frozenset({g})) for g in sorted(base.gpus)),
        *(View(ms, base.percentile, base.gpus, frozenset({p})) for p in precisions),
        View(ms / 2, base.percentile, frozenset({"H100"}), frozenset(precisions[:1])),
    ]
    return out


def browser_view(v: View) -> dict[str, Any]:
    return {
        "ms": v.ms,
        "percentile": v.percentile,
        "gpus": sorted(v.gpus),
        "precisions": None if v.precisions is None else sorted(v.precisions),
        "budget": v.budget,
    }


def test_the_browser_states_every_view_s_finding_as_python_does(site: SiteView) -> None:
    node = shutil.which("node")
    assert node is not None, "node is needed for the browser's half of this test"
    cases = []
    expected = []
    for t in site.tasks.values():
        payload = explore_payload(t, site.registry, lambda m: "", lambda g: "")
        task_views = views(site, t)
        cases.append([payload, [browser_view(v) for v in task_views]])
        for v in task_views:
            f = task_finding(site, t, v)
            expected.append({"sentence": f.sentence, "changes": list(f.changes)})
    out = subprocess.run(
        [node, "-e", SCRIPT, str(MODULES)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    got = [f for task in json.loads(out.stdout) for f in task]
    assert len(got) == len(expected) > 70
    for g, e in zip(got, expected, strict=True):
        assert g == e
    # The views differ: the sentences name what each view shows (not the default's).
    assert len({e["sentence"] for e in expected}) > len(site.tasks) * 6


def test_a_view_s_finding_states_that_view(site: SiteView) -> None:
    """At 50 ms the gpqa leader's figure is its best at 50 ms (31.49 tokens/J, issue 40),
    and on H100 alone the sentence says so and names an H100 configuration."""
    t = site.tasks["gpqa"]
    base = default_view(site, t)
    tight = task_finding(site, t, View(50.0, "p50", base.gpus)).sentence
    assert "≤ 50 ms" in tight and "31.49 tokens/J" in tight and "300 ms" not in tight
    h100 = task_finding(site, t, View(base.ms, "p50", frozenset({"H100"}))).sentence
    assert ", on H100, " in h100 and "1× H100" in h100 and "B200" not in h100


def test_a_budget_reads_in_the_tables_unit(site: SiteView) -> None:
    """A budget is kept in joules but stated as the budget box and the table read it: 70,000
    J/video is 0.07 MJ/video, 0.05 J/token stays 0.05 J/token."""

    def sentence(task: str, budget: float) -> str:
        t = site.tasks[task]
        base = default_view(site, t)
        return task_finding(site, t, replace(base, budget=budget)).sentence

    video = sentence("text-to-video", 70_000)
    assert ", at most 0.07 MJ/video" in video and "70000" not in video, video
    assert ", at most 0.05 J/token" in sentence("gpqa", 0.05)
