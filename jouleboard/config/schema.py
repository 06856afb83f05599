"""Typed records shared by every kind of task: identifiers, units, provenance, and the
registries (site, models, GPUs, tasks, quality, releases).

Units live in field names (``*_joules``, ``*_watts``, ``*_ms``, ``*_per_sec``,
``*_billions``). The pydantic models describe files as contributors write them
(strict: no coercion, no unknown fields). Each kind's measurement file model and flat,
frozen record live with the kind in jouleboard/kinds/.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from typing import Annotated, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

from jouleboard.config.fields import (
    BASE_URL_PATTERN,
    KIND_ENTRY_PATTERN,
    MAX_CONFIDENCE,
    SITE_URL_PATTERN,
)

# Re-exported: kinds and the API name them with the rest of the schema.
from jouleboard.config.fields import PERCENTILES as PERCENTILES
from jouleboard.config.fields import Percentile as Percentile
from jouleboard.core.markdown_limits import markdown_issues
from jouleboard.core.text_rules import hidden_characters

SCHEMA_VERSION = 1

# Identifiers end up in paths and URLs, so they are plain ASCII with no path tricks.
# A model id is Hugging Face style: ``org/name``.
MODEL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$"
GPU_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9-]{0,31}$"
TASK_ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,47}$"

Precision = Literal["bfloat16", "float16", "float32", "fp8", "mxfp4", "nvfp4", "int8", "int4"]


def _real_date(value: str) -> str:
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise PydanticCustomError(
            "date_value", "{value} is not a calendar date", {"value": value}
        ) from None
    return value


def exactly_int(value: object) -> int:
    """A "before" validator: ``value`` is the input as given, of any type."""
    # Literal[1] matches by equality, so true and 1.0 would pass; an int field must not.
    if type(value) is not int:
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


# Format version of a measurement file; bump on breaking changes (exactly the integer 1).
SchemaVersion = Annotated[Literal[1], BeforeValidator(exactly_int)]
IsoDate = Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"), AfterValidator(_real_date)]
PositiveFloat = Annotated[float, Field(gt=0)]
PositiveInt = Annotated[int, Field(gt=0, le=1_000_000)]
ShortText = Annotated[str, Field(max_length=200)]
# No escaped quote: the pattern is also an ECMA-262 regex in the published JSON Schemas.
HTTPS_URL_PATTERN = "^https://[^\\s\"'<>]{1,500}$"


def _hidden_text(value: object, multiline: bool) -> tuple[str, list[str]] | None:
    """Where in ``value`` (a string, or a list or mapping of them) a hidden character is,
    and which: ``("", [...])`` for the string itself, ``("item 2", [...])`` inside a list."""
    if isinstance(value, str):
        hidden = hidden_characters(value, multiline)
        return ("", hidden) if hidden else None
    if isinstance(value, (list, tuple)):
        items: Iterable[tuple[object, object]] = enumerate(value)
    elif isinstance(value, dict):
        items = [(repr(k), k) for k in value] + [(repr(k), v) for k, v in value.items()]
    else:
        return None  # numbers, and nested records (which check their own fields)
    for where, item in items:
        if not isinstance(item, str | list | tuple | dict):
            continue  # a number (a measurement's lists hold dozens): nothing to look at
        found = _hidden_text(item, multiline)
        if found:
            return f"item {where}" + (f", {found[0]}" if found[0] else ""), found[1]
    return None


def _markdown(value: str) -> str:
    # Past these limits the renderer is super-linear (issue 14): refuse before building.
    issues = markdown_issues(value)
    if issues:
        raise PydanticCustomError(
            issues[0].rule,
            "{message}",
            {"message": f"line {issues[0].line}: {issues[0].message}", "hint": issues[0].hint},
        )
    return value


# A name shown to readers (nickname, GPU name, task name...); like every text field it may
# hold no hidden character (Strict below).
VisibleText = Annotated[str, Field(max_length=200)]
LinkUrl = Annotated[str, Field(pattern=HTTPS_URL_PATTERN)]


_Field = TypeVar("_Field")  # a field's value, returned by its validator as it is


class Strict(BaseModel):
    """A record as contributors write it: strict types, no unknown fields, and one text rule
    for every string field, whatever its type says (so a new field cannot miss it): no
    bidi, zero-width, control or private-use character (issues 14 and 25); fields named
    ``*_md`` are markdown and may hold line breaks and tabs."""

    # defer_build: a model's validator is made when it first validates, not when its class
    # is defined (~0.05 s of every command's start for the models a command never uses).
    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True
    )

    @field_validator("*", mode="after")
    @classmethod
    def _no_hidden_characters(cls, value: _Field, info: ValidationInfo) -> _Field:
        found = _hidden_text(value, multiline=str(info.field_name).endswith("_md"))
        if found:
            where, hidden = found
            raise PydanticCustomError(
                "hidden_character",
                "{where}contains {chars}: invisible, or reorders what readers see",
                {"where": f"{where} " if where else "", "chars": ", ".join(hidden)},
            )
        return value


# --- parts of every measurement file ----------------------------------------------------


# What an energy figure includes (docs/measurement-format.md, "Measurement boundary"): the
# accelerators' own energy counters, or the whole system at the wall (power supplies, host
# CPUs, memory, fans and the accelerators). Figures of two boundaries are never ranked together.
Boundary = Literal["gpu", "system-ac"]
BOUNDARIES: tuple[Boundary, ...] = ("gpu", "system-ac")
# How the ML.ENERGY Benchmark and its raw runs measure: Zeus reads the GPUs' NVML counters.
GPU_COUNTERS = "NVML energy counters (Zeus)"
# The part of a run its energy covers (docs/measurement-format.md, "Energy window"): only
# its steady state, when the server is full (the ML.ENERGY Benchmark), or the benchmark's
# whole measuring phase, ramp-up, drain and idle moments included (AIPerf, benchmark_serving).
Window = Literal["steady-state", "whole-run"]


# Values that say nothing, which pages leave out: a licence of none (SPDX's "no assertion"),
# a version the importers write when the source states none ("AIPerf runs unknown").
NO_LICENSE = ("", "NOASSERTION", "NONE")
NO_VERSION = ("", "unknown")


def data_set_name(name: str, version: str) -> str:
    """A data set by name and version (``AIPerf runs``, not ``AIPerf runs unknown``; ``The
    ML.ENERGY Benchmark v3``, whose name says its version already)."""
    return name if version in NO_VERSION or name.endswith(f" {version}") else f"{name} {version}"


def known_details(date: str, licence: str) -> str:
    """A data set's date and licence, those it states: ``2026-02-16, Apache-2.0``."""
    known = (date != "unknown" and date, licence not in NO_LICENSE and licence)
    return ", ".join(k for k in known if k)


