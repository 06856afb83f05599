"""How wide a line of text is drawn, and lines broken to fit a width, so a label or an axis
name is wrapped at its spaces instead of cut (energy labels, phone chart axes).

Widths are those of Liberation Sans, whose metrics are Arial's and Helvetica's (the fonts
the charts and labels name first); tests/test_text_fit.py checks them against Chromium's
own measurement of the font.
"""

from __future__ import annotations

# Advance widths of ASCII 32..126 in thousandths of an em, regular and bold.
_REGULAR = (
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
)  # fmt: skip
_BOLD = (
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
)  # fmt: skip
# A few others the site writes (the same in both weights), and a wide guess for the rest.
_OTHER = {"…": 1000, "–": 556, "—": 1000, "·": 278, "≤": 549, "×": 584, "₂": 556}
_UNKNOWN = 1000  # an em: no character this wide is missed


def text_width(text: str, size: float, bold: bool = False) -> float:
    """The width of ``text`` drawn in Liberation Sans at ``size`` px, in px (no kerning)."""
    table = _BOLD if bold else _REGULAR
    units = sum(table[ord(c) - 32] if " " <= c <= "~" else _OTHER.get(c, _UNKNOWN) for c in text)
    return units * size / 1000


def measured(text: str) -> bool:
    """Whether :func:`text_width` knows the width of every character of ``text`` (rather
    than guessing an em for it)."""
    return all(" " <= c <= "~" or c in _OTHER for c in text)


def wrap(text: str, width: float, size: float, bold: bool = False, sep: str = " ") -> list[str]:
    """``text`` broken at each ``sep`` into lines no wider than ``width`` px at ``size`` px;
    a word wider than a line keeps a line of its own (no word is ever cut: the caller
    sizes the text so that it fits, see :func:`fit`)."""
    lines: list[str] = []
    for word in (w.strip() for w in text.split(sep)):
        if not word:
            continue
        if lines and text_width(f"{lines[-1]}{sep}{word}", size, bold) <= width:
            lines[-1] = f"{lines[-1]}{sep}{word}"
        else:
            lines.append(word)
    return lines or [""]


def fit(
    text: str,
    width: float,
    size: float,
    max_lines: int,
    bold: bool = False,
    smallest: float = 8,
    sep: str = " ",
) -> tuple[list[str], float]:
    """``text`` in at most ``max_lines`` lines no wider than ``width`` px: at ``size`` px
    if it fits so, else at the largest smaller size (half a pixel at a time, down to
    ``smallest``) at which it does; past that, the lines at ``smallest`` (more lines than
    asked for rather than a cut word). Lines break at ``sep``. Returns the lines and the
    size."""
    current = size
    while True:
        lines = wrap(text, width, current, bold, sep)
        fits = len(lines) <= max_lines and all(
            text_width(line, current, bold) <= width for line in lines
        )
        if fits or current - 0.5 < smallest:
            return lines, current
        current -= 0.5
