"""The checks every kind of measurement shares: reading a file, registry references, power
bounds, linked-metric tolerance, efficiency ceilings, duplicates.

Checks run in layers; a file that fails a layer is not checked further, but every file
is checked, and dataset-wide rules (duplicates) run over all files that passed. Each
kind's own physical checks live with the kind (jouleboard/kinds/). Rule ids are listed in
docs/measurement-format.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from jouleboard.config.registry import Registry
from jouleboard.config.schema import Provenance
from jouleboard.core.jsonio import parse_strict
from jouleboard.core.problems import Problem, closest, pointer
from jouleboard.core.safe_read import FileRefused, read_capped
from jouleboard.core.shapes import JsonValue
from jouleboard.core.urls import model_slug, task_slug
from jouleboard.measure import metrics

MAX_FILE_BYTES = 1024 * 1024
POWER_MARGIN = 1.05  # average power may exceed the board limit by 5% (sensor error)
MIN_WATTS_PER_GPU = 30.0  # below an idle GPU's draw: a unit mistake (kW?)
CONSISTENCY_TOLERANCE = 0.01  # relative, for linked metrics
# Chart files are named <kind>--<model slug>--<task>.<ext>; file names stop at 255 bytes, and
# 55 are left for the kind, separators and extension (the longest today needs 26).
MAX_MODEL_AND_TASK_CHARS = 200


class _Power(Protocol):
    @property
    def avg_power_watts(self) -> float: ...


@runtime_checkable
class MeasurementHead(Protocol):
    """What the shared checks read of a measurement of any kind (every kind's measurement
    model has these fields: kinds/__init__.py checks so when it parses a file)."""

    @property
    def kind(self) -> str: ...

    @property
    def task(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    @property
    def gpu_model(self) -> str: ...

    @property
    def num_gpus(self) -> int: ...

    @property
    def metrics(self) -> _Power: ...


class Identified(Protocol):
    """What the duplicate check reads of a record of any kind."""

    @property
    def source(self) -> str: ...

    @property
    def identity(self) -> tuple[object, ...]: ...


def read_json(path: Path, shown: str, raw: bytes | None = None) -> tuple[JsonValue, list[Problem]]:
    """Read one JSON file with a size cap and strict parsing: a link, pipe or device is
    refused before it is opened (jouleboard/core/safe_read.py), and so is a file over the cap.
    ``raw``: the file's bytes, already read that way."""
    if raw is not None:
        return json_of(raw, shown)
    try:
        raw = read_capped(path, MAX_FILE_BYTES)
    except FileRefused as e:
        hint = {
            "file.not-regular": "commit the measurement itself, not a link to it",
            "file.too-large": "one configuration per file; drop per-request data",
        }
        message = e.message
        if e.rule == "file.too-large":  # plain numbers, as in every release so far
            message = f"file is over the {MAX_FILE_BYTES}-byte cap"
            with contextlib.suppress(OSError):
                message = (
                    f"file has {path.lstat().st_size} bytes, over the {MAX_FILE_BYTES}-byte cap"
                )
        return None, [Problem(shown, "", e.rule, message, hint.get(e.rule, e.hint))]
    return json_of(raw, shown)


