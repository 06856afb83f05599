"""Phone charts break long model names between words onto two lines: never cut in the
middle (issue 40: "NVIDIA Nemot...o 9B V2" stood for a name), never two alike."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from jouleboard.render.charts import PHONE_AXIS_LABELS, phone, wrapped_labels
from jouleboard.render.text_fit import text_width

NAMES = [
    "NVIDIA Nemotron Nano 9B V2",
    "NVIDIA Nemotron Nano 12B V2",
    "Qwen 3 VL 32B Instruct",
    "Qwen 3 VL 235B A22B Instruct",
    "GPT OSS 20B",
]


def test_the_nemotrons_and_qwens_keep_every_word() -> None:
    labels = wrapped_labels(NAMES)
    assert "GPT OSS 20B" not in labels  # short enough as it is
    assert {"NVIDIA Nemotron Nano 9B V2", "Qwen 3 VL 235B A22B Instruct"} <= set(labels)
    for name in labels:
        lines = labels[name]
        assert len(lines) == 2, lines
        assert " ".join(lines) == name  # every word, whole, in its order
        assert text_width(lines[0], 11) <= PHONE_AXIS_LABELS
    # The two Nemotrons end apart: the part that tells them apart is on the second line.
    assert labels["NVIDIA Nemotron Nano 12B V2"] != labels["NVIDIA Nemotron Nano 9B V2"]
    assert labels["NVIDIA Nemotron Nano 12B V2"][-1].endswith("12B V2")


@settings(deadline=None)
@given(st.lists(st.text(alphabet="ABCab 0123", min_size=1, max_size=60), max_size=12))
def test_wrapped_names_lose_nothing(names: list[str]) -> None:
    labels = wrapped_labels(names)
    for name in names:
        if text_width(name, 11) <= PHONE_AXIS_LABELS:
            assert name not in labels
            continue
        lines = labels[name]
        assert 1 <= len(lines) <= 2
        assert " ".join(lines) == " ".join(name.split())
        # A first line wider than the axis is a single word no break could shorten.
        assert text_width(lines[0], 11) <= PHONE_AXIS_LABELS or " " not in lines[0]


def test_a_phone_bar_chart_names_models_on_two_lines_in_bands_that_hold_them() -> None:
    spec = {
        "height": 24 * 2,
        "datasets": {"table": [{"model": n} for n in NAMES[:2]]},
        "encoding": {"y": {"field": "model", "axis": {"labelLimit": 240}}},
    }
    out = phone(spec)
    axis = out["encoding"]["y"]["axis"]
    shown = json.loads(axis["labelExpr"].split(")[datum.label]")[0][1:])
    assert shown == {n: wrapped_labels(NAMES[:2])[n] for n in NAMES[:2]}
    assert not any("…" in line for lines in shown.values() for line in lines)
    # Two 12 px lines per band: the bands grow from 24 px to hold them.
    assert axis["labelLineHeight"] * 2 <= out["height"] / 2
