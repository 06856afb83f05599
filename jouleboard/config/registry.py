"""The registries in data/: site.yaml, models.yaml, gpus.yaml, tasks.yaml -> one frozen Registry."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from jouleboard.config.identities import registry_clashes
from jouleboard.config.schema import (
    GPU_ID_PATTERN,
    MODEL_ID_PATTERN,
    PERCENTILES,
    TASK_ID_PATTERN,
    GpuInfo,
    ModelInfo,
    QualityFile,
    QualityScore,
    Release,
    Releases,
    SiteSettings,
    TaskInfo,
)
from jouleboard.core.problems import Problem, pointer
from jouleboard.core.schema_errors import problems_from
from jouleboard.core.text_rules import printable
from jouleboard.core.yamlio import read_yaml

# Names Windows refuses as file names, whatever the extension; ids become path segments.
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$", re.IGNORECASE)

# Download names are <task>-<deadline>[-<gpu>-only].<ext> with a deadline like p50-300ms or
# batch-30s (urls.deadline_slug): a task or GPU id holding one could name another's file.
_DEADLINE_LIKE = re.compile(rf"({'|'.join(PERCENTILES)}|batch)-[0-9][0-9e_+-]*m?s", re.IGNORECASE)

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Registry:
    site: SiteSettings
    models: dict[str, ModelInfo]
    gpus: dict[str, GpuInfo]
    tasks: dict[str, TaskInfo]
    releases: tuple[Release, ...] = ()  # newest first; empty without data/releases.yaml
    quality: dict[str, QualityFile] = field(default_factory=dict)  # by task

    def accuracy(self, task: str, model_id: str) -> QualityScore | None:
        scores = self.quality.get(task)
        return next((q for q in scores.scores if q.model_id == model_id), None) if scores else None


def id_problem(kind: str, value: str, pattern: str) -> str | None:
    """Why ``value`` is not a usable id of ``kind`` (None when it is)."""
    if not re.fullmatch(pattern, value):
        return f"{kind} id {value!r} must be ASCII letters, digits, '.', '_' or '-'" + (
            " as 'org/name'" if kind == "model" else ""
        )
    if any(_RESERVED.match(part) for part in value.split("/")):
        return f"{kind} id {value!r} contains a name reserved on Windows"
    if any(part in {".", ".."} or part.endswith(".") for part in value.split("/")):
        return f"{kind} id {value!r} has a path segment of dots or ending in a dot"
    if kind == "task" and "--" in value:  # chart and label names join model--task
        return f"task id {value!r} contains '--', the separator of chart and label names"
    if kind in {"task", "gpu"} and (found := _DEADLINE_LIKE.search(value)):
        return (
            f"{kind} id {value!r} contains {found.group()!r}, which download file names "
            "use for the deadline"
        )
    return None


def _load_table(
    path: Path, display: str, model: type[M], kind: str, id_pattern: str
) -> tuple[dict[str, M], list[Problem]]:
    value, error, rule = read_yaml(path)
    if error:
        return {}, [Problem(display, "", rule, error, f"fix {display}")]
    if not isinstance(value, dict):
        return {}, [
            Problem(
                display,
                "",
                "schema.wrong-type",
                f"expected a mapping of {kind} id to its facts",
                "see `jouleboard docs measurement-format Registries`",
            )
        ]
    table: dict[str, M] = {}
    problems: list[Problem] = []
    for key, entry in value.items():  # file order: the site lists tasks in this order
        if not isinstance(key, str) or (why := id_problem(kind, key, id_pattern)):
            problems.append(
                Problem(
                    display,
                    pointer(key),
                    "value.bad-identifier",
                    why or f"{kind} id must be a string",
                    "rename the entry",
                )
            )
            continue
        try:
            table[key] = model.model_validate(entry)
        except ValidationError as e:
            problems.extend(problems_from(e, display, model, (key,), f"{kind}s"))
    return table, problems


def load_registry(
    data_dir: Path, task_kinds: Collection[str] | None = None
) -> tuple[Registry | None, list[Problem]]:
    """Read and check the four registries; every problem is returned, none raised.
    ``task_kinds``: the tasks.yaml kinds some task kind serves (jouleboard.kinds)."""

    def shown(name: str) -> str:
        return str(data_dir / name)

    models, p1 = _load_table(
        data_dir / "models.yaml", shown("models.yaml"), ModelInfo, "model", MODEL_ID_PATTERN
    )
    gpus, p2 = _load_table(
        data_dir / "gpus.yaml", shown("gpus.yaml"), GpuInfo, "gpu", GPU_ID_PATTERN
    )
    tasks, p3 = _load_table(
        data_dir / "tasks.yaml", shown("tasks.yaml"), TaskInfo, "task", TASK_ID_PATTERN
    )
    problems = p1 + p2 + p3 + registry_clashes(models, gpus, tasks, shown)
    for task, info in tasks.items():
        if task_kinds is not None and info.kind not in task_kinds:
            problems.append(
                Problem(
                    shown("tasks.yaml"),
                    pointer(task, "kind"),
                    "value.not-allowed",
                    f"kind {info.kind!r} is not one of {', '.join(task_kinds)}",
                    "use a known kind, or register the kind first",
                )
            )
    site = _load_site(data_dir / "site.yaml", shown("site.yaml"), problems)
    if site is not None and not p2:
        for i, gpu in enumerate(site.default_gpus):
            if gpu not in gpus:
                problems.append(
                    Problem(
                        shown("site.yaml"),
                        pointer("default_gpus", i),
                        "registry.unknown-gpu",
                        f"unknown GPU {gpu!r}",
                        f"known GPUs: {', '.join(sorted(gpus))}",
                    )
                )
    releases = _load_releases(data_dir / "releases.yaml", shown("releases.yaml"), site, problems)
    # Ids are checked against a registry only when it loaded whole: against a broken one,
    # every id it failed to give would look unknown.
    quality = _load_quality(
        data_dir / "quality", None if p1 else models, None if p3 else tasks, problems
    )
    if problems or site is None:
        return None, problems
    return Registry(
        site=site, models=models, gpus=gpus, tasks=tasks, releases=releases, quality=quality
    ), []


def _load_quality(
    folder: Path,
    models: dict[str, ModelInfo] | None,
    tasks: dict[str, TaskInfo] | None,
    problems: list[Problem],
) -> dict[str, QualityFile]:
    """data/quality/<task>.yaml: accuracy scores, each for a known model and task (not
    checked against a registry given as None: one that did not load)."""
    quality: dict[str, QualityFile] = {}
    if folder.is_symlink():  # like a registry file, a link could read from anywhere
        problems.append(
            Problem(
                printable(str(folder)),
                "",
                "file.symlinked-folder",
                "a symbolic link to a folder: quality files are read from the data folder only",
                "commit the folder itself, not a link",
            )
        )
        return quality
    # A hidden file (.draft.yaml) is not read, as nowhere in the data folder: the inputs
    # digest does not see it either (jouleboard/engine/fingerprint.py).
    found = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    for path in (p for p in found if not p.name.startswith(".")):
        display = printable(str(path))  # a newline in a file name must not forge a line
        value, error, rule = read_yaml(path)
        if error:
            problems.append(Problem(display, "", rule, error, f"fix {display}"))
            continue
        try:
            doc = QualityFile.model_validate(value)
        except ValidationError as e:
            problems.extend(problems_from(e, display, QualityFile, schema="quality"))
            continue
        if tasks is not None and doc.task not in tasks:
            problems.append(
                Problem(
                    display,
                    "/task",
                    "registry.unknown-task",
                    f"unknown task {doc.task!r}",
                    "use a task id of tasks.yaml",
                )
            )
        if path.stem != doc.task:
            problems.append(
                Problem(
                    display,
                    "/task",
                    "quality.file-name",
                    f"file name {path.name} does not match task {doc.task!r}",
                    f"name the file {doc.task}.yaml",
                )
            )
        seen: set[str] = set()
        for i, score in enumerate(doc.scores):
            where = pointer("scores", i, "model_id")
            if models is not None and score.model_id not in models:
                problems.append(
                    Problem(
                        display,
                        where,
                        "registry.unknown-model",
                        f"unknown model {score.model_id!r}",
                        "add it to models.yaml or fix the id",
                    )
                )
            if score.model_id in seen:
                problems.append(
                    Problem(
                        display,
                        where,
                        "quality.duplicate",
                        f"{score.model_id} has two scores",
                        "keep the one that matches the energy run",
                    )
                )
            seen.add(score.model_id)
        quality[doc.task] = doc
    return quality


def _load_releases(
    path: Path, display: str, site: SiteSettings | None, problems: list[Problem]
) -> tuple[Release, ...]:
    if not path.exists():
        return ()
    value, error, rule = read_yaml(path)
    if error:
        problems.append(Problem(display, "", rule, error, f"fix {display}"))
        return ()
    try:
        releases = Releases.model_validate(value).releases
    except ValidationError as e:
        problems.extend(problems_from(e, display, Releases, schema="releases"))
        return ()
    versions = [r.version for r in releases]
    for i, r in enumerate(releases):
        if versions.index(r.version) != i:
            problems.append(
                Problem(
                    display,
                    pointer("releases", i, "version"),
                    "registry.duplicate-release",
                    f"{r.version} twice",
                    "each version once",
                )
            )
        if i and r.date > releases[i - 1].date:
            problems.append(
                Problem(
                    display,
                    pointer("releases", i, "date"),
                    "registry.release-order",
                    "releases must be newest first",
                    "reorder the list",
                )
            )
        if i and r.ref is None:
            problems.append(
                Problem(
                    display,
                    pointer("releases", i, "ref"),
                    "schema.missing-field",
                    "an older release needs its git ref",
                    "name the tag or commit that holds its data/",
                )
            )
    if site is not None and releases[0].version != site.data_version:
        problems.append(
            Problem(
                display,
                pointer("releases", 0, "version"),
                "registry.release-mismatch",
                f"newest release {releases[0].version} is not site.yaml's "
                f"data_version {site.data_version}",
                "add the new release first, or fix data_version",
            )
        )
    return tuple(releases)


def _load_site(path: Path, display: str, problems: list[Problem]) -> SiteSettings | None:
    value, error, rule = read_yaml(path)
    if error:
        problems.append(Problem(display, "", rule, error, f"fix {display}"))
        return None
    try:
        return SiteSettings.model_validate(value)
    except ValidationError as e:
        problems.extend(problems_from(e, display, SiteSettings, schema="site"))
        return None
