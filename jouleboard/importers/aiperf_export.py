"""Reading one AIPerf export (``profile_export_aiperf.json``) safely: the file (a regular
file of at most 64 MiB, strict JSON: no NaN, duplicate key or nesting past 32 levels), and
its values by path, each missing or mistyped one a located problem (importers/aiperf.py
says what is read and why)."""

from __future__ import annotations

import datetime
import hashlib
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

from jouleboard.core.jsonio import parse_strict
from jouleboard.core.problems import Problem, pointer, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.shapes import JsonObject, JsonValue
from jouleboard.importers.serving_runs import source_name

EXPORT = "profile_export_aiperf.json"
EXPORT_CAP = 64 * 1024 * 1024  # a run's export is 30-300 kB; each GPU adds about 2 kB
HINT_RERUN = "run the benchmark again (AIPerf writes the export; do not edit it)"
Path_ = tuple[str | int, ...]  # keys and indices into the export
GPUS = ("telemetry_data", "endpoints")


class Export:
    """One parsed export, and the problems found reading it."""

    def __init__(self, shown: str, doc: JsonObject, digest: str, name: str = "") -> None:
        self.shown, self.doc, self.digest = shown, doc, digest
        self.name = name or shown  # as provenance names the file (serving_runs.source_name)
        self.problems: list[Problem] = []

    def refuse(self, where: Path_, rule: str, message: str, hint: str = HINT_RERUN) -> None:
        self.problems.append(Problem(self.shown, pointer(*where), rule, message, hint))

    def at(self, *path: str | int) -> JsonValue:
        """The value at ``path`` (None where the path leads nowhere)."""
        value: JsonValue = self.doc
        for key in path:
            if isinstance(value, dict) and isinstance(key, str):
                value = value.get(key)
            elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
                value = value[key]
            else:
                return None
        return value

    def number(self, path: Path_, unit: str | None = None) -> float | None:
        """The finite number at ``path``, its metric (the object holding it) in ``unit``;
        else None and a problem."""
        if not isinstance(self.at(*path[:-1]), dict):
            self.refuse(path[:-1], "aiperf.missing-metric", f"no {path[-2]} in the export")
            return None
        if unit is not None and (found := self.at(*path[:-1], "unit")) != unit:
            self.refuse(
                (*path[:-1], "unit"),
                "aiperf.wrong-unit",
                f"{path[-2]} is in {str(found)[:20]!r}, not {unit!r}",
            )
            return None
        value = self.at(*path)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            self.refuse(path, "aiperf.missing-metric", f"{str(value)[:30]!r} is not a number")
            return None
        return float(value)

    def time(self, *path: str) -> datetime.datetime | None:
        """An ISO date and time at ``path`` (AIPerf writes the machine's local time)."""
        text = self.at(*path)
        try:
            return datetime.datetime.fromisoformat(text) if isinstance(text, str) else None
        except ValueError:
            return None

    def gpus(self) -> Iterator[tuple[Path_, JsonValue]]:
        """Each GPU of the telemetry: its path and its entry (in export order)."""
        endpoints = self.at(*GPUS)
        for host, endpoint in endpoints.items() if isinstance(endpoints, dict) else ():
            gpus = endpoint.get("gpus") if isinstance(endpoint, dict) else None
            for key, gpu in gpus.items() if isinstance(gpus, dict) else ():
                yield (*GPUS, host, "gpus", key), gpu

    def gpu_count(self) -> int:
        """How many GPUs the telemetry lists (without walking them)."""
        endpoints = self.at(*GPUS)
        return sum(
            len(gpus)
            for endpoint in (endpoints.values() if isinstance(endpoints, dict) else ())
            if isinstance(endpoint, dict) and isinstance(gpus := endpoint.get("gpus"), dict)
        )


def open_export(path: Path) -> Export | list[Problem]:
    """The export at ``path``, or why it cannot be read."""
    shown = shown_path(path)
    try:
        raw = read_capped(path, EXPORT_CAP)
        text = raw.decode("utf-8")
    except FileRefused as e:
        return [Problem(shown, "", e.rule, e.message, e.hint)]
    except UnicodeDecodeError:
        return [Problem(shown, "", "file.not-utf8", "not UTF-8 text", HINT_RERUN)]
    doc, issues = parse_strict(text)
    if issues:
        return [Problem(shown, i.pointer, i.rule, i.message, i.hint) for i in issues]
    if not isinstance(doc, dict):
        return [Problem(shown, "", "schema.wrong-type", "not a JSON object", HINT_RERUN)]
    return Export(shown, doc, hashlib.sha256(raw).hexdigest()[:12], source_name(path))


def find_exports(paths: Sequence[Path]) -> tuple[list[Path], list[tuple[Path, str]], list[Problem]]:
    """The export files of ``paths``: a file as given; in a folder, every
    ``profile_export_aiperf.json`` below it except AIPerf's per-phase copies (``phases/``,
    which carry no telemetry): those are returned with why they are left out."""
    found: list[Path] = []
    left_out: list[tuple[Path, str]] = []
    problems: list[Problem] = []
    for path in paths:
        if path.is_file() or path.is_symlink():
            found.append(path)  # a link is refused where it is read
            continue
        if not path.is_dir():
            problems.append(Problem(shown_path(path), "", "file.missing", "no such file or folder"))
            continue
        inside = sorted(p for p in path.rglob(EXPORT) if not p.is_symlink())
        for export in inside:
            if "phases" in export.relative_to(path).parts[:-1]:
                left_out.append((export, "a per-phase copy of a run's export (no telemetry)"))
            else:
                found.append(export)
        if not inside:
            problems.append(
                Problem(
                    shown_path(path),
                    "",
                    "aiperf.no-exports",
                    f"no {EXPORT} below this folder",
                    "give AIPerf's artifact folder (--artifact-dir) or the export file",
                )
            )
    return sorted(set(found)), left_out, problems
