"""Strict JSON reading (jouleboard/core/jsonio.py): the fast path (numbers read by the C parser,
one pass over a clean value) gives exactly what reading every number and key through the
strict hooks gives: the same value for a clean file, the same issues otherwise."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from jouleboard.core.jsonio import (
    MAX_DEPTH,
    MAX_NUMBER_CHARS,
    _constant,
    _float,
    _int,
    _pairs,
    _walk,
    parse_strict,
)


def strict_reading(text: str) -> tuple[Any, list[Any]]:
    """Every number and key through the hooks, every value walked: the slow, plain way."""
    value = json.loads(
        text, object_pairs_hook=_pairs, parse_float=_float, parse_int=_int, parse_constant=_constant
    )
    issues = list(_walk(value, (), 0))
    return (None if issues else value), issues


LONG = "7" * (MAX_NUMBER_CHARS + 1)
CASES = [
    '{"a": 1, "b": [1.5, -2e-3, true, null, "x"]}',
    '{"a": 1, "a": 2}',
    '{"a": {"b": [1, {"c": 1, "c": 2}]}}',
    "[1e999]",
    "[-1e999]",
    "[NaN]",
    '{"x": Infinity}',
    "[-Infinity]",
    f'{{"a": {LONG}}}',
    f'{{"a": 0.{LONG}}}',
    f'{{"a": "{LONG}"}}',  # a long string is fine
    "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2),
    "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH,
    '{"e": 1E+5, "f": -0.0, "g": 123456789012345678901234567890}',
]


@pytest.mark.parametrize("text", CASES)
def test_hand_picked_texts_read_as_the_strict_reading_does(text: str) -> None:
    assert parse_strict(text) == strict_reading(text)


def _random_value(rng: random.Random, depth: int) -> str:
    choice = rng.randrange(9 if depth < MAX_DEPTH + 3 else 5)
    if choice == 0:
        return rng.choice(["1", "-0.5", "3e2", "1e400", LONG, "NaN", "12345678901234567890"])
    if choice in (1, 2):
        return rng.choice(['"s"', "true", "null", f'"{LONG}"'])
    if choice in (3, 4):
        return str(rng.randint(-9, 9))
    items = [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if choice in (5, 6):
        return "[" + ", ".join(items) + "]"
    keys = [rng.choice("abc") for _ in items]  # repeats make duplicate keys
    return "{" + ", ".join(f'"{k}": {v}' for k, v in zip(keys, items, strict=True)) + "}"


def test_random_texts_read_as_the_strict_reading_does() -> None:
    rng = random.Random(2026)
    for _ in range(500):
        text = _random_value(rng, 0)
        assert parse_strict(text) == strict_reading(text), text