def json_of(raw: bytes, shown: str) -> tuple[JsonValue, list[Problem]]:
    """The JSON value of a file's bytes, strictly parsed, or the problems."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, [
            Problem(
                shown,
                "",
                "file.not-utf8",
                f"not UTF-8 text ({e.reason} at byte {e.start})",
                "save the file as UTF-8",
            )
        ]
    value, issues = parse_strict(text)
    return value, [Problem(shown, i.pointer, i.rule, i.message, i.hint) for i in issues]


def _closest(value: str, known: Iterable[str], registry_file: str) -> str:
    """The hint for an id no registry has: the id it is near, or the ids there are; and
    where to add it. One sentence, no brackets (it is printed inside the problem's)."""
    known = sorted(known)
    near = closest(value, known)
    if near is not None:
        return f"did you mean {near!r}? Or add {value!r} to {registry_file}"
    if len(known) <= 12:
        return f"known: {', '.join(known)}; or add {value!r} to {registry_file}"
    return f"add {value!r} to {registry_file} first"


def check_references(m: MeasurementHead, shown: str, registry: Registry) -> list[Problem]:
    """The task, model and GPU must be in the registries, and the task kind must match."""
    problems = []
    task = registry.tasks.get(m.task)
    if task is None:
        problems.append(
            Problem(
                shown,
                "/task",
                "registry.unknown-task",
                f"unknown task {m.task!r}",
                _closest(m.task, registry.tasks, "tasks.yaml"),
            )
        )
    elif task.kind != m.kind:
        problems.append(
            Problem(
                shown,
                "/kind",
                "registry.kind-mismatch",
                f"kind {m.kind!r} but task {m.task!r} is {task.kind!r}",
                f"set kind to {task.kind!r}",
            )
        )
    names = len(model_slug(m.model_id)) + len(task_slug(m.task))
    if names > MAX_MODEL_AND_TASK_CHARS:
        problems.append(
            Problem(
                shown,
                "/model_id",
                "value.name-too-long",
                f"model id and task id have {names} characters together, over "
                f"{MAX_MODEL_AND_TASK_CHARS}: chart file names would exceed "
                "255 bytes",
                "use a shorter model id or task id",
            )
        )
    if m.model_id not in registry.models:
        problems.append(
            Problem(
                shown,
                "/model_id",
                "registry.unknown-model",
                f"unknown model {m.model_id!r}",
                _closest(m.model_id, registry.models, "models.yaml"),
            )
        )
    if m.gpu_model not in registry.gpus:
        problems.append(
            Problem(
                shown,
                "/gpu_model",
                "registry.unknown-gpu",
                f"unknown GPU {m.gpu_model!r}",
                _closest(m.gpu_model, registry.gpus, "gpus.yaml"),
            )
        )
    return problems


def power_problems(m: MeasurementHead, shown: str, registry: Registry) -> list[Problem]:
    """Average power within num_gpus x the board limit (5 % margin), and not kW-sized."""
    power, problems = m.metrics.avg_power_watts, []
    gpu = registry.gpus.get(m.gpu_model)
    if gpu is not None and power > m.num_gpus * gpu.board_power_watts * POWER_MARGIN:
        problems.append(
            Problem(
                shown,
                "/metrics/avg_power_watts",
                "bounds.power-above-limit",
                f"{power:g} W exceeds {m.num_gpus} x {gpu.board_power_watts:g} W board limit of "
                f"{m.gpu_model}",
                "power is the sum over all num_gpus GPUs, in watts; check num_gpus and units",
            )
        )
    if power < m.num_gpus * MIN_WATTS_PER_GPU:
        problems.append(
            Problem(
                shown,
                "/metrics/avg_power_watts",
                "bounds.power-implausibly-low",
                f"{power:g} W is below {MIN_WATTS_PER_GPU:g} W per GPU",
                "give watts, not kilowatts",
            )
        )
    return problems


def inconsistent(value: float, implied: float) -> bool:
    """More than the tolerance apart; an overflow to inf (a NaN difference) counts too."""
    return not metrics.relative_difference(value, implied) <= CONSISTENCY_TOLERANCE


def ceiling_problem(
    shown: str, where: str, value: float, ceiling: float, unit: str, basis: str
) -> list[Problem]:
    """The bounds.efficiency-above-ceiling problem when ``value`` exceeds ``ceiling``."""
    if value <= ceiling:
        return []
    return [
        Problem(
            shown,
            where,
            "bounds.efficiency-above-ceiling",
            f"{value:.4g} {unit} is above the ceiling of {ceiling:.4g} {unit} ({basis})",
            "check the units of energy and throughput; a genuine record needs the "
            "ceiling in its kind's module (jouleboard/kinds/) raised, with the run "
            "as evidence",
        )
    ]


def check_duplicates(configs: Sequence[Identified], shown: dict[str, str]) -> list[Problem]:
    """Two files may not describe the same configuration."""
    first: dict[object, Identified] = {}
    problems = []
    for c in sorted(configs, key=lambda c: c.source):
        other = first.setdefault(c.identity, c)
        if other is not c:
            problems.append(
                Problem(
                    shown[c.source],
                    pointer(),
                    "dataset.duplicate-configuration",
                    f"same configuration as {shown[other.source]}",
                    "keep one file per (model, task, GPU, GPU count, precision, serving settings)",
                )
            )
    return problems


class _Bounded(Identified, Protocol):
    @property
    def task(self) -> str: ...

    @property
    def provenance(self) -> Provenance | None: ...


def boundary_of(c: object) -> str:
    """What a record's energy includes (provenance.boundary; "gpu" when not stated)."""
    return str(getattr(getattr(c, "provenance", None), "boundary", "gpu"))


def window_of(c: object) -> str | None:
    """The part of each run a record's energy covers (provenance.window; None: not stated)."""
    window = getattr(getattr(c, "provenance", None), "window", None)
    return None if window is None else str(window)


def check_boundaries(configs: Sequence[_Bounded], shown: dict[str, str]) -> list[Problem]:
    """A task ranks figures of one measurement boundary only: GPU energy and whole-system
    wall energy are not comparable (docs/measurement-format.md, "Measurement boundary")."""
    by_task: dict[str, dict[str, list[str]]] = {}
    for c in sorted(configs, key=lambda c: c.source):
        by_task.setdefault(c.task, {}).setdefault(boundary_of(c), []).append(c.source)
    problems = []
    for task, found in sorted(by_task.items()):
        if len(found) < 2:
            continue
        # The boundary most files have sets the rule; the others are named.
        usual = max(sorted(found), key=lambda b: len(found[b]))
        for boundary, sources in sorted(found.items()):
            if boundary == usual:
                continue
            for source in sources:
                problems.append(
                    Problem(
                        shown[source],
                        pointer("provenance", "boundary"),
                        "dataset.mixed-boundary",
                        f"task {task!r} mixes measurement boundaries: this file measured "
                        f"{boundary!r}, {len(found[usual])} other(s) measured {usual!r} "
                        f"(e.g. {shown[found[usual][0]]})",
                        "energy at the GPUs and at the wall are not comparable: put these "
                        "measurements under a task of their own",
                    )
                )
    return problems
