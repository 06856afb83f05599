"""axe-core on every page type, light and dark, at 390 and 1280 px; visible keyboard focus.

axe-core is the npm package tools/htmlvalidate/package-lock.json pins (``npm ci --prefix
tools/htmlvalidate``, as the README's test command runs), and a page with a fault of each kind
shows that the audit sees them (test_the_audit_finds_each_kind_of_fault). axe runs every rule
it has (WCAG 2 A and AA, best practices) and the test fails on a violation of any impact. No
rule is turned off. A page with a chart is audited with one chart made interactive (vega-embed
adds its own markup: the actions menu), and the compare page with two models chosen (its
results table and chart appear only then).

Each page is loaded once per width, in one scheme (light and dark in turn, so each is a first
load on some pages) and audited with every rule; then switched to the other scheme, as a
reader's setting switches it (its live charts are drawn again in that scheme:
test_chart_scheme.py), and audited with axe's colour rules. The switch changes colours and
nothing else (test_the_dark_scheme_changes_only_colours), so the other rules would see the
same page again. This halves the loads and charts drawn and the audits of the other rules;
the colour rules still run on every page in both schemes. (With axe-core 4.14.1, at one
width: loads 5-6 s for the 19 pages, the audits with every rule 7.5 s, of the colour rules
3.8 s; 4.12.1 took 11 and 7.5 s for the two audits.)
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from jouleboard.render.charts import AXIS_GREY, DARK_TEXT, THEME_STYLE
from tests.golden.tree import REPO
from tests.missing_tool import missing_tool

PAGES = [
    "/",
    "/tasks/gpqa/",
    "/tasks/text-to-image/",
    "/models/openai--gpt-oss-20b/",
    "/models/google--gemma-3-12b-it/",  # two tasks: its section names must differ
    "/gpus/b200/",  # with MLPerf results
    "/gpus/h100/",  # without
    "/models/",
    "/gpus/",
    "/compare/",
    "/downloads/",
    "/changelog/",
    "/about/",
    "/glossary/",
    "/404.html",
    "/embed/top--gpqa/",
    "/embed/pareto--qwen--qwen3-8b--gpqa/",
    "/mlperf/",
    "/mlperf/llama2-70b-99/",
]
WIDTHS = [390, 1280]
SCHEMES = ["light", "dark"]


def _wake_up(page: Any, path: str) -> None:
    """Bring out what the page's script adds on demand: an interactive chart, or on the compare
    page two chosen models with their results."""
    if path == "/compare/":
        page.locator(".model-choices input[type=checkbox]").nth(1).wait_for()
        for i in (0, 1):
            page.locator(".model-choices input[type=checkbox]").nth(i).check()
        page.locator("#compare-results:not([hidden]) #chart-compare svg.marks").wait_for()
        return
    button = page.locator("button.interactive:visible")
    if button.count():
        button.first.click()
        page.locator("figure.chart .vega svg.marks").first.wait_for()
        page.locator("figure.chart .vega details > summary").first.wait_for(state="attached")


def _violations(results: dict[str, Any]) -> list[str]:
    return [
        f"{v['id']} ({v['impact']}, {len(v['nodes'])}x): {v['help']}: "
        + "; ".join(str(n["target"][0]) if n["target"] else "?" for n in v["nodes"][:3])
        for v in results["violations"]
    ]


AXE = REPO / "tools" / "htmlvalidate" / "node_modules" / "axe-core" / "axe.min.js"


def axe_script() -> str:
    """axe-core's browser script, as tools/htmlvalidate/package-lock.json pins it."""
    if not AXE.is_file():
        missing_tool("axe-core is not installed: run `npm ci --prefix tools/htmlvalidate`")
    return AXE.read_text(encoding="utf-8")


# The colour rules of the audit: axe's rules of category 'cat.color' but the AAA contrast rule
# (color-contrast-enhanced), which the audit with every rule does not run either.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
COLOUR_RULES_OF_AXE = """() => axe.getRules(['cat.color']).map((r) => r.ruleId)
  .filter((id) => id !== 'color-contrast-enhanced').sort()"""

# No live chart is left in the other scheme's grey (live-chart.js themed() swaps the two).
GREY = {"light": DARK_TEXT, "dark": AXIS_GREY}  # scheme -> the grey it never shows
REDRAWN = """(grey) => !document.querySelector(
  `figure.chart .vega svg [fill="${grey}"], figure.chart .vega svg [stroke="${grey}"]`)"""


def _audit(page: Any, colour_only: bool) -> list[str]:
    """axe's violations on ``page`` (its script loaded): of every rule, or of the colour
    rules only."""
    options: dict[str, Any] = {"resultTypes": ["violations"]}
    if colour_only:
        options["runOnly"] = {"type": "rule", "values": COLOUR_RULES}
    return _violations(page.evaluate("(o) => axe.run(o)", options))


