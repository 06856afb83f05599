"""Registries an importer adds to stay the user's: comments, key order and hand edits kept.

An import merges what it knows into models.yaml, tasks.yaml or gpus.yaml. A registry the
data folder does not have yet is written whole; one it has is edited in place with a
round-trip YAML parser (ruamel.yaml): entries the import does not know, every comment, the
order of the keys (tasks.yaml's order is the site's) and every field the import does not own
stay as the user left them. New entries are appended; the fields the import owns are set
where they differ. A registry the import would not change is not rewritten at all, and
every change is listed, so the import's summary can say what it did to the user's files.
"""

from __future__ import annotations

import io
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from jouleboard.core.shapes import JsonLike

WIDTH = 100  # as the files jouleboard writes


@dataclass(frozen=True)
class RegistryMerge:
    """A registry after an import: its new text (None: unchanged, not rewritten) and what
    changed, one line each (``added Qwen/Qwen3-8B``, ``Qwen/Qwen3-8B: nickname 'a' -> 'b'``)."""

    text: str | None
    changes: tuple[str, ...]


def sorted_value(value: JsonLike) -> JsonLike:
    """Nested keys sorted (a new entry reads the same whoever wrote its dict)."""
    if isinstance(value, dict):
        return {k: sorted_value(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_value(v) for v in value]
    return value


def dump_new(entries: Mapping[str, JsonLike], header: str) -> str:
    """A registry written whole: top-level keys in the given order, nested keys sorted."""
    ordered = {k: sorted_value(v) for k, v in entries.items()}
    return header + yaml.safe_dump(ordered, sort_keys=False, allow_unicode=True, width=WIDTH)


def merge_registry(
    path: Path, entries: Mapping[str, Mapping[str, JsonLike]], owned: Collection[str], header: str
) -> RegistryMerge:
    """``entries`` merged into the registry at ``path`` (already read and checked by the
    caller): new ids appended, the ``owned`` fields of known ids set where they differ,
    everything else left as it is. Without a file: the entries written whole."""
    if not path.exists():
        return RegistryMerge(dump_new(entries, header), (f"created with {len(entries)} entries",))
    from ruamel.yaml import YAML

    rt = YAML()  # round-trip: comments, key order and quoting kept
    rt.width = WIDTH
    rt.preserve_quotes = True
    rt.indent(mapping=2, sequence=2, offset=0)
    doc = rt.load(path.read_text(encoding="utf-8"))
    if doc is None:  # an empty file
        return RegistryMerge(dump_new(entries, header), (f"filled with {len(entries)} entries",))
    changes = []
    for key, entry in entries.items():
        if key not in doc:
            doc[key] = sorted_value(dict(entry))
            changes.append(f"added {key}")
            continue
        mine = doc[key]
        for field in owned:
            if field in entry and mine.get(field) != entry[field]:
                changes.append(f"{key}: {field} {mine.get(field)!r} -> {entry[field]!r}")
                mine[field] = entry[field]
    if not changes:
        return RegistryMerge(None, ())
    out = io.StringIO()
    rt.dump(doc, out)
    return RegistryMerge(out.getvalue(), tuple(changes))
