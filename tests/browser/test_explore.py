"""The task pages' explorer, calculator and the compare page in a real Chromium.

Every re-ranking done by the modules of templates/assets/js/ is checked against the Python
ranking (jouleboard.rank.ranking.rank on the committed data/), the URL state against a fresh page,
Back/Forward against pushState, and the calculator against hand-computed values. Every test ends
with no console error or warning, no page error and no request to another host (conftest.watch).
"""

from __future__ import annotations

import functools
import json
import math
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import pytest

from jouleboard.kinds.token_records import Configuration
from jouleboard.loading.dataset import load_dataset
from jouleboard.rank.ranking import Deadline, rank
from tests.browser.conftest import Recorder, watch
from tests.sitebuild import REPO

pytestmark = pytest.mark.browser

T = TypeVar("T")

TASK = "gpqa"
PAGE = f"/tasks/{TASK}/"
TABLE = f"#ranking-{TASK}"
FOOTPRINT = f"#footprint-{TASK}"
ALL_GPUS = ("B200", "H100")
ALL_PRECISIONS = ("bfloat16", "fp8", "mxfp4")
TOP_N = 7  # the footprint table and the bar chart show the top 7 (form.explore data-top)

# Columns of the ranking table (server-rendered and re-rendered alike).
# The ranked figure comes first after the model, so a phone shows it without scrolling.
COL_MODEL, COL_TPJ, COL_GPU, COL_PRECISION, COL_JPT, COL_JPR, COL_ITL = 1, 2, 3, 4, 5, 6, 7

CASES = json.loads((REPO / "tests" / "ranking_cases.json").read_text(encoding="utf-8"))


# --- the Python side ------------------------------------------------------------------------


@functools.cache
def dataset() -> Any:
    return load_dataset(REPO / "data")


def nickname(model_id: str) -> str:
    return dataset().registry.models[model_id].nickname


def python_ranking(
    deadline_ms: float,
    percentile: str = "p50",
    gpus: tuple[str, ...] = ALL_GPUS,
    precisions: tuple[str, ...] | None = None,
    budget: float | None = None,
) -> list[Configuration]:
    """The chosen configurations, best first, as jouleboard.rank.ranking.rank gives them."""
    rows = rank(
        dataset().for_task(TASK),
        Deadline(deadline_ms, percentile),  # type: ignore[arg-type]
        gpus=set(gpus),
        precisions=None if precisions is None else set(precisions),
        energy_budget_joules_per_token=budget,
    )
    return [row.config for row in rows]


def expected_rows(configs: list[Configuration]) -> list[tuple[str, float]]:
    """(nickname, tokens/J) of each row, as the table's data-values should hold them."""
    return [(nickname(c.model_id), 1 / c.energy_per_token_joules) for c in configs]


# --- reading the page -----------------------------------------------------------------------

SNAPSHOT_JS = """(table) => Array.from(table.tBodies[0].rows).map((row) => ({
    hidden: row.hidden,
    cells: Array.from(row.cells).map((td) => ({
        value: td.dataset.value ?? null,
        text: td.innerText.trim(),
        href: td.querySelector('a') ? td.querySelector('a').getAttribute('href') : null,
        cls: td.className,
    })),
}))"""

CONTROLS_JS = """() => {
    const value = (sel) => document.querySelector(sel).value;
    const boxes = (name) => Object.fromEntries(Array.from(
        document.querySelectorAll(`form.explore input[name=${name}]`),
        (b) => [b.value, b.checked]));
    return {
        deadline: value('#deadline-ms'), range: value('#deadline-range'),
        percentile: value('#percentile'), gpu: boxes('gpu'), precision: boxes('precision'),
        budget: value('#budget'), q: value('#model-search'),
        price: value('#price'), pue: value('#pue'), co2: value('#co2'),
    };
}"""


def snapshot(page: Any, selector: str, classes: bool = False) -> list[dict[str, Any]]:
    """Every body row: hidden flag and each cell's data-value, text and link (and class)."""
    rows = page.locator(selector).evaluate(SNAPSHOT_JS)
    if not classes:
        for row in rows:
            for cell in row["cells"]:
                del cell["cls"]
    return rows


def ranking(page: Any, selector: str = TABLE) -> list[tuple[str, float]]:
    """(nickname, tokens/J data-value) of every data row of a ranking table."""
    return [
        (row["cells"][COL_MODEL]["value"], float(row["cells"][COL_TPJ]["value"]))
        for row in snapshot(page, selector)
        if len(row["cells"]) > COL_TPJ
    ]


def column_values(page: Any, index: int, selector: str = TABLE) -> list[float]:
    return [
        float(row["cells"][index]["value"])
        for row in snapshot(page, selector)
        if len(row["cells"]) > index
    ]


def same_rows(actual: list[tuple[str, float]], expected: list[tuple[str, float]]) -> bool:
    return [n for n, _ in actual] == [n for n, _ in expected] and all(
        math.isclose(a, e, rel_tol=1e-9) for (_, a), (_, e) in zip(actual, expected, strict=True)
    )


