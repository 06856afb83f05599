"""static/: files a site publishes as they are (CNAME, .nojekyll, .well-known/security.txt,
robots.txt...), beside templates/ and content/ in the site folder.

Files a person puts into the output folder itself are lost on the next build (it replaces
the whole folder, and refuses to while they are there: jouleboard/output/writer.py); static/ is
where they belong. Every file is checked before it is read (a regular file, not a link,
under :data:`STATIC_FILE_CAP`), names hidden or not are copied alike, and a name the build
generates is a located problem, never a silent replacement.
"""

from __future__ import annotations

import os
from pathlib import Path

from jouleboard.core.problems import Problem, ValidationFailed, shown_path
from jouleboard.core.safe_read import STATIC_FILE_CAP, FileRefused, read_capped
from jouleboard.loading.dataset import name_problem
from jouleboard.output.folder import MARKER
from jouleboard.output.writer import SiteFiles

STATIC_DIR = "static"


def _symlinked_folder(path: Path) -> Problem:
    return Problem(
        shown_path(path),
        "",
        "file.symlinked-folder",
        "a symbolic link to a folder: static files are copied from folders of their own",
        "put the folder itself in static/, not a link to it",
    )


def static_files(project: Path) -> dict[str, bytes]:
    """The files of ``project``/static/ by output path (relative, POSIX), read once each is
    checked; raises :class:`ValidationFailed` listing every file that cannot be published."""
    root = project / STATIC_DIR
    if not os.path.lexists(root):
        return {}
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
    files: dict[str, bytes] = {}
    problems: list[Problem] = []

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
        for name in sorted(dirs):
            path = Path(folder) / name
            bad = _symlinked_folder(path) if path.is_symlink() else name_problem(path)
            problems.extend([bad] if bad else [])
        dirs[:] = sorted(
            d
            for d in dirs
            if not (Path(folder) / d).is_symlink() and not name_problem(Path(folder) / d)
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
            else:
                try:
                    files[relative] = read_capped(path, STATIC_FILE_CAP)
                except FileRefused as e:
                    problems.append(Problem(shown_path(path), "", e.rule, e.message, e.hint))
    if problems:
        raise ValidationFailed(problems)
    return files


def clashes(project: Path, static: dict[str, bytes], generated: SiteFiles) -> list[Problem]:
    """A located problem for each static file whose name the build generates itself."""
    return [
        Problem(
            shown_path(project / STATIC_DIR / name),
            "",
            "static.name-clash",
            f"the build makes {name} itself; a static file may not replace it",
            "rename or remove it; to change a page, override its template in templates/",
        )
        for name in sorted(static)
        if name in generated
    ]


def add_static(files: SiteFiles, project: Path) -> None:
    """Publish ``project``/static/ as it is, after every generated file (ValidationFailed,
    nothing added, when one is unsafe to read or takes a generated file's name)."""
    static = static_files(project)
    if clash := clashes(project, static, files):
        raise ValidationFailed(clash)
    for path, content in sorted(static.items()):
        files.add(path, content)


def static_paths(project: Path) -> list[str]:
    """The output paths ``project``/static/ publishes, by name only (nothing is read; what
    cannot be published is reported when :func:`add_static` reads it)."""
    root = project / STATIC_DIR
    if root.is_symlink() or not root.is_dir():
        return []
    return sorted(
        (Path(folder) / name).relative_to(root).as_posix()
        for folder, _, names in os.walk(root)
        for name in names
    )
