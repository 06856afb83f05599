"""What the automated audit (test_accessibility.py) cannot see, for keyboard and screen-reader
users: where focus goes after a control redraws the page, what the slider and the live
charts say, and how long a run of slider key presses is in the browser's history. Each case
is one a review found broken; names are read from Chromium's accessibility tree (CDP)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import Recorder, watch

pytestmark = pytest.mark.browser

ACTIVE = """() => { const e = document.activeElement;
  return e ? [e.tagName, e.getAttribute('value') || '', e.className || ''] : null; }"""


def ax_name(page: Any, selector: str) -> str:
    """The accessible name Chromium computes for the first element ``selector`` finds."""
    session = page.context.new_cdp_session(page)
    try:
        document = session.send("DOM.getDocument", {"depth": 0})
        node = session.send(
            "DOM.querySelector", {"nodeId": document["root"]["nodeId"], "selector": selector}
        )
        assert node["nodeId"], selector
        tree = session.send(
            "Accessibility.getPartialAXTree", {"nodeId": node["nodeId"], "fetchRelatives": False}
        )
        name: str = tree["nodes"][0]["name"]["value"]
        return name
    finally:
        session.detach()


def test_the_slider_says_the_deadline_and_a_run_of_keys_is_one_history_entry(
    pw_context: Any, site_url: str
) -> None:
    """It read "784" (its position on a 0-1000 scale) and pushed one history entry per key
    press: 197 presses to reach 100 ms pushed the reader's previous page out of reach. (A
    context of its own: the test installs a clock in it.)"""
    pw_context.clock.install()
    page = pw_context.new_page()
    site_page = watch(pw_context, page, site_url)
    site_page.goto("/tasks/gpqa/")
    slider = page.locator("#deadline-range")
    slider.wait_for(state="visible")
    assert slider.get_attribute("aria-valuetext") == "300 ms"
    before = page.evaluate("history.length")
    # The presses come within one gesture's time whatever the machine's speed: the page's
    # clock stands still while they do (it is the clock the page measures them with).
    page.clock.pause_at(page.evaluate("Date.now()") + 1000)
    slider.focus()
    for _ in range(8):
        page.keyboard.press("ArrowLeft")
    shown = page.input_value("#deadline-ms")
    assert shown != "300"
    assert slider.get_attribute("aria-valuetext") == f"{shown} ms"
    assert page.evaluate("history.length") == before + 1
    assert ax_name(page, "#percentile") == "Deadline on percentile"  # it was "on"
    assert site_page.errors() == []


def test_ticking_a_model_on_compare_keeps_focus_on_its_box(site_page: Recorder) -> None:
    """Every tick redrew the boxes and focus fell to <body>: the next Tab went back to the
    first model."""
    page = site_page.page
    site_page.goto("/compare/?task=gpqa")
    boxes = page.locator("input[name=models]")
    boxes.nth(2).wait_for(state="visible")
    value = boxes.nth(2).get_attribute("value")
    boxes.nth(2).focus()
    page.keyboard.press("Space")
    page.wait_for_function(
        "v => new URLSearchParams(location.search).get('models') === v", arg=value
    )
    assert page.evaluate(ACTIVE)[:2] == ["INPUT", value]
    page.keyboard.press("Tab")
    assert page.evaluate(ACTIVE)[1] == boxes.nth(3).get_attribute("value")
    assert site_page.errors() == []


def test_a_chart_drawn_from_the_keyboard_takes_focus_and_has_one_name(
    site_page: Recorder,
) -> None:
    """The "Explore interactively" button went away with focus on it (focus fell to
    <body>), and the drawn chart was "Vega visualization" over a label per mark."""
    page = site_page.page
    site_page.goto("/tasks/gpqa/")
    figure = page.locator("figure#chart-top--gpqa")
    button = figure.locator("button.interactive")
    button.focus()
    page.keyboard.press("Enter")
    figure.locator(".vega svg.marks").wait_for(state="attached")
    page.wait_for_function("() => document.activeElement !== document.body")
    inside = page.evaluate("() => !!document.activeElement.closest('figure#chart-top--gpqa')")
    assert inside, page.evaluate(ACTIVE)
    name = ax_name(page, "figure#chart-top--gpqa .vega svg.marks")
    title = figure.locator(".chart-title").inner_text().strip()
    assert name.startswith(f"Interactive chart: {title}"), name
    # The image role makes the marks one picture: none of their labels is read.
    assert figure.locator(".vega svg.marks").get_attribute("role") == "img"
    assert site_page.errors() == []


def test_sort_buttons_are_named_without_their_arrow(site_page: Recorder) -> None:
    """The arrows drawn after a header ("J/token ↕", "▲") were part of its name."""
    page = site_page.page
    site_page.goto("/tasks/gpqa/")
    button = page.locator("#ranking-gpqa th.col-energy_per_token_joules button.sort")
    button.wait_for(state="visible")
    assert ax_name(page, "#ranking-gpqa th.col-energy_per_token_joules button.sort") == "J/token"
    button.click()
    assert ax_name(page, "#ranking-gpqa th.col-energy_per_token_joules button.sort") == "J/token"
    assert site_page.errors() == []


def test_a_focused_task_link_on_a_phone_is_not_faded_or_clipped(
    pw_browser: Any, site_url: str
) -> None:
    """At 320 px the row of task links scrolls, its right end faded out: a link focused by
    Tab scrolled just into view, into the fade ("Chat" 100% inside it), its ring clipped."""
    context = pw_browser.new_context(viewport={"width": 320, "height": 700})
    try:
        page = context.new_page()
        rec = watch(context, page, site_url)
        rec.goto("/about/")
        links = page.locator(".tasks-nav ul a")
        assert links.count() >= 5
        page.wait_for_function("() => document.querySelector('.tasks-nav ul.more')")
        for i in range(links.count()):
            links.nth(i).focus()
            seen = links.nth(i).evaluate(
                """(a) => { const ul = a.closest('ul'), box = ul.getBoundingClientRect();
                  const r = a.getBoundingClientRect(), style = getComputedStyle(ul);
                  return {mask: style.maskImage || style.webkitMaskImage,
                          inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5,
                          room: r.top - box.top};}"""
            )
            assert seen["mask"] == "none" and seen["inside"], (i, str(seen))
            assert seen["room"] >= 3, (i, seen)  # the 3 px focus ring above the link
        assert rec.errors() == []
    finally:
        context.close()


# What moves when a live chart's actions menu opens: the menu's animation and the button's
# fade (vega-embed's own CSS: scale-in, opacity transitions).
MOTION = """() => {
  const menu = document.querySelector('figure#chart-top--gpqa .vega-actions');
  const button = document.querySelector('figure#chart-top--gpqa .vega details > summary');
  return [getComputedStyle(menu).animationName, getComputedStyle(button).transitionDuration];
}"""


@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_the_chart_menu_moves_only_for_readers_who_do_not_ask_for_less(
    pw_context: Any, site_url: str, motion: str
) -> None:
    """vega-embed scaled its menu in and faded its button under prefers-reduced-motion."""
    page = pw_context.new_page()
    page.emulate_media(reduced_motion=motion)
    rec = watch(pw_context, page, site_url)
    rec.goto("/tasks/gpqa/")
    page.locator("figure#chart-top--gpqa button.interactive").click()
    page.locator("figure#chart-top--gpqa .vega details > summary").click()
    animation, transition = page.evaluate(MOTION)
    if motion == "reduce":
        assert (animation, transition) == ("none", "0s")
    else:  # (the premise: vega-embed animates them)
        assert animation != "none" and transition != "0s", (animation, transition)
    assert rec.errors() == []
