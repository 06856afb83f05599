"""The contract every importer keeps (site data, raw runs, and any future source).

1. Read and validate everything first; a plan holds every file's final text.
2. Refuse, before writing anything, to replace a file the importer did not write: a file is
   the importer's when the manifest lists it, or its content says so (``owns``).
3. Write all or nothing: every file goes into a staging folder inside the data folder, then
   each is moved into place (same file system: one rename per file). A failure while staging
   leaves the data folder as it was.
4. Never delete what it did not create: the only files removed are ones this importer wrote
   in an earlier import that a full re-import (``replace_previous``) no longer has.
5. Never replace a file with less than it holds: a re-import that would drop a field of a
   JSON file (absent, empty, "unknown", a shorter list) is refused, naming the fields
   (``import.would-lose``); what it changes is said field by field (:func:`changes`).

The manifest, ``.jouleboard-imports.json`` in the data folder, lists the files each importer
wrote (by path relative to the data folder); the build and validation ignore it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jouleboard.core.files import replace_text
from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.safe_read import FileRefused, read_capped

MANIFEST = ".jouleboard-imports.json"
REGISTRIES = ("gpus.yaml", "models.yaml", "tasks.yaml")
_STAGING = ".jouleboard-staging"
MANIFEST_CAP = 16 * 1024 * 1024  # a path list: 16 MiB holds ~200,000 of them


@dataclass
class ImportPlan:
    """What one import writes. ``files``: files the importer owns (measurement files);
    ``updates``: shared files it rewrites in place (registries it merges into)."""

    importer: str
    files: dict[str, str] = field(default_factory=dict)
    updates: dict[str, str] = field(default_factory=dict)
    replace_previous: bool = False  # a full re-import: drop its own files it no longer has
    owns: Callable[[str, str], bool] = lambda old, new: old == new  # (old text, new text)


@dataclass(frozen=True)
class Committed:
    written: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class Skipped:
    """A source an import leaves out on purpose, and why (the command's summary lists it)."""

    where: str
    why: str


@dataclass(frozen=True)
class Written:
    """What :func:`write_plan` did: files written (new or changed), files that already held
    their text, and the sources left out (all paths relative to the data folder)."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    skipped: tuple[Skipped, ...] = ()
    changes: tuple[str, ...] = ()  # field by field, in the files it replaced


def write_plan(plan: ImportPlan, data_dir: Path, skipped: Sequence[Skipped] = ()) -> Written:
    """Refuse (ValidationFailed) when :func:`conflicts` finds a file that is not the
    importer's, else :func:`commit` the plan: all or nothing."""
    unchanged = sorted(rel for rel, text in plan.files.items() if _holds(data_dir / rel, text))
    blocking = conflicts(plan, data_dir)
    if blocking:
        raise ValidationFailed(blocking)
    changed = tuple(changes(plan, data_dir))
    done = commit(plan, data_dir)
    written = tuple(rel for rel in done.written if rel not in unchanged)
    return Written(written, tuple(unchanged), tuple(skipped), changed)


def _holds(path: Path, text: str) -> bool:
    """``path`` already holds ``text`` (a link, pipe or huge file never does)."""
    try:
        return read_capped(path, MANIFEST_CAP) == text.encode("utf-8")
    except FileRefused:
        return False


def same_source(old: str, new: str) -> bool:
    """An ``ImportPlan.owns`` for measurement files: a file in the way is the importer's own
    when its provenance names the same source (the same run or result file)."""
    try:
        return bool(
            json.loads(old)["provenance"]["source"] == json.loads(new)["provenance"]["source"]
        )
    except (ValueError, KeyError, TypeError):
        return False


def not_a_data_folder(out: Path, *, may_create: bool = False) -> str | None:
    """Why ``out`` cannot take an import (None when it can). ``may_create``: an absent or
    empty folder is fine (the importer writes the registries)."""
    if may_create and (not out.exists() or (out.is_dir() and not any(out.iterdir()))):
        return None
    if out.is_dir() and all((out / name).is_file() for name in REGISTRIES):
        return None
    return (
        f"{out} is not a jouleboard data folder (no {'/'.join(REGISTRIES)}): create one "
        f"with `jouleboard init {out}` or pass --out to an existing data folder"
    )


def manifest_refusal(data_dir: Path) -> Problem | None:
    """Why the manifest cannot be read safely (a link, a pipe, a huge file), None when it
    can or when there is none: an import refuses to start rather than guess what it owns."""
    try:
        read_capped(data_dir / MANIFEST, MANIFEST_CAP)
    except FileRefused as e:
        if e.rule != "file.missing":
            return Problem(
                shown_path(data_dir / MANIFEST),
                "",
                e.rule,
                e.message,
                f"{e.hint}; it lists the files importers wrote: restore it or "
                "remove it (the next import then treats every file as not its own)",
            )
    return None


def read_manifest(data_dir: Path) -> dict[str, list[str]]:
    """Each importer's files; empty when there is no manifest or it cannot be read (an
    import checks :func:`manifest_refusal` first)."""
    try:
        doc = json.loads(read_capped(data_dir / MANIFEST, MANIFEST_CAP))
    except (FileRefused, ValueError):
        return {}
    if not isinstance(doc, dict):
        return {}
    return {k: [p for p in v if isinstance(p, str)] for k, v in doc.items() if isinstance(v, list)}


def _inside(data_dir: Path, rel: str) -> bool:
    target = (data_dir / rel).resolve()
    return target.is_relative_to(data_dir.resolve()) and ".." not in Path(rel).parts


def conflicts(plan: ImportPlan, data_dir: Path) -> list[Problem]:
    """Files the plan would replace that are not the importer's (and a manifest that
    cannot be read safely)."""
    refused = manifest_refusal(data_dir)
    if refused is not None:
        return [refused]
    mine = set(read_manifest(data_dir).get(plan.importer, []))
    problems = []
    for rel, text in sorted(plan.files.items()):
        target = data_dir / rel
        if not _inside(data_dir, rel):
            problems.append(
                Problem(
                    rel,
                    "",
                    "import.outside-data",
                    "would be written outside the data folder",
                    "report this as a bug",
                )
            )
            continue
        if not target.exists() or rel in mine:
            continue
        try:  # a link, pipe or huge file in the way is never the importer's
            old: str | None = read_capped(target, MANIFEST_CAP).decode("utf-8")
        except (FileRefused, UnicodeDecodeError):
            old = None
        if old is None or not plan.owns(old, text):
            problems.append(
                Problem(
                    shown_path(target),
                    "",
                    "import.would-replace",
                    f"a file {plan.importer} did not write is in the way",
                    "move it away (or remove it) first, or leave this configuration out",
                )
            )
    return problems or losses(plan, data_dir)


EMPTY = (None, "", "unknown")  # values that hold nothing: replacing one loses nothing


def _pointer(path: tuple[str, ...]) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in path)


