"""Turn pydantic validation errors into located, actionable problems."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ValidationError

from jouleboard.problems import Problem, pointer

FORMAT_DOC = "docs/measurement-format.md"

_RULES = {
    "missing": "schema.missing-field",
    "extra_forbidden": "schema.unknown-field",
    "greater_than": "value.not-positive",
    "greater_than_equal": "value.out-of-range",
    "less_than": "value.out-of-range",
    "less_than_equal": "value.out-of-range",
    "string_pattern_mismatch": "value.bad-identifier",
    "literal_error": "value.not-allowed",
    "too_short": "value.length",
    "too_long": "value.length",
    "string_too_long": "value.length",
}


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """Names of the fields allowed at the object that holds ``loc``'s last key."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = getattr(current, "model_fields", {}).get(part)
        if field is None:
            return []
        annotation = field.annotation
        args = getattr(annotation, "__args__", ())
        candidates = [annotation, *args]
        current = next((c for c in candidates if isinstance(c, type)
                        and issubclass(c, BaseModel)), None)
        if current is None:
            return []
    return list(getattr(current, "model_fields", {}))


def problems_from(error: ValidationError, file: str, model: type[BaseModel],
                  prefix: tuple[object, ...] = ()) -> list[Problem]:
    """One problem per pydantic error, with a JSON pointer and a hint."""
    problems = []
    for e in error.errors(include_url=False):
        loc = tuple(e["loc"])
        kind = e["type"]
        rule = _RULES.get(kind, "schema.wrong-type" if kind.endswith(("_type", "_parsing"))
                          else "schema.invalid")
        hint = f"see {FORMAT_DOC}"
        message = e["msg"]
        if kind == "extra_forbidden":
            allowed = _fields_at(model, loc)
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            message = f"unknown field {str(loc[-1])!r}"
            hint = f"did you mean {close[0]!r}?" if close else f"allowed here: {', '.join(allowed)}"
        elif kind == "date_value" or (kind == "string_pattern_mismatch" and loc
                                        and str(loc[-1]).endswith("date")):
            rule, hint = "value.bad-date", "give a calendar date as YYYY-MM-DD"
        elif kind == "string_pattern_mismatch" and loc and str(loc[-1]).endswith("url"):
            rule, message = "value.bad-url", "not an https:// URL without spaces, quotes or <>"
            hint = "give the full https:// address"
        elif kind == "missing":
            message = f"required field {str(loc[-1])!r} is missing"
        elif rule == "schema.wrong-type":
            message = f"{message}, got {type(e.get('input')).__name__}"
            hint = "numbers are JSON numbers, not strings" if isinstance(e.get("input"), str) \
                else hint
        problems.append(Problem(file, pointer(*prefix, *loc), rule, message, hint))
    return problems
