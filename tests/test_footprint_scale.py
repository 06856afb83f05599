"""Issue 29 item 8: the calculator scales its figures (Wh to GWh; k, M, B) instead of
printing 1,000,000,000,000, the same in Python (render/footprint.py, the page as built) and
in the browser (templates/assets/js/formats.js, the page as the reader changes it); and the
status line follows the search box."""

from __future__ import annotations

from jouleboard.render.footprint import ENERGY_STEPS, NUMBER_STEPS, energy_text, number_text
from tests.test_format_parity import node_call

# Hand-worked: kWh in, the largest step reached, 3 significant digits.
ENERGY = [
    (0.35, "350 Wh"),
    (0.0002, "0.200 Wh"),
    (1.0, "1.00 kWh"),
    (12.34, "12.3 kWh"),
    (1234.0, "1.23 MWh"),
    (0.9996, "1.00 kWh"),  # 999.6 Wh rounds to 1,000 Wh: one step up
    (999_600.0, "1.00 GWh"),
    (2.5e6, "2.50 GWh"),
    (1e12, "1,000 TWh"),  # past the last step the figure grows
    (0.0, "0 Wh"),
]
NUMBERS = [
    (0.0123, "0.0123"),
    (456.0, "456"),
    (999.4, "999"),
    (999.6, "1.00k"),
    (1234.0, "1.23k"),
    (45_600_000.0, "45.6M"),
    (7.89e9, "7.89B"),
    (1e12, "1.00T"),
    (0.0, "0"),
]


def test_energy_scales_by_hand() -> None:
    assert [energy_text(v) for v, _ in ENERGY] == [text for _, text in ENERGY]


def test_numbers_scale_by_hand() -> None:
    assert [number_text(v) for v, _ in NUMBERS] == [text for _, text in NUMBERS]


def test_browser_scales_alike() -> None:
    values = [v for v, _ in ENERGY + NUMBERS] + [
        # No decimal ties (2.345): formats.significant and formats.js round those apart.
        m * 10.0**e
        for e in range(-6, 16)
        for m in (1.0, 1.5, 2.3456, 9.994, 9.996)
    ]
    # The page passes the steps as the explore JSON carries them (plan/explore.py).
    energy = [[v, ENERGY_STEPS] for v in values]
    numbers = [[v, NUMBER_STEPS] for v in values]
    assert node_call("formats.js", "energyText", energy) == [energy_text(v) for v in values]
    assert node_call("formats.js", "numberText", numbers) == [number_text(v) for v in values]


def test_status_line_follows_the_search() -> None:
    view, empty = "median ITL ≤ 300 ms, on B200", "No configuration is this fast."
    cases = [
        [12, view, empty, "", 12],
        [12, view, empty, "  ", 12],
        [12, view, empty, "qwen", 3],
        [12, view, empty, "qwen3 8", 1],
        [12, view, empty, "zzz", 0],
        [0, view, empty, "qwen", 0],
    ]
    assert node_call("wording.js", "statusText", cases) == [
        f"12 models meet {view}.",
        f"12 models meet {view}.",
        f"12 models meet {view}. 3 of them match “qwen”.",
        f"12 models meet {view}. 1 of them matches “qwen3 8”.",
        f"12 models meet {view}. 0 of them match “zzz”.",
        empty,
    ]
