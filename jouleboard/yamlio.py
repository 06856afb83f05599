"""YAML reading that refuses duplicate keys (PyYAML keeps the last one silently)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_YAML_BYTES = 2 * 1024 * 1024


class _DuplicateKey(yaml.constructor.ConstructorError):
    pass


class _StrictLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise _DuplicateKey(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path) -> tuple[Any, str | None, str]:
    """Return (value, error message or None, rule id of the error)."""
    try:
        if path.stat().st_size > MAX_YAML_BYTES:
            return None, f"file is larger than {MAX_YAML_BYTES} bytes", "file.too-large"
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, "file is missing", "file.missing"
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 text ({e.reason} at byte {e.start})", "file.not-utf8"
    try:
        return yaml.load(text, Loader=_StrictLoader), None, ""
    except _DuplicateKey as e:
        line = e.problem_mark.line + 1 if e.problem_mark else 0
        return None, f"{e.problem} at line {line}", "yaml.duplicate-key"
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        return None, f"not valid YAML{where}: {getattr(e, 'problem', e)}", "yaml.syntax"
