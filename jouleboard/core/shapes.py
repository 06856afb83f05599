"""The shapes of plain data the stages hand each other, named once.

- :data:`JsonValue`: a JSON document as parsed (``core/jsonio.parse_strict``) and before
  it is checked; code narrows it with ``isinstance`` rather than trusting its shape.
- :data:`JsonObject`: a JSON object, e.g. a Vega-Lite spec or an API record.
- :data:`Scalar` and :data:`Row`: one flat row of a table, a download (CSV and JSON) or a
  chart's data, by column name; units are in the column names (``energy_per_token_joules``).
- :data:`JsonLike`: what may be written out as JSON (``core/jsonio.dumps_canonical``):
  read-only, so a ``dict[str, str]`` or a tuple is one; nothing is narrowed from it.
- :data:`YamlValue`: a YAML document as parsed (``core/yamlio.read_yaml``): JSON's values,
  and the dates, bytes and sets YAML also writes; keys are scalars (never lists or mappings).

:func:`json_object` and :func:`text_field` narrow a value the code itself made or checked
(an importer's own documents); a user's input is checked with a located problem instead.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
Scalar: TypeAlias = "str | int | float | bool | None"
Row: TypeAlias = "dict[str, Scalar]"
JsonLike: TypeAlias = (
    "bool | int | float | str | Sequence[JsonLike] | Mapping[str, JsonLike] | None"
)
YamlScalar: TypeAlias = "bool | int | float | str | bytes | datetime.date | None"
YamlValue: TypeAlias = (
    "YamlScalar | list[YamlValue] | tuple[YamlValue, ...] | set[YamlScalar] "
    "| dict[YamlScalar, YamlValue]"
)


def json_object(value: JsonValue, what: str) -> JsonObject:
    """``value`` as a JSON object, where the code made or checked it so: a TypeError here is
    a bug (``what`` names the value in it), never a user's mistake."""
    if not isinstance(value, dict):
        raise TypeError(f"{what} is {type(value).__name__}, not an object")
    return value


def text_field(doc: JsonObject, name: str, what: str) -> str:
    """``doc[name]`` as text, where the code made or checked it so (see :func:`json_object`)."""
    value = doc[name]
    if not isinstance(value, str):
        raise TypeError(f"{name} of {what} is {value!r}, not text")
    return value
