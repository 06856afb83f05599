"""JSON downloads (jouleboard/render/downloads.py): the same text as json.dumps with a
two-space indent, whatever the records hold."""

from __future__ import annotations

import json
import math
import random

import pytest

from jouleboard.render.downloads import to_json


def _indented(records: list) -> str:
    return json.dumps(records, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


CASES = [
    [],
    [{}],
    [{}, {"a": 1}, {}],
    [{"name": 'a",\n    "b": 1', "é ü 通": None, "yes": True, "no": False}],
    [{"tiny": 5e-324, "big": 1.7976931348623157e308, "neg": -0.0, "int": 10**30}],
    [{"nested": {"x": [1, 2]}, "flat": 1}],  # not flat: the slow path, same text
    [{"list": []}, {"dict": {}}],
]


@pytest.mark.parametrize("records", CASES)
def test_hand_picked_records_match_an_indented_dump(records: list) -> None:
    assert to_json(records) == _indented(records)


def test_random_flat_records_match_an_indented_dump() -> None:
    rng = random.Random(19)
    values = [None, True, False, 0, -7, 3.25, 1e-9, "", " ", "x,\n y", "\\", "\u2028", "«»"]
    for _ in range(200):
        records = [
            {
                rng.choice("abcdefgh") * rng.randint(1, 3): rng.choice(values)
                for _ in range(rng.randint(0, 6))
            }
            for _ in range(rng.randint(0, 5))
        ]
        assert to_json(records) == _indented(records)


def test_non_finite_numbers_are_refused() -> None:
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError):
            to_json([{"x": bad}])
