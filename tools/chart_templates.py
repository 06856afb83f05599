"""Write jouleboard/render/chart_templates.json: the chart templates that the bundled data
(data/) and the test data (tests/golden/data/) use, made with the installed Altair.

A build finds a template there by its key, which covers the Altair version and the source
of jouleboard/render/charts.py (see ``template`` there): with those of this run, planning
those data never imports Altair. After changing charts.py or upgrading Altair, run

    python tools/chart_templates.py

(tests/test_chart_templates.py fails until then: the shipped templates would only go
unused, but a build would be 0.3 s slower).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = (ROOT / "data", ROOT / "tests" / "golden" / "data")


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from jouleboard.engine.sources import load_sources, site_urls
    from jouleboard.plan.site import plan_site
    from jouleboard.render import charts

    with tempfile.TemporaryDirectory(prefix="jouleboard-templates-") as scratch:
        charts.PACKAGED = Path(scratch) / "none.json"  # every template made here, by Altair
        for data in DATA:
            sources = load_sources(data, data.parent)
            urls = site_urls(sources.data.registry.site, None, None)
            plan_site(sources.data, urls, sources.releases, sources.about, sources.pages)
    templates = {
        key: {
            "kind": kind,
            "args": list(args),
            "spec": json.dumps(getattr(charts, kind).__wrapped__(*args), sort_keys=True),
        }
        for key, (kind, args) in charts.templates_used().items()
    }
    target = ROOT / "jouleboard" / "render" / "chart_templates.json"
    target.write_text(json.dumps(templates, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(templates)} chart templates to {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
