"""Registry entries that the site could not tell apart: ids with one slug, shared nicknames.

Pages, charts and labels are named from slugs (jouleboard/core/urls.py, lower case, a model's
org and name joined by ``--``), so two ids with one slug would write one page twice, and two
models with one nickname would pass for each other in every table. Each clash is reported
at the later entry, naming the earlier one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from jouleboard.core.problems import Problem, pointer
from jouleboard.core.text_rules import same_name_key
from jouleboard.core.urls import deadline_slug, gpu_slug, model_slug, task_slug

if TYPE_CHECKING:  # schema.py imports nothing of this module; the import is for types only
    from jouleboard.config.schema import GpuInfo, ModelInfo, TaskInfo


def _first_seen(
    entries: Collection[str],
    key: Callable[[str], str],
    display: str,
    where: Callable[[str], str],
    problem: Callable[[str, str, str], Problem],
) -> list[Problem]:
    """A problem for each entry whose ``key`` an earlier entry (file order) already has."""
    first: dict[str, str] = {}
    problems = []
    for entry_id in entries:
        k = key(entry_id)
        earlier = first.setdefault(k, entry_id)
        if earlier != entry_id:
            problems.append(problem(entry_id, earlier, f"{display} {where(earlier)}"))
    return problems


def slug_clashes(
    kind: str, entries: Collection[str], display: str, slug: Callable[[str], str]
) -> list[Problem]:
    """Ids of one registry that differ but share a slug (case, or where ``--`` falls)."""

    def problem(entry_id: str, earlier: str, at: str) -> Problem:
        return Problem(
            display,
            pointer(entry_id),
            "registry.identity-clash",
            f"{kind} id {entry_id!r} has the same page name {slug(entry_id)!r} as "
            f"{earlier!r} ({at})",
            "ids must differ in more than letter case or where '--' and '/' fall; "
            "rename or merge the entries",
        )

    return _first_seen(entries, lambda i: slug(i).casefold(), display, pointer, problem)


def nickname_clashes(models: Mapping[str, ModelInfo], display: str) -> list[Problem]:
    """Two models may not share a nickname (ignoring case, width and runs of spaces)."""

    def problem(entry_id: str, earlier: str, at: str) -> Problem:
        return Problem(
            display,
            pointer(entry_id, "nickname"),
            "registry.duplicate-nickname",
            f"nickname {models[entry_id].nickname!r} is already used by {earlier!r} ({at})",
            "give each model its own nickname",
        )

    return _first_seen(
        models,
        lambda i: same_name_key(models[i].nickname),
        display,
        lambda i: pointer(i, "nickname"),
        problem,
    )


def deadline_clashes(tasks: Mapping[str, TaskInfo], display: str) -> list[Problem]:
    """A task's preset deadlines name download files (``p50-100ms``, 6 significant digits):
    two that print alike would claim one file. A preset equal to the default is skipped by
    the site, so it is allowed."""
    problems = []
    for task_id, task in tasks.items():
        default = task.default_deadline.ms
        seen = {deadline_slug(default, "x"): "the default deadline"}
        for i, ms in enumerate(task.preset_deadlines_ms):
            slug = deadline_slug(ms, "x")
            if ms == default:
                continue
            if slug in seen:
                problems.append(
                    Problem(
                        display,
                        pointer(task_id, "preset_deadlines_ms", i),
                        "registry.deadline-clash",
                        f"preset {ms!r} ms prints as {slug[2:]!r} like {seen[slug]}",
                        "give each deadline a distinct value",
                    )
                )
            seen.setdefault(slug, f"preset {ms!r} ms")
    return problems


def registry_clashes(
    models: Mapping[str, ModelInfo],
    gpus: Mapping[str, GpuInfo],
    tasks: Mapping[str, TaskInfo],
    shown: Callable[[str], str],
) -> list[Problem]:
    """Every identity clash of the three keyed registries."""
    return (
        slug_clashes("model", models, shown("models.yaml"), model_slug)
        + nickname_clashes(models, shown("models.yaml"))
        + slug_clashes("gpu", gpus, shown("gpus.yaml"), gpu_slug)
        + slug_clashes("task", tasks, shown("tasks.yaml"), task_slug)
        + deadline_clashes(tasks, shown("tasks.yaml"))
    )
