"""Where problems are in their files' text, as a line and a column: what a pull request's
annotations point at (commands/common.py github_annotations). A syntax error says where it
stopped; any other problem is found by its JSON pointer: a member at its key (a key written
twice: the later one, the one a reader keeps and the one a duplicate-key problem means), an
element at its start, else the nearest enclosing value the file has (a missing field: its
object). Each file is read and indexed once however many problems it has, in one pass over
its text (numbers are skipped, never converted: a 5,000-digit one is no obstacle)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import yaml

from jouleboard.core.problems import Problem
from jouleboard.core.safe_read import DATA_FILE_CAP, FileRefused, read_capped

Position = tuple[int, int]  # line, column: from 1
Index = dict[tuple[str, ...], Position]  # a value's path (keys, indices as text) -> where

# Where a syntax error stopped, in the readers' own words: "… at line 38 column 1" at the
# end of the message (core/jsonio.py, core/yamlio.py: the last one, as a key quoted before
# it could hold the same words), or "line 149: …" at its start (a markdown or log line).
_AT = re.compile(r" at line (\d+)(?: column (\d+))?")
_LEADING = re.compile(r"line (\d+): ")
# What follows a JSON value that is not an object, an array or a string, up to its end.
_SCALAR = re.compile(r"-?(?:Infinity|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|true|false|null|NaN")


def positions(problems: Iterable[Problem]) -> list[Position | None]:
    """The line and column of each problem, or None where they cannot be told (the whole
    file, an unreadable one, a format other than JSON and YAML)."""
    indexes: dict[str, Index | None] = {}
    out: list[Position | None] = []
    for problem in problems:
        if not problem.pointer:
            out.append(_stated(problem.message))
            continue
        if problem.file not in indexes:
            indexes[problem.file] = _index(Path(problem.file))
        index = indexes[problem.file]
        path = tuple(
            t.replace("~1", "/").replace("~0", "~") for t in problem.pointer.split("/")[1:]
        )
        while index is not None and path and path not in index:
            path = path[:-1]  # the nearest enclosing value the file has
        out.append(index.get(path) if index is not None else None)
    return out


def _stated(message: str) -> Position | None:
    leading = _LEADING.match(message)
    if leading:
        return int(leading[1]), 1
    found = list(_AT.finditer(message))
    return (int(found[-1][1]), int(found[-1][2] or 1)) if found else None


def _index(path: Path) -> Index | None:
    if path.suffix not in {".json", ".yaml", ".yml"}:
        return None
    try:
        text = read_capped(path, DATA_FILE_CAP).decode("utf-8", errors="replace")
        if path.suffix == ".json":
            offsets: dict[tuple[str, ...], int] = {}
            _json_value(text, _skip(text, 0), (), offsets)
            return {at: _line_col(text, offset) for at, offset in offsets.items()}
        return _yaml_index(text)
    except (FileRefused, OSError, ValueError, IndexError, yaml.YAMLError, RecursionError):
        return None  # unreadable, or not the text that was validated: no line, no traceback


def _line_col(text: str, offset: int) -> Position:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _json_value(text: str, at: int, path: tuple[str, ...], out: dict[tuple[str, ...], int]) -> int:
    """Record where each value inside the one at ``at`` starts (a member: at its key), and
    return where it ends."""
    out.setdefault(path, at)
    if text[at] in "[{":
        is_object, close, index = text[at] == "{", "]" if text[at] == "[" else "}", 0
        at = _skip(text, at + 1)
        while text[at] != close:
            if is_object:
                start = at
                key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
                inner = (*path, key)
                out[inner] = start  # a later key written twice wins
                at = _skip(text, _skip(text, at) + 1)  # past the colon
            else:
                inner = (*path, str(index))
                out[inner] = at
            at = _skip(text, _json_value(text, at, inner, out))
            if text[at] == ",":
                at = _skip(text, at + 1)
            index += 1
        return at + 1
    if text[at] == '"':
        return int(json.decoder.scanstring(text, at + 1)[1])  # type: ignore[attr-defined]
    scalar = _SCALAR.match(text, at)
    if scalar is None:
        raise ValueError(f"no JSON value at {at}")
    return scalar.end()


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _yaml_index(text: str) -> Index:
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    out: Index = {}
    stack: list[tuple[tuple[str, ...], yaml.Node, yaml.Node]] = [((), root, root)] if root else []
    while stack:  # not recursive: a deeply nested file is walked like a flat one
        path, mark, node = stack.pop()
        out[path] = (mark.start_mark.line + 1, mark.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            # Pushed in reverse, so a key written twice is recorded last: the later one.
            for key, value in reversed(node.value):
                token = key.value if isinstance(key, yaml.ScalarNode) else ""
                if token:
                    stack.append(((*path, token), key, value))
        elif isinstance(node, yaml.SequenceNode):
            for i, value in enumerate(node.value):
                stack.append(((*path, str(i)), value, value))
    return out