def field_changes(
    old: object, new: object, path: tuple[str, ...] = ()
) -> tuple[list[str], list[str]]:
    """What replacing the JSON document ``old`` by ``new`` does, field by field: the fields
    ``old`` holds that ``new`` loses (absent, empty or "unknown"; a list shortened), and the
    fields whose value changes or that ``new`` adds, each as ``/pointer: old -> new`` or
    ``/pointer: added value``."""
    lost: list[str] = []
    changed: list[str] = []
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old):
            if key not in new:
                if old[key] not in EMPTY:
                    lost.append(_pointer((*path, key)))
                continue
            more_lost, more_changed = field_changes(old[key], new[key], (*path, key))
            lost += more_lost
            changed += more_changed
        changed += [
            f"{_pointer((*path, key))}: added {_brief(new[key])}"
            for key in sorted(new.keys() - old.keys())
            if new[key] not in EMPTY
        ]
        return lost, changed
    if isinstance(old, list) and isinstance(new, list):
        if len(new) < len(old):
            lost.append(f"{_pointer(path)} ({len(old)} items, then {len(new)})")
        elif len(new) > len(old):
            changed.append(f"{_pointer(path)}: {len(old)} items -> {len(new)}")
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            more_lost, more_changed = field_changes(a, b, (*path, str(i)))
            lost += more_lost
            changed += more_changed
        return lost, changed
    if old != new:
        if old not in EMPTY and new in EMPTY:
            lost.append(_pointer(path))
        else:
            changed.append(f"{_pointer(path)}: {_brief(old)} -> {_brief(new)}")
    return lost, changed


