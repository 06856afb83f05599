"""Typed records: the measurement file format, the registries, and the flat configuration.

Units live in field names (``*_joules``, ``*_watts``, ``*_ms``, ``*_per_sec``,
``*_billions``). The pydantic models describe files as contributors write them
(strict: no coercion, no unknown fields); :class:`Configuration` is the flat,
frozen record that every later stage works with.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from jouleboard import metrics
from jouleboard.markdown_limits import markdown_issues
from jouleboard.text_rules import hidden_characters

SCHEMA_VERSION = 1

# Identifiers end up in paths and URLs, so they are plain ASCII with no path tricks.
# A model id is Hugging Face style: ``org/name``.
MODEL_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$"
GPU_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9-]{0,31}$"
TASK_ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,47}$"

Precision = Literal["bfloat16", "float16", "float32", "fp8", "mxfp4", "nvfp4", "int8", "int4"]
Percentile = Literal["p50", "p90", "p95", "p99"]
PERCENTILES: tuple[Percentile, ...] = ("p50", "p90", "p95", "p99")

def _real_date(value: str) -> str:
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise PydanticCustomError("date_value", "{value} is not a calendar date",
                                  {"value": value}) from None
    return value


def _exactly_int(value: Any) -> Any:
    # Literal[1] matches by equality, so true and 1.0 would pass; an int field must not.
    if type(value) is not int:
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


IsoDate = Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
                    AfterValidator(_real_date)]
PositiveFloat = Annotated[float, Field(gt=0)]
PositiveInt = Annotated[int, Field(gt=0, le=1_000_000)]
ShortText = Annotated[str, Field(max_length=200)]
HTTPS_URL_PATTERN = r"^https://[^\s\"'<>]{1,500}$"


def _visible(value: str) -> str:
    # Bidi controls and zero-width characters let one name pass for another (issue 14).
    hidden = hidden_characters(value)
    if hidden:
        raise PydanticCustomError(
            "hidden_character", "contains {chars}: invisible, or reorders what readers see",
            {"chars": ", ".join(hidden)})
    return value


def _markdown(value: str) -> str:
    # Past these limits the renderer is super-linear (issue 14): refuse before building.
    issues = markdown_issues(value)
    if issues:
        raise PydanticCustomError(issues[0].rule, "{message}",
                                  {"message": str(issues[0]), "hint": issues[0].hint})
    return value


# A name shown to readers (nickname, GPU name, task name...): no hidden characters.
VisibleText = Annotated[str, Field(max_length=200), AfterValidator(_visible)]
LinkUrl = Annotated[str, Field(pattern=HTTPS_URL_PATTERN), AfterValidator(_visible)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


# --- the measurement file -------------------------------------------------------------


class Provenance(_Strict):
    """Where a measurement comes from; shown on the site and kept in downloads."""

    dataset: ShortText = Field(description="Name of the benchmark or data set.")
    version: ShortText = Field(description="Version of the data set.")
    date: IsoDate | Literal["unknown"] = Field(
        description="Data date, YYYY-MM-DD, or \"unknown\" when the source does not say.")
    license: ShortText = Field(description="SPDX license id of the data.")
    source: Annotated[str, Field(max_length=500)] = Field(
        description="Where the data came from (repository, commit, file or run directory)."
    )
    citation: Annotated[str, Field(max_length=500)] = ""


class Serving(_Strict):
    """Serving settings that distinguish configurations of the same model on the same GPUs."""

    max_num_seqs: PositiveInt = Field(description="Batch-size cap of the server.")
    tensor_parallel: PositiveInt = 1
    expert_parallel: PositiveInt = 1
    data_parallel: PositiveInt = 1
    notes: Annotated[str, Field(max_length=200)] = ""


class TokenMetrics(_Strict):
    """Steady-state metrics of an LLM or multimodal-LLM configuration."""

    energy_per_token_joules: PositiveFloat = Field(description="GPU energy per output token, J.")
    avg_power_watts: PositiveFloat = Field(description="Average GPU power over all GPUs, W.")
    output_throughput_tokens_per_sec: PositiveFloat
    energy_per_response_joules: PositiveFloat = Field(
        description="energy_per_token_joules x avg_output_len_tokens, J."
    )
    avg_output_len_tokens: PositiveFloat
    avg_batch_size: PositiveFloat | None = Field(
        default=None, description="Average running batch in steady state; absent when the "
        "run has no prometheus.json (the utilisation rule could not be checked).")
    median_itl_ms: PositiveFloat = Field(description="Median inter-token latency, ms.")
    p90_itl_ms: PositiveFloat
    p95_itl_ms: PositiveFloat
    p99_itl_ms: PositiveFloat


class Histogram(_Strict):
    """Output-length distribution: ``len(bin_edges_tokens) == len(counts) + 1``."""

    bin_edges_tokens: Annotated[list[float], Field(min_length=2, max_length=1001)]
    counts: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1, max_length=1000)]


class Measurement(_Strict):
    """One measured configuration of a model on a task (one JSON file)."""

    schema_version: Annotated[Literal[1], BeforeValidator(_exactly_int)] = Field(
        description="Format version; bump on breaking changes.")
    kind: Literal["llm", "mllm"] = Field(description="Task family: text LLM or multimodal LLM.")
    task: str = Field(pattern=TASK_ID_PATTERN)
    model_id: str = Field(pattern=MODEL_ID_PATTERN)
    gpu_model: str = Field(pattern=GPU_ID_PATTERN)
    num_gpus: Annotated[int, Field(gt=0, le=1024)]
    weight_precision: Precision
    serving: Serving
    repeat: Annotated[int, Field(ge=1, le=100)] = Field(
        default=1,
        description="1 for the first published measurement of these settings; 2, 3, ... for "
        "repeat runs of the same configuration published separately.")
    metrics: TokenMetrics
    output_length_distribution: Histogram | None = None
    provenance: Provenance


class DiffusionServing(_Strict):
    """Serving settings of a diffusion configuration."""

    batch_size: PositiveInt
    ulysses_degree: PositiveInt = 1
    ring_degree: PositiveInt = 1


class DiffusionOutput(_Strict):
    """What one output is: an image, or a video of ``num_frames`` at ``fps``."""

    width_px: PositiveInt
    height_px: PositiveInt
    inference_steps: PositiveInt
    num_frames: PositiveInt | None = None
    fps: PositiveFloat | None = None


class DiffusionMetrics(_Strict):
    """Metrics of a text-to-image or text-to-video configuration; one output is one image or
    one video (the task's output_unit)."""

    energy_per_output_joules: PositiveFloat = Field(description="GPU energy per image/video, J.")
    avg_power_watts: PositiveFloat
    throughput_outputs_per_sec: PositiveFloat
    batch_latency_s: PositiveFloat = Field(description="Time to generate one batch, s.")


class DiffusionMeasurement(_Strict):
    """One measured diffusion configuration (one JSON file, ``kind: diffusion``)."""

    schema_version: Annotated[Literal[1], BeforeValidator(_exactly_int)]
    kind: Literal["diffusion"]
    task: str = Field(pattern=TASK_ID_PATTERN)
    model_id: str = Field(pattern=MODEL_ID_PATTERN)
    gpu_model: str = Field(pattern=GPU_ID_PATTERN)
    num_gpus: Annotated[int, Field(gt=0, le=1024)]
    weight_precision: Precision
    serving: DiffusionServing
    output: DiffusionOutput
    repeat: Annotated[int, Field(ge=1, le=100)] = 1
    metrics: DiffusionMetrics
    provenance: Provenance


# --- registries ------------------------------------------------------------------------


class ModelLink(_Strict):
    label: VisibleText
    url: LinkUrl


class ModelInfo(_Strict):
    """A model's facts (data/models.yaml, keyed by model id)."""

    nickname: VisibleText
    builder: VisibleText
    total_params_billions: PositiveFloat
    active_params_billions: PositiveFloat
    architecture: VisibleText = ""
    weight_precision: Precision
    links: list[ModelLink] = []
    description_md: Annotated[str, Field(max_length=20_000), AfterValidator(_markdown)] = ""


class GpuInfo(_Strict):
    """An accelerator (data/gpus.yaml, keyed by GPU id as measurements name it)."""

    name: VisibleText
    vendor: VisibleText
    generation: VisibleText
    memory_gb: PositiveFloat
    board_power_watts: PositiveFloat = Field(description="Board power limit of one GPU, W.")


class DeadlineSetting(_Strict):
    percentile: Percentile = "p50"
    ms: PositiveFloat


class TaskInfo(_Strict):
    """A task (data/tasks.yaml, keyed by task id)."""

    name: VisibleText
    benchmark: VisibleText
    kind: str = Field(pattern=r"^[a-z][a-z0-9-]{0,31}$", description="Task kind: llm, mllm "
                      "or diffusion, or a kind registered with jouleboard.kinds.register.")
    description_md: Annotated[str, Field(max_length=5_000), AfterValidator(_markdown)] = ""
    output_unit: VisibleText = "token"
    efficiency_scale_joules: Literal[1, 1000, 1_000_000] = Field(
        default=1, description="Outputs per J (1), per kJ (1000) or per MJ (1e6) on the site.")
    response_unit: VisibleText = "response"
    default_deadline: DeadlineSetting
    preset_deadlines_ms: list[PositiveFloat] = []


SITE_URL_PATTERN = r"^(https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)?$"  # an origin, or empty
NAV_PAGES = ("leaderboard", "models", "gpus", "compare", "downloads", "changelog", "about")


class NavLink(_Strict):
    """An entry of site.yaml's ``nav``: a built-in page or an https URL."""

    label: Annotated[str, Field(min_length=1, max_length=60)]
    target: str = Field(pattern=rf"^({'|'.join(NAV_PAGES)}|https://[^\s\"'<>]{{1,500}})$",
                        description="A built-in page (" + ", ".join(NAV_PAGES) + ") or an "
                        "https:// URL.")


class SiteSettings(_Strict):
    """data/site.yaml."""

    title: VisibleText
    tagline: Annotated[str, Field(max_length=500)] = ""
    top_n: Annotated[int, Field(gt=0, le=1000)] = 7
    default_gpus: list[str] = Field(min_length=1)
    data_version: ShortText
    data_date: IsoDate
    base_url: str = Field(default="/", pattern=r"^/([A-Za-z0-9._~-]+/)*$")
    site_url: str = Field(default="", pattern=SITE_URL_PATTERN,
                          description="Origin the site is published at, e.g. "
                          "https://example.org; makes embed codes, citations and Open Graph "
                          "links absolute.")
    attribution_md: Annotated[str, Field(max_length=5_000), AfterValidator(_markdown)] = ""
    # Theme (all optional): a logo file of the site folder's templates/assets/, an accent
    # colour, and the main navigation (default: every built-in page).
    logo: str = Field(default="", pattern=r"^([A-Za-z0-9_-]{1,80}\.(svg|png|jpg|jpeg|webp))?$",
                      description="File name in templates/assets/ shown before the title.")
    accent_color: str = Field(default="", pattern=r"^(#[0-9a-fA-F]{6})?$",
                              description="Accent colour as #rrggbb.")
    nav: list[NavLink] = Field(default_factory=list, max_length=20,
                               description="Main navigation, in order (default: all pages).")


class QualityScore(_Strict):
    """A published accuracy figure of a model on a task's benchmark, with its source."""

    model_id: str = Field(pattern=MODEL_ID_PATTERN)
    accuracy_percent: Annotated[float, Field(gt=0, le=100)]
    setting: Annotated[str, Field(min_length=1, max_length=500)]
    source_url: LinkUrl
    source_detail: Annotated[str, Field(min_length=1, max_length=1000)]
    confidence: Literal["high", "medium", "low"]
    matches_energy_run: bool = Field(
        default=True, description="The score was measured in the setting of the energy run "
        "(e.g. the same reasoning mode).")


class QualityFile(_Strict):
    """data/quality/<task>.yaml."""

    task: str = Field(pattern=TASK_ID_PATTERN)
    benchmark: ShortText
    note_md: Annotated[str, Field(max_length=5_000), AfterValidator(_markdown)] = ""
    scores: list[QualityScore]


class Release(_Strict):
    """A published data version (data/releases.yaml, newest first)."""

    version: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")]
    date: IsoDate
    notes_md: Annotated[str, Field(max_length=10_000), AfterValidator(_markdown)] = ""
    ref: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$")] | None = Field(
        default=None, description="git ref holding data/ as released; the current release "
        "(the first) is the working data and needs none.")


