"""Where things are in a data folder: what no command reads there, and where a command run
in the wrong folder should look.

What a data folder holds that no command reads is named, so nothing put in the wrong place
vanishes in silence (a measurement in ``measurments/`` or directly in ``data/`` was simply
not on the site, issue 39).

A data folder is read as: the registries (site.yaml, models.yaml, gpus.yaml, tasks.yaml,
releases.yaml), ``measurements/`` and ``mlperf/`` (whose other files are problems where they
are walked), ``quality/<task>.yaml`` and the kind files site.yaml lists. Anything else is
one ``file.unread`` problem (a folder once, not each file in it), with the name it was
probably meant to have; a warning, an error with ``--strict``. Hidden names, Python's
byte-code caches and files written for people (README, LICENSE, NOTICE...) are not named.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from jouleboard.core.problems import Problem, closest, shown_path
from jouleboard.kinds.site_kinds import declared

REGISTRIES = ("site.yaml", "models.yaml", "gpus.yaml", "tasks.yaml", "releases.yaml")
FOLDERS = ("measurements", "mlperf", "quality")
# Files for people, kept beside the data: never read, never a mistake.
FOR_PEOPLE = ("README", "LICENSE", "LICENCE", "NOTICE", "COPYING", "AUTHORS", "CITATION")
RULE = "file.unread"
_ELSEWHERE = (
    "move it where jouleboard reads it, or out of the data folder; "
    "`jouleboard docs measurement-format` says what goes where"
)


def unread_problems(data_dir: Path) -> list[Problem]:
    """Every file and folder of ``data_dir`` that no command reads, sorted."""
    kind_files = {
        PurePosixPath(entry.split(":", 1)[0])
        for entry in declared(data_dir)
        if entry.split(":", 1)[0].endswith(".py")
    }
    kind_folders = {parent for file in kind_files for parent in file.parents}
    problems: list[Problem] = []
    _look(data_dir, PurePosixPath(), kind_files, kind_folders, problems)
    return sorted(problems)


def _ignored(name: str) -> bool:
    stem = name.split(".", 1)[0].upper()
    return name.startswith(".") or name == "__pycache__" or stem in FOR_PEOPLE


def _entries(folder: Path) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:  # unlistable: data_folder_problems or the loader reports it
        return []


def _look(
    data_dir: Path,
    inside: PurePosixPath,
    kind_files: set[PurePosixPath],
    kind_folders: set[PurePosixPath],
    problems: list[Problem],
) -> None:
    """The unread entries of the folder ``inside`` (relative to ``data_dir``)."""
    for name in _entries(data_dir / inside):
        relative = inside / name
        path = data_dir / relative
        if _ignored(name) or relative in kind_files:
            continue
        is_folder = path.is_dir() and not path.is_symlink()
        if inside == PurePosixPath() and name in (*REGISTRIES, *FOLDERS):
            if name == "quality" and is_folder:
                _look_quality(path, problems)
            continue
        if is_folder and relative in kind_folders:
            _look(data_dir, relative, kind_files, kind_folders, problems)
            continue
        top = inside == PurePosixPath()
        problems.append(_unread(path, name, is_folder, top, bool(kind_files)))


def _look_quality(folder: Path, problems: list[Problem]) -> None:
    """quality/ is read as quality/<task>.yaml: anything else there is not."""
    for name in _entries(folder):
        path = folder / name
        if _ignored(name) or (name.endswith(".yaml") and path.is_file()):
            continue
        stem = name.rsplit(".", 1)[0]
        problems.append(
            Problem(
                shown_path(path),
                "",
                RULE,
                f"not read: quality/ is read as quality/<task>.yaml only, so {name!r} "
                "is not published",
                f"name it {stem}.yaml"
                if name.endswith((".yml", ".YAML", ".json")) and path.is_file()
                else _ELSEWHERE,
            )
        )


def _unread(path: Path, name: str, is_folder: bool, top: bool, kinds: bool) -> Problem:
    """The problem of one entry no command reads, with the name it was probably meant to
    have (a folder's or a registry's) or where such a file goes."""
    what = "folder" if is_folder else "file"
    known = FOLDERS if is_folder else REGISTRIES
    meant = closest(name, known) if top else None
    if meant is not None:
        hint = f"did you mean {meant}{'/' if is_folder else ''}? Rename it"
    elif name.endswith(".json") and not is_folder:
        hint = (
            "a measurement file goes in measurements/<task>/<org>/<model>/, an MLPerf "
            "result in mlperf/, where jouleboard import-mlperf writes them"
        )
    elif name.endswith((".yaml", ".yml")) and not is_folder:
        hint = (
            f"the registries are {', '.join(REGISTRIES)}; accuracy scores go in quality/<task>.yaml"
        )
    elif name.endswith(".py") and not is_folder:
        hint = "a kind of task runs only when site.yaml's kinds lists its file" + (
            "" if kinds else ", as in kinds: [kinds/my_kind.py]"
        )
    else:
        hint = _ELSEWHERE
    return Problem(
        shown_path(path),
        "",
        RULE,
        f"a {what} jouleboard does not read: nothing in it is published",
        hint,
    )


def data_folder_missing(data: Path) -> str:
    """The one line that says a data folder is missing and what to do: go to the site
    folder when the command runs below it (inside data/, say), else make one."""
    shown = (
        data.as_posix()
        if data.is_absolute() or data.as_posix().startswith(".")
        else f"./{data.as_posix()}"
    )
    above = site_folder_above(data)
    if above is not None:
        return (
            f"no data folder at {shown}, but {above}/ is a site folder (its {data.as_posix()}/ "
            f"holds site.yaml): run the command there (cd {above}), or pass --data "
            f"{(Path(above) / data).as_posix()}"
        )
    if (data.parent / "site.yaml").is_file():
        here = data.parent.as_posix()
        return (
            f"no data folder at {shown}, but {here} holds site.yaml: it is a data folder "
            f"itself; pass --data {here}, or run the command in the folder above it"
        )
    return f"no data folder at {shown}: run `jouleboard init` or pass --data"


def site_folder_above(data: Path, levels: int = 3) -> str | None:
    """The folder above the working one (``..``, ``../..``...) whose ``data`` (a relative
    path) holds site.yaml: the site folder a command run inside data/ or another of its
    folders was meant for."""
    if data.is_absolute():
        return None
    for up in range(1, levels + 1):
        above = "/".join([".."] * up)
        if (Path(above) / data / "site.yaml").is_file():
            return above
    return None
