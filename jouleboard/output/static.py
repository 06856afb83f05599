"""static/: files a site publishes as they are (CNAME, .nojekyll, .well-known/security.txt,
robots.txt...), beside templates/ and content/ in the site folder.

Files a person puts into the output folder itself are lost on the next build (it replaces
the whole folder, and refuses to while they are there: jouleboard/output/writer.py); static/ is
where they belong. Every file is checked before it is read (a regular file, not a link,
under :data:`STATIC_FILE_CAP`, all of them under :data:`STATIC_TOTAL_CAP`) and copied in
chunks, never whole in memory. Hidden names other than .nojekyll and .well-known/ (.git,
.env, .DS_Store) are skipped with a note. A name the build generates, a file where the
build makes a folder (or a folder where it makes a file), or a name that differs from
another only in case is a located problem, never a silent replacement.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.safe_read import (
    STATIC_FILE_CAP,
    STATIC_HIDDEN_PUBLISHED,
    STATIC_TOTAL_CAP,
    FileRefused,
    open_regular,
    refusal,
)
from jouleboard.loading.dataset import name_problem
from jouleboard.output.folder import MARKER
from jouleboard.output.writer import SiteFiles

STATIC_DIR = "static"
_CHUNK = 1024 * 1024  # bytes read at a time


@dataclass
class StaticTree:
    """What static/ publishes: each file's output path (relative, POSIX) and where it is,
    and a note for each hidden name skipped."""

    files: dict[str, Path] = field(default_factory=dict)
    notes: list[Problem] = field(default_factory=list)


def _symlinked_folder(path: Path) -> Problem:
    return Problem(
        shown_path(path),
        "",
        "file.symlinked-folder",
        "a symbolic link to a folder: static files are copied from folders of their own",
        "put the folder itself in static/, not a link to it",
    )


def _skipped(path: Path) -> Problem:
    return Problem(
        shown_path(path),
        "",
        "static.hidden",
        "not published: a hidden name (.git, .env, .DS_Store...) is skipped; only .nojekyll "
        "and .well-known/ are published",
        "remove it from static/, or rename it if the site needs it",
    )


def static_files(project: Path) -> StaticTree:
    """The files of ``project``/static/, each checked (nothing is read); raises
    :class:`ValidationFailed` listing every file that cannot be published, or when they
    are over :data:`STATIC_TOTAL_CAP` bytes in all."""
    root = project / STATIC_DIR
    found = StaticTree()
    if not os.path.lexists(root):
        return found
    if root.is_symlink() or not root.is_dir():
        raise ValidationFailed(
            [
                _symlinked_folder(root)
                if root.is_symlink()
                else Problem(
                    shown_path(root),
                    "",
                    "file.not-regular",
                    "static is not a folder",
                    "make static/ a folder of files to publish, or remove it",
                )
            ]
        )
    problems: list[Problem] = []
    total = 0

    def unlistable(error: OSError) -> None:
        problems.append(
            Problem(
                shown_path(Path(os.fsdecode(error.filename or ""))),
                "",
                "file.unreadable",
                f"cannot list this folder: {error.strerror or error}",
                "check its permissions",
            )
        )

    for folder, dirs, names in os.walk(root, onerror=unlistable):
        dirs[:] = [d for d in dirs if d != "__pycache__"]  # byte code: never published
        for name in sorted(dirs):
            path = Path(folder) / name
            bad = _symlinked_folder(path) if path.is_symlink() else name_problem(path)
            problems.extend([bad] if bad else [])
            if not bad and _hidden(name):
                found.notes.append(_skipped(path))
        dirs[:] = sorted(
            d
            for d in dirs
            if not (Path(folder) / d).is_symlink()
            and not name_problem(Path(folder) / d)
            and not _hidden(d)
        )
        for name in sorted(names):
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if bad := name_problem(path):
                problems.append(bad)
            elif relative == MARKER:
                problems.append(
                    Problem(
                        shown_path(path),
                        "",
                        "static.name-clash",
                        f"{MARKER} is the marker every build writes",
                        "remove it from static/",
                    )
                )
            elif _hidden(name):
                found.notes.append(_skipped(path))
            elif refused := refusal(path, STATIC_FILE_CAP):
                problems.append(Problem(shown_path(path), "", *_words(refused)))
            else:
                found.files[relative] = path
                total += path.lstat().st_size
    if total > STATIC_TOTAL_CAP:
        problems.append(
            Problem(
                shown_path(root),
                "",
                "file.too-large",
                f"static/ holds {total:,} bytes of files, over the {STATIC_TOTAL_CAP:,}-byte "
                "cap of the files a build copies as they are",
                "publish large files from elsewhere and link them",
            )
        )
    if problems:
        raise ValidationFailed(problems)
    return found


def _hidden(name: str) -> bool:
    """A hidden name static/ does not publish."""
    return name.startswith(".") and name not in STATIC_HIDDEN_PUBLISHED


def _words(refused: FileRefused) -> tuple[str, str, str]:
    return refused.rule, refused.message, refused.hint


def _folders(path: str) -> list[str]:
    """The folders ``path`` lies in: ``a``, ``a/b`` for ``a/b/c``."""
    parts = PurePosixPath(path).parts
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def _clash(name: str, files: dict[str, str], folders: dict[str, str], maker: str) -> str | None:
    """Why ``name`` cannot be published beside ``files`` and ``folders`` (each by its
    case-folded name: a case-insensitive file system or host holds one of two names that
    differ only in case), of which ``maker`` says whose they are; None when it can."""
    key = name.casefold()
    if key in files:
        other = files[key]
        return (
            f"{maker} {other} itself; a static file may not replace it"
            if other == name
            else f"{name} differs only in case from {other}, which {maker}: a "
            "case-insensitive file system or host keeps only one of them"
        )
    if key in folders:
        return f"{maker} a folder {folders[key]}/ here; a static file may not take its name"
    for folder in _folders(name):
        if folder.casefold() in files:
            other = files[folder.casefold()]
            return f"{maker} {other} as a file, where this needs a folder {folder}/"
        if folders.get(folder.casefold(), folder) != folder:
            return (
                f"its folder {folder}/ differs only in case from {folders[folder.casefold()]}/, "
                f"which {maker}"
            )
    return None


def clashes(project: Path, static: Iterable[str], generated: Iterable[str]) -> list[Problem]:
    """A located problem for each static file that would take or overlap a path the build
    generates (the same name, a file where it makes a folder or the reverse, the same name
    in another case), or another static file's in another case."""
    made = sorted(generated)
    made_files = {p.casefold(): p for p in made}
    made_folders = {f.casefold(): f for p in made for f in _folders(p)}
    own_files: dict[str, str] = {}
    own_folders: dict[str, str] = {}
    problems = []
    for name in sorted(static):
        why = _clash(name, made_files, made_folders, "the build makes") or _clash(
            name, own_files, own_folders, "static/ holds"
        )
        if why is None:
            own_files[name.casefold()] = name
            own_folders.update((f.casefold(), f) for f in _folders(name))
            continue
        problems.append(
            Problem(
                shown_path(project / STATIC_DIR / name),
                "",
                "static.name-clash",
                why,
                "rename or remove it; to change a page, override its template in templates/",
            )
        )
    return problems