class Releases(_Strict):
    releases: Annotated[list[Release], Field(min_length=1)]


# --- the flat record everything downstream uses -----------------------------------------


@dataclass(frozen=True, slots=True)
class Configuration:
    """One validated configuration, flat. Derived metrics are properties (see metrics.py)."""

    source: str  # path of the file it came from, relative to the data folder
    task: str
    model_id: str
    gpu_model: str
    num_gpus: int
    weight_precision: str
    max_num_seqs: int
    tensor_parallel: int
    expert_parallel: int
    data_parallel: int
    repeat: int
    energy_per_token_joules: float
    avg_power_watts: float
    output_throughput_tokens_per_sec: float
    energy_per_response_joules: float
    avg_output_len_tokens: float
    avg_batch_size: float | None  # None: no prometheus.json
    median_itl_ms: float
    p90_itl_ms: float
    p95_itl_ms: float
    p99_itl_ms: float
    output_length_bin_edges_tokens: tuple[float, ...] = ()
    output_length_counts: tuple[int, ...] = ()

    @property
    def tokens_per_joule(self) -> float:
        return metrics.tokens_per_joule(self.energy_per_token_joules)

    @property
    def energy_per_output_joules(self) -> float:
        """Energy per unit of output (here a token), J: what rankings minimise by default."""
        return self.energy_per_token_joules

    def latency_ms(self, percentile: Percentile) -> float:
        """The latency a deadline applies to: inter-token latency at ``percentile``."""
        return self.itl_ms(percentile)

    def tie_break(self) -> tuple[int | str, ...]:
        """The last keys of the ranking order (see rank.py)."""
        return (self.max_num_seqs, self.tensor_parallel, self.expert_parallel,
                self.data_parallel, self.weight_precision, self.repeat, self.source)

    def itl_ms(self, percentile: Percentile) -> float:
        """Inter-token latency at ``percentile`` (p50 is the median), ms."""
        if percentile == "p50":
            return self.median_itl_ms
        value: float = getattr(self, f"{percentile}_itl_ms")
        return value

    @property
    def identity(self) -> tuple[str, str, str, int, str, int, int, int, int, int]:
        """What makes two measurements the same configuration (duplicates are rejected)."""
        return (
            self.task,
            self.model_id,
            self.gpu_model,
            self.num_gpus,
            self.weight_precision,
            self.max_num_seqs,
            self.tensor_parallel,
            self.expert_parallel,
            self.data_parallel,
            self.repeat,
        )

    @classmethod
    def from_measurement(cls, m: Measurement, source: str) -> Configuration:
        s, x, h = m.serving, m.metrics, m.output_length_distribution
        return cls(
            source=source,
            task=m.task,
            model_id=m.model_id,
            gpu_model=m.gpu_model,
            num_gpus=m.num_gpus,
            weight_precision=m.weight_precision,
            max_num_seqs=s.max_num_seqs,
            tensor_parallel=s.tensor_parallel,
            expert_parallel=s.expert_parallel,
            data_parallel=s.data_parallel,
            repeat=m.repeat,
            energy_per_token_joules=x.energy_per_token_joules,
            avg_power_watts=x.avg_power_watts,
            output_throughput_tokens_per_sec=x.output_throughput_tokens_per_sec,
            energy_per_response_joules=x.energy_per_response_joules,
            avg_output_len_tokens=x.avg_output_len_tokens,
            avg_batch_size=x.avg_batch_size,
            median_itl_ms=x.median_itl_ms,
            p90_itl_ms=x.p90_itl_ms,
            p95_itl_ms=x.p95_itl_ms,
            p99_itl_ms=x.p99_itl_ms,
            output_length_bin_edges_tokens=tuple(h.bin_edges_tokens) if h else (),
            output_length_counts=tuple(h.counts) if h else (),
        )


