"""The registry of task kinds: which :class:`~jouleboard.kinds.base.TaskKind` serves each
``kind`` of tasks.yaml, and the one dispatch from a measurement file to its kind.

The package registers token and image/video tasks; a kind defined elsewhere (a plugin, or a
test) registers itself with :func:`register` before the data is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast

from pydantic import ValidationError

from jouleboard.config.registry import Registry
from jouleboard.config.schema import TaskInfo
from jouleboard.core.problems import Problem
from jouleboard.core.schema_errors import problems_from
from jouleboard.core.shapes import JsonValue
from jouleboard.kinds.base import Record, TaskKind
from jouleboard.kinds.diffusion import DiffusionKind
from jouleboard.kinds.token import TokenKind
from jouleboard.measure.checks import MeasurementHead, check_references

__all__ = [
    "Kinds",
    "Parsed",
    "Record",
    "TaskKind",
    "check_measurement",
    "check_parsed",
    "kinds",
    "parse_measurement",
    "register",
    "registered",
    "task_kind_order",
    "unregister",
]


@dataclass(frozen=True)
class Kinds:
    """Which :class:`~jouleboard.kinds.base.TaskKind` serves each tasks.yaml ``kind``: a
    value, made when a data folder is loaded (the package's kinds, those registered from
    Python, then site.yaml's) and passed down with the data (``Dataset.kinds``)."""

    by_task_kind: Mapping[str, TaskKind] = field(default_factory=dict)

    def with_kind(self, kind: TaskKind) -> Kinds:
        """These kinds and ``kind``, which serves every name in ``kind.task_kinds`` (over
        an earlier kind of the same name)."""
        return Kinds({**self.by_task_kind, **dict.fromkeys(kind.task_kinds, kind)})

    def all(self) -> list[TaskKind]:
        """Every kind once, in the order they were added."""
        return list({id(kind): kind for kind in self.by_task_kind.values()}.values())

    def order(self) -> list[str]:
        """tasks.yaml kinds in the order the home page lists them."""
        return list(self.by_task_kind)

    def of(self, task: TaskInfo) -> TaskKind:
        """The kind that serves ``task`` (the data loader has checked that there is one)."""
        return self.by_task_kind[task.kind]


_REGISTERED = Kinds()  # the package's kinds and those registered from Python


def register(kind: TaskKind) -> None:
    """Serve every tasks.yaml ``kind`` in ``kind.task_kinds`` with ``kind`` in every data
    folder loaded from now on (a later registration of the same name replaces the earlier
    one): the Python extension point; site.yaml's kinds go to their data set only."""
    global _REGISTERED
    _REGISTERED = _REGISTERED.with_kind(kind)


def unregister(kind: TaskKind) -> None:
    global _REGISTERED
    _REGISTERED = Kinds({name: k for name, k in _REGISTERED.by_task_kind.items() if k is not kind})


def registered() -> Kinds:
    """The kinds every data folder starts from (see :func:`register`)."""
    return _REGISTERED


def kinds() -> list[TaskKind]:
    """Every registered kind once, in registration order."""
    return _REGISTERED.all()


def task_kind_order() -> list[str]:
    """The registered tasks.yaml kinds, in the order the home page lists them."""
    return _REGISTERED.order()


Parsed = tuple[TaskKind, MeasurementHead]  # a measurement file's kind and its document


def check_measurement(
    value: JsonValue, shown: str, source: str, registry: Registry, known: Kinds | None = None
) -> tuple[Record | None, list[Problem]]:
    """Validate one parsed measurement document by the kind it names (a document naming
    no known kind is checked against the first kind's schema, which reports the field).
    Returns the kind's record (a :class:`~jouleboard.kinds.base.Record`) or None."""
    parsed, problems = parse_measurement(value, shown, known)
    return (None, problems) if parsed is None else check_parsed(parsed, shown, source, registry)


def parse_measurement(
    value: JsonValue, shown: str, known: Kinds | None = None
) -> tuple[Parsed | None, list[Problem]]:
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
    by_name = (known or _REGISTERED).by_task_kind
    name = value.get("kind")
    kind = by_name.get(name) if isinstance(name, str) else None
    kind = kind or next(iter(by_name.values()))
    try:
        m = kind.measurement.model_validate(value)
    except ValidationError as e:
        published = kind in _REGISTERED.all()  # the measurement schema has these kinds
        return None, problems_from(e, shown, kind.measurement, schema="measurement" * published)
    return (kind, _headed(m)), []


# The measurement models found to have MeasurementHead's fields: an isinstance check against
# a runtime protocol looks up every member, 100,000 times at 100k configurations.
_HEADED: set[type] = set()


def _headed(m: object) -> MeasurementHead:
    """``m``, a measurement whose model has the fields every kind's has (checked once per
    model); a kind's model that lacks one is a bug in the kind."""
    if type(m) not in _HEADED:
        if not isinstance(m, MeasurementHead):
            raise TypeError(f"{type(m).__name__} lacks the fields every measurement has")
        _HEADED.add(type(m))
    return cast(MeasurementHead, m)


def check_parsed(
    parsed: Parsed, shown: str, source: str, registry: Registry
) -> tuple[Record | None, list[Problem]]:
    """The second half of :func:`check_measurement`: a parsed measurement checked against
    the registries, as its kind's record or None and the problems."""
    kind, m = parsed
    problems = check_references(m, shown, registry) + kind.check(m, shown, registry)
    return (None, problems) if problems else (kind.to_record(m, source), [])


register(TokenKind())
register(DiffusionKind())
