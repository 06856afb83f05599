"""JSON in and out without the standard library's traps.

``json.loads`` silently accepts NaN/Infinity, turns 1e400 into inf, keeps the last of
duplicate keys and recurses without limit; :func:`parse_strict` reports each of these
with a JSON pointer instead. Output is canonical (sorted keys, no NaN) so builds are
byte-identical, and JSON placed in HTML cannot close its element.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TypeAlias, TypeGuard

from jouleboard.core.escape import json_in_html
from jouleboard.core.problems import pointer
from jouleboard.core.shapes import JsonLike, JsonValue

MAX_DEPTH = 32
MAX_NUMBER_CHARS = 40


@dataclass(frozen=True, slots=True)
class _Bad:
    """Placeholder for a value json accepted but we refuse; found by a walk afterwards."""

    rule: str
    text: str


# What json.loads gives with the hooks below: JSON values, and _Bad where a value is refused.
_Parsed: TypeAlias = "JsonValue | _Bad | list[_Parsed] | dict[str, _Parsed]"


class _Obj(dict[str, "_Parsed"]):
    """An object with repeated keys: each key again as often as it repeats, in file order."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, _Parsed]]) -> dict[str, _Parsed]:
    obj = dict(pairs)  # the last value of a repeated key wins, as json.loads has it
    if len(obj) == len(pairs):
        return obj  # the usual case, as fast as a hook can be (1M objects: 1.5 s, not 2.0)
    repeated = _Obj(obj)
    repeated.duplicates = []
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            repeated.duplicates.append(key)
        seen.add(key)
    return repeated


def _float(text: str) -> float | _Bad:
    if len(text) > MAX_NUMBER_CHARS:
        return _Bad("json.number-too-long", text[:20] + "...")
    value = float(text)
    return value if math.isfinite(value) else _Bad("json.non-finite", text)


def _int(text: str) -> int | _Bad:
    if len(text) > MAX_NUMBER_CHARS:
        return _Bad("json.number-too-long", text[:20] + "...")
    return int(text)


def _constant(text: str) -> _Bad:
    return _Bad("json.non-finite", text)


@dataclass(frozen=True, slots=True)
class JsonIssue:
    pointer: str
    rule: str
    message: str
    hint: str


def parse_strict(text: str) -> tuple[JsonValue, list[JsonIssue]]:
    """Parse JSON text; return the value (None if unusable) and every issue found."""
    if text.startswith("\ufeff"):
        return None, [
            JsonIssue(
                "",
                "json.bom",
                "file starts with a byte-order mark",
                "save the file as UTF-8 without BOM",
            )
        ]
    value: _Parsed
    try:
        # Numbers are read by the C parser unless the text holds a long run of number
        # characters (checked number by number below); a clean file is then done.
        if _TOO_LONG not in text.translate(_AS_ONES):
            value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
            if _clean(value, 0):
                return value, []
        value = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_float=_float,
            parse_int=_int,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as e:
        return None, [
            JsonIssue(
                "",
                "json.syntax",
                f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}",
                "check brackets, commas and quotes near that position",
            )
        ]
    except RecursionError:
        return None, [
            JsonIssue(
                "",
                "json.too-deep",
                "nesting is too deep to read",
                f"measurement files nest at most {MAX_DEPTH} levels",
            )
        ]
    if _clean(value, 0):
        return value, []
    return None, list(_walk(value, (), 0))  # not clean: the walk finds why


# Number characters read as "1": a text holds a number longer than a number may be only
# where its translation holds this many 1s in a row (6x faster than a regular expression).
_AS_ONES = str.maketrans(dict.fromkeys("-+.0123456789eE", "1"))
_TOO_LONG = "1" * (MAX_NUMBER_CHARS + 1)
_PLAIN = frozenset({str, int, bool, type(None)})  # values with nothing to check


def _clean(value: _Parsed, depth: int) -> TypeGuard[JsonValue]:
    """Whether :func:`_walk` would find nothing (then ``value`` holds no :class:`_Bad`: it is
    JSON): the same checks, without building a pointer for every value (most files are
    clean, and this is 5x faster)."""
    children: Collection[_Parsed]
    if isinstance(value, dict):
        if getattr(value, "duplicates", None):
            return False
        children = value.values()
    elif isinstance(value, list):
        children = value
    elif isinstance(value, float):
        return math.isfinite(value)  # 1e999 read by the C parser is inf
    else:
        return depth <= MAX_DEPTH and not isinstance(value, _Bad)
    if depth >= MAX_DEPTH and (depth > MAX_DEPTH or len(children) > 0):
        return False  # it, or what it holds, is nested too deep
    for child in children:
        kind = type(child)
        if kind in _PLAIN:
            continue
        if isinstance(child, float):
            if not math.isfinite(child):
                return False
        elif not _clean(child, depth + 1):
            return False
    return True


def _walk(value: _Parsed, path: tuple[object, ...], depth: int) -> Iterator[JsonIssue]:
    if depth > MAX_DEPTH:
        yield JsonIssue(
            pointer(*path),
            "json.too-deep",
            f"nesting deeper than {MAX_DEPTH}",
            "measurement files are shallow objects: `jouleboard docs measurement-format`",
        )
        return
    if isinstance(value, _Bad):
        if value.rule == "json.non-finite":
            yield JsonIssue(
                pointer(*path),
                value.rule,
                f"{value.text} is not a finite number",
                "JSON numbers must be finite; give the measured value",
            )
        else:
            yield JsonIssue(
                pointer(*path),
                value.rule,
                f"number {value.text} has more than {MAX_NUMBER_CHARS} characters",
                "give the value with ordinary precision",
            )
    elif isinstance(value, dict):
        for key in getattr(value, "duplicates", []):
            yield JsonIssue(
                pointer(*path, key),
                "json.duplicate-key",
                f"key {key!r} appears more than once",
                "keep one entry; JSON readers disagree on which one wins",
            )
        for key, child in value.items():
            yield from _walk(child, (*path, key), depth + 1)
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _walk(child, (*path, i), depth + 1)


def dumps_canonical(value: JsonLike, indent: int | None = None) -> str:
    """Deterministic JSON: sorted keys, no NaN, UTF-8 text, trailing newline when indented."""
    text = json.dumps(
        value,
        sort_keys=True,
        allow_nan=False,
        ensure_ascii=False,
        indent=indent,
        separators=(",", ": ") if indent is not None else (",", ":"),
    )
    return text + "\n" if indent is not None else text


def dumps_for_html(value: JsonLike) -> str:
    """JSON safe inside an HTML <script type="application/json"> element or attribute."""
    return json_in_html(dumps_canonical(value))