class Provenance(Strict):
    """Where a measurement comes from and what its energy includes; shown on model pages,
    the citation once per data set."""

    dataset: ShortText = Field(description="Name of the benchmark or data set.")
    version: ShortText = Field(description="Version of the data set.")
    date: IsoDate | Literal["unknown"] = Field(
        description='Data date, YYYY-MM-DD, or "unknown" when the source does not say.'
    )
    license: ShortText = Field(description="SPDX license id of the data.")
    source: Annotated[str, Field(max_length=500)] = Field(
        description="Where the data came from (repository, commit, file or run directory)."
    )
    citation: Annotated[str, Field(max_length=500)] = ""
    boundary: Boundary = Field(
        default="gpu",
        description='What the energy figures include: "gpu" (the accelerators\' energy '
        'counters: NVML, as the ML.ENERGY Benchmark reads them) or "system-ac" (the whole '
        "system at the wall, measured by an external power analyzer, as MLPerf does). "
        'Files written before this field existed measured "gpu".',
    )
    instrument: ShortText = Field(
        default="",
        description='How the energy was measured, e.g. "NVML energy counters (Zeus)" or '
        '"SPEC PTDaemon power analyzer".',
    )
    window: Window | None = Field(
        default=None,
        description='The part of each run the energy covers: "steady-state" (only while the '
        "server is full, start-up and drain left out, as the ML.ENERGY Benchmark measures) or "
        '"whole-run" (the benchmark\'s whole measuring phase, ramp-up, drain and idle moments '
        "included, as AIPerf and TensorRT-LLM's benchmark_serving measure). Absent: not stated "
        "(files written before this field existed); the site then claims neither.",
    )


