"""Text widths and wrapping (render/text_fit.py) and the spreading of line-end names
(render/line_labels.py): hand cases and properties; the widths themselves are checked
against Chromium's own measurement of the font in tests/browser/test_text_widths.py."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jouleboard.render.line_labels import log_pixels, log_value, spread
from jouleboard.render.text_fit import fit, text_width, wrap

WORDS = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789", min_size=1,
                         max_size=14), min_size=1, max_size=12)  # fmt: skip


def test_hand_widths() -> None:
    # Helvetica's (and Arial's) advance widths: "i" 222, "W" 944, a space 278 thousandths.
    assert text_width("iW i", 10) == pytest.approx((222 + 944 + 278 + 222) / 100)
    assert text_width("W", 10, bold=True) == pytest.approx(9.44)
    assert text_width("", 12) == 0


def test_a_long_name_wraps_between_its_words() -> None:
    lines = wrap("Problem Solving with Reasoning", 120, 11)
    assert lines == ["Problem Solving with", "Reasoning"]
    assert wrap("GPU energy · median ITL ≤ 300 ms · data 2026-02-16", 190, 10, sep=" · ") == [
        "GPU energy · median ITL ≤ 300 ms",
        "data 2026-02-16",
    ]


@settings(deadline=None)
@given(WORDS, st.floats(min_value=20, max_value=300), st.sampled_from([9.0, 11.0, 13.0]))
def test_wrapping_keeps_every_word_whole(words: list[str], width: float, size: float) -> None:
    text = " ".join(words)
    lines = wrap(text, width, size)
    assert " ".join(lines) == text  # nothing cut, nothing lost, in order
    for line in lines:
        assert text_width(line, size) <= width or " " not in line  # a lone long word only
    # Greedy: no line could have taken the next line's first word.
    for a, b in itertools.pairwise(lines):
        assert text_width(f"{a} {b.split()[0]}", size) > width


@settings(deadline=None)
@given(WORDS, st.floats(min_value=60, max_value=300), st.integers(min_value=1, max_value=3))
def test_fitting_shrinks_only_as_far_as_needed(words: list[str], width: float, lines: int) -> None:
    text = " ".join(words)
    shown, size = fit(text, width, 13, lines, smallest=8)
    assert " ".join(shown) == text
    if size > 8:
        assert len(shown) <= lines and all(text_width(line, size) <= width for line in shown)
    if size < 13:  # half a pixel larger did not fit
        bigger = wrap(text, width, size + 0.5)
        assert len(bigger) > lines or any(text_width(x, size + 0.5) > width for x in bigger)


def test_spread_hand_cases() -> None:
    # Apart already: untouched.
    assert spread([10, 50, 90], [14, 14, 14], 0, 300) == [10, 50, 90]
    # Three wanting one place: a block centred on it, kept inside the top.
    assert spread([11, 11, 11], [14, 14, 14], 0, 300) == [7, 21, 35]
    assert spread([150, 150], [14, 14], 0, 300) == [143, 157]
    # Near the bottom: pushed up.
    assert spread([299, 295, 290], [14, 14, 14], 0, 300) == [293, 279, 265]
    # Taller labels need more room.
    assert spread([0, 1], [14, 28], 0, 300) == [7, 28]


@settings(deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(min_value=-50, max_value=350), st.sampled_from([14.0, 28.0])),
        min_size=1,
        max_size=20,
    )
)
def test_spread_never_overlaps_and_keeps_order(labels: list[tuple[float, float]]) -> None:
    wanted, sizes = [w for w, _ in labels], [s for _, s in labels]
    placed = spread(wanted, sizes, 0, 300)
    order = sorted(range(len(wanted)), key=lambda i: (wanted[i], i))
    for i, j in itertools.pairwise(order):
        assert placed[j] - placed[i] >= (sizes[i] + sizes[j]) / 2 - 1e-9
    if sum(sizes) <= 300:  # room for all: every label inside
        for p, s in zip(placed, sizes, strict=True):
            assert p - s / 2 >= -1e-9 and p + s / 2 <= 300 + 1e-9


def test_log_axis_positions_round_trip() -> None:
    assert log_pixels(10, 1, 100, 300) == pytest.approx(150)
    assert log_value(150, 1, 100, 300) == pytest.approx(10)
    assert log_value(log_pixels(math.pi, 0.1, 40, 300), 0.1, 40, 300) == pytest.approx(math.pi)
