"""Diffusion tasks (text to image, text to video): images per kJ or videos per MJ under a
batch-latency deadline (one latency per configuration: no percentiles)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from pydantic import Field as Schema

from jouleboard.config.registry import Registry
from jouleboard.config.schema import (
    GPU_ID_PATTERN,
    MODEL_ID_PATTERN,
    PERCENTILES,
    TASK_ID_PATTERN,
    Percentile,
    PositiveFloat,
    PositiveInt,
    Precision,
    Provenance,
    SchemaVersion,
    Strict,
    TaskInfo,
)
from jouleboard.core.frozen import quick_pickle
from jouleboard.core.problems import Problem
from jouleboard.core.shapes import Row
from jouleboard.core.urls import deadline_slug
from jouleboard.kinds.base import Latency, Record, TaskKind, field_value, own
from jouleboard.measure import metrics
from jouleboard.measure.checks import (
    CONSISTENCY_TOLERANCE,
    MeasurementHead,
    ceiling_problem,
    inconsistent,
    power_problems,
)
from jouleboard.measure.units import TaskUnits
from jouleboard.rank.tables import GPU, POWER, QUALITY_FIELDS, Column, Field

# Outputs per kJ at most this x one GPU's board power / the output's megapixel-steps, about
# 10x the best measured (7.28e-5 megapixel-steps per J per W, SANA 1.5 1.6B on H100).
MEGAPIXEL_STEPS_PER_JOULE_PER_BOARD_WATT = 7.5e-4


# --- the measurement file, its flat record and its checks ---------------------------------


class DiffusionServing(Strict):
    """Serving settings of a diffusion configuration."""

    batch_size: PositiveInt
    ulysses_degree: PositiveInt = 1
    ring_degree: PositiveInt = 1


class DiffusionOutput(Strict):
    """What one output is: an image, or a video of ``num_frames`` at ``fps``."""

    width_px: PositiveInt
    height_px: PositiveInt
    inference_steps: PositiveInt
    num_frames: PositiveInt | None = None
    fps: PositiveFloat | None = None


class DiffusionMetrics(Strict):
    """Metrics of a text-to-image or text-to-video configuration; one output is one image or
    one video (the task's output_unit)."""

    energy_per_output_joules: PositiveFloat = Schema(description="GPU energy per image/video, J.")
    avg_power_watts: PositiveFloat
    throughput_outputs_per_sec: PositiveFloat
    batch_latency_s: PositiveFloat = Schema(description="Time to generate one batch, s.")


class DiffusionMeasurement(Strict):
    """One measured diffusion configuration (one JSON file, ``kind: diffusion``)."""

    schema_version: SchemaVersion
    kind: Literal["diffusion"]
    task: str = Schema(pattern=TASK_ID_PATTERN)
    model_id: str = Schema(pattern=MODEL_ID_PATTERN)
    gpu_model: str = Schema(pattern=GPU_ID_PATTERN)
    num_gpus: Annotated[int, Schema(gt=0, le=1024)]
    weight_precision: Precision
    serving: DiffusionServing
    output: DiffusionOutput
    repeat: Annotated[int, Schema(ge=1, le=100)] = 1
    metrics: DiffusionMetrics
    provenance: Provenance


@quick_pickle
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
    provenance: Provenance | None = None  # where the measurement comes from (model pages)
    # Repeat runs folded into this configuration (loading/repeats.py): how many, and the
    # files behind it in repeat order (empty for a single run).
    runs: int = 1
    run_sources: tuple[str, ...] = ()

    @property
    def energy_per_response_joules(self) -> float:
        """One response is one image or video."""
        return self.energy_per_output_joules

    def latency_ms(self, percentile: Percentile) -> float:
        """Batch latency in ms (one value: diffusion runs report no percentiles)."""
        return self.batch_latency_s * 1000.0

    def tie_break(self) -> tuple[int | str, ...]:
        return (
            self.batch_size,
            self.ulysses_degree,
            self.ring_degree,
            self.inference_steps,
            self.width_px,
            self.height_px,
            self.num_frames or 0,
            self.weight_precision,
            self.repeat,
            self.source,
        )

    @property
    def identity(self) -> tuple[object, ...]:
        return (
            self.task,
            self.model_id,
            self.gpu_model,
            self.num_gpus,
            self.weight_precision,
            self.batch_size,
            self.ulysses_degree,
            self.ring_degree,
            self.inference_steps,
            self.width_px,
            self.height_px,
            self.num_frames or 0,
            self.repeat,
        )

    @classmethod
    def from_measurement(cls, m: DiffusionMeasurement, source: str) -> DiffusionConfiguration:
        s, o, x = m.serving, m.output, m.metrics
        return cls(
            source=source,
            task=m.task,
            model_id=m.model_id,
            gpu_model=m.gpu_model,
            num_gpus=m.num_gpus,
            weight_precision=m.weight_precision,
            batch_size=s.batch_size,
            ulysses_degree=s.ulysses_degree,
            ring_degree=s.ring_degree,
            repeat=m.repeat,
            energy_per_output_joules=x.energy_per_output_joules,
            avg_power_watts=x.avg_power_watts,
            throughput_outputs_per_sec=x.throughput_outputs_per_sec,
            batch_latency_s=x.batch_latency_s,
            width_px=o.width_px,
            height_px=o.height_px,
            inference_steps=o.inference_steps,
            num_frames=o.num_frames,
            fps=o.fps,
            provenance=m.provenance,
        )


def diffusion_ceiling_problems(
    m: DiffusionMeasurement, shown: str, registry: Registry
) -> list[Problem]:
    """Outputs per kJ at most MEGAPIXEL_STEPS_PER_JOULE_PER_BOARD_WATT x board power / the
    output's megapixel-steps (bigger, longer, more-step outputs cost more)."""
    gpu, task, o = registry.gpus.get(m.gpu_model), registry.tasks.get(m.task), m.output
    if gpu is None:
        return []
    work = metrics.megapixel_steps(o.width_px, o.height_px, o.inference_steps, o.num_frames)
    ceiling = MEGAPIXEL_STEPS_PER_JOULE_PER_BOARD_WATT * gpu.board_power_watts / work * 1000
    unit = f"{task.output_unit if task else 'output'}s/kJ"
    frames = f" x {o.num_frames} frames" if o.num_frames else ""
    return ceiling_problem(
        shown,
        "/metrics/energy_per_output_joules",
        1000 / m.metrics.energy_per_output_joules,
        ceiling,
        unit,
        f"{o.width_px}x{o.height_px} px{frames} x {o.inference_steps} steps = "
        f"{work:g} megapixel-steps at {MEGAPIXEL_STEPS_PER_JOULE_PER_BOARD_WATT:g} per J per W "
        f"of {m.gpu_model}'s {gpu.board_power_watts:g} W board power, 10x the best measured",
    )


def check_diffusion(m: DiffusionMeasurement, shown: str, registry: Registry) -> list[Problem]:
    """Bounds for text-to-image and text-to-video: power, linked metrics, video fields."""
    x, problems = m.metrics, power_problems(m, shown, registry)
    problems += diffusion_ceiling_problems(m, shown, registry)
    implied = x.avg_power_watts / x.throughput_outputs_per_sec
    if inconsistent(x.energy_per_output_joules, implied):
        problems.append(
            Problem(
                shown,
                "/metrics/energy_per_output_joules",
                "bounds.energy-inconsistent",
                f"{x.energy_per_output_joules:g} J per output but avg_power_watts / "
                f"throughput_outputs_per_sec = {implied:g}",
                f"the three must agree within {CONSISTENCY_TOLERANCE:.0%}; check units",
            )
        )
    batch = m.serving.batch_size / x.throughput_outputs_per_sec
    if inconsistent(x.batch_latency_s, batch):
        problems.append(
            Problem(
                shown,
                "/metrics/batch_latency_s",
                "bounds.latency-inconsistent",
                f"batch latency {x.batch_latency_s:g} s but batch_size / throughput = {batch:g} s",
                "batch latency is seconds per batch; check units (ms given as s?)",
            )
        )
    task = registry.tasks.get(m.task)
    if (
        task is not None
        and task.output_unit == "video"
        and (m.output.num_frames is None or m.output.fps is None)
    ):
        problems.append(
            Problem(
                shown,
                "/output",
                "schema.missing-field",
                "a video task needs num_frames and fps",
                "give the frames per video and frames per second",
            )
        )
    return problems


# --- the kind ----------------------------------------------------------------------------


BATCH_LATENCY = Field(
    Column(
        "batch_latency_s", "Batch latency", "s", numeric=True, title="Time to generate one batch."
    )
)
BATCH_SIZE = Field(Column("batch_size", "Batch", numeric=True), "int")
STEPS = Field(Column("inference_steps", "Steps", numeric=True), "int")
RESOLUTION = Field(Column("resolution", "Output"), "text")


def _output_text(c: DiffusionConfiguration) -> str:
    size = f"{c.width_px}×{c.height_px}"
    return f"{size}, {c.num_frames} frames" if c.num_frames else size


class DiffusionKind(TaskKind):
    name = "diffusion"
    task_kinds: ClassVar = {"diffusion": "Image and video generation"}
    measurement = DiffusionMeasurement
    percentiles = ("p50",)
    latency = Latency(
        words=dict.fromkeys(PERCENTILES, "batch latency"),
        short=dict.fromkeys(PERCENTILES, "batch"),
        unit="s",
        scale_ms=1000.0,
        noun="batch latency",
    )
    download_name = "configurations-diffusion"
    latency_fields: ClassVar = {p: ("batch_latency_s", 1000.0) for p in PERCENTILES}
    tie_fields = (
        "batch_size",
        "ulysses_degree",
        "ring_degree",
        "inference_steps",
        "width_px",
        "height_px",
        "num_frames",
        "weight_precision",
        "repeat",
        "source",
    )
    response_field = "energy_per_output_joules"
    interval_columns = ("energy_per_output_joules", "outputs_per_joule")
    rank_columns = (
        "rank",
        "model_id",
        "nickname",
        "gpu_model",
        "num_gpus",
        "weight_precision",
        "batch_size",
        "inference_steps",
        "width_px",
        "height_px",
        "num_frames",
        "fps",
        "ulysses_degree",
        "ring_degree",
        "batch_latency_s",
        "energy_per_output_joules",
        "outputs_per_joule",
        "avg_power_watts",
        "throughput_outputs_per_sec",
    )
    configuration_columns = ("task", *rank_columns[1:], "repeat", "source")

    def check(self, m: MeasurementHead, shown: str, registry: Registry) -> list[Problem]:
        return check_diffusion(own(m, DiffusionMeasurement), shown, registry)

    def to_record(self, m: MeasurementHead, source: str) -> DiffusionConfiguration:
        return DiffusionConfiguration.from_measurement(own(m, DiffusionMeasurement), source)

    def config_label(self, record: Record) -> str:
        c = own(record, DiffusionConfiguration)
        return (
            f"{c.num_gpus}× {c.gpu_model}, batch {c.batch_size}, "
            f"Ulysses {c.ulysses_degree} ring {c.ring_degree}"
        )

    def setting_text(self, record: Record) -> str:
        c = own(record, DiffusionConfiguration)
        return f"batch {c.batch_size}, {c.inference_steps} steps"

    def output_text(self, record: Record) -> str:
        """``1024×1024, 20 steps``; a video: ``720×480, 49 frames at 8 fps, 50 steps``."""
        c = own(record, DiffusionConfiguration)
        frames = f", {c.num_frames} frames at {c.fps:g} fps" if c.num_frames and c.fps else ""
        return f"{c.width_px}×{c.height_px}{frames}, {c.inference_steps} steps"

    def model_sort_key(self, record: Record) -> tuple[int | str, ...]:
        c = own(record, DiffusionConfiguration)
        return (c.gpu_model, c.num_gpus, c.batch_size, c.ulysses_degree, c.ring_degree, c.repeat)

    def chart_latency(self, record: Record, percentile: Percentile) -> float:
        return own(record, DiffusionConfiguration).batch_latency_s

    def download_slug(self, ms: float, percentile: Percentile) -> str:
        return deadline_slug(ms, "batch")

    def _metrics(self, units: TaskUnits) -> tuple[Field, ...]:
        return (
            Field(
                Column(
                    "efficiency",
                    units.efficiency_label,
                    numeric=True,
                    title=f"{units.efficiency_words.capitalize()} of GPU energy. Higher is better.",
                )
            ),
            Field(
                Column(
                    "energy_per_output_scaled",
                    units.energy_scaled_label,
                    numeric=True,
                    title=f"GPU energy per {units.output}. Lower is better.",
                )
            ),
            BATCH_LATENCY,
            BATCH_SIZE,
            STEPS,
            RESOLUTION,
        )

    def ranking_fields(self, task: TaskInfo, quality: bool) -> tuple[Field, ...]:
        efficiency, *rest = self._metrics(self.units(task))
        return (efficiency, GPU, *rest, *(QUALITY_FIELDS if quality else ()))

    def configuration_fields(self, task: TaskInfo) -> tuple[Field, ...]:
        return (
            GPU,
            Field(Column("parallel", "Parallelism"), "text"),
            *self._metrics(self.units(task)),
            POWER,
        )

    def values(self, record: Record, units: TaskUnits) -> Row:
        c = own(record, DiffusionConfiguration)
        return {
            "weight_precision": c.weight_precision,
            "parallel": f"Ulysses {c.ulysses_degree}, ring {c.ring_degree}",
            "efficiency": units.efficiency(c.energy_per_output_joules),
            "energy_per_output_scaled": units.energy_scaled(c.energy_per_output_joules),
            "resolution": _output_text(c),
            **{
                k: field_value(c, k)
                for k in (
                    "energy_per_output_joules",
                    "batch_latency_s",
                    "batch_size",
                    "inference_steps",
                    "avg_power_watts",
                )
            },
        }

    def rank_record(
        self, rank: int, record: Record, nickname: str, accuracy_percent: float | None
    ) -> Row:
        c = own(record, DiffusionConfiguration)
        values: Row = {
            "rank": rank,
            "nickname": nickname,
            "outputs_per_joule": 1.0 / c.energy_per_output_joules,
        }
        return {k: values[k] if k in values else field_value(c, k) for k in self.rank_columns}

    def configuration_record(self, c: Record, nickname: str, builder: str) -> Row:
        record = self.rank_record(0, c, nickname, None)
        del record["rank"]
        return {"task": c.task, **record, "repeat": c.repeat, "source": c.source}

    def footprint_scales(self, units: TaskUnits) -> tuple[tuple[str, str, float, str], ...]:
        # Amounts whose cost reads in dollars, not fractions of a cent.
        amount, words = (1e6, "1M") if units.scale_joules <= 1000 else (1e3, "1,000")
        return (("kout", f"per {words} {units.output}s", amount, "energy_per_output_joules"),)