# --- registries ------------------------------------------------------------------------


class ModelLink(Strict):
    label: VisibleText
    url: LinkUrl


class ModelInfo(Strict):
    """A model's facts (data/models.yaml, keyed by model id)."""

    nickname: VisibleText
    builder: VisibleText
    total_params_billions: PositiveFloat
    active_params_billions: PositiveFloat
    architecture: VisibleText = ""
    weight_precision: Precision
    links: list[ModelLink] = []
    description_md: Annotated[str, Field(max_length=20_000), AfterValidator(_markdown)] = ""


class GpuInfo(Strict):
    """An accelerator (data/gpus.yaml, keyed by GPU id as measurements name it)."""

    name: VisibleText
    vendor: VisibleText
    generation: VisibleText
    memory_gb: PositiveFloat
    board_power_watts: PositiveFloat = Field(description="Board power limit of one GPU, W.")


class DeadlineSetting(Strict):
    percentile: Percentile = "p50"
    ms: PositiveFloat


class TaskInfo(Strict):
    """A task (data/tasks.yaml, keyed by task id)."""

    name: VisibleText
    benchmark: VisibleText
    kind: str = Field(
        pattern=r"^[a-z][a-z0-9-]{0,31}$",
        description="Task kind: one a "
        "registered jouleboard.kinds kind serves (docs/measurement-format.md).",
    )
    description_md: Annotated[str, Field(max_length=5_000), AfterValidator(_markdown)] = ""
    output_unit: VisibleText = "token"
    efficiency_scale_joules: Literal[1, 1000, 1_000_000] = Field(
        default=1, description="Outputs per J (1), per kJ (1000) or per MJ (1e6) on the site."
    )
    response_unit: VisibleText = "response"
    default_deadline: DeadlineSetting
    preset_deadlines_ms: list[PositiveFloat] = []


# A URL path: /, or /a/b/ (site.yaml, --base-url); no segment of dots only, since a browser
# resolves /../ and /./ away and the links would leave the path the site is served under.
NAV_PAGES = (
    "leaderboard",
    "models",
    "gpus",
    "compare",
    "mlperf",
    "downloads",
    "changelog",
    "about",
)


class NavLink(Strict):
    """An entry of site.yaml's ``nav``: a built-in page or an https URL."""

    label: Annotated[str, Field(min_length=1, max_length=60)]
    target: str = Field(
        pattern=f"^({'|'.join(NAV_PAGES)}|[a-z][a-z0-9-]{{0,39}}|{HTTPS_URL_PATTERN[1:-1]})$",
        description="A built-in page (" + ", ".join(NAV_PAGES) + "), the name of a page of "
        "the site's own (content/<name>.md), or an https:// URL.",
    )


class Uncertainty(Strict):
    """site.yaml ``uncertainty``: how precise one run's energy per output is
    (jouleboard/rank/noise.py; docs/measurement-format.md, "Repeat runs and measurement
    noise")."""

    relative: Annotated[float, Field(ge=0, le=1)] | None = Field(
        default=None,
        description="Relative standard uncertainty of one run's energy per output (0.05 = 5%), "
        "on the log scale; leave out to estimate it from the data's repeat runs.",
    )
    confidence: Annotated[float, Field(ge=0.5, le=MAX_CONFIDENCE)] = Field(
        default=0.95,
        description="Confidence level of intervals and rank ranges (0.95 = 95%), from 0.5 to "
        f"{MAX_CONFIDENCE}.",
    )
    basis: Annotated[str, Field(max_length=500)] = Field(
        default="",
        description="Where a declared relative uncertainty comes from (shown on the glossary "
        "page).",
    )
    degrees_of_freedom: Annotated[float, Field(gt=0, le=1_000_000)] | None = Field(
        default=None,
        description="Degrees of freedom of a declared relative uncertainty that was itself "
        "estimated (for repeat runs: the number of runs minus the number of configurations "
        "repeated): intervals and rank ranges then use Student's t quantile. Leave out to take "
        "the declared figure as exact (the normal quantile).",
    )

    @field_validator("basis", "degrees_of_freedom")
    @classmethod
    def _with_relative(cls, value: object, info: ValidationInfo) -> object:
        if value and info.data.get("relative") is None:
            raise PydanticCustomError(
                "needs_relative",
                "{field} describes a declared relative uncertainty; set relative too, or "
                "remove {field}",
                {"field": info.field_name},
            )
        return value