def _chunks(path: Path) -> Iterator[bytes]:
    """The bytes of ``path`` (checked again as it is opened), a chunk at a time; FileRefused
    when it is no longer a regular file within the cap."""
    read = 0
    with open_regular(path, STATIC_FILE_CAP) as f:
        while chunk := f.read(_CHUNK):
            read += len(chunk)
            if read > STATIC_FILE_CAP:  # it grew after the check
                raise FileRefused("file.too-large", "the file grew past the cap", "build again")
            yield chunk


def add_static(files: SiteFiles, project: Path) -> list[Problem]:
    """Publish ``project``/static/ as it is, after every generated file (ValidationFailed,
    nothing added, when one is unsafe to read or clashes with a generated path); returns a
    note for each hidden name skipped."""
    static = static_files(project)
    # (with no static file there is no clash: the generated paths' folders, 0.02 s of an
    # edit rebuild of the bundled data, are not listed)
    if static.files and (clash := clashes(project, static.files, files.paths())):
        raise ValidationFailed(clash)
    for name, path in sorted(static.files.items()):
        try:
            files.add_chunks(name, _chunks(path))
        except FileRefused as e:
            raise ValidationFailed([Problem(shown_path(path), "", *_words(e))]) from None
    return static.notes


def static_paths(project: Path) -> list[str]:
    """The output paths ``project``/static/ publishes, by name only (nothing is read; what
    cannot be published is reported when :func:`add_static` runs, so here it is none)."""
    try:
        return sorted(static_files(project).files)
    except ValidationFailed:
        return []