@dataclass(frozen=True, slots=True)
class DiffusionConfiguration:
    """One validated text-to-image or text-to-video configuration, flat."""

    source: str
    task: str
    model_id: str
    gpu_model: str
    num_gpus: int
    weight_precision: str
    batch_size: int
    ulysses_degree: int
    ring_degree: int
    repeat: int
    energy_per_output_joules: float
    avg_power_watts: float
    throughput_outputs_per_sec: float
    batch_latency_s: float
    width_px: int
    height_px: int
    inference_steps: int
    num_frames: int | None = None
    fps: float | None = None

    @property
    def energy_per_response_joules(self) -> float:
        """One response is one image or video."""
        return self.energy_per_output_joules

    def latency_ms(self, percentile: Percentile) -> float:
        """Batch latency in ms (one value: diffusion runs report no percentiles)."""
        return self.batch_latency_s * 1000.0

    def tie_break(self) -> tuple[int | str, ...]:
        return (self.batch_size, self.ulysses_degree, self.ring_degree, self.inference_steps,
                self.width_px, self.height_px, self.num_frames or 0, self.weight_precision,
                self.repeat, self.source)

    @property
    def identity(self) -> tuple[object, ...]:
        return (self.task, self.model_id, self.gpu_model, self.num_gpus, self.weight_precision,
                self.batch_size, self.ulysses_degree, self.ring_degree, self.inference_steps,
                self.width_px, self.height_px, self.num_frames or 0, self.repeat)

    @classmethod
    def from_measurement(cls, m: DiffusionMeasurement, source: str) -> DiffusionConfiguration:
        s, o, x = m.serving, m.output, m.metrics
        return cls(source=source, task=m.task, model_id=m.model_id, gpu_model=m.gpu_model,
                   num_gpus=m.num_gpus, weight_precision=m.weight_precision,
                   batch_size=s.batch_size, ulysses_degree=s.ulysses_degree,
                   ring_degree=s.ring_degree, repeat=m.repeat,
                   energy_per_output_joules=x.energy_per_output_joules,
                   avg_power_watts=x.avg_power_watts,
                   throughput_outputs_per_sec=x.throughput_outputs_per_sec,
                   batch_latency_s=x.batch_latency_s, width_px=o.width_px,
                   height_px=o.height_px, inference_steps=o.inference_steps,
                   num_frames=o.num_frames, fps=o.fps)


Record = Configuration | DiffusionConfiguration
