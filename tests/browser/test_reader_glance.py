"""Smaller things a reader met (issue 40, item 9), each seen in Chromium: the B200 page opens
with an answer per task instead of 12,500 px of tables, switching task on /compare/ keeps the
models the new task has, and a task's finding names only the precisions the task has and
only the outputs that really differ."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [390, 1280])
def test_a_gpu_page_opens_with_an_answer_per_task(site_page: Any, width: int) -> None:
    page = site_page.page
    page.set_viewport_size({"width": width, "height": 844})
    site_page.goto("/gpus/b200/")
    glance = page.locator("ul.glance li")
    sections = page.locator("main section.task h2")
    assert glance.count() == sections.count() == 7
    # Each line names its task, links its section, and says who leads on this GPU.
    for i in range(glance.count()):
        line = glance.nth(i)
        target = (line.locator("a").get_attribute("href") or "").lstrip("#")
        assert page.locator(f"section#{target} h2").inner_text() == line.locator("a").inner_text()
        assert " leads " in line.inner_text() or "only model" in line.inner_text()
    heading = page.locator("#at-a-glance").bounding_box()
    assert heading is not None and heading["y"] < 844  # on the first screen, before any table
    first_table = page.locator("main table").first.bounding_box()
    assert first_table is not None and first_table["y"] > heading["y"]


def test_switching_task_on_compare_keeps_the_models_the_new_task_has(site_page: Any) -> None:
    page = site_page.page
    site_page.goto("/compare/?task=gpqa&models=openai/gpt-oss-20b,Qwen/Qwen3-8B")
    page.wait_for_selector("#compare-table tbody tr")
    page.select_option("#compare-task", "lm-arena-chat")
    # Qwen 3 8B was measured on Chat too, GPT OSS 20B was not: one stays, one drops out.
    # Wait for Chat's own choices (Llama 3.1 8B is measured on Chat only): until they are
    # drawn, gpqa's list, with Qwen 3 8B checked, is still on the page.
    page.wait_for_selector('input[name=models][value="meta-llama/Llama-3.1-8B-Instruct"]')
    assert page.locator('input[name=models][value="Qwen/Qwen3-8B"]').is_checked()
    models = parse_qs(urlsplit(page.url).query).get("models", [""])[0].split(",")
    assert models == ["Qwen/Qwen3-8B"]
    assert page.locator('input[name=models][value="openai/gpt-oss-20b"]').count() == 0


def test_a_finding_names_only_what_its_task_has(site_page: Any) -> None:
    page = site_page.page
    site_page.goto("/tasks/text-to-image/")
    note = page.locator("main .finding .note-text").inner_text()
    assert "FP8" not in note and "MXFP4" not in note  # text-to-image is BF16 only
    sentence = page.locator("main .finding .finding-text").inner_text()
    # SANA 1.5 1.6B and PixArt-Σ both make 1024×1024 images in 20 steps: one output, named
    # once with both models; FLUX.1 Dev's 50 steps are the difference.
    assert "SANA 1.5 1.6B and PixArt-Σ at 1024×1024, 20 steps" in sentence
    assert sentence.count("1024×1024, 20 steps") == 1
    site_page.goto("/tasks/gpqa/")
    assert "precision (BF16, FP8, MXFP4)" in page.locator("main .finding .note-text").inner_text()


@pytest.mark.parametrize("width", [390, 1280])
def test_every_header_help_link_is_a_target_a_finger_can_hit(site_page: Any, width: int) -> None:
    """Lighthouse's target-size audit (WCAG 2.5.8) failed the "?" links of the table headers
    on the home and task pages (about 14 px wide, beside the sort buttons): each is 24 x 24 px,
    overlaps no other control, and sits inside its own header (the MLPerf tables' System
    header once let its link go to the page's top right corner, over the site's header)."""
    page = site_page.page
    page.set_viewport_size({"width": width, "height": 844})
    for path in ("/", "/tasks/gpqa/", "/mlperf/", "/gpus/b200/"):
        site_page.goto(path)
        found = page.evaluate("""() => Array.from(document.querySelectorAll('th a.def'), (a) => {
            const r = a.getBoundingClientRect();
            const th = a.closest('th').getBoundingClientRect();
            const others = Array.from(a.closest('th').querySelectorAll('button, a'))
              .filter((o) => o !== a).map((o) => o.getBoundingClientRect());
            const hit = others.some((o) => o.right > r.left && o.left < r.right &&
                                           o.bottom > r.top && o.top < r.bottom);
            const inside = r.left >= th.left - 0.5 && r.right <= th.right + 0.5 &&
                           r.top >= th.top - 0.5 && r.bottom <= th.bottom + 0.5;
            return [a.getAttribute('href'), r.width, r.height, hit, inside];
        })""")
        assert found, path
        bad = [f for f in found if not (f[1] >= 24 and f[2] >= 24 and not f[3] and f[4])]
        assert not bad, (path, bad)