class SiteSettings(Strict):
    """data/site.yaml."""

    title: VisibleText
    tagline: Annotated[str, Field(max_length=500)] = ""
    top_n: Annotated[int, Field(gt=0, le=1000)] = 7
    # Rows a task or GPU page's tables hold on its first view; the rest load on demand and
    # sit on the page's full view (tasks/<task>/all/, gpus/<gpu>/all/), so pages stay small
    # at any number of models.
    table_rows: Annotated[
        int,
        Field(
            gt=0,
            le=10_000,
            description=(
                "Rows each table of a task or GPU page shows before 'Show all'; every row is on "
                "the page's full view."
            ),
        ),
    ] = 25
    default_gpus: list[str] = Field(min_length=1)
    data_version: ShortText
    data_date: IsoDate
    base_url: str = Field(default="/", pattern=BASE_URL_PATTERN)
    site_url: str = Field(
        default="",
        pattern=SITE_URL_PATTERN,
        description="Origin the site is published at, e.g. "
        "https://example.org; makes embed codes, citations, feeds, Open Graph "
        "links and the sitemap absolute.",
    )
    attribution_md: Annotated[str, Field(max_length=5_000), AfterValidator(_markdown)] = ""
    # Theme (all optional): a logo file of the site folder's templates/assets/, an accent
    # colour, and the main navigation (default: every built-in page).
    logo: str = Field(
        default="",
        pattern=r"^([A-Za-z0-9_-]{1,80}\.(svg|png|jpg|jpeg|webp))?$",
        description="File name in templates/assets/ shown before the title.",
    )
    accent_color: str = Field(
        default="", pattern=r"^(#[0-9a-fA-F]{6})?$", description="Accent colour as #rrggbb."
    )
    nav: list[NavLink] = Field(
        default_factory=list,
        max_length=20,
        description="Main navigation, in order (default: all pages).",
    )
    uncertainty: Uncertainty = Field(
        default_factory=Uncertainty,
        description="Measurement noise: a declared per-run relative uncertainty, or none to "
        "estimate it from repeat runs; the confidence of rank ranges.",
    )
    kinds: list[Annotated[str, Field(pattern=KIND_ENTRY_PATTERN)]] = Field(
        default_factory=list,
        max_length=20,
        description="The site's own kinds of task: Python files of the data folder "
        "(kinds/my_kind.py) or import paths (package.module:KindClass); see "
        "docs/architecture.md.",
    )


class QualityScore(Strict):
    """A published accuracy figure of a model on a task's benchmark, with its source."""

    model_id: str = Field(pattern=MODEL_ID_PATTERN)
    accuracy_percent: Annotated[float, Field(gt=0, le=100)]
    setting: Annotated[str, Field(min_length=1, max_length=500)]
    source_url: LinkUrl
    source_detail: Annotated[str, Field(min_length=1, max_length=1000)]
    confidence: Literal["high", "medium", "low"]
    matches_energy_run: bool = Field(
        default=True,
        description="The score was measured in the setting of the energy run "
        "(e.g. the same reasoning mode).",
    )


class QualityFile(Strict):
    """data/quality/<task>.yaml."""

    task: str = Field(pattern=TASK_ID_PATTERN)
    benchmark: ShortText
    note_md: Annotated[str, Field(max_length=5_000), AfterValidator(_markdown)] = ""
    scores: list[QualityScore]


class Release(Strict):
    """A published data version (data/releases.yaml, newest first)."""

    version: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")]
    date: IsoDate
    notes_md: Annotated[str, Field(max_length=10_000), AfterValidator(_markdown)] = ""
    ref: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")] | None = Field(
        default=None,
        description="git ref holding data/ as released; the current release "
        "(the first) is the working data and needs none.",
    )


class Releases(Strict):
    releases: Annotated[list[Release], Field(min_length=1)]