# A page with a fault of each kind the audit must see: text too faint in either scheme, a
# link told from its text by colour alone, an image with no text alternative.
CANARY = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Canary</title>
<style>
  body { color: #222; background: #fff }
  .faint { color: #aaa }
  a { color: #333; text-decoration: none }
  @media (prefers-color-scheme: dark) {
    body { color: #ddd; background: #111 } .faint { color: #444 } a { color: #ccc }
  }
</style></head>
<body><main><h1>Canary</h1><p class="faint">Faint text in both schemes.</p>
<p>Text with <a href="#here">a link in it</a> and more text after the link.</p>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="20" height="20">
</main></body></html>"""


@pytest.mark.browser
def test_the_audit_finds_each_kind_of_fault(pw_browser: Any) -> None:
    """The pinned axe runs, and the audit's two passes see what they are for: every rule in
    the first scheme, the colour rules (and only they) in the second."""
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.emulate_media(color_scheme="light")
        page.set_content(CANARY)
        page.evaluate(axe_script())
        rules = {line.split(" ", 1)[0] for line in _audit(page, colour_only=False)}
        assert {"color-contrast", "link-in-text-block", "image-alt"} <= rules
        page.emulate_media(color_scheme="dark")
        rules = {line.split(" ", 1)[0] for line in _audit(page, colour_only=True)}
        assert rules == {"color-contrast", "link-in-text-block"}
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_no_axe_violations(pw_browser: Any, site_url: str, width: int) -> None:
    script = axe_script()
    context = pw_browser.new_context(viewport={"width": width, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    found: dict[str, list[str]] = {}
    try:
        for i, path in enumerate(PAGES):
            schemes = SCHEMES if i % 2 == 0 else SCHEMES[::-1]
            page.emulate_media(color_scheme=schemes[0])
            response = page.goto(site_url + path)
            assert response is not None and response.status == 200, path
            _wake_up(page, path)
            page.evaluate(script)
            assert page.evaluate(COLOUR_RULES_OF_AXE) == COLOUR_RULES
            for scheme in schemes:
                if scheme != schemes[0]:
                    page.emulate_media(color_scheme=scheme)
                    page.wait_for_function(REDRAWN, arg=GREY[scheme])
                if bad := _audit(page, colour_only=scheme != schemes[0]):
                    found[f"{path} ({scheme})"] = bad
    finally:
        context.close()
    assert found == {}


def _scheme_rules(css: str) -> list[tuple[str, str]]:
    """(property, value) of each declaration in ``css``'s prefers-color-scheme blocks."""
    found = []
    for start in re.finditer(r"@media[^{]*prefers-color-scheme[^{]*\{", css):
        depth, end = 1, start.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(css[end], 0)
            end += 1
        for body in re.findall(r"\{([^{}]*)\}", css[start.end() : end - 1]):
            for declaration in filter(str.strip, body.split(";")):
                name, _, value = declaration.partition(":")
                found.append((name.strip(), value.strip()))
    return found


COLOUR_PROPERTIES = {"color", "background", "background-color", "border-color", "fill", "stroke"}
COLOUR = re.compile(r"#[0-9a-f]{3,8}|var\(--[a-z-]+\)", re.IGNORECASE)


def test_the_dark_scheme_changes_only_colours() -> None:
    """What the audit's switch of scheme relies on: the light and dark pages differ only in
    colours. The site's dark rules set colour properties, and custom properties to colours
    (so they are colours wherever they are used); the chart images' dark rules likewise; and
    the only script that reads the scheme swaps a live chart's colours (live-chart.js)."""
    readers = sorted(
        path.relative_to(REPO).as_posix()
        for folder in ("jouleboard", "templates")
        for path in (REPO / folder).rglob("*")
        if path.suffix in (".py", ".js", ".css", ".html", ".svg")
        and "prefers-color-scheme" in path.read_text(encoding="utf-8", errors="replace")
    )
    assert readers == [
        "jouleboard/render/charts.py",
        "templates/assets/js/live-chart.js",
        "templates/assets/style.css",
    ]
    rules = _scheme_rules((REPO / "templates" / "assets" / "style.css").read_text("utf-8"))
    rules += _scheme_rules(THEME_STYLE.removeprefix("<style>").removesuffix("</style>"))
    assert len(rules) > 10
    wrong = [
        (name, value)
        for name, value in rules
        if not (name in COLOUR_PROPERTIES or name.startswith("--")) or not COLOUR.fullmatch(value)
    ]
    assert wrong == []


# What a focused control must show: an outline at least 2 px wide, or a box shadow.
FOCUS_RING = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const s = getComputedStyle(el);
  const outline = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2;
  return {
    visible: outline || s.boxShadow !== "none",
    what: el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
      (el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : "") +
      " " + (el.textContent || el.value || "").trim().slice(0, 30),
  };
}"""


@pytest.mark.browser
@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_sort_button_shows_keyboard_focus(pw_browser: Any, site_url: str, scheme: str) -> None:
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    try:
        page.goto(site_url + "/tasks/gpqa/")
        page.locator("th button.sort").first.wait_for()
        for _ in range(200):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.matches('th button.sort')"):
                break
        else:
            pytest.fail("Tab never reached a sort button")
        ring = page.evaluate(FOCUS_RING)
        assert page.evaluate("() => document.activeElement.matches(':focus-visible')")
        assert ring["visible"], f"no visible focus on {ring['what']}"
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.parametrize("path", ["/tasks/gpqa/", "/models/openai--gpt-oss-20b/", "/compare/"])
def test_every_control_shows_keyboard_focus(pw_browser: Any, site_url: str, path: str) -> None:
    """Tab through the whole page: every link, button, field and summary it reaches (the
    first 600) shows a focus ring."""
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(site_url + path)
        page.wait_for_load_state("load")
        page.wait_for_timeout(200)  # the page script's controls
        seen, unseen = 0, []
        first = None
        for _ in range(600):
            page.keyboard.press("Tab")
            ring = page.evaluate(FOCUS_RING)
            if ring is None:
                continue
            if ring["what"] == first:
                break  # round the page once
            first = first or ring["what"]
            seen += 1
            if not ring["visible"]:
                unseen.append(ring["what"])
        assert seen > 20
        assert unseen == []
    finally:
        context.close()
