"""Kinds a site declares itself: site.yaml ``kinds:`` lists Python files of the data folder
(``kinds/my_kind.py``) or import paths (``my_package.kinds:MyKind``), loaded and
registered before the registries are checked, so ``jouleboard build`` and ``validate`` know
the site's own kinds of task.

A kind is code, and a data folder is often someone else's (a pull request's files), so a
kind runs only with the consent of the person running the command: ``--allow-kind-code``,
``JOULEBOARD_ALLOW_KIND_CODE=1`` or the API's ``allow_kind_code``. Without it every entry is
a located problem (``kinds.not-allowed``) and nothing of it runs. With it, the command says
on stderr which files it runs; a file of the data folder is compiled from its source text
(never a ``__pycache__`` file that could hold other code than the reviewed source), and an
import path is found outside the working folder and the data folder. Each failure is a
located problem of site.yaml (``/kinds/<i>``), never a traceback.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import stat
import sys
import sysconfig
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

from jouleboard.config.fields import KIND_ENTRY_PATTERN
from jouleboard.core.consent import ALLOW_ENVIRONMENT, kind_code_allowed
from jouleboard.core.problems import Problem, pointer
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.text_rules import printable
from jouleboard.core.yamlio import read_yaml
from jouleboard.kinds.base import TaskKind

HINT = 'see `jouleboard docs architecture "Adding a kind of task"`'
OPT_IN = f"--allow-kind-code or {ALLOW_ENVIRONMENT}=1"
SOURCE_CAP = 1024 * 1024  # a kind module is a few hundred lines (the test example: 7 KB)

Found = tuple[ModuleType | None, tuple[str, str, str] | None]


def declared(data_dir: Path) -> list[str]:
    """site.yaml's ``kinds`` when it is a list of well-formed entries (anything else is
    reported by the registry check of site.yaml)."""
    value, error, _ = read_yaml(data_dir / "site.yaml")
    entries = value.get("kinds") if isinstance(value, dict) and not error else None
    if not isinstance(entries, list):
        return []
    names = [e for e in entries if isinstance(e, str) and re.fullmatch(KIND_ENTRY_PATTERN, e)]
    return names if len(names) == len(entries) else []


def _say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def load_site_kinds(
    data_dir: Path,
    register: Callable[[TaskKind], None],
    allowed: bool = False,
    announce: Callable[[str], None] = _say_on_stderr,
) -> list[Problem]:
    """Load every kind site.yaml declares and pass each to ``register``; the problems.

    Without ``allowed`` (or :func:`kind_code_allowed`), nothing is loaded: each entry is a
    ``kinds.not-allowed`` problem naming what would run. With it, ``announce`` is told each
    file just before it runs."""
    shown = printable(str(data_dir / "site.yaml"))
    allowed = allowed or kind_code_allowed()
    problems: list[Problem] = []
    for i, entry in enumerate(declared(data_dir)):
        where = pointer("kinds", i)
        if not allowed:
            problems.append(
                Problem(
                    shown,
                    where,
                    "kinds.not-allowed",
                    (
                        f"{_what_would_run(entry, data_dir)} is code, and runs only with the "
                        "consent of whoever runs this command"
                    ),
                    (
                        f"review it, then run with {OPT_IN} (never for a pull request's files); "
                        + HINT
                    ),
                )
            )
            continue
        found, problem = _kinds_of(entry, data_dir, announce)
        if problem:
            problems.append(Problem(shown, where, problem[0], problem[1], problem[2]))
        for kind in found:
            register(kind)
    return problems


def _split(entry: str) -> tuple[str, str]:
    """``(file or module, attribute)`` of a kinds entry."""
    if entry.endswith(".py"):
        return entry, ""
    source, _, attr = entry.partition(":")
    return source, attr


def _what_would_run(entry: str, data_dir: Path) -> str:
    source, _ = _split(entry)
    if source.endswith(".py"):
        return f"the file {printable(str(data_dir / source))}"
    return f"the module {printable(source)} (an import path)"


def _kinds_of(
    entry: str, data_dir: Path, announce: Callable[[str], None]
) -> tuple[list[TaskKind], tuple[str, str, str] | None]:
    source, attr = _split(entry)
    if source.endswith(".py"):
        module, problem = _module_from_file(source, data_dir, announce)
    else:
        module, problem = _module_from_import(source, data_dir, announce)
    if module is None:
        return [], problem
    candidates = (
        [getattr(module, attr, None)]
        if attr
        else [
            v
            for v in vars(module).values()
            if inspect.isclass(v) and v.__module__ == module.__name__
        ]
    )
    made = [
        c() if inspect.isclass(c) and issubclass(c, TaskKind) and not inspect.isabstract(c) else c
        for c in candidates
    ]
    found = [k for k in made if isinstance(k, TaskKind)]
    if not found:
        what = f"{attr!r} of {source}" if attr else source
        return [], (
            "kinds.not-a-kind",
            f"{what} defines no TaskKind",
            "define a subclass of jouleboard.kinds.base.TaskKind (or name one after ':'); " + HINT,
        )
    return found, None


def _module_from_file(name: str, data_dir: Path, announce: Callable[[str], None]) -> Found:
    """The module compiled from the source text of ``name`` (no bytecode cache is read or
    written: a ``__pycache__`` file beside it may hold other code than the source shows)."""
    path = data_dir / name
    parts = Path(name).parts
    if Path(name).is_absolute() or ".." in parts:
        return None, (
            "kinds.outside-data",
            f"{name} is not inside the data folder",
            "give a path relative to the data folder, without '..'",
        )
    try:
        root = data_dir.resolve()
        info = path.lstat()
        inside = path.resolve().is_relative_to(root)
    except OSError:
        return None, (
            "kinds.missing",
            f"no kind module {name} in the data folder",
            "add the file, or remove the entry; " + HINT,
        )
    if (
        not stat.S_ISREG(info.st_mode)
        or not inside
        or any((data_dir / Path(*parts[:n])).is_symlink() for n in range(1, len(parts)))
    ):
        return None, (
            "kinds.outside-data",
            f"{name} is a link, folder or device",
            "commit the module itself inside the data folder",
        )
    try:
        source = read_capped(path, SOURCE_CAP)  # refuses a link swapped in since the look
    except FileRefused as e:
        return None, (e.rule, f"{name}: {e.message}", e.hint)
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    module_name = f"jouleboard_site_kind_{digest}"
    module = ModuleType(module_name)
    module.__file__ = str(path)
    announce(f"running kind code: {printable(str(path))}")
    sys.modules[module_name] = module  # dataclasses and pydantic look their module up
    try:
        exec(compile(source, str(path), "exec", dont_inherit=True), module.__dict__)
    except Exception as e:  # the site's code: any error is reported, located, not raised
        del sys.modules[module_name]
        return None, (
            "kinds.load-failed",
            f"{name} failed to load: {type(e).__name__}: {printable(str(e))[:300]}",
            "fix the module; " + HINT,
        )
    return module, None


def _module_from_import(name: str, data_dir: Path, announce: Callable[[str], None]) -> Found:
    """The installed module ``name``: looked up (each parent package checked before it is
    imported) with the working folder out of ``sys.path``, and refused when it, or a parent,
    lives in the working folder or the data folder (files a checkout or a pull request
    supplies, not installed code)."""
    untrusted = [Path.cwd().resolve(), data_dir.resolve()]
    parts = name.split(".")
    try:
        with _path_without(untrusted):
            spec = None
            for n in range(1, len(parts) + 1):
                spec = importlib.util.find_spec(".".join(parts[:n]))
                if spec is None:
                    break
                where = _untrusted_origin(spec, untrusted)
                if where is not None:
                    return None, (
                        "kinds.untrusted-import",
                        (
                            f"{'.'.join(parts[:n])} would be imported from {printable(where)}, "
                            "in the working folder or the data folder"
                        ),
                        (
                            "give a file of the data folder (kinds/name.py), or install the "
                            "package that provides it; " + HINT
                        ),
                    )
            if spec is None:
                return None, (
                    "kinds.missing",
                    (f"no module {name} outside the working folder and the data folder"),
                    "install the package that provides it, or give a file of the data "
                    "folder; " + HINT,
                )
            announce(f"running kind code: {printable(spec.origin or name)} (module {name})")
            return importlib.import_module(name), None
    except ModuleNotFoundError as e:  # a parent is not a package, or an import in it fails
        return None, (
            "kinds.missing",
            f"no module {name} ({printable(str(e))[:200]})",
            "install the package that provides it, or give a file of the data folder; " + HINT,
        )
    except Exception as e:  # importing runs the module's code: reported, not raised
        return None, (
            "kinds.load-failed",
            f"{name} failed to load: {type(e).__name__}: {printable(str(e))[:300]}",
            "fix the module; " + HINT,
        )


@contextmanager
def _path_without(untrusted: list[Path]) -> Iterator[None]:
    """``sys.path`` without the working folder ('' or its path) or the data folder, for
    the time of one look-up and import (``python -m`` puts the working folder first)."""
    saved = sys.path[:]
    sys.path[:] = [p for p in saved if p not in ("", ".") and _resolved(p) not in untrusted]
    try:
        yield
    finally:
        sys.path[:] = saved


def _resolved(entry: str) -> Path | None:
    try:
        return Path(entry).resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _untrusted_origin(spec: ModuleSpec, untrusted: list[Path]) -> str | None:
    """Where ``spec`` would load from, if that is inside a folder of ``untrusted`` (and not
    a package folder of the running Python, which is as trusted as jouleboard itself)."""
    places = [spec.origin] if spec.has_location and spec.origin else []
    places += list(spec.submodule_search_locations or [])
    installed = [
        p
        for p in (_resolved(sysconfig.get_path(k)) for k in ("purelib", "platlib"))
        if p is not None
    ]
    for place in places:
        resolved = _resolved(place)
        if resolved is None:
            return place
        if any(resolved.is_relative_to(folder) for folder in installed):
            continue
        if any(resolved.is_relative_to(folder) for folder in untrusted):
            return place
    return None