def eventually(
    page: Any, read: Callable[[], T], ok: Callable[[T], bool], timeout_s: float = 10.0
) -> T:
    """Poll ``read()`` until ``ok`` holds or the time is up; returns the last value read."""
    limit = time.monotonic() + timeout_s
    while True:
        value = read()
        if ok(value) or time.monotonic() > limit:
            return value
        page.wait_for_timeout(40)


def assert_ranking(
    page: Any, configs: list[Configuration], what: str, timeout_s: float = 10.0
) -> None:
    """Wait until the ranking table shows ``configs`` (the Python ranking), then check it:
    nicknames in order, tokens/J data-values to 1e-9 relative."""
    expected = expected_rows(configs)
    shown = eventually(
        page, lambda: ranking(page), lambda rows: same_rows(rows, expected), timeout_s
    )
    assert [n for n, _ in shown] == [n for n, _ in expected], f"{what}: model order"
    for (name, value), (_, want) in zip(shown, expected, strict=True):
        assert value == pytest.approx(want, rel=1e-9), f"{what}: tokens/J of {name}"
    if not configs:
        assert page.locator(f"{TABLE} tbody td.empty").count() == 1, f"{what}: no empty row"


def query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def commit(page: Any, selector: str, value: str, key: str = "Enter") -> None:
    """Type a value into a number field and commit it (Enter or Tab fires `change`)."""
    page.fill(selector, value)
    page.press(selector, key)


def status(page: Any) -> str:
    return page.locator("form.explore .status").inner_text().strip()


# Vega's warnings when the bar chart is drawn with no bar (see test_empty_ranking_*).
EMPTY_BAR_CHART_WARNING = re.compile(
    r'^warning: WARN Infinite extent for field "value(_start|_end)?": \[Infinity, -Infinity\]'
)


def assert_clean(*recs: Recorder, allow: re.Pattern[str] | None = None) -> None:
    """No console error or warning, no page error, no request to another host.
    ``allow`` excuses console lines of a known, separately tested bug."""
    for rec in recs:
        problems = [line for line in rec.problems() if not (allow and allow.match(line))]
        assert problems == [], "console errors/warnings or page errors:\n" + "\n".join(problems)
        assert rec.external_requests() == [], f"requests left 127.0.0.1: {rec.external_requests()}"


def open_task(rec: Recorder) -> Any:
    """Open the gpqa task page and wait until the script has taken the form over."""
    rec.goto(PAGE)
    page = rec.page
    page.wait_for_selector("form.explore", state="visible")
    return page


def slider_ms(page: Any, position: int) -> float:
    """The deadline a slider position stands for (slider.js's log mapping and rounding)."""
    form = page.locator("form.explore")
    low = math.log(float(form.get_attribute("data-min")))
    high = math.log(float(form.get_attribute("data-max")))
    ms = math.exp(low + position / 1000 * (high - low))
    return math.floor(ms * 10 + 0.5) / 10 if ms < 10 else math.floor(ms + 0.5)


def slider_position(page: Any, ms: float) -> int:
    form = page.locator("form.explore")
    low = math.log(float(form.get_attribute("data-min")))
    high = math.log(float(form.get_attribute("data-max")))
    return math.floor((math.log(ms) - low) / (high - low) * 1000 + 0.5)


@pytest.fixture
def fresh_page(pw_browser: Any, site_url: str) -> Iterator[Recorder]:
    """A second, independent page (its own context: no shared history or cache)."""
    context = pw_browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    try:
        yield watch(context, context.new_page(), site_url)
    finally:
        context.close()


# 1. The shared ranking cases through the browser's rank.js ----------------------------------


def _browser_case(case: dict[str, Any]) -> dict[str, Any]:
    """A shared case as the page hands it to rank.js (as tests/js/rank.test.js prepares it)."""
    kind = case.get("kind", "token")
    defaults = CASES["defaults"] if kind == "token" else CASES[f"{kind}_defaults"]
    configs = []
    for fields in case["configs"]:
        config = {**defaults, **fields}
        if kind == "token":
            config.setdefault(
                "energy_per_response_joules", config["energy_per_token_joules"] * 1000
            )
        configs.append(config)
    return {
        "name": case["name"],
        "configs": configs,
        "options": {
            "deadlineMs": case["deadline_ms"],
            "percentile": case["percentile"],
            "gpus": case.get("gpus"),
            "precisions": case.get("precisions"),
            "energyBudget": case.get("energy_budget"),
            "top": case.get("top"),
            "order": CASES["orders"][kind],
            "objective": case.get("objective", "energy_per_token"),
            "accuracy": case.get("accuracy", {}),
            "noise": case.get("noise"),
        },
    }


def expected_ranges(case: dict[str, Any]) -> list[list[int]]:
    """A case's expected [rank_best, rank_worst] per row: the exact places without noise."""
    exact = [[i, i] for i in range(1, len(case["expected"]) + 1)]
    return list(case.get("expected_ranges", exact))


