"""Kinds a site declares itself: site.yaml ``kinds:`` lists Python files of the data folder
(``kinds/my_kind.py``) or import paths (``my_package.kinds:MyKind``), loaded and
registered before the registries are checked, so ``jouleboard build`` and ``validate`` know
the site's own kinds of task.

A kind is code, like a template: only files inside the site's own data folder (no link, no
``..``) or modules already importable are loaded. Each failure is a located problem of
site.yaml (``/kinds/<i>``), never a traceback.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from jouleboard.kinds.base import TaskKind
from jouleboard.problems import Problem, pointer
from jouleboard.records import KIND_ENTRY_PATTERN
from jouleboard.text_rules import printable
from jouleboard.yamlio import read_yaml

HINT = "see docs/architecture.md, \"Adding a kind of task\""


def declared(data_dir: Path) -> list[str]:
    """site.yaml's ``kinds`` when it is a list of well-formed entries (anything else is
    reported by the registry check of site.yaml)."""
    value, error, _ = read_yaml(data_dir / "site.yaml")
    entries = value.get("kinds") if isinstance(value, dict) and not error else None
    if not isinstance(entries, list) or not all(
            isinstance(e, str) and re.fullmatch(KIND_ENTRY_PATTERN, e) for e in entries):
        return []
    return entries


def load_site_kinds(data_dir: Path, register: Callable[[TaskKind], None]) -> list[Problem]:
    """Load every kind site.yaml declares and pass each to ``register``; the problems."""
    shown = printable(str(data_dir / "site.yaml"))
    problems: list[Problem] = []
    for i, entry in enumerate(declared(data_dir)):
        where = pointer("kinds", i)
        found, problem = _kinds_of(entry, data_dir)
        if problem:
            problems.append(Problem(shown, where, problem[0], problem[1], problem[2]))
        for kind in found:
            register(kind)
    return problems


def _kinds_of(entry: str, data_dir: Path
              ) -> tuple[list[TaskKind], tuple[str, str, str] | None]:
    source, _, attr = entry.partition(":") if not entry.endswith(".py") else (entry, "", "")
    if source.endswith(".py"):
        module, problem = _module_from_file(source, data_dir)
    else:
        module, problem = _module_from_import(source)
    if module is None:
        return [], problem
    candidates = [getattr(module, attr, None)] if attr else [
        v for v in vars(module).values()
        if inspect.isclass(v) and v.__module__ == module.__name__]
    made = [c() if inspect.isclass(c) and issubclass(c, TaskKind) and
            not inspect.isabstract(c) else c for c in candidates]
    found = [k for k in made if isinstance(k, TaskKind)]
    if not found:
        what = f"{attr!r} of {source}" if attr else source
        return [], ("kinds.not-a-kind", f"{what} defines no TaskKind",
                    "define a subclass of jouleboard.kinds.base.TaskKind (or name one after "
                    "':'); " + HINT)
    return found, None


def _module_from_file(name: str, data_dir: Path
                      ) -> tuple[ModuleType | None, tuple[str, str, str] | None]:
    path = data_dir / name
    parts = Path(name).parts
    if Path(name).is_absolute() or ".." in parts:
        return None, ("kinds.outside-data", f"{name} is not inside the data folder",
                      "give a path relative to the data folder, without '..'")
    try:
        root = data_dir.resolve()
        info = path.lstat()
        inside = path.resolve().is_relative_to(root)
    except OSError:
        return None, ("kinds.missing", f"no kind module {name} in the data folder",
                      "add the file, or remove the entry; " + HINT)
    if not stat.S_ISREG(info.st_mode) or not inside or any(
            (data_dir / Path(*parts[:n])).is_symlink() for n in range(1, len(parts))):
        return None, ("kinds.outside-data", f"{name} is a link, folder or device",
                      "commit the module itself inside the data folder")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    module_name = f"jouleboard_site_kind_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        return None, ("kinds.missing", f"{name} cannot be loaded as a Python module", HINT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pydantic look their module up
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the site's code: any error is reported, located, not raised
        del sys.modules[module_name]
        return None, ("kinds.load-failed", f"{name} failed to load: {type(e).__name__}: "
                      f"{printable(str(e))[:300]}", "fix the module; " + HINT)
    return module, None


def _module_from_import(name: str) -> tuple[ModuleType | None, tuple[str, str, str] | None]:
    try:
        return importlib.import_module(name), None
    except ModuleNotFoundError as e:
        return None, ("kinds.missing", f"no module {name} ({printable(str(e))[:200]})",
                      "install the package that provides it, or give a file of the data "
                      "folder; " + HINT)
    except Exception as e:  # importing runs the module's code: reported, not raised
        return None, ("kinds.load-failed", f"{name} failed to load: {type(e).__name__}: "
                      f"{printable(str(e))[:300]}", "fix the module; " + HINT)
