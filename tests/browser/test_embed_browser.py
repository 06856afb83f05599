"""Embed pages inside an iframe of an article page, at phone and desktop widths."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import watch

EMBEDS = [
    "top--gpqa",
    "configurations--gpqa",
    "pareto--openai--gpt-oss-20b--gpqa",
    "lengths--qwen--qwen3-8b--gpqa",
    "gpu-compare--h100--gpqa",
]


@pytest.mark.browser
@pytest.mark.parametrize("width", [320, 1200])
def test_embeds_render_in_an_iframe(pw_browser: Any, site_url: str, width: int) -> None:
    context = pw_browser.new_context(viewport={"width": width + 40, "height": 900})
    page = context.new_page()
    rec = watch(context, page, site_url)
    frames = "".join(
        f'<iframe src="{site_url}/embed/{cid}/" title="{cid}" width="{width}" '
        f'height="600" style="border:0"></iframe>'
        for cid in EMBEDS
    )
    try:
        # The article lives on the same local server's origin, as a page of its own.
        page.route(
            f"{site_url}/article.html",
            lambda route: route.fulfill(
                status=200,
                content_type="text/html",
                body=f"<!doctype html><title>Article</title><h1>Article</h1>{frames}",
            ),
        )
        rec.goto("/article.html")
        for cid in EMBEDS:
            frame = page.frame_locator(f'iframe[title="{cid}"]')
            frame.locator("svg.marks").wait_for(timeout=20_000)
            assert frame.locator("g.role-mark").count() > 0, cid
            # Fits the iframe: no horizontal scroll inside it.
            assert frame.locator("body").evaluate("b => b.scrollWidth <= window.innerWidth + 1"), (
                cid,
                width,
            )
            assert frame.locator("a", has_text="Full page").count() == 1
            assert "2026-02-16" in frame.locator(".credit").inner_text()
    finally:
        context.close()
    assert rec.problems() == []
    assert rec.external_requests() == []
