"""render/text_fit.py's widths are Liberation Sans's as Chromium draws it (the font the
charts and labels name first): every printable ASCII character, regular and bold, and a few
whole strings, within 0.5 %."""

from __future__ import annotations

from typing import Any

import pytest

from jouleboard.render.text_fit import text_width

pytestmark = pytest.mark.browser

MEASURE = """([text, bold]) => {
  const c = document.createElement('canvas').getContext('2d');
  c.font = `${bold ? 'bold ' : ''}100px "Liberation Sans"`;
  return c.measureText(text).width;
}"""


@pytest.mark.parametrize("bold", [False, True])
def test_widths_are_the_fonts_own(pw_browser: Any, bold: bool) -> None:
    page = pw_browser.new_page()
    try:
        weight = "bold " if bold else ""
        assert page.evaluate(f"() => document.fonts.check('{weight}12px \"Liberation Sans\"')")
        strings = [chr(c) for c in range(32, 127)] + [
            "NVIDIA Nemotron Nano 12B V2",
            "Problem Solving with Reasoning",
            "GPU energy · median ITL ≤ 300 ms · data 2026-02-16",
            "35.15 tokens/J · #1–2",
        ]
        for text in strings:
            drawn = page.evaluate(MEASURE, [text, bold])
            assert text_width(text, 100, bold) == pytest.approx(drawn, rel=5e-3, abs=0.5), text
    finally:
        page.close()
