"""Where a problem is in its file's text, as a line and a column: what a pull request's
annotation points at (commands/common.py github_annotations). A syntax error says where it
stopped; any other problem is found by its JSON pointer, walked through the file (a key
written twice is the later one, the one a reader keeps and the one a duplicate-key problem
means), else at the nearest enclosing value the file has (a missing field: its object)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from jouleboard.core.problems import Problem
from jouleboard.core.safe_read import DATA_FILE_CAP, FileRefused, read_capped

Position = tuple[int, int]  # line, column: from 1

_SYNTAX = re.compile(r" at line (\d+)(?: column (\d+))?")


def position(problem: Problem) -> Position | None:
    """The line and column of ``problem`` in its file, or None where they cannot be told
    (the whole file, an unreadable one, a format other than JSON and YAML)."""
    if not problem.pointer:
        found = _SYNTAX.search(problem.message)
        return (int(found[1]), int(found[2] or 1)) if found else None
    path = Path(problem.file)
    if path.suffix not in {".json", ".yaml", ".yml"}:
        return None
    try:
        text = read_capped(path, DATA_FILE_CAP).decode("utf-8", errors="replace")
    except (FileRefused, OSError):
        return None
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in problem.pointer.split("/")[1:]]
    try:
        offset = _json_offset(text, tokens) if path.suffix == ".json" else None
        return _line_col(text, offset) if offset is not None else _yaml_position(text, tokens)
    except (ValueError, IndexError, yaml.YAMLError, RecursionError):  # text not as validated
        return None


def _line_col(text: str, offset: int) -> Position:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _json_offset(text: str, tokens: list[str]) -> int | None:
    """Where the value ``tokens`` leads to starts in JSON ``text`` (or the deepest one on
    the way that the text has)."""
    decoder = json.JSONDecoder()
    at = _skip(text, 0)
    for token in tokens:
        inner = _json_member(text, at, token, decoder)
        if inner is None:
            break
        at = inner
    return at


def _json_member(text: str, at: int, token: str, decoder: json.JSONDecoder) -> int | None:
    """Where the member ``token`` of the object or array at ``at`` starts (the last of a
    key written twice), or None."""
    if at >= len(text) or text[at] not in "[{":
        return None
    is_object, close = text[at] == "{", "]" if text[at] == "[" else "}"
    found, index, at = None, 0, _skip(text, at + 1)
    while at < len(text) and text[at] != close:
        if is_object:
            key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _skip(text, _skip(text, at) + 1)  # past the colon
            if key == token:
                found = at
        elif token == str(index):
            return at
        _, at = decoder.raw_decode(text, at)
        at = _skip(text, at)
        at, index = _skip(text, at + 1) if text[at] == "," else at, index + 1
    return found


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _yaml_position(text: str, tokens: list[str]) -> Position | None:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if node is None:
        return None
    for token in tokens:
        inner = None
        if isinstance(node, yaml.MappingNode):
            keyed = [
                v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == token
            ]
            inner = keyed[-1] if keyed else None
        elif isinstance(node, yaml.SequenceNode) and token.isdigit():
            inner = node.value[int(token)] if int(token) < len(node.value) else None
        if inner is None:
            break
        node = inner
    return node.start_mark.line + 1, node.start_mark.column + 1
