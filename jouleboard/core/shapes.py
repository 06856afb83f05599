"""The shapes of plain data the stages hand each other, named once.

- :data:`JsonValue`: a JSON document as parsed (``core/jsonio.parse_strict``) and before
  it is checked; code narrows it with ``isinstance`` rather than trusting its shape.
- :data:`JsonObject`: a JSON object, e.g. a Vega-Lite spec or an API record.
- :data:`Scalar` and :data:`Row`: one flat row of a table, a download (CSV and JSON) or a
  chart's data, by column name; units are in the column names (``energy_per_token_joules``).
"""

from __future__ import annotations

from typing import TypeAlias

JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
Scalar: TypeAlias = "str | int | float | bool | None"
Row: TypeAlias = "dict[str, Scalar]"