def _brief(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _old_json(path: Path) -> object | None:
    """The JSON document a file the importer wrote holds (None: not JSON, or unreadable)."""
    try:
        value: object = json.loads(read_capped(path, MANIFEST_CAP).decode("utf-8"))
    except (FileRefused, UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value


def losses(plan: ImportPlan, data_dir: Path) -> list[Problem]:
    """Files of the importer's own that the plan would replace with less than they hold:
    an import may rewrite its files, never drop a field of one without being asked to."""
    problems = []
    for rel, text in sorted(plan.files.items()):
        old = _old_json(data_dir / rel) if _inside(data_dir, rel) else None
        if old is None:
            continue
        lost, _ = field_changes(old, json.loads(text))
        if lost:
            shown = ", ".join(lost[:6]) + (f" and {len(lost) - 6} more" if len(lost) > 6 else "")
            problems.append(
                Problem(
                    shown_path(data_dir / rel),
                    lost[0].split(" ")[0],
                    "import.would-lose",
                    f"the new import would drop what this file holds: {shown}",
                    "import again with every source the file came from (for MLPerf, the "
                    "round's summary as well as the logs), or remove the file first to "
                    "replace it with less",
                )
            )
    return problems


def changes(plan: ImportPlan, data_dir: Path) -> list[str]:
    """Field by field, what the plan changes in the files it replaces: ``<file> /pointer:
    old -> new`` (the import commands print them)."""
    lines = []
    for rel, text in sorted(plan.files.items()):
        old = _old_json(data_dir / rel) if _inside(data_dir, rel) else None
        if old is not None:
            lines += [f"{rel} {c}" for c in field_changes(old, json.loads(text))[1]]
    return lines


def stale_files(plan: ImportPlan, data_dir: Path, candidates: list[str]) -> list[str]:
    """Files to remove in a full re-import: the importer's own earlier files (by manifest,
    or ``candidates`` whose content it owns) that the new plan does not write."""
    if not plan.replace_previous:
        return []
    mine = set(read_manifest(data_dir).get(plan.importer, [])) | set(candidates)
    return sorted(
        rel
        for rel in mine
        if rel not in plan.files and _inside(data_dir, rel) and (data_dir / rel).is_file()
    )


# An import killed while it commits (kill -9, a power cut) leaves its staging folder in the
# data folder, where git shows it. The next import removes it once it is this old: no import
# stages for that long, so it is never another import's, still at work.
_ABANDONED_AFTER_S = 3600.0
_STAGING_NAME = re.compile(rf"{re.escape(_STAGING)}-[a-z0-9_]{{8}}")  # mkdtemp's names
_STAGED_NAME = re.compile(r"[0-9]+\.tmp")


def remove_abandoned_staging(data_dir: Path) -> None:
    """Remove the staging folders killed imports left in ``data_dir``: only a folder (not a
    link) named as :func:`commit` names them, untouched for an hour, that holds nothing but
    the files it stages."""
    now = time.time()
    with os.scandir(data_dir) as entries:
        found = [e for e in entries if _STAGING_NAME.fullmatch(e.name)]
    for entry in found:
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if now - entry.stat(follow_symlinks=False).st_mtime < _ABANDONED_AFTER_S:
                continue
            with os.scandir(entry.path) as inside:
                staged = list(inside)
            if all(
                _STAGED_NAME.fullmatch(e.name) and e.is_file(follow_symlinks=False) for e in staged
            ):
                for e in staged:
                    os.unlink(e.path)
                os.rmdir(entry.path)
        except OSError:
            continue  # another import removing it too, or not ours to remove after all


def commit(plan: ImportPlan, data_dir: Path, stale: Sequence[str] = ()) -> Committed:
    """Stage every file, then move each into place; update the manifest last."""
    data_dir.mkdir(parents=True, exist_ok=True)
    remove_abandoned_staging(data_dir)
    # A new folder of its own (never one a link planted under a predictable name points to).
    staging = Path(tempfile.mkdtemp(prefix=f"{_STAGING}-", dir=data_dir))
    texts = {**plan.files, **plan.updates}
    try:
        for i, (_, text) in enumerate(sorted(texts.items())):
            (staging / f"{i}.tmp").write_text(text, encoding="utf-8")
        for i, rel in enumerate(sorted(texts)):
            target = data_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / f"{i}.tmp", target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # only ever our own staging folder
    for rel in stale:
        (data_dir / rel).unlink()  # its own file; folders are left (maybe not its own)
    manifest = read_manifest(data_dir)
    previous = set() if plan.replace_previous else set(manifest.get(plan.importer, []))
    manifest[plan.importer] = sorted((previous - set(stale)) | set(plan.files))
    replace_text(data_dir / MANIFEST, json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
    return Committed(tuple(sorted(plan.files)), tuple(stale))
