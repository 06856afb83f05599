"""The registry of task kinds: which :class:`~jouleboard.kinds.base.TaskKind` serves each
``kind`` of tasks.yaml, and the one dispatch from a measurement file to its kind.

The package registers token and image/video tasks; a kind defined elsewhere (a plugin, or a
test) registers itself with :func:`register` before the data is loaded.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from jouleboard.config.registry import Registry
from jouleboard.config.schema import TaskInfo
from jouleboard.core.problems import Problem
from jouleboard.core.schema_errors import problems_from
from jouleboard.kinds.base import Record, TaskKind
from jouleboard.kinds.diffusion import DiffusionKind
from jouleboard.kinds.token import TokenKind
from jouleboard.measure.checks import check_references

__all__ = [
    "Record",
    "TaskKind",
    "check_measurement",
    "check_parsed",
    "kind_of",
    "kinds",
    "parse_measurement",
    "register",
    "task_kind_order",
    "unregister",
]

_BY_TASK_KIND: dict[str, TaskKind] = {}


def register(kind: TaskKind) -> None:
    """Serve every tasks.yaml ``kind`` in ``kind.task_kinds`` with ``kind`` (a later
    registration of the same name replaces the earlier one)."""
    for task_kind in kind.task_kinds:
        _BY_TASK_KIND[task_kind] = kind


def unregister(kind: TaskKind) -> None:
    for task_kind in kind.task_kinds:
        if _BY_TASK_KIND.get(task_kind) is kind:
            del _BY_TASK_KIND[task_kind]


def kinds() -> list[TaskKind]:
    """Every registered kind once, in registration order."""
    out: list[TaskKind] = []
    for kind in _BY_TASK_KIND.values():
        if kind not in out:
            out.append(kind)
    return out


def task_kind_order() -> list[str]:
    """tasks.yaml kinds in the order the home page lists them."""
    return list(_BY_TASK_KIND)


def kind_of(task: TaskInfo) -> TaskKind:
    """The kind that serves ``task`` (the data loader has checked that there is one)."""
    return _BY_TASK_KIND[task.kind]


def check_measurement(
    value: Any, shown: str, source: str, registry: Registry
) -> tuple[Any, list[Problem]]:
    """Validate one parsed measurement document by the kind it names (a document naming
    no known kind is checked against the first kind's schema, which reports the field).
    Returns the kind's record (a :class:`~jouleboard.kinds.base.Record`) or None."""
    parsed, problems = parse_measurement(value, shown)
    return (None, problems) if parsed is None else check_parsed(parsed, shown, source, registry)


def parse_measurement(value: Any, shown: str) -> tuple[tuple[TaskKind, Any] | None, list[Problem]]:
    """The first half of :func:`check_measurement`, which needs no registry: the document's
    kind and the document as that kind's measurement model, or None and the problems."""
    if not isinstance(value, dict):
        return None, [
            Problem(
                shown,
                "",
                "schema.wrong-type",
                "a measurement file holds one JSON object",
                "the fields of a measurement file: `jouleboard docs measurement-format`",
            )
        ]
    name = value.get("kind")
    kind = _BY_TASK_KIND.get(name) if isinstance(name, str) else None
    kind = kind or next(iter(_BY_TASK_KIND.values()))
    try:
        m: Any = kind.measurement.model_validate(value)
    except ValidationError as e:
        return None, problems_from(e, shown, kind.measurement)
    return (kind, m), []


def check_parsed(
    parsed: tuple[TaskKind, Any], shown: str, source: str, registry: Registry
) -> tuple[Any, list[Problem]]:
    """The second half of :func:`check_measurement`: a parsed measurement checked against
    the registries, as its kind's record or None and the problems."""
    kind, m = parsed
    problems = check_references(m, shown, registry) + kind.check(m, shown, registry)
    return (None, problems) if problems else (kind.to_record(m, source), [])


register(TokenKind())
register(DiffusionKind())
