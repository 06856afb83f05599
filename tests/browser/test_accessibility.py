"""axe-core on every page type, in the light and the dark colour scheme."""

from __future__ import annotations

from typing import Any

import pytest

PAGES = [
    "/",
    "/tasks/gpqa/",
    "/models/openai--gpt-oss-20b/",
    "/gpus/h100/",
    "/models/",
    "/gpus/",
    "/about/",
    "/downloads/",
    "/404.html",
]


@pytest.mark.browser
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_or_critical_axe_violations(pw_browser: Any, site_url: str, scheme: str) -> None:
    axe_module = pytest.importorskip("axe_playwright_python.sync_playwright")
    axe = axe_module.Axe()
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    try:
        for path in PAGES:
            page.goto(site_url + path)
            results = axe.run(page)
            bad = [
                f"{v['id']} ({v['impact']}): {v['help']} — "
                + "; ".join(n["target"][0] if n["target"] else "?" for n in v["nodes"][:3])
                for v in results.response["violations"]
                if v["impact"] in ("serious", "critical")
            ]
            if bad:
                found[path] = bad
    finally:
        context.close()
    assert found == {}
