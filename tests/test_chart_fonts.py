"""Charts render with vl-convert's own Liberation Sans (jouleboard/render/chart_files.py): the
same SVG as with the system's fonts for every character that font is trusted with, and a chart with
any other character still renders where the system's fonts (and their fallbacks) are seen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jouleboard.render.chart_files import (
    _BUNDLED_FONT_CHARS,
    _no_fonts_config,
    bundled_font_suffices,
)

# Renders each spec (a JSON list on stdin) with vl-convert as it comes: system fonts seen.
_PLAIN = """
import json, sys, vl_convert
from jouleboard.render.chart_files import stable_ids
specs = json.load(sys.stdin)
json.dump([stable_ids(vl_convert.vegalite_to_svg(json.dumps(s))) for s in specs], sys.stdout)
"""
# Renders them the way a build does (a fresh process, a fresh cache).
_BUILD = """
import json, sys
from pathlib import Path
from jouleboard.render.chart_files import render_charts
specs = json.load(sys.stdin)
out = render_charts({f"c{i:03d}": s for i, s in enumerate(specs)}, ("svg",), Path(sys.argv[1]))
json.dump([out[(f"c{i:03d}", "svg")].decode() for i in range(len(specs))], sys.stdout)
"""


def _labelled(label: str) -> dict:
    """A one-bar chart whose axis label is ``label``: the plot starts where the label's
    measured width ends, so any difference in that width shows in the SVG."""
    return {
        "data": {"values": [{"k": label, "v": 1}]},
        "mark": "bar",
        "config": {"font": "Liberation Sans, Arial, Helvetica, Arimo, sans-serif"},
        "encoding": {
            "y": {"field": "k", "type": "nominal", "axis": {"labelLimit": 0}},
            "x": {"field": "v", "type": "quantitative"},
        },
    }


def _svgs(
    script: str, specs: list[dict], tmp_path: Path, env: dict[str, str] | None = None
) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "cache")],
        input=json.dumps(specs),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=env,
    )
    return json.loads(done.stdout)


def test_the_bundled_font_measures_every_trusted_character_as_the_system_does(
    tmp_path: Path,
) -> None:
    chars = sorted(_BUNDLED_FONT_CHARS - {" "})
    labels = ["".join(chars[i : i + 24]) for i in range(0, len(chars), 24)]
    specs = [_labelled(label) for label in labels]
    plain, built = _svgs(_PLAIN, specs, tmp_path), _svgs(_BUILD, specs, tmp_path)
    assert len(built) == len(labels) > 15
    for label, want, got in zip(labels, plain, built, strict=True):
        assert got == want, f"width of {label!r} differs from the system font's"


def test_a_chart_the_bundled_font_cannot_draw_renders_with_the_system_fonts(tmp_path: Path) -> None:
    # Braille, CJK and an emoji: Liberation Sans has none of them; a system font may.
    specs = [_labelled("GPT ⠿⠿ 通义千问 ⚡")]
    assert _svgs(_BUILD, specs, tmp_path) == _svgs(_PLAIN, specs, tmp_path)


def test_a_chart_drawn_with_the_system_fonts_is_drawn_again_once_they_change(
    tmp_path: Path,
) -> None:
    """The chart cache keeps such a chart's SVG under the system's fonts as well as its
    spec: once they change (here all hidden, as if removed) the same cache gives what a
    fresh one gives, not the SVG drawn with the fonts before."""
    specs = [_labelled("GPT ⠿⠿ 通义千问 ⚡")]
    before = _svgs(_BUILD, specs, tmp_path)
    hidden = {**os.environ, "FONTCONFIG_FILE": str(_no_fonts_config(tmp_path))}
    after = _svgs(_BUILD, specs, tmp_path, hidden)
    assert after == _svgs(_BUILD, specs, tmp_path / "fresh", hidden)
    assert after != before  # the fonts draw this chart: else the test shows nothing


def test_which_charts_the_bundled_font_suffices_for() -> None:
    assert bundled_font_suffices('{"t":"Qwen 3 235B A22B Thinking FP8"}')
    assert bundled_font_suffices('{"t":"1× B200 – “batch” ≤ 8 ms, Σ, Ελληνικά, Русский, é"}')
    assert not bundled_font_suffices('{"t":"通义千问"}')
    assert not bundled_font_suffices('{"t":"⠿"}')
    assert not bundled_font_suffices('{"t":"fast 🚀"}')
    assert not bundled_font_suffices('{"t":"ǅ"}')  # Latin Extended-B: not trusted
    assert not bundled_font_suffices('{"t":"a·b"}')  # the two fonts differ on it
