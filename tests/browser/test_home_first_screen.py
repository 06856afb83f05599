"""The home page answers at a glance (issue 29 item 4, issue 40 item 3): one card per task
with its answer in brief and its top three as bars with their places. At 1280 x 800 every
card's title and answer, and the whole first row of cards, show without scrolling; on a
phone the first screen holds the first card whole, not one sentence."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.browser


def boxes(page: Any, selector: str) -> list[dict[str, float]]:
    found: list[dict[str, float]] = page.evaluate(
        """(sel) => Array.from(document.querySelectorAll(sel), (e) => {
          const r = e.getBoundingClientRect();
          return {x: r.x, y: r.y, bottom: r.bottom, right: r.right};
        })""",
        selector,
    )
    return found


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_task_answers_above_the_fold_at_1280_by_800(site_page: Any, scheme: str) -> None:
    page = site_page.page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.emulate_media(color_scheme=scheme)
    site_page.goto("/")
    cards = boxes(page, "ul.answers li.answer")
    assert len(cards) == 7  # one per bundled task
    titles = boxes(page, "li.answer h2")
    assert all(t["bottom"] <= 800 for t in titles), titles
    first_row = [c for c in cards if c["y"] == cards[0]["y"]]
    assert len(first_row) >= 3 and all(c["bottom"] <= 800 for c in first_row), first_row
    # Each card draws its top three, each bar no longer than the leader's.
    widths = page.evaluate("""() => Array.from(document.querySelectorAll('li.answer'), (li) =>
        Array.from(li.querySelectorAll('svg.mini-bar rect'), (r) => r.width.baseVal.value))""")
    assert all(len(w) == 3 and w[0] == 100 and w == sorted(w, reverse=True) for w in widths)
    # Readable: no text under 12 px in a card.
    smallest = page.evaluate("""() => Math.min(...Array.from(
        document.querySelectorAll('li.answer *'), (e) => e.textContent.trim() ?
        parseFloat(getComputedStyle(e).fontSize) : 99))""")
    assert smallest >= 12, smallest


def test_on_a_phone_the_first_screen_holds_a_whole_answer(site_page: Any) -> None:
    page = site_page.page
    page.set_viewport_size({"width": 390, "height": 844})
    site_page.goto("/")
    first = boxes(page, "ul.answers li.answer")[0]
    assert first["bottom"] <= 844 and first["right"] <= 390, first
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
