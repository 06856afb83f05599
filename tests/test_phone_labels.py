"""Phone charts shorten long model names: never two to the same label (issue 29: "NVIDIA
Nemotron Nan..." stood for two models on the same axis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jouleboard.render.charts import PHONE_LABEL_CHARS, short_labels


def test_the_nemotrons_and_qwens_part_ways() -> None:
    names = [
        "NVIDIA Nemotron Nano 9B V2",
        "NVIDIA Nemotron Nano 12B V2",
        "Qwen 3 VL 32B Instruct",
        "Qwen 3 VL 235B A22B Instruct",
        "GPT OSS 20B",
    ]
    labels = short_labels(names)
    assert "GPT OSS 20B" not in labels  # short enough as it is
    shortened = [labels[n] for n in names[:4]]
    assert len(set(shortened)) == 4
    assert all(len(s) <= PHONE_LABEL_CHARS and "…" in s for s in shortened)
    assert labels["NVIDIA Nemotron Nano 12B V2"].endswith("12B V2")


@given(st.lists(st.text(alphabet="ABCab 0123", min_size=1, max_size=40), max_size=12))
def test_labels_are_short_distinct_and_never_a_short_name(names: list[str]) -> None:
    labels = short_labels(names)
    if not labels:  # no split tells them apart: the axis's ellipsis is left to do its work
        return
    long = {n for n in names if len(n) > PHONE_LABEL_CHARS}
    assert set(labels) == long
    assert len(set(labels.values())) == len(long)
    assert all(len(v) <= PHONE_LABEL_CHARS for v in labels.values())
    assert not set(labels.values()) & {n for n in names if len(n) <= PHONE_LABEL_CHARS}
