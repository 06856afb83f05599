"""YAML reading that refuses duplicate keys (PyYAML keeps the last one silently), keys that
are lists or mappings, and merge keys, each with its line."""

from __future__ import annotations

import stat
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from jouleboard.core.shapes import YamlValue

MAX_YAML_BYTES = 2 * 1024 * 1024
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _RefusedKey(yaml.constructor.ConstructorError):
    """A mapping key we refuse; ``rule`` says why."""

    def __init__(self, rule: str, problem: str, mark: yaml.Mark) -> None:
        super().__init__(None, None, problem, mark)
        self.rule = rule


# libyaml's parser when PyYAML has it (several times faster); the checks below are ours either way.
if TYPE_CHECKING:  # CSafeLoader has SafeLoader's methods; it exists only with libyaml
    _SafeLoader = yaml.SafeLoader
else:
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictLoader(_SafeLoader):
    def construct_mapping(
        self, node: yaml.MappingNode, deep: bool = False
    ) -> dict[Hashable, YamlValue]:
        seen: set[Hashable] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                raise _RefusedKey(
                    "yaml.merge-key",
                    "a YAML merge key ('<<') is not supported",
                    key_node.start_mark,
                )
            if isinstance(key_node, yaml.SequenceNode | yaml.MappingNode):
                raise _RefusedKey(
                    "yaml.unhashable-key", "a key that is a list or mapping", key_node.start_mark
                )
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise _RefusedKey(
                    "yaml.duplicate-key", f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        mapping: dict[Hashable, YamlValue] = super().construct_mapping(node, deep=deep)
        return mapping


def _read_text(path: Path) -> tuple[str | None, str, str]:
    """(text, error message, rule): a regular UTF-8 file under the size cap, or why not."""
    try:
        info = path.lstat()  # a link is refused, not followed: it could publish any file
        if not stat.S_ISREG(info.st_mode):
            return (
                None,
                "not a regular file (a symbolic link, folder, device or pipe)",
                "file.not-regular",
            )
        if info.st_size > MAX_YAML_BYTES:
            return None, f"file is larger than {MAX_YAML_BYTES} bytes", "file.too-large"
        return path.read_bytes().decode("utf-8"), "", ""
    except FileNotFoundError:
        return None, "file is missing", "file.missing"
    except OSError as e:
        return None, f"cannot read the file: {e.strerror or e}", "file.unreadable"
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 text ({e.reason} at byte {e.start})", "file.not-utf8"


def read_yaml(path: Path) -> tuple[YamlValue, str | None, str]:
    """Return (value, error message or None, rule id of the error)."""
    text, error, rule = _read_text(path)
    if text is None:
        return None, error, rule
    try:
        return yaml.load(text, Loader=_StrictLoader), None, ""
    except _RefusedKey as e:
        line = e.problem_mark.line + 1 if e.problem_mark else 0
        hint = {
            "yaml.merge-key": "; write each entry's keys out in full",
            "yaml.unhashable-key": "; keys are plain strings",
        }.get(e.rule, "")
        return None, f"{e.problem} at line {line}{hint}", e.rule
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        return None, f"not valid YAML{where}: {getattr(e, 'problem', e)}", "yaml.syntax"
