"""Issue 40 item 9: a chart never cuts a model's name in the middle ("NVIDIA Nemot...o 9B
V2" on a phone). Every model a chart names (its CSV's ``model`` column, less the models a
legend groups as "Other models") is named whole on it, on two lines where it needs them,
and no text has an ellipsis inside it: on the static charts at 390 and 1280 px, and on the
bar chart the page redraws for another view."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest

from tests.browser.conftest import SIZES, Recorder, watch

pytestmark = pytest.mark.browser

TEXTS = """(svg) => Array.from(svg.querySelectorAll('text'))
  .map((t) => Array.from(t.childNodes).map((n) => n.textContent).join(' ').trim())
  .filter(Boolean)"""


def whole(names: set[str], texts: list[str]) -> list[str]:
    """The names no text of the chart shows whole, and the texts cut in their middle."""
    shown = {" ".join(t.split()) for t in texts}
    cut = [t for t in shown if re.search(r"…\S", t)]
    return sorted(n for n in names if n not in shown) + [f"cut: {t!r}" for t in cut]


@pytest.mark.parametrize(
    "path", ["/tasks/gpqa/", "/tasks/lm-arena-chat/", "/tasks/image-chat/", "/gpus/h100/"]
)
def test_every_static_chart_names_its_models_whole(sized_page: Recorder, path: str) -> None:
    rec = sized_page  # at a phone's and at a desktop's size
    rec.goto(path)
    rec.page.evaluate("() => document.querySelectorAll('img').forEach((i) => i.loading = 'eager')")
    rec.page.wait_for_function(
        "() => Array.from(document.querySelectorAll('figure.chart img'))"
        ".every((i) => i.complete && i.currentSrc)"
    )
    sources = rec.page.eval_on_selector_all(
        "figure.chart img",
        "(imgs) => imgs.filter((i) => i.getBoundingClientRect().width).map((i) => i.currentSrc)",
    )
    request = rec.page.context.request
    probe = rec.page  # the sources are known: the page now shows each chart alone in turn
    problems, checked = [], 0
    for src in sources:
        table = re.sub(r"(\.phone)?\.svg$", ".csv", src)
        rows = list(csv.DictReader(io.StringIO(request.get(table).text())))
        # A model the chart gives a grouped legend entry ("Other models": its CSV's
        # ``legend`` column says so) is named in its tooltip, not on the chart.
        names = {
            r["model"] for r in rows if r.get("model") and r.get("legend", r["model"]) == r["model"]
        }
        if not names:
            continue
        probe.set_content(f"<!doctype html><body>{request.get(src).text()}</body>")
        problems += [f"{src}: {p}" for p in whole(names, probe.eval_on_selector("svg", TEXTS))]
        checked += 1
    assert checked >= 1
    assert not problems, "\n".join(problems)


def test_a_redrawn_bar_chart_on_a_phone_names_its_models_whole(
    pw_browser: Any, site_url: str
) -> None:
    """At 100 ms the page ranks the task itself and redraws its bars in the phone layout:
    the names there are whole too (two lines, broken between words)."""
    ctx = pw_browser.new_context(viewport=SIZES["phone"])
    ctx.set_default_timeout(20_000)
    try:
        rec = watch(ctx, ctx.new_page(), site_url)
        rec.goto("/tasks/gpqa/?deadline=100")
        svg = rec.page.locator("#chart-top--gpqa svg.marks")
        svg.locator(".role-axis-label text").first.wait_for()
        texts = svg.evaluate(TEXTS)
        cells = rec.page.locator("#ranking-gpqa tbody td.col-model")
        top = int(rec.page.locator("form.explore").get_attribute("data-top") or 0)
        names = {cells.nth(i).get_attribute("data-value") or "" for i in range(top)}
        assert any(len(n) > 20 for n in names)  # a name that needs two lines on a phone
        assert not whole(names, texts), whole(names, texts)
        assert rec.errors() == []
    finally:
        ctx.close()
