"""Load a whole data folder: registries + every measurement file, all checked together."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jouleboard.config import Registry, load_registry
from jouleboard.kinds import check_measurement, task_kind_order
from jouleboard.problems import Problem, ValidationFailed
from jouleboard.records import Record
from jouleboard.sources.mlenergy_runs import load_runs
from jouleboard.validate import check_duplicates, read_json

MEASUREMENTS_DIR = "measurements"


@dataclass(frozen=True)
class Dataset:
    registry: Registry
    # Sorted by what a configuration is, not by file name: renaming files changes nothing.
    configurations: tuple[Record, ...]
    warnings: tuple[Problem, ...] = ()  # raw runs dropped as unstable: reported, not fatal

    def for_task(self, task: str) -> list[Record]:
        """A task's configurations (all of one kind: the task's)."""
        return [c for c in self.configurations if c.task == task]

    @property
    def token_configurations(self) -> list[Record]:
        """Configurations of LLM and multimodal tasks (importer tests compare these)."""
        return [c for c in self.configurations
                if self.registry.tasks[c.task].kind in ("llm", "mllm")]


@functools.lru_cache(maxsize=4)
def _resolved_cwd(cwd: str) -> Path:
    return Path(cwd).resolve()


def shown_path(path: Path) -> str:
    """How a path is named in messages: relative to the working folder when inside it."""
    try:
        return path.resolve().relative_to(_resolved_cwd(os.getcwd())).as_posix()
    except ValueError:
        return path.as_posix()


def measurement_files(paths: Iterable[Path]) -> tuple[list[Path], list[Problem]]:
    """Every *.json below the given files/folders, sorted; other files are problems."""
    found: list[Path] = []
    problems: list[Problem] = []
    for root in paths:
        if root.is_file():
            found.append(root)
            continue
        if not root.is_dir():
            problems.append(Problem(shown_path(root), "", "file.missing", "no such file or folder",
                                    "check the path"))
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                path = Path(folder) / name
                if name.startswith(".") or name in {"README.md"}:
                    continue
                if name.endswith(".json"):
                    found.append(path)
                else:
                    problems.append(Problem(shown_path(path), "", "file.unexpected",
                                            "not a .json measurement file",
                                            "measurement files end in .json; remove other files"))
    return sorted(set(found)), problems


def load_dataset(data_dir: Path, extra: Iterable[Path] = (),
                 runs: Iterable[Path] = ()) -> Dataset:
    """Read and validate everything (measurement files, and raw ML.ENERGY run trees in
    ``runs``); raise ValidationFailed listing every problem."""
    registry, problems = load_registry(data_dir, task_kind_order())
    if registry is None:
        raise ValidationFailed(problems)
    roots = [data_dir / MEASUREMENTS_DIR, *extra]
    files, problems = measurement_files(roots)
    configs: list[Record] = []
    shown: dict[str, str] = {}
    for path in files:
        name = shown_path(path)
        try:
            source = path.resolve().relative_to(data_dir.resolve()).as_posix()
        except ValueError:
            source = name
        shown[source] = name
        value, file_problems = read_json(path, name)
        if not file_problems:
            config, file_problems = check_measurement(value, name, source, registry)
            if config is not None:
                configs.append(config)
        problems.extend(file_problems)
    report = load_runs(runs, registry)
    configs.extend(report.configurations)
    shown.update(report.shown)
    problems.extend(report.errors)
    problems.extend(check_duplicates(configs, shown))
    if problems:
        raise ValidationFailed(problems)
    return Dataset(registry=registry,
                   configurations=tuple(sorted(configs, key=lambda c: (c.identity, c.source))),
                   warnings=report.warnings)
