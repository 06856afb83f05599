"""Turn pydantic validation errors into located, actionable problems."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ValidationError

from jouleboard.core.problems import Problem, pointer

FORMAT_DOC = "`jouleboard docs measurement-format`"

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
    "hidden_character": "value.hidden-character",
}


# The form a pattern asks for, in words, and how to write it, by field name: where the
# pattern itself would not help the person who wrote the value (a path given as a logo).
_FORMS = {
    "logo": (
        "a file name such as logo.svg (letters, digits, '_' and '-', up to 80, then .svg, "
        ".png, .jpg, .jpeg or .webp)",
        "give the file's name, not a path: put the file in templates/assets/ of the site "
        "folder and write logo: logo.svg",
    ),
}


def _field(loc: tuple[int | str, ...]) -> str:
    """The name of the field ``loc`` ends in (a list's name for one of its items)."""
    return next((str(part) for part in reversed(loc) if isinstance(part, str)), "")


def _no_value(loc: tuple[int | str, ...]) -> tuple[str, str]:
    """The message and hint for a field YAML read as null: written with nothing after the
    colon, or with a value starting with '#', which YAML reads as a comment."""
    name = _field(loc)
    message = (
        f"{name or 'this value'} has no value: YAML reads nothing after the colon, or a "
        "# comment, as null"
    )
    if name == "accent_color":
        return (
            message,
            "quote the colour, as in accent_color: '#c2185b': an unquoted # starts a comment",
        )
    return message, (
        "give a value, or remove the line to use the default; quote a value that starts with '#'"
    )


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """Names of the fields allowed at the object that holds ``loc``'s last key."""
    current = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part)
        if field is None:
            return []
        annotation = field.annotation
        args = getattr(annotation, "__args__", ())
        candidates = [annotation, *args]
        inner = next(
            (c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None
        )
        if inner is None:
            return []
        current = inner
    return list(current.model_fields)


def _without_union_tags(loc: tuple[int | str, ...], kind: str) -> tuple[int | str, ...]:
    """``loc`` without the member tags pydantic adds inside a union (``literal['unknown']``,
    ``function-after[...]``, ``constrained-str``): they are not JSON keys. An unknown field's
    own name (the last part of an extra_forbidden loc) is the contributor's and is kept."""
    keep_last = kind == "extra_forbidden"
    return tuple(
        part
        for i, part in enumerate(loc)
        if not (
            isinstance(part, str)
            and ("[" in part or part.startswith("constrained-"))
            and not (keep_last and i == len(loc) - 1)
        )
    )


def problems_from(
    error: ValidationError,
    file: str,
    model: type[BaseModel],
    prefix: tuple[object, ...] = (),
    schema: str = "",
) -> list[Problem]:
    """One problem per pydantic error, with a JSON pointer and a hint; ``schema``: the name
    of the published JSON Schema of the file (``jouleboard schema NAME``), which a hint
    without a better one cites."""
    problems = []
    union_pointers: set[str] = set()
    for e in error.errors(include_url=False):
        kind = e["type"]
        loc = _without_union_tags(tuple(e["loc"]), kind)
        if loc != tuple(e["loc"]):  # one member of a union: report its first failure only
            if pointer(*prefix, *loc) in union_pointers:
                continue
            union_pointers.add(pointer(*prefix, *loc))
        rule = _RULES.get(
            kind, "schema.wrong-type" if kind.endswith(("_type", "_parsing")) else "schema.invalid"
        )
        hint = f"the fields and their rules: {FORMAT_DOC}" + (
            f"; its JSON Schema: `jouleboard schema {schema}`" if schema else ""
        )
        message = e["msg"]
        if kind == "extra_forbidden":
            allowed = _fields_at(model, loc)
            close = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            message = f"unknown field {str(loc[-1])!r}"
            hint = f"did you mean {close[0]!r}?" if close else f"allowed here: {', '.join(allowed)}"
        elif kind == "date_value" or (
            kind == "string_pattern_mismatch" and loc and str(loc[-1]).endswith("date")
        ):
            rule, hint = "value.bad-date", "give a calendar date as YYYY-MM-DD"
        elif kind == "string_pattern_mismatch" and loc and loc[-1] == "base_url":
            rule, message = (
                "value.bad-url",
                (
                    "not a URL path such as / or /leaderboard/ "
                    "(no '.' or '..' segment, ending in '/')"
                ),
            )
            hint = "give the path the site is served under"
        elif kind == "string_pattern_mismatch" and loc and str(loc[-1]).endswith("url"):
            rule, message = "value.bad-url", "not an https:// URL without spaces, quotes or <>"
            hint = "give the full https:// address"
        elif kind == "string_pattern_mismatch" and _field(loc) in _FORMS:
            form, hint = _FORMS[_field(loc)]
            message = f"{e.get('input')!r} is not {form}"
        elif kind == "string_pattern_mismatch" and loc and loc[-1] == "accent_color":
            message = f"{e.get('input')!r} is not a colour written as #rrggbb"
            hint = (
                "give '#' and six hex digits in quotes, e.g. accent_color: '#0a7d5a'; YAML "
                "reads an unquoted # as a comment"
            )
        elif kind.startswith("markdown."):  # a markdown_limits rule id, with its own hint
            rule, hint = kind, str(e.get("ctx", {}).get("hint", hint))
        elif kind == "hidden_character":
            hint = "retype the text without invisible or direction-changing characters"
        elif kind == "missing":
            message = f"required field {str(loc[-1])!r} is missing"
        elif (
            rule == "schema.wrong-type"
            and e.get("input") is None
            and file.endswith((".yaml", ".yml"))
        ):
            message, hint = _no_value(loc)
        elif rule == "schema.wrong-type":
            got = e.get("input")
            message = f"{message}, got {'null' if got is None else type(got).__name__}"
            hint = (
                "numbers are JSON numbers, not strings" if isinstance(e.get("input"), str) else hint
            )
        problems.append(Problem(file, pointer(*prefix, *loc), rule, message, hint))
    return problems