def test_shared_ranking_cases_in_browser(site_page: Recorder) -> None:
    page = open_task(site_page)
    cases = [_browser_case(case) for case in CASES["cases"]]
    assert len(cases) >= 10
    results = page.evaluate(
        """async (cases) => {
            // rank.js beside the page's entry module: the page's own ranking code
            const entry = document.querySelector('script[type=module][src$="/task.js"]').src;
            const { rank } = await import(new URL("rank.js", entry).href);
            return cases.map((c) => rank(c.configs, c.options)
                .map((row) => [row.rank, row.config.source, [row.rankBest, row.rankWorst]]));
        }""",
        cases,
    )
    for case, result in zip(CASES["cases"], results, strict=True):
        assert [source for _, source, _ in result] == case["expected"], case["name"]
        assert [r for r, _, _ in result] == list(range(1, len(result) + 1)), case["name"]
        assert [r for _, _, r in result] == expected_ranges(case), case["name"]
    assert_clean(site_page)


# 2. Re-ranking in the page equals the Python ranking -----------------------------------------


def test_deadline_40_matches_python(site_page: Recorder) -> None:
    page = open_task(site_page)
    # The server-rendered default: 300 ms, both GPUs.
    assert page.input_value("#deadline-ms") == "300"
    assert page.input_value("#deadline-range") == str(slider_position(page, 300))
    assert_ranking(page, python_ranking(300), "default 300 ms")

    commit(page, "#deadline-ms", "40")
    expected = python_ranking(40)
    assert_ranking(page, expected, "deadline 40 ms")
    # The CLI gives the same ranking.
    cli = json.loads(
        subprocess.run(
            [
                sys.executable,
                "-m",
                "jouleboard",
                "rank",
                "--task",
                TASK,
                "--deadline-ms",
                "40",
                "--format",
                "json",
            ],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    assert [row["nickname"] for row in cli] == [n for n, _ in expected_rows(expected)]
    # The places (rank ranges from the data's measurement noise) agree in all three: the
    # page's re-ranking, rank.py and the CLI.
    data = dataset()
    places = [
        r.places
        for r in rank(
            data.for_task(TASK), Deadline(40, "p50"), gpus=set(ALL_GPUS), noise=data.noise
        )
    ]
    assert any("–" in p for p in places), "the gpqa ranking at 40 ms shares some places"
    cli_places = [
        f"{r['rank_best']}–{r['rank_worst']}"
        if r["rank_best"] != r["rank_worst"]
        else str(r["rank_best"])
        for r in cli
    ]
    assert cli_places == places
    assert [row["cells"][0]["text"] for row in snapshot(page, TABLE)] == places

    text = "median inter-token latency ≤ 40 ms"
    assert status(page) == f"{len(expected)} models meet {text}, on B200 and H100."
    assert (
        page.locator(f"{TABLE} caption")
        .inner_text()
        .endswith(f"every model at {text}, on B200 and H100")
    )
    assert page.locator("p.deadline strong").inner_text() == text
    assert query(page.url) == {"deadline": ["40"]}
    assert page.input_value("#deadline-range") == str(slider_position(page, 40))
    # Each row shows its chosen configuration's GPU, precision, J/token and latency.
    rows = snapshot(page, TABLE)
    for number, (row, config) in enumerate(zip(rows, expected, strict=True), start=1):
        cells = row["cells"]
        assert cells[0]["value"] == str(number)
        assert cells[COL_GPU]["value"] == f"{config.num_gpus}x {config.gpu_model}"
        assert cells[COL_PRECISION]["value"] == config.weight_precision
        assert float(cells[COL_JPT]["value"]) == pytest.approx(
            config.energy_per_token_joules, rel=1e-9
        )
        assert float(cells[COL_JPR]["value"]) == pytest.approx(
            config.energy_per_response_joules, rel=1e-9
        )
        assert float(cells[COL_ITL]["value"]) == pytest.approx(config.median_itl_ms, rel=1e-9)
        assert cells[COL_TPJ]["text"] == f"{1 / config.energy_per_token_joules:.2f}"
    # The charts were re-rendered by vega-embed for the new deadline.
    bar = page.locator("#chart-top--gpqa")
    # The caption says the title (the chart does not repeat it: issue 29 item 5).
    page.wait_for_function(
        "(text) => (document.querySelector('#chart-top--gpqa .chart-title')?.textContent || '')"
        ".includes(text)",
        arg=f"top {TOP_N} by tokens per joule at {text}",
    )
    page.wait_for_selector("#chart-top--gpqa svg.marks", state="attached")
    assert bar.locator("svg.marks g.role-mark > *").count() > 0
    page.wait_for_selector(
        "#chart-configurations--gpqa svg.marks g.role-mark > *", state="attached"
    )
    # The footprint table follows the top 7.
    footprint = [row["cells"][0]["value"] for row in snapshot(page, FOOTPRINT)]
    assert footprint == [n for n, _ in expected_rows(expected)][:TOP_N]
    assert_clean(site_page)


def _p90_100_h100(page: Any) -> None:
    page.select_option("#percentile", "p90")
    commit(page, "#deadline-ms", "100", "Tab")
    page.uncheck("input[name=gpu][value=B200]")


def _no_mxfp4(page: Any) -> None:
    page.uncheck("input[name=precision][value=mxfp4]")


def _budget(page: Any) -> None:
    commit(page, "#budget", "0.2")


SETTINGS = {
    "p90-100ms-h100-only": (
        _p90_100_h100,
        {"deadline_ms": 100, "percentile": "p90", "gpus": ("H100",)},
        {"deadline": ["100"], "pct": ["p90"], "gpu": ["H100"]},
    ),
    "precision-without-mxfp4": (
        _no_mxfp4,
        {"deadline_ms": 300, "precisions": ("bfloat16", "fp8")},
        {"precision": ["bfloat16,fp8"]},
    ),
    "energy-budget-0.2": (_budget, {"deadline_ms": 300, "budget": 0.2}, {"budget": ["0.2"]}),
}


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_other_settings_match_python(site_page: Recorder, setting: str) -> None:
    act, args, url_query = SETTINGS[setting]
    page = open_task(site_page)
    act(page)
    expected = python_ranking(**args)
    assert expected, f"{setting}: the setting leaves no model; pick another"
    assert expected != python_ranking(300), f"{setting}: the setting changes nothing"
    assert_ranking(page, expected, setting)
    assert query(page.url) == url_query
    percentile = args.get("percentile", "p50")
    assert column_values(page, COL_ITL) == pytest.approx(
        [c.itl_ms(percentile) for c in expected], rel=1e-9
    )  # type: ignore[arg-type]
    if percentile == "p90":
        header = page.locator(f"{TABLE} thead th").nth(COL_ITL)
        assert header.inner_text().startswith("P90 ITL"), header.inner_text()
        # Its tooltip and definition link name the percentile too ("Median ..." before).
        assert header.get_attribute("title") == "P90 inter-token latency."
        link = header.locator("a.def").get_attribute("aria-label")
        assert link == "Definition of P90 ITL", link
    if "budget" in args:
        assert max(column_values(page, COL_JPT)) <= args["budget"]

    # Reset brings back the default view and a bare URL.
    page.click("form.explore button[type=reset]")
    assert_ranking(page, python_ranking(300), f"{setting}, reset")
    assert urlsplit(page.url).query == ""
    controls = page.evaluate(CONTROLS_JS)
    assert controls["deadline"] == "300" and controls["percentile"] == "p50"
    assert all(controls["gpu"].values()) and all(controls["precision"].values())
    assert controls["budget"] == "" and controls["q"] == ""
    assert_clean(site_page)


# 3. The URL holds the whole view -------------------------------------------------------------


def test_url_round_trip(site_page: Recorder, fresh_page: Recorder) -> None:
    page = open_task(site_page)
    commit(page, "#deadline-ms", "40")
    page.select_option("#percentile", "p90")
    page.uncheck("input[name=gpu][value=B200]")
    page.fill("#model-search", "qwen")
    commit(page, "#price", "0.25", "Tab")

    expected = python_ranking(40, "p90", ("H100",))
    assert_ranking(page, expected, "40 ms, p90, H100")
    # Only the rows whose text mentions "qwen" stay visible.
    rows = eventually(
        page, lambda: snapshot(page, TABLE), lambda rows: any(r["hidden"] for r in rows)
    )
    visible = [r["cells"][COL_MODEL]["value"] for r in rows if not r["hidden"]]
    assert visible and all("Qwen" in name for name in visible), visible
    assert len(visible) < len(rows)

    # The footprint table uses the new price: cost = kWh x 0.25.
    def priced(rows: list[dict[str, Any]]) -> bool:
        return all(
            math.isclose(
                float(r["cells"][2]["value"]), float(r["cells"][1]["value"]) * 0.25, rel_tol=1e-9
            )
            for r in rows
        )

    assert priced(eventually(page, lambda: snapshot(page, FOOTPRINT), priced))

    url = page.url
    assert url == page.evaluate("location.href")
    assert query(url) == {
        "deadline": ["40"],
        "pct": ["p90"],
        "gpu": ["H100"],
        "q": ["qwen"],
        "price": ["0.25"],
    }
    controls = page.evaluate(CONTROLS_JS)
    assert controls["deadline"] == "40" and controls["percentile"] == "p90"
    assert controls["gpu"] == {"B200": False, "H100": True}
    assert controls["q"] == "qwen" and controls["price"] == "0.25"
    table = snapshot(page, TABLE)
    footprint = snapshot(page, FOOTPRINT)

    other = fresh_page.page
    response = other.goto(url)
    assert response is not None and response.status == 200
    other.wait_for_selector("form.explore", state="visible")
    assert other.evaluate(CONTROLS_JS) == controls
    shown = eventually(other, lambda: snapshot(other, TABLE), lambda rows: rows == table)
    assert shown == table, "the reopened URL shows other rows"
    shown = eventually(other, lambda: snapshot(other, FOOTPRINT), lambda rows: rows == footprint)
    assert shown == footprint, "the reopened URL shows another footprint"
    assert status(other) == status(page)
    assert_clean(site_page, fresh_page)


# 4. Back and Forward -----------------------------------------------------------------------


def test_back_and_forward(site_page: Recorder) -> None:
    page = open_task(site_page)
    server_rows = snapshot(page, TABLE)
    server_caption = page.locator(f"{TABLE} caption").inner_text()
    assert len(server_rows) == len(python_ranking(300))

    commit(page, "#deadline-ms", "100")
    assert_ranking(page, python_ranking(100), "100 ms")
    commit(page, "#deadline-ms", "40", "Tab")
    assert_ranking(page, python_ranking(40), "40 ms")
    assert query(page.url) == {"deadline": ["40"]}

    page.go_back()
    assert_ranking(page, python_ranking(100), "Back to 100 ms")
    assert page.input_value("#deadline-ms") == "100"
    assert page.input_value("#deadline-range") == str(slider_position(page, 100))
    assert query(page.url) == {"deadline": ["100"]}

    page.go_back()
    rows = eventually(page, lambda: snapshot(page, TABLE), lambda rows: rows == server_rows)
    assert rows == server_rows, "Back to the default does not show the server-rendered rows"
    assert page.input_value("#deadline-ms") == "300"
    assert urlsplit(page.url).query == ""
    assert page.locator(f"{TABLE} caption").inner_text() == server_caption

    page.go_forward()
    assert_ranking(page, python_ranking(100), "Forward to 100 ms")
    assert page.input_value("#deadline-ms") == "100"
    assert query(page.url) == {"deadline": ["100"]}
    assert_clean(site_page)


def test_rerendered_rows_keep_server_cell_classes(site_page: Recorder) -> None:
    page = open_task(site_page)
    server_rows = snapshot(page, TABLE, classes=True)
    commit(page, "#deadline-ms", "100")
    assert_ranking(page, python_ranking(100), "100 ms")
    page.go_back()
    # The same rows as the server rendered, class aside: only the class differs.
    plain = [
        {**row, "cells": [{k: v for k, v in c.items() if k != "cls"} for c in row["cells"]]}
        for row in server_rows
    ]
    assert eventually(page, lambda: snapshot(page, TABLE), lambda rows: rows == plain) == plain
    assert_clean(site_page)
    assert snapshot(page, TABLE, classes=True) == server_rows


def test_slider_move_is_a_history_entry(site_page: Recorder) -> None:
    # 200 ms: one slider step there is more than the 1 ms the slider rounds to.
    page = open_task(site_page)
    commit(page, "#deadline-ms", "200")
    assert_ranking(page, python_ranking(200), "200 ms")
    page.focus("#deadline-range")
    page.keyboard.press("ArrowLeft")
    moved = slider_ms(page, slider_position(page, 200) - 1)
    assert_ranking(page, python_ranking(moved), f"slider at {moved} ms")
    assert query(page.url) == {"deadline": [f"{moved:g}"]}
    assert_clean(site_page)
    page.go_back()
    assert query(page.url) == {"deadline": ["200"]}
    assert_ranking(page, python_ranking(200), "Back after the slider move", timeout_s=2)


def test_back_after_sorting_restores_rank_order(site_page: Recorder) -> None:
    page = open_task(site_page)
    server_rows = snapshot(page, TABLE)
    page.locator(f"{TABLE} thead th").nth(COL_TPJ).locator("button.sort").click()
    assert query(page.url) == {"sort": [f"{COL_TPJ}.ascending"]}
    assert snapshot(page, TABLE) != server_rows
    assert_clean(site_page)
    page.go_back()
    assert urlsplit(page.url).query == ""
    rows = eventually(
        page, lambda: snapshot(page, TABLE), lambda rows: rows == server_rows, timeout_s=2
    )
    assert rows == server_rows, "Back to the unsorted URL leaves the table sorted"
    assert page.locator(f"{TABLE} thead th[aria-sort]").count() == 0


# 5. Keyboard --------------------------------------------------------------------------------


def test_keyboard_controls(site_page: Recorder) -> None:
    page = open_task(site_page)

    # Tab from the deadline field to the percentile select; ArrowDown picks p90.
    page.focus("#deadline-ms")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "percentile"
    page.keyboard.press("ArrowDown")
    assert page.input_value("#percentile") == "p90"
    assert_ranking(page, python_ranking(300, "p90"), "p90 by keyboard")
    assert query(page.url) == {"pct": ["p90"]}

    # Space toggles a GPU checkbox.
    b200 = page.locator("input[name=gpu][value=B200]")
    b200.focus()
    page.keyboard.press("Space")
    assert not b200.is_checked()
    assert_ranking(page, python_ranking(300, "p90", ("H100",)), "B200 off by Space")
    page.keyboard.press("Space")
    assert b200.is_checked()
    assert_ranking(page, python_ranking(300, "p90"), "B200 back on by Space")

    # The slider: End, ArrowLeft, Home, ArrowRight; the number field and the table follow.
    page.focus("#deadline-range")
    for key, position in [
        ("End", 1000),
        ("ArrowLeft", 999),
        ("Home", 0),
        ("ArrowRight", 1),
        ("End", 1000),
    ]:
        page.keyboard.press(key)
        assert page.input_value("#deadline-range") == str(position), key
        ms = slider_ms(page, position)
        assert float(page.input_value("#deadline-ms")) == ms, key
        assert_ranking(page, python_ranking(ms, "p90"), f"slider {key} -> {ms} ms")
        count = len(python_ranking(ms, "p90"))
        assert status(page).startswith(
            f"{count} model{'' if count == 1 else 's'} meet p90 inter-token latency ≤ {ms:g} ms"
            if count
            else "No configuration is this fast."
        ), status(page)
    assert not python_ranking(slider_ms(page, 0), "p90"), "Home should leave no model"

    # Sort buttons work with Enter, and the sort survives a re-ranking.
    header = page.locator(f"{TABLE} thead th").nth(COL_TPJ)
    header.locator("button.sort").focus()
    page.keyboard.press("Enter")
    assert header.get_attribute("aria-sort") == "ascending"
    values = column_values(page, COL_TPJ)
    assert values == sorted(values) and len(values) > 5
    assert query(page.url)["sort"] == [f"{COL_TPJ}.ascending"]
    page.keyboard.press("Enter")
    assert header.get_attribute("aria-sort") == "descending"
    assert column_values(page, COL_TPJ) == sorted(values, reverse=True)
    page.keyboard.press("Enter")  # ascending again
    page.focus("#deadline-range")
    page.keyboard.press("ArrowLeft")
    ms = slider_ms(page, 999)
    ascending = list(reversed(expected_rows(python_ranking(ms, "p90"))))
    shown = eventually(page, lambda: ranking(page), lambda rows: same_rows(rows, ascending))
    assert [n for n, _ in shown] == [n for n, _ in ascending], "sort lost on re-ranking"
    assert header.get_attribute("aria-sort") == "ascending"
    # Home left no model: Vega warns about the empty bar chart (a bug of its own, see
    # test_empty_ranking_renders_charts_without_warnings); nothing else is excused.
    assert_clean(site_page, allow=EMPTY_BAR_CHART_WARNING)


def test_empty_ranking_renders_charts_without_warnings(site_page: Recorder) -> None:
    page = open_task(site_page)
    commit(page, "#deadline-ms", "3")
    assert_ranking(page, [], "3 ms: no model")
    # The empty state names the lowest deadline that admits a configuration (3.9 ms: the
    # fastest median ITL on B200 and H100 is 3.80 ms, rounded up to the slider's 0.1 ms).
    assert status(page) == (
        "No configuration is this fast. The lowest workable deadline "
        "here is median inter-token latency ≤ 3.9 ms."
    )
    # No model to draw: the top-N bar chart is hidden rather than plotted empty.
    page.wait_for_selector("#chart-top--gpqa", state="hidden")
    page.wait_for_selector(
        "#chart-configurations--gpqa svg.marks g.role-mark > *", state="attached"
    )
    page.wait_for_timeout(200)
    assert_clean(site_page, allow=None)


# 6. The calculator against hand-computed values --------------------------------------------

PRICE, PUE, CO2 = 0.3, 1.2, 450.0

# GPT OSS 20B, first at 300 ms: J/token x, J/response y straight from its measurement file.
# By hand: kWh per 1B tokens = x * 1e9 J * 1.2 / 3.6e6 J/kWh; cost = kWh * 0.3 USD;
# kg CO2e = kWh * 450 g / 1000; per 1M responses the same with y * 1e6 J.
GPT_OSS_20B_EPT = 0.028446538525400376
GPT_OSS_20B_EPR = 61.010607460662435
GPT_OSS_20B_FOOTPRINT = [
    9.482179508466792,
    2.8446538525400376,
    4.2669807788100565,
    20.336869153554146,
    6.101060746066244,
    9.151591119099365,
]
# Electricity carries its unit, scaled (issue 29 item 8): 9.48 kWh, not 9.48 under "kWh".
GPT_OSS_20B_FOOTPRINT_TEXT = ["9.48 kWh", "2.84", "4.27", "20.3 kWh", "6.10", "9.15"]


def by_hand(ept: float, epr: float) -> list[float]:
    per_btok = ept * 1e9 * PUE / 3.6e6
    per_mresp = epr * 1e6 * PUE / 3.6e6
    return [
        per_btok,
        per_btok * PRICE,
        per_btok * CO2 / 1000,
        per_mresp,
        per_mresp * PRICE,
        per_mresp * CO2 / 1000,
    ]


def test_calculator_matches_hand_computation(site_page: Recorder) -> None:
    page = open_task(site_page)
    commit(page, "#price", str(PRICE), "Tab")
    commit(page, "#pue", str(PUE), "Tab")
    commit(page, "#co2", f"{CO2:g}", "Tab")
    assert query(page.url) == {"price": ["0.3"], "co2": ["450"]}  # PUE 1.2 is the default

    def first_row() -> list[float]:
        return [float(c["value"]) for c in snapshot(page, FOOTPRINT)[0]["cells"][1:]]

    # Wait for the footprint re-rendered at 0.3 USD/kWh and 450 g/kWh.
    row = eventually(
        page,
        first_row,
        lambda v: (
            math.isclose(v[1], v[0] * PRICE, rel_tol=1e-9)
            and math.isclose(v[2], v[0] * CO2 / 1000, rel_tol=1e-9)
        ),
    )

    # The same model's J/token and J/response, read from the ranking table.
    footprint = snapshot(page, FOOTPRINT)
    ranking_rows = {r["cells"][COL_MODEL]["value"]: r["cells"] for r in snapshot(page, TABLE)}
    assert len(footprint) == TOP_N
    assert [r["cells"][0]["value"] for r in footprint] == [
        n for n, _ in expected_rows(python_ranking(300))
    ][:TOP_N]
    for footprint_row in footprint:
        model = footprint_row["cells"][0]["value"]
        ept = float(ranking_rows[model][COL_JPT]["value"])
        epr = float(ranking_rows[model][COL_JPR]["value"])
        values = [float(c["value"]) for c in footprint_row["cells"][1:]]
        assert values == pytest.approx(by_hand(ept, epr), rel=1e-9), model

    # The literal case: GPT OSS 20B's J/token as read, nothing else taken from the page.
    assert footprint[0]["cells"][0]["value"] == "GPT OSS 20B"
    assert float(ranking_rows["GPT OSS 20B"][COL_JPT]["value"]) == pytest.approx(
        GPT_OSS_20B_EPT, rel=1e-15
    )
    assert by_hand(GPT_OSS_20B_EPT, GPT_OSS_20B_EPR) == pytest.approx(
        GPT_OSS_20B_FOOTPRINT, rel=1e-12
    )
    assert row == pytest.approx(GPT_OSS_20B_FOOTPRINT, rel=1e-9)
    assert [c["text"] for c in footprint[0]["cells"][1:]] == GPT_OSS_20B_FOOTPRINT_TEXT
    # The calculator leaves the ranking alone.
    assert_ranking(page, python_ranking(300), "after the calculator")
    assert_clean(site_page)


# 7. The compare page -------------------------------------------------------------------------


def test_compare_page(site_page: Recorder) -> None:
    page = site_page.page
    chosen = ["openai/gpt-oss-20b", "Qwen/Qwen3-8B"]
    site_page.goto(f"/compare/?task={TASK}&models={','.join(chosen)}")
    page.wait_for_selector("#compare-results", state="visible")

    # The Python side: each model's best configuration at 300 ms, any GPU.
    configs = [c for c in dataset().for_task(TASK) if c.model_id in chosen]
    best = {row.config.model_id: row.config for row in rank(configs, Deadline(300))}
    assert set(best) == set(chosen)

    def table() -> list[tuple[str, str]]:
        return [
            (r["cells"][COL_MODEL]["value"], r["cells"][COL_TPJ]["text"])
            for r in snapshot(page, "#compare-table")
            if len(r["cells"]) > COL_TPJ
        ]

    want = [("GPT OSS 20B", "35.15"), ("Qwen 3 8B", "5.77")]
    assert eventually(page, table, lambda rows: rows == want) == want
    cells = {r["cells"][COL_MODEL]["value"]: r["cells"] for r in snapshot(page, "#compare-table")}
    for model_id, config in best.items():
        row = cells[nickname(model_id)]
        assert row[COL_GPU]["value"] == f"{config.num_gpus}x {config.gpu_model}"
        assert row[COL_PRECISION]["value"] == config.weight_precision
        assert float(row[COL_JPR]["value"]) == pytest.approx(
            config.energy_per_response_joules, rel=1e-9
        )

    base, other = best["openai/gpt-oss-20b"], best["Qwen/Qwen3-8B"]
    times = other.energy_per_response_joules / base.energy_per_response_joules
    per_token = other.energy_per_token_joules / base.energy_per_token_joules
    # Distinguishable when the per-token ratio is beyond the noise of the two measurements
    # (docs/measurement-format.md): ln 6.1 = 1.8 against t(0.975, 3) x 0.084 x sqrt 2 =
    # 3.18 x 0.118 = 0.38.
    noise = dataset().noise
    assert noise.per_run is not None
    u = [noise.per_run / math.sqrt(c.runs) for c in (base, other)]
    assert math.log(per_token) > 3.1824463052837078 * math.hypot(*u)
    # The noise's word sits beside the per-token ratio it is about (it read "(6.1× per
    # token; within ...)" after the per-response ratio, as if about that one).
    sentence = (
        f"Qwen 3 8B uses {times:.1f}× the energy per response of GPT OSS 20B at this "
        f"deadline; per token, {per_token:.1f}×, a difference beyond measurement noise at 95% "
        "confidence."
    )
    ratios = [t.strip() for t in page.locator("#compare-results ul.ratios li").all_inner_texts()]
    assert ratios == [sentence]

    marks = "figure#chart-compare svg.marks g.role-mark > *"
    page.wait_for_selector(marks, state="attached")
    assert page.locator(marks).count() > 0

    assert page.locator("figure#chart-compare").is_visible()
    footprint = [r["cells"][0]["value"] for r in snapshot(page, "#compare-footprint")]
    assert footprint == ["GPT OSS 20B", "Qwen 3 8B"]

    # Ticking a third model adds it to the URL and to the table.
    page.check('input[name=models][value="Qwen/Qwen3-14B"]')
    assert query(page.url)["models"] == [",".join([*chosen, "Qwen/Qwen3-14B"])]
    names = eventually(page, lambda: [n for n, _ in table()], lambda rows: len(rows) == 3)
    assert sorted(names) == sorted(["GPT OSS 20B", "Qwen 3 8B", "Qwen 3 14B"])
    assert page.locator('input[name=models][value="Qwen/Qwen3-14B"]').is_checked()

    # Two models within the noise: how many runs of each would separate them (issue 37).
    # GPT OSS 120B uses 0.0397 / 0.0284 = 1.394x the energy per token of GPT OSS 20B; with
    # s = 8.37% and c = 3.182: n > 2 (3.182 x 0.0837 / ln 1.394)^2 = 1.28, so 2 runs each.
    site_page.goto(f"/compare/?task={TASK}&models=openai/gpt-oss-20b,openai/gpt-oss-120b")
    page.wait_for_selector("#compare-results ul.ratios li", state="attached")
    ratio = page.locator("#compare-results ul.ratios li").first.inner_text()
    assert ratio.endswith(
        "per token, 1.4×, within measurement noise: not distinguishable; 2 runs of each would "
        "separate them if these values held."
    ), ratio

    # At p90 the latency column shows each model's p90 under that name: it kept the header
    # "Median ITL" over p90 figures.
    site_page.goto(f"/compare/?task={TASK}&models={','.join(chosen)}&pct=p90")
    at_p90 = {row.config.model_id: row.config for row in rank(configs, Deadline(300, "p90"))}
    want_itl = sorted(c.itl_ms("p90") for c in at_p90.values())
    shown = eventually(
        page,
        lambda: sorted(column_values(page, COL_ITL, "#compare-table")),
        lambda v: bool(v == pytest.approx(want_itl, rel=1e-9)),
    )
    assert shown == pytest.approx(want_itl, rel=1e-9)
    header = page.locator("#compare-table thead th").nth(COL_ITL)
    assert header.inner_text().startswith("P90 ITL"), header.inner_text()
    assert header.get_attribute("title") == "P90 inter-token latency."

    # A task page on H100 alone links to a comparison on H100 alone: it ranked on every GPU,
    # and gave an H100-only reader B200 figures.
    open_task(site_page)
    page.uncheck("input[name=gpu][value=B200]")
    link = page.locator("form.explore a.compare-link")
    page.wait_for_function("a => a.href.includes('gpu=H100')", arg=link.element_handle())
    href = urlsplit(link.get_attribute("href") or "")
    site_page.goto(f"{href.path}?{href.query}&models={','.join(chosen)}")
    on_h100 = {
        row.config.model_id: row.config for row in rank(configs, Deadline(300), gpus={"H100"})
    }
    gpus = eventually(
        page,
        lambda: sorted(
            r["cells"][COL_GPU]["value"]
            for r in snapshot(page, "#compare-table")
            if len(r["cells"]) > COL_GPU
        ),
        lambda v: len(v) == len(on_h100),
    )
    assert gpus == sorted(f"{c.num_gpus}x {c.gpu_model}" for c in on_h100.values())
    assert page.locator(".compare-deadline").inner_text().endswith(", on H100 only")
    assert_clean(site_page)


def test_helpers_agree_with_slider_js(site_page: Recorder) -> None:
    """The slider mapping used above is slider.js's own: check a few positions in the page."""
    page = open_task(site_page)
    for position in (250, 500, 854, 999, 1000):
        page.locator("#deadline-range").evaluate(
            "(el, v) => { el.value = String(v); el.dispatchEvent(new Event('input')); }", position
        )
        assert float(page.input_value("#deadline-ms")) == slider_ms(page, position), position
    assert_clean(site_page)
