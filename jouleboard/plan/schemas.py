"""The published JSON Schemas: of a measurement file, of site.yaml and every registry, and
of an MLPerf result file. Each is made from the pydantic models that validate the file, so
it cannot drift from them; committed in schema/ (tests/test_json_schemas.py keeps them in
step), carried by the wheel, printed by ``jouleboard schema NAME``, and named in the hint of
a schema problem of its file.

A schema states a file's shape: fields, types, patterns, ranges. What needs more than one
file or more than one field (a model id known to models.yaml, power under the GPU's board
power, a real calendar date) is checked by ``jouleboard validate`` alone.

A measurement file's fields depend on its ``kind``: one ``if``/``then`` per kind (never a
``oneOf``, whose failure standard validators report from whichever branch fails last, so
that a typo in a language-model file read as "'output' is a required property", a diffusion
field), so a validator reports the errors of the file's own kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from jouleboard.config.schema import (
    GPU_ID_PATTERN,
    MODEL_ID_PATTERN,
    TASK_ID_PATTERN,
    GpuInfo,
    ModelInfo,
    QualityFile,
    Releases,
    SiteSettings,
    TaskInfo,
)
from jouleboard.core.jsonio import dumps_canonical
from jouleboard.kinds import Kinds, registered
from jouleboard.kinds.mlperf import Result

DIALECT = "https://json-schema.org/draft/2020-12/schema"
Schema = dict[str, Any]


def measurement_schema(kinds: Kinds) -> Schema:
    """A measurement file of any of ``kinds``: ``kind`` names one, and that kind's fields
    apply (``if`` its value, ``then`` its model)."""
    models = kinds.all()
    refs, top = models_json_schema(
        [(k.measurement, "validation") for k in models], ref_template="#/$defs/{model}"
    )
    branches, names = [], []
    for kind in models:
        values = [name for name, k in kinds.by_task_kind.items() if k is kind]
        names += values
        branches.append(
            {
                "if": {"properties": {"kind": {"enum": values}}, "required": ["kind"]},
                "then": refs[(kind.measurement, "validation")],
            }
        )
    return {
        "$schema": DIALECT,
        "title": "jouleboard measurement (one configuration)",
        "description": "One measured configuration: its kind of task (kind) says which "
        "fields it has. docs/measurement-format.md describes every field and rule.",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"enum": names, "description": "The kind of task measured."}},
        "allOf": branches,
        "$defs": top.get("$defs", {}),
    }


def _model(model: type[BaseModel], title: str) -> Callable[[], Schema]:
    def schema() -> Schema:
        return {"$schema": DIALECT, **model.model_json_schema(), "title": title}

    return schema


def _table(model: type[BaseModel], id_pattern: str, title: str, what: str) -> Callable[[], Schema]:
    """A registry that maps each id (``id_pattern``: every key must match) to one ``model``."""

    def schema() -> Schema:
        refs, top = models_json_schema([(model, "validation")], ref_template="#/$defs/{model}")
        return {
            "$schema": DIALECT,
            "title": title,
            "description": f"Each {what} id, mapped to its facts.",
            "type": "object",
            "propertyNames": {"pattern": id_pattern},
            "additionalProperties": refs[(model, "validation")],
            "$defs": top.get("$defs", {}),
        }

    return schema


# name -> (file name in schema/, what it describes, the schema)
SCHEMAS: dict[str, tuple[str, str, Callable[[], Schema]]] = {
    "measurement": (
        "measurement.schema.json",
        "a measurement file (data/measurements/...)",
        lambda: measurement_schema(registered()),
    ),
    "site": (
        "site.schema.json",
        "data/site.yaml",
        _model(SiteSettings, "jouleboard site.yaml"),
    ),
    "models": (
        "models.schema.json",
        "data/models.yaml",
        _table(ModelInfo, MODEL_ID_PATTERN, "jouleboard models.yaml", "model"),
    ),
    "gpus": (
        "gpus.schema.json",
        "data/gpus.yaml",
        _table(GpuInfo, GPU_ID_PATTERN, "jouleboard gpus.yaml", "GPU"),
    ),
    "tasks": (
        "tasks.schema.json",
        "data/tasks.yaml",
        _table(TaskInfo, TASK_ID_PATTERN, "jouleboard tasks.yaml", "task"),
    ),
    "quality": (
        "quality.schema.json",
        "data/quality/<task>.yaml",
        _model(QualityFile, "jouleboard quality/<task>.yaml"),
    ),
    "releases": (
        "releases.schema.json",
        "data/releases.yaml",
        _model(Releases, "jouleboard releases.yaml"),
    ),
    "mlperf-result": (
        "mlperf-result.schema.json",
        "an MLPerf result file (data/mlperf/...)",
        _model(Result, "jouleboard MLPerf Inference result"),
    ),
}


def schema_text(name: str, kinds: Kinds | None = None) -> str:
    """The published JSON Schema ``name`` (a key of :data:`SCHEMAS`) as canonical JSON;
    the measurement schema of ``kinds`` (default: the registered ones)."""
    if name == "measurement" and kinds is not None:
        return dumps_canonical(measurement_schema(kinds), indent=2)
    return dumps_canonical(SCHEMAS[name][2](), indent=2)
